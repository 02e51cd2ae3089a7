//! In memory: the tasks part of [`super::PlanState`] and [`TaskRepository`].

use std::cmp::Ordering;
use std::collections::HashMap;

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{InMemoryPlan, PlanState};
use crate::ports::{
    COLUMN_FULL, COLUMN_GONE, EventFilter, Involvement, NewTask, NewTaskEvent, OwnerFilter,
    SUBTASK_ONE_LEVEL, TaskEvent, TaskFilter, TaskRepository, TaskSort, TaskSortKey,
};
use crate::tasks::RANK_STEP;
use crate::{BoardId, StateId, Task, TaskId};

#[derive(Debug, Default)]
pub struct TasksMem {
    pub tasks: Vec<Task>,
    pub events: Vec<(OrgId, TaskEvent)>,
    /// Each board's next task number (`plan_boards.next_task_number`).
    pub next_numbers: HashMap<BoardId, i64>,
    /// Tasks that left a board: (old board, task, when).
    pub departures: Vec<(BoardId, TaskId, OffsetDateTime)>,
    /// The last `updated_at` given (stamps strictly increase, as `clock_timestamp()` does).
    pub last_stamp: Option<OffsetDateTime>,
}

impl PlanState {
    fn board_key(&self, org: OrgId, board: BoardId) -> Result<String, RepoError> {
        self.boards
            .boards
            .iter()
            .find(|b| b.id == board && b.org_id == org)
            .map(|b| b.key.clone())
            .ok_or(RepoError::NotFound)
    }

    /// The task with its board's current key.
    fn task_view(&self, t: &Task) -> Task {
        let mut t = t.clone();
        if let Ok(key) = self.board_key(t.org_id, t.board_id) {
            t.board_key = key;
        }
        t
    }

    fn end_of_column(&self, state: StateId, except: TaskId) -> i64 {
        self.tasks
            .tasks
            .iter()
            .filter(|t| t.state_id == state && !t.is_archived && t.id != except)
            .map(|t| t.rank)
            .max()
            .unwrap_or(0)
            + RANK_STEP
    }

    /// The store's own check of one-level nesting (Postgres: `plan_tasks_one_level`).
    fn check_one_level(&self, task: TaskId, parent: TaskId) -> Result<(), RepoError> {
        let tasks = &self.tasks.tasks;
        let nested = tasks
            .iter()
            .any(|t| t.id == parent && t.parent_id.is_some())
            || tasks.iter().any(|t| t.parent_id == Some(task));
        if nested {
            return Err(RepoError::Conflict {
                constraint: SUBTASK_ONE_LEVEL.into(),
            });
        }
        Ok(())
    }

    /// The store's own check that a live task is in a live column of its board (Postgres:
    /// `plan_task_column_live`).
    fn check_column_live(&self, board: BoardId, state: StateId) -> Result<(), RepoError> {
        let states = &self.boards.states;
        if states
            .iter()
            .any(|s| s.id == state && s.board_id == board && !s.is_archived)
        {
            return Ok(());
        }
        Err(RepoError::Conflict {
            constraint: COLUMN_GONE.into(),
        })
    }

    fn take_number(&mut self, board: BoardId) -> i64 {
        let next = self.tasks.next_numbers.entry(board).or_insert(1);
        let n = *next;
        *next += 1;
        n
    }

    fn push_event(&mut self, task: &Task, event: &NewTaskEvent, board: BoardId) {
        self.tasks.events.push((
            task.org_id,
            TaskEvent {
                id: Uuid::now_v7(),
                task_id: task.id,
                board_id: board,
                kind: event.kind.to_owned(),
                actor: event.by.user,
                agent_name: event.by.agent.clone(),
                data: event.data.clone(),
                created_at: task.updated_at,
            },
        ));
    }

    /// Whether the person participates in or watches the task (the social part of the state).
    fn participates(&self, org: OrgId, task: TaskId, user: teamcomm_kernel::UserId) -> bool {
        self.social
            .participants
            .iter()
            .any(|(o, p)| *o == org && p.task == task && p.user == user)
    }

    /// Whether the task carries any of these labels (the social part of the state).
    fn carries_any(&self, org: OrgId, task: TaskId, labels: &[Uuid]) -> bool {
        self.social
            .task_labels
            .iter()
            .any(|(o, t, l)| *o == org && *t == task && labels.contains(&l.0))
    }

    fn matches(&self, org: OrgId, t: &Task, f: &TaskFilter) -> bool {
        let involved = |user, how: Involvement| {
            let owns = t.owner == Some(user);
            let participates = self.participates(org, t.id, user);
            match how {
                Involvement::Owned => owns,
                Involvement::Participating => participates,
                Involvement::Involved => owns || participates,
            }
        };
        let closed = self
            .boards
            .states
            .iter()
            .find(|s| s.id == t.state_id)
            .is_some_and(|s| s.category.is_closed());
        t.org_id == org
            && !t.is_archived
            && f.boards.iter().any(|b| b.id == t.board_id)
            && f.state.is_none_or(|s| s == t.state_id)
            && (f.owners.is_empty()
                || f.owners.iter().any(|o| match o {
                    OwnerFilter::Person(u) => t.owner == Some(*u),
                    OwnerFilter::Unowned => t.owner.is_none(),
                }))
            && (f.labels.is_empty() || self.carries_any(org, t.id, &f.labels))
            && (f.milestones.is_empty()
                || t.milestone_id.is_some_and(|m| f.milestones.contains(&m)))
            && f.has_dates
                .is_none_or(|want| want == (t.start_date.is_some() || t.due_date.is_some()))
            && f.parent.is_none_or(|p| t.parent_id == Some(p))
            && f.search.as_ref().is_none_or(|q| {
                let q = q.to_lowercase();
                t.title.to_lowercase().contains(&q)
                    || t.description.to_lowercase().contains(&q)
                    || self.task_view(t).key().to_lowercase() == q
            })
            && f.involving.is_none_or(|(u, how)| involved(u, how))
            && (!f.open_only || !closed)
    }
}

/// The order of one sort key, nulls last either way (as the Postgres lists sort).
fn compare(key: TaskSortKey, descending: bool, a: &Task, b: &Task) -> Ordering {
    fn nulls_last<T: Ord>(a: Option<T>, b: Option<T>, descending: bool) -> Ordering {
        match (a, b) {
            (Some(a), Some(b)) if descending => b.cmp(&a),
            (Some(a), Some(b)) => a.cmp(&b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
    }
    let d = descending;
    match key {
        TaskSortKey::Rank => nulls_last(Some(a.rank), Some(b.rank), d),
        TaskSortKey::Priority => nulls_last(a.priority, b.priority, d),
        TaskSortKey::DueDate => nulls_last(a.due_date, b.due_date, d),
        TaskSortKey::StartDate => nulls_last(a.start_date, b.start_date, d),
        TaskSortKey::UpdatedAt => nulls_last(Some(a.updated_at), Some(b.updated_at), d),
        TaskSortKey::CreatedAt => nulls_last(Some(a.created_at), Some(b.created_at), d),
        TaskSortKey::CompletedAt => nulls_last(a.completed_at, b.completed_at, d),
    }
}

pub(crate) fn sort_tasks(tasks: &mut [Task], sort: TaskSort) {
    tasks.sort_by(|a, b| {
        compare(sort.key, sort.descending, a, b)
            .then(a.rank.cmp(&b.rank))
            .then(a.id.cmp(&b.id))
    });
}

fn page_of<T: Clone>(all: &[T], page: PageRequest) -> Page<T> {
    Page {
        count: all.len() as u64,
        results: all
            .iter()
            .skip(usize::try_from(page.offset).unwrap_or(usize::MAX))
            .take(usize::try_from(page.limit).unwrap_or(usize::MAX))
            .cloned()
            .collect(),
    }
}

impl InMemoryPlan {
    fn now(&self) -> OffsetDateTime {
        // Strictly increasing, so "since ≤ updated_at" splits writes as the database would.
        let mut st = self.lock();
        let now = match st.tasks.last_stamp {
            Some(last) => OffsetDateTime::now_utc().max(last + time::Duration::microseconds(1)),
            None => OffsetDateTime::now_utc(),
        };
        st.tasks.last_stamp = Some(now);
        now
    }
}

#[async_trait]
impl TaskRepository for InMemoryPlan {
    async fn create_task(&self, new: &NewTask, event: &NewTaskEvent) -> Result<Task, RepoError> {
        let now = self.now();
        let mut st = self.lock();
        let board_key = st.board_key(new.org_id, new.board_id)?;
        // As the numbering statement: only a live board numbers tasks.
        if st
            .boards
            .boards
            .iter()
            .any(|b| b.id == new.board_id && b.is_archived)
        {
            return Err(RepoError::NotFound);
        }
        st.check_column_live(new.board_id, new.state_id)?;
        if let Some(parent) = new.parent_id {
            st.check_one_level(new.id, parent)?;
        }
        let live =
            st.tasks.tasks.iter().filter(|t| {
                t.board_id == new.board_id && t.state_id == new.state_id && !t.is_archived
            });
        if live.count() as u64 >= new.column_limit {
            return Err(RepoError::Conflict {
                constraint: COLUMN_FULL.into(),
            });
        }
        let number = st.take_number(new.board_id);
        let rank = st.end_of_column(new.state_id, new.id);
        let task = Task {
            id: new.id,
            org_id: new.org_id,
            board_id: new.board_id,
            board_key,
            number,
            state_id: new.state_id,
            parent_id: new.parent_id,
            title: new.title.clone(),
            description: new.description.clone(),
            owner: new.owner,
            priority: new.priority,
            estimate: new.estimate,
            start_date: new.start_date,
            due_date: new.due_date,
            milestone_id: None,
            rank,
            version: 1,
            is_archived: false,
            archived_at: None,
            archived_with_board: false,
            completed_at: new.completed_at,
            created_by: new.created_by,
            created_by_agent: new.created_by_agent.clone(),
            created_at: now,
            updated_at: now,
        };
        st.push_event(&task, event, task.board_id);
        st.tasks.tasks.push(task.clone());
        Ok(task)
    }

    async fn get_task(&self, org: OrgId, id: TaskId) -> Result<Task, RepoError> {
        let st = self.lock();
        st.tasks
            .tasks
            .iter()
            .find(|t| t.id == id && t.org_id == org)
            .map(|t| st.task_view(t))
            .ok_or(RepoError::NotFound)
    }

    async fn task_by_number(
        &self,
        org: OrgId,
        board: BoardId,
        number: i64,
    ) -> Result<Task, RepoError> {
        let st = self.lock();
        st.tasks
            .tasks
            .iter()
            .find(|t| t.board_id == board && t.number == number && t.org_id == org)
            .map(|t| st.task_view(t))
            .ok_or(RepoError::NotFound)
    }

    async fn save_task(&self, task: &Task, event: &NewTaskEvent) -> Result<Task, RepoError> {
        let now = self.now();
        let mut st = self.lock();
        let stored = st
            .tasks
            .tasks
            .iter()
            .find(|t| t.id == task.id && t.org_id == task.org_id)
            .ok_or(RepoError::NotFound)?;
        if stored.version != task.version || stored.board_id != task.board_id {
            return Err(RepoError::Conflict {
                constraint: "version".into(),
            });
        }
        if let Some(parent) = task.parent_id.filter(|p| stored.parent_id != Some(*p)) {
            st.check_one_level(task.id, parent)?;
        }
        if !task.is_archived && (stored.state_id != task.state_id || stored.is_archived) {
            st.check_column_live(task.board_id, task.state_id)?;
        }
        let stored = st
            .tasks
            .tasks
            .iter_mut()
            .find(|t| t.id == task.id && t.org_id == task.org_id)
            .ok_or(RepoError::NotFound)?;
        *stored = Task {
            version: task.version + 1,
            updated_at: now,
            number: stored.number,
            created_at: stored.created_at,
            ..task.clone()
        };
        let saved = stored.clone();
        st.push_event(&saved, event, saved.board_id);
        Ok(st.task_view(&saved))
    }

    async fn save_task_on_board(
        &self,
        task: &Task,
        event: &NewTaskEvent,
    ) -> Result<Task, RepoError> {
        let now = self.now();
        let mut st = self.lock();
        st.board_key(task.org_id, task.board_id)?;
        let index = st
            .tasks
            .tasks
            .iter()
            .position(|t| t.id == task.id && t.org_id == task.org_id)
            .ok_or(RepoError::NotFound)?;
        let old_board = st.tasks.tasks[index].board_id;
        if st.tasks.tasks[index].version != task.version {
            return Err(RepoError::Conflict {
                constraint: "version".into(),
            });
        }
        if !task.is_archived {
            st.check_column_live(task.board_id, task.state_id)?;
        }
        let number = st.take_number(task.board_id);
        let rank = st.end_of_column(task.state_id, task.id);
        let saved = Task {
            version: task.version + 1,
            updated_at: now,
            number,
            rank,
            created_at: st.tasks.tasks[index].created_at,
            ..task.clone()
        };
        st.tasks.tasks[index] = saved.clone();
        st.tasks.departures.push((old_board, task.id, now));
        st.push_event(&saved, event, old_board);
        Ok(st.task_view(&saved))
    }

    async fn has_subtasks(&self, org: OrgId, task: TaskId) -> Result<bool, RepoError> {
        let st = self.lock();
        Ok(st
            .tasks
            .tasks
            .iter()
            .any(|t| t.org_id == org && t.parent_id == Some(task)))
    }

    async fn list_tasks(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        sort: TaskSort,
        page: PageRequest,
    ) -> Result<Page<Task>, RepoError> {
        let st = self.lock();
        let mut found: Vec<Task> = st
            .tasks
            .tasks
            .iter()
            .filter(|t| st.matches(org, t, filter))
            .map(|t| {
                // Shown under the key the filter names its board by, as the store does.
                let mut t = st.task_view(t);
                if let Some(b) = filter.boards.iter().find(|b| b.id == t.board_id) {
                    t.board_key.clone_from(&b.key);
                }
                t
            })
            .collect();
        sort_tasks(&mut found, sort);
        Ok(page_of(&found, page))
    }

    async fn column_ranks(
        &self,
        org: OrgId,
        state: StateId,
    ) -> Result<Vec<(TaskId, i64)>, RepoError> {
        let st = self.lock();
        let mut column: Vec<(TaskId, i64)> = st
            .tasks
            .tasks
            .iter()
            .filter(|t| t.org_id == org && t.state_id == state && !t.is_archived)
            .map(|t| (t.id, t.rank))
            .collect();
        column.sort_by_key(|(id, rank)| (*rank, *id));
        Ok(column)
    }

    async fn respace_column(&self, org: OrgId, state: StateId) -> Result<(), RepoError> {
        let order = self.column_ranks(org, state).await?;
        let mut st = self.lock();
        for (i, (id, _)) in order.iter().enumerate() {
            if let Some(t) = st.tasks.tasks.iter_mut().find(|t| t.id == *id) {
                t.rank = (i as i64 + 1) * RANK_STEP;
            }
        }
        Ok(())
    }

    async fn count_column(
        &self,
        org: OrgId,
        board: BoardId,
        state: StateId,
        bound: u64,
    ) -> Result<u64, RepoError> {
        let st = self.lock();
        let live = st.tasks.tasks.iter().filter(|t| {
            t.org_id == org && t.board_id == board && t.state_id == state && !t.is_archived
        });
        Ok((live.count() as u64).min(bound))
    }

    async fn count_by_state(
        &self,
        org: OrgId,
        board: BoardId,
    ) -> Result<Vec<(StateId, u64)>, RepoError> {
        let st = self.lock();
        let mut counts: HashMap<StateId, u64> = HashMap::new();
        for t in st
            .tasks
            .tasks
            .iter()
            .filter(|t| t.org_id == org && t.board_id == board && !t.is_archived)
        {
            *counts.entry(t.state_id).or_default() += 1;
        }
        Ok(counts.into_iter().collect())
    }

    async fn task_events(
        &self,
        org: OrgId,
        task: TaskId,
        filter: &EventFilter,
        page: PageRequest,
    ) -> Result<Page<TaskEvent>, RepoError> {
        let st = self.lock();
        let found: Vec<TaskEvent> = st
            .tasks
            .events
            .iter()
            .filter(|(o, e)| {
                *o == org
                    && e.task_id == task
                    && filter.since.is_none_or(|s| e.created_at >= s)
                    && filter.kind.as_ref().is_none_or(|k| &e.kind == k)
            })
            .map(|(_, e)| e.clone())
            .collect();
        Ok(page_of(&found, page))
    }

    /// In memory every write is visible when it returns, so the cursor needs no lag: it is a
    /// fresh stamp, after every write so far and before every later one.
    async fn delta_cursor(&self) -> Result<OffsetDateTime, RepoError> {
        Ok(self.now())
    }

    async fn board_changes(
        &self,
        org: OrgId,
        board: BoardId,
        since: OffsetDateTime,
        until: OffsetDateTime,
    ) -> Result<Vec<Task>, RepoError> {
        let st = self.lock();
        let within = |at: OffsetDateTime| since <= at && at < until;
        let mut found: Vec<Task> = st
            .tasks
            .tasks
            .iter()
            .filter(|t| t.org_id == org && t.board_id == board && within(t.updated_at))
            .map(|t| st.task_view(t))
            .collect();
        for (old, id, at) in &st.tasks.departures {
            if *old == board
                && within(*at)
                && let Some(t) = st
                    .tasks
                    .tasks
                    .iter()
                    .find(|t| t.id == *id && t.org_id == org)
                && t.board_id != board
            {
                found.push(st.task_view(t));
            }
        }
        Ok(found)
    }

    async fn tasks_by_ids(&self, org: OrgId, ids: &[TaskId]) -> Result<Vec<Task>, RepoError> {
        let st = self.lock();
        let mut found: Vec<Task> = st
            .tasks
            .tasks
            .iter()
            .filter(|t| t.org_id == org && ids.contains(&t.id))
            .map(|t| st.task_view(t))
            .collect();
        found.sort_by_key(|t| t.id);
        Ok(found)
    }

    async fn live_subtasks_of(
        &self,
        org: OrgId,
        parents: &[TaskId],
    ) -> Result<Vec<Task>, RepoError> {
        let st = self.lock();
        let mut found: Vec<Task> = st
            .tasks
            .tasks
            .iter()
            .filter(|t| {
                t.org_id == org
                    && !t.is_archived
                    && t.parent_id.is_some_and(|p| parents.contains(&p))
            })
            .map(|t| st.task_view(t))
            .collect();
        found.sort_by_key(|t| (t.parent_id, t.rank, t.id));
        Ok(found)
    }
}
