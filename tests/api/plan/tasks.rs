//! Plan over HTTP: tasks (create, read by key or uuid, update with versions, move, move to
//! another board, archive with its dry run, restore, duplicate, children, events, activity),
//! the strict task list, the grouped view, search, the caller's tasks, and a board's task list,
//! snapshot and delta feed: shapes, codes and stored effects.

use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};

use super::kit::{PlanOrg, create_task, ok, plan, read_task, states, uuid_of};

/// The uuid of the first column of `category` on board `key`.
async fn column(app: &TestApp, o: &PlanOrg, key: &str, category: &str) -> String {
    let states = states(app, &o.admin_key, key).await;
    uuid_of(
        states
            .iter()
            .find(|s| s["category"] == category)
            .expect(category),
    )
}

#[actix_web::test]
async fn tasks_are_created_numbered_and_read_by_key_or_uuid() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    let r = plan(
        &app,
        "POST",
        "tasks/",
        &o.member_key,
        Some(
            json!({"title": "First", "board": "ENG", "owner": "me", "priority": 2,
                    "due_date": "2026-12-24", "estimate": 3, "agent_name": "Claude"}),
        ),
    )
    .await;
    let t = ok(&r, 201).clone();
    assert_eq!(r.headers["etag"], "\"1\"");
    assert_eq!(t["key"], "ENG-1");
    assert_eq!(t["board"]["key"], "ENG");
    assert_eq!(t["state"]["category"], "todo");
    assert_eq!(t["owner"]["uuid"], o.member);
    assert_eq!(t["owner"]["is_active"], true);
    assert_eq!(t["executor"]["name"], "Claude");
    assert_eq!(
        (t["priority"].clone(), t["due_date"].clone()),
        (json!(2), json!("2026-12-24"))
    );
    assert_eq!(
        (t["version"].clone(), t["is_archived"].clone()),
        (json!(1), json!(false))
    );
    assert!(t.get("labels").is_none() && t.get("subtasks").is_none());
    let second = create_task(
        &app,
        &o.member_key,
        json!({"title": "Second", "board": "eng"}),
    )
    .await;
    assert_eq!(second["key"], "ENG-2");
    for path in [
        "tasks/ENG-1/",
        "tasks/eng-1/",
        &format!("tasks/{}/", t["uuid"].as_str().unwrap()),
    ] {
        let r = plan(&app, "GET", path, &o.member_key, None).await;
        assert_eq!(ok(&r, 200)["uuid"], t["uuid"], "{path}");
        assert_eq!(r.headers["etag"], "\"1\"");
    }
    plan(&app, "GET", "tasks/ENG-9/", &o.member_key, None)
        .await
        .assert_error(404, "not_found");
    // another organization sees nothing
    let other = PlanOrg::on_plan(&app, "business", true).await;
    plan(&app, "GET", "tasks/ENG-1/", &other.member_key, None)
        .await
        .assert_error(404, "not_found");
    let path = format!("tasks/{}/", t["uuid"].as_str().unwrap());
    plan(&app, "GET", &path, &other.member_key, None)
        .await
        .assert_error(404, "not_found");
    // events: created, with the agent
    let r = plan(&app, "GET", "tasks/ENG-1/events/", &o.member_key, None).await;
    let events = ok(&r, 200).as_array().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "created");
    assert_eq!(events[0]["executed_by_agent"]["name"], "Claude");
    assert!(events[0]["actor"]["name"].is_string());
}

#[actix_web::test]
async fn creation_refuses_with_the_documented_codes() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    o.new_board(&app, "OPS").await;
    let ops_todo = column(&app, &o, "OPS", "todo").await;
    let post = |body: Value| plan(&app, "POST", "tasks/", &o.member_key, Some(body));
    post(json!({"title": "x", "board": "ENG", "state": ops_todo}))
        .await
        .assert_error(400, "state_not_on_board");
    post(json!({"title": "x", "board": "ENG", "description": "d".repeat(50_001)}))
        .await
        .assert_error(400, "description_too_long");
    post(json!({"title": "x", "board": "ENG", "due_date": "24/12/2026"}))
        .await
        .assert_error(400, "invalid_date_range");
    post(
        json!({"title": "x", "board": "ENG", "start_date": "2026-12-25", "due_date": "2026-12-24"}),
    )
    .await
    .assert_error(400, "invalid_date_range");
    post(json!({"title": "x", "board": "ENG", "milestone": "m"}))
        .await
        .assert_error(501, "not_implemented");
    post(json!({"title": "x", "board": "NOPE"}))
        .await
        .assert_error(404, "not_found");
    let r = post(json!({"title": "x", "board": "ENG", "priority": 9})).await;
    assert_eq!(r.status, 400, "{}", r.text);
    let r = post(json!({"board": "ENG"})).await;
    assert_eq!(r.status, 400, "{}", r.text);
    post(json!({"title": "x", "board": "ENG", "colour": "red"}))
        .await
        .assert_error(400, "unknown_field");
    // owner=me from a key without a person
    let agent = o.agent_key(&app, &["tasks:read", "tasks:write"]).await;
    let r = plan(
        &app,
        "POST",
        "tasks/",
        &agent,
        Some(json!({"title": "x", "board": "ENG", "owner": "me"})),
    )
    .await;
    r.assert_error(400, "actor_required");
    // sub-tasks
    let parent = create_task(&app, &o.member_key, json!({"title": "p", "board": "ENG"})).await;
    let child = create_task(
        &app,
        &o.member_key,
        json!({"title": "c", "parent_task": "ENG-1"}),
    )
    .await;
    assert_eq!(
        (child["key"].clone(), child["parent"]["key"].clone()),
        (json!("ENG-2"), json!("ENG-1"))
    );
    post(json!({"title": "g", "parent_task": "ENG-2"}))
        .await
        .assert_error(400, "subtask_depth_exceeded");
    post(json!({"title": "g", "parent_task": "ENG-1", "board": "OPS"}))
        .await
        .assert_error(400, "subtask_cross_board");
    let r = plan(&app, "GET", "tasks/ENG-1/children/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)[0]["uuid"], child["uuid"]);
    let r = plan(
        &app,
        "GET",
        "tasks/ENG-1/?include=children,activity",
        &o.member_key,
        None,
    )
    .await;
    let detail = ok(&r, 200);
    assert_eq!(detail["children"]["count"], 1);
    assert_eq!(detail["activity"]["results"][0]["type"], "created");
    assert!(detail.get("comments").is_none());
    plan(
        &app,
        "GET",
        "tasks/ENG-1/?include=nope",
        &o.member_key,
        None,
    )
    .await
    .assert_error(400, "invalid_filter_value");
    let _ = parent;
}

#[actix_web::test]
async fn updates_are_versioned() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    create_task(
        &app,
        &o.member_key,
        json!({"title": "a", "board": "ENG", "priority": 3}),
    )
    .await;
    let patch = |body: Value, if_match: Option<&str>| {
        let app = &app;
        let key = o.member_key.clone();
        let if_match = if_match.map(str::to_owned);
        async move {
            let mut headers = vec![("X-API-KEY", key.as_str())];
            if let Some(m) = &if_match {
                headers.push(("If-Match", m.as_str()));
            }
            app.send("PATCH", "/v1/plan/tasks/ENG-1/", &headers, Some(body))
                .await
        }
    };
    let r = patch(json!({"title": "b", "priority": null}), Some("\"1\"")).await;
    let t = ok(&r, 200);
    assert_eq!(
        (
            t["title"].clone(),
            t["priority"].clone(),
            t["version"].clone()
        ),
        (json!("b"), json!(null), json!(2))
    );
    assert_eq!(r.headers["etag"], "\"2\"");
    let r = patch(json!({"title": "c"}), Some("W/\"1\"")).await;
    r.assert_error(409, "version_conflict");
    assert_eq!(r.body["extra"]["current_version"], 2);
    patch(json!({"title": "c", "version": 1}), None)
        .await
        .assert_error(409, "version_conflict");
    patch(json!({"title": "c", "version": 3}), Some("2"))
        .await
        .assert_error(400, "version_precondition_ambiguous");
    let r = patch(json!({"title": "c", "version": 2}), Some("2")).await;
    assert_eq!(ok(&r, 200)["version"], 3);
    patch(
        json!({"milestone": "0192f7a0-0000-7000-8000-000000000000"}),
        None,
    )
    .await
    .assert_error(400, "milestone_not_on_project");
    assert_eq!(
        ok(&patch(json!({"milestone": null}), None).await, 200)["milestone"],
        json!(null)
    );
    let r = plan(
        &app,
        "POST",
        "tasks/ENG-1/archive/",
        &o.member_key,
        Some(json!({})),
    )
    .await;
    assert_eq!(ok(&r, 200)["is_archived"], true);
    patch(json!({"title": "d"}), None)
        .await
        .assert_error(403, "task_archived");
}

#[actix_web::test]
async fn moves_rank_and_complete() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    o.new_board(&app, "OPS").await;
    let todo = column(&app, &o, "ENG", "todo").await;
    let done = column(&app, &o, "ENG", "done").await;
    for t in ["a", "b", "c"] {
        create_task(&app, &o.member_key, json!({"title": t, "board": "ENG"})).await;
    }
    let mv = |task: &str, body: Value| {
        let path = format!("tasks/{task}/move/");
        let app = &app;
        let key = o.member_key.clone();
        async move { plan(app, "POST", &path, &key, Some(body)).await }
    };
    let r = mv("ENG-3", json!({"state": todo, "before": "ENG-1"})).await;
    ok(&r, 200);
    let r = plan(&app, "GET", "boards/ENG/tasks/", &o.member_key, None).await;
    let keys: Vec<Value> = ok(&r, 200)["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].clone())
        .collect();
    assert_eq!(keys, [json!("ENG-3"), json!("ENG-1"), json!("ENG-2")]);
    let r = mv("ENG-1", json!({"state": todo, "after": "OPS-1"})).await;
    r.assert_error(409, "rank_neighbor_missing");
    assert_eq!(
        (
            r.body["extra"]["head"].clone(),
            r.body["extra"]["tail"].clone()
        ),
        (json!("ENG-3"), json!("ENG-2"))
    );
    let r = mv("ENG-1", json!({"state": done})).await;
    let t = ok(&r, 200);
    assert!(t["completed_at"].is_string());
    assert_eq!(t["state"]["category"], "done");
    let r = mv("ENG-1", json!({"state": todo})).await;
    assert_eq!(ok(&r, 200)["completed_at"], json!(null));
    let ops_todo = column(&app, &o, "OPS", "todo").await;
    mv("ENG-1", json!({"state": ops_todo}))
        .await
        .assert_error(400, "state_not_on_board");
    // to another board: a new key, the old one names nothing
    let r = plan(
        &app,
        "POST",
        "tasks/ENG-2/move-board/",
        &o.member_key,
        Some(json!({"board": "OPS", "state": todo})),
    )
    .await;
    r.assert_error(400, "move_board_state_invalid");
    let r = plan(
        &app,
        "POST",
        "tasks/ENG-2/move-board/",
        &o.member_key,
        Some(json!({"board": "OPS"})),
    )
    .await;
    assert_eq!(ok(&r, 200)["key"], "OPS-1");
    plan(&app, "GET", "tasks/ENG-2/", &o.member_key, None)
        .await
        .assert_error(404, "not_found");
    let r = plan(&app, "GET", "tasks/OPS-1/events/", &o.member_key, None).await;
    let kinds: Vec<Value> = ok(&r, 200)
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].clone())
        .collect();
    assert_eq!(kinds, [json!("created"), json!("moved_board")]);
}

#[actix_web::test]
async fn archive_previews_then_archives_and_restores() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    create_task(
        &app,
        &o.member_key,
        json!({"title": "a", "board": "ENG", "description": "body", "priority": 1}),
    )
    .await;
    let r = plan(
        &app,
        "POST",
        "tasks/ENG-1/archive/?dry_run=true",
        &o.member_key,
        None,
    )
    .await;
    let p = ok(&r, 200);
    assert_eq!(
        (p["dry_run"].clone(), p["reversible"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(p["restore_path"], "/v1/plan/tasks/ENG-1/restore/");
    let t = read_task(&app, &o.member_key, "ENG-1").await;
    assert_eq!(
        (t["is_archived"].clone(), t["version"].clone()),
        (json!(false), json!(1))
    );
    let r = plan(&app, "GET", "tasks/ENG-1/activity/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["count"], 1, "the dry run wrote no event");
    ok(
        &plan(&app, "POST", "tasks/ENG-1/archive/", &o.member_key, None).await,
        200,
    );
    let r = plan(&app, "GET", "tasks/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["count"], 0, "archived tasks leave lists");
    plan(
        &app,
        "POST",
        "tasks/ENG-1/duplicate/",
        &o.member_key,
        Some(json!({})),
    )
    .await
    .assert_error(403, "task_archived");
    let r = plan(&app, "POST", "tasks/ENG-1/restore/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["is_archived"], false);
    let r = plan(
        &app,
        "GET",
        "tasks/ENG-1/activity/?type=archived",
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], 1);
    let r = plan(
        &app,
        "POST",
        "tasks/ENG-1/duplicate/",
        &o.member_key,
        Some(json!({"include": ["title", "priority"]})),
    )
    .await;
    let copy = ok(&r, 201);
    assert_eq!(
        (
            copy["key"].clone(),
            copy["title"].clone(),
            copy["priority"].clone(),
            copy["description"].clone()
        ),
        (json!("ENG-2"), json!("a"), json!(1), json!(""))
    );
    plan(
        &app,
        "POST",
        "tasks/ENG-1/duplicate/",
        &o.member_key,
        Some(json!({"include": ["nope"]})),
    )
    .await
    .assert_error(400, "invalid_filter_value");
}

#[actix_web::test]
async fn the_task_list_is_strict() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    create_task(
        &app,
        &o.member_key,
        json!({"title": "mine", "board": "ENG", "owner": "me", "due_date": "2026-12-01"}),
    )
    .await;
    create_task(
        &app,
        &o.member_key,
        json!({"title": "free", "board": "ENG"}),
    )
    .await;
    let list = |q: &str| {
        let path = format!("tasks/{q}");
        let app = &app;
        let key = o.member_key.clone();
        async move { plan(app, "GET", &path, &key, None).await }
    };
    let titles = |r: &Resp| -> Vec<Value> {
        ok(r, 200)["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].clone())
            .collect()
    };
    assert_eq!(
        titles(&list("?board=ENG&sort=-created_at").await),
        [json!("free"), json!("mine")]
    );
    assert_eq!(titles(&list("?owner=me").await), [json!("mine")]);
    assert_eq!(titles(&list("?owner=unowned").await), [json!("free")]);
    assert_eq!(titles(&list("?has_dates=true").await), [json!("mine")]);
    let r = list("?colour=red").await;
    r.assert_error(400, "invalid_filter_value");
    assert_eq!(r.body["extra"]["parameter"], "colour");
    let r = list("?sort=title").await;
    r.assert_error(400, "invalid_sort");
    assert!(
        r.body["extra"]["allowed"]
            .as_array()
            .unwrap()
            .contains(&json!("-due_date"))
    );
    list("?label=nope")
        .await
        .assert_error(400, "invalid_label_filter");
    list("?include=owners")
        .await
        .assert_error(400, "invalid_filter_value");
    let many: String = (0..51).map(|_| format!("owner={}&", o.member)).collect();
    let r = list(&format!("?{many}")).await;
    r.assert_error(400, "too_many_filter_values");
    assert_eq!(r.body["extra"]["limit"], 50);
    let r = list("?include=labels,subtasks&page_size=1").await;
    let page = ok(&r, 200);
    assert_eq!(
        (page["count"].clone(), page["results"][0]["labels"].clone()),
        (json!(2), json!([]))
    );
    assert!(page["results"][0]["subtasks"].is_array());
    assert!(page["next"].as_str().unwrap().contains("include=labels"));
    let agent = o.agent_key(&app, &["tasks:read"]).await;
    plan(&app, "GET", "tasks/?owner=me", &agent, None)
        .await
        .assert_error(400, "actor_required");
    // search, me/tasks, counts, grouped view
    let r = plan(&app, "GET", "search/?q=MIN", &o.member_key, None).await;
    assert_eq!(titles(&r), [json!("mine")]);
    plan(&app, "GET", "search/?q=m", &o.member_key, None)
        .await
        .assert_error(400, "search_query_too_short");
    let long = "m".repeat(257);
    plan(
        &app,
        "GET",
        &format!("search/?q={long}"),
        &o.member_key,
        None,
    )
    .await
    .assert_error(400, "search_query_too_long");
    let r = plan(
        &app,
        "GET",
        "me/tasks/?scope=owned&whatever=1",
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(titles(&r), [json!("mine")]);
    plan(&app, "GET", "me/tasks/?scope=all", &o.member_key, None)
        .await
        .assert_error(400, "invalid_filter_value");
    plan(&app, "GET", "me/tasks/", &agent, None)
        .await
        .assert_error(403, "insufficient_scope");
    let r = plan(&app, "GET", "me/tasks/counts/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["open"], 1);
    assert_eq!(r.body["overdue"], 0);
    let r = plan(
        &app,
        "GET",
        "tasks/board/?board=ENG&group_by=owner&tasks_per_group=1",
        &o.member_key,
        None,
    )
    .await;
    let g = ok(&r, 200);
    assert_eq!(
        (
            g["total"].clone(),
            g["group_by"].clone(),
            g["board"]["key"].clone()
        ),
        (json!(2), json!("owner"), json!("ENG"))
    );
    assert_eq!(g["groups"].as_array().unwrap().len(), 2);
    plan(
        &app,
        "GET",
        "tasks/board/?group_by=mood",
        &o.member_key,
        None,
    )
    .await
    .assert_error(400, "invalid_filter_value");
    plan(
        &app,
        "GET",
        "tasks/board/?tasks_per_group=51",
        &o.member_key,
        None,
    )
    .await
    .assert_error(400, "invalid_filter_value");
}

#[actix_web::test]
async fn snapshot_and_delta() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    create_task(&app, &o.member_key, json!({"title": "a", "board": "ENG"})).await;
    let r = plan(&app, "GET", "boards/ENG/board/", &o.member_key, None).await;
    let snap = ok(&r, 200).clone();
    assert_eq!(snap["board"]["key"], "ENG");
    let todo = snap["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["category"] == "todo")
        .unwrap();
    assert_eq!(
        (todo["task_count"].clone(), todo["has_more"].clone()),
        (json!(1), json!(false))
    );
    let cursor = snap["delta_cursor"].as_str().unwrap().to_owned();
    assert_eq!(cursor.len(), "2026-11-26T10:00:00Z".len());
    // the task written just now is after the cursor: the first delta brings it
    tokio::time::sleep(std::time::Duration::from_millis(3100)).await;
    let r = plan(
        &app,
        "GET",
        &format!("boards/ENG/delta/?updated_since={cursor}"),
        &o.member_key,
        None,
    )
    .await;
    let d = ok(&r, 200).clone();
    let all: Vec<&Value> = ["created", "changed"]
        .iter()
        .flat_map(|k| d[*k].as_array().unwrap())
        .collect();
    assert_eq!(all.len(), 1, "{d}");
    let next = d["delta_cursor"].as_str().unwrap().to_owned();
    let r = plan(
        &app,
        "GET",
        &format!("boards/ENG/delta/?updated_since={next}"),
        &o.member_key,
        None,
    )
    .await;
    let quiet = ok(&r, 200);
    for k in ["created", "changed", "archived"] {
        assert_eq!(quiet[k], json!([]), "{k}");
    }
    ok(
        &plan(&app, "POST", "tasks/ENG-1/archive/", &o.member_key, None).await,
        200,
    );
    tokio::time::sleep(std::time::Duration::from_millis(3100)).await;
    let r = plan(
        &app,
        "GET",
        &format!("boards/ENG/delta/?updated_since={next}"),
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["archived"][0]["key"], "ENG-1");
    let r = plan(&app, "GET", "boards/ENG/delta/", &o.member_key, None).await;
    r.assert_error(400, "invalid_filter_value");
    assert_eq!(r.body["extra"]["parameter"], "updated_since");
    plan(
        &app,
        "GET",
        "boards/ENG/delta/?updated_since=yesterday",
        &o.member_key,
        None,
    )
    .await
    .assert_error(400, "invalid_filter_value");
    let r = plan(
        &app,
        "GET",
        "boards/ENG/delta/?updated_since=2020-01-01T00:00:00Z",
        &o.member_key,
        None,
    )
    .await;
    r.assert_error(400, "delta_window_expired");
    assert_eq!(r.body["extra"]["max_window_days"], 7);
    let other = PlanOrg::on_plan(&app, "business", true).await;
    plan(&app, "GET", "boards/ENG/board/", &other.member_key, None)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn fifty_concurrent_creates_take_fifty_numbers() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    let mut handles = Vec::new();
    for i in 0..50 {
        let client = app.client.clone();
        let url = format!("{}/v1/plan/tasks/", app.base);
        let key = o.admin_key.clone();
        handles.push(tokio::spawn(async move {
            let r = client
                .post(url)
                .header("X-API-KEY", key)
                .json(&json!({"title": format!("t{i}"), "board": "ENG"}))
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }));
    }
    let mut numbers = Vec::new();
    for h in handles {
        let (status, body) = h.await.unwrap();
        assert_eq!(status, 201, "{body}");
        let key = body["key"].as_str().unwrap().to_owned();
        numbers.push(key.trim_start_matches("ENG-").parse::<i64>().unwrap());
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=50).collect::<Vec<i64>>());
}

/// `GET tasks/` with `include=labels,participants` and `GET tasks/{t}/` with
/// `include=relations,participants,comments,comment_count` embed what the social routes wrote,
/// as those routes list it; nothing of it when not asked.
#[actix_web::test]
async fn includes_embed_labels_participants_relations_and_comments() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    let k = &o.member_key;
    let key_of = |t: &Value| t["key"].as_str().unwrap().to_owned();
    let key1 = key_of(&create_task(&app, k, json!({"title": "one", "board": "ENG"})).await);
    let key2 = key_of(&create_task(&app, k, json!({"title": "two", "board": "ENG"})).await);
    let write = |method: &'static str, path: String, body: Option<Value>| {
        let app = &app;
        async move { plan(app, method, &path, k, body).await }
    };
    let mut labels = Vec::new();
    for name in ["zeta", "alpha"] {
        let r = write(
            "POST",
            "labels/".into(),
            Some(json!({"name": name, "color": "#112233"})),
        )
        .await;
        labels.push(ok(&r, 201)["uuid"].as_str().unwrap().to_owned());
    }
    for (key, ids) in [(&key1, labels.clone()), (&key2, vec![labels[1].clone()])] {
        let r = write(
            "POST",
            format!("tasks/{key}/labels/batch/"),
            Some(json!({"mode": "add", "label_uuids": ids})),
        )
        .await;
        ok(&r, 200);
    }
    let r = write(
        "POST",
        format!("tasks/{key1}/participants/"),
        Some(json!({"user_uuid": o.admin, "role": "watcher"})),
    )
    .await;
    ok(&r, 201);
    let r = write(
        "POST",
        format!("tasks/{key1}/relations/"),
        Some(json!({"relation_type": "blocks", "target_task": key2})),
    )
    .await;
    ok(&r, 201);
    let mut comments = Vec::new();
    for body in ["kept", "gone"] {
        let r = write(
            "POST",
            format!("tasks/{key1}/comments/"),
            Some(json!({"body": body})),
        )
        .await;
        comments.push(ok(&r, 201)["uuid"].as_str().unwrap().to_owned());
    }
    let r = write(
        "DELETE",
        format!("tasks/{key1}/comments/{}/", comments[1]),
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text);
    let read = |path: String| {
        let app = &app;
        async move {
            let r = plan(app, "GET", &path, k, None).await;
            ok(&r, 200).clone()
        }
    };

    // The list: each task with its own labels (by name) and participants.
    let page = read("tasks/?board=ENG&include=labels,participants".into()).await;
    let row = |key: &str| {
        page["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["key"] == key)
            .expect(key)
            .clone()
    };
    let (one, two) = (row(&key1), row(&key2));
    assert_eq!(
        one["labels"],
        json!([
            {"uuid": labels[1], "name": "alpha", "color": "#112233"},
            {"uuid": labels[0], "name": "zeta", "color": "#112233"},
        ])
    );
    assert_eq!(
        two["labels"],
        json!([{"uuid": labels[1], "name": "alpha", "color": "#112233"}])
    );
    for (t, key) in [(&one, &key1), (&two, &key2)] {
        let listed = read(format!("tasks/{key}/participants/")).await;
        assert_eq!(t["participants"], listed, "{key}");
    }
    let admin_row = one["participants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["member"]["uuid"] == o.admin.as_str())
        .expect("the added watcher")
        .clone();
    assert_eq!(
        (
            admin_row["role"].clone(),
            admin_row["source"].clone(),
            admin_row["is_muted"].clone()
        ),
        (json!("watcher"), json!("added"), json!(false))
    );
    assert!(admin_row["member"]["name"].is_string());
    let page = read("tasks/?board=ENG&include=labels".into()).await;
    let first = &page["results"][0];
    assert!(first["labels"].is_array() && first.get("participants").is_none());
    let page = read("tasks/?board=ENG".into()).await;
    for t in page["results"].as_array().unwrap() {
        assert!(t.get("labels").is_none() && t.get("participants").is_none());
    }

    // The detail: relations, participants and comments as their own routes list them, the
    // live comments counted.
    let detail = read(format!(
        "tasks/{key1}/?include=relations,participants,comments,comment_count"
    ))
    .await;
    assert_eq!(
        detail["relations"],
        read(format!("tasks/{key1}/relations/")).await
    );
    assert_eq!(detail["relations"][0]["other_task"]["key"], key2.as_str());
    assert_eq!(detail["relations"][0]["direction"], "outgoing");
    assert_eq!(
        detail["participants"],
        read(format!("tasks/{key1}/participants/")).await
    );
    assert_eq!(
        detail["comments"],
        read(format!("tasks/{key1}/comments/")).await
    );
    assert_eq!(detail["comments"]["results"][0]["body"], "kept");
    assert_eq!(
        detail["comment_count"], 1,
        "the deleted comment is not counted"
    );
    let detail = read(format!("tasks/{key2}/?include=relations,comment_count")).await;
    assert_eq!(detail["relations"][0]["direction"], "incoming");
    assert_eq!(detail["comment_count"], 0);
    assert!(detail.get("comments").is_none() && detail.get("participants").is_none());
    let plain = read(format!("tasks/{key1}/")).await;
    for embed in ["relations", "participants", "comments", "comment_count"] {
        assert!(plain.get(embed).is_none(), "{embed}");
    }
}

/// `GET tasks/board/`: groups by project, milestone and label, lanes (`sub_group_by`), the
/// view's own filters (project, priority, repeated or comma-separated), a cell's next window
/// (`group`, `lane`, `offset`), search, and the refusals of the grid.
#[actix_web::test]
async fn the_grouped_view_lanes_filters_and_pages_its_cells() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    let ops = o.new_board(&app, "OPS").await;
    let ops_project = ops["project"]["uuid"].as_str().unwrap().to_owned();
    let k = &o.member_key;
    for (title, board, owner, priority) in [
        ("fix alpha", "ENG", true, json!(2)),
        ("beta", "ENG", false, json!(1)),
        ("fix gamma", "OPS", true, Value::Null),
        ("delta", "ENG", true, json!(2)),
    ] {
        let mut body = json!({"title": title, "board": board, "priority": priority});
        if owner {
            body["owner"] = json!("me");
        }
        create_task(&app, k, body).await;
    }
    let r = plan(&app, "POST", "labels/", k, Some(json!({"name": "bug"}))).await;
    let bug = ok(&r, 201)["uuid"].as_str().unwrap().to_owned();
    for key in ["ENG-1", "OPS-1"] {
        let r = plan(
            &app,
            "POST",
            &format!("tasks/{key}/labels/batch/"),
            k,
            Some(json!({"mode": "add", "label_uuids": [bug]})),
        )
        .await;
        ok(&r, 200);
    }
    let grouped = |q: &str| {
        let path = format!("tasks/board/?{q}");
        let app = &app;
        async move { plan(app, "GET", &path, k, None).await }
    };
    let titles = |cell: &Value| -> Vec<String> {
        cell["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].as_str().unwrap().to_owned())
            .collect()
    };
    let keys = |cells: &Value| -> Vec<String> {
        cells
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["key"].as_str().unwrap().to_owned())
            .collect()
    };

    // Projects, laned by owner: a laned group's cards are in its lanes.
    let r = grouped("group_by=project&sub_group_by=owner&sort=created_at").await;
    let g = ok(&r, 200);
    assert_eq!(
        (
            g["total"].clone(),
            g["group_by"].clone(),
            g["sub_group_by"].clone()
        ),
        (json!(4), json!("project"), json!("owner"))
    );
    let eng = &g["groups"][0];
    assert_eq!(
        (
            eng["task_count"].clone(),
            eng["tasks"].clone(),
            eng["has_more"].clone()
        ),
        (json!(3), json!([]), json!(false))
    );
    assert_eq!(keys(&eng["lanes"]), [o.member.clone(), "none".into()]);
    assert_eq!(titles(&eng["lanes"][0]), ["fix alpha", "delta"]);
    assert_eq!(eng["lanes"][1]["name"], "No owner");
    assert_eq!(g["groups"][1]["key"], ops_project.as_str());
    assert_eq!(titles(&g["groups"][1]["lanes"][0]), ["fix gamma"]);

    // Milestones do not exist yet: one group of every task. Labels: a task in each of its.
    let r = grouped("group_by=milestone").await;
    let g = ok(&r, 200);
    assert_eq!(keys(&g["groups"]), ["none"]);
    assert_eq!(
        (
            g["groups"][0]["name"].clone(),
            g["groups"][0]["task_count"].clone()
        ),
        (json!("No milestone"), json!(4))
    );
    assert!(g["groups"][0].get("lanes").is_none() && g["sub_group_by"].is_null());
    let r = grouped("group_by=label&sort=created_at").await;
    let g = ok(&r, 200);
    assert_eq!(keys(&g["groups"]), [bug.clone(), "none".into()]);
    assert_eq!(titles(&g["groups"][0]), ["fix alpha", "fix gamma"]);
    assert_eq!(g["total"], 4);

    // The view's own filters; repeated or comma-separated.
    let total = |r: &Resp| ok(r, 200)["total"].clone();
    assert_eq!(total(&grouped(&format!("project={ops_project}")).await), 1);
    assert_eq!(total(&grouped("priority=1&priority=2").await), 3);
    assert_eq!(total(&grouped("priority=1,2").await), 3);
    assert_eq!(total(&grouped("priority=none&search=fix").await), 1);
    assert_eq!(total(&grouped(&format!("label={bug}&owner=me")).await), 2);

    // A cell's next window.
    let me = &o.member;
    let r = grouped("board=ENG&sub_group_by=owner&tasks_per_group=1").await;
    let g = ok(&r, 200);
    assert_eq!(g["board"]["key"], "ENG");
    let mine = &g["groups"][0]["lanes"][0];
    assert_eq!(
        (
            g["groups"][0]["key"].clone(),
            mine["key"].clone(),
            titles(mine),
            mine["has_more"].clone(),
            mine["next_offset"].clone()
        ),
        (
            json!("todo"),
            json!(me),
            vec!["fix alpha".to_owned()],
            json!(true),
            json!(1)
        )
    );
    let r = grouped(&format!(
        "board=ENG&sub_group_by=owner&tasks_per_group=1&group=todo&lane={me}&offset=1"
    ))
    .await;
    let g = ok(&r, 200);
    assert_eq!(g["groups"].as_array().unwrap().len(), 1);
    let lanes = g["groups"][0]["lanes"].as_array().unwrap();
    assert_eq!(lanes.len(), 1);
    assert_eq!(
        (titles(&lanes[0]), lanes[0]["has_more"].clone()),
        (vec!["delta".to_owned()], json!(false))
    );

    // Refusals, each naming its parameter.
    for (q, code, parameter) in [
        (
            "sub_group_by=category",
            "invalid_filter_value",
            "sub_group_by",
        ),
        ("lane=none", "invalid_filter_value", "lane"),
        (
            "group_by=owner&sub_group_by=mood",
            "invalid_filter_value",
            "sub_group_by",
        ),
        ("priority=9", "invalid_filter_value", "priority"),
        (
            "tasks_per_group=0",
            "invalid_filter_value",
            "tasks_per_group",
        ),
        ("offset=-1", "invalid_filter_value", "offset"),
        ("label=bug", "invalid_label_filter", "label"),
        ("sort=title", "invalid_sort", "sort"),
        ("search=x", "search_query_too_short", "search"),
    ] {
        let r = grouped(q).await;
        r.assert_error(400, code);
        assert_eq!(r.body["extra"]["parameter"], parameter, "{q}");
    }
    let unknown = uuid::Uuid::now_v7();
    grouped(&format!("project={unknown}"))
        .await
        .assert_error(404, "not_found");
}

/// The strict list takes repeated and comma-separated filters and the parameters other parts
/// of the request read (paging, `dry_run`); the other task queries parse through their
/// declared structs too.
#[actix_web::test]
async fn task_queries_take_repeated_values_and_name_what_they_refuse() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    let k = &o.member_key;
    create_task(
        &app,
        k,
        json!({"title": "mine", "board": "ENG", "owner": "me"}),
    )
    .await;
    create_task(&app, k, json!({"title": "free", "board": "ENG"})).await;
    let get = |path: String| {
        let app = &app;
        async move { plan(app, "GET", &path, k, None).await }
    };
    let count = |r: &Resp| ok(r, 200)["count"].clone();
    assert_eq!(count(&get("tasks/?owner=me&owner=unowned".into()).await), 2);
    assert_eq!(count(&get("tasks/?owner=me,unowned".into()).await), 2);
    assert_eq!(count(&get("tasks/?board=ENG&board=ENG".into()).await), 2);
    let r = get("tasks/?page=1&page_size=1&limit=1&offset=0&dry_run=true".into()).await;
    assert_eq!(count(&r), 2);
    let r = get("tasks/?owner=me&colour=".into()).await;
    r.assert_error(400, "invalid_filter_value");
    assert_eq!(
        (
            r.body["detail"].clone(),
            r.body["extra"]["parameter"].clone()
        ),
        (json!("Unknown query parameter colour."), json!("colour"))
    );
    // An unknown parameter is named before any bad value.
    let r = get("tasks/?sort=title&colour=red".into()).await;
    assert_eq!(r.body["extra"]["parameter"], "colour", "{}", r.text);
    let r = get("tasks/?owner=me&owner=someone".into()).await;
    r.assert_error(400, "invalid_filter_value");
    assert_eq!(r.body["extra"]["parameter"], "owner");
    let labels: Vec<String> = (0..51).map(|_| uuid::Uuid::now_v7().to_string()).collect();
    // The spec's label filter code covers "more than 50" too.
    let r = get(format!("tasks/?label={}", labels.join(","))).await;
    r.assert_error(400, "invalid_label_filter");
    assert_eq!(
        (
            r.body["extra"]["parameter"].clone(),
            r.body["extra"]["limit"].clone()
        ),
        (json!("label"), json!(50))
    );
    let r = get("tasks/?include=labels&include=participants".into()).await;
    let first = &ok(&r, 200)["results"][0];
    assert!(first["labels"].is_array() && first["participants"].is_array());
    // Other task queries.
    let r = get("me/tasks/?scope=all".into()).await;
    assert_eq!(
        (r.status, r.body["extra"]["parameter"].clone()),
        (400, json!("scope"))
    );
    assert_eq!(
        count(&get("me/tasks/?scope=involved&sort=-created_at".into()).await),
        1
    );
    // No query, or a blank one, is too short.
    for q in ["", "?q=", "?q=%20%20"] {
        get(format!("search/{q}"))
            .await
            .assert_error(400, "search_query_too_short");
    }
    let r = get("tasks/ENG-1/?include=comment_count&include=children".into()).await;
    let detail = ok(&r, 200);
    assert_eq!(
        (
            detail["comment_count"].clone(),
            detail["children"]["count"].clone()
        ),
        (json!(0), json!(0))
    );
    assert!(detail.get("relations").is_none());
    let r = get("tasks/ENG-1/?include=nope".into()).await;
    assert_eq!(
        (r.status, r.body["extra"]["parameter"].clone()),
        (400, json!("include"))
    );
    let r = get("tasks/ENG-1/children/?sort=title".into()).await;
    r.assert_error(400, "invalid_sort");
    let r = get("tasks/ENG-1/activity/?updated_since=yesterday".into()).await;
    assert_eq!(
        (r.status, r.body["extra"]["parameter"].clone()),
        (400, json!("updated_since"))
    );
    let r = get("tasks/ENG-1/activity/?type=created&page_size=1".into()).await;
    assert_eq!(count(&r), 1);
    let r = get("boards/ENG/tasks/?sort=-created_at&page_size=1".into()).await;
    let page = ok(&r, 200);
    assert_eq!(page["results"][0]["title"], "free");
    assert!(page["next"].as_str().unwrap().contains("sort=-created_at"));
}

/// `include=subtasks` (read for the whole page at once): each task of the page with its live
/// sub-tasks as its children door lists them, in rank order, archived ones left out.
#[actix_web::test]
async fn a_page_embeds_each_tasks_subtasks_as_its_children_door_lists_them() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    let k = &o.member_key;
    let key_of = |t: &Value| t["key"].as_str().unwrap().to_owned();
    let mut parents = Vec::new();
    for title in ["one", "two", "three"] {
        let t = create_task(&app, k, json!({"title": title, "board": "ENG"})).await;
        parents.push(key_of(&t));
    }
    let mut kids = Vec::new();
    for (parent, title, owner) in [(0, "a1", "me"), (0, "a2", ""), (0, "a3", ""), (1, "b1", "")] {
        let mut body = json!({"title": title, "parent_task": parents[parent]});
        if !owner.is_empty() {
            body["owner"] = json!(owner);
        }
        kids.push(key_of(&create_task(&app, k, body).await));
    }
    let call = |method: &'static str, path: String, body: Option<Value>| {
        let app = &app;
        async move { plan(app, method, &path, k, body).await }
    };
    let r = call(
        "POST",
        format!("tasks/{}/move/", kids[0]),
        Some(json!({"after": kids[1]})),
    )
    .await;
    ok(&r, 200);
    let r = call("POST", format!("tasks/{}/archive/", kids[2]), None).await;
    ok(&r, 200);

    let r = call("GET", "tasks/?board=ENG&include=subtasks".into(), None).await;
    let page = ok(&r, 200).clone();
    let rows = page["results"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "three parents and two live sub-tasks");
    for row in rows {
        let key = row["key"].as_str().unwrap();
        let r = call("GET", format!("tasks/{key}/children/"), None).await;
        assert_eq!(row["subtasks"], *ok(&r, 200), "{key}");
    }
    let row = |key: &str| rows.iter().find(|t| t["key"] == key).expect(key).clone();
    let titles = |t: &Value| -> Vec<Value> {
        t["subtasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["title"].clone())
            .collect()
    };
    let first = row(&parents[0]);
    assert_eq!(titles(&first), [json!("a2"), json!("a1")]);
    assert_eq!(first["subtasks"][1]["owner"]["uuid"], o.member);
    assert_eq!(first["subtasks"][1]["parent"]["key"], parents[0].as_str());
    assert_eq!(titles(&row(&parents[1])), [json!("b1")]);
    assert_eq!(row(&parents[2])["subtasks"], json!([]));
}
