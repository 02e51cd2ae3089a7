//! What the labels domain needs from storage. Every read and write takes the `OrgId`; a label
//! of another organization is `RepoError::NotFound`.

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use uuid::Uuid;

use crate::{BatchMode, Deletion, EntityKind, Label, LabelFilter, LabelId, LabelPatch, NewLabel};

/// Labels and the labels entities carry.
#[async_trait]
pub trait LabelRepository: Send + Sync + 'static {
    /// `Conflict` on `labels_org_lower_name_key` when the organization has a label of that name
    /// in any case.
    async fn create_label(&self, org: OrgId, new: &NewLabel) -> Result<Label, RepoError>;
    async fn get_label(&self, org: OrgId, id: LabelId) -> Result<Label, RepoError>;
    async fn list_labels(
        &self,
        org: OrgId,
        filter: &LabelFilter,
        page: PageRequest,
    ) -> Result<Page<Label>, RepoError>;
    /// Applies the patch and stamps `updated_at`; `Conflict` as in
    /// [`LabelRepository::create_label`] for a taken name.
    async fn update_label(
        &self,
        org: OrgId,
        id: LabelId,
        patch: &LabelPatch,
    ) -> Result<Label, RepoError>;
    /// Deletes the label unless an entity carries it, decided in one transaction (an
    /// assignment racing the delete either counts or finds the label gone).
    async fn delete_unused_label(&self, org: OrgId, id: LabelId) -> Result<Deletion, RepoError>;
    /// Those of `ids` that are labels of `org`, in no particular order.
    async fn find_labels(&self, org: OrgId, ids: &[LabelId]) -> Result<Vec<Label>, RepoError>;
    /// Which of `labels` each of `entities` carries: `(entity, label)` pairs.
    async fn assignments(
        &self,
        org: OrgId,
        kind: EntityKind,
        entities: &[Uuid],
        labels: &[LabelId],
    ) -> Result<Vec<(Uuid, LabelId)>, RepoError>;
    /// Makes `labels` the entity's whole set and answers it, ordered as lists are.
    async fn replace_entity_labels(
        &self,
        org: OrgId,
        kind: EntityKind,
        entity: Uuid,
        labels: &[LabelId],
    ) -> Result<Vec<Label>, RepoError>;
    /// Changes the labels of every entity as `mode` says, in one transaction; answers how many
    /// entities' sets changed.
    async fn batch_entity_labels(
        &self,
        org: OrgId,
        kind: EntityKind,
        entities: &[Uuid],
        labels: &[LabelId],
        mode: BatchMode,
    ) -> Result<u64, RepoError>;
}

/// People's private stars.
#[async_trait]
pub trait FeaturedRepository: Send + Sync + 'static {
    /// The entities of `kind` the person starred, oldest star first.
    async fn featured(&self, user: UserId, kind: EntityKind) -> Result<Vec<Uuid>, RepoError>;
    /// Stars (or unstars) the entities for the person of `org`, in one transaction; answers
    /// those whose star changed, in the order given.
    async fn set_featured(
        &self,
        org: OrgId,
        user: UserId,
        kind: EntityKind,
        entities: &[Uuid],
        featured: bool,
    ) -> Result<Vec<Uuid>, RepoError>;
}

/// The entities labels go on, kept by other areas (check-ins, forms, workflows).
#[async_trait]
pub trait LabelledEntities: Send + Sync + 'static {
    /// Those of `ids` that are entities of `kind` in `org` (archived ones included), in no
    /// particular order.
    async fn existing(
        &self,
        org: OrgId,
        kind: EntityKind,
        ids: &[Uuid],
    ) -> Result<Vec<Uuid>, RepoError>;
}
