//! `MessagingService`: sending a bot message (`POST /v1/send-message/`: resolve the targets,
//! check who may reach them, queue the message with its job), its status
//! (`GET /v1/messages/{id}/`) and opening a group conversation (`POST /v1/open-conversation/`,
//! the one call that reaches the platform at once).

use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::jobs::{JobKind, NewJob};
use teamcomm_kernel::{
    Error, ErrorCode, OrgId, PageRequest, RepoError, SharedClock, TeamId, UserId,
};
use teamcomm_org::{OrgRepository, TeamFilter, TeamRepository, User};
use uuid::Uuid;

use crate::ChannelRepository;
use crate::message::{
    Delivery, DeliveryStatus, DeliveryTarget, Message, MessageContent, MessageId, MessageKind,
};
use crate::platform::{BotAppearance, PlatformError};
use crate::ports::{MessageRepository, PlatformConnector, PlatformDirectory};
use crate::request::{ChannelTarget, PersonRef, SendMessage, SendMessageRequest};

#[cfg(test)]
mod tests;

/// Attempts before a message's undelivered targets end `failed` `attempts_exhausted` (with the
/// default backoff, about an hour and a half).
pub const MESSAGE_MAX_ATTEMPTS: u32 = 10;
/// At most this many people in a conversation opened for them.
pub const MAX_CONVERSATION_PARTICIPANTS: usize = 7;

/// How the caller authenticated, which sets how far its messages may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderCredential {
    /// An API key: anyone and any channel of the organization.
    ApiKey,
    /// A CLI session: an admin reaches anyone; anyone else reaches themself, the people and
    /// teams they share a team with, and the organization's registered channels.
    CliSession,
}

/// What a send queued: the ids clients read back (`bot_message_id`, `thread_responses`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageQueued {
    pub bot_message_id: MessageId,
    pub thread_responses: Vec<MessageId>,
}

/// A message with its thread responses, for the status view.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageReport {
    pub message: Message,
    pub thread_responses: Vec<Message>,
}

/// The ports [`MessagingService`] works through.
#[derive(Clone)]
pub struct MessagingPorts {
    pub messages: Arc<dyn MessageRepository>,
    pub people: Arc<dyn OrgRepository>,
    pub teams: Arc<dyn TeamRepository>,
    pub channels: Arc<dyn ChannelRepository>,
    pub directory: Arc<dyn PlatformDirectory>,
    pub connector: Arc<dyn PlatformConnector>,
    pub clock: SharedClock,
}

/// Bot messages of the actor's organization.
#[derive(Clone)]
pub struct MessagingService {
    ports: MessagingPorts,
}

/// The targets of a send once looked up.
struct Resolved {
    people: Vec<User>,
    channels: Vec<ChannelTarget>,
}

impl Resolved {
    /// A delivery per person and channel; `no_users_found` when that is nobody.
    fn targets(&self) -> Result<Vec<DeliveryTarget>, Error> {
        let targets: Vec<DeliveryTarget> = self
            .people
            .iter()
            .map(|u| DeliveryTarget::Person(u.id))
            .chain(self.channels.iter().map(|c| DeliveryTarget::Channel {
                channel_id: c.id.clone(),
                thread: c.thread.clone(),
            }))
            .collect();
        if targets.is_empty() {
            return Err(Error::new(
                ErrorCode::NoUsersFound,
                "Nobody would receive this message: the teams named have no active members.",
            ));
        }
        Ok(targets)
    }
}

impl MessagingService {
    pub fn new(ports: MessagingPorts) -> Self {
        MessagingService { ports }
    }

    /// Queues a message (or an edit of one) for delivery and answers its ids; the delivery
    /// worker sends it. Checks, in order: the request ([`SendMessageRequest::validate`]);
    /// `send_as_user` (admins only: 403 `org_admin_required`; `send_as_user_not_found` unless
    /// an active person of the organization); for an edit, the message named
    /// (`not_found` unless one of the organization); the targets (`one_or_more_users_not_found`
    /// with `extra.users`, `no_valid_team` with `extra.uuids`); the caller's reach
    /// ([`SenderCredential`]; 403 `cli_send_message_target_not_allowed` with `extra.targets`);
    /// `no_users_found` when the targets are nobody.
    pub async fn send_message(
        &self,
        actor: &User,
        credential: SenderCredential,
        request: SendMessageRequest,
    ) -> Result<MessageQueued, Error> {
        let send = request.validate()?;
        let org = actor.org_id;
        let mut content = send.content.clone();
        let send_as = match send.send_as_user {
            Some(id) => {
                let person = self.send_as(actor, id).await?;
                content.appearance = BotAppearance {
                    username: Some(person.full_name()).filter(|n| !n.is_empty()),
                    icon_url: person.image.clone(),
                    icon_emoji: None,
                };
                Some(person.id)
            }
            None => None,
        };
        let role_scoped = credential == SenderCredential::CliSession && !actor.role.is_admin();
        let now = self.ports.clock.now();

        if let Some(named) = &send.edit {
            let original = self.original_for_edit(org, named).await?;
            if role_scoped && original.sender != actor.id {
                return Err(target_not_allowed(vec![named.clone()]));
            }
            let edit = Message {
                id: MessageId::new(),
                org_id: org,
                sender: actor.id,
                send_as,
                kind: MessageKind::Edit {
                    original: original.id,
                },
                content,
                deliveries: queued(original.deliveries.iter().map(|d| d.target.clone()), now),
                created_at: now,
            };
            self.ports
                .messages
                .queue_messages(std::slice::from_ref(&edit), &[job(org, edit.id, now)])
                .await?;
            return Ok(MessageQueued {
                bot_message_id: edit.id,
                thread_responses: vec![],
            });
        }

        let resolved = self.resolve(org, &send).await?;
        if role_scoped {
            self.check_reach(actor, &send, &resolved).await?;
        }
        let targets = resolved.targets()?;
        let parent = Message {
            id: MessageId::new(),
            org_id: org,
            sender: actor.id,
            send_as,
            kind: MessageKind::Post,
            deliveries: queued(targets.iter().cloned(), now),
            content: content.clone(),
            created_at: now,
        };
        let replies = send
            .thread_responses
            .iter()
            .enumerate()
            .map(|(i, text)| Message {
                id: MessageId::new(),
                org_id: org,
                sender: actor.id,
                send_as,
                kind: MessageKind::ThreadResponse {
                    parent: parent.id,
                    position: i as u32,
                },
                content: MessageContent {
                    text: text.clone(),
                    image_url: None,
                    buttons: vec![],
                    appearance: content.appearance.clone(),
                    is_ephemeral: content.is_ephemeral,
                    metadata: content.metadata.clone(),
                },
                deliveries: queued(targets.iter().cloned(), now),
                created_at: now,
            });
        let messages: Vec<Message> = std::iter::once(parent.clone()).chain(replies).collect();
        // One job: the worker sends the replies of a delivery right after it lands.
        self.ports
            .messages
            .queue_messages(&messages, &[job(org, parent.id, now)])
            .await?;
        Ok(MessageQueued {
            bot_message_id: parent.id,
            thread_responses: messages[1..].iter().map(|m| m.id).collect(),
        })
    }

    /// Queues a message the service itself sends (a check-in's question, reminder or report):
    /// no caller, so no reach to check. `id` is chosen by the caller so that a send repeated
    /// (after a crash, or by another server doing the same work) is queued once: answers
    /// `false` when a message with this id is already queued. `on_behalf_of` is recorded as
    /// the sender (with the admins, who may read its status).
    pub async fn queue_system_message(
        &self,
        org: OrgId,
        id: MessageId,
        on_behalf_of: UserId,
        targets: Vec<DeliveryTarget>,
        text: String,
    ) -> Result<bool, Error> {
        let content = MessageContent {
            text,
            image_url: None,
            buttons: vec![],
            appearance: BotAppearance::default(),
            is_ephemeral: false,
            metadata: serde_json::Map::new(),
        };
        self.queue_once(org, id, on_behalf_of, targets, content)
            .await
    }

    /// Queues a message an automation sends (a workflow's `send_message` step): the request's
    /// rules and target resolution of [`MessagingService::send_message`] (unknown people
    /// `one_or_more_users_not_found`, teams `no_valid_team`, nobody `no_users_found`), without a
    /// caller's reach (the workflow's author chose the targets) and without edits or thread
    /// responses. As for system messages, `id` is the caller's, so a repeated step queues it
    /// once (`false` when already queued).
    pub async fn queue_automated(
        &self,
        org: OrgId,
        id: MessageId,
        on_behalf_of: UserId,
        request: SendMessageRequest,
    ) -> Result<bool, Error> {
        let send = request.validate()?;
        let resolved = self.resolve(org, &send).await?;
        let targets = resolved.targets()?;
        self.queue_once(org, id, on_behalf_of, targets, send.content)
            .await
    }

    /// One post with its job; `false` when a message with this id is already queued.
    async fn queue_once(
        &self,
        org: OrgId,
        id: MessageId,
        on_behalf_of: UserId,
        targets: Vec<DeliveryTarget>,
        content: MessageContent,
    ) -> Result<bool, Error> {
        let now = self.ports.clock.now();
        let message = Message {
            id,
            org_id: org,
            sender: on_behalf_of,
            send_as: None,
            kind: MessageKind::Post,
            deliveries: queued(targets.into_iter(), now),
            content,
            created_at: now,
        };
        match self
            .ports
            .messages
            .queue_messages(std::slice::from_ref(&message), &[job(org, id, now)])
            .await
        {
            Ok(()) => Ok(true),
            Err(RepoError::Conflict { constraint }) if constraint == "messages_pkey" => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// A message of the actor's organization with its thread responses. The sender and admins
    /// see it; for anyone else, as for another organization's or an id that is not ours, 404.
    pub async fn get_message(&self, actor: &User, id: &str) -> Result<MessageReport, Error> {
        let id = MessageId::parse(id).ok_or_else(Error::not_found)?;
        let message = self.ports.messages.get_message(actor.org_id, id).await?;
        if !crate::may_see_send(actor, message.sender) {
            return Err(Error::not_found());
        }
        let thread_responses = self
            .ports
            .messages
            .thread_responses(actor.org_id, id)
            .await?;
        Ok(MessageReport {
            message,
            thread_responses,
        })
    }

    /// Opens (or finds again: the platform answers the same conversation for the same people)
    /// a conversation of the bot with these people; answers its channel id. Admins only
    /// (`org_admin_required`); at most 7 people (`conversation_too_many_participants`); none
    /// (`no_valid_users`); every one an active person of the organization
    /// (`one_or_more_users_not_found`, `extra.users`) with an identity on the platform (else
    /// the same code; `no_valid_users` when nobody has one); a platform connected
    /// (`platform_not_connected`) that has group conversations (406
    /// `open_conversation_not_supported`); `conversation_can_not_be_opened` when the platform
    /// refuses.
    pub async fn open_conversation(
        &self,
        actor: &User,
        users_uuids: &[String],
    ) -> Result<String, Error> {
        if !actor.role.is_admin() {
            return Err(Error::new(
                ErrorCode::OrgAdminRequired,
                "Only admins open conversations.",
            ));
        }
        let mut named: Vec<&str> = Vec::new();
        for typed in users_uuids.iter().map(|s| s.trim()) {
            if !named.contains(&typed) {
                named.push(typed);
            }
        }
        if named.len() > MAX_CONVERSATION_PARTICIPANTS {
            return Err(Error::new(
                ErrorCode::ConversationTooManyParticipants,
                "A conversation has at most 7 people.",
            )
            .with_extra("limit", MAX_CONVERSATION_PARTICIPANTS));
        }
        if named.is_empty() {
            return Err(Error::new(
                ErrorCode::NoValidUsers,
                "Name the people to talk to.",
            ));
        }
        let org = actor.org_id;
        let mut people: Vec<User> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        for typed in named {
            match self.active_person(org, Uuid::parse_str(typed).ok()).await? {
                Some(u) => push_person(&mut people, u),
                None => unknown.push(typed.to_owned()),
            }
        }
        if !unknown.is_empty() {
            return Err(users_not_found(unknown));
        }

        let connection = self
            .ports
            .directory
            .connection(org)
            .await?
            .ok_or_else(platform_not_connected)?;
        if !connection.kind.has_group_conversations() {
            return Err(conversation_not_supported());
        }
        let ids: Vec<UserId> = people.iter().map(|u| u.id).collect();
        let identities = self
            .ports
            .directory
            .platform_user_ids(org, connection.kind, &ids)
            .await?;
        let (with, without): (Vec<&User>, Vec<&User>) =
            people.iter().partition(|u| identities.contains_key(&u.id));
        if with.is_empty() {
            return Err(Error::new(
                ErrorCode::NoValidUsers,
                "None of these people is on the organization's chat platform.",
            ));
        }
        if !without.is_empty() {
            return Err(users_not_found(
                without.iter().map(|u| u.id.to_string()).collect(),
            ));
        }
        let platform_user_ids: Vec<String> =
            with.iter().map(|u| identities[&u.id].clone()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        let key = format!(
            "conversation:{org}:{}",
            sorted
                .iter()
                .map(|id| id.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        let platform = self
            .ports
            .connector
            .connect(&connection)
            .map_err(conversation_refused)?;
        platform
            .open_conversation(&platform_user_ids, &key)
            .await
            .map_err(conversation_refused)
    }

    /// The person to send as: an admin's choice of an active person of the organization.
    async fn send_as(&self, actor: &User, id: UserId) -> Result<User, Error> {
        if !actor.role.is_admin() {
            return Err(Error::new(
                ErrorCode::OrgAdminRequired,
                "Only admins may send as another person.",
            ));
        }
        self.active_person(actor.org_id, Some(id.0))
            .await?
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::SendAsUserNotFound,
                    "send_as_user is not an active person of your organization.",
                )
            })
    }

    /// The active person of `org` with this id, if any.
    async fn active_person(&self, org: OrgId, id: Option<Uuid>) -> Result<Option<User>, Error> {
        let Some(id) = id else { return Ok(None) };
        match self.ports.people.get_user(org, UserId(id)).await {
            Ok(u) if u.is_active => Ok(Some(u)),
            Ok(_) | Err(RepoError::NotFound) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The message an edit rewrites: the original of the chain the named message is in.
    async fn original_for_edit(&self, org: OrgId, named: &str) -> Result<Message, Error> {
        let id = MessageId::parse(named).ok_or_else(Error::not_found)?;
        let message = self.ports.messages.get_message(org, id).await?;
        match message.kind {
            MessageKind::Edit { original } => {
                Ok(self.ports.messages.get_message(org, original).await?)
            }
            MessageKind::Post | MessageKind::ThreadResponse { .. } => Ok(message),
        }
    }

    /// The people (named, then the teams' active members; each once) and channels of a send.
    async fn resolve(&self, org: OrgId, send: &SendMessage) -> Result<Resolved, Error> {
        let mut people: Vec<User> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        let emails: Vec<String> = send
            .users
            .iter()
            .filter_map(|p| match p {
                PersonRef::Email(e) => Some(e.clone()),
                PersonRef::Id(_) => None,
            })
            .collect();
        let by_email = if emails.is_empty() {
            Vec::new()
        } else {
            self.ports.people.find_users_by_email(org, &emails).await?
        };
        for person in &send.users {
            let found = match person {
                PersonRef::Id(id) => self.active_person(org, Some(id.0)).await?,
                PersonRef::Email(e) => by_email
                    .iter()
                    .find(|u| u.email.eq_ignore_ascii_case(e) && u.is_active)
                    .cloned(),
            };
            match found {
                Some(u) => push_person(&mut people, u),
                None => unknown.push(match person {
                    PersonRef::Id(id) => id.to_string(),
                    PersonRef::Email(e) => e.clone(),
                }),
            }
        }
        if !unknown.is_empty() {
            return Err(users_not_found(unknown));
        }
        for team in &send.teams {
            for u in self.team_members(org, *team).await? {
                push_person(&mut people, u);
            }
        }
        Ok(Resolved {
            people,
            channels: send.channels.clone(),
        })
    }

    /// The active members of an active team of `org`; `no_valid_team` for any other team.
    async fn team_members(&self, org: OrgId, team: TeamId) -> Result<Vec<User>, Error> {
        match self.ports.teams.get_team(org, team).await {
            Ok(t) if t.active => {}
            Ok(_) | Err(RepoError::NotFound) => {
                return Err(Error::new(
                    ErrorCode::NoValidTeam,
                    "A team named is not an active team of your organization.",
                )
                .with_extra("uuids", vec![team.to_string()]));
            }
            Err(e) => return Err(e.into()),
        }
        let members = self
            .ports
            .teams
            .list_members(org, team, PageRequest::all())
            .await?;
        Ok(members
            .results
            .into_iter()
            .map(|m| m.user)
            .filter(|u| u.is_active)
            .collect())
    }

    /// A role-scoped sender reaches themself, the people and teams of the teams they are in,
    /// and the organization's registered channels.
    async fn check_reach(
        &self,
        actor: &User,
        send: &SendMessage,
        resolved: &Resolved,
    ) -> Result<(), Error> {
        let org = actor.org_id;
        let own_teams: Vec<TeamId> = self
            .ports
            .teams
            .list_teams(
                org,
                &TeamFilter {
                    member_of: Some(actor.id),
                    ..TeamFilter::default()
                },
                PageRequest::all(),
            )
            .await?
            .results
            .into_iter()
            .map(|t| t.id)
            .collect();
        let mut refused: Vec<String> = Vec::new();
        for team in &send.teams {
            if !own_teams.contains(team) {
                refused.push(team.to_string());
            }
        }
        // The people named directly (team members came with an allowed team, or were refused
        // with it).
        let named = resolved.people.iter().filter(|u| {
            send.users.iter().any(|p| match p {
                PersonRef::Id(id) => *id == u.id,
                PersonRef::Email(e) => u.email.eq_ignore_ascii_case(e),
            })
        });
        for person in named {
            if person.id == actor.id {
                continue;
            }
            let mut shares_a_team = false;
            for team in &own_teams {
                if self.ports.teams.is_member(*team, person.id).await? {
                    shares_a_team = true;
                    break;
                }
            }
            if !shares_a_team {
                refused.push(person.id.to_string());
            }
        }
        if !resolved.channels.is_empty() {
            let registered = self.ports.channels.list_channels(org, None).await?;
            for channel in &resolved.channels {
                if !registered.iter().any(|c| c.id == channel.id) {
                    refused.push(channel.id.clone());
                }
            }
        }
        if refused.is_empty() {
            Ok(())
        } else {
            Err(target_not_allowed(refused))
        }
    }
}

fn push_person(people: &mut Vec<User>, person: User) {
    if !people.iter().any(|p| p.id == person.id) {
        people.push(person);
    }
}

/// Deliveries to `targets`, all queued, indexed from 0.
fn queued(
    targets: impl Iterator<Item = DeliveryTarget>,
    now: time::OffsetDateTime,
) -> Vec<Delivery> {
    targets
        .enumerate()
        .map(|(i, target)| Delivery {
            index: i as u32,
            target,
            status: DeliveryStatus::Queued,
            updated_at: now,
        })
        .collect()
}

/// The delivery job of a message.
fn job(org: OrgId, message: MessageId, now: time::OffsetDateTime) -> NewJob {
    NewJob {
        id: Uuid::now_v7(),
        org_id: org,
        kind: JobKind::ChatMessage,
        payload: json!({ "message_id": message.0 }),
        run_at: now,
        max_attempts: MESSAGE_MAX_ATTEMPTS,
    }
}

fn users_not_found(users: Vec<String>) -> Error {
    Error::new(
        ErrorCode::OneOrMoreUsersNotFound,
        "Some of the people named are not active people of your organization.",
    )
    .with_extra("users", users)
}

fn target_not_allowed(targets: Vec<String>) -> Error {
    Error::new(
        ErrorCode::CliSendMessageTargetNotAllowed,
        "A CLI session reaches you, your teams and their people, and registered channels; \
         use an API key or an admin's session for the others.",
    )
    .with_extra("targets", targets)
}

fn platform_not_connected() -> Error {
    Error::new(
        ErrorCode::PlatformNotConnected,
        "Your organization has no chat platform connected.",
    )
}

fn conversation_not_supported() -> Error {
    Error::new(
        ErrorCode::OpenConversationNotSupported,
        "Your organization's chat platform has no group conversations.",
    )
}

/// A platform's refusal to open a conversation, as the client sees it.
fn conversation_refused(e: PlatformError) -> Error {
    match e {
        PlatformError::Unsupported(_) => conversation_not_supported(),
        e => {
            let error = Error::new(
                ErrorCode::ConversationCanNotBeOpened,
                "The chat platform could not open the conversation.",
            );
            match e.retry_after() {
                Some(after) => error.with_extra("retry_after", after.as_secs()),
                None => error,
            }
        }
    }
}
