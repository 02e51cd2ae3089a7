//! Tasks (numbers, versions, ranks), their event log, the delta feed.

use async_trait::async_trait;
use serde_json::Value;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::actor::Executor;
use crate::{BoardId, StateId, Task, TaskId};

/// A task to insert: the repository gives it its number (`KEY-n`), its rank (last of its
/// column), version 1 and its timestamps.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    pub id: TaskId,
    pub org_id: OrgId,
    pub board_id: BoardId,
    pub state_id: StateId,
    pub parent_id: Option<TaskId>,
    pub title: String,
    pub description: String,
    pub owner: Option<UserId>,
    pub priority: Option<i16>,
    pub estimate: Option<i32>,
    pub start_date: Option<Date>,
    pub due_date: Option<Date>,
    /// Set when the column is done or canceled.
    pub completed_at: Option<OffsetDateTime>,
    pub created_by: Option<UserId>,
    pub created_by_agent: Option<String>,
    /// The live tasks its column may hold at most: a create into a column that holds as many
    /// is refused ([`COLUMN_FULL`]).
    pub column_limit: u64,
}

/// What happened to a task, written in the transaction of the change.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTaskEvent {
    /// `created`, `updated`, `moved`, `moved_board`, `archived`, `restored`, `duplicated`…
    pub kind: &'static str,
    pub by: Executor,
    pub data: Value,
}

impl NewTaskEvent {
    pub fn new(kind: &'static str, by: Executor, data: Value) -> NewTaskEvent {
        NewTaskEvent { kind, by, data }
    }
}

/// A row of a task's event log.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEvent {
    pub id: Uuid,
    pub task_id: TaskId,
    pub board_id: BoardId,
    pub kind: String,
    pub actor: Option<UserId>,
    pub agent_name: Option<String>,
    pub data: Value,
    pub created_at: OffsetDateTime,
}

/// Which events of a task to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventFilter {
    /// `created_at >= since`.
    pub since: Option<OffsetDateTime>,
    pub kind: Option<String>,
}

/// An `owner` filter value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerFilter {
    Person(UserId),
    Unowned,
}

/// How a person is tied to a task (`GET me/tasks/?scope=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Involvement {
    /// They own it.
    Owned,
    /// They are a participant or watcher of it.
    Participating,
    /// Either.
    Involved,
}

/// The orders of task lists (`sort`, optionally `-` for descending); ties by rank, then id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSortKey {
    Rank,
    Priority,
    DueDate,
    StartDate,
    UpdatedAt,
    CreatedAt,
    CompletedAt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSort {
    pub key: TaskSortKey,
    pub descending: bool,
}

impl Default for TaskSort {
    fn default() -> Self {
        TaskSort {
            key: TaskSortKey::Rank,
            descending: false,
        }
    }
}

/// A board a list reads, with the key its tasks are shown under: the service has resolved
/// the board, so the store does not read the key again for every page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedBoard {
    pub id: BoardId,
    pub key: String,
}

impl From<&crate::Board> for ListedBoard {
    fn from(b: &crate::Board) -> Self {
        ListedBoard {
            id: b.id,
            key: b.key.clone(),
        }
    }
}

/// Which live tasks a list reads. Every list names the boards it may read (the caller's
/// visible boards); an empty `boards` reads nothing. A listed task's `board_key` is its
/// board's key here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskFilter {
    pub boards: Vec<ListedBoard>,
    pub state: Option<StateId>,
    /// Any of these (empty: any owner).
    pub owners: Vec<OwnerFilter>,
    /// Carrying any of these labels.
    pub labels: Vec<Uuid>,
    /// In any of these milestones.
    pub milestones: Vec<Uuid>,
    /// With a start or due date (`true`), or neither (`false`).
    pub has_dates: Option<bool>,
    pub parent: Option<TaskId>,
    /// In the title, the description or the key (case-insensitive).
    pub search: Option<String>,
    pub involving: Option<(UserId, Involvement)>,
    /// Only tasks that are not done or canceled.
    pub open_only: bool,
}

/// The conflict a create or a save answers when the parent it gives would nest sub-tasks two
/// levels (its parent is a sub-task, or the task has sub-tasks): checked again in the write's
/// transaction, so that two racing writes cannot both pass the service's check.
pub const SUBTASK_ONE_LEVEL: &str = "plan_tasks_one_level";

/// The conflict a create answers when its column already holds [`NewTask::column_limit`] live
/// tasks: checked under the board row's lock that numbers the task, so that racing creates
/// cannot overfill a column, and the refused create takes no number.
pub const COLUMN_FULL: &str = "plan_column_full";

/// The conflict a task write answers when it would leave a live task outside a live column of
/// its board (the column was archived, or the board changed, since the service read them):
/// checked by the store when the task is written, so that a stale read never stores one.
pub const COLUMN_GONE: &str = "plan_task_column_live";

#[async_trait]
pub trait TaskRepository: Send + Sync + 'static {
    /// Inserts the task with the board's next number (taken under the board row's lock in the
    /// task's transaction: no gaps, no duplicates), last in its column, and its event.
    /// `Conflict` on [`SUBTASK_ONE_LEVEL`] when its parent is a sub-task, on [`COLUMN_FULL`]
    /// when its column holds `task.column_limit` live tasks (nothing stored, no number taken).
    async fn create_task(&self, task: &NewTask, event: &NewTaskEvent) -> Result<Task, RepoError>;
    async fn get_task(&self, org: OrgId, id: TaskId) -> Result<Task, RepoError>;
    /// The task numbered `number` on the board.
    async fn task_by_number(
        &self,
        org: OrgId,
        board: BoardId,
        number: i64,
    ) -> Result<Task, RepoError>;
    /// Writes the task's fields (state, rank, dates, archive flags, …) if its stored version is
    /// still `task.version`, bumps the version, stamps `updated_at` and records the event, in
    /// one transaction. `Conflict { constraint: "version" }` when the version moved, on
    /// [`SUBTASK_ONE_LEVEL`] when a new parent would nest sub-tasks two levels.
    async fn save_task(&self, task: &Task, event: &NewTaskEvent) -> Result<Task, RepoError>;
    /// As [`Self::save_task`], for a task put on another board (`task.board_id`): it takes that
    /// board's next number and goes last in its column.
    async fn save_task_on_board(
        &self,
        task: &Task,
        event: &NewTaskEvent,
    ) -> Result<Task, RepoError>;
    /// Whether any task, archived ones included, is a sub-task of this one.
    async fn has_subtasks(&self, org: OrgId, task: TaskId) -> Result<bool, RepoError>;
    async fn list_tasks(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        sort: TaskSort,
        page: PageRequest,
    ) -> Result<Page<Task>, RepoError>;
    /// The live tasks of a column by rank (id, rank).
    async fn column_ranks(
        &self,
        org: OrgId,
        state: StateId,
    ) -> Result<Vec<(TaskId, i64)>, RepoError>;
    /// Spreads the ranks of a column's live tasks evenly ([`crate::tasks::RANK_STEP`] apart),
    /// keeping their order.
    async fn respace_column(&self, org: OrgId, state: StateId) -> Result<(), RepoError>;
    /// Live tasks of one column of the board, counted up to `bound` (a column at or past its
    /// limit needs no exact count, and counting stops there).
    async fn count_column(
        &self,
        org: OrgId,
        board: BoardId,
        state: StateId,
        bound: u64,
    ) -> Result<u64, RepoError>;
    /// Live tasks per column of the board.
    async fn count_by_state(
        &self,
        org: OrgId,
        board: BoardId,
    ) -> Result<Vec<(StateId, u64)>, RepoError>;
    /// A task's events, oldest first.
    async fn task_events(
        &self,
        org: OrgId,
        task: TaskId,
        filter: &EventFilter,
        page: PageRequest,
    ) -> Result<Page<TaskEvent>, RepoError>;
    /// The store's clock minus the delta feed's safety lag, truncated to the second
    /// ([`crate::delta`] says why).
    async fn delta_cursor(&self) -> Result<OffsetDateTime, RepoError>;
    /// The board's tasks (archived too) with `since <= updated_at < until`, and the tasks
    /// that left the board in that window (their `board_id` is their new board).
    async fn board_changes(
        &self,
        org: OrgId,
        board: BoardId,
        since: OffsetDateTime,
        until: OffsetDateTime,
    ) -> Result<Vec<Task>, RepoError>;

    /// The tasks of `org` with these ids (archived ones too, as [`Self::get_task`] reads
    /// them), by id, each once; unknown ids and other organizations' tasks are left out. One
    /// read whatever the number of ids.
    async fn tasks_by_ids(&self, org: OrgId, ids: &[TaskId]) -> Result<Vec<Task>, RepoError>;

    /// The live sub-tasks of these tasks of `org`, in one read: grouped by parent (in the
    /// order of the parents' ids), each parent's by rank then id, as a list of one parent's
    /// sub-tasks in the default order.
    async fn live_subtasks_of(
        &self,
        org: OrgId,
        parents: &[TaskId],
    ) -> Result<Vec<Task>, RepoError>;
}
