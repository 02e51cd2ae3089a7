//! The rules of webhook endpoints, through the in-memory ports.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use teamcomm_kernel::{Error, ErrorCode, EventType, PageRequest, SystemClock};
use teamcomm_labels::testing::InMemoryLabelledEntities;
use teamcomm_org::testing::InMemoryOrgPorts;
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Organization, User};

use super::*;
use crate::SIGNING_SECRET_BYTES;
use crate::testing::{InMemoryWebhookRepository, RecordingSender, StaticResolver};
use crate::{DeliveryOutcome, Refusal};

/// A check-in of Acme that endpoints may filter on.
const CHECKIN: &str = "0193f0c2-6a1e-7c3d-9a0b-1c2d3e4f5a6b";

struct World {
    repo: Arc<InMemoryWebhookRepository>,
    objects: Arc<InMemoryLabelledEntities>,
    sender: Arc<RecordingSender>,
    service: WebhookService,
    admin: User,
    member: User,
    other_member: User,
    guest: User,
    outsider: User,
}

async fn person(org: &InMemoryOrgPorts, o: &Organization, email: &str, role: &str) -> User {
    let new = NewUser::new(email, "A", "B", role, None).unwrap();
    org.people.create_user(o.id, &new).await.unwrap()
}

impl World {
    async fn new() -> Self {
        let org = InMemoryOrgPorts::new(Arc::new(SystemClock));
        let acme = NewOrganization::new("Acme", "business", None, None, None).unwrap();
        let acme = org.people.create_organization(&acme).await.unwrap();
        let globex = NewOrganization::new("Globex", "business", None, None, None).unwrap();
        let globex = org.people.create_organization(&globex).await.unwrap();
        let repo = Arc::new(InMemoryWebhookRepository::new());
        let resolver = StaticResolver::new()
            .with("hooks.example.com", &["93.184.215.14"])
            .with("localhost", &["127.0.0.1", "::1"])
            .with("rebind.example.com", &["93.184.215.14", "10.0.0.7"])
            .with("dev.test", &["192.168.0.10"]);
        let sender = Arc::new(RecordingSender::new());
        let objects = Arc::new(InMemoryLabelledEntities::new());
        objects.insert(
            acme.id,
            EntityKind::Checkins,
            Uuid::parse_str(CHECKIN).unwrap(),
        );
        let service = WebhookService::new(
            WebhookPorts {
                endpoints: repo.clone(),
                resolver: Arc::new(resolver),
                sender: sender.clone(),
                deliveries: repo.clone(),
                objects: objects.clone(),
                clock: Arc::new(SystemClock),
            },
            AllowList::new(["dev.test"]),
        );
        World {
            repo,
            objects,
            sender,
            service,
            admin: person(&org, &acme, "ada@acme.test", "admin").await,
            member: person(&org, &acme, "mia@acme.test", "member").await,
            other_member: person(&org, &acme, "olo@acme.test", "member").await,
            guest: person(&org, &acme, "gus@acme.test", "guest").await,
            outsider: person(&org, &globex, "out@globex.test", "admin").await,
        }
    }
}

fn request(url: &str, events: &[&str]) -> EndpointRequest {
    EndpointRequest {
        url: url.into(),
        events: events.iter().map(|e| e.to_string()).collect(),
        ..EndpointRequest::default()
    }
}

fn field_error(e: &Error, field: &str) -> String {
    assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{e}");
    assert_eq!(e.status(), 400);
    e.field_errors()
        .get(field)
        .unwrap_or_else(|| panic!("no error on {field}: {e:?}"))
        .join(" ")
}

#[tokio::test]
async fn an_endpoint_is_created_with_a_secret_shown_once_and_sealed_secrets_kept() {
    let w = World::new().await;
    let req = EndpointRequest {
        name: Some("  CRM  ".into()),
        bearer_token: Some("tok-123".into()),
        object_ids: vec![CHECKIN.into(), CHECKIN.into()],
        ..request(
            "https://Hooks.Example.com/in",
            &["kudos.posted", "forms.response.created", "kudos.posted"],
        )
    };
    let created = w.service.create(&w.member, &req).await.unwrap();
    let e = &created.endpoint;
    assert_eq!(e.url, "https://hooks.example.com/in");
    assert_eq!(
        e.events,
        [EventType::FormsResponseCreated, EventType::KudosPosted]
    );
    assert_eq!(e.name, "CRM");
    assert_eq!(e.object_ids.len(), 1);
    assert!(e.has_bearer_token && e.enabled && e.disabled_reason.is_none());
    assert_eq!(e.created_by, Some(w.member.id));
    let secret = created.signing_secret.expose();
    let raw = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .unwrap();
    assert_eq!(raw.len(), SIGNING_SECRET_BYTES);
    let kept = w
        .repo
        .endpoint_secrets(w.member.org_id, e.id)
        .await
        .unwrap();
    assert_eq!(kept.signing_secret, created.signing_secret);
    assert_eq!(kept.bearer_token.unwrap().expose(), "tok-123");
    let again = w.service.create(&w.member, &req).await.unwrap();
    assert_ne!(again.signing_secret, created.signing_secret);
}

#[tokio::test]
async fn events_are_required_and_each_must_be_known() {
    let w = World::new().await;
    let e = w
        .service
        .create(&w.admin, &request("https://hooks.example.com/", &[]))
        .await
        .unwrap_err();
    assert!(field_error(&e, "events").contains("at least one"));
    let e = w
        .service
        .create(
            &w.admin,
            &request(
                "https://hooks.example.com/",
                &["kudos.posted", "kudos.given", "KUDOS_POSTED"],
            ),
        )
        .await
        .unwrap_err();
    let msg = field_error(&e, "events");
    assert!(
        msg.contains("kudos.given") && msg.contains("KUDOS_POSTED"),
        "{msg}"
    );
    assert!(!msg.contains("kudos.posted"), "{msg}");
}

#[tokio::test]
async fn object_ids_name_and_bearer_token_follow_their_rules() {
    let w = World::new().await;
    let base = request("https://hooks.example.com/", &["kudos.posted"]);
    let e = w
        .service
        .create(
            &w.admin,
            &EndpointRequest {
                object_ids: vec!["not-a-uuid".into()],
                ..base.clone()
            },
        )
        .await
        .unwrap_err();
    assert!(field_error(&e, "object_ids").contains("not-a-uuid"));
    // A uuid must name a check-in, form or workflow of the organization: another
    // organization's is as unknown as a made-up one.
    let theirs = Uuid::now_v7();
    w.objects
        .insert(w.outsider.org_id, EntityKind::Forms, theirs);
    let e = w
        .service
        .create(
            &w.admin,
            &EndpointRequest {
                object_ids: vec![CHECKIN.into(), theirs.to_string()],
                ..base.clone()
            },
        )
        .await
        .unwrap_err();
    let message = field_error(&e, "object_ids");
    assert!(message.contains(&theirs.to_string()), "{message}");
    assert!(!message.contains(CHECKIN), "{message}");
    let e = w
        .service
        .create(
            &w.admin,
            &EndpointRequest {
                name: Some("a\nb".into()),
                ..base.clone()
            },
        )
        .await
        .unwrap_err();
    field_error(&e, "name");
    let e = w
        .service
        .create(
            &w.admin,
            &EndpointRequest {
                bearer_token: Some("tok\u{e9}".into()),
                ..base.clone()
            },
        )
        .await
        .unwrap_err();
    field_error(&e, "bearer_token");
    let created = w
        .service
        .create(
            &w.admin,
            &EndpointRequest {
                bearer_token: Some("   ".into()),
                ..base
            },
        )
        .await
        .unwrap();
    assert!(!created.endpoint.has_bearer_token);
}

#[tokio::test]
async fn the_guard_refuses_internal_destinations_literal_or_resolved() {
    let w = World::new().await;
    for (url, reason) in [
        ("http://hooks.example.com/", "https_required"),
        ("https://localhost/", "loopback"),
        ("https://LOCALHOST:8443/", "loopback"),
        ("https://rebind.example.com/", "private"),
        ("https://169.254.169.254/", "cloud_metadata"),
        ("https://2130706433/", "odd_ipv4_encoding"),
        ("https://unknown.example.com/", "unresolvable"),
        ("https://[::ffff:10.0.0.1]/", "ipv4_mapped"),
    ] {
        let e = w
            .service
            .create(&w.admin, &request(url, &["kudos.posted"]))
            .await
            .unwrap_err();
        field_error(&e, "url");
        assert_eq!(e.extra()["reason"], reason, "{url}");
    }
    assert_eq!(
        w.service
            .list(&w.admin, PageRequest::default())
            .await
            .unwrap()
            .count,
        0
    );
}

#[tokio::test]
async fn allow_listed_hosts_pass_over_http_to_private_addresses() {
    let w = World::new().await;
    let created = w
        .service
        .create(
            &w.admin,
            &request("http://dev.test:8080/hook", &["kudos.posted"]),
        )
        .await
        .unwrap();
    assert_eq!(created.endpoint.url, "http://dev.test:8080/hook");
}

#[tokio::test]
async fn members_see_and_delete_their_own_admins_all_other_orgs_nothing() {
    let w = World::new().await;
    let mine = w
        .service
        .create(
            &w.member,
            &request("https://hooks.example.com/a", &["kudos.posted"]),
        )
        .await
        .unwrap()
        .endpoint;
    let theirs = w
        .service
        .create(
            &w.other_member,
            &request("https://hooks.example.com/b", &["kudos.posted"]),
        )
        .await
        .unwrap()
        .endpoint;
    let page = w
        .service
        .list(&w.member, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(page.count, 1);
    assert_eq!(page.results[0].id, mine.id);
    let page = w
        .service
        .list(&w.admin, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(page.count, 2);
    assert_eq!(page.results[0].id, theirs.id, "newest first");
    let e = w.service.get(&w.member, theirs.id).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    let e = w.service.delete(&w.member, theirs.id).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    let e = w.service.delete(&w.outsider, mine.id).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert_eq!(
        w.service
            .list(&w.outsider, PageRequest::default())
            .await
            .unwrap()
            .count,
        0
    );
    w.service.delete(&w.admin, theirs.id).await.unwrap();
    w.service.delete(&w.member, mine.id).await.unwrap();
    assert_eq!(
        w.service
            .list(&w.admin, PageRequest::default())
            .await
            .unwrap()
            .count,
        0
    );
}

#[tokio::test]
async fn guests_cannot_create_endpoints() {
    let w = World::new().await;
    let e = w
        .service
        .create(
            &w.guest,
            &request("https://hooks.example.com/", &["kudos.posted"]),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::GuestNotAllowed);
}

#[tokio::test]
async fn the_legacy_form_is_admin_only_and_speaks_upper_case() {
    let w = World::new().await;
    let legacy = EndpointRequest {
        object_ids: vec!["nope".into()],
        ..request(
            "https://hooks.example.com/legacy",
            &["FOLLOWUPS_DAILY_FINISHED", "FORMS_RESPONSE_CREATED"],
        )
    };
    let e = w
        .service
        .create_subscription(&w.member, &legacy)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::OrgAdminRequired);
    let e = w
        .service
        .create_subscription(&w.admin, &legacy)
        .await
        .unwrap_err();
    field_error(&e, "subscribed_objects");
    let legacy = EndpointRequest {
        object_ids: vec![],
        ..legacy
    };
    let created = w
        .service
        .create_subscription(&w.admin, &legacy)
        .await
        .unwrap();
    assert_eq!(
        created.endpoint.events,
        [
            EventType::FollowupsDailyFinished,
            EventType::FormsResponseCreated
        ]
    );
    let e = w
        .service
        .create_subscription(
            &w.admin,
            &request("https://hooks.example.com/", &["FORMS_RESPONSE_APPROVED"]),
        )
        .await
        .unwrap_err();
    assert!(field_error(&e, "subscriptions").contains("FORMS_RESPONSE_APPROVED"));

    let e = w
        .service
        .delete_subscription(&w.member, "https://hooks.example.com/legacy")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::OrgAdminRequired);
    let e = w
        .service
        .delete_subscription(&w.outsider, "https://hooks.example.com/legacy")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert_eq!(
        w.service
            .delete_subscription(&w.admin, "https://HOOKS.example.com/legacy")
            .await
            .unwrap(),
        1
    );
    let e = w
        .service
        .delete_subscription(&w.admin, "https://hooks.example.com/legacy")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn a_sample_is_delivered_signed_to_the_endpoint_and_its_outcome_told() {
    let w = World::new().await;
    let created = w
        .service
        .create(
            &w.member,
            &EndpointRequest {
                bearer_token: Some("tok".into()),
                ..request("https://hooks.example.com/in", &["kudos.posted"])
            },
        )
        .await
        .unwrap();
    assert_eq!(created.sample, None);
    assert!(w.sender.sent().is_empty());
    let id = created.endpoint.id;
    let sent = w
        .service
        .send_sample(&w.member, id, "forms.response.created")
        .await
        .unwrap();
    assert_eq!(sent.event, EventType::FormsResponseCreated);
    assert_eq!(sent.outcome, DeliveryOutcome::Delivered { status: 200 });
    let d = &w.sender.sent()[0];
    assert_eq!(d.url, "https://hooks.example.com/in");
    assert!(d.message_id.starts_with("sample_"));
    assert_eq!(d.signing_secret.as_ref(), Some(&created.signing_secret));
    assert_eq!(d.bearer_token.as_ref().unwrap().expose(), "tok");
    let body: serde_json::Value = serde_json::from_slice(&d.body).unwrap();
    assert_eq!(body["event"], "forms.response.created");
    assert_eq!(body["organization_uuid"], w.member.org_id.0.to_string());

    // The outcome is told as it is; unknown events, others' endpoints are refused.
    let refused = DeliveryOutcome::Refused(Refusal::Unresolvable("x".into()));
    w.sender.answer(refused.clone());
    let sent = w
        .service
        .send_sample(&w.member, id, "kudos.posted")
        .await
        .unwrap();
    assert_eq!(sent.outcome, refused);
    let e = w
        .service
        .send_sample(&w.member, id, "KUDOS_POSTED")
        .await
        .unwrap_err();
    assert!(field_error(&e, "event").contains("KUDOS_POSTED"));
    for actor in [&w.other_member, &w.outsider] {
        let e = w
            .service
            .send_sample(actor, id, "kudos.posted")
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
    }
    assert_eq!(w.sender.sent().len(), 2);
}

#[tokio::test]
async fn immediate_sample_event_sends_the_first_event_at_creation() {
    let w = World::new().await;
    let created = w
        .service
        .create(
            &w.admin,
            &EndpointRequest {
                immediate_sample: true,
                ..request(
                    "https://hooks.example.com/in",
                    &["organization.user_activated", "forms.response.created"],
                )
            },
        )
        .await
        .unwrap();
    let sample = created.sample.expect("a sample");
    // The first in the spec's order, not in the order given.
    assert_eq!(sample.event, EventType::FormsResponseCreated);
    assert_eq!(w.sender.sent().len(), 1);
}

#[tokio::test]
async fn the_legacy_sample_is_admin_only_and_finds_the_endpoint_by_url() {
    let w = World::new().await;
    w.service
        .create_subscription(
            &w.admin,
            &request("https://hooks.example.com/legacy", &["KUDOS_POSTED"]),
        )
        .await
        .unwrap();
    let e = w
        .service
        .send_subscription_sample(
            &w.member,
            "https://hooks.example.com/legacy",
            "KUDOS_POSTED",
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::OrgAdminRequired);
    let e = w
        .service
        .send_subscription_sample(&w.admin, "https://hooks.example.com/other", "KUDOS_POSTED")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    let sent = w
        .service
        .send_subscription_sample(
            &w.admin,
            "https://HOOKS.example.com/legacy",
            "FORMS_RESPONSE_CREATED",
        )
        .await
        .unwrap();
    assert_eq!(sent.event, EventType::FormsResponseCreated);
    assert_eq!(w.sender.sent()[0].url, "https://hooks.example.com/legacy");
}

#[tokio::test]
async fn deliveries_enable_and_replay_are_for_those_who_see_the_endpoint() {
    use crate::DeliveryRepository;

    let w = World::new().await;
    let mine = w
        .service
        .create(
            &w.member,
            &request("https://hooks.example.com/a", &["kudos.posted"]),
        )
        .await
        .unwrap()
        .endpoint;
    for stranger in [&w.other_member, &w.outsider] {
        let page = w
            .service
            .deliveries(stranger, mine.id, PageRequest::default())
            .await;
        assert_eq!(page.unwrap_err().code(), ErrorCode::NotFound);
        let enabled = w.service.enable(stranger, mine.id).await;
        assert_eq!(enabled.unwrap_err().code(), ErrorCode::NotFound);
        let replayed = w.service.replay(stranger, mine.id).await;
        assert_eq!(replayed.unwrap_err().code(), ErrorCode::NotFound);
    }

    w.repo
        .disable_endpoint(w.member.org_id, mine.id, "the receiver answered 410 Gone")
        .await
        .unwrap();
    let refused = w.service.replay(&w.member, mine.id).await.unwrap_err();
    assert!(field_error(&refused, "enabled").contains("Enable"));
    let enabled = w.service.enable(&w.admin, mine.id).await.unwrap();
    assert!(enabled.enabled && enabled.disabled_reason.is_none());
    assert_eq!(w.service.replay(&w.member, mine.id).await.unwrap(), 0);
    let page = w
        .service
        .deliveries(&w.member, mine.id, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(page.count, 0);
}

#[tokio::test]
async fn an_organization_has_at_most_max_endpoints() {
    let w = World::new().await;
    for i in 0..MAX_ENDPOINTS {
        let req = request(&format!("https://hooks.example.com/{i}"), &["kudos.posted"]);
        w.service.create(&w.member, &req).await.unwrap();
    }
    let more = request("https://hooks.example.com/more", &["kudos.posted"]);
    let e = w.service.create(&w.admin, &more).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::WebhookEndpointsLimitReached);
    assert_eq!(e.status(), 400);
    // Another organization is not counted.
    w.service.create(&w.outsider, &more).await.unwrap();
    assert_eq!(
        w.repo.count_endpoints(w.admin.org_id).await.unwrap(),
        MAX_ENDPOINTS
    );
}
