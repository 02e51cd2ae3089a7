//! `WorkflowService`: the rules of workflows (who may author, see and trigger them; the trigger
//! kinds; the actions' shape; the trigger payload) and the queuing of runs.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use teamcomm_kernel::jobs::{JobKind, NewJob};
use teamcomm_kernel::{Error, ErrorCode, EventType, Page, PageRequest, SharedClock, filters, text};
use teamcomm_org::{Role, User};
use teamcomm_webhooks::AllowList;
use teamcomm_webhooks::guard::parse_destination;
use uuid::Uuid;

use crate::{
    Action, MAX_PAYLOAD_BYTES, RunStatus, Trigger, Workflow, WorkflowId, WorkflowInput,
    WorkflowListFilter, WorkflowRepository, WorkflowRun, WorkflowSelection,
};

#[cfg(test)]
mod tests;

/// The longest workflow name, in characters.
pub const MAX_WORKFLOW_NAME: usize = 255;
/// The longest description, in characters.
pub const MAX_DESCRIPTION: usize = 2_000;
/// The most actions one workflow runs.
pub const MAX_ACTIONS: usize = 20;
/// The longest text of an action (message text, e-mail subject or body), in characters.
pub const MAX_ACTION_TEXT: usize = 10_000;
/// Attempts of a run's job before it ends failed (the relay queues an event's runs with it too).
pub const RUN_ATTEMPTS: u32 = 3;

/// The ports of [`WorkflowService`].
#[derive(Clone)]
pub struct WorkflowPorts {
    pub workflows: Arc<dyn WorkflowRepository>,
    pub clock: SharedClock,
}

/// An organization's workflows.
#[derive(Clone)]
pub struct WorkflowService {
    workflows: Arc<dyn WorkflowRepository>,
    allow: Arc<AllowList>,
    clock: SharedClock,
}

impl WorkflowService {
    /// `allow`: hosts a `call_webhook` action may reach over plain HTTP or on an internal
    /// address (the webhook setting, for local testing).
    pub fn new(ports: WorkflowPorts, allow: AllowList) -> Self {
        WorkflowService {
            workflows: ports.workflows,
            allow: Arc::new(allow),
            clock: ports.clock,
        }
    }

    /// Everyone in the organization sees its workflows.
    pub async fn list(
        &self,
        actor: &User,
        filter: &WorkflowListFilter,
        page: PageRequest,
    ) -> Result<Page<Workflow>, Error> {
        filters::day_range(filter.start_date, filter.end_date)?;
        let selection = WorkflowSelection {
            search: filter.search.clone(),
            created_from: filter.start_date,
            created_until: filter.end_date,
            labels: filter.labels.clone(),
            featured_by: filter.featured.then_some(actor.id),
        };
        Ok(self
            .workflows
            .list_workflows(actor.org_id, &selection, page)
            .await?)
    }

    /// `not_found` for another organization's workflow.
    pub async fn get(&self, actor: &User, id: WorkflowId) -> Result<Workflow, Error> {
        Ok(self.workflows.get_workflow(actor.org_id, id).await?)
    }

    /// Members and admins (not guests) create workflows; `name`, `trigger_type` and `actions`
    /// are required.
    pub async fn create(&self, actor: &User, input: &WorkflowInput) -> Result<Workflow, Error> {
        if actor.role == Role::Guest {
            return Err(Error::new(
                ErrorCode::PermissionDenied,
                "Guest accounts cannot create workflows.",
            ));
        }
        let now = self.clock.now();
        let name = input.name.as_deref().ok_or_else(|| required("name"))?;
        let trigger = input
            .trigger_type
            .as_deref()
            .ok_or_else(|| required("trigger_type"))?;
        let actions = input.actions.as_ref().ok_or_else(|| required("actions"))?;
        let workflow = Workflow {
            id: WorkflowId::new(),
            org_id: actor.org_id,
            name: text::name("name", name, MAX_WORKFLOW_NAME)?,
            description: description(input.description.as_deref().unwrap_or_default())?,
            trigger: trigger_type(trigger)?,
            actions: self.actions(actions)?,
            active: input.active.unwrap_or(true),
            frozen: false,
            created_by: Some(actor.id),
            created_at: now,
            updated_at: now,
            total_runs: 0,
            last_run_at: None,
        };
        Ok(self
            .workflows
            .create_workflow(actor.org_id, &workflow)
            .await?)
    }

    /// Admins, and the person who created it, update a workflow (`permission_denied` for
    /// others).
    pub async fn update(
        &self,
        actor: &User,
        id: WorkflowId,
        input: &WorkflowInput,
    ) -> Result<Workflow, Error> {
        let mut workflow = self.editable(actor, id).await?;
        if let Some(name) = &input.name {
            workflow.name = text::name("name", name, MAX_WORKFLOW_NAME)?;
        }
        if let Some(d) = &input.description {
            workflow.description = description(d)?;
        }
        if let Some(t) = &input.trigger_type {
            workflow.trigger = trigger_type(t)?;
        }
        if let Some(a) = &input.actions {
            workflow.actions = self.actions(a)?;
        }
        if let Some(active) = input.active {
            workflow.active = active;
        }
        workflow.updated_at = self.clock.now();
        Ok(self
            .workflows
            .update_workflow(actor.org_id, &workflow)
            .await?)
    }

    /// Admins, and the person who created it, delete a workflow (with its runs).
    pub async fn delete(&self, actor: &User, id: WorkflowId) -> Result<(), Error> {
        self.editable(actor, id).await?;
        Ok(self.workflows.delete_workflow(actor.org_id, id).await?)
    }

    /// `POST /v1/workflows/{uuid}/trigger/`: queues a run of an `api_trigger` workflow with
    /// `payload` (a JSON object of at most 8 KiB; none is `{}`).
    pub async fn trigger(
        &self,
        actor: &User,
        id: WorkflowId,
        payload: Option<Value>,
    ) -> Result<WorkflowRun, Error> {
        let workflow = self.get(actor, id).await?;
        if actor.role == Role::Guest {
            return Err(Error::new(
                ErrorCode::WorkflowExecuteNotAllowed,
                "Guest accounts cannot run workflows.",
            ));
        }
        if workflow.trigger != Trigger::ApiTrigger {
            return Err(Error::new(
                ErrorCode::WorkflowNotTriggerable,
                format!(
                    "This workflow runs on `{}`, not through the API; only `api_trigger` workflows can be triggered.",
                    workflow.trigger.as_str()
                ),
            ));
        }
        if workflow.frozen || !workflow.active {
            return Err(Error::new(
                ErrorCode::WorkflowFrozen,
                if workflow.frozen {
                    "This workflow is frozen and cannot run."
                } else {
                    "This workflow is inactive and cannot run."
                },
            ));
        }
        let payload = trigger_payload(payload)?;
        let now = self.clock.now();
        let run = WorkflowRun {
            id: Uuid::now_v7(),
            workflow_id: workflow.id,
            status: RunStatus::Queued,
            payload,
            triggered_by: Some(actor.id),
            queued_at: now,
            started_at: None,
            finished_at: None,
            error: None,
            actions_completed: 0,
        };
        let job = NewJob {
            id: Uuid::now_v7(),
            org_id: actor.org_id,
            kind: JobKind::WorkflowRun,
            payload: json!({ "run_id": run.id }),
            run_at: now,
            max_attempts: RUN_ATTEMPTS,
        };
        self.workflows.queue_run(actor.org_id, &run, &job).await?;
        Ok(run)
    }

    /// A workflow's runs, newest first (whoever sees the workflow sees them).
    pub async fn runs(
        &self,
        actor: &User,
        id: WorkflowId,
        page: PageRequest,
    ) -> Result<Page<WorkflowRun>, Error> {
        self.get(actor, id).await?;
        Ok(self.workflows.list_runs(actor.org_id, id, page).await?)
    }

    async fn editable(&self, actor: &User, id: WorkflowId) -> Result<Workflow, Error> {
        let workflow = self.get(actor, id).await?;
        if actor.role.is_admin() || workflow.created_by == Some(actor.id) {
            Ok(workflow)
        } else {
            Err(Error::new(
                ErrorCode::PermissionDenied,
                "Only organization admins and the workflow's creator can change it.",
            ))
        }
    }

    /// The actions of a JSON list, each checked.
    fn actions(&self, raw: &Value) -> Result<Vec<Action>, Error> {
        let Value::Array(items) = raw else {
            return Err(Error::invalid_field(
                "actions",
                "Expected a list of actions.",
            ));
        };
        if items.is_empty() || items.len() > MAX_ACTIONS {
            return Err(Error::invalid_field(
                "actions",
                format!("Give from 1 to {MAX_ACTIONS} actions."),
            ));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let action: Action = serde_json::from_value(item.clone()).map_err(|e| {
                    Error::invalid_field(
                        "actions",
                        format!("Action {i}: {e} (types: send_message, send_email, call_webhook)."),
                    )
                })?;
                self.check_action(&action)
                    .map_err(|m| Error::invalid_field("actions", format!("Action {i}: {m}")))?;
                Ok(action)
            })
            .collect()
    }

    fn check_action(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::SendMessage {
                user_uuids,
                team_uuids,
                channel_ids,
                text,
            } => {
                if user_uuids.is_empty() && team_uuids.is_empty() && channel_ids.is_empty() {
                    return Err("name at least one user, team or channel.".into());
                }
                action_text("text", text)
            }
            Action::SendEmail { to, subject, body } => {
                if to.is_empty() {
                    return Err("`to` needs at least one address.".into());
                }
                if let Some(bad) = to.iter().find(|a| !plausible_email(a)) {
                    return Err(format!("`{bad}` is not an e-mail address."));
                }
                action_text("subject", subject)?;
                action_text("body", body)
            }
            Action::CallWebhook { url, body } => {
                parse_destination(url, &self.allow).map_err(|r| r.message())?;
                match body {
                    Some(b) if b.to_string().len() > MAX_PAYLOAD_BYTES => Err(format!(
                        "`body` is larger than {MAX_PAYLOAD_BYTES} bytes as JSON."
                    )),
                    _ => Ok(()),
                }
            }
        }
    }
}

fn required(field: &str) -> Error {
    Error::invalid_field(field, "This field is required.")
}

fn description(raw: &str) -> Result<String, Error> {
    let d = raw.trim();
    if d.chars().count() > MAX_DESCRIPTION {
        return Err(Error::invalid_field(
            "description",
            format!("Ensure this field has no more than {MAX_DESCRIPTION} characters."),
        ));
    }
    Ok(d.to_owned())
}

fn trigger_type(raw: &str) -> Result<Trigger, Error> {
    match Trigger::parse(raw.trim()) {
        // Its own finish would start it again, forever.
        Some(Trigger::Event(EventType::WorkflowFinished)) => Err(Error::invalid_field(
            "trigger_type",
            "A workflow cannot run on `workflow.finished`: its own runs would start it again.",
        )),
        Some(trigger) => Ok(trigger),
        None => Err(Error::invalid_field(
            "trigger_type",
            format!("Unknown trigger type; use one of: {}.", Trigger::names()),
        )),
    }
}

fn action_text(field: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("`{field}` may not be blank."));
    }
    if value.chars().count() > MAX_ACTION_TEXT {
        return Err(format!(
            "`{field}` is longer than {MAX_ACTION_TEXT} characters."
        ));
    }
    Ok(())
}

fn plausible_email(a: &str) -> bool {
    let a = a.trim();
    matches!(a.split_once('@'), Some((l, d)) if !l.is_empty() && d.contains('.') && !a.contains(char::is_whitespace))
}

/// The payload a run carries: a JSON object of at most [`MAX_PAYLOAD_BYTES`] (as JSON); none is
/// `{}`; anything else is `workflow_trigger_payload_invalid`.
fn trigger_payload(payload: Option<Value>) -> Result<Value, Error> {
    let payload = match payload {
        None | Some(Value::Null) => return Ok(Value::Object(Map::new())),
        Some(p) => p,
    };
    if !payload.is_object() {
        return Err(Error::new(
            ErrorCode::WorkflowTriggerPayloadInvalid,
            "`payload` must be a JSON object.",
        ));
    }
    let size = payload.to_string().len();
    if size > MAX_PAYLOAD_BYTES {
        return Err(Error::new(
            ErrorCode::WorkflowTriggerPayloadInvalid,
            format!("`payload` is {size} bytes as JSON; the most is {MAX_PAYLOAD_BYTES}."),
        )
        .with_extra("max_size_bytes", MAX_PAYLOAD_BYTES));
    }
    Ok(payload)
}
