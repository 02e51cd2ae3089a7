//! API keys, CLI tokens and the authenticated caller.

use std::sync::Arc;

use teamcomm_kernel::{ApiKeyId, CliTokenId, Error, OrgId, UserId};
use teamcomm_org::{Organization, User};
use time::OffsetDateTime;

/// A Plan-area permission a key may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    TasksRead,
    TasksWrite,
    TasksAdmin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::TasksRead, Scope::TasksWrite, Scope::TasksAdmin];
    /// What a key gets when its creator names no scopes.
    pub const DEFAULT: [Scope; 2] = [Scope::TasksRead, Scope::TasksWrite];

    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::TasksRead => "tasks:read",
            Scope::TasksWrite => "tasks:write",
            Scope::TasksAdmin => "tasks:admin",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }

    /// Parses a requested scope list, refusing unknown names; duplicates collapse.
    pub fn parse_list(names: &[String]) -> Result<Vec<Scope>, Error> {
        let mut scopes = Vec::with_capacity(names.len());
        for name in names {
            let scope = Scope::parse(name).ok_or_else(|| {
                Error::invalid_field(
                    "scopes",
                    format!("\"{name}\" is not a valid scope; use tasks:read, tasks:write or tasks:admin."),
                )
            })?;
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        scopes.sort();
        Ok(scopes)
    }
}

/// A user as shown inside another record: `{uuid, full_name}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonRef {
    pub id: UserId,
    pub full_name: String,
}

/// An API key as stored (never with its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: ApiKeyId,
    pub org_id: OrgId,
    pub name: String,
    pub key_suffix: String,
    pub active: bool,
    pub owner: PersonRef,
    pub created_by: Option<PersonRef>,
    pub is_agent_key: bool,
    pub scopes: Vec<Scope>,
    pub last_usage_at: Option<OffsetDateTime>,
    pub expiration: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
}

/// What authentication needs to know about a key, with its owner, in one read.
#[derive(Debug, Clone)]
pub struct KeyCredential {
    pub id: ApiKeyId,
    pub org_id: OrgId,
    pub active: bool,
    pub is_agent_key: bool,
    pub scopes: Vec<Scope>,
    pub expiration: Option<OffsetDateTime>,
    pub owner: User,
}

/// A CLI bearer token with its user, as authentication reads it.
#[derive(Debug, Clone)]
pub struct CliTokenCredential {
    pub id: CliTokenId,
    pub org_id: OrgId,
    pub expires_at: Option<OffsetDateTime>,
    pub revoked: bool,
    pub user: User,
}

/// Which credential authenticated a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialKind {
    /// `X-API-KEY`.
    ApiKey {
        id: ApiKeyId,
        is_agent_key: bool,
        scopes: Vec<Scope>,
    },
    /// `Authorization: Bearer` (CLI login).
    CliToken { id: CliTokenId },
    /// `Authorization: JWT` (web session; key management).
    Session,
}

/// The authenticated caller: the acting person, their organization and how they proved it.
#[derive(Debug, Clone)]
pub struct Principal {
    pub user: User,
    pub org: Arc<Organization>,
    pub credential: CredentialKind,
}

/// Identifies one credential (an API key, a CLI token, or a person's web sessions) for
/// per-credential limits. Copy and allocation-free: it is built on every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CredentialRef {
    ApiKey(uuid::Uuid),
    CliToken(uuid::Uuid),
    Session(uuid::Uuid),
    /// A login address (the first half of its SHA-256): one-time-code requests and tries.
    LoginAddress([u8; 16]),
    /// A client's network address, for routes taken without a credential.
    Client(std::net::IpAddr),
}

impl Principal {
    /// The credential this request spends its budget from.
    pub fn credential_ref(&self) -> CredentialRef {
        match &self.credential {
            CredentialKind::ApiKey { id, .. } => CredentialRef::ApiKey(id.0),
            CredentialKind::CliToken { id } => CredentialRef::CliToken(id.0),
            CredentialKind::Session => CredentialRef::Session(self.user.id.0),
        }
    }
}
