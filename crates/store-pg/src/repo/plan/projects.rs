//! SQL of the Plan area's projects (their member grants and order: `holders`).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_plan::access::{Anchor, Grant, Grantee, Viewer};
use teamcomm_plan::ports::ProjectRepository;
use teamcomm_plan::projects::{ProjectFilter, ProjectPatch, ProjectProgress};
use teamcomm_plan::{GrantId, Project, ProjectHealth, ProjectId, Visibility};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::holders::PROJECTS;
use crate::Database;
use crate::error::{db_error, unknown_organization};
use crate::repo::count_from;
use crate::repo::paging::{like_pattern, load_page};
use crate::schema::plan::{plan_project_members, plan_projects};

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = plan_projects, check_for_backend(diesel::pg::Pg))]
struct ProjectRow {
    id: Uuid,
    organization_id: Uuid,
    name: String,
    description: String,
    visibility: String,
    lead_id: Option<Uuid>,
    health: String,
    start_date: Option<Date>,
    target_date: Option<Date>,
    rank: i64,
    is_archived: bool,
    archived_at: Option<OffsetDateTime>,
    created_by_id: Option<Uuid>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

/// A stored value no variant reads (the tables' CHECKs keep it from happening).
pub(super) fn decoding(what: &str, value: &str) -> RepoError {
    RepoError::Other(format!("unknown {what} {value:?} in the database"))
}

impl TryFrom<ProjectRow> for Project {
    type Error = RepoError;
    fn try_from(r: ProjectRow) -> Result<Self, RepoError> {
        Ok(Project {
            id: ProjectId(r.id),
            org_id: OrgId(r.organization_id),
            visibility: Visibility::parse(&r.visibility)
                .ok_or_else(|| decoding("visibility", &r.visibility))?,
            health: ProjectHealth::parse(&r.health).ok_or_else(|| decoding("health", &r.health))?,
            name: r.name,
            description: r.description,
            lead: r.lead_id.map(UserId),
            start_date: r.start_date,
            target_date: r.target_date,
            rank: r.rank,
            is_archived: r.is_archived,
            archived_at: r.archived_at,
            created_by: r.created_by_id.map(UserId),
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

pub(super) fn team_uuids(viewer: &Viewer) -> Vec<Uuid> {
    viewer.teams.iter().map(|t| t.0).collect()
}

async fn load_project(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    id: ProjectId,
) -> Result<Project, RepoError> {
    plan_projects::table
        .filter(plan_projects::id.eq(id.0))
        .filter(plan_projects::organization_id.eq(org.0))
        .select(ProjectRow::as_select())
        .first(conn)
        .await
        .map_err(db_error)?
        .try_into()
}

#[derive(QueryableByName)]
struct Tally {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = BigInt)]
    completed: i64,
    #[diesel(sql_type = BigInt)]
    total: i64,
}

/// What a transaction fails with: the database (rolling it back) or a refusal inside it.
pub(super) struct Tx(RepoError);

impl From<diesel::result::Error> for Tx {
    fn from(e: diesel::result::Error) -> Self {
        Tx(db_error(e))
    }
}

impl From<RepoError> for Tx {
    fn from(e: RepoError) -> Self {
        Tx(e)
    }
}

impl From<Tx> for RepoError {
    fn from(e: Tx) -> Self {
        e.0
    }
}

pub struct PgProjects {
    db: Database,
}

impl PgProjects {
    pub fn new(db: Database) -> Self {
        PgProjects { db }
    }
}

#[async_trait]
impl ProjectRepository for PgProjects {
    async fn create_project(&self, project: &Project) -> Result<Project, RepoError> {
        let mut conn = self.db.conn().await?;
        let org = project.org_id.0;
        let row = conn
            .transaction::<_, Tx, _>(async |conn| {
                let last: Option<i64> = plan_projects::table
                    .filter(plan_projects::organization_id.eq(org))
                    .select(diesel::dsl::max(plan_projects::rank))
                    .first(conn)
                    .await?;
                diesel::insert_into(plan_projects::table)
                    .values(ProjectRow {
                        id: project.id.0,
                        organization_id: org,
                        name: project.name.clone(),
                        description: project.description.clone(),
                        visibility: project.visibility.as_str().to_owned(),
                        lead_id: project.lead.map(|u| u.0),
                        health: project.health.as_str().to_owned(),
                        start_date: project.start_date,
                        target_date: project.target_date,
                        rank: last.unwrap_or(0) + 1024,
                        is_archived: project.is_archived,
                        archived_at: project.archived_at,
                        created_by_id: project.created_by.map(|u| u.0),
                        created_at: project.created_at,
                        updated_at: project.updated_at,
                    })
                    .returning(ProjectRow::as_returning())
                    .get_result::<ProjectRow>(conn)
                    .await
                    .map_err(Tx::from)
            })
            .await
            .map_err(|e| unknown_organization(e.into()))?;
        row.try_into()
    }

    async fn get_project(&self, org: OrgId, id: ProjectId) -> Result<Project, RepoError> {
        let mut conn = self.db.conn().await?;
        load_project(&mut conn, org, id).await
    }

    async fn list_projects(
        &self,
        org: OrgId,
        filter: &ProjectFilter,
        page: PageRequest,
    ) -> Result<Page<Project>, RepoError> {
        let mut conn = self.db.conn().await?;
        let teams = team_uuids(&filter.viewer);
        let filtered = || {
            let mut q = plan_projects::table
                .filter(plan_projects::organization_id.eq(org.0))
                .into_boxed();
            if !filter.include_archived {
                q = q.filter(plan_projects::is_archived.eq(false));
            }
            if !filter.viewer.all {
                let granted = plan_project_members::table
                    .filter(plan_project_members::project_id.eq(plan_projects::id))
                    .filter(
                        plan_project_members::user_id
                            .eq(filter.viewer.user.map(|u| u.0))
                            .or(plan_project_members::team_id.eq_any(teams.clone())),
                    );
                q = q.filter(
                    plan_projects::visibility
                        .eq("org")
                        .or(diesel::dsl::exists(granted)),
                );
            }
            if let Some(search) = filter.search.as_deref() {
                q = q.filter(plan_projects::name.ilike(like_pattern(search)));
            }
            if let Some(d) = filter.start_date {
                q = q.filter(
                    diesel::dsl::sql::<diesel::sql_types::Bool>(
                        "COALESCE(plan_projects.target_date, plan_projects.start_date, 'infinity'::date) >= ",
                    )
                    .bind::<diesel::sql_types::Date, _>(d),
                );
            }
            if let Some(d) = filter.end_date {
                q = q.filter(
                    diesel::dsl::sql::<diesel::sql_types::Bool>(
                        "COALESCE(plan_projects.start_date, plan_projects.target_date, '-infinity'::date) <= ",
                    )
                    .bind::<diesel::sql_types::Date, _>(d),
                );
            }
            q
        };
        load_page::<ProjectRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((plan_projects::rank, plan_projects::id))
                .select(ProjectRow::as_select())
        })
        .await
    }

    async fn count_live_projects(&self, org: OrgId) -> Result<u64, RepoError> {
        PROJECTS.count_live(&self.db, org).await
    }

    async fn update_project(
        &self,
        org: OrgId,
        id: ProjectId,
        patch: &ProjectPatch,
    ) -> Result<Project, RepoError> {
        #[derive(AsChangeset)]
        #[diesel(table_name = plan_projects)]
        struct Changes<'a> {
            name: Option<&'a str>,
            description: Option<&'a str>,
            visibility: Option<&'static str>,
            lead_id: Option<Option<Uuid>>,
            health: Option<&'static str>,
            start_date: Option<Option<Date>>,
            target_date: Option<Option<Date>>,
            is_archived: Option<bool>,
            archived_at: Option<Option<OffsetDateTime>>,
            updated_at: OffsetDateTime,
        }
        let now = patch.updated_at.unwrap_or_else(OffsetDateTime::now_utc);
        let changes = Changes {
            name: patch.name.as_deref(),
            description: patch.description.as_deref(),
            visibility: patch.visibility.map(|v| v.as_str()),
            lead_id: patch.lead.map(|l| l.map(|u| u.0)),
            health: patch.health.map(|h| h.as_str()),
            start_date: patch.start_date,
            target_date: patch.target_date,
            is_archived: patch.is_archived,
            archived_at: patch.is_archived.map(|a| a.then_some(now)),
            updated_at: now,
        };
        let mut conn = self.db.conn().await?;
        let updated = diesel::update(
            plan_projects::table
                .filter(plan_projects::id.eq(id.0))
                .filter(plan_projects::organization_id.eq(org.0)),
        )
        .set(changes)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if updated == 0 {
            return Err(RepoError::NotFound);
        }
        load_project(&mut conn, org, id).await
    }

    async fn board_counts(
        &self,
        org: OrgId,
        ids: &[ProjectId],
    ) -> Result<Vec<(ProjectId, u64)>, RepoError> {
        use crate::schema::plan::plan_boards;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<(Uuid, i64)> = plan_boards::table
            .filter(plan_boards::organization_id.eq(org.0))
            .filter(plan_boards::project_id.eq_any(ids.iter().map(|p| p.0).collect::<Vec<_>>()))
            .filter(plan_boards::is_archived.eq(false))
            .group_by(plan_boards::project_id)
            .select((plan_boards::project_id, diesel::dsl::count_star()))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter()
            .map(|(p, n)| Ok((ProjectId(p), count_from(n)?)))
            .collect()
    }

    async fn progress(
        &self,
        org: OrgId,
        ids: &[ProjectId],
    ) -> Result<Vec<(ProjectId, ProjectProgress)>, RepoError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        // Canceled tasks count neither way: they will never be done.
        let rows: Vec<Tally> = diesel::sql_query(
            "SELECT b.project_id AS id, \
                    count(*) FILTER (WHERE s.category = 'done') AS completed, \
                    count(*) FILTER (WHERE s.category <> 'canceled') AS total \
             FROM plan_tasks t \
             JOIN plan_boards b ON b.id = t.board_id \
             JOIN plan_states s ON s.id = t.state_id \
             WHERE t.organization_id = $1 AND b.project_id = ANY($2) \
               AND NOT t.is_archived AND NOT b.is_archived \
             GROUP BY b.project_id",
        )
        .bind::<SqlUuid, _>(org.0)
        .bind::<Array<SqlUuid>, _>(ids.iter().map(|p| p.0).collect::<Vec<_>>())
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        rows.into_iter()
            .filter(|r| r.total > 0)
            .map(|r| {
                Ok((
                    ProjectId(r.id),
                    ProjectProgress {
                        completed: count_from(r.completed)?,
                        total: count_from(r.total)?,
                    },
                ))
            })
            .collect()
    }

    async fn move_project(
        &self,
        org: OrgId,
        id: ProjectId,
        anchor: Anchor<ProjectId>,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, Tx, _>(async |conn| {
            Ok(PROJECTS.reorder(conn, org, id, anchor, |p| p.0).await?)
        })
        .await
        .map_err(RepoError::from)
    }

    async fn project_grants(&self, org: OrgId, id: ProjectId) -> Result<Vec<Grant>, RepoError> {
        PROJECTS.grants(&self.db, org, id.0).await
    }

    async fn add_project_grant(
        &self,
        org: OrgId,
        id: ProjectId,
        grantee: Grantee,
        grant: GrantId,
    ) -> Result<(Grant, bool), RepoError> {
        PROJECTS
            .add_grant(&self.db, org, id.0, grantee, grant)
            .await
    }

    async fn remove_project_grant(
        &self,
        org: OrgId,
        id: ProjectId,
        grant: GrantId,
    ) -> Result<(), RepoError> {
        PROJECTS.remove_grant(&self.db, org, id.0, grant).await
    }
}
