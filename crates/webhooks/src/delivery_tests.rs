//! The delivery rules, through the in-memory ports.

use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::jobs::JobState;
use teamcomm_kernel::{Event, UserId};

use super::*;
use crate::testing::{InMemoryWebhookRepository, RecordingSender};
use crate::{EndpointSecrets, NewWebhookEndpoint, SecretText};

const T0: OffsetDateTime = time::macros::datetime!(2026-11-26 00:00 UTC);

struct World {
    repo: Arc<InMemoryWebhookRepository>,
    sender: Arc<RecordingSender>,
    worker: WebhookWorker,
    org: OrgId,
}

impl World {
    fn new() -> Self {
        let repo = Arc::new(InMemoryWebhookRepository::new());
        let sender = Arc::new(RecordingSender::new());
        let worker = WebhookWorker::new(
            WebhookWorkerPorts {
                queue: Arc::new(repo.queue()),
                deliveries: repo.clone(),
                endpoints: repo.clone(),
                sender: sender.clone(),
            },
            DeliverySettings::default(),
        );
        World {
            repo,
            sender,
            worker,
            org: OrgId::new(),
        }
    }

    async fn endpoint(
        &self,
        org: OrgId,
        events: &[EventType],
        object_ids: &[Uuid],
        created_at: OffsetDateTime,
    ) -> WebhookId {
        let new = NewWebhookEndpoint {
            id: WebhookId::new(),
            url: "https://hooks.example.com/in".into(),
            events: events.to_vec(),
            name: String::new(),
            object_ids: object_ids.to_vec(),
            secrets: EndpointSecrets {
                signing_secret: SecretText::new("whsec_c2VjcmV0"),
                bearer_token: Some(SecretText::new("tok")),
            },
            created_by: UserId::new(),
            created_at,
        };
        self.repo.create_endpoint(org, &new).await.unwrap().id
    }

    fn event(&self, org: OrgId, t: EventType, object: Option<Uuid>) -> Event {
        let e = Event::new(org, t, object, T0, json!({"n": 1}));
        self.repo.record_events(std::slice::from_ref(&e));
        e
    }

    async fn pass(&self, now: OffsetDateTime, draw: f64) -> WebhookRunSummary {
        self.worker.relay(now).await.unwrap();
        self.worker.run_once(now, &mut || draw).await.unwrap()
    }

    fn delivery_of(&self, endpoint: WebhookId) -> WebhookDelivery {
        let all: Vec<_> = self
            .repo
            .deliveries()
            .into_iter()
            .filter(|d| d.endpoint_id == endpoint)
            .collect();
        assert_eq!(all.len(), 1, "{all:?}");
        all[0].clone()
    }
}

fn failed(status: u16, retry_after: Option<u64>) -> DeliveryOutcome {
    DeliveryOutcome::Failed {
        status: Some(status),
        retry_after,
        error: format!("answered {status}"),
    }
}

#[tokio::test]
async fn an_event_fans_out_to_the_subscribed_enabled_endpoints_of_its_organization_once() {
    let w = World::new();
    let checkin = Uuid::now_v7();
    let all = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    let scoped = w
        .endpoint(
            w.org,
            &[EventType::FollowupsResponseCompleted],
            &[checkin],
            T0,
        )
        .await;
    let other_type = w
        .endpoint(w.org, &[EventType::FormsResponseCreated], &[], T0)
        .await;
    let disabled = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    w.repo.disable_endpoint(w.org, disabled, "x").await.unwrap();
    let elsewhere = w
        .endpoint(OrgId::new(), &[EventType::KudosPosted], &[], T0)
        .await;

    let kudos = w.event(w.org, EventType::KudosPosted, None);
    let followup = w.event(w.org, EventType::FollowupsResponseCompleted, Some(checkin));
    w.event(
        w.org,
        EventType::FollowupsResponseCompleted,
        Some(Uuid::now_v7()),
    );
    assert_eq!(w.worker.relay(T0).await.unwrap(), 3);
    assert_eq!(
        w.worker.relay(T0).await.unwrap(),
        0,
        "each event relayed once"
    );

    let d = w.repo.deliveries();
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(w.delivery_of(all).event_id, kudos.id);
    assert_eq!(w.delivery_of(scoped).event_id, followup.id);
    for none in [other_type, disabled, elsewhere] {
        assert!(d.iter().all(|x| x.endpoint_id != none));
    }
    let jobs = w.repo.queue().all();
    assert_eq!(jobs.len(), 2);
    assert!(jobs.iter().all(|j| j.kind == JobKind::WebhookDelivery
        && j.max_attempts == DeliverySettings::default().max_attempts));
}

#[tokio::test]
async fn a_2xx_delivers_the_stored_payload_under_the_event_id() {
    let w = World::new();
    let ep = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    let event = w.event(w.org, EventType::KudosPosted, None);
    let summary = w.pass(T0, 0.5).await;
    assert_eq!(summary.delivered, 1);
    let sent = w.sender.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].message_id, event.id.to_string());
    assert_eq!(sent[0].timestamp, T0.unix_timestamp());
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(body, event.payload());
    assert_eq!(sent[0].bearer_token, Some(SecretText::new("tok")));
    let d = w.delivery_of(ep);
    assert_eq!(d.status, DeliveryStatus::Delivered);
    assert_eq!((d.attempts, d.last_status_code), (1, Some(200)));
    assert_eq!(d.delivered_at, Some(T0));
    assert!(
        w.repo
            .queue()
            .all()
            .iter()
            .all(|j| j.state == JobState::Done)
    );
}

#[tokio::test]
async fn failures_retry_on_the_backoff_honouring_retry_after_then_deliver() {
    let w = World::new();
    let ep = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    w.event(w.org, EventType::KudosPosted, None);
    w.sender.answer(failed(503, Some(7_200)));
    assert_eq!(w.pass(T0, 0.0).await.retried, 1);
    let d = w.delivery_of(ep);
    assert_eq!(d.status, DeliveryStatus::Pending);
    assert_eq!((d.attempts, d.last_status_code), (1, Some(503)));
    assert_eq!(d.next_attempt_at, Some(T0 + Duration::hours(2)));
    // Not due before Retry-After.
    assert_eq!(w.pass(T0 + Duration::minutes(30), 0.0).await.claimed, 0);

    w.sender.answer(failed(500, None));
    let t1 = T0 + Duration::hours(2);
    assert_eq!(w.pass(t1, 0.0).await.retried, 1);
    assert_eq!(
        w.delivery_of(ep).next_attempt_at,
        Some(t1 + Duration::minutes(1)),
        "at least the base"
    );
    w.sender.answer(DeliveryOutcome::Delivered { status: 204 });
    assert_eq!(w.pass(t1 + Duration::minutes(1), 0.0).await.delivered, 1);
    let d = w.delivery_of(ep);
    assert_eq!((d.status, d.attempts), (DeliveryStatus::Delivered, 3));
    assert_eq!(w.sender.sent().len(), 3);
}

#[tokio::test]
async fn a_410_disables_the_endpoint_at_once_and_its_new_events_are_not_queued() {
    let w = World::new();
    let ep = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    w.event(w.org, EventType::KudosPosted, None);
    w.sender.answer(DeliveryOutcome::Gone);
    assert_eq!(w.pass(T0, 0.5).await.failed, 1);
    let endpoint = w.repo.get_endpoint(w.org, ep).await.unwrap();
    assert!(!endpoint.enabled);
    assert_eq!(endpoint.disabled_reason.as_deref(), Some(GONE_REASON));
    assert_eq!(w.delivery_of(ep).status, DeliveryStatus::Failed);

    w.event(w.org, EventType::KudosPosted, None);
    w.pass(T0 + Duration::minutes(1), 0.5).await;
    assert_eq!(
        w.repo.deliveries().len(),
        1,
        "nothing for a disabled endpoint"
    );
    assert_eq!(w.sender.sent().len(), 1);
}

/// Runs every attempt of the one delivery, answering `outcome`, each when it is due; answers
/// when the last one ran.
async fn exhaust(w: &World, ep: WebhookId, start: OffsetDateTime) -> OffsetDateTime {
    let mut now = start;
    for _ in 0..DeliverySettings::default().max_attempts {
        w.pass(now, 0.99).await;
        match w.delivery_of(ep).next_attempt_at {
            Some(next) => now = next,
            None => break,
        }
    }
    now
}

#[tokio::test]
async fn after_the_last_attempt_the_delivery_fails_and_a_recently_working_endpoint_stays() {
    let w = World::new();
    let ep = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    w.event(w.org, EventType::KudosPosted, None);
    w.sender.answer(failed(500, None));
    let last = exhaust(&w, ep, T0).await;
    let d = w.delivery_of(ep);
    assert_eq!(d.status, DeliveryStatus::Failed);
    assert_eq!(d.attempts, DeliverySettings::default().max_attempts);
    assert_eq!(w.sender.sent().len(), 12);
    // The whole schedule takes about a day.
    let span = last - T0;
    assert!(
        span > Duration::hours(20) && span < Duration::hours(26),
        "{span}"
    );
    assert!(w.repo.get_endpoint(w.org, ep).await.unwrap().enabled);
}

#[tokio::test]
async fn an_endpoint_that_delivered_nothing_for_days_is_disabled_with_the_reason() {
    let w = World::new();
    let created = T0 - Duration::days(10);
    let ep = w
        .endpoint(w.org, &[EventType::KudosPosted], &[], created)
        .await;
    w.event(w.org, EventType::KudosPosted, None);
    w.sender.answer(failed(502, None));
    exhaust(&w, ep, T0).await;
    let endpoint = w.repo.get_endpoint(w.org, ep).await.unwrap();
    assert!(!endpoint.enabled);
    let reason = endpoint.disabled_reason.unwrap();
    assert!(
        reason.contains("5 days") && reason.contains("answered 502"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_re_enabled_endpoint_gets_its_failed_deliveries_replayed() {
    let w = World::new();
    let ep = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    let event = w.event(w.org, EventType::KudosPosted, None);
    w.sender.answer(DeliveryOutcome::Gone);
    w.pass(T0, 0.5).await;
    w.repo.enable_endpoint(w.org, ep).await.unwrap();
    let t1 = T0 + Duration::hours(1);
    assert_eq!(w.repo.replay_failed(w.org, ep, t1, 12).await.unwrap(), 1);
    w.sender.answer(DeliveryOutcome::Delivered { status: 200 });
    assert_eq!(w.pass(t1, 0.5).await.delivered, 1);
    let d = w.delivery_of(ep);
    assert_eq!((d.status, d.attempts), (DeliveryStatus::Delivered, 1));
    assert_eq!(w.sender.sent()[1].message_id, event.id.to_string());
    assert_eq!(w.repo.replay_failed(w.org, ep, t1, 12).await.unwrap(), 0);
}

#[tokio::test]
async fn a_job_of_a_disabled_endpoint_fails_without_sending() {
    let w = World::new();
    let ep = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    w.event(w.org, EventType::KudosPosted, None);
    w.worker.relay(T0).await.unwrap();
    w.repo.disable_endpoint(w.org, ep, "by hand").await.unwrap();
    assert_eq!(w.pass(T0, 0.5).await.failed, 1);
    assert!(w.sender.sent().is_empty());
    let d = w.delivery_of(ep);
    assert_eq!((d.status, d.attempts), (DeliveryStatus::Failed, 0));
    assert_eq!(d.last_error.as_deref(), Some("endpoint_disabled"));
}

#[tokio::test]
async fn delivered_events_are_forgotten_after_the_retention() {
    let w = World::new();
    let ep = w.endpoint(w.org, &[EventType::KudosPosted], &[], T0).await;
    w.event(w.org, EventType::KudosPosted, None);
    assert_eq!(w.pass(T0, 0.5).await.delivered, 1);
    let kept = T0 + EVENT_RETENTION - Duration::minutes(1);
    assert_eq!(w.worker.prune(kept).await.unwrap(), 0);
    assert_eq!(w.delivery_of(ep).status, DeliveryStatus::Delivered);
    let past = T0 + EVENT_RETENTION + Duration::minutes(1);
    assert_eq!(w.worker.prune(past).await.unwrap(), 1);
    assert!(
        w.repo.deliveries().is_empty(),
        "the delivery went with its event"
    );
}
