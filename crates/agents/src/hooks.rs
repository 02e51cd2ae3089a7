//! Pushing agent messages to their agent's webhook: the worker of `agent_webhook` jobs.
//!
//! A message left for an agent with a webhook is stored with an `agent_webhook` job (one
//! transaction). The worker POSTs `{event: "agent.message", agent_name, message}` through the
//! webhook sender (the destination guard again, on the address connected; no redirects; 15 s),
//! with `X-Webhook-Secret` when the agent registered one and `webhook-id` the message id on
//! every attempt. 2xx: done. 410, a refused address or a 4xx other than 408/429: failed. Anything
//! else is retried on the backoff for [`HOOK_ATTEMPTS`] attempts. A webhook removed (or a
//! message gone) before the push settles the job without a call. The agent can always read its
//! messages with `GET /v1/agent-messages/`: the push is a convenience, at least once.

use std::sync::Arc;

use serde_json::{Value, json};
use teamcomm_kernel::RepoError;
use teamcomm_kernel::jobs::{Backoff, ClaimedJob, JOB_LEASE, JobKind, JobQueue};
use teamcomm_webhooks::{Delivery, DeliveryOutcome, WebhookSender};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::{AgentHook, AgentHookRepository, AgentMessage};

/// Attempts of a push before it is given up (about an hour with the backoff below).
pub const HOOK_ATTEMPTS: u32 = 8;

const BATCH: usize = 50;
const LEASE: Duration = Duration::minutes(2);
const BACKOFF: Backoff = Backoff {
    base: Duration::seconds(30),
    cap: Duration::minutes(30),
};

/// What the worker works through.
#[derive(Clone)]
pub struct HookPorts {
    pub queue: Arc<dyn JobQueue>,
    pub hooks: Arc<dyn AgentHookRepository>,
    pub sender: Arc<dyn WebhookSender>,
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HookRunSummary {
    pub claimed: usize,
    pub pushed: usize,
    pub retried: usize,
    pub failed: usize,
    /// Settled without a call: the webhook or the message is gone.
    pub skipped: usize,
}

enum Settle {
    Pushed,
    Skipped,
    Retry(OffsetDateTime, String),
    Fail(String),
}

/// Pushes agent messages to their agents' webhooks.
#[derive(Clone)]
pub struct AgentHookWorker {
    ports: HookPorts,
}

impl AgentHookWorker {
    pub fn new(ports: HookPorts) -> Self {
        AgentHookWorker { ports }
    }

    /// Claims up to a batch of due pushes and sends them one after another. `jitter` draws in
    /// `[0, 1)` for the backoff.
    pub async fn run_once(
        &self,
        now: OffsetDateTime,
        jitter: &mut (dyn FnMut() -> f64 + Send),
    ) -> Result<HookRunSummary, RepoError> {
        let jobs = self
            .ports
            .queue
            .claim(&[JobKind::AgentWebhook], BATCH, now, LEASE)
            .await?;
        let mut summary = HookRunSummary {
            claimed: jobs.len(),
            ..HookRunSummary::default()
        };
        for job in &jobs {
            let settle = match self.attempt(job, now, jitter()).await {
                Ok(s) => s,
                Err(e) if job.attempt < job.max_attempts => Settle::Retry(
                    now + BACKOFF.delay(job.attempt, None, jitter()),
                    e.to_string(),
                ),
                Err(e) => Settle::Fail(format!("store: {e}")),
            };
            let queue = &self.ports.queue;
            let done = match &settle {
                Settle::Pushed | Settle::Skipped => queue.complete(job, now).await,
                Settle::Retry(at, error) => queue.retry(job, *at, error).await,
                Settle::Fail(error) => queue.fail(job, now, error).await,
            };
            match done {
                Ok(()) => match settle {
                    Settle::Pushed => summary.pushed += 1,
                    Settle::Skipped => summary.skipped += 1,
                    Settle::Retry(..) => summary.retried += 1,
                    Settle::Fail(_) => summary.failed += 1,
                },
                // Another worker took the job over after the lease.
                Err(RepoError::Conflict { constraint }) if constraint == JOB_LEASE => {}
                Err(e) => return Err(e),
            }
        }
        Ok(summary)
    }

    async fn attempt(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
        draw: f64,
    ) -> Result<Settle, RepoError> {
        let Some(id) = job
            .payload
            .get("message_id")
            .and_then(Value::as_str)
            .and_then(|s| Uuid::parse_str(s).ok())
        else {
            return Ok(Settle::Fail("payload names no message".into()));
        };
        let Some((message, hook)) = self.ports.hooks.push_work(job.org_id, id).await? else {
            return Ok(Settle::Skipped);
        };
        let delivery = Delivery {
            url: hook.url.clone(),
            message_id: message.id.to_string(),
            timestamp: now.unix_timestamp(),
            body: push_body(&message, &hook).to_string().into_bytes(),
            signing_secret: None,
            bearer_token: None,
            webhook_secret: hook.secret.clone(),
        };
        let (status, retry_after, error) = match self.ports.sender.send(&delivery).await {
            DeliveryOutcome::Delivered { .. } => return Ok(Settle::Pushed),
            DeliveryOutcome::Gone => return Ok(Settle::Fail("the receiver answered 410".into())),
            DeliveryOutcome::Refused(r) => {
                return Ok(Settle::Fail(format!("refused: {}", r.message())));
            }
            DeliveryOutcome::Failed {
                status,
                retry_after,
                error,
            } => (status, retry_after, error),
        };
        let permanent = status.is_some_and(|s| (400..500).contains(&s) && s != 408 && s != 429);
        if permanent || job.attempt >= job.max_attempts {
            return Ok(Settle::Fail(error));
        }
        let retry_after =
            retry_after.map(|s| Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX)));
        Ok(Settle::Retry(
            now + BACKOFF.delay(job.attempt, retry_after, draw),
            error,
        ))
    }
}

/// What a push carries: the message as `GET /v1/agent-messages/` shows it.
pub fn push_body(message: &AgentMessage, hook: &AgentHook) -> Value {
    let time = |t: Option<OffsetDateTime>| t.and_then(|t| t.format(&Rfc3339).ok());
    json!({
        "event": "agent.message",
        "agent_name": hook.agent_name,
        "message": {
            "id": message.id.to_string(),
            "agent_name": message.agent_name,
            "content": message.content,
            "message_type": message.message_type.as_str(),
            "metadata": message.metadata,
            "sender_type": message.sender_type.as_str(),
            "sender_name": message.sender_name,
            "expires_at": time(message.expires_at),
            "created_at": time(Some(message.created_at)),
        },
    })
}
