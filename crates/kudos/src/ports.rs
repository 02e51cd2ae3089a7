//! What the kudos domain needs from storage. Every read and write takes the `OrgId`; kudos,
//! people and company values of another organization are `RepoError::NotFound`.

use async_trait::async_trait;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{CompanyValue, Kudos, NewCompanyValue, Tallies};

/// A giver's allowance for the day being written: at most `limit` kudos created at or after
/// `since` (the start of the giver's local day).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DailyCap {
    pub since: OffsetDateTime,
    pub limit: u32,
}

/// What storing kudos did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Posting {
    Stored,
    /// The giver already gave the day's allowance: nothing was written.
    DailyLimitReached,
}

/// Created at or after `from`, and before `until` (either open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub from: Option<OffsetDateTime>,
    pub until: Option<OffsetDateTime>,
}

/// Which kudos of an organization a listing covers. Every condition given must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KudosSelection {
    /// Who is looking: anonymous kudos match a condition on their giver (`involving_viewer`,
    /// `given_by`, the giver's name in `search`) only when the viewer gave them.
    pub viewer: UserId,
    /// Only kudos the viewer gave or received.
    pub involving_viewer: bool,
    /// Only kudos given by each of these.
    pub given_by: Vec<UserId>,
    /// Only kudos received by each of these.
    pub received_by: Vec<UserId>,
    /// Case-insensitive fragment of the content, of a receiver's name ("first last") or of
    /// the giver's name.
    pub search: Option<String>,
    pub span: Span,
}

/// Kudos, their receivers and +1s, and company values.
#[async_trait]
pub trait KudosRepository: Send + Sync + 'static {
    /// The organization's company values by name (byte order). An organization that has none
    /// yet gets `defaults` first, once however many callers race. `NotFound` for an unknown
    /// organization.
    async fn company_values(
        &self,
        org: OrgId,
        defaults: &[NewCompanyValue],
    ) -> Result<Vec<CompanyValue>, RepoError>;

    /// Registers a company value, or gives the value of that name (any case) the new emoji.
    /// `NotFound` for an unknown organization.
    async fn upsert_company_value(
        &self,
        org: OrgId,
        value: &NewCompanyValue,
    ) -> Result<CompanyValue, RepoError>;

    /// Stores the kudos (giver, receivers, company value, `created_at` as given) together with
    /// `events`, unless their giver already gave `cap.limit` kudos since `cap.since`: then
    /// nothing is written. Givers are counted under a lock, so concurrent posts never exceed
    /// the cap. `NotFound`, nothing written, when the giver, a receiver or the company value
    /// is not of the kudos' organization.
    async fn insert_kudos(
        &self,
        kudos: &Kudos,
        cap: DailyCap,
        events: &[Event],
    ) -> Result<Posting, RepoError>;

    /// One kudos of `org`, giver filled.
    async fn get_kudos(&self, org: OrgId, id: Uuid) -> Result<Kudos, RepoError>;

    /// Adds `user`'s +1 and answers the kudos as they are now. `Conflict`
    /// (`kudos_boosts_pkey`) when that person already did; `NotFound` when the kudos or the
    /// person is not of `org`.
    async fn boost_kudos(
        &self,
        org: OrgId,
        id: Uuid,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<Kudos, RepoError>;

    /// Kudos of `org`, newest first (`created_at`, then id, descending); givers filled.
    async fn list_kudos(
        &self,
        org: OrgId,
        selection: &KudosSelection,
        page: PageRequest,
    ) -> Result<Page<Kudos>, RepoError>;

    /// Per person and per company value counts of the kudos created in `span`.
    async fn tallies(&self, org: OrgId, span: Span) -> Result<Tallies, RepoError>;
}
