//! Delivery of events to webhook endpoints, at least once, from the outbox through the durable
//! queue.
//!
//! * The relay ([`WebhookWorker::relay`]) takes new outbox events (each once, whatever the
//!   number of servers: the store claims them with `FOR UPDATE SKIP LOCKED` and marks them
//!   relayed) and, in the same transaction, writes a [`WebhookDelivery`] and a
//!   `webhook_delivery` job per endpoint the event goes to ([`subscribed`]).
//! * The worker ([`WebhookWorker::run_once`]) claims those jobs, reads their deliveries in one
//!   go ([`DeliveryRepository::deliveries_work`]) and sends each stored payload (the event's
//!   documented payload, with its id and time) through the [`WebhookSender`], `webhook-id`
//!   being the event id on every attempt; the batch's attempts are recorded and their jobs
//!   ended in one write ([`DeliveryRepository::settle`]). 2xx: delivered. 410: the endpoint is
//!   disabled at once. Anything else (3xx, 4xx, 5xx, timeouts, refused addresses): retried on
//!   the [`DeliverySettings`] schedule, never sooner than `Retry-After`; after the last attempt
//!   the delivery ends failed, and an endpoint that has delivered nothing for
//!   [`DISABLE_AFTER`] is disabled with the reason.
//! * A disabled endpoint gets no new deliveries; re-enabled, its failed deliveries can be
//!   replayed ([`DeliveryRepository::replay_failed`]).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use teamcomm_kernel::jobs::{Backoff, ClaimedJob, JOB_LEASE, JobKind, JobQueue};
use teamcomm_kernel::{EventType, OrgId, Page, PageRequest, RepoError};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::{
    Delivery, DeliveryOutcome, EndpointSecrets, WebhookEndpoint, WebhookId, WebhookRepository,
    WebhookSender,
};

/// An endpoint none of whose deliveries succeeded for this long (and older than this) is
/// disabled when one of its deliveries exhausts its attempts.
pub const DISABLE_AFTER: Duration = Duration::days(5);

/// How long a relayed event (and its deliveries, failed ones included: they are replayable
/// until then) is kept; [`WebhookWorker::prune`] forgets older ones.
pub const EVENT_RETENTION: Duration = Duration::days(30);

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

/// What an attempt needs: the delivery, its endpoint and the endpoint's secrets, and the
/// payload to send.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryWork {
    pub delivery: WebhookDelivery,
    pub endpoint: WebhookEndpoint,
    pub secrets: EndpointSecrets,
    /// The event's payload as the outbox holds it (docs/events.md).
    pub payload: Value,
}

/// An attempt to store: its job, its delivery, what it leaves on the delivery, and how it ends
/// the job's claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Settlement {
    pub job: ClaimedJob,
    pub delivery: Uuid,
    pub record: AttemptRecord,
    pub end: JobEnd,
}

/// How an attempt ends its job's claim: the queue's `complete`, `retry` or `fail`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobEnd {
    Complete,
    /// Queued again, due at `at` (failed instead when that was the job's last attempt).
    Retry {
        at: OffsetDateTime,
        error: String,
    },
    Fail {
        error: String,
    },
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

    /// The deliveries asked for (each by its organization and id), each with its endpoint, the
    /// endpoint's secrets and the payload, read together (a worker's whole batch at once). A
    /// delivery not stored, or of another organization, is left out; the order is unspecified.
    async fn deliveries_work(
        &self,
        wanted: &[(OrgId, Uuid)],
    ) -> Result<Vec<DeliveryWork>, RepoError>;

    /// Records an attempt on the delivery (`NotFound` without it).
    async fn record_attempt(
        &self,
        org: OrgId,
        id: Uuid,
        record: &AttemptRecord,
    ) -> Result<(), RepoError>;

    /// Records each attempt on its delivery and ends its job's claim as its `end` says, all in
    /// one transaction (a worker's whole batch at once): the queue's `complete` or `fail` at
    /// `now`, or `retry`, each fenced by the claimed attempt as [`JobQueue`] fences them. An
    /// attempt is recorded whether or not its claim still held (a delivery since deleted is no
    /// error). Answers, in order, whether each job's claim held: `false` when another worker
    /// had taken the job over (the job is left to it).
    async fn settle(
        &self,
        settlements: &[Settlement],
        now: OffsetDateTime,
    ) -> Result<Vec<bool>, RepoError>;

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

    /// Deletes the outbox events relayed before `before`, with their deliveries, unless one of
    /// those is still pending; answers how many events went.
    async fn prune_relayed(&self, before: OffsetDateTime) -> Result<u64, RepoError>;
}

/// The retry schedule and how a pass claims.
///
/// The default schedule: 12 attempts; after attempt *n* fails the next waits a uniform draw
/// below `min(1 min × 2^(n-1), 8 h)` (at least 1 min, at least `Retry-After`). The ceilings
/// add up to 1 + 2 + … + 256 min + 2 × 8 h ≈ 24.5 h, so a delivery is given up at most about a
/// day after its first attempt (half that on average, with the full jitter).
///
/// A pass claims `batch_size` jobs and sends `concurrency` at once, and records the batch when
/// its last send ended: with the sender's 15 s limit, the default batch takes at most
/// 4 × 15 s = 1 min, half the lease, even when every receiver hangs.
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
            batch_size: 100,
            concurrency: 32,
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

    /// Forgets the events relayed more than [`EVENT_RETENTION`] before `now`, with their
    /// deliveries (not while one is pending); answers how many events went.
    pub async fn prune(&self, now: OffsetDateTime) -> Result<u64, RepoError> {
        self.ports
            .deliveries
            .prune_relayed(now - EVENT_RETENTION)
            .await
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

    /// Claims up to a batch of due `webhook_delivery` jobs, reads their deliveries in one go,
    /// and runs them, up to `concurrency` at once. `jitter` draws in `[0, 1)` for the backoff.
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
        if jobs.is_empty() {
            return Ok(WebhookRunSummary::default());
        }
        let wanted: Vec<(OrgId, Uuid)> = jobs
            .iter()
            .filter_map(|job| delivery_id(job).map(|id| (job.org_id, id)))
            .collect();
        // One read for the batch; when it fails, every job is retried as a store failure.
        let works: Result<HashMap<Uuid, DeliveryWork>, RepoError> = self
            .ports
            .deliveries
            .deliveries_work(&wanted)
            .await
            .map(|all| all.into_iter().map(|w| (w.delivery.id, w)).collect());
        let draws: Vec<f64> = jobs.iter().map(|_| jitter()).collect();
        let mut waiting = jobs.iter().zip(draws);
        let mut running = FuturesUnordered::new();
        for (job, draw) in waiting.by_ref().take(self.settings.concurrency.max(1)) {
            running.push(self.run_job(job, &works, now, draw));
        }
        let mut summary = WebhookRunSummary {
            claimed: jobs.len(),
            ..WebhookRunSummary::default()
        };
        let mut first_error = None;
        let mut settlements = Vec::new();
        let mut exhausted = Vec::new();
        while let Some(result) = running.next().await {
            match result {
                Ok(Ran::Attempted(attempted)) => {
                    let (settlement, last) = *attempted;
                    settlements.push(settlement);
                    exhausted.push(last);
                }
                Ok(Ran::Ended(end)) => summary.count(Some(&end)),
                Ok(Ran::Lost) => summary.count(None),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
            if let Some((job, draw)) = waiting.next() {
                running.push(self.run_job(job, &works, now, draw));
            }
        }
        // The batch's attempts recorded and their jobs ended in one write. Should it fail, the
        // jobs go back to the queue when their lease ends, and are attempted again.
        if !settlements.is_empty() {
            match self.ports.deliveries.settle(&settlements, now).await {
                Ok(held) => {
                    for ((s, last), held) in settlements.iter().zip(exhausted).zip(held) {
                        summary.count(held.then_some(&s.end));
                        if let Some(last) = last
                            && let Err(e) = self.disable_if_failing(s.job.org_id, last, now).await
                        {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(summary),
        }
    }

    /// Runs one job's attempt: its settlement to write, or how the job already ended.
    async fn run_job(
        &self,
        job: &ClaimedJob,
        works: &Result<HashMap<Uuid, DeliveryWork>, RepoError>,
        now: OffsetDateTime,
        draw: f64,
    ) -> Result<Ran, RepoError> {
        let attempted = match works {
            Ok(works) => self.attempt(job, works, now, draw).await,
            Err(e) => Err(e.clone()),
        };
        let e = match attempted {
            Ok(ran) => return Ok(ran),
            Err(RepoError::Conflict { constraint }) if constraint == JOB_LEASE => {
                return Ok(Ran::Lost);
            }
            Err(e) => e,
        };
        // A store failure before the attempt was made or recorded: the job alone is ended, so
        // the attempt is made again (the delivery is still pending).
        let error = format!("store: {e}");
        let queue = &self.ports.queue;
        let (end, done) = if job.attempt < job.max_attempts {
            let at = now + self.settings.backoff.delay(job.attempt, None, draw);
            let done = queue.retry(job, at, &error).await;
            (JobEnd::Retry { at, error }, done)
        } else {
            let done = queue.fail(job, now, &error).await;
            (JobEnd::Fail { error }, done)
        };
        match done {
            Ok(()) => Ok(Ran::Ended(end)),
            Err(RepoError::Conflict { constraint }) if constraint == JOB_LEASE => Ok(Ran::Lost),
            Err(e) => Err(e),
        }
    }

    /// The settlement of an attempt, to write with the batch's.
    fn settlement(
        job: &ClaimedJob,
        delivery: Uuid,
        record: AttemptRecord,
        end: JobEnd,
        last: Option<Exhausted>,
    ) -> Ran {
        Ran::Attempted(Box::new((
            Settlement {
                job: job.clone(),
                delivery,
                record,
                end,
            },
            last,
        )))
    }

    /// After a delivery's last attempt failed: disables its endpoint when none of its
    /// deliveries succeeded for [`DISABLE_AFTER`] (and it is older than that).
    async fn disable_if_failing(
        &self,
        org: OrgId,
        exhausted: Exhausted,
        now: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let last_success = self
            .ports
            .deliveries
            .last_delivered_at(org, exhausted.endpoint)
            .await?;
        let since = last_success.unwrap_or(exhausted.endpoint_created_at);
        if now - since >= DISABLE_AFTER {
            let reason = format!(
                "no delivery succeeded for {} days; the last one failed: {}",
                DISABLE_AFTER.whole_days(),
                exhausted.error
            );
            self.ports
                .deliveries
                .disable_endpoint(org, exhausted.endpoint, &reason)
                .await?;
        }
        Ok(())
    }

    /// One attempt of a job's delivery: what to record and how the job ends (written with the
    /// batch's), or how the job already ended; an error is a store failure before the attempt.
    async fn attempt(
        &self,
        job: &ClaimedJob,
        works: &HashMap<Uuid, DeliveryWork>,
        now: OffsetDateTime,
        draw: f64,
    ) -> Result<Ran, RepoError> {
        let org = job.org_id;
        let queue = &self.ports.queue;
        let Some(id) = delivery_id(job) else {
            let error = "payload names no delivery".to_owned();
            queue.fail(job, now, &error).await?;
            return Ok(Ran::Ended(JobEnd::Fail { error }));
        };
        // Not read: the endpoint (and its deliveries) was deleted.
        let Some(work) = works.get(&id).filter(|w| w.delivery.org_id == org) else {
            let error = "delivery_not_found".to_owned();
            queue.fail(job, now, &error).await?;
            return Ok(Ran::Ended(JobEnd::Fail { error }));
        };
        let DeliveryWork {
            delivery,
            endpoint,
            secrets,
            payload,
        } = work;
        if delivery.status != DeliveryStatus::Pending {
            queue.complete(job, now).await?;
            return Ok(Ran::Ended(JobEnd::Complete));
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
            let end = JobEnd::Fail { error: reason };
            return Ok(Self::settlement(job, id, r, end, None));
        }
        let outgoing = Delivery {
            url: endpoint.url.clone(),
            message_id: delivery.event_id.to_string(),
            timestamp: now.unix_timestamp(),
            body: serde_json::to_vec(payload).unwrap_or_default(),
            signing_secret: Some(secrets.signing_secret.clone()),
            bearer_token: secrets.bearer_token.clone(),
            webhook_secret: None,
        };
        let (code, retry_after, error) = match self.ports.sender.send(&outgoing).await {
            DeliveryOutcome::Delivered { status } => {
                let r = record(DeliveryStatus::Delivered, Some(status), None, None);
                return Ok(Self::settlement(job, id, r, JobEnd::Complete, None));
            }
            DeliveryOutcome::Gone => {
                // Disabled first: should that fail, the job is retried with the delivery
                // still pending, and the next attempt meets the 410 again.
                self.ports
                    .deliveries
                    .disable_endpoint(org, endpoint.id, GONE_REASON)
                    .await?;
                let r = record(
                    DeliveryStatus::Failed,
                    Some(410),
                    Some(GONE_REASON.into()),
                    None,
                );
                let end = JobEnd::Fail {
                    error: GONE_REASON.into(),
                };
                return Ok(Self::settlement(job, id, r, end, None));
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
            let end = JobEnd::Retry { at: next, error };
            return Ok(Self::settlement(job, id, r, end, None));
        }
        let r = record(DeliveryStatus::Failed, code, Some(error.clone()), None);
        let end = JobEnd::Fail {
            error: error.clone(),
        };
        let exhausted = Exhausted {
            endpoint: endpoint.id,
            endpoint_created_at: endpoint.created_at,
            error,
        };
        Ok(Self::settlement(job, id, r, end, Some(exhausted)))
    }
}

/// What running a job came to.
enum Ran {
    /// An attempt to write with the batch's, and its endpoint to check when that was the
    /// delivery's last attempt.
    Attempted(Box<(Settlement, Option<Exhausted>)>),
    /// The job was ended on its own (nothing to attempt, or a store failure).
    Ended(JobEnd),
    /// Another worker had taken the job over.
    Lost,
}

impl WebhookRunSummary {
    /// Counts a job that ended as `end`, or was lost (`None`).
    fn count(&mut self, end: Option<&JobEnd>) {
        match end {
            Some(JobEnd::Complete) => self.delivered += 1,
            Some(JobEnd::Retry { .. }) => self.retried += 1,
            Some(JobEnd::Fail { .. }) => self.failed += 1,
            None => self.lost += 1,
        }
    }
}

/// A delivery out of attempts: its endpoint, and what the last attempt met.
struct Exhausted {
    endpoint: WebhookId,
    endpoint_created_at: OffsetDateTime,
    error: String,
}

/// The delivery a job's payload names.
fn delivery_id(job: &ClaimedJob) -> Option<Uuid> {
    job.payload
        .get("delivery_id")
        .and_then(Value::as_str)
        .and_then(|s| Uuid::parse_str(s).ok())
}

#[cfg(test)]
#[path = "delivery_tests.rs"]
mod tests;
