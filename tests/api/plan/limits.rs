//! Plan over HTTP: the column limit (`column_too_large`, 422: a column holds at most 5,000
//! live tasks). Every way into a full column is refused with nothing stored, and the limit
//! counts live tasks only (an archived task frees its place).

use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};

use super::kit::{PlanOrg, plan};

/// Live tasks a column holds at most (the spec's number, not the code's constant).
const COLUMN_LIMIT: i64 = 5_000;

#[track_caller]
fn ok(r: &Resp, status: u16) -> &Value {
    assert_eq!(r.status, status, "{}", r.text);
    &r.body
}

#[track_caller]
fn column_too_large(r: &Resp) {
    r.assert_error(422, "column_too_large");
    assert_eq!(r.body["extra"]["limit"], COLUMN_LIMIT, "{}", r.text);
}

#[derive(diesel::QueryableByName)]
struct Digest {
    #[diesel(sql_type = Text)]
    d: String,
}

/// A digest of every row of the tables a task write touches (the tasks, their events, the
/// boards with their next task number): equal before and after means nothing was written.
async fn digest(app: &TestApp) -> String {
    let mut conn = app.database.pool().get().await.expect("connection");
    let mut all = String::new();
    for table in ["plan_tasks", "plan_task_events", "plan_boards"] {
        let row: Digest = diesel::sql_query(format!(
            "SELECT coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') AS d FROM {table} x"
        ))
        .get_result(&mut conn)
        .await
        .expect("digest");
        all.push_str(&row.d);
    }
    all
}

/// A board `key` of a new project, made by the admin: its uuid.
async fn board(app: &TestApp, o: &PlanOrg, key: &str) -> String {
    let r = plan(
        app,
        "POST",
        "projects/",
        &o.admin_key,
        Some(json!({"name": format!("P {key}")})),
    )
    .await;
    let project = ok(&r, 201)["uuid"].as_str().unwrap().to_owned();
    let r = plan(
        app,
        "POST",
        "boards/",
        &o.admin_key,
        Some(json!({"name": format!("Board {key}"), "project": project, "key": key})),
    )
    .await;
    ok(&r, 201)["uuid"].as_str().unwrap().to_owned()
}

/// The board's columns: (the default one, another one).
async fn columns(app: &TestApp, o: &PlanOrg, key: &str) -> (String, String) {
    let r = plan(
        app,
        "GET",
        &format!("boards/{key}/states/"),
        &o.admin_key,
        None,
    )
    .await;
    let states = ok(&r, 200).as_array().unwrap().clone();
    let uuid = |s: &Value| s["uuid"].as_str().unwrap().to_owned();
    let default = states.iter().find(|s| s["is_default"] == true).unwrap();
    let other = states.iter().find(|s| s["is_default"] != true).unwrap();
    (uuid(default), uuid(other))
}

/// `n` live tasks (`KEY-1` … `KEY-n`) put straight into one column of the board, the board's
/// next number after them: what 5,000 creates would leave, without making them.
async fn fill(app: &TestApp, org: &str, board: &str, state: &str, n: i64) {
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query(
        "WITH filled AS (INSERT INTO plan_tasks (id, organization_id, board_id, number, state_id, \
         title, rank) SELECT gen_random_uuid(), $1::uuid, $2::uuid, g, $3::uuid, 'Filler ' || g, \
         g * 1024 FROM generate_series(1, $4) AS g) \
         UPDATE plan_boards SET next_task_number = $4 + 1 WHERE id = $2::uuid",
    )
    .bind::<Text, _>(org)
    .bind::<Text, _>(board)
    .bind::<Text, _>(state)
    .bind::<diesel::sql_types::BigInt, _>(n)
    .execute(&mut conn)
    .await
    .expect("fill the column");
}

#[actix_web::test]
async fn a_full_column_refuses_every_way_in() {
    let app = TestApp::spawn().await;
    let o = PlanOrg::new(&app).await;
    let lim = board(&app, &o, "LIM").await;
    board(&app, &o, "OPS").await;
    let (full, open) = columns(&app, &o, "LIM").await;
    fill(&app, &o.org, &lim, &full, COLUMN_LIMIT).await;
    let key = o.member_key.as_str();
    let r = plan(
        &app,
        "POST",
        "tasks/",
        key,
        Some(json!({"title": "Outside", "board": "LIM", "state": open})),
    )
    .await;
    assert_eq!(ok(&r, 201)["key"], format!("LIM-{}", COLUMN_LIMIT + 1));
    let outside = format!("tasks/LIM-{}/", COLUMN_LIMIT + 1);
    let r = plan(
        &app,
        "POST",
        "tasks/",
        key,
        Some(json!({"title": "Elsewhere", "board": "OPS"})),
    )
    .await;
    assert_eq!(ok(&r, 201)["key"], "OPS-1");
    let r = plan(
        &app,
        "GET",
        &format!("tasks/?board=LIM&state={full}&page_size=1"),
        key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], COLUMN_LIMIT);

    let before = digest(&app).await;
    // create: into the default column, and into the column named
    let r = plan(
        &app,
        "POST",
        "tasks/",
        key,
        Some(json!({"title": "One more", "board": "LIM"})),
    )
    .await;
    column_too_large(&r);
    let r = plan(
        &app,
        "POST",
        "tasks/",
        key,
        Some(json!({"title": "One more", "board": "LIM", "state": full})),
    )
    .await;
    column_too_large(&r);
    // move within the board, or change the column by PATCH
    let r = plan(
        &app,
        "POST",
        &format!("{outside}move/"),
        key,
        Some(json!({"state": full})),
    )
    .await;
    column_too_large(&r);
    let r = plan(&app, "PATCH", &outside, key, Some(json!({"state": full}))).await;
    column_too_large(&r);
    // move from another board
    let r = plan(
        &app,
        "POST",
        "tasks/OPS-1/move-board/",
        key,
        Some(json!({"board": "LIM", "state": full})),
    )
    .await;
    column_too_large(&r);
    // a copy of a task of the full column goes into it
    let r = plan(&app, "POST", "tasks/LIM-2/duplicate/", key, Some(json!({}))).await;
    column_too_large(&r);
    assert_eq!(
        digest(&app).await,
        before,
        "a refused request stored nothing"
    );
    let r = plan(&app, "GET", &outside, key, None).await;
    let t = ok(&r, 200);
    assert_eq!(
        (t["state"]["uuid"].as_str(), t["version"].as_i64()),
        (Some(open.as_str()), Some(1))
    );

    // The limit counts live tasks: an archived one frees its place, which a move then takes;
    // restoring the archived one would overfill the column.
    let r = plan(&app, "POST", "tasks/LIM-1/archive/", key, None).await;
    ok(&r, 200);
    let r = plan(
        &app,
        "POST",
        &format!("{outside}move/"),
        key,
        Some(json!({"state": full})),
    )
    .await;
    assert_eq!(ok(&r, 200)["state"]["uuid"], full.as_str());
    let before = digest(&app).await;
    column_too_large(&plan(&app, "POST", "tasks/LIM-1/restore/", key, None).await);
    let r = plan(
        &app,
        "POST",
        "tasks/",
        key,
        Some(json!({"title": "One more", "board": "LIM"})),
    )
    .await;
    column_too_large(&r);
    assert_eq!(
        digest(&app).await,
        before,
        "a refused request stored nothing"
    );
}
