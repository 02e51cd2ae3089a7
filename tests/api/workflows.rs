//! Workflows (`/v1/workflows/`): authoring with API keys, reading with any credential, the
//! list's filters (search, days, labels, stars), triggering `api_trigger` workflows (a queued
//! run and its job), every refusal, the plan gate and the trigger budget.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::{ANY_ID, Resp, TestApp};

/// A business organization with an admin, two members and a guest, each with an API key, and
/// a CLI session of the first member.
struct Org {
    admin_key: String,
    member_key: String,
    other_member_key: String,
    guest_key: String,
    member_cli: String,
}

impl Org {
    async fn new(app: &TestApp) -> Org {
        let (id, _admin, session, admin_key) = app.org_with_admin_key("business").await;
        let mut keys = Vec::new();
        let mut member = String::new();
        for role in ["member", "member", "guest"] {
            let user = app.create_user(&id, role).await;
            if member.is_empty() {
                member = user.clone();
            }
            let key = app
                .create_key(&session, json!({"name": "k", "for_user_id": user}))
                .await
                .1;
            keys.push(key);
        }
        let token = app
            .operator(
                "POST",
                &format!("/operator/v1/users/{member}/cli-tokens/"),
                None,
            )
            .await;
        assert_eq!(token.status, 201, "{}", token.text);
        let [member_key, other_member_key, guest_key] = <[String; 3]>::try_from(keys).unwrap();
        Org {
            admin_key,
            member_key,
            other_member_key,
            guest_key,
            member_cli: format!("Bearer {}", token.body["token"].as_str().unwrap()),
        }
    }
}

async fn call(app: &TestApp, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
    app.send(method, path, &[("X-API-KEY", key)], body).await
}

async fn cli(app: &TestApp, bearer: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
    app.send(method, path, &[("Authorization", bearer)], body)
        .await
}

fn body(name: &str, trigger: &str) -> Value {
    json!({
        "name": name,
        "description": "Ships it",
        "trigger_type": trigger,
        "actions": [
            {"type": "send_message", "user_uuids": [ANY_ID], "text": "Deploying {{payload.version}}"},
            {"type": "send_email", "to": ["ops@example.com"], "subject": "Deploy", "body": "Done"},
            {"type": "call_webhook", "url": "https://93.184.215.14/hooks/deploy"}
        ]
    })
}

/// Creates a workflow; returns its uuid.
async fn create(app: &TestApp, key: &str, name: &str, trigger: &str) -> String {
    let r = call(
        app,
        key,
        "POST",
        "/v1/workflows/",
        Some(body(name, trigger)),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn count(app: &TestApp, sql: &str, id: &str) -> i64 {
    let mut conn = app.database.pool().get().await.expect("connection");
    let c: Count = diesel::sql_query(sql)
        .bind::<Text, _>(id)
        .get_result(&mut conn)
        .await
        .expect("count");
    c.n
}

/// The `workflow_run` jobs of a run.
async fn run_jobs(app: &TestApp, run: &str) -> i64 {
    count(
        app,
        "SELECT count(*) AS n FROM jobs WHERE kind = 'workflow_run' AND payload->>'run_id' = $1",
        run,
    )
    .await
}

fn names(r: &Resp) -> Vec<&str> {
    r.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect()
}

#[actix_web::test]
async fn workflows_are_authored_with_api_keys_and_read_with_any_credential() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/workflows/",
        Some(body(" Deploy ", "api_trigger")),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let uuid = r.body["uuid"].as_str().unwrap().to_owned();
    assert_eq!(r.body["name"], "Deploy");
    assert_eq!(r.body["description"], "Ships it");
    assert_eq!(r.body["trigger_type"], "api_trigger");
    assert_eq!(r.body["active"], true);
    assert_eq!(r.body["frozen"], false);
    assert_eq!(r.body["total_runs"], 0);
    assert_eq!(r.body["last_run_at"], Value::Null);
    // As stored: the message action's target lists all present.
    let mut actions = body("x", "api_trigger")["actions"].clone();
    actions[0]["team_uuids"] = json!([]);
    actions[0]["channel_ids"] = json!([]);
    assert_eq!(r.body["actions"], actions);
    assert_eq!(
        count(
            &app,
            "SELECT count(*) AS n FROM workflows WHERE id::text = $1",
            &uuid
        )
        .await,
        1
    );

    // The CLI's list row and detail fields.
    let r = cli(&app, &o.member_cli, "GET", "/v1/workflows/", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["count"], 1);
    let row = &r.body["results"][0];
    for field in ["uuid", "name", "trigger_type", "active", "total_runs"] {
        assert!(!row[field].is_null(), "{field} in {row}");
    }
    let r = cli(
        &app,
        &o.member_cli,
        "GET",
        &format!("/v1/workflows/{uuid}/"),
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["uuid"], uuid.as_str());

    // Authoring is for API keys: a CLI session is refused by the route policy.
    let r = cli(
        &app,
        &o.member_cli,
        "POST",
        "/v1/workflows/",
        Some(body("CLI", "api_trigger")),
    )
    .await;
    r.assert_error(403, "insufficient_scope");
    let r = cli(
        &app,
        &o.member_cli,
        "PATCH",
        &format!("/v1/workflows/{uuid}/"),
        Some(json!({"name": "x"})),
    )
    .await;
    r.assert_error(403, "insufficient_scope");
    let r = cli(
        &app,
        &o.member_cli,
        "DELETE",
        &format!("/v1/workflows/{uuid}/"),
        None,
    )
    .await;
    r.assert_error(403, "insufficient_scope");

    // Guests do not author; only admins and the creator change or delete.
    let r = call(
        &app,
        &o.guest_key,
        "POST",
        "/v1/workflows/",
        Some(body("G", "api_trigger")),
    )
    .await;
    r.assert_error(403, "permission_denied");
    let path = format!("/v1/workflows/{uuid}/");
    let r = call(
        &app,
        &o.other_member_key,
        "PATCH",
        &path,
        Some(json!({"name": "Theirs"})),
    )
    .await;
    r.assert_error(403, "permission_denied");
    let r = call(&app, &o.other_member_key, "DELETE", &path, None).await;
    r.assert_error(403, "permission_denied");
    let r = call(
        &app,
        &o.admin_key,
        "PATCH",
        &path,
        Some(json!({"name": "Release", "trigger_type": "kudos.posted", "active": false})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["name"], "Release");
    assert_eq!(r.body["trigger_type"], "kudos.posted");
    assert_eq!(r.body["active"], false);
    assert_eq!(
        r.body["description"], "Ships it",
        "absent fields keep their value"
    );
    let r = call(&app, &o.member_key, "GET", &path, None).await;
    assert_eq!(r.body["name"], "Release");

    // Bad input names the field.
    for (bad, field) in [
        (
            json!({"trigger_type": "api_trigger", "actions": body("x", "api_trigger")["actions"]}),
            "name",
        ),
        (body("x", "on.tuesdays"), "trigger_type"),
        (
            json!({"name": "x", "trigger_type": "api_trigger", "actions": []}),
            "actions",
        ),
        (
            json!({"name": "x", "trigger_type": "api_trigger", "actions": [{"type": "launch"}]}),
            "actions",
        ),
        (
            json!({"name": "x", "trigger_type": "api_trigger", "actions": [{"type": "call_webhook", "url": "http://127.0.0.1:9/x"}]}),
            "actions",
        ),
    ] {
        let r = call(
            &app,
            &o.member_key,
            "POST",
            "/v1/workflows/",
            Some(bad.clone()),
        )
        .await;
        r.assert_error(400, "params_validation_error");
        assert!(!r.body["errors"][field].is_null(), "{bad} -> {}", r.text);
    }
    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/workflows/",
        Some(json!({"name": "x", "colour": "red"})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);

    let r = call(&app, &o.member_key, "DELETE", &path, None).await;
    assert_eq!(r.status, 204, "{}", r.text);
    assert_eq!(
        count(
            &app,
            "SELECT count(*) AS n FROM workflows WHERE id::text = $1",
            &uuid
        )
        .await,
        0
    );
    call(&app, &o.member_key, "GET", &path, None)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn another_organizations_workflow_is_not_found() {
    let app = TestApp::spawn().await;
    let acme = Org::new(&app).await;
    let globex = Org::new(&app).await;
    let uuid = create(&app, &acme.member_key, "Deploy", "api_trigger").await;
    let path = format!("/v1/workflows/{uuid}/");
    for (method, p, b) in [
        ("GET", path.clone(), None),
        ("PATCH", path.clone(), Some(json!({"name": "Mine"}))),
        ("DELETE", path.clone(), None),
        ("POST", format!("{path}trigger/"), Some(json!({}))),
        ("GET", format!("{path}runs/"), None),
    ] {
        call(&app, &globex.admin_key, method, &p, b)
            .await
            .assert_error(404, "not_found");
    }
    let r = call(&app, &globex.admin_key, "GET", "/v1/workflows/", None).await;
    assert_eq!(r.body["count"], 0);
    let r = call(&app, &acme.member_key, "GET", &path, None).await;
    assert_eq!(r.body["name"], "Deploy", "untouched");
}

#[actix_web::test]
async fn a_trigger_queues_a_run_and_its_job() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let uuid = create(&app, &o.member_key, "Deploy", "api_trigger").await;
    let trigger = format!("/v1/workflows/{uuid}/trigger/");
    let r = call(
        &app,
        &o.other_member_key,
        "POST",
        &trigger,
        Some(json!({"payload": {"version": "1.2"}})),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body["queued"], true);
    assert_eq!(r.body["workflow_uuid"], uuid.as_str());
    assert!(r.body["detail"].is_string());
    let run = r.body["run_uuid"].as_str().unwrap().to_owned();
    assert_eq!(run_jobs(&app, &run).await, 1);
    // A CLI session (paid plan) triggers too; `{}` is an empty payload.
    let r = cli(&app, &o.member_cli, "POST", &trigger, Some(json!({}))).await;
    assert_eq!(r.status, 202, "{}", r.text);
    let second = r.body["run_uuid"].as_str().unwrap().to_owned();

    let r = call(
        &app,
        &o.member_key,
        "GET",
        &format!("/v1/workflows/{uuid}/runs/"),
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["count"], 2);
    let newest = &r.body["results"][0];
    assert_eq!(newest["uuid"], second.as_str());
    assert_eq!(newest["payload"], json!({}));
    let first = &r.body["results"][1];
    assert_eq!(first["uuid"], run.as_str());
    assert_eq!(first["status"], "queued");
    assert_eq!(first["payload"], json!({"version": "1.2"}));
    assert_eq!(first["workflow_uuid"], uuid.as_str());
    assert_eq!(first["started_at"], Value::Null);
    let r = call(
        &app,
        &o.member_key,
        "GET",
        &format!("/v1/workflows/{uuid}/"),
        None,
    )
    .await;
    assert_eq!(r.body["total_runs"], 2);
    assert!(r.body["last_run_at"].is_string());
}

#[actix_web::test]
async fn trigger_refusals() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let api = create(&app, &o.member_key, "Deploy", "api_trigger").await;
    let event = create(&app, &o.member_key, "On kudos", "kudos.posted").await;
    let trigger = |id: &str| format!("/v1/workflows/{id}/trigger/");
    let r = call(
        &app,
        &o.member_key,
        "POST",
        &trigger(&event),
        Some(json!({})),
    )
    .await;
    r.assert_error(400, "workflow_not_triggerable");
    for bad in [
        json!([1]),
        json!("text"),
        json!({"k": "a".repeat(8 * 1024)}),
    ] {
        let r = call(
            &app,
            &o.member_key,
            "POST",
            &trigger(&api),
            Some(json!({"payload": bad})),
        )
        .await;
        r.assert_error(400, "workflow_trigger_payload_invalid");
    }
    let r = call(&app, &o.guest_key, "POST", &trigger(&api), Some(json!({}))).await;
    r.assert_error(403, "workflow_execute_not_allowed");
    let r = call(
        &app,
        &o.member_key,
        "PATCH",
        &format!("/v1/workflows/{api}/"),
        Some(json!({"active": false})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = call(&app, &o.member_key, "POST", &trigger(&api), Some(json!({}))).await;
    r.assert_error(409, "workflow_frozen");
    // Frozen (by the plan or an operator: no door writes it) refuses even when active.
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query("UPDATE workflows SET active = TRUE, frozen = TRUE WHERE id::text = $1")
        .bind::<Text, _>(&api)
        .execute(&mut conn)
        .await
        .unwrap();
    let r = call(&app, &o.member_key, "POST", &trigger(&api), Some(json!({}))).await;
    r.assert_error(409, "workflow_frozen");
    assert_eq!(
        count(
            &app,
            "SELECT count(*) AS n FROM workflow_runs WHERE workflow_id::text = $1",
            &api
        )
        .await,
        0,
        "no refused trigger queued a run"
    );
}

#[actix_web::test]
async fn free_plan_cli_sessions_get_the_plan_gate() {
    let app = TestApp::spawn().await;
    let org = app.create_org("free").await;
    let user = app.create_user(&org, "member").await;
    let token = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/cli-tokens/"),
            None,
        )
        .await;
    let bearer = format!("Bearer {}", token.body["token"].as_str().unwrap());
    let r = cli(
        &app,
        &bearer,
        "POST",
        &format!("/v1/workflows/{ANY_ID}/trigger/"),
        Some(json!({})),
    )
    .await;
    r.assert_error(403, "plan_upgrade_required");
    let r = cli(&app, &bearer, "GET", "/v1/workflows/", None).await;
    r.assert_error(403, "plan_upgrade_required");
}

#[actix_web::test]
async fn triggers_spend_their_own_budget() {
    let app = TestApp::builder()
        .var("TEAMCOMM_RATE_LIMIT_PER_HOUR_WORKFLOW_TRIGGERS", "2")
        .spawn()
        .await;
    let o = Org::new(&app).await;
    let uuid = create(&app, &o.member_key, "Deploy", "api_trigger").await;
    let trigger = format!("/v1/workflows/{uuid}/trigger/");
    for _ in 0..2 {
        let r = call(&app, &o.member_key, "POST", &trigger, Some(json!({}))).await;
        assert_eq!(r.status, 202, "{}", r.text);
    }
    let r = call(&app, &o.member_key, "POST", &trigger, Some(json!({}))).await;
    assert_eq!(r.status, 429, "{}", r.text);
    assert!(r.header("Retry-After").is_some());
    // Other scopes are untouched.
    let r = call(
        &app,
        &o.member_key,
        "PATCH",
        &format!("/v1/workflows/{uuid}/"),
        Some(json!({"name": "Still"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[actix_web::test]
async fn lists_filter_by_search_days_labels_and_stars() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let alpha = create(&app, &o.member_key, "Alpha deploy", "api_trigger").await;
    let beta = create(&app, &o.member_key, "beta", "kudos.posted").await;
    let list = |q: &str| format!("/v1/workflows/{q}");
    let r = call(&app, &o.member_key, "GET", &list(""), None).await;
    assert_eq!(names(&r), ["Alpha deploy", "beta"]);
    let r = call(&app, &o.member_key, "GET", &list("?search=DEPLOY"), None).await;
    assert_eq!(names(&r), ["Alpha deploy"]);
    let r = call(
        &app,
        &o.member_key,
        "GET",
        &list(&format!("?search={}", "a".repeat(257))),
        None,
    )
    .await;
    r.assert_error(400, "search_query_too_long");
    let r = call(
        &app,
        &o.member_key,
        "GET",
        &list("?start_date=2000-01-01&end_date=2000-01-31"),
        None,
    )
    .await;
    assert_eq!(r.body["count"], 0);
    let r = call(
        &app,
        &o.member_key,
        "GET",
        &list("?start_date=2000-01-01"),
        None,
    )
    .await;
    assert_eq!(r.body["count"], 2);
    let r = call(
        &app,
        &o.member_key,
        "GET",
        &list("?start_date=2000-02-01&end_date=2000-01-01"),
        None,
    )
    .await;
    r.assert_error(400, "invalid_date_range");

    // Labels and stars: the labels area finds workflows now.
    let r = call(
        &app,
        &o.admin_key,
        "POST",
        "/v1/labels/",
        Some(json!({"name": "Ops"})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let label = r.body["uuid"].as_str().unwrap().to_owned();
    let r = call(
        &app,
        &o.member_key,
        "POST",
        &format!("/v1/workflows/{beta}/labels/"),
        Some(json!({"label_uuids": [label]})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = call(
        &app,
        &o.member_key,
        "GET",
        &list(&format!("?labels={label}")),
        None,
    )
    .await;
    assert_eq!(names(&r), ["beta"]);
    let r = call(
        &app,
        &o.member_key,
        "PUT",
        &format!("/v1/me/featured/automations/{alpha}/"),
        Some(json!({"featured": true})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = call(&app, &o.member_key, "GET", &list("?featured=true"), None).await;
    assert_eq!(names(&r), ["Alpha deploy"]);
    let r = call(
        &app,
        &o.other_member_key,
        "GET",
        &list("?featured=true"),
        None,
    )
    .await;
    assert_eq!(r.body["count"], 0, "stars are private");
    let r = call(
        &app,
        &o.member_key,
        "GET",
        "/v1/me/featured/?entity_type=automations",
        None,
    )
    .await;
    assert_eq!(r.body["entity_uuids"], json!([alpha]));
    // A deleted workflow takes its labels and stars along.
    call(
        &app,
        &o.member_key,
        "DELETE",
        &format!("/v1/workflows/{alpha}/"),
        None,
    )
    .await;
    assert_eq!(
        count(
            &app,
            "SELECT count(*) AS n FROM featured_entities WHERE entity_id::text = $1",
            &alpha
        )
        .await,
        0
    );
}
