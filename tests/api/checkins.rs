//! `/v1/checkins/` authoring and reading (`POST /v1/checkins/create/`, `POST /v1/followups/`,
//! the detail, config, archive and question doors, the list with its filters and per-day
//! extras): every rule and code, each answer checked against what is stored. Responses are in
//! `checkin_responses.rs`, which shares the world below.

use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};

/// An organization with an admin, a team manager (`max`, of `eng`), a member of `eng`
/// (`ada`), a member in no team (`bob`) and a guest, each with an API key; four report
/// channels; another organization with its admin.
pub(crate) struct World {
    pub app: TestApp,
    pub org: String,
    pub admin: String,
    pub admin_key: String,
    pub max: String,
    pub max_key: String,
    pub ada: String,
    pub ada_key: String,
    pub bob: String,
    pub bob_key: String,
    pub guest_key: String,
    pub eng: String,
    pub outsider_key: String,
}

async fn person(app: &TestApp, org: &str, first: &str, role: &str) -> String {
    let email = format!(
        "{}.{}@example.com",
        first.to_lowercase(),
        uuid::Uuid::new_v4().simple()
    );
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": email, "first_name": first, "last_name": "Test", "role": role})),
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

impl World {
    pub async fn new() -> World {
        let app = TestApp::spawn().await;
        let org = app.create_org("business").await;
        let admin = person(&app, &org, "Adele", "admin").await;
        let session = app.session(&admin).await;
        let admin_key = key_of(&app, &session, &admin).await;
        let max = person(&app, &org, "Max", "member").await;
        let ada = person(&app, &org, "Ada", "member").await;
        let bob = person(&app, &org, "Bob", "member").await;
        let guest = person(&app, &org, "Gus", "guest").await;
        let other = app.create_org("business").await;
        let outsider = person(&app, &other, "Otto", "admin").await;
        let outsider_session = app.session(&outsider).await;
        let r = app
            .send(
                "POST",
                "/v1/teams/",
                &[("X-API-KEY", &admin_key)],
                Some(json!({"name": "Eng", "member_uuids": [max, ada]})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        let eng = r.body["uuid"].as_str().unwrap().to_owned();
        let r = app
            .send(
                "PUT",
                &format!("/v1/teams/{eng}/members/{max}/"),
                &[("X-API-KEY", &admin_key)],
                Some(json!({"role": "manager"})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        for (id, name) in [
            ("C1", "standups"),
            ("C2", "eng"),
            ("C3", "ops"),
            ("C4", "all"),
        ] {
            let r = app
                .operator(
                    "POST",
                    &format!("/operator/v1/organizations/{org}/channels/"),
                    Some(json!({"id": id, "name": name})),
                )
                .await;
            assert!(r.status == 200 || r.status == 201, "{}", r.text);
        }
        World {
            max_key: key_of(&app, &session, &max).await,
            ada_key: key_of(&app, &session, &ada).await,
            bob_key: key_of(&app, &session, &bob).await,
            guest_key: key_of(&app, &session, &guest).await,
            outsider_key: key_of(&app, &outsider_session, &outsider).await,
            app,
            org,
            admin,
            admin_key,
            max,
            ada,
            bob,
            eng,
        }
    }

    pub async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
        self.app
            .send(method, path, &[("X-API-KEY", key)], body)
            .await
    }

    /// Creates a check-in; asserts it was created and answers it.
    pub async fn create(&self, key: &str, body: Value) -> Value {
        let r = self
            .call(key, "POST", "/v1/checkins/create/", Some(body))
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body
    }

    /// A check-in asking `eng`, every day at 00:00 UTC (answerable at any time), two
    /// questions (the second optional), with `extra` keys merged in.
    pub async fn standup(&self, extra: Value) -> Value {
        let mut body = standup_body(&self.eng);
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        self.create(&self.admin_key, body).await
    }

    /// The check-in as its admin reads it (what is stored).
    pub async fn stored(&self, id: &str) -> Value {
        let r = self
            .call(
                &self.admin_key,
                "GET",
                &format!("/v1/checkins/{id}/detail/"),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body
    }

    /// The names of the check-ins `key` lists with `query`.
    pub async fn listed(&self, key: &str, query: &str) -> Vec<String> {
        let r = self
            .call(
                key,
                "GET",
                &format!("/v1/checkins/?page_size=100{query}"),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// How many check-ins the organization holds (archived too).
    pub async fn count(&self) -> usize {
        self.listed(&self.admin_key, "&include_archived=true")
            .await
            .len()
    }
}

/// The body of a check-in asking `team` every day at 00:00 UTC.
pub(crate) fn standup_body(team: &str) -> Value {
    json!({
        "name": "Standup",
        "schedule": {"days": [0, 1, 2, 3, 4, 5, 6], "time": "00:00", "timezone": "UTC"},
        "participants": {"team_uuids": [team]},
        "questions": [
            {"question": "What did you do?", "question_type": "text", "short_question": "Done"},
            {"question": "Anything blocking you?", "question_type": "text", "required": false, "short_question": "Blockers"},
        ],
    })
}

#[actix_web::test]
async fn a_created_check_in_holds_every_setting_and_reads_back_alike() {
    let w = World::new().await;
    let body = json!({
        "name": "Daily standup",
        "schedule": {"days": [1, 3, 5], "time": "09:30", "timezone": "Europe/Madrid"},
        "participants": {"user_uuids": [w.bob], "team_uuids": [w.eng]},
        "report_channels": ["C2", "C1"],
        "questions": [
            {"question": "What did you complete yesterday?", "question_type": "text"},
            {"question": "How do you feel?", "question_type": "multiple_choice", "options": ["Good", "Bad"], "required": false, "variations": ["Feeling?"]},
            {"question": "Blocked?", "question_type": "boolean", "is_blocker": true, "short_question": "Blocked"},
            {"question": "Hours worked?", "question_type": "numeric", "required": false},
        ],
        "generate_short_question": true,
        "start_on": "2026-01-05",
        "end_on": "2027-01-05",
        "frequency_type": "weekly",
        "frequency": 2,
        "is_trigger_based": false,
        "use_participant_timezone": true,
        "reminders_max_count": 3,
        "reminders_frequency_time": 45,
        "reminders_trigger_condition": "smart_frequency",
        "reminder_tone": "persuasive",
        "use_user_defined_work_days": true,
        "allow_responses_before_trigger": false,
        "allow_past_responses": true,
        "allow_future_responses": true,
        "is_anonymous": false,
        "privacy": "managers_and_admins",
        "send_reports_one_by_one": true,
        "custom_template_intro": "Good morning!",
        "custom_template_outro": "Thanks!",
        "time_for_report": "17:00",
        "is_smart_checkin": true,
        "is_intelligence_enabled": true,
        "max_clarifying_questions": 2,
        "frequency_advanced": "disabled",
    });
    let created = w.create(&w.admin_key, body).await;
    let id = created["uuid"].as_str().unwrap().to_owned();
    assert_eq!(created["id"], id);
    let expected = json!({
        "name": "Daily standup",
        "active": true, "is_active": true, "is_archived": false, "can_be_edited": true,
        "template": null, "created_by": w.admin,
        "schedule": {"days": [1, 3, 5], "time": "09:30", "timezone": "Europe/Madrid"},
        "frequency_type": "weekly", "frequency": 2, "frequency_on_days": [1, 3, 5],
        "frequency_advanced": "disabled", "frequency_cron": null,
        "start_on": "2026-01-05", "end_on": "2027-01-05",
        "is_trigger_based": false, "use_participant_timezone": true,
        "reminders_max_count": 3, "reminders_frequency_time": 45,
        "reminders_trigger_condition": "smart_frequency", "reminder_tone": "persuasive",
        "use_user_defined_work_days": true, "allow_responses_before_trigger": false,
        "allow_past_responses": true, "allow_future_responses": true, "is_anonymous": false,
        "privacy": "managers_and_admins", "send_reports_one_by_one": true,
        "custom_template_intro": "Good morning!", "custom_template_outro": "Thanks!",
        "time_for_report": "17:00", "is_smart_checkin": true, "is_intelligence_enabled": true,
        "max_clarifying_questions": 2, "questions_version": 1,
    });
    let named = json!({
        "participants": {
            "users": [{"uuid": w.bob, "name": "Bob Test"}],
            "teams": [{"uuid": w.eng, "name": "Eng"}],
        },
        "report_channels": [
            {"id": "C2", "uuid": "C2", "name": "eng", "platform": "slack", "type": "channel", "reporting_enabled": true},
            {"id": "C1", "uuid": "C1", "name": "standups", "platform": "slack", "type": "channel", "reporting_enabled": true},
        ],
    });
    for (k, v) in expected
        .as_object()
        .unwrap()
        .iter()
        .chain(named.as_object().unwrap())
    {
        assert_eq!(&created[k], v, "{k}");
    }
    let questions = created["questions"].as_array().unwrap();
    let shape: Vec<(u64, &str, &str, bool, bool)> = questions
        .iter()
        .map(|q| {
            (
                q["index"].as_u64().unwrap(),
                q["question_type"].as_str().unwrap(),
                q["short_question"].as_str().unwrap(),
                q["required"].as_bool().unwrap(),
                q["is_blocker"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (0, "text", "Complete yesterday", true, false),
            (1, "multiple_choice", "Feel", false, false),
            (2, "boolean", "Blocked", true, true),
            (3, "numeric", "Hours worked", false, false),
        ]
    );
    assert_eq!(
        questions[1]["choices"],
        json!([{"label": "Good", "value": "Good"}, {"label": "Bad", "value": "Bad"}])
    );
    assert_eq!(questions[1]["variations"], json!(["Feeling?"]));
    // The detail and the plain read answer the same document.
    let detail = w.stored(&id).await;
    assert_eq!(detail, created);
    let plain = w
        .call(&w.admin_key, "GET", &format!("/v1/checkins/{id}/"), None)
        .await;
    assert_eq!(plain.status, 200, "{}", plain.text);
    assert_eq!(plain.body, created);
    // A participant reads it too, but may not change it.
    let by_ada = w
        .call(
            &w.ada_key,
            "GET",
            &format!("/v1/checkins/{id}/detail/"),
            None,
        )
        .await;
    assert_eq!(by_ada.status, 200);
    assert_eq!(by_ada.body["can_be_edited"], false);
    assert_eq!(w.listed(&w.admin_key, "").await, ["Daily standup"]);
}

#[actix_web::test]
async fn admins_and_team_managers_author_others_are_refused() {
    let w = World::new().await;
    // A member, a guest: refused, nothing stored.
    for key in [&w.ada_key, &w.bob_key, &w.guest_key] {
        let r = w
            .call(
                key,
                "POST",
                "/v1/checkins/create/",
                Some(standup_body(&w.eng)),
            )
            .await;
        r.assert_error(403, "checkin_permission_denied");
    }
    // The team's manager asks their team, and its members.
    let mut own = standup_body(&w.eng);
    own["participants"]["user_uuids"] = json!([w.ada, w.max]);
    let by_max = w.create(&w.max_key, own).await;
    assert_eq!(by_max["created_by"], w.max);
    // Not someone outside it.
    let mut outside = standup_body(&w.eng);
    outside["participants"] = json!({"user_uuids": [w.bob]});
    let r = w
        .call(
            &w.max_key,
            "POST",
            "/v1/checkins/create/",
            Some(outside.clone()),
        )
        .await;
    r.assert_error(403, "checkin_permission_denied");
    assert_eq!(r.body["extra"]["uuids"], json!([w.bob]));
    // The spec's door is for admins only, whatever the role rule.
    for key in [&w.max_key, &w.ada_key] {
        let r = w
            .call(key, "POST", "/v1/followups/", Some(standup_body(&w.eng)))
            .await;
        r.assert_error(403, "org_admin_required");
    }
    let r = w
        .call(&w.admin_key, "POST", "/v1/followups/", Some(outside))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["participants"]["users"][0]["uuid"], w.bob);
    assert_eq!(w.count().await, 2);
}

#[actix_web::test]
async fn every_authoring_code_refuses_and_stores_nothing() {
    let w = World::new().await;
    let with = |patch: Value| {
        let mut body = standup_body(&w.eng);
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() {
                body.as_object_mut().unwrap().remove(k);
            } else {
                body[k] = v.clone();
            }
        }
        body
    };
    let refused = |body: Value, status: u16, code: &'static str| {
        let w = &w;
        async move {
            let r = w
                .call(&w.admin_key, "POST", "/v1/checkins/create/", Some(body))
                .await;
            r.assert_error(status, code);
            r
        }
    };
    refused(with(json!({"questions": []})), 400, "questions_required").await;
    refused(with(json!({"questions": null})), 400, "questions_required").await;
    let r = refused(
        with(json!({"questions": [{"question": "No label?"}]})),
        400,
        "short_question_required",
    )
    .await;
    assert!(r.body["errors"]["questions[0].short_question"].is_array());
    refused(
        with(json!({"participants": {}})),
        400,
        "checkin_requires_participant",
    )
    .await;
    refused(
        with(json!({"participants": null})),
        400,
        "checkin_requires_participant",
    )
    .await;
    let r = refused(
        with(json!({"report_channels": ["C1", "C9"]})),
        400,
        "report_channel_not_found",
    )
    .await;
    assert_eq!(r.body["extra"]["uuids"], json!(["C9"]));
    refused(
        with(json!({"report_channels": ["C1", "C2", "C3", "C4"]})),
        400,
        "too_many_report_channels",
    )
    .await;
    for (patch, parameter) in [
        (json!({"schedule": {"days": [7]}}), "schedule.days"),
        (json!({"schedule": {"time": "9am"}}), "schedule.time"),
        (
            json!({"schedule": {"timezone": "Mars/Base"}}),
            "schedule.timezone",
        ),
        (json!({"frequency": 0}), "frequency"),
        (json!({"frequency_type": "hourly"}), "frequency_type"),
        (json!({"frequency_advanced": "custom"}), "frequency_cron"),
        (
            json!({"frequency_advanced": "custom", "frequency_cron": "0 9 * *"}),
            "frequency_cron",
        ),
        (json!({"start_on": "2026-02-30"}), "start_on"),
        (
            json!({"start_on": "2026-03-01", "end_on": "2026-02-01"}),
            "end_on",
        ),
    ] {
        let r = refused(with(patch), 400, "invalid_schedule").await;
        assert_eq!(r.body["extra"]["parameter"], parameter, "{}", r.text);
        assert!(r.body["errors"][parameter].is_array(), "{}", r.text);
    }
    let r = refused(with(json!({"surprise": true})), 400, "unknown_field").await;
    assert_eq!(r.body["extra"]["parameter"], "surprise");
    let r = refused(
        with(json!({"schedule": {"days": [1], "hour": 9}})),
        400,
        "unknown_field",
    )
    .await;
    assert_eq!(r.body["extra"]["parameter"], "schedule.hour");
    let r = refused(
        with(json!({"reminders_max_count": 6, "privacy": "nobody", "name": null})),
        400,
        "params_validation_error",
    )
    .await;
    for field in ["reminders_max_count", "privacy", "name"] {
        assert!(r.body["errors"][field].is_array(), "{field}: {}", r.text);
    }
    let r = refused(
        with(json!({"is_intelligence_enabled": true})),
        400,
        "params_validation_error",
    )
    .await;
    assert!(r.body["errors"]["is_intelligence_enabled"].is_array());
    let r = refused(
        with(json!({"participants": {"user_uuids": ["not-a-uuid"]}})),
        400,
        "params_validation_error",
    )
    .await;
    assert!(
        r.body["errors"]["participants.user_uuids.0"].is_array(),
        "{}",
        r.text
    );
    assert_eq!(w.count().await, 0);

    // The short question is generated, deterministically, when asked to.
    let made = w
        .create(
            &w.admin_key,
            with(json!({"questions": [{"question": "What did you complete yesterday?"}], "generate_short_question": true})),
        )
        .await;
    assert_eq!(made["questions"][0]["short_question"], "Complete yesterday");
}

#[actix_web::test]
async fn a_template_gives_a_new_check_in_its_questions() {
    let w = World::new().await;
    // The built-in "Daily Standup" template.
    let template = "0190a000-0000-7000-8000-000000000001";
    let mut body = standup_body(&w.eng);
    body.as_object_mut().unwrap().remove("questions");
    body["template"] = json!(template);
    let made = w.create(&w.admin_key, body.clone()).await;
    assert_eq!(made["template"], template);
    let texts: Vec<&str> = made["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["question"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "What did you complete yesterday?",
            "What are you working on today?",
            "Anything blocking you?"
        ]
    );
    assert_eq!(
        made["custom_template_intro"],
        "Good morning! Time for your daily standup."
    );
    // A forms template is not a check-ins one.
    body["template"] = json!("0190a000-0000-7000-8000-000000000005");
    let r = w
        .call(&w.admin_key, "POST", "/v1/checkins/create/", Some(body))
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["template"].is_array());
    assert_eq!(w.count().await, 1);
}

#[actix_web::test]
async fn config_changes_what_it_names_and_only_for_admins_and_the_author() {
    let w = World::new().await;
    let mut body = standup_body(&w.eng);
    body["participants"]["user_uuids"] = json!([w.ada]);
    let c = w.create(&w.max_key, body).await;
    let id = c["uuid"].as_str().unwrap();
    let path = format!("/v1/checkins/{id}/config/");
    let r = w
        .call(
            &w.max_key,
            "PATCH",
            &path,
            Some(json!({"schedule": {"time": "10:15"}, "name": "Eng daily", "allow_past_responses": true, "end_on": "2027-01-01"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let stored = w.stored(id).await;
    assert_eq!(stored, r.body, "the author and an admin read the same");
    assert_eq!(stored["name"], "Eng daily");
    assert_eq!(
        stored["schedule"],
        json!({"days": [0, 1, 2, 3, 4, 5, 6], "time": "10:15", "timezone": "UTC"})
    );
    assert_eq!(stored["allow_past_responses"], true);
    assert_eq!(stored["participants"], c["participants"], "kept");
    // null clears an optional value.
    let r = w
        .call(&w.max_key, "PATCH", &path, Some(json!({"end_on": null})))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(w.stored(id).await["end_on"], Value::Null);
    // Participants are replaced as a whole.
    let r = w
        .call(
            &w.max_key,
            "PATCH",
            &path,
            Some(json!({"participants": {"user_uuids": [w.ada]}})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        w.stored(id).await["participants"],
        json!({"users": [{"uuid": w.ada, "name": "Ada Test"}], "teams": []})
    );
    // A participant who did not author it; someone who cannot see it; another organization.
    let rename = Some(json!({"name": "Mine"}));
    w.call(&w.ada_key, "PATCH", &path, rename.clone())
        .await
        .assert_error(403, "checkin_permission_denied");
    w.call(&w.bob_key, "PATCH", &path, rename.clone())
        .await
        .assert_error(404, "not_found");
    w.call(&w.outsider_key, "PATCH", &path, rename.clone())
        .await
        .assert_error(404, "not_found");
    w.call(
        &w.admin_key,
        "PATCH",
        "/v1/checkins/not-a-uuid/config/",
        rename.clone(),
    )
    .await
    .assert_error(404, "not_found");
    // The config door takes settings, not questions; unknown keys are refused, not dropped.
    w.call(&w.admin_key, "PATCH", &path, Some(json!({"questions": []})))
        .await
        .assert_error(400, "unknown_field");
    w.call(
        &w.admin_key,
        "PATCH",
        &path,
        Some(json!({"participants": {}})),
    )
    .await
    .assert_error(400, "checkin_requires_participant");
    assert_eq!(w.stored(id).await["name"], "Eng daily");
    // Admins may change anyone's; anonymity, once on, stays.
    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &path,
            Some(json!({"is_anonymous": true})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    w.call(
        &w.admin_key,
        "PATCH",
        &path,
        Some(json!({"is_anonymous": false})),
    )
    .await
    .assert_error(400, "anonymous_irreversible");
    assert_eq!(w.stored(id).await["is_anonymous"], true);
    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &path,
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!((r.status, r.body["active"].clone()), (200, json!(false)));
}

#[actix_web::test]
async fn archiving_hides_a_check_in_from_lists_and_keeps_it_readable() {
    let w = World::new().await;
    let c = w.standup(json!({})).await;
    let id = c["uuid"].as_str().unwrap();
    let path = format!("/v1/checkins/{id}/archive/");
    w.call(&w.ada_key, "DELETE", &path, None)
        .await
        .assert_error(403, "checkin_permission_denied");
    w.call(&w.bob_key, "DELETE", &path, None)
        .await
        .assert_error(404, "not_found");
    for _ in 0..2 {
        let r = w.call(&w.admin_key, "DELETE", &path, None).await;
        assert_eq!(r.status, 204, "{}", r.text);
    }
    let stored = w.stored(id).await;
    assert_eq!(
        (stored["is_archived"].clone(), stored["active"].clone()),
        (json!(true), json!(false))
    );
    assert!(w.listed(&w.admin_key, "").await.is_empty());
    assert_eq!(
        w.listed(&w.admin_key, "&include_archived=true").await,
        ["Standup"]
    );
    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &format!("/v1/checkins/{id}/config/"),
            Some(json!({"is_active": true})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert_eq!(w.stored(id).await["active"], false);
}

#[actix_web::test]
async fn questions_are_added_changed_removed_and_reordered() {
    let w = World::new().await;
    let c = w.standup(json!({})).await;
    let id = c["uuid"].as_str().unwrap();
    let q = |i: usize| c["questions"][i]["uuid"].as_str().unwrap().to_owned();
    let (q1, q2) = (q(0), q(1));
    let base = format!("/v1/checkins/{id}/questions/");
    let r = w
        .call(&w.admin_key, "POST", &base, Some(json!({"question": "Score from 1 to 5?", "question_type": "numeric", "generate_short_question": true})))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        (r.body["index"].clone(), r.body["question_type"].clone()),
        (json!(2), json!("numeric"))
    );
    let q3 = r.body["uuid"].as_str().unwrap().to_owned();
    w.call(
        &w.admin_key,
        "POST",
        &base,
        Some(json!({"question": "Unlabelled"})),
    )
    .await
    .assert_error(400, "short_question_required");
    w.call(
        &w.admin_key,
        "POST",
        &base,
        Some(json!({"question": "x", "short_question": "x", "question_type": "essay"})),
    )
    .await
    .assert_error(400, "params_validation_error");
    w.call(
        &w.ada_key,
        "POST",
        &base,
        Some(json!({"question": "x", "short_question": "x"})),
    )
    .await
    .assert_error(403, "checkin_permission_denied");

    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &format!("{base}{q1}/"),
            Some(json!({"question": "What did you ship?", "required": false})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (
            r.body["question"].clone(),
            r.body["required"].clone(),
            r.body["short_question"].clone()
        ),
        (json!("What did you ship?"), json!(false), json!("Done"))
    );
    w.call(
        &w.admin_key,
        "PATCH",
        &format!("{base}{}/", uuid::Uuid::now_v7()),
        Some(json!({"required": true})),
    )
    .await
    .assert_error(404, "not_found");
    w.call(
        &w.admin_key,
        "PATCH",
        &format!("{base}{q1}/"),
        Some(json!({"answer": 1})),
    )
    .await
    .assert_error(400, "unknown_field");

    let reorder = format!("{base}reorder/");
    w.call(
        &w.admin_key,
        "PUT",
        &reorder,
        Some(json!({"question_uuids": []})),
    )
    .await
    .assert_error(400, "question_uuids_required");
    w.call(
        &w.admin_key,
        "PUT",
        &reorder,
        Some(json!({"question_uuids": [q3, q1]})),
    )
    .await
    .assert_error(400, "question_uuids_incomplete");
    w.call(
        &w.admin_key,
        "PUT",
        &reorder,
        Some(json!({"question_uuids": [q3, q1, q1, q2]})),
    )
    .await
    .assert_error(400, "question_uuids_duplicate");
    let r = w
        .call(
            &w.admin_key,
            "PUT",
            &reorder,
            Some(json!({"question_uuids": [q3, q1, q2]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["reordered"], true);
    let order: Vec<String> = w.stored(id).await["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["uuid"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(order, [q3.clone(), q1.clone(), q2.clone()]);

    for gone in [&q1, &q2] {
        let r = w
            .call(
                &w.admin_key,
                "DELETE",
                &format!("{base}{gone}/delete/"),
                None,
            )
            .await;
        assert_eq!(r.status, 204, "{}", r.text);
    }
    w.call(&w.admin_key, "DELETE", &format!("{base}{q3}/delete/"), None)
        .await
        .assert_error(400, "questions_required");
    w.call(&w.admin_key, "DELETE", &format!("{base}{q1}/delete/"), None)
        .await
        .assert_error(404, "not_found");
    let stored = w.stored(id).await;
    assert_eq!(stored["questions"].as_array().unwrap().len(), 1);
    // Created at 1: add, edit, reorder and two removals.
    assert_eq!(stored["questions_version"], 6);
}

#[actix_web::test]
async fn members_see_what_they_take_part_in_and_other_organizations_nothing() {
    let w = World::new().await;
    let team = w.standup(json!({"name": "Team"})).await;
    let mut bobs = standup_body(&w.eng);
    bobs["name"] = json!("Bob's");
    bobs["participants"] = json!({"user_uuids": [w.bob]});
    let bobs = w.create(&w.admin_key, bobs).await;
    assert_eq!(w.listed(&w.admin_key, "").await, ["Bob's", "Team"]);
    assert_eq!(w.listed(&w.ada_key, "").await, ["Team"]);
    assert_eq!(w.listed(&w.bob_key, "").await, ["Bob's"]);
    assert!(w.listed(&w.guest_key, "").await.is_empty());
    assert!(w.listed(&w.outsider_key, "").await.is_empty());
    let team_id = team["uuid"].as_str().unwrap();
    let bobs_id = bobs["uuid"].as_str().unwrap();
    for path in [
        format!("/v1/checkins/{bobs_id}/"),
        format!("/v1/checkins/{bobs_id}/detail/"),
    ] {
        w.call(&w.ada_key, "GET", &path, None)
            .await
            .assert_error(404, "not_found");
    }
    for path in [
        format!("/v1/checkins/{team_id}/detail/"),
        "/v1/checkins/not-a-uuid/detail/".to_owned(),
    ] {
        w.call(&w.outsider_key, "GET", &path, None)
            .await
            .assert_error(404, "not_found");
    }
}

#[actix_web::test]
async fn the_list_filters_and_tells_each_days_completion() {
    let w = World::new().await;
    let daily = w
        .standup(json!({"name": "Daily 100%", "start_on": "2026-01-01"}))
        .await;
    let retro = w
        .standup(json!({"name": "Spring retro", "start_on": "2026-03-01", "end_on": "2026-05-31"}))
        .await;
    let old = w
        .standup(json!({"name": "Old", "start_on": "2025-01-01"}))
        .await;
    let old_id = old["uuid"].as_str().unwrap();
    let r = w
        .call(
            &w.admin_key,
            "DELETE",
            &format!("/v1/checkins/{old_id}/archive/"),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        w.listed(&w.ada_key, "&search=RETRO").await,
        ["Spring retro"]
    );
    assert_eq!(w.listed(&w.ada_key, "&search=%25").await, ["Daily 100%"]);
    assert_eq!(
        w.listed(&w.ada_key, "&include_archived=true").await,
        ["Daily 100%", "Old", "Spring retro"]
    );
    assert_eq!(
        w.listed(&w.ada_key, "&start_date=2026-06-01&end_date=2026-12-31")
            .await,
        ["Daily 100%"]
    );
    assert_eq!(
        w.listed(&w.ada_key, "&start_date=2026-04-01&end_date=2026-04-01")
            .await,
        ["Daily 100%", "Spring retro"]
    );

    // Labels (any of them) and the caller's stars.
    let r = w
        .call(
            &w.admin_key,
            "POST",
            "/v1/labels/",
            Some(json!({"name": "Rituals"})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let label = r.body["uuid"].as_str().unwrap().to_owned();
    let retro_id = retro["uuid"].as_str().unwrap();
    let r = w
        .call(
            &w.admin_key,
            "POST",
            &format!("/v1/checkins/{retro_id}/labels/"),
            Some(json!({"label_uuids": [label]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        w.listed(&w.ada_key, &format!("&labels={label}")).await,
        ["Spring retro"]
    );
    assert_eq!(
        w.listed(
            &w.ada_key,
            &format!("&labels={label},{}", uuid::Uuid::now_v7())
        )
        .await,
        ["Spring retro"]
    );
    let r = w
        .call(
            &w.ada_key,
            "PUT",
            &format!("/v1/me/featured/checkins/{retro_id}/"),
            Some(json!({"featured": true})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        w.listed(&w.ada_key, "&featured=true").await,
        ["Spring retro"]
    );
    assert!(
        w.listed(&w.max_key, "&featured=true").await.is_empty(),
        "stars are private"
    );
    assert_eq!(
        w.listed(&w.ada_key, "&prioritize_featured=true").await,
        ["Spring retro", "Daily 100%"]
    );

    // Bad filters.
    let bad = |query: &'static str, code: &'static str| {
        let w = &w;
        async move {
            let r = w
                .call(&w.ada_key, "GET", &format!("/v1/checkins/?{query}"), None)
                .await;
            r.assert_error(400, code);
            r
        }
    };
    let r = bad("labels=nope", "invalid_filter_value").await;
    assert_eq!(r.body["extra"]["parameter"], "labels");
    bad(
        "start_date=2026-05-01&end_date=2026-04-01",
        "invalid_date_range",
    )
    .await;
    bad("date=tomorrow", "invalid_date_range").await;
    let long = "a".repeat(257);
    let r = w
        .call(
            &w.ada_key,
            "GET",
            &format!("/v1/checkins/?search={long}"),
            None,
        )
        .await;
    r.assert_error(400, "search_query_too_long");

    // The day's completion, summary and pending people.
    let daily_id = daily["uuid"].as_str().unwrap();
    let q = daily["questions"][0]["uuid"].as_str().unwrap();
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &format!("/v1/checkins/{daily_id}/responses/"),
            Some(json!({"responses": [{"uuid": q, "index": 0, "response": "Shipped"}]})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let day = r.body["response_date"].as_str().unwrap().to_owned();
    let row = |key: &str, query: String| {
        let w = &w;
        let key = key.to_owned();
        async move {
            let r = w
                .call(
                    &key,
                    "GET",
                    &format!("/v1/checkins/?search=Daily{query}"),
                    None,
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.text);
            r.body["results"][0].clone()
        }
    };
    let ada_row = row(
        &w.ada_key,
        format!("&date={day}&include_summary=true&include_pending_users=true"),
    )
    .await;
    assert_eq!(ada_row["response_completed"], true);
    assert_eq!(ada_row["date"], day);
    assert_eq!(
        ada_row["summary"],
        json!({"expected_responses": 2, "completed_responses": 1, "completed_percentage": 50.0})
    );
    assert_eq!(
        ada_row["pending_users"],
        json!([{"uuid": w.max, "full_name": "Max Test"}])
    );
    let max_row = row(&w.max_key, format!("&date={day}")).await;
    assert_eq!(max_row["response_completed"], false);
    assert_eq!(max_row["summary"], json!({}));
    assert!(max_row.get("pending_users").is_none());
    let today_row = row(&w.ada_key, String::new()).await;
    assert_eq!(
        today_row["response_completed"], true,
        "default: the caller's today"
    );
    let other_day = row(
        &w.ada_key,
        "&date=2026-01-02&include_summary=true".to_owned(),
    )
    .await;
    assert_eq!(other_day["response_completed"], false);
    assert_eq!(other_day["summary"]["completed_responses"], 0);
    // Anonymous check-ins never list who is pending.
    let r = w
        .call(
            &w.admin_key,
            "PATCH",
            &format!("/v1/checkins/{daily_id}/config/"),
            Some(json!({"is_anonymous": true})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let anon = row(
        &w.admin_key,
        format!("&date={day}&include_pending_users=true"),
    )
    .await;
    assert!(
        anon.get("pending_users").is_some_and(Value::is_null),
        "{anon}"
    );
}
