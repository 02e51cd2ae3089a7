//! What the organization domain needs from storage. Every read that a tenant can trigger takes
//! the `OrgId` and answers `RepoError::NotFound` for rows of other organizations.

use async_trait::async_trait;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, TeamId, UserId};
use time::Date;
use uuid::Uuid;

use crate::{
    Invitation, MoodEntry, NewInvitation, NewOrganization, NewUser, Organization,
    OrganizationPatch, ProfilePatch, Team, TeamFilter, TeamMember, TeamRole, User, UserFilter,
    UserPatch,
};

/// Organizations and their people.
#[async_trait]
pub trait OrgRepository: Send + Sync + 'static {
    async fn create_organization(&self, new: &NewOrganization) -> Result<Organization, RepoError>;
    async fn update_organization(
        &self,
        id: OrgId,
        patch: &OrganizationPatch,
    ) -> Result<Organization, RepoError>;
    async fn get_organization(&self, id: OrgId) -> Result<Organization, RepoError>;
    /// True when no organization exists yet (used by `--demo`).
    async fn is_empty(&self) -> Result<bool, RepoError>;

    /// `RepoError::Conflict` when the e-mail is already used in that organization.
    async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, RepoError>;
    /// Operator-level update; the caller has no organization. `activation_events` are recorded
    /// in the change's transaction only when it flips the person's `is_active` (a patch that
    /// re-states the stored value records nothing).
    async fn update_user(
        &self,
        id: UserId,
        patch: &UserPatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError>;
    /// Operator-level read by id alone.
    async fn find_user(&self, id: UserId) -> Result<User, RepoError>;
    /// A person of `org`.
    async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, RepoError>;
    /// The people of `org` with these ids, by id, each once: ids of no one or of another
    /// organization's people are left out. One read whatever the number of ids.
    async fn users_by_ids(&self, org: OrgId, ids: &[UserId]) -> Result<Vec<User>, RepoError>;
    /// People of `org`, by name.
    async fn list_users(
        &self,
        org: OrgId,
        filter: &UserFilter,
        page: PageRequest,
    ) -> Result<Page<User>, RepoError>;
    /// People of `org` with these (lower-case) e-mails.
    async fn find_users_by_email(
        &self,
        org: OrgId,
        emails: &[String],
    ) -> Result<Vec<User>, RepoError>;
    /// Changes a person of `org`; `activation_events` as in [`OrgRepository::update_user`].
    async fn update_profile(
        &self,
        org: OrgId,
        id: UserId,
        patch: &ProfilePatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError>;
    /// People of `org` with a birthday or a work anniversary on file.
    async fn users_with_important_dates(&self, org: OrgId) -> Result<Vec<User>, RepoError>;
}

/// Teams and memberships.
#[async_trait]
pub trait TeamRepository: Send + Sync + 'static {
    /// Creates the team `id` with its first members (people outside `org` are ignored) and
    /// records `joined` (the members' `team_user_added` events), all in one transaction.
    async fn create_team(
        &self,
        org: OrgId,
        id: TeamId,
        name: &str,
        members: &[UserId],
        joined: &[Event],
    ) -> Result<Team, RepoError>;
    async fn update_team(
        &self,
        org: OrgId,
        id: TeamId,
        name: Option<&str>,
        active: Option<bool>,
    ) -> Result<Team, RepoError>;
    async fn get_team(&self, org: OrgId, id: TeamId) -> Result<Team, RepoError>;
    async fn list_teams(
        &self,
        org: OrgId,
        filter: &TeamFilter,
        page: PageRequest,
    ) -> Result<Page<Team>, RepoError>;
    async fn is_member(&self, team: TeamId, user: UserId) -> Result<bool, RepoError>;
    async fn list_members(
        &self,
        org: OrgId,
        team: TeamId,
        page: PageRequest,
    ) -> Result<Page<TeamMember>, RepoError>;
    async fn get_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
    ) -> Result<TeamMember, RepoError>;
    /// Adds or updates a membership; the flag is true when it was added, and only then is
    /// `added` recorded, in the same transaction. A new membership takes `role` (default
    /// member); an existing one keeps its role unless `role` is given. `NotFound` (and nothing
    /// written) when the team or the person is not of `org`.
    async fn put_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
        role: Option<TeamRole>,
        added: &Event,
    ) -> Result<(TeamMember, bool), RepoError>;
    /// Ends a membership and records `removed` in the same transaction; `NotFound` (nothing
    /// written, nothing recorded) when there is no such membership in `org`.
    async fn remove_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
        removed: &Event,
    ) -> Result<(), RepoError>;
}

/// Which pending invitations a listing covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvitationKind {
    Members,
    Guests,
    All,
}

/// Pending invitations.
#[async_trait]
pub trait InvitationRepository: Send + Sync + 'static {
    /// Creates the invitation, or resends the pending one for the same identifier (merging
    /// teams); the flag is true when it was created.
    async fn upsert_invitation(
        &self,
        org: OrgId,
        new: &NewInvitation,
    ) -> Result<(Invitation, bool), RepoError>;
    async fn list_invitations(
        &self,
        org: OrgId,
        kind: InvitationKind,
        page: PageRequest,
    ) -> Result<Page<Invitation>, RepoError>;
    async fn get_invitation(
        &self,
        org: OrgId,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<Invitation, RepoError>;
    async fn delete_invitation(
        &self,
        org: OrgId,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<(), RepoError>;
}

/// Mood scores.
#[async_trait]
pub trait MoodRepository: Send + Sync + 'static {
    /// `RepoError::Conflict` when the person already has a score for that day.
    async fn insert_mood(
        &self,
        org: OrgId,
        user: UserId,
        date: Date,
        score: i16,
    ) -> Result<MoodEntry, RepoError>;
    async fn get_mood(&self, user: UserId, date: Date) -> Result<Option<MoodEntry>, RepoError>;
}
