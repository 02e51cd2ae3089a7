//! The workflows domain: an organization's automations — a trigger (`api_trigger`, or one of
//! the events of the webhook vocabulary) and the actions a run performs (send a chat message,
//! send an e-mail, call a webhook URL) — who may author and trigger them, and their runs.
//!
//! `WorkflowService` applies the rules; storage is behind [`WorkflowRepository`]. A trigger
//! records a queued [`WorkflowRun`] and its `workflow_run` job in one write (an event's runs are
//! queued by the outbox relay, `Workflow::runs_on`); [`WorkflowRunner`] executes them
//! ([`runner`]: the actions through the messaging services and the webhook sender, the values
//! of the run substituted, progress kept, `workflow.finished` at the end).

mod model;
mod ports;
pub mod runner;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use model::{
    Action, MAX_PAYLOAD_BYTES, RunEnd, RunStatus, Trigger, Workflow, WorkflowId, WorkflowInput,
    WorkflowListFilter, WorkflowRun, WorkflowSelection,
};
pub use ports::WorkflowRepository;
pub use runner::{RunnerPorts, RunnerSettings, RunnerSummary, WorkflowRunner};
pub use service::{
    MAX_ACTION_TEXT, MAX_ACTIONS, MAX_DESCRIPTION, MAX_WORKFLOW_NAME, RUN_ATTEMPTS, WorkflowPorts,
    WorkflowService,
};
