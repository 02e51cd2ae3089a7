//! Workflow runs executed (issue 9 §3): a triggered run sends its message and e-mail and calls
//! its webhook with the payload's values substituted, an event starts the workflows it
//! triggers, a failing receiver retries the run until it fails, and every end tells subscribers
//! `workflow.finished`. Time is driven by passing a later `now` to the state's passes.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::receiver::{Answer, Receiver};
use teamcomm_tests::{Resp, TestApp};
use time::{Duration, OffsetDateTime};

struct Org {
    id: String,
    key: String,
    member: String,
    member_email: String,
    member_key: String,
}

struct World {
    app: TestApp,
    acme: Org,
    globex: Org,
    t0: OffsetDateTime,
}

async fn org(app: &TestApp) -> Org {
    let (id, _admin, session, key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&id, "member").await;
    let r = app
        .send(
            "GET",
            &format!("/v1/users/{member}/?include_email=true"),
            &[("X-API-KEY", &key)],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let member_email = r.body["email"].as_str().unwrap().to_owned();
    let member_key = app
        .create_key(&session, json!({"name": "m", "for_user_id": member}))
        .await
        .1;
    Org {
        id,
        key,
        member,
        member_email,
        member_key,
    }
}

async fn world() -> World {
    let app = TestApp::builder()
        .var("TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS", "127.0.0.1")
        .spawn()
        .await;
    let acme = org(&app).await;
    let globex = org(&app).await;
    World {
        app,
        acme,
        globex,
        // A minute ahead, so what the test triggers next is already due at `t0`.
        t0: OffsetDateTime::now_utc() + Duration::minutes(1),
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl World {
    async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
        self.app
            .send(method, path, &[("X-API-KEY", key)], body)
            .await
    }

    async fn workflow(&self, org: &Org, trigger: &str, actions: Value) -> String {
        let body = json!({"name": "Release notes", "trigger_type": trigger, "actions": actions});
        let r = self
            .call(&org.key, "POST", "/v1/workflows/", Some(body))
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }

    async fn trigger(&self, org: &Org, workflow: &str, payload: Value) {
        let path = format!("/v1/workflows/{workflow}/trigger/");
        let r = self
            .call(
                &org.member_key,
                "POST",
                &path,
                Some(json!({"payload": payload})),
            )
            .await;
        assert_eq!(r.status, 202, "{}", r.text);
    }

    async fn runs(&self, org: &Org, workflow: &str) -> Vec<Value> {
        let path = format!("/v1/workflows/{workflow}/runs/");
        let r = self.call(&org.key, "GET", &path, None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["results"].as_array().unwrap().clone()
    }

    /// One workflow pass `minutes` after the start.
    async fn run(&self, minutes: i64) -> teamcomm_workflows::RunnerSummary {
        self.app
            .state
            .run_workflows_at(self.t0 + Duration::minutes(minutes))
            .await
            .expect("a workflow pass")
    }

    /// One webhook pass (the outbox relay, then deliveries) `minutes` after the start.
    async fn relay(&self, minutes: i64) {
        self.app
            .state
            .deliver_webhooks_at(self.t0 + Duration::minutes(minutes))
            .await
            .expect("a webhook pass");
    }

    async fn count(&self, sql: &str, arg: &str) -> i64 {
        let mut conn = self.app.database.pool().get().await.expect("connection");
        let c: Count = diesel::sql_query(sql)
            .bind::<Text, _>(arg)
            .get_result(&mut conn)
            .await
            .expect("count");
        c.n
    }
}

#[actix_web::test]
async fn a_triggered_run_sends_its_message_and_email_and_calls_its_webhook() {
    let w = world().await;
    let receiver = Receiver::start(&[]);
    let acme = &w.acme;
    let wf = w
        .workflow(
            acme,
            "api_trigger",
            json!([
                {"type": "send_message", "user_uuids": [acme.member],
                 "text": "Release {{payload.version}} is out"},
                {"type": "send_email", "to": [acme.member_email, "stranger@example.org"],
                 "subject": "{{workflow.name}} {{payload.version}}", "body": "<p>{{payload.notes}}</p>"},
                {"type": "call_webhook", "url": receiver.url(),
                 "body": {"version": "{{payload.version}}", "run": "{{run.uuid}}", "n": "{{payload.n}}"}},
            ]),
        )
        .await;
    w.trigger(
        acme,
        &wf,
        json!({"version": "2.1", "notes": "Faster", "n": 3}),
    )
    .await;

    let summary = w.run(0).await;
    assert_eq!((summary.claimed, summary.succeeded), (1, 1), "{summary:?}");

    let runs = w.runs(acme, &wf).await;
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["actions_completed"], 3);
    assert_eq!(run["error"], Value::Null);
    assert!(run["started_at"].is_string() && run["finished_at"].is_string());
    let run_id = run["uuid"].as_str().unwrap();

    // The message, on behalf of the member who triggered it.
    let sql = "SELECT count(*) AS n FROM messages WHERE body = 'Release 2.1 is out' \
               AND sender_id::text = $1";
    assert_eq!(w.count(sql, &acme.member).await, 1);
    // The e-mail, to the organization's address only.
    let sql = "SELECT count(*) AS n FROM emails WHERE subject = 'Release notes 2.1' \
               AND html_body = '<p>Faster</p>' AND to_address = $1";
    assert_eq!(w.count(sql, &acme.member_email).await, 1);
    let sql = "SELECT count(*) AS n FROM emails WHERE organization_id::text = $1";
    assert_eq!(w.count(sql, &acme.id).await, 1);
    // The webhook call: the rendered body, `webhook-id` the run and step, unsigned.
    let got = receiver.got();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].payload(),
        json!({"version": "2.1", "run": run_id, "n": 3})
    );
    assert_eq!(
        got[0].header("webhook-id"),
        Some(format!("{run_id}-3").as_str())
    );
    assert_eq!(got[0].header("webhook-signature"), None);

    // workflow.finished, as docs/events.md documents it (the kit checks the schema).
    let events = w.app.events(&acme.id, Some("workflow.finished")).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["object_uuid"], wf.as_str());
    assert_eq!(events[0]["data"]["run"]["uuid"], run_id);
    assert_eq!(events[0]["data"]["run"]["status"], "succeeded");
    assert_eq!(events[0]["data"]["run"]["actions_completed"], 3);

    // The run's job is done: another pass finds nothing.
    assert_eq!(w.run(1).await.claimed, 0);
    // The other organization's admin does not see the runs.
    let path = format!("/v1/workflows/{wf}/runs/");
    let r = w.call(&w.globex.key, "GET", &path, None).await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (404, Some("not_found"))
    );
}

#[actix_web::test]
async fn a_kudos_starts_the_workflows_it_triggers_with_the_events_values() {
    let w = world().await;
    let receiver = Receiver::start(&[]);
    let acme = &w.acme;
    let wf = w
        .workflow(
            acme,
            "kudos.posted",
            json!([{"type": "call_webhook", "url": receiver.url(),
                    "body": {"said": "{{payload.data.kudos.content}}", "event": "{{payload.event}}"}}]),
        )
        .await;
    // Another organization's workflow on the same event runs only for its own kudos.
    let other = w
        .workflow(
            &w.globex,
            "kudos.posted",
            json!([{"type": "call_webhook", "url": receiver.url()}]),
        )
        .await;
    let body = json!({"content": "Great demo!", "users_receivers": [acme.member]});
    let r = w.call(&acme.key, "POST", "/v1/kudos/", Some(body)).await;
    assert_eq!(r.status, 201, "{}", r.text);

    assert_eq!(w.run(0).await.claimed, 0, "queued by the relay, not before");
    w.relay(0).await;
    let summary = w.run(0).await;
    assert_eq!(summary.succeeded, 1, "{summary:?}");
    let got = receiver.got();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].payload(),
        json!({"said": "Great demo!", "event": "kudos.posted"})
    );
    let runs = w.runs(acme, &wf).await;
    assert_eq!(runs[0]["triggered_by"], Value::Null);
    assert_eq!(runs[0]["payload"]["event"], "kudos.posted");
    let r = w
        .call(&acme.key, "GET", &format!("/v1/workflows/{wf}/"), None)
        .await;
    assert_eq!(r.body["total_runs"], 1, "{}", r.text);
    assert!(w.runs(&w.globex, &other).await.is_empty());
    // Relayed once: a second relay starts nothing more.
    w.relay(1).await;
    assert_eq!(w.run(1).await.claimed, 0);
}

#[actix_web::test]
async fn a_failing_receiver_retries_the_run_then_it_fails_and_subscribers_hear_it() {
    let w = world().await;
    let failing = Receiver::start(&[
        Answer::Status(503),
        Answer::Status(503),
        Answer::Status(503),
    ]);
    let listener = Receiver::start(&[]);
    let acme = &w.acme;
    let wf = w
        .workflow(
            acme,
            "api_trigger",
            json!([
                {"type": "send_message", "user_uuids": [acme.member], "text": "step one"},
                {"type": "call_webhook", "url": failing.url()},
            ]),
        )
        .await;
    let endpoint =
        json!({"url": listener.url(), "events": ["workflow.finished"], "object_ids": [wf]});
    let r = w
        .call(&acme.key, "POST", "/v1/webhooks/", Some(endpoint))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    w.trigger(acme, &wf, json!({})).await;

    assert_eq!(w.run(0).await.retried, 1);
    let run = &w.runs(acme, &wf).await[0];
    assert_eq!(run["status"], "running");
    assert_eq!(run["actions_completed"], 1);
    assert_eq!(w.run(30).await.retried, 1);
    assert_eq!(w.run(60).await.failed, 1, "three attempts in all");
    assert_eq!(failing.got().len(), 3);

    let run = &w.runs(acme, &wf).await[0];
    assert_eq!(run["status"], "failed");
    assert_eq!(run["error"], "action 2 (call_webhook): HTTP 503");
    let sql = "SELECT count(*) AS n FROM messages WHERE body = 'step one' AND sender_id::text = $1";
    assert_eq!(
        w.count(sql, &acme.member).await,
        1,
        "the done step is not repeated"
    );

    // The subscriber hears the failure.
    w.relay(61).await;
    let got = listener.got();
    assert_eq!(got.len(), 1);
    let event = got[0].payload();
    assert_eq!(event["event"], "workflow.finished");
    assert_eq!(event["data"]["run"]["status"], "failed");
    assert_eq!(
        event["data"]["run"]["error"],
        "action 2 (call_webhook): HTTP 503"
    );
}

#[actix_web::test]
async fn workflow_finished_is_subscribable_but_no_trigger() {
    let w = world().await;
    let body = json!({"name": "Loop", "trigger_type": "workflow.finished",
                      "actions": [{"type": "call_webhook", "url": "https://93.184.215.14/x"}]});
    let r = w
        .call(&w.acme.key, "POST", "/v1/workflows/", Some(body))
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["code"], "params_validation_error");
    assert!(r.text.contains("trigger_type"), "{}", r.text);

    let body = json!({"subscriptions": ["WORKFLOW_FINISHED"], "url": "https://93.184.215.14/in"});
    let r = w
        .call(&w.acme.key, "POST", "/v1/webhook-subscription/", Some(body))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
}
