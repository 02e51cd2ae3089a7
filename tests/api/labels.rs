//! Organization labels (`/v1/labels/`), the labels forms, check-ins and workflows carry, and
//! private featured stars (`/v1/me/featured/`).

use diesel::QueryableByName;
use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::{ANY_ID, Resp, TestApp};
use uuid::Uuid;

/// A business organization with an admin, two members and a guest, each with an API key.
struct Org {
    id: String,
    admin: String,
    admin_key: String,
    member: String,
    member_key: String,
    other_member_key: String,
    guest_key: String,
}

impl Org {
    async fn new(app: &TestApp) -> Org {
        let (id, admin, session, admin_key) = app.org_with_admin_key("business").await;
        let member = app.create_user(&id, "member").await;
        let other_member = app.create_user(&id, "member").await;
        let guest = app.create_user(&id, "guest").await;
        let key_for = |user: String| {
            let session = session.clone();
            async move {
                app.create_key(&session, json!({"name": "k", "for_user_id": user}))
                    .await
                    .1
            }
        };
        Org {
            member_key: key_for(member.clone()).await,
            other_member_key: key_for(other_member).await,
            guest_key: key_for(guest).await,
            id,
            admin,
            admin_key,
            member,
        }
    }
}

impl Org {
    /// A form of the organization, made by its admin; answers its uuid.
    async fn form(&self, app: &TestApp, name: &str) -> String {
        let body = json!({
            "name": name,
            "questions": [{"question": "What shipped?", "short_question": "Shipped"}],
        });
        let r = call(
            app,
            &self.admin_key,
            "POST",
            "/v1/forms/create/",
            Some(body),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }

    /// A check-in of the organization asking its admin; answers its uuid.
    async fn checkin(&self, app: &TestApp, name: &str) -> String {
        let body = json!({
            "name": name,
            "schedule": {"days": [1], "time": "09:00", "timezone": "UTC"},
            "participants": {"user_uuids": [self.admin]},
            "questions": [{"question": "What did you do?", "question_type": "text", "short_question": "Done"}],
        });
        let r = call(
            app,
            &self.admin_key,
            "POST",
            "/v1/checkins/create/",
            Some(body),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }
}

async fn call(app: &TestApp, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
    app.send(method, path, &[("X-API-KEY", key)], body).await
}

/// Creates a label; returns its row.
async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let r = call(app, key, "POST", "/v1/labels/", Some(body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body
}

async fn get_label(app: &TestApp, key: &str, uuid: &str) -> Resp {
    call(app, key, "GET", &format!("/v1/labels/{uuid}/"), None).await
}

fn names(list: &Value) -> Vec<&str> {
    list["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect()
}

fn extra_uuids(r: &Resp) -> Vec<String> {
    let mut v: Vec<String> = r.body["extra"]["uuids"]
        .as_array()
        .unwrap_or_else(|| panic!("extra.uuids in {}", r.text))
        .iter()
        .map(|u| u.as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

#[derive(QueryableByName)]
struct Assignment {
    #[diesel(sql_type = Text)]
    entity_type: String,
    #[diesel(sql_type = SqlUuid)]
    entity_id: Uuid,
}

/// The stored `(entity_type, entity)` pairs carrying `label`, sorted.
async fn carriers(app: &TestApp, label: &str) -> Vec<(String, Uuid)> {
    let mut conn = app.database.pool().get().await.expect("connection");
    let rows: Vec<Assignment> = diesel::sql_query(
        "SELECT entity_type, entity_id FROM entity_labels WHERE label_id::text = $1 \
         ORDER BY entity_type, entity_id",
    )
    .bind::<Text, _>(label)
    .load(&mut conn)
    .await
    .expect("read entity_labels");
    rows.into_iter()
        .map(|r| (r.entity_type, r.entity_id))
        .collect()
}

/// Puts `label` on a form that is not there, behind the app's back (an assignment the label
/// keeps whatever happened to the entity).
pub(crate) async fn seed_assignment(app: &TestApp, org: &str, label: &str) -> Uuid {
    let entity = Uuid::now_v7();
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query(
        "INSERT INTO entity_labels (organization_id, entity_type, entity_id, label_id) \
         VALUES ($1::uuid, 'forms', $2, $3::uuid)",
    )
    .bind::<Text, _>(org)
    .bind::<SqlUuid, _>(entity)
    .bind::<Text, _>(label)
    .execute(&mut conn)
    .await
    .expect("seed an assignment");
    entity
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// How many rows `table` holds in the whole installation.
async fn stored_count(app: &TestApp, table: &str) -> i64 {
    let mut conn = app.database.pool().get().await.expect("connection");
    let c: Count = diesel::sql_query(format!("SELECT count(*) AS n FROM {table}"))
        .get_result(&mut conn)
        .await
        .expect("count rows");
    c.n
}

#[actix_web::test]
async fn entitlement_follows_the_role() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    for (key, expected) in [
        (
            &o.admin_key,
            json!({"entitled": true, "can_create": true, "can_manage_all": true, "can_hard_delete": true, "is_guest": false}),
        ),
        (
            &o.member_key,
            json!({"entitled": true, "can_create": true, "can_manage_all": false, "can_hard_delete": false, "is_guest": false}),
        ),
        (
            &o.guest_key,
            json!({"entitled": true, "can_create": false, "can_manage_all": false, "can_hard_delete": false, "is_guest": true}),
        ),
    ] {
        let r = call(&app, key, "GET", "/v1/labels/entitlement/", None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.body, expected);
    }
}

#[actix_web::test]
async fn a_label_is_created_read_changed_archived_and_deleted() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let created = create(
        &app,
        &o.member_key,
        json!({"name": "  Urgent ", "color": "#ff8800", "description": "Act now"}),
    )
    .await;
    let uuid = created["uuid"].as_str().unwrap().to_owned();
    assert_eq!(created["id"], uuid.as_str());
    assert_eq!(created["name"], "Urgent");
    assert_eq!(created["color"], "#FF8800");
    assert_eq!(created["description"], "Act now");
    assert_eq!(created["is_archived"], false);
    assert_eq!(created["usage"], json!({"total": 0}));
    assert_eq!(created["created_by"], o.member.as_str());
    assert!(created["created_at"].is_string() && created["updated_at"].is_string());
    let plain = create(&app, &o.member_key, json!({"name": "Plain"})).await;
    assert_eq!(
        (&plain["color"], &plain["description"]),
        (&json!("#4A90E2"), &json!(""))
    );

    let r = get_label(&app, &o.guest_key, &uuid).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, created);

    let r = call(
        &app,
        &o.member_key,
        "PATCH",
        &format!("/v1/labels/{uuid}/"),
        Some(json!({"name": "Very urgent", "description": ""})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (&r.body["name"], &r.body["color"], &r.body["description"]),
        (&json!("Very urgent"), &json!("#FF8800"), &json!(""))
    );
    assert_eq!(get_label(&app, &o.admin_key, &uuid).await.body, r.body);

    // Archive: idempotent, and archived labels leave the default list.
    for _ in 0..2 {
        let r = call(
            &app,
            &o.member_key,
            "POST",
            &format!("/v1/labels/{uuid}/archive/"),
            None,
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(
            (&r.body["name"], &r.body["is_archived"]),
            (&json!("Very urgent"), &json!(true))
        );
    }
    let live = call(
        &app,
        &o.member_key,
        "GET",
        "/v1/labels/?is_archived=false",
        None,
    )
    .await;
    assert_eq!(
        (live.body["count"].as_u64(), names(&live.body)),
        (Some(1), vec!["Plain"])
    );
    let all = call(
        &app,
        &o.member_key,
        "GET",
        "/v1/labels/?is_archived=true",
        None,
    )
    .await;
    assert_eq!(names(&all.body), ["Plain", "Very urgent"]);
    assert_eq!(all.body["results"][1]["is_archived"], true);
    // PATCH restores.
    let r = call(
        &app,
        &o.member_key,
        "PATCH",
        &format!("/v1/labels/{uuid}/"),
        Some(json!({"is_archived": false})),
    )
    .await;
    assert_eq!(r.body["is_archived"], false, "{}", r.text);
    assert_eq!(
        get_label(&app, &o.member_key, &uuid).await.body["is_archived"],
        false
    );

    let r = call(
        &app,
        &o.admin_key,
        "DELETE",
        &format!("/v1/labels/{uuid}/"),
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text);
    assert!(r.text.is_empty());
    get_label(&app, &o.admin_key, &uuid)
        .await
        .assert_error(404, "not_found");
    call(
        &app,
        &o.admin_key,
        "DELETE",
        &format!("/v1/labels/{uuid}/"),
        None,
    )
    .await
    .assert_error(404, "not_found");
    let all = call(
        &app,
        &o.admin_key,
        "GET",
        "/v1/labels/?is_archived=true",
        None,
    )
    .await;
    assert_eq!(names(&all.body), ["Plain"]);
}

#[actix_web::test]
async fn bad_label_input_is_refused_and_nothing_is_stored() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let existing = create(&app, &o.member_key, json!({"name": "Urgent"})).await;
    let uuid = existing["uuid"].as_str().unwrap();
    for (body, field) in [
        (json!({"name": ""}), "name"),
        (json!({"name": "   "}), "name"),
        (json!({"name": "x".repeat(51)}), "name"),
        (json!({"name": "a\nb"}), "name"),
        (json!({"color": "#fff"}), "name"),
        (json!({"name": "Ok", "color": "red"}), "color"),
        (json!({"name": "Ok", "color": "#12345G"}), "color"),
        (
            json!({"name": "Ok", "description": "d".repeat(501)}),
            "description",
        ),
        (json!({"name": 7}), "name"),
    ] {
        let r = call(
            &app,
            &o.member_key,
            "POST",
            "/v1/labels/",
            Some(body.clone()),
        )
        .await;
        r.assert_error(400, "params_validation_error");
        assert!(r.body["errors"][field].is_array(), "{body}: {}", r.text);
    }
    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/labels/",
        Some(json!({"name": "Ok", "colour": "#000000"})),
    )
    .await;
    r.assert_error(400, "unknown_field");
    assert_eq!(r.body["extra"]["parameter"], "colour");
    // Names are unique regardless of case, on create and on rename.
    call(
        &app,
        &o.admin_key,
        "POST",
        "/v1/labels/",
        Some(json!({"name": "URGENT"})),
    )
    .await
    .assert_error(409, "duplicate_name");
    let later = create(&app, &o.member_key, json!({"name": "Later"})).await;
    call(
        &app,
        &o.member_key,
        "PATCH",
        &format!("/v1/labels/{}/", later["uuid"].as_str().unwrap()),
        Some(json!({"name": "urgent", "color": "#000000"})),
    )
    .await
    .assert_error(409, "duplicate_name");
    call(
        &app,
        &o.member_key,
        "PATCH",
        &format!("/v1/labels/{uuid}/"),
        Some(json!({"color": "blue"})),
    )
    .await
    .assert_error(400, "params_validation_error");
    let all = call(
        &app,
        &o.admin_key,
        "GET",
        "/v1/labels/?is_archived=true",
        None,
    )
    .await;
    assert_eq!(names(&all.body), ["Later", "Urgent"]);
    assert_eq!(all.body["results"][0]["color"], "#4A90E2");
    assert_eq!(all.body["results"][1], existing);
    // Another organization may use the name.
    let (_, _, _, other_key) = app.org_with_admin_key("business").await;
    create(&app, &other_key, json!({"name": "urgent"})).await;
}

#[actix_web::test]
async fn members_change_their_own_labels_admins_all_guests_none() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let mine = create(&app, &o.member_key, json!({"name": "Mine"})).await;
    let theirs = create(&app, &o.other_member_key, json!({"name": "Theirs"})).await;
    let theirs_id = theirs["uuid"].as_str().unwrap();
    let patch = Some(json!({"color": "#000000"}));
    call(
        &app,
        &o.member_key,
        "PATCH",
        &format!("/v1/labels/{theirs_id}/"),
        patch.clone(),
    )
    .await
    .assert_error(403, "permission_denied");
    call(
        &app,
        &o.member_key,
        "POST",
        &format!("/v1/labels/{theirs_id}/archive/"),
        None,
    )
    .await
    .assert_error(403, "permission_denied");
    assert_eq!(get_label(&app, &o.admin_key, theirs_id).await.body, theirs);
    let r = call(
        &app,
        &o.admin_key,
        "PATCH",
        &format!("/v1/labels/{theirs_id}/"),
        patch,
    )
    .await;
    assert_eq!((r.status, &r.body["color"]), (200, &json!("#000000")));

    // Only admins delete (elevated only), even their own label for a member.
    let mine_id = mine["uuid"].as_str().unwrap();
    call(
        &app,
        &o.member_key,
        "DELETE",
        &format!("/v1/labels/{mine_id}/"),
        None,
    )
    .await
    .assert_error(403, "permission_denied");
    assert_eq!(get_label(&app, &o.member_key, mine_id).await.status, 200);

    // Guests read but write nothing.
    let r = call(&app, &o.guest_key, "GET", "/v1/labels/", None).await;
    assert_eq!((r.status, r.body["count"].as_u64()), (200, Some(2)));
    for (method, path, body) in [
        ("POST", "/v1/labels/".to_owned(), Some(json!({"name": "G"}))),
        (
            "PATCH",
            format!("/v1/labels/{mine_id}/"),
            Some(json!({"name": "G"})),
        ),
        ("POST", format!("/v1/labels/{mine_id}/archive/"), None),
        ("DELETE", format!("/v1/labels/{mine_id}/"), None),
        (
            "POST",
            format!("/v1/forms/{ANY_ID}/labels/"),
            Some(json!({"label_uuids": [mine_id]})),
        ),
        (
            "POST",
            "/v1/checkins/labels/batch/".to_owned(),
            Some(json!({"entity_uuids": [ANY_ID], "label_uuids": [mine_id], "mode": "add"})),
        ),
    ] {
        call(&app, &o.guest_key, method, &path, body)
            .await
            .assert_error(403, "guest_not_allowed");
    }
    assert_eq!(get_label(&app, &o.admin_key, mine_id).await.body, mine);
}

#[actix_web::test]
async fn a_label_in_use_is_not_deleted_but_can_be_archived() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let label = create(&app, &o.member_key, json!({"name": "Busy"})).await;
    let id = label["uuid"].as_str().unwrap();
    let first = seed_assignment(&app, &o.id, id).await;
    let second = seed_assignment(&app, &o.id, id).await;
    assert_eq!(
        get_label(&app, &o.admin_key, id).await.body["usage"],
        json!({"total": 2})
    );

    let r = call(
        &app,
        &o.admin_key,
        "DELETE",
        &format!("/v1/labels/{id}/"),
        None,
    )
    .await;
    r.assert_error(409, "label_in_use");
    assert_eq!(r.body["extra"]["usage_count"], 2);
    let mut expected = vec![("forms".to_owned(), first), ("forms".to_owned(), second)];
    expected.sort();
    assert_eq!(carriers(&app, id).await, expected);

    let r = call(
        &app,
        &o.admin_key,
        "POST",
        &format!("/v1/labels/{id}/archive/"),
        None,
    )
    .await;
    assert_eq!((r.status, &r.body["is_archived"]), (200, &json!(true)));
    assert_eq!(r.body["usage"]["total"], 2);
}

#[actix_web::test]
async fn another_organizations_labels_are_not_found() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let (_, _, _, other_key) = app.org_with_admin_key("business").await;
    let theirs = create(&app, &other_key, json!({"name": "Theirs"})).await;
    let id = theirs["uuid"].as_str().unwrap();
    for (method, path, body) in [
        ("GET", format!("/v1/labels/{id}/"), None),
        (
            "PATCH",
            format!("/v1/labels/{id}/"),
            Some(json!({"name": "Mine"})),
        ),
        ("POST", format!("/v1/labels/{id}/archive/"), None),
        ("DELETE", format!("/v1/labels/{id}/"), None),
        ("GET", "/v1/labels/not-a-uuid/".to_owned(), None),
    ] {
        call(&app, &o.admin_key, method, &path, body)
            .await
            .assert_error(404, "not_found");
    }
    let r = call(&app, &o.admin_key, "GET", "/v1/labels/", None).await;
    assert_eq!(r.body["count"], 0);
    assert_eq!(get_label(&app, &other_key, id).await.body, theirs);
}

#[actix_web::test]
async fn the_list_pages_with_limit_and_offset_and_searches() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    for i in 0..23 {
        create(
            &app,
            &o.member_key,
            json!({"name": format!("Label {i:02}")}),
        )
        .await;
    }
    create(&app, &o.member_key, json!({"name": "other"})).await;
    // Default: 20 per page, offset style, by name.
    let r = call(&app, &o.member_key, "GET", "/v1/labels/", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["count"], 24);
    assert_eq!(r.body["results"].as_array().unwrap().len(), 20);
    assert_eq!(names(&r.body)[0], "Label 00");
    let next = r.body["next"].as_str().unwrap();
    assert!(next.ends_with("/v1/labels/?limit=20&offset=20"), "{next}");
    assert!(r.body["previous"].is_null());
    let row = &r.body["results"][0];
    for field in [
        "uuid",
        "id",
        "name",
        "color",
        "description",
        "is_archived",
        "usage",
    ] {
        assert!(!row[field].is_null(), "{field} in {row}");
    }
    // What the CLI sends.
    let r = call(
        &app,
        &o.member_key,
        "GET",
        "/v1/labels/?limit=10&offset=20&is_archived=false",
        None,
    )
    .await;
    assert_eq!(
        names(&r.body),
        ["Label 20", "Label 21", "Label 22", "other"]
    );
    assert!(r.body["next"].is_null());
    assert!(
        r.body["previous"]
            .as_str()
            .unwrap()
            .ends_with("/v1/labels/?is_archived=false&limit=10&offset=10")
    );
    let r = call(
        &app,
        &o.member_key,
        "GET",
        "/v1/labels/?search=EL%201&limit=5",
        None,
    )
    .await;
    assert_eq!(r.body["count"], 10);
    assert_eq!(
        names(&r.body),
        ["Label 10", "Label 11", "Label 12", "Label 13", "Label 14"]
    );
    let long_search = format!("search={}", "a".repeat(257));
    for (query, code) in [
        ("limit=0", "invalid_filter_value"),
        ("offset=-1", "invalid_filter_value"),
        ("is_archived=maybe", "invalid_filter_value"),
        (long_search.as_str(), "search_query_too_long"),
    ] {
        call(
            &app,
            &o.member_key,
            "GET",
            &format!("/v1/labels/?{query}"),
            None,
        )
        .await
        .assert_error(400, code);
    }
}

#[actix_web::test]
async fn labelling_names_what_it_cannot_find_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let label = create(&app, &o.member_key, json!({"name": "A"})).await;
    let id = label["uuid"].as_str().unwrap();
    let (_, _, _, other_key) = app.org_with_admin_key("business").await;
    let theirs = create(&app, &other_key, json!({"name": "B"})).await;
    let theirs_id = theirs["uuid"].as_str().unwrap();
    let (w1, w2) = (Uuid::now_v7().to_string(), Uuid::now_v7().to_string());

    // Workflows have no table yet: every workflow uuid is not found.
    let r = call(
        &app,
        &o.member_key,
        "POST",
        &format!("/v1/workflows/{w1}/labels/"),
        Some(json!({"label_uuids": [id]})),
    )
    .await;
    r.assert_error(404, "not_found");
    assert_eq!(extra_uuids(&r), [w1.as_str()]);
    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/workflows/labels/batch/",
        Some(json!({"entity_uuids": [w1, w2, w1], "label_uuids": [id], "mode": "add"})),
    )
    .await;
    r.assert_error(404, "not_found");
    let mut expected = vec![w1.clone(), w2.clone()];
    expected.sort();
    assert_eq!(extra_uuids(&r), expected);

    // Labels are looked up first: unknown ones and other organizations' are named.
    let ghost = Uuid::now_v7().to_string();
    for path in [
        format!("/v1/forms/{ANY_ID}/labels/"),
        format!("/v1/checkins/{ANY_ID}/labels/"),
    ] {
        let r = call(
            &app,
            &o.member_key,
            "POST",
            &path,
            Some(json!({"label_uuids": [id, ghost, theirs_id]})),
        )
        .await;
        r.assert_error(404, "not_found");
        let mut expected = vec![ghost.clone(), theirs_id.to_owned()];
        expected.sort();
        assert_eq!(extra_uuids(&r), expected);
    }
    assert!(carriers(&app, id).await.is_empty());
    assert!(carriers(&app, theirs_id).await.is_empty());
}

#[actix_web::test]
async fn labelling_bodies_are_checked_and_bounded() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let label = create(&app, &o.member_key, json!({"name": "A"})).await;
    let id = label["uuid"].as_str().unwrap();
    let many = |n: usize| -> Vec<String> { (0..n).map(|_| Uuid::now_v7().to_string()).collect() };

    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/forms/labels/batch/",
        Some(json!({"entity_uuids": many(101), "label_uuids": [id], "mode": "add"})),
    )
    .await;
    r.assert_error(400, "too_many_items");
    assert_eq!(r.body["extra"]["limit"], 100);
    let r = call(
        &app,
        &o.member_key,
        "POST",
        &format!("/v1/checkins/{ANY_ID}/labels/"),
        Some(json!({"label_uuids": many(51)})),
    )
    .await;
    r.assert_error(400, "too_many_items");
    assert_eq!(r.body["extra"]["limit"], 50);
    for (path, body, field) in [
        (
            "/v1/forms/labels/batch/",
            json!({"entity_uuids": [ANY_ID], "label_uuids": [id], "mode": "toggle"}),
            "mode",
        ),
        (
            "/v1/forms/labels/batch/",
            json!({"entity_uuids": [ANY_ID], "label_uuids": [id]}),
            "mode",
        ),
        (
            "/v1/forms/labels/batch/",
            json!({"entity_uuids": ["nope"], "label_uuids": [id], "mode": "add"}),
            "entity_uuids.0",
        ),
        (
            "/v1/workflows/labels/batch/",
            json!({"label_uuids": [id], "mode": "add"}),
            "entity_uuids",
        ),
        (
            &format!("/v1/forms/{ANY_ID}/labels/") as &str,
            json!({}),
            "label_uuids",
        ),
        (
            &format!("/v1/forms/{ANY_ID}/labels/"),
            json!({"label_uuids": "x"}),
            "label_uuids",
        ),
    ] {
        let r = call(&app, &o.member_key, "POST", path, Some(body.clone())).await;
        r.assert_error(400, "params_validation_error");
        assert!(r.body["errors"][field].is_array(), "{body}: {}", r.text);
    }
    call(
        &app,
        &o.member_key,
        "POST",
        &format!("/v1/forms/{ANY_ID}/labels/"),
        Some(json!({"label_uuids": [], "labels": []})),
    )
    .await
    .assert_error(400, "unknown_field");
    // Not a collection that carries labels.
    call(
        &app,
        &o.member_key,
        "POST",
        &format!("/v1/kudos/{ANY_ID}/labels/"),
        Some(json!({"label_uuids": []})),
    )
    .await
    .assert_error(404, "not_found");
    assert!(carriers(&app, id).await.is_empty());
}

#[actix_web::test]
async fn featured_lists_by_type_and_refuses_what_it_cannot_find() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    for (query, name) in [
        ("forms", "forms"),
        ("automations", "automations"),
        ("checkins", "checkins"),
    ] {
        let r = call(
            &app,
            &o.guest_key,
            "GET",
            &format!("/v1/me/featured/?entity_type={query}"),
            None,
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.body, json!({"entity_type": name, "entity_uuids": []}));
    }
    for query in ["", "?entity_type=workflows", "?entity_type=kudos"] {
        call(
            &app,
            &o.member_key,
            "GET",
            &format!("/v1/me/featured/{query}"),
            None,
        )
        .await
        .assert_error(400, "invalid_filter_value");
    }
    // Workflows (`automations`) have no table yet: never found.
    let w = Uuid::now_v7().to_string();
    let r = call(
        &app,
        &o.member_key,
        "PUT",
        &format!("/v1/me/featured/automations/{w}/"),
        Some(json!({"featured": true})),
    )
    .await;
    r.assert_error(404, "not_found");
    assert_eq!(extra_uuids(&r), [w.as_str()]);
    // The path names the featured types only.
    call(
        &app,
        &o.member_key,
        "PUT",
        &format!("/v1/me/featured/workflows/{w}/"),
        Some(json!({"featured": true})),
    )
    .await
    .assert_error(404, "not_found");
    call(
        &app,
        &o.member_key,
        "PUT",
        &format!("/v1/me/featured/automations/{w}/"),
        Some(json!({"featured": "yes"})),
    )
    .await
    .assert_error(400, "params_validation_error");
    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/me/featured/batch/",
        Some(json!({"entity_type": "automations", "entity_uuids": [w], "featured": false})),
    )
    .await;
    r.assert_error(404, "not_found");
    let many: Vec<String> = (0..101).map(|_| Uuid::now_v7().to_string()).collect();
    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/me/featured/batch/",
        Some(json!({"entity_type": "forms", "entity_uuids": many, "featured": true})),
    )
    .await;
    r.assert_error(400, "too_many_items");
    assert_eq!(r.body["extra"]["limit"], 100);
    call(
        &app,
        &o.member_key,
        "POST",
        "/v1/me/featured/batch/",
        Some(json!({"entity_type": "workflows", "entity_uuids": [], "featured": true})),
    )
    .await
    .assert_error(400, "params_validation_error");
    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/me/featured/batch/",
        Some(json!({"entity_type": "forms", "entity_uuids": [], "featured": true})),
    )
    .await;
    assert_eq!(
        (r.status, &r.body),
        (200, &json!({"updated_entity_uuids": []}))
    );
    assert_eq!(stored_count(&app, "featured_entities").await, 0);
}

#[actix_web::test]
async fn free_plan_cli_sessions_are_refused_labels_and_stars() {
    // The spec's free-plan allow-list wins: labels and stars are not on it.
    let app = TestApp::spawn().await;
    let org = app.create_org("free").await;
    let admin = app.create_user(&org, "admin").await;
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{admin}/cli-tokens/"),
            None,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let bearer = format!("Bearer {}", r.body["token"].as_str().unwrap());
    for (method, path, body) in [
        ("GET", "/v1/labels/entitlement/", None),
        ("GET", "/v1/labels/", None),
        ("POST", "/v1/labels/", Some(json!({"name": "A"}))),
        ("GET", "/v1/me/featured/?entity_type=forms", None),
    ] {
        app.send(method, path, &[("Authorization", &bearer)], body)
            .await
            .assert_error(403, "plan_upgrade_required");
    }
    assert_eq!(stored_count(&app, "labels").await, 0);
}

/// `POST /v1/<collection>/<entity>/labels/`.
async fn set_labels(
    app: &TestApp,
    key: &str,
    collection: &str,
    entity: &str,
    labels: &[&str],
) -> Resp {
    call(
        app,
        key,
        "POST",
        &format!("/v1/{collection}/{entity}/labels/"),
        Some(json!({ "label_uuids": labels })),
    )
    .await
}

/// `POST /v1/<collection>/labels/batch/`.
async fn batch(
    app: &TestApp,
    key: &str,
    collection: &str,
    entities: &[&str],
    labels: &[&str],
    mode: &str,
) -> Resp {
    call(
        app,
        key,
        "POST",
        &format!("/v1/{collection}/labels/batch/"),
        Some(json!({"entity_uuids": entities, "label_uuids": labels, "mode": mode})),
    )
    .await
}

/// The stored carriers of `label` as `(entity_type, uuid text)`, sorted.
async fn carried_by(app: &TestApp, label: &str) -> Vec<(String, String)> {
    carriers(app, label)
        .await
        .into_iter()
        .map(|(kind, id)| (kind, id.to_string()))
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = items
        .iter()
        .map(|(k, e)| ((*k).to_owned(), (*e).to_owned()))
        .collect();
    v.sort();
    v
}

fn uuid_of(v: &Value) -> String {
    v["uuid"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn forms_and_check_ins_take_labels_whole_or_in_batches() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let a = uuid_of(
        &create(
            &app,
            &o.member_key,
            json!({"name": "a", "color": "#111111"}),
        )
        .await,
    );
    let b = uuid_of(&create(&app, &o.admin_key, json!({"name": "B", "color": "#222222"})).await);
    let (f1, f2) = (o.form(&app, "Release").await, o.form(&app, "Retro").await);
    let c1 = o.checkin(&app, "Standup").await;

    // Replace-set: the answer is the entity's whole set, by name; duplicates count once.
    let r = set_labels(&app, &o.member_key, "forms", &f1, &[&b, &a, &b]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"uuid": f1, "labels": [
            {"uuid": a, "name": "a", "color": "#111111"},
            {"uuid": b, "name": "B", "color": "#222222"},
        ]})
    );
    let r = set_labels(&app, &o.member_key, "checkins", &c1, &[&a]).await;
    assert_eq!(r.body["labels"][0]["uuid"], a.as_str(), "{}", r.text);
    assert_eq!(
        carried_by(&app, &a).await,
        pairs(&[("forms", &f1), ("checkins", &c1)])
    );
    assert_eq!(
        get_label(&app, &o.guest_key, &a).await.body["usage"]["total"],
        2
    );
    let r = set_labels(&app, &o.member_key, "forms", &f1, &[&b]).await;
    assert_eq!(r.body["labels"].as_array().unwrap().len(), 1);
    assert_eq!(carried_by(&app, &a).await, pairs(&[("checkins", &c1)]));
    let r = set_labels(&app, &o.member_key, "forms", &f1, &[]).await;
    assert_eq!(r.body, json!({"uuid": f1, "labels": []}));
    assert!(carried_by(&app, &b).await.is_empty());

    // A check-in is not a form, and another organization's form is not found.
    let r = set_labels(&app, &o.member_key, "forms", &c1, &[&a]).await;
    r.assert_error(404, "not_found");
    assert_eq!(extra_uuids(&r), [c1.as_str()]);
    let other = Org::new(&app).await;
    let foreign = other.form(&app, "Theirs").await;
    set_labels(&app, &o.member_key, "forms", &foreign, &[&a])
        .await
        .assert_error(404, "not_found");

    // Batches: how many entities' sets changed.
    let r = batch(
        &app,
        &o.member_key,
        "forms",
        &[&f1, &f2, &f1],
        &[&a, &b],
        "add",
    )
    .await;
    assert_eq!(
        (r.status, &r.body),
        (200, &json!({"updated_count": 2})),
        "{}",
        r.text
    );
    let r = batch(&app, &o.member_key, "forms", &[&f1, &f2], &[&a], "add").await;
    assert_eq!(r.body, json!({"updated_count": 0}));
    let r = batch(&app, &o.member_key, "forms", &[&f2], &[&a], "remove").await;
    assert_eq!(r.body, json!({"updated_count": 1}));
    assert_eq!(
        carried_by(&app, &a).await,
        pairs(&[("forms", &f1), ("checkins", &c1)])
    );
    let r = batch(&app, &o.member_key, "forms", &[&f1, &f2], &[&b], "replace").await;
    assert_eq!(r.body, json!({"updated_count": 1}));
    assert_eq!(carried_by(&app, &a).await, pairs(&[("checkins", &c1)]));
    assert_eq!(
        carried_by(&app, &b).await,
        pairs(&[("forms", &f1), ("forms", &f2)])
    );
    // One entity not found: 404 naming it, nothing changed.
    let r = batch(
        &app,
        &o.member_key,
        "forms",
        &[&f1, &foreign, &c1],
        &[&a],
        "add",
    )
    .await;
    r.assert_error(404, "not_found");
    let mut missing = vec![foreign.clone(), c1.clone()];
    missing.sort();
    assert_eq!(extra_uuids(&r), missing);
    assert_eq!(carried_by(&app, &a).await, pairs(&[("checkins", &c1)]));
    let r = batch(&app, &o.member_key, "checkins", &[&c1], &[], "replace").await;
    assert_eq!(r.body, json!({"updated_count": 1}));
    assert!(carried_by(&app, &a).await.is_empty());

    // A label on something cannot be deleted.
    let r = call(
        &app,
        &o.admin_key,
        "DELETE",
        &format!("/v1/labels/{b}/"),
        None,
    )
    .await;
    r.assert_error(409, "label_in_use");
    assert_eq!(r.body["extra"]["usage_count"], 2);
    assert_eq!(carried_by(&app, &b).await.len(), 2);
    let r = call(
        &app,
        &o.admin_key,
        "DELETE",
        &format!("/v1/labels/{a}/"),
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text);
}

#[actix_web::test]
async fn archived_labels_stay_where_they_are_but_go_nowhere_new() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let old = uuid_of(&create(&app, &o.member_key, json!({"name": "Old"})).await);
    let new = uuid_of(&create(&app, &o.member_key, json!({"name": "New"})).await);
    let (keeps, fresh) = (o.form(&app, "Keeps").await, o.form(&app, "Fresh").await);
    set_labels(&app, &o.member_key, "forms", &keeps, &[&old]).await;
    let r = call(
        &app,
        &o.member_key,
        "POST",
        &format!("/v1/labels/{old}/archive/"),
        None,
    )
    .await;
    assert_eq!(r.body["is_archived"], true, "{}", r.text);

    let r = set_labels(&app, &o.member_key, "forms", &fresh, &[&new, &old]).await;
    r.assert_error(400, "archived_label_not_assignable");
    assert_eq!(extra_uuids(&r), [old.as_str()]);
    for mode in ["add", "replace"] {
        batch(
            &app,
            &o.member_key,
            "forms",
            &[&keeps, &fresh],
            &[&old],
            mode,
        )
        .await
        .assert_error(400, "archived_label_not_assignable");
    }
    assert!(carried_by(&app, &new).await.is_empty());
    assert_eq!(carried_by(&app, &old).await, pairs(&[("forms", &keeps)]));

    // The form that has it keeps it while its set changes; taking it off always works.
    let r = set_labels(&app, &o.member_key, "forms", &keeps, &[&old, &new]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["labels"].as_array().unwrap().len(), 2);
    let r = batch(
        &app,
        &o.member_key,
        "forms",
        &[&keeps, &fresh],
        &[&old],
        "remove",
    )
    .await;
    assert_eq!(r.body, json!({"updated_count": 1}));
    assert!(carried_by(&app, &old).await.is_empty());
    assert_eq!(carried_by(&app, &new).await, pairs(&[("forms", &keeps)]));
}

/// `GET /v1/me/featured/?entity_type=<kind>` as `key` sees it.
async fn stars(app: &TestApp, key: &str, kind: &str) -> Vec<String> {
    let r = call(
        app,
        key,
        "GET",
        &format!("/v1/me/featured/?entity_type={kind}"),
        None,
    )
    .await;
    assert_eq!(
        (r.status, &r.body["entity_type"]),
        (200, &json!(kind)),
        "{}",
        r.text
    );
    r.body["entity_uuids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_owned())
        .collect()
}

#[actix_web::test]
async fn stars_are_private_to_each_person() {
    let app = TestApp::spawn().await;
    let o = Org::new(&app).await;
    let (f1, f2) = (o.form(&app, "Release").await, o.form(&app, "Retro").await);
    let c1 = o.checkin(&app, "Standup").await;

    let r = call(
        &app,
        &o.guest_key,
        "PUT",
        &format!("/v1/me/featured/forms/{f2}/"),
        Some(json!({"featured": true})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"entity_type": "forms", "uuid": f2, "is_featured": true})
    );
    // Idempotent.
    let r = call(
        &app,
        &o.guest_key,
        "PUT",
        &format!("/v1/me/featured/forms/{f2}/"),
        Some(json!({"featured": true})),
    )
    .await;
    assert_eq!(r.body["is_featured"], true);
    let r = call(
        &app,
        &o.guest_key,
        "POST",
        "/v1/me/featured/batch/",
        Some(json!({"entity_type": "forms", "entity_uuids": [f1, f2], "featured": true})),
    )
    .await;
    assert_eq!(r.body, json!({"updated_entity_uuids": [f1]}), "{}", r.text);
    // Oldest star first; per person and per type.
    assert_eq!(
        stars(&app, &o.guest_key, "forms").await,
        [f2.clone(), f1.clone()]
    );
    assert!(stars(&app, &o.member_key, "forms").await.is_empty());
    assert!(stars(&app, &o.guest_key, "checkins").await.is_empty());
    let r = call(
        &app,
        &o.member_key,
        "POST",
        "/v1/me/featured/batch/",
        Some(json!({"entity_type": "checkins", "entity_uuids": [c1], "featured": true})),
    )
    .await;
    assert_eq!(r.body, json!({"updated_entity_uuids": [c1]}));
    assert_eq!(stars(&app, &o.member_key, "checkins").await, [c1.as_str()]);

    // An archived form is still a form: its star stays.
    let r = call(
        &app,
        &o.admin_key,
        "DELETE",
        &format!("/v1/forms/{f1}/archive/"),
        None,
    )
    .await;
    assert!(r.status < 300, "{}", r.text);
    assert_eq!(
        stars(&app, &o.guest_key, "forms").await,
        [f2.clone(), f1.clone()]
    );

    // Unknown, foreign or mistyped entities: 404 naming them, nothing changed.
    let other = Org::new(&app).await;
    let foreign = other.form(&app, "Theirs").await;
    let r = call(
        &app,
        &o.guest_key,
        "POST",
        "/v1/me/featured/batch/",
        Some(json!({"entity_type": "forms", "entity_uuids": [f1, foreign, c1], "featured": false})),
    )
    .await;
    r.assert_error(404, "not_found");
    let mut missing = vec![foreign.clone(), c1.clone()];
    missing.sort();
    assert_eq!(extra_uuids(&r), missing);
    call(
        &app,
        &o.guest_key,
        "PUT",
        &format!("/v1/me/featured/checkins/{f1}/"),
        Some(json!({"featured": true})),
    )
    .await
    .assert_error(404, "not_found");
    assert_eq!(
        stars(&app, &o.guest_key, "forms").await,
        [f2.clone(), f1.clone()]
    );

    let r = call(
        &app,
        &o.guest_key,
        "PUT",
        &format!("/v1/me/featured/forms/{f2}/"),
        Some(json!({"featured": false})),
    )
    .await;
    assert_eq!(
        r.body,
        json!({"entity_type": "forms", "uuid": f2, "is_featured": false})
    );
    assert_eq!(stars(&app, &o.guest_key, "forms").await, [f1.as_str()]);
    assert_eq!(stored_count(&app, "featured_entities").await, 2);
}
