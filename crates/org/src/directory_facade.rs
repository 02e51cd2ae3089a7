//! `Directory`: the former all-in-one service, kept only until the app crate calls the
//! per-aggregate services itself. It holds no rule: every method delegates.

use std::sync::Arc;

use teamcomm_kernel::{Error, Page, PageRequest, SharedClock, TeamId, UserId};
use time::Date;
use uuid::Uuid;

use crate::{
    ImportantDate, Invitation, InvitationKind, InvitationRepository, InvitationService,
    InviteOutcome, InviteRequest, MoodEntry, MoodRepository, MoodService, OrgRepository,
    PeopleService, ProfilePatch, Team, TeamFilter, TeamInviteOutcome, TeamMember, TeamRepository,
    TeamRole, TeamService, User, UserFilter,
};

/// Delegates to [`PeopleService`], [`TeamService`], [`InvitationService`] and [`MoodService`].
#[derive(Clone)]
pub struct Directory {
    pub people: PeopleService,
    pub teams: TeamService,
    pub invitations: InvitationService,
    pub mood: MoodService,
}

impl Directory {
    pub fn new(
        people: Arc<dyn OrgRepository>,
        teams: Arc<dyn TeamRepository>,
        invitations: Arc<dyn InvitationRepository>,
        moods: Arc<dyn MoodRepository>,
        clock: SharedClock,
    ) -> Self {
        Directory {
            people: PeopleService::new(people.clone(), clock.clone()),
            teams: TeamService::new(people.clone(), teams.clone(), invitations.clone()),
            invitations: InvitationService::new(people, teams, invitations),
            mood: MoodService::new(moods, clock),
        }
    }

    pub async fn list_users(
        &self,
        actor: &User,
        filter: &UserFilter,
        page: PageRequest,
    ) -> Result<Page<User>, Error> {
        self.people.list_users(actor, filter, page).await
    }

    pub async fn get_user(&self, actor: &User, id: UserId) -> Result<User, Error> {
        self.people.get_user(actor, id).await
    }

    pub async fn update_user(
        &self,
        actor: &User,
        id: UserId,
        patch: ProfilePatch,
    ) -> Result<User, Error> {
        self.people.update_user(actor, id, patch).await
    }

    pub async fn important_dates(
        &self,
        actor: &User,
        of: Option<UserId>,
    ) -> Result<Vec<ImportantDate>, Error> {
        self.people.important_dates(actor, of).await
    }

    pub async fn important_date(&self, actor: &User, id: Uuid) -> Result<ImportantDate, Error> {
        self.people.important_date(actor, id).await
    }

    pub async fn list_teams(
        &self,
        actor: &User,
        filter: TeamFilter,
        page: PageRequest,
    ) -> Result<Page<Team>, Error> {
        self.teams.list_teams(actor, filter, page).await
    }

    pub async fn get_team(&self, actor: &User, id: TeamId) -> Result<Team, Error> {
        self.teams.get_team(actor, id).await
    }

    pub async fn create_team(
        &self,
        actor: &User,
        name: &str,
        members: &[UserId],
    ) -> Result<Team, Error> {
        self.teams.create_team(actor, name, members).await
    }

    pub async fn update_team(
        &self,
        actor: &User,
        id: TeamId,
        name: Option<&str>,
        active: Option<bool>,
    ) -> Result<Team, Error> {
        self.teams.update_team(actor, id, name, active).await
    }

    pub async fn archive_team(&self, actor: &User, id: TeamId) -> Result<Team, Error> {
        self.teams.archive_team(actor, id).await
    }

    pub async fn list_members(
        &self,
        actor: &User,
        team: TeamId,
        page: PageRequest,
    ) -> Result<Page<TeamMember>, Error> {
        self.teams.list_members(actor, team, page).await
    }

    pub async fn get_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
    ) -> Result<TeamMember, Error> {
        self.teams.get_member(actor, team, user).await
    }

    pub async fn put_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
        role: Option<TeamRole>,
    ) -> Result<(TeamMember, bool), Error> {
        self.teams.put_member(actor, team, user, role).await
    }

    pub async fn patch_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
        role: Option<TeamRole>,
    ) -> Result<TeamMember, Error> {
        self.teams.patch_member(actor, team, user, role).await
    }

    pub async fn remove_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
    ) -> Result<(), Error> {
        self.teams.remove_member(actor, team, user).await
    }

    pub async fn invite_to_team(
        &self,
        actor: &User,
        team: TeamId,
        identifiers: &[String],
    ) -> Result<TeamInviteOutcome, Error> {
        self.teams.invite_to_team(actor, team, identifiers).await
    }

    pub async fn invite(&self, actor: &User, req: InviteRequest) -> Result<InviteOutcome, Error> {
        self.invitations.invite(actor, req).await
    }

    pub async fn list_invitations(
        &self,
        actor: &User,
        kind: InvitationKind,
        page: PageRequest,
    ) -> Result<Page<Invitation>, Error> {
        self.invitations.list_invitations(actor, kind, page).await
    }

    pub async fn get_invitation(
        &self,
        actor: &User,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<Invitation, Error> {
        self.invitations.get_invitation(actor, kind, id).await
    }

    pub async fn revoke_invitation(
        &self,
        actor: &User,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<(), Error> {
        self.invitations.revoke_invitation(actor, kind, id).await
    }

    pub async fn track_mood(
        &self,
        actor: &User,
        score: i16,
        date: Option<Date>,
    ) -> Result<MoodEntry, Error> {
        self.mood.track_mood(actor, score, date).await
    }

    pub async fn mood(&self, actor: &User, date: Option<Date>) -> Result<Option<MoodEntry>, Error> {
        self.mood.mood(actor, date).await
    }
}
