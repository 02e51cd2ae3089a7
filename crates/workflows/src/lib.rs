//! The workflows domain: an organization's automations — a trigger (`api_trigger`, or one of
//! the events of the webhook vocabulary) and the actions a run performs (send a chat message,
//! send an e-mail, call a webhook URL) — who may author and trigger them, and their runs.
//!
//! `WorkflowService` applies the rules; storage is behind [`WorkflowRepository`]. A trigger
//! records a queued [`WorkflowRun`] and its `workflow_run` job in one write; running the
//! actions is the worker's part (not here yet).

mod model;
mod ports;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use model::{
    Action, MAX_PAYLOAD_BYTES, RunStatus, Trigger, Workflow, WorkflowId, WorkflowInput,
    WorkflowListFilter, WorkflowRun, WorkflowSelection,
};
pub use ports::WorkflowRepository;
pub use service::{
    MAX_ACTION_TEXT, MAX_ACTIONS, MAX_DESCRIPTION, MAX_WORKFLOW_NAME, WorkflowPorts,
    WorkflowService,
};
