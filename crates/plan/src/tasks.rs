//! Tasks: create (numbered `KEY-n` on their board, last in their column), read by key (any key
//! the board ever had) or uuid, update, move within the board (ranks with `before`/`after`),
//! move to another board (a new key), archive/restore, duplicate, lists, sub-tasks one level
//! deep, and the event log. Every write is guarded by the task's `version` and records one
//! event in its transaction.

use serde_json::json;
use teamcomm_kernel::{Error, ErrorCode, OrgId, Page, PageRequest, RepoError, UserId};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::access::default_column;
use crate::ports::{
    COLUMN_FULL, COLUMN_GONE, EventFilter, Involvement, ListedBoard, NewTask, NewTaskEvent,
    OwnerFilter, SUBTASK_ONE_LEVEL, TaskEvent, TaskFilter, TaskSort, TaskSortKey,
};
use crate::{
    Board, BoardId, BoardRef, Plan, PlanActor, Preview, Restore, State, StateId, Task, TaskId,
    TaskRef,
};

pub const MAX_TITLE: usize = 500;
pub const MAX_DESCRIPTION: usize = 50_000;
/// Live tasks a column holds at most (`column_too_large`).
pub const MAX_COLUMN_TASKS: u64 = 5_000;
/// Values a repeatable filter takes at most (`too_many_filter_values`).
pub const MAX_FILTER_VALUES: usize = 50;
/// The gap between neighbouring ranks when a column is appended to or respaced.
pub const RANK_STEP: i64 = 1024;

/// A person named by a body or filter: `me` or a uuid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PersonRef {
    Me,
    Id(UserId),
}

impl PersonRef {
    /// `me` or a uuid; anything else is refused as a field value.
    pub fn parse(field: &str, raw: &str) -> Result<PersonRef, Error> {
        if raw == "me" {
            return Ok(PersonRef::Me);
        }
        Uuid::parse_str(raw)
            .map(|u| PersonRef::Id(UserId(u)))
            .map_err(|_| Error::invalid_field(field, "A person's uuid or \"me\"."))
    }

    fn resolve(self, actor: &PlanActor) -> Result<UserId, Error> {
        match self {
            PersonRef::Me => Ok(actor.person()?.id),
            PersonRef::Id(id) => Ok(id),
        }
    }
}

/// A date as the wire writes it (`YYYY-MM-DD`); anything else is `invalid_date_range`.
pub fn parse_date(field: &str, raw: &str) -> Result<Date, Error> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(raw, &format).map_err(|_| {
        Error::new(
            ErrorCode::InvalidDateRange,
            format!("{field} is a date written YYYY-MM-DD."),
        )
        .with_extra("parameter", field)
    })
}

fn check_dates(start: Option<Date>, due: Option<Date>) -> Result<(), Error> {
    match (start, due) {
        (Some(s), Some(d)) if s > d => Err(Error::new(
            ErrorCode::InvalidDateRange,
            "start_date is after due_date.",
        )
        .with_extra("parameter", "start_date")),
        _ => Ok(()),
    }
}

fn check_title(title: &str) -> Result<String, Error> {
    let title = title.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE {
        return Err(Error::invalid_field(
            "title",
            "A title is 1 to 500 characters.",
        ));
    }
    Ok(title.to_owned())
}

fn check_description(description: &str) -> Result<String, Error> {
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(Error::new(
            ErrorCode::DescriptionTooLong,
            "A description is at most 50,000 characters.",
        )
        .with_extra("max_length", MAX_DESCRIPTION));
    }
    Ok(description.to_owned())
}

fn check_estimate(estimate: i32) -> Result<i32, Error> {
    if estimate < 0 {
        return Err(Error::invalid_field(
            "estimate",
            "An estimate is 0 or more.",
        ));
    }
    Ok(estimate)
}

fn state_not_on_board() -> Error {
    Error::new(
        ErrorCode::StateNotOnBoard,
        "That state is not a live column of the task's board.",
    )
    .with_extra("parameter", "state")
}

/// The live column `id` among a board's columns, or `state_not_on_board`.
fn live_column(columns: &[State], id: StateId) -> Result<State, Error> {
    columns
        .iter()
        .find(|s| s.id == id && !s.is_archived)
        .cloned()
        .ok_or_else(state_not_on_board)
}

pub fn task_archived() -> Error {
    Error::new(
        ErrorCode::TaskArchived,
        "The task is archived; restore it first.",
    )
}

fn version_conflict(current: i64) -> Error {
    Error::new(
        ErrorCode::VersionConflict,
        "The task changed since that version.",
    )
    .with_extra("current_version", current)
}

fn subtask_cross_board(why: &str) -> Error {
    Error::new(ErrorCode::SubtaskCrossBoard, why.to_owned())
}

fn subtask_depth_exceeded(why: &str) -> Error {
    Error::new(ErrorCode::SubtaskDepthExceeded, why.to_owned())
}

/// The store refused a parent that passed [`Plan::new_parent`]'s checks: a concurrent write
/// changed the tree in between.
fn nested_by_a_race() -> Error {
    subtask_depth_exceeded(
        "Sub-tasks nest one level only: the parent is now a sub-task, or this task now has sub-tasks.",
    )
}

/// What a task write answers when the store refuses a rule it checks again inside the write,
/// because a concurrent write (or a board read from a cache) made the service's check stale.
fn refused_write(e: RepoError) -> Error {
    match e {
        RepoError::Conflict { constraint } if constraint == SUBTASK_ONE_LEVEL => nested_by_a_race(),
        RepoError::Conflict { constraint } if constraint == COLUMN_FULL => column_too_large(),
        RepoError::Conflict { constraint } if constraint == COLUMN_GONE => state_not_on_board(),
        e => e.into(),
    }
}

/// A parent for sub-tasks: live, and not a sub-task itself (sub-tasks nest one level only).
fn can_take_subtasks(parent: &Task) -> Result<(), Error> {
    if parent.is_archived {
        return Err(task_archived());
    }
    if parent.parent_id.is_some() {
        return Err(subtask_depth_exceeded("Sub-tasks nest one level only."));
    }
    Ok(())
}

fn column_too_large() -> Error {
    Error::new(
        ErrorCode::ColumnTooLarge,
        "The column already holds 5,000 tasks.",
    )
    .with_extra("limit", MAX_COLUMN_TASKS)
}

/// The version a write is conditioned on: `If-Match` (`"N"`, `W/"N"` or `N`) and/or the body's
/// `version`; both and different is `version_precondition_ambiguous`.
pub fn expected_version(if_match: Option<&str>, body: Option<i64>) -> Result<Option<i64>, Error> {
    let header = match if_match.map(str::trim) {
        None | Some("") | Some("*") => None,
        Some(raw) => {
            let bare = raw.strip_prefix("W/").unwrap_or(raw).trim_matches('"');
            Some(bare.parse::<i64>().map_err(|_| {
                Error::invalid_field("If-Match", "If-Match names a task version: \"N\".")
            })?)
        }
    };
    match (header, body) {
        (Some(h), Some(b)) if h != b => Err(Error::new(
            ErrorCode::VersionPreconditionAmbiguous,
            "If-Match and the body's version differ.",
        )),
        (h, b) => Ok(h.or(b)),
    }
}

/// A new task as a request states it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreateTask {
    pub title: String,
    pub board: Option<BoardRef>,
    pub description: Option<String>,
    pub state: Option<StateId>,
    pub owner: Option<PersonRef>,
    pub due_date: Option<Date>,
    pub start_date: Option<Date>,
    pub estimate: Option<i32>,
    pub parent: Option<TaskRef>,
    pub priority: Option<i16>,
    /// Any milestone at creation is refused (501) until milestones exist.
    pub milestone_given: bool,
}

/// A partial update: `None` leaves a field, `Some(None)` clears it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskPatch {
    pub title: Option<String>,
    pub description: Option<String>,
    pub state: Option<StateId>,
    pub due_date: Option<Option<Date>>,
    pub start_date: Option<Option<Date>>,
    pub estimate: Option<Option<i32>>,
    pub milestone: Option<Option<Uuid>>,
    pub priority: Option<Option<i16>>,
    pub owner: Option<Option<PersonRef>>,
}

/// Where a moved task goes in its column.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MoveTask {
    pub state: Option<StateId>,
    pub before: Option<TaskRef>,
    pub after: Option<TaskRef>,
}

/// What a duplicate copies besides the title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyField {
    Title,
    Description,
    Labels,
    Priority,
    Estimate,
    Owner,
    StartDate,
    DueDate,
}

impl CopyField {
    pub const ALL: [CopyField; 8] = [
        CopyField::Title,
        CopyField::Description,
        CopyField::Labels,
        CopyField::Priority,
        CopyField::Estimate,
        CopyField::Owner,
        CopyField::StartDate,
        CopyField::DueDate,
    ];

    pub fn parse(raw: &str) -> Option<CopyField> {
        Some(match raw {
            "title" => CopyField::Title,
            "description" => CopyField::Description,
            "labels" => CopyField::Labels,
            "priority" => CopyField::Priority,
            "estimate" => CopyField::Estimate,
            "owner" => CopyField::Owner,
            "start_date" => CopyField::StartDate,
            "due_date" => CopyField::DueDate,
            _ => return None,
        })
    }
}

/// What an archive call answers: the archived task, or the dry run's preview.
#[derive(Debug, Clone, PartialEq)]
pub enum Archived {
    Done(Box<Task>),
    Preview(Preview),
}

/// A task list's sort as written (`-due_date`).
pub fn parse_sort(raw: &str) -> Result<TaskSort, Error> {
    const ALLOWED: [&str; 7] = [
        "rank",
        "priority",
        "due_date",
        "start_date",
        "updated_at",
        "created_at",
        "completed_at",
    ];
    let (descending, name) = match raw.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    let key = match name {
        "rank" => TaskSortKey::Rank,
        "priority" => TaskSortKey::Priority,
        "due_date" => TaskSortKey::DueDate,
        "start_date" => TaskSortKey::StartDate,
        "updated_at" => TaskSortKey::UpdatedAt,
        "created_at" => TaskSortKey::CreatedAt,
        "completed_at" => TaskSortKey::CompletedAt,
        _ => {
            let mut allowed: Vec<String> = ALLOWED.iter().map(|s| (*s).to_owned()).collect();
            allowed.extend(ALLOWED.iter().map(|s| format!("-{s}")));
            let refs: Vec<&str> = allowed.iter().map(String::as_str).collect();
            return Err(crate::invalid_sort(&refs));
        }
    };
    Ok(TaskSort { key, descending })
}

/// The rank between two neighbours (`None`: the column's end), or `None` when they touch.
pub fn rank_between(prev: Option<i64>, next: Option<i64>) -> Option<i64> {
    match (prev, next) {
        (None, None) => Some(RANK_STEP),
        (Some(p), None) => p.checked_add(RANK_STEP),
        (None, Some(n)) => (n > i64::MIN + RANK_STEP).then(|| n - RANK_STEP),
        (Some(p), Some(n)) => {
            let mid = p + (n - p) / 2;
            (mid > p && mid < n).then_some(mid)
        }
    }
}

/// A task list request as the caller states it (`GET tasks/`, `GET me/tasks/`, …): board refs
/// and people still to resolve.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskQuery {
    /// Any of these boards (none: every board the caller sees).
    pub boards: Vec<BoardRef>,
    pub state: Option<StateId>,
    pub owners: Vec<String>,
    pub labels: Vec<String>,
    pub milestones: Vec<String>,
    pub has_dates: Option<bool>,
    pub search: Option<String>,
    pub involving: Option<Involvement>,
    pub open_only: bool,
    pub sort: Option<String>,
}

fn too_many(parameter: &str) -> Error {
    Error::new(
        ErrorCode::TooManyFilterValues,
        format!("At most 50 values of {parameter}."),
    )
    .with_extra("parameter", parameter)
    .with_extra("limit", MAX_FILTER_VALUES)
}

fn invalid_filter(parameter: &str) -> Error {
    Error::new(
        ErrorCode::InvalidFilterValue,
        format!("Invalid value of {parameter}."),
    )
    .with_extra("parameter", parameter)
}

fn record(kind: &'static str, actor: &PlanActor, data: serde_json::Value) -> NewTaskEvent {
    NewTaskEvent::new(kind, actor.executor(), data)
}

impl Plan {
    /// The task named by key (any key its board ever had) or uuid, if the caller sees its
    /// board; 404 otherwise. Archived tasks are returned too.
    pub async fn visible_task(&self, actor: &PlanActor, task: &TaskRef) -> Result<Task, Error> {
        let org = actor.org_id();
        let task = match task {
            TaskRef::Id(id) => self.ports.tasks.get_task(org, *id).await?,
            TaskRef::Key { board_key, number } => {
                let board = self.ports.boards.board_by_key(org, board_key).await?;
                self.ports
                    .tasks
                    .task_by_number(org, board.id, *number)
                    .await?
            }
        };
        self.visible_board(actor, &BoardRef::Id(task.board_id))
            .await?;
        Ok(task)
    }

    /// A task and its board, refusing archived tasks (`task_archived`): what a write starts
    /// from.
    async fn writable_task(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        expected: Option<i64>,
    ) -> Result<(Task, Board), Error> {
        let task = self.visible_task(actor, task).await?;
        if task.is_archived {
            return Err(task_archived());
        }
        check_version(&task, expected)?;
        let board = self
            .ports
            .boards
            .get_board(task.org_id, task.board_id)
            .await?;
        Ok((task, board))
    }

    /// A live column of the board, or `state_not_on_board`.
    async fn live_state_of(&self, board: &Board, id: StateId) -> Result<State, Error> {
        let columns = self
            .ports
            .boards
            .board_states(board.org_id, board.id)
            .await?;
        live_column(&columns, id)
    }

    async fn check_column_room(&self, board: &Board, state: StateId) -> Result<(), Error> {
        let count = self
            .ports
            .tasks
            .count_column(board.org_id, board.id, state, MAX_COLUMN_TASKS)
            .await?;
        if count >= MAX_COLUMN_TASKS {
            return Err(column_too_large());
        }
        Ok(())
    }

    /// An owner: an active person of the organization who sees the board.
    async fn check_owner(
        &self,
        actor: &PlanActor,
        owner: PersonRef,
        board: &Board,
    ) -> Result<UserId, Error> {
        let id = owner.resolve(actor)?;
        let user = match self.ports.people.get_user(actor.org_id(), id).await {
            Ok(u) => u,
            Err(RepoError::NotFound) => {
                return Err(Error::invalid_field(
                    "owner",
                    "No such person in this organization.",
                ));
            }
            Err(e) => return Err(e.into()),
        };
        if !user.is_active {
            return Err(user_inactive("owner", &[id]));
        }
        let audience = self.board_audience(board).await?;
        if !self.person_sees(&audience, &user).await? {
            return Err(Error::new(
                ErrorCode::ParticipantCannotAccessBoard,
                "The owner cannot see the task's board.",
            )
            .with_extra("parameter", "owner"));
        }
        Ok(id)
    }

    /// `POST tasks/`: a task on the board (or its parent's board), in the given or default
    /// column, last in it, numbered `KEY-n`.
    pub async fn create_task(&self, actor: &PlanActor, new: CreateTask) -> Result<Task, Error> {
        Ok(self.create_task_with_columns(actor, new).await?.0)
    }

    /// [`Self::create_task`], with the columns of the task's board it read (what the task's
    /// answer names its column from: [`Self::task_context_knowing`]).
    pub async fn create_task_with_columns(
        &self,
        actor: &PlanActor,
        new: CreateTask,
    ) -> Result<(Task, Vec<State>), Error> {
        let org = actor.org_id();
        if new.milestone_given {
            return Err(Error::new(
                ErrorCode::NotImplemented,
                "Milestones cannot be set at creation yet; set them with PATCH afterwards.",
            ));
        }
        let title = check_title(&new.title)?;
        let description = check_description(new.description.as_deref().unwrap_or(""))?;
        if let Some(p) = new.priority {
            crate::check_priority(p)?;
        }
        if let Some(e) = new.estimate {
            check_estimate(e)?;
        }
        check_dates(new.start_date, new.due_date)?;
        let (board, parent) = match &new.parent {
            Some(parent_ref) => {
                let parent = self.visible_task(actor, parent_ref).await?;
                can_take_subtasks(&parent)?;
                if let Some(b) = &new.board {
                    let named = self.visible_board(actor, b).await?;
                    if named.id != parent.board_id {
                        return Err(subtask_cross_board(
                            "A sub-task goes on its parent's board.",
                        ));
                    }
                }
                let board = self.ports.boards.get_board(org, parent.board_id).await?;
                (board, Some(parent.id))
            }
            None => {
                let Some(b) = &new.board else {
                    return Err(Error::invalid_field(
                        "board",
                        "A board is required unless parent_task is given.",
                    ));
                };
                (self.visible_board(actor, b).await?, None)
            }
        };
        if board.is_archived {
            return Err(Error::not_found());
        }
        let columns = self.ports.boards.board_states(org, board.id).await?;
        let state = match new.state {
            Some(id) => live_column(&columns, id)?,
            None => default_column(&columns)?,
        };
        let owner = match new.owner {
            Some(o) => Some(self.check_owner(actor, o, &board).await?),
            None => None,
        };
        let now = self.ports.clock.now();
        let task = NewTask {
            id: TaskId::new(),
            org_id: org,
            board_id: board.id,
            state_id: state.id,
            parent_id: parent,
            title,
            description,
            owner,
            priority: new.priority,
            estimate: new.estimate,
            start_date: new.start_date,
            due_date: new.due_date,
            completed_at: state.category.is_closed().then_some(now),
            created_by: actor.person_id(),
            created_by_agent: actor.agent_name.as_ref().map(|a| a.as_str().to_owned()),
            column_limit: MAX_COLUMN_TASKS,
        };
        let event = record("created", actor, json!({"state": state.id.to_string()}));
        Ok((self.insert_task(&task, &event).await?, columns))
    }

    /// Stores a new task: the store checks the column's room ([`MAX_COLUMN_TASKS`]) and the
    /// sub-task nesting under the board's lock, and numbers it.
    async fn insert_task(&self, task: &NewTask, event: &NewTaskEvent) -> Result<Task, Error> {
        match self.ports.tasks.create_task(task, event).await {
            Ok(t) => Ok(t),
            // The number is taken under the board row's lock, so this cannot happen unless
            // the board's counter was moved behind its tasks.
            Err(RepoError::Conflict { constraint }) if constraint.contains("number") => {
                Err(Error::new(
                    ErrorCode::IdentifierAllocationFailed,
                    "No task key could be allocated; retry with the same Idempotency-Key.",
                ))
            }
            Err(e) => Err(refused_write(e)),
        }
    }

    /// Saves a task guarded by its version: a version that moved meanwhile is
    /// `version_conflict` with the stored one.
    async fn save(&self, task: &Task, event: NewTaskEvent) -> Result<Task, Error> {
        match self.ports.tasks.save_task(task, &event).await {
            Ok(t) => Ok(t),
            Err(RepoError::Conflict { constraint }) if constraint == "version" => {
                let current = self.ports.tasks.get_task(task.org_id, task.id).await?;
                Err(version_conflict(current.version))
            }
            Err(e) => Err(refused_write(e)),
        }
    }

    /// `PATCH tasks/{t}/`.
    pub async fn update_task(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        patch: TaskPatch,
        expected: Option<i64>,
    ) -> Result<Task, Error> {
        let (mut task, board) = self.writable_task(actor, task, expected).await?;
        let before = task.clone();
        if let Some(title) = &patch.title {
            task.title = check_title(title)?;
        }
        if let Some(d) = &patch.description {
            task.description = check_description(d)?;
        }
        if let Some(p) = patch.priority {
            task.priority = p.map(crate::check_priority).transpose()?;
        }
        if let Some(e) = patch.estimate {
            task.estimate = e.map(check_estimate).transpose()?;
        }
        if let Some(d) = patch.start_date {
            task.start_date = d;
        }
        if let Some(d) = patch.due_date {
            task.due_date = d;
        }
        check_dates(task.start_date, task.due_date)?;
        if let Some(m) = patch.milestone {
            if m.is_some() {
                // No milestone exists yet, so none is on the board's project.
                return Err(Error::new(
                    ErrorCode::MilestoneNotOnProject,
                    "That milestone is not on the board's project.",
                ));
            }
            task.milestone_id = None;
        }
        if let Some(o) = patch.owner {
            task.owner = match o {
                Some(o) => Some(self.check_owner(actor, o, &board).await?),
                None => None,
            };
        }
        if let Some(state) = patch.state
            && state != task.state_id
        {
            let state = self.live_state_of(&board, state).await?;
            self.check_column_room(&board, state.id).await?;
            self.place_in_column(&mut task, &state, None).await?;
        }
        let changed = changed_fields(&before, &task);
        let event = record("updated", actor, json!({ "fields": changed }));
        self.save(&task, event).await
    }

    /// Puts the task in `state` at `rank` (last when `None`), setting or clearing
    /// `completed_at` as the column is closed or not.
    async fn place_in_column(
        &self,
        task: &mut Task,
        state: &State,
        rank: Option<i64>,
    ) -> Result<(), Error> {
        let rank = match rank {
            Some(r) => r,
            None => {
                let column = self.ports.tasks.column_ranks(task.org_id, state.id).await?;
                let last = column
                    .iter()
                    .filter(|(id, _)| *id != task.id)
                    .map(|(_, r)| *r)
                    .max();
                match rank_between(last, None) {
                    Some(r) => r,
                    None => {
                        self.ports
                            .tasks
                            .respace_column(task.org_id, state.id)
                            .await?;
                        (column.len() as i64 + 1) * RANK_STEP
                    }
                }
            }
        };
        let closed = state.category.is_closed();
        if closed && task.completed_at.is_none() {
            task.completed_at = Some(self.ports.clock.now());
        } else if !closed {
            task.completed_at = None;
        }
        task.state_id = state.id;
        task.rank = rank;
        Ok(())
    }

    /// `POST tasks/{t}/move/`: into a live column of the task's board, before or after a task
    /// of that column (`rank_neighbor_missing` naming its head and tail when that task is not
    /// there), else last.
    pub async fn move_task(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        to: MoveTask,
        expected: Option<i64>,
    ) -> Result<Task, Error> {
        let (mut task, board) = self.writable_task(actor, task, expected).await?;
        let state_id = to.state.unwrap_or(task.state_id);
        let state = self.live_state_of(&board, state_id).await?;
        if state.id != task.state_id {
            self.check_column_room(&board, state.id).await?;
        }
        let from_state = task.state_id;
        let rank = if to.before.is_some() || to.after.is_some() {
            Some(self.neighbour_rank(actor, &task, &state, &to).await?)
        } else {
            None
        };
        self.place_in_column(&mut task, &state, rank).await?;
        let event = record(
            "moved",
            actor,
            json!({"from_state": from_state.to_string(), "to_state": state.id.to_string()}),
        );
        self.save(&task, event).await
    }

    /// The rank just before `to.before` / just after `to.after` in the column (respacing the
    /// column when the neighbours touch).
    async fn neighbour_rank(
        &self,
        actor: &PlanActor,
        task: &Task,
        state: &State,
        to: &MoveTask,
    ) -> Result<i64, Error> {
        let org = task.org_id;
        // A neighbour the caller cannot see, or that does not exist, is not in the column.
        let resolve = |r: &Option<TaskRef>| {
            let r = r.clone();
            async move {
                match r {
                    None => Ok(None),
                    Some(r) => match self.visible_task(actor, &r).await {
                        Ok(t) => Ok(Some(Some(t.id))),
                        Err(e) if e.code() == ErrorCode::NotFound => Ok(Some(None)),
                        Err(e) => Err(e),
                    },
                }
            }
        };
        let before: Option<Option<TaskId>> = resolve(&to.before).await?;
        let after: Option<Option<TaskId>> = resolve(&to.after).await?;
        for attempt in 0..2 {
            let column: Vec<(TaskId, i64)> = self
                .ports
                .tasks
                .column_ranks(org, state.id)
                .await?
                .into_iter()
                .filter(|(id, _)| *id != task.id)
                .collect();
            let position = |wanted: Option<Option<TaskId>>| match wanted {
                None => Ok(None),
                Some(id) => id
                    .and_then(|id| column.iter().position(|(c, _)| *c == id))
                    .map(Some)
                    .ok_or(()),
            };
            let (Ok(before), Ok(after)) = (position(before), position(after)) else {
                return Err(self.rank_neighbor_missing(org, &column).await?);
            };
            let (prev, next) = match (after, before) {
                (Some(a), Some(b)) if a + 1 != b => {
                    return Err(self.rank_neighbor_missing(org, &column).await?);
                }
                (Some(a), _) => (Some(column[a].1), column.get(a + 1).map(|c| c.1)),
                (None, Some(b)) => (b.checked_sub(1).map(|p| column[p].1), Some(column[b].1)),
                (None, None) => (column.last().map(|c| c.1), None),
            };
            if let Some(rank) = rank_between(prev, next) {
                return Ok(rank);
            }
            if attempt == 0 {
                self.ports.tasks.respace_column(org, state.id).await?;
            }
        }
        Err(Error::new(
            ErrorCode::RankNeighborMissing,
            "The column changed meanwhile; retry.",
        ))
    }

    async fn rank_neighbor_missing(
        &self,
        org: OrgId,
        column: &[(TaskId, i64)],
    ) -> Result<Error, Error> {
        let mut ends = [None, None];
        for (slot, end) in ends.iter_mut().zip([column.first(), column.last()]) {
            if let Some((id, _)) = end {
                *slot = Some(self.ports.tasks.get_task(org, *id).await?.key());
            }
        }
        let [head, tail] = ends;
        Ok(Error::new(
            ErrorCode::RankNeighborMissing,
            "That neighbour is not in the target column.",
        )
        .with_extra("head", head)
        .with_extra("tail", tail))
    }

    /// `POST tasks/{t}/move-board/`: onto another board's live column (its default when none
    /// is named), with a new key there. Sub-tasks and tasks with live sub-tasks stay.
    pub async fn move_task_to_board(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        board: &BoardRef,
        state: Option<StateId>,
        expected: Option<i64>,
    ) -> Result<Task, Error> {
        let (mut task, from) = self.writable_task(actor, task, expected).await?;
        let target = self.visible_board(actor, board).await?;
        if target.is_archived {
            return Err(Error::not_found());
        }
        if task.parent_id.is_some() {
            return Err(subtask_cross_board(
                "A sub-task stays on its parent's board.",
            ));
        }
        let children = self
            .ports
            .tasks
            .list_tasks(
                task.org_id,
                &TaskFilter {
                    boards: vec![ListedBoard::from(&from)],
                    parent: Some(task.id),
                    ..TaskFilter::default()
                },
                TaskSort::default(),
                PageRequest {
                    offset: 0,
                    limit: 1,
                },
            )
            .await?;
        if children.count > 0 {
            return Err(subtask_cross_board(
                "A task with live sub-tasks stays on its board.",
            ));
        }
        let state = match state {
            Some(id) => match self.live_state_of(&target, id).await {
                Ok(s) => s,
                Err(e) if e.code() == ErrorCode::StateNotOnBoard => {
                    return Err(Error::new(
                        ErrorCode::MoveBoardStateInvalid,
                        "That state is not a live column of the target board.",
                    )
                    .with_extra("parameter", "state"));
                }
                Err(e) => return Err(e),
            },
            None => self.default_state(&target).await?,
        };
        if target.id == from.id {
            return self
                .move_task(
                    actor,
                    &TaskRef::Id(task.id),
                    MoveTask {
                        state: Some(state.id),
                        ..MoveTask::default()
                    },
                    Some(task.version),
                )
                .await;
        }
        self.check_column_room(&target, state.id).await?;
        let old_key = task.key();
        self.place_in_column(&mut task, &state, Some(0)).await?;
        task.board_id = target.id;
        task.board_key = target.key.clone();
        let event = record(
            "moved_board",
            actor,
            json!({
                "from_board": from.id.to_string(), "to_board": target.id.to_string(),
                "from_key": old_key,
            }),
        );
        match self.ports.tasks.save_task_on_board(&task, &event).await {
            Ok(t) => Ok(t),
            Err(RepoError::Conflict { constraint }) if constraint == "version" => {
                let current = self.ports.tasks.get_task(task.org_id, task.id).await?;
                Err(version_conflict(current.version))
            }
            Err(e) => Err(refused_write(e)),
        }
    }

    /// The parent `task` would get from `parent` (none: a top-level task), checked against the
    /// sub-task rules of creation ([`can_take_subtasks`]) and those of a task that already
    /// exists: not its own parent (`invalid_relation`), on its board (`subtask_cross_board`),
    /// and without sub-tasks of its own, archived ones included, which would then nest two
    /// levels (`subtask_depth_exceeded`).
    pub async fn new_parent(
        &self,
        actor: &PlanActor,
        task: &Task,
        parent: Option<&TaskRef>,
    ) -> Result<Option<Task>, Error> {
        let Some(parent) = parent else {
            return Ok(None);
        };
        let parent = self.visible_task(actor, parent).await?;
        if parent.id == task.id {
            return Err(Error::new(
                ErrorCode::InvalidRelation,
                "A task cannot be its own parent.",
            )
            .with_extra("parameter", "parent"));
        }
        can_take_subtasks(&parent)?;
        if parent.board_id != task.board_id {
            return Err(subtask_cross_board(
                "A sub-task goes on its parent's board.",
            ));
        }
        if self.ports.tasks.has_subtasks(task.org_id, task.id).await? {
            return Err(subtask_depth_exceeded(
                "A task with sub-tasks cannot become a sub-task.",
            ));
        }
        Ok(Some(parent))
    }

    /// Makes `task` a sub-task of `parent`, or a top-level task with none (`set_parent` of
    /// `tasks/bulk/`; rules in [`Self::new_parent`]). An unchanged parent is answered as is.
    pub async fn set_task_parent(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        parent: Option<&TaskRef>,
        expected: Option<i64>,
    ) -> Result<Task, Error> {
        let (mut task, _) = self.writable_task(actor, task, expected).await?;
        let to = self.new_parent(actor, &task, parent).await?.map(|p| p.id);
        if to == task.parent_id {
            return Ok(task);
        }
        let id = |p: Option<TaskId>| p.map(|p| p.to_string());
        let event = record(
            "updated",
            actor,
            json!({"fields": ["parent"], "from_parent": id(task.parent_id), "to_parent": id(to)}),
        );
        task.parent_id = to;
        self.save(&task, event).await
    }

    /// `POST tasks/{t}/archive/` (or its dry run, which writes nothing). An archived task
    /// stays archived (answered as is).
    pub async fn archive_task(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        dry_run: bool,
        expected: Option<i64>,
    ) -> Result<Archived, Error> {
        let mut task = self.visible_task(actor, task).await?;
        check_version(&task, expected)?;
        if dry_run {
            return Ok(Archived::Preview(
                Preview::new(
                    "task.archive",
                    format!("Archives {}; it can be restored.", task.key()),
                )
                .affects("tasks", 1)
                .restorable(Restore::Task(task.key())),
            ));
        }
        if task.is_archived {
            return Ok(Archived::Done(Box::new(task)));
        }
        task.is_archived = true;
        task.archived_at = Some(self.ports.clock.now());
        let event = record("archived", actor, json!({}));
        Ok(Archived::Done(Box::new(self.save(&task, event).await?)))
    }

    /// `POST tasks/{t}/restore/`: live again in its column, unless that column (or its board)
    /// is archived (`state_in_use`). A live task is answered as is.
    pub async fn restore_task(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        expected: Option<i64>,
    ) -> Result<Task, Error> {
        let mut task = self.visible_task(actor, task).await?;
        check_version(&task, expected)?;
        if !task.is_archived {
            return Ok(task);
        }
        let board = self
            .ports
            .boards
            .get_board(task.org_id, task.board_id)
            .await?;
        let state = self.board_state(&board, task.state_id).await?;
        if board.is_archived || state.is_archived {
            return Err(Error::new(
                ErrorCode::StateInUse,
                "The task's column (or board) is archived; restore it first.",
            ));
        }
        self.check_column_room(&board, state.id).await?;
        task.is_archived = false;
        task.archived_at = None;
        task.archived_with_board = false;
        let event = record("restored", actor, json!({}));
        self.save(&task, event).await
    }

    /// `POST tasks/{t}/duplicate/`: a new task on the same board and column with the chosen
    /// fields copied (all of them when none are named). The title is always copied: a task
    /// needs one.
    pub async fn duplicate_task(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        include: Option<Vec<CopyField>>,
    ) -> Result<Task, Error> {
        let (source, board) = self.writable_task(actor, task, None).await?;
        let fields = include.unwrap_or_else(|| CopyField::ALL.to_vec());
        let has = |f: CopyField| fields.contains(&f);
        let columns = self
            .ports
            .boards
            .board_states(board.org_id, board.id)
            .await?;
        let state = match live_column(&columns, source.state_id) {
            Ok(s) => s,
            Err(_) => default_column(&columns)?,
        };
        let owner = match source.owner.filter(|_| has(CopyField::Owner)) {
            Some(o) => self.check_owner(actor, PersonRef::Id(o), &board).await.ok(),
            None => None,
        };
        let now = self.ports.clock.now();
        let copy = NewTask {
            id: TaskId::new(),
            org_id: source.org_id,
            board_id: board.id,
            state_id: state.id,
            parent_id: source.parent_id,
            title: source.title.clone(),
            description: if has(CopyField::Description) {
                source.description.clone()
            } else {
                String::new()
            },
            owner,
            priority: source.priority.filter(|_| has(CopyField::Priority)),
            estimate: source.estimate.filter(|_| has(CopyField::Estimate)),
            start_date: source.start_date.filter(|_| has(CopyField::StartDate)),
            due_date: source.due_date.filter(|_| has(CopyField::DueDate)),
            completed_at: state.category.is_closed().then_some(now),
            created_by: actor.person_id(),
            created_by_agent: actor.agent_name.as_ref().map(|a| a.as_str().to_owned()),
            column_limit: MAX_COLUMN_TASKS,
        };
        let event = record(
            "created",
            actor,
            json!({"state": state.id.to_string(), "duplicate_of": source.key()}),
        );
        self.insert_task(&copy, &event).await
    }

    /// The ids of the live boards the caller sees.
    pub async fn visible_boards_listed(
        &self,
        actor: &PlanActor,
    ) -> Result<Vec<ListedBoard>, Error> {
        let filter = crate::boards::BoardFilter {
            viewer: self.viewer(actor).await?,
            search: None,
            start_date: None,
            end_date: None,
            project: None,
            include_archived: false,
        };
        let boards = self
            .ports
            .boards
            .list_boards(actor.org_id(), &filter, PageRequest::all())
            .await?;
        Ok(boards.results.iter().map(ListedBoard::from).collect())
    }

    /// Resolves a list request into a filter over the caller's visible boards.
    pub async fn task_filter(
        &self,
        actor: &PlanActor,
        query: &TaskQuery,
    ) -> Result<(TaskFilter, TaskSort), Error> {
        for (name, values) in [("owner", &query.owners), ("milestone", &query.milestones)] {
            if values.len() > MAX_FILTER_VALUES {
                return Err(too_many(name));
            }
        }
        let sort = query
            .sort
            .as_deref()
            .map(parse_sort)
            .transpose()?
            .unwrap_or_default();
        if query.labels.len() > MAX_FILTER_VALUES {
            return Err(
                Error::new(ErrorCode::InvalidLabelFilter, "At most 50 label filters.")
                    .with_extra("parameter", "label")
                    .with_extra("limit", MAX_FILTER_VALUES),
            );
        }
        let labels = query
            .labels
            .iter()
            .map(|l| {
                Uuid::parse_str(l).map_err(|_| {
                    Error::new(
                        ErrorCode::InvalidLabelFilter,
                        "A label filter is a label uuid.",
                    )
                    .with_extra("parameter", "label")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let milestones = query
            .milestones
            .iter()
            .map(|m| Uuid::parse_str(m).map_err(|_| invalid_filter("milestone")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut owners = Vec::with_capacity(query.owners.len());
        for o in &query.owners {
            owners.push(match o.as_str() {
                "me" => OwnerFilter::Person(actor.person()?.id),
                "unowned" => OwnerFilter::Unowned,
                other => OwnerFilter::Person(UserId(
                    Uuid::parse_str(other).map_err(|_| invalid_filter("owner"))?,
                )),
            });
        }
        let involving = match query.involving {
            Some(i) => Some((actor.person()?.id, i)),
            None => None,
        };
        if query.boards.len() > MAX_FILTER_VALUES {
            return Err(too_many("board"));
        }
        let boards = if query.boards.is_empty() {
            self.visible_boards_listed(actor).await?
        } else {
            let mut listed = Vec::with_capacity(query.boards.len());
            for b in &query.boards {
                listed.push(ListedBoard::from(&self.visible_board(actor, b).await?));
            }
            listed
        };
        let filter = TaskFilter {
            boards,
            state: query.state,
            owners,
            labels,
            milestones,
            has_dates: query.has_dates,
            parent: None,
            search: query.search.clone(),
            involving,
            open_only: query.open_only,
        };
        Ok((filter, sort))
    }

    /// `GET tasks/` (and the lists built on it): live tasks of the boards the caller sees.
    /// Their answers name each task's column from its board's columns
    /// ([`Self::task_context_knowing`]), which the board cache keeps.
    pub async fn list_tasks(
        &self,
        actor: &PlanActor,
        query: &TaskQuery,
        page: PageRequest,
    ) -> Result<Page<Task>, Error> {
        let (filter, sort) = self.task_filter(actor, query).await?;
        if filter.boards.is_empty() {
            return Ok(Page {
                count: 0,
                results: Vec::new(),
            });
        }
        Ok(self
            .ports
            .tasks
            .list_tasks(actor.org_id(), &filter, sort, page)
            .await?)
    }

    /// `GET search/`: live tasks whose title, description or key holds `q` (2 to 256
    /// characters).
    pub async fn search_tasks(
        &self,
        actor: &PlanActor,
        q: &str,
        page: PageRequest,
    ) -> Result<Page<Task>, Error> {
        let q = q.trim();
        let n = q.chars().count();
        if n < 2 {
            return Err(Error::new(
                ErrorCode::SearchQueryTooShort,
                "Search with at least 2 characters.",
            )
            .with_extra("parameter", "q"));
        }
        if n > 256 {
            return Err(Error::new(
                ErrorCode::SearchQueryTooLong,
                "Search with at most 256 characters.",
            )
            .with_extra("parameter", "q"));
        }
        let query = TaskQuery {
            search: Some(q.to_owned()),
            sort: Some("-updated_at".into()),
            ..TaskQuery::default()
        };
        self.list_tasks(actor, &query, page).await
    }

    /// `GET tasks/{t}/children/`: its live sub-tasks.
    pub async fn task_children(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        sort: Option<&str>,
    ) -> Result<Vec<Task>, Error> {
        let task = self.visible_task(actor, task).await?;
        self.children_of(&task, sort).await
    }

    /// The live sub-tasks of a task the caller sees.
    pub async fn children_of(&self, task: &Task, sort: Option<&str>) -> Result<Vec<Task>, Error> {
        let sort = sort.map(parse_sort).transpose()?.unwrap_or_default();
        let filter = TaskFilter {
            boards: vec![ListedBoard {
                id: task.board_id,
                key: task.board_key.clone(),
            }],
            parent: Some(task.id),
            ..TaskFilter::default()
        };
        Ok(self
            .ports
            .tasks
            .list_tasks(task.org_id, &filter, sort, PageRequest::all())
            .await?
            .results)
    }

    /// `GET tasks/{t}/events/` and `…/activity/`: its event log, oldest first.
    pub async fn task_events(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        filter: &EventFilter,
        page: PageRequest,
    ) -> Result<Page<TaskEvent>, Error> {
        let task = self.visible_task(actor, task).await?;
        self.events_of(&task, filter, page).await
    }

    pub async fn events_of(
        &self,
        task: &Task,
        filter: &EventFilter,
        page: PageRequest,
    ) -> Result<Page<TaskEvent>, Error> {
        Ok(self
            .ports
            .tasks
            .task_events(task.org_id, task.id, filter, page)
            .await?)
    }

    /// `GET me/tasks/counts/`: the caller's open owned tasks by bucket.
    pub async fn my_task_counts(&self, actor: &PlanActor) -> Result<TaskCounts, Error> {
        let me = actor.person()?.id;
        let query = TaskQuery {
            owners: vec![me.0.to_string()],
            ..TaskQuery::default()
        };
        let (filter, sort) = self.task_filter(actor, &query).await?;
        let tasks = self
            .ports
            .tasks
            .list_tasks(actor.org_id(), &filter, sort, PageRequest::all())
            .await?
            .results;
        let mut states = std::collections::HashMap::new();
        for board in filter.boards.iter().map(|b| b.id) {
            for s in self
                .ports
                .boards
                .board_states(actor.org_id(), board)
                .await?
            {
                states.insert(s.id, s.category);
            }
        }
        let now = self.ports.clock.now();
        Ok(TaskCounts::of(&tasks, &states, now))
    }
}

/// What a task's answer names besides the task: its column, owner and parent.
#[derive(Debug, Clone, Default)]
pub struct TaskContext {
    pub states: std::collections::HashMap<StateId, State>,
    pub people: std::collections::HashMap<UserId, teamcomm_org::User>,
    pub parents: std::collections::HashMap<TaskId, Task>,
}

impl Plan {
    /// The columns, owners and parents of these tasks (one read per board, one of all the
    /// owners, one of the parents not among the tasks).
    pub async fn task_context(&self, org: OrgId, tasks: &[Task]) -> Result<TaskContext, Error> {
        self.task_context_knowing(org, tasks, Vec::new()).await
    }

    /// [`Self::task_context`] given columns already read: the boards they are on are not read
    /// again, so they hold the column of each of these tasks on those boards (a board's
    /// columns, or a page's with its tasks).
    pub async fn task_context_knowing(
        &self,
        org: OrgId,
        tasks: &[Task],
        columns: Vec<State>,
    ) -> Result<TaskContext, Error> {
        let mut ctx = TaskContext::default();
        let mut boards: std::collections::HashSet<BoardId> =
            columns.iter().map(|s| s.board_id).collect();
        ctx.states.extend(columns.into_iter().map(|s| (s.id, s)));
        for t in tasks {
            if boards.insert(t.board_id) {
                for s in self.ports.boards.board_states(org, t.board_id).await? {
                    ctx.states.insert(s.id, s);
                }
            }
        }
        ctx.people = self
            .people(org, tasks.iter().filter_map(|t| t.owner))
            .await?;
        ctx.parents = self.parents_of(org, tasks).await?;
        Ok(ctx)
    }

    /// The parents of these tasks: those among them as they are, the others in one read.
    async fn parents_of(
        &self,
        org: OrgId,
        tasks: &[Task],
    ) -> Result<std::collections::HashMap<TaskId, Task>, Error> {
        let mut parents = std::collections::HashMap::new();
        let mut missing = Vec::new();
        for p in tasks.iter().filter_map(|t| t.parent_id) {
            match tasks.iter().find(|t| t.id == p) {
                Some(known) => {
                    parents.insert(p, known.clone());
                }
                None => missing.push(p),
            }
        }
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let read = self.ports.tasks.tasks_by_ids(org, &missing).await?;
            parents.extend(read.into_iter().map(|t| (t.id, t)));
        }
        Ok(parents)
    }

    /// The people of the organization named by these ids (actors, authors, participants),
    /// skipping those gone: one read for all of them, none for no id.
    pub async fn people(
        &self,
        org: OrgId,
        ids: impl IntoIterator<Item = UserId>,
    ) -> Result<std::collections::HashMap<UserId, teamcomm_org::User>, Error> {
        let mut ids: Vec<UserId> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Ok(std::collections::HashMap::new());
        }
        let found = self.ports.people.users_by_ids(org, &ids).await?;
        Ok(found.into_iter().map(|u| (u.id, u)).collect())
    }
}

/// `GET me/tasks/counts/`: a person's owned live tasks by bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskCounts {
    /// Not done or canceled.
    pub open: u64,
    /// Open with a due date before today.
    pub overdue: u64,
    /// Open and due today.
    pub due_today: u64,
    /// Open in an `in_progress` column.
    pub in_progress: u64,
    /// Completed since Monday 00:00 UTC.
    pub done_this_week: u64,
}

impl TaskCounts {
    fn of(
        tasks: &[Task],
        states: &std::collections::HashMap<StateId, crate::StateCategory>,
        now: OffsetDateTime,
    ) -> TaskCounts {
        let today = now.date();
        let monday =
            today - time::Duration::days(i64::from(today.weekday().number_days_from_monday()));
        let mut c = TaskCounts::default();
        for t in tasks {
            let category = states.get(&t.state_id).copied();
            let closed = category.is_some_and(|c| c.is_closed());
            if closed {
                if t.completed_at.is_some_and(|at| at.date() >= monday)
                    && category == Some(crate::StateCategory::Done)
                {
                    c.done_this_week += 1;
                }
                continue;
            }
            c.open += 1;
            if t.due_date.is_some_and(|d| d < today) {
                c.overdue += 1;
            }
            if t.due_date == Some(today) {
                c.due_today += 1;
            }
            if category == Some(crate::StateCategory::InProgress) {
                c.in_progress += 1;
            }
        }
        c
    }
}

fn check_version(task: &Task, expected: Option<i64>) -> Result<(), Error> {
    match expected {
        Some(v) if v != task.version => Err(version_conflict(task.version)),
        _ => Ok(()),
    }
}

/// `user_inactive`, naming the parameter and the people.
pub fn user_inactive(parameter: &str, ids: &[UserId]) -> Error {
    Error::new(ErrorCode::UserInactive, "That person is deactivated.")
        .with_extra("parameter", parameter)
        .with_extra(
            "uuids",
            ids.iter().map(|u| u.0.to_string()).collect::<Vec<_>>(),
        )
}

fn changed_fields(before: &Task, after: &Task) -> Vec<&'static str> {
    let mut fields = Vec::new();
    let mut check = |name, changed: bool| {
        if changed {
            fields.push(name);
        }
    };
    check("title", before.title != after.title);
    check("description", before.description != after.description);
    check("state", before.state_id != after.state_id);
    check("owner", before.owner != after.owner);
    check("priority", before.priority != after.priority);
    check("estimate", before.estimate != after.estimate);
    check("start_date", before.start_date != after.start_date);
    check("due_date", before.due_date != after.due_date);
    check("milestone", before.milestone_id != after.milestone_id);
    fields
}

mod grouped;

pub use grouped::{
    GroupBy, Grouped, GroupedQuery, MAX_TASKS_PER_GROUP, NONE_KEY, TaskGroup, parse_priority_filter,
};

#[cfg(test)]
mod tests;
