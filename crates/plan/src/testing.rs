//! In-memory implementations of the Plan ports, for unit tests and the contract suite: one
//! [`InMemoryPlan`] over a shared state implements every Plan port (each area's impl lives in
//! its own module under `testing/`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::model::{Board, BoardId, Project, ProjectId, State, StateId, Task, TaskId};

/// What the in-memory store holds. Each area adds the maps it needs.
#[derive(Debug, Default)]
pub struct PlanState {
    pub projects: BTreeMap<ProjectId, Project>,
    pub boards: BTreeMap<BoardId, Board>,
    /// Every key a board has had: (organization, key) → board.
    pub board_keys: HashMap<(teamcomm_kernel::OrgId, String), BoardId>,
    /// The next task number of each board.
    pub next_task_number: HashMap<BoardId, i64>,
    pub states: BTreeMap<StateId, State>,
    pub tasks: BTreeMap<TaskId, Task>,
}

/// Every Plan port over one shared in-memory state.
#[derive(Debug, Default, Clone)]
pub struct InMemoryPlan {
    pub state: Arc<Mutex<PlanState>>,
}
