//! Row structs shared by several repositories and their conversion into domain types. Every
//! conversion is a `TryFrom`: a stored value the domain does not know (an enum name written by
//! hand or by a newer version) is `RepoError::Other`, logged and answered 500, never replaced by
//! a default.

use std::fmt::Display;

use diesel::prelude::*;
use teamcomm_kernel::{OrgId, RepoError, TeamId, UserId};
use teamcomm_org::{Organization, PlanTier, Role, Team, TeamMember, TeamRole, User};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::repo::count_from;
use crate::schema::{organizations, teams, users};

/// The error of a stored value the domain does not know.
pub(crate) fn unknown_value(column: &str, value: impl Display) -> RepoError {
    RepoError::Other(format!("unknown value in {column}: {value}"))
}

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
                .ok_or_else(|| unknown_value("organizations.plan", &r.plan))?,
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
            role: Role::parse(&r.role).ok_or_else(|| unknown_value("users.role", &r.role))?,
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

/// A team with its number of members (a subquery of the same statement).
#[derive(Debug, Queryable)]
pub(crate) struct CountedTeamRow {
    pub team: TeamRow,
    pub members: Option<i64>,
}

impl TryFrom<CountedTeamRow> for Team {
    type Error = RepoError;
    fn try_from(CountedTeamRow { team, members }: CountedTeamRow) -> Result<Self, RepoError> {
        Ok(Team {
            id: TeamId(team.id),
            org_id: OrgId(team.organization_id),
            name: team.name,
            active: team.active,
            is_default: team.is_default,
            members_count: count_from(members.unwrap_or(0))?,
            created_at: team.created_at,
        })
    }
}

/// A membership joined with its person.
#[derive(Debug, Queryable)]
pub(crate) struct MemberRow {
    pub user: UserRow,
    pub team_id: Uuid,
    pub role: String,
    pub joined_at: OffsetDateTime,
}

impl TryFrom<MemberRow> for TeamMember {
    type Error = RepoError;
    fn try_from(r: MemberRow) -> Result<Self, RepoError> {
        Ok(TeamMember {
            team_id: TeamId(r.team_id),
            user: r.user.try_into()?,
            role: TeamRole::parse(&r.role)
                .ok_or_else(|| unknown_value("team_members.role", &r.role))?,
            joined_at: r.joined_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_row(role: &str) -> UserRow {
        UserRow {
            id: Uuid::nil(),
            organization_id: Uuid::nil(),
            email: "ada@example.com".into(),
            first_name: "Ada".into(),
            last_name: "Lovelace".into(),
            role: role.into(),
            is_active: true,
            timezone: "UTC".into(),
            occupation: String::new(),
            image: None,
            birth_date: None,
            work_anniversary: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn org_row(plan: &str) -> OrgRow {
        OrgRow {
            id: Uuid::nil(),
            name: "Acme".into(),
            plan: plan.into(),
            api_access: true,
            plan_beta: false,
            exchange_tokens: false,
            timezone: "UTC".into(),
            platform: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn team_row() -> TeamRow {
        TeamRow {
            id: Uuid::nil(),
            organization_id: Uuid::nil(),
            name: "Core".into(),
            active: true,
            is_default: false,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn is_unknown(e: RepoError, column: &str) -> bool {
        matches!(e, RepoError::Other(m) if m.contains(column))
    }

    #[test]
    fn users_decode_known_roles_and_refuse_others() {
        assert_eq!(User::try_from(user_row("guest")).unwrap().role, Role::Guest);
        assert!(is_unknown(
            User::try_from(user_row("owner")).unwrap_err(),
            "users.role"
        ));
        assert!(is_unknown(
            User::try_from(user_row("Admin")).unwrap_err(),
            "users.role"
        ));
    }

    #[test]
    fn organizations_decode_known_plans_and_refuse_others() {
        let org = Organization::try_from(org_row("business")).unwrap();
        assert_eq!(org.plan, PlanTier::Business);
        assert!(is_unknown(
            Organization::try_from(org_row("platinum")).unwrap_err(),
            "organizations.plan"
        ));
    }

    #[test]
    fn team_members_decode_known_roles_and_refuse_others() {
        let member = |role: &str| MemberRow {
            user: user_row("member"),
            team_id: Uuid::nil(),
            role: role.into(),
            joined_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert_eq!(
            TeamMember::try_from(member("manager")).unwrap().role,
            TeamRole::Manager
        );
        // Used to fall back to `member` quietly.
        assert!(is_unknown(
            TeamMember::try_from(member("owner")).unwrap_err(),
            "team_members.role"
        ));
        // The person's own row is decoded strictly too.
        let mut bad_user = member("member");
        bad_user.user.role = "root".into();
        assert!(is_unknown(
            TeamMember::try_from(bad_user).unwrap_err(),
            "users.role"
        ));
    }

    #[test]
    fn teams_carry_their_member_count() {
        let team = |members| CountedTeamRow {
            team: team_row(),
            members,
        };
        assert_eq!(Team::try_from(team(Some(3))).unwrap().members_count, 3);
        assert_eq!(Team::try_from(team(None)).unwrap().members_count, 0);
        assert!(matches!(
            Team::try_from(team(Some(-1))),
            Err(RepoError::Other(_))
        ));
    }
}
