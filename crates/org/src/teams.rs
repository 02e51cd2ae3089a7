//! Teams and memberships (`TeamService`): admins manage them (spec "Admin-only endpoints": team
//! members and team invite are admin only); everyone else sees the teams they belong to.

use std::sync::Arc;

use teamcomm_kernel::{Error, Page, PageRequest, SharedClock, TeamId, UserId, text};

use crate::access::{person_in_scope, require_admin};
use crate::events::{TeamRef, team_user_added, team_user_removed};
use crate::invitations::check_invite_count;
use crate::{
    Invitation, InvitationRepository, NewInvitation, OrgRepository, Team, TeamMember,
    TeamRepository, TeamRole, User, invitations::classify_identifier,
};

#[cfg(test)]
mod tests;

/// Which teams a listing covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamFilter {
    /// Only teams this person belongs to (members see their own teams).
    pub member_of: Option<UserId>,
    pub include_archived: bool,
    pub search: Option<String>,
}

/// The longest team name, in characters.
pub const MAX_TEAM_NAME: usize = 200;

/// What a team invitation did.
#[derive(Debug, Clone, Default)]
pub struct TeamInviteOutcome {
    pub added: Vec<TeamMember>,
    pub invited: Vec<Invitation>,
}

/// Teams, memberships and team invitations of the actor's organization.
#[derive(Clone)]
pub struct TeamService {
    people: Arc<dyn OrgRepository>,
    teams: Arc<dyn TeamRepository>,
    invitations: Arc<dyn InvitationRepository>,
    /// Stamps the membership events.
    clock: SharedClock,
}

impl TeamService {
    pub fn new(
        people: Arc<dyn OrgRepository>,
        teams: Arc<dyn TeamRepository>,
        invitations: Arc<dyn InvitationRepository>,
        clock: SharedClock,
    ) -> Self {
        TeamService {
            people,
            teams,
            invitations,
            clock,
        }
    }

    /// Adds `user` to `team` (or changes their role there), with the `team_user_added` event
    /// the port records if the membership is new.
    async fn join(
        &self,
        team: &Team,
        user: &User,
        role: Option<TeamRole>,
    ) -> Result<(TeamMember, bool), Error> {
        let added = team_user_added(
            team.into(),
            user,
            role.unwrap_or(TeamRole::Member),
            self.clock.now(),
        );
        Ok(self
            .teams
            .put_member(team.org_id, team.id, user.id, role, &added)
            .await?)
    }

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

    /// Creates a team with some first members, all of the actor's organization.
    pub async fn create_team(
        &self,
        actor: &User,
        name: &str,
        members: &[UserId],
    ) -> Result<Team, Error> {
        require_admin(actor, "create teams")?;
        let name = text::name("name", name, MAX_TEAM_NAME)?;
        // A person named twice joins once, with one event.
        let mut joining: Vec<User> = Vec::with_capacity(members.len());
        for m in members {
            if !joining.iter().any(|u| u.id == *m) {
                joining.push(person_in_scope(&*self.people, actor, *m).await?);
            }
        }
        let now = self.clock.now();
        let team = TeamRef {
            org_id: actor.org_id,
            id: TeamId::new(),
            name: &name,
        };
        let joined: Vec<_> = joining
            .iter()
            .map(|u| team_user_added(team, u, TeamRole::Member, now))
            .collect();
        let ids: Vec<UserId> = joining.iter().map(|u| u.id).collect();
        Ok(self
            .teams
            .create_team(actor.org_id, team.id, &name, &ids, &joined)
            .await?)
    }

    /// Renames, archives (`active: false`) or restores a team.
    pub async fn update_team(
        &self,
        actor: &User,
        id: TeamId,
        name: Option<&str>,
        active: Option<bool>,
    ) -> Result<Team, Error> {
        require_admin(actor, "change teams")?;
        let name = name
            .map(|n| text::name("name", n, MAX_TEAM_NAME))
            .transpose()?;
        Ok(self
            .teams
            .update_team(actor.org_id, id, name.as_deref(), active)
            .await?)
    }

    /// Archives a team (kept for history; hidden from listings by default).
    pub async fn archive_team(&self, actor: &User, id: TeamId) -> Result<Team, Error> {
        self.update_team(actor, id, None, Some(false)).await
    }

    /// The members of a team the actor may see.
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
        Ok(self.membership(actor, team, user).await?.1)
    }

    /// The team and the membership an admin manages.
    async fn membership(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
    ) -> Result<(Team, TeamMember), Error> {
        require_admin(actor, "manage team members")?;
        let team = self.teams.get_team(actor.org_id, team).await?;
        person_in_scope(&*self.people, actor, user).await?;
        let member = self.teams.get_member(actor.org_id, team.id, user).await?;
        Ok((team, member))
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
        let team = self.teams.get_team(actor.org_id, team).await?;
        let person = person_in_scope(&*self.people, actor, user).await?;
        self.join(&team, &person, role).await
    }

    /// Changes an existing membership.
    pub async fn patch_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
        role: Option<TeamRole>,
    ) -> Result<TeamMember, Error> {
        let (team, existing) = self.membership(actor, team, user).await?;
        if role.is_none() {
            return Ok(existing);
        }
        // Were they removed meanwhile, this adds them back, and the port records that.
        Ok(self.join(&team, &existing.user, role).await?.0)
    }

    pub async fn remove_member(
        &self,
        actor: &User,
        team: TeamId,
        user: UserId,
    ) -> Result<(), Error> {
        let (team, existing) = self.membership(actor, team, user).await?;
        let removed = team_user_removed(
            (&team).into(),
            &existing.user,
            existing.role,
            self.clock.now(),
        );
        Ok(self
            .teams
            .remove_member(actor.org_id, team.id, user, &removed)
            .await?)
    }

    /// Invites people into a team: people of the organization (by id or e-mail) join at once;
    /// unknown identifiers get an invitation that includes the team. Anyone of another
    /// organization refuses the whole request before anything changes.
    pub async fn invite_to_team(
        &self,
        actor: &User,
        team: TeamId,
        identifiers: &[String],
    ) -> Result<TeamInviteOutcome, Error> {
        require_admin(actor, "invite people to teams")?;
        let team = self.teams.get_team(actor.org_id, team).await?;
        check_invite_count(identifiers)?;
        let mut join: Vec<User> = Vec::new();
        let mut invite = Vec::new();
        let mut emails = Vec::new();
        for raw in identifiers {
            if let Ok(id) = raw.trim().parse::<UserId>() {
                join.push(person_in_scope(&*self.people, actor, id).await?);
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
                    join.push(u.clone());
                    false
                }
                None => true,
            }
        });
        let mut outcome = TeamInviteOutcome::default();
        let mut added: Vec<UserId> = Vec::with_capacity(join.len());
        for user in join {
            // Named twice (by id and by e-mail, say): joins once.
            if added.contains(&user.id) {
                continue;
            }
            added.push(user.id);
            outcome.added.push(self.join(&team, &user, None).await?.0);
        }
        for (identifier, is_email) in invite {
            let new = NewInvitation {
                identifier,
                is_email,
                is_guest: false,
                team_ids: vec![team.id],
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
}
