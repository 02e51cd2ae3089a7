use std::time::Duration as StdDuration;

use teamcomm_kernel::jobs::JobState;
use time::Duration;

use super::*;
use crate::mail::Mailbox;
use crate::message::MessageStatus;
use crate::platform::{ChatPlatform, Destination, OutgoingMessage, PlatformKind, SentMessage};
use crate::request::{ChannelTargetInput, SendMessageRequest, ThreadResponseInput};
use crate::test_world::{NOW, World};
use crate::testing::PlatformCall;
use crate::{EmailService, MessageQueued, SendEmailRequest, SenderCredential};

const API: SenderCredential = SenderCredential::ApiKey;

async fn send(w: &World, request: SendMessageRequest) -> MessageQueued {
    w.messaging()
        .send_message(&w.admin, API, request)
        .await
        .unwrap()
}

fn to(users: &[&str], channels: &[(&str, Option<&str>)]) -> SendMessageRequest {
    SendMessageRequest {
        message: Some("Ship it".into()),
        target_users: users.iter().map(|u| u.to_string()).collect(),
        target_channels: channels
            .iter()
            .map(|(id, thread)| ChannelTargetInput {
                id: id.to_string(),
                channel_type: None,
                thread: thread.map(str::to_owned),
            })
            .collect(),
        ..Default::default()
    }
}

fn statuses(m: &Message) -> Vec<DeliveryStatus> {
    m.deliveries.iter().map(|d| d.status.clone()).collect()
}

fn sent(channel_id: &str, message_id: &str) -> DeliveryStatus {
    DeliveryStatus::Delivered(SentMessage {
        channel_id: channel_id.into(),
        message_id: message_id.into(),
    })
}

fn failed(reason: FailureReason) -> DeliveryStatus {
    DeliveryStatus::Failed(reason)
}

#[tokio::test]
async fn each_target_is_sent_once_with_its_idempotency_key_and_its_outcome_recorded() {
    let w = World::new().await;
    let queued = send(&w, to(&["mia@acme.test"], &[("C-general", Some("171.1"))])).await;
    let summary = w.run_worker(NOW).await;
    assert_eq!(
        summary,
        RunSummary {
            claimed: 1,
            completed: 1,
            ..Default::default()
        }
    );
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(message.status(), MessageStatus::Delivered);
    assert_eq!(
        statuses(&message),
        [sent("D-U-Mia", "m1"), sent("C-general", "m2")]
    );
    let posted = w.platform.posted();
    assert_eq!(
        posted
            .iter()
            .map(|p| p.idempotency_key.clone())
            .collect::<Vec<_>>(),
        [format!("{}:0", message.id), format!("{}:1", message.id)]
    );
    assert_eq!(
        posted[0].destination,
        Destination::Person {
            platform_user_id: "U-Mia".into()
        }
    );
    assert_eq!(
        posted[1].destination,
        Destination::Channel {
            channel_id: "C-general".into(),
            thread: Some("171.1".into())
        }
    );
    assert_eq!(posted[0].text, "Ship it");
    assert_eq!(w.jobs()[0].state, JobState::Done);
    // Nothing is due any more.
    assert_eq!(w.run_worker(NOW + Duration::hours(1)).await.claimed, 0);
}

#[tokio::test]
async fn without_a_connected_platform_every_delivery_fails_and_the_job_is_done() {
    let w = World::new().await;
    w.directory.disconnect(w.org.id);
    let queued = send(&w, to(&["mia@acme.test"], &[("C-general", None)])).await;
    w.run_worker(NOW).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(message.status(), MessageStatus::Failed);
    assert_eq!(
        statuses(&message),
        vec![failed(FailureReason::PlatformNotConnected); 2]
    );
    assert_eq!(w.jobs()[0].state, JobState::Done);
    assert!(w.platform.calls().is_empty());
}

#[tokio::test]
async fn lasting_refusals_settle_their_delivery_and_fail_the_job() {
    let w = World::new().await;
    w.platform.forget_destination("C-gone");
    let queued = send(
        &w,
        to(&["sam@acme.test", "mia@acme.test"], &[("C-gone", None)]),
    )
    .await;
    let summary = w.run_worker(NOW).await;
    assert_eq!(summary.failed, 1);
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(
        statuses(&message),
        [
            failed(FailureReason::PlatformIdentityMissing),
            sent("D-U-Mia", "m1"),
            failed(FailureReason::DestinationNotFound),
        ]
    );
    let job = &w.jobs()[0];
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.last_error.as_deref(), Some("platform_identity_missing"));
}

#[tokio::test]
async fn a_temporary_failure_retries_the_job_later_without_resending_what_landed() {
    let w = World::new().await;
    let queued = send(&w, to(&["mia@acme.test", "tom@acme.test"], &[])).await;
    w.platform
        .fail_next([PlatformError::Temporary("502".into())]);
    let summary = w.run_worker(NOW).await;
    assert_eq!(summary.retried, 1);
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(
        statuses(&message),
        [DeliveryStatus::Queued, sent("D-U-Tom", "m1")]
    );
    let job = &w.jobs()[0];
    assert_eq!(job.state, JobState::Queued);
    // The first retry waits between the backoff's base and its first ceiling.
    assert_eq!(job.run_at, NOW + Duration::seconds(2));
    assert_eq!(
        job.last_error.as_deref(),
        Some("temporary platform failure: 502")
    );

    assert_eq!(w.run_worker(NOW + Duration::seconds(1)).await.claimed, 0);
    w.run_worker(NOW + Duration::seconds(2)).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(message.status(), MessageStatus::Delivered);
    assert_eq!(w.platform.posted().len(), 2);
    assert_eq!(w.jobs()[0].state, JobState::Done);
}

#[tokio::test]
async fn rate_limits_stop_the_pass_and_the_retry_waits_as_asked() {
    let w = World::new().await;
    let queued = send(&w, to(&["mia@acme.test", "tom@acme.test"], &[])).await;
    w.platform.fail_next([PlatformError::RateLimited {
        retry_after: Some(StdDuration::from_secs(120)),
    }]);
    w.run_worker(NOW).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(statuses(&message), vec![DeliveryStatus::Queued; 2]);
    assert!(w.platform.calls().is_empty());
    assert_eq!(w.jobs()[0].run_at, NOW + Duration::seconds(120));
}

#[tokio::test]
async fn refused_credentials_fail_every_remaining_delivery() {
    let w = World::new().await;
    let queued = send(
        &w,
        to(&["mia@acme.test", "tom@acme.test"], &[("C-general", None)]),
    )
    .await;
    w.platform
        .fail_next([PlatformError::Unauthorized("invalid_auth".into())]);
    w.run_worker(NOW).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(
        statuses(&message),
        vec![failed(FailureReason::PlatformUnauthorized); 3]
    );
    assert_eq!(w.jobs()[0].state, JobState::Failed);

    // The same when the connector already refuses them.
    let queued = send(&w, to(&["mia@acme.test"], &[])).await;
    w.connector
        .refuse(PlatformError::Unauthorized("revoked".into()));
    w.run_worker(NOW).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(
        statuses(&message),
        [failed(FailureReason::PlatformUnauthorized)]
    );
}

#[tokio::test]
async fn a_connector_that_cannot_answer_yet_retries_the_job() {
    let w = World::new().await;
    let queued = send(&w, to(&["mia@acme.test"], &[])).await;
    w.connector
        .refuse(PlatformError::Temporary("homeserver down".into()));
    assert_eq!(w.run_worker(NOW).await.retried, 1);
    w.connector.accept();
    w.run_worker(NOW + Duration::minutes(1)).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(message.status(), MessageStatus::Delivered);
}

#[tokio::test]
async fn after_the_last_attempt_what_is_still_queued_is_attempts_exhausted() {
    let w = World::new().await;
    let queued = send(&w, to(&["mia@acme.test"], &[])).await;
    let mut at = NOW;
    for attempt in 1..=crate::MESSAGE_MAX_ATTEMPTS {
        w.platform
            .fail_next([PlatformError::Temporary("timeout".into())]);
        let summary = w.run_worker(at).await;
        assert_eq!(summary.claimed, 1, "attempt {attempt}");
        at += Duration::hours(2);
    }
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(
        statuses(&message),
        [failed(FailureReason::AttemptsExhausted)]
    );
    let job = &w.jobs()[0];
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(
        job.last_error.as_deref(),
        Some("attempts_exhausted: temporary platform failure: timeout")
    );
    assert!(w.platform.calls().is_empty());
}

#[tokio::test]
async fn a_send_whose_outcome_was_lost_is_not_posted_twice() {
    let w = World::new().await;
    let queued = send(&w, to(&["mia@acme.test"], &[])).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    // A worker posted it and died before recording the outcome.
    let first = w
        .platform
        .send(&OutgoingMessage {
            idempotency_key: message.idempotency_key(0),
            destination: Destination::Person {
                platform_user_id: "U-Mia".into(),
            },
            text: "Ship it".into(),
            image_url: None,
            buttons: vec![],
            appearance: Default::default(),
        })
        .await
        .unwrap();
    w.run_worker(NOW).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(statuses(&message), [DeliveryStatus::Delivered(first)]);
    assert_eq!(w.platform.posted().len(), 1);
}

#[tokio::test]
async fn thread_responses_follow_their_parent_into_its_thread() {
    let w = World::new().await;
    let request = SendMessageRequest {
        thread_responses: vec![
            ThreadResponseInput {
                message: Some("details".into()),
            },
            ThreadResponseInput {
                message: Some("more".into()),
            },
        ],
        ..to(
            &["mia@acme.test", "sam@acme.test"],
            &[("C-general", None), ("C-dev", Some("99.1"))],
        )
    };
    let queued = send(&w, request).await;
    w.run_worker(NOW).await;
    let replies = w
        .messages
        .thread_responses(w.org.id, queued.bot_message_id)
        .await
        .unwrap();
    // Parent deliveries: m1 to Mia's DM, Sam has no identity, m2 in C-general, m3 in C-dev's
    // thread 99.1.
    assert_eq!(
        statuses(&replies[0]),
        [
            sent("D-U-Mia", "m4"),
            failed(FailureReason::ParentNotDelivered),
            sent("C-general", "m5"),
            sent("C-dev", "m6"),
        ]
    );
    let destinations: Vec<Destination> = w
        .platform
        .posted()
        .into_iter()
        .skip(3)
        .map(|p| p.destination)
        .collect();
    let thread = |channel: &str, root: &str| Destination::Channel {
        channel_id: channel.into(),
        thread: Some(root.into()),
    };
    assert_eq!(
        destinations,
        [
            thread("D-U-Mia", "m1"),
            thread("C-general", "m2"),
            thread("C-dev", "99.1"),
            thread("D-U-Mia", "m1"),
            thread("C-general", "m2"),
            thread("C-dev", "99.1"),
        ]
    );
    assert_eq!(w.platform.posted()[4].text, "details");
    assert_eq!(w.jobs()[0].state, JobState::Failed);
}

#[tokio::test]
async fn an_edit_rewrites_each_delivered_message_of_the_original() {
    let w = World::new().await;
    w.platform.forget_destination("C-gone");
    let original = send(&w, to(&["mia@acme.test"], &[("C-gone", None)])).await;
    let edit = SendMessageRequest {
        message: Some("Shipped".into()),
        bot_message_id: Some(original.bot_message_id.to_string()),
        ..Default::default()
    };
    let edited = send(&w, edit).await;
    // One pass: the original's job is older, so it runs first.
    w.run_worker(NOW).await;
    let edit = w.stored(w.org.id, edited.bot_message_id).await;
    assert_eq!(
        statuses(&edit),
        [
            sent("D-U-Mia", "m1"),
            failed(FailureReason::ParentNotDelivered)
        ]
    );
    let calls = w.platform.calls();
    let PlatformCall::Edited { sent, message } = &calls[1] else {
        panic!("{calls:?}")
    };
    assert_eq!(sent.message_id, "m1");
    assert_eq!(message.text, "Shipped");
    assert_eq!(message.idempotency_key, edit.idempotency_key(0));
    assert_eq!(calls.len(), 2);
}

#[tokio::test]
async fn an_edit_waits_for_its_original() {
    let w = World::new().await;
    let original = send(&w, to(&["mia@acme.test"], &[])).await;
    let edit = send(
        &w,
        SendMessageRequest {
            message: Some("Shipped".into()),
            bot_message_id: Some(original.bot_message_id.to_string()),
            ..Default::default()
        },
    )
    .await;
    w.platform
        .fail_next([PlatformError::Temporary("slow".into())]);
    let summary = w.run_worker(NOW).await;
    assert_eq!(summary.retried, 2);
    assert_eq!(
        w.jobs()[1].last_error.as_deref(),
        Some("waiting for the original delivery")
    );
    w.run_worker(NOW + Duration::minutes(1)).await;
    let edit = w.stored(w.org.id, edit.bot_message_id).await;
    assert_eq!(edit.status(), MessageStatus::Delivered);
}

async fn email(w: &World) -> uuid::Uuid {
    let service: EmailService = w.email();
    service
        .send_email(
            &w.admin,
            SendEmailRequest {
                users_uuids: vec![w.member.id.0],
                email_subject: "Welcome".into(),
                email_content: "<p>Hello <b>Mia</b></p>".into(),
            },
        )
        .await
        .unwrap()
        .email_ids[0]
}

#[tokio::test]
async fn an_email_is_sent_with_both_bodies_and_marked_sent() {
    let w = World::new().await;
    let id = email(&w).await;
    assert_eq!(w.run_worker(NOW).await.completed, 1);
    let mails = w.mailer.sent();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].message_id, id.to_string());
    assert_eq!(
        mails[0].to,
        [Mailbox {
            name: Some("Mia Test".into()),
            address: "mia@acme.test".into()
        }]
    );
    assert_eq!(mails[0].subject, "Welcome");
    assert_eq!(mails[0].html.as_deref(), Some("<p>Hello <b>Mia</b></p>"));
    assert_eq!(mails[0].text, "Hello Mia");
    assert_eq!(w.emails.all()[0].status, EmailStatus::Sent);
    assert_eq!(w.jobs()[0].state, JobState::Done);
}

#[tokio::test]
async fn temporary_mail_failures_are_retried_and_permanent_ones_fail() {
    let w = World::new().await;
    email(&w).await;
    w.mailer
        .fail_next([MailError::Temporary("421 busy".into())]);
    assert_eq!(w.run_worker(NOW).await.retried, 1);
    assert_eq!(w.emails.all()[0].status, EmailStatus::Queued);
    assert_eq!(w.jobs()[0].last_error.as_deref(), Some("421 busy"));
    w.run_worker(NOW + Duration::minutes(1)).await;
    assert_eq!(w.emails.all()[0].status, EmailStatus::Sent);

    let w = World::new().await;
    email(&w).await;
    w.mailer
        .fail_next([MailError::Permanent("550 no such user".into())]);
    assert_eq!(w.run_worker(NOW).await.failed, 1);
    assert_eq!(
        w.emails.all()[0].status,
        EmailStatus::Failed(FailureReason::MailRefused)
    );
    assert_eq!(
        w.jobs()[0].last_error.as_deref(),
        Some("mail_refused: 550 no such user")
    );
    assert!(w.mailer.sent().is_empty());
}

#[tokio::test]
async fn an_email_still_refused_after_its_last_attempt_is_attempts_exhausted() {
    let w = World::new().await;
    email(&w).await;
    let mut at = NOW;
    for _ in 0..crate::email::EMAIL_MAX_ATTEMPTS {
        w.mailer
            .fail_next([MailError::Temporary("451 later".into())]);
        assert_eq!(w.run_worker(at).await.claimed, 1);
        at += Duration::hours(2);
    }
    assert_eq!(
        w.emails.all()[0].status,
        EmailStatus::Failed(FailureReason::AttemptsExhausted)
    );
    assert_eq!(w.jobs()[0].state, JobState::Failed);
    assert_eq!(w.run_worker(at).await.claimed, 0);
}

#[tokio::test]
async fn identities_are_those_on_the_connected_platform() {
    let w = World::new().await;
    w.directory.connect(w.org.id, PlatformKind::Matrix);
    w.directory.map_person(
        w.org.id,
        PlatformKind::Matrix,
        w.member.id,
        "@mia:acme.test",
    );
    let queued = send(&w, to(&["mia@acme.test", "tom@acme.test"], &[])).await;
    w.run_worker(NOW).await;
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(
        statuses(&message),
        [
            sent("D-@mia:acme.test", "m1"),
            failed(FailureReason::PlatformIdentityMissing)
        ]
    );
}

/// A queue on which another worker takes every job over (its lease having expired) just
/// before this worker settles it.
struct TakenOver(teamcomm_kernel::jobs::testing::InMemoryJobQueue);

#[async_trait::async_trait]
impl JobQueue for TakenOver {
    async fn claim(
        &self,
        kinds: &[JobKind],
        limit: usize,
        now: OffsetDateTime,
        lease: Duration,
    ) -> Result<Vec<ClaimedJob>, RepoError> {
        self.0.claim(kinds, limit, now, lease).await
    }

    async fn complete(&self, job: &ClaimedJob, now: OffsetDateTime) -> Result<(), RepoError> {
        let later = job.lease_until + Duration::seconds(1);
        self.0
            .claim(&[job.kind], 1, later, Duration::minutes(5))
            .await?;
        self.0.complete(job, now).await
    }

    async fn retry(
        &self,
        job: &ClaimedJob,
        run_at: OffsetDateTime,
        error: &str,
    ) -> Result<(), RepoError> {
        self.0.retry(job, run_at, error).await
    }

    async fn fail(
        &self,
        job: &ClaimedJob,
        now: OffsetDateTime,
        error: &str,
    ) -> Result<(), RepoError> {
        self.0.fail(job, now, error).await
    }

    async fn prune_finished(
        &self,
        before: OffsetDateTime,
        limit: usize,
    ) -> Result<usize, RepoError> {
        self.0.prune_finished(before, limit).await
    }
}

#[tokio::test]
async fn a_job_taken_over_by_another_worker_is_counted_lost_not_an_error() {
    let w = World::new().await;
    send(&w, to(&["mia@acme.test"], &[])).await;
    let worker = DeliveryWorker::new(
        WorkerPorts {
            queue: Arc::new(TakenOver(w.queue.clone())),
            messages: Arc::new(w.messages.clone()),
            emails: Arc::new(w.emails.clone()),
            directory: Arc::new(w.directory.clone()),
            connector: w.connector.clone(),
            mailer: w.mailer.clone(),
        },
        WorkerSettings::default(),
    );
    let summary = worker.run_once(NOW, &mut || 0.5).await.unwrap();
    assert_eq!(
        summary,
        RunSummary {
            claimed: 1,
            lost: 1,
            ..Default::default()
        }
    );
    // The other worker holds it now.
    assert_eq!(w.jobs()[0].state, JobState::Running);
    assert_eq!(w.jobs()[0].attempt, 2);
}

#[tokio::test]
async fn finished_jobs_are_forgotten_after_the_retention_and_the_message_keeps_its_status() {
    let w = World::new().await;
    w.directory.disconnect(w.org.id);
    let queued = send(&w, to(&["mia@acme.test"], &[])).await;
    w.run_worker(NOW).await;
    assert_eq!(w.jobs()[0].state, JobState::Done);

    let worker = w.worker();
    let within = NOW + FINISHED_JOB_RETENTION;
    assert_eq!(worker.prune_finished_jobs(within).await.unwrap(), 0);
    assert_eq!(w.jobs().len(), 1, "kept for the whole retention");
    let past = within + Duration::SECOND;
    assert_eq!(worker.prune_finished_jobs(past).await.unwrap(), 1);
    assert!(w.jobs().is_empty());
    // The job was bookkeeping: the message still says what became of it.
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(message.status(), MessageStatus::Failed);
}

/// A platform directory that does not answer (the store is down for it).
struct DirectoryDown;

#[async_trait::async_trait]
impl PlatformDirectory for DirectoryDown {
    async fn connection(
        &self,
        _: OrgId,
    ) -> Result<Option<crate::ports::PlatformConnection>, RepoError> {
        Err(RepoError::Unavailable("connection refused".into()))
    }
    async fn connected_orgs(&self, _: PlatformKind) -> Result<Vec<OrgId>, RepoError> {
        Err(RepoError::Unavailable("connection refused".into()))
    }
    async fn platform_user_ids(
        &self,
        _: OrgId,
        _: PlatformKind,
        _: &[UserId],
    ) -> Result<HashMap<UserId, String>, RepoError> {
        Err(RepoError::Unavailable("connection refused".into()))
    }
    async fn save_connection(&self, _: &crate::ports::PlatformConnection) -> Result<(), RepoError> {
        Err(RepoError::Unavailable("connection refused".into()))
    }
    async fn remove_connection(&self, _: OrgId) -> Result<(), RepoError> {
        Err(RepoError::Unavailable("connection refused".into()))
    }
    async fn set_platform_user_id(
        &self,
        _: OrgId,
        _: PlatformKind,
        _: UserId,
        _: Option<&str>,
    ) -> Result<(), RepoError> {
        Err(RepoError::Unavailable("connection refused".into()))
    }
}

#[tokio::test]
async fn a_store_failure_on_the_last_attempt_settles_the_sends_as_attempts_exhausted() {
    let w = World::new().await;
    let queued = send(&w, to(&["mia@acme.test"], &[("C-general", None)])).await;
    let worker = DeliveryWorker::new(
        WorkerPorts {
            queue: Arc::new(w.queue.clone()),
            messages: Arc::new(w.messages.clone()),
            emails: Arc::new(w.emails.clone()),
            directory: Arc::new(DirectoryDown),
            connector: w.connector.clone(),
            mailer: w.mailer.clone(),
        },
        WorkerSettings::default(),
    );
    let max = w.jobs()[0].max_attempts;
    let mut at = NOW;
    for attempt in 1..=max {
        let summary = worker.run_once(at, &mut || 0.0).await.unwrap();
        assert_eq!(summary.claimed, 1, "attempt {attempt}");
        let message = w.stored(w.org.id, queued.bot_message_id).await;
        if attempt < max {
            assert_eq!(summary.retried, 1);
            assert_eq!(message.status(), MessageStatus::Queued, "retried meanwhile");
        } else {
            assert_eq!(summary.failed, 1);
            assert_eq!(
                statuses(&message),
                vec![failed(FailureReason::AttemptsExhausted); 2],
                "nothing stays queued once the job has failed"
            );
        }
        at = w.jobs()[0].run_at.max(at) + Duration::HOUR;
    }
    let job = &w.jobs()[0];
    assert_eq!(job.state, JobState::Failed);
    assert!(
        job.last_error
            .as_deref()
            .is_some_and(|e| e.starts_with("attempts_exhausted: store:")),
        "{job:?}"
    );
}

/// A platform on which a post to `C-slow` waits until a post to `C-fast` has landed.
struct SlowUntilFast {
    inner: Arc<crate::testing::RecordingChatPlatform>,
    fast_landed: tokio::sync::Notify,
}

#[async_trait::async_trait]
impl ChatPlatform for SlowUntilFast {
    fn kind(&self) -> PlatformKind {
        self.inner.kind()
    }
    async fn send(&self, message: &OutgoingMessage) -> Result<SentMessage, PlatformError> {
        match &message.destination {
            Destination::Channel { channel_id, .. } if channel_id == "C-slow" => {
                self.fast_landed.notified().await;
                self.inner.send(message).await
            }
            Destination::Channel { channel_id, .. } if channel_id == "C-fast" => {
                let sent = self.inner.send(message).await;
                self.fast_landed.notify_one();
                sent
            }
            _ => self.inner.send(message).await,
        }
    }
    async fn edit(&self, s: &SentMessage, m: &OutgoingMessage) -> Result<(), PlatformError> {
        self.inner.edit(s, m).await
    }
    async fn open_conversation(&self, p: &[String], k: &str) -> Result<String, PlatformError> {
        self.inner.open_conversation(p, k).await
    }
    async fn list_channels(&self) -> Result<Vec<crate::platform::PlatformChannel>, PlatformError> {
        self.inner.list_channels().await
    }
    async fn poll(
        &self,
        cursor: Option<&str>,
        wait: StdDuration,
    ) -> Result<crate::platform::InboundBatch, PlatformError> {
        self.inner.poll(cursor, wait).await
    }
}

#[tokio::test]
async fn the_jobs_of_a_pass_run_together_so_a_slow_send_holds_up_only_its_own() {
    let w = World::new().await;
    // The slow send is queued (and claimed) first: run one after the other, the pass would
    // wait on it for ever.
    let slow = send(&w, to(&[], &[("C-slow", None)])).await;
    let fast = send(&w, to(&[], &[("C-fast", None)])).await;
    let platform = Arc::new(SlowUntilFast {
        inner: w.platform.clone(),
        fast_landed: tokio::sync::Notify::new(),
    });
    let worker = DeliveryWorker::new(
        WorkerPorts {
            queue: Arc::new(w.queue.clone()),
            messages: Arc::new(w.messages.clone()),
            emails: Arc::new(w.emails.clone()),
            directory: Arc::new(w.directory.clone()),
            connector: Arc::new(crate::testing::FixedConnector::new(platform)),
            mailer: w.mailer.clone(),
        },
        WorkerSettings::default(),
    );
    let summary = tokio::time::timeout(
        StdDuration::from_secs(10),
        worker.run_once(NOW, &mut || 0.5),
    )
    .await
    .expect("the fast job is not stuck behind the slow one")
    .unwrap();
    assert_eq!((summary.claimed, summary.completed), (2, 2));
    for queued in [slow, fast] {
        let message = w.stored(w.org.id, queued.bot_message_id).await;
        assert_eq!(message.status(), MessageStatus::Delivered);
    }
}

#[tokio::test]
async fn a_pass_can_run_on_a_spawned_task() {
    // The server spawns its delivery loop: a pass's future must be `Send` for any lifetime.
    let w = World::new().await;
    send(&w, to(&["mia@acme.test"], &[])).await;
    let worker = w.worker();
    let summary = tokio::spawn(async move {
        let mut jitter = || 0.5;
        worker.run_once(NOW, &mut jitter).await
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!((summary.claimed, summary.completed), (1, 1));
}
