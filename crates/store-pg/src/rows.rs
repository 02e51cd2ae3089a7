//! Row structs and their conversion into domain types. Conversions that can fail (an unknown
//! enum string written by hand into the database) become `RepoError::Other`.

use diesel::prelude::*;
use teamcomm_kernel::{OrgId, RepoError, TeamId, UserId};
use teamcomm_org::{Organization, PlanTier, Role, Team, User};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::schema::{organizations, teams, users};

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = organizations, check_for_backend(diesel::pg::Pg))]
pub(crate) struct OrgRow {
    pub id: Uuid,
    pub name: String,
    pub plan: String,
    pub api_access: bool,
    pub plan_beta: bool,
    pub exchange_tokens: bool,
    pub timezone: String,
    pub platform: Option<String>,
    pub created_at: OffsetDateTime,
}

impl TryFrom<OrgRow> for Organization {
    type Error = RepoError;
    fn try_from(r: OrgRow) -> Result<Self, RepoError> {
        Ok(Organization {
            id: OrgId(r.id),
            name: r.name,
            plan: PlanTier::parse(&r.plan)
                .ok_or_else(|| RepoError::Other(format!("unknown plan {}", r.plan)))?,
            api_access: r.api_access,
            plan_beta: r.plan_beta,
            exchange_tokens: r.exchange_tokens,
            timezone: r.timezone,
            platform: r.platform,
            created_at: r.created_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub(crate) struct UserRow {
    pub id: Uuid,
    pub organization_id: Uuid,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub role: String,
    pub is_active: bool,
    pub timezone: String,
    pub occupation: String,
    pub image: Option<String>,
    pub birth_date: Option<String>,
    pub work_anniversary: Option<Date>,
    pub created_at: OffsetDateTime,
}

impl TryFrom<UserRow> for User {
    type Error = RepoError;
    fn try_from(r: UserRow) -> Result<Self, RepoError> {
        Ok(User {
            id: UserId(r.id),
            org_id: OrgId(r.organization_id),
            email: r.email,
            first_name: r.first_name,
            last_name: r.last_name,
            role: Role::parse(&r.role)
                .ok_or_else(|| RepoError::Other(format!("unknown role {}", r.role)))?,
            is_active: r.is_active,
            timezone: r.timezone,
            occupation: r.occupation,
            image: r.image,
            birth_date: r.birth_date,
            work_anniversary: r.work_anniversary,
            created_at: r.created_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = teams, check_for_backend(diesel::pg::Pg))]
pub(crate) struct TeamRow {
    pub id: Uuid,
    pub organization_id: Uuid,
    pub name: String,
    pub active: bool,
    pub is_default: bool,
    pub created_at: OffsetDateTime,
}

impl TeamRow {
    pub fn into_team(self, members_count: i64) -> Team {
        Team {
            id: TeamId(self.id),
            org_id: OrgId(self.organization_id),
            name: self.name,
            active: self.active,
            is_default: self.is_default,
            members_count: u64::try_from(members_count).unwrap_or(0),
            created_at: self.created_at,
        }
    }
}
