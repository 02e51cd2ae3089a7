//! What a dry run (`?dry_run=true`) answers instead of writing: the operation, a sentence
//! saying what would happen, counts of what it touches, and how to undo it. A preview writes
//! nothing and records no event.

use serde::Serialize;
use serde_json::{Map, Value};

/// A dry run's answer (`dry_run` is always true on the wire).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Preview {
    pub dry_run: bool,
    /// `board.archive`, `task.archive`, `state.archive`…
    pub operation: String,
    /// What the real call would do, in one sentence.
    pub consequence: String,
    /// Counts of what it touches (`{"tasks": 12}`).
    pub affects: Map<String, Value>,
    pub reversible: bool,
    /// The path that undoes it, when `reversible`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restore_path: Option<String>,
}

impl Preview {
    pub fn new(operation: &str, consequence: impl Into<String>) -> Preview {
        Preview {
            dry_run: true,
            operation: operation.to_owned(),
            consequence: consequence.into(),
            affects: Map::new(),
            reversible: false,
            restore_path: None,
        }
    }

    pub fn affects(mut self, what: &str, count: u64) -> Preview {
        self.affects.insert(what.to_owned(), count.into());
        self
    }

    pub fn restorable_at(mut self, path: impl Into<String>) -> Preview {
        self.reversible = true;
        self.restore_path = Some(path.into());
        self
    }
}
