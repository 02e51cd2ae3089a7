//! The directory use cases and their role rules: who may see and change people, teams,
//! memberships and invitations (spec "Admin-only endpoints": team members and team invite are
//! admin only, `org_admin_required`; users of another organization are `member_in_scope_required`).

use std::sync::Arc;

use teamcomm_kernel::{
    Error, ErrorCode, Page, PageRequest, RepoError, SharedClock, TeamId, UserId,
};
use time::Date;
use uuid::Uuid;

use crate::{
    ImportantDate, Invitation, InvitationKind, InvitationRepository, MAX_INVITES_PER_REQUEST,
    MoodEntry, MoodRepository, NewInvitation, OrgRepository, ProfilePatch, Role, Team, TeamFilter,
    TeamMember, TeamRepository, TeamRole, User, UserFilter, classify_identifier,
    important_dates_of,
};

/// An invitation request, as parsed from the wire.
#[derive(Debug, Clone, Default)]
pub struct InviteRequest {
    pub identifiers: Vec<String>,
    pub is_guest: bool,
    pub team_ids: Vec<TeamId>,
    pub followup_ids: Vec<Uuid>,
}

/// What an invitation request did.
#[derive(Debug, Clone, Default)]
pub struct InviteOutcome {
    /// People who already belong to the organization.
    pub existing_members: Vec<User>,
    /// Invitations created or resent.
    pub invited: Vec<Invitation>,
}

/// What a team invitation did.
#[derive(Debug, Clone, Default)]
pub struct TeamInviteOutcome {
    pub added: Vec<TeamMember>,
    pub invited: Vec<Invitation>,
}

#[derive(Clone)]
pub struct Directory {
    people: Arc<dyn OrgRepository>,
    teams: Arc<dyn TeamRepository>,
    invitations: Arc<dyn InvitationRepository>,
    moods: Arc<dyn MoodRepository>,
    clock: SharedClock,
}

fn require_admin(actor: &User, what: &str) -> Result<(), Error> {
    if actor.role.is_admin() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::OrgAdminRequired,
            format!("Only organization admins can {what}."),
        ))
    }
}

fn refuse_guest(actor: &User) -> Result<(), Error> {
    if actor.role == Role::Guest {
        return Err(Error::new(
            ErrorCode::GuestNotAllowed,
            "Guest accounts cannot do this.",
        ));
    }
    Ok(())
}

fn out_of_scope() -> Error {
    Error::new(
        ErrorCode::MemberInScopeRequired,
        "That user is not a member of your organization.",
    )
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
            people,
            teams,
            invitations,
            moods,
            clock,
        }
    }

    fn today(&self) -> Date {
        self.clock.now().date()
    }

    // ------------------------------------------------------------------ people

    pub async fn list_users(
        &self,
        actor: &User,
        filter: &UserFilter,
        page: PageRequest,
    ) -> Result<Page<User>, Error> {
        Ok(self.people.list_users(actor.org_id, filter, page).await?)
    }

    pub async fn get_user(&self, actor: &User, id: UserId) -> Result<User, Error> {
        Ok(self.people.get_user(actor.org_id, id).await?)
    }

    /// People change their own profile; admins anyone's, and only admins change roles or
    /// activation.
    pub async fn update_user(
        &self,
        actor: &User,
        id: UserId,
        patch: ProfilePatch,
    ) -> Result<User, Error> {
        let target = self.people.get_user(actor.org_id, id).await?;
        if target.id != actor.id {
            require_admin(actor, "change other people's profiles")?;
        }
        if patch.needs_admin() {
            require_admin(actor, "change roles or deactivate people")?;
            if target.id == actor.id
                && (patch.is_active == Some(false) || patch.role.is_some_and(|r| !r.is_admin()))
            {
                return Err(Error::invalid_field(
                    "role",
                    "Admins cannot demote or deactivate themselves.",
                ));
            }
        }
        Ok(self.people.update_profile(actor.org_id, id, &patch).await?)
    }

    /// Birthdays and work anniversaries, of one person or of everyone, soonest first.
    pub async fn important_dates(
        &self,
        actor: &User,
        of: Option<UserId>,
    ) -> Result<Vec<ImportantDate>, Error> {
        let people = match of {
            Some(id) => vec![self.people.get_user(actor.org_id, id).await?],
            None => self.people.users_with_important_dates(actor.org_id).await?,
        };
        let today = self.today();
        let mut dates: Vec<ImportantDate> = people
            .iter()
            .flat_map(|u| important_dates_of(u, today))
            .collect();
        dates.sort_by(|a, b| a.next.cmp(&b.next).then_with(|| a.id.cmp(&b.id)));
        Ok(dates)
    }

    pub async fn important_date(&self, actor: &User, id: Uuid) -> Result<ImportantDate, Error> {
        self.important_dates(actor, None)
            .await?
            .into_iter()
            .find(|d| d.id == id)
            .ok_or_else(Error::not_found)
    }

    // ------------------------------------------------------------------ teams

    /// Admins see every team; everyone else the teams they belong to.
    pub async fn list_teams(
        &self,
        actor: &User,
        mut filter: TeamFilter,
        page: PageRequest,
    ) -> Result<Page<Team>, Error> {
        if !actor.role.is_admin() {
            filter.member_of = Some(actor.id);
        }
        Ok(self.teams.list_teams(actor.org_id, &filter, page).await?)
    }

    /// A team the actor may see (another team is "not found" to a non-admin).
    pub async fn get_team(&self, actor: &User, id: TeamId) -> Result<Team, Error> {
        let team = self.teams.get_team(actor.org_id, id).await?;
        if !actor.role.is_admin() && !self.teams.is_member(id, actor.id).await? {
            return Err(Error::not_found());
        }
        Ok(team)
    }

    pub async fn create_team(
        &self,
        actor: &User,
        name: &str,
        members: &[UserId],
    ) -> Result<Team, Error> {
        require_admin(actor, "create teams")?;
        let name = validate_team_name(name)?;
        for m in members {
            self.in_scope(actor, *m).await?;
        }
        Ok(self.teams.create_team(actor.org_id, &name, members).await?)
    }

    pub async fn update_team(
        &self,
        actor: &User,
        id: TeamId,
        name: Option<&str>,
        active: Option<bool>,
    ) -> Result<Team, Error> {
        require_admin(actor, "change teams")?;
        let name = name.map(validate_team_name).transpose()?;
        Ok(self
            .teams
            .update_team(actor.org_id, id, name.as_deref(), active)
            .await?)
    }

    /// Archives a team (kept for history; hidden from listings by default).
    pub async fn archive_team(&self, actor: &User, id: TeamId) -> Result<Team, Error> {
        self.update_team(actor, id, None, Some(false)).await
    }

    pub async fn list_members(
        &self,
        actor: &User,
        team: TeamId,
        page: PageRequest,
    ) -> Result<Page<TeamMember>, Error> {
        self.get_team(actor, team).await?;
        Ok(self.teams.list_members(actor.org_id, team, page).await?)
    }

    pub async fn get_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
    ) -> Result<TeamMember, Error> {
        require_admin(actor, "manage team members")?;
        self.teams.get_team(actor.org_id, team).await?;
        self.in_scope(actor, user).await?;
        Ok(self.teams.get_member(actor.org_id, team, user).await?)
    }

    /// Adds (or updates) a membership; the flag says whether it was added.
    pub async fn put_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
        role: Option<TeamRole>,
    ) -> Result<(TeamMember, bool), Error> {
        require_admin(actor, "manage team members")?;
        self.teams.get_team(actor.org_id, team).await?;
        self.in_scope(actor, user).await?;
        Ok(self
            .teams
            .put_member(actor.org_id, team, user, role)
            .await?)
    }

    /// Changes an existing membership.
    pub async fn patch_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
        role: Option<TeamRole>,
    ) -> Result<TeamMember, Error> {
        let existing = self.get_member(actor, team, user).await?;
        if role.is_none() {
            return Ok(existing);
        }
        Ok(self
            .teams
            .put_member(actor.org_id, team, user, role)
            .await?
            .0)
    }

    pub async fn remove_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
    ) -> Result<(), Error> {
        self.get_member(actor, team, user).await?;
        Ok(self.teams.remove_member(actor.org_id, team, user).await?)
    }

    /// Invites people into a team: people of the organization join at once; unknown e-mails get
    /// an invitation that includes the team. Anyone of another organization refuses the whole
    /// request before anything changes.
    pub async fn invite_to_team(
        &self,
        actor: &User,
        team: TeamId,
        identifiers: &[String],
    ) -> Result<TeamInviteOutcome, Error> {
        require_admin(actor, "invite people to teams")?;
        self.teams.get_team(actor.org_id, team).await?;
        check_invite_count(identifiers)?;
        let mut join = Vec::new();
        let mut invite = Vec::new();
        let mut emails = Vec::new();
        for raw in identifiers {
            if let Ok(id) = raw.trim().parse::<UserId>() {
                self.in_scope(actor, id).await?;
                join.push(id);
            } else {
                let (identifier, is_email) = classify_identifier(raw)?;
                if is_email {
                    emails.push(identifier.clone());
                }
                invite.push((identifier, is_email));
            }
        }
        let known = self
            .people
            .find_users_by_email(actor.org_id, &emails)
            .await?;
        invite.retain(|(identifier, _)| {
            match known
                .iter()
                .find(|u| u.email.eq_ignore_ascii_case(identifier))
            {
                Some(u) => {
                    join.push(u.id);
                    false
                }
                None => true,
            }
        });
        let mut outcome = TeamInviteOutcome::default();
        for user in dedup(join) {
            outcome.added.push(
                self.teams
                    .put_member(actor.org_id, team, user, None)
                    .await?
                    .0,
            );
        }
        for (identifier, is_email) in invite {
            let new = NewInvitation {
                identifier,
                is_email,
                is_guest: false,
                team_ids: vec![team],
                followup_ids: Vec::new(),
                invited_by: Some(actor.id),
            };
            outcome.invited.push(
                self.invitations
                    .upsert_invitation(actor.org_id, &new)
                    .await?
                    .0,
            );
        }
        Ok(outcome)
    }

    // ------------------------------------------------------------------ invitations

    /// Invites people to the organization (non-guests may invite).
    pub async fn invite(&self, actor: &User, req: InviteRequest) -> Result<InviteOutcome, Error> {
        refuse_guest(actor)?;
        check_invite_count(&req.identifiers)?;
        for team in &req.team_ids {
            match self.teams.get_team(actor.org_id, *team).await {
                Ok(_) => {}
                Err(RepoError::NotFound) => {
                    return Err(Error::invalid_field(
                        "joinable_team_uuids",
                        format!("Unknown team {team}."),
                    ));
                }
                Err(e) => return Err(e.into()),
            }
        }
        let mut parsed = Vec::new();
        for raw in &req.identifiers {
            let (identifier, is_email) = classify_identifier(raw)?;
            if req.is_guest && !is_email {
                return Err(Error::invalid_field(
                    "users_identifiers",
                    "Guests are invited by e-mail address.",
                ));
            }
            if !parsed
                .iter()
                .any(|(i, _): &(String, bool)| i.eq_ignore_ascii_case(&identifier))
            {
                parsed.push((identifier, is_email));
            }
        }
        let emails: Vec<String> = parsed
            .iter()
            .filter(|(_, e)| *e)
            .map(|(i, _)| i.clone())
            .collect();
        let known = self
            .people
            .find_users_by_email(actor.org_id, &emails)
            .await?;
        let mut outcome = InviteOutcome::default();
        for (identifier, is_email) in parsed {
            if let Some(user) = known
                .iter()
                .find(|u| u.email.eq_ignore_ascii_case(&identifier))
            {
                outcome.existing_members.push(user.clone());
                continue;
            }
            let new = NewInvitation {
                identifier,
                is_email,
                is_guest: req.is_guest,
                team_ids: req.team_ids.clone(),
                followup_ids: req.followup_ids.clone(),
                invited_by: Some(actor.id),
            };
            outcome.invited.push(
                self.invitations
                    .upsert_invitation(actor.org_id, &new)
                    .await?
                    .0,
            );
        }
        Ok(outcome)
    }

    pub async fn list_invitations(
        &self,
        actor: &User,
        kind: InvitationKind,
        page: PageRequest,
    ) -> Result<Page<Invitation>, Error> {
        require_admin(actor, "see pending invitations")?;
        Ok(self
            .invitations
            .list_invitations(actor.org_id, kind, page)
            .await?)
    }

    pub async fn get_invitation(
        &self,
        actor: &User,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<Invitation, Error> {
        require_admin(actor, "see pending invitations")?;
        Ok(self
            .invitations
            .get_invitation(actor.org_id, kind, id)
            .await?)
    }

    pub async fn revoke_invitation(
        &self,
        actor: &User,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<(), Error> {
        require_admin(actor, "revoke invitations")?;
        Ok(self
            .invitations
            .delete_invitation(actor.org_id, kind, id)
            .await?)
    }

    // ------------------------------------------------------------------ mood

    /// Records the actor's mood for `date` (default today, UTC); one score per person per day.
    pub async fn track_mood(
        &self,
        actor: &User,
        score: i16,
        date: Option<Date>,
    ) -> Result<MoodEntry, Error> {
        let today = self.today();
        let date = date.unwrap_or(today);
        if date > today {
            return Err(Error::invalid_field(
                "date",
                "The date cannot be in the future.",
            ));
        }
        match self
            .moods
            .insert_mood(actor.org_id, actor.id, date, score)
            .await
        {
            Err(RepoError::Conflict { .. }) => Err(Error::new(
                ErrorCode::MotivationScoreAlreadyCompleted,
                "Motivation score already completed.",
            )),
            other => Ok(other?),
        }
    }

    pub async fn mood(&self, actor: &User, date: Option<Date>) -> Result<Option<MoodEntry>, Error> {
        Ok(self
            .moods
            .get_mood(actor.id, date.unwrap_or_else(|| self.today()))
            .await?)
    }

    async fn in_scope(&self, actor: &User, user: UserId) -> Result<User, Error> {
        match self.people.get_user(actor.org_id, user).await {
            Ok(u) => Ok(u),
            Err(RepoError::NotFound) => Err(out_of_scope()),
            Err(e) => Err(e.into()),
        }
    }
}

fn validate_team_name(name: &str) -> Result<String, Error> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(Error::invalid_field(
            "name",
            "A team name has 1 to 200 characters.",
        ));
    }
    Ok(name.to_owned())
}

fn check_invite_count(identifiers: &[String]) -> Result<(), Error> {
    if identifiers.is_empty() {
        return Err(Error::invalid_field(
            "users_identifiers",
            "Name at least one person to invite.",
        ));
    }
    if identifiers.len() > MAX_INVITES_PER_REQUEST {
        return Err(Error::invalid_field(
            "users_identifiers",
            "At most 100 people per request.",
        ));
    }
    Ok(())
}

fn dedup(ids: Vec<UserId>) -> Vec<UserId> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}
