//! `/v1/checkins/{uuid}/responses/`: submitting (POST), editing (PUT), resetting (DELETE) and
//! listing responses; the day they count for (the participant's local day, from the zone
//! database), every refusal the CLI knows by code, the `followups.response.*` events written
//! with each change (or not at all).

use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use crate::checkins::{World, standup_body};

fn answers(checkin: &Value, texts: &[&str]) -> Value {
    let list: Vec<Value> = checkin["questions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(texts)
        .enumerate()
        .map(|(i, (q, t))| json!({"uuid": q["uuid"], "index": i, "response": t}))
        .collect();
    json!({ "responses": list })
}

fn id(checkin: &Value) -> String {
    checkin["uuid"].as_str().unwrap().to_owned()
}

fn doors(checkin: &str) -> String {
    format!("/v1/checkins/{checkin}/responses/")
}

/// Today at `offset_hours` from UTC (zones without daylight saving).
fn today_at(offset_hours: i64) -> String {
    (OffsetDateTime::now_utc() + Duration::hours(offset_hours))
        .date()
        .to_string()
}

impl World {
    async fn responses(&self, key: &str, checkin: &str, query: &str) -> Vec<Value> {
        let r = self
            .call(
                key,
                "GET",
                &format!("{}?page_size=100{query}", doors(checkin)),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["results"].as_array().unwrap().clone()
    }

    /// Every response to the check-in, as its admin lists them (what is stored).
    async fn stored_responses(&self, checkin: &str) -> Vec<Value> {
        self.responses(
            &self.admin_key,
            checkin,
            "&date_start=2020-01-01&date_end=2030-12-31",
        )
        .await
    }

    async fn events_of(&self, kind: &str) -> Vec<Value> {
        self.app.events(&self.org, Some(kind)).await
    }

    async fn set_zone(&self, user: &str, zone: &str) {
        let r = self
            .call(
                &self.admin_key,
                "PATCH",
                &format!("/v1/users/{user}/"),
                Some(json!({"timezone": zone})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
}

#[actix_web::test]
async fn a_response_is_stored_once_a_day_with_its_event() {
    let w = World::new().await;
    let c = w.standup(json!({})).await;
    let path = doors(&id(&c));
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &path,
            Some(answers(&c, &["Shipped it", ""])),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let today = today_at(0);
    let q0 = c["questions"][0]["uuid"].clone();
    assert_eq!(r.body["id"], r.body["uuid"]);
    assert_eq!(r.body["followup_uuid"], id(&c));
    assert_eq!(r.body["response_date"], today);
    assert_eq!(r.body["response_completed"], true);
    assert_eq!(r.body["questions_version"], 1);
    assert_eq!(
        r.body["responses"],
        json!([{"uuid": q0, "index": 0, "question": "What did you do?", "response": "Shipped it"}])
    );
    assert_eq!(r.body["user"]["uuid"], w.ada);
    assert_eq!(
        w.stored_responses(&id(&c)).await,
        std::slice::from_ref(&r.body)
    );
    let events = w.events_of("followups.response.completed").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["object_uuid"], id(&c));
    assert_eq!(
        events[0]["data"]["checkin"],
        json!({"uuid": id(&c), "name": "Standup"})
    );
    assert_eq!(events[0]["data"]["response"]["uuid"], r.body["uuid"]);
    assert_eq!(events[0]["data"]["response"]["user"]["uuid"], w.ada);
    assert_eq!(
        events[0]["data"]["response"]["answers"],
        json!([{"uuid": q0, "question": "What did you do?", "response": "Shipped it"}])
    );

    let again = w
        .call(&w.ada_key, "POST", &path, Some(answers(&c, &["Again"])))
        .await;
    again.assert_error(409, "response_already_exists");
    assert_eq!(again.body["extra"]["response_date"], today);
    assert_eq!(w.stored_responses(&id(&c)).await.len(), 1);
    assert_eq!(w.events_of("followups.response.completed").await.len(), 1);

    // Answers are typed by their question; unknown keys are refused, not dropped.
    let r = w
        .call(
            &w.max_key,
            "POST",
            &path,
            Some(json!({"responses": [{"uuid": q0, "index": 0, "response": "x", "mood": 3}]})),
        )
        .await;
    r.assert_error(400, "unknown_field");
    assert_eq!(r.body["extra"]["parameter"], "responses.0.mood");
    w.call(&w.max_key, "POST", &path, Some(json!({})))
        .await
        .assert_error(400, "params_validation_error");
    assert_eq!(w.stored_responses(&id(&c)).await.len(), 1);
}

#[actix_web::test]
async fn the_response_doors_say_when_the_check_in_id_is_malformed() {
    let w = World::new().await;
    let body = Some(json!({"responses": []}));
    for method in ["POST", "PUT", "DELETE", "GET"] {
        let b = if matches!(method, "POST" | "PUT") {
            body.clone()
        } else {
            None
        };
        let r = w
            .call(
                &w.ada_key,
                method,
                "/v1/checkins/not-a-uuid/responses/",
                b.clone(),
            )
            .await;
        r.assert_error(400, "not_valid_followup_uuid");
        let unknown = doors(&uuid::Uuid::now_v7().to_string());
        w.call(&w.ada_key, method, &unknown, b)
            .await
            .assert_error(404, "not_found");
    }
    // Another organization's check-in is as unknown.
    let c = w.standup(json!({})).await;
    w.call(
        &w.outsider_key,
        "POST",
        &doors(&id(&c)),
        Some(answers(&c, &["x"])),
    )
    .await
    .assert_error(404, "not_found");
}

#[actix_web::test]
async fn only_participants_of_running_check_ins_answer() {
    let w = World::new().await;
    let c = w.standup(json!({})).await;
    let path = doors(&id(&c));
    for key in [&w.bob_key, &w.admin_key, &w.guest_key] {
        w.call(key, "POST", &path, Some(answers(&c, &["x"])))
            .await
            .assert_error(403, "user_is_not_a_followup_member");
    }
    let config = format!("/v1/checkins/{}/config/", id(&c));
    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &config,
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!(r.status, 200);
    for method in ["POST", "PUT", "DELETE"] {
        let body = (method != "DELETE").then(|| answers(&c, &["x"]));
        w.call(&w.ada_key, method, &path, body)
            .await
            .assert_error(400, "responses_not_allowed_on_inactive_followup");
    }
    let archived = w.standup(json!({})).await;
    let r = w
        .call(
            &w.admin_key,
            "DELETE",
            &format!("/v1/checkins/{}/archive/", id(&archived)),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    w.call(
        &w.ada_key,
        "POST",
        &doors(&id(&archived)),
        Some(answers(&archived, &["x"])),
    )
    .await
    .assert_error(400, "responses_not_allowed_on_inactive_followup");
    assert!(w.stored_responses(&id(&c)).await.is_empty());
    assert!(w.events_of("followups.response.completed").await.is_empty());
}

#[actix_web::test]
async fn past_coming_and_early_answers_need_the_check_ins_permission() {
    let w = World::new().await;
    let strict = w.standup(json!({"start_on": "2026-01-01"})).await;
    let path = doors(&id(&strict));
    let on = |day: &str| {
        let mut body = answers(&strict, &["x"]);
        body["response_date"] = json!(day);
        body
    };
    let yesterday = today_at(-24);
    let tomorrow = today_at(24);
    w.call(&w.ada_key, "POST", &path, Some(on(&yesterday)))
        .await
        .assert_error(400, "previous_responses_are_not_allowed");
    w.call(&w.ada_key, "POST", &path, Some(on(&tomorrow)))
        .await
        .assert_error(400, "future_responses_are_not_allowed");
    for bad in ["23/11/2026", "2026-11-5", "soon"] {
        w.call(&w.ada_key, "POST", &path, Some(on(bad)))
            .await
            .assert_error(400, "response_date_format_is_invalid");
    }
    assert!(w.stored_responses(&id(&strict)).await.is_empty());

    // Starting today (the default).
    let open = w
        .standup(json!({"allow_past_responses": true, "allow_future_responses": true}))
        .await;
    let first_day_before = today_at(-24 * 10);
    let path = doors(&id(&open));
    let with_day = |day: &str| {
        let mut body = answers(&open, &["x"]);
        body["response_date"] = json!(day);
        body
    };
    for day in [&yesterday, &tomorrow] {
        let r = w.call(&w.ada_key, "POST", &path, Some(with_day(day))).await;
        assert_eq!(r.status, 201, "{}", r.text);
        assert_eq!(r.body["response_date"], *day);
    }
    let far = today_at(24 * 31);
    let r = w
        .call(&w.ada_key, "POST", &path, Some(with_day(&far)))
        .await;
    r.assert_error(400, "future_responses_are_not_allowed");
    assert_eq!(r.body["extra"]["max_days"], 30);
    // The check-in's first day bounds when people are asked, not the days they answer for.
    let before_start = w
        .call(&w.ada_key, "POST", &path, Some(with_day(&first_day_before)))
        .await;
    assert_eq!(before_start.status, 201, "{}", before_start.text);
    assert_eq!(before_start.body["response_date"], first_day_before);
    let too_old = today_at(-24 * 366);
    let r = w
        .call(&w.ada_key, "POST", &path, Some(with_day(&too_old)))
        .await;
    r.assert_error(400, "previous_responses_are_not_allowed");
    assert_eq!(r.body["extra"]["max_days"], 365);
    assert_eq!(w.stored_responses(&id(&open)).await.len(), 3);

    // Early: in a zone where it is now about 01:00, a check-in at 23:00 has not started.
    let hour = i64::from(OffsetDateTime::now_utc().hour());
    let offset = match 1 - hour {
        o if o < -12 => o + 24,
        o => o,
    };
    // Etc/GMT names count the other way round: UTC+5 is Etc/GMT-5.
    let zone = match offset {
        0 => "Etc/GMT".to_owned(),
        o if o > 0 => format!("Etc/GMT-{o}"),
        o => format!("Etc/GMT+{}", -o),
    };
    let early = w
        .standup(json!({"schedule": {"time": "23:00", "timezone": zone}, "allow_responses_before_trigger": false, "start_on": "2026-01-01"}))
        .await;
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &doors(&id(&early)),
            Some(answers(&early, &["x"])),
        )
        .await;
    r.assert_error(400, "followup_not_allow_responses_before_trigger_time");
    assert!(r.body["extra"]["trigger_at"].is_string());
    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &format!("/v1/checkins/{}/config/", id(&early)),
            Some(json!({"schedule": {"time": "00:00"}})),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &doors(&id(&early)),
            Some(answers(&early, &["x"])),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[actix_web::test]
async fn the_day_is_the_participants_own_when_the_check_in_says_so() {
    let w = World::new().await;
    // Kiritimati is UTC+14 all year; Honolulu UTC-10.
    w.set_zone(&w.ada, "Pacific/Kiritimati").await;
    let own = w
        .standup(json!({"use_participant_timezone": true, "start_on": "2026-01-01"}))
        .await;
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &doors(&id(&own)),
            Some(answers(&own, &["x"])),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["response_date"], today_at(14));
    let schedule = w
        .standup(json!({"schedule": {"timezone": "Pacific/Honolulu"}, "start_on": "2026-01-01"}))
        .await;
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &doors(&id(&schedule)),
            Some(answers(&schedule, &["x"])),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        r.body["response_date"],
        today_at(-10),
        "the schedule's zone, not the person's"
    );
}

#[actix_web::test]
async fn answers_against_changed_questions_are_a_version_conflict() {
    let w = World::new().await;
    let c = w.standup(json!({})).await;
    let path = doors(&id(&c));
    let q = |i: usize| c["questions"][i]["uuid"].clone();
    let stranger = uuid::Uuid::now_v7().to_string();
    let cases = [
        json!({"responses": [{"uuid": q(0), "index": 0, "response": "x"}, {"uuid": stranger, "index": 1, "response": "y"}]}),
        json!({"responses": [{"uuid": q(1), "index": 0, "response": "x"}, {"uuid": q(0), "index": 1, "response": "y"}]}),
        json!({"responses": [{"uuid": q(0), "index": 0, "response": "x"}], "questions_version": 2}),
    ];
    for body in cases {
        let r = w.call(&w.ada_key, "POST", &path, Some(body)).await;
        r.assert_error(409, "template_questions_version_conflict");
        assert_eq!(r.body["extra"]["current_version"], 1);
    }
    // After a reorder, the order the person read is stale.
    let r = w
        .call(
            &w.admin_key,
            "PUT",
            &format!("/v1/checkins/{}/questions/reorder/", id(&c)),
            Some(json!({"question_uuids": [q(1), q(0)]})),
        )
        .await;
    assert_eq!(r.status, 200);
    let stale = answers(&c, &["first", "second"]);
    let r = w.call(&w.ada_key, "POST", &path, Some(stale)).await;
    r.assert_error(409, "template_questions_version_conflict");
    assert_eq!(r.body["extra"]["current_version"], 2);
    assert!(w.stored_responses(&id(&c)).await.is_empty());
    // Read again, answered again.
    let fresh = w.stored(&id(&c)).await;
    let mut body = answers(&fresh, &["blockers", "done"]);
    body["questions_version"] = json!(2);
    let r = w.call(&w.ada_key, "POST", &path, Some(body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[actix_web::test]
async fn partial_responses_complete_later_and_edits_are_updates() {
    let w = World::new().await;
    let c = w.standup(json!({})).await;
    let path = doors(&id(&c));
    w.call(&w.ada_key, "PUT", &path, Some(answers(&c, &["x"])))
        .await
        .assert_error(404, "not_found");
    let r = w
        .call(&w.ada_key, "POST", &path, Some(json!({"responses": []})))
        .await;
    r.assert_error(400, "params_validation_error");
    assert_eq!(r.body["extra"]["uuids"], json!([c["questions"][0]["uuid"]]));
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &path,
            Some(json!({"responses": [], "last_question_index": 0})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        (
            r.body["response_completed"].clone(),
            r.body["last_question_index"].clone()
        ),
        (json!(false), json!(0))
    );
    assert!(w.events_of("followups.response.completed").await.is_empty());

    // The CLI's `checkin edit`: answers from the list, `last_question_index` = their count - 1.
    let mut done = answers(&c, &["Done", "Nothing"]);
    done["last_question_index"] = json!(1);
    let r = w.call(&w.ada_key, "PUT", &path, Some(done)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["response_completed"], true);
    assert_eq!(w.events_of("followups.response.completed").await.len(), 1);
    let r = w
        .call(&w.ada_key, "PUT", &path, Some(answers(&c, &["Done twice"])))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let updated = w.events_of("followups.response.updated").await;
    assert_eq!(updated.len(), 1);
    assert_eq!(
        updated[0]["data"]["response"]["answers"][0]["response"],
        "Done twice"
    );
    let stored = w.stored_responses(&id(&c)).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["responses"][0]["response"], "Done twice");
    assert_eq!(stored[0]["response_completed"], true);
    // PUT is checked like POST.
    let mut stale = answers(&c, &["x"]);
    stale["questions_version"] = json!(5);
    w.call(&w.ada_key, "PUT", &path, Some(stale))
        .await
        .assert_error(409, "template_questions_version_conflict");
    w.call(&w.bob_key, "PUT", &path, Some(answers(&c, &["x"])))
        .await
        .assert_error(403, "user_is_not_a_followup_member");
}

#[actix_web::test]
async fn a_reset_deletes_the_callers_own_responses_of_the_days() {
    let w = World::new().await;
    let c = w
        .standup(json!({"allow_past_responses": true, "start_on": "2026-01-01"}))
        .await;
    let path = doors(&id(&c));
    let days: Vec<String> = [-48, -24, 0].iter().map(|h| today_at(*h)).collect();
    for day in &days {
        let mut body = answers(&c, &["x"]);
        body["response_date"] = json!(day);
        let r = w.call(&w.ada_key, "POST", &path, Some(body)).await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let r = w
        .call(&w.max_key, "POST", &path, Some(answers(&c, &["mine"])))
        .await;
    assert_eq!(r.status, 201);
    let r = w.call(&w.ada_key, "DELETE", &path, None).await;
    assert_eq!(
        (r.status, r.body.clone()),
        (200, json!({"deleted_count": 1})),
        "today by default"
    );
    let r = w
        .call(
            &w.ada_key,
            "DELETE",
            &format!("{path}?start_date={}&end_date={}", days[0], days[1]),
            None,
        )
        .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (200, json!({"deleted_count": 2})),
        "the aliases"
    );
    let r = w
        .call(
            &w.ada_key,
            "DELETE",
            &format!("{path}?date_start={0}&date_end={0}", days[0]),
            None,
        )
        .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (200, json!({"deleted_count": 0}))
    );
    let deleted = w.events_of("followups.response.deleted").await;
    let deleted_days: Vec<&Value> = deleted
        .iter()
        .map(|e| &e["data"]["response"]["response_date"])
        .collect();
    assert_eq!(
        deleted_days,
        [&json!(days[2]), &json!(days[0]), &json!(days[1])]
    );
    let left = w.stored_responses(&id(&c)).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["user"]["uuid"], w.max);
    let bad = |query: String, code: &'static str| {
        let w = &w;
        let path = path.clone();
        async move {
            let r = w
                .call(&w.ada_key, "DELETE", &format!("{path}?{query}"), None)
                .await;
            r.assert_error(400, code);
            r
        }
    };
    bad(
        format!("date_start={}&date_end={}", days[1], days[0]),
        "invalid_date_range",
    )
    .await;
    let r = bad(
        format!("date_start={}&start_date={}", days[1], days[0]),
        "invalid_date_range",
    )
    .await;
    assert_eq!(r.body["extra"]["parameter"], "date_start");
    bad("date_end=tomorrow".to_owned(), "invalid_date_range").await;
    assert_eq!(w.stored_responses(&id(&c)).await.len(), 1);
}

#[actix_web::test]
async fn readers_see_every_response_their_teams_or_their_own() {
    let w = World::new().await;
    let mut body = standup_body(&w.eng);
    body["participants"]["user_uuids"] = json!([w.bob]);
    let c = w.create(&w.admin_key, body).await;
    let path = doors(&id(&c));
    for (key, text) in [
        (&w.ada_key, "Ada wrote"),
        (&w.bob_key, "Bob wrote"),
        (&w.max_key, "Max wrote, 50% done"),
    ] {
        let r = w.call(key, "POST", &path, Some(answers(&c, &[text]))).await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let texts = |rows: Vec<Value>| -> Vec<String> {
        rows.iter()
            .map(|r| r["responses"][0]["response"].as_str().unwrap().to_owned())
            .collect()
    };
    let id = id(&c);
    assert_eq!(
        texts(w.responses(&w.admin_key, &id, "").await),
        ["Ada wrote", "Bob wrote", "Max wrote, 50% done"]
    );
    assert_eq!(
        texts(w.responses(&w.max_key, &id, "").await),
        ["Ada wrote", "Max wrote, 50% done"],
        "the manager's team"
    );
    assert_eq!(texts(w.responses(&w.bob_key, &id, "").await), ["Bob wrote"]);
    assert_eq!(
        texts(
            w.responses(&w.admin_key, &id, &format!("&user={}", w.ada))
                .await
        ),
        ["Ada wrote"]
    );
    assert_eq!(
        texts(
            w.responses(&w.bob_key, &id, &format!("&user={}", w.ada))
                .await
        ),
        ["Bob wrote"],
        "a member's user= is ignored"
    );
    assert_eq!(
        texts(w.responses(&w.admin_key, &id, "&search=BOB").await),
        ["Bob wrote"]
    );
    assert_eq!(
        texts(w.responses(&w.admin_key, &id, "&search=50%25").await),
        ["Max wrote, 50% done"]
    );
    assert_eq!(
        texts(w.responses(&w.admin_key, &id, "&all=true").await).len(),
        3
    );
    let yesterday = today_at(-24);
    assert!(
        w.responses(
            &w.admin_key,
            &id,
            &format!("&date_start={yesterday}&date_end={yesterday}")
        )
        .await
        .is_empty()
    );
    let page = w
        .call(&w.admin_key, "GET", &format!("{path}?page_size=2"), None)
        .await;
    assert_eq!(
        (
            page.body["count"].clone(),
            page.body["results"].as_array().unwrap().len()
        ),
        (json!(3), 2)
    );
    assert!(page.body["next"].as_str().unwrap().contains("page=2"));
    for (query, code) in [
        ("user=bob", "invalid_user_identifier"),
        ("date_start=2026-02-30", "invalid_date_range"),
        (
            "date_start=2026-02-02&date_end=2026-02-01",
            "invalid_date_range",
        ),
        (
            "date_end=2026-02-02&end_date=2026-02-03",
            "invalid_date_range",
        ),
    ] {
        w.call(&w.admin_key, "GET", &format!("{path}?{query}"), None)
            .await
            .assert_error(400, code);
    }
    let long = "a".repeat(257);
    w.call(&w.admin_key, "GET", &format!("{path}?search={long}"), None)
        .await
        .assert_error(400, "search_query_too_long");
    w.call(&w.guest_key, "GET", &path, None)
        .await
        .assert_error(404, "not_found");

    // Anonymous: nobody but the responder sees who answered, nor narrows to a person.
    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &format!("/v1/checkins/{id}/config/"),
            Some(json!({"is_anonymous": true})),
        )
        .await;
    assert_eq!(r.status, 200);
    let rows = w.responses(&w.admin_key, &id, "").await;
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r["user"].is_null()));
    assert_eq!(
        w.responses(&w.bob_key, &id, "").await[0]["user"]["uuid"],
        w.bob
    );
    assert!(
        w.responses(&w.admin_key, &id, &format!("&user={}", w.ada))
            .await
            .is_empty()
    );
    let r = w.call(&w.bob_key, "DELETE", &path, None).await;
    assert_eq!(r.body["deleted_count"], 1);
    let deleted = w.events_of("followups.response.deleted").await;
    assert_eq!(deleted[0]["data"]["response"]["user"], Value::Null);
}

#[actix_web::test]
async fn a_response_whose_event_cannot_be_written_is_not_stored() {
    let w = World::new().await;
    let c = w.standup(json!({})).await;
    w.app.break_outbox().await;
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &doors(&id(&c)),
            Some(answers(&c, &["x"])),
        )
        .await;
    r.assert_error(500, "internal_error");
    assert!(w.stored_responses(&id(&c)).await.is_empty());
    // A partial response writes no event, so it is stored.
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &doors(&id(&c)),
            Some(json!({"responses": [], "last_question_index": 0})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let r = w
        .call(
            &w.ada_key,
            "PUT",
            &doors(&id(&c)),
            Some(answers(&c, &["x"])),
        )
        .await;
    r.assert_error(500, "internal_error");
    let stored = w.stored_responses(&id(&c)).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["response_completed"], false);
}
