//! Plan over HTTP: the rules every Plan door shares (wire contract §4.0). The route-policy
//! matrix walks every registered Plan route (the ones added later too): the beta gate,
//! credentials, scopes, person-only and org-admin doors, guests, the free plan. Then
//! `Idempotency-Key`, the Plan shape of body errors, agent attribution and the per-minute
//! budgets, over `tasks/bulk/`, with bulk itself.

use std::sync::Arc;

use serde_json::{Value, json};
use teamcomm_api::policy::{Idempotency, Route};
use teamcomm_api::routes::registry;
use teamcomm_kernel::{OrgId, UserId};
use teamcomm_plan::actor::DoorNeed;
use teamcomm_plan::{PlanActor, PlanScopes, TaskRef};
use teamcomm_tests::{Resp, TestApp, concrete_path};
use uuid::Uuid;

use super::kit::{PlanOrg, key_for, ok, plan};

fn plan_routes() -> Vec<&'static Route> {
    registry()
        .routes()
        .iter()
        .filter(|r| r.policy.plan.is_some())
        .collect()
}

/// An app whose Plan budgets do not get in the way of walking every route.
async fn roomy_app() -> TestApp {
    let mut b = TestApp::builder();
    for scope in ["READS", "WRITES", "BULK", "DELTA"] {
        b = b.var(
            &format!("TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_{scope}"),
            "100000",
        );
    }
    b.spawn().await
}

async fn call(app: &TestApp, r: &Route, headers: &[(&str, &str)]) -> Resp {
    app.send(r.method, &concrete_path(&r.path), headers, None)
        .await
}

fn what(r: &Route) -> String {
    format!("{} {}", r.method, r.path)
}

/// A refusal by the door rules (not by the handler).
fn refused_by_door(res: &Resp) -> bool {
    matches!(res.status, 401 | 402)
        || matches!(
            res.code(),
            "insufficient_scope" | "guest_not_allowed" | "org_admin_required" | "actor_required"
        )
}

#[actix_web::test]
async fn every_plan_route_needs_a_credential() {
    let app = roomy_app().await;
    assert!(!plan_routes().is_empty());
    for r in plan_routes() {
        let res = call(&app, r, &[]).await;
        assert_eq!(
            (res.status, res.code()),
            (401, "credential_absent"),
            "{}",
            what(r)
        );
    }
}

#[actix_web::test]
async fn without_the_beta_every_gated_route_answers_402_whatever_the_credential() {
    let app = roomy_app().await;
    let o = PlanOrg::on_plan(&app, "business", false).await;
    let agent = o
        .agent_key(&app, &["tasks:read", "tasks:write", "tasks:admin"])
        .await;
    for r in plan_routes() {
        let door = r.policy.plan.unwrap();
        for key in [&o.admin_key, &o.member_key, &agent] {
            let res = call(&app, r, &[("X-API-KEY", key)]).await;
            if door.gated {
                res.assert_error(402, "plan_upgrade_required");
                assert!(
                    res.body["upgrade_url"].as_str().is_some(),
                    "{}: {}",
                    what(r),
                    res.text
                );
            } else {
                assert_ne!(res.status, 402, "{}: {}", what(r), res.text);
                if r.method == "GET" && !door.person_only && key == &o.admin_key {
                    assert_eq!(res.status, 200, "{}: {}", what(r), res.text);
                }
            }
        }
    }
}

#[actix_web::test]
async fn keys_without_a_person_need_the_door_s_scope() {
    let app = roomy_app().await;
    let o = PlanOrg::new(&app).await;
    let reader = o.agent_key(&app, &["tasks:read"]).await;
    let nothing = o.agent_key(&app, &[]).await;
    for r in plan_routes() {
        let door = r.policy.plan.unwrap();
        let res = call(&app, r, &[("X-API-KEY", &reader)]).await;
        let person_only = door.person_only || r.policy.admin_only;
        match (door.need, person_only) {
            (_, true) => res.assert_error(403, "insufficient_scope"),
            (DoorNeed::Read, false) => {
                assert!(!refused_by_door(&res), "{}: {}", what(r), res.text);
            }
            (need, false) => {
                res.assert_error(403, "insufficient_scope");
                assert_eq!(
                    res.body["extra"]["required_scope"],
                    need.scope(),
                    "{}",
                    what(r)
                );
            }
        }
        if door.need == DoorNeed::Read && !person_only {
            let res = call(&app, r, &[("X-API-KEY", &nothing)]).await;
            res.assert_error(403, "insufficient_scope");
            assert_eq!(res.body["extra"]["required_scope"], "tasks:read");
        }
    }
}

#[actix_web::test]
async fn people_pass_every_door_but_guests_and_org_admin_doors() {
    let app = roomy_app().await;
    let o = PlanOrg::new(&app).await;
    let (_, guest) = o.person(&app, "guest").await;
    for r in plan_routes() {
        let res = call(&app, r, &[("X-API-KEY", &o.admin_key)]).await;
        assert!(!refused_by_door(&res), "{}: {}", what(r), res.text);
        let res = call(&app, r, &[("X-API-KEY", &o.member_key)]).await;
        if r.policy.admin_only {
            res.assert_error(403, "org_admin_required");
        } else {
            assert!(!refused_by_door(&res), "{}: {}", what(r), res.text);
        }
        let res = call(&app, r, &[("X-API-KEY", &guest)]).await;
        res.assert_error(403, "guest_not_allowed");
    }
}

/// An operator-issued CLI token for a new user of `org`: (user, `Bearer …`).
async fn cli_token(app: &TestApp, org: &str, role: &str) -> (String, String) {
    let user = app.create_user(org, role).await;
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/cli-tokens/"),
            None,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    (
        user,
        format!("Bearer {}", r.body["token"].as_str().unwrap()),
    )
}

#[actix_web::test]
async fn the_free_plan_refuses_api_keys_with_401_and_cli_tokens_with_402_s_code() {
    let app = roomy_app().await;
    let o = PlanOrg::on_plan(&app, "free", true).await;
    let (_, token) = cli_token(&app, &o.org, "member").await;
    for r in plan_routes() {
        let res = call(&app, r, &[("X-API-KEY", &o.member_key)]).await;
        res.assert_error(401, "plan_free_api_keys_forbidden");
        let res = call(&app, r, &[("Authorization", &token)]).await;
        if r.policy.cli == teamcomm_keys::CliAccess::AnyPlan {
            assert!(!refused_by_door(&res), "{}: {}", what(r), res.text);
        } else {
            res.assert_error(403, "plan_upgrade_required");
        }
    }
}

#[test]
fn bulk_is_a_write_door_that_requires_a_key() {
    let door = registry()
        .policy_for("POST", "/v1/plan/tasks/bulk/")
        .unwrap()
        .plan
        .unwrap();
    assert_eq!(door.need, DoorNeed::Write);
    assert_eq!(door.idempotency, Idempotency::Required);
}

// --- Bulk, and the rules shown on it ---

/// A board `key` made by the organization's admin (through the Plan service: the bulk tests
/// do not depend on the boards routes).
async fn seed_board(app: &TestApp, o: &PlanOrg, key: &str) -> String {
    let actor = actor(app, o, &o.admin).await;
    let project = app
        .state
        .plan
        .create_project(
            &actor,
            teamcomm_plan::projects::NewProject::named(&format!("P {key}")),
        )
        .await
        .unwrap();
    let board = app
        .state
        .plan
        .create_board(
            &actor,
            teamcomm_plan::boards::NewBoard {
                name: format!("Board {key}"),
                project: project.id,
                key: key.to_owned(),
            },
        )
        .await
        .unwrap();
    board.id.to_string()
}

async fn actor(app: &TestApp, o: &PlanOrg, user: &str) -> PlanActor {
    let org = OrgId(Uuid::parse_str(&o.org).unwrap());
    let user = UserId(Uuid::parse_str(user).unwrap());
    PlanActor {
        org: Arc::new(app.orgs().get_organization(org).await.unwrap()),
        person: Some(app.orgs().get_user(org, user).await.unwrap()),
        scopes: PlanScopes::ALL,
        agent_name: None,
    }
}

/// The task `key` as the admin sees it, if it exists.
async fn task(app: &TestApp, o: &PlanOrg, key: &str) -> Option<teamcomm_plan::Task> {
    let actor = actor(app, o, &o.admin).await;
    app.state
        .plan
        .visible_task(&actor, &TaskRef::parse(key).unwrap())
        .await
        .ok()
}

async fn bulk(
    app: &TestApp,
    key: &str,
    headers: &[(&str, &str)],
    query: &str,
    body: Value,
) -> Resp {
    let mut all = vec![("X-API-KEY", key)];
    all.extend_from_slice(headers);
    app.send(
        "POST",
        &format!("/v1/plan/tasks/bulk/{query}"),
        &all,
        Some(body),
    )
    .await
}

#[actix_web::test]
async fn bulk_requires_an_idempotency_key_except_on_a_dry_run() {
    let (app, o) = PlanOrg::spawn().await;
    let body = json!({"operation": "archive", "items": [{"task": "NOPE-1"}]});
    let res = bulk(&app, &o.member_key, &[], "", body.clone()).await;
    res.assert_error(400, "idempotency_key_required");
    for bad in ["short", &"k".repeat(129), "has space!"] {
        let res = bulk(
            &app,
            &o.member_key,
            &[("Idempotency-Key", bad)],
            "",
            body.clone(),
        )
        .await;
        res.assert_error(400, "invalid_idempotency_key");
    }
    let res = bulk(&app, &o.member_key, &[], "?dry_run=true", body).await;
    assert_eq!(res.status, 200, "{}", res.text);
    assert_eq!(res.body["dry_run"], true);
    assert_eq!(res.body["refused"][0]["code"], "not_found");
}

#[actix_web::test]
async fn a_key_replays_the_first_answer_and_refuses_another_body() {
    let (app, o) = PlanOrg::spawn().await;
    let board = seed_board(&app, &o, "IDM").await;
    let body = json!({"operation": "create", "board": board, "items": [{"title": "once"}]});
    let key = [("Idempotency-Key", "bulk-key-0001")];
    let first = bulk(&app, &o.member_key, &key, "", body.clone()).await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.body["results"][0]["status"], "ok");
    assert_eq!(first.body["results"][0]["task"]["key"], "IDM-1");
    assert!(first.header("idempotency-replayed").is_none());
    let again = bulk(&app, &o.member_key, &key, "", body.clone()).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.header("idempotency-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
    // Replayed, not run again: one task.
    assert!(task(&app, &o, "IDM-1").await.is_some());
    assert!(task(&app, &o, "IDM-2").await.is_none());
    // Another body with the key: refused; another key: runs.
    let other = json!({"operation": "create", "board": board, "items": [{"title": "twice"}]});
    bulk(&app, &o.member_key, &key, "", other.clone())
        .await
        .assert_error(409, "idempotency_key_payload_mismatch");
    let res = bulk(
        &app,
        &o.member_key,
        &[("Idempotency-Key", "bulk-key-0002")],
        "",
        other,
    )
    .await;
    assert_eq!(res.body["results"][0]["task"]["key"], "IDM-2");
    // The slot is the organization's: another organization's same key is its own.
    let o2 = PlanOrg::new(&app).await;
    let board2 = seed_board(&app, &o2, "IDM").await;
    let body2 = json!({"operation": "create", "board": board2, "items": [{"title": "once"}]});
    let res = bulk(&app, &o2.member_key, &key, "", body2).await;
    assert!(res.header("idempotency-replayed").is_none(), "{}", res.text);
    // A 4xx is kept too.
    let missing = json!({"operation": "create", "board": "NOPE", "items": [{"title": "x"}]});
    let k = [("Idempotency-Key", "bulk-key-0003")];
    bulk(&app, &o.member_key, &k, "", missing.clone())
        .await
        .assert_error(404, "not_found");
    let res = bulk(&app, &o.member_key, &k, "", missing).await;
    assert_eq!(
        (res.status, res.header("idempotency-replayed")),
        (404, Some("true"))
    );
}

#[actix_web::test]
async fn concurrent_duplicates_run_once() {
    let (app, o) = PlanOrg::spawn().await;
    let board = seed_board(&app, &o, "CON").await;
    let items: Vec<Value> = (0..40).map(|i| json!({"title": format!("t{i}")})).collect();
    let body = json!({"operation": "create", "board": board, "items": items});
    let key = [("Idempotency-Key", "bulk-race-0001")];
    let (a, b) = tokio::join!(
        bulk(&app, &o.member_key, &key, "", body.clone()),
        bulk(&app, &o.member_key, &key, "", body.clone()),
    );
    let ran = [&a, &b]
        .iter()
        .filter(|r| r.status == 200 && r.header("idempotency-replayed").is_none())
        .count();
    assert_eq!(ran, 1, "{} / {}", a.text, b.text);
    for r in [&a, &b] {
        let replayed = r.header("idempotency-replayed") == Some("true");
        assert!(
            r.status == 200 || r.code() == "idempotency_in_progress",
            "{}",
            r.text
        );
        assert!(r.status != 200 || replayed || r.body["results"].as_array().unwrap().len() == 40);
    }
    assert!(task(&app, &o, "CON-40").await.is_some());
    assert!(task(&app, &o, "CON-41").await.is_none());
}

#[actix_web::test]
async fn bulk_answers_per_item_and_a_dry_run_writes_nothing() {
    let (app, o) = PlanOrg::spawn().await;
    let board = seed_board(&app, &o, "BLK").await;
    let k = |n: &str| format!("bulk-items-{n}");
    let create =
        json!({"operation": "create", "board": board, "items": [{"title": "a"}, {"title": "b"}]});
    let res = bulk(
        &app,
        &o.member_key,
        &[("Idempotency-Key", &k("1"))],
        "",
        create,
    )
    .await;
    assert_eq!(
        res.body["results"][1]["task"]["key"], "BLK-2",
        "{}",
        res.text
    );
    let preview = bulk(
        &app,
        &o.member_key,
        &[],
        "?dry_run=true",
        json!({"operation": "set_priority", "items": [
            {"task": "BLK-1", "priority": 2},
            {"task": "BLK-404", "priority": 2},
        ]}),
    )
    .await;
    assert_eq!(preview.status, 200, "{}", preview.text);
    assert_eq!(preview.body["dry_run"], true);
    assert_eq!(preview.body["operation"], "set_priority");
    assert!(preview.body["consequence"].as_str().is_some());
    assert_eq!(preview.body["items"][0]["key"], "BLK-1");
    assert_eq!(
        preview.body["items"][0]["changes"]["priority"],
        json!({"from": null, "to": 2})
    );
    assert_eq!(preview.body["refused"][0]["index"], 1);
    assert_eq!(preview.body["refused"][0]["code"], "not_found");
    assert_eq!(task(&app, &o, "BLK-1").await.unwrap().priority, None);
    // The real call: one bad item does not undo the others.
    let res = bulk(
        &app,
        &o.member_key,
        &[("Idempotency-Key", &k("2"))],
        "",
        json!({"operation": "set_priority", "items": [
            {"task": "BLK-1", "priority": 2},
            {"task": "BLK-404", "priority": 2},
            {"task": "BLK-2", "priority": 9},
        ]}),
    )
    .await;
    let rows = res.body["results"].as_array().unwrap();
    assert_eq!(rows[0]["status"], "ok");
    assert_eq!(
        (&rows[1]["status"], &rows[1]["code"], &rows[1]["task_ref"]),
        (&json!("error"), &json!("not_found"), &json!("BLK-404"))
    );
    assert_eq!(rows[2]["code"], "params_validation_error");
    assert_eq!(task(&app, &o, "BLK-1").await.unwrap().priority, Some(2));
    // `delete` archives.
    let res = bulk(
        &app,
        &o.member_key,
        &[("Idempotency-Key", &k("3"))],
        "",
        json!({"operation": "delete", "items": [{"task": "BLK-2"}]}),
    )
    .await;
    assert_eq!(res.body["results"][0]["status"], "ok", "{}", res.text);
    assert!(task(&app, &o, "BLK-2").await.unwrap().is_archived);
    // Whole-call refusals.
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"task": format!("BLK-{i}")}))
        .collect();
    bulk(
        &app,
        &o.member_key,
        &[],
        "?dry_run=true",
        json!({"operation": "archive", "items": many}),
    )
    .await
    .assert_error(400, "too_many_items");
    bulk(
        &app,
        &o.member_key,
        &[],
        "?dry_run=true",
        json!({"operation": "explode", "items": []}),
    )
    .await
    .assert_error(400, "invalid_relation");
}

#[actix_web::test]
async fn body_errors_are_a_field_map_without_code() {
    let (app, o) = PlanOrg::spawn().await;
    let res = bulk(
        &app,
        &o.member_key,
        &[],
        "?dry_run=true",
        json!({"items": []}),
    )
    .await;
    assert_eq!(res.status, 400, "{}", res.text);
    assert!(res.body.get("code").is_none(), "{}", res.text);
    assert!(res.body["detail"].as_str().is_some());
    assert!(res.body["operation"][0].as_str().is_some(), "{}", res.text);
    // Coded refusals keep the envelope.
    let res = bulk(
        &app,
        &o.member_key,
        &[],
        "?dry_run=true",
        json!({"operation": "archive", "items": [], "colour": "red"}),
    )
    .await;
    res.assert_error(400, "unknown_field");
    assert_eq!(res.body["extra"]["parameter"], "colour");
    let res = app
        .send(
            "POST",
            "/v1/plan/tasks/bulk/?dry_run=true",
            &[
                ("X-API-KEY", &o.member_key),
                ("Content-Type", "application/json"),
            ],
            None,
        )
        .await;
    assert_eq!(res.status, 400);
    // A domain field error takes the same shape.
    let res = bulk(
        &app,
        &o.member_key,
        &[],
        "?dry_run=true",
        json!({"operation": "create", "items": [{"title": "x"}]}),
    )
    .await;
    assert_eq!(res.status, 400, "{}", res.text);
    assert!(res.body.get("code").is_none(), "{}", res.text);
    assert!(res.body["board"][0].as_str().is_some(), "{}", res.text);
}

#[actix_web::test]
async fn agents_are_named_by_a_person_s_credential_only() {
    let (app, o) = PlanOrg::spawn().await;
    let board = seed_board(&app, &o, "AGT").await;
    let create =
        |title: &str| json!({"operation": "create", "board": board, "items": [{"title": title}]});
    let res = bulk(
        &app,
        &o.member_key,
        &[
            ("Idempotency-Key", "agent-key-0001"),
            ("X-Dailybot-Agent-Name", "Claude%20Code%20%C3%A9"),
        ],
        "",
        create("by header"),
    )
    .await;
    assert_eq!(res.status, 200, "{}", res.text);
    let t = task(&app, &o, "AGT-1").await.unwrap();
    assert_eq!(t.created_by_agent.as_deref(), Some("Claude Code é"));
    // The spec's header; the body's name wins over a header.
    let mut body = create("by body");
    body["agent_name"] = json!("Body Bot");
    let res = bulk(
        &app,
        &o.member_key,
        &[
            ("Idempotency-Key", "agent-key-0002"),
            ("X-Service-Agent-Name", "Header Bot"),
        ],
        "",
        body,
    )
    .await;
    assert_eq!(res.status, 200, "{}", res.text);
    let t = task(&app, &o, "AGT-2").await.unwrap();
    assert_eq!(t.created_by_agent.as_deref(), Some("Body Bot"));
    for bad in ["%ZZ", "%C3", "semi%3Bcolon"] {
        bulk(
            &app,
            &o.member_key,
            &[("X-Dailybot-Agent-Name", bad)],
            "?dry_run=true",
            create("x"),
        )
        .await
        .assert_error(400, "invalid_agent_attribution");
    }
    // A key without a person names no agent, by header or body.
    let agent = o.agent_key(&app, &["tasks:read", "tasks:write"]).await;
    bulk(
        &app,
        &agent,
        &[("X-Dailybot-Agent-Name", "Bot")],
        "?dry_run=true",
        create("x"),
    )
    .await
    .assert_error(400, "invalid_agent_attribution");
    let mut body = create("x");
    body["agent_name"] = json!("Bot");
    bulk(&app, &agent, &[], "?dry_run=true", body)
        .await
        .assert_error(400, "invalid_agent_attribution");
    let res = bulk(&app, &agent, &[], "?dry_run=true", create("x")).await;
    assert_eq!(res.status, 200, "{}", res.text);
}

#[actix_web::test]
async fn a_person_s_credentials_share_one_per_minute_budget() {
    let app = TestApp::builder()
        .var("TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_BULK", "2")
        .spawn()
        .await;
    let o = PlanOrg::new(&app).await;
    let (user, token) = cli_token(&app, &o.org, "member").await;
    let key = key_for(&app, &user, json!({"name": "own key"})).await;
    let body = json!({"operation": "archive", "items": []});
    let first = bulk(&app, &key, &[], "?dry_run=true", body.clone()).await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(
        first.header("ratelimit-policy"),
        Some("\"plan_bulk\";q=2;w=60")
    );
    let by_token = app
        .send(
            "POST",
            "/v1/plan/tasks/bulk/?dry_run=true",
            &[("Authorization", &token)],
            Some(body.clone()),
        )
        .await;
    assert_eq!(by_token.status, 200, "{}", by_token.text);
    let refused = bulk(&app, &key, &[], "?dry_run=true", body.clone()).await;
    refused.assert_error(429, "throttled");
    let after = refused.body["extra"]["retry_after"].as_u64().unwrap();
    assert!((1..=30).contains(&after), "{after}");
    assert_eq!(
        refused.header("retry-after"),
        Some(after.to_string().as_str())
    );
    // Another person has their own budget.
    let res = bulk(&app, &o.member_key, &[], "?dry_run=true", body).await;
    assert_eq!(res.status, 200, "{}", res.text);
}

#[actix_web::test]
async fn an_optional_key_is_honoured_when_sent() {
    let (app, o) = PlanOrg::spawn().await;
    let create = |name: &str| json!({"name": name});
    let post = |key: Option<&'static str>, body: Value| {
        let app = &app;
        let admin = o.admin_key.clone();
        async move {
            let mut headers = vec![("X-API-KEY", admin.as_str())];
            if let Some(k) = key {
                headers.push(("Idempotency-Key", k));
            }
            app.send("POST", "/v1/plan/projects/", &headers, Some(body))
                .await
        }
    };
    let first = post(Some("project-key-01"), create("Once")).await;
    assert_eq!(first.status, 201, "{}", first.text);
    let again = post(Some("project-key-01"), create("Once")).await;
    assert_eq!(
        (again.status, again.header("idempotency-replayed")),
        (201, Some("true"))
    );
    assert_eq!(again.body["uuid"], first.body["uuid"]);
    // The same body under another key, or none, runs (and meets the name rule).
    let res = post(None, create("Once")).await;
    res.assert_error(409, "project_name_conflict");
    // A Plan body error: the field map.
    let res = post(None, json!({})).await;
    assert_eq!(res.status, 400, "{}", res.text);
    assert!(res.body.get("code").is_none(), "{}", res.text);
    assert!(res.body["name"][0].as_str().is_some(), "{}", res.text);
}

// ---------------------------------------------------------------------------------------------
// The document states each body rule, and a value it refuses answers the field map naming the
// field (never `non_field_errors`).

/// `res` is the Plan field map refusing `field` (400, `detail`, no `code`).
#[track_caller]
fn refuses_field(res: &Resp, field: &str) {
    assert_eq!(res.status, 400, "{}", res.text);
    assert!(res.body.get("code").is_none(), "{}", res.text);
    assert!(res.body["detail"].is_string(), "{}", res.text);
    assert!(res.body.get("non_field_errors").is_none(), "{}", res.text);
    assert!(res.body[field][0].is_string(), "{field} in {}", res.text);
}

#[actix_web::test]
async fn a_bad_enum_value_names_its_field() {
    let (app, o) = PlanOrg::spawn().await;
    let k = &o.admin_key;
    for (field, bad) in [("health", "great"), ("visibility", "public")] {
        let body = json!({"name": format!("P {field}"), field: bad});
        refuses_field(&plan(&app, "POST", "projects/", k, Some(body)).await, field);
    }
    let project = o.project(&app, "Apollo").await;
    let path = format!("projects/{project}/");
    for (field, bad) in [("health", "ON_TRACK"), ("visibility", "")] {
        refuses_field(
            &plan(&app, "PATCH", &path, k, Some(json!({field: bad}))).await,
            field,
        );
    }
    let r = plan(&app, "PATCH", &path, k, Some(json!({"health": "at_risk"}))).await;
    assert_eq!(ok(&r, 200)["health"], "at_risk");
    o.board(&app, &project, "ENG").await;
    for (field, bad) in [("estimate_scale", "tshirt"), ("visibility", "everyone")] {
        let r = plan(&app, "PATCH", "boards/ENG/", k, Some(json!({field: bad}))).await;
        refuses_field(&r, field);
    }
    let body = json!({"name": "Limbo", "category": "limbo"});
    let r = plan(&app, "POST", "boards/ENG/states/", k, Some(body)).await;
    refuses_field(&r, "category");
    let r = plan(&app, "GET", "boards/ENG/states/", k, None).await;
    let names: Vec<&str> = ok(&r, 200)
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(!names.contains(&"Limbo"), "{names:?}");
}

#[actix_web::test]
async fn a_board_key_out_of_the_rule_names_key_and_a_padded_one_is_taken() {
    let (app, o) = PlanOrg::spawn().await;
    let k = &o.admin_key;
    let project = o.project(&app, "Apollo").await;
    for bad in ["1AB", "A", "AB-C", "ÉQUIPE", "ABCDEFGHIJK"] {
        let body = json!({"name": "B", "project": project, "key": bad});
        let r = plan(&app, "POST", "boards/", k, Some(body)).await;
        refuses_field(&r, "key");
    }
    let body = json!({"name": "B", "project": project, "key": " eng2 "});
    let r = plan(&app, "POST", "boards/", k, Some(body)).await;
    assert_eq!(ok(&r, 201)["key"], "ENG2");
    let r = plan(&app, "PATCH", "boards/ENG2/", k, Some(json!({"key": "9X"}))).await;
    refuses_field(&r, "key");
    let r = plan(&app, "GET", "boards/ENG2/", k, None).await;
    assert_eq!(ok(&r, 200)["key"], "ENG2");
}

#[actix_web::test]
async fn a_blank_label_name_names_name() {
    let (app, o) = PlanOrg::spawn().await;
    let k = &o.admin_key;
    for blank in ["", "   ", "\u{200b}"] {
        let r = plan(&app, "POST", "labels/", k, Some(json!({"name": blank}))).await;
        refuses_field(&r, "name");
    }
    let r = plan(&app, "POST", "labels/", k, Some(json!({"name": " Bug "}))).await;
    let label = ok(&r, 201)["uuid"].as_str().expect("uuid").to_owned();
    let path = format!("labels/{label}/");
    let r = plan(&app, "PATCH", &path, k, Some(json!({"name": " "}))).await;
    refuses_field(&r, "name");
    let r = plan(&app, "GET", "labels/", k, None).await;
    assert_eq!(ok(&r, 200)["results"][0]["name"], "Bug");
}

#[actix_web::test]
async fn task_owner_milestone_and_anchors_name_their_field() {
    let (app, o) = PlanOrg::spawn().await;
    let k = &o.admin_key;
    let project = o.project(&app, "Apollo").await;
    o.board(&app, &project, "ENG").await;
    let body = json!({"title": "T", "board": "ENG", "owner": "nobody"});
    refuses_field(&plan(&app, "POST", "tasks/", k, Some(body)).await, "owner");
    let body = json!({"title": "T", "board": "ENG", "owner": "me"});
    let r = plan(&app, "POST", "tasks/", k, Some(body)).await;
    assert_eq!(ok(&r, 201)["owner"]["uuid"], o.admin.as_str());
    for (field, bad) in [("owner", json!("Me")), ("milestone", json!("m1"))] {
        let r = plan(&app, "PATCH", "tasks/ENG-1/", k, Some(json!({field: bad}))).await;
        refuses_field(&r, field);
    }
    let r = plan(
        &app,
        "PATCH",
        "tasks/ENG-1/",
        k,
        Some(json!({"owner": null})),
    )
    .await;
    assert!(ok(&r, 200)["owner"].is_null(), "{}", r.text);
    // A neighbour of a move is a task's key or uuid.
    for field in ["before", "after"] {
        for bad in ["", "ENG", "ENG-0", "E G-1"] {
            let r = plan(
                &app,
                "POST",
                "tasks/ENG-1/move/",
                k,
                Some(json!({field: bad})),
            )
            .await;
            refuses_field(&r, field);
        }
    }
    // Dates keep their code, naming the field.
    for (method, path) in [("PATCH", "tasks/ENG-1/"), ("POST", "tasks/")] {
        for field in ["due_date", "start_date"] {
            let body = json!({"title": "T", "board": "ENG", field: "2026-13-01"});
            let body = if method == "PATCH" {
                json!({field: ""})
            } else {
                body
            };
            let r = plan(&app, method, path, k, Some(body)).await;
            r.assert_error(400, "invalid_date_range");
            assert_eq!(r.body["extra"]["parameter"], field, "{}", r.text);
        }
    }
    let r = plan(
        &app,
        "PATCH",
        "tasks/ENG-1/",
        k,
        Some(json!({"due_date": "2026-12-31"})),
    )
    .await;
    assert_eq!(ok(&r, 200)["due_date"], "2026-12-31");
    let path = format!("projects/{project}/reorder/");
    for field in ["before", "after"] {
        let r = plan(&app, "POST", &path, k, Some(json!({field: "first"}))).await;
        refuses_field(&r, field);
        let r = plan(
            &app,
            "POST",
            "boards/ENG/reorder/",
            k,
            Some(json!({field: "x"})),
        )
        .await;
        refuses_field(&r, field);
    }
}
