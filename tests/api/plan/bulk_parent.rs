//! `POST tasks/bulk/` with `set_parent` over HTTP: the dry run's changes and refusals, then the
//! real call item by item under the sub-task rules (one level deep, same board, not its own
//! parent, nothing archived), and `null` making a task top-level again.

use serde_json::{Value, json};
use teamcomm_tests::TestApp;

use super::kit::{PlanOrg, create_task, ok, plan, read_task, rows};

/// A board `key` on a project of its own, with a task per title (`KEY-1`, `KEY-2`…).
async fn board_with_tasks(app: &TestApp, o: &PlanOrg, key: &str, titles: &[&str]) {
    o.new_board(app, key).await;
    for title in titles {
        create_task(app, &o.member_key, json!({"title": title, "board": key})).await;
    }
}

/// A `set_parent` call: a dry run without `ikey`, else the real call with that key.
async fn set_parent(app: &TestApp, o: &PlanOrg, ikey: Option<&str>, items: Value) -> Value {
    let mut headers = vec![("X-API-KEY", o.member_key.as_str())];
    let query = match ikey {
        Some(k) => {
            headers.push(("Idempotency-Key", k));
            ""
        }
        None => "?dry_run=true",
    };
    let r = app
        .send(
            "POST",
            &format!("/v1/plan/tasks/bulk/{query}"),
            &headers,
            Some(json!({"operation": "set_parent", "items": items})),
        )
        .await;
    ok(&r, 200).clone()
}

/// Each row's `(status, code)`.
fn outcomes(answer: &Value) -> Vec<(String, String)> {
    answer["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
            (s(&r["status"]), s(&r["code"]))
        })
        .collect()
}

async fn children(app: &TestApp, o: &PlanOrg, key: &str) -> Vec<String> {
    let r = plan(
        app,
        "GET",
        &format!("tasks/{key}/children/"),
        &o.member_key,
        None,
    )
    .await;
    rows(ok(&r, 200))
        .iter()
        .map(|t| t["key"].as_str().unwrap().to_owned())
        .collect()
}

#[actix_web::test]
async fn set_parent_previews_then_applies_the_subtask_rules_item_by_item() {
    let (app, o) = PlanOrg::spawn().await;
    board_with_tasks(&app, &o, "ENG", &["parent", "child", "other", "old"]).await;
    board_with_tasks(&app, &o, "OPS", &["elsewhere"]).await;
    let items = json!([
        {"task": "ENG-2", "parent": "ENG-1"},
        {"task": "ENG-3", "parent": "OPS-1"},
        {"task": "ENG-3", "parent": "ENG-3"},
    ]);

    // The dry run: the change, the refusals, nothing written.
    let preview = set_parent(&app, &o, None, items.clone()).await;
    assert_eq!(
        (&preview["dry_run"], &preview["operation"]),
        (&json!(true), &json!("set_parent"))
    );
    assert_eq!(
        (&preview["items"][0]["key"], &preview["items"][0]["changes"]),
        (
            &json!("ENG-2"),
            &json!({"parent": {"from": null, "to": "ENG-1"}})
        )
    );
    let refused: Vec<(u64, &str)> = preview["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["index"].as_u64().unwrap(), r["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        refused,
        [(1, "subtask_cross_board"), (2, "invalid_relation")]
    );
    let child = read_task(&app, &o.member_key, "ENG-2").await;
    assert_eq!(
        (&child["parent"], &child["version"]),
        (&Value::Null, &json!(1))
    );

    // The real call: the good item written, each refusal its own row.
    let done = set_parent(&app, &o, Some("set-parent-0001"), items).await;
    assert_eq!(
        outcomes(&done),
        [
            ("ok".into(), String::new()),
            ("error".into(), "subtask_cross_board".into()),
            ("error".into(), "invalid_relation".into()),
        ]
    );
    assert_eq!(done["results"][1]["task_ref"], "ENG-3");
    let child = read_task(&app, &o.member_key, "ENG-2").await;
    assert_eq!(
        (&child["parent"]["key"], &child["version"]),
        (&json!("ENG-1"), &json!(2))
    );
    assert_eq!(children(&app, &o, "ENG-1").await, ["ENG-2"]);
    let r = plan(&app, "GET", "tasks/ENG-2/events/", &o.member_key, None).await;
    assert_eq!(rows(ok(&r, 200)).last().unwrap()["type"], "updated");

    // One level deep either way; nothing archived.
    let r = plan(&app, "POST", "tasks/ENG-4/archive/", &o.member_key, None).await;
    ok(&r, 200);
    let done = set_parent(
        &app,
        &o,
        Some("set-parent-0002"),
        json!([
            {"task": "ENG-3", "parent": "ENG-2"},
            {"task": "ENG-1", "parent": "ENG-3"},
            {"task": "ENG-3", "parent": "ENG-4"},
            {"task": "ENG-4", "parent": "ENG-1"},
        ]),
    )
    .await;
    let codes: Vec<String> = outcomes(&done).into_iter().map(|(_, c)| c).collect();
    assert_eq!(
        codes,
        [
            "subtask_depth_exceeded",
            "subtask_depth_exceeded",
            "task_archived",
            "task_archived"
        ]
    );
    assert_eq!(read_task(&app, &o.member_key, "ENG-3").await["version"], 1);

    // `null`: top-level again.
    let done = set_parent(
        &app,
        &o,
        Some("set-parent-0003"),
        json!([{"task": "ENG-2", "parent": null}]),
    )
    .await;
    assert_eq!(done["results"][0]["task"]["version"], 3, "{done}");
    assert_eq!(
        read_task(&app, &o.member_key, "ENG-2").await["parent"],
        Value::Null
    );
    assert!(children(&app, &o, "ENG-1").await.is_empty());
}
