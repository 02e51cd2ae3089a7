//! The durable queue behind every outbound send (chat messages, e-mail; later webhook
//! deliveries and workflow runs): what a job is, the port the workers use, and the retry rule.
//!
//! Jobs are *written* by the repository that writes the change they belong to, in the same
//! transaction (like the outbox's events): a repository write takes `&[NewJob]`. Workers then
//! claim due jobs through [`JobQueue`] with a lease; a worker that dies leaves its lease to
//! expire and the job is claimed again (at-least-once). Delivery code makes each attempt
//! idempotent on the receiving side where the receiver allows it (Matrix transaction ids,
//! stored platform ids).

use async_trait::async_trait;
use serde_json::Value;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::{OrgId, RepoError};

/// What a job does; the worker that runs a kind is the only reader of its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// Deliver one chat message (payload: the message id).
    ChatMessage,
    /// Deliver one e-mail (payload: the e-mail id).
    Email,
    /// Deliver one event to one webhook endpoint (payload: the webhook delivery id).
    WebhookDelivery,
    /// Run one workflow run's actions (payload: the run id).
    WorkflowRun,
    /// Push one agent message to its agent's webhook (payload: the message id).
    AgentWebhook,
}

impl JobKind {
    pub const ALL: [JobKind; 5] = [
        JobKind::ChatMessage,
        JobKind::Email,
        JobKind::WebhookDelivery,
        JobKind::WorkflowRun,
        JobKind::AgentWebhook,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            JobKind::ChatMessage => "chat_message",
            JobKind::Email => "email",
            JobKind::WebhookDelivery => "webhook_delivery",
            JobKind::WorkflowRun => "workflow_run",
            JobKind::AgentWebhook => "agent_webhook",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A job to enqueue with a change.
#[derive(Debug, Clone, PartialEq)]
pub struct NewJob {
    pub id: Uuid,
    pub org_id: OrgId,
    pub kind: JobKind,
    pub payload: Value,
    /// Not before this instant.
    pub run_at: OffsetDateTime,
    /// Attempts before the job ends `failed`.
    pub max_attempts: u32,
}

/// A job a worker holds until `lease_until`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedJob {
    pub id: Uuid,
    pub org_id: OrgId,
    pub kind: JobKind,
    pub payload: Value,
    /// 1 for the first attempt.
    pub attempt: u32,
    pub max_attempts: u32,
    pub lease_until: OffsetDateTime,
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
}

impl JobState {
    pub const ALL: [JobState; 4] = [
        JobState::Queued,
        JobState::Running,
        JobState::Done,
        JobState::Failed,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }
}

/// What the queue holds of a job: the in-memory queue's and the Postgres adapter's answer to
/// "where does this job stand", for tests and operators.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    pub id: Uuid,
    pub org_id: OrgId,
    pub kind: JobKind,
    pub payload: Value,
    pub state: JobState,
    /// Attempts started so far (claims).
    pub attempt: u32,
    pub max_attempts: u32,
    pub run_at: OffsetDateTime,
    /// Set while `running`.
    pub lease_until: Option<OffsetDateTime>,
    pub last_error: Option<String>,
    /// Set once `done` or `failed`.
    pub finished_at: Option<OffsetDateTime>,
}

/// `last_error` of a job whose last allowed attempt's lease expired (its worker died or hung).
pub const LEASE_EXPIRED: &str = "lease_expired";

/// The constraint a stale holder's call is refused with.
pub const JOB_LEASE: &str = "job_lease";

/// The workers' side of the queue. Every method that names a claimed job takes the
/// `attempt` it was claimed with: a worker whose lease expired (and whose job another worker
/// claimed since) finds its completion refused with `Conflict { constraint: "job_lease" }`.
/// The fence is (id, attempt, `running`), not the lease's end: a late holder whose job nobody
/// took over may still finish it (its work is done; refusing it would only cause a resend).
///
/// `max_attempts` is the queue's to enforce: a claim never starts attempt `max_attempts + 1`.
/// A job whose last attempt's lease expired is ended `failed` with [`LEASE_EXPIRED`] by the next
/// claim of its kind; a `retry` of the last attempt ends the job `failed` with its error.
#[async_trait]
pub trait JobQueue: Send + Sync + 'static {
    /// Claims up to `limit` due jobs of these kinds (`run_at <= now`, queued, or running with
    /// an expired lease), oldest due first, each leased until `now + lease`; never the same job
    /// to two callers at once (`FOR UPDATE SKIP LOCKED`).
    async fn claim(
        &self,
        kinds: &[JobKind],
        limit: usize,
        now: OffsetDateTime,
        lease: Duration,
    ) -> Result<Vec<ClaimedJob>, RepoError>;

    /// The job is done.
    async fn complete(&self, job: &ClaimedJob, now: OffsetDateTime) -> Result<(), RepoError>;

    /// The attempt failed and the job runs again at `run_at`; `error` says why (kept for the
    /// status views).
    async fn retry(
        &self,
        job: &ClaimedJob,
        run_at: OffsetDateTime,
        error: &str,
    ) -> Result<(), RepoError>;

    /// The job ends `failed` for `error`.
    async fn fail(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
        error: &str,
    ) -> Result<(), RepoError>;

    /// Forgets up to `limit` jobs that finished (done or failed) before `before`, oldest first;
    /// answers how many. What a job did is kept by the change it belongs to (a delivery's
    /// status, an e-mail's), so a finished job is only the queue's bookkeeping.
    async fn prune_finished(
        &self,
        before: OffsetDateTime,
        limit: usize,
    ) -> Result<usize, RepoError>;
}

/// How long finished jobs are kept before [`JobQueue::prune_finished`] may forget them: long
/// enough to look into yesterday's failures.
pub const FINISHED_JOB_RETENTION: Duration = Duration::days(7);

/// The retry schedule: exponential from `base`, capped at `cap`, with full jitter, never
/// sooner than what the receiver asked for (`Retry-After`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub cap: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::seconds(2),
            cap: Duration::hours(1),
        }
    }
}

impl Backoff {
    /// The delay before attempt `attempt + 1`, after attempt `attempt` (1-based) failed.
    /// `jitter` is a uniform draw in `[0, 1)` supplied by the caller (keeps this pure).
    pub fn delay(self, attempt: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        let exp = attempt.saturating_sub(1).min(30);
        let ceiling = self
            .base
            .checked_mul(1_i32 << exp.min(30))
            .unwrap_or(self.cap)
            .min(self.cap);
        let jittered = ceiling * jitter.clamp(0.0, 1.0);
        // Never hammer: at least the base, and at least what the receiver asked for.
        let floor = retry_after.unwrap_or(Duration::ZERO).max(self.base);
        jittered.max(floor)
    }
}

/// An in-memory [`JobQueue`] for domain tests and the contract tests, with `enqueue` (what a
/// repository does with a change) and `job` to see where a job stands.
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    use std::sync::{Arc, Mutex, MutexGuard};

    use async_trait::async_trait;
    use time::{Duration, OffsetDateTime};
    use uuid::Uuid;

    use super::{
        ClaimedJob, JOB_LEASE, JobKind, JobQueue, JobRecord, JobState, LEASE_EXPIRED, NewJob,
    };
    use crate::RepoError;

    /// Clones share one queue, like processes share the jobs table.
    #[derive(Clone, Default)]
    pub struct InMemoryJobQueue(Arc<Mutex<Vec<JobRecord>>>);

    impl InMemoryJobQueue {
        /// Adds `jobs` as `queued`, all or none; an id already held is `jobs_pkey`, no
        /// attempt at all is refused as the table's CHECK refuses it.
        pub fn enqueue(&self, jobs: &[NewJob]) -> Result<(), RepoError> {
            if jobs.iter().any(|job| job.max_attempts == 0) {
                return Err(RepoError::Other(
                    "jobs_max_attempts_check: max_attempts >= 1".into(),
                ));
            }
            let mut held = self.lock();
            let duplicate = jobs.iter().enumerate().any(|(i, job)| {
                held.iter().any(|h| h.id == job.id) || jobs[..i].iter().any(|j| j.id == job.id)
            });
            if duplicate {
                return Err(RepoError::Conflict {
                    constraint: "jobs_pkey".into(),
                });
            }
            held.extend(jobs.iter().map(|job| JobRecord {
                id: job.id,
                org_id: job.org_id,
                kind: job.kind,
                payload: job.payload.clone(),
                state: JobState::Queued,
                attempt: 0,
                max_attempts: job.max_attempts,
                run_at: job.run_at,
                lease_until: None,
                last_error: None,
                finished_at: None,
            }));
            Ok(())
        }

        /// Where the job stands, if it was enqueued.
        pub fn job(&self, id: Uuid) -> Option<JobRecord> {
            self.lock().iter().find(|job| job.id == id).cloned()
        }

        /// Every job, in the order enqueued.
        pub fn all(&self) -> Vec<JobRecord> {
            self.lock().clone()
        }

        fn lock(&self) -> MutexGuard<'_, Vec<JobRecord>> {
            self.0.lock().expect("jobs")
        }

        /// The held job `claimed` names, if its holder still holds it.
        fn fenced<'a>(
            held: &'a mut [JobRecord],
            claimed: &ClaimedJob,
        ) -> Result<&'a mut JobRecord, RepoError> {
            held.iter_mut()
                .find(|job| {
                    job.id == claimed.id
                        && job.attempt == claimed.attempt
                        && job.state == JobState::Running
                })
                .ok_or_else(|| RepoError::Conflict {
                    constraint: JOB_LEASE.into(),
                })
        }
    }

    fn finish(job: &mut JobRecord, state: JobState, at: OffsetDateTime, error: Option<&str>) {
        job.state = state;
        job.lease_until = None;
        job.finished_at = Some(at);
        if let Some(error) = error {
            job.last_error = Some(error.to_owned());
        }
    }

    #[async_trait]
    impl JobQueue for InMemoryJobQueue {
        async fn claim(
            &self,
            kinds: &[JobKind],
            limit: usize,
            now: OffsetDateTime,
            lease: Duration,
        ) -> Result<Vec<ClaimedJob>, RepoError> {
            let mut held = self.lock();
            let lease_expired = |job: &JobRecord| {
                job.state == JobState::Running && job.lease_until.is_some_and(|end| end <= now)
            };
            for job in held.iter_mut() {
                if kinds.contains(&job.kind)
                    && lease_expired(job)
                    && job.attempt >= job.max_attempts
                {
                    finish(job, JobState::Failed, now, Some(LEASE_EXPIRED));
                }
            }
            let mut due: Vec<usize> = (0..held.len())
                .filter(|&i| {
                    let job = &held[i];
                    kinds.contains(&job.kind)
                        && ((job.state == JobState::Queued && job.run_at <= now)
                            || lease_expired(job))
                })
                .collect();
            // Oldest due first; ids (v7) break ties, as the Postgres adapter orders.
            due.sort_by_key(|&i| (held[i].run_at, held[i].id));
            due.truncate(limit);
            Ok(due
                .into_iter()
                .map(|i| {
                    let job = &mut held[i];
                    job.state = JobState::Running;
                    job.attempt += 1;
                    job.lease_until = Some(now + lease);
                    ClaimedJob {
                        id: job.id,
                        org_id: job.org_id,
                        kind: job.kind,
                        payload: job.payload.clone(),
                        attempt: job.attempt,
                        max_attempts: job.max_attempts,
                        lease_until: now + lease,
                    }
                })
                .collect())
        }

        async fn complete(&self, job: &ClaimedJob, now: OffsetDateTime) -> Result<(), RepoError> {
            let mut held = self.lock();
            finish(Self::fenced(&mut held, job)?, JobState::Done, now, None);
            Ok(())
        }

        async fn retry(
            &self,
            job: &ClaimedJob,
            run_at: OffsetDateTime,
            error: &str,
        ) -> Result<(), RepoError> {
            let mut held = self.lock();
            let held_job = Self::fenced(&mut held, job)?;
            if held_job.attempt >= held_job.max_attempts {
                // No `now` here: the store's clock, as the Postgres adapter's `now()`.
                finish(
                    held_job,
                    JobState::Failed,
                    OffsetDateTime::now_utc(),
                    Some(error),
                );
            } else {
                held_job.state = JobState::Queued;
                held_job.run_at = run_at;
                held_job.lease_until = None;
                held_job.last_error = Some(error.to_owned());
            }
            Ok(())
        }

        async fn fail(
            &self,
            job: &ClaimedJob,
            now: OffsetDateTime,
            error: &str,
        ) -> Result<(), RepoError> {
            let mut held = self.lock();
            finish(
                Self::fenced(&mut held, job)?,
                JobState::Failed,
                now,
                Some(error),
            );
            Ok(())
        }

        async fn prune_finished(
            &self,
            before: OffsetDateTime,
            limit: usize,
        ) -> Result<usize, RepoError> {
            let mut held = self.lock();
            let mut finished: Vec<(OffsetDateTime, Uuid)> = held
                .iter()
                .filter_map(|job| job.finished_at.map(|at| (at, job.id)))
                .filter(|(at, _)| *at < before)
                .collect();
            finished.sort();
            finished.truncate(limit);
            held.retain(|job| !finished.iter().any(|(_, id)| *id == job.id));
            Ok(finished.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_honours_retry_after() {
        let b = Backoff::default();
        assert_eq!(b.delay(1, None, 0.999_999), Duration::seconds(2));
        assert!(b.delay(5, None, 0.999_999) > Duration::seconds(31));
        assert!(b.delay(5, None, 0.999_999) <= Duration::seconds(32));
        assert!(b.delay(40, None, 0.999_999) <= Duration::hours(1));
        assert_eq!(b.delay(3, None, 0.0), Duration::seconds(2));
        assert_eq!(
            b.delay(1, Some(Duration::seconds(90)), 0.5),
            Duration::seconds(90)
        );
    }

    #[test]
    fn kinds_round_trip() {
        for k in JobKind::ALL {
            assert_eq!(JobKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(JobKind::parse("nope"), None);
        assert_eq!(
            JobKind::parse("webhook_delivery"),
            Some(JobKind::WebhookDelivery)
        );
    }

    mod in_memory {
        use serde_json::json;
        use time::macros::datetime;

        use super::super::testing::InMemoryJobQueue;
        use super::super::*;

        const T0: OffsetDateTime = datetime!(2030-01-01 12:00 UTC);
        const LEASE: Duration = Duration::seconds(30);

        fn new_job(kind: JobKind, run_at: OffsetDateTime, max_attempts: u32) -> NewJob {
            NewJob {
                id: Uuid::now_v7(),
                org_id: OrgId::new(),
                kind,
                payload: json!({"n": 1}),
                run_at,
                max_attempts,
            }
        }

        fn lease_refused(result: Result<(), RepoError>) -> bool {
            matches!(result, Err(RepoError::Conflict { constraint }) if constraint == JOB_LEASE)
        }

        #[tokio::test]
        async fn claims_due_jobs_of_the_kinds_asked_oldest_first() {
            let queue = InMemoryJobQueue::default();
            let later = new_job(JobKind::Email, T0 + Duration::seconds(5), 3);
            let first = new_job(JobKind::Email, T0 - Duration::seconds(5), 3);
            let chat = new_job(JobKind::ChatMessage, T0, 3);
            let second = new_job(JobKind::Email, T0, 3);
            queue
                .enqueue(&[later.clone(), second.clone(), chat.clone(), first.clone()])
                .unwrap();

            let claimed = queue.claim(&[JobKind::Email], 10, T0, LEASE).await.unwrap();
            let ids: Vec<_> = claimed.iter().map(|j| j.id).collect();
            assert_eq!(ids, [first.id, second.id]);
            assert!(
                claimed
                    .iter()
                    .all(|j| j.attempt == 1 && j.lease_until == T0 + LEASE)
            );
            assert_eq!(queue.job(chat.id).unwrap().state, JobState::Queued);
            assert_eq!(queue.job(later.id).unwrap().state, JobState::Queued);
            assert_eq!(queue.job(first.id).unwrap().state, JobState::Running);
        }

        #[tokio::test]
        async fn an_expired_lease_hands_the_job_out_again_and_fences_the_stale_holder() {
            let queue = InMemoryJobQueue::default();
            let job = new_job(JobKind::ChatMessage, T0, 3);
            queue.enqueue(std::slice::from_ref(&job)).unwrap();
            let kinds = [JobKind::ChatMessage];

            let stale = queue.claim(&kinds, 1, T0, LEASE).await.unwrap().remove(0);
            assert!(
                queue
                    .claim(&kinds, 1, T0 + LEASE - Duration::SECOND, LEASE)
                    .await
                    .unwrap()
                    .is_empty()
            );
            let fresh = queue
                .claim(&kinds, 1, T0 + LEASE, LEASE)
                .await
                .unwrap()
                .remove(0);
            assert_eq!(fresh.attempt, 2);

            assert!(lease_refused(queue.complete(&stale, T0 + LEASE).await));
            assert!(lease_refused(queue.retry(&stale, T0, "late").await));
            queue.complete(&fresh, T0 + LEASE).await.unwrap();
            let record = queue.job(job.id).unwrap();
            assert_eq!(record.state, JobState::Done);
            assert_eq!(record.finished_at, Some(T0 + LEASE));
            assert_eq!(record.lease_until, None);
            assert!(lease_refused(queue.complete(&fresh, T0 + LEASE).await));
        }

        #[tokio::test]
        async fn retry_reschedules_until_the_last_attempt_then_fails() {
            let queue = InMemoryJobQueue::default();
            let job = new_job(JobKind::Email, T0, 2);
            queue.enqueue(std::slice::from_ref(&job)).unwrap();
            let kinds = [JobKind::Email];

            let first = queue.claim(&kinds, 1, T0, LEASE).await.unwrap().remove(0);
            let again_at = T0 + Duration::minutes(5);
            queue.retry(&first, again_at, "421 busy").await.unwrap();
            let record = queue.job(job.id).unwrap();
            assert_eq!(record.state, JobState::Queued);
            assert_eq!(record.run_at, again_at);
            assert_eq!(record.last_error.as_deref(), Some("421 busy"));
            assert!(
                queue
                    .claim(&kinds, 1, T0 + Duration::minutes(4), LEASE)
                    .await
                    .unwrap()
                    .is_empty()
            );

            let second = queue
                .claim(&kinds, 1, again_at, LEASE)
                .await
                .unwrap()
                .remove(0);
            assert_eq!(second.attempt, 2);
            queue
                .retry(&second, again_at + Duration::minutes(5), "421 still busy")
                .await
                .unwrap();
            let record = queue.job(job.id).unwrap();
            assert_eq!(record.state, JobState::Failed);
            assert_eq!(record.attempt, 2);
            assert_eq!(record.last_error.as_deref(), Some("421 still busy"));
            assert!(record.finished_at.is_some());
        }

        #[tokio::test]
        async fn fail_ends_the_job_and_an_exhausted_expired_lease_ends_failed() {
            let queue = InMemoryJobQueue::default();
            let failed = new_job(JobKind::Email, T0, 3);
            let abandoned = new_job(JobKind::Email, T0, 1);
            queue.enqueue(&[failed.clone(), abandoned.clone()]).unwrap();
            let kinds = [JobKind::Email];

            let claimed = queue.claim(&kinds, 2, T0, LEASE).await.unwrap();
            let held_failed = claimed.iter().find(|j| j.id == failed.id).unwrap();
            queue
                .fail(held_failed, T0, "550 no such user")
                .await
                .unwrap();
            let record = queue.job(failed.id).unwrap();
            assert_eq!(record.state, JobState::Failed);
            assert_eq!(record.last_error.as_deref(), Some("550 no such user"));
            assert_eq!(record.finished_at, Some(T0));

            // The worker of the one-attempt job died: its lease expires, nothing claims it.
            assert!(
                queue
                    .claim(&kinds, 2, T0 + LEASE, LEASE)
                    .await
                    .unwrap()
                    .is_empty()
            );
            let record = queue.job(abandoned.id).unwrap();
            assert_eq!(record.state, JobState::Failed);
            assert_eq!(record.last_error.as_deref(), Some(LEASE_EXPIRED));
            assert_eq!(record.attempt, 1);
        }

        #[tokio::test]
        async fn enqueue_is_all_or_nothing_on_a_duplicate_id() {
            let queue = InMemoryJobQueue::default();
            let job = new_job(JobKind::Email, T0, 3);
            queue.enqueue(std::slice::from_ref(&job)).unwrap();
            let other = new_job(JobKind::Email, T0, 3);
            assert!(matches!(
                queue.enqueue(&[other.clone(), job]),
                Err(RepoError::Conflict { constraint }) if constraint == "jobs_pkey"
            ));
            assert_eq!(queue.job(other.id), None);
            assert_eq!(queue.all().len(), 1);
        }

        #[test]
        fn states_round_trip() {
            for state in JobState::ALL {
                assert_eq!(JobState::parse(state.as_str()), Some(state));
            }
            assert_eq!(JobState::parse("nope"), None);
        }
    }
}
