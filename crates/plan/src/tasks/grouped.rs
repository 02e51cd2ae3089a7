//! `GET tasks/board/`: the tasks of a list request grouped by column category, column, owner,
//! priority or board, a slice of each group's cards.

use std::collections::BTreeMap;

use teamcomm_kernel::{Error, ErrorCode, PageRequest, UserId};

use super::TaskQuery;
use crate::{Plan, PlanActor, StateCategory, Task};

/// What `group_by` groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Category,
    State,
    Owner,
    Priority,
    Board,
}

impl GroupBy {
    pub const NAMES: [&'static str; 5] = ["category", "state", "owner", "priority", "board"];

    pub fn parse(raw: &str) -> Result<GroupBy, Error> {
        Ok(match raw {
            "category" => GroupBy::Category,
            "state" => GroupBy::State,
            "owner" => GroupBy::Owner,
            "priority" => GroupBy::Priority,
            "board" => GroupBy::Board,
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidFilterValue,
                    "group_by is category, state, owner, priority or board.",
                )
                .with_extra("parameter", "group_by")
                .with_extra("allowed", GroupBy::NAMES.to_vec()));
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        GroupBy::NAMES[self as usize]
    }
}

/// A group being filled: its name, its category, its cards.
type Bucket = (String, Option<StateCategory>, Vec<Task>);

/// Cards per group: 1 to 50.
pub const MAX_TASKS_PER_GROUP: u64 = 50;

/// One group: its identity, a slice of its cards, and where the next slice starts.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskGroup {
    /// The category, state uuid, owner uuid, priority or board uuid; empty for "none".
    pub key: String,
    /// What people read: the category, the column's name, the person's name, `P2`, the board.
    pub name: String,
    /// Set when grouping by category or state.
    pub category: Option<StateCategory>,
    pub tasks: Vec<Task>,
    pub task_count: u64,
    pub has_more: bool,
    pub next_offset: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Grouped {
    pub total: u64,
    pub group_by: GroupBy,
    pub groups: Vec<TaskGroup>,
}

impl Plan {
    /// Groups every task of the request, in the order of its sort, then slices each group
    /// at `offset` for `per_group` cards.
    pub async fn grouped_tasks(
        &self,
        actor: &PlanActor,
        query: &TaskQuery,
        group_by: GroupBy,
        per_group: u64,
        offset: u64,
    ) -> Result<Grouped, Error> {
        if !(1..=MAX_TASKS_PER_GROUP).contains(&per_group) {
            return Err(
                Error::new(ErrorCode::InvalidFilterValue, "tasks_per_group is 1 to 50.")
                    .with_extra("parameter", "tasks_per_group"),
            );
        }
        let (filter, sort) = self.task_filter(actor, query).await?;
        let tasks = if filter.boards.is_empty() {
            Vec::new()
        } else {
            self.ports
                .tasks
                .list_tasks(actor.org_id(), &filter, sort, PageRequest::all())
                .await?
                .results
        };
        let org = actor.org_id();
        let mut states = std::collections::HashMap::new();
        let mut boards = std::collections::HashMap::new();
        for board in &filter.boards {
            let b = self.ports.boards.get_board(org, *board).await?;
            for s in self.ports.boards.board_states(org, *board).await? {
                states.insert(s.id, s);
            }
            boards.insert(b.id, b);
        }
        // (order, key) → (name, category, cards)
        let mut groups: BTreeMap<(i64, String), Bucket> = BTreeMap::new();
        let mut names: std::collections::HashMap<UserId, String> = Default::default();
        for task in tasks {
            let state = states.get(&task.state_id);
            let (order, key, name, category) = match group_by {
                GroupBy::Category => {
                    let c = state.map_or(StateCategory::Backlog, |s| s.category);
                    let order = category_order(c);
                    (order, c.as_str().to_owned(), c.as_str().to_owned(), Some(c))
                }
                GroupBy::State => match state {
                    Some(s) => (
                        i64::from(s.position),
                        s.id.to_string(),
                        s.name.clone(),
                        Some(s.category),
                    ),
                    None => (i64::MAX, String::new(), "No state".into(), None),
                },
                GroupBy::Owner => match task.owner {
                    Some(u) => {
                        let name = match names.get(&u) {
                            Some(n) => n.clone(),
                            None => {
                                let n = match self.ports.people.get_user(org, u).await {
                                    Ok(user) => user.full_name(),
                                    Err(_) => String::new(),
                                };
                                names.insert(u, n.clone());
                                n
                            }
                        };
                        (0, u.0.to_string(), name, None)
                    }
                    None => (1, String::new(), "No owner".into(), None),
                },
                GroupBy::Priority => match task.priority {
                    Some(p) => (i64::from(p), p.to_string(), format!("P{p}"), None),
                    None => (i64::MAX, String::new(), "No priority".into(), None),
                },
                GroupBy::Board => {
                    let b = boards.get(&task.board_id);
                    (
                        b.map_or(i64::MAX, |b| b.rank),
                        task.board_id.to_string(),
                        b.map_or_else(String::new, |b| b.name.clone()),
                        None,
                    )
                }
            };
            groups
                .entry((order, key))
                .or_insert_with(|| (name, category, Vec::new()))
                .2
                .push(task);
        }
        let total = groups.values().map(|g| g.2.len() as u64).sum();
        let groups = groups
            .into_iter()
            .map(|((_, key), (name, category, cards))| {
                let count = cards.len() as u64;
                let end = offset.saturating_add(per_group);
                let tasks: Vec<Task> = cards
                    .into_iter()
                    .skip(usize::try_from(offset).unwrap_or(usize::MAX))
                    .take(usize::try_from(per_group).unwrap_or(usize::MAX))
                    .collect();
                TaskGroup {
                    key,
                    name,
                    category,
                    tasks,
                    task_count: count,
                    has_more: end < count,
                    next_offset: (end < count).then_some(end),
                }
            })
            .collect();
        Ok(Grouped {
            total,
            group_by,
            groups,
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
