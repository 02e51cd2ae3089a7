//! The rules of workflows, through the in-memory repository.

use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::jobs::JobKind;
use teamcomm_kernel::{Error, ErrorCode, EventType, PageRequest, SystemClock};
use teamcomm_org::testing::InMemoryOrgPorts;
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Organization, User};

use super::*;
use crate::testing::InMemoryWorkflowRepository;

struct World {
    repo: Arc<InMemoryWorkflowRepository>,
    service: WorkflowService,
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
        let repo = Arc::new(InMemoryWorkflowRepository::new());
        let service = WorkflowService::new(
            WorkflowPorts {
                workflows: repo.clone(),
                clock: Arc::new(SystemClock),
            },
            AllowList::new(["dev.test"]),
        );
        World {
            repo,
            service,
            admin: person(&org, &acme, "ada@acme.test", "admin").await,
            member: person(&org, &acme, "mia@acme.test", "member").await,
            other_member: person(&org, &acme, "otto@acme.test", "member").await,
            guest: person(&org, &acme, "gus@acme.test", "guest").await,
            outsider: person(&org, &globex, "olga@globex.test", "admin").await,
        }
    }

    async fn create(&self, actor: &User, name: &str, trigger: &str) -> Workflow {
        self.service
            .create(actor, &input(name, trigger))
            .await
            .unwrap()
    }
}

fn input(name: &str, trigger: &str) -> WorkflowInput {
    WorkflowInput {
        name: Some(name.into()),
        trigger_type: Some(trigger.into()),
        actions: Some(json!([
            {"type": "send_message", "user_uuids": [uuid::Uuid::nil()], "text": "Hi {{payload.who}}"},
            {"type": "send_email", "to": ["ops@acme.test"], "subject": "Ran", "body": "Done"},
            {"type": "call_webhook", "url": "https://hooks.example.com/in"}
        ])),
        ..WorkflowInput::default()
    }
}

fn code(e: Error) -> ErrorCode {
    e.code()
}

#[tokio::test]
async fn create_reads_the_trigger_and_actions_and_starts_active() {
    let w = World::new().await;
    let wf = w.create(&w.member, "  Deploy  ", "api_trigger").await;
    assert_eq!(wf.name, "Deploy");
    assert_eq!(wf.trigger, Trigger::ApiTrigger);
    assert_eq!(wf.actions.len(), 3);
    assert!(
        matches!(&wf.actions[2], Action::CallWebhook { url, .. } if url == "https://hooks.example.com/in")
    );
    assert!(wf.active && !wf.frozen);
    assert_eq!(wf.created_by, Some(w.member.id));
    let event = w.create(&w.member, "On kudos", "kudos.posted").await;
    assert_eq!(event.trigger, Trigger::Event(EventType::KudosPosted));
    assert_eq!(w.service.get(&w.guest, wf.id).await.unwrap().name, "Deploy");
}

#[tokio::test]
async fn create_refuses_bad_input_naming_the_field() {
    let w = World::new().await;
    let field_of = |e: Error| Some(e.field_errors().keys().cloned().collect::<Vec<_>>());
    let cases: Vec<(WorkflowInput, &str)> = vec![
        (
            WorkflowInput {
                name: None,
                ..input("x", "api_trigger")
            },
            "name",
        ),
        (input("  ", "api_trigger"), "name"),
        (input("x", "on.tuesdays"), "trigger_type"),
        (
            WorkflowInput {
                actions: Some(json!([])),
                ..input("x", "api_trigger")
            },
            "actions",
        ),
        (
            WorkflowInput {
                actions: Some(json!({"type": "send_email"})),
                ..input("x", "api_trigger")
            },
            "actions",
        ),
        (
            WorkflowInput {
                actions: Some(json!([{"type": "launch_rocket"}])),
                ..input("x", "api_trigger")
            },
            "actions",
        ),
        (
            WorkflowInput {
                actions: Some(json!([{"type": "send_message", "text": "hi"}])),
                ..input("x", "api_trigger")
            },
            "actions",
        ),
        (
            WorkflowInput {
                actions: Some(
                    json!([{"type": "send_email", "to": ["nope"], "subject": "s", "body": "b"}]),
                ),
                ..input("x", "api_trigger")
            },
            "actions",
        ),
        (
            WorkflowInput {
                actions: Some(
                    json!([{"type": "call_webhook", "url": "http://hooks.example.com/"}]),
                ),
                ..input("x", "api_trigger")
            },
            "actions",
        ),
        (
            WorkflowInput {
                actions: Some(
                    json!([{"type": "call_webhook", "url": "https://169.254.169.254/latest"}]),
                ),
                ..input("x", "api_trigger")
            },
            "actions",
        ),
    ];
    for (i, field) in cases {
        let e = w.service.create(&w.member, &i).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{i:?}");
        assert_eq!(field_of(e), Some(vec![field.to_owned()]), "{i:?}");
    }
    // The allow-listed host may be reached over plain HTTP (local testing).
    let dev = WorkflowInput {
        actions: Some(json!([{"type": "call_webhook", "url": "http://dev.test:8080/hook"}])),
        ..input("x", "api_trigger")
    };
    w.service.create(&w.member, &dev).await.unwrap();
}

#[tokio::test]
async fn guests_cannot_author_and_only_admins_or_the_creator_change() {
    let w = World::new().await;
    let e = w
        .service
        .create(&w.guest, &input("x", "api_trigger"))
        .await
        .unwrap_err();
    assert_eq!(code(e), ErrorCode::PermissionDenied);
    let wf = w.create(&w.member, "Mine", "api_trigger").await;
    let rename = WorkflowInput {
        name: Some("Theirs".into()),
        ..WorkflowInput::default()
    };
    let e = w
        .service
        .update(&w.other_member, wf.id, &rename)
        .await
        .unwrap_err();
    assert_eq!(code(e), ErrorCode::PermissionDenied);
    let e = w.service.delete(&w.other_member, wf.id).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::PermissionDenied);
    let updated = w.service.update(&w.admin, wf.id, &rename).await.unwrap();
    assert_eq!(updated.name, "Theirs");
    assert_eq!(
        updated.trigger,
        Trigger::ApiTrigger,
        "absent fields keep their value"
    );
    w.service.delete(&w.member, wf.id).await.unwrap();
    let e = w.service.get(&w.member, wf.id).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::NotFound);
}

#[tokio::test]
async fn another_organizations_workflow_is_not_found() {
    let w = World::new().await;
    let wf = w.create(&w.member, "Mine", "api_trigger").await;
    for e in [
        w.service.get(&w.outsider, wf.id).await.unwrap_err(),
        w.service
            .trigger(&w.outsider, wf.id, None)
            .await
            .unwrap_err(),
        w.service.delete(&w.outsider, wf.id).await.unwrap_err(),
        w.service
            .runs(&w.outsider, wf.id, PageRequest::all())
            .await
            .unwrap_err(),
    ] {
        assert_eq!(code(e), ErrorCode::NotFound);
    }
}

#[tokio::test]
async fn a_trigger_queues_a_run_and_its_job() {
    let w = World::new().await;
    let wf = w.create(&w.member, "Deploy", "api_trigger").await;
    let run = w
        .service
        .trigger(&w.other_member, wf.id, Some(json!({"who": "Ada"})))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Queued);
    assert_eq!(run.payload, json!({"who": "Ada"}));
    assert_eq!(run.triggered_by, Some(w.other_member.id));
    let empty = w.service.trigger(&w.member, wf.id, None).await.unwrap();
    assert_eq!(empty.payload, json!({}));
    let jobs = w.repo.jobs();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].kind, JobKind::WorkflowRun);
    assert_eq!(jobs[0].payload, json!({"run_id": run.id}));
    assert_eq!(jobs[0].org_id, w.member.org_id);
    let runs = w
        .service
        .runs(&w.member, wf.id, PageRequest::all())
        .await
        .unwrap();
    assert_eq!(runs.count, 2);
    assert_eq!(runs.results[0].id, empty.id, "newest first");
    let read = w.service.get(&w.member, wf.id).await.unwrap();
    assert_eq!(read.total_runs, 2);
    assert_eq!(read.last_run_at, Some(empty.queued_at));
}

#[tokio::test]
async fn trigger_refusals() {
    let w = World::new().await;
    let api = w.create(&w.member, "Deploy", "api_trigger").await;
    let event = w.create(&w.member, "On kudos", "kudos.posted").await;
    let e = w
        .service
        .trigger(&w.member, event.id, None)
        .await
        .unwrap_err();
    assert_eq!(code(e), ErrorCode::WorkflowNotTriggerable);
    let e = w.service.trigger(&w.guest, api.id, None).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::WorkflowExecuteNotAllowed);
    for bad in [json!([1, 2]), json!("text"), json!(3)] {
        let e = w
            .service
            .trigger(&w.member, api.id, Some(bad))
            .await
            .unwrap_err();
        assert_eq!(code(e), ErrorCode::WorkflowTriggerPayloadInvalid);
    }
    // 8 KiB as JSON is the most: `{"k":"…"}` is 8 bytes around the text.
    let fits = json!({"k": "a".repeat(MAX_PAYLOAD_BYTES - 8)});
    assert_eq!(fits.to_string().len(), MAX_PAYLOAD_BYTES);
    w.service
        .trigger(&w.member, api.id, Some(fits))
        .await
        .unwrap();
    let over = json!({"k": "a".repeat(MAX_PAYLOAD_BYTES - 7)});
    let e = w
        .service
        .trigger(&w.member, api.id, Some(over))
        .await
        .unwrap_err();
    assert_eq!(code(e), ErrorCode::WorkflowTriggerPayloadInvalid);
    let off = WorkflowInput {
        active: Some(false),
        ..WorkflowInput::default()
    };
    w.service.update(&w.member, api.id, &off).await.unwrap();
    let e = w
        .service
        .trigger(&w.member, api.id, None)
        .await
        .unwrap_err();
    assert_eq!(code(e), ErrorCode::WorkflowFrozen);
    let frozen = Workflow {
        id: WorkflowId::new(),
        frozen: true,
        active: true,
        ..w.service.get(&w.member, event.id).await.unwrap()
    };
    let frozen = Workflow {
        trigger: Trigger::ApiTrigger,
        ..frozen
    };
    w.repo.insert(frozen.clone());
    let e = w
        .service
        .trigger(&w.member, frozen.id, None)
        .await
        .unwrap_err();
    assert_eq!(code(e), ErrorCode::WorkflowFrozen);
    assert_eq!(
        w.repo.jobs().len(),
        1,
        "only the payload that fit was queued"
    );
}

#[tokio::test]
async fn list_filters_by_search_dates_labels_and_stars() {
    let w = World::new().await;
    let a = w.create(&w.member, "Alpha deploy", "api_trigger").await;
    let b = w.create(&w.member, "Beta", "kudos.posted").await;
    w.create(&w.outsider, "Alpha elsewhere", "api_trigger")
        .await;
    let names = |p: Page<Workflow>| p.results.into_iter().map(|w| w.name).collect::<Vec<_>>();
    let list = |f: WorkflowListFilter| {
        let s = w.service.clone();
        let actor = w.member.clone();
        async move { s.list(&actor, &f, PageRequest::all()).await }
    };
    assert_eq!(
        names(list(WorkflowListFilter::default()).await.unwrap()),
        ["Alpha deploy", "Beta"]
    );
    let search = WorkflowListFilter {
        search: Some("DEPLOY".into()),
        ..Default::default()
    };
    assert_eq!(names(list(search).await.unwrap()), ["Alpha deploy"]);
    let today = a.created_at.date();
    let tomorrow = today.next_day().unwrap();
    let later = WorkflowListFilter {
        start_date: Some(tomorrow),
        ..Default::default()
    };
    assert!(list(later).await.unwrap().results.is_empty());
    let today_only = WorkflowListFilter {
        start_date: Some(today),
        end_date: Some(today),
        ..Default::default()
    };
    assert_eq!(list(today_only).await.unwrap().count, 2);
    let reversed = WorkflowListFilter {
        start_date: Some(tomorrow),
        end_date: Some(today),
        ..Default::default()
    };
    assert_eq!(
        code(list(reversed).await.unwrap_err()),
        ErrorCode::InvalidDateRange
    );
    let label = uuid::Uuid::now_v7();
    w.repo.label(b.id, label);
    let labelled = WorkflowListFilter {
        labels: vec![label],
        ..Default::default()
    };
    assert_eq!(names(list(labelled).await.unwrap()), ["Beta"]);
    w.repo.star(w.member.id, a.id);
    w.repo.star(w.admin.id, b.id);
    let starred = WorkflowListFilter {
        featured: true,
        ..Default::default()
    };
    assert_eq!(names(list(starred).await.unwrap()), ["Alpha deploy"]);
}
