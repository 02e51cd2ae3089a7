//! What the Plan tests share: an organization with the beta, people with credentials, the
//! structure the admin makes (projects, boards), tasks put straight into the tables, reading
//! answers and counting rows.

use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};

/// An organization with the Plan beta, an admin and a member, each with an API key.
pub struct PlanOrg {
    pub org: String,
    pub admin: String,
    pub admin_key: String,
    pub member: String,
    pub member_key: String,
}

impl PlanOrg {
    /// A paid (`business`) organization with the beta on.
    pub async fn new(app: &TestApp) -> PlanOrg {
        Self::on_plan(app, "business", true).await
    }

    /// A new app and, in it, [`PlanOrg::new`].
    pub async fn spawn() -> (TestApp, PlanOrg) {
        let app = TestApp::spawn().await;
        let o = Self::new(&app).await;
        (app, o)
    }

    pub async fn on_plan(app: &TestApp, plan: &str, beta: bool) -> PlanOrg {
        let (org, admin, _session, admin_key) = app.org_with_admin_key(plan).await;
        let r = app
            .operator(
                "PATCH",
                &format!("/operator/v1/organizations/{org}/"),
                Some(json!({"plan_beta": beta})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let member = app.create_user(&org, "member").await;
        let member_key = key_for(app, &member, json!({"name": "member key"})).await;
        PlanOrg {
            org,
            admin,
            admin_key,
            member,
            member_key,
        }
    }

    /// Another person of this organization with `role` and a key: (uuid, key).
    pub async fn person(&self, app: &TestApp, role: &str) -> (String, String) {
        let user = app.create_user(&self.org, role).await;
        let key = key_for(app, &user, json!({"name": "key"})).await;
        (user, key)
    }

    /// An admin-made agent key (no person in Plan) with these scopes.
    pub async fn agent_key(&self, app: &TestApp, scopes: &[&str]) -> String {
        let session = app.session(&self.admin).await;
        let (_, key) = app
            .create_key(
                &session,
                json!({"name": "agent", "is_agent_key": true, "scopes": scopes}),
            )
            .await;
        key
    }

    /// A project named `name`, made by the admin: its uuid.
    pub async fn project(&self, app: &TestApp, name: &str) -> String {
        let body = json!({"name": name});
        let r = plan(app, "POST", "projects/", &self.admin_key, Some(body)).await;
        uuid_of(ok(&r, 201))
    }

    /// A board keyed `key` ("Board KEY") in `project`, made by the admin: its answer.
    pub async fn board(&self, app: &TestApp, project: &str, key: &str) -> Value {
        let body = json!({"name": format!("Board {key}"), "project": project, "key": key});
        let r = plan(app, "POST", "boards/", &self.admin_key, Some(body)).await;
        ok(&r, 201).clone()
    }

    /// A board keyed `key` on a project of its own ("Project KEY"): the board's answer.
    pub async fn new_board(&self, app: &TestApp, key: &str) -> Value {
        let project = self.project(app, &format!("Project {key}")).await;
        self.board(app, &project, key).await
    }
}

/// A task made with `key` from `body`: its answer.
pub async fn create_task(app: &TestApp, key: &str, body: Value) -> Value {
    let r = plan(app, "POST", "tasks/", key, Some(body)).await;
    ok(&r, 201).clone()
}

/// Task `task` (a key or a uuid) as `key` reads it.
pub async fn read_task(app: &TestApp, key: &str, task: &str) -> Value {
    let r = plan(app, "GET", &format!("tasks/{task}/"), key, None).await;
    ok(&r, 200).clone()
}

/// The columns of `board` (a uuid or a key) as `key` reads them, left to right.
pub async fn states(app: &TestApp, key: &str, board: &str) -> Vec<Value> {
    let r = plan(app, "GET", &format!("boards/{board}/states/"), key, None).await;
    ok(&r, 200).as_array().expect("list").clone()
}

/// The rows of a list answer: a bare array or a page's `results`.
#[track_caller]
pub fn rows(list: &Value) -> &Vec<Value> {
    list.as_array()
        .or_else(|| list["results"].as_array())
        .expect("a list or a page")
}

/// Live tasks a column holds at most (the spec's number, not the code's constant).
pub const COLUMN_LIMIT: i64 = 5_000;

/// `n` live tasks numbered from `first` put straight into column `state` on `conn` (what `n`
/// creates would leave, without making them; the board's next number is left as it is): inside
/// a transaction `conn` holds, they are nobody else's until it commits.
pub async fn insert_tasks(
    conn: &mut AsyncPgConnection,
    org: &str,
    board: &str,
    state: &str,
    first: i64,
    n: i64,
) {
    diesel::sql_query(
        "INSERT INTO plan_tasks (id, organization_id, board_id, number, state_id, title, rank) \
         SELECT gen_random_uuid(), $1::uuid, $2::uuid, g, $3::uuid, 'Filler ' || g, g * 1024 \
         FROM generate_series($4::bigint, $4::bigint + $5::bigint - 1) AS g",
    )
    .bind::<Text, _>(org)
    .bind::<Text, _>(board)
    .bind::<Text, _>(state)
    .bind::<BigInt, _>(first)
    .bind::<BigInt, _>(n)
    .execute(conn)
    .await
    .expect("insert tasks");
}

/// The board's next task number set after `last`: the numbers up to it, seeded by
/// [`insert_tasks`], are taken for a create.
pub async fn number_after(conn: &mut AsyncPgConnection, board: &str, last: i64) {
    diesel::sql_query("UPDATE plan_boards SET next_task_number = $2 + 1 WHERE id = $1::uuid")
        .bind::<Text, _>(board)
        .bind::<BigInt, _>(last)
        .execute(conn)
        .await
        .expect("next task number");
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// One number read behind the app's back: `sql` answers it as `n`, its `$1`, `$2`, … bound
/// to `binds` as text.
pub async fn count(app: &TestApp, sql: &str, binds: &[&str]) -> i64 {
    let mut query = diesel::sql_query(sql).into_boxed();
    for bind in binds {
        query = query.bind::<Text, _>(*bind);
    }
    let mut conn = app.database.pool().get().await.expect("connection");
    let c: Count = query.get_result(&mut conn).await.expect("count");
    c.n
}

#[derive(diesel::QueryableByName)]
struct Digest {
    #[diesel(sql_type = Text)]
    d: String,
}

/// A digest of every row of `tables`: equal before and after means nothing was written.
pub async fn digest(app: &TestApp, tables: &[&str]) -> String {
    let mut conn = app.database.pool().get().await.expect("connection");
    let mut all = String::new();
    for table in tables {
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

/// The body of an answer that must have this status.
#[track_caller]
pub fn ok(r: &Resp, status: u16) -> &Value {
    assert_eq!(r.status, status, "{}", r.text);
    &r.body
}

/// The `uuid` of an answered object.
pub fn uuid_of(v: &Value) -> String {
    v["uuid"].as_str().expect("uuid").to_owned()
}

/// A key of `user` (its own, made in their web session).
pub async fn key_for(app: &TestApp, user: &str, body: Value) -> String {
    let session = app.session(user).await;
    app.create_key(&session, body).await.1
}

/// A Plan call with an API key: `path` is below `/v1/plan/`.
pub async fn plan(app: &TestApp, method: &str, path: &str, key: &str, body: Option<Value>) -> Resp {
    app.send(
        method,
        &format!("/v1/plan/{path}"),
        &[("X-API-KEY", key)],
        body,
    )
    .await
}
