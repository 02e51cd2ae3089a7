//! Pending invitations to join an organization (`InvitationService`): members and admins invite,
//! guests may not; only admins see and revoke pending invitations.

use std::sync::Arc;

use teamcomm_kernel::{Error, OrgId, Page, PageRequest, RepoError, TeamId, UserId, text};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::access::{refuse_guest, require_admin};
use crate::commands::normalize_email;
use crate::{InvitationKind, InvitationRepository, OrgRepository, TeamRepository, User};

#[cfg(test)]
mod tests;

/// A pending invitation to join the organization (and possibly some of its teams).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub id: Uuid,
    pub org_id: OrgId,
    /// An e-mail address, or a chat-platform user id.
    pub identifier: String,
    pub is_email: bool,
    pub is_guest: bool,
    pub team_ids: Vec<TeamId>,
    pub followup_ids: Vec<Uuid>,
    pub invited_by: Option<UserId>,
    pub resend_count: i32,
    pub created_at: OffsetDateTime,
}

/// A validated invitation to create (or to resend when one is pending).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInvitation {
    pub identifier: String,
    pub is_email: bool,
    pub is_guest: bool,
    pub team_ids: Vec<TeamId>,
    pub followup_ids: Vec<Uuid>,
    pub invited_by: Option<UserId>,
}

/// The most identifiers one invitation request may carry.
pub const MAX_INVITES_PER_REQUEST: usize = 100;

/// The longest identifier (an e-mail address's limit), in characters.
/// The longest invitation identifier (an e-mail address or a chat-platform user id), in characters.
pub const MAX_IDENTIFIER: usize = 254;

/// Splits identifiers into e-mails (normalised) and chat-platform ids (visible text without
/// spaces), refusing anything else.
pub fn classify_identifier(raw: &str) -> Result<(String, bool), Error> {
    let id = text::name("users_identifiers", raw, MAX_IDENTIFIER)?;
    if id.contains('@') {
        return match normalize_email(&id) {
            Some(email) => Ok((email, true)),
            None => Err(Error::invalid_field(
                "users_identifiers",
                format!("\"{id}\" is not a valid e-mail address."),
            )),
        };
    }
    if id.contains(char::is_whitespace) {
        return Err(Error::invalid_field(
            "users_identifiers",
            format!("\"{id}\" is neither an e-mail address nor a chat-platform user id."),
        ));
    }
    Ok((id, false))
}

/// 1 to [`MAX_INVITES_PER_REQUEST`] identifiers.
pub(crate) fn check_invite_count(identifiers: &[String]) -> Result<(), Error> {
    if identifiers.is_empty() {
        return Err(Error::invalid_field(
            "users_identifiers",
            "Name at least one person to invite.",
        ));
    }
    if identifiers.len() > MAX_INVITES_PER_REQUEST {
        return Err(Error::invalid_field(
            "users_identifiers",
            format!("At most {MAX_INVITES_PER_REQUEST} people per request."),
        ));
    }
    Ok(())
}

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

/// Invitations to the actor's organization.
#[derive(Clone)]
pub struct InvitationService {
    people: Arc<dyn OrgRepository>,
    teams: Arc<dyn TeamRepository>,
    invitations: Arc<dyn InvitationRepository>,
}

impl InvitationService {
    pub fn new(
        people: Arc<dyn OrgRepository>,
        teams: Arc<dyn TeamRepository>,
        invitations: Arc<dyn InvitationRepository>,
    ) -> Self {
        InvitationService {
            people,
            teams,
            invitations,
        }
    }

    /// Invites people to the organization (non-guests may invite). People already in it are
    /// reported, not invited; inviting a pending identifier again resends its invitation.
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
        let mut parsed: Vec<(String, bool)> = Vec::new();
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
                .any(|(i, _)| i.eq_ignore_ascii_case(&identifier))
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
}
