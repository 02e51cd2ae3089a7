//! `/v1/forms/{uuid}/responses/`: submitting (members, anonymously, automations, guests),
//! listing with every filter, reading, editing, deleting, and the workflow (transitions, their
//! codes, history visibility, concurrent moves); each write's `forms.response.*` event in the
//! outbox, in the same transaction.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::Resp;

use crate::forms::{World, uuid_of, world};

/// A form with a workflow (Draft, QA, Done) whose responses the `see` people see and the
/// `movers` move.
async fn workflow_form(w: &World, extra: Value) -> Value {
    let mut config = json!({"workflow": {"enabled": true, "states": [
        {"label": "Draft", "color": "#cccccc"},
        {"label": "QA", "color": "#3498db"},
        {"label": "Done", "color": "#2ecc71"},
    ]}});
    config
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    w.form(&w.ada_key, "Release", config).await
}

fn first_question(form: &Value) -> String {
    form["questions"][0]["uuid"].as_str().unwrap().to_owned()
}

impl World {
    async fn submit(&self, key: &str, form: &Value, body: Value) -> Resp {
        self.call(
            key,
            "POST",
            &format!("/v1/forms/{}/responses/", uuid_of(form)),
            Some(body),
        )
        .await
    }

    /// A response of the owner of `key` answering the first question; returns it.
    async fn answer(&self, key: &str, form: &Value, text: &str) -> Value {
        let r = self
            .submit(key, form, json!({"content": {first_question(form): text}}))
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body
    }

    /// The uuids `key` lists with `query`.
    async fn listed(&self, key: &str, form: &Value, query: &str) -> Vec<String> {
        let r = self
            .call(
                key,
                "GET",
                &format!("/v1/forms/{}/responses/?{query}", uuid_of(form)),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{query}: {}", r.text);
        r.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(uuid_of)
            .collect()
    }

    fn response_path(&self, form: &Value, response: &Value) -> String {
        format!(
            "/v1/forms/{}/responses/{}/",
            uuid_of(form),
            uuid_of(response)
        )
    }

    async fn events(&self, kind: &str) -> Vec<Value> {
        self.app.events(&self.org, Some(kind)).await
    }
}

#[actix_web::test]
async fn a_member_response_is_stored_with_its_event() {
    let w = world().await;
    let f = w.form(&w.ada_key, "Retro", json!({})).await;
    let (q0, q1) = (
        first_question(&f),
        f["questions"][1]["uuid"].as_str().unwrap().to_owned(),
    );
    let r = w
        .submit(&w.bob_key, &f, json!({"content": {&q0: "  It shipped ", &q1: null}, "submission_source": "workflow:release"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let resp = &r.body;
    assert_eq!(resp["id"], resp["uuid"]);
    assert_eq!(resp["form_uuid"], uuid_of(&f));
    assert_eq!(resp["content"], json!({&q0: "It shipped"}));
    assert_eq!(resp["submission_source"], "member");
    assert_eq!(resp["submission_label"], "workflow:release");
    assert_eq!(
        resp["user"],
        json!({"uuid": w.bob, "full_name": "Bob Stone"})
    );
    assert_eq!(
        (resp["is_own"].clone(), resp["edited"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(resp["current_state"], Value::Null);
    assert_eq!(resp["allowed_transitions"], json!([]));
    assert_eq!(resp["state_history"], json!([]));
    assert_eq!(resp["can_change_state"], false);
    assert_eq!(resp["guest_user"], Value::Null);
    let read = w
        .call(&w.bob_key, "GET", &w.response_path(&f, resp), None)
        .await;
    assert_eq!(read.body, *resp);
    assert_eq!(w.stored(&uuid_of(&f)).await["response_count"], 1);
    let events = w.events("forms.response.created").await;
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(e["object_uuid"], uuid_of(&f));
    assert_eq!(
        e["data"]["form"],
        json!({"uuid": uuid_of(&f), "name": "Retro"})
    );
    assert_eq!(e["data"]["response"]["uuid"], resp["uuid"]);
    assert_eq!(e["data"]["response"]["content"], resp["content"]);
    assert_eq!(e["data"]["response"]["user"]["uuid"], w.bob);
    assert!(e["data"]["response"]["user"]["email"].is_string());
}

#[actix_web::test]
async fn answers_are_checked_and_paused_forms_take_none() {
    let w = world().await;
    let f = w.form(&w.ada_key, "Retro", json!({})).await;
    let q1 = f["questions"][1]["uuid"].as_str().unwrap().to_owned();
    let r = w
        .submit(
            &w.bob_key,
            &f,
            json!({"content": {&q1: "only the optional one"}}),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["content"].is_array(), "{}", r.text);
    assert_eq!(r.body["extra"]["uuids"], json!([first_question(&f)]));
    let r = w
        .submit(&w.bob_key, &f, json!({"content": {"nope": "x"}}))
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["content.nope"].is_array(), "{}", r.text);
    w.submit(&w.bob_key, &f, json!({}))
        .await
        .assert_error(400, "params_validation_error");
    w.submit(&w.bob_key, &f, json!({"content": {}, "extra": 1}))
        .await
        .assert_error(400, "unknown_field");
    let long = "x".repeat(513);
    let r = w
        .submit(
            &w.bob_key,
            &f,
            json!({"content": {first_question(&f): "a"}, "submission_source": long}),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    let r = w
        .call(
            &w.ada_key,
            "PATCH",
            &format!("/v1/forms/{}/config/", uuid_of(&f)),
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!(r.status, 200);
    w.submit(
        &w.bob_key,
        &f,
        json!({"content": {first_question(&f): "a"}}),
    )
    .await
    .assert_error(400, "form_not_accepting_responses");
    assert!(w.events("forms.response.created").await.is_empty());
    assert_eq!(w.stored(&uuid_of(&f)).await["response_count"], 0);
}

#[actix_web::test]
async fn anonymous_automation_and_guest_responses() {
    let w = world().await;
    let f = w
        .form(
            &w.ada_key,
            "Intake",
            json!({"allow_public_responses": true, "require_email_and_name": true}),
        )
        .await;
    let q = first_question(&f);
    // Anonymous: nobody sees who, no filter finds them, the event says nobody.
    let hidden = w
        .submit(
            &w.bob_key,
            &f,
            json!({"content": {&q: "secret"}, "anonymous": true}),
        )
        .await
        .body;
    assert_eq!(
        (hidden["submission_source"].clone(), hidden["user"].clone()),
        (json!("anonymous"), Value::Null)
    );
    let read = w
        .call(&w.ada_key, "GET", &w.response_path(&f, &hidden), None)
        .await;
    assert_eq!(
        (read.body["user"].clone(), read.body["is_own"].clone()),
        (Value::Null, json!(false))
    );
    assert!(
        w.listed(&w.ada_key, &f, &format!("user={}", w.bob))
            .await
            .is_empty()
    );
    assert!(
        w.listed(&w.ada_key, &f, "all=true&search=stone")
            .await
            .is_empty()
    );
    assert_eq!(w.listed(&w.bob_key, &f, "").await, [uuid_of(&hidden)]);
    assert_eq!(
        w.events("forms.response.created").await[0]["data"]["response"]["user"],
        Value::Null
    );
    // Automation, with the integration's guest identity.
    let bot = w
        .submit(&w.cy_key, &f, json!({"content": {&q: "deployed"}, "automation": true,
            "guest_user": {"full_name": "Release Bot", "email": "BOT@example.com"}, "submission_source": "ci"}))
        .await;
    assert_eq!(bot.status, 201, "{}", bot.text);
    assert_eq!(bot.body["submission_source"], "automation");
    assert_eq!(
        bot.body["guest_user"],
        json!({"full_name": "Release Bot", "email": "bot@example.com"})
    );
    assert_eq!(bot.body["user"], Value::Null);
    w.submit(
        &w.cy_key,
        &f,
        json!({"content": {&q: "x"}, "automation": true, "anonymous": true}),
    )
    .await
    .assert_error(400, "params_validation_error");
    w.submit(
        &w.cy_key,
        &f,
        json!({"content": {&q: "x"}, "guest_user": {"full_name": "Me"}}),
    )
    .await
    .assert_error(400, "params_validation_error");
    // Guests: a name and an e-mail where the form requires them.
    w.submit(&w.guest_key, &f, json!({"content": {&q: "hi"}}))
        .await
        .assert_error(400, "guest_user_required");
    w.submit(
        &w.guest_key,
        &f,
        json!({"content": {&q: "hi"}, "guest_user": {"full_name": "Gus"}}),
    )
    .await
    .assert_error(400, "guest_user_required");
    let guest = w
        .submit(&w.guest_key, &f, json!({"content": {&q: "hi"}, "guest_user": {"full_name": "Gus", "email": "gus@example.com"}}))
        .await;
    assert_eq!(guest.status, 201, "{}", guest.text);
    assert_eq!(guest.body["submission_source"], "public");
    assert!(
        w.listed(&w.ada_key, &f, &format!("submitter_user_ids={}", w.guest))
            .await
            .is_empty(),
        "a guest response shows its guest_user, never the person"
    );
    let closed = w.form(&w.ada_key, "Members only", json!({})).await;
    w.submit(
        &w.guest_key,
        &closed,
        json!({"content": {first_question(&closed): "hi"}}),
    )
    .await
    .assert_error(403, "guest_not_allowed");
    // By source.
    assert_eq!(
        w.listed(
            &w.ada_key,
            &f,
            "all=true&submission_sources=public,automation"
        )
        .await,
        [uuid_of(&guest.body), uuid_of(&bot.body)]
    );
    assert_eq!(
        w.listed(&w.ada_key, &f, "all=true&submission_sources=anonymous")
            .await,
        [uuid_of(&hidden)]
    );
    w.call(
        &w.ada_key,
        "GET",
        &format!(
            "/v1/forms/{}/responses/?submission_sources=bots",
            uuid_of(&f)
        ),
        None,
    )
    .await
    .assert_error(400, "invalid_filter_value");
    // An anonymous form makes member responses anonymous.
    let pulse = w
        .form(&w.ada_key, "Pulse", json!({"is_anonymous": true}))
        .await;
    assert_eq!(
        w.answer(&w.bob_key, &pulse, "fine").await["submission_source"],
        "anonymous"
    );
}

#[actix_web::test]
async fn people_list_their_own_responses_and_the_audience_everyones() {
    let w = world().await;
    let f = w
        .form(
            &w.ada_key,
            "Retro",
            json!({"who_can_see_responses": {"mode": "restricted", "user_uuids": [w.cy]}}),
        )
        .await;
    let by_bob = w.answer(&w.bob_key, &f, "Bridge").await;
    let by_admin = w.answer(&w.admin_key, &f, "Tunnel").await;
    assert_eq!(w.listed(&w.bob_key, &f, "").await, [uuid_of(&by_bob)]);
    assert_eq!(
        w.listed(&w.bob_key, &f, &format!("user={}", w.bob)).await,
        [uuid_of(&by_bob)]
    );
    let path = format!("/v1/forms/{}/responses/", uuid_of(&f));
    w.call(&w.bob_key, "GET", &format!("{path}?all=true"), None)
        .await
        .assert_error(403, "form_response_view_all_forbidden");
    w.call(&w.bob_key, "GET", &format!("{path}?user={}", w.admin), None)
        .await
        .assert_error(403, "form_response_view_all_forbidden");
    w.call(
        &w.bob_key,
        "GET",
        &format!("{path}?submitter_user_ids={},{}", w.bob, w.admin),
        None,
    )
    .await
    .assert_error(403, "user_can_not_see_form_responses");
    let everyone = [uuid_of(&by_admin), uuid_of(&by_bob)];
    assert_eq!(w.listed(&w.cy_key, &f, "all=true").await, everyone);
    assert_eq!(
        w.listed(&w.ada_key, &f, "all=true&order=oldest").await,
        [uuid_of(&by_bob), uuid_of(&by_admin)]
    );
    assert_eq!(
        w.listed(&w.ada_key, &f, "all=true&is_ascend=true").await,
        [uuid_of(&by_bob), uuid_of(&by_admin)]
    );
    assert_eq!(
        w.listed(&w.cy_key, &f, &format!("submitter_user_ids={}", w.admin))
            .await,
        [uuid_of(&by_admin)]
    );
    assert_eq!(
        w.listed(&w.cy_key, &f, "all=true&search=BRIDGE").await,
        [uuid_of(&by_bob)]
    );
    assert_eq!(
        w.listed(&w.cy_key, &f, "all=true&search=adele").await,
        [uuid_of(&by_admin)]
    );
    let today = time::OffsetDateTime::now_utc().date();
    assert_eq!(
        w.listed(
            &w.cy_key,
            &f,
            &format!("all=true&date_from={today}&date_to={today}")
        )
        .await
        .len(),
        2
    );
    assert!(
        w.listed(
            &w.cy_key,
            &f,
            "all=true&start_date=2020-01-01&end_date=2020-01-02"
        )
        .await
        .is_empty()
    );
    for (query, code, parameter) in [
        ("user=bob", "invalid_user_identifier", "user"),
        (
            "submitter_user_ids=bob",
            "invalid_user_identifier",
            "submitter_user_ids",
        ),
        (
            "date_from=2026-02-02&date_to=2026-02-01",
            "invalid_date_range",
            "date_from",
        ),
        ("start_date=yesterday", "invalid_date_range", "start_date"),
        ("order=newest", "invalid_filter_value", "order"),
        ("flow_status=stuck", "invalid_filter_value", "flow_status"),
    ] {
        let r = w
            .call(&w.cy_key, "GET", &format!("{path}?{query}"), None)
            .await;
        r.assert_error(400, code);
        assert_eq!(r.body["extra"]["parameter"], parameter, "{query}");
    }
    w.call(
        &w.cy_key,
        "GET",
        &format!("{path}?search={}", "a".repeat(257)),
        None,
    )
    .await
    .assert_error(400, "search_query_too_long");
    // Reading one: the submitter and the audience; others get 404.
    assert_eq!(
        w.call(&w.cy_key, "GET", &w.response_path(&f, &by_bob), None)
            .await
            .status,
        200
    );
    w.call(&w.bob_key, "GET", &w.response_path(&f, &by_admin), None)
        .await
        .assert_error(404, "not_found");
    w.call(&w.outsider_key, "GET", &w.response_path(&f, &by_bob), None)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn state_filters_need_a_workflow_and_one_of_its_states() {
    let w = world().await;
    let plain = w.form(&w.ada_key, "Retro", json!({})).await;
    w.call(
        &w.ada_key,
        "GET",
        &format!("/v1/forms/{}/responses/?state=draft", uuid_of(&plain)),
        None,
    )
    .await
    .assert_error(400, "invalid_workflow_state");
    let f = workflow_form(&w, json!({})).await;
    let r = w
        .call(
            &w.ada_key,
            "GET",
            &format!("/v1/forms/{}/responses/?state=Draft", uuid_of(&f)),
            None,
        )
        .await;
    r.assert_error(400, "invalid_workflow_state");
    assert_eq!(r.body["extra"]["allowed"], json!(["draft", "qa", "done"]));
    let a = w.answer(&w.bob_key, &f, "a").await;
    let b = w.answer(&w.cy_key, &f, "b").await;
    let moved = w
        .call(
            &w.ada_key,
            "POST",
            &format!("{}transition/", w.response_path(&f, &b)),
            Some(json!({"to_state": "done"})),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.text);
    assert_eq!(
        w.listed(&w.ada_key, &f, "all=true&state=draft").await,
        [uuid_of(&a)]
    );
    assert_eq!(
        w.listed(&w.ada_key, &f, "all=true&state=done").await,
        [uuid_of(&b)]
    );
    assert_eq!(
        w.listed(&w.ada_key, &f, "all=true&flow_status=pending")
            .await,
        [uuid_of(&a)]
    );
    // An approval form: approved and denied are its final states.
    let approval = w
        .form(&w.ada_key, "Expenses", json!({"use_for_approval": true}))
        .await;
    let req = w.answer(&w.bob_key, &approval, "taxi").await;
    assert_eq!(
        (req["current_state"].clone(), req["flow_status"].clone()),
        (json!("pending"), json!("pending"))
    );
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &format!("{}transition/", w.response_path(&approval, &req)),
            Some(json!({"to_state": "denied"})),
        )
        .await;
    assert_eq!(r.body["flow_status"], "denied");
    assert_eq!(
        w.listed(&w.ada_key, &approval, "all=true&flow_status=denied")
            .await,
        [uuid_of(&req)]
    );
    assert!(
        w.listed(&w.ada_key, &approval, "all=true&flow_status=approved")
            .await
            .is_empty()
    );
}

#[actix_web::test]
async fn responses_move_through_the_workflow() {
    let w = world().await;
    let f = workflow_form(
        &w,
        json!({"who_can_change_states": {"mode": "restricted", "user_uuids": [w.cy]}}),
    )
    .await;
    let r = w.answer(&w.bob_key, &f, "v1.2").await;
    assert_eq!(r["current_state"], "draft");
    assert_eq!(
        r["allowed_transitions"],
        json!([
            {"to_state": "qa", "label": "QA", "color": "#3498db", "is_final": false},
            {"to_state": "done", "label": "Done", "color": "#2ecc71", "is_final": true},
        ])
    );
    assert_eq!(r["can_change_state"], false);
    let path = format!("{}transition/", w.response_path(&f, &r));
    w.call(&w.bob_key, "POST", &path, Some(json!({"to_state": "qa"})))
        .await
        .assert_error(403, "form_response_change_state_forbidden");
    let moved = w
        .call(
            &w.cy_key,
            "POST",
            &path,
            Some(json!({"to_state": "qa", "note": "QA assigned"})),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.text);
    assert_eq!(moved.body["current_state"], "qa");
    assert_eq!(moved.body["can_change_state"], true);
    let entry = &moved.body["state_history"][0];
    assert_eq!(
        (
            entry["from_state"].clone(),
            entry["to_state"].clone(),
            entry["note"].clone()
        ),
        (json!("draft"), json!("qa"), json!("QA assigned"))
    );
    assert_eq!(
        (entry["is_self"].clone(), entry["actor_name"].clone()),
        (json!(true), json!("Cy Young"))
    );
    assert!(
        entry.get("actor_uuid").is_none() && entry.get("actor").is_none(),
        "no actor id: {entry}"
    );
    // The submitter sees the move, not who made it; the owner sees the name.
    let seen = w
        .call(&w.bob_key, "GET", &w.response_path(&f, &r), None)
        .await
        .body;
    assert_eq!(
        (
            seen["state_history"][0]["is_self"].clone(),
            seen["state_history"][0]["actor_name"].clone()
        ),
        (json!(false), Value::Null)
    );
    let owner = w
        .call(&w.ada_key, "GET", &w.response_path(&f, &r), None)
        .await
        .body;
    assert_eq!(owner["state_history"][0]["actor_name"], "Cy Young");
    // What the workflow refuses.
    let e = w
        .call(&w.cy_key, "POST", &path, Some(json!({"to_state": "qa"})))
        .await;
    e.assert_error(409, "workflow_transition_not_allowed");
    assert_eq!(e.body["extra"]["allowed"], json!(["draft", "done"]));
    w.call(
        &w.cy_key,
        "POST",
        &path,
        Some(json!({"to_state": "shipped"})),
    )
    .await
    .assert_error(409, "workflow_transition_not_allowed");
    w.call(&w.cy_key, "POST", &path, Some(json!({})))
        .await
        .assert_error(400, "params_validation_error");
    assert_eq!(
        w.call(&w.cy_key, "POST", &path, Some(json!({"to_state": "done"})))
            .await
            .status,
        200
    );
    w.call(&w.cy_key, "POST", &path, Some(json!({"to_state": "draft"})))
        .await
        .assert_error(409, "final_state_locked");
    let r2 = w
        .call(
            &w.ada_key,
            "PATCH",
            &format!("/v1/forms/{}/config/", uuid_of(&f)),
            Some(json!({"allow_reopen_from_final_state": true})),
        )
        .await;
    assert_eq!(r2.status, 200);
    let reopened = w
        .call(&w.cy_key, "POST", &path, Some(json!({"to_state": "draft"})))
        .await;
    assert_eq!(reopened.status, 200, "{}", reopened.text);
    assert_eq!(reopened.body["state_history"].as_array().unwrap().len(), 3);
    let stored = w
        .call(&w.ada_key, "GET", &w.response_path(&f, &r), None)
        .await
        .body;
    assert_eq!(stored["current_state"], "draft");
    // Each move's event.
    let events = w.events("forms.response.updated").await;
    assert_eq!(events.len(), 3);
    let first = &events[0]["data"];
    assert_eq!(
        (
            first["change"].clone(),
            first["from_state"].clone(),
            first["to_state"].clone()
        ),
        (json!("state"), json!("draft"), json!("qa"))
    );
    // A form without workflow has no transitions.
    let plain = w.form(&w.ada_key, "Retro", json!({})).await;
    let p = w.answer(&w.bob_key, &plain, "x").await;
    w.call(
        &w.ada_key,
        "POST",
        &format!("{}transition/", w.response_path(&plain, &p)),
        Some(json!({"to_state": "done"})),
    )
    .await
    .assert_error(400, "invalid_workflow_state");
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[actix_web::test]
async fn of_two_concurrent_moves_exactly_one_wins() {
    let w = world().await;
    let f = workflow_form(&w, json!({})).await;
    let r = w.answer(&w.bob_key, &f, "race").await;
    let path = format!("{}transition/", w.response_path(&f, &r));
    // Hold the response's row so that both moves have read it in `draft` and wait at their
    // write; then let them go together.
    let pool = w.app.database.pool();
    let mut holder = pool.get().await.expect("connection");
    diesel::sql_query("BEGIN")
        .execute(&mut holder)
        .await
        .unwrap();
    diesel::sql_query("SELECT id FROM form_responses WHERE id = $1 FOR UPDATE")
        .bind::<SqlUuid, _>(uuid::Uuid::parse_str(&uuid_of(&r)).unwrap())
        .execute(&mut holder)
        .await
        .unwrap();
    let release = async {
        let mut waiting = 0;
        for _ in 0..1000 {
            let mut probe = pool.get().await.expect("connection");
            waiting = diesel::sql_query(
                "SELECT count(*) AS n FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .get_result::<Count>(&mut probe)
            .await
            .unwrap()
            .n;
            drop(probe);
            if waiting >= 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        diesel::sql_query("COMMIT")
            .execute(&mut holder)
            .await
            .unwrap();
        waiting
    };
    let (a, b, waiting) = tokio::join!(
        w.call(&w.ada_key, "POST", &path, Some(json!({"to_state": "qa"}))),
        w.call(
            &w.admin_key,
            "POST",
            &path,
            Some(json!({"to_state": "done"}))
        ),
        release,
    );
    assert_eq!(waiting, 2, "both moves waited at their write");
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{} / {}", a.text, b.text);
    let (winner, loser) = if a.status == 200 { (&a, &b) } else { (&b, &a) };
    loser.assert_error(409, "workflow_state_conflict");
    let stored = w
        .call(&w.ada_key, "GET", &w.response_path(&f, &r), None)
        .await
        .body;
    assert_eq!(stored["current_state"], winner.body["current_state"]);
    assert_eq!(stored["state_history"].as_array().unwrap().len(), 1);
    assert_eq!(w.events("forms.response.updated").await.len(), 1);
}

#[actix_web::test]
async fn a_response_is_edited_by_its_submitter_or_the_forms_editors() {
    let w = world().await;
    let f = w
        .form(
            &w.ada_key,
            "Retro",
            json!({"who_can_see_responses": {"mode": "restricted", "user_uuids": [w.cy]}}),
        )
        .await;
    let (q0, q1) = (
        first_question(&f),
        f["questions"][1]["uuid"].as_str().unwrap().to_owned(),
    );
    let r = w.answer(&w.bob_key, &f, "first").await;
    let path = w.response_path(&f, &r);
    let edited = w
        .call(
            &w.bob_key,
            "PATCH",
            &path,
            Some(json!({"content": {&q1: "more"}})),
        )
        .await;
    assert_eq!(edited.status, 200, "{}", edited.text);
    assert_eq!(
        edited.body["content"],
        json!({&q0: "first", &q1: "more"}),
        "merged"
    );
    assert_eq!(edited.body["edited"], true);
    assert_eq!(
        w.call(&w.bob_key, "GET", &path, None).await.body,
        edited.body
    );
    let r2 = w
        .call(
            &w.bob_key,
            "PATCH",
            &path,
            Some(json!({"content": {&q0: null}})),
        )
        .await;
    r2.assert_error(400, "params_validation_error");
    assert_eq!(r2.body["extra"]["uuids"], json!([q0]));
    w.call(
        &w.cy_key,
        "PATCH",
        &path,
        Some(json!({"content": {&q1: "x"}})),
    )
    .await
    .assert_error(403, "form_response_edit_forbidden");
    w.call(
        &w.guest_key,
        "PATCH",
        &path,
        Some(json!({"content": {&q1: "x"}})),
    )
    .await
    .assert_error(404, "not_found");
    let by_owner = w
        .call(
            &w.ada_key,
            "PATCH",
            &path,
            Some(json!({"content": {&q0: "fixed"}})),
        )
        .await;
    assert_eq!(by_owner.body["content"][&q0], "fixed");
    let events = w.events("forms.response.updated").await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["data"]["change"], "content");
    assert_eq!(events[1]["data"]["response"]["content"][&q0], "fixed");
}

#[actix_web::test]
async fn a_response_is_deleted_by_its_submitter_the_owner_or_an_admin() {
    let w = world().await;
    let f = w
        .form(
            &w.ada_key,
            "Retro",
            json!({"who_can_edit": {"mode": "restricted", "user_uuids": [w.cy]}}),
        )
        .await;
    let mine = w.answer(&w.bob_key, &f, "a").await;
    let by_owner = w.answer(&w.bob_key, &f, "b").await;
    let by_admin = w.answer(&w.bob_key, &f, "c").await;
    w.call(&w.cy_key, "DELETE", &w.response_path(&f, &mine), None)
        .await
        .assert_error(403, "form_response_delete_forbidden");
    for (key, r) in [
        (&w.bob_key, &mine),
        (&w.ada_key, &by_owner),
        (&w.admin_key, &by_admin),
    ] {
        let d = w.call(key, "DELETE", &w.response_path(&f, r), None).await;
        assert_eq!((d.status, d.text.as_str()), (204, ""));
    }
    w.call(&w.bob_key, "GET", &w.response_path(&f, &mine), None)
        .await
        .assert_error(404, "not_found");
    w.call(&w.bob_key, "DELETE", &w.response_path(&f, &mine), None)
        .await
        .assert_error(404, "not_found");
    assert!(w.listed(&w.ada_key, &f, "all=true").await.is_empty());
    let deleted = w.events("forms.response.deleted").await;
    assert_eq!(deleted.len(), 3);
    assert_eq!(
        deleted[0]["data"],
        json!({"form": {"uuid": uuid_of(&f), "name": "Retro"}, "response": {"uuid": uuid_of(&mine)}})
    );
}

#[actix_web::test]
async fn a_change_whose_event_cannot_be_written_is_not_stored() {
    let w = world().await;
    let f = workflow_form(&w, json!({})).await;
    let r = w.answer(&w.bob_key, &f, "kept").await;
    w.app.break_outbox().await;
    w.submit(
        &w.bob_key,
        &f,
        json!({"content": {first_question(&f): "lost"}}),
    )
    .await
    .assert_error(500, "internal_error");
    w.call(
        &w.ada_key,
        "POST",
        &format!("{}transition/", w.response_path(&f, &r)),
        Some(json!({"to_state": "qa"})),
    )
    .await
    .assert_error(500, "internal_error");
    w.call(
        &w.bob_key,
        "PATCH",
        &w.response_path(&f, &r),
        Some(json!({"content": {first_question(&f): "changed"}})),
    )
    .await
    .assert_error(500, "internal_error");
    w.call(&w.bob_key, "DELETE", &w.response_path(&f, &r), None)
        .await
        .assert_error(500, "internal_error");
    let stored = w
        .call(&w.ada_key, "GET", &w.response_path(&f, &r), None)
        .await
        .body;
    assert_eq!(
        (stored["current_state"].clone(), stored["edited"].clone()),
        (json!("draft"), json!(false))
    );
    assert_eq!(stored["content"][first_question(&f)], "kept");
    assert_eq!(w.listed(&w.ada_key, &f, "all=true").await, [uuid_of(&r)]);
}
