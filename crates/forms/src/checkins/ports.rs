//! What check-ins need from storage. Every read and write takes the `OrgId`: a check-in or a
//! response of another organization is `RepoError::NotFound`.

use async_trait::async_trait;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, TeamId, UserId};
use teamcomm_messaging::Channel;
use teamcomm_org::User;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::{Checkin, CheckinResponse};

/// Which check-ins of an organization a listing covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckinScope {
    /// Every one (an admin's view).
    All,
    /// Those the person takes part in or created.
    VisibleTo(UserId),
    /// Those the person takes part in.
    TakenBy(UserId),
}

/// The conditions of a check-in listing; every condition given must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckinSelection {
    pub scope: CheckinScope,
    pub include_archived: bool,
    /// Case-insensitive fragment of the name.
    pub search: Option<String>,
    /// Only those running on some day of this span (`start_on` to `end_on` overlaps it).
    pub running_from: Option<Date>,
    pub running_until: Option<Date>,
    /// Only those carrying any of these labels (`entity_labels`).
    pub labels: Vec<Uuid>,
    /// Only those this person starred (`featured_entities`).
    pub featured_by: Option<UserId>,
    /// This person's starred ones first.
    pub featured_first_for: Option<UserId>,
}

impl CheckinSelection {
    pub fn new(scope: CheckinScope) -> Self {
        CheckinSelection {
            scope,
            include_archived: false,
            search: None,
            running_from: None,
            running_until: None,
            labels: Vec::new(),
            featured_by: None,
            featured_first_for: None,
        }
    }
}

/// Whose responses a listing may show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResponseScope {
    All,
    /// The person's own.
    Own(UserId),
    /// The person's own and those of the members of the teams they manage.
    ManagedBy(UserId),
}

/// The conditions of a response listing of one check-in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResponseSelection {
    pub checkin: Uuid,
    pub scope: ResponseScope,
    /// Only this person's.
    pub user: Option<UserId>,
    /// Case-insensitive fragment of the answers' text ([`CheckinResponse::search_text`]).
    pub search: Option<String>,
    /// Days, both included; `None` leaves that side open.
    pub from: Option<Date>,
    pub until: Option<Date>,
}

/// A response with the person who gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthoredResponse {
    pub response: CheckinResponse,
    pub author: User,
}

/// Whether a person answered a check-in on a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayResponse {
    pub checkin_id: Uuid,
    pub user_id: UserId,
    pub date: Date,
    pub completed: bool,
}

/// A check-in's participants and report channels with their names, as the directory holds
/// them now (for the detail view).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckinDirectory {
    pub users: Vec<(UserId, String)>,
    pub teams: Vec<(TeamId, String)>,
    pub channels: Vec<Channel>,
}

/// The teams a person manages, and their members.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ManagedScope {
    pub teams: Vec<TeamId>,
    pub members: Vec<UserId>,
}

/// Check-ins and their responses.
#[async_trait]
pub trait CheckinRepository: Send + Sync + 'static {
    /// Stores a new check-in. `NotFound`, nothing written, when its organization is unknown
    /// or a participant, team or report channel is not of it.
    async fn insert_checkin(&self, checkin: &Checkin) -> Result<(), RepoError>;

    /// One check-in of `org`.
    async fn get_checkin(&self, org: OrgId, id: Uuid) -> Result<Checkin, RepoError>;

    /// Replaces the stored check-in by `checkin` (revision bumped by the service) when the
    /// stored revision is still `expected_revision`; `Conflict` (`checkins_revision`) when
    /// another write came first; `NotFound` as for [`CheckinRepository::insert_checkin`].
    async fn update_checkin(
        &self,
        checkin: &Checkin,
        expected_revision: i64,
    ) -> Result<(), RepoError>;

    /// Check-ins of `org` by name then id; with `featured_first_for`, that person's starred
    /// ones first.
    async fn list_checkins(
        &self,
        org: OrgId,
        selection: &CheckinSelection,
        page: PageRequest,
    ) -> Result<Page<Checkin>, RepoError>;

    /// The names of the check-in's participants and channels, in its order.
    async fn directory(&self, checkin: &Checkin) -> Result<CheckinDirectory, RepoError>;

    /// True when `user` is an active person named by the check-in or an active member of one
    /// of its active teams.
    async fn is_participant(&self, org: OrgId, id: Uuid, user: UserId) -> Result<bool, RepoError>;

    /// The active people each check-in asks (named, or members of its active teams), once
    /// each, by check-in then name.
    async fn participants(
        &self,
        org: OrgId,
        checkins: &[Uuid],
    ) -> Result<Vec<(Uuid, User)>, RepoError>;

    /// The active teams `user` manages, and their members.
    async fn managed_scope(&self, org: OrgId, user: UserId) -> Result<ManagedScope, RepoError>;

    /// Stores a response with `events`, together, when the check-in is still at
    /// `expected_revision` (the one its rules were checked against) and asks the person.
    /// Otherwise nothing is written: `Conflict` (`checkin_responses_checkin_user_day_key`) when
    /// the person already answered that day, (`checkins_revision`) when the check-in changed
    /// since, (`checkin_participants`) when it does not ask the person (or the person is not an
    /// active one of its organization); `NotFound` when the check-in is not of the response's
    /// organization.
    async fn insert_response(
        &self,
        response: &CheckinResponse,
        expected_revision: i64,
        events: &[Event],
    ) -> Result<(), RepoError>;

    /// Replaces a response's answers with `events`, when its `updated_at` is still
    /// `expected_updated_at`; `Conflict` (`checkin_responses_updated_at`) otherwise.
    async fn update_response(
        &self,
        response: &CheckinResponse,
        expected_updated_at: OffsetDateTime,
        events: &[Event],
    ) -> Result<(), RepoError>;

    /// `user`'s responses to the check-in on the days from `from` to `until`, oldest first.
    async fn responses_between(
        &self,
        org: OrgId,
        checkin: Uuid,
        user: UserId,
        from: Date,
        until: Date,
    ) -> Result<Vec<CheckinResponse>, RepoError>;

    /// Deletes these responses of `org` with `events`, all or none: `Conflict`
    /// (`checkin_responses_deleted`) when one is already gone.
    async fn delete_responses(
        &self,
        org: OrgId,
        ids: &[Uuid],
        events: &[Event],
    ) -> Result<(), RepoError>;

    /// Responses of one check-in, newest day first, then in the order they came in
    /// (`created_at`, then id).
    async fn list_responses(
        &self,
        org: OrgId,
        selection: &ResponseSelection,
        page: PageRequest,
    ) -> Result<Page<AuthoredResponse>, RepoError>;

    /// Who answered these check-ins on these days.
    async fn day_responses(
        &self,
        org: OrgId,
        checkins: &[Uuid],
        days: &[Date],
    ) -> Result<Vec<DayResponse>, RepoError>;
}
