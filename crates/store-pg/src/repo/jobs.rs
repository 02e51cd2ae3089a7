//! The durable job queue: jobs are inserted by the repository that writes their change, inside
//! its transaction ([`enqueue`]), and claimed by workers through [`PgJobQueue`].

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Int4, Int8, Jsonb, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use teamcomm_kernel::jobs::{
    ClaimedJob, JOB_LEASE, JobKind, JobQueue, JobRecord, JobState, LEASE_EXPIRED, NewJob,
};
use teamcomm_kernel::{OrgId, RepoError};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::prepared::Prepared;
use crate::Database;
use crate::error::db_error;
use crate::rows::unknown_value;
use crate::schema::jobs::jobs;

/// Inserts `new_jobs` as `queued` on `conn`; call it inside the transaction of the change they
/// belong to (or write them in the change's own statement with [`JobColumns`]).
pub(crate) async fn enqueue(conn: &mut AsyncPgConnection, new_jobs: &[NewJob]) -> QueryResult<()> {
    if new_jobs.is_empty() {
        return Ok(());
    }
    InsertJobs(JobColumns::of(new_jobs)).execute(conn).await?;
    Ok(())
}

/// New jobs as one array per column: a statement that binds them has the same text however
/// many jobs there are, so diesel prepares it once per connection (a multi-row `VALUES` is
/// parsed and planned by Postgres on every call).
pub(crate) struct JobColumns<'a> {
    ids: Vec<Uuid>,
    orgs: Vec<Uuid>,
    kinds: Vec<&'a str>,
    payloads: Vec<&'a Value>,
    max_attempts: Vec<i32>,
    run_at: Vec<OffsetDateTime>,
}

impl<'a> JobColumns<'a> {
    pub(crate) fn of(new_jobs: &'a [NewJob]) -> Self {
        JobColumns {
            ids: new_jobs.iter().map(|j| j.id).collect(),
            orgs: new_jobs.iter().map(|j| j.org_id.0).collect(),
            kinds: new_jobs.iter().map(|j| j.kind.as_str()).collect(),
            payloads: new_jobs.iter().map(|j| &j.payload).collect(),
            // Beyond i32::MAX attempts is unlimited all the same.
            max_attempts: new_jobs
                .iter()
                .map(|j| i32::try_from(j.max_attempts).unwrap_or(i32::MAX))
                .collect(),
            run_at: new_jobs.iter().map(|j| j.run_at).collect(),
        }
    }

    /// `INSERT INTO jobs ... SELECT ... FROM unnest(<the arrays>)`, to stand alone or as a
    /// data-modifying CTE of a larger statement.
    pub(crate) fn push_insert<'b>(
        &'b self,
        out: &mut diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        out.push_sql(
            "INSERT INTO jobs (id, organization_id, kind, payload, max_attempts, run_at) \
             SELECT * FROM unnest(",
        );
        out.push_bind_param::<Array<SqlUuid>, _>(&self.ids)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<SqlUuid>, _>(&self.orgs)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Text>, _>(&self.kinds)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Jsonb>, _>(&self.payloads)?;
        out.push_sql("::jsonb[], ");
        out.push_bind_param::<Array<Int4>, _>(&self.max_attempts)?;
        out.push_sql("::integer[], ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.run_at)?;
        out.push_sql("::timestamptz[])");
        Ok(())
    }
}

/// [`JobColumns`] on their own.
struct InsertJobs<'a>(JobColumns<'a>);

impl diesel::query_builder::QueryId for InsertJobs<'_> {
    type QueryId = InsertJobs<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for InsertJobs<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        self.0.push_insert(&mut out)
    }
}
/// Claims in one statement. `exhausted` ends `failed` the jobs whose last attempt's lease
/// expired (read through `jobs_lease_idx`: only what workers hold); `due` picks the due ones
/// (queued and due, or running past a lease with attempts left). A running job's `run_at` is at
/// most the `now` it was claimed at, before its lease's end, so `run_at <= now` holds for every
/// due job and bounds the scan of `jobs_due_idx` (jobs scheduled later are never read). Both
/// lock their rows with `FOR UPDATE SKIP LOCKED`, so concurrent claimers never wait on each
/// other nor take the same row; a row another claimer committed meanwhile is re-checked against
/// the condition by Postgres and dropped. `due` is `MATERIALIZED` so it runs exactly once (a
/// subquery under `IN` may be rescanned by a nested-loop plan and lock other rows).
const CLAIM: &str = "\
WITH exhausted AS (
    UPDATE jobs
       SET state = 'failed', last_error = $5, lease_until = NULL, finished_at = $2, updated_at = $2
     WHERE id IN (SELECT id FROM jobs
                   WHERE kind = ANY($1) AND state = 'running' AND lease_until <= $2
                     AND attempt >= max_attempts
                     FOR UPDATE SKIP LOCKED)
), due AS MATERIALIZED (
    SELECT id FROM jobs
     WHERE kind = ANY($1) AND run_at <= $2
       AND (state = 'queued'
            OR (state = 'running' AND lease_until <= $2 AND attempt < max_attempts))
     ORDER BY run_at, id
     LIMIT $4
       FOR UPDATE SKIP LOCKED
)
UPDATE jobs
   SET state = 'running', attempt = attempt + 1, lease_until = $3, updated_at = $2
  FROM due
 WHERE jobs.id = due.id
RETURNING jobs.id, jobs.organization_id, jobs.kind, jobs.payload, jobs.attempt,
          jobs.max_attempts, jobs.run_at, jobs.lease_until";

/// Retry, fenced: requeued at `$3`, or `failed` when that was the last attempt (the queue
/// enforces `max_attempts`, see [`JobQueue`]).
const RETRY: &str = "\
UPDATE jobs
   SET state = CASE WHEN attempt >= max_attempts THEN 'failed' ELSE 'queued' END,
       run_at = CASE WHEN attempt >= max_attempts THEN run_at ELSE $3 END,
       finished_at = CASE WHEN attempt >= max_attempts THEN now() END,
       lease_until = NULL, last_error = $4, updated_at = now()
 WHERE id = $1 AND attempt = $2 AND state = 'running'";

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    organization_id: Uuid,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Jsonb)]
    payload: Value,
    #[diesel(sql_type = Int4)]
    attempt: i32,
    #[diesel(sql_type = Int4)]
    max_attempts: i32,
    /// Orders the claimed jobs (`RETURNING` keeps no order).
    #[diesel(sql_type = Timestamptz)]
    run_at: OffsetDateTime,
    #[diesel(sql_type = Timestamptz)]
    lease_until: OffsetDateTime,
}

impl TryFrom<ClaimedRow> for ClaimedJob {
    type Error = RepoError;
    fn try_from(r: ClaimedRow) -> Result<Self, RepoError> {
        Ok(ClaimedJob {
            id: r.id,
            org_id: OrgId(r.organization_id),
            kind: kind_from(&r.kind)?,
            payload: r.payload,
            attempt: attempts_from("jobs.attempt", r.attempt)?,
            max_attempts: attempts_from("jobs.max_attempts", r.max_attempts)?,
            lease_until: r.lease_until,
        })
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = jobs, check_for_backend(diesel::pg::Pg))]
struct JobRow {
    id: Uuid,
    organization_id: Uuid,
    kind: String,
    payload: Value,
    state: String,
    attempt: i32,
    max_attempts: i32,
    run_at: OffsetDateTime,
    lease_until: Option<OffsetDateTime>,
    last_error: Option<String>,
    finished_at: Option<OffsetDateTime>,
}

impl TryFrom<JobRow> for JobRecord {
    type Error = RepoError;
    fn try_from(r: JobRow) -> Result<Self, RepoError> {
        Ok(JobRecord {
            id: r.id,
            org_id: OrgId(r.organization_id),
            kind: kind_from(&r.kind)?,
            payload: r.payload,
            state: JobState::parse(&r.state)
                .ok_or_else(|| unknown_value("jobs.state", &r.state))?,
            attempt: attempts_from("jobs.attempt", r.attempt)?,
            max_attempts: attempts_from("jobs.max_attempts", r.max_attempts)?,
            run_at: r.run_at,
            lease_until: r.lease_until,
            last_error: r.last_error,
            finished_at: r.finished_at,
        })
    }
}

fn kind_from(kind: &str) -> Result<JobKind, RepoError> {
    JobKind::parse(kind).ok_or_else(|| unknown_value("jobs.kind", kind))
}

fn attempts_from(column: &str, n: i32) -> Result<u32, RepoError> {
    u32::try_from(n).map_err(|_| unknown_value(column, n))
}

/// The claimed attempt as the table stores it (claims count up from 0, so it fits).
fn stored_attempt(job: &ClaimedJob) -> i32 {
    i32::try_from(job.attempt).unwrap_or(i32::MAX)
}

/// No row matched the fence: the caller no longer holds the job.
fn fenced(updated: usize) -> Result<(), RepoError> {
    if updated == 0 {
        return Err(RepoError::Conflict {
            constraint: JOB_LEASE.into(),
        });
    }
    Ok(())
}

/// The unfinished jobs of one kind (see [`PgJobQueue::backlog`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backlog {
    pub kind: String,
    /// Queued and running jobs.
    pub depth: i64,
    /// The earliest `run_at` among them: how long the oldest has been due, when in the past.
    pub oldest_run_at: Option<OffsetDateTime>,
}

/// Postgres implementation of [`JobQueue`], plus enqueueing for callers with no change of
/// their own and a job's state for tests and operators.
#[derive(Clone)]
pub struct PgJobQueue {
    db: Database,
}

impl PgJobQueue {
    pub fn new(db: Database) -> Self {
        PgJobQueue { db }
    }

    /// Inserts `new_jobs` as `queued` in one statement (all or none).
    pub async fn enqueue(&self, new_jobs: &[NewJob]) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        enqueue(&mut conn, new_jobs).await.map_err(db_error)
    }

    /// The unfinished jobs of each kind that has some: how many, and the earliest `run_at`
    /// among them (for the operator's metrics; read through `jobs_due_idx`'s predicate).
    pub async fn backlog(&self) -> Result<Vec<Backlog>, RepoError> {
        use diesel::dsl::{count_star, min};
        let mut conn = self.db.conn().await?;
        let rows: Vec<(String, i64, Option<OffsetDateTime>)> = jobs::table
            .filter(jobs::state.eq_any([JobState::Queued.as_str(), JobState::Running.as_str()]))
            .group_by(jobs::kind)
            .select((jobs::kind, count_star(), min(jobs::run_at)))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows
            .into_iter()
            .map(|(kind, depth, oldest_run_at)| Backlog {
                kind,
                depth,
                oldest_run_at,
            })
            .collect())
    }

    /// Where the job stands, if it exists.
    pub async fn job(&self, id: Uuid) -> Result<Option<JobRecord>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<JobRow> = jobs::table
            .find(id)
            .select(JobRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        row.map(JobRecord::try_from).transpose()
    }

    /// Ends the fenced job in `state` at `now`, keeping `error` if given.
    async fn finish(
        &self,
        job: &ClaimedJob,
        state: JobState,
        now: OffsetDateTime,
        error: Option<&str>,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let held = jobs::table
            .filter(jobs::id.eq(job.id))
            .filter(jobs::attempt.eq(stored_attempt(job)))
            .filter(jobs::state.eq(JobState::Running.as_str()));
        let updated = diesel::update(held)
            .set((
                jobs::state.eq(state.as_str()),
                jobs::lease_until.eq(None::<OffsetDateTime>),
                jobs::finished_at.eq(now),
                jobs::updated_at.eq(now),
                // `None` leaves the column as it is (the last retry's error stays).
                error.map(|error| jobs::last_error.eq(error)),
            ))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        fenced(updated)
    }
}

#[async_trait]
impl JobQueue for PgJobQueue {
    async fn claim(
        &self,
        kinds: &[JobKind],
        limit: usize,
        now: OffsetDateTime,
        lease: Duration,
    ) -> Result<Vec<ClaimedJob>, RepoError> {
        if kinds.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        let mut rows: Vec<ClaimedRow> = Prepared(
            diesel::sql_query(CLAIM)
                .bind::<Array<Text>, _>(kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>())
                .bind::<Timestamptz, _>(now)
                .bind::<Timestamptz, _>(now + lease)
                .bind::<Int8, _>(i64::try_from(limit).unwrap_or(i64::MAX))
                .bind::<Text, _>(LEASE_EXPIRED),
        )
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        rows.sort_by_key(|r| (r.run_at, r.id));
        rows.into_iter().map(ClaimedJob::try_from).collect()
    }

    async fn complete(&self, job: &ClaimedJob, now: OffsetDateTime) -> Result<(), RepoError> {
        self.finish(job, JobState::Done, now, None).await
    }

    async fn retry(
        &self,
        job: &ClaimedJob,
        run_at: OffsetDateTime,
        error: &str,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let updated = Prepared(
            diesel::sql_query(RETRY)
                .bind::<SqlUuid, _>(job.id)
                .bind::<Int4, _>(stored_attempt(job))
                .bind::<Timestamptz, _>(run_at)
                .bind::<Text, _>(error),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        fenced(updated)
    }

    async fn fail(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
        error: &str,
    ) -> Result<(), RepoError> {
        self.finish(job, JobState::Failed, now, Some(error)).await
    }

    async fn prune_finished(
        &self,
        before: OffsetDateTime,
        limit: usize,
    ) -> Result<usize, RepoError> {
        let mut conn = self.db.conn().await?;
        // Through `jobs_finished_idx`; `finished_at < before` implies the index's predicate.
        // Two statements (diesel cannot delete from a table filtered by a subquery of itself);
        // the delete checks again that each job is still finished before `before`.
        let oldest: Vec<Uuid> = jobs::table
            .filter(jobs::finished_at.lt(before))
            .order_by(jobs::finished_at)
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .select(jobs::id)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        if oldest.is_empty() {
            return Ok(0);
        }
        diesel::delete(
            jobs::table
                .filter(jobs::id.eq_any(&oldest))
                .filter(jobs::finished_at.lt(before)),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)
    }
}
