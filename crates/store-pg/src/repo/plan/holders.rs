//! SQL that projects and boards share: both hold member grants (two tables with the same
//! columns but the one naming the holder), a place in their organization's order, and an
//! archived flag.

use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{OrgId, RepoError, TeamId, UserId};
use teamcomm_plan::GrantId;
use teamcomm_plan::access::{Anchor, Grant, Grantee, spaced_rank};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::Database;
use crate::error::db_error;
use crate::repo::count_from;

/// Where a kind of holder lives. The names are these constants only, never input, so they
/// are written into the statements.
#[derive(Debug, Clone, Copy)]
pub(super) struct Holder {
    /// The holders' table.
    table: &'static str,
    /// Their grants' table.
    grants: &'static str,
    /// The grants' column naming the holder.
    column: &'static str,
}

pub(super) const PROJECTS: Holder = Holder {
    table: "plan_projects",
    grants: "plan_project_members",
    column: "project_id",
};

pub(super) const BOARDS: Holder = Holder {
    table: "plan_boards",
    grants: "plan_board_members",
    column: "board_id",
};

const GRANT_COLUMNS: &str = "id, user_id, team_id, role, created_at";

#[derive(QueryableByName)]
struct GrantRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    user_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    team_id: Option<Uuid>,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

impl TryFrom<GrantRow> for Grant {
    type Error = RepoError;
    fn try_from(r: GrantRow) -> Result<Self, RepoError> {
        let grantee = match (r.user_id, r.team_id) {
            (Some(u), None) => Grantee::User(UserId(u)),
            (None, Some(t)) => Grantee::Team(TeamId(t)),
            _ => return Err(RepoError::Other(format!("grant {} names no one", r.id))),
        };
        Ok(Grant {
            id: GrantId(r.id),
            grantee,
            role: r.role,
            created_at: r.created_at,
        })
    }
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl Holder {
    /// `NotFound` unless the organization has this holder.
    async fn exists(
        self,
        conn: &mut AsyncPgConnection,
        org: OrgId,
        id: Uuid,
    ) -> Result<(), RepoError> {
        diesel::sql_query(format!(
            "SELECT id FROM {} WHERE id = $1 AND organization_id = $2",
            self.table
        ))
        .bind::<SqlUuid, _>(id)
        .bind::<SqlUuid, _>(org.0)
        .get_result::<Row>(conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    /// Live (not archived) holders of the organization.
    pub(super) async fn count_live(self, db: &Database, org: OrgId) -> Result<u64, RepoError> {
        let n: Count = diesel::sql_query(format!(
            "SELECT count(*) AS n FROM {} WHERE organization_id = $1 AND NOT is_archived",
            self.table
        ))
        .bind::<SqlUuid, _>(org.0)
        .get_result(&mut db.conn().await?)
        .await
        .map_err(db_error)?;
        count_from(n.n)
    }

    /// The holder's grants, oldest first.
    pub(super) async fn grants(
        self,
        db: &Database,
        org: OrgId,
        id: Uuid,
    ) -> Result<Vec<Grant>, RepoError> {
        let conn = &mut db.conn().await?;
        self.exists(conn, org, id).await?;
        let rows: Vec<GrantRow> = diesel::sql_query(format!(
            "SELECT {GRANT_COLUMNS} FROM {} WHERE {} = $1 AND organization_id = $2 \
             ORDER BY created_at, id",
            self.grants, self.column
        ))
        .bind::<SqlUuid, _>(id)
        .bind::<SqlUuid, _>(org.0)
        .load(conn)
        .await
        .map_err(db_error)?;
        rows.into_iter().map(Grant::try_from).collect()
    }

    /// Adds the grant, or answers the one the grantee already has (flag false).
    pub(super) async fn add_grant(
        self,
        db: &Database,
        org: OrgId,
        id: Uuid,
        grantee: Grantee,
        grant: GrantId,
    ) -> Result<(Grant, bool), RepoError> {
        let conn = &mut db.conn().await?;
        self.exists(conn, org, id).await?;
        let (column, who) = match grantee {
            Grantee::User(u) => ("user_id", u.0),
            Grantee::Team(t) => ("team_id", t.0),
        };
        let inserted: Option<GrantRow> = diesel::sql_query(format!(
            "INSERT INTO {} (id, organization_id, {}, {column}) VALUES ($1, $2, $3, $4) \
             ON CONFLICT DO NOTHING RETURNING {GRANT_COLUMNS}",
            self.grants, self.column
        ))
        .bind::<SqlUuid, _>(grant.0)
        .bind::<SqlUuid, _>(org.0)
        .bind::<SqlUuid, _>(id)
        .bind::<SqlUuid, _>(who)
        .get_result(conn)
        .await
        .optional()
        .map_err(db_error)?;
        if let Some(row) = inserted {
            return Ok((row.try_into()?, true));
        }
        let row: GrantRow = diesel::sql_query(format!(
            "SELECT {GRANT_COLUMNS} FROM {} WHERE {} = $1 AND {column} = $2",
            self.grants, self.column
        ))
        .bind::<SqlUuid, _>(id)
        .bind::<SqlUuid, _>(who)
        .get_result(conn)
        .await
        .map_err(db_error)?;
        Ok((row.try_into()?, false))
    }

    /// `NotFound` when the holder has no such grant.
    pub(super) async fn remove_grant(
        self,
        db: &Database,
        org: OrgId,
        id: Uuid,
        grant: GrantId,
    ) -> Result<(), RepoError> {
        let n = diesel::sql_query(format!(
            "DELETE FROM {} WHERE id = $1 AND {} = $2 AND organization_id = $3",
            self.grants, self.column
        ))
        .bind::<SqlUuid, _>(grant.0)
        .bind::<SqlUuid, _>(id)
        .bind::<SqlUuid, _>(org.0)
        .execute(&mut db.conn().await?)
        .await
        .map_err(db_error)?;
        if n == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    /// Puts `id` at `anchor` in the organization's order and renumbers the order, in the
    /// caller's transaction. `NotFound` when either is not in it.
    pub(super) async fn reorder<Id: Copy + PartialEq>(
        self,
        conn: &mut AsyncPgConnection,
        org: OrgId,
        id: Id,
        anchor: Anchor<Id>,
        uuid: fn(Id) -> Uuid,
    ) -> Result<(), RepoError> {
        // Locks the organization's rows so concurrent reorders apply one after the other.
        let order: Vec<Row> = diesel::sql_query(format!(
            "SELECT id FROM {} WHERE organization_id = $1 ORDER BY rank, id FOR UPDATE",
            self.table
        ))
        .bind::<SqlUuid, _>(org.0)
        .load(conn)
        .await
        .map_err(db_error)?;
        let mut ids: Vec<Uuid> = order.into_iter().map(|r| r.id).collect();
        if !ids.contains(&uuid(id)) {
            return Err(RepoError::NotFound);
        }
        let anchor = match anchor {
            Anchor::Before(a) => Anchor::Before(uuid(a)),
            Anchor::After(a) => Anchor::After(uuid(a)),
            Anchor::Last => Anchor::Last,
        };
        anchor
            .place(&mut ids, uuid(id))
            .ok_or(RepoError::NotFound)?;
        let ranks: Vec<i64> = (0..ids.len()).map(spaced_rank).collect();
        diesel::sql_query(format!(
            "UPDATE {} AS t SET rank = o.rank FROM unnest($1::uuid[], $2::bigint[]) AS o (id, rank) \
             WHERE t.id = o.id AND t.rank <> o.rank",
            self.table
        ))
        .bind::<Array<SqlUuid>, _>(ids)
        .bind::<Array<BigInt>, _>(ranks)
        .execute(conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }
}
