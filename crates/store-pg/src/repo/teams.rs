//! SQL of teams and memberships.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, TeamId, UserId};
use teamcomm_org::{Team, TeamFilter, TeamMember, TeamRepository, TeamRole};
use time::OffsetDateTime;
use uuid::Uuid;

use super::outbox;
use super::paging::{like_pattern, load_page};
use crate::Database;
use crate::error::db_error;
use crate::rows::{CountedTeamRow, MemberRow, TeamRow, UserRow};
use crate::schema::{team_members, teams, users};

/// Postgres implementation of [`TeamRepository`].
#[derive(Clone)]
pub struct PgTeamRepository {
    db: Database,
}

impl PgTeamRepository {
    pub fn new(db: Database) -> Self {
        PgTeamRepository { db }
    }
}

diesel::alias!(team_members as counted: CountedMembers);

/// The columns of a [`MemberRow`], from `team_members` joined with `users`.
fn member_columns() -> (
    diesel::helper_types::AsSelect<UserRow, diesel::pg::Pg>,
    team_members::team_id,
    team_members::role,
    team_members::created_at,
) {
    (
        UserRow::as_select(),
        team_members::team_id,
        team_members::role,
        team_members::created_at,
    )
}

/// The membership with its person, when that person belongs to `org`.
async fn load_member(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    team: TeamId,
    user: UserId,
) -> QueryResult<MemberRow> {
    team_members::table
        .inner_join(users::table)
        .filter(team_members::team_id.eq(team.0))
        .filter(team_members::user_id.eq(user.0))
        .filter(users::organization_id.eq(org.0))
        .select(member_columns())
        .first(conn)
        .await
}

#[async_trait]
impl TeamRepository for PgTeamRepository {
    async fn create_team(
        &self,
        org: OrgId,
        id: TeamId,
        name: &str,
        members: &[UserId],
        joined: &[Event],
    ) -> Result<Team, RepoError> {
        let mut conn = self.db.conn().await?;
        let name = name.to_owned();
        let members: Vec<Uuid> = members.iter().map(|m| m.0).collect();
        let (row, count) = conn
            .transaction(async move |conn| {
                let team: TeamRow = diesel::insert_into(teams::table)
                    .values((
                        teams::id.eq(id.0),
                        teams::organization_id.eq(org.0),
                        teams::name.eq(&name),
                    ))
                    .returning(TeamRow::as_returning())
                    .get_result(conn)
                    .await?;
                // Only people of the same organization can join.
                let in_org: Vec<Uuid> = users::table
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
                let added = diesel::insert_into(team_members::table)
                    .values(&rows)
                    .execute(conn)
                    .await?;
                outbox::record(conn, joined).await?;
                Ok::<_, diesel::result::Error>((team, added as i64))
            })
            .await
            .map_err(db_error)?;
        CountedTeamRow {
            team: row,
            members: Some(count),
        }
        .try_into()
    }

    async fn update_team(
        &self,
        org: OrgId,
        id: TeamId,
        name: Option<&str>,
        active: Option<bool>,
    ) -> Result<Team, RepoError> {
        {
            let mut conn = self.db.conn().await?;
            #[derive(AsChangeset)]
            #[diesel(table_name = teams)]
            struct Changes<'a> {
                name: Option<&'a str>,
                active: Option<bool>,
                updated_at: OffsetDateTime,
            }
            let n = diesel::update(
                teams::table.filter(teams::id.eq(id.0).and(teams::organization_id.eq(org.0))),
            )
            .set(&Changes {
                name,
                active,
                updated_at: OffsetDateTime::now_utc(),
            })
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
            if n == 0 {
                return Err(RepoError::NotFound);
            }
        }
        self.get_team(org, id).await
    }

    async fn get_team(&self, org: OrgId, id: TeamId) -> Result<Team, RepoError> {
        let mut conn = self.db.conn().await?;
        let members = counted
            .filter(counted.field(team_members::team_id).eq(teams::id))
            .count()
            .single_value();
        let row: CountedTeamRow = teams::table
            .filter(teams::id.eq(id.0).and(teams::organization_id.eq(org.0)))
            .select((TeamRow::as_select(), members))
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn list_teams(
        &self,
        org: OrgId,
        filter: &TeamFilter,
        page: PageRequest,
    ) -> Result<Page<Team>, RepoError> {
        let mut conn = self.db.conn().await?;
        let filtered = || {
            let mut q = teams::table
                .filter(teams::organization_id.eq(org.0))
                .into_boxed();
            if !filter.include_archived {
                q = q.filter(teams::active.eq(true));
            }
            if let Some(user) = filter.member_of {
                q = q.filter(
                    teams::id.eq_any(
                        team_members::table
                            .filter(team_members::user_id.eq(user.0))
                            .select(team_members::team_id),
                    ),
                );
            }
            if let Some(search) = filter.search.as_deref() {
                q = q.filter(teams::name.ilike(like_pattern(search)));
            }
            q
        };
        let members = counted
            .filter(counted.field(team_members::team_id).eq(teams::id))
            .count()
            .single_value();
        load_page::<CountedTeamRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((teams::name, teams::id))
                .select((TeamRow::as_select(), members))
        })
        .await
    }

    async fn is_member(&self, team: TeamId, user: UserId) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::select(diesel::dsl::exists(
            team_members::table.filter(
                team_members::team_id
                    .eq(team.0)
                    .and(team_members::user_id.eq(user.0)),
            ),
        ))
        .get_result(&mut conn)
        .await
        .map_err(db_error)
    }

    async fn list_members(
        &self,
        org: OrgId,
        team: TeamId,
        page: PageRequest,
    ) -> Result<Page<TeamMember>, RepoError> {
        let mut conn = self.db.conn().await?;
        let filtered = || {
            team_members::table
                .inner_join(users::table)
                .filter(team_members::team_id.eq(team.0))
                .filter(users::organization_id.eq(org.0))
        };
        load_page::<MemberRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((users::first_name, users::last_name, users::id))
                .select(member_columns())
        })
        .await
    }

    async fn get_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
    ) -> Result<TeamMember, RepoError> {
        let mut conn = self.db.conn().await?;
        load_member(&mut conn, org, team, user)
            .await
            .map_err(db_error)?
            .try_into()
    }

    async fn put_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
        role: Option<TeamRole>,
        added: &Event,
    ) -> Result<(TeamMember, bool), RepoError> {
        let mut conn = self.db.conn().await?;
        let (row, inserted) = conn
            .transaction(async |conn| {
                // Both the team and the person must belong to `org`: the write itself checks
                // it, so the port can never make a membership across organizations.
                let inserted = diesel::sql_query(
                    "INSERT INTO team_members (team_id, user_id, role) \
                     SELECT t.id, u.id, $4 FROM teams t JOIN users u \
                       ON u.id = $2 AND u.organization_id = t.organization_id \
                     WHERE t.id = $1 AND t.organization_id = $3 \
                     ON CONFLICT (team_id, user_id) DO NOTHING",
                )
                .bind::<diesel::sql_types::Uuid, _>(team.0)
                .bind::<diesel::sql_types::Uuid, _>(user.0)
                .bind::<diesel::sql_types::Uuid, _>(org.0)
                .bind::<diesel::sql_types::Text, _>(role.unwrap_or(TeamRole::Member).as_str())
                .execute(conn)
                .await?
                    == 1;
                if inserted {
                    outbox::record(conn, std::slice::from_ref(added)).await?;
                } else if let Some(role) = role {
                    diesel::sql_query(
                        "UPDATE team_members m SET role = $4 FROM teams t \
                         WHERE m.team_id = $1 AND m.user_id = $2 \
                           AND t.id = m.team_id AND t.organization_id = $3",
                    )
                    .bind::<diesel::sql_types::Uuid, _>(team.0)
                    .bind::<diesel::sql_types::Uuid, _>(user.0)
                    .bind::<diesel::sql_types::Uuid, _>(org.0)
                    .bind::<diesel::sql_types::Text, _>(role.as_str())
                    .execute(conn)
                    .await?;
                }
                // `NotFound` here (nothing was written) when the team or person is not of `org`.
                let row = load_member(conn, org, team, user).await?;
                Ok::<_, diesel::result::Error>((row, inserted))
            })
            .await
            .map_err(db_error)?;
        Ok((row.try_into()?, inserted))
    }

    async fn remove_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
        removed: &Event,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            let teams_of_org = teams::table
                .filter(teams::organization_id.eq(org.0))
                .select(teams::id);
            let n = diesel::delete(
                team_members::table
                    .filter(team_members::team_id.eq(team.0))
                    .filter(team_members::user_id.eq(user.0))
                    .filter(team_members::team_id.eq_any(teams_of_org)),
            )
            .execute(conn)
            .await?;
            if n == 0 {
                return Err(diesel::result::Error::NotFound);
            }
            outbox::record(conn, std::slice::from_ref(removed)).await
        })
        .await
        .map_err(db_error)
    }
}
