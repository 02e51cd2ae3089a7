//! `WebhookRepository`: an endpoint reads back as created, per organization, without its
//! secrets, which read back only through `endpoint_secrets`; lists are newest first, per
//! organization and optionally per creator, paged; deletes by id and by URL stay in the
//! organization.

use teamcomm_kernel::{EventType, PageRequest, UserId};
use teamcomm_webhooks::{
    EndpointSecrets, NewWebhookEndpoint, SecretText, WebhookId, generate_signing_secret,
};
use time::Duration;
use time::macros::datetime;
use uuid::Uuid;

use crate::ports::{Ports, assert_not_found};

contract!(
    an_endpoint_reads_back_as_created_and_its_secrets_only_through_endpoint_secrets,
    endpoints_list_newest_first_per_organization_and_creator,
    deletes_stay_in_the_organization,
);

fn endpoint(url: &str, by: UserId, minute: i64, bearer: Option<&str>) -> NewWebhookEndpoint {
    NewWebhookEndpoint {
        id: WebhookId::new(),
        url: url.into(),
        events: vec![EventType::FormsResponseCreated, EventType::KudosPosted],
        name: "CRM".into(),
        object_ids: vec![Uuid::now_v7()],
        secrets: EndpointSecrets {
            signing_secret: generate_signing_secret(),
            bearer_token: bearer.map(SecretText::new),
        },
        created_by: by,
        created_at: datetime!(2026-11-26 02:00 UTC) + Duration::minutes(minute),
    }
}

async fn an_endpoint_reads_back_as_created_and_its_secrets_only_through_endpoint_secrets(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let new = endpoint("https://hooks.example.com/in", ada.id, 0, Some("tok-1"));
    let created = p.webhooks.create_endpoint(acme.id, &new).await.unwrap();
    assert_eq!(created.id, new.id);
    assert_eq!(created.org_id, acme.id);
    assert_eq!(created.url, new.url);
    assert_eq!(created.events, new.events);
    assert_eq!(created.name, "CRM");
    assert_eq!(created.object_ids, new.object_ids);
    assert!(created.has_bearer_token && created.enabled);
    assert_eq!(created.disabled_reason, None);
    assert_eq!(created.created_by, Some(ada.id));
    assert_eq!(created.created_at, new.created_at);
    assert_eq!(
        p.webhooks.get_endpoint(acme.id, new.id).await.unwrap(),
        created
    );
    assert_eq!(
        p.webhooks.endpoint_secrets(acme.id, new.id).await.unwrap(),
        new.secrets
    );

    let plain = endpoint("https://hooks.example.com/plain", ada.id, 1, None);
    let plain_created = p.webhooks.create_endpoint(acme.id, &plain).await.unwrap();
    assert!(!plain_created.has_bearer_token);
    let secrets = p
        .webhooks
        .endpoint_secrets(acme.id, plain.id)
        .await
        .unwrap();
    assert_eq!(secrets.bearer_token, None);
    assert_eq!(secrets.signing_secret, plain.secrets.signing_secret);

    // Another organization's endpoint, or none at all, is not found.
    assert_not_found(p.webhooks.get_endpoint(globex.id, new.id).await);
    assert_not_found(p.webhooks.endpoint_secrets(globex.id, new.id).await);
    assert_not_found(p.webhooks.get_endpoint(acme.id, WebhookId::new()).await);
}

async fn endpoints_list_newest_first_per_organization_and_creator(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let bob = p.user(&acme, "bob@acme.test", "Bob", "M").await;
    let gus = p.user(&globex, "gus@globex.test", "Gus", "N").await;
    let mut ids = Vec::new();
    for (minute, by) in [(0, ada.id), (2, bob.id), (1, ada.id)] {
        let new = endpoint("https://hooks.example.com/", by, minute, None);
        ids.push(new.id);
        p.webhooks.create_endpoint(acme.id, &new).await.unwrap();
    }
    p.webhooks
        .create_endpoint(globex.id, &endpoint("https://g.example/", gus.id, 5, None))
        .await
        .unwrap();

    let all = p
        .webhooks
        .list_endpoints(acme.id, None, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(all.count, 3);
    let order: Vec<WebhookId> = all.results.iter().map(|e| e.id).collect();
    assert_eq!(order, [ids[1], ids[2], ids[0]]);

    let page = p
        .webhooks
        .list_endpoints(
            acme.id,
            None,
            PageRequest {
                offset: 1,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.count, 3);
    assert_eq!(page.results.len(), 1);
    assert_eq!(page.results[0].id, ids[2]);

    let adas = p
        .webhooks
        .list_endpoints(acme.id, Some(ada.id), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(adas.count, 2);
    assert!(adas.results.iter().all(|e| e.created_by == Some(ada.id)));
    let none = p
        .webhooks
        .list_endpoints(acme.id, Some(gus.id), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(none.count, 0);
}

async fn deletes_stay_in_the_organization(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let gus = p.user(&globex, "gus@globex.test", "Gus", "N").await;
    let url = "https://hooks.example.com/same";
    let a1 = endpoint(url, ada.id, 0, None);
    let a2 = endpoint(url, ada.id, 1, Some("t"));
    let a3 = endpoint("https://hooks.example.com/other", ada.id, 2, None);
    let g1 = endpoint(url, gus.id, 3, None);
    for (org, new) in [
        (acme.id, &a1),
        (acme.id, &a2),
        (acme.id, &a3),
        (globex.id, &g1),
    ] {
        p.webhooks.create_endpoint(org, new).await.unwrap();
    }

    assert_not_found(p.webhooks.delete_endpoint(globex.id, a3.id).await);
    p.webhooks.delete_endpoint(acme.id, a3.id).await.unwrap();
    assert_not_found(p.webhooks.get_endpoint(acme.id, a3.id).await);
    assert_not_found(p.webhooks.delete_endpoint(acme.id, a3.id).await);

    assert_eq!(
        p.webhooks
            .delete_endpoints_by_url(acme.id, "https://hooks.example.com/SAME")
            .await
            .unwrap(),
        0,
        "URLs compare exactly"
    );
    assert_eq!(
        p.webhooks
            .delete_endpoints_by_url(acme.id, url)
            .await
            .unwrap(),
        2
    );
    assert_not_found(p.webhooks.endpoint_secrets(acme.id, a2.id).await);
    assert_eq!(
        p.webhooks.get_endpoint(globex.id, g1.id).await.unwrap().url,
        url
    );
    assert_eq!(
        p.webhooks
            .delete_endpoints_by_url(acme.id, url)
            .await
            .unwrap(),
        0
    );
}

// ---------------------------------------------------------------- deliveries

/// `DeliveryRepository`: the relay fans each outbox event out once, to the enabled endpoints
/// of its organization subscribed to it, with a job each; a batch's deliveries read back with
/// their endpoint, secrets and payload, in their organization only; `settle` records the
/// attempt and ends the job (complete, retry, fail) fenced by the claimed attempt, the record
/// standing when the fence does not; replays, the last success and the endpoint switches.
pub mod deliveries {
    use std::sync::Arc;

    use diesel::sql_types::{Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    use serde_json::json;
    use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
    use teamcomm_kernel::jobs::{ClaimedJob, JobKind, JobQueue, JobRecord, JobState};
    use teamcomm_kernel::{Event, EventType, OrgId, PageRequest, WireEnum};
    use teamcomm_store_pg::{Database, PgJobQueue, PgWebhookDeliveries, PgWebhookRepository};
    use teamcomm_webhooks::testing::InMemoryWebhookRepository;
    use teamcomm_webhooks::{
        AttemptRecord, DeliveryRepository, DeliveryStatus, JobEnd, Settlement, WebhookDelivery,
        WebhookId,
    };
    use time::macros::datetime;
    use time::{Duration, OffsetDateTime};
    use uuid::Uuid;

    use super::endpoint;
    use crate::ports::{Ports, assert_not_found};

    contract!(
        the_relay_fans_each_event_out_once_to_the_subscribed_enabled_endpoints,
        a_batch_reads_back_with_endpoint_secrets_and_payload_in_its_organization_only,
        settle_records_the_attempts_and_ends_the_jobs_fenced_by_the_claimed_attempt,
        failed_deliveries_replay_and_the_last_success_is_per_endpoint,
        old_relayed_events_go_with_their_deliveries_unless_one_is_pending,
    );

    /// The deliveries port over the same store as `Ports::webhooks`, and what its tests need
    /// beside it: writing outbox events (a change's repository does) and reading a job back.
    pub struct DeliveryPorts {
        pub deliveries: Arc<dyn DeliveryRepository>,
        pub queue: Arc<dyn JobQueue>,
        side: Side,
    }

    enum Side {
        Memory(Arc<InMemoryWebhookRepository>, InMemoryJobQueue),
        Postgres { queue: PgJobQueue, url: String },
    }

    impl DeliveryPorts {
        pub fn in_memory(repo: Arc<InMemoryWebhookRepository>) -> Self {
            let queue = repo.queue();
            DeliveryPorts {
                deliveries: repo.clone(),
                queue: Arc::new(queue.clone()),
                side: Side::Memory(repo, queue),
            }
        }

        pub fn postgres(db: Database, endpoints: PgWebhookRepository, url: &str) -> Self {
            let queue = PgJobQueue::new(db.clone());
            DeliveryPorts {
                deliveries: Arc::new(PgWebhookDeliveries::new(db, endpoints)),
                queue: Arc::new(queue.clone()),
                side: Side::Postgres {
                    queue,
                    url: url.to_owned(),
                },
            }
        }

        async fn record(&self, events: &[Event]) {
            match &self.side {
                Side::Memory(repo, _) => repo.record_events(events),
                Side::Postgres { url, .. } => {
                    let mut conn = AsyncPgConnection::establish(url).await.expect("connect");
                    for e in events {
                        diesel::sql_query(
                            "INSERT INTO outbox_events (id, organization_id, event_type, object_id, \
                             payload, occurred_at) VALUES ($1, $2, $3, $4, $5, $6)",
                        )
                        .bind::<SqlUuid, _>(e.id)
                        .bind::<SqlUuid, _>(e.org_id.0)
                        .bind::<Text, _>(e.event_type.as_str())
                        .bind::<Nullable<SqlUuid>, _>(e.object_id)
                        .bind::<Jsonb, _>(e.payload())
                        .bind::<Timestamptz, _>(e.occurred_at)
                        .execute(&mut conn)
                        .await
                        .expect("write an outbox event");
                    }
                }
            }
        }

        async fn job(&self, id: Uuid) -> JobRecord {
            match &self.side {
                Side::Memory(_, queue) => queue.job(id),
                Side::Postgres { queue, .. } => queue.job(id).await.expect("read the job"),
            }
            .expect("the job exists")
        }
    }

    const T0: OffsetDateTime = datetime!(2030-01-01 12:00 UTC);
    const LEASE: Duration = Duration::seconds(30);
    const KIND: [JobKind; 1] = [JobKind::WebhookDelivery];

    fn event(org: OrgId, t: EventType, object: Option<Uuid>, n: u32) -> Event {
        Event::new(org, t, object, T0, json!({"n": n}))
    }

    /// Relays until nothing is left.
    async fn relay_all(p: &Ports, now: OffsetDateTime) {
        while p
            .webhook_deliveries
            .deliveries
            .relay(10, now, 12)
            .await
            .unwrap()
            > 0
        {}
    }

    async fn deliveries_of(p: &Ports, org: OrgId, ep: WebhookId) -> Vec<WebhookDelivery> {
        p.webhook_deliveries
            .deliveries
            .list_deliveries(org, ep, PageRequest::default())
            .await
            .unwrap()
            .results
    }

    async fn claim_all(p: &Ports, now: OffsetDateTime) -> Vec<ClaimedJob> {
        p.webhook_deliveries
            .queue
            .claim(&KIND, 100, now, LEASE)
            .await
            .unwrap()
    }

    fn delivery_of(job: &ClaimedJob) -> Uuid {
        Uuid::parse_str(job.payload["delivery_id"].as_str().expect("a delivery id")).unwrap()
    }

    /// An endpoint of `org` for `events`, optionally only for `objects`.
    async fn subscribe(
        p: &Ports,
        org: &teamcomm_org::Organization,
        events: &[EventType],
        objects: &[Uuid],
    ) -> teamcomm_webhooks::NewWebhookEndpoint {
        let by = p
            .user(
                org,
                &format!("{}@hooks.test", Uuid::now_v7()),
                "Hook",
                "Owner",
            )
            .await
            .id;
        let mut new = endpoint("https://hooks.example.com/in", by, 0, Some("tok"));
        new.events = events.to_vec();
        new.object_ids = objects.to_vec();
        p.webhooks.create_endpoint(org.id, &new).await.unwrap();
        new
    }

    async fn the_relay_fans_each_event_out_once_to_the_subscribed_enabled_endpoints(p: Ports) {
        let acme = p.org("Acme").await;
        let globex = p.org("Globex").await;
        let form = Uuid::now_v7();
        let kudos = subscribe(&p, &acme, &[EventType::KudosPosted], &[]).await;
        let scoped = subscribe(&p, &acme, &[EventType::FormsResponseCreated], &[form]).await;
        let off = subscribe(&p, &acme, &[EventType::KudosPosted], &[]).await;
        p.webhook_deliveries
            .deliveries
            .disable_endpoint(acme.id, off.id, "off")
            .await
            .unwrap();
        let theirs = subscribe(&p, &globex, &[EventType::KudosPosted], &[]).await;

        let k1 = event(acme.id, EventType::KudosPosted, None, 1);
        let k2 = event(acme.id, EventType::KudosPosted, None, 2);
        let f1 = event(acme.id, EventType::FormsResponseCreated, Some(form), 3);
        let f2 = event(
            acme.id,
            EventType::FormsResponseCreated,
            Some(Uuid::now_v7()),
            4,
        );
        p.webhook_deliveries
            .record(&[k1.clone(), k2.clone(), f1.clone(), f2])
            .await;
        relay_all(&p, T0).await;
        relay_all(&p, T0 + Duration::MINUTE).await;

        let mut got: Vec<Uuid> = deliveries_of(&p, acme.id, kudos.id)
            .await
            .iter()
            .map(|d| d.event_id)
            .collect();
        got.sort();
        assert_eq!(got, [k1.id, k2.id], "each event once");
        let d = &deliveries_of(&p, acme.id, kudos.id).await[0];
        assert_eq!(
            (d.status, d.attempts, d.next_attempt_at, d.created_at),
            (DeliveryStatus::Pending, 0, Some(T0), T0)
        );
        assert_eq!(d.event_type, EventType::KudosPosted);
        let scoped_got = deliveries_of(&p, acme.id, scoped.id).await;
        assert_eq!(scoped_got.len(), 1);
        assert_eq!(scoped_got[0].event_id, f1.id, "only its form's events");
        assert!(deliveries_of(&p, acme.id, off.id).await.is_empty());
        assert!(deliveries_of(&p, globex.id, theirs.id).await.is_empty());
        assert!(
            deliveries_of(&p, globex.id, kudos.id).await.is_empty(),
            "another organization's endpoint lists nothing"
        );

        let jobs = claim_all(&p, T0).await;
        assert_eq!(jobs.len(), 3, "a job per delivery");
        for job in &jobs {
            assert_eq!(
                (job.org_id, job.kind, job.max_attempts),
                (acme.id, JobKind::WebhookDelivery, 12)
            );
        }
    }

    async fn a_batch_reads_back_with_endpoint_secrets_and_payload_in_its_organization_only(
        p: Ports,
    ) {
        let acme = p.org("Acme").await;
        let globex = p.org("Globex").await;
        let a = subscribe(&p, &acme, &[EventType::KudosPosted], &[]).await;
        let b = subscribe(&p, &acme, &[EventType::KudosPosted], &[]).await;
        let g = subscribe(&p, &globex, &[EventType::KudosPosted], &[]).await;
        let ka = event(acme.id, EventType::KudosPosted, None, 1);
        let kg = event(globex.id, EventType::KudosPosted, None, 2);
        p.webhook_deliveries.record(&[ka.clone(), kg.clone()]).await;
        relay_all(&p, T0).await;
        let mut wanted: Vec<(OrgId, Uuid)> = claim_all(&p, T0)
            .await
            .iter()
            .map(|j| (j.org_id, delivery_of(j)))
            .collect();
        assert_eq!(wanted.len(), 3);
        let globex_delivery = wanted.iter().find(|(o, _)| *o == globex.id).unwrap().1;
        // Another organization's id, and one not stored, are left out.
        wanted.push((acme.id, globex_delivery));
        wanted.push((acme.id, Uuid::now_v7()));

        let mut works = p
            .webhook_deliveries
            .deliveries
            .deliveries_work(&wanted)
            .await
            .unwrap();
        works.sort_by_key(|w| w.endpoint.id);
        let mut endpoints: Vec<WebhookId> = works.iter().map(|w| w.endpoint.id).collect();
        let mut expected = vec![a.id, b.id, g.id];
        expected.sort();
        endpoints.dedup();
        assert_eq!(endpoints, expected, "one delivery per endpoint: {works:?}");
        for w in &works {
            let (new, org, e) = match w.endpoint.id {
                id if id == a.id => (&a, acme.id, &ka),
                id if id == b.id => (&b, acme.id, &ka),
                _ => (&g, globex.id, &kg),
            };
            assert_eq!((w.delivery.org_id, w.endpoint.org_id), (org, org));
            assert_eq!(w.delivery.endpoint_id, new.id);
            assert_eq!(w.endpoint.url, new.url);
            assert!(w.endpoint.enabled);
            assert_eq!(w.secrets, new.secrets);
            assert_eq!(w.delivery.status, DeliveryStatus::Pending);
            assert_eq!((w.delivery.event_id, &w.payload), (e.id, &e.payload()));
        }
        assert!(
            p.webhook_deliveries
                .deliveries
                .deliveries_work(&[])
                .await
                .unwrap()
                .is_empty()
        );
        // A deleted endpoint takes its deliveries: nothing to read.
        p.webhooks.delete_endpoint(globex.id, g.id).await.unwrap();
        let left = p
            .webhook_deliveries
            .deliveries
            .deliveries_work(&wanted)
            .await
            .unwrap();
        assert_eq!(left.len(), 2);
    }

    fn record(
        status: DeliveryStatus,
        attempts: u32,
        code: Option<u16>,
        error: Option<&str>,
        next: Option<OffsetDateTime>,
        at: OffsetDateTime,
    ) -> AttemptRecord {
        AttemptRecord {
            status,
            attempts,
            last_status_code: code,
            last_error: error.map(str::to_owned),
            next_attempt_at: next,
            at,
        }
    }

    fn settlement(
        job: &ClaimedJob,
        delivery: Uuid,
        record: AttemptRecord,
        end: JobEnd,
    ) -> Settlement {
        Settlement {
            job: job.clone(),
            delivery,
            record,
            end,
        }
    }

    async fn settle_records_the_attempts_and_ends_the_jobs_fenced_by_the_claimed_attempt(p: Ports) {
        let acme = p.org("Acme").await;
        let ep = subscribe(&p, &acme, &[EventType::KudosPosted], &[]).await;
        let events: Vec<Event> = (0..4)
            .map(|n| event(acme.id, EventType::KudosPosted, None, n))
            .collect();
        p.webhook_deliveries.record(&events).await;
        relay_all(&p, T0).await;
        let jobs = claim_all(&p, T0).await;
        assert_eq!(jobs.len(), 4);
        let d = &p.webhook_deliveries.deliveries;
        let t1 = T0 + Duration::SECOND;
        let next = T0 + Duration::hours(2);
        let stored = |id: Uuid, all: Vec<WebhookDelivery>| {
            all.into_iter().find(|d| d.id == id).expect("the delivery")
        };
        let ids: Vec<Uuid> = jobs.iter().map(delivery_of).collect();
        // A stale holder of the fourth job (an older attempt than the claim's).
        let stale = ClaimedJob {
            attempt: jobs[3].attempt + 1,
            ..jobs[3].clone()
        };
        let batch = [
            settlement(
                &jobs[0],
                ids[0],
                record(DeliveryStatus::Delivered, 1, Some(204), None, None, t1),
                JobEnd::Complete,
            ),
            settlement(
                &jobs[1],
                ids[1],
                record(
                    DeliveryStatus::Pending,
                    1,
                    Some(503),
                    Some("HTTP 503"),
                    Some(next),
                    t1,
                ),
                JobEnd::Retry {
                    at: next,
                    error: "HTTP 503".into(),
                },
            ),
            settlement(
                &jobs[2],
                ids[2],
                record(DeliveryStatus::Failed, 1, Some(410), Some("gone"), None, t1),
                JobEnd::Fail {
                    error: "gone".into(),
                },
            ),
            settlement(
                &stale,
                ids[3],
                record(
                    DeliveryStatus::Pending,
                    1,
                    None,
                    Some("timed out"),
                    Some(next),
                    t1,
                ),
                JobEnd::Retry {
                    at: next,
                    error: "timed out".into(),
                },
            ),
        ];
        assert_eq!(
            d.settle(&batch, t1).await.unwrap(),
            [true, true, true, false]
        );
        assert!(d.settle(&[], t1).await.unwrap().is_empty());

        // Delivered: the job is done.
        let s = stored(ids[0], deliveries_of(&p, acme.id, ep.id).await);
        assert_eq!(
            (s.status, s.attempts, s.last_status_code, s.last_error),
            (DeliveryStatus::Delivered, 1, Some(204), None)
        );
        assert_eq!(
            (s.delivered_at, s.updated_at, s.next_attempt_at),
            (Some(t1), t1, None)
        );
        let j = p.webhook_deliveries.job(jobs[0].id).await;
        assert_eq!(
            (j.state, j.lease_until, j.finished_at),
            (JobState::Done, None, Some(t1))
        );

        // Retried: queued again at the next attempt's time, with the error.
        let s = stored(ids[1], deliveries_of(&p, acme.id, ep.id).await);
        assert_eq!(
            (
                s.status,
                s.last_status_code,
                s.last_error.as_deref(),
                s.next_attempt_at,
                s.delivered_at
            ),
            (
                DeliveryStatus::Pending,
                Some(503),
                Some("HTTP 503"),
                Some(next),
                None
            )
        );
        let j = p.webhook_deliveries.job(jobs[1].id).await;
        assert_eq!(
            (
                j.state,
                j.run_at,
                j.lease_until,
                j.finished_at,
                j.last_error.as_deref()
            ),
            (JobState::Queued, next, None, None, Some("HTTP 503"))
        );

        // Failed: the job ends failed with the error.
        assert_eq!(
            stored(ids[2], deliveries_of(&p, acme.id, ep.id).await).status,
            DeliveryStatus::Failed
        );
        let j = p.webhook_deliveries.job(jobs[2].id).await;
        assert_eq!(
            (j.state, j.finished_at, j.last_error.as_deref()),
            (JobState::Failed, Some(t1), Some("gone"))
        );

        // The stale holder is fenced off (the job is still the claim's); its record stands.
        assert_eq!(
            p.webhook_deliveries.job(jobs[3].id).await.state,
            JobState::Running
        );
        assert_eq!(
            stored(ids[3], deliveries_of(&p, acme.id, ep.id).await)
                .last_error
                .as_deref(),
            Some("timed out")
        );

        // Settling a finished job again: the claim is gone; the record is written all the same.
        let again = settlement(
            &jobs[0],
            ids[0],
            record(DeliveryStatus::Delivered, 2, Some(200), None, None, t1),
            JobEnd::Complete,
        );
        assert_eq!(d.settle(&[again], t1).await.unwrap(), [false]);
        assert_eq!(
            stored(ids[0], deliveries_of(&p, acme.id, ep.id).await).attempts,
            2
        );

        // A delivery since deleted is no error: the job still ends.
        let gone = settlement(
            &jobs[3],
            Uuid::now_v7(),
            record(DeliveryStatus::Delivered, 1, Some(200), None, None, t1),
            JobEnd::Complete,
        );
        assert_eq!(d.settle(&[gone], t1).await.unwrap(), [true]);
        assert_eq!(
            p.webhook_deliveries.job(jobs[3].id).await.state,
            JobState::Done
        );

        // Due again at its time: the retried job, its next attempt.
        let later = claim_all(&p, next).await;
        assert_eq!(later.len(), 1, "{later:?}");
        assert_eq!((later[0].id, later[0].attempt), (jobs[1].id, 2));
    }

    async fn failed_deliveries_replay_and_the_last_success_is_per_endpoint(p: Ports) {
        let acme = p.org("Acme").await;
        let globex = p.org("Globex").await;
        let ep = subscribe(&p, &acme, &[EventType::KudosPosted], &[]).await;
        let other = subscribe(&p, &acme, &[EventType::KudosPosted], &[]).await;
        p.webhook_deliveries
            .record(&[
                event(acme.id, EventType::KudosPosted, None, 1),
                event(acme.id, EventType::KudosPosted, None, 2),
            ])
            .await;
        relay_all(&p, T0).await;
        let d = &p.webhook_deliveries.deliveries;
        let t1 = T0 + Duration::SECOND;
        let t2 = T0 + Duration::MINUTE;
        assert_eq!(d.last_delivered_at(acme.id, ep.id).await.unwrap(), None);
        for job in claim_all(&p, T0).await {
            let id = delivery_of(&job);
            let mine = deliveries_of(&p, acme.id, ep.id).await;
            let (status, at) = match mine.iter().position(|x| x.id == id) {
                Some(0) => (DeliveryStatus::Delivered, t2),
                Some(_) => (DeliveryStatus::Failed, t1),
                None => (DeliveryStatus::Delivered, t1),
            };
            let r = record(status, 1, Some(200), None, None, at);
            let end = if status == DeliveryStatus::Failed {
                JobEnd::Fail { error: "x".into() }
            } else {
                JobEnd::Complete
            };
            let done = d.settle(&[settlement(&job, id, r, end)], at).await.unwrap();
            assert_eq!(done, [true]);
        }
        assert_eq!(d.last_delivered_at(acme.id, ep.id).await.unwrap(), Some(t2));
        assert_eq!(
            d.last_delivered_at(acme.id, other.id).await.unwrap(),
            Some(t1)
        );
        assert_eq!(d.last_delivered_at(globex.id, ep.id).await.unwrap(), None);

        // Replays are per organization and endpoint: the failed one pending again with a job.
        assert_eq!(d.replay_failed(globex.id, ep.id, t2, 5).await.unwrap(), 0);
        assert_eq!(d.replay_failed(acme.id, other.id, t2, 5).await.unwrap(), 0);
        assert_eq!(d.replay_failed(acme.id, ep.id, t2, 5).await.unwrap(), 1);
        let replayed: Vec<_> = deliveries_of(&p, acme.id, ep.id)
            .await
            .into_iter()
            .filter(|x| x.status == DeliveryStatus::Pending)
            .collect();
        assert_eq!(replayed.len(), 1);
        assert_eq!(
            (replayed[0].attempts, replayed[0].next_attempt_at),
            (0, Some(t2))
        );
        let jobs = claim_all(&p, t2).await;
        assert_eq!(jobs.len(), 1);
        assert_eq!(
            (delivery_of(&jobs[0]), jobs[0].max_attempts),
            (replayed[0].id, 5)
        );
        assert_eq!(d.replay_failed(acme.id, ep.id, t2, 5).await.unwrap(), 0);

        // Switches stay in the organization.
        assert_not_found(d.disable_endpoint(globex.id, ep.id, "no").await);
        assert_not_found(d.enable_endpoint(globex.id, ep.id).await);
        d.disable_endpoint(acme.id, ep.id, "why").await.unwrap();
        let off = p.webhooks.get_endpoint(acme.id, ep.id).await.unwrap();
        assert_eq!(
            (off.enabled, off.disabled_reason.as_deref()),
            (false, Some("why"))
        );
        d.enable_endpoint(acme.id, ep.id).await.unwrap();
        let on = p.webhooks.get_endpoint(acme.id, ep.id).await.unwrap();
        assert_eq!((on.enabled, on.disabled_reason), (true, None));
    }

    async fn old_relayed_events_go_with_their_deliveries_unless_one_is_pending(p: Ports) {
        let acme = p.org("Acme").await;
        let ep = subscribe(&p, &acme, &[EventType::KudosPosted], &[]).await;
        let done = event(acme.id, EventType::KudosPosted, None, 1);
        let waiting = event(acme.id, EventType::KudosPosted, None, 2);
        p.webhook_deliveries
            .record(&[done.clone(), waiting.clone()])
            .await;
        relay_all(&p, T0).await;
        let recent = event(acme.id, EventType::KudosPosted, None, 3);
        p.webhook_deliveries
            .record(std::slice::from_ref(&recent))
            .await;
        relay_all(&p, T0 + Duration::days(20)).await;
        let unrelayed = event(acme.id, EventType::KudosPosted, None, 4);
        p.webhook_deliveries
            .record(std::slice::from_ref(&unrelayed))
            .await;

        let ports = &p.webhook_deliveries.deliveries;
        let settle = |status| AttemptRecord {
            status,
            attempts: 1,
            last_status_code: Some(200),
            last_error: None,
            next_attempt_at: None,
            at: T0 + Duration::MINUTE,
        };
        let of = |e: &Event, all: &[WebhookDelivery]| {
            all.iter().find(|d| d.event_id == e.id).map(|d| d.id)
        };
        let all = deliveries_of(&p, acme.id, ep.id).await;
        let done_delivery = of(&done, &all).expect("a delivery of the first event");
        ports
            .record_attempt(acme.id, done_delivery, &settle(DeliveryStatus::Delivered))
            .await
            .unwrap();

        // Ten days on: only the delivered one's event is old and settled.
        assert_eq!(
            ports.prune_relayed(T0 + Duration::days(10)).await.unwrap(),
            1
        );
        let left = deliveries_of(&p, acme.id, ep.id).await;
        assert_eq!(of(&done, &left), None, "its delivery went with it");
        let waiting_delivery = of(&waiting, &left).expect("a pending delivery holds its event");
        assert!(of(&recent, &left).is_some());
        assert_eq!(
            ports.prune_relayed(T0 + Duration::days(10)).await.unwrap(),
            0
        );

        // Once settled (failed), it goes too; the recent one stays until its own time.
        ports
            .record_attempt(acme.id, waiting_delivery, &settle(DeliveryStatus::Failed))
            .await
            .unwrap();
        assert_eq!(
            ports.prune_relayed(T0 + Duration::days(10)).await.unwrap(),
            1
        );
        let left = deliveries_of(&p, acme.id, ep.id).await;
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].event_id, recent.id);

        // An event not yet relayed is never pruned: it is still fanned out later.
        assert_eq!(
            ports.prune_relayed(T0 + Duration::days(100)).await.unwrap(),
            0
        );
        relay_all(&p, T0 + Duration::days(100)).await;
        let left = deliveries_of(&p, acme.id, ep.id).await;
        assert!(of(&unrelayed, &left).is_some(), "{left:?}");
    }
}
