//! The runner's rules through in-memory ports: the messaging services on in-memory stores, a
//! recording webhook sender, one job queue.

use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::jobs::JobState;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::{SharedClock, TeamId};
use teamcomm_messaging::message::DeliveryTarget;
use teamcomm_messaging::testing::{
    FixedConnector, InMemoryChannelRepository, InMemoryEmailRepository, InMemoryMessageRepository,
    InMemoryPlatformDirectory, RecordingChatPlatform,
};
use teamcomm_messaging::{MessagingPorts, platform::PlatformKind};
use teamcomm_org::testing::{FixedClock, InMemoryOrgPorts};
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, TeamRepository, User};
use teamcomm_webhooks::testing::RecordingSender;
use time::macros::datetime;

use super::*;
use crate::testing::InMemoryWorkflowRepository;
use crate::{Trigger, WorkflowId, WorkflowPorts, WorkflowService};

const NOW: OffsetDateTime = datetime!(2026-11-26 09:00 UTC);

struct World {
    clock: SharedClock,
    queue: InMemoryJobQueue,
    repo: Arc<InMemoryWorkflowRepository>,
    messages: InMemoryMessageRepository,
    emails: InMemoryEmailRepository,
    sender: Arc<RecordingSender>,
    service: WorkflowService,
    runner: WorkflowRunner,
    admin: User,
    member: User,
    team: TeamId,
}

async fn person(org: &InMemoryOrgPorts, o: OrgId, email: &str, active: bool) -> User {
    let new = NewUser::new(email, "Pat", "Doe", "member", None).unwrap();
    let u = org.people.create_user(o, &new).await.unwrap();
    if active {
        return u;
    }
    let off = teamcomm_org::UserPatch::new(Some(false), None).unwrap();
    org.people.update_user(u.id, &off, &[]).await.unwrap()
}

impl World {
    async fn new() -> Self {
        let clock: SharedClock = Arc::new(FixedClock::new(NOW));
        let org_ports = InMemoryOrgPorts::new(clock.clone());
        let acme = NewOrganization::new("Acme", "business", None, None, None).unwrap();
        let acme = org_ports.people.create_organization(&acme).await.unwrap();
        let admin = {
            let new = NewUser::new("ada@acme.test", "Ada", "Admin", "admin", None).unwrap();
            org_ports.people.create_user(acme.id, &new).await.unwrap()
        };
        let member = person(&org_ports, acme.id, "mia@acme.test", true).await;
        let gone = person(&org_ports, acme.id, "ivy@acme.test", false).await;
        let team = org_ports
            .teams
            .create_team(acme.id, TeamId::new(), "Core", &[member.id, gone.id], &[])
            .await
            .unwrap()
            .id;
        let queue = InMemoryJobQueue::default();
        let repo = Arc::new(InMemoryWorkflowRepository::with_queue(queue.clone()));
        let messages = InMemoryMessageRepository::new(queue.clone());
        let emails = InMemoryEmailRepository::new(queue.clone());
        let platform = Arc::new(RecordingChatPlatform::new(PlatformKind::Slack));
        let messaging = MessagingService::new(MessagingPorts {
            messages: Arc::new(messages.clone()),
            people: org_ports.people.clone(),
            teams: org_ports.teams.clone(),
            channels: Arc::new(InMemoryChannelRepository::with_clock(clock.clone())),
            directory: Arc::new(InMemoryPlatformDirectory::new()),
            connector: Arc::new(FixedConnector::new(platform)),
            clock: clock.clone(),
        });
        let email = EmailService::new(
            Arc::new(emails.clone()),
            org_ports.people.clone(),
            clock.clone(),
        );
        let sender = Arc::new(RecordingSender::new());
        let allow = AllowList::new(["hooks.dev.test"]);
        let runner = WorkflowRunner::new(
            RunnerPorts {
                queue: Arc::new(queue.clone()),
                workflows: repo.clone(),
                messages: messaging,
                emails: email,
                sender: sender.clone(),
            },
            allow.clone(),
            RunnerSettings::default(),
        );
        let service = WorkflowService::new(
            WorkflowPorts {
                workflows: repo.clone(),
                clock: clock.clone(),
            },
            allow,
        );
        World {
            clock,
            queue,
            repo,
            messages,
            emails,
            sender,
            service,
            runner,
            admin,
            member,
            team,
        }
    }

    async fn workflow(&self, trigger: &str, actions: Value) -> Workflow {
        let input = crate::WorkflowInput {
            name: Some("Release notes".into()),
            trigger_type: Some(trigger.into()),
            actions: Some(actions),
            ..Default::default()
        };
        self.service.create(&self.admin, &input).await.unwrap()
    }

    async fn trigger(&self, w: &Workflow, payload: Value) -> WorkflowRun {
        self.service
            .trigger(&self.member, w.id, Some(payload))
            .await
            .unwrap()
    }

    async fn pass(&self, at: OffsetDateTime) -> RunnerSummary {
        self.runner.run_once(at, &mut || 0.5).await.unwrap()
    }

    fn run(&self, id: Uuid) -> WorkflowRun {
        self.repo.run(id).unwrap()
    }

    fn run_job_state(&self) -> JobState {
        self.queue
            .all()
            .into_iter()
            .find(|j| j.kind == JobKind::WorkflowRun)
            .unwrap()
            .state
    }
}

fn webhook(url: &str) -> Value {
    json!({"type": "call_webhook", "url": url})
}

#[tokio::test]
async fn a_run_performs_every_action_with_the_payload_substituted() {
    let w = World::new().await;
    let wf = w
        .workflow(
            "api_trigger",
            json!([
                {"type": "send_message", "user_uuids": [w.member.id.0], "team_uuids": [w.team.0],
                 "text": "Release {{payload.version}} by {{ payload.author.name }}{{payload.missing}}"},
                {"type": "send_email", "to": ["mia@acme.test", "someone@else.test"],
                 "subject": "{{workflow.name}}: {{payload.version}}", "body": "<p>{{payload.notes}}</p>"},
                {"type": "call_webhook", "url": "https://hooks.dev.test/in"},
            ]),
        )
        .await;
    let run = w
        .trigger(
            &wf,
            json!({"version": "1.2", "author": {"name": "Ada"}, "notes": "Faster"}),
        )
        .await;

    let summary = w.pass(NOW).await;
    assert_eq!((summary.claimed, summary.succeeded), (1, 1), "{summary:?}");

    let messages = w.messages.all();
    assert_eq!(messages.len(), 1);
    let m = &messages[0];
    assert_eq!(m.content.text, "Release 1.2 by Ada");
    // Triggered by the member: sent on their behalf; the team's inactive member gets nothing.
    assert_eq!(m.sender, w.member.id);
    let targets: Vec<DeliveryTarget> = m.deliveries.iter().map(|d| d.target.clone()).collect();
    assert_eq!(targets, vec![DeliveryTarget::Person(w.member.id)]);

    let emails = w.emails.all();
    assert_eq!(emails.len(), 1, "only the organization's address gets mail");
    assert_eq!(emails[0].to.address, "mia@acme.test");
    assert_eq!(emails[0].subject, "Release notes: 1.2");
    assert_eq!(emails[0].html.as_deref(), Some("<p>Faster</p>"));

    let sent = w.sender.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].url, "https://hooks.dev.test/in");
    assert_eq!(sent[0].message_id, format!("{}-3", run.id));
    assert_eq!(sent[0].signing_secret, None);
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(body["payload"]["version"], "1.2");
    assert_eq!(body["workflow"]["uuid"], wf.id.0.to_string());
    assert_eq!(body["run"]["uuid"], run.id.to_string());

    let stored = w.run(run.id);
    assert_eq!(stored.status, RunStatus::Succeeded);
    assert_eq!(stored.actions_completed, 3);
    assert_eq!(stored.started_at, Some(NOW));
    assert_eq!(stored.finished_at, Some(NOW));
    assert_eq!(stored.error, None);
    assert_eq!(w.run_job_state(), JobState::Done);

    let events = w.repo.events();
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(e.event_type, EventType::WorkflowFinished);
    assert_eq!(e.object_id, Some(wf.id.0));
    assert_eq!(e.data["workflow"]["name"], "Release notes");
    assert_eq!(e.data["workflow"]["trigger_type"], "api_trigger");
    assert_eq!(e.data["run"]["status"], "succeeded");
    assert_eq!(e.data["run"]["actions_total"], 3);
    assert_eq!(e.data["run"]["actions_completed"], 3);
    assert_eq!(e.data["run"]["error"], Value::Null);
}

#[tokio::test]
async fn a_temporary_failure_retries_the_run_after_the_actions_already_done() {
    let w = World::new().await;
    let wf = w
        .workflow(
            "api_trigger",
            json!([
                {"type": "send_message", "user_uuids": [w.member.id.0], "text": "hi"},
                {"type": "call_webhook", "url": "https://hooks.dev.test/in",
                 "body": {"v": "{{payload.n}}", "text": "n={{payload.n}}", "list": ["{{run.uuid}}"]}},
            ]),
        )
        .await;
    let run = w.trigger(&wf, json!({"n": 7})).await;
    w.sender.answer(DeliveryOutcome::Failed {
        status: Some(503),
        retry_after: Some(120),
        error: "HTTP 503".into(),
    });
    let first = w.pass(NOW).await;
    assert_eq!(first.retried, 1, "{first:?}");
    let stored = w.run(run.id);
    assert_eq!(stored.status, RunStatus::Running);
    assert_eq!(stored.actions_completed, 1);
    assert!(w.repo.events().is_empty(), "no finish yet");
    // Not before Retry-After.
    assert_eq!(w.pass(NOW + Duration::seconds(119)).await.claimed, 0);

    w.sender.answer(DeliveryOutcome::Delivered { status: 204 });
    let second = w.pass(NOW + Duration::minutes(3)).await;
    assert_eq!(second.succeeded, 1, "{second:?}");
    assert_eq!(
        w.messages.all().len(),
        1,
        "the message step is not repeated"
    );
    let sent = w.sender.sent();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].message_id, sent[1].message_id, "same webhook-id");
    let body: Value = serde_json::from_slice(&sent[1].body).unwrap();
    assert_eq!(
        body,
        json!({"v": 7, "text": "n=7", "list": [run.id.to_string()]})
    );
    let stored = w.run(run.id);
    assert_eq!(stored.status, RunStatus::Succeeded);
    assert_eq!(stored.started_at, Some(NOW), "the first start is kept");
}

#[tokio::test]
async fn a_permanent_failure_ends_the_run_failed_naming_the_action() {
    let w = World::new().await;
    let wf = w
        .workflow(
            "api_trigger",
            json!([
                {"type": "send_email", "to": ["nobody@else.test"], "subject": "s", "body": "b"},
                {"type": "send_message", "user_uuids": [w.member.id.0], "text": "never"},
            ]),
        )
        .await;
    let run = w.trigger(&wf, json!({})).await;
    let summary = w.pass(NOW).await;
    assert_eq!(summary.failed, 1, "{summary:?}");
    let stored = w.run(run.id);
    assert_eq!(stored.status, RunStatus::Failed);
    assert_eq!(stored.actions_completed, 0);
    let error = stored.error.unwrap();
    assert!(error.starts_with("action 1 (send_email): "), "{error}");
    assert!(w.messages.all().is_empty(), "later actions do not run");
    assert_eq!(w.run_job_state(), JobState::Failed);
    let events = w.repo.events();
    assert_eq!(events[0].data["run"]["status"], "failed");
    assert_eq!(events[0].data["run"]["error"], json!(error));
}

#[tokio::test]
async fn a_receivers_4xx_is_permanent_and_the_last_attempt_ends_the_run() {
    let w = World::new().await;
    let wf = w
        .workflow("api_trigger", json!([webhook("https://hooks.dev.test/in")]))
        .await;
    let run = w.trigger(&wf, json!({})).await;
    w.sender.answer(DeliveryOutcome::Failed {
        status: Some(404),
        retry_after: None,
        error: "HTTP 404".into(),
    });
    assert_eq!(w.pass(NOW).await.failed, 1);
    assert_eq!(
        w.run(run.id).error.as_deref(),
        Some("action 1 (call_webhook): HTTP 404")
    );

    let run = w.trigger(&wf, json!({})).await;
    w.sender.answer(DeliveryOutcome::Failed {
        status: None,
        retry_after: None,
        error: "timed out".into(),
    });
    let mut at = NOW;
    for _ in 0..2 {
        assert_eq!(w.pass(at).await.retried, 1);
        at += Duration::hours(1);
    }
    assert_eq!(w.pass(at).await.failed, 1, "three attempts in all");
    let stored = w.run(run.id);
    assert_eq!(stored.status, RunStatus::Failed);
    assert_eq!(
        stored.error.as_deref(),
        Some("action 1 (call_webhook): timed out")
    );
}

#[tokio::test]
async fn a_workflow_deactivated_before_its_run_starts_runs_nothing() {
    let w = World::new().await;
    let wf = w
        .workflow("api_trigger", json!([webhook("https://hooks.dev.test/in")]))
        .await;
    let run = w.trigger(&wf, json!({})).await;
    let off = crate::WorkflowInput {
        active: Some(false),
        ..Default::default()
    };
    w.service.update(&w.admin, wf.id, &off).await.unwrap();
    assert_eq!(w.pass(NOW).await.failed, 1);
    assert!(w.sender.sent().is_empty());
    let stored = w.run(run.id);
    assert_eq!(stored.status, RunStatus::Failed);
    assert_eq!(
        stored.error.as_deref(),
        Some("the workflow was deactivated before the run started")
    );
    assert_eq!(w.repo.events().len(), 1);
}

#[tokio::test]
async fn a_guarded_address_is_refused_when_the_run_calls_it() {
    let w = World::new().await;
    let wf = w
        .workflow("api_trigger", json!([webhook("https://hooks.dev.test/in")]))
        .await;
    // Saved while allowed; the operator's list no longer has it when the run executes.
    let strict = WorkflowRunner::new(
        w.runner.ports.clone(),
        AllowList::default(),
        RunnerSettings::default(),
    );
    let mut stored = w.service.get(&w.admin, wf.id).await.unwrap();
    stored.actions = vec![Action::CallWebhook {
        url: "http://10.0.0.8/in".into(),
        body: None,
    }];
    w.repo.replace(stored);
    let run = w.trigger(&wf, json!({})).await;
    assert_eq!(strict.run_once(NOW, &mut || 0.5).await.unwrap().failed, 1);
    assert!(w.sender.sent().is_empty());
    let error = w.run(run.id).error.unwrap();
    assert!(
        error.starts_with("action 1 (call_webhook): refused: "),
        "{error}"
    );
}

#[tokio::test]
async fn an_event_starts_the_active_workflows_it_triggers_with_its_document() {
    let w = World::new().await;
    let wf = w
        .workflow(
            "kudos.posted",
            json!([{"type": "send_message", "user_uuids": [w.member.id.0],
                    "text": "Kudos: {{payload.data.kudos.content}}"}]),
        )
        .await;
    let other = w
        .workflow(
            "forms.response.created",
            json!([webhook("https://hooks.dev.test/f")]),
        )
        .await;
    let inactive = w
        .workflow("kudos.posted", json!([webhook("https://hooks.dev.test/k")]))
        .await;
    let off = crate::WorkflowInput {
        active: Some(false),
        ..Default::default()
    };
    w.service.update(&w.admin, inactive.id, &off).await.unwrap();
    assert!(wf.runs_on(EventType::KudosPosted));
    assert!(!other.runs_on(EventType::KudosPosted));

    let event = Event::new(
        w.admin.org_id,
        EventType::KudosPosted,
        None,
        w.clock.now(),
        json!({"kudos": {"content": "Great demo"}}),
    );
    let runs = w.repo.relay_event(&event, 3);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].workflow_id, wf.id);
    assert_eq!(runs[0].triggered_by, None);
    assert_eq!(w.pass(NOW).await.succeeded, 1);
    let m = &w.messages.all()[0];
    assert_eq!(m.content.text, "Kudos: Great demo");
    // No one triggered it: sent on behalf of the workflow's creator.
    assert_eq!(m.sender, w.admin.id);
}

#[tokio::test]
async fn workflow_finished_is_no_trigger() {
    let w = World::new().await;
    let input = crate::WorkflowInput {
        name: Some("Loop".into()),
        trigger_type: Some("workflow.finished".into()),
        actions: Some(json!([webhook("https://hooks.dev.test/in")])),
        ..Default::default()
    };
    let e = w.service.create(&w.admin, &input).await.unwrap_err();
    assert!(e.field_errors().contains_key("trigger_type"), "{e:?}");
    assert!(!Trigger::names().contains("workflow.finished"));
    assert!(Trigger::names().contains("kudos.posted"));
    let _ = WorkflowId::new();
}

#[test]
fn render_substitutes_paths_and_keeps_the_rest() {
    let values = json!({
        "payload": {"a": {"b": "x"}, "n": 3, "t": true, "o": {"k": 1}, "l": [10, 20], "z": null},
        "workflow": {"name": "W"},
    });
    assert_eq!(render("{{payload.a.b}}-{{ payload.n }}", &values), "x-3");
    assert_eq!(
        render("{{payload.t}} {{payload.o}}", &values),
        r#"true {"k":1}"#
    );
    assert_eq!(render("{{payload.l.1}}", &values), "20");
    assert_eq!(render("[{{payload.z}}{{payload.nope}}{{}}]", &values), "[]");
    assert_eq!(render("{{workflow.name}} {{ oops", &values), "W {{ oops");
    assert_eq!(render("no braces", &values), "no braces");
    assert_eq!(render("{{payload.a}}", &values), r#"{"b":"x"}"#);
    assert_eq!(
        render_json(
            &json!({"k": "{{payload.o}}", "s": " {{payload.n}} "}),
            &values
        ),
        json!({"k": {"k": 1}, "s": 3})
    );
    assert_eq!(
        render_json(&json!("{{payload.nope}}"), &values),
        Value::Null
    );
    assert_eq!(
        render_json(&json!("a {{payload.n}}"), &values),
        json!("a 3")
    );
}
