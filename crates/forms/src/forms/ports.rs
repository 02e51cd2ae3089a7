//! What the forms domain needs from storage. Every read and write takes the `OrgId`; a form or
//! response of another organization is `RepoError::NotFound`.

use async_trait::async_trait;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError};
use teamcomm_org::User;
use uuid::Uuid;

use super::model::{
    Form, FormResponse, FormSelection, ResponseSelection, StateChange, StateMigration, Written,
};

/// Forms, their responses and the responses' workflow history.
#[async_trait]
pub trait FormRepository: Send + Sync + 'static {
    /// Stores a new form (its `version` as given). `Conflict` on `forms_live_command_key` when
    /// another live form of the organization has the same enabled command; `NotFound` when
    /// the owner is not a person of the form's organization.
    async fn insert_form(&self, form: &Form) -> Result<(), RepoError>;

    /// Replaces the form's name, questions, channels, settings and archived flag, bumping its
    /// version, when its version is still `seen_version` (else `FormChanged`), and applies
    /// `states` to its responses in the same transaction (`StatesInUse` with the keys still
    /// held, nothing written). `Conflict` on `forms_live_command_key` as on insert.
    async fn update_form(
        &self,
        form: &Form,
        seen_version: i32,
        states: &StateMigration,
    ) -> Result<Written, RepoError>;

    /// A form of `org`, with its owner and number of responses.
    async fn get_form(&self, org: OrgId, id: Uuid) -> Result<Form, RepoError>;

    /// Forms of `org` matching `selection`, in its order (ties by id), with the filtered total.
    async fn list_forms(
        &self,
        org: OrgId,
        selection: &FormSelection,
        page: PageRequest,
    ) -> Result<Page<Form>, RepoError>;

    /// People of `org` who own at least one live form, by name (byte order), optionally those
    /// whose name or e-mail contains `search` (any case).
    async fn list_form_owners(
        &self,
        org: OrgId,
        search: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<User>, RepoError>;

    /// Stores a response and `event` when the form's version is still `form_version` (else
    /// `FormChanged`, nothing written). The form is held shared meanwhile, so no form update
    /// can interleave.
    async fn insert_response(
        &self,
        response: &FormResponse,
        form_version: i32,
        event: &Event,
    ) -> Result<Written, RepoError>;

    /// A response of the form `form` of `org`, with its history.
    async fn get_response(
        &self,
        org: OrgId,
        form: Uuid,
        id: Uuid,
    ) -> Result<FormResponse, RepoError>;

    /// Responses of the form `form` of `org` matching `selection`, newest first unless it says
    /// otherwise (ties by id), each with its history.
    async fn list_responses(
        &self,
        org: OrgId,
        form: Uuid,
        selection: &ResponseSelection,
        page: PageRequest,
    ) -> Result<Page<FormResponse>, RepoError>;

    /// Writes the response's content, `edited` and `updated_at` (bumping its version) with
    /// `event`, when the response's version is still `seen_version` (else `ResponseChanged`)
    /// and the form's is still `form_version` (else `FormChanged`).
    async fn update_response_content(
        &self,
        response: &FormResponse,
        seen_version: i32,
        form_version: i32,
        event: &Event,
    ) -> Result<Written, RepoError>;

    /// Moves the response `response` of the form `form` to `change.to_state` and records the
    /// change with `event`, when it is still in `change.from_state` (else `ResponseChanged`:
    /// someone moved it first) and the form's version is still `form_version` (else
    /// `FormChanged`). Of concurrent moves from the same state, exactly one is written.
    async fn transition_response(
        &self,
        org: OrgId,
        form: Uuid,
        form_version: i32,
        response: Uuid,
        change: &StateChange,
        event: &Event,
    ) -> Result<Written, RepoError>;

    /// Deletes the response (and its history) with `event`; `NotFound` and nothing recorded
    /// when there is no such response.
    async fn delete_response(
        &self,
        org: OrgId,
        form: Uuid,
        id: Uuid,
        event: &Event,
    ) -> Result<(), RepoError>;
}
