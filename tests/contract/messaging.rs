//! `MessageRepository`, `EmailRepository`, `PlatformDirectory`: a send is stored with its job
//! in one write (or neither is), reads back as written, records where each delivery (or
//! e-mail) stands; other organizations' rows are not found; platform identities are unique per
//! organization and platform; a connection reads back with its secret for the connector, and
//! Postgres keeps that secret sealed at rest.

use std::collections::HashMap;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use diesel::sql_types::{Bytea, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{Map, json};
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::jobs::{JobKind, JobRecord, JobState, NewJob};
use teamcomm_kernel::{OrgId, RepoError, UserId};
use teamcomm_messaging::cursors::PollCursors;
use teamcomm_messaging::email::{Email, EmailStatus};
use teamcomm_messaging::mail::Mailbox;
use teamcomm_messaging::message::{
    Delivery, DeliveryStatus, DeliveryTarget, FailureReason, Message, MessageButton,
    MessageContent, MessageId, MessageKind, MessageStatus,
};
use teamcomm_messaging::platform::{BotAppearance, Button, ButtonKind, PlatformKind, SentMessage};
use teamcomm_messaging::ports::{
    EmailRepository, MessageRepository, PLATFORM_IDENTITIES_UNIQUE, PlatformConnection,
    PlatformDirectory, PlatformSecret,
};
use teamcomm_messaging::testing::{
    InMemoryEmailRepository, InMemoryMessageRepository, InMemoryPlatformDirectory,
};
use teamcomm_org::OrgRepository;
use teamcomm_org::testing::InMemoryOrgRepository;
use teamcomm_store_pg::{
    Database, PgEmailRepository, PgJobQueue, PgMessageRepository, PgPlatformDirectory,
    PgPollCursors, PlatformSecretKey,
};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::ports::{Ports, assert_conflict, assert_not_found};

contract!(
    messages_read_back_as_queued_with_their_job,
    a_send_to_thousands_of_targets_reads_back_whole,
    delivery_outcomes_are_recorded_and_settle_the_message,
    another_organizations_messages_and_emails_are_not_found,
    a_refused_write_stores_neither_the_sends_nor_their_jobs,
    emails_read_back_and_record_their_outcome,
    a_connection_is_saved_replaced_and_removed,
    platform_identities_are_unique_per_organization_and_platform,
);

/// The messaging ports and what their tests need beside them: the queue their jobs went to,
/// and (Postgres) the database, to look at a sealed secret at rest.
pub struct MessagingPorts {
    pub messages: Arc<dyn MessageRepository>,
    pub emails: Arc<dyn EmailRepository>,
    pub directory: Arc<dyn PlatformDirectory>,
    /// The reply poll's cursors, over the same connections (`cursors.rs`).
    pub cursors: Arc<dyn PollCursors>,
    side: Side,
}

enum Side {
    Memory(InMemoryJobQueue),
    Postgres { queue: PgJobQueue, url: String },
}

/// The configured secret the Postgres directory's key is derived from in these tests.
const CONFIGURED_SECRET: &[u8] = b"contract-tests-platform-secret-key-0123456789";

impl MessagingPorts {
    /// Over `people`, which tells the directory who is of an organization.
    pub fn in_memory(people: Arc<InMemoryOrgRepository>) -> Self {
        let queue = InMemoryJobQueue::default();
        let directory = InMemoryPlatformDirectory::new()
            .with_people(move |org, user| at_once(people.get_user(org, user)).is_ok());
        MessagingPorts {
            messages: Arc::new(InMemoryMessageRepository::new(queue.clone())),
            emails: Arc::new(InMemoryEmailRepository::new(queue.clone())),
            directory: Arc::new(directory.clone()),
            cursors: Arc::new(directory),
            side: Side::Memory(queue),
        }
    }

    pub fn postgres(db: Database, url: &str) -> Self {
        let key = PlatformSecretKey::derive(CONFIGURED_SECRET).expect("a long enough secret");
        MessagingPorts {
            messages: Arc::new(PgMessageRepository::new(db.clone())),
            emails: Arc::new(PgEmailRepository::new(db.clone())),
            directory: Arc::new(PgPlatformDirectory::new(db.clone(), key)),
            cursors: Arc::new(PgPollCursors::new(db.clone())),
            side: Side::Postgres {
                queue: PgJobQueue::new(db),
                url: url.to_owned(),
            },
        }
    }

    async fn job(&self, id: Uuid) -> Option<JobRecord> {
        match &self.side {
            Side::Memory(queue) => queue.job(id),
            Side::Postgres { queue, .. } => queue.job(id).await.expect("read the job"),
        }
    }
}

/// The in-memory organization repository answers on the first poll (it never waits), which
/// lets the directory's synchronous membership check ask it.
fn at_once<T>(answer: impl Future<Output = T>) -> T {
    match pin!(answer).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the in-memory repository answers at once"),
    }
}

const T0: OffsetDateTime = datetime!(2030-01-01 12:00 UTC);

fn content(text: &str) -> MessageContent {
    MessageContent {
        text: text.to_owned(),
        image_url: None,
        buttons: vec![],
        appearance: BotAppearance::default(),
        is_ephemeral: false,
        metadata: Map::new(),
    }
}

fn queued_deliveries(targets: &[DeliveryTarget]) -> Vec<Delivery> {
    targets
        .iter()
        .enumerate()
        .map(|(index, target)| Delivery {
            index: index as u32,
            target: target.clone(),
            status: DeliveryStatus::Queued,
            updated_at: T0,
        })
        .collect()
}

fn message(
    org: OrgId,
    sender: UserId,
    kind: MessageKind,
    text: &str,
    targets: &[DeliveryTarget],
) -> Message {
    Message {
        id: MessageId::new(),
        org_id: org,
        sender,
        send_as: None,
        kind,
        content: content(text),
        deliveries: queued_deliveries(targets),
        created_at: T0,
    }
}

fn job_for(org: OrgId, kind: JobKind, payload: serde_json::Value) -> NewJob {
    NewJob {
        id: Uuid::now_v7(),
        org_id: org,
        kind,
        payload,
        run_at: T0,
        max_attempts: 10,
    }
}

fn message_job(m: &Message) -> NewJob {
    job_for(
        m.org_id,
        JobKind::ChatMessage,
        json!({ "message_id": m.id.0 }),
    )
}

fn channel(id: &str, thread: Option<&str>) -> DeliveryTarget {
    DeliveryTarget::Channel {
        channel_id: id.to_owned(),
        thread: thread.map(str::to_owned),
    }
}

fn sent(channel_id: &str, message_id: &str) -> DeliveryStatus {
    DeliveryStatus::Delivered(SentMessage {
        channel_id: channel_id.to_owned(),
        message_id: message_id.to_owned(),
    })
}

async fn assert_job_queued(p: &MessagingPorts, job: &NewJob) {
    let record = p.job(job.id).await.expect("the job was enqueued");
    assert_eq!(
        (record.org_id, record.kind, &record.payload, record.state),
        (job.org_id, job.kind, &job.payload, JobState::Queued)
    );
}

async fn messages_read_back_as_queued_with_their_job(p: Ports) {
    let acme = p.org("Acme").await;
    let admin = p.user(&acme, "ada@acme.test", "Ada", "Admin").await;
    let mia = p.user(&acme, "mia@acme.test", "Mia", "Member").await;
    let m = &p.messaging;

    let mut settings = Map::new();
    settings.insert("label_after_click".into(), json!("Done"));
    let parent = Message {
        send_as: Some(mia.id),
        content: MessageContent {
            text: "Standup in 5 <b>minutes</b> ✅".into(),
            image_url: Some("https://acme.test/standup.png".into()),
            buttons: vec![
                MessageButton {
                    button: Button {
                        label: "Agenda".into(),
                        kind: ButtonKind::Link {
                            url: "https://acme.test/agenda".into(),
                        },
                    },
                    callback_url: None,
                    settings: Map::new(),
                },
                MessageButton {
                    button: Button {
                        label: "I'm in".into(),
                        kind: ButtonKind::Interactive {
                            value: "join".into(),
                        },
                    },
                    callback_url: Some("https://hooks.acme.test/click".into()),
                    settings,
                },
            ],
            appearance: BotAppearance {
                username: Some("Mia Member".into()),
                icon_url: Some("https://acme.test/mia.png".into()),
                icon_emoji: Some(":wave:".into()),
            },
            is_ephemeral: true,
            metadata: json!({"ticket": "OPS-1", "tags": [1, {"x": null}]})
                .as_object()
                .cloned()
                .unwrap(),
        },
        ..message(
            acme.id,
            admin.id,
            MessageKind::Post,
            "",
            &[
                DeliveryTarget::Person(mia.id),
                channel("C1", Some("1700000000.0001")),
                channel("C2", None),
            ],
        )
    };
    let reply = |position: u32, text: &str| {
        message(
            acme.id,
            admin.id,
            MessageKind::ThreadResponse {
                parent: parent.id,
                position,
            },
            text,
            &[DeliveryTarget::Person(mia.id), channel("C2", None)],
        )
    };
    let (second, first) = (reply(1, "second"), reply(0, "first"));
    let job = message_job(&parent);
    m.messages
        .queue_messages(
            &[parent.clone(), second.clone(), first.clone()],
            std::slice::from_ref(&job),
        )
        .await
        .unwrap();

    let read = m.messages.get_message(acme.id, parent.id).await.unwrap();
    assert_eq!(read, parent);
    assert_eq!(read.status(), MessageStatus::Queued);
    assert_eq!(
        m.messages
            .thread_responses(acme.id, parent.id)
            .await
            .unwrap(),
        [first.clone(), second]
    );
    assert_eq!(
        m.messages
            .thread_responses(acme.id, first.id)
            .await
            .unwrap(),
        []
    );
    assert_eq!(
        m.messages.get_message(acme.id, first.id).await.unwrap(),
        first
    );
    assert_job_queued(m, &job).await;

    let edit = Message {
        send_as: Some(mia.id),
        ..message(
            acme.id,
            mia.id,
            MessageKind::Edit {
                original: parent.id,
            },
            "Standup in 10 minutes",
            &[DeliveryTarget::Person(mia.id), channel("C1", None)],
        )
    };
    let edit_job = message_job(&edit);
    m.messages
        .queue_messages(std::slice::from_ref(&edit), std::slice::from_ref(&edit_job))
        .await
        .unwrap();
    assert_eq!(
        m.messages.get_message(acme.id, edit.id).await.unwrap(),
        edit
    );
    assert_job_queued(m, &edit_job).await;
    assert_not_found(m.messages.get_message(acme.id, MessageId::new()).await);
}

/// More deliveries than one insert statement can bind (Postgres: 65,535 parameters).
async fn a_send_to_thousands_of_targets_reads_back_whole(p: Ports) {
    let acme = p.org("Acme").await;
    let admin = p.user(&acme, "ada@acme.test", "Ada", "Admin").await;
    let m = &p.messaging;
    let targets: Vec<DeliveryTarget> = (0..7_000)
        .map(|i| channel(&format!("C{i}"), None))
        .collect();
    let parent = message(acme.id, admin.id, MessageKind::Post, "all hands", &targets);
    let reply = message(
        acme.id,
        admin.id,
        MessageKind::ThreadResponse {
            parent: parent.id,
            position: 0,
        },
        "agenda",
        &targets,
    );
    m.messages
        .queue_messages(&[parent.clone(), reply.clone()], &[message_job(&parent)])
        .await
        .unwrap();
    assert_eq!(
        m.messages.get_message(acme.id, parent.id).await.unwrap(),
        parent
    );
    assert_eq!(
        m.messages
            .thread_responses(acme.id, parent.id)
            .await
            .unwrap(),
        [reply]
    );
}

async fn delivery_outcomes_are_recorded_and_settle_the_message(p: Ports) {
    let acme = p.org("Acme").await;
    let admin = p.user(&acme, "ada@acme.test", "Ada", "Admin").await;
    let mia = p.user(&acme, "mia@acme.test", "Mia", "Member").await;
    let m = &p.messaging;
    let queued = message(
        acme.id,
        admin.id,
        MessageKind::Post,
        "hi",
        &[
            DeliveryTarget::Person(mia.id),
            channel("C1", None),
            channel("C2", None),
        ],
    );
    m.messages
        .queue_messages(std::slice::from_ref(&queued), &[message_job(&queued)])
        .await
        .unwrap();
    let read = || m.messages.get_message(acme.id, queued.id);
    let record = |index: u32, status: DeliveryStatus, at: OffsetDateTime| async move {
        m.messages
            .record_delivery(acme.id, queued.id, index, &status, at)
            .await
    };

    let t1 = T0 + Duration::SECOND;
    record(0, sent("D-mia", "$ev1"), t1).await.unwrap();
    let after_first = read().await.unwrap();
    assert_eq!(after_first.deliveries[0].status, sent("D-mia", "$ev1"));
    assert_eq!(after_first.deliveries[0].updated_at, t1);
    assert_eq!(after_first.deliveries[1], queued.deliveries[1]);
    assert_eq!(after_first.status(), MessageStatus::Queued);

    // Every reason reads back as recorded.
    for reason in FailureReason::ALL {
        record(1, DeliveryStatus::Failed(reason), t1).await.unwrap();
        assert_eq!(
            read().await.unwrap().deliveries[1].status,
            DeliveryStatus::Failed(reason)
        );
    }
    record(
        1,
        DeliveryStatus::Failed(FailureReason::DestinationNotFound),
        t1,
    )
    .await
    .unwrap();
    assert_eq!(read().await.unwrap().status(), MessageStatus::Queued);
    record(2, sent("C2", "1700000000.0002"), t1).await.unwrap();
    let settled = read().await.unwrap();
    assert_eq!(settled.status(), MessageStatus::Failed);

    // The worker may record an outcome again (a retried job): nothing changes.
    record(0, sent("D-mia", "$ev1"), t1).await.unwrap();
    record(
        1,
        DeliveryStatus::Failed(FailureReason::DestinationNotFound),
        t1,
    )
    .await
    .unwrap();
    assert_eq!(read().await.unwrap(), settled);

    assert_not_found(record(3, sent("C3", "x"), t1).await);
    assert_not_found(record(u32::MAX, sent("C3", "x"), t1).await);
    assert_not_found(
        m.messages
            .record_delivery(acme.id, MessageId::new(), 0, &sent("C1", "x"), t1)
            .await,
    );

    let all_sent = message(
        acme.id,
        admin.id,
        MessageKind::Post,
        "hi",
        &[channel("C1", None)],
    );
    m.messages
        .queue_messages(std::slice::from_ref(&all_sent), &[message_job(&all_sent)])
        .await
        .unwrap();
    m.messages
        .record_delivery(acme.id, all_sent.id, 0, &sent("C1", "1.1"), t1)
        .await
        .unwrap();
    let delivered = m.messages.get_message(acme.id, all_sent.id).await.unwrap();
    assert_eq!(delivered.status(), MessageStatus::Delivered);
}

fn email(org: OrgId, sender: UserId, to: &teamcomm_org::User, html: Option<&str>) -> Email {
    Email {
        id: Uuid::now_v7(),
        org_id: org,
        sender,
        recipient: to.id,
        to: Mailbox {
            name: html.map(|_| to.full_name()),
            address: to.email.clone(),
        },
        subject: "Quarterly update".into(),
        html: html.map(str::to_owned),
        text: "Q4\n\nSee the plan.".into(),
        status: EmailStatus::Queued,
        created_at: T0,
    }
}

fn email_job(e: &Email) -> NewJob {
    job_for(e.org_id, JobKind::Email, json!({ "email_id": e.id }))
}

async fn another_organizations_messages_and_emails_are_not_found(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let admin = p.user(&acme, "ada@acme.test", "Ada", "Admin").await;
    let m = &p.messaging;
    let parent = message(
        acme.id,
        admin.id,
        MessageKind::Post,
        "hi",
        &[channel("C1", None)],
    );
    let reply = message(
        acme.id,
        admin.id,
        MessageKind::ThreadResponse {
            parent: parent.id,
            position: 0,
        },
        "more",
        &[channel("C1", None)],
    );
    m.messages
        .queue_messages(&[parent.clone(), reply], &[message_job(&parent)])
        .await
        .unwrap();
    let mail = email(acme.id, admin.id, &admin, None);
    m.emails
        .queue_emails(std::slice::from_ref(&mail), &[email_job(&mail)])
        .await
        .unwrap();

    assert_not_found(m.messages.get_message(globex.id, parent.id).await);
    assert_eq!(
        m.messages
            .thread_responses(globex.id, parent.id)
            .await
            .unwrap(),
        []
    );
    assert_not_found(
        m.messages
            .record_delivery(globex.id, parent.id, 0, &sent("C1", "x"), T0)
            .await,
    );
    assert_not_found(m.emails.get_email(globex.id, mail.id).await);
    assert_not_found(
        m.emails
            .record_email(globex.id, mail.id, &EmailStatus::Sent, T0)
            .await,
    );

    assert_eq!(
        m.messages.get_message(acme.id, parent.id).await.unwrap(),
        parent
    );
    assert_eq!(m.emails.get_email(acme.id, mail.id).await.unwrap(), mail);
}

async fn a_refused_write_stores_neither_the_sends_nor_their_jobs(p: Ports) {
    let acme = p.org("Acme").await;
    let admin = p.user(&acme, "ada@acme.test", "Ada", "Admin").await;
    let m = &p.messaging;
    let send = |text: &str| {
        message(
            acme.id,
            admin.id,
            MessageKind::Post,
            text,
            &[channel("C1", None)],
        )
    };
    let first = send("first");
    let first_job = message_job(&first);
    m.messages
        .queue_messages(
            std::slice::from_ref(&first),
            std::slice::from_ref(&first_job),
        )
        .await
        .unwrap();

    // A job that cannot be enqueued (its id is taken): the messages are not stored either.
    let second = send("second");
    let reply = message(
        acme.id,
        admin.id,
        MessageKind::ThreadResponse {
            parent: second.id,
            position: 0,
        },
        "reply",
        &[channel("C1", None)],
    );
    assert_conflict(
        m.messages
            .queue_messages(&[second.clone(), reply.clone()], &[first_job])
            .await,
        "jobs_pkey",
    );
    assert_not_found(m.messages.get_message(acme.id, second.id).await);
    assert_not_found(m.messages.get_message(acme.id, reply.id).await);

    // A message that cannot be stored (its id is taken): its job is not enqueued.
    let again_job = message_job(&first);
    assert_conflict(
        m.messages
            .queue_messages(
                &[Message {
                    content: content("changed"),
                    ..first.clone()
                }],
                std::slice::from_ref(&again_job),
            )
            .await,
        "messages_pkey",
    );
    assert_eq!(m.job(again_job.id).await, None);
    assert_eq!(
        m.messages.get_message(acme.id, first.id).await.unwrap(),
        first
    );

    // The same for e-mails.
    let mail = email(acme.id, admin.id, &admin, None);
    let mail_job = email_job(&mail);
    m.emails
        .queue_emails(std::slice::from_ref(&mail), std::slice::from_ref(&mail_job))
        .await
        .unwrap();
    let other = email(acme.id, admin.id, &admin, None);
    assert_conflict(
        m.emails
            .queue_emails(std::slice::from_ref(&other), &[mail_job])
            .await,
        "jobs_pkey",
    );
    assert_not_found(m.emails.get_email(acme.id, other.id).await);
    let again_job = email_job(&mail);
    assert_conflict(
        m.emails
            .queue_emails(
                std::slice::from_ref(&mail),
                std::slice::from_ref(&again_job),
            )
            .await,
        "emails_pkey",
    );
    assert_eq!(m.job(again_job.id).await, None);
}

async fn emails_read_back_and_record_their_outcome(p: Ports) {
    let acme = p.org("Acme").await;
    let admin = p.user(&acme, "ada@acme.test", "Ada", "Admin").await;
    let mia = p.user(&acme, "mia@acme.test", "Mia", "Member").await;
    let m = &p.messaging;
    let html = email(
        acme.id,
        admin.id,
        &mia,
        Some("<h1>Q4</h1><p>See the plan.</p>"),
    );
    let plain = email(acme.id, admin.id, &admin, None);
    let jobs = [email_job(&html), email_job(&plain)];
    m.emails
        .queue_emails(&[html.clone(), plain.clone()], &jobs)
        .await
        .unwrap();
    assert_eq!(m.emails.get_email(acme.id, html.id).await.unwrap(), html);
    assert_eq!(m.emails.get_email(acme.id, plain.id).await.unwrap(), plain);
    for job in &jobs {
        assert_job_queued(m, job).await;
    }

    let t1 = T0 + Duration::SECOND;
    for _ in 0..2 {
        m.emails
            .record_email(acme.id, html.id, &EmailStatus::Sent, t1)
            .await
            .unwrap();
        assert_eq!(
            m.emails.get_email(acme.id, html.id).await.unwrap(),
            Email {
                status: EmailStatus::Sent,
                ..html.clone()
            }
        );
    }
    for reason in [FailureReason::AttemptsExhausted, FailureReason::MailRefused] {
        let failed = EmailStatus::Failed(reason);
        m.emails
            .record_email(acme.id, plain.id, &failed, t1)
            .await
            .unwrap();
        assert_eq!(
            m.emails.get_email(acme.id, plain.id).await.unwrap().status,
            failed
        );
    }
    assert_not_found(
        m.emails
            .record_email(acme.id, Uuid::now_v7(), &EmailStatus::Sent, t1)
            .await,
    );
    assert_not_found(m.emails.get_email(acme.id, Uuid::now_v7()).await);
}

async fn a_connection_is_saved_replaced_and_removed(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let mia = p.user(&acme, "mia@acme.test", "Mia", "Member").await;
    let d = &p.messaging.directory;
    assert_eq!(d.connection(acme.id).await.unwrap(), None);

    let matrix = PlatformConnection {
        org_id: acme.id,
        kind: PlatformKind::Matrix,
        base_url: Some("https://matrix.acme.test".into()),
        secret: PlatformSecret::new("syt_bot_0123456789"),
        signing_secret: None,
    };
    d.save_connection(&matrix).await.unwrap();
    // The reply poll's read: the organizations connected to Matrix.
    let on = |kind| async move { d.connected_orgs(kind).await.unwrap() };
    assert!(on(PlatformKind::Matrix).await.contains(&acme.id));
    assert!(!on(PlatformKind::Slack).await.contains(&acme.id));
    assert!(!on(PlatformKind::Matrix).await.contains(&globex.id));
    // The connector's read: the secret comes back for it to present to the platform.
    assert_eq!(d.connection(acme.id).await.unwrap().as_ref(), Some(&matrix));
    assert!(!format!("{matrix:?}").contains("syt_bot"));
    assert_eq!(d.connection(globex.id).await.unwrap(), None);

    let slack = PlatformConnection {
        org_id: acme.id,
        kind: PlatformKind::Slack,
        base_url: None,
        secret: PlatformSecret::new("xoxb-1-2-abc"),
        // Reads back opened, as the Slack events route verifies with it.
        signing_secret: Some(PlatformSecret::new("8f742231b10e8888abcd99yyyzzz85a5")),
    };
    d.save_connection(&slack).await.unwrap();
    assert_eq!(d.connection(acme.id).await.unwrap(), Some(slack));
    assert!(!on(PlatformKind::Matrix).await.contains(&acme.id));
    assert!(on(PlatformKind::Slack).await.contains(&acme.id));

    d.set_platform_user_id(acme.id, PlatformKind::Slack, mia.id, Some("U123"))
        .await
        .unwrap();
    d.remove_connection(acme.id).await.unwrap();
    assert_eq!(d.connection(acme.id).await.unwrap(), None);
    assert!(!on(PlatformKind::Slack).await.contains(&acme.id));
    assert_not_found(d.remove_connection(acme.id).await);
    assert_not_found(d.remove_connection(globex.id).await);
    // Identities outlive the connection.
    assert_eq!(
        d.platform_user_ids(acme.id, PlatformKind::Slack, &[mia.id])
            .await
            .unwrap(),
        HashMap::from([(mia.id, "U123".to_owned())])
    );
}

async fn platform_identities_are_unique_per_organization_and_platform(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "A").await.id;
    let bob = p.user(&acme, "bob@acme.test", "Bob", "B").await.id;
    let cy = p.user(&globex, "cy@globex.test", "Cy", "C").await.id;
    let d = &p.messaging.directory;
    let set = |org: OrgId, kind: PlatformKind, user: UserId, id: Option<&'static str>| async move {
        d.set_platform_user_id(org, kind, user, id).await
    };
    let (matrix, slack) = (PlatformKind::Matrix, PlatformKind::Slack);

    set(acme.id, matrix, ada, Some("@ada:acme.test"))
        .await
        .unwrap();
    set(acme.id, matrix, ada, Some("@ada:acme.test"))
        .await
        .unwrap();
    assert_conflict(
        set(acme.id, matrix, bob, Some("@ada:acme.test")).await,
        PLATFORM_IDENTITIES_UNIQUE,
    );
    // The same id on another platform, or in another organization, is someone else's to have.
    set(acme.id, slack, bob, Some("@ada:acme.test"))
        .await
        .unwrap();
    set(globex.id, matrix, cy, Some("@ada:acme.test"))
        .await
        .unwrap();
    // Only people of the organization.
    assert_not_found(set(acme.id, matrix, cy, Some("@cy:acme.test")).await);
    assert_not_found(set(acme.id, matrix, cy, None).await);
    assert_not_found(set(acme.id, matrix, UserId::new(), Some("@x:acme.test")).await);

    // A new id frees the old one.
    set(acme.id, matrix, ada, Some("@ada2:acme.test"))
        .await
        .unwrap();
    set(acme.id, matrix, bob, Some("@ada:acme.test"))
        .await
        .unwrap();
    let ids = |org: OrgId, kind: PlatformKind, people: Vec<UserId>| async move {
        d.platform_user_ids(org, kind, &people).await.unwrap()
    };
    assert_eq!(
        ids(acme.id, matrix, vec![ada, bob, cy]).await,
        HashMap::from([
            (ada, "@ada2:acme.test".to_owned()),
            (bob, "@ada:acme.test".to_owned()),
        ])
    );
    assert_eq!(
        ids(acme.id, slack, vec![ada, bob]).await,
        HashMap::from([(bob, "@ada:acme.test".to_owned())])
    );
    assert_eq!(ids(acme.id, matrix, vec![]).await, HashMap::new());
    assert_eq!(ids(globex.id, matrix, vec![ada, bob]).await, HashMap::new());

    // Forgetting: gone, and forgetting again is no error.
    set(acme.id, matrix, ada, None).await.unwrap();
    set(acme.id, matrix, ada, None).await.unwrap();
    assert_eq!(
        ids(acme.id, matrix, vec![ada, bob]).await,
        HashMap::from([(bob, "@ada:acme.test".to_owned())])
    );
}

/// What only the Postgres adapter can show: the secret at rest.
mod postgres_only {
    use super::*;

    #[tokio::test]
    async fn a_secret_is_sealed_at_rest_and_opens_only_with_the_key_for_its_organization() {
        let p = Ports::postgres().await;
        let Side::Postgres { url, .. } = &p.messaging.side else {
            unreachable!("a Postgres store")
        };
        let acme = p.org("Acme").await;
        let globex = p.org("Globex").await;
        let secret = "syt_very_secret_bot_token";
        let connection = PlatformConnection {
            org_id: acme.id,
            kind: PlatformKind::Matrix,
            base_url: Some("https://matrix.acme.test".into()),
            secret: PlatformSecret::new(secret),
            signing_secret: None,
        };
        p.messaging
            .directory
            .save_connection(&connection)
            .await
            .unwrap();

        #[derive(diesel::QueryableByName)]
        struct AtRest {
            #[diesel(sql_type = Text)]
            as_json: String,
            #[diesel(sql_type = Bytea)]
            sealed_secret: Vec<u8>,
        }
        let mut conn = AsyncPgConnection::establish(url).await.expect("connect");
        let at_rest: AtRest = diesel::sql_query(
            "SELECT row_to_json(c)::text AS as_json, c.sealed_secret FROM platform_connections c \
             WHERE organization_id = $1",
        )
        .bind::<SqlUuid, _>(acme.id.0)
        .get_result(&mut conn)
        .await
        .expect("the stored row");
        assert!(!at_rest.as_json.contains(secret), "{}", at_rest.as_json);
        assert!(
            !at_rest
                .sealed_secret
                .windows(secret.len())
                .any(|w| w == secret.as_bytes())
        );

        // A server configured with another secret cannot open it, and says so without it.
        let other_key = PlatformSecretKey::derive(&[b'x'; 32]).unwrap();
        let elsewhere =
            PgPlatformDirectory::new(Database::connect(url, 1).expect("a pool"), other_key);
        match elsewhere.connection(acme.id).await {
            Err(RepoError::Other(e)) => assert!(!e.contains(secret), "{e}"),
            other => panic!("expected an unopenable secret, got {other:?}"),
        }

        // Moved to another organization's row, it does not open either.
        diesel::sql_query(
            "INSERT INTO platform_connections (organization_id, kind, base_url, sealed_secret) \
             SELECT $1, kind, base_url, sealed_secret FROM platform_connections \
             WHERE organization_id = $2",
        )
        .bind::<SqlUuid, _>(globex.id.0)
        .bind::<SqlUuid, _>(acme.id.0)
        .execute(&mut conn)
        .await
        .expect("copy the row");
        assert!(matches!(
            p.messaging.directory.connection(globex.id).await,
            Err(RepoError::Other(_))
        ));
        assert_eq!(
            p.messaging.directory.connection(acme.id).await.unwrap(),
            Some(connection)
        );
    }

    /// Stored values the domain does not know (written by hand or by a newer version) are
    /// errors, never read as something else.
    #[tokio::test]
    async fn unknown_stored_values_are_errors() {
        let p = Ports::postgres().await;
        let Side::Postgres { url, .. } = &p.messaging.side else {
            unreachable!("a Postgres store")
        };
        let acme = p.org("Acme").await;
        let admin = p.user(&acme, "ada@acme.test", "Ada", "Admin").await;
        let m = &p.messaging;
        let stored = message(
            acme.id,
            admin.id,
            MessageKind::Post,
            "hi",
            &[channel("C1", None)],
        );
        m.messages
            .queue_messages(std::slice::from_ref(&stored), &[message_job(&stored)])
            .await
            .unwrap();
        let mail = email(acme.id, admin.id, &admin, None);
        m.emails
            .queue_emails(std::slice::from_ref(&mail), &[email_job(&mail)])
            .await
            .unwrap();
        let mut conn = AsyncPgConnection::establish(url).await.expect("connect");
        let mut corrupt = async |statement: &str| {
            diesel::sql_query(statement)
                .execute(&mut conn)
                .await
                .expect(statement);
        };
        let unreadable = async || {
            matches!(
                m.messages.get_message(acme.id, stored.id).await,
                Err(RepoError::Other(_))
            )
        };

        corrupt(
            "UPDATE message_deliveries SET status = 'failed', failure_reason = 'lost_in_space'",
        )
        .await;
        assert!(unreadable().await);
        corrupt("UPDATE message_deliveries SET status = 'queued', failure_reason = NULL").await;
        assert_eq!(
            m.messages.get_message(acme.id, stored.id).await.unwrap(),
            stored
        );
        corrupt(
            "UPDATE messages SET buttons = \
             '[{\"label\": \"x\", \"action\": {\"poll\": {}}, \"callback_url\": null, \"settings\": {}}]'",
        )
        .await;
        assert!(unreadable().await);
        corrupt("UPDATE messages SET buttons = '[]'").await;
        corrupt("UPDATE emails SET status = 'failed', failure_reason = 'lost_in_space'").await;
        assert!(matches!(
            m.emails.get_email(acme.id, mail.id).await,
            Err(RepoError::Other(_))
        ));
        m.directory
            .save_connection(&PlatformConnection {
                org_id: acme.id,
                kind: PlatformKind::Slack,
                base_url: None,
                secret: PlatformSecret::new("xoxb-1"),
                signing_secret: None,
            })
            .await
            .unwrap();
        corrupt("ALTER TABLE platform_connections DROP CONSTRAINT platform_connections_kind_check")
            .await;
        corrupt("UPDATE platform_connections SET kind = 'irc'").await;
        assert!(matches!(
            m.directory.connection(acme.id).await,
            Err(RepoError::Other(_))
        ));
    }
}
