//! The messaging adapters the composition root wires: where messages, e-mails and platform
//! connections are stored ([`MessagingStores`]), how a connection becomes a chat-platform
//! client ([`ChatConnector`]: Matrix or Slack), and the mailer when no SMTP relay is configured
//! ([`NoMailRelay`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use teamcomm_chat::{MatrixConfig, MatrixPlatform, SlackConfig, SlackPlatform};
use teamcomm_kernel::OrgId;
use teamcomm_kernel::jobs::JobQueue;
use teamcomm_messaging::mail::{MailError, Mailer, OutgoingMail};
use teamcomm_messaging::platform::{
    ChatPlatform, InboundBatch, OutgoingMessage, PlatformChannel, PlatformError, PlatformKind,
    SentMessage,
};
use teamcomm_messaging::ports::{
    EmailRepository, MessageRepository, PlatformConnection, PlatformConnector, PlatformDirectory,
};
use teamcomm_store_pg::{
    Database, PgEmailRepository, PgJobQueue, PgMessageRepository, PgPlatformDirectory,
    PlatformSecretKey,
};

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
    /// The stores in the database; platform secrets sealed under `key`.
    pub fn in_database(db: &Database, key: PlatformSecretKey) -> Self {
        let queue = Arc::new(PgJobQueue::new(db.clone()));
        MessagingStores {
            messages: Arc::new(PgMessageRepository::new(db.clone())),
            emails: Arc::new(PgEmailRepository::new(db.clone())),
            directory: Arc::new(PgPlatformDirectory::new(db.clone(), key)),
            queue,
        }
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
