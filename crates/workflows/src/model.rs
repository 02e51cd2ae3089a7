//! Workflows, their runs, and what the ports exchange.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use teamcomm_kernel::{EventType, OrgId, UserId, WireEnum};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

/// The largest trigger payload, serialized as JSON.
pub const MAX_PAYLOAD_BYTES: usize = 8 * 1024;

/// A workflow's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkflowId(pub Uuid);

impl WorkflowId {
    /// A fresh, time-ordered id.
    pub fn new() -> Self {
        WorkflowId(Uuid::now_v7())
    }
}

impl Default for WorkflowId {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for WorkflowId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What starts a run: a `POST …/trigger/` call, or an event of the organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    ApiTrigger,
    Event(EventType),
}

impl Trigger {
    /// `api_trigger`, or the event's dotted name (`kudos.posted`).
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::ApiTrigger => "api_trigger",
            Trigger::Event(e) => e.as_str(),
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "api_trigger" => Some(Trigger::ApiTrigger),
            other => EventType::from_name(other).map(Trigger::Event),
        }
    }

    /// Every trigger a workflow may have, for messages and the document (`workflow.finished`
    /// is not one: a run's own finish would start it again).
    pub fn names() -> String {
        let events: Vec<&str> = EventType::ALL
            .iter()
            .filter(|e| **e != EventType::WorkflowFinished)
            .map(|e| e.as_str())
            .collect();
        format!("api_trigger, {}", events.join(", "))
    }
}

/// One step of a run. Text fields may name values of the trigger payload or the event as
/// `{{payload.key}}`, substituted when the run executes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// A bot message to people, teams and channels of the organization.
    SendMessage {
        #[serde(default)]
        user_uuids: Vec<Uuid>,
        #[serde(default)]
        team_uuids: Vec<Uuid>,
        #[serde(default)]
        channel_ids: Vec<String>,
        text: String,
    },
    /// An e-mail to addresses.
    SendEmail {
        to: Vec<String>,
        subject: String,
        body: String,
    },
    /// A JSON POST to a URL (the webhook destination guard applies, when the workflow is
    /// saved and again when the run connects). `body` is a JSON template whose strings take
    /// substitutions; without one the body is the run's document ([`crate::runner`]).
    CallWebhook {
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<serde_json::Value>,
    },
}

impl Action {
    /// The action's `type`, as serialized.
    pub fn kind(&self) -> &'static str {
        match self {
            Action::SendMessage { .. } => "send_message",
            Action::SendEmail { .. } => "send_email",
            Action::CallWebhook { .. } => "call_webhook",
        }
    }
}

/// A workflow as stored, with its run counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Workflow {
    pub id: WorkflowId,
    pub org_id: OrgId,
    pub name: String,
    /// `""` when none was given.
    pub description: String,
    pub trigger: Trigger,
    pub actions: Vec<Action>,
    pub active: bool,
    /// Frozen by the organization's plan or an operator: it cannot run, whatever `active` says.
    pub frozen: bool,
    /// Null once that person is deleted.
    pub created_by: Option<UserId>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    /// Runs recorded (read from the runs; ignored on writes).
    pub total_runs: u64,
    /// When the latest run was queued (read; ignored on writes).
    pub last_run_at: Option<OffsetDateTime>,
}

impl Workflow {
    /// Whether an event of this type starts a run: an active, unfrozen workflow triggered by
    /// it. (The Postgres relay applies the same rule in SQL.)
    pub fn runs_on(&self, event_type: EventType) -> bool {
        self.active && !self.frozen && self.trigger == Trigger::Event(event_type)
    }
}

/// What a create or update gives; absent fields keep their value (a create needs `name`,
/// `trigger_type` and `actions`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkflowInput {
    pub name: Option<String>,
    pub description: Option<String>,
    pub trigger_type: Option<String>,
    /// A JSON list of actions.
    pub actions: Option<Value>,
    pub active: Option<bool>,
}

/// The filters of a listing, as the route reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkflowListFilter {
    pub search: Option<String>,
    /// Created on or after this day (UTC).
    pub start_date: Option<Date>,
    /// Created on or before this day (UTC).
    pub end_date: Option<Date>,
    /// Any of these labels.
    pub labels: Vec<Uuid>,
    /// Only the reader's starred ones.
    pub featured: bool,
}

/// What the repository lists (alphabetically by name, then id).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkflowSelection {
    /// Case-insensitive fragment of the name or description.
    pub search: Option<String>,
    pub created_from: Option<Date>,
    pub created_until: Option<Date>,
    pub labels: Vec<Uuid>,
    /// Only those this person starred.
    pub featured_by: Option<UserId>,
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
}

impl WireEnum for RunStatus {
    const NAME: &'static str = "WorkflowRunStatus";
    const ALL: &'static [Self] = &[
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Succeeded,
        RunStatus::Failed,
    ];

    fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
        }
    }
}

/// One run of a workflow.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowRun {
    pub id: Uuid,
    pub workflow_id: WorkflowId,
    pub status: RunStatus,
    /// The trigger payload (a JSON object), or the event's.
    pub payload: Value,
    /// Who triggered it (null for an event, or once that person is deleted).
    pub triggered_by: Option<UserId>,
    pub queued_at: OffsetDateTime,
    pub started_at: Option<OffsetDateTime>,
    pub finished_at: Option<OffsetDateTime>,
    pub error: Option<String>,
    /// How many of the workflow's actions ran (a retried run resumes after them).
    pub actions_completed: u32,
}

/// How a run ended, as [`crate::WorkflowRepository::finish_run`] records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunEnd {
    /// `Succeeded` or `Failed`.
    pub status: RunStatus,
    pub finished_at: OffsetDateTime,
    pub error: Option<String>,
    pub actions_completed: u32,
}
