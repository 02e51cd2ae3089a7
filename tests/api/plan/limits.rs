//! Plan over HTTP: the column limit (`column_too_large`, 422: a column holds at most 5,000
//! live tasks). Every way into a full column is refused with nothing stored, and the limit
//! counts live tasks only (an archived task frees its place).

use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};

use super::kit::{
    COLUMN_LIMIT, PlanOrg, create_task, digest, insert_tasks, number_after, ok, plan, states,
    uuid_of,
};
use super::races::{at_once, roomy_app};

/// The tables a task write touches (the tasks, their events, the boards with their next task
/// number): their digest equal before and after means nothing was written.
const TASK_TABLES: [&str; 3] = ["plan_tasks", "plan_task_events", "plan_boards"];

#[track_caller]
fn column_too_large(r: &Resp) {
    r.assert_error(422, "column_too_large");
    assert_eq!(r.body["extra"]["limit"], COLUMN_LIMIT, "{}", r.text);
}

/// The board's columns: (the default one, another one).
async fn columns(app: &TestApp, o: &PlanOrg, key: &str) -> (String, String) {
    let states = states(app, &o.admin_key, key).await;
    let default = states.iter().find(|s| s["is_default"] == true).unwrap();
    let other = states.iter().find(|s| s["is_default"] != true).unwrap();
    (uuid_of(default), uuid_of(other))
}

/// `n` live tasks (`KEY-1` … `KEY-n`) put straight into one column of the board, the board's
/// next number after them: what 5,000 creates would leave, without making them.
async fn fill(app: &TestApp, org: &str, board: &str, state: &str, n: i64) {
    let mut conn = app.database.pool().get().await.expect("connection");
    insert_tasks(&mut conn, org, board, state, 1, n).await;
    number_after(&mut conn, board, n).await;
}

#[actix_web::test]
async fn a_full_column_refuses_every_way_in() {
    let (app, o) = PlanOrg::spawn().await;
    let lim = uuid_of(&o.new_board(&app, "LIM").await);
    o.new_board(&app, "OPS").await;
    let (full, open) = columns(&app, &o, "LIM").await;
    fill(&app, &o.org, &lim, &full, COLUMN_LIMIT).await;
    let key = o.member_key.as_str();
    let post = |path: String, body: Option<Value>| {
        let app = &app;
        async move { plan(app, "POST", &path, key, body).await }
    };
    let create = |body: Value| post("tasks/".into(), Some(body));
    let one_more = json!({"title": "One more", "board": "LIM"});
    let t = create_task(
        &app,
        key,
        json!({"title": "Outside", "board": "LIM", "state": open}),
    )
    .await;
    assert_eq!(t["key"], format!("LIM-{}", COLUMN_LIMIT + 1));
    let outside = format!("tasks/LIM-{}/", COLUMN_LIMIT + 1);
    let t = create_task(&app, key, json!({"title": "Elsewhere", "board": "OPS"})).await;
    assert_eq!(t["key"], "OPS-1");
    let r = plan(
        &app,
        "GET",
        &format!("tasks/?board=LIM&state={full}&page_size=1"),
        key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], COLUMN_LIMIT);

    let before = digest(&app, &TASK_TABLES).await;
    // create: into the default column, and into the column named
    column_too_large(&create(one_more.clone()).await);
    column_too_large(&create(json!({"title": "One more", "board": "LIM", "state": full})).await);
    // move within the board, or change the column by PATCH
    let to_full = json!({"state": full});
    column_too_large(&post(format!("{outside}move/"), Some(to_full.clone())).await);
    let r = plan(&app, "PATCH", &outside, key, Some(to_full.clone())).await;
    column_too_large(&r);
    // move from another board
    let r = post(
        "tasks/OPS-1/move-board/".into(),
        Some(json!({"board": "LIM", "state": full})),
    )
    .await;
    column_too_large(&r);
    // a copy of a task of the full column goes into it
    column_too_large(&post("tasks/LIM-2/duplicate/".into(), Some(json!({}))).await);
    assert_eq!(
        digest(&app, &TASK_TABLES).await,
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
    ok(&post("tasks/LIM-1/archive/".into(), None).await, 200);
    let r = post(format!("{outside}move/"), Some(to_full)).await;
    assert_eq!(ok(&r, 200)["state"]["uuid"], full.as_str());
    let before = digest(&app, &TASK_TABLES).await;
    column_too_large(&post("tasks/LIM-1/restore/".into(), None).await);
    column_too_large(&create(one_more).await);
    assert_eq!(
        digest(&app, &TASK_TABLES).await,
        before,
        "a refused request stored nothing"
    );
}

/// Creates racing into a column with room for two: two are stored, numbered next without a
/// gap, the others refused; the column never holds more than the limit.
#[actix_web::test]
async fn racing_creates_never_overfill_a_column() {
    let app = roomy_app().await;
    let o = PlanOrg::new(&app).await;
    let lim = uuid_of(&o.new_board(&app, "LIM").await);
    let (full, open) = columns(&app, &o, "LIM").await;
    fill(&app, &o.org, &lim, &full, COLUMN_LIMIT - 2).await;
    let creates = (0..12)
        .map(|i| {
            let body = json!({"title": format!("Racer {i}"), "board": "LIM", "state": full});
            ("POST", "tasks/".to_owned(), body)
        })
        .collect();
    let answers = at_once(&app, &o.member_key, creates).await;
    let mut keys = Vec::new();
    for r in &answers {
        if r.status == 201 {
            keys.push(r.body["key"].as_str().unwrap().to_owned());
        } else {
            column_too_large(r);
        }
    }
    keys.sort();
    assert_eq!(
        keys,
        [
            format!("LIM-{}", COLUMN_LIMIT - 1),
            format!("LIM-{COLUMN_LIMIT}")
        ],
        "two creates stored, numbered next"
    );
    let r = plan(
        &app,
        "GET",
        &format!("tasks/?board=LIM&state={full}&page_size=1"),
        &o.member_key,
        None,
    )
    .await;
    assert_eq!(ok(&r, 200)["count"], COLUMN_LIMIT);
    // The refused creates took no number.
    let t = create_task(
        &app,
        &o.member_key,
        json!({"title": "Elsewhere", "board": "LIM", "state": open}),
    )
    .await;
    assert_eq!(t["key"], format!("LIM-{}", COLUMN_LIMIT + 1));
}
