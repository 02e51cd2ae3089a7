//! The messaging adapters the composition root wires: where messages, e-mails and platform
//! connections are stored ([`MessagingStores`]), how a connection becomes a chat-platform
//! client ([`ChatConnector`]: Matrix or Slack), and the mailer when no SMTP relay is configured
//! ([`NoMailRelay`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use teamcomm_chat::{MatrixConfig, MatrixPlatform, SlackConfig, SlackPlatform};
use teamcomm_kernel::jobs::{JobQueue, NewJob};
use teamcomm_kernel::{OrgId, RepoError, UserId};
use teamcomm_messaging::email::{Email, EmailStatus};
use teamcomm_messaging::mail::{MailError, Mailer, OutgoingMail};
use teamcomm_messaging::message::{DeliveryStatus, Message, MessageId};
use teamcomm_messaging::platform::{
    ChatPlatform, InboundBatch, OutgoingMessage, PlatformChannel, PlatformError, PlatformKind,
    SentMessage,
};
use teamcomm_messaging::ports::{
    EmailRepository, MessageRepository, PlatformConnection, PlatformConnector, PlatformDirectory,
};
use teamcomm_store_pg::{Database, PgJobQueue};
use time::OffsetDateTime;
use uuid::Uuid;

/// The storage ports of messaging. The queue is the one the repositories enqueue into: the
/// delivery worker claims from it.
#[derive(Clone)]
pub struct MessagingStores {
    pub messages: Arc<dyn MessageRepository>,
    pub emails: Arc<dyn EmailRepository>,
    pub directory: Arc<dyn PlatformDirectory>,
    pub queue: Arc<dyn JobQueue>,
}

impl MessagingStores {
    /// The stores in the database. The Postgres adapters of messages, e-mails and platform
    /// connections are not written yet: until they are, [`NotYetStored`] stands in for them and
    /// every messaging request that reaches storage answers 503 `service_unavailable`.
    pub fn in_database(db: &Database) -> Self {
        MessagingStores {
            messages: Arc::new(NotYetStored),
            emails: Arc::new(NotYetStored),
            directory: Arc::new(NotYetStored),
            queue: Arc::new(PgJobQueue::new(db.clone())),
        }
    }
}

/// Stands in for the messaging stores that do not exist yet: every call is `Unavailable`.
struct NotYetStored;

fn not_yet_stored() -> RepoError {
    RepoError::Unavailable("messaging storage is not available in this build".into())
}

#[async_trait]
impl MessageRepository for NotYetStored {
    async fn queue_messages(&self, _: &[Message], _: &[NewJob]) -> Result<(), RepoError> {
        Err(not_yet_stored())
    }
    async fn get_message(&self, _: OrgId, _: MessageId) -> Result<Message, RepoError> {
        Err(not_yet_stored())
    }
    async fn thread_responses(&self, _: OrgId, _: MessageId) -> Result<Vec<Message>, RepoError> {
        Err(not_yet_stored())
    }
    async fn record_delivery(
        &self,
        _: OrgId,
        _: MessageId,
        _: u32,
        _: &DeliveryStatus,
        _: OffsetDateTime,
    ) -> Result<(), RepoError> {
        Err(not_yet_stored())
    }
}

#[async_trait]
impl EmailRepository for NotYetStored {
    async fn queue_emails(&self, _: &[Email], _: &[NewJob]) -> Result<(), RepoError> {
        Err(not_yet_stored())
    }
    async fn get_email(&self, _: OrgId, _: Uuid) -> Result<Email, RepoError> {
        Err(not_yet_stored())
    }
    async fn record_email(
        &self,
        _: OrgId,
        _: Uuid,
        _: &EmailStatus,
        _: OffsetDateTime,
    ) -> Result<(), RepoError> {
        Err(not_yet_stored())
    }
}

#[async_trait]
impl PlatformDirectory for NotYetStored {
    async fn connection(&self, _: OrgId) -> Result<Option<PlatformConnection>, RepoError> {
        Err(not_yet_stored())
    }
    async fn platform_user_ids(
        &self,
        _: OrgId,
        _: PlatformKind,
        _: &[UserId],
    ) -> Result<HashMap<UserId, String>, RepoError> {
        Err(not_yet_stored())
    }
    async fn save_connection(&self, _: &PlatformConnection) -> Result<(), RepoError> {
        Err(not_yet_stored())
    }
    async fn remove_connection(&self, _: OrgId) -> Result<(), RepoError> {
        Err(not_yet_stored())
    }
    async fn set_platform_user_id(
        &self,
        _: OrgId,
        _: PlatformKind,
        _: UserId,
        _: Option<&str>,
    ) -> Result<(), RepoError> {
        Err(not_yet_stored())
    }
}

/// The mailer when `TEAMCOMM_SMTP_URL` is unset: every e-mail fails for good (`mail_refused`),
/// and its job's error says why.
pub struct NoMailRelay;

/// The reason an e-mail's job records when no relay is configured.
pub const NO_MAIL_RELAY: &str =
    "no SMTP relay configured: set TEAMCOMM_SMTP_URL and TEAMCOMM_MAIL_FROM";

#[async_trait]
impl Mailer for NoMailRelay {
    async fn send(&self, _: &OutgoingMail) -> Result<(), MailError> {
        Err(MailError::Permanent(NO_MAIL_RELAY.into()))
    }
}

/// Builds the adapter of an organization's connection: [`SlackPlatform`] or a Matrix bot. One
/// instance per organization is kept while its connection is unchanged (the Matrix adapter
/// checks its identity once per instance and serialises its DM lookups per instance).
#[derive(Default)]
pub struct ChatConnector {
    /// One HTTP client for every adapter (it pools connections per host).
    http: OnceLock<reqwest::Client>,
    built: Mutex<HashMap<OrgId, BuiltPlatform>>,
}

/// An adapter and the connection it was built from.
type BuiltPlatform = (PlatformConnection, Arc<dyn ChatPlatform>);

impl ChatConnector {
    fn http(&self) -> Result<reqwest::Client, PlatformError> {
        if let Some(client) = self.http.get() {
            return Ok(client.clone());
        }
        let client = teamcomm_chat::http_client()?;
        Ok(self.http.get_or_init(|| client).clone())
    }
}

impl PlatformConnector for ChatConnector {
    fn connect(
        &self,
        connection: &PlatformConnection,
    ) -> Result<Arc<dyn ChatPlatform>, PlatformError> {
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((held, platform)) = built.get(&connection.org_id)
            && held == connection
        {
            return Ok(platform.clone());
        }
        let http = self.http()?;
        let secret = connection.secret.expose().to_owned();
        let platform: Arc<dyn ChatPlatform> = match connection.kind {
            PlatformKind::Slack => Arc::new(SlackPlatform::new(
                SlackConfig {
                    base_url: connection
                        .base_url
                        .clone()
                        .unwrap_or_else(|| SlackConfig::DEFAULT_BASE_URL.to_owned()),
                    bot_token: secret,
                },
                http,
            )),
            PlatformKind::Matrix => {
                let homeserver_url = connection.base_url.clone().ok_or_else(|| {
                    PlatformError::Permanent("the Matrix connection names no homeserver".into())
                })?;
                Arc::new(MatrixBot {
                    homeserver_url,
                    access_token: secret,
                    http,
                    platform: tokio::sync::OnceCell::new(),
                })
            }
        };
        built.insert(connection.org_id, (connection.clone(), platform.clone()));
        Ok(platform)
    }
}

/// A Matrix bot known by its access token alone: the connection stores no user or device id,
/// so the first call asks the homeserver whose token it is (`whoami`) and builds the
/// [`MatrixPlatform`] pinned to that user and device. A new token is a new connection, hence a
/// new instance.
struct MatrixBot {
    homeserver_url: String,
    access_token: String,
    http: reqwest::Client,
    platform: tokio::sync::OnceCell<MatrixPlatform>,
}

const WHOAMI_TIMEOUT: Duration = Duration::from_secs(10);

impl MatrixBot {
    async fn platform(&self) -> Result<&MatrixPlatform, PlatformError> {
        self.platform
            .get_or_try_init(|| async {
                let url = format!(
                    "{}/_matrix/client/v3/account/whoami",
                    self.homeserver_url.trim_end_matches('/')
                );
                let answer = self
                    .http
                    .get(url)
                    .bearer_auth(&self.access_token)
                    .timeout(WHOAMI_TIMEOUT)
                    .send()
                    .await
                    .map_err(|e| PlatformError::Temporary(format!("whoami: {e}")))?;
                let status = answer.status();
                if status.as_u16() == 401 {
                    return Err(PlatformError::Unauthorized(format!("whoami: {status}")));
                }
                if status.is_server_error() || status.as_u16() == 429 {
                    return Err(PlatformError::Temporary(format!("whoami: {status}")));
                }
                if !status.is_success() {
                    return Err(PlatformError::Permanent(format!("whoami: {status}")));
                }
                let me: serde_json::Value = answer
                    .json()
                    .await
                    .map_err(|e| PlatformError::Temporary(format!("whoami: {e}")))?;
                let field = |name: &str| {
                    me[name].as_str().map(str::to_owned).ok_or_else(|| {
                        PlatformError::Permanent(format!(
                            "whoami names no {name}: the bot's token must belong to a device"
                        ))
                    })
                };
                Ok(MatrixPlatform::new(
                    MatrixConfig {
                        homeserver_url: self.homeserver_url.clone(),
                        access_token: self.access_token.clone(),
                        bot_user_id: field("user_id")?,
                        device_id: field("device_id")?,
                    },
                    self.http.clone(),
                ))
            })
            .await
    }
}

#[async_trait]
impl ChatPlatform for MatrixBot {
    fn kind(&self) -> PlatformKind {
        PlatformKind::Matrix
    }

    async fn send(&self, message: &OutgoingMessage) -> Result<SentMessage, PlatformError> {
        self.platform().await?.send(message).await
    }

    async fn edit(
        &self,
        sent: &SentMessage,
        message: &OutgoingMessage,
    ) -> Result<(), PlatformError> {
        self.platform().await?.edit(sent, message).await
    }

    async fn open_conversation(
        &self,
        platform_user_ids: &[String],
        idempotency_key: &str,
    ) -> Result<String, PlatformError> {
        self.platform()
            .await?
            .open_conversation(platform_user_ids, idempotency_key)
            .await
    }

    async fn list_channels(&self) -> Result<Vec<PlatformChannel>, PlatformError> {
        self.platform().await?.list_channels().await
    }

    async fn poll(
        &self,
        cursor: Option<&str>,
        wait: Duration,
    ) -> Result<InboundBatch, PlatformError> {
        self.platform().await?.poll(cursor, wait).await
    }
}
