//! Columns ("states") of a board: each has a category fixed at creation, a 1-based position
//! among the live columns, and at most one is the default of new tasks. A board keeps at least
//! one live `done` column.

use teamcomm_kernel::{Error, ErrorCode};

use crate::{Board, State, StateCategory, StateId};

pub const MAX_STATE_NAME: usize = 48;

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
