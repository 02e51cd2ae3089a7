//! `GET tasks/board/`: the tasks of a slice grouped into columns by one dimension (category,
//! column, owner, priority, board, project, milestone, label) and, when asked, each column into
//! lanes by a second one; a window of each cell's cards.
//!
//! The slice is a task list request ([`TaskQuery`]: boards, owners, labels, milestones, search,
//! sort) narrowed by the view's own filters (columns, projects, priorities). A task with several
//! labels is in each of their groups; `total` counts it once. Groups and lanes with no cards are
//! not listed; the one of tasks without a value ("No owner") has the key [`NONE_KEY`] and comes
//! last.

use std::collections::{BTreeMap, HashMap};

use teamcomm_kernel::{Error, ErrorCode, PageRequest, UserId};
use teamcomm_labels::Label;

use super::{MAX_FILTER_VALUES, TaskQuery, too_many};
use crate::ports::ListedBoard;
use crate::projects::check_search;
use crate::{
    Board, BoardId, Plan, PlanActor, Project, ProjectId, State, StateCategory, StateId, Task,
    TaskId,
};

/// What tasks are grouped by (`group_by`) or laned by (`sub_group_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Category,
    State,
    Owner,
    Priority,
    Board,
    Project,
    Milestone,
    Label,
}

impl GroupBy {
    pub const ALL: [GroupBy; 8] = [
        GroupBy::Category,
        GroupBy::State,
        GroupBy::Owner,
        GroupBy::Priority,
        GroupBy::Board,
        GroupBy::Project,
        GroupBy::Milestone,
        GroupBy::Label,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Category => "category",
            GroupBy::State => "state",
            GroupBy::Owner => "owner",
            GroupBy::Priority => "priority",
            GroupBy::Board => "board",
            GroupBy::Project => "project",
            GroupBy::Milestone => "milestone",
            GroupBy::Label => "label",
        }
    }

    /// `group_by`: one of [`Self::ALL`] by name (`invalid_filter_value` with `extra.allowed`).
    pub fn parse(raw: &str) -> Result<GroupBy, Error> {
        Self::named(raw).ok_or_else(|| unknown_dimension("group_by", &[]))
    }

    /// `sub_group_by`: a dimension, or `none` for no lanes.
    pub fn parse_lanes(raw: &str) -> Result<Option<GroupBy>, Error> {
        if raw == NONE_KEY {
            return Ok(None);
        }
        Self::named(raw)
            .map(Some)
            .ok_or_else(|| unknown_dimension("sub_group_by", &[NONE_KEY]))
    }

    fn named(raw: &str) -> Option<GroupBy> {
        GroupBy::ALL.into_iter().find(|g| g.as_str() == raw)
    }
}

fn unknown_dimension(parameter: &str, more: &[&str]) -> Error {
    let mut allowed: Vec<&str> = GroupBy::ALL.iter().map(|g| g.as_str()).collect();
    allowed.extend_from_slice(more);
    Error::new(
        ErrorCode::InvalidFilterValue,
        format!("{parameter} is one of {}.", allowed.join(", ")),
    )
    .with_extra("parameter", parameter)
    .with_extra("allowed", allowed)
}

/// The key of the group (or lane) of tasks without a value, and the `priority` filter's value
/// for tasks without a priority.
pub const NONE_KEY: &str = "none";

/// A `priority` filter value: 1 to 5, or `none` (tasks without one).
pub fn parse_priority_filter(raw: &str) -> Result<Option<i16>, Error> {
    if raw == NONE_KEY {
        return Ok(None);
    }
    raw.trim()
        .parse::<i16>()
        .ok()
        .filter(|p| (1..=5).contains(p))
        .map(Some)
        .ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidFilterValue,
                "priority is 1 to 5, or none.",
            )
            .with_extra("parameter", "priority")
        })
}

/// Cards per cell: 1 to 50.
pub const MAX_TASKS_PER_GROUP: u64 = 50;

/// What `GET tasks/board/` asks.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedQuery {
    /// The filters the view shares with the task list.
    pub tasks: TaskQuery,
    /// In any of these columns.
    pub states: Vec<StateId>,
    /// On a board of any of these projects.
    pub projects: Vec<ProjectId>,
    /// Of any of these priorities (`None`: without one).
    pub priorities: Vec<Option<i16>>,
    pub group_by: GroupBy,
    pub sub_group_by: Option<GroupBy>,
    /// Cards per cell, 1 to [`MAX_TASKS_PER_GROUP`].
    pub per_group: u64,
    /// Cards to skip in each cell.
    pub offset: u64,
    /// Only the group with this key.
    pub group: Option<String>,
    /// Only the lanes with this key (needs `sub_group_by`).
    pub lane: Option<String>,
}

impl Default for GroupedQuery {
    fn default() -> Self {
        GroupedQuery {
            tasks: TaskQuery::default(),
            states: Vec::new(),
            projects: Vec::new(),
            priorities: Vec::new(),
            group_by: GroupBy::Category,
            sub_group_by: None,
            per_group: MAX_TASKS_PER_GROUP,
            offset: 0,
            group: None,
            lane: None,
        }
    }
}

/// A group (a column) or one of its lanes: its identity and a window of its cards.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskGroup {
    /// The category, column uuid, owner uuid, priority, board, project, milestone or label
    /// uuid; [`NONE_KEY`] for tasks without one.
    pub key: String,
    /// What people read: the category, the column's name, the person's name, `P2`, the
    /// board's, project's or label's name, `No owner`.
    pub name: String,
    /// Set when grouping by category or column.
    pub category: Option<StateCategory>,
    /// The window of its cards; empty when it has lanes (its cards are in them).
    pub tasks: Vec<Task>,
    /// Its cards, all lanes together.
    pub task_count: u64,
    pub has_more: bool,
    pub next_offset: Option<u64>,
    /// Its lanes, when laned (`sub_group_by`).
    pub lanes: Vec<TaskGroup>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Grouped {
    /// Tasks of the slice, each counted once (before `group` and `lane` pick cells).
    pub total: u64,
    pub group_by: GroupBy,
    pub sub_group_by: Option<GroupBy>,
    pub groups: Vec<TaskGroup>,
    /// The board, when the request names exactly one.
    pub board: Option<Board>,
}

/// Where a task goes along one dimension.
#[derive(Debug, Clone)]
struct Slot {
    /// The order of groups: rank, then name without case, then key.
    order: (i64, String, String),
    name: String,
    category: Option<StateCategory>,
}

impl Slot {
    fn new(rank: i64, key: String, name: String, category: Option<StateCategory>) -> Slot {
        Slot {
            order: (rank, name.to_lowercase(), key),
            name,
            category,
        }
    }

    /// The group of tasks without a value of `what`, last.
    fn none(what: &str) -> Slot {
        Slot::new(i64::MAX, NONE_KEY.to_owned(), format!("No {what}"), None)
    }

    fn key(&self) -> &str {
        &self.order.2
    }

    /// A cell: the window `offset..offset + per_group` of its cards.
    fn cell(self, cards: Vec<Task>, query: &GroupedQuery) -> TaskGroup {
        let count = cards.len() as u64;
        let end = query.offset.saturating_add(query.per_group);
        let tasks = cards
            .into_iter()
            .skip(usize::try_from(query.offset).unwrap_or(usize::MAX))
            .take(usize::try_from(query.per_group).unwrap_or(usize::MAX))
            .collect();
        self.group(tasks, count, (end < count).then_some(end), Vec::new())
    }

    /// A laned group: its cards are in its lanes.
    fn laned(self, count: usize, lanes: Vec<TaskGroup>) -> TaskGroup {
        self.group(Vec::new(), count as u64, None, lanes)
    }

    fn group(
        self,
        tasks: Vec<Task>,
        task_count: u64,
        next_offset: Option<u64>,
        lanes: Vec<TaskGroup>,
    ) -> TaskGroup {
        TaskGroup {
            key: self.order.2,
            name: self.name,
            category: self.category,
            tasks,
            task_count,
            has_more: next_offset.is_some(),
            next_offset,
            lanes,
        }
    }
}

/// What naming and ordering groups takes, read once per request.
#[derive(Default)]
struct Lookups {
    states: HashMap<StateId, State>,
    boards: HashMap<BoardId, Board>,
    projects: HashMap<ProjectId, Project>,
    people: HashMap<UserId, String>,
    labels: HashMap<TaskId, Vec<Label>>,
}

impl Lookups {
    /// The groups `task` is in along `by` (several only for labels).
    fn slots(&self, by: GroupBy, task: &Task) -> Vec<Slot> {
        let slot = match by {
            GroupBy::Category => {
                let c = self
                    .states
                    .get(&task.state_id)
                    .map_or(StateCategory::Backlog, |s| s.category);
                let name = c.as_str().to_owned();
                Slot::new(category_order(c), name.clone(), name, Some(c))
            }
            GroupBy::State => match self.states.get(&task.state_id) {
                Some(s) => Slot::new(
                    i64::from(s.position),
                    s.id.to_string(),
                    s.name.clone(),
                    Some(s.category),
                ),
                None => Slot::none("state"),
            },
            GroupBy::Owner => match task.owner {
                Some(u) => Slot::new(
                    0,
                    u.0.to_string(),
                    self.people.get(&u).cloned().unwrap_or_default(),
                    None,
                ),
                None => Slot::none("owner"),
            },
            GroupBy::Priority => match task.priority {
                Some(p) => Slot::new(i64::from(p), p.to_string(), format!("P{p}"), None),
                None => Slot::none("priority"),
            },
            GroupBy::Board => match self.boards.get(&task.board_id) {
                Some(b) => Slot::new(b.rank, b.id.to_string(), b.name.clone(), None),
                None => Slot::none("board"),
            },
            GroupBy::Project => match self
                .boards
                .get(&task.board_id)
                .and_then(|b| self.projects.get(&b.project_id))
            {
                Some(p) => Slot::new(p.rank, p.id.to_string(), p.name.clone(), None),
                None => Slot::none("project"),
            },
            // No milestone can be set yet: every task is in "No milestone".
            GroupBy::Milestone => match task.milestone_id {
                Some(m) => Slot::new(0, m.to_string(), m.to_string(), None),
                None => Slot::none("milestone"),
            },
            GroupBy::Label => match self.labels.get(&task.id).filter(|ls| !ls.is_empty()) {
                Some(labels) => {
                    return labels
                        .iter()
                        .map(|l| Slot::new(0, l.id.to_string(), l.name.clone(), None))
                        .collect();
                }
                None => Slot::none("label"),
            },
        };
        vec![slot]
    }

    /// `tasks` in their groups along `by`, in the groups' order, each keeping the tasks' order.
    fn buckets<'t>(
        &self,
        by: GroupBy,
        tasks: impl IntoIterator<Item = &'t Task>,
    ) -> Vec<(Slot, Vec<Task>)> {
        let mut groups: BTreeMap<(i64, String, String), (Slot, Vec<Task>)> = BTreeMap::new();
        for task in tasks {
            for slot in self.slots(by, task) {
                groups
                    .entry(slot.order.clone())
                    .or_insert_with(|| (slot, Vec::new()))
                    .1
                    .push(task.clone());
            }
        }
        groups.into_values().collect()
    }
}

impl Plan {
    /// Groups every task of the slice, in the order of its sort, then each group into lanes
    /// when asked, and gives each cell the window `offset..offset + per_group` of its cards.
    pub async fn grouped_tasks(
        &self,
        actor: &PlanActor,
        query: &GroupedQuery,
    ) -> Result<Grouped, Error> {
        if !(1..=MAX_TASKS_PER_GROUP).contains(&query.per_group) {
            return Err(
                Error::new(ErrorCode::InvalidFilterValue, "tasks_per_group is 1 to 50.")
                    .with_extra("parameter", "tasks_per_group"),
            );
        }
        if query.sub_group_by == Some(query.group_by) {
            return Err(Error::new(
                ErrorCode::InvalidFilterValue,
                "sub_group_by is another dimension than group_by.",
            )
            .with_extra("parameter", "sub_group_by"));
        }
        if query.lane.is_some() && query.sub_group_by.is_none() {
            return Err(Error::new(
                ErrorCode::InvalidFilterValue,
                "lane picks a lane of sub_group_by; give sub_group_by too.",
            )
            .with_extra("parameter", "lane"));
        }
        for (name, count) in [
            ("state", query.states.len()),
            ("project", query.projects.len()),
            ("priority", query.priorities.len()),
        ] {
            if count > MAX_FILTER_VALUES {
                return Err(too_many(name));
            }
        }
        let tasks_query = TaskQuery {
            search: check_search(query.tasks.search.as_deref())
                .map_err(|e| e.with_extra("parameter", "search"))?,
            ..query.tasks.clone()
        };
        let (mut filter, sort) = self.task_filter(actor, &tasks_query).await?;
        for project in &query.projects {
            self.visible_project(actor, *project).await?;
        }
        let org = actor.org_id();
        let mut look = Lookups::default();
        let mut board = None;
        let mut kept = Vec::with_capacity(filter.boards.len());
        for listed in &filter.boards {
            let b = self.ports.boards.get_board(org, listed.id).await?;
            if query.tasks.boards.len() == 1 {
                board = Some(b.clone());
            }
            if !query.projects.is_empty() && !query.projects.contains(&b.project_id) {
                continue;
            }
            for s in self.ports.boards.board_states(org, b.id).await? {
                look.states.insert(s.id, s);
            }
            kept.push(ListedBoard::from(&b));
            look.boards.insert(b.id, b);
        }
        filter.boards = kept;
        let mut tasks = if filter.boards.is_empty() {
            Vec::new()
        } else {
            self.ports
                .tasks
                .list_tasks(org, &filter, sort, PageRequest::all())
                .await?
                .results
        };
        tasks.retain(|t| {
            (query.states.is_empty() || query.states.contains(&t.state_id))
                && (query.priorities.is_empty() || query.priorities.contains(&t.priority))
        });
        let dimensions = [Some(query.group_by), query.sub_group_by];
        let uses = |by: GroupBy| dimensions.contains(&Some(by));
        if uses(GroupBy::Project) {
            for b in look.boards.values() {
                if !look.projects.contains_key(&b.project_id) {
                    let p = self.ports.projects.get_project(org, b.project_id).await?;
                    look.projects.insert(p.id, p);
                }
            }
        }
        if uses(GroupBy::Owner) {
            look.people = self
                .people(org, tasks.iter().filter_map(|t| t.owner))
                .await?
                .into_iter()
                .map(|(id, u)| (id, u.full_name()))
                .collect();
        }
        if uses(GroupBy::Label) {
            look.labels = self.labels_of_tasks(&tasks).await?;
        }
        let picked = |wanted: &Option<String>, slot: &Slot| {
            wanted.as_deref().is_none_or(|k| k == slot.key())
        };
        let groups = look
            .buckets(query.group_by, &tasks)
            .into_iter()
            .filter(|(slot, _)| picked(&query.group, slot))
            .map(|(slot, cards)| match query.sub_group_by {
                None => slot.cell(cards, query),
                Some(by) => {
                    let lanes = look
                        .buckets(by, &cards)
                        .into_iter()
                        .filter(|(lane, _)| picked(&query.lane, lane))
                        .map(|(lane, cards)| lane.cell(cards, query))
                        .collect();
                    slot.laned(cards.len(), lanes)
                }
            })
            .collect();
        Ok(Grouped {
            total: tasks.len() as u64,
            group_by: query.group_by,
            sub_group_by: query.sub_group_by,
            groups,
            board,
        })
    }
}

/// Categories in their board order.
fn category_order(c: StateCategory) -> i64 {
    match c {
        StateCategory::Backlog => 0,
        StateCategory::Todo => 1,
        StateCategory::InProgress => 2,
        StateCategory::Done => 3,
        StateCategory::Canceled => 4,
    }
}

#[cfg(test)]
mod tests {
    use teamcomm_kernel::ErrorCode;
    use teamcomm_labels::BatchMode;

    use super::*;
    use crate::boards::NewBoard;
    use crate::projects::NewProject;
    use crate::tasks::{CreateTask, PersonRef};
    use crate::testing::World;
    use crate::{BoardRef, TaskRef, Visibility};

    async fn board(w: &World, project: &str, key: &str) -> Board {
        let project = w
            .plan
            .create_project(&w.admin, NewProject::named(project))
            .await
            .unwrap();
        w.plan
            .create_board(
                &w.admin,
                NewBoard {
                    name: format!("Board {key}"),
                    project: project.id,
                    key: key.to_owned(),
                },
            )
            .await
            .unwrap()
    }

    async fn task(w: &World, b: &Board, title: &str, owned: bool, priority: Option<i16>) -> Task {
        let new = CreateTask {
            title: title.to_owned(),
            board: Some(BoardRef::Id(b.id)),
            owner: owned.then_some(PersonRef::Me),
            priority,
            ..CreateTask::default()
        };
        w.plan.create_task(&w.member, new).await.unwrap()
    }

    async fn label(w: &World, name: &str, tasks: &[&Task]) -> Label {
        let label = w
            .plan
            .create_plan_label(&w.admin, name, None, None)
            .await
            .unwrap();
        for t in tasks {
            w.plan
                .change_task_labels(&w.member, &TaskRef::Id(t.id), BatchMode::Add, &[label.id])
                .await
                .unwrap();
        }
        label
    }

    /// Two projects with a board each: `ENG` (a: owned P2, b: P1) and `OPS` (c: owned, no
    /// priority).
    async fn world() -> (World, Board, Board, Vec<Task>) {
        let w = World::new().await;
        let eng = board(&w, "Alpha", "ENG").await;
        let ops = board(&w, "Beta", "OPS").await;
        let ts = vec![
            task(&w, &eng, "a", true, Some(2)).await,
            task(&w, &eng, "b", false, Some(1)).await,
            task(&w, &ops, "c", true, None).await,
        ];
        (w, eng, ops, ts)
    }

    /// Grouped by `group_by`, the cards in the order they were made.
    fn by(group_by: GroupBy) -> GroupedQuery {
        GroupedQuery {
            tasks: TaskQuery {
                sort: Some("created_at".into()),
                ..TaskQuery::default()
            },
            group_by,
            ..GroupedQuery::default()
        }
    }

    /// Each group as (key, name, titles of its cards, task_count).
    fn shape(g: &Grouped) -> Vec<(String, String, Vec<String>, u64)> {
        g.groups
            .iter()
            .map(|g| {
                let titles = g.tasks.iter().map(|t| t.title.clone()).collect();
                (g.key.clone(), g.name.clone(), titles, g.task_count)
            })
            .collect()
    }

    fn row(key: &str, name: &str, titles: &[&str]) -> (String, String, Vec<String>, u64) {
        let titles: Vec<String> = titles.iter().map(|t| (*t).to_owned()).collect();
        let n = titles.len() as u64;
        (key.to_owned(), name.to_owned(), titles, n)
    }

    #[tokio::test]
    async fn every_dimension_names_and_orders_its_groups() {
        let (w, eng, ops, ts) = world().await;
        let member = w.member.person().unwrap();
        let me = member.id.0.to_string();
        let owners = w
            .plan
            .grouped_tasks(&w.member, &by(GroupBy::Owner))
            .await
            .unwrap();
        assert_eq!(
            shape(&owners),
            [
                row(&me, &member.full_name(), &["a", "c"]),
                row(NONE_KEY, "No owner", &["b"])
            ]
        );
        assert_eq!((owners.total, owners.board.is_none()), (3, true));
        let priorities = w
            .plan
            .grouped_tasks(&w.member, &by(GroupBy::Priority))
            .await;
        assert_eq!(
            shape(&priorities.unwrap()),
            [
                row("1", "P1", &["b"]),
                row("2", "P2", &["a"]),
                row(NONE_KEY, "No priority", &["c"])
            ]
        );
        let boards = w.plan.grouped_tasks(&w.member, &by(GroupBy::Board)).await;
        assert_eq!(
            shape(&boards.unwrap()),
            [
                row(&eng.id.to_string(), "Board ENG", &["a", "b"]),
                row(&ops.id.to_string(), "Board OPS", &["c"])
            ]
        );
        let projects = w.plan.grouped_tasks(&w.member, &by(GroupBy::Project)).await;
        assert_eq!(
            shape(&projects.unwrap()),
            [
                row(&eng.project_id.to_string(), "Alpha", &["a", "b"]),
                row(&ops.project_id.to_string(), "Beta", &["c"])
            ]
        );
        let milestones = w
            .plan
            .grouped_tasks(&w.member, &by(GroupBy::Milestone))
            .await;
        assert_eq!(
            shape(&milestones.unwrap()),
            [row(NONE_KEY, "No milestone", &["a", "b", "c"])]
        );
        let categories = w
            .plan
            .grouped_tasks(&w.member, &by(GroupBy::Category))
            .await;
        let categories = categories.unwrap();
        assert_eq!(shape(&categories), [row("todo", "todo", &["a", "b", "c"])]);
        assert_eq!(categories.groups[0].category, Some(StateCategory::Todo));
        // A column per board, by position.
        let states = w.plan.grouped_tasks(&w.member, &by(GroupBy::State)).await;
        let states = states.unwrap();
        assert_eq!(states.groups.len(), 2);
        assert!(states.groups.iter().all(|g| g.name == "Todo"));
        assert_eq!(ts.len(), 3);
    }

    #[tokio::test]
    async fn a_task_is_in_each_of_its_labels_groups_and_counted_once() {
        let (w, _, _, ts) = world().await;
        let bug = label(&w, "bug", &[&ts[0], &ts[2]]).await;
        let api = label(&w, "API", &[&ts[0]]).await;
        let g = w
            .plan
            .grouped_tasks(&w.member, &by(GroupBy::Label))
            .await
            .unwrap();
        assert_eq!(
            shape(&g),
            [
                row(&api.id.to_string(), "API", &["a"]),
                row(&bug.id.to_string(), "bug", &["a", "c"]),
                row(NONE_KEY, "No label", &["b"])
            ]
        );
        assert_eq!(g.total, 3);
    }

    #[tokio::test]
    async fn lanes_split_each_group_and_window_their_cards() {
        let (w, eng, _, _) = world().await;
        for title in ["d", "e"] {
            task(&w, &eng, title, true, Some(2)).await;
        }
        let q = GroupedQuery {
            group_by: GroupBy::Board,
            sub_group_by: Some(GroupBy::Owner),
            per_group: 2,
            ..GroupedQuery::default()
        };
        let g = w.plan.grouped_tasks(&w.member, &q).await.unwrap();
        let me = w.member.person().unwrap().id.0.to_string();
        let eng_group = &g.groups[0];
        assert_eq!(
            (
                eng_group.task_count,
                eng_group.tasks.len(),
                eng_group.has_more,
                eng_group.lanes.len()
            ),
            (4, 0, false, 2),
            "a laned group's cards are in its lanes"
        );
        let mine = &eng_group.lanes[0];
        assert_eq!(
            (
                mine.key.as_str(),
                mine.task_count,
                mine.tasks.len(),
                mine.has_more,
                mine.next_offset
            ),
            (me.as_str(), 3, 2, true, Some(2))
        );
        assert_eq!(eng_group.lanes[1].key, NONE_KEY);
        assert_eq!(g.sub_group_by, Some(GroupBy::Owner));
        // The next window of one cell: `group`, `lane` and `offset`.
        let next = GroupedQuery {
            group: Some(eng.id.to_string()),
            lane: Some(me.clone()),
            offset: 2,
            ..q.clone()
        };
        let g = w.plan.grouped_tasks(&w.member, &next).await.unwrap();
        assert_eq!(g.groups.len(), 1);
        let lanes = &g.groups[0].lanes;
        assert_eq!(lanes.len(), 1);
        let titles: Vec<&str> = lanes[0].tasks.iter().map(|t| t.title.as_str()).collect();
        assert_eq!((titles, lanes[0].has_more), (vec!["e"], false));
        assert_eq!(g.total, 5, "total is the slice's, before group and lane");
        let nothing = GroupedQuery {
            group: Some("elsewhere".into()),
            ..q
        };
        let g = w.plan.grouped_tasks(&w.member, &nothing).await.unwrap();
        assert!(g.groups.is_empty());
    }

    #[tokio::test]
    async fn project_priority_and_column_filters_narrow_the_slice() {
        let (w, eng, ops, _) = world().await;
        let titles = |g: &Grouped| -> Vec<String> {
            let mut all: Vec<String> = g
                .groups
                .iter()
                .flat_map(|g| g.tasks.iter().map(|t| t.title.clone()))
                .collect();
            all.sort();
            all
        };
        let q = GroupedQuery {
            projects: vec![ops.project_id],
            ..GroupedQuery::default()
        };
        assert_eq!(
            titles(&w.plan.grouped_tasks(&w.member, &q).await.unwrap()),
            ["c"]
        );
        let q = GroupedQuery {
            priorities: vec![Some(1), None],
            ..GroupedQuery::default()
        };
        assert_eq!(
            titles(&w.plan.grouped_tasks(&w.member, &q).await.unwrap()),
            ["b", "c"]
        );
        let done = w
            .plan
            .live_states(&eng)
            .await
            .unwrap()
            .into_iter()
            .find(|s| s.category == StateCategory::Done)
            .unwrap();
        let q = GroupedQuery {
            states: vec![done.id],
            ..GroupedQuery::default()
        };
        let g = w.plan.grouped_tasks(&w.member, &q).await.unwrap();
        assert_eq!((g.total, g.groups.len()), (0, 0));
        // One board named: it comes with the answer.
        let q = GroupedQuery {
            tasks: TaskQuery {
                boards: vec![BoardRef::Key("ENG".into())],
                ..TaskQuery::default()
            },
            ..GroupedQuery::default()
        };
        let g = w.plan.grouped_tasks(&w.member, &q).await.unwrap();
        assert_eq!((g.total, g.board.map(|b| b.id)), (2, Some(eng.id)));
        // A project the caller cannot see is not found.
        let hidden = w
            .plan
            .create_project(
                &w.admin,
                NewProject {
                    visibility: Some(Visibility::Members),
                    ..NewProject::named("Hidden")
                },
            )
            .await
            .unwrap();
        let q = GroupedQuery {
            projects: vec![hidden.id],
            ..GroupedQuery::default()
        };
        let e = w.plan.grouped_tasks(&w.member, &q).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        assert!(w.plan.grouped_tasks(&w.admin, &q).await.is_ok());
    }

    #[tokio::test]
    async fn the_grid_and_the_filters_are_checked() {
        let w = World::new().await;
        let refused = |q: GroupedQuery| {
            let w = &w;
            async move {
                let e = w.plan.grouped_tasks(&w.member, &q).await.unwrap_err();
                let parameter = e.extra()["parameter"].as_str().unwrap().to_owned();
                (e.code(), parameter)
            }
        };
        let bad = ErrorCode::InvalidFilterValue;
        for per_group in [0, 51] {
            let q = GroupedQuery {
                per_group,
                ..GroupedQuery::default()
            };
            assert_eq!(refused(q).await, (bad, "tasks_per_group".into()));
        }
        let q = GroupedQuery {
            lane: Some(NONE_KEY.into()),
            ..GroupedQuery::default()
        };
        assert_eq!(refused(q).await, (bad, "lane".into()));
        let q = GroupedQuery {
            sub_group_by: Some(GroupBy::Category),
            ..GroupedQuery::default()
        };
        assert_eq!(refused(q).await, (bad, "sub_group_by".into()));
        let q = GroupedQuery {
            priorities: vec![None; 51],
            ..GroupedQuery::default()
        };
        assert_eq!(
            refused(q).await,
            (ErrorCode::TooManyFilterValues, "priority".into())
        );
        let q = GroupedQuery {
            tasks: TaskQuery {
                search: Some("x".into()),
                ..TaskQuery::default()
            },
            ..GroupedQuery::default()
        };
        assert_eq!(
            refused(q).await,
            (ErrorCode::SearchQueryTooShort, "search".into())
        );
    }

    #[test]
    fn dimensions_and_priorities_parse_from_their_names() {
        for g in GroupBy::ALL {
            assert_eq!(GroupBy::parse(g.as_str()).unwrap(), g);
            assert_eq!(GroupBy::parse_lanes(g.as_str()).unwrap(), Some(g));
        }
        assert_eq!(GroupBy::parse_lanes("none").unwrap(), None);
        let e = GroupBy::parse("none").unwrap_err();
        assert_eq!(
            (e.code(), e.extra()["allowed"].as_array().unwrap().len()),
            (ErrorCode::InvalidFilterValue, 8)
        );
        let e = GroupBy::parse_lanes("mood").unwrap_err();
        assert_eq!(e.extra()["parameter"], "sub_group_by");
        assert_eq!(parse_priority_filter("3").unwrap(), Some(3));
        assert_eq!(parse_priority_filter("none").unwrap(), None);
        for bad in ["0", "6", "high", ""] {
            let e = parse_priority_filter(bad).unwrap_err();
            assert_eq!(e.extra()["parameter"], "priority", "{bad}");
        }
    }
}
