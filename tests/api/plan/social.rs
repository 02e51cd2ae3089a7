//! Plan over HTTP: relations, comments and reactions, participants and subscription, task labels
//! and the Plan label doors: shapes, codes, visibility, and what they store (events, the task's
//! version bump).

use serde_json::{Value, json};
use teamcomm_tests::TestApp;

use super::kit::{PlanOrg, count, create_task, ok, plan, read_task, uuid_of};

/// How many events of `kind` the task has.
async fn events(app: &TestApp, task: &str, kind: &str) -> i64 {
    let sql = "SELECT COUNT(*) AS n FROM plan_task_events WHERE task_id = $1::uuid AND type = $2";
    count(app, sql, &[task, kind]).await
}

/// A task on the board: (uuid, key, version).
async fn task(app: &TestApp, key: &str, board: &str, title: &str) -> (String, String, i64) {
    let t = create_task(app, key, json!({"title": title, "board": board})).await;
    (
        uuid_of(&t),
        t["key"].as_str().unwrap().to_owned(),
        t["version"].as_i64().unwrap(),
    )
}

/// The task's `version` as `key` reads it.
async fn version(app: &TestApp, key: &str, task: &str) -> i64 {
    read_task(app, key, task).await["version"].as_i64().unwrap()
}

#[actix_web::test]
async fn relations_are_linked_listed_and_removed() {
    let (app, o) = PlanOrg::spawn().await;
    let b = uuid_of(&o.new_board(&app, "ENG").await);
    let k = &o.member_key;
    let (t1, key1, v1) = task(&app, k, &b, "one").await;
    let (t2, key2, _) = task(&app, k, &b, "two").await;
    let r = plan(
        &app,
        "POST",
        &format!("tasks/{key1}/relations/"),
        k,
        Some(json!({"relation_type": "blocks", "target_task": key2, "agent_name": "Claude"})),
    )
    .await;
    let rel = ok(&r, 201).clone();
    assert_eq!(rel["relation_type"], "blocks");
    assert_eq!(rel["direction"], "outgoing");
    assert_eq!(rel["other_task"]["key"], key2.as_str());
    assert_eq!(rel["other_task"]["uuid"], t2.as_str());
    assert_eq!(rel["other_task"]["title"], "two");
    assert_eq!(version(&app, k, &t1).await, v1 + 1, "a link bumps its task");
    assert_eq!(events(&app, &t1, "relation_added").await, 1);

    let post = |from: String, body: Value| {
        let app = &app;
        async move {
            plan(
                app,
                "POST",
                &format!("tasks/{from}/relations/"),
                k,
                Some(body),
            )
            .await
        }
    };
    post(
        key1.clone(),
        json!({"relation_type": "relates_to", "target_task": key1}),
    )
    .await
    .assert_error(400, "invalid_relation");
    post(
        key1.clone(),
        json!({"relation_type": "blocks", "target_task": t2}),
    )
    .await
    .assert_error(409, "relation_exists");
    post(
        key2.clone(),
        json!({"relation_type": "blocks", "target_task": key1}),
    )
    .await
    .assert_error(409, "relation_cycle");
    post(
        key1.clone(),
        json!({"relation_type": "blocks", "target_task": "ENG-99"}),
    )
    .await
    .assert_error(404, "not_found");
    let r = post(
        key1.clone(),
        json!({"relation_type": "parent_of", "target_task": key2}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);

    let r = plan(&app, "GET", &format!("tasks/{key2}/relations/"), k, None).await;
    let list = ok(&r, 200).as_array().unwrap().clone();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["direction"], "incoming");
    assert_eq!(list[0]["other_task"]["key"], key1.as_str());

    // Another organization sees nothing.
    let other = PlanOrg::on_plan(&app, "business", true).await;
    let r = plan(
        &app,
        "GET",
        &format!("tasks/{t1}/relations/"),
        &other.admin_key,
        None,
    )
    .await;
    r.assert_error(404, "not_found");

    let rid = uuid_of(&rel);
    let r = plan(
        &app,
        "DELETE",
        &format!("tasks/{key2}/relations/{rid}/"),
        k,
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text);
    let r = plan(
        &app,
        "DELETE",
        &format!("tasks/{key2}/relations/{rid}/"),
        k,
        None,
    )
    .await;
    r.assert_error(404, "not_found");
    let r = plan(&app, "GET", &format!("tasks/{key1}/relations/"), k, None).await;
    assert!(ok(&r, 200).as_array().unwrap().is_empty());
}

#[actix_web::test]
async fn comments_are_written_replied_edited_and_soft_deleted() {
    let (app, o) = PlanOrg::spawn().await;
    let b = uuid_of(&o.new_board(&app, "ENG").await);
    let (t, key, _) = task(&app, &o.member_key, &b, "t").await;
    let (t2, _, _) = task(&app, &o.member_key, &b, "t2").await;
    let path = format!("tasks/{key}/comments/");
    let body = format!("hello <@DB@{}>", o.admin);
    let r = plan(
        &app,
        "POST",
        &path,
        &o.member_key,
        Some(json!({"body": body, "agent_name": "Claude"})),
    )
    .await;
    let c = ok(&r, 201).clone();
    assert_eq!(c["body"], body.as_str());
    assert_eq!(c["author"]["uuid"], o.member.as_str());
    assert!(c["author"]["full_name"].is_string());
    assert_eq!(c["provenance"], "agent");
    assert_eq!(c["executed_by_agent"]["name"], "Claude");
    assert_eq!(c["parent_comment"], Value::Null);
    assert_eq!(c["mentions"], json!([o.admin]));
    assert_eq!(c["reactions"], json!([]));
    assert_eq!(
        (c["edited_at"].clone(), c["is_deleted"].clone()),
        (Value::Null, json!(false))
    );
    assert_eq!(events(&app, &t, "comment_added").await, 1);
    // The mentioned admin now follows the task.
    let r = plan(
        &app,
        "GET",
        &format!("tasks/{key}/participants/"),
        &o.admin_key,
        None,
    )
    .await;
    let rows = ok(&r, 200).as_array().unwrap().clone();
    assert!(
        rows.iter()
            .any(|p| p["member"]["uuid"] == o.admin.as_str() && p["source"] == "mention"),
        "{rows:?}"
    );
    let cid = uuid_of(&c);

    let r = plan(
        &app,
        "POST",
        &path,
        &o.admin_key,
        Some(json!({"body": "yes", "parent_comment": cid})),
    )
    .await;
    let reply = ok(&r, 201).clone();
    assert_eq!(reply["parent_comment"], cid.as_str());
    assert_eq!(reply["provenance"], "human");
    assert_eq!(reply["executed_by_agent"], Value::Null);
    let reply_id = uuid_of(&reply);
    for (on, parent) in [(key.clone(), reply_id.clone()), (t2.clone(), cid.clone())] {
        let r = plan(
            &app,
            "POST",
            &format!("tasks/{on}/comments/"),
            &o.admin_key,
            Some(json!({"body": "no", "parent_comment": parent})),
        )
        .await;
        r.assert_error(400, "invalid_relation");
    }
    let r = plan(
        &app,
        "POST",
        &path,
        &o.admin_key,
        Some(json!({"body": "x".repeat(10_001)})),
    )
    .await;
    r.assert_error(400, "comment_body_too_long");
    let r = plan(
        &app,
        "POST",
        &path,
        &o.admin_key,
        Some(json!({"body": "x", "bogus": 1})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);

    // Edit: the author only.
    let one = format!("{path}{cid}/");
    let r = plan(
        &app,
        "PATCH",
        &one,
        &o.admin_key,
        Some(json!({"body": "mine"})),
    )
    .await;
    r.assert_error(403, "comment_not_author");
    let r = plan(
        &app,
        "PATCH",
        &one,
        &o.member_key,
        Some(json!({"body": "better"})),
    )
    .await;
    let edited = ok(&r, 200);
    assert_eq!(edited["body"], "better");
    assert!(edited["edited_at"].is_string());
    // Delete: the author or an admin; the row stays, blank.
    let r = plan(
        &app,
        "DELETE",
        &format!("{path}{reply_id}/"),
        &o.member_key,
        None,
    )
    .await;
    r.assert_error(403, "comment_not_author");
    let r = plan(&app, "DELETE", &one, &o.admin_key, None).await;
    assert_eq!(r.status, 204, "{}", r.text);

    let r = plan(&app, "GET", &path, &o.member_key, None).await;
    let page = ok(&r, 200).clone();
    assert_eq!(page["count"], 2);
    let rows = page["results"].as_array().unwrap();
    assert_eq!(rows[0]["uuid"], cid.as_str(), "oldest first");
    assert_eq!(
        (rows[0]["body"].clone(), rows[0]["is_deleted"].clone()),
        (json!(""), json!(true))
    );
    let r = plan(
        &app,
        "GET",
        &format!("{path}?search=YE&page_size=1"),
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], 1);
    let r = plan(
        &app,
        "GET",
        &format!("{path}?start_date=2999-01-01"),
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], 0);
    let r = plan(
        &app,
        "GET",
        &format!("{path}?start_date=soon"),
        &o.member_key,
        None,
    )
    .await;
    r.assert_error(400, "invalid_date_range");

    // An archived task takes no comments.
    let r = plan(
        &app,
        "POST",
        &format!("tasks/{key}/archive/"),
        &o.admin_key,
        None,
    )
    .await;
    ok(&r, 200);
    let r = plan(
        &app,
        "POST",
        &path,
        &o.admin_key,
        Some(json!({"body": "late"})),
    )
    .await;
    r.assert_error(403, "task_archived");
}

#[actix_web::test]
async fn reactions_are_person_only_single_emojis() {
    let (app, o) = PlanOrg::spawn().await;
    let b = uuid_of(&o.new_board(&app, "ENG").await);
    let (_, key, _) = task(&app, &o.member_key, &b, "t").await;
    let r = plan(
        &app,
        "POST",
        &format!("tasks/{key}/comments/"),
        &o.member_key,
        Some(json!({"body": "hi"})),
    )
    .await;
    let cid = uuid_of(ok(&r, 201));
    let path = format!("tasks/{key}/comments/{cid}/reactions/");
    for _ in 0..2 {
        let r = plan(
            &app,
            "POST",
            &path,
            &o.admin_key,
            Some(json!({"emoji": "👍"})),
        )
        .await;
        let c = ok(&r, 200);
        assert_eq!(c["uuid"], cid.as_str());
        assert_eq!(c["reactions"][0]["count"], 1);
        assert_eq!(c["reactions"][0]["reacted"], true);
        assert_eq!(c["reactions"][0]["users"][0]["uuid"], o.admin.as_str());
    }
    let r = plan(
        &app,
        "POST",
        &path,
        &o.member_key,
        Some(json!({"emoji": "👨‍👩‍👧"})),
    )
    .await;
    let c = ok(&r, 200);
    assert_eq!(c["reactions"][0]["reacted"], false);
    assert_eq!(c["reactions"][1]["reacted"], true);
    for bad in ["ok", "👍👍👍👍👍👍👍👍👍", ""] {
        let r = plan(
            &app,
            "POST",
            &path,
            &o.member_key,
            Some(json!({"emoji": bad})),
        )
        .await;
        r.assert_error(400, "reaction_invalid_emoji");
    }
    for i in 0..18 {
        let e = char::from_u32(0x1F600 + i).unwrap().to_string();
        let r = plan(
            &app,
            "POST",
            &path,
            &o.member_key,
            Some(json!({"emoji": e})),
        )
        .await;
        ok(&r, 200);
    }
    let r = plan(
        &app,
        "POST",
        &path,
        &o.member_key,
        Some(json!({"emoji": "🚀"})),
    )
    .await;
    r.assert_error(400, "reaction_limit_reached");
    assert_eq!(r.body["extra"]["limit"], 20, "{}", r.text);
    let agent = o.agent_key(&app, &["tasks:read", "tasks:write"]).await;
    let r = plan(&app, "POST", &path, &agent, Some(json!({"emoji": "👍"}))).await;
    r.assert_error(403, "insufficient_scope");

    let r = plan(&app, "GET", &format!("{path}?emoji=👍"), &agent, None).await;
    let page = ok(&r, 200);
    assert_eq!(page["count"], 1);
    let row = &page["results"][0];
    assert_eq!(
        (row["emoji"].clone(), row["user"]["uuid"].clone()),
        (json!("👍"), json!(o.admin))
    );
    assert!(row["created_at"].is_string());
    assert_eq!(row["executed_by_agent"], Value::Null);

    let encoded = "%F0%9F%91%8D";
    for _ in 0..2 {
        let r = plan(
            &app,
            "DELETE",
            &format!("{path}{encoded}/"),
            &o.admin_key,
            None,
        )
        .await;
        assert_eq!(r.status, 204, "{}", r.text);
    }
    let r = plan(
        &app,
        "GET",
        &format!("{path}?emoji=%F0%9F%91%8D"),
        &o.admin_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], 0);
}

#[actix_web::test]
async fn participants_and_subscription() {
    let (app, o) = PlanOrg::spawn().await;
    let b = uuid_of(&o.new_board(&app, "ENG").await);
    let (t, key, _) = task(&app, &o.member_key, &b, "t").await;
    let path = format!("tasks/{key}/participants/");
    let r = plan(
        &app,
        "POST",
        &path,
        &o.member_key,
        Some(json!({"user_uuid": o.admin})),
    )
    .await;
    let row = ok(&r, 201).clone();
    assert_eq!(row["member"]["uuid"], o.admin.as_str());
    assert!(row["member"]["name"].is_string());
    assert_eq!(
        (
            row["role"].clone(),
            row["source"].clone(),
            row["is_muted"].clone()
        ),
        (json!("participant"), json!("added"), json!(false))
    );
    assert_eq!(events(&app, &t, "participant_added").await, 1);
    let r = plan(
        &app,
        "POST",
        &path,
        &o.member_key,
        Some(json!({"user_uuid": o.admin, "is_muted": true, "role": "watcher"})),
    )
    .await;
    let row = ok(&r, 200);
    assert_eq!(
        (row["role"].clone(), row["is_muted"].clone()),
        (json!("watcher"), json!(true))
    );

    let agent = o.agent_key(&app, &["tasks:read", "tasks:write"]).await;
    let r = plan(
        &app,
        "POST",
        &path,
        &agent,
        Some(json!({"user_uuid": o.admin})),
    )
    .await;
    r.assert_error(403, "insufficient_scope");
    let r = plan(&app, "GET", &path, &agent, None).await;
    r.assert_error(403, "insufficient_scope");

    // A deactivated person, and one who cannot see a members-only board.
    let (gone, _) = o.person(&app, "member").await;
    app.deactivate(&gone).await;
    let r = plan(
        &app,
        "POST",
        &path,
        &o.member_key,
        Some(json!({"user_uuid": gone})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["extra"]["parameter"], "user_uuid", "{}", r.text);
    assert_eq!(r.body["extra"]["uuids"], json!([gone]), "{}", r.text);
    let (stranger, stranger_key) = o.person(&app, "member").await;
    let secret = uuid_of(&o.new_board(&app, "SEC").await);
    let (_, hidden, _) = task(&app, &o.admin_key, &secret, "h").await;
    let r = plan(
        &app,
        "PATCH",
        "boards/SEC/",
        &o.admin_key,
        Some(json!({"visibility": "members"})),
    )
    .await;
    ok(&r, 200);
    let r = plan(
        &app,
        "POST",
        &format!("tasks/{hidden}/participants/"),
        &o.admin_key,
        Some(json!({"user_uuid": stranger})),
    )
    .await;
    r.assert_error(400, "participant_cannot_access_board");
    let r = plan(
        &app,
        "POST",
        &format!("tasks/{hidden}/subscription/"),
        &stranger_key,
        None,
    )
    .await;
    r.assert_error(404, "not_found");

    // The caller's own subscription.
    let sub = format!("tasks/{key}/subscription/");
    let r = plan(&app, "POST", &sub, &stranger_key, None).await;
    let s = ok(&r, 200);
    assert_eq!(s["subscribed"], true);
    assert_eq!(
        (
            s["participant"]["role"].clone(),
            s["participant"]["source"].clone()
        ),
        (json!("watcher"), json!("subscription"))
    );
    let r = plan(&app, "GET", &path, &o.member_key, None).await;
    assert_eq!(ok(&r, 200).as_array().unwrap().len(), 2);
    let r = plan(&app, "DELETE", &sub, &stranger_key, None).await;
    assert_eq!(ok(&r, 200)["subscribed"], false);
    let r = plan(
        &app,
        "DELETE",
        &format!("{path}{}/", o.admin),
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text);
    let r = plan(&app, "GET", &path, &o.member_key, None).await;
    assert!(ok(&r, 200).as_array().unwrap().is_empty());
}

#[actix_web::test]
async fn task_labels_and_plan_label_doors() {
    let (app, o) = PlanOrg::spawn().await;
    let b = uuid_of(&o.new_board(&app, "ENG").await);
    let (t, key, v) = task(&app, &o.member_key, &b, "t").await;
    let mut ids = Vec::new();
    for (name, path) in [
        ("bug", "labels/".to_owned()),
        ("UI", "boards/ENG/labels/".to_owned()),
    ] {
        let r = plan(
            &app,
            "POST",
            &path,
            &o.member_key,
            Some(json!({"name": name, "color": "#aabbcc", "description": "d"})),
        )
        .await;
        let l = ok(&r, 201);
        assert_eq!(
            (
                l["name"].clone(),
                l["color"].clone(),
                l["is_archived"].clone()
            ),
            (json!(name), json!("#AABBCC"), json!(false))
        );
        ids.push(uuid_of(l));
    }
    let r = plan(
        &app,
        "POST",
        "labels/",
        &o.member_key,
        Some(json!({"name": "BUG"})),
    )
    .await;
    r.assert_error(409, "duplicate_name");
    let agent = o.agent_key(&app, &["tasks:read", "tasks:write"]).await;
    let r = plan(&app, "POST", "labels/", &agent, Some(json!({"name": "x"}))).await;
    r.assert_error(403, "insufficient_scope");

    let batch = format!("tasks/{key}/labels/batch/");
    let r = plan(
        &app,
        "POST",
        &batch,
        &agent,
        Some(json!({"mode": "add", "label_uuids": ids})),
    )
    .await;
    let set = ok(&r, 200)["labels"].as_array().unwrap().clone();
    assert_eq!(
        set.iter().map(|l| l["name"].clone()).collect::<Vec<_>>(),
        [json!("bug"), json!("UI")]
    );
    assert_eq!(set[0].as_object().unwrap().len(), 3, "uuid, name, color");
    assert_eq!(version(&app, &o.member_key, &t).await, v + 1);
    assert_eq!(events(&app, &t, "label_changed").await, 1);
    let unknown = uuid::Uuid::now_v7().to_string();
    let r = plan(
        &app,
        "POST",
        &batch,
        &agent,
        Some(json!({"mode": "remove", "label_uuids": [unknown]})),
    )
    .await;
    r.assert_error(404, "not_found");
    assert_eq!(r.body["extra"]["uuids"], json!([unknown]));
    let r = plan(
        &app,
        "POST",
        &batch,
        &agent,
        Some(json!({"mode": "swap", "label_uuids": []})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);

    // Archive through PATCH (creator), then it is refused where new.
    let r = plan(
        &app,
        "PATCH",
        &format!("labels/{}/", ids[1]),
        &o.member_key,
        Some(json!({"is_archived": true, "color": ""})),
    )
    .await;
    let l = ok(&r, 200);
    assert_eq!(
        (l["is_archived"].clone(), l["color"].clone()),
        (json!(true), json!("#4A90E2"))
    );
    let (_, other_key, _) = task(&app, &o.member_key, &b, "other").await;
    let r = plan(
        &app,
        "POST",
        &format!("tasks/{other_key}/labels/batch/"),
        &o.member_key,
        Some(json!({"mode": "replace", "label_uuids": [ids[1]]})),
    )
    .await;
    r.assert_error(400, "archived_label_not_assignable");
    let (_, stranger_key) = o.person(&app, "member").await;
    let r = plan(
        &app,
        "PATCH",
        &format!("labels/{}/", ids[0]),
        &stranger_key,
        Some(json!({"name": "mine"})),
    )
    .await;
    r.assert_error(403, "permission_denied");

    let r = plan(&app, "GET", "labels/", &agent, None).await;
    let page = ok(&r, 200);
    assert_eq!(page["count"], 1);
    assert_eq!(page["results"][0]["description"], "d");
    let r = plan(
        &app,
        "GET",
        "labels/?include_archived=true&search=u",
        &agent,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], 2);
    let r = plan(&app, "GET", "boards/ENG/labels/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200).as_array().unwrap().len(), 1);
    let r = plan(&app, "GET", "boards/NOPE/labels/", &o.member_key, None).await;
    r.assert_error(404, "not_found");

    // Delete: admins only, and never while a task carries it.
    let r = plan(
        &app,
        "DELETE",
        &format!("labels/{}/", ids[0]),
        &o.member_key,
        None,
    )
    .await;
    r.assert_error(403, "permission_denied");
    let r = plan(
        &app,
        "DELETE",
        &format!("labels/{}/", ids[0]),
        &o.admin_key,
        None,
    )
    .await;
    r.assert_error(409, "label_in_use");
    let r = plan(
        &app,
        "POST",
        &batch,
        &o.member_key,
        Some(json!({"mode": "replace", "label_uuids": []})),
    )
    .await;
    assert_eq!(ok(&r, 200)["labels"], json!([]));
    let r = plan(
        &app,
        "DELETE",
        &format!("labels/{}/", ids[0]),
        &o.admin_key,
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text);
    // The labels' own doors still do not take `tasks`.
    let r = app
        .send(
            "GET",
            &format!("/v1/tasks/{t}/labels/"),
            &[("X-API-KEY", &o.admin_key)],
            None,
        )
        .await;
    assert_eq!(r.status, 404, "{}", r.text);
}
