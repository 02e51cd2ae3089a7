//! Columns ("states") of a board: each has a category fixed at creation, a 1-based position
//! among the live columns, and at most one is the default of new tasks. A board keeps at least
//! one live `done` column.

use teamcomm_kernel::{Error, ErrorCode, RepoError};
use time::OffsetDateTime;

use crate::access::DryRunOr;
use crate::ports::{COLUMN_FULL, MigrateTo};
use crate::tasks::MAX_COLUMN_TASKS;
use crate::{Board, BoardRef, Plan, PlanActor, Preview, Restore, State, StateCategory, StateId};

pub const MAX_STATE_NAME: usize = 48;

/// Archiving a column would move more live tasks into `target` than a column holds
/// (`column_too_large`, as a create into a full column is).
fn migration_too_large(target: &State) -> Error {
    Error::new(
        ErrorCode::ColumnTooLarge,
        format!(
            "Moving this column's live tasks to \"{}\" would put more than 5,000 tasks in it.",
            target.name
        ),
    )
    .with_extra("limit", MAX_COLUMN_TASKS)
}

pub fn board_not_initialized() -> Error {
    Error::new(
        ErrorCode::BoardNotInitialized,
        "The board lacks the columns this needs (a default and a done column).",
    )
}

/// The columns of a new board: Backlog, Todo (default), In Progress, Done, Canceled.
pub fn default_columns(board: &Board) -> Vec<State> {
    use StateCategory::*;
    [
        ("Backlog", Backlog),
        ("Todo", Todo),
        ("In Progress", InProgress),
        ("Done", Done),
        ("Canceled", Canceled),
    ]
    .into_iter()
    .zip(1..)
    .map(|((name, category), position)| State {
        id: StateId::new(),
        board_id: board.id,
        name: name.to_owned(),
        category,
        position,
        color: None,
        is_default: category == Todo,
        is_archived: false,
        created_at: board.created_at,
        updated_at: board.created_at,
    })
    .collect()
}

/// A column to add.
#[derive(Debug, Clone, PartialEq)]
pub struct NewState {
    pub name: String,
    pub category: StateCategory,
    /// 1-based place among the live columns; last when absent (or past the end).
    pub position: Option<i32>,
    pub color: Option<String>,
    pub is_default: bool,
}

/// A change to a column (its category never changes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatePatch {
    pub name: Option<String>,
    /// `Some(None)` clears it.
    pub color: Option<Option<String>>,
    pub position: Option<i32>,
}

fn check_state_name(raw: &str) -> Result<String, Error> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_STATE_NAME {
        return Err(Error::invalid_field(
            "name",
            "A column name is 1 to 48 characters.",
        ));
    }
    Ok(name.to_owned())
}

/// `#rgb` or `#rrggbb`.
fn check_color(raw: &str) -> Result<String, Error> {
    let hex = raw.strip_prefix('#').unwrap_or("");
    if matches!(hex.len(), 3 | 6) && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(raw.to_ascii_lowercase())
    } else {
        Err(Error::invalid_field("color", "A color is #rgb or #rrggbb."))
    }
}

fn check_position(p: i32) -> Result<usize, Error> {
    usize::try_from(p)
        .ok()
        .filter(|p| *p >= 1)
        .ok_or_else(|| Error::invalid_field("position", "Positions start at 1."))
}

/// Gives the live columns (in this order) positions 1, 2, … (stamping those that moved).
fn renumber(live: &mut [State], now: OffsetDateTime) {
    for (i, s) in live.iter_mut().enumerate() {
        let position = i32::try_from(i + 1).unwrap_or(i32::MAX);
        if s.position != position {
            s.position = position;
            s.updated_at = now;
        }
    }
}

impl Plan {
    /// The board's columns by position; archived ones (after the live ones) when asked.
    pub async fn list_states(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        include_archived: bool,
    ) -> Result<Vec<State>, Error> {
        let board = self.visible_board(actor, board).await?;
        let all = self
            .ports
            .boards
            .board_states(board.org_id, board.id)
            .await?;
        let (mut live, archived): (Vec<State>, Vec<State>) =
            all.into_iter().partition(|s| !s.is_archived);
        live.sort_by_key(|s| s.position);
        if include_archived {
            live.extend(archived);
        }
        Ok(live)
    }

    /// Adds a column at `position` (the others shift), the default one when asked.
    pub async fn create_state(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        new: NewState,
    ) -> Result<State, Error> {
        let board = self.writable_board(actor, board).await?;
        let name = check_state_name(&new.name)?;
        let color = new.color.as_deref().map(check_color).transpose()?;
        let at = new.position.map(check_position).transpose()?;
        let now = self.ports.clock.now();
        let mut live = self.live_states(&board).await?;
        let state = State {
            id: StateId::new(),
            board_id: board.id,
            name,
            category: new.category,
            position: 0,
            color,
            is_default: new.is_default,
            is_archived: false,
            created_at: now,
            updated_at: now,
        };
        let at = at.map_or(live.len(), |p| (p - 1).min(live.len()));
        live.insert(at, state.clone());
        if new.is_default {
            for s in live.iter_mut().filter(|s| s.is_default && s.id != state.id) {
                s.is_default = false;
                s.updated_at = now;
            }
        }
        renumber(&mut live, now);
        self.ports.boards.put_states(board.org_id, &live).await?;
        Ok(live.into_iter().find(|s| s.id == state.id).unwrap_or(state))
    }

    /// Renames, recolors or moves a live column.
    pub async fn update_state(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        id: StateId,
        patch: StatePatch,
    ) -> Result<State, Error> {
        let board = self.writable_board(actor, board).await?;
        let mut state = self.board_state(&board, id).await?;
        let now = self.ports.clock.now();
        if let Some(name) = &patch.name {
            state.name = check_state_name(name)?;
        }
        if let Some(color) = &patch.color {
            state.color = color.as_deref().map(check_color).transpose()?;
        }
        state.updated_at = now;
        let mut changed = vec![state.clone()];
        if let Some(p) = patch.position {
            let at = check_position(p)?;
            if state.is_archived {
                return Err(Error::invalid_field(
                    "position",
                    "An archived column has no position; restore it first.",
                ));
            }
            let mut live = self.live_states(&board).await?;
            live.retain(|s| s.id != id);
            live.insert((at - 1).min(live.len()), state.clone());
            renumber(&mut live, now);
            changed = live;
        }
        self.ports.boards.put_states(board.org_id, &changed).await?;
        self.board_state(&board, id).await
    }

    /// Archives a column. Its live tasks go to `migrate_to` (a live column of the board, which
    /// then holds at most [`MAX_COLUMN_TASKS`]: `column_too_large`, dry run too), or it stays
    /// (`state_in_use`). The board keeps a live done column (`last_done_state`);
    /// the default passes to the first live `todo` (else the first live column).
    pub async fn archive_state(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        id: StateId,
        migrate_to: Option<StateId>,
        dry_run: bool,
    ) -> Result<DryRunOr<State>, Error> {
        let board = self.writable_board(actor, board).await?;
        let state = self.board_state(&board, id).await?;
        let org = board.org_id;
        if state.is_archived {
            return Ok(if dry_run {
                DryRunOr::Preview(
                    Preview::new(
                        "state.archive",
                        format!("Column \"{}\" is already archived.", state.name),
                    )
                    .affects("states", 0)
                    .affects("tasks", 0),
                )
            } else {
                DryRunOr::Done(state)
            });
        }
        let mut live = self.live_states(&board).await?;
        if state.category == StateCategory::Done
            && live
                .iter()
                .filter(|s| s.category == StateCategory::Done)
                .count()
                == 1
        {
            return Err(Error::new(
                ErrorCode::LastDoneState,
                "A board keeps at least one live done column.",
            ));
        }
        let target = match migrate_to {
            Some(to) => {
                let target = live
                    .iter()
                    .find(|s| s.id == to && s.id != id)
                    .cloned()
                    .ok_or_else(|| {
                        Error::invalid_field(
                            "migrate_to",
                            "Name another live column of this board.",
                        )
                    })?;
                Some(target)
            }
            None => None,
        };
        let tasks = self.ports.boards.count_state_tasks(org, id).await?;
        if tasks > 0 && target.is_none() {
            return Err(Error::new(
                ErrorCode::StateInUse,
                "The column has live tasks; name a column to move them to (migrate_to).",
            )
            .with_extra("tasks", tasks));
        }
        if let Some(t) = target.as_ref().filter(|_| tasks > 0) {
            let there = self.ports.boards.count_state_tasks(org, t.id).await?;
            if there + tasks > MAX_COLUMN_TASKS {
                return Err(migration_too_large(t));
            }
        }
        if dry_run {
            let consequence = match &target {
                Some(t) => format!(
                    "Column \"{}\" would be archived and its {tasks} live task(s) moved to \"{}\".",
                    state.name, t.name
                ),
                None => format!("Column \"{}\" would be archived.", state.name),
            };
            return Ok(DryRunOr::Preview(
                Preview::new("state.archive", consequence)
                    .affects("states", 1)
                    .affects("tasks", tasks)
                    .restorable(Restore::State {
                        board: board.id,
                        state: id,
                    }),
            ));
        }
        let now = self.ports.clock.now();
        live.retain(|s| s.id != id);
        if state.is_default {
            let heir = live
                .iter()
                .position(|s| s.category == StateCategory::Todo)
                .unwrap_or(0);
            if let Some(s) = live.get_mut(heir) {
                s.is_default = true;
                s.updated_at = now;
            }
        }
        renumber(&mut live, now);
        let archived = State {
            is_archived: true,
            is_default: false,
            updated_at: now,
            ..state
        };
        live.push(archived.clone());
        let to = target.as_ref().map(|t| MigrateTo {
            state: t.id,
            limit: MAX_COLUMN_TASKS,
        });
        // The count read above may be stale: the store checks the limit again under the
        // column's lock, where a concurrent write into it cannot slip past.
        match (self.ports.boards)
            .archive_state(org, &live, id, to, &actor.executor(), now)
            .await
        {
            Ok(_) => Ok(DryRunOr::Done(archived)),
            Err(RepoError::Conflict { constraint }) if constraint == COLUMN_FULL => Err(target
                .as_ref()
                .map_or_else(Error::not_found, migration_too_large)),
            Err(e) => Err(e.into()),
        }
    }

    /// Makes an archived column live again, last; a live one is answered as it is. It moves no
    /// task, so no column's count (`column_too_large`) changes.
    pub async fn restore_state(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        id: StateId,
    ) -> Result<State, Error> {
        let board = self.writable_board(actor, board).await?;
        let state = self.board_state(&board, id).await?;
        if !state.is_archived {
            return Ok(state);
        }
        let live = self.live_states(&board).await?;
        let now = self.ports.clock.now();
        let restored = State {
            is_archived: false,
            position: i32::try_from(live.len() + 1).unwrap_or(i32::MAX),
            updated_at: now,
            ..state
        };
        self.ports
            .boards
            .put_states(board.org_id, std::slice::from_ref(&restored))
            .await?;
        Ok(restored)
    }

    /// Puts the live columns in this order: every live column exactly once
    /// (`states_reorder_invalid`). Answers the live columns.
    pub async fn reorder_states(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        order: &[StateId],
    ) -> Result<Vec<State>, Error> {
        let board = self.writable_board(actor, board).await?;
        let live = self.live_states(&board).await?;
        let mut given = order.to_vec();
        given.sort();
        given.dedup();
        let mut ids: Vec<StateId> = live.iter().map(|s| s.id).collect();
        ids.sort();
        if given.len() != order.len() || given != ids {
            return Err(Error::new(
                ErrorCode::StatesReorderInvalid,
                "Name every live column of the board exactly once.",
            ));
        }
        let now = self.ports.clock.now();
        let mut reordered: Vec<State> = order
            .iter()
            .filter_map(|id| live.iter().find(|s| s.id == *id).cloned())
            .collect();
        renumber(&mut reordered, now);
        self.ports
            .boards
            .put_states(board.org_id, &reordered)
            .await?;
        self.live_states(&board).await
    }

    /// A board whose columns may change: one the caller sees (archived ones too: their
    /// columns are kept ready for a restore).
    async fn writable_board(&self, actor: &PlanActor, board: &BoardRef) -> Result<Board, Error> {
        self.visible_board(actor, board).await
    }
}
