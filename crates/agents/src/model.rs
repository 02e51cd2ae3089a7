//! Agents' reports, health checks and messages, and registrations.

use serde_json::{Map, Value};
use teamcomm_kernel::{OrgId, UserId};
use teamcomm_keys::SecretHash;
use teamcomm_org::User;
use time::OffsetDateTime;
use uuid::Uuid;

/// Who calls an agent door: a person (API key or CLI session of theirs) or an agent key, which
/// is a credential of the organization and never a person.
#[derive(Debug, Clone)]
pub enum Actor {
    Person(User),
    Agent { key_id: Uuid, agent_name: String },
}

/// The caller of an agent door: its organization and who it is.
#[derive(Debug, Clone)]
pub struct AgentCaller {
    pub org_id: OrgId,
    pub actor: Actor,
}

impl AgentCaller {
    pub fn person(user: User) -> Self {
        AgentCaller {
            org_id: user.org_id,
            actor: Actor::Person(user),
        }
    }

    pub fn agent(org_id: OrgId, key_id: Uuid, agent_name: String) -> Self {
        AgentCaller {
            org_id,
            actor: Actor::Agent { key_id, agent_name },
        }
    }

    /// The person behind the call, if any.
    pub fn user(&self) -> Option<&User> {
        match &self.actor {
            Actor::Person(u) => Some(u),
            Actor::Agent { .. } => None,
        }
    }
}

/// A person named as co-author of a report, as it was when the report was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoAuthor {
    pub id: UserId,
    pub name: String,
}

/// What an agent reported.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentReport {
    pub id: Uuid,
    pub org_id: OrgId,
    pub agent_name: String,
    pub content: String,
    pub structured: Map<String, Value>,
    pub metadata: Map<String, Value>,
    pub is_milestone: bool,
    pub co_authors: Vec<CoAuthor>,
    /// The person whose credential sent it; `None` for an agent key.
    pub created_by: Option<UserId>,
    pub created_at: OffsetDateTime,
}

/// A report as sent (already parsed from the wire; checked by the service).
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    pub agent_name: String,
    pub content: String,
    pub structured: Option<Map<String, Value>>,
    pub metadata: Option<Map<String, Value>>,
    pub is_milestone: bool,
    /// E-mails or uuids of people of the organization.
    pub co_authors: Vec<String>,
}

/// One health check an agent posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    pub id: Uuid,
    pub org_id: OrgId,
    pub agent_name: String,
    pub ok: bool,
    pub message: Option<String>,
    pub created_at: OffsetDateTime,
}

impl HealthCheck {
    pub fn status(&self) -> &'static str {
        if self.ok { "healthy" } else { "unhealthy" }
    }
}

/// An agent's health: its last check, its recent history (newest first) and the messages
/// waiting for it (for a posted check: those the check delivered).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentHealth {
    pub agent_name: String,
    /// `None` when the agent never posted a check (`status: "unknown"` on the wire).
    pub last: Option<HealthCheck>,
    pub history: Vec<HealthCheck>,
    pub pending_messages: Vec<AgentMessage>,
}

impl AgentHealth {
    pub fn status(&self) -> &'static str {
        self.last.as_ref().map_or("unknown", HealthCheck::status)
    }
}

/// The kind of an agent message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    Text,
    Command,
    System,
}

impl MessageType {
    pub const ALL: [MessageType; 3] =
        [MessageType::Text, MessageType::Command, MessageType::System];

    pub const fn as_str(self) -> &'static str {
        match self {
            MessageType::Text => "text",
            MessageType::Command => "command",
            MessageType::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        MessageType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// Who sent an agent message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderType {
    Agent,
    User,
    System,
}

impl SenderType {
    pub const ALL: [SenderType; 3] = [SenderType::Agent, SenderType::User, SenderType::System];

    pub const fn as_str(self) -> &'static str {
        match self {
            SenderType::Agent => "agent",
            SenderType::User => "user",
            SenderType::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        SenderType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// A message to an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentMessage {
    pub id: Uuid,
    pub org_id: OrgId,
    /// The agent it is for.
    pub agent_name: String,
    pub content: String,
    pub message_type: MessageType,
    pub metadata: Map<String, Value>,
    pub sender_type: SenderType,
    pub sender_name: Option<String>,
    pub expires_at: Option<OffsetDateTime>,
    /// When the agent took it (a read mark or a health check); `None` while pending.
    pub delivered_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
}

/// A message as sent (already parsed from the wire; checked by the service).
#[derive(Debug, Clone, Default)]
pub struct MessageInput {
    pub agent_name: String,
    pub content: String,
    pub message_type: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    pub expires_at: Option<OffsetDateTime>,
    pub sender_type: Option<String>,
    pub sender_name: Option<String>,
}

/// Which messages a listing shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageFilter {
    pub agent_name: Option<String>,
    /// `Some(false)`: pending only; `Some(true)`: delivered only.
    pub delivered: Option<bool>,
}

// ------------------------------------------------------------------ registration

/// A registration riddle as kept server-side (the expected answer, not shown to anyone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    pub id: Uuid,
    pub answer: i64,
    pub expires_at: OffsetDateTime,
}

/// What `GET /v1/agent/register/challenge/` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedChallenge {
    pub id: Uuid,
    pub instruction: String,
    pub expires_at: OffsetDateTime,
}

/// A registration as sent (already parsed from the wire).
#[derive(Debug, Clone, Default)]
pub struct RegisterInput {
    pub challenge_id: String,
    pub answer: i64,
    pub reason: String,
    pub org_name: String,
    pub agent_name: String,
    pub timezone: Option<String>,
    pub contact_email: Option<String>,
}

/// The registration of an agent with its pending organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub org_id: OrgId,
    pub org_name: String,
    pub agent_name: String,
    pub agent_email: String,
    pub reason: String,
    /// As sent (default `UTC`); kept with the registration (see decisions).
    pub timezone: String,
    pub contact_email: Option<String>,
    pub claim_expires_at: OffsetDateTime,
    pub claimed_by: Option<UserId>,
    pub claimed_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
}

/// A registration to store with its agent key (hashes only).
#[derive(Debug, Clone)]
pub struct NewRegistration {
    pub registration: Registration,
    pub claim_hash: SecretHash,
    pub key: NewAgentKey,
}

/// An agent key to store.
#[derive(Debug, Clone)]
pub struct NewAgentKey {
    pub id: Uuid,
    pub org_id: OrgId,
    pub agent_name: String,
    pub hash: SecretHash,
    pub suffix: String,
}

/// An agent key as authentication reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentKeyCredential {
    pub id: Uuid,
    pub org_id: OrgId,
    pub agent_name: String,
    pub active: bool,
}

/// What a successful registration answers (the key and the claim token shown once).
#[derive(Debug, Clone)]
pub struct Registered {
    pub registration: Registration,
    pub api_key: String,
    pub claim_url: String,
}

/// What claiming answers: the organization now owned and its first admin.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub registration: Registration,
    pub admin: User,
}

/// An agent's webhook: messages left for the agent are pushed there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentHook {
    pub org_id: OrgId,
    pub agent_name: String,
    /// Passed the webhook destination guard when set (checked again at each push).
    pub url: String,
    /// Sent as `X-Webhook-Secret` with each push.
    pub secret: Option<teamcomm_webhooks::SecretText>,
    pub updated_at: OffsetDateTime,
}

/// `POST /v1/agent-webhook/` as the service reads it.
#[derive(Debug, Clone, Default)]
pub struct HookInput {
    pub agent_name: String,
    pub webhook_url: String,
    pub webhook_secret: Option<String>,
}
