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
}

impl JobKind {
    pub const ALL: [JobKind; 2] = [JobKind::ChatMessage, JobKind::Email];

    pub const fn as_str(self) -> &'static str {
        match self {
            JobKind::ChatMessage => "chat_message",
            JobKind::Email => "email",
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
    pub const fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }
}

/// The workers' side of the queue. Every method that names a claimed job takes the
/// `attempt` it was claimed with: a worker whose lease expired (and whose job another worker
/// claimed since) finds its completion refused with `Conflict { constraint: "job_lease" }`.
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
}

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
    }
}
