//! What bot messages and e-mail need from storage and from the outside: the stored messages
//! and e-mails (each written with its queue jobs in one transaction), the organization's chat
//! platform connection and its people's identities there, and a way to reach the platform.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::{OrgId, RepoError, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::email::{Email, EmailStatus};
use crate::message::{DeliveryStatus, Message, MessageId};
use crate::platform::{ChatPlatform, PlatformError, PlatformKind};

/// Bot messages and the state of their deliveries.
#[async_trait]
pub trait MessageRepository: Send + Sync + 'static {
    /// Stores `messages` (a send and its thread responses, or an edit), with their deliveries,
    /// and enqueues `jobs`, in one transaction: the send is accepted only once it is durably
    /// queued.
    async fn queue_messages(&self, messages: &[Message], jobs: &[NewJob]) -> Result<(), RepoError>;

    /// A message of `org`, with its deliveries; `NotFound` for another organization's (this is
    /// also the lookup by `bot_message_id`, which is the id's text).
    async fn get_message(&self, org: OrgId, id: MessageId) -> Result<Message, RepoError>;

    /// The thread responses of `parent`, by position.
    async fn thread_responses(
        &self,
        org: OrgId,
        parent: MessageId,
    ) -> Result<Vec<Message>, RepoError>;

    /// Records where delivery `index` of a message stands now.
    async fn record_delivery(
        &self,
        org: OrgId,
        message: MessageId,
        index: u32,
        status: &DeliveryStatus,
        at: OffsetDateTime,
    ) -> Result<(), RepoError>;
}

/// E-mails sent through the API.
#[async_trait]
pub trait EmailRepository: Send + Sync + 'static {
    /// Stores `emails` and enqueues `jobs`, in one transaction.
    async fn queue_emails(&self, emails: &[Email], jobs: &[NewJob]) -> Result<(), RepoError>;

    /// An e-mail of `org`; `NotFound` for another organization's.
    async fn get_email(&self, org: OrgId, id: Uuid) -> Result<Email, RepoError>;

    /// Records where the e-mail stands now.
    async fn record_email(
        &self,
        org: OrgId,
        id: Uuid,
        status: &EmailStatus,
        at: OffsetDateTime,
    ) -> Result<(), RepoError>;
}

/// A platform secret (bot token, access token). Never printed: `Debug` hides it, and only the
/// connector reads it.
#[derive(Clone, PartialEq, Eq)]
pub struct PlatformSecret(String);

impl PlatformSecret {
    pub fn new(secret: impl Into<String>) -> Self {
        PlatformSecret(secret.into())
    }

    /// The secret itself, for the adapter that presents it to the platform.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PlatformSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlatformSecret(..)")
    }
}

/// An organization's connection to its chat platform, as stored (the secret decrypted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformConnection {
    pub org_id: OrgId,
    pub kind: PlatformKind,
    /// Where the platform's API is: the Matrix homeserver; for Slack, `None` (the adapter's
    /// configured base URL).
    pub base_url: Option<String>,
    pub secret: PlatformSecret,
    /// Slack only: the app's signing secret, which signs what Slack pushes (events, button
    /// clicks); without it nothing Slack pushes for the organization is accepted.
    pub signing_secret: Option<PlatformSecret>,
}

/// Who the organization is on its chat platform.
#[async_trait]
pub trait PlatformDirectory: Send + Sync + 'static {
    /// The organization's connected platform, if any.
    async fn connection(&self, org: OrgId) -> Result<Option<PlatformConnection>, RepoError>;

    /// The organizations connected to a platform of `kind` (those whose replies are polled).
    async fn connected_orgs(&self, kind: PlatformKind) -> Result<Vec<OrgId>, RepoError>;

    /// The platform user ids (Matrix `@ada:example.org`, Slack `U…`) of these people of `org`
    /// on platform `kind`; people without one are absent from the answer.
    async fn platform_user_ids(
        &self,
        org: OrgId,
        kind: PlatformKind,
        people: &[UserId],
    ) -> Result<HashMap<UserId, String>, RepoError>;

    /// Connects `connection.org_id`, replacing the connection it had.
    async fn save_connection(&self, connection: &PlatformConnection) -> Result<(), RepoError>;

    /// Forgets the organization's connection; `NotFound` when it had none. Platform
    /// identities are kept (they still name the people if it connects again).
    async fn remove_connection(&self, org: OrgId) -> Result<(), RepoError>;

    /// Records who `user` of `org` is on platform `kind`, or forgets it (`None`). `NotFound`
    /// when the person is not of `org`; `Conflict { constraint: "platform_identities_unique" }`
    /// when another person of `org` has this id on `kind`.
    async fn set_platform_user_id(
        &self,
        org: OrgId,
        kind: PlatformKind,
        user: UserId,
        platform_user_id: Option<&str>,
    ) -> Result<(), RepoError>;
}

/// The constraint a platform identity already taken in the organization is refused with.
pub const PLATFORM_IDENTITIES_UNIQUE: &str = "platform_identities_unique";

/// Builds the [`ChatPlatform`] of a connection (the adapters' constructor, behind a port so
/// the domain never names Matrix or Slack code).
pub trait PlatformConnector: Send + Sync + 'static {
    /// A platform client for `connection`; `PlatformError::Unsupported` for a kind this
    /// server has no adapter for, `Unauthorized` for credentials it cannot use.
    fn connect(
        &self,
        connection: &PlatformConnection,
    ) -> Result<Arc<dyn ChatPlatform>, PlatformError>;
}
