//! Executing workflow runs: the worker of `workflow_run` jobs.
//!
//! A run performs its workflow's actions in order, each with the values of the run substituted
//! into its text ([`render`]):
//!
//! * `send_message`: a bot message through the messaging service
//!   ([`MessagingService::queue_automated`]), on behalf of the person who triggered the run, or
//!   else the workflow's creator; its id is derived from the run and the step, so a step repeated
//!   after a crash queues it once.
//! * `send_email`: e-mail to those addresses that are active people of the organization
//!   ([`EmailService::queue_automated`]; the service is no open relay). None of them is a
//!   failure.
//! * `call_webhook`: a JSON POST through the [`WebhookSender`] (the destination guard again, on
//!   the address connected to; no redirects), `webhook-id` `<run>-<step>` on every attempt.
//!
//! After each action the run records how many ran, so a retried run resumes after them. A
//! temporary failure (a store error, a receiver's 5xx, 408, 429 or timeout) retries the run on the
//! backoff while its job has attempts left; anything else, or the last attempt, ends it failed
//! with the action and the reason. Every end writes `workflow.finished` with the run's outcome.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use teamcomm_kernel::jobs::{Backoff, ClaimedJob, JOB_LEASE, JobKind, JobQueue};
use teamcomm_kernel::{Error, Event, EventType, OrgId, RepoError, UserId, WireEnum};
use teamcomm_messaging::message::MessageId;
use teamcomm_messaging::request::{ChannelTargetInput, SendMessageRequest};
use teamcomm_messaging::{EmailService, MessagingService};
use teamcomm_webhooks::guard::parse_destination;
use teamcomm_webhooks::{AllowList, Delivery, DeliveryOutcome, WebhookSender};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::{Action, RunEnd, RunStatus, Workflow, WorkflowRepository, WorkflowRun};

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;

/// How the runner claims and retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunnerSettings {
    pub batch_size: usize,
    /// Runs executed at once.
    pub concurrency: usize,
    /// How long a claimed run is the runner's (a run calls receivers with a 15 s timeout).
    pub lease: Duration,
    pub backoff: Backoff,
}

impl Default for RunnerSettings {
    fn default() -> Self {
        RunnerSettings {
            batch_size: 20,
            concurrency: 4,
            lease: Duration::minutes(5),
            backoff: Backoff {
                base: Duration::seconds(30),
                cap: Duration::minutes(10),
            },
        }
    }
}

/// What the runner works through.
#[derive(Clone)]
pub struct RunnerPorts {
    pub queue: Arc<dyn JobQueue>,
    pub workflows: Arc<dyn WorkflowRepository>,
    pub messages: MessagingService,
    pub emails: EmailService,
    pub sender: Arc<dyn WebhookSender>,
}

/// What one pass did with the runs it claimed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunnerSummary {
    pub claimed: usize,
    pub succeeded: usize,
    pub retried: usize,
    pub failed: usize,
    /// Jobs whose lease another worker took over before this one finished.
    pub lost: usize,
}

/// Why an action did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
enum StepError {
    /// Worth another attempt (no sooner than `retry_after`).
    Temporary(String, Option<Duration>),
    /// Would fail again (a refused address, an unknown person, a 4xx).
    Permanent(String),
}

enum Settle {
    Complete,
    Retry(OffsetDateTime, String),
    Fail(String),
}

/// Executes queued workflow runs.
#[derive(Clone)]
pub struct WorkflowRunner {
    ports: RunnerPorts,
    allow: Arc<AllowList>,
    settings: RunnerSettings,
}

impl WorkflowRunner {
    /// `allow`: the hosts a `call_webhook` may reach over plain HTTP or on an internal address
    /// (the webhook setting, for local testing).
    pub fn new(ports: RunnerPorts, allow: AllowList, settings: RunnerSettings) -> Self {
        WorkflowRunner {
            ports,
            allow: Arc::new(allow),
            settings,
        }
    }

    /// Claims up to a batch of due runs and executes them, up to `concurrency` at once.
    /// `jitter` draws in `[0, 1)` for the backoff.
    pub async fn run_once(
        &self,
        now: OffsetDateTime,
        jitter: &mut (dyn FnMut() -> f64 + Send),
    ) -> Result<RunnerSummary, RepoError> {
        use futures_util::stream::{FuturesUnordered, StreamExt};

        let jobs = self
            .ports
            .queue
            .claim(
                &[JobKind::WorkflowRun],
                self.settings.batch_size,
                now,
                self.settings.lease,
            )
            .await?;
        let draws: Vec<f64> = jobs.iter().map(|_| jitter()).collect();
        let mut waiting = jobs.iter().zip(draws);
        let mut running = FuturesUnordered::new();
        for (job, draw) in waiting.by_ref().take(self.settings.concurrency.max(1)) {
            running.push(self.run_job(job, now, draw));
        }
        let mut summary = RunnerSummary {
            claimed: jobs.len(),
            ..RunnerSummary::default()
        };
        let mut first_error = None;
        while let Some(result) = running.next().await {
            match result {
                Ok(Some(Settle::Complete)) => summary.succeeded += 1,
                Ok(Some(Settle::Retry(..))) => summary.retried += 1,
                Ok(Some(Settle::Fail(_))) => summary.failed += 1,
                Ok(None) => summary.lost += 1,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
            if let Some((job, draw)) = waiting.next() {
                running.push(self.run_job(job, now, draw));
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(summary),
        }
    }

    /// Runs one job and settles it; `None` when another worker had taken it over.
    async fn run_job(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
        draw: f64,
    ) -> Result<Option<Settle>, RepoError> {
        let settle = match self.attempt(job, now, draw).await {
            Ok(settle) => settle,
            Err(e) if job.attempt < job.max_attempts => {
                let delay = self.settings.backoff.delay(job.attempt, None, draw);
                Settle::Retry(now + delay, format!("store: {e}"))
            }
            Err(e) => Settle::Fail(format!("store: {e}")),
        };
        let queue = &self.ports.queue;
        let done = match &settle {
            Settle::Complete => queue.complete(job, now).await,
            Settle::Retry(at, error) => queue.retry(job, *at, error).await,
            Settle::Fail(error) => queue.fail(job, now, error).await,
        };
        match done {
            Ok(()) => Ok(Some(settle)),
            Err(RepoError::Conflict { constraint }) if constraint == JOB_LEASE => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One attempt of a run: the actions not yet done, in order.
    async fn attempt(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
        draw: f64,
    ) -> Result<Settle, RepoError> {
        let org = job.org_id;
        let Some(run_id) = job
            .payload
            .get("run_id")
            .and_then(Value::as_str)
            .and_then(|s| Uuid::parse_str(s).ok())
        else {
            return Ok(Settle::Fail("payload names no run".into()));
        };
        let store = &self.ports.workflows;
        let (workflow, mut run) = match store.run_work(org, run_id).await {
            Ok(work) => work,
            // The workflow (and its runs) was deleted.
            Err(RepoError::NotFound) => return Ok(Settle::Fail("run_not_found".into())),
            Err(e) => return Err(e),
        };
        if matches!(run.status, RunStatus::Succeeded | RunStatus::Failed) {
            return Ok(Settle::Complete);
        }
        if run.actions_completed == 0 && (workflow.frozen || !workflow.active) {
            let why = if workflow.frozen {
                "the workflow was frozen before the run started"
            } else {
                "the workflow was deactivated before the run started"
            };
            self.finish(org, &workflow, &mut run, RunStatus::Failed, Some(why), now)
                .await?;
            return Ok(Settle::Fail(why.into()));
        }
        store.start_run(org, run.id, now).await?;
        run.started_at.get_or_insert(now);
        run.status = RunStatus::Running;
        let first = run.actions_completed as usize;
        for (step, action) in workflow.actions.iter().enumerate().skip(first) {
            match self.execute(org, &workflow, &run, step, action, now).await {
                Ok(()) => {
                    run.actions_completed = step as u32 + 1;
                    store
                        .record_progress(org, run.id, run.actions_completed)
                        .await?;
                }
                Err(StepError::Temporary(why, retry_after)) if job.attempt < job.max_attempts => {
                    let at = now + self.settings.backoff.delay(job.attempt, retry_after, draw);
                    return Ok(Settle::Retry(at, step_error(step, action, &why)));
                }
                Err(StepError::Temporary(why, _) | StepError::Permanent(why)) => {
                    let error = step_error(step, action, &why);
                    self.finish(
                        org,
                        &workflow,
                        &mut run,
                        RunStatus::Failed,
                        Some(&error),
                        now,
                    )
                    .await?;
                    return Ok(Settle::Fail(error));
                }
            }
        }
        self.finish(org, &workflow, &mut run, RunStatus::Succeeded, None, now)
            .await?;
        Ok(Settle::Complete)
    }

    async fn finish(
        &self,
        org: OrgId,
        workflow: &Workflow,
        run: &mut WorkflowRun,
        status: RunStatus,
        error: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<(), RepoError> {
        run.status = status;
        run.finished_at = Some(now);
        run.error = error.map(str::to_owned);
        let end = RunEnd {
            status,
            finished_at: now,
            error: run.error.clone(),
            actions_completed: run.actions_completed,
        };
        let event = finished_event(workflow, run, now);
        self.ports
            .workflows
            .finish_run(org, run.id, &end, &event)
            .await
    }

    async fn execute(
        &self,
        org: OrgId,
        workflow: &Workflow,
        run: &WorkflowRun,
        step: usize,
        action: &Action,
        now: OffsetDateTime,
    ) -> Result<(), StepError> {
        let values = run_values(workflow, run);
        match action {
            Action::SendMessage {
                user_uuids,
                team_uuids,
                channel_ids,
                text,
            } => {
                let sender = on_behalf_of(workflow, run)?;
                let request = SendMessageRequest {
                    message: Some(render(text, &values)),
                    target_users: user_uuids.iter().map(Uuid::to_string).collect(),
                    target_teams: team_uuids.clone(),
                    target_channels: channel_ids
                        .iter()
                        .map(|id| ChannelTargetInput {
                            id: id.clone(),
                            ..Default::default()
                        })
                        .collect(),
                    ..SendMessageRequest::default()
                };
                let id = MessageId(step_id(run.id, step));
                self.ports
                    .messages
                    .queue_automated(org, id, sender, request)
                    .await
                    .map(|_| ())
                    .map_err(from_service)
            }
            Action::SendEmail { to, subject, body } => {
                let sender = on_behalf_of(workflow, run)?;
                let to: Vec<String> = to.iter().map(|a| render(a, &values)).collect();
                let queued = self
                    .ports
                    .emails
                    .queue_automated(
                        org,
                        sender,
                        &to,
                        &render(subject, &values),
                        &render(body, &values),
                    )
                    .await
                    .map_err(from_service)?;
                if queued.sent_count == 0 {
                    return Err(StepError::Permanent(
                        "none of the addresses is an active person of the organization".into(),
                    ));
                }
                Ok(())
            }
            Action::CallWebhook { url, body } => {
                parse_destination(url, &self.allow)
                    .map_err(|r| StepError::Permanent(format!("refused: {}", r.message())))?;
                let body = match body {
                    Some(template) => render_json(template, &values),
                    None => values.clone(),
                };
                let delivery = Delivery {
                    url: url.clone(),
                    message_id: format!("{}-{}", run.id, step + 1),
                    timestamp: now.unix_timestamp(),
                    body: body.to_string().into_bytes(),
                    signing_secret: None,
                    bearer_token: None,
                    webhook_secret: None,
                };
                match self.ports.sender.send(&delivery).await {
                    DeliveryOutcome::Delivered { .. } => Ok(()),
                    DeliveryOutcome::Gone => {
                        Err(StepError::Permanent("the receiver answered 410".into()))
                    }
                    DeliveryOutcome::Refused(r) => {
                        Err(StepError::Permanent(format!("refused: {}", r.message())))
                    }
                    DeliveryOutcome::Failed {
                        status,
                        retry_after,
                        error,
                    } => {
                        let retry_after = retry_after
                            .map(|s| Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX)));
                        match status {
                            Some(s) if (400..500).contains(&s) && s != 408 && s != 429 => {
                                Err(StepError::Permanent(error))
                            }
                            _ => Err(StepError::Temporary(error, retry_after)),
                        }
                    }
                }
            }
        }
    }
}

/// The person a run's messages and e-mails go out for: who triggered it, else the workflow's
/// creator.
fn on_behalf_of(workflow: &Workflow, run: &WorkflowRun) -> Result<UserId, StepError> {
    run.triggered_by.or(workflow.created_by).ok_or_else(|| {
        StepError::Permanent(
            "nobody to send it on behalf of: the workflow's creator was deleted".into(),
        )
    })
}

/// A service refusal is permanent; a failure of the store (5xx) is worth another attempt.
fn from_service(e: Error) -> StepError {
    let why = e.detail().to_owned();
    if e.status() >= 500 {
        StepError::Temporary(why, None)
    } else {
        StepError::Permanent(why)
    }
}

fn step_error(step: usize, action: &Action, why: &str) -> String {
    format!("action {} ({}): {why}", step + 1, action.kind())
}

/// The id of what a step creates, the same on every attempt of the run.
fn step_id(run: Uuid, step: usize) -> Uuid {
    Uuid::new_v5(&run, format!("step-{}", step + 1).as_bytes())
}

/// What a run's templates may name, and the body of a `call_webhook` without one:
/// `{"workflow": {uuid, name, trigger_type}, "run": {uuid}, "payload": <the trigger payload, or
/// the event's document>}`.
pub fn run_values(workflow: &Workflow, run: &WorkflowRun) -> Value {
    json!({
        "workflow": {
            "uuid": workflow.id.0.to_string(),
            "name": workflow.name,
            "trigger_type": workflow.trigger.as_str(),
        },
        "run": {"uuid": run.id.to_string()},
        "payload": run.payload,
    })
}

/// `template` with every `{{path}}` replaced by the value at that dotted path of `values`
/// (`{{payload.customer.name}}`, `{{workflow.name}}`, `{{run.uuid}}`): a string as is, a number
/// or boolean as JSON, an object or list as compact JSON, and nothing for a missing value or
/// null. Text outside the braces is kept; an unclosed `{{` is kept as written.
pub fn render(template: &str, values: &Value) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open + 2..].find("}}") else {
            break;
        };
        out.push_str(&rest[..open]);
        let path = rest[open + 2..open + 2 + close].trim();
        match lookup(values, path) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out.push_str(s),
            Some(other) => out.push_str(&other.to_string()),
        }
        rest = &rest[open + 2 + close + 2..];
    }
    out.push_str(rest);
    out
}

/// A JSON template rendered: every string in it through [`render`]; a string that is only one
/// `{{path}}` takes the value itself (a number stays a number, an object an object).
pub fn render_json(template: &Value, values: &Value) -> Value {
    match template {
        Value::String(s) => {
            let t = s.trim();
            let whole = t
                .strip_prefix("{{")
                .and_then(|r| r.strip_suffix("}}"))
                .filter(|inner| !inner.contains("{{") && !inner.contains("}}"));
            match whole {
                Some(path) => lookup(values, path.trim()).cloned().unwrap_or(Value::Null),
                None => Value::String(render(s, values)),
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| render_json(v, values)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), render_json(v, values)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

fn lookup<'a>(values: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return None;
    }
    path.split('.').try_fold(values, |v, key| match v {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// The `workflow.finished` event of a run that ended (docs/events.md).
pub fn finished_event(workflow: &Workflow, run: &WorkflowRun, now: OffsetDateTime) -> Event {
    let time = |t: Option<OffsetDateTime>| t.and_then(|t| t.format(&Rfc3339).ok());
    Event::new(
        workflow.org_id,
        EventType::WorkflowFinished,
        Some(workflow.id.0),
        now,
        json!({
            "workflow": {
                "uuid": workflow.id.0.to_string(),
                "name": workflow.name,
                "trigger_type": workflow.trigger.as_str(),
            },
            "run": {
                "uuid": run.id.to_string(),
                "status": run.status.as_str(),
                "queued_at": time(Some(run.queued_at)),
                "started_at": time(run.started_at),
                "finished_at": time(run.finished_at),
                "error": run.error,
                "actions_total": workflow.actions.len(),
                "actions_completed": run.actions_completed,
            },
        }),
    )
}
