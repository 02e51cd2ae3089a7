//! SQL of workflows (`workflows`) and their runs (`workflow_runs`). A queued run, its job and
//! the workflow's run count are written in one transaction; a deleted workflow takes its runs
//! (foreign key), labels and stars (here) with it.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde_json::Value;
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId, WireEnum};
use teamcomm_workflows::{
    Action, RunEnd, RunStatus, Trigger, Workflow, WorkflowId, WorkflowRepository, WorkflowRun,
    WorkflowSelection,
};
use time::{OffsetDateTime, Time};
use uuid::Uuid;

use super::paging::{like_pattern, load_page};
use super::{jobs, outbox};
use crate::Database;
use crate::error::{db_error, unknown_organization};
use crate::rows::unknown_value;
use crate::schema::labels::{entity_labels, featured_entities};
use crate::schema::workflows::{workflow_runs, workflows};

diesel::define_sql_function!(fn lower(a: diesel::sql_types::Text) -> diesel::sql_types::Text);

/// The entity type workflows have in `entity_labels` and `featured_entities`.
const ENTITY_TYPE: &str = "workflows";

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = workflows, check_for_backend(diesel::pg::Pg))]
struct WorkflowRow {
    id: Uuid,
    organization_id: Uuid,
    name: String,
    description: String,
    trigger_type: String,
    actions: Value,
    active: bool,
    frozen: bool,
    total_runs: i64,
    last_run_at: Option<OffsetDateTime>,
    created_by_id: Option<Uuid>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl TryFrom<WorkflowRow> for Workflow {
    type Error = RepoError;

    fn try_from(r: WorkflowRow) -> Result<Self, RepoError> {
        let trigger = Trigger::parse(&r.trigger_type)
            .ok_or_else(|| unknown_value("workflows.trigger_type", &r.trigger_type))?;
        let actions: Vec<Action> = serde_json::from_value(r.actions)
            .map_err(|e| RepoError::Other(format!("workflows.actions of {}: {e}", r.id)))?;
        Ok(Workflow {
            id: WorkflowId(r.id),
            org_id: OrgId(r.organization_id),
            name: r.name,
            description: r.description,
            trigger,
            actions,
            active: r.active,
            frozen: r.frozen,
            created_by: r.created_by_id.map(UserId),
            created_at: r.created_at,
            updated_at: r.updated_at,
            total_runs: u64::try_from(r.total_runs).unwrap_or(0),
            last_run_at: r.last_run_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = workflow_runs, check_for_backend(diesel::pg::Pg))]
struct RunRow {
    id: Uuid,
    organization_id: Uuid,
    workflow_id: Uuid,
    status: String,
    payload: Value,
    triggered_by_id: Option<Uuid>,
    queued_at: OffsetDateTime,
    started_at: Option<OffsetDateTime>,
    finished_at: Option<OffsetDateTime>,
    error: Option<String>,
    actions_completed: i32,
}

impl TryFrom<RunRow> for WorkflowRun {
    type Error = RepoError;

    fn try_from(r: RunRow) -> Result<Self, RepoError> {
        Ok(WorkflowRun {
            id: r.id,
            workflow_id: WorkflowId(r.workflow_id),
            status: RunStatus::from_name(&r.status)
                .ok_or_else(|| unknown_value("workflow_runs.status", &r.status))?,
            payload: r.payload,
            triggered_by: r.triggered_by_id.map(UserId),
            queued_at: r.queued_at,
            started_at: r.started_at,
            finished_at: r.finished_at,
            error: r.error,
            actions_completed: u32::try_from(r.actions_completed).map_err(|_| {
                unknown_value("workflow_runs.actions_completed", r.actions_completed)
            })?,
        })
    }
}

fn count_sql(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn actions_json(actions: &[Action]) -> Result<Value, RepoError> {
    serde_json::to_value(actions).map_err(|e| RepoError::Other(format!("workflow actions: {e}")))
}

/// Postgres implementation of [`WorkflowRepository`].
#[derive(Clone)]
pub struct PgWorkflowRepository {
    db: Database,
}

impl PgWorkflowRepository {
    pub fn new(db: Database) -> Self {
        PgWorkflowRepository { db }
    }
}

#[async_trait]
impl WorkflowRepository for PgWorkflowRepository {
    async fn create_workflow(&self, org: OrgId, w: &Workflow) -> Result<Workflow, RepoError> {
        let actions = actions_json(&w.actions)?;
        let mut conn = self.db.conn().await?;
        let row: WorkflowRow = diesel::insert_into(workflows::table)
            .values((
                workflows::id.eq(w.id.0),
                workflows::organization_id.eq(org.0),
                workflows::name.eq(&w.name),
                workflows::description.eq(&w.description),
                workflows::trigger_type.eq(w.trigger.as_str()),
                workflows::actions.eq(actions),
                workflows::active.eq(w.active),
                workflows::frozen.eq(w.frozen),
                workflows::created_by_id.eq(w.created_by.map(|u| u.0)),
                workflows::created_at.eq(w.created_at),
                workflows::updated_at.eq(w.updated_at),
            ))
            .returning(WorkflowRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(|e| unknown_organization(db_error(e)))?;
        row.try_into()
    }

    async fn get_workflow(&self, org: OrgId, id: WorkflowId) -> Result<Workflow, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: WorkflowRow = workflows::table
            .filter(workflows::organization_id.eq(org.0))
            .filter(workflows::id.eq(id.0))
            .select(WorkflowRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn update_workflow(&self, org: OrgId, w: &Workflow) -> Result<Workflow, RepoError> {
        let actions = actions_json(&w.actions)?;
        let mut conn = self.db.conn().await?;
        let row: WorkflowRow = diesel::update(
            workflows::table
                .filter(workflows::organization_id.eq(org.0))
                .filter(workflows::id.eq(w.id.0)),
        )
        .set((
            workflows::name.eq(&w.name),
            workflows::description.eq(&w.description),
            workflows::trigger_type.eq(w.trigger.as_str()),
            workflows::actions.eq(actions),
            workflows::active.eq(w.active),
            workflows::updated_at.eq(w.updated_at),
        ))
        .returning(WorkflowRow::as_returning())
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        row.try_into()
    }

    async fn delete_workflow(&self, org: OrgId, id: WorkflowId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let deleted = conn
            .transaction(async |conn| {
                let n = diesel::delete(
                    workflows::table
                        .filter(workflows::organization_id.eq(org.0))
                        .filter(workflows::id.eq(id.0)),
                )
                .execute(conn)
                .await?;
                if n > 0 {
                    diesel::delete(
                        entity_labels::table
                            .filter(entity_labels::organization_id.eq(org.0))
                            .filter(entity_labels::entity_type.eq(ENTITY_TYPE))
                            .filter(entity_labels::entity_id.eq(id.0)),
                    )
                    .execute(conn)
                    .await?;
                    diesel::delete(
                        featured_entities::table
                            .filter(featured_entities::organization_id.eq(org.0))
                            .filter(featured_entities::entity_type.eq(ENTITY_TYPE))
                            .filter(featured_entities::entity_id.eq(id.0)),
                    )
                    .execute(conn)
                    .await?;
                }
                Ok::<_, diesel::result::Error>(n)
            })
            .await
            .map_err(db_error)?;
        if deleted == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn list_workflows(
        &self,
        org: OrgId,
        selection: &WorkflowSelection,
        page: PageRequest,
    ) -> Result<Page<Workflow>, RepoError> {
        let search = selection.search.as_deref().map(like_pattern);
        let from = selection
            .created_from
            .map(|d| d.with_time(Time::MIDNIGHT).assume_utc());
        let before = selection
            .created_until
            .and_then(|d| d.next_day())
            .map(|d| d.with_time(Time::MIDNIGHT).assume_utc());
        let labels = selection.labels.clone();
        let featured_by = selection.featured_by;
        let mut conn = self.db.conn().await?;
        let filtered = move || {
            let mut q = workflows::table
                .filter(workflows::organization_id.eq(org.0))
                .into_boxed();
            if let Some(p) = &search {
                q = q.filter(
                    workflows::name
                        .ilike(p.clone())
                        .or(workflows::description.ilike(p.clone())),
                );
            }
            if let Some(from) = from {
                q = q.filter(workflows::created_at.ge(from));
            }
            if let Some(before) = before {
                q = q.filter(workflows::created_at.lt(before));
            }
            if !labels.is_empty() {
                q = q.filter(
                    workflows::id.eq_any(
                        entity_labels::table
                            .filter(entity_labels::organization_id.eq(org.0))
                            .filter(entity_labels::entity_type.eq(ENTITY_TYPE))
                            .filter(entity_labels::label_id.eq_any(labels.clone()))
                            .select(entity_labels::entity_id),
                    ),
                );
            }
            if let Some(u) = featured_by {
                q = q.filter(
                    workflows::id.eq_any(
                        featured_entities::table
                            .filter(featured_entities::user_id.eq(u.0))
                            .filter(featured_entities::entity_type.eq(ENTITY_TYPE))
                            .select(featured_entities::entity_id),
                    ),
                );
            }
            q
        };
        load_page::<WorkflowRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((lower(workflows::name), workflows::id))
                .select(WorkflowRow::as_select())
        })
        .await
    }

    async fn queue_run(
        &self,
        org: OrgId,
        run: &WorkflowRun,
        job: &NewJob,
    ) -> Result<(), RepoError> {
        let row = RunRow {
            id: run.id,
            organization_id: org.0,
            workflow_id: run.workflow_id.0,
            status: run.status.as_str().to_owned(),
            payload: run.payload.clone(),
            triggered_by_id: run.triggered_by.map(|u| u.0),
            queued_at: run.queued_at,
            started_at: run.started_at,
            finished_at: run.finished_at,
            error: run.error.clone(),
            actions_completed: count_sql(run.actions_completed),
        };
        let mut conn = self.db.conn().await?;
        let counted = conn
            .transaction(async |conn| {
                // Counts the run, and proves the workflow is the organization's.
                let n = diesel::update(
                    workflows::table
                        .filter(workflows::organization_id.eq(org.0))
                        .filter(workflows::id.eq(run.workflow_id.0)),
                )
                .set((
                    workflows::total_runs.eq(workflows::total_runs + 1),
                    workflows::last_run_at.eq(run.queued_at),
                ))
                .execute(conn)
                .await?;
                if n == 0 {
                    return Ok(0);
                }
                diesel::insert_into(workflow_runs::table)
                    .values(&row)
                    .execute(conn)
                    .await?;
                jobs::enqueue(conn, std::slice::from_ref(job)).await?;
                Ok::<_, diesel::result::Error>(n)
            })
            .await
            .map_err(db_error)?;
        if counted == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn list_runs(
        &self,
        org: OrgId,
        workflow: WorkflowId,
        page: PageRequest,
    ) -> Result<Page<WorkflowRun>, RepoError> {
        let mut conn = self.db.conn().await?;
        let exists: i64 = workflows::table
            .filter(workflows::organization_id.eq(org.0))
            .filter(workflows::id.eq(workflow.0))
            .count()
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        if exists == 0 {
            return Err(RepoError::NotFound);
        }
        let filtered = move || {
            workflow_runs::table
                .filter(workflow_runs::organization_id.eq(org.0))
                .filter(workflow_runs::workflow_id.eq(workflow.0))
                .into_boxed()
        };
        load_page::<RunRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((workflow_runs::queued_at.desc(), workflow_runs::id.desc()))
                .select(RunRow::as_select())
        })
        .await
    }

    async fn run_work(&self, org: OrgId, run: Uuid) -> Result<(Workflow, WorkflowRun), RepoError> {
        let mut conn = self.db.conn().await?;
        let (w, r): (WorkflowRow, RunRow) = workflow_runs::table
            .inner_join(workflows::table.on(workflows::id.eq(workflow_runs::workflow_id)))
            .filter(workflow_runs::organization_id.eq(org.0))
            .filter(workflow_runs::id.eq(run))
            .select((WorkflowRow::as_select(), RunRow::as_select()))
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        Ok((Workflow::try_from(w)?, WorkflowRun::try_from(r)?))
    }

    async fn start_run(&self, org: OrgId, run: Uuid, at: OffsetDateTime) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::update(
            workflow_runs::table
                .filter(workflow_runs::organization_id.eq(org.0))
                .filter(workflow_runs::id.eq(run)),
        )
        .set((
            workflow_runs::status.eq(RunStatus::Running.as_str()),
            workflow_runs::started_at.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>,
            >("coalesce(started_at, ")
            .bind::<diesel::sql_types::Timestamptz, _>(at)
            .sql(")")),
        ))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if n == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn record_progress(
        &self,
        org: OrgId,
        run: Uuid,
        completed: u32,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::update(
            workflow_runs::table
                .filter(workflow_runs::organization_id.eq(org.0))
                .filter(workflow_runs::id.eq(run)),
        )
        .set(workflow_runs::actions_completed.eq(count_sql(completed)))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if n == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn finish_run(
        &self,
        org: OrgId,
        run: Uuid,
        end: &RunEnd,
        event: &Event,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let n = conn
            .transaction(async |conn| {
                let n = diesel::update(
                    workflow_runs::table
                        .filter(workflow_runs::organization_id.eq(org.0))
                        .filter(workflow_runs::id.eq(run)),
                )
                .set((
                    workflow_runs::status.eq(end.status.as_str()),
                    workflow_runs::finished_at.eq(end.finished_at),
                    workflow_runs::error.eq(end.error.as_deref()),
                    workflow_runs::actions_completed.eq(count_sql(end.actions_completed)),
                ))
                .execute(conn)
                .await?;
                if n > 0 {
                    outbox::record(conn, std::slice::from_ref(event)).await?;
                }
                Ok::<_, diesel::result::Error>(n)
            })
            .await
            .map_err(db_error)?;
        if n == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }
}
