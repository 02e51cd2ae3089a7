//! The delivery worker: claims due chat-message and e-mail jobs and delivers them, one pass
//! per [`DeliveryWorker::run_once`] (the server calls it on a tick; several servers may run it
//! against one queue).
//!
//! A chat message is sent target by target, each with the idempotency key
//! `{message_id}:{index}`, and each outcome is recorded as soon as it is known: a delivered
//! target is never sent again, and a target whose outcome was lost (a crash between the send
//! and the record) is sent again with the same key, which the adapter answers without posting
//! twice. Temporary failures keep the target queued and the job is retried with
//! [`Backoff`] (never sooner than the platform's `Retry-After`); lasting ones settle the
//! target `failed` with its reason; after the job's last attempt the targets still queued end
//! `attempts_exhausted`.

use std::collections::HashMap;
use std::sync::Arc;

use teamcomm_kernel::jobs::{
    Backoff, ClaimedJob, FINISHED_JOB_RETENTION, JOB_LEASE, JobKind, JobQueue,
};
use teamcomm_kernel::{OrgId, RepoError, UserId};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::email::EmailStatus;
use crate::mail::{MailError, Mailer};
use crate::message::{
    Delivery, DeliveryStatus, DeliveryTarget, FailureReason, Message, MessageId, MessageKind,
};
use crate::platform::{ChatPlatform, Destination, OutgoingMessage, PlatformError};
use crate::ports::{EmailRepository, MessageRepository, PlatformConnector, PlatformDirectory};

/// How a worker pass claims and retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerSettings {
    /// Jobs claimed per pass.
    pub batch_size: usize,
    /// Jobs of a pass run at once (a slow platform or mail server then holds up only its own
    /// jobs, and a pass stays well within its lease).
    pub concurrency: usize,
    /// How long a claimed job is ours before another worker may take it over.
    pub lease: Duration,
    pub backoff: Backoff,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        WorkerSettings {
            batch_size: 20,
            concurrency: 8,
            lease: Duration::minutes(5),
            backoff: Backoff::default(),
        }
    }
}

/// The ports the worker works through.
#[derive(Clone)]
pub struct WorkerPorts {
    pub queue: Arc<dyn JobQueue>,
    pub messages: Arc<dyn MessageRepository>,
    pub emails: Arc<dyn EmailRepository>,
    pub directory: Arc<dyn PlatformDirectory>,
    pub connector: Arc<dyn PlatformConnector>,
    pub mailer: Arc<dyn Mailer>,
}

/// What one pass did with the jobs it claimed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub claimed: usize,
    pub completed: usize,
    pub retried: usize,
    pub failed: usize,
    /// Jobs whose lease another worker took over before this one finished.
    pub lost: usize,
}

/// A uniform draw in `[0, 1)` per retry, for the backoff's jitter (a parameter, so the pass
/// stays deterministic under test).
pub type JitterSource<'a> = &'a mut (dyn FnMut() -> f64 + Send);

/// Where a job stands in the queue after its attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settled {
    Completed,
    Retried,
    Failed,
    /// Another worker took the job over (its lease had expired).
    Lost,
}

/// What became of a job's attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Done,
    Retry {
        retry_after: Option<std::time::Duration>,
        error: String,
    },
    Failed(String),
}

/// Delivers queued chat messages and e-mails.
#[derive(Clone)]
pub struct DeliveryWorker {
    ports: WorkerPorts,
    settings: WorkerSettings,
}

impl DeliveryWorker {
    pub fn new(ports: WorkerPorts, settings: WorkerSettings) -> Self {
        DeliveryWorker { ports, settings }
    }

    /// Forgets the jobs that finished more than [`FINISHED_JOB_RETENTION`] before `now`, a
    /// batch at a time so no statement holds many rows; answers how many. Any kind: the queue
    /// is shared, and this is its only housekeeping.
    pub async fn prune_finished_jobs(&self, now: OffsetDateTime) -> Result<usize, RepoError> {
        const BATCH: usize = 1_000;
        let before = now - FINISHED_JOB_RETENTION;
        let mut pruned = 0;
        loop {
            let n = self.ports.queue.prune_finished(before, BATCH).await?;
            pruned += n;
            if n < BATCH {
                return Ok(pruned);
            }
        }
    }

    /// Claims up to a batch of due jobs and runs them, up to `concurrency` at once (each job's
    /// own sends stay in order). A store that does not answer while claiming or settling is an
    /// error of the pass (reported once every job of the pass has finished); while running a
    /// job, the job is retried.
    pub async fn run_once(
        &self,
        now: OffsetDateTime,
        jitter: JitterSource<'_>,
    ) -> Result<RunSummary, RepoError> {
        use futures_util::stream::{FuturesUnordered, StreamExt};

        let jobs = self
            .ports
            .queue
            .claim(
                &[JobKind::ChatMessage, JobKind::Email],
                self.settings.batch_size,
                now,
                self.settings.lease,
            )
            .await?;
        // Drawn up front: the source is not shared between jobs running together.
        let draws: Vec<f64> = jobs.iter().map(|_| jitter()).collect();
        // A window of `concurrency` jobs, the next started as one ends. (Not
        // `stream::map(..).buffer_unordered(..)`: a closure returning a borrowing future makes
        // the pass's future not `Send` for every lifetime, and the server spawns it.)
        let mut waiting = jobs.iter().zip(draws);
        let mut running = FuturesUnordered::new();
        for (job, draw) in waiting.by_ref().take(self.settings.concurrency.max(1)) {
            running.push(self.run_job(job, now, draw));
        }
        let mut settled = Vec::with_capacity(jobs.len());
        while let Some(result) = running.next().await {
            settled.push(result);
            if let Some((job, draw)) = waiting.next() {
                running.push(self.run_job(job, now, draw));
            }
        }
        let mut summary = RunSummary {
            claimed: jobs.len(),
            ..RunSummary::default()
        };
        let mut first_error = None;
        for result in settled {
            match result {
                Ok(Settled::Completed) => summary.completed += 1,
                Ok(Settled::Retried) => summary.retried += 1,
                Ok(Settled::Failed) => summary.failed += 1,
                Ok(Settled::Lost) => summary.lost += 1,
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

    /// Runs one claimed job once and settles it in the queue.
    async fn run_job(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
        draw: f64,
    ) -> Result<Settled, RepoError> {
        let run = match job.kind {
            JobKind::ChatMessage => self.deliver_message(job, now).await,
            JobKind::Email => self.deliver_email(job, now).await,
            // Never claimed here (the workflow worker runs them).
            JobKind::WorkflowRun | JobKind::AgentWebhook => {
                Ok(Outcome::Failed("not a message or e-mail job".into()))
            }
            // Never claimed here (the webhook worker runs them).
            JobKind::WebhookDelivery => Ok(Outcome::Failed("not a message or e-mail job".into())),
        };
        let outcome = match run {
            Ok(outcome) => outcome,
            Err(e) if job.attempt < job.max_attempts => Outcome::Retry {
                retry_after: None,
                error: format!("store: {e}"),
            },
            // The last attempt: the job ends failed whatever happens next, so what it was
            // to send must not stay `queued` for ever. Best effort: the store just failed.
            Err(e) => {
                let exhausted = FailureReason::AttemptsExhausted.as_str();
                match self.settle_exhausted(job, now).await {
                    Ok(()) => Outcome::Failed(format!("{exhausted}: store: {e}")),
                    Err(again) => Outcome::Failed(format!(
                        "{exhausted}: store: {e}; its sends could not be settled: {again}"
                    )),
                }
            }
        };
        let settled = match &outcome {
            Outcome::Done => self.ports.queue.complete(job, now).await,
            Outcome::Retry { retry_after, error } => {
                let retry_after = retry_after.and_then(|d| Duration::try_from(d).ok());
                let delay = self.settings.backoff.delay(job.attempt, retry_after, draw);
                self.ports.queue.retry(job, now + delay, error).await
            }
            Outcome::Failed(error) => self.ports.queue.fail(job, now, error).await,
        };
        match settled {
            Ok(()) => Ok(match outcome {
                Outcome::Done => Settled::Completed,
                Outcome::Retry { .. } => Settled::Retried,
                Outcome::Failed(_) => Settled::Failed,
            }),
            Err(RepoError::Conflict { constraint }) if constraint == JOB_LEASE => Ok(Settled::Lost),
            Err(e) => Err(e),
        }
    }

    async fn deliver_message(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
    ) -> Result<Outcome, RepoError> {
        let org = job.org_id;
        let Some(id) = payload_id(job, "message_id").map(MessageId) else {
            return Ok(Outcome::Failed("payload names no message".into()));
        };
        let mut message = match self.ports.messages.get_message(org, id).await {
            Ok(m) => m,
            Err(RepoError::NotFound) => return Ok(Outcome::Failed("message_not_found".into())),
            Err(e) => return Err(e),
        };
        let mut replies = match message.kind {
            MessageKind::Post => self.ports.messages.thread_responses(org, id).await?,
            _ => Vec::new(),
        };
        // What an edit rewrites, or what a lone thread response replies to.
        let anchor = match message.kind {
            MessageKind::Edit { original: other }
            | MessageKind::ThreadResponse { parent: other, .. } => {
                Some(self.ports.messages.get_message(org, other).await?)
            }
            MessageKind::Post => None,
        };

        let Some(connection) = self.ports.directory.connection(org).await? else {
            for m in std::iter::once(&mut message).chain(replies.iter_mut()) {
                self.settle_pending(m, FailureReason::PlatformNotConnected, now)
                    .await?;
            }
            return Ok(Outcome::Done);
        };
        let platform = match self.ports.connector.connect(&connection) {
            Ok(platform) => platform,
            Err(e) if e.is_temporary() => {
                return Ok(Outcome::Retry {
                    retry_after: e.retry_after(),
                    error: e.to_string(),
                });
            }
            Err(e) => {
                let reason = failure_reason(&e);
                for m in std::iter::once(&mut message).chain(replies.iter_mut()) {
                    self.settle_pending(m, reason, now).await?;
                }
                return Ok(Outcome::Failed(reason.as_str().into()));
            }
        };
        let people: Vec<UserId> = message
            .pending()
            .chain(replies.iter().flat_map(Message::pending))
            .filter_map(|d| match d.target {
                DeliveryTarget::Person(id) => Some(id),
                DeliveryTarget::Channel { .. } => None,
            })
            .collect();
        let identities = if people.is_empty() {
            HashMap::new()
        } else {
            self.ports
                .directory
                .platform_user_ids(org, connection.kind, &people)
                .await?
        };

        let mut pass = Pass {
            platform: platform.as_ref(),
            identities: &identities,
            halted: None,
            temporary: None,
        };
        self.send_pending(&mut pass, &mut message, anchor.as_ref(), now)
            .await?;
        for reply in &mut replies {
            self.send_pending(&mut pass, reply, Some(&message), now)
                .await?;
        }

        let has_pending = std::iter::once(&message)
            .chain(replies.iter())
            .any(|m| m.pending().next().is_some());
        if has_pending {
            let error = pass.temporary.as_ref().map_or_else(
                || "waiting for the original delivery".to_owned(),
                |e| e.to_string(),
            );
            if job.attempt < job.max_attempts {
                return Ok(Outcome::Retry {
                    retry_after: pass.temporary.as_ref().and_then(PlatformError::retry_after),
                    error,
                });
            }
            for m in std::iter::once(&mut message).chain(replies.iter_mut()) {
                self.settle_pending(m, FailureReason::AttemptsExhausted, now)
                    .await?;
            }
            return Ok(Outcome::Failed(format!(
                "{}: {error}",
                FailureReason::AttemptsExhausted.as_str()
            )));
        }
        let first_failure = std::iter::once(&message)
            .chain(replies.iter())
            .flat_map(|m| m.deliveries.iter())
            .find_map(|d| match d.status {
                DeliveryStatus::Failed(reason) => Some(reason),
                _ => None,
            });
        Ok(match first_failure {
            Some(reason) => Outcome::Failed(reason.as_str().into()),
            None => Outcome::Done,
        })
    }

    /// Sends the queued deliveries of `message` in order, recording each outcome as it comes.
    /// `anchor` is the message an edit rewrites or a thread response replies to.
    async fn send_pending(
        &self,
        pass: &mut Pass<'_>,
        message: &mut Message,
        anchor: Option<&Message>,
        now: OffsetDateTime,
    ) -> Result<(), RepoError> {
        for i in 0..message.deliveries.len() {
            if message.deliveries[i].status != DeliveryStatus::Queued {
                continue;
            }
            let delivery = message.deliveries[i].clone();
            let status = match pass.halted {
                Some(Halt::RateLimited) => continue,
                Some(Halt::Unauthorized) => {
                    Some(DeliveryStatus::Failed(FailureReason::PlatformUnauthorized))
                }
                None => pass.attempt(message, &delivery, anchor).await,
            };
            if let Some(status) = status {
                self.ports
                    .messages
                    .record_delivery(message.org_id, message.id, delivery.index, &status, now)
                    .await?;
                message.deliveries[i].status = status;
                message.deliveries[i].updated_at = now;
            }
        }
        Ok(())
    }

    /// Settles what `job` still had to send as failed with `attempts_exhausted`.
    async fn settle_exhausted(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let org = job.org_id;
        let exhausted = FailureReason::AttemptsExhausted;
        match job.kind {
            JobKind::ChatMessage => {
                let Some(id) = payload_id(job, "message_id").map(MessageId) else {
                    return Ok(());
                };
                let mut message = self.ports.messages.get_message(org, id).await?;
                let mut replies = match message.kind {
                    MessageKind::Post => self.ports.messages.thread_responses(org, id).await?,
                    _ => Vec::new(),
                };
                for m in std::iter::once(&mut message).chain(replies.iter_mut()) {
                    self.settle_pending(m, exhausted, now).await?;
                }
            }
            JobKind::Email => {
                let Some(id) = payload_id(job, "email_id") else {
                    return Ok(());
                };
                if self.ports.emails.get_email(org, id).await?.status == EmailStatus::Queued {
                    let failed = EmailStatus::Failed(exhausted);
                    self.ports
                        .emails
                        .record_email(org, id, &failed, now)
                        .await?;
                }
            }
            JobKind::WorkflowRun | JobKind::WebhookDelivery | JobKind::AgentWebhook => {}
        }
        Ok(())
    }

    /// Settles every queued delivery of `message` as failed for `reason`.
    async fn settle_pending(
        &self,
        message: &mut Message,
        reason: FailureReason,
        now: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let failed = DeliveryStatus::Failed(reason);
        for delivery in &mut message.deliveries {
            if delivery.status == DeliveryStatus::Queued {
                self.ports
                    .messages
                    .record_delivery(message.org_id, message.id, delivery.index, &failed, now)
                    .await?;
                delivery.status = failed.clone();
                delivery.updated_at = now;
            }
        }
        Ok(())
    }

    async fn deliver_email(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
    ) -> Result<Outcome, RepoError> {
        let org: OrgId = job.org_id;
        let Some(id) = payload_id(job, "email_id") else {
            return Ok(Outcome::Failed("payload names no e-mail".into()));
        };
        let email = match self.ports.emails.get_email(org, id).await {
            Ok(e) => e,
            Err(RepoError::NotFound) => return Ok(Outcome::Failed("email_not_found".into())),
            Err(e) => return Err(e),
        };
        if email.status != EmailStatus::Queued {
            // Settled by an earlier attempt whose completion was lost.
            return Ok(Outcome::Done);
        }
        match self.ports.mailer.send(&email.outgoing()).await {
            Ok(()) => {
                self.ports
                    .emails
                    .record_email(org, id, &EmailStatus::Sent, now)
                    .await?;
                Ok(Outcome::Done)
            }
            Err(MailError::Temporary(error)) if job.attempt < job.max_attempts => {
                Ok(Outcome::Retry {
                    retry_after: None,
                    error,
                })
            }
            Err(MailError::Temporary(error)) => {
                let failed = EmailStatus::Failed(FailureReason::AttemptsExhausted);
                self.ports
                    .emails
                    .record_email(org, id, &failed, now)
                    .await?;
                Ok(Outcome::Failed(format!(
                    "{}: {error}",
                    FailureReason::AttemptsExhausted.as_str()
                )))
            }
            Err(MailError::Permanent(error)) => {
                let failed = EmailStatus::Failed(FailureReason::MailRefused);
                self.ports
                    .emails
                    .record_email(org, id, &failed, now)
                    .await?;
                Ok(Outcome::Failed(format!(
                    "{}: {error}",
                    FailureReason::MailRefused.as_str()
                )))
            }
        }
    }
}

/// Why the rest of a pass's deliveries are not attempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Halt {
    /// Wait as told; every remaining delivery stays queued.
    RateLimited,
    /// The credentials are refused; every remaining delivery would be too.
    Unauthorized,
}

/// One job's sending: the platform, who is who on it, and what stopped it.
struct Pass<'a> {
    platform: &'a dyn ChatPlatform,
    identities: &'a HashMap<UserId, String>,
    halted: Option<Halt>,
    /// The last temporary failure, which the retry waits out.
    temporary: Option<PlatformError>,
}

impl Pass<'_> {
    /// Tries one delivery; `None` leaves it queued (a temporary failure, or an anchor not yet
    /// delivered).
    async fn attempt(
        &mut self,
        message: &Message,
        delivery: &Delivery,
        anchor: Option<&Message>,
    ) -> Option<DeliveryStatus> {
        let anchored = anchor.and_then(|a| a.deliveries.iter().find(|d| d.index == delivery.index));
        let anchor_sent = match (message.kind, anchored.map(|d| &d.status)) {
            (MessageKind::Post, _) => None,
            (_, Some(DeliveryStatus::Delivered(sent))) => Some(sent),
            (_, Some(DeliveryStatus::Queued)) => return None,
            (_, Some(DeliveryStatus::Failed(_)) | None) => {
                return Some(DeliveryStatus::Failed(FailureReason::ParentNotDelivered));
            }
        };
        let destination = match (message.kind, anchor_sent) {
            (MessageKind::ThreadResponse { .. }, Some(parent)) => {
                // A reply to a message that is itself in a thread goes to that thread.
                let root = match anchored.map(|d| &d.target) {
                    Some(DeliveryTarget::Channel {
                        thread: Some(root), ..
                    }) => root.clone(),
                    _ => parent.message_id.clone(),
                };
                Destination::Channel {
                    channel_id: parent.channel_id.clone(),
                    thread: Some(root),
                }
            }
            (MessageKind::Edit { .. }, Some(original)) => Destination::Channel {
                channel_id: original.channel_id.clone(),
                thread: None,
            },
            _ => match &delivery.target {
                DeliveryTarget::Person(id) => match self.identities.get(id) {
                    Some(platform_user_id) => Destination::Person {
                        platform_user_id: platform_user_id.clone(),
                    },
                    None => {
                        return Some(DeliveryStatus::Failed(
                            FailureReason::PlatformIdentityMissing,
                        ));
                    }
                },
                DeliveryTarget::Channel { channel_id, thread } => Destination::Channel {
                    channel_id: channel_id.clone(),
                    thread: thread.clone(),
                },
            },
        };
        let content = &message.content;
        let outgoing = OutgoingMessage {
            idempotency_key: message.idempotency_key(delivery.index),
            destination,
            text: content.text.clone(),
            image_url: content.image_url.clone(),
            buttons: content.buttons.iter().map(|b| b.button.clone()).collect(),
            appearance: content.appearance.clone(),
        };
        let sent = match (message.kind, anchor_sent) {
            (MessageKind::Edit { .. }, Some(original)) => self
                .platform
                .edit(original, &outgoing)
                .await
                .map(|()| original.clone()),
            _ => self.platform.send(&outgoing).await,
        };
        match sent {
            Ok(sent) => Some(DeliveryStatus::Delivered(sent)),
            Err(e) if e.is_temporary() => {
                if matches!(e, PlatformError::RateLimited { .. }) {
                    self.halted = Some(Halt::RateLimited);
                }
                self.temporary = Some(e);
                None
            }
            Err(e) => {
                if matches!(e, PlatformError::Unauthorized(_)) {
                    self.halted = Some(Halt::Unauthorized);
                }
                Some(DeliveryStatus::Failed(failure_reason(&e)))
            }
        }
    }
}

/// The lasting reason of a permanent platform error.
fn failure_reason(e: &PlatformError) -> FailureReason {
    match e {
        PlatformError::Unauthorized(_) => FailureReason::PlatformUnauthorized,
        PlatformError::NotFound(_) => FailureReason::DestinationNotFound,
        _ => FailureReason::PlatformRefused,
    }
}

/// The id a job's payload names under `key`.
fn payload_id(job: &ClaimedJob, key: &str) -> Option<Uuid> {
    job.payload
        .get(key)
        .and_then(|v| v.as_str())
        .and_then(|s| Uuid::parse_str(s).ok())
}

#[cfg(test)]
mod tests;
