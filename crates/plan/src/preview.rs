//! What a dry run (`?dry_run=true`) answers instead of writing: the operation, a sentence
//! saying what would happen, counts of what it touches, and what undoes it. A preview writes
//! nothing and records no event. How it is written on the wire (and where the undoing call
//! lives) is the route layer's business.

use serde_json::{Map, Value};

use crate::{BoardId, ProjectId, StateId};

/// A dry run's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// `board.archive`, `task.archive`, `state.archive`…
    pub operation: String,
    /// What the real call would do, in one sentence.
    pub consequence: String,
    /// Counts of what it touches (`{"tasks": 12}`).
    pub affects: Map<String, Value>,
    /// What can be restored afterwards; none when the write cannot be undone.
    pub restore: Option<Restore>,
}

/// What a reversible write can be undone on: the object whose restore call brings it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restore {
    Project(ProjectId),
    Board(BoardId),
    State {
        board: BoardId,
        state: StateId,
    },
    /// A task, by its key (`ENG-12`).
    Task(String),
}

impl Preview {
    pub fn new(operation: &str, consequence: impl Into<String>) -> Preview {
        Preview {
            operation: operation.to_owned(),
            consequence: consequence.into(),
            affects: Map::new(),
            restore: None,
        }
    }

    pub fn affects(mut self, what: &str, count: u64) -> Preview {
        self.affects.insert(what.to_owned(), count.into());
        self
    }

    pub fn restorable(mut self, what: Restore) -> Preview {
        self.restore = Some(what);
        self
    }

    pub fn reversible(&self) -> bool {
        self.restore.is_some()
    }
}
