//! Plan over HTTP: entitlements, projects, boards and their columns: shapes, codes, visibility
//! (another organization's or a members-only object is 404), dry runs that write nothing, and
//! the task cascades of board and column archiving (a column's tasks go only where they fit:
//! `column_too_large`).

use diesel::sql_types::{BigInt, Text};
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};
use uuid::Uuid;

use super::kit::{
    COLUMN_LIMIT, PlanOrg, count, digest, insert_tasks, number_after, ok, plan, states, uuid_of,
};

/// The Plan tables a write here may touch: their digest equal before and after means nothing
/// was written.
const PLAN_TABLES: [&str; 7] = [
    "plan_projects",
    "plan_project_members",
    "plan_boards",
    "plan_board_keys",
    "plan_states",
    "plan_tasks",
    "plan_task_events",
];

/// A live task put straight into the table (tasks are another area's doors).
async fn insert_task(app: &TestApp, org: &str, board: &str, state: &str, number: i64) -> String {
    let id = Uuid::now_v7().to_string();
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query(
        "INSERT INTO plan_tasks (id, organization_id, board_id, number, state_id, title, rank) \
         VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5::uuid, 'A task', $4 * 1024)",
    )
    .bind::<Text, _>(&id)
    .bind::<Text, _>(org)
    .bind::<Text, _>(board)
    .bind::<BigInt, _>(number)
    .bind::<Text, _>(state)
    .execute(&mut conn)
    .await
    .expect("insert task");
    id
}

fn state_of<'a>(states: &'a [Value], name: &str) -> &'a Value {
    states.iter().find(|s| s["name"] == name).expect(name)
}

#[actix_web::test]
async fn entitlements_answer_whatever_the_beta_says() {
    let (app, o) = PlanOrg::spawn().await;
    o.new_board(&app, "ENG").await;
    let r = plan(&app, "GET", "entitlements/", &o.member_key, None).await;
    let e = ok(&r, 200);
    assert_eq!(e["enabled"], true);
    assert_eq!(e["boards"], json!({"used": 1, "limit": null}));
    assert_eq!(e["labels"]["enabled"], true);
    assert!(e["reason"].is_null());
    let off = PlanOrg::on_plan(&app, "business", false).await;
    let r = plan(&app, "GET", "entitlements/", &off.admin_key, None).await;
    let e = ok(&r, 200);
    assert_eq!(e["enabled"], false);
    assert!(e["reason"].is_string());
    // Every other door is behind the gate.
    let r = plan(&app, "GET", "boards/", &off.admin_key, None).await;
    assert_eq!(r.status, 402, "{}", r.text);
}

#[actix_web::test]
async fn projects_are_created_listed_and_changed() {
    let (app, o) = PlanOrg::spawn().await;
    let r = plan(
        &app,
        "POST",
        "projects/",
        &o.admin_key,
        Some(
            json!({"name": "Core", "description": "The core", "lead": o.member,
                    "health": "on_track", "start_date": "2026-01-01", "target_date": "2026-06-30"}),
        ),
    )
    .await;
    let p = ok(&r, 201).clone();
    assert_eq!(p["name"], "Core");
    assert_eq!(p["visibility"], "org");
    assert_eq!(p["health"], "on_track");
    assert_eq!(p["lead"]["uuid"], o.member.as_str());
    assert!(p["lead"]["name"].is_string());
    assert_eq!(
        (&p["start_date"], &p["target_date"]),
        (&json!("2026-01-01"), &json!("2026-06-30"))
    );
    assert_eq!(p["board_count"], 0);
    assert_eq!(p["is_archived"], false);
    assert!(p.get("progress").is_none(), "progress only when asked");
    let id = uuid_of(&p);
    // Names are unique in any case.
    let r = plan(
        &app,
        "POST",
        "projects/",
        &o.admin_key,
        Some(json!({"name": "cORE"})),
    )
    .await;
    r.assert_error(409, "project_name_conflict");
    let r = plan(
        &app,
        "POST",
        "projects/",
        &o.admin_key,
        Some(json!({"name": "Later", "start_date": "2026-05-01", "target_date": "2026-01-01"})),
    )
    .await;
    r.assert_error(400, "invalid_date_range");
    // Lists: envelope, progress on demand (null: nothing to measure), search.
    let r = plan(
        &app,
        "GET",
        "projects/?include=progress",
        &o.member_key,
        None,
    )
    .await;
    let list = ok(&r, 200);
    assert_eq!(list["count"], 1);
    assert!(list["results"][0]["progress"].is_null());
    assert!(
        list["results"][0]
            .as_object()
            .unwrap()
            .contains_key("progress")
    );
    let r = plan(&app, "GET", "projects/", &o.member_key, None).await;
    assert!(ok(&r, 200)["results"][0].get("progress").is_none());
    let r = plan(&app, "GET", "projects/?search=c", &o.member_key, None).await;
    r.assert_error(400, "search_query_too_short");
    let long = "x".repeat(257);
    let r = plan(
        &app,
        "GET",
        &format!("projects/?search={long}"),
        &o.member_key,
        None,
    )
    .await;
    r.assert_error(400, "search_query_too_long");
    let r = plan(&app, "GET", "projects/?search=zz", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["count"], 0);
    let r = plan(
        &app,
        "GET",
        "projects/?start_date=2026-05-01&end_date=2026-01-01",
        &o.member_key,
        None,
    )
    .await;
    r.assert_error(400, "invalid_date_range");
    // Update.
    let r = plan(
        &app,
        "PATCH",
        &format!("projects/{id}/"),
        &o.admin_key,
        Some(json!({"name": "Core 2", "lead": null, "health": "at_risk"})),
    )
    .await;
    let p = ok(&r, 200);
    assert_eq!(
        (&p["name"], &p["health"]),
        (&json!("Core 2"), &json!("at_risk"))
    );
    assert!(p["lead"].is_null());
    // Archive: a dry run writes nothing.
    let before = digest(&app, &PLAN_TABLES).await;
    let r = plan(
        &app,
        "POST",
        &format!("projects/{id}/archive/?dry_run=true"),
        &o.admin_key,
        None,
    )
    .await;
    let preview = ok(&r, 200);
    assert_eq!(preview["dry_run"], true);
    assert_eq!(preview["operation"], "project.archive");
    assert_eq!(preview["reversible"], true);
    assert_eq!(
        preview["restore_path"],
        format!("/v1/plan/projects/{id}/restore/")
    );
    assert_eq!(digest(&app, &PLAN_TABLES).await, before);
    let r = plan(
        &app,
        "POST",
        &format!("projects/{id}/archive/"),
        &o.admin_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["is_archived"], true);
    // Archived names are still taken.
    let r = plan(
        &app,
        "POST",
        "projects/",
        &o.admin_key,
        Some(json!({"name": "core 2"})),
    )
    .await;
    r.assert_error(409, "project_name_conflict");
    let r = plan(&app, "GET", "projects/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["count"], 0);
    let r = plan(
        &app,
        "POST",
        &format!("projects/{id}/restore/"),
        &o.admin_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["is_archived"], false);
    // Another organization's project is not found.
    let other = PlanOrg::new(&app).await;
    for (method, path) in [
        ("GET", format!("projects/{id}/")),
        ("PATCH", format!("projects/{id}/")),
        ("POST", format!("projects/{id}/archive/")),
    ] {
        let r = plan(&app, method, &path, &other.admin_key, Some(json!({}))).await;
        r.assert_error(404, "not_found");
    }
    // An agent key never holds structure rights.
    let agent = o.agent_key(&app, &["tasks:read", "tasks:write"]).await;
    let r = plan(
        &app,
        "POST",
        "projects/",
        &agent,
        Some(json!({"name": "Agent's"})),
    )
    .await;
    r.assert_error(403, "insufficient_scope");
}

#[actix_web::test]
async fn projects_are_reordered_by_org_admins() {
    let (app, o) = PlanOrg::spawn().await;
    let a = o.project(&app, "A").await;
    let b = o.project(&app, "B").await;
    let c = o.project(&app, "C").await;
    let names = |r: &Resp| {
        r.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let r = plan(
        &app,
        "POST",
        &format!("projects/{c}/reorder/"),
        &o.admin_key,
        Some(json!({"before": a})),
    )
    .await;
    ok(&r, 200);
    let r = plan(&app, "GET", "projects/", &o.member_key, None).await;
    assert_eq!(names(&r), ["C", "A", "B"]);
    let r = plan(
        &app,
        "POST",
        &format!("projects/{c}/reorder/"),
        &o.admin_key,
        Some(json!({"before": a, "after": b})),
    )
    .await;
    r.assert_error(400, "reorder_anchor_invalid");
    let r = plan(
        &app,
        "POST",
        &format!("projects/{c}/reorder/"),
        &o.admin_key,
        Some(json!({"after": c})),
    )
    .await;
    r.assert_error(400, "reorder_anchor_invalid");
    let r = plan(
        &app,
        "POST",
        &format!("projects/{a}/reorder/"),
        &o.member_key,
        Some(json!({})),
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.text);
    let r = plan(
        &app,
        "POST",
        &format!("projects/{c}/reorder/"),
        &o.admin_key,
        Some(json!({})),
    )
    .await;
    ok(&r, 200);
    let r = plan(&app, "GET", "projects/", &o.member_key, None).await;
    assert_eq!(names(&r), ["A", "B", "C"]);
}

#[actix_web::test]
async fn project_members_guard_members_only_projects() {
    let (app, o) = PlanOrg::spawn().await;
    let (_, other_key) = o.person(&app, "member").await;
    let r = plan(
        &app,
        "POST",
        "projects/",
        &o.member_key,
        Some(json!({"name": "Private", "visibility": "members"})),
    )
    .await;
    let id = uuid_of(ok(&r, 201));
    // Its creator is its first member; others do not see it; admins do.
    let r = plan(
        &app,
        "GET",
        &format!("projects/{id}/members/"),
        &o.member_key,
        None,
    )
    .await;
    let members = ok(&r, 200).as_array().unwrap().clone();
    assert_eq!(members.len(), 1);
    assert_eq!(members[0]["user"]["uuid"], o.member.as_str());
    assert_eq!(members[0]["role"], "member");
    let r = plan(&app, "GET", &format!("projects/{id}/"), &other_key, None).await;
    r.assert_error(404, "not_found");
    let r = plan(&app, "GET", "projects/", &other_key, None).await;
    assert_eq!(ok(&r, 200)["count"], 0);
    let r = plan(&app, "GET", &format!("projects/{id}/"), &o.admin_key, None).await;
    ok(&r, 200);
    // The last grant stays.
    let r = plan(
        &app,
        "DELETE",
        &format!("projects/{id}/members/{}/", o.member),
        &o.member_key,
        None,
    )
    .await;
    r.assert_error(409, "last_grant_cannot_be_removed");
    // Adding: exactly one of user_uuid and team_uuid; again is 200 with the same row.
    let r = plan(
        &app,
        "POST",
        &format!("projects/{id}/members/"),
        &o.member_key,
        Some(json!({})),
    )
    .await;
    r.assert_error(400, "invalid_filter_value");
    let body = json!({"user_uuid": o.admin, "team_uuid": o.admin});
    let r = plan(
        &app,
        "POST",
        &format!("projects/{id}/members/"),
        &o.member_key,
        Some(body),
    )
    .await;
    r.assert_error(400, "invalid_filter_value");
    let r = plan(
        &app,
        "POST",
        &format!("projects/{id}/members/"),
        &o.member_key,
        Some(json!({"user_uuid": o.admin})),
    )
    .await;
    let grant = ok(&r, 201).clone();
    let r = plan(
        &app,
        "POST",
        &format!("projects/{id}/members/"),
        &o.member_key,
        Some(json!({"user_uuid": o.admin})),
    )
    .await;
    assert_eq!(ok(&r, 200)["uuid"], grant["uuid"]);
    // PATCH inspects; the role is read-only.
    let path = format!("projects/{id}/members/{}/", o.admin);
    let r = plan(&app, "PATCH", &path, &o.member_key, Some(json!({}))).await;
    assert_eq!(ok(&r, 200)["user_uuid"], o.admin.as_str());
    let r = plan(
        &app,
        "PATCH",
        &path,
        &o.member_key,
        Some(json!({"role": "admin"})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let r = plan(&app, "DELETE", &path, &o.member_key, None).await;
    assert_eq!(r.status, 204, "{}", r.text);
    let r = plan(
        &app,
        "GET",
        &format!("projects/{id}/members/"),
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200).as_array().unwrap().len(), 1);
    // Members doors are for people.
    let agent = o.agent_key(&app, &["tasks:read", "tasks:write"]).await;
    let r = plan(
        &app,
        "GET",
        &format!("projects/{id}/members/"),
        &agent,
        None,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.text);
}

#[actix_web::test]
async fn boards_are_created_with_their_columns_and_keys() {
    let (app, o) = PlanOrg::spawn().await;
    let p = o.project(&app, "Core").await;
    let b = o.board(&app, &p, "eng").await;
    assert_eq!(b["key"], "ENG");
    assert_eq!(b["name"], "Board eng");
    assert_eq!(b["project"], json!({"uuid": p, "name": "Core"}));
    assert_eq!(
        (&b["visibility"], &b["estimate_scale"]),
        (&json!("org"), &json!("none"))
    );
    assert!(b["archive_after_days"].is_null());
    assert_eq!(b["is_archived"], false);
    let id = uuid_of(&b);
    let cols = states(&app, &o.member_key, "ENG").await;
    let shape: Vec<_> = cols
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["category"].as_str().unwrap(),
                s["position"].as_i64().unwrap(),
                s["is_default"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("Backlog", "backlog", 1, false),
            ("Todo", "todo", 2, true),
            ("In Progress", "in_progress", 3, false),
            ("Done", "done", 4, false),
            ("Canceled", "canceled", 5, false)
        ]
    );
    // Codes of creation.
    let body = |name: &str, key: &str| json!({"name": name, "project": p, "key": key});
    let r = plan(
        &app,
        "POST",
        "boards/",
        &o.admin_key,
        Some(body("Again", "ENG")),
    )
    .await;
    r.assert_error(409, "duplicate_board_key");
    let r = plan(
        &app,
        "POST",
        "boards/",
        &o.admin_key,
        Some(body("Bad", "1X")),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let r = plan(
        &app,
        "POST",
        "boards/",
        &o.admin_key,
        Some(json!({"name": "No key", "project": p})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let r = plan(
        &app,
        "POST",
        "boards/",
        &o.admin_key,
        Some(json!({"name": "X", "project": Uuid::now_v7(), "key": "XX"})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    // By uuid or key, in any case.
    for b in [id.as_str(), "ENG", "eng"] {
        let r = plan(&app, "GET", &format!("boards/{b}/"), &o.member_key, None).await;
        assert_eq!(ok(&r, 200)["uuid"], id.as_str());
    }
    // A re-key keeps the old key resolving and reserved.
    let r = plan(
        &app,
        "PATCH",
        &format!("boards/{id}/"),
        &o.admin_key,
        Some(json!({"key": "CORE", "estimate_scale": "fibonacci", "archive_after_days": 30})),
    )
    .await;
    let b = ok(&r, 200);
    assert_eq!(
        (&b["key"], &b["estimate_scale"], &b["archive_after_days"]),
        (&json!("CORE"), &json!("fibonacci"), &json!(30))
    );
    let r = plan(&app, "GET", "boards/ENG/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["key"], "CORE");
    let r = plan(
        &app,
        "POST",
        "boards/",
        &o.admin_key,
        Some(body("Steal", "ENG")),
    )
    .await;
    r.assert_error(409, "duplicate_board_key");
    let r = plan(
        &app,
        "PATCH",
        &format!("boards/{id}/"),
        &o.admin_key,
        Some(json!({"archive_after_days": 0})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    // Moving to another project: previewed, then done.
    let q = o.project(&app, "Other").await;
    let r = plan(
        &app,
        "GET",
        &format!("boards/CORE/move-preview/?project={q}"),
        &o.member_key,
        None,
    )
    .await;
    let m = ok(&r, 200);
    assert_eq!(m["from_project_uuid"], p.as_str());
    assert_eq!(m["to_project_uuid"], q.as_str());
    assert_eq!(
        (
            &m["tasks_count"],
            &m["tasks_with_foreign_milestone"],
            &m["goals_affected"]
        ),
        (&json!(0), &json!(0), &json!(0))
    );
    let r = plan(
        &app,
        "PATCH",
        &format!("boards/{id}/"),
        &o.admin_key,
        Some(json!({"project": q})),
    )
    .await;
    assert_eq!(ok(&r, 200)["project"]["uuid"], q.as_str());
    let r = plan(&app, "GET", &format!("projects/{q}/"), &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["board_count"], 1);
    // Lists.
    let r = plan(&app, "GET", "boards/?search=core", &o.member_key, None).await;
    let list = ok(&r, 200);
    assert_eq!(list["count"], 1);
    assert_eq!(list["results"][0]["key"], "CORE");
    let r = plan(&app, "GET", "boards/?search=x", &o.member_key, None).await;
    r.assert_error(400, "search_query_too_short");
    // Another organization sees nothing.
    let other = PlanOrg::new(&app).await;
    for path in [
        format!("boards/{id}/"),
        "boards/CORE/".to_owned(),
        format!("boards/{id}/states/"),
    ] {
        let r = plan(&app, "GET", &path, &other.admin_key, None).await;
        r.assert_error(404, "not_found");
    }
    let r = plan(&app, "GET", "boards/", &other.admin_key, None).await;
    assert_eq!(ok(&r, 200)["count"], 0);
    let r = plan(
        &app,
        "POST",
        "boards/",
        &other.admin_key,
        Some(json!({"name": "X", "project": p, "key": "XX"})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
}

#[actix_web::test]
async fn members_only_boards_are_not_found_by_others() {
    let (app, o) = PlanOrg::spawn().await;
    let (stranger, stranger_key) = o.person(&app, "member").await;
    let b = o.new_board(&app, "SEC").await;
    let id = uuid_of(&b);
    let r = plan(
        &app,
        "PATCH",
        "boards/SEC/",
        &o.member_key,
        Some(json!({"visibility": "members"})),
    )
    .await;
    assert_eq!(ok(&r, 200)["visibility"], "members");
    // The member who made it members-only is its first member.
    let r = plan(&app, "GET", "boards/SEC/members/", &o.member_key, None).await;
    let members = ok(&r, 200).as_array().unwrap().clone();
    assert_eq!(members.len(), 1);
    assert_eq!(members[0]["user"]["uuid"], o.member.as_str());
    for path in ["boards/SEC/", "boards/SEC/states/", "boards/SEC/members/"] {
        let r = plan(&app, "GET", path, &stranger_key, None).await;
        r.assert_error(404, "not_found");
    }
    let r = plan(&app, "GET", "boards/", &stranger_key, None).await;
    assert_eq!(ok(&r, 200)["count"], 0);
    let agent = o.agent_key(&app, &["tasks:read"]).await;
    let r = plan(&app, "GET", &format!("boards/{id}/"), &agent, None).await;
    r.assert_error(404, "not_found");
    let r = plan(&app, "GET", "boards/SEC/", &o.admin_key, None).await;
    ok(&r, 200);
    // Mentionables: those who see it.
    let r = plan(&app, "GET", "boards/SEC/mentionables/", &o.member_key, None).await;
    let people: Vec<_> = ok(&r, 200)
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["uuid"].as_str().unwrap().to_owned())
        .collect();
    assert!(people.contains(&o.member) && people.contains(&o.admin));
    assert!(!people.contains(&stranger));
    assert!(
        r.body
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["kind"] == "user")
    );
    // A grant opens it; again is 200 with the same row, which PATCH inspects.
    let grant_to = |who: &str| Some(json!({"user_uuid": who}));
    let r = plan(
        &app,
        "POST",
        "boards/SEC/members/",
        &o.member_key,
        grant_to(&stranger),
    )
    .await;
    let grant = ok(&r, 201).clone();
    assert_eq!(grant["user"]["uuid"], stranger.as_str());
    assert!(grant["team"].is_null() && grant["team_uuid"].is_null());
    let r = plan(
        &app,
        "POST",
        "boards/SEC/members/",
        &o.member_key,
        grant_to(&stranger),
    )
    .await;
    assert_eq!(ok(&r, 200)["uuid"], grant["uuid"]);
    let path = format!("boards/SEC/members/{stranger}/");
    let r = plan(&app, "PATCH", &path, &o.member_key, Some(json!({}))).await;
    assert_eq!(ok(&r, 200)["uuid"], grant["uuid"]);
    let r = plan(&app, "GET", "boards/SEC/", &stranger_key, None).await;
    ok(&r, 200);
    let r = plan(&app, "DELETE", &path, &o.member_key, None).await;
    assert_eq!(r.status, 204, "{}", r.text);
    let r = plan(
        &app,
        "DELETE",
        &format!("boards/SEC/members/{}/", o.member),
        &o.member_key,
        None,
    )
    .await;
    r.assert_error(409, "last_grant_cannot_be_removed");
    let r = plan(&app, "GET", "boards/SEC/", &stranger_key, None).await;
    r.assert_error(404, "not_found");
}

#[actix_web::test]
async fn board_archive_cascades_to_its_tasks() {
    let (app, o) = PlanOrg::spawn().await;
    let b = o.new_board(&app, "ENG").await;
    let id = uuid_of(&b);
    let todo = uuid_of(state_of(&states(&app, &o.member_key, "ENG").await, "Todo"));
    let t1 = insert_task(&app, &o.org, &id, &todo, 1).await;
    insert_task(&app, &o.org, &id, &todo, 2).await;
    let before = digest(&app, &PLAN_TABLES).await;
    let r = plan(
        &app,
        "POST",
        "boards/ENG/archive/?dry_run=true",
        &o.admin_key,
        None,
    )
    .await;
    let preview = ok(&r, 200);
    assert_eq!(preview["dry_run"], true);
    assert_eq!(preview["operation"], "board.archive");
    assert_eq!(preview["affects"]["tasks"], 2);
    assert_eq!(
        preview["restore_path"],
        format!("/v1/plan/boards/{id}/restore/")
    );
    assert_eq!(
        digest(&app, &PLAN_TABLES).await,
        before,
        "a dry run writes nothing"
    );
    let r = plan(&app, "GET", "entitlements/", &o.admin_key, None).await;
    assert_eq!(ok(&r, 200)["boards"]["used"], 1);
    let r = plan(&app, "POST", "boards/ENG/archive/", &o.admin_key, None).await;
    assert_eq!(ok(&r, 200)["is_archived"], true);
    let archived = format!(
        "SELECT count(*) AS n FROM plan_tasks WHERE board_id = '{id}' AND is_archived AND archived_with_board AND version = 2"
    );
    assert_eq!(count(&app, &archived, &[]).await, 2);
    let events = format!(
        "SELECT count(*) AS n FROM plan_task_events WHERE task_id = '{t1}' AND type = 'archived'"
    );
    assert_eq!(count(&app, &events, &[]).await, 1);
    let r = plan(&app, "GET", "boards/", &o.member_key, None).await;
    assert_eq!(ok(&r, 200)["count"], 0);
    let r = plan(
        &app,
        "GET",
        "boards/?include_archived=true",
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], 1);
    // Restoring the board leaves its tasks archived.
    let r = plan(&app, "POST", "boards/ENG/restore/", &o.admin_key, None).await;
    assert_eq!(ok(&r, 200)["is_archived"], false);
    assert_eq!(count(&app, &archived, &[]).await, 2);
}

#[actix_web::test]
async fn boards_are_reordered_visited_and_listed() {
    let (app, o) = PlanOrg::spawn().await;
    let p = o.project(&app, "Core").await;
    let q = o.project(&app, "Other").await;
    let a = uuid_of(&o.board(&app, &p, "AAA").await);
    let b = uuid_of(&o.board(&app, &p, "BBB").await);
    let keys = |r: &Resp| {
        r.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["key"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let r = plan(
        &app,
        "POST",
        "boards/BBB/reorder/",
        &o.admin_key,
        Some(json!({"before": a, "project": q})),
    )
    .await;
    assert_eq!(ok(&r, 200)["project"]["uuid"], q.as_str());
    let r = plan(&app, "GET", "boards/", &o.member_key, None).await;
    assert_eq!(keys(&r), ["BBB", "AAA"]);
    let r = plan(
        &app,
        "POST",
        "boards/BBB/reorder/",
        &o.admin_key,
        Some(json!({"before": a, "after": a})),
    )
    .await;
    r.assert_error(400, "reorder_anchor_invalid");
    let r = plan(
        &app,
        "POST",
        "boards/BBB/reorder/",
        &o.member_key,
        Some(json!({})),
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.text);
    // Visits feed the person's recents, latest first.
    for board in ["AAA", "BBB"] {
        let r = plan(
            &app,
            "POST",
            &format!("boards/{board}/visit/"),
            &o.member_key,
            None,
        )
        .await;
        assert_eq!(r.status, 204, "{}", r.text);
    }
    let r = plan(&app, "GET", "me/recents/", &o.member_key, None).await;
    let recents = ok(&r, 200).as_array().unwrap().clone();
    assert_eq!(recents.len(), 2);
    assert_eq!(recents[0]["board"], b.as_str());
    assert_eq!(recents[0]["key"], "BBB");
    assert!(recents[0]["visited_at"].is_string() && recents[0]["name"].is_string());
    let r = plan(&app, "GET", "me/recents/", &o.admin_key, None).await;
    assert_eq!(ok(&r, 200).as_array().unwrap().len(), 0);
    let agent = o.agent_key(&app, &["tasks:read"]).await;
    let r = plan(&app, "GET", "me/recents/", &agent, None).await;
    assert_eq!(r.status, 403, "{}", r.text);
}

#[actix_web::test]
async fn columns_are_added_changed_archived_and_reordered() {
    let (app, o) = PlanOrg::spawn().await;
    let b = o.new_board(&app, "ENG").await;
    let board_id = uuid_of(&b);
    // Added at position 2: the others shift.
    let r = plan(
        &app,
        "POST",
        "boards/ENG/states/",
        &o.admin_key,
        Some(json!({"name": "Review", "category": "in_progress", "position": 2, "color": "#AA00ff", "is_default": true})),
    )
    .await;
    let review = ok(&r, 201).clone();
    assert_eq!(
        (&review["position"], &review["is_default"], &review["color"]),
        (&json!(2), &json!(true), &json!("#aa00ff"))
    );
    let cols = states(&app, &o.member_key, "ENG").await;
    let names: Vec<_> = cols.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "Backlog",
            "Review",
            "Todo",
            "In Progress",
            "Done",
            "Canceled"
        ]
    );
    assert_eq!(cols.iter().filter(|s| s["is_default"] == true).count(), 1);
    let long = "x".repeat(49);
    let r = plan(
        &app,
        "POST",
        "boards/ENG/states/",
        &o.admin_key,
        Some(json!({"name": long, "category": "todo"})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let r = plan(
        &app,
        "POST",
        "boards/ENG/states/",
        &o.admin_key,
        Some(json!({"name": "X", "category": "nope"})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    // Update: name, color, position; the category never.
    let rid = uuid_of(&review);
    let r = plan(
        &app,
        "PATCH",
        &format!("boards/ENG/states/{rid}/"),
        &o.admin_key,
        Some(json!({"name": "QA", "position": 6})),
    )
    .await;
    let qa = ok(&r, 200);
    assert_eq!((&qa["name"], &qa["position"]), (&json!("QA"), &json!(6)));
    let r = plan(
        &app,
        "PATCH",
        &format!("boards/ENG/states/{rid}/"),
        &o.admin_key,
        Some(json!({"category": "done"})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    // A column with live tasks needs somewhere to send them.
    let cols = states(&app, &o.member_key, "ENG").await;
    let todo = uuid_of(state_of(&cols, "Todo"));
    let done = uuid_of(state_of(&cols, "Done"));
    let canceled = uuid_of(state_of(&cols, "Canceled"));
    let task = insert_task(&app, &o.org, &board_id, &todo, 1).await;
    let r = plan(
        &app,
        "POST",
        &format!("boards/ENG/states/{todo}/archive/"),
        &o.admin_key,
        None,
    )
    .await;
    r.assert_error(409, "state_in_use");
    let before = digest(&app, &PLAN_TABLES).await;
    let r = plan(
        &app,
        "POST",
        &format!("boards/ENG/states/{todo}/archive/?dry_run=true"),
        &o.admin_key,
        Some(json!({"migrate_to": done})),
    )
    .await;
    let preview = ok(&r, 200);
    assert_eq!(
        (&preview["operation"], &preview["affects"]["tasks"]),
        (&json!("state.archive"), &json!(1))
    );
    assert_eq!(
        preview["restore_path"],
        format!("/v1/plan/boards/{board_id}/states/{todo}/restore/")
    );
    assert_eq!(
        digest(&app, &PLAN_TABLES).await,
        before,
        "a dry run writes nothing"
    );
    let r = plan(
        &app,
        "POST",
        &format!("boards/ENG/states/{todo}/archive/"),
        &o.admin_key,
        Some(json!({"migrate_to": todo})),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let r = plan(
        &app,
        "POST",
        &format!("boards/ENG/states/{todo}/archive/"),
        &o.admin_key,
        Some(json!({"migrate_to": done})),
    )
    .await;
    assert_eq!(ok(&r, 200)["is_archived"], true);
    let moved = format!(
        "SELECT count(*) AS n FROM plan_tasks WHERE id = '{task}' AND state_id = '{done}' AND completed_at IS NOT NULL AND version = 2"
    );
    assert_eq!(count(&app, &moved, &[]).await, 1);
    let events = format!(
        "SELECT count(*) AS n FROM plan_task_events WHERE task_id = '{task}' AND type = 'moved'"
    );
    assert_eq!(count(&app, &events, &[]).await, 1);
    let cols = states(&app, &o.member_key, "ENG").await;
    assert!(cols.iter().all(|s| s["uuid"] != todo.as_str()));
    let positions: Vec<_> = cols
        .iter()
        .map(|s| s["position"].as_i64().unwrap())
        .collect();
    assert_eq!(positions, [1, 2, 3, 4, 5]);
    let r = plan(
        &app,
        "GET",
        "boards/ENG/states/?include_archived=true",
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200).as_array().unwrap().len(), 6);
    // The last live done column stays.
    let r = plan(
        &app,
        "POST",
        &format!("boards/ENG/states/{done}/archive/"),
        &o.admin_key,
        Some(json!({"migrate_to": canceled})),
    )
    .await;
    r.assert_error(400, "last_done_state");
    // Restore: back last; a live column is a no-op.
    let r = plan(
        &app,
        "POST",
        &format!("boards/ENG/states/{todo}/restore/"),
        &o.admin_key,
        None,
    )
    .await;
    let restored = ok(&r, 200);
    assert_eq!(
        (&restored["is_archived"], &restored["position"]),
        (&json!(false), &json!(6))
    );
    let r = plan(
        &app,
        "POST",
        &format!("boards/ENG/states/{todo}/restore/"),
        &o.admin_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["position"], 6);
    // Reorder: every live column exactly once.
    let cols = states(&app, &o.member_key, "ENG").await;
    let mut order: Vec<String> = cols.iter().map(uuid_of).collect();
    order.reverse();
    let r = plan(
        &app,
        "POST",
        "boards/ENG/states/reorder/",
        &o.admin_key,
        Some(json!({"order": order[1..]})),
    )
    .await;
    r.assert_error(400, "states_reorder_invalid");
    let mut twice = order.clone();
    twice[0] = twice[1].clone();
    let r = plan(
        &app,
        "POST",
        "boards/ENG/states/reorder/",
        &o.admin_key,
        Some(json!({"order": twice})),
    )
    .await;
    r.assert_error(400, "states_reorder_invalid");
    let r = plan(
        &app,
        "POST",
        "boards/ENG/states/reorder/",
        &o.admin_key,
        Some(json!({"order": order})),
    )
    .await;
    let listed: Vec<String> = ok(&r, 200)
        .as_array()
        .unwrap()
        .iter()
        .map(uuid_of)
        .collect();
    assert_eq!(listed, order);
    // Structure doors are not for keys without a person.
    let agent = o.agent_key(&app, &["tasks:read", "tasks:write"]).await;
    let r = plan(
        &app,
        "POST",
        "boards/ENG/states/",
        &agent,
        Some(json!({"name": "X", "category": "todo"})),
    )
    .await;
    r.assert_error(403, "insufficient_scope");
}

/// Tasks [`Backlogged::new`] puts in Backlog, numbered from 1.
const BACKLOG: i64 = 3_000;

/// Board `COL` with [`BACKLOG`] live tasks in Backlog, and In Progress, where Backlog's archive
/// moves them: what the column archive tests seed.
struct Backlogged {
    org: String,
    board: String,
    backlog: String,
    doing: String,
}

impl Backlogged {
    async fn new(app: &TestApp, o: &PlanOrg) -> Backlogged {
        let board = uuid_of(&o.new_board(app, "COL").await);
        let cols = states(app, &o.admin_key, "COL").await;
        let seeded = Backlogged {
            org: o.org.clone(),
            board,
            backlog: uuid_of(state_of(&cols, "Backlog")),
            doing: uuid_of(state_of(&cols, "In Progress")),
        };
        let mut conn = app.database.pool().get().await.expect("connection");
        insert_tasks(
            &mut conn,
            &seeded.org,
            &seeded.board,
            &seeded.backlog,
            1,
            BACKLOG,
        )
        .await;
        seeded
    }

    /// `n` live tasks put straight into In Progress on `conn`, numbered after Backlog's.
    async fn fill_doing(&self, conn: &mut AsyncPgConnection, n: i64) {
        insert_tasks(conn, &self.org, &self.board, &self.doing, BACKLOG + 1, n).await;
    }

    /// Backlog archived by `key`, its tasks moved to In Progress (`query`: "" or a dry run's).
    async fn archive(&self, app: &TestApp, key: &str, query: &str) -> Resp {
        let path = format!("boards/COL/states/{}/archive/{query}", self.backlog);
        let body = json!({"migrate_to": self.doing});
        plan(app, "POST", &path, key, Some(body)).await
    }

    /// The live tasks of (Backlog, In Progress), counted in the table.
    async fn live(&self, app: &TestApp) -> (i64, i64) {
        let sql =
            "SELECT count(*) AS n FROM plan_tasks WHERE state_id = $1::uuid AND NOT is_archived";
        (
            count(app, sql, &[&self.backlog]).await,
            count(app, sql, &[&self.doing]).await,
        )
    }
}

/// A connection of the test's database with a transaction open on it: what it writes is
/// nobody else's, and the rows it locks stay locked, until [`commit`].
async fn begin(app: &TestApp) -> Object<AsyncPgConnection> {
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query("BEGIN").execute(&mut conn).await.unwrap();
    conn
}

async fn commit(conn: &mut AsyncPgConnection) {
    diesel::sql_query("COMMIT").execute(conn).await.unwrap();
}

#[actix_web::test]
async fn a_column_archive_moves_its_tasks_only_where_they_fit() {
    let (app, o) = PlanOrg::spawn().await;
    let col = Backlogged::new(&app, &o).await;
    // 3,000 + 2,001: one more than a column holds.
    let mut conn = app.database.pool().get().await.expect("connection");
    col.fill_doing(&mut conn, COLUMN_LIMIT + 1 - BACKLOG).await;
    drop(conn);
    let before = digest(&app, &PLAN_TABLES).await;
    for query in ["?dry_run=true", ""] {
        let r = col.archive(&app, &o.admin_key, query).await;
        r.assert_error(422, "column_too_large");
        assert_eq!(r.body["extra"]["limit"], COLUMN_LIMIT, "{}", r.text);
        assert_eq!(
            digest(&app, &PLAN_TABLES).await,
            before,
            "a refused archive stores nothing"
        );
    }
    // An archived task frees its place: exactly 5,000 fit.
    let r = plan(&app, "POST", "tasks/COL-3001/archive/", &o.admin_key, None).await;
    ok(&r, 200);
    let r = col.archive(&app, &o.admin_key, "").await;
    assert_eq!(ok(&r, 200)["is_archived"], true);
    assert_eq!(col.live(&app).await, (0, COLUMN_LIMIT));
}

/// The archive's own read of the target's count may be stale: it checks the count again once
/// it holds it, with what the writers it waited for stored.
#[actix_web::test]
async fn a_column_archive_counts_the_writes_it_waited_for() {
    let (app, o) = PlanOrg::spawn().await;
    let col = Backlogged::new(&app, &o).await;
    let before = digest(&app, &PLAN_TABLES).await;
    // Another writer puts 2,001 tasks in In Progress and has not committed: the archive reads
    // room for its 3,000 there, and waits at the column's count.
    let mut holder = begin(&app).await;
    col.fill_doing(&mut holder, COLUMN_LIMIT + 1 - BACKLOG)
        .await;
    let release = async {
        let waiting = lock_waiters(&app, 1).await;
        commit(&mut holder).await;
        waiting
    };
    let (r, waiting) = tokio::join!(col.archive(&app, &o.admin_key, ""), release);
    assert_eq!(waiting, 1, "the archive waited for the other writer");
    r.assert_error(422, "column_too_large");
    assert_eq!(col.live(&app).await, (BACKLOG, COLUMN_LIMIT + 1 - BACKLOG));
    // What the other writer committed aside, nothing changed.
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query(format!(
        "DELETE FROM plan_tasks WHERE state_id = '{}'",
        col.doing
    ))
    .execute(&mut conn)
    .await
    .unwrap();
    drop(conn);
    assert_eq!(
        digest(&app, &PLAN_TABLES).await,
        before,
        "a refused archive stores nothing"
    );
}

/// Sessions of this test's database waiting on a lock, once at least `n` are (or after 10 s).
async fn lock_waiters(app: &TestApp, n: i64) -> i64 {
    let sql = "SELECT count(*) AS n FROM pg_stat_activity \
               WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let mut waiting = 0;
    for _ in 0..1000 {
        waiting = count(app, sql, &[]).await;
        if waiting >= n {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    waiting
}

/// A create checks its column's room against committed counts: while a column's archive is
/// moving tasks into that column and has not committed, a create into it waits for the archive
/// (the board row's lock, taken by both), and then finds the column full.
#[actix_web::test]
async fn a_create_waits_for_a_column_archive_moving_tasks_into_its_column() {
    let (app, o) = PlanOrg::spawn().await;
    let col = Backlogged::new(&app, &o).await;
    // 2,000 + the archive's 3,000: exactly a full column.
    let mut conn = app.database.pool().get().await.expect("connection");
    col.fill_doing(&mut conn, COLUMN_LIMIT - BACKLOG).await;
    // The seeded numbers are taken: a create numbers its task after them.
    number_after(&mut conn, &col.board, COLUMN_LIMIT).await;
    drop(conn);
    // Another transaction holds In Progress's count row, so the archive stops inside its
    // transaction, its tasks moved and not committed.
    let mut holder = begin(&app).await;
    diesel::sql_query(format!(
        "UPDATE plan_column_task_counts SET live_tasks = live_tasks WHERE state_id = '{}'",
        col.doing
    ))
    .execute(&mut holder)
    .await
    .unwrap();
    let create = async {
        let archive_waits = lock_waiters(&app, 1).await;
        let body = json!({"title": "One too many", "board": "COL", "state": col.doing});
        let create = plan(&app, "POST", "tasks/", &o.admin_key, Some(body));
        let release = async {
            let both_wait = lock_waiters(&app, 2).await;
            commit(&mut holder).await;
            both_wait
        };
        let (r, both_wait) = tokio::join!(create, release);
        (r, archive_waits, both_wait)
    };
    let (archived, (created, archive_waits, both_wait)) =
        tokio::join!(col.archive(&app, &o.admin_key, ""), create);
    assert_eq!(
        (archive_waits, both_wait),
        (1, 2),
        "the archive, then the create, waited"
    );
    assert_eq!(ok(&archived, 200)["is_archived"], true);
    created.assert_error(422, "column_too_large");
    assert_eq!(col.live(&app).await, (0, COLUMN_LIMIT));
}
