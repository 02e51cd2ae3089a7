//! Plan writes fired at once: the rules a write checks against what is stored hold when many
//! requests race (relations: no link twice, no cycle of blocks; sub-tasks one level deep).

use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};

use super::kit::{PlanOrg, count, plan};

/// An app whose Plan write budget does not get in the way of a burst.
pub(super) async fn roomy_app() -> TestApp {
    TestApp::builder()
        .var("TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_WRITES", "100000")
        .var("TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_BULK", "100000")
        .spawn()
        .await
}

/// Sends every `(method, path, body)` at once with `key` (each with an `Idempotency-Key` of
/// its own); the answers in the same order.
pub(super) async fn at_once(
    app: &TestApp,
    key: &str,
    calls: Vec<(&str, String, Value)>,
) -> Vec<Resp> {
    let mut sent = Vec::new();
    for (i, (method, path, body)) in calls.into_iter().enumerate() {
        let request = app
            .client
            .request(
                method.parse().unwrap(),
                app.url(&format!("/v1/plan/{path}")),
            )
            .header("X-API-KEY", key)
            .header(
                "Idempotency-Key",
                format!("race-{i:04}-{}", uuid::Uuid::new_v4()),
            )
            .json(&body);
        sent.push(tokio::spawn(async move {
            TestApp::read(request.send().await.expect("request")).await
        }));
    }
    let mut answers = Vec::new();
    for s in sent {
        answers.push(s.await.unwrap());
    }
    answers
}

/// The board `ENG` and `n` tasks on it: their keys.
async fn tasks(app: &TestApp, o: &PlanOrg, n: usize) -> Vec<String> {
    let r = plan(
        app,
        "POST",
        "projects/",
        &o.admin_key,
        Some(json!({"name": "P"})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let project = r.body["uuid"].clone();
    let r = plan(
        app,
        "POST",
        "boards/",
        &o.admin_key,
        Some(json!({"name": "Eng", "project": project, "key": "ENG"})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let creates = (0..n)
        .map(|i| {
            let body = json!({"title": format!("t{i}"), "board": "ENG"});
            ("POST", "tasks/".to_owned(), body)
        })
        .collect();
    at_once(app, &o.member_key, creates)
        .await
        .into_iter()
        .map(|r| {
            assert_eq!(r.status, 201, "{}", r.text);
            r.body["key"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn link(from: &str, kind: &str, to: &str) -> (&'static str, String, Value) {
    (
        "POST",
        format!("tasks/{from}/relations/"),
        json!({"relation_type": kind, "target_task": to}),
    )
}

/// How many answers had each status and code: `[(201, ""), (409, "relation_cycle")]`-like.
fn outcomes(answers: &[Resp]) -> Vec<(u16, String)> {
    let mut seen: Vec<(u16, String)> = answers
        .iter()
        .map(|r| {
            let code = if r.status == 201 { "" } else { r.code() };
            (r.status, code.to_owned())
        })
        .collect();
    seen.sort();
    seen
}

/// One number read behind the app's back, about the organization's links (`$1`).
async fn stored(app: &TestApp, org: &str, sql: &str) -> i64 {
    count(app, sql, &[org]).await
}

#[actix_web::test]
async fn racing_relations_store_one_link_and_never_a_cycle() {
    let app = roomy_app().await;
    let o = PlanOrg::new(&app).await;
    let keys = tasks(&app, &o, 42).await;

    // Twenty pairs, each linked both ways at once: per pair one block, one cycle refused.
    let mut both_ways = Vec::new();
    for pair in keys[..40].chunks(2) {
        both_ways.push(link(&pair[0], "blocks", &pair[1]));
        both_ways.push(link(&pair[1], "blocks", &pair[0]));
    }
    let answers = at_once(&app, &o.member_key, both_ways).await;
    for pair in answers.chunks(2) {
        assert_eq!(
            outcomes(pair),
            [(201, String::new()), (409, "relation_cycle".to_owned())],
            "{} / {}",
            pair[0].text,
            pair[1].text
        );
    }

    // The same link twenty times at once: one stored, nineteen refused.
    let (a, b) = (&keys[40], &keys[41]);
    let same = (0..20).map(|_| link(a, "relates_to", b)).collect();
    let answers = at_once(&app, &o.member_key, same).await;
    let mut expected = vec![(409, "relation_exists".to_owned()); 19];
    expected.insert(0, (201, String::new()));
    assert_eq!(outcomes(&answers), expected);
    let r = plan(
        &app,
        "GET",
        &format!("tasks/{b}/relations/"),
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(r.body.as_array().map(Vec::len), Some(1), "{}", r.text);

    // Stored: 21 links, none doubled (either way round), no block reached back.
    let org = o.org.as_str();
    let of_org = "FROM plan_task_relations WHERE organization_id = $1::uuid";
    assert_eq!(
        stored(&app, org, &format!("SELECT COUNT(*) AS n {of_org}")).await,
        21
    );
    let pairs = format!(
        "SELECT COUNT(DISTINCT (LEAST(source_task_id, target_task_id), \
         GREATEST(source_task_id, target_task_id), relation_type)) AS n {of_org}"
    );
    assert_eq!(stored(&app, org, &pairs).await, 21);
    let cycles = "WITH RECURSIVE walk(start, at) AS ( \
             SELECT source_task_id, target_task_id FROM plan_task_relations \
             WHERE organization_id = $1::uuid AND relation_type = 'blocks' \
             UNION \
             SELECT w.start, r.target_task_id FROM walk w JOIN plan_task_relations r \
             ON r.source_task_id = w.at AND r.relation_type = 'blocks' \
         ) SELECT COUNT(*) AS n FROM walk WHERE start = at";
    assert_eq!(stored(&app, org, cycles).await, 0);
    // One `relation_added` event per stored link.
    let events = "SELECT COUNT(*) AS n FROM plan_task_events \
         WHERE organization_id = $1::uuid AND type = 'relation_added'";
    assert_eq!(stored(&app, org, events).await, 21);
}

/// Pairs of tasks, each put under the other at the same time (two `set_parent` calls): one
/// wins, the other is refused `subtask_depth_exceeded`, and nothing nests two levels.
#[actix_web::test]
async fn racing_parents_nest_one_level() {
    let app = roomy_app().await;
    let o = PlanOrg::new(&app).await;
    let keys = tasks(&app, &o, 20).await;
    let set_parent = |task: &str, parent: &str| {
        let items = json!([{"task": task, "parent": parent}]);
        let body = json!({"operation": "set_parent", "items": items});
        ("POST", "tasks/bulk/".to_owned(), body)
    };
    let mut calls = Vec::new();
    for pair in keys.chunks(2) {
        calls.push(set_parent(&pair[0], &pair[1]));
        calls.push(set_parent(&pair[1], &pair[0]));
    }
    let answers = at_once(&app, &o.member_key, calls).await;
    for pair in answers.chunks(2) {
        let mut rows: Vec<(String, String)> = pair
            .iter()
            .map(|r| {
                assert_eq!(r.status, 200, "{}", r.text);
                let row = &r.body["results"][0];
                let code = row["code"].as_str().unwrap_or_default().to_owned();
                (row["status"].as_str().unwrap().to_owned(), code)
            })
            .collect();
        rows.sort();
        assert_eq!(
            rows,
            [
                ("error".to_owned(), "subtask_depth_exceeded".to_owned()),
                ("ok".to_owned(), String::new())
            ],
            "{} / {}",
            pair[0].text,
            pair[1].text
        );
    }
    let org = o.org.as_str();
    let sub_tasks = "SELECT COUNT(*) AS n FROM plan_tasks \
         WHERE organization_id = $1::uuid AND parent_id IS NOT NULL";
    assert_eq!(stored(&app, org, sub_tasks).await, 10);
    let nested = "SELECT COUNT(*) AS n FROM plan_tasks c JOIN plan_tasks p ON p.id = c.parent_id \
         WHERE c.organization_id = $1::uuid AND p.parent_id IS NOT NULL";
    assert_eq!(stored(&app, org, nested).await, 0);
}
