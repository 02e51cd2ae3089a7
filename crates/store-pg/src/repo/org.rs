//! SQL of organizations, users and teams.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use teamcomm_kernel::{OrgId, RepoError, TeamId, UserId};
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, Organization, OrganizationPatch, Team, User, UserPatch,
};
use time::OffsetDateTime;

use crate::Database;
use crate::error::db_error;
use crate::rows::{OrgRow, TeamRow, UserRow};
use crate::schema::{organizations, team_members, teams, users};

/// Postgres implementation of [`OrgRepository`].
#[derive(Clone)]
pub struct PgOrgRepository {
    db: Database,
}

impl PgOrgRepository {
    pub fn new(db: Database) -> Self {
        PgOrgRepository { db }
    }
}

#[derive(AsChangeset)]
#[diesel(table_name = organizations)]
struct OrgChanges<'a> {
    name: Option<&'a str>,
    plan: Option<&'a str>,
    api_access: Option<bool>,
    plan_beta: Option<bool>,
    exchange_tokens: Option<bool>,
    updated_at: OffsetDateTime,
}

#[derive(AsChangeset)]
#[diesel(table_name = users)]
struct UserChanges<'a> {
    is_active: Option<bool>,
    role: Option<&'a str>,
    updated_at: OffsetDateTime,
}

#[async_trait]
impl OrgRepository for PgOrgRepository {
    async fn create_organization(&self, new: &NewOrganization) -> Result<Organization, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: OrgRow = diesel::insert_into(organizations::table)
            .values((
                organizations::id.eq(OrgId::new().0),
                organizations::name.eq(&new.name),
                organizations::plan.eq(new.plan.as_str()),
                organizations::api_access.eq(new.api_access),
                organizations::plan_beta.eq(new.plan_beta),
                organizations::exchange_tokens.eq(new.exchange_tokens),
            ))
            .returning(OrgRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn update_organization(
        &self,
        id: OrgId,
        patch: &OrganizationPatch,
    ) -> Result<Organization, RepoError> {
        let mut conn = self.db.conn().await?;
        let changes = OrgChanges {
            name: patch.name.as_deref(),
            plan: patch.plan.map(|p| p.as_str()),
            api_access: patch.api_access,
            plan_beta: patch.plan_beta,
            exchange_tokens: patch.exchange_tokens,
            updated_at: OffsetDateTime::now_utc(),
        };
        let row: OrgRow = diesel::update(organizations::table.find(id.0))
            .set(&changes)
            .returning(OrgRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn get_organization(&self, id: OrgId) -> Result<Organization, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: OrgRow = organizations::table
            .find(id.0)
            .select(OrgRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn is_empty(&self) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        let any: Option<uuid::Uuid> = organizations::table
            .select(organizations::id)
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(any.is_none())
    }

    async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: UserRow = diesel::insert_into(users::table)
            .values((
                users::id.eq(UserId::new().0),
                users::organization_id.eq(org.0),
                users::email.eq(&new.email),
                users::first_name.eq(&new.first_name),
                users::last_name.eq(&new.last_name),
                users::role.eq(new.role.as_str()),
                users::is_active.eq(new.is_active),
            ))
            .returning(UserRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn update_user(&self, id: UserId, patch: &UserPatch) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let changes = UserChanges {
            is_active: patch.is_active,
            role: patch.role.map(|r| r.as_str()),
            updated_at: OffsetDateTime::now_utc(),
        };
        let row: UserRow = diesel::update(users::table.find(id.0))
            .set(&changes)
            .returning(UserRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn find_user(&self, id: UserId) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: UserRow = users::table
            .find(id.0)
            .select(UserRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: UserRow = users::table
            .filter(users::id.eq(id.0).and(users::organization_id.eq(org.0)))
            .select(UserRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn create_team(
        &self,
        org: OrgId,
        name: &str,
        members: &[UserId],
    ) -> Result<Team, RepoError> {
        let mut conn = self.db.conn().await?;
        let name = name.to_owned();
        let members: Vec<uuid::Uuid> = members.iter().map(|m| m.0).collect();
        let row: TeamRow = conn
            .transaction(async move |conn| {
                let team: TeamRow = diesel::insert_into(teams::table)
                    .values((
                        teams::id.eq(TeamId::new().0),
                        teams::organization_id.eq(org.0),
                        teams::name.eq(&name),
                    ))
                    .returning(TeamRow::as_returning())
                    .get_result(conn)
                    .await?;
                // Only people of the same organization can join.
                let in_org: Vec<uuid::Uuid> = users::table
                    .filter(
                        users::id
                            .eq_any(&members)
                            .and(users::organization_id.eq(org.0)),
                    )
                    .select(users::id)
                    .load(conn)
                    .await?;
                let rows: Vec<_> = in_org
                    .iter()
                    .map(|u| {
                        (
                            team_members::team_id.eq(team.id),
                            team_members::user_id.eq(*u),
                        )
                    })
                    .collect();
                diesel::insert_into(team_members::table)
                    .values(&rows)
                    .execute(conn)
                    .await?;
                Ok::<_, diesel::result::Error>(team)
            })
            .await
            .map_err(db_error)?;
        Ok(row.into())
    }
}
