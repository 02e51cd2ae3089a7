//! `JobQueue`: due jobs claimed with a lease, oldest first, by kind; completions fenced by the
//! claimed attempt; retries, failures and the attempt limit; claimers racing in one process and
//! across two (two pools on one database) take each job once per lease and lose none.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::jobs::{
    ClaimedJob, JOB_LEASE, JobKind, JobQueue, JobRecord, JobState, LEASE_EXPIRED, NewJob,
};
use teamcomm_kernel::{OrgId, RepoError};
use teamcomm_store_pg::{Database, PgJobQueue};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::ports::{Ports, assert_conflict, assert_refused_by_check};

contract!(
    only_due_jobs_of_the_kinds_asked_are_claimed_oldest_first,
    an_expired_lease_hands_the_job_out_again_and_fences_the_stale_holder,
    a_retry_reschedules_the_job_and_keeps_its_error,
    a_failure_ends_the_job,
    no_attempt_starts_beyond_max_attempts,
    enqueueing_is_all_or_nothing,
    racing_claimers_take_each_job_once_per_lease_and_lose_none,
    finished_jobs_are_pruned_oldest_first_and_unfinished_ones_never,
);

/// The queue and what its tests need beside it: enqueueing (a repository's part), reading a
/// job back, and a second server process on the same store.
pub struct JobPorts {
    pub queue: Arc<dyn JobQueue>,
    side: Side,
}

enum Side {
    Memory(InMemoryJobQueue),
    Postgres { queue: PgJobQueue, url: String },
}

impl JobPorts {
    pub fn in_memory() -> Self {
        let queue = InMemoryJobQueue::default();
        JobPorts {
            queue: Arc::new(queue.clone()),
            side: Side::Memory(queue),
        }
    }

    pub fn postgres(db: Database, url: &str) -> Self {
        let queue = PgJobQueue::new(db);
        JobPorts {
            queue: Arc::new(queue.clone()),
            side: Side::Postgres {
                queue,
                url: url.to_owned(),
            },
        }
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<(), RepoError> {
        match &self.side {
            Side::Memory(queue) => queue.enqueue(jobs),
            Side::Postgres { queue, .. } => queue.enqueue(jobs).await,
        }
    }

    async fn job(&self, id: Uuid) -> Option<JobRecord> {
        match &self.side {
            Side::Memory(queue) => queue.job(id),
            Side::Postgres { queue, .. } => queue.job(id).await.expect("read the job"),
        }
    }

    /// The queue as another server process sees it (Postgres: a pool of its own).
    fn another_process(&self) -> Arc<dyn JobQueue> {
        match &self.side {
            Side::Memory(queue) => Arc::new(queue.clone()),
            Side::Postgres { url, .. } => Arc::new(PgJobQueue::new(
                Database::connect(url, 4).expect("a second pool"),
            )),
        }
    }
}

const T0: OffsetDateTime = datetime!(2030-01-01 12:00 UTC);
const LEASE: Duration = Duration::seconds(30);
const EMAIL: [JobKind; 1] = [JobKind::Email];

fn new_job(org: OrgId, kind: JobKind, run_at: OffsetDateTime, max_attempts: u32) -> NewJob {
    NewJob {
        id: Uuid::now_v7(),
        org_id: org,
        kind,
        payload: json!({"message": Uuid::now_v7()}),
        run_at,
        max_attempts,
    }
}

async fn claim_one(p: &Ports, now: OffsetDateTime) -> ClaimedJob {
    let mut claimed = p.jobs.queue.claim(&EMAIL, 1, now, LEASE).await.unwrap();
    assert_eq!(claimed.len(), 1, "one job due at {now}");
    claimed.remove(0)
}

async fn nothing_due(p: &Ports, now: OffsetDateTime) {
    let claimed = p.jobs.queue.claim(&EMAIL, 10, now, LEASE).await.unwrap();
    assert!(claimed.is_empty(), "nothing due at {now}: {claimed:?}");
}

async fn state(p: &Ports, id: Uuid) -> JobRecord {
    p.jobs.job(id).await.expect("the job exists")
}

async fn only_due_jobs_of_the_kinds_asked_are_claimed_oldest_first(p: Ports) {
    let org = p.org("Acme").await.id;
    let later = new_job(org, JobKind::Email, T0 + Duration::SECOND, 3);
    let second = new_job(org, JobKind::Email, T0, 3);
    let chat = new_job(org, JobKind::ChatMessage, T0 - Duration::MINUTE, 3);
    let first = new_job(org, JobKind::Email, T0 - Duration::SECOND, 3);
    p.jobs
        .enqueue(&[later.clone(), second.clone(), chat.clone(), first.clone()])
        .await
        .unwrap();
    let queued = state(&p, first.id).await;
    assert_eq!(
        (queued.state, queued.attempt, queued.lease_until),
        (JobState::Queued, 0, None)
    );
    assert_eq!(
        (queued.kind, &queued.payload),
        (JobKind::Email, &first.payload)
    );

    let claimed = p.jobs.queue.claim(&EMAIL, 10, T0, LEASE).await.unwrap();
    assert_eq!(
        claimed.iter().map(|j| j.id).collect::<Vec<_>>(),
        [first.id, second.id]
    );
    let held = &claimed[0];
    assert_eq!(
        (
            held.org_id,
            held.kind,
            &held.payload,
            held.attempt,
            held.max_attempts
        ),
        (org, JobKind::Email, &first.payload, 1, 3)
    );
    assert_eq!(held.lease_until, T0 + LEASE);
    let running = state(&p, first.id).await;
    assert_eq!(
        (running.state, running.attempt, running.lease_until),
        (JobState::Running, 1, Some(T0 + LEASE))
    );
    assert_eq!(state(&p, later.id).await.state, JobState::Queued);
    assert_eq!(state(&p, chat.id).await.state, JobState::Queued);

    // The limit, and a kind list that names both.
    let both = [JobKind::ChatMessage, JobKind::Email];
    let next = p
        .jobs
        .queue
        .claim(&both, 1, T0 + Duration::SECOND, LEASE)
        .await
        .unwrap();
    assert_eq!(next.iter().map(|j| j.id).collect::<Vec<_>>(), [chat.id]);
    assert!(
        p.jobs
            .queue
            .claim(&[], 10, T0, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        p.jobs
            .queue
            .claim(&both, 0, T0, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn an_expired_lease_hands_the_job_out_again_and_fences_the_stale_holder(p: Ports) {
    let org = p.org("Acme").await.id;
    let job = new_job(org, JobKind::Email, T0, 3);
    p.jobs.enqueue(std::slice::from_ref(&job)).await.unwrap();

    let stale = claim_one(&p, T0).await;
    nothing_due(&p, T0 + LEASE - Duration::SECOND).await;
    let fresh = claim_one(&p, T0 + LEASE).await;
    assert_eq!((fresh.id, fresh.attempt), (job.id, 2));
    assert_eq!(fresh.lease_until, T0 + LEASE + LEASE);

    let late = T0 + LEASE + Duration::SECOND;
    assert_conflict(p.jobs.queue.complete(&stale, late).await, JOB_LEASE);
    assert_conflict(p.jobs.queue.retry(&stale, late, "late").await, JOB_LEASE);
    assert_conflict(p.jobs.queue.fail(&stale, late, "late").await, JOB_LEASE);
    assert_eq!(state(&p, job.id).await.state, JobState::Running);

    p.jobs.queue.complete(&fresh, late).await.unwrap();
    let done = state(&p, job.id).await;
    assert_eq!(
        (done.state, done.attempt, done.lease_until, done.finished_at),
        (JobState::Done, 2, None, Some(late))
    );
    assert_eq!(done.last_error, None);
    // Done is final: no second completion, no claim.
    assert_conflict(p.jobs.queue.complete(&fresh, late).await, JOB_LEASE);
    nothing_due(&p, late + LEASE + LEASE).await;

    // A holder past its lease whose job nobody took over may still finish it.
    let other = new_job(org, JobKind::Email, T0, 3);
    p.jobs.enqueue(std::slice::from_ref(&other)).await.unwrap();
    let slow = claim_one(&p, T0).await;
    p.jobs.queue.complete(&slow, T0 + LEASE * 3).await.unwrap();
    assert_eq!(state(&p, other.id).await.state, JobState::Done);
}

async fn a_retry_reschedules_the_job_and_keeps_its_error(p: Ports) {
    let org = p.org("Acme").await.id;
    let job = new_job(org, JobKind::Email, T0, 3);
    p.jobs.enqueue(std::slice::from_ref(&job)).await.unwrap();

    let first = claim_one(&p, T0).await;
    let again_at = T0 + Duration::minutes(5);
    p.jobs
        .queue
        .retry(&first, again_at, "421 try later")
        .await
        .unwrap();
    let queued = state(&p, job.id).await;
    assert_eq!(
        (
            queued.state,
            queued.attempt,
            queued.run_at,
            queued.lease_until
        ),
        (JobState::Queued, 1, again_at, None)
    );
    assert_eq!(queued.last_error.as_deref(), Some("421 try later"));
    assert_eq!(queued.finished_at, None);
    // The retried attempt's holder is done with it.
    assert_conflict(p.jobs.queue.complete(&first, T0).await, JOB_LEASE);

    nothing_due(&p, again_at - Duration::SECOND).await;
    let second = claim_one(&p, again_at).await;
    assert_eq!(second.attempt, 2);
    p.jobs.queue.complete(&second, again_at).await.unwrap();
    let done = state(&p, job.id).await;
    assert_eq!(done.state, JobState::Done);
    // What went wrong before stays readable.
    assert_eq!(done.last_error.as_deref(), Some("421 try later"));
}

async fn a_failure_ends_the_job(p: Ports) {
    let org = p.org("Acme").await.id;
    let job = new_job(org, JobKind::Email, T0, 5);
    p.jobs.enqueue(std::slice::from_ref(&job)).await.unwrap();

    let held = claim_one(&p, T0).await;
    p.jobs
        .queue
        .fail(&held, T0 + Duration::SECOND, "550 no such mailbox")
        .await
        .unwrap();
    let failed = state(&p, job.id).await;
    assert_eq!(
        (failed.state, failed.attempt, failed.lease_until),
        (JobState::Failed, 1, None)
    );
    assert_eq!(failed.last_error.as_deref(), Some("550 no such mailbox"));
    assert_eq!(failed.finished_at, Some(T0 + Duration::SECOND));
    nothing_due(&p, T0 + LEASE * 10).await;
    assert_conflict(p.jobs.queue.complete(&held, T0).await, JOB_LEASE);
}

async fn no_attempt_starts_beyond_max_attempts(p: Ports) {
    let org = p.org("Acme").await.id;

    // Retried on its last attempt: failed with that attempt's error.
    let retried = new_job(org, JobKind::Email, T0, 2);
    p.jobs
        .enqueue(std::slice::from_ref(&retried))
        .await
        .unwrap();
    let first = claim_one(&p, T0).await;
    p.jobs.queue.retry(&first, T0, "timeout").await.unwrap();
    let last = claim_one(&p, T0).await;
    assert_eq!((last.attempt, last.max_attempts), (2, 2));
    p.jobs
        .queue
        .retry(&last, T0, "timeout again")
        .await
        .unwrap();
    let failed = state(&p, retried.id).await;
    assert_eq!(
        (failed.state, failed.attempt, failed.lease_until),
        (JobState::Failed, 2, None)
    );
    assert_eq!(failed.last_error.as_deref(), Some("timeout again"));
    assert!(failed.finished_at.is_some());
    nothing_due(&p, T0 + Duration::hours(1)).await;

    // Its last worker died: once the lease expires the next claim ends it, and hands out
    // the other due job instead.
    let abandoned = new_job(org, JobKind::Email, T0, 1);
    p.jobs
        .enqueue(std::slice::from_ref(&abandoned))
        .await
        .unwrap();
    let held = claim_one(&p, T0).await;
    assert_eq!(held.id, abandoned.id);
    let waiting = new_job(org, JobKind::Email, T0 + Duration::SECOND, 1);
    p.jobs
        .enqueue(std::slice::from_ref(&waiting))
        .await
        .unwrap();
    let expired = T0 + LEASE;
    let claimed = p
        .jobs
        .queue
        .claim(&EMAIL, 10, expired, LEASE)
        .await
        .unwrap();
    assert_eq!(
        claimed.iter().map(|j| j.id).collect::<Vec<_>>(),
        [waiting.id]
    );
    let ended = state(&p, abandoned.id).await;
    assert_eq!(
        (
            ended.state,
            ended.attempt,
            ended.lease_until,
            ended.finished_at
        ),
        (JobState::Failed, 1, None, Some(expired))
    );
    assert_eq!(ended.last_error.as_deref(), Some(LEASE_EXPIRED));
    assert_conflict(p.jobs.queue.complete(&held, expired).await, JOB_LEASE);

    // Only a claim of the job's own kind ends it.
    let chat = new_job(org, JobKind::ChatMessage, T0, 1);
    p.jobs.enqueue(std::slice::from_ref(&chat)).await.unwrap();
    let chat_held = p
        .jobs
        .queue
        .claim(&[JobKind::ChatMessage], 1, T0, LEASE)
        .await
        .unwrap();
    assert_eq!(chat_held.len(), 1);
    nothing_due(&p, T0 + LEASE * 2).await;
    assert_eq!(state(&p, chat.id).await.state, JobState::Running);
}

async fn enqueueing_is_all_or_nothing(p: Ports) {
    let org = p.org("Acme").await.id;
    let held = new_job(org, JobKind::Email, T0, 3);
    p.jobs.enqueue(std::slice::from_ref(&held)).await.unwrap();
    p.jobs.enqueue(&[]).await.unwrap();

    let fresh = new_job(org, JobKind::Email, T0, 3);
    assert_conflict(
        p.jobs.enqueue(&[fresh.clone(), held.clone()]).await,
        "jobs_pkey",
    );
    assert_eq!(p.jobs.job(fresh.id).await, None);
    assert_refused_by_check(p.jobs.enqueue(&[new_job(org, JobKind::Email, T0, 0)]).await);
    let claimed = p.jobs.queue.claim(&EMAIL, 10, T0, LEASE).await.unwrap();
    assert_eq!(claimed.iter().map(|j| j.id).collect::<Vec<_>>(), [held.id]);
}

/// Claimers in two processes, several tasks each (each task on a connection of its own pool),
/// claim in small batches until nothing is left.
async fn race(processes: &[Arc<dyn JobQueue>], now: OffsetDateTime) -> Vec<ClaimedJob> {
    const TASKS_PER_PROCESS: usize = 3;
    let mut tasks = Vec::new();
    for queue in processes {
        for _ in 0..TASKS_PER_PROCESS {
            let queue = queue.clone();
            tasks.push(tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let batch = queue.claim(&EMAIL, 4, now, LEASE).await.expect("claim");
                    if batch.is_empty() {
                        return mine;
                    }
                    mine.extend(batch);
                    tokio::task::yield_now().await;
                }
            }));
        }
    }
    let mut claimed = Vec::new();
    for task in tasks {
        claimed.extend(task.await.expect("claimer"));
    }
    claimed
}

async fn racing_claimers_take_each_job_once_per_lease_and_lose_none(p: Ports) {
    const JOBS: usize = 60;
    let org = p.org("Acme").await.id;
    let emails: Vec<_> = (0..JOBS)
        .map(|i| new_job(org, JobKind::Email, T0 - Duration::seconds(i as i64), 3))
        .collect();
    let chats: Vec<_> = (0..10)
        .map(|_| new_job(org, JobKind::ChatMessage, T0 - Duration::hours(1), 3))
        .collect();
    p.jobs.enqueue(&emails).await.unwrap();
    p.jobs.enqueue(&chats).await.unwrap();
    let expected: HashSet<Uuid> = emails.iter().map(|j| j.id).collect();
    let processes = [p.jobs.queue.clone(), p.jobs.another_process()];

    let assert_each_once = |claimed: &[ClaimedJob], attempt: u32| {
        let mut times: HashMap<Uuid, usize> = HashMap::new();
        for job in claimed {
            assert_eq!((job.kind, job.attempt), (JobKind::Email, attempt));
            *times.entry(job.id).or_default() += 1;
        }
        assert!(times.values().all(|&n| n == 1), "a job claimed twice");
        assert_eq!(times.into_keys().collect::<HashSet<_>>(), expected);
    };

    // Every holder dies: the leases expire and the next round takes each job once again.
    let first_round = race(&processes, T0).await;
    assert_each_once(&first_round, 1);
    let second_round = race(&processes, T0 + LEASE).await;
    assert_each_once(&second_round, 2);

    // The second round's holders finish; the first round's are refused.
    let done_at = T0 + LEASE + Duration::SECOND;
    for (i, job) in second_round.iter().enumerate() {
        processes[i % 2].complete(job, done_at).await.unwrap();
    }
    for job in &first_round {
        assert_conflict(processes[0].complete(job, done_at).await, JOB_LEASE);
    }
    for job in &emails {
        assert_eq!(state(&p, job.id).await.state, JobState::Done);
    }
    for job in &chats {
        let untouched = state(&p, job.id).await;
        assert_eq!((untouched.state, untouched.attempt), (JobState::Queued, 0));
    }
}

async fn finished_jobs_are_pruned_oldest_first_and_unfinished_ones_never(p: Ports) {
    let org = p.org("Acme").await.id;
    let jobs: Vec<NewJob> = (0..5)
        .map(|_| new_job(org, JobKind::Email, T0, 1))
        .collect();
    p.jobs.enqueue(&jobs).await.unwrap();
    // Three finish, one second apart (done, failed, done); one is running; one waits.
    for n in 0..3 {
        let held = claim_one(&p, T0).await;
        let at = T0 + Duration::seconds(n);
        if n == 1 {
            p.jobs.queue.fail(&held, at, "550").await.unwrap();
        } else {
            p.jobs.queue.complete(&held, at).await.unwrap();
        }
    }
    let running = claim_one(&p, T0).await;

    // Nothing finished before the first finish.
    assert_eq!(p.jobs.queue.prune_finished(T0, 10).await.unwrap(), 0);
    // Oldest first, at most the limit.
    let later = T0 + Duration::HOUR;
    assert_eq!(p.jobs.queue.prune_finished(later, 2).await.unwrap(), 2);
    assert!(p.jobs.job(jobs[0].id).await.is_none());
    assert!(p.jobs.job(jobs[1].id).await.is_none());
    assert_eq!(state(&p, jobs[2].id).await.state, JobState::Done);
    assert_eq!(p.jobs.queue.prune_finished(later, 10).await.unwrap(), 1);
    assert!(p.jobs.job(jobs[2].id).await.is_none());
    // The running and the queued job are never pruned, however old.
    assert_eq!(
        p.jobs
            .queue
            .prune_finished(later + Duration::days(365), 10)
            .await
            .unwrap(),
        0
    );
    assert_eq!(state(&p, running.id).await.state, JobState::Running);
    assert_eq!(state(&p, jobs[4].id).await.state, JobState::Queued);
}
