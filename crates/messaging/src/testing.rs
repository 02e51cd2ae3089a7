//! In-memory implementations of the messaging ports, for rule tests and the port contract
//! suite, and fakes of the outside world for the domain's tests:
//!
//! - [`InMemoryChannelRepository`] answers like the Postgres adapter: one channel per
//!   (organization, id), re-registering renames it, listings ordered by name then id (byte-wise,
//!   as the database's C collation). Unlike the adapter it cannot check that the organization
//!   exists unless told how ([`InMemoryChannelRepository::with_organizations`]).
//! - [`InMemoryMessageRepository`] and [`InMemoryEmailRepository`] write their jobs into an
//!   [`InMemoryJobQueue`], all or nothing, as the adapter's transaction does.
//! - [`InMemoryPlatformDirectory`]: connections and platform identities, set by the test; also
//!   the poll cursors ([`PollCursors`]), forgotten with the connection as the adapter's do.
//! - [`RecordingChatPlatform`] (with [`FixedConnector`]) and [`RecordingMailer`]: they record
//!   what was sent and fail as scripted. They stand in for Matrix, Slack and SMTP in domain
//!   tests only; the adapters are tested against the real thing.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::{OrgId, RepoError, SharedClock, SystemClock, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::cursors::PollCursors;
use crate::email::{Email, EmailStatus};
use crate::mail::{MailError, Mailer, OutgoingMail};
use crate::message::{DeliveryStatus, Message, MessageId, MessageKind};
use crate::platform::{
    ChatPlatform, Destination, InboundBatch, OutgoingMessage, PlatformChannel, PlatformError,
    PlatformKind, SentMessage,
};
use crate::ports::{
    EmailRepository, MessageRepository, PLATFORM_IDENTITIES_UNIQUE, PlatformConnection,
    PlatformConnector, PlatformDirectory, PlatformSecret,
};
use crate::{Channel, ChannelRepository, NewChannel};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Channels held in memory.
pub struct InMemoryChannelRepository {
    clock: SharedClock,
    channels: Mutex<Vec<Channel>>,
    /// Which organizations exist, when known: a channel of another one is refused as the
    /// Postgres foreign key refuses it.
    organizations: Option<Arc<dyn Fn(OrgId) -> bool + Send + Sync>>,
}

impl Default for InMemoryChannelRepository {
    fn default() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }
}

impl InMemoryChannelRepository {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stamps `created_at` from `clock`.
    pub fn with_clock(clock: SharedClock) -> Self {
        InMemoryChannelRepository {
            clock,
            channels: Mutex::new(Vec::new()),
            organizations: None,
        }
    }

    /// Refuses channels of organizations for which `exists` says no
    /// (`report_channels_organization_id_fkey`, as Postgres does).
    pub fn with_organizations(
        mut self,
        exists: impl Fn(OrgId) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.organizations = Some(Arc::new(exists));
        self
    }
}

#[async_trait]
impl ChannelRepository for InMemoryChannelRepository {
    async fn upsert_channel(&self, org: OrgId, new: &NewChannel) -> Result<Channel, RepoError> {
        // The schema's `CHECK (length(…) BETWEEN 1 AND 200)` on id and name.
        for (constraint, value) in [
            ("report_channels_id_check", &new.id),
            ("report_channels_name_check", &new.name),
        ] {
            if !(1..=200).contains(&value.chars().count()) {
                return Err(RepoError::Other(format!(
                    "violates check constraint {constraint}"
                )));
            }
        }
        if self
            .organizations
            .as_ref()
            .is_some_and(|exists| !exists(org))
        {
            return Err(RepoError::Conflict {
                constraint: "report_channels_organization_id_fkey".to_owned(),
            });
        }
        let mut channels = self.channels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = channels
            .iter_mut()
            .find(|c| c.org_id == org && c.id == new.id)
        {
            existing.name.clone_from(&new.name);
            existing.platform.clone_from(&new.platform);
            existing.channel_type = new.channel_type;
            return Ok(existing.clone());
        }
        let channel = Channel {
            org_id: org,
            id: new.id.clone(),
            name: new.name.clone(),
            platform: new.platform.clone(),
            channel_type: new.channel_type,
            created_at: self.clock.now(),
        };
        channels.push(channel.clone());
        Ok(channel)
    }

    async fn list_channels(
        &self,
        org: OrgId,
        name: Option<&str>,
    ) -> Result<Vec<Channel>, RepoError> {
        let mut rows: Vec<Channel> = self
            .channels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|c| c.org_id == org)
            .filter(|c| name.is_none_or(|n| c.name.to_lowercase().contains(&n.to_lowercase())))
            .cloned()
            .collect();
        rows.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
        Ok(rows)
    }
}

/// Messages held in memory; their jobs go to the shared queue.
#[derive(Clone, Default)]
pub struct InMemoryMessageRepository {
    messages: Arc<Mutex<Vec<Message>>>,
    queue: InMemoryJobQueue,
}

impl InMemoryMessageRepository {
    /// Messages whose jobs go to `queue`.
    pub fn new(queue: InMemoryJobQueue) -> Self {
        InMemoryMessageRepository {
            messages: Arc::default(),
            queue,
        }
    }

    /// Every message stored, oldest first.
    pub fn all(&self) -> Vec<Message> {
        lock(&self.messages).clone()
    }
}

#[async_trait]
impl MessageRepository for InMemoryMessageRepository {
    async fn queue_messages(&self, messages: &[Message], jobs: &[NewJob]) -> Result<(), RepoError> {
        let mut held = lock(&self.messages);
        let duplicate = messages.iter().enumerate().any(|(i, m)| {
            held.iter().any(|h| h.id == m.id) || messages[..i].iter().any(|o| o.id == m.id)
        });
        if duplicate {
            return Err(RepoError::Conflict {
                constraint: "messages_pkey".into(),
            });
        }
        // The jobs first: when they are refused, no message is stored either.
        self.queue.enqueue(jobs)?;
        held.extend(messages.iter().cloned());
        Ok(())
    }

    async fn get_message(&self, org: OrgId, id: MessageId) -> Result<Message, RepoError> {
        lock(&self.messages)
            .iter()
            .find(|m| m.org_id == org && m.id == id)
            .cloned()
            .ok_or(RepoError::NotFound)
    }

    async fn thread_responses(
        &self,
        org: OrgId,
        parent: MessageId,
    ) -> Result<Vec<Message>, RepoError> {
        let mut replies: Vec<(u32, Message)> = lock(&self.messages)
            .iter()
            .filter(|m| m.org_id == org)
            .filter_map(|m| match m.kind {
                MessageKind::ThreadResponse {
                    parent: p,
                    position,
                } if p == parent => Some((position, m.clone())),
                _ => None,
            })
            .collect();
        replies.sort_by_key(|(position, _)| *position);
        Ok(replies.into_iter().map(|(_, m)| m).collect())
    }

    async fn record_delivery(
        &self,
        org: OrgId,
        message: MessageId,
        index: u32,
        status: &DeliveryStatus,
        at: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let mut held = lock(&self.messages);
        let delivery = held
            .iter_mut()
            .find(|m| m.org_id == org && m.id == message)
            .and_then(|m| m.deliveries.iter_mut().find(|d| d.index == index))
            .ok_or(RepoError::NotFound)?;
        delivery.status = status.clone();
        delivery.updated_at = at;
        Ok(())
    }
}

/// E-mails held in memory; their jobs go to the shared queue.
#[derive(Clone, Default)]
pub struct InMemoryEmailRepository {
    emails: Arc<Mutex<Vec<Email>>>,
    queue: InMemoryJobQueue,
}

impl InMemoryEmailRepository {
    pub fn new(queue: InMemoryJobQueue) -> Self {
        InMemoryEmailRepository {
            emails: Arc::default(),
            queue,
        }
    }

    /// Every e-mail stored, oldest first.
    pub fn all(&self) -> Vec<Email> {
        lock(&self.emails).clone()
    }
}

#[async_trait]
impl EmailRepository for InMemoryEmailRepository {
    async fn queue_emails(&self, emails: &[Email], jobs: &[NewJob]) -> Result<(), RepoError> {
        let mut held = lock(&self.emails);
        if emails.iter().any(|e| held.iter().any(|h| h.id == e.id)) {
            return Err(RepoError::Conflict {
                constraint: "emails_pkey".into(),
            });
        }
        self.queue.enqueue(jobs)?;
        held.extend(emails.iter().cloned());
        Ok(())
    }

    async fn get_email(&self, org: OrgId, id: Uuid) -> Result<Email, RepoError> {
        lock(&self.emails)
            .iter()
            .find(|e| e.org_id == org && e.id == id)
            .cloned()
            .ok_or(RepoError::NotFound)
    }

    async fn record_email(
        &self,
        org: OrgId,
        id: Uuid,
        status: &EmailStatus,
        _at: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let mut held = lock(&self.emails);
        let email = held
            .iter_mut()
            .find(|e| e.org_id == org && e.id == id)
            .ok_or(RepoError::NotFound)?;
        email.status = *status;
        Ok(())
    }
}

type IdentityKey = (OrgId, PlatformKind, UserId);

/// Connections and platform identities. Like the adapter's foreign key, it refuses identities
/// of people who are not of the organization when told who is ([`Self::with_people`]).
#[derive(Clone, Default)]
pub struct InMemoryPlatformDirectory {
    connections: Arc<Mutex<HashMap<OrgId, PlatformConnection>>>,
    /// Platform user ids by (organization, platform, person).
    identities: Arc<Mutex<HashMap<IdentityKey, String>>>,
    /// Whether a person is of an organization, when known.
    people: Option<Arc<dyn Fn(OrgId, UserId) -> bool + Send + Sync>>,
    /// Poll cursors by organization, with the kind they are of.
    cursors: Arc<Mutex<HashMap<OrgId, (PlatformKind, String)>>>,
}

impl InMemoryPlatformDirectory {
    pub fn new() -> Self {
        Self::default()
    }

    /// Refuses identities of people for whom `is_of(org, user)` says no (`NotFound`).
    pub fn with_people(
        mut self,
        is_of: impl Fn(OrgId, UserId) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.people = Some(Arc::new(is_of));
        self
    }

    /// Connects `org` to a platform of `kind` (with a made-up secret).
    pub fn connect(&self, org: OrgId, kind: PlatformKind) {
        lock(&self.connections).insert(
            org,
            PlatformConnection {
                org_id: org,
                kind,
                base_url: None,
                secret: PlatformSecret::new("test-token"),
                signing_secret: None,
            },
        );
    }

    pub fn disconnect(&self, org: OrgId) {
        lock(&self.connections).remove(&org);
        lock(&self.cursors).remove(&org);
    }

    /// Records who `user` of `org` is on `kind`.
    pub fn map_person(&self, org: OrgId, kind: PlatformKind, user: UserId, platform_user_id: &str) {
        lock(&self.identities).insert((org, kind, user), platform_user_id.to_owned());
    }
}

#[async_trait]
impl PlatformDirectory for InMemoryPlatformDirectory {
    async fn connection(&self, org: OrgId) -> Result<Option<PlatformConnection>, RepoError> {
        Ok(lock(&self.connections).get(&org).cloned())
    }

    async fn connected_orgs(&self, kind: PlatformKind) -> Result<Vec<OrgId>, RepoError> {
        let mut orgs: Vec<OrgId> = lock(&self.connections)
            .values()
            .filter(|c| c.kind == kind)
            .map(|c| c.org_id)
            .collect();
        orgs.sort();
        Ok(orgs)
    }

    async fn platform_user_ids(
        &self,
        org: OrgId,
        kind: PlatformKind,
        people: &[UserId],
    ) -> Result<HashMap<UserId, String>, RepoError> {
        let identities = lock(&self.identities);
        Ok(people
            .iter()
            .filter_map(|u| identities.get(&(org, kind, *u)).map(|id| (*u, id.clone())))
            .collect())
    }

    async fn save_connection(&self, connection: &PlatformConnection) -> Result<(), RepoError> {
        lock(&self.connections).insert(connection.org_id, connection.clone());
        Ok(())
    }

    async fn remove_connection(&self, org: OrgId) -> Result<(), RepoError> {
        lock(&self.cursors).remove(&org);
        lock(&self.connections)
            .remove(&org)
            .map(|_| ())
            .ok_or(RepoError::NotFound)
    }

    async fn set_platform_user_id(
        &self,
        org: OrgId,
        kind: PlatformKind,
        user: UserId,
        platform_user_id: Option<&str>,
    ) -> Result<(), RepoError> {
        if self.people.as_ref().is_some_and(|is_of| !is_of(org, user)) {
            return Err(RepoError::NotFound);
        }
        let mut identities = lock(&self.identities);
        let Some(id) = platform_user_id else {
            identities.remove(&(org, kind, user));
            return Ok(());
        };
        let taken = identities
            .iter()
            .any(|((o, k, u), held)| (*o, *k) == (org, kind) && *u != user && held == id);
        if taken {
            return Err(RepoError::Conflict {
                constraint: PLATFORM_IDENTITIES_UNIQUE.into(),
            });
        }
        identities.insert((org, kind, user), id.to_owned());
        Ok(())
    }
}

#[async_trait]
impl PollCursors for InMemoryPlatformDirectory {
    async fn poll_cursor(
        &self,
        org: OrgId,
        kind: PlatformKind,
    ) -> Result<Option<String>, RepoError> {
        Ok(lock(&self.cursors)
            .get(&org)
            .filter(|(k, _)| *k == kind)
            .map(|(_, cursor)| cursor.clone()))
    }

    async fn save_poll_cursor(
        &self,
        org: OrgId,
        kind: PlatformKind,
        cursor: &str,
        _at: OffsetDateTime,
    ) -> Result<(), RepoError> {
        // As the adapter's foreign key: a cursor belongs to a connection.
        if !lock(&self.connections).contains_key(&org) {
            return Err(RepoError::NotFound);
        }
        lock(&self.cursors).insert(org, (kind, cursor.to_owned()));
        Ok(())
    }
}

/// A connector that answers one platform for every connection, or refuses as told.
pub struct FixedConnector {
    platform: Arc<dyn ChatPlatform>,
    refusal: Mutex<Option<PlatformError>>,
}

impl FixedConnector {
    pub fn new(platform: Arc<dyn ChatPlatform>) -> Self {
        FixedConnector {
            platform,
            refusal: Mutex::new(None),
        }
    }

    /// Every connect fails with `error` until [`FixedConnector::accept`].
    pub fn refuse(&self, error: PlatformError) {
        *lock(&self.refusal) = Some(error);
    }

    pub fn accept(&self) {
        *lock(&self.refusal) = None;
    }
}

impl PlatformConnector for FixedConnector {
    fn connect(
        &self,
        _connection: &PlatformConnection,
    ) -> Result<Arc<dyn ChatPlatform>, PlatformError> {
        match lock(&self.refusal).clone() {
            Some(e) => Err(e),
            None => Ok(self.platform.clone()),
        }
    }
}

/// What a [`RecordingChatPlatform`] did for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformCall {
    /// A post that landed (a retry answered from the idempotency keys is not one).
    Posted {
        message: OutgoingMessage,
        sent: SentMessage,
    },
    Edited {
        sent: SentMessage,
        message: OutgoingMessage,
    },
    OpenedConversation {
        platform_user_ids: Vec<String>,
        channel_id: String,
    },
}

#[derive(Default)]
struct PlatformState {
    calls: Vec<PlatformCall>,
    by_key: HashMap<String, SentMessage>,
    conversations: HashMap<String, String>,
    /// Errors the next calls answer, in order.
    script: VecDeque<PlatformError>,
    /// Destinations (platform user or channel ids) the platform does not know.
    unknown: HashSet<String>,
    channels: Vec<PlatformChannel>,
}

/// A chat platform that records what it is asked and fails as scripted. Sends are idempotent
/// on their key, as the port requires; sent messages get ids `m1`, `m2`…, and a direct message
/// to `U…` lands in channel `D-U…`.
pub struct RecordingChatPlatform {
    kind: PlatformKind,
    state: Mutex<PlatformState>,
}

impl RecordingChatPlatform {
    pub fn new(kind: PlatformKind) -> Self {
        RecordingChatPlatform {
            kind,
            state: Mutex::default(),
        }
    }

    /// The next calls (sends, edits, conversations) fail with these errors, one each.
    pub fn fail_next(&self, errors: impl IntoIterator<Item = PlatformError>) {
        lock(&self.state).script.extend(errors);
    }

    /// Sends to this platform user or channel id answer `NotFound`.
    pub fn forget_destination(&self, id: &str) {
        lock(&self.state).unknown.insert(id.to_owned());
    }

    /// What `list_channels` answers.
    pub fn set_channels(&self, channels: Vec<PlatformChannel>) {
        lock(&self.state).channels = channels;
    }

    /// Every call that did something, in order.
    pub fn calls(&self) -> Vec<PlatformCall> {
        lock(&self.state).calls.clone()
    }

    /// The messages posted, in order.
    pub fn posted(&self) -> Vec<OutgoingMessage> {
        self.calls()
            .into_iter()
            .filter_map(|c| match c {
                PlatformCall::Posted { message, .. } => Some(message),
                _ => None,
            })
            .collect()
    }

    fn scripted(state: &mut PlatformState) -> Result<(), PlatformError> {
        state.script.pop_front().map_or(Ok(()), Err)
    }
}

fn destination_id(destination: &Destination) -> &str {
    match destination {
        Destination::Person { platform_user_id } => platform_user_id,
        Destination::Channel { channel_id, .. } => channel_id,
    }
}

#[async_trait]
impl ChatPlatform for RecordingChatPlatform {
    fn kind(&self) -> PlatformKind {
        self.kind
    }

    async fn send(&self, message: &OutgoingMessage) -> Result<SentMessage, PlatformError> {
        let mut state = lock(&self.state);
        if let Some(sent) = state.by_key.get(&message.idempotency_key) {
            return Ok(sent.clone());
        }
        Self::scripted(&mut state)?;
        let to = destination_id(&message.destination);
        if state.unknown.contains(to) {
            return Err(PlatformError::NotFound(to.to_owned()));
        }
        let sent = SentMessage {
            channel_id: match &message.destination {
                Destination::Person { platform_user_id } => format!("D-{platform_user_id}"),
                Destination::Channel { channel_id, .. } => channel_id.clone(),
            },
            message_id: format!("m{}", state.by_key.len() + 1),
        };
        state
            .by_key
            .insert(message.idempotency_key.clone(), sent.clone());
        state.calls.push(PlatformCall::Posted {
            message: message.clone(),
            sent: sent.clone(),
        });
        Ok(sent)
    }

    async fn edit(
        &self,
        sent: &SentMessage,
        message: &OutgoingMessage,
    ) -> Result<(), PlatformError> {
        let mut state = lock(&self.state);
        Self::scripted(&mut state)?;
        state.calls.push(PlatformCall::Edited {
            sent: sent.clone(),
            message: message.clone(),
        });
        Ok(())
    }

    async fn open_conversation(
        &self,
        platform_user_ids: &[String],
        idempotency_key: &str,
    ) -> Result<String, PlatformError> {
        let mut state = lock(&self.state);
        Self::scripted(&mut state)?;
        let next = format!("G{}", state.conversations.len() + 1);
        let channel_id = state
            .conversations
            .entry(idempotency_key.to_owned())
            .or_insert(next)
            .clone();
        state.calls.push(PlatformCall::OpenedConversation {
            platform_user_ids: platform_user_ids.to_vec(),
            channel_id: channel_id.clone(),
        });
        Ok(channel_id)
    }

    async fn list_channels(&self) -> Result<Vec<PlatformChannel>, PlatformError> {
        Ok(lock(&self.state).channels.clone())
    }

    async fn poll(
        &self,
        cursor: Option<&str>,
        _wait: Duration,
    ) -> Result<InboundBatch, PlatformError> {
        Ok(InboundBatch {
            events: vec![],
            next_cursor: cursor.unwrap_or("0").to_owned(),
        })
    }
}

/// A mailer that records what it sends and fails as scripted.
#[derive(Default)]
pub struct RecordingMailer {
    sent: Mutex<Vec<OutgoingMail>>,
    script: Mutex<VecDeque<MailError>>,
}

impl RecordingMailer {
    pub fn new() -> Self {
        Self::default()
    }

    /// The next sends fail with these errors, one each.
    pub fn fail_next(&self, errors: impl IntoIterator<Item = MailError>) {
        lock(&self.script).extend(errors);
    }

    /// The mails accepted, in order.
    pub fn sent(&self) -> Vec<OutgoingMail> {
        lock(&self.sent).clone()
    }
}

#[async_trait]
impl Mailer for RecordingMailer {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError> {
        if let Some(e) = lock(&self.script).pop_front() {
            return Err(e);
        }
        lock(&self.sent).push(mail.clone());
        Ok(())
    }
}
