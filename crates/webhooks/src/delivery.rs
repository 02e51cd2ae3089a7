//! Delivery of events to webhook endpoints, at least once, from the outbox through the durable
//! queue.
//!
//! * The relay ([`WebhookWorker::relay`]) takes new outbox events (each once, whatever the
//!   number of servers: the store claims them with `FOR UPDATE SKIP LOCKED` and marks them
//!   relayed) and, in the same transaction, writes a [`WebhookDelivery`] and a
//!   `webhook_delivery` job per endpoint the event goes to ([`subscribed`]).
//! * The worker ([`WebhookWorker::run_once`]) claims those jobs and sends the stored payload
//!   (the event's documented payload, with its id and time) through the [`WebhookSender`],
//!   `webhook-id` being the event id on every attempt. 2xx: delivered. 410: the endpoint is
//!   disabled at once. Anything else (3xx, 4xx, 5xx, timeouts, refused addresses): retried on
//!   the [`DeliverySettings`] schedule, never sooner than `Retry-After`; after the last attempt
//!   the delivery ends failed, and an endpoint that has delivered nothing for
//!   [`DISABLE_AFTER`] is disabled with the reason.
//! * A disabled endpoint gets no new deliveries; re-enabled, its failed deliveries can be
//!   replayed ([`DeliveryRepository::replay_failed`]).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use teamcomm_kernel::jobs::{Backoff, ClaimedJob, JOB_LEASE, JobKind, JobQueue};
use teamcomm_kernel::{EventType, OrgId, Page, PageRequest, RepoError};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::{
    Delivery, DeliveryOutcome, WebhookEndpoint, WebhookId, WebhookRepository, WebhookSender,
};

/// An endpoint none of whose deliveries succeeded for this long (and older than this) is
/// disabled when one of its deliveries exhausts its attempts.
pub const DISABLE_AFTER: Duration = Duration::days(5);

/// Why a 410 disabled an endpoint.
pub const GONE_REASON: &str = "the receiver answered 410 Gone";

/// Whether an event goes to an endpoint: enabled, subscribed to the event's type, and, when the
/// endpoint names objects, the event concerns one of them. (The Postgres relay applies the same
/// rule in SQL.)
pub fn subscribed(
    endpoint: &WebhookEndpoint,
    event_type: EventType,
    object_id: Option<Uuid>,
) -> bool {
    endpoint.enabled
        && endpoint.events.contains(&event_type)
        && (endpoint.object_ids.is_empty()
            || object_id.is_some_and(|o| endpoint.object_ids.contains(&o)))
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Waiting for its (next) attempt.
    Pending,
    Delivered,
    /// Out of attempts, answered 410, or its endpoint was disabled; replayable.
    Failed,
}

impl DeliveryStatus {
    pub const ALL: [DeliveryStatus; 3] = [
        DeliveryStatus::Pending,
        DeliveryStatus::Delivered,
        DeliveryStatus::Failed,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// One event's delivery to one endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDelivery {
    pub id: Uuid,
    pub org_id: OrgId,
    pub endpoint_id: WebhookId,
    pub event_id: Uuid,
    pub event_type: EventType,
    pub status: DeliveryStatus,
    /// Attempts made so far.
    pub attempts: u32,
    pub last_status_code: Option<u16>,
    pub last_error: Option<String>,
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<OffsetDateTime>,
    pub delivered_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// What an attempt leaves on its delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub status: DeliveryStatus,
    pub attempts: u32,
    pub last_status_code: Option<u16>,
    pub last_error: Option<String>,
    pub next_attempt_at: Option<OffsetDateTime>,
    pub at: OffsetDateTime,
}

/// What an attempt needs: the delivery, its endpoint, and the payload to send.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryWork {
    pub delivery: WebhookDelivery,
    pub endpoint: WebhookEndpoint,
    /// The event's payload as the outbox holds it (docs/events.md).
    pub payload: Value,
}

/// Storage of deliveries. Every read and write but the relay takes the `OrgId`.
#[async_trait]
pub trait DeliveryRepository: Send + Sync + 'static {
    /// Fans out up to `limit` outbox events not yet relayed, oldest first, claimed so that no
    /// two callers take the same event; in one transaction marks them relayed at `now` and
    /// writes, per endpoint each goes to ([`subscribed`]), a pending delivery and a
    /// `webhook_delivery` job (payload `{"delivery_id"}`, due at `now`, `max_attempts`).
    /// Answers how many events were relayed.
    async fn relay(
        &self,
        limit: usize,
        now: OffsetDateTime,
        max_attempts: u32,
    ) -> Result<usize, RepoError>;

    /// The delivery, its endpoint and payload.
    async fn delivery_work(&self, org: OrgId, id: Uuid) -> Result<DeliveryWork, RepoError>;

    async fn record_attempt(
        &self,
        org: OrgId,
        id: Uuid,
        record: &AttemptRecord,
    ) -> Result<(), RepoError>;

    /// The endpoint's newest successful delivery's time.
    async fn last_delivered_at(
        &self,
        org: OrgId,
        endpoint: WebhookId,
    ) -> Result<Option<OffsetDateTime>, RepoError>;

    /// Stops deliveries to the endpoint, saying why.
    async fn disable_endpoint(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        reason: &str,
    ) -> Result<(), RepoError>;

    /// Delivers to the endpoint again (`NotFound` without it).
    async fn enable_endpoint(&self, org: OrgId, endpoint: WebhookId) -> Result<(), RepoError>;

    /// The endpoint's deliveries, newest first.
    async fn list_deliveries(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        page: PageRequest,
    ) -> Result<Page<WebhookDelivery>, RepoError>;

    /// Sets the endpoint's failed deliveries pending again (attempts from 0) with a job each,
    /// due at `now`, in one transaction; answers how many.
    async fn replay_failed(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        now: OffsetDateTime,
        max_attempts: u32,
    ) -> Result<u64, RepoError>;
}

/// The retry schedule and how a pass claims.
///
/// The default schedule: 12 attempts; after attempt *n* fails the next waits a uniform draw
/// below `min(1 min × 2^(n-1), 8 h)` (at least 1 min, at least `Retry-After`). The ceilings
/// add up to 1 + 2 + … + 256 min + 2 × 8 h ≈ 24.5 h, so a delivery is given up at most about a
/// day after its first attempt (half that on average, with the full jitter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliverySettings {
    pub batch_size: usize,
    pub concurrency: usize,
    pub lease: Duration,
    pub backoff: Backoff,
    pub max_attempts: u32,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        DeliverySettings {
            batch_size: 50,
            concurrency: 16,
            lease: Duration::minutes(2),
            backoff: Backoff {
                base: Duration::minutes(1),
                cap: Duration::hours(8),
            },
            max_attempts: 12,
        }
    }
}

/// The ports the worker works through.
#[derive(Clone)]
pub struct WebhookWorkerPorts {
    pub queue: Arc<dyn JobQueue>,
    pub deliveries: Arc<dyn DeliveryRepository>,
    pub endpoints: Arc<dyn WebhookRepository>,
    pub sender: Arc<dyn WebhookSender>,
}

/// What one pass did with the jobs it claimed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WebhookRunSummary {
    pub claimed: usize,
    pub delivered: usize,
    pub retried: usize,
    pub failed: usize,
    /// Jobs whose lease another worker took over before this one finished.
    pub lost: usize,
}

/// What became of a job's attempt, for the queue.
enum Settle {
    Complete,
    Retry(OffsetDateTime, String),
    Fail(String),
}

/// Relays outbox events to deliveries and delivers them.
#[derive(Clone)]
pub struct WebhookWorker {
    ports: WebhookWorkerPorts,
    settings: DeliverySettings,
}

impl WebhookWorker {
    pub fn new(ports: WebhookWorkerPorts, settings: DeliverySettings) -> Self {
        WebhookWorker { ports, settings }
    }

    pub fn settings(&self) -> DeliverySettings {
        self.settings
    }

    /// Fans out new outbox events, a batch at a time until none is left; answers how many.
    pub async fn relay(&self, now: OffsetDateTime) -> Result<usize, RepoError> {
        let batch = self.settings.batch_size.max(1);
        let mut relayed = 0;
        loop {
            let n = self
                .ports
                .deliveries
                .relay(batch, now, self.settings.max_attempts)
                .await?;
            relayed += n;
            if n < batch {
                return Ok(relayed);
            }
        }
    }

    /// Claims up to a batch of due `webhook_delivery` jobs and runs them, up to `concurrency`
    /// at once. `jitter` draws in `[0, 1)` for the backoff.
    pub async fn run_once(
        &self,
        now: OffsetDateTime,
        jitter: &mut (dyn FnMut() -> f64 + Send),
    ) -> Result<WebhookRunSummary, RepoError> {
        use futures_util::stream::{FuturesUnordered, StreamExt};

        let jobs = self
            .ports
            .queue
            .claim(
                &[JobKind::WebhookDelivery],
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
        let mut summary = WebhookRunSummary {
            claimed: jobs.len(),
            ..WebhookRunSummary::default()
        };
        let mut first_error = None;
        while let Some(result) = running.next().await {
            match result {
                Ok(Some(Settle::Complete)) => summary.delivered += 1,
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

    /// One attempt of a job's delivery, recorded on the delivery.
    async fn attempt(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
        draw: f64,
    ) -> Result<Settle, RepoError> {
        let org = job.org_id;
        let Some(id) = job
            .payload
            .get("delivery_id")
            .and_then(Value::as_str)
            .and_then(|s| Uuid::parse_str(s).ok())
        else {
            return Ok(Settle::Fail("payload names no delivery".into()));
        };
        let work = match self.ports.deliveries.delivery_work(org, id).await {
            Ok(work) => work,
            // The endpoint (and its deliveries) was deleted.
            Err(RepoError::NotFound) => return Ok(Settle::Fail("delivery_not_found".into())),
            Err(e) => return Err(e),
        };
        let DeliveryWork {
            delivery,
            endpoint,
            payload,
        } = work;
        if delivery.status != DeliveryStatus::Pending {
            return Ok(Settle::Complete);
        }
        let attempts = delivery.attempts + 1;
        let record = |status, code, error: Option<String>, next| AttemptRecord {
            status,
            attempts,
            last_status_code: code,
            last_error: error,
            next_attempt_at: next,
            at: now,
        };
        if !endpoint.enabled {
            let reason = "endpoint_disabled".to_owned();
            let r = AttemptRecord {
                attempts: delivery.attempts,
                ..record(DeliveryStatus::Failed, None, Some(reason.clone()), None)
            };
            self.ports.deliveries.record_attempt(org, id, &r).await?;
            return Ok(Settle::Fail(reason));
        }
        let secrets = self
            .ports
            .endpoints
            .endpoint_secrets(org, endpoint.id)
            .await?;
        let outgoing = Delivery {
            url: endpoint.url.clone(),
            message_id: delivery.event_id.to_string(),
            timestamp: now.unix_timestamp(),
            body: serde_json::to_vec(&payload).unwrap_or_default(),
            signing_secret: Some(secrets.signing_secret),
            bearer_token: secrets.bearer_token,
        };
        let (code, retry_after, error) = match self.ports.sender.send(&outgoing).await {
            DeliveryOutcome::Delivered { status } => {
                let r = record(DeliveryStatus::Delivered, Some(status), None, None);
                self.ports.deliveries.record_attempt(org, id, &r).await?;
                return Ok(Settle::Complete);
            }
            DeliveryOutcome::Gone => {
                let r = record(
                    DeliveryStatus::Failed,
                    Some(410),
                    Some(GONE_REASON.into()),
                    None,
                );
                self.ports.deliveries.record_attempt(org, id, &r).await?;
                self.ports
                    .deliveries
                    .disable_endpoint(org, endpoint.id, GONE_REASON)
                    .await?;
                return Ok(Settle::Fail(GONE_REASON.into()));
            }
            DeliveryOutcome::Failed {
                status,
                retry_after,
                error,
            } => (status, retry_after, error),
            DeliveryOutcome::Refused(refusal) => {
                (None, None, format!("refused: {}", refusal.reason()))
            }
        };
        if job.attempt < job.max_attempts {
            let retry_after = retry_after.map(|s| Duration::seconds(s.min(i64::MAX as u64) as i64));
            let next = now + self.settings.backoff.delay(job.attempt, retry_after, draw);
            let r = record(
                DeliveryStatus::Pending,
                code,
                Some(error.clone()),
                Some(next),
            );
            self.ports.deliveries.record_attempt(org, id, &r).await?;
            return Ok(Settle::Retry(next, error));
        }
        let r = record(DeliveryStatus::Failed, code, Some(error.clone()), None);
        self.ports.deliveries.record_attempt(org, id, &r).await?;
        let last_success = self
            .ports
            .deliveries
            .last_delivered_at(org, endpoint.id)
            .await?;
        let since = last_success.unwrap_or(endpoint.created_at);
        if now - since >= DISABLE_AFTER {
            let reason = format!(
                "no delivery succeeded for {} days; the last one failed: {error}",
                DISABLE_AFTER.whole_days()
            );
            self.ports
                .deliveries
                .disable_endpoint(org, endpoint.id, &reason)
                .await?;
        }
        Ok(Settle::Fail(error))
    }
}

#[cfg(test)]
#[path = "delivery_tests.rs"]
mod tests;
