//! `/v1/kudos/`: giving (receivers, company values, the daily limit, `kudos.posted` in the same
//! transaction), anonymity, boosts, the caller's and the organization's lists, the wall of
//! fame, company values and their operator endpoint; every answer checked against what is
//! stored.

use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};
use time::OffsetDateTime;

/// An organization with an admin and three members (each with an API key), and another
/// organization with one person.
struct World {
    app: TestApp,
    org: String,
    admin: String,
    admin_key: String,
    ada: String,
    ada_key: String,
    bob: String,
    bob_key: String,
    cy: String,
    cy_key: String,
    other_org: String,
    outsider: String,
    outsider_key: String,
}

/// Adds a person named `first` `last` to `org`; returns their uuid.
pub(crate) async fn person(
    app: &TestApp,
    org: &str,
    first: &str,
    last: &str,
    role: &str,
) -> String {
    let email = format!("{}@example.com", uuid::Uuid::new_v4().simple());
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": email, "first_name": first, "last_name": last, "role": role})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

async fn key_of(app: &TestApp, session: &str, user: &str) -> String {
    app.create_key(session, json!({"name": "k", "for_user_id": user}))
        .await
        .1
}

async fn world() -> World {
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let admin = person(&app, &org, "Adele", "Admin", "admin").await;
    let session = app.session(&admin).await;
    let admin_key = key_of(&app, &session, &admin).await;
    let ada = person(&app, &org, "Ada", "Lovelace", "member").await;
    let bob = person(&app, &org, "Bob", "Stone", "member").await;
    let cy = person(&app, &org, "Cy", "Young", "member").await;
    let other_org = app.create_org("business").await;
    let outsider = person(&app, &other_org, "Otto", "Other", "admin").await;
    let outsider_session = app.session(&outsider).await;
    World {
        ada_key: key_of(&app, &session, &ada).await,
        bob_key: key_of(&app, &session, &bob).await,
        cy_key: key_of(&app, &session, &cy).await,
        outsider_key: key_of(&app, &outsider_session, &outsider).await,
        app,
        org,
        admin,
        admin_key,
        ada,
        bob,
        cy,
        other_org,
        outsider,
    }
}

impl World {
    async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
        self.app
            .send(method, path, &[("X-API-KEY", key)], body)
            .await
    }

    /// Gives kudos; asserts they were given.
    async fn give(&self, key: &str, body: Value) -> Value {
        let r = self.call(key, "POST", "/v1/kudos/", Some(body)).await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body
    }

    /// Every kudos of the organization, as its admin lists them (what is stored).
    async fn stored(&self) -> Vec<Value> {
        let r = self
            .call(
                &self.admin_key,
                "GET",
                "/v1/kudos/organization/?page_size=100",
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["results"].as_array().unwrap().clone()
    }

    async fn posted(&self) -> Vec<Value> {
        self.app.events(&self.org, Some("kudos.posted")).await
    }

    /// The uuids of a list answer's results.
    async fn listed(&self, key: &str, path: &str) -> Vec<String> {
        let r = self.call(key, "GET", path, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        ids(&r.body["results"])
    }

    async fn team(&self, name: &str, members: &[&str]) -> String {
        let r = self
            .call(
                &self.admin_key,
                "POST",
                "/v1/teams/",
                Some(json!({"name": name, "member_uuids": members})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }
}

fn ids(rows: &Value) -> Vec<String> {
    rows.as_array()
        .unwrap_or_else(|| panic!("expected a list: {rows}"))
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

fn names(people: &Value) -> Vec<&str> {
    people
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["full_name"].as_str().unwrap())
        .collect()
}

/// Asserts the shape of a kudos object.
#[track_caller]
fn assert_kudos_shape(k: &Value) {
    let keys: Vec<&str> = k.as_object().unwrap().keys().map(String::as_str).collect();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "boosted_by",
            "boosts",
            "by_dailybot",
            "company_value",
            "content",
            "created_at",
            "id",
            "is_anonymous",
            "metadata",
            "parent",
            "receivers",
            "user",
            "uuid"
        ]
    );
    assert_eq!(k["id"], k["uuid"]);
    assert!(uuid::Uuid::parse_str(k["id"].as_str().unwrap()).is_ok());
    assert_eq!(k["parent"], Value::Null);
    assert_eq!(k["metadata"], json!({}));
    assert!(
        OffsetDateTime::parse(
            k["created_at"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339
        )
        .is_ok()
    );
    for r in k["receivers"].as_array().unwrap() {
        assert_eq!(r.as_object().unwrap().len(), 2, "{{uuid, full_name}}: {r}");
    }
}

#[actix_web::test]
async fn kudos_are_given_stored_and_posted_in_one_go() {
    let w = world().await;
    let k = w
        .give(
            &w.ada_key,
            json!({
                "content": "  Great release!\nThanks.  ",
                "users_receivers": [w.cy, w.bob],
                "company_value": "TEAMWORK",
            }),
        )
        .await;
    assert_kudos_shape(&k);
    assert_eq!(
        k["user"],
        json!({"uuid": w.ada, "full_name": "Ada Lovelace", "image": null, "role": "member"})
    );
    assert_eq!(
        k["receivers"],
        json!([
            {"uuid": w.bob, "full_name": "Bob Stone"},
            {"uuid": w.cy, "full_name": "Cy Young"},
        ])
    );
    assert_eq!(k["content"], "Great release!\nThanks.");
    assert_eq!(k["company_value"]["name"], "Teamwork");
    assert_eq!(k["company_value"]["value"], "Teamwork");
    assert_eq!(k["company_value"]["emoji"], "🤝");
    assert_eq!(
        (
            &k["is_anonymous"],
            &k["by_dailybot"],
            &k["boosts"],
            &k["boosted_by"]
        ),
        (&json!(false), &json!(false), &json!(0), &json!([]))
    );

    // Stored as answered; the event carries the object as the admin sees it.
    let stored = w.stored().await;
    assert_eq!(stored, std::slice::from_ref(&k));
    let events = w.posted().await;
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(e["event"], "kudos.posted");
    assert_eq!(e["organization_uuid"], w.org);
    assert_eq!(e["object_uuid"], Value::Null);
    assert_eq!(e["event_timestamp"], k["created_at"]);
    assert_eq!(e["data"], json!({"kudos": stored[0]}));
    assert!(w.app.events(&w.other_org, None).await.is_empty());
}

#[actix_web::test]
async fn teams_and_the_merged_list_give_every_active_member_but_the_giver() {
    let w = world().await;
    let dan = person(&w.app, &w.org, "Dan", "Brown", "member").await;
    let team = w.team("Core", &[&w.ada, &w.bob, &dan]).await;
    w.app.deactivate(&dan).await;
    // As the vendor's CLI sends it: the merged list and the typed ones.
    let k = w
        .give(
            &w.ada_key,
            json!({
                "content": "Shipped",
                "receivers": [w.cy, team],
                "users_receivers": [w.cy],
                "teams_receivers": [team],
            }),
        )
        .await;
    assert_eq!(names(&k["receivers"]), ["Bob Stone", "Cy Young"]);
    // The merged list alone resolves people and teams too.
    let k = w
        .give(&w.cy_key, json!({"content": "Thanks", "receivers": [team]}))
        .await;
    assert_eq!(names(&k["receivers"]), ["Ada Lovelace", "Bob Stone"]);
    assert_eq!(w.stored().await.len(), 2);
    assert_eq!(w.posted().await.len(), 2);
}

#[actix_web::test]
async fn receivers_values_and_messages_that_do_not_resolve_store_nothing() {
    let w = world().await;
    let solo = w.team("Solo", &[&w.ada]).await;
    let r = w
        .call(
            &w.outsider_key,
            "POST",
            "/v1/teams/",
            Some(json!({"name": "Theirs", "member_uuids": [w.outsider]})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let theirs = r.body["uuid"].as_str().unwrap().to_owned();
    let nobody = uuid::Uuid::now_v7().to_string();
    let too_many: Vec<String> = (0..101).map(|_| nobody.clone()).collect();
    let cases = [
        (
            json!({"content": "Hi", "users_receivers": [nobody]}),
            400,
            "no_valid_users",
        ),
        (
            json!({"content": "Hi", "users_receivers": [w.outsider]}),
            400,
            "no_valid_users",
        ),
        (
            json!({"content": "Hi", "receivers": [nobody]}),
            400,
            "no_valid_users",
        ),
        (
            json!({"content": "Hi", "teams_receivers": [theirs]}),
            400,
            "no_valid_team",
        ),
        (
            json!({"content": "Hi", "users_receivers": [w.bob], "teams_receivers": [nobody]}),
            400,
            "no_valid_team",
        ),
        (
            json!({"content": "Hi", "users_receivers": [w.ada]}),
            400,
            "self_kudos_not_allowed",
        ),
        (
            json!({"content": "Hi", "teams_receivers": [solo]}),
            400,
            "no_users_found",
        ),
        (json!({"content": "Hi"}), 400, "no_users_found"),
        (
            json!({"content": "Hi", "receivers": []}),
            400,
            "no_users_found",
        ),
        (
            json!({"content": "Hi", "users_receivers": [w.bob], "company_value": "Kindness"}),
            400,
            "company_value_not_found",
        ),
        (
            json!({"users_receivers": [w.bob]}),
            400,
            "params_validation_error",
        ),
        (
            json!({"content": " \u{200B} ", "users_receivers": [w.bob]}),
            400,
            "params_validation_error",
        ),
        (
            json!({"content": "x".repeat(2001), "users_receivers": [w.bob]}),
            400,
            "params_validation_error",
        ),
        (
            json!({"content": "Hi", "users_receivers": ["bob"]}),
            400,
            "params_validation_error",
        ),
        (
            json!({"content": "Hi", "receivers": too_many}),
            400,
            "params_validation_error",
        ),
        (
            json!({"content": "Hi", "users_receivers": [w.bob], "is_anonymous": "yes"}),
            400,
            "params_validation_error",
        ),
        (
            json!({"content": "Hi", "users_receivers": [w.bob], "sender": w.ada}),
            400,
            "unknown_field",
        ),
    ];
    for (body, status, code) in cases {
        let r = w
            .call(&w.ada_key, "POST", "/v1/kudos/", Some(body.clone()))
            .await;
        r.assert_error(status, code);
        assert!(!r.text.contains("Lovelace"), "{body}");
    }
    let r = w
        .call(
            &w.ada_key,
            "POST",
            "/v1/kudos/",
            Some(json!({"content": "Hi", "users_receivers": ["bob"]})),
        )
        .await;
    assert!(
        r.body["errors"]["users_receivers.0"].is_array(),
        "{}",
        r.text
    );
    let r = w
        .call(
            &w.ada_key,
            "POST",
            "/v1/kudos/",
            Some(json!({"content": "Hi", "teams_receivers": [theirs]})),
        )
        .await;
    assert_eq!(r.body["extra"]["uuids"], json!([theirs]));
    assert_eq!(w.stored().await, Vec::<Value>::new());
    assert!(w.posted().await.is_empty());
}

/// Seconds from now to the next midnight at a fixed UTC offset of `hours`.
fn seconds_to_midnight(hours: i64) -> i64 {
    let local =
        OffsetDateTime::now_utc().to_offset(time::UtcOffset::from_hms(hours as i8, 0, 0).unwrap());
    let midnight = local
        .date()
        .next_day()
        .unwrap()
        .midnight()
        .assume_offset(local.offset());
    (midnight - local).whole_seconds()
}

#[actix_web::test]
async fn the_daily_limit_is_ten_kudos_per_local_day_then_406() {
    let w = world().await;
    // Kiritimati is UTC+14 all year: the giver's day is not UTC's.
    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &format!("/v1/users/{}/", w.ada),
            Some(json!({"timezone": "Pacific/Kiritimati"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let body = json!({"content": "Thanks", "users_receivers": [w.bob]});
    for _ in 0..10 {
        w.give(&w.ada_key, body.clone()).await;
    }
    let r = w
        .call(&w.ada_key, "POST", "/v1/kudos/", Some(body.clone()))
        .await;
    r.assert_error(406, "kudos_daily_limit_reached");
    assert_eq!(r.body["extra"]["limit"], 10);
    let retry_after = r.body["extra"]["retry_after"].as_i64().unwrap();
    let expected = seconds_to_midnight(14);
    assert!(
        (retry_after - expected).abs() <= 5,
        "retry_after {retry_after}, expected about {expected}"
    );
    assert_eq!(w.stored().await.len(), 10);
    assert_eq!(w.posted().await.len(), 10);
    // Another giver, and boosts, are not limited by Ada's day.
    let k = w
        .give(
            &w.bob_key,
            json!({"content": "Back at you", "users_receivers": [w.ada]}),
        )
        .await;
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &format!("/v1/kudos/{}/boost/", k["id"].as_str().unwrap()),
            None,
        )
        .await;
    r.assert_error(400, "self_kudos_not_allowed");
    let first = w.stored().await.last().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = w
        .call(
            &w.cy_key,
            "POST",
            &format!("/v1/kudos/{first}/boost/"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[actix_web::test]
async fn kudos_whose_event_cannot_be_written_are_not_stored() {
    let w = world().await;
    w.app.break_outbox().await;
    let r = w
        .call(
            &w.ada_key,
            "POST",
            "/v1/kudos/",
            Some(json!({"content": "Thanks", "users_receivers": [w.bob]})),
        )
        .await;
    r.assert_error(500, "internal_error");
    assert_eq!(w.stored().await, Vec::<Value>::new());
}

#[actix_web::test]
async fn anonymous_givers_are_shown_to_themselves_only() {
    let w = world().await;
    let k = w
        .give(
            &w.ada_key,
            json!({"content": "From a fan", "users_receivers": [w.bob], "is_anonymous": true}),
        )
        .await;
    assert_eq!(k["is_anonymous"], true);
    assert_eq!(k["user"]["uuid"], w.ada, "the giver sees themself");
    let id = k["id"].as_str().unwrap();
    let shown = |body: &Value| body["results"][0]["user"].clone();
    let r = w.call(&w.bob_key, "GET", "/v1/kudos/", None).await;
    assert_eq!((r.status, shown(&r.body)), (200, Value::Null));
    let r = w.call(&w.ada_key, "GET", "/v1/kudos/", None).await;
    assert_eq!(shown(&r.body)["uuid"], w.ada);
    let stored = w.stored().await;
    assert_eq!(
        (stored[0]["id"].as_str(), &stored[0]["user"]),
        (Some(id), &Value::Null)
    );
    let events = w.posted().await;
    assert_eq!(events[0]["data"]["kudos"]["user"], Value::Null);
    assert_eq!(events[0]["data"]["kudos"], stored[0]);
    // Nobody else finds them by their giver.
    let by_ada = format!("/v1/kudos/organization/?sender_uuid={}", w.ada);
    assert_eq!(w.listed(&w.admin_key, &by_ada).await, Vec::<String>::new());
    let named = "/v1/kudos/?search=lovelace";
    assert_eq!(w.listed(&w.bob_key, named).await, Vec::<String>::new());
    assert_eq!(w.listed(&w.ada_key, named).await, [id]);
    let r = w
        .call(&w.cy_key, "POST", &format!("/v1/kudos/{id}/boost/"), None)
        .await;
    assert_eq!((r.status, &r.body["user"]), (200, &Value::Null));
}

#[actix_web::test]
async fn the_callers_list_filters_pages_and_refuses_bad_parameters() {
    let w = world().await;
    let a_to_b = w
        .give(
            &w.ada_key,
            json!({"content": "Release notes", "users_receivers": [w.bob]}),
        )
        .await;
    let b_to_ac = w
        .give(
            &w.bob_key,
            json!({"content": "Design review", "users_receivers": [w.ada, w.cy]}),
        )
        .await;
    let c_to_b = w
        .give(
            &w.cy_key,
            json!({"content": "On-call help", "users_receivers": [w.bob]}),
        )
        .await;
    let id = |k: &Value| k["id"].as_str().unwrap().to_owned();
    // Without a filter: what the caller gave or received, newest first.
    assert_eq!(
        w.listed(&w.ada_key, "/v1/kudos/").await,
        [id(&b_to_ac), id(&a_to_b)]
    );
    assert_eq!(
        w.listed(&w.admin_key, "/v1/kudos/").await,
        Vec::<String>::new()
    );
    for (path, expected) in [
        (
            "/v1/kudos/?filter=kudos_received",
            vec![id(&c_to_b), id(&a_to_b)],
        ),
        (
            "/v1/kudos/?filter=KUDOS_RECEIVED",
            vec![id(&c_to_b), id(&a_to_b)],
        ),
        ("/v1/kudos/?filter=Kudos_Given", vec![id(&b_to_ac)]),
        (
            &format!("/v1/kudos/?sender_uuid={}", w.cy),
            vec![id(&c_to_b)],
        ),
        (
            &format!("/v1/kudos/?receiver_uuid={}", w.cy),
            vec![id(&b_to_ac)],
        ),
        ("/v1/kudos/?search=DESIGN", vec![id(&b_to_ac)]),
        ("/v1/kudos/?search=young", vec![id(&c_to_b), id(&b_to_ac)]),
        (
            "/v1/kudos/?start_date=2000-01-01&end_date=2000-12-31",
            vec![],
        ),
    ] {
        assert_eq!(w.listed(&w.bob_key, path).await, expected, "{path}");
    }
    let today = OffsetDateTime::now_utc().date();
    let span = format!("/v1/kudos/?start_date={today}&end_date={today}");
    // (UTC is the default zone; a test run across midnight would see a day change.)
    assert_eq!(w.listed(&w.bob_key, &span).await.len(), 3);

    // Paging keeps every filter in the links.
    let r = w
        .call(
            &w.bob_key,
            "GET",
            "/v1/kudos/?filter=kudos_received&page_size=1",
            None,
        )
        .await;
    assert_eq!(
        (r.body["count"].as_u64(), ids(&r.body["results"])),
        (Some(2), vec![id(&c_to_b)])
    );
    assert_eq!(
        r.body["next"],
        "https://api.teamcomm.test/v1/kudos/?filter=kudos_received&page=2&page_size=1"
    );
    let r = w
        .call(
            &w.bob_key,
            "GET",
            "/v1/kudos/?filter=kudos_received&limit=1&offset=1",
            None,
        )
        .await;
    assert_eq!(ids(&r.body["results"]), [id(&a_to_b)]);
    assert_eq!(r.body["next"], Value::Null);

    let long = "a".repeat(257);
    for (query, code, parameter) in [
        ("filter=received", "invalid_kudos_filter", "filter"),
        ("filter=kudos", "invalid_kudos_filter", "filter"),
        ("sender_uuid=bob", "invalid_sender_uuid", "sender_uuid"),
        ("receiver_uuid=42", "invalid_receiver_uuid", "receiver_uuid"),
        (&format!("search={long}"), "search_query_too_long", "search"),
        ("start_date=2026-13-01", "invalid_date_range", "start_date"),
        ("end_date=yesterday", "invalid_date_range", "end_date"),
        ("page=0", "invalid_filter_value", "page"),
    ] {
        for path in ["/v1/kudos/", "/v1/kudos/organization/"] {
            let r = w
                .call(&w.admin_key, "GET", &format!("{path}?{query}"), None)
                .await;
            r.assert_error(400, code);
            assert_eq!(r.body["extra"]["parameter"], parameter, "{query}");
        }
    }
    let r = w
        .call(&w.admin_key, "GET", "/v1/kudos/?filter=bad", None)
        .await;
    assert_eq!(
        r.body["extra"]["allowed"],
        json!(["kudos_received", "kudos_given"])
    );
    let r = w
        .call(
            &w.bob_key,
            "GET",
            "/v1/kudos/?start_date=2026-02-02&end_date=2026-02-01",
            None,
        )
        .await;
    r.assert_error(400, "invalid_date_range");
}

#[actix_web::test]
async fn the_organization_list_is_for_admins_with_an_api_key() {
    let w = world().await;
    let ours = w
        .give(
            &w.ada_key,
            json!({"content": "Ours", "users_receivers": [w.bob]}),
        )
        .await;
    let theirs_member = person(&w.app, &w.other_org, "Tia", "Them", "member").await;
    w.give(
        &w.outsider_key,
        json!({"content": "Theirs", "users_receivers": [theirs_member]}),
    )
    .await;
    let r = w
        .call(&w.ada_key, "GET", "/v1/kudos/organization/", None)
        .await;
    r.assert_error(403, "org_admin_required");
    let token = w
        .app
        .operator(
            "POST",
            &format!("/operator/v1/users/{}/cli-tokens/", w.admin),
            None,
        )
        .await;
    let bearer = format!("Bearer {}", token.body["token"].as_str().unwrap());
    let r = w
        .app
        .send(
            "GET",
            "/v1/kudos/organization/",
            &[("Authorization", &bearer)],
            None,
        )
        .await;
    r.assert_error(403, "insufficient_scope");
    // CLI sessions use the rest of the group.
    let r = w
        .app
        .send("GET", "/v1/kudos/", &[("Authorization", &bearer)], None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(w.stored().await, std::slice::from_ref(&ours));
    let r = w
        .call(
            &w.admin_key,
            "GET",
            "/v1/kudos/organization/?filter=kudos_given",
            None,
        )
        .await;
    assert_eq!(r.body["count"], 0, "relative to the admin");
    let r = w
        .call(&w.outsider_key, "GET", "/v1/kudos/organization/", None)
        .await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["content"], "Theirs");
}

#[actix_web::test]
async fn boosts_are_one_plus_one_per_other_person() {
    let w = world().await;
    let k = w
        .give(
            &w.ada_key,
            json!({"content": "Nice", "users_receivers": [w.bob]}),
        )
        .await;
    let path = format!("/v1/kudos/{}/boost/", k["id"].as_str().unwrap());
    let r = w.call(&w.cy_key, "POST", &path, None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_kudos_shape(&r.body);
    assert_eq!(r.body["boosts"], 1);
    assert_eq!(
        r.body["boosted_by"],
        json!([{"uuid": w.cy, "full_name": "Cy Young"}])
    );
    w.call(&w.cy_key, "POST", &path, None)
        .await
        .assert_error(409, "kudos_already_boosted");
    w.call(&w.ada_key, "POST", &path, None)
        .await
        .assert_error(409, "kudos_already_boosted");
    w.call(&w.bob_key, "POST", &path, None)
        .await
        .assert_error(400, "self_kudos_not_allowed");
    w.call(&w.outsider_key, "POST", &path, None)
        .await
        .assert_error(404, "not_found");
    let unknown = format!("/v1/kudos/{}/boost/", uuid::Uuid::now_v7());
    w.call(&w.cy_key, "POST", &unknown, None)
        .await
        .assert_error(404, "not_found");
    let r = w
        .call(&w.admin_key, "POST", &path, Some(json!({"extra": 1})))
        .await;
    assert_eq!(r.status, 200, "a body is ignored: {}", r.text);
    let stored = w.stored().await;
    assert_eq!(stored[0]["boosts"], 2);
    assert_eq!(names(&stored[0]["boosted_by"]), ["Cy Young", "Adele Admin"]);
    assert_eq!(w.posted().await.len(), 1, "a boost is not a posting");
}

#[actix_web::test]
async fn the_wall_of_fame_ranks_people_and_company_values() {
    let w = world().await;
    // Bob: two kudos; Cy: one kudos and one +1; Ada: one kudos.
    w.give(
        &w.ada_key,
        json!({"content": "a", "users_receivers": [w.bob], "company_value": "Teamwork"}),
    )
    .await;
    w.give(
        &w.cy_key,
        json!({"content": "b", "users_receivers": [w.bob], "company_value": "teamwork"}),
    )
    .await;
    let to_cy = w
        .give(
            &w.bob_key,
            json!({"content": "c", "users_receivers": [w.cy], "company_value": "Growth"}),
        )
        .await;
    w.call(
        &w.ada_key,
        "POST",
        &format!("/v1/kudos/{}/boost/", to_cy["id"].as_str().unwrap()),
        None,
    )
    .await;
    w.give(
        &w.bob_key,
        json!({"content": "d", "users_receivers": [w.ada], "is_anonymous": true}),
    )
    .await;

    let r = w
        .call(&w.cy_key, "GET", "/v1/kudos/wall-of-fame/?limit=2", None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let wall = &r.body;
    assert_eq!(
        wall["top_receiver"],
        json!({"user": {"uuid": w.bob, "full_name": "Bob Stone"}, "kudos_received": 2})
    );
    // Bob's signed kudos count once: his anonymous ones never do.
    assert_eq!(
        wall["top_giver"],
        json!({"user": {"uuid": w.ada, "full_name": "Ada Lovelace"}, "kudos_given": 1})
    );
    assert_eq!(
        wall["leaderboard_summary"],
        json!({"position": 1, "total": 3})
    );
    let dna: Vec<(&str, &str, u64, f64)> = wall["dna_distribution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["company_value"]["value"].as_str().unwrap(),
                d["company_value"]["emoji"].as_str().unwrap(),
                d["count"].as_u64().unwrap(),
                d["percentage"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        dna,
        [("Teamwork", "🤝", 2, 66.7), ("Growth", "🌱", 1, 33.3)]
    );
    let board = &wall["leaderboard"];
    assert_eq!(board["count"], 3);
    assert_eq!(
        board["results"],
        json!([
            {"position": 1, "user": {"uuid": w.bob, "full_name": "Bob Stone"}, "score": 2, "kudos_received": 2, "total_plus_kudos": 0},
            {"position": 1, "user": {"uuid": w.cy, "full_name": "Cy Young"}, "score": 2, "kudos_received": 1, "total_plus_kudos": 1},
        ])
    );
    assert_eq!(
        board["next"],
        "https://api.teamcomm.test/v1/kudos/wall-of-fame/?limit=2&offset=2"
    );
    let r = w
        .call(
            &w.admin_key,
            "GET",
            "/v1/kudos/wall-of-fame/?limit=2&offset=2",
            None,
        )
        .await;
    assert_eq!(r.body["leaderboard"]["results"][0]["position"], 3);
    assert_eq!(
        r.body["leaderboard"]["results"][0]["user"]["full_name"],
        "Ada Lovelace"
    );
    assert_eq!(
        r.body["leaderboard_summary"],
        json!({"position": null, "total": 3})
    );

    let r = w
        .call(
            &w.cy_key,
            "GET",
            "/v1/kudos/wall-of-fame/?start_date=2000-01-01&end_date=2000-01-02",
            None,
        )
        .await;
    assert_eq!(
        (
            &r.body["top_receiver"],
            &r.body["top_giver"],
            &r.body["leaderboard"]["count"]
        ),
        (&Value::Null, &Value::Null, &json!(0))
    );
    assert_eq!(r.body["dna_distribution"], json!([]));
    w.call(
        &w.cy_key,
        "GET",
        "/v1/kudos/wall-of-fame/?start_date=2026-02-02&end_date=2026-02-01",
        None,
    )
    .await
    .assert_error(400, "invalid_date_range");
    let r = w
        .call(&w.outsider_key, "GET", "/v1/kudos/wall-of-fame/", None)
        .await;
    assert_eq!(
        r.body["leaderboard_summary"],
        json!({"position": null, "total": 0})
    );
}

#[actix_web::test]
async fn company_values_start_with_defaults_and_the_operator_adds_more() {
    let w = world().await;
    let listed = |r: &Resp| -> Vec<(String, String)> {
        r.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                assert_eq!(v["name"], v["value"]);
                (
                    v["name"].as_str().unwrap().to_owned(),
                    v["emoji"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let r = w
        .call(&w.bob_key, "GET", "/v1/kudos/company-values/", None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["count"], 6);
    let defaults = listed(&r);
    assert_eq!(defaults[0], ("Customer focus".to_owned(), "💙".to_owned()));

    let path = format!("/operator/v1/organizations/{}/company-values/", w.org);
    let r = w
        .app
        .operator(
            "POST",
            &path,
            Some(json!({"name": " Kindness ", "emoji": "💛"})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let kindness = r.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        r.body,
        json!({"id": kindness, "name": "Kindness", "value": "Kindness", "emoji": "💛"})
    );
    let r = w
        .app
        .operator("POST", &path, Some(json!({"name": "KINDNESS"})))
        .await;
    assert_eq!(
        (r.body["id"].as_str(), &r.body["emoji"]),
        (Some(kindness.as_str()), &json!("⭐"))
    );
    let r = w
        .call(
            &w.bob_key,
            "GET",
            "/v1/kudos/company-values/?page_size=100",
            None,
        )
        .await;
    assert_eq!(r.body["count"], 7);
    assert!(listed(&r).contains(&("Kindness".to_owned(), "⭐".to_owned())));
    let r = w
        .call(
            &w.bob_key,
            "GET",
            "/v1/kudos/company-values/?page_size=2&page=2",
            None,
        )
        .await;
    assert_eq!(listed(&r), defaults[2..4]);
    // The new value is usable, by id too.
    let k = w
        .give(
            &w.ada_key,
            json!({"content": "Kind", "users_receivers": [w.bob], "company_value": kindness}),
        )
        .await;
    assert_eq!(k["company_value"]["name"], "Kindness");
    // Another organization does not have it.
    let r = w
        .call(
            &w.outsider_key,
            "POST",
            "/v1/kudos/",
            Some(json!({"content": "Hi", "users_receivers": [person(&w.app, &w.other_org, "Tia", "Them", "member").await], "company_value": kindness})),
        )
        .await;
    r.assert_error(400, "company_value_not_found");

    for (body, code) in [
        (json!({"name": ""}), "params_validation_error"),
        (
            json!({"name": "Care", "emoji": "a b"}),
            "params_validation_error",
        ),
        (
            json!({"name": "Care", "emoji": "x".repeat(33)}),
            "params_validation_error",
        ),
        (json!({"name": "Care", "colour": "red"}), "unknown_field"),
    ] {
        w.app
            .operator("POST", &path, Some(body))
            .await
            .assert_error(400, code);
    }
    let nowhere = format!(
        "/operator/v1/organizations/{}/company-values/",
        uuid::Uuid::now_v7()
    );
    w.app
        .operator("POST", &nowhere, Some(json!({"name": "Care"})))
        .await
        .assert_error(404, "not_found");
    w.call(&w.admin_key, "POST", &path, Some(json!({"name": "Care"})))
        .await
        .assert_error(401, "credential_absent");
    let r = w
        .call(
            &w.bob_key,
            "GET",
            "/v1/kudos/company-values/?page_size=100",
            None,
        )
        .await;
    assert_eq!(r.body["count"], 7, "nothing else was added");
}
