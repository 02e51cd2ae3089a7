//! What the service needs of a chat platform (Matrix, Slack): the port its adapters implement.
//!
//! Identities on the platform are opaque strings: a Matrix user id (`@ada:example.org`) or
//! room id, a Slack user id (`U…`) or channel id (`C…`). A sent message is named by where it
//! went and the platform's id for it (Matrix event id, Slack `ts`), which is what an edit or a
//! thread reply needs.

use async_trait::async_trait;
use std::time::Duration;

/// The chat platforms the service speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlatformKind {
    Matrix,
    Slack,
}

impl PlatformKind {
    pub const ALL: [PlatformKind; 2] = [PlatformKind::Matrix, PlatformKind::Slack];

    pub const fn as_str(self) -> &'static str {
        match self {
            PlatformKind::Matrix => "matrix",
            PlatformKind::Slack => "slack",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether the platform can open a conversation of several people
    /// (`POST /v1/open-conversation/`).
    pub const fn has_group_conversations(self) -> bool {
        match self {
            PlatformKind::Slack => true,
            PlatformKind::Matrix => true,
        }
    }
}

/// Where a message goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Destination {
    /// A direct message to a person (the adapter opens or reuses the conversation).
    Person { platform_user_id: String },
    /// A channel (room) by its platform id, optionally inside a thread (the parent message's
    /// platform id).
    Channel {
        channel_id: String,
        thread: Option<String>,
    },
}

/// A button under a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    pub label: String,
    /// `Link` opens `url`; `Interactive` comes back as a [`InboundEvent::ButtonClicked`] with
    /// `value`.
    pub kind: ButtonKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ButtonKind {
    Link { url: String },
    Interactive { value: String },
}

/// How the bot presents itself for one message, where the platform allows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BotAppearance {
    pub username: Option<String>,
    pub icon_url: Option<String>,
    pub icon_emoji: Option<String>,
}

/// One message to one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMessage {
    /// Stable across retries of the same send: the adapter makes a retried send land once
    /// (Matrix transaction id; for Slack, a stored mapping checked before posting).
    pub idempotency_key: String,
    pub destination: Destination,
    /// Markdown-ish plain text as the API received it.
    pub text: String,
    pub image_url: Option<String>,
    pub buttons: Vec<Button>,
    pub appearance: BotAppearance,
}

/// Where a message landed: what an edit or a thread reply names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SentMessage {
    /// The conversation it is in (a DM's room/channel id for [`Destination::Person`]).
    pub channel_id: String,
    /// The platform's id of the message (Matrix event id, Slack `ts`).
    pub message_id: String,
}

/// A channel as the platform lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformChannel {
    pub id: String,
    pub name: String,
    pub is_private: bool,
}

/// What people did on the platform that the service listens for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InboundEvent {
    /// A person wrote in a conversation the bot is in (a DM or a channel); `in_reply_to` is
    /// the platform id of the message replied to or the thread root, when there is one.
    Reply {
        platform_user_id: String,
        channel_id: String,
        message_id: String,
        text: String,
        in_reply_to: Option<String>,
    },
    /// A person clicked an interactive button.
    ButtonClicked {
        platform_user_id: String,
        channel_id: String,
        message_id: String,
        value: String,
    },
}

/// A batch of inbound events and the cursor to pass next time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundBatch {
    pub events: Vec<InboundEvent>,
    pub next_cursor: String,
}

/// Why a platform call failed, as far as retrying is concerned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    /// Too many calls: try again after the delay (Slack `ratelimited` + `Retry-After`,
    /// Matrix `M_LIMIT_EXCEEDED` + `retry_after_ms`).
    #[error("rate limited by the platform (retry after {retry_after:?})")]
    RateLimited { retry_after: Option<Duration> },
    /// The credentials are refused (Slack `invalid_auth`, Matrix `M_UNKNOWN_TOKEN`):
    /// permanent until someone reconnects the platform.
    #[error("the platform refused the credentials: {0}")]
    Unauthorized(String),
    /// The destination does not exist or the bot cannot reach it (Slack
    /// `channel_not_found`, Matrix `M_FORBIDDEN` / `M_NOT_FOUND`): permanent.
    #[error("destination not found: {0}")]
    NotFound(String),
    /// The platform cannot do this at all (e.g. group conversations): permanent.
    #[error("not supported by the platform: {0}")]
    Unsupported(String),
    /// Network trouble or a 5xx: worth retrying.
    #[error("temporary platform failure: {0}")]
    Temporary(String),
    /// Any other refusal: permanent.
    #[error("the platform refused: {0}")]
    Permanent(String),
}

impl PlatformError {
    /// Whether another attempt may succeed.
    pub fn is_temporary(&self) -> bool {
        matches!(
            self,
            PlatformError::RateLimited { .. } | PlatformError::Temporary(_)
        )
    }

    /// The delay the platform asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            PlatformError::RateLimited { retry_after } => *retry_after,
            _ => None,
        }
    }
}

/// One organization's connection to its chat platform, with its credentials.
#[async_trait]
pub trait ChatPlatform: Send + Sync + 'static {
    fn kind(&self) -> PlatformKind;

    /// Posts a message; a retry with the same `idempotency_key` answers the first post's
    /// [`SentMessage`] without posting again.
    async fn send(&self, message: &OutgoingMessage) -> Result<SentMessage, PlatformError>;

    /// Replaces the text (and buttons) of a message the bot sent.
    async fn edit(
        &self,
        sent: &SentMessage,
        message: &OutgoingMessage,
    ) -> Result<(), PlatformError>;

    /// Opens (or reuses) a conversation of the bot with these people; answers its channel id.
    async fn open_conversation(
        &self,
        platform_user_ids: &[String],
        idempotency_key: &str,
    ) -> Result<String, PlatformError>;

    /// The channels the bot can post to.
    async fn list_channels(&self) -> Result<Vec<PlatformChannel>, PlatformError>;

    /// Replies and clicks since `cursor` (`None`: from now on), waiting at most `wait` for
    /// the first one. The bot's own messages are never reported.
    async fn poll(
        &self,
        cursor: Option<&str>,
        wait: Duration,
    ) -> Result<InboundBatch, PlatformError>;
}
