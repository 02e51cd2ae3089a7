//! SQL of the Plan area's tasks, their event log and the delta feed.
//!
//! Every task write stamps `updated_at` with `clock_timestamp()` read once the write holds its
//! locks, just before its last statements, inside a short transaction (a create is one
//! statement): the delta feed (`teamcomm_plan::delta`) reads it. The live tasks of each column
//! are counted by triggers on `plan_tasks` (`plan_column_task_counts`, migration
//! `2026-11-28-000000_plan_task_counts`): a board's list and the column limit read those counts.

use std::marker::PhantomData;

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, BoxedSqlQuery, Query, QueryFragment, QueryId, SqlQuery};
use diesel::sql_types::{
    Array, BigInt, Bool, Date, Int2, Int4, Jsonb, Nullable, SqlType, Text, Timestamptz,
    Uuid as SqlUuid,
};
use diesel::{QueryResult, Queryable, QueryableByName};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_plan::ports::{
    EventFilter, Involvement, ListedBoard, NewTask, NewTaskEvent, OwnerFilter, TaskEvent,
    TaskFilter, TaskRepository, TaskSort, TaskSortKey,
};
use teamcomm_plan::tasks::RANK_STEP;
use teamcomm_plan::{BoardId, StateId, Task, TaskId};
use time::OffsetDateTime;
use uuid::Uuid;

use super::super::paging::{count_from, like_pattern, limits};
use super::super::prepared::Prepared;
use crate::Database;
use crate::error::db_error;

pub struct PgTasks {
    db: Database,
}

impl PgTasks {
    pub fn new(db: Database) -> Self {
        PgTasks { db }
    }

    /// The organization's tasks whose `column` is one of `ids`, then `tail` (more conditions,
    /// the order); one statement. `column` and `tail` are fixed texts of the callers.
    async fn tasks_with_any(
        &self,
        org: OrgId,
        column: &'static str,
        ids: &[TaskId],
        tail: &'static str,
    ) -> Result<Vec<Task>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<TaskRow> = Sql::new(&format!(
            "SELECT {TASK_COLUMNS} FROM plan_tasks t JOIN plan_boards b ON b.id = t.board_id \
             WHERE {column} = ANY("
        ))
        .bind::<Array<SqlUuid>, _>(ids.iter().map(|t| t.0).collect::<Vec<_>>())
        .push(") AND t.organization_id = ")
        .bind::<SqlUuid, _>(org.0)
        .push(tail)
        .rows::<TaskSql>()
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(rows.into_iter().map(task).collect())
    }
}

/// A statement built piece by piece, numbering its placeholders. Every value is bound, never
/// spliced into the text (but a page's size, a number: `page_statement`), so a statement's
/// text is one of a fixed set of shapes.
struct Sql {
    query: Prepared<BoxedSqlQuery<'static, Pg, SqlQuery>>,
    binds: usize,
}

impl Sql {
    fn new(text: &str) -> Sql {
        Sql {
            query: Prepared(diesel::sql_query("").into_boxed().sql(text)),
            binds: 0,
        }
    }

    fn push(mut self, text: &str) -> Sql {
        self.query.0 = self.query.0.sql(text);
        self
    }

    fn bind<ST, V>(mut self, value: V) -> Sql
    where
        Pg: diesel::sql_types::HasSqlType<ST>,
        V: diesel::serialize::ToSql<ST, Pg> + Send + 'static,
        ST: Send + 'static,
    {
        self.binds += 1;
        self.query.0 = self
            .query
            .0
            .sql(format!("${}", self.binds))
            .bind::<ST, V>(value);
        self
    }
}

impl Sql {
    /// The statement, its rows read by position as `ST` (a tuple of SQL types in its select
    /// list's order). diesel reads a `QueryableByName` row by name, scanning the row's columns
    /// for each field: about 7% of a page of tasks' server CPU, measured.
    fn rows<ST>(self) -> Typed<Prepared<BoxedSqlQuery<'static, Pg, SqlQuery>>, ST> {
        Typed(self.query, PhantomData)
    }
}

/// A statement whose rows are `ST` ([`Sql::rows`]).
struct Typed<Q, ST>(Q, PhantomData<fn() -> ST>);

impl<Q: QueryFragment<Pg>, ST> QueryFragment<Pg> for Typed<Q, ST> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, backend: &Pg) -> QueryResult<bool> {
        self.0.is_safe_to_cache_prepared(backend)
    }
}

impl<Q, ST> QueryId for Typed<Q, ST> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q, ST: SqlType + 'static> Query for Typed<Q, ST> {
    type SqlType = ST;
}

/// The fields of a task that its writer states, in the order [`Sql::bind_content`] binds them:
/// a create inserts them, a save sets them.
const CONTENT_COLUMNS: &str =
    "parent_id, title, description, owner_id, priority, estimate, start_date, due_date";

/// The values of [`CONTENT_COLUMNS`], of a new task or a saved one.
struct Content<'a> {
    parent: Option<TaskId>,
    title: &'a str,
    description: &'a str,
    owner: Option<UserId>,
    priority: Option<i16>,
    estimate: Option<i32>,
    start_date: Option<time::Date>,
    due_date: Option<time::Date>,
}

impl<'a> From<&'a NewTask> for Content<'a> {
    fn from(t: &'a NewTask) -> Self {
        Content {
            parent: t.parent_id,
            title: &t.title,
            description: &t.description,
            owner: t.owner,
            priority: t.priority,
            estimate: t.estimate,
            start_date: t.start_date,
            due_date: t.due_date,
        }
    }
}

impl<'a> From<&'a Task> for Content<'a> {
    fn from(t: &'a Task) -> Self {
        Content {
            parent: t.parent_id,
            title: &t.title,
            description: &t.description,
            owner: t.owner,
            priority: t.priority,
            estimate: t.estimate,
            start_date: t.start_date,
            due_date: t.due_date,
        }
    }
}

impl Sql {
    /// The values of [`CONTENT_COLUMNS`], bound in its order, comma-separated.
    fn bind_content(self, c: Content<'_>) -> Sql {
        self.bind::<Nullable<SqlUuid>, _>(c.parent.map(|p| p.0))
            .push(", ")
            .bind::<Text, _>(c.title.to_owned())
            .push(", ")
            .bind::<Text, _>(c.description.to_owned())
            .push(", ")
            .bind::<Nullable<SqlUuid>, _>(c.owner.map(|u| u.0))
            .push(", ")
            .bind::<Nullable<Int2>, _>(c.priority)
            .push(", ")
            .bind::<Nullable<Int4>, _>(c.estimate)
            .push(", ")
            .bind::<Nullable<Date>, _>(c.start_date)
            .push(", ")
            .bind::<Nullable<Date>, _>(c.due_date)
    }
}

/// The columns of a task that a list of live tasks reads (`t` is `plan_tasks`), in the order
/// of [`LiveRow`]'s fields; [`TASK_COLUMNS`] adds its board's key and the ones a list knows
/// already (a list's boards come with their keys: `ListedBoard`). Rows are read by position
/// ([`Sql::rows`]).
macro_rules! live_columns {
    () => {
        "t.id, t.board_id, t.number, t.state_id, t.parent_id, t.title, t.description, \
         t.owner_id, t.priority, t.estimate, t.start_date, t.due_date, t.milestone_id, t.rank, \
         t.version, t.completed_at, t.created_by_id, t.created_by_agent, t.created_at, \
         t.updated_at"
    };
}

/// Every column of a task: its board's current key (`b` is its board), [`live_columns`], then
/// its organization and archive fields in the order of [`Standing`]'s.
const TASK_COLUMNS: &str = concat!(
    "b.key AS board_key, ",
    live_columns!(),
    ", t.organization_id, t.is_archived, t.archived_at, t.archived_with_board"
);

/// The SQL types of [`live_columns`], in its order.
type LiveSql = (
    SqlUuid,
    SqlUuid,
    BigInt,
    SqlUuid,
    Nullable<SqlUuid>,
    Text,
    Text,
    Nullable<SqlUuid>,
    Nullable<Int2>,
    Nullable<Int4>,
    Nullable<Date>,
    Nullable<Date>,
    Nullable<SqlUuid>,
    BigInt,
    BigInt,
    Nullable<Timestamptz>,
    Nullable<SqlUuid>,
    Nullable<Text>,
    Timestamptz,
    Timestamptz,
);

/// The SQL types of [`TASK_COLUMNS`].
type TaskSql = (Text, LiveSql, (SqlUuid, Bool, Nullable<Timestamptz>, Bool));

/// The values of [`live_columns`] (field order is column order).
#[derive(Debug, Queryable)]
struct LiveRow {
    id: Uuid,
    board_id: Uuid,
    number: i64,
    state_id: Uuid,
    parent_id: Option<Uuid>,
    title: String,
    description: String,
    owner_id: Option<Uuid>,
    priority: Option<i16>,
    estimate: Option<i32>,
    start_date: Option<time::Date>,
    due_date: Option<time::Date>,
    milestone_id: Option<Uuid>,
    rank: i64,
    version: i64,
    completed_at: Option<OffsetDateTime>,
    created_by_id: Option<Uuid>,
    created_by_agent: Option<String>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

/// A task's organization and archive fields (the rest of [`TASK_COLUMNS`], in order).
#[derive(Debug, Queryable)]
struct Standing {
    organization_id: Uuid,
    is_archived: bool,
    archived_at: Option<OffsetDateTime>,
    archived_with_board: bool,
}

impl Standing {
    /// A live task's: never archived since its last restore (`plan_tasks_live_unstamped`).
    fn live(org: OrgId) -> Standing {
        Standing {
            organization_id: org.0,
            is_archived: false,
            archived_at: None,
            archived_with_board: false,
        }
    }
}

/// A row of [`TASK_COLUMNS`].
type TaskRow = (String, LiveRow, Standing);

fn task((board_key, r, s): TaskRow) -> Task {
    Task {
        id: TaskId(r.id),
        org_id: OrgId(s.organization_id),
        board_id: BoardId(r.board_id),
        board_key,
        number: r.number,
        state_id: StateId(r.state_id),
        parent_id: r.parent_id.map(TaskId),
        title: r.title,
        description: r.description,
        owner: r.owner_id.map(UserId),
        priority: r.priority,
        estimate: r.estimate,
        start_date: r.start_date,
        due_date: r.due_date,
        milestone_id: r.milestone_id,
        rank: r.rank,
        version: r.version,
        is_archived: s.is_archived,
        archived_at: s.archived_at,
        archived_with_board: s.archived_with_board,
        completed_at: r.completed_at,
        created_by: r.created_by_id.map(UserId),
        created_by_agent: r.created_by_agent,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

#[derive(Debug, QueryableByName)]
struct EventRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    task_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    board_id: Uuid,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    actor_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    agent_name: Option<String>,
    #[diesel(sql_type = Jsonb)]
    data: serde_json::Value,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

impl From<EventRow> for TaskEvent {
    fn from(r: EventRow) -> TaskEvent {
        TaskEvent {
            id: r.id,
            task_id: TaskId(r.task_id),
            board_id: BoardId(r.board_id),
            kind: r.kind,
            actor: r.actor_id.map(UserId),
            agent_name: r.agent_name,
            data: r.data,
            created_at: r.created_at,
        }
    }
}

#[derive(QueryableByName)]
struct One<T: diesel::deserialize::FromSqlRow<BigInt, Pg> + 'static> {
    #[diesel(sql_type = BigInt)]
    value: T,
}

#[derive(QueryableByName)]
struct Stamp {
    #[diesel(sql_type = Timestamptz)]
    at: OffsetDateTime,
}

#[derive(QueryableByName)]
struct Numbered {
    #[diesel(sql_type = BigInt)]
    number: i64,
}

#[derive(QueryableByName)]
struct Ranked {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = BigInt)]
    rank: i64,
}

#[derive(QueryableByName)]
struct StateCount {
    #[diesel(sql_type = SqlUuid)]
    state_id: Uuid,
    #[diesel(sql_type = BigInt)]
    tasks: i64,
}

fn version_moved() -> RepoError {
    RepoError::Conflict {
        constraint: "version".into(),
    }
}

async fn load_task(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    id: TaskId,
) -> Result<Task, diesel::result::Error> {
    let row: TaskRow = Sql::new(&format!(
        "SELECT {TASK_COLUMNS} FROM plan_tasks t JOIN plan_boards b ON b.id = t.board_id \
         WHERE t.id = "
    ))
    .bind::<SqlUuid, _>(id.0)
    .push(" AND t.organization_id = ")
    .bind::<SqlUuid, _>(org.0)
    .rows::<TaskSql>()
    .get_result(conn)
    .await?;
    Ok(task(row))
}

/// The statement clock, read just before a write's last statements.
async fn stamp(conn: &mut AsyncPgConnection) -> Result<OffsetDateTime, diesel::result::Error> {
    let s: Stamp = Sql::new("SELECT clock_timestamp() AS at")
        .query
        .get_result(conn)
        .await?;
    Ok(s.at)
}

/// The one number a `SELECT … AS value` answers.
async fn total(sql: Sql, conn: &mut AsyncPgConnection) -> Result<i64, RepoError> {
    let n: One<i64> = sql.query.get_result(conn).await.map_err(db_error)?;
    Ok(n.value)
}

/// Takes the board's next task number under its row lock (held until the transaction ends).
async fn take_number(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    board: BoardId,
) -> Result<i64, diesel::result::Error> {
    let n: Numbered =
        Sql::new("UPDATE plan_boards SET next_task_number = next_task_number + 1 WHERE id = ")
            .bind::<SqlUuid, _>(board.0)
            .push(" AND organization_id = ")
            .bind::<SqlUuid, _>(org.0)
            .push(" RETURNING next_task_number - 1 AS number")
            .query
            .get_result(conn)
            .await?;
    Ok(n.number)
}

/// The rank after the last live task of the column but `except` (`plan_column_end`, the
/// migration `2026-11-28-000000_plan_task_counts`: the rule the create statement uses too).
async fn end_of_column(
    conn: &mut AsyncPgConnection,
    board: BoardId,
    state: StateId,
    except: TaskId,
) -> Result<i64, diesel::result::Error> {
    let r: One<i64> = Sql::new("SELECT plan_column_end(")
        .bind::<SqlUuid, _>(board.0)
        .push(", ")
        .bind::<SqlUuid, _>(state.0)
        .push(", ")
        .bind::<SqlUuid, _>(except.0)
        .push(", ")
        .bind::<BigInt, _>(RANK_STEP)
        .push(") AS value")
        .query
        .get_result(conn)
        .await?;
    Ok(r.value)
}

async fn insert_event(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    board: BoardId,
    task: TaskId,
    event: &NewTaskEvent,
    at: OffsetDateTime,
) -> Result<(), diesel::result::Error> {
    Sql::new(
        "INSERT INTO plan_task_events \
         (id, organization_id, board_id, task_id, type, actor_id, agent_name, data, created_at) \
         VALUES (",
    )
    .bind::<SqlUuid, _>(Uuid::now_v7())
    .push(", ")
    .bind::<SqlUuid, _>(org.0)
    .push(", ")
    .bind::<SqlUuid, _>(board.0)
    .push(", ")
    .bind::<SqlUuid, _>(task.0)
    .push(", ")
    .bind::<Text, _>(event.kind.to_owned())
    .push(", ")
    .bind::<Nullable<SqlUuid>, _>(event.by.user.map(|u| u.0))
    .push(", ")
    .bind::<Nullable<Text>, _>(event.by.agent.clone())
    .push(", ")
    .bind::<Jsonb, _>(event.data.clone())
    .push(", ")
    .bind::<Timestamptz, _>(at)
    .push(")")
    .query
    .execute(conn)
    .await?;
    Ok(())
}

/// `UPDATE plan_tasks SET <every mutable field>` of `task`, version-guarded; binds `number`
/// and `board_id` too (a board move changes them).
async fn write_task(
    conn: &mut AsyncPgConnection,
    task: &Task,
    number: i64,
    rank: i64,
    at: OffsetDateTime,
) -> Result<bool, diesel::result::Error> {
    let updated = Sql::new("UPDATE plan_tasks SET board_id = ")
        .bind::<SqlUuid, _>(task.board_id.0)
        .push(", number = ")
        .bind::<BigInt, _>(number)
        .push(", state_id = ")
        .bind::<SqlUuid, _>(task.state_id.0)
        .push(&format!(", ({CONTENT_COLUMNS}) = ROW("))
        .bind_content(task.into())
        .push("), milestone_id = ")
        .bind::<Nullable<SqlUuid>, _>(task.milestone_id)
        .push(", rank = ")
        .bind::<BigInt, _>(rank)
        .push(", is_archived = ")
        .bind::<Bool, _>(task.is_archived)
        .push(", archived_at = ")
        .bind::<Nullable<Timestamptz>, _>(task.archived_at)
        .push(", archived_with_board = ")
        .bind::<Bool, _>(task.archived_with_board)
        .push(", completed_at = ")
        .bind::<Nullable<Timestamptz>, _>(task.completed_at)
        .push(", version = version + 1, updated_at = ")
        .bind::<Timestamptz, _>(at)
        .push(" WHERE id = ")
        .bind::<SqlUuid, _>(task.id.0)
        .push(" AND organization_id = ")
        .bind::<SqlUuid, _>(task.org_id.0)
        .push(" AND version = ")
        .bind::<BigInt, _>(task.version)
        .query
        .execute(conn)
        .await?;
    Ok(updated == 1)
}

/// A task given another parent: its board row is locked before the task row is, so such writes
/// (and creates, which hold that lock) run one at a time and the one-level trigger
/// (`plan_tasks_one_level`) of each sees the others'. The trigger takes the lock too, but only
/// once the update holds the task row: two writers each holding a task that the other's
/// foreign-key check must share would deadlock.
async fn lock_board_for_new_parent(
    conn: &mut AsyncPgConnection,
    task: &Task,
    parent: TaskId,
) -> Result<(), diesel::result::Error> {
    Sql::new("SELECT 1 AS value FROM plan_boards b WHERE b.id = ")
        .bind::<SqlUuid, _>(task.board_id.0)
        .push(" AND EXISTS (SELECT 1 FROM plan_tasks t WHERE t.id = ")
        .bind::<SqlUuid, _>(task.id.0)
        .push(" AND t.parent_id IS DISTINCT FROM ")
        .bind::<SqlUuid, _>(parent.0)
        .push(") FOR UPDATE OF b")
        .query
        .execute(conn)
        .await?;
    Ok(())
}

/// Why a guarded write touched no row: the task is gone, or its version moved.
async fn missed(conn: &mut AsyncPgConnection, task: &Task) -> RepoError {
    match load_task(conn, task.org_id, task.id).await {
        Ok(_) => version_moved(),
        Err(e) => db_error(e),
    }
}

#[async_trait]
impl TaskRepository for PgTasks {
    async fn create_task(&self, new: &NewTask, event: &NewTaskEvent) -> Result<Task, RepoError> {
        let mut conn = self.db.conn().await?;
        // One statement (its own transaction): the live board row's lock and its next number
        // (`taken`: KEY-n without gaps or duplicates, held until the statement commits; an
        // archived board takes none, and the create is `NotFound`), the
        // column's room, the rank after its last task and the clock read once that lock is
        // held (`placed`: `plan_column_place` sees the creates that held the lock before, so
        // racing creates cannot overfill the column, and refuses the create, number and all,
        // when the column is full; the stamp is not older than the lock wait, which the delta
        // feed's lag relies on), the task, its event; the column's kept count follows by
        // trigger.
        let row: TaskRow = Sql::new(
            "WITH taken AS (UPDATE plan_boards SET next_task_number = next_task_number + 1 \
             WHERE id = ",
        )
        .bind::<SqlUuid, _>(new.board_id.0) // $1
        .push(" AND organization_id = ")
        .bind::<SqlUuid, _>(new.org_id.0) // $2
        .push(
            " AND NOT is_archived RETURNING next_task_number - 1 AS number, key), \
             placed AS MATERIALIZED (SELECT number, key, plan_column_place($1, ",
        )
        .bind::<SqlUuid, _>(new.state_id.0) // $3
        .push(", ")
        .bind::<SqlUuid, _>(new.id.0) // $4
        .push(", ")
        .bind::<BigInt, _>(RANK_STEP)
        .push(", ")
        .bind::<BigInt, _>(i64::try_from(new.column_limit).unwrap_or(i64::MAX))
        .push(&format!(
            ") AS rank, clock_timestamp() AS at FROM taken), \
             task AS (INSERT INTO plan_tasks (id, organization_id, board_id, number, state_id, \
             {CONTENT_COLUMNS}, rank, completed_at, created_by_id, created_by_agent, created_at, \
             updated_at) SELECT $4, $2, $1, number, $3, "
        ))
        .bind_content(new.into())
        .push(", rank, ")
        .bind::<Nullable<Timestamptz>, _>(new.completed_at)
        .push(", ")
        .bind::<Nullable<SqlUuid>, _>(new.created_by.map(|u| u.0))
        .push(", ")
        .bind::<Nullable<Text>, _>(new.created_by_agent.clone())
        .push(
            ", at, at FROM placed RETURNING *), \
             event AS (INSERT INTO plan_task_events (id, organization_id, board_id, task_id, \
             type, actor_id, agent_name, data, created_at) SELECT ",
        )
        .bind::<SqlUuid, _>(Uuid::now_v7())
        .push(", $2, $1, $4, ")
        .bind::<Text, _>(event.kind.to_owned())
        .push(", ")
        .bind::<Nullable<SqlUuid>, _>(event.by.user.map(|u| u.0))
        .push(", ")
        .bind::<Nullable<Text>, _>(event.by.agent.clone())
        .push(", ")
        .bind::<Jsonb, _>(event.data.clone())
        .push(&format!(
            ", created_at FROM task) SELECT {TASK_COLUMNS} FROM task t CROSS JOIN placed b"
        ))
        .rows::<TaskSql>()
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(task(row))
    }

    async fn get_task(&self, org: OrgId, id: TaskId) -> Result<Task, RepoError> {
        let mut conn = self.db.conn().await?;
        load_task(&mut conn, org, id).await.map_err(db_error)
    }

    async fn task_by_number(
        &self,
        org: OrgId,
        board: BoardId,
        number: i64,
    ) -> Result<Task, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: TaskRow = Sql::new(&format!(
            "SELECT {TASK_COLUMNS} FROM plan_tasks t JOIN plan_boards b ON b.id = t.board_id \
             WHERE t.board_id = "
        ))
        .bind::<SqlUuid, _>(board.0)
        .push(" AND t.number = ")
        .bind::<BigInt, _>(number)
        .push(" AND t.organization_id = ")
        .bind::<SqlUuid, _>(org.0)
        .rows::<TaskSql>()
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(task(row))
    }

    async fn save_task(&self, task: &Task, event: &NewTaskEvent) -> Result<Task, RepoError> {
        let mut conn = self.db.conn().await?;
        let task = task.clone();
        let event = event.clone();
        let saved = conn
            .transaction(async |conn| {
                if let Some(parent) = task.parent_id {
                    lock_board_for_new_parent(conn, &task, parent).await?;
                }
                let at = stamp(conn).await?;
                // The board and number stay: `number` is re-bound to its stored value.
                let stored: Numbered = Sql::new("SELECT number FROM plan_tasks WHERE id = ")
                    .bind::<SqlUuid, _>(task.id.0)
                    .push(" AND organization_id = ")
                    .bind::<SqlUuid, _>(task.org_id.0)
                    .push(" AND board_id = ")
                    .bind::<SqlUuid, _>(task.board_id.0)
                    .query
                    .get_result(conn)
                    .await?;
                if !write_task(conn, &task, stored.number, task.rank, at).await? {
                    return Ok(None);
                }
                insert_event(conn, task.org_id, task.board_id, task.id, &event, at).await?;
                load_task(conn, task.org_id, task.id).await.map(Some)
            })
            .await
            .map_err(db_error)?;
        match saved {
            Some(t) => Ok(t),
            None => Err(missed(&mut conn, &task).await),
        }
    }

    async fn save_task_on_board(
        &self,
        task: &Task,
        event: &NewTaskEvent,
    ) -> Result<Task, RepoError> {
        let mut conn = self.db.conn().await?;
        let task = task.clone();
        let event = event.clone();
        let saved = conn
            .transaction(async |conn| {
                let old: TaskRow = Sql::new(&format!(
                    "SELECT {TASK_COLUMNS} FROM plan_tasks t \
                     JOIN plan_boards b ON b.id = t.board_id WHERE t.id = "
                ))
                .bind::<SqlUuid, _>(task.id.0)
                .push(" AND t.organization_id = ")
                .bind::<SqlUuid, _>(task.org_id.0)
                .rows::<TaskSql>()
                .get_result(conn)
                .await?;
                let number = take_number(conn, task.org_id, task.board_id).await?;
                let rank = end_of_column(conn, task.board_id, task.state_id, task.id).await?;
                let at = stamp(conn).await?;
                if !write_task(conn, &task, number, rank, at).await? {
                    return Ok(None);
                }
                // Logged on the board it left: the delta feed of that board lists it.
                insert_event(
                    conn,
                    task.org_id,
                    BoardId(old.1.board_id),
                    task.id,
                    &event,
                    at,
                )
                .await?;
                load_task(conn, task.org_id, task.id).await.map(Some)
            })
            .await
            .map_err(db_error)?;
        match saved {
            Some(t) => Ok(t),
            None => Err(missed(&mut conn, &task).await),
        }
    }

    async fn has_subtasks(&self, org: OrgId, task: TaskId) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        // One entry of the partial `parent_id` index at most.
        let found: One<i64> =
            Sql::new("SELECT COUNT(*) AS value FROM (SELECT 1 FROM plan_tasks WHERE parent_id = ")
                .bind::<SqlUuid, _>(task.0)
                .push(" AND organization_id = ")
                .bind::<SqlUuid, _>(org.0)
                .push(" LIMIT 1) c")
                .query
                .get_result(&mut conn)
                .await
                .map_err(db_error)?;
        Ok(found.value > 0)
    }

    async fn list_tasks(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        sort: TaskSort,
        page: PageRequest,
    ) -> Result<Page<Task>, RepoError> {
        if filter.boards.is_empty() {
            return Ok(Page {
                count: 0,
                results: Vec::new(),
            });
        }
        let mut conn = self.db.conn().await?;
        let (limit, offset) = limits(page);
        let rows: Vec<(LiveRow, Option<i64>)> = page_statement(org, filter, sort, page)
            .rows::<(LiveSql, Nullable<BigInt>)>()
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let first_total = rows.as_slice().first().and_then(|r| r.1);
        let count = page_count(
            &mut conn,
            org,
            filter,
            first_total,
            rows.len(),
            limit,
            offset,
        )
        .await?;
        Ok(Page {
            count,
            results: rows
                .into_iter()
                .map(|(live, _)| {
                    let key = board_key(filter, live.board_id);
                    task((key, live, Standing::live(org)))
                })
                .collect(),
        })
    }

    async fn column_ranks(
        &self,
        org: OrgId,
        state: StateId,
    ) -> Result<Vec<(TaskId, i64)>, RepoError> {
        let mut conn = self.db.conn().await?;
        // The column's board leads the `(board_id, state_id, rank)` index.
        let rows: Vec<Ranked> = Sql::new(
            "SELECT id, rank FROM plan_tasks \
             WHERE board_id = (SELECT board_id FROM plan_states WHERE id = $1) AND state_id = ",
        )
        .bind::<SqlUuid, _>(state.0)
        .push(" AND organization_id = ")
        .bind::<SqlUuid, _>(org.0)
        .push(" AND NOT is_archived ORDER BY rank, id")
        .query
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(rows.into_iter().map(|r| (TaskId(r.id), r.rank)).collect())
    }

    async fn respace_column(&self, org: OrgId, state: StateId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        // Ranks are order only: no version bump; the stamp lets the delta feed show the order.
        Sql::new("UPDATE plan_tasks t SET rank = o.position * ")
            .bind::<BigInt, _>(RANK_STEP)
            .push(
                ", updated_at = clock_timestamp() FROM (SELECT id, row_number() OVER \
             (ORDER BY rank, id) AS position FROM plan_tasks WHERE state_id = ",
            )
            .bind::<SqlUuid, _>(state.0)
            .push(" AND organization_id = ")
            .bind::<SqlUuid, _>(org.0)
            .push(" AND NOT is_archived) o WHERE t.id = o.id")
            .query
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn count_column(
        &self,
        org: OrgId,
        board: BoardId,
        state: StateId,
        bound: u64,
    ) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let count: One<i64> = Sql::new(
            "SELECT COALESCE((SELECT live_tasks FROM plan_column_task_counts WHERE board_id = ",
        )
        .bind::<SqlUuid, _>(board.0)
        .push(" AND state_id = ")
        .bind::<SqlUuid, _>(state.0)
        .push(" AND organization_id = ")
        .bind::<SqlUuid, _>(org.0)
        .push("), 0) AS value")
        .query
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(count_from(count.value)?.min(bound))
    }

    async fn count_by_state(
        &self,
        org: OrgId,
        board: BoardId,
    ) -> Result<Vec<(StateId, u64)>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<StateCount> = Sql::new(
            "SELECT state_id, live_tasks AS tasks FROM plan_column_task_counts WHERE board_id = ",
        )
        .bind::<SqlUuid, _>(board.0)
        .push(" AND organization_id = ")
        .bind::<SqlUuid, _>(org.0)
        .push(" AND live_tasks > 0")
        .query
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        rows.into_iter()
            .map(|r| Ok((StateId(r.state_id), count_from(r.tasks)?)))
            .collect()
    }

    async fn task_events(
        &self,
        org: OrgId,
        task: TaskId,
        filter: &EventFilter,
        page: PageRequest,
    ) -> Result<Page<TaskEvent>, RepoError> {
        let mut conn = self.db.conn().await?;
        let where_ = |sql: Sql| {
            let mut sql = sql
                .push(" WHERE task_id = ")
                .bind::<SqlUuid, _>(task.0)
                .push(" AND organization_id = ")
                .bind::<SqlUuid, _>(org.0);
            if let Some(since) = filter.since {
                sql = sql
                    .push(" AND created_at >= ")
                    .bind::<Timestamptz, _>(since);
            }
            if let Some(kind) = &filter.kind {
                sql = sql.push(" AND type = ").bind::<Text, _>(kind.clone());
            }
            sql
        };
        let (limit, offset) = limits(page);
        let rows: Vec<EventRow> = where_(Sql::new(
            "SELECT id, task_id, board_id, type AS kind, actor_id, agent_name, data, created_at \
             FROM plan_task_events",
        ))
        .push(" ORDER BY created_at, id LIMIT ")
        .bind::<BigInt, _>(limit)
        .push(" OFFSET ")
        .bind::<BigInt, _>(offset)
        .query
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        let count: One<i64> = where_(Sql::new("SELECT COUNT(*) AS value FROM plan_task_events"))
            .query
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(Page {
            count: count_from(count.value)?,
            results: rows.into_iter().map(TaskEvent::from).collect(),
        })
    }

    async fn delta_cursor(&self) -> Result<OffsetDateTime, RepoError> {
        let mut conn = self.db.conn().await?;
        let at = stamp(&mut conn).await.map_err(db_error)?;
        Ok(teamcomm_plan::delta::cursor_at(at))
    }

    async fn board_changes(
        &self,
        org: OrgId,
        board: BoardId,
        since: OffsetDateTime,
        until: OffsetDateTime,
    ) -> Result<Vec<Task>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<TaskRow> = Sql::new(&format!(
            "SELECT {TASK_COLUMNS} FROM plan_tasks t JOIN plan_boards b ON b.id = t.board_id \
             WHERE t.organization_id = "
        ))
        .bind::<SqlUuid, _>(org.0)
        .push(" AND t.board_id = ")
        .bind::<SqlUuid, _>(board.0)
        .push(" AND t.updated_at >= ")
        .bind::<Timestamptz, _>(since)
        .push(" AND t.updated_at < ")
        .bind::<Timestamptz, _>(until)
        .push(&format!(
            " UNION ALL SELECT {TASK_COLUMNS} FROM plan_tasks t JOIN plan_boards b ON b.id = t.board_id \
             WHERE t.organization_id = $1 AND t.board_id <> $2 AND t.id IN (SELECT e.task_id FROM plan_task_events e \
             WHERE e.board_id = $2 AND e.type = 'moved_board' AND e.created_at >= $3 \
             AND e.created_at < $4) ORDER BY updated_at, id"
        ))
        .rows::<TaskSql>()
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(rows.into_iter().map(task).collect())
    }

    async fn tasks_by_ids(&self, org: OrgId, ids: &[TaskId]) -> Result<Vec<Task>, RepoError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.tasks_with_any(org, "t.id", ids, " ORDER BY t.id")
            .await
    }

    async fn live_subtasks_of(
        &self,
        org: OrgId,
        parents: &[TaskId],
    ) -> Result<Vec<Task>, RepoError> {
        if parents.is_empty() {
            return Ok(Vec::new());
        }
        // The partial `parent_id` index, one probe per parent.
        let tail = " AND NOT t.is_archived ORDER BY t.parent_id, t.rank, t.id";
        self.tasks_with_any(org, "t.parent_id", parents, tail).await
    }
}

/// The statement of a page of a task list: its tasks with the kept count when the filter's
/// count is kept ([`kept_count`]; null otherwise).
fn page_statement(org: OrgId, filter: &TaskFilter, sort: TaskSort, page: PageRequest) -> Sql {
    let (limit, offset) = limits(page);
    // A kept count comes with the page, in its statement.
    // A list's tasks are live tasks of `org`: their other columns are known ([`Standing::live`]).
    let select = Sql::new(concat!("SELECT ", live_columns!(), ", "));
    let select = if kept_count(filter) {
        kept_total(select, org, filter)
    } else {
        select.push("NULL::bigint")
    };
    let sql = filtered(
        select.push(" AS total").push(tasks_from(filter)),
        org,
        filter,
    )
    .push(&order_by(sort));
    // The page size is in the text (a number of `PageRequest`: at most 100, or all, so a few
    // shapes), and so is a first page's offset (none): with them bound, PostgreSQL's generic
    // plan guesses a tenth of the board for the page and never beats a custom one, so it
    // planned every page afresh (0.16 ms of planning for 0.07 ms of running); with them in
    // the text it keeps one generic plan per connection (0.01 ms of planning).
    let sql = sql.push(&format!(" LIMIT {limit}"));
    if offset == 0 {
        sql
    } else {
        sql.push(" OFFSET ").bind::<BigInt, _>(offset)
    }
}

/// The envelope's count of a page of `shown` tasks: the kept count its statement read
/// (`first_total`), else what the page proves, else a count of its own.
async fn page_count(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    filter: &TaskFilter,
    first_total: Option<i64>,
    shown: usize,
    limit: i64,
    offset: i64,
) -> Result<u64, RepoError> {
    let shown = i64::try_from(shown).unwrap_or(i64::MAX);
    let count = if let Some(n) = first_total {
        n
    } else if shown < limit && (shown > 0 || offset == 0) {
        // The page proves the total: not empty and not full is the last page, and an
        // empty first page means nothing matches.
        offset.saturating_add(shown)
    } else if kept_count(filter) {
        // A page past the end.
        total(
            kept_total(Sql::new("SELECT "), org, filter).push(" AS value"),
            conn,
        )
        .await?
    } else {
        let sql = filtered(
            Sql::new("SELECT COUNT(*) AS value").push(tasks_from(filter)),
            org,
            filter,
        );
        total(sql, conn).await?
    };
    count_from(count)
}

/// The `FROM` of a task list: its tasks, and their boards only when the search by key needs
/// them (a listed task's key comes with the filter's boards: [`board_key`]). Joined on every
/// page, the boards cost a third of a page statement in PostgreSQL: the generic plan reads the
/// board through a bitmap scan and a materialize node, set up again for every page.
fn tasks_from(f: &TaskFilter) -> &'static str {
    if f.search.is_some() {
        " FROM plan_tasks t JOIN plan_boards b ON b.id = t.board_id"
    } else {
        " FROM plan_tasks t"
    }
}

/// The key a listed task of `board` is shown under: its board's, as the filter names it.
fn board_key(f: &TaskFilter, board: Uuid) -> String {
    f.boards
        .iter()
        .find(|b| b.id.0 == board)
        .map(|b| b.key.clone())
        .unwrap_or_default()
}

/// Whether a list's count is kept (`plan_column_task_counts`): its filter names boards and
/// maybe a column, nothing else. Any other filter is counted over the tasks.
fn kept_count(f: &TaskFilter) -> bool {
    *f == TaskFilter {
        boards: f.boards.clone(),
        state: f.state,
        ..TaskFilter::default()
    }
}

/// The kept count of a list whose filter is boards and maybe a column ([`kept_count`]), as a
/// scalar subquery: the boards' counts (`plan_board_task_counts`, one row a board), or the
/// column's (`plan_column_task_counts`). Summed from the columns, a board's count cost the
/// page statement an aggregate and a bitmap scan, set up on every page (decisions §73).
fn kept_total(sql: Sql, org: OrgId, f: &TaskFilter) -> Sql {
    let sql = match (f.state, f.boards.as_slice()) {
        (Some(state), boards) => {
            let sql = sql.push(concat!(
                "COALESCE((SELECT SUM(live_tasks) FROM plan_column_task_counts",
                " WHERE state_id = "
            ));
            // A column is on one board: its boards narrow nothing, but a column of a board not
            // listed counts none.
            let sql = sql.bind::<SqlUuid, _>(state.0).push(" AND board_id");
            in_boards(sql, boards)
        }
        // One board's one row.
        (None, [one]) => sql
            .push("COALESCE((SELECT live_tasks FROM plan_board_task_counts WHERE board_id = ")
            .bind::<SqlUuid, _>(one.id.0),
        (None, boards) => in_boards(
            sql.push("COALESCE((SELECT SUM(live_tasks) FROM plan_board_task_counts WHERE board_id"),
            boards,
        ),
    };
    sql.push(" AND organization_id = ")
        .bind::<SqlUuid, _>(org.0)
        .push("), 0)::bigint")
}

/// `= $n` of one board, `= ANY($n)` of several: the end of a condition on a board column.
/// One board as `=`: a generic plan of `= ANY($n)` guesses many boards, and costs more than a
/// custom one (see `page_statement`).
fn in_boards(sql: Sql, boards: &[ListedBoard]) -> Sql {
    if let [one] = boards {
        sql.push(" = ").bind::<SqlUuid, _>(one.id.0)
    } else {
        sql.push(" = ANY(")
            .bind::<Array<SqlUuid>, _>(boards.iter().map(|b| b.id.0).collect::<Vec<_>>())
            .push(")")
    }
}

/// The `WHERE` of a task list.
fn filtered(sql: Sql, org: OrgId, f: &TaskFilter) -> Sql {
    let mut sql = sql
        .push(" WHERE t.organization_id = ")
        .bind::<SqlUuid, _>(org.0)
        .push(" AND NOT t.is_archived");
    sql = in_boards(sql.push(" AND t.board_id"), &f.boards);
    if let Some(state) = f.state {
        sql = sql.push(" AND t.state_id = ").bind::<SqlUuid, _>(state.0);
    }
    if !f.owners.is_empty() {
        let people: Vec<Uuid> = f
            .owners
            .iter()
            .filter_map(|o| match o {
                OwnerFilter::Person(u) => Some(u.0),
                OwnerFilter::Unowned => None,
            })
            .collect();
        let unowned = f.owners.contains(&OwnerFilter::Unowned);
        sql = sql
            .push(" AND (t.owner_id = ANY(")
            .bind::<Array<SqlUuid>, _>(people)
            .push(if unowned {
                ") OR t.owner_id IS NULL)"
            } else {
                "))"
            });
    }
    if !f.labels.is_empty() {
        sql = sql
            .push(
                " AND EXISTS (SELECT 1 FROM entity_labels el WHERE el.entity_type = 'tasks' \
                 AND el.entity_id = t.id AND el.label_id = ANY(",
            )
            .bind::<Array<SqlUuid>, _>(f.labels.clone())
            .push("))");
    }
    if !f.milestones.is_empty() {
        sql = sql
            .push(" AND t.milestone_id = ANY(")
            .bind::<Array<SqlUuid>, _>(f.milestones.clone())
            .push(")");
    }
    match f.has_dates {
        Some(true) => sql = sql.push(" AND (t.start_date IS NOT NULL OR t.due_date IS NOT NULL)"),
        Some(false) => sql = sql.push(" AND t.start_date IS NULL AND t.due_date IS NULL"),
        None => {}
    }
    if let Some(parent) = f.parent {
        sql = sql.push(" AND t.parent_id = ").bind::<SqlUuid, _>(parent.0);
    }
    if let Some(q) = &f.search {
        sql = sql
            .push(" AND (t.title ILIKE ")
            .bind::<Text, _>(like_pattern(q))
            .push(" OR t.description ILIKE ")
            .bind::<Text, _>(like_pattern(q))
            .push(" OR lower(b.key || '-' || t.number) = lower(")
            .bind::<Text, _>(q.clone())
            .push("))");
    }
    if let Some((user, how)) = f.involving {
        let participates = "EXISTS (SELECT 1 FROM plan_task_participants p \
                            WHERE p.task_id = t.id AND p.user_id = ";
        sql = match how {
            Involvement::Owned => sql.push(" AND t.owner_id = ").bind::<SqlUuid, _>(user.0),
            Involvement::Participating => sql
                .push(" AND ")
                .push(participates)
                .bind::<SqlUuid, _>(user.0)
                .push(")"),
            Involvement::Involved => sql
                .push(" AND (t.owner_id = ")
                .bind::<SqlUuid, _>(user.0)
                .push(" OR ")
                .push(participates)
                .bind::<SqlUuid, _>(user.0)
                .push("))"),
        };
    }
    if f.open_only {
        sql = sql.push(
            " AND t.state_id IN (SELECT s.id FROM plan_states s WHERE s.board_id = t.board_id \
             AND s.category NOT IN ('done', 'canceled'))",
        );
    }
    sql
}

/// The `ORDER BY` of a task list: the sort key (nulls last), then rank, then id.
fn order_by(sort: TaskSort) -> String {
    let column = match sort.key {
        TaskSortKey::Rank => "t.rank",
        TaskSortKey::Priority => "t.priority",
        TaskSortKey::DueDate => "t.due_date",
        TaskSortKey::StartDate => "t.start_date",
        TaskSortKey::UpdatedAt => "t.updated_at",
        TaskSortKey::CreatedAt => "t.created_at",
        TaskSortKey::CompletedAt => "t.completed_at",
    };
    let direction = if sort.descending { "DESC" } else { "ASC" };
    format!(" ORDER BY {column} {direction} NULLS LAST, t.rank, t.id")
}
