//! Organizations, people and their roles.

use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, ErrorCode, OrgId, TeamId, UserId, WireEnum};
use time::{Date, OffsetDateTime};

/// The commercial plan of an organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanTier {
    Free,
    Starter,
    Business,
    Enterprise,
}

impl WireEnum for PlanTier {
    const NAME: &'static str = "Plan";
    const ALL: &'static [Self] = &[
        PlanTier::Free,
        PlanTier::Starter,
        PlanTier::Business,
        PlanTier::Enterprise,
    ];

    fn as_str(self) -> &'static str {
        PlanTier::as_str(self)
    }
}

impl PlanTier {
    pub const fn as_str(self) -> &'static str {
        match self {
            PlanTier::Free => "free",
            PlanTier::Starter => "starter",
            PlanTier::Business => "business",
            PlanTier::Enterprise => "enterprise",
        }
    }

    /// The value with this wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::from_name(s)
    }

    /// Paid plans include API access unless an operator turns it off.
    pub const fn default_api_access(self) -> bool {
        !matches!(self, PlanTier::Free)
    }
}

/// What a person may do in their organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Member,
    Guest,
}

impl WireEnum for Role {
    const NAME: &'static str = "Role";
    const ALL: &'static [Self] = &[Role::Admin, Role::Member, Role::Guest];

    fn as_str(self) -> &'static str {
        Role::as_str(self)
    }
}

impl Role {
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Member => "member",
            Role::Guest => "guest",
        }
    }

    /// The value with this wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::from_name(s)
    }

    pub const fn is_admin(self) -> bool {
        matches!(self, Role::Admin)
    }
}

/// A tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Organization {
    pub id: OrgId,
    pub name: String,
    pub plan: PlanTier,
    pub api_access: bool,
    pub plan_beta: bool,
    pub exchange_tokens: bool,
    pub timezone: String,
    /// The connected chat platform (`slack`, `msteams`, `google_chat`, `discord`, `matrix`…).
    pub platform: Option<String>,
    pub created_at: OffsetDateTime,
}

impl Organization {
    /// The plan gate every API-key request passes (spec "Plan gates for API keys").
    pub fn check_api_key_eligibility(&self) -> Result<(), Error> {
        if self.plan == PlanTier::Free {
            return Err(Error::new(
                ErrorCode::PlanFreeApiKeysForbidden,
                "API keys are not available on the free plan. Upgrade your plan to use the API.",
            ));
        }
        if !self.api_access {
            return Err(Error::new(
                ErrorCode::PlanMissingCoreApiIntegrations,
                "Your organization's plan does not include API access.",
            ));
        }
        Ok(())
    }
}

/// A person of an organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: UserId,
    pub org_id: OrgId,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub role: Role,
    pub is_active: bool,
    pub timezone: String,
    pub occupation: String,
    pub image: Option<String>,
    /// Birthday as `MM-DD` (no year: ages are nobody's business).
    pub birth_date: Option<String>,
    /// The day the person joined the company; its yearly return is the work anniversary.
    pub work_anniversary: Option<Date>,
    pub created_at: OffsetDateTime,
}

impl User {
    pub fn full_name(&self) -> String {
        full_name(&self.first_name, &self.last_name)
    }
}

/// "First Last", without stray spaces when one part is empty.
pub fn full_name(first: &str, last: &str) -> String {
    match (first.trim(), last.trim()) {
        ("", l) => l.to_owned(),
        (f, "") => f.to_owned(),
        (f, l) => format!("{f} {l}"),
    }
}

/// A team of an organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub id: TeamId,
    pub org_id: OrgId,
    pub name: String,
    /// False once archived.
    pub active: bool,
    pub is_default: bool,
    pub members_count: u64,
    pub created_at: OffsetDateTime,
}

/// A person's role inside one team.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TeamRole {
    Member,
    Manager,
}

impl WireEnum for TeamRole {
    const NAME: &'static str = "TeamRole";
    const ALL: &'static [Self] = &[TeamRole::Member, TeamRole::Manager];

    fn as_str(self) -> &'static str {
        TeamRole::as_str(self)
    }
}

impl TeamRole {
    pub const fn as_str(self) -> &'static str {
        match self {
            TeamRole::Member => "member",
            TeamRole::Manager => "manager",
        }
    }

    /// The value with this wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::from_name(s)
    }
}

/// A membership: who is in a team, and as what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamMember {
    pub team_id: TeamId,
    pub user: User,
    pub role: TeamRole,
    pub joined_at: OffsetDateTime,
}
