//! `GET /v1/cli/status/` and `POST /v1/cli/updates/`: the caller's check-ins pending today with
//! their questions, and progress updates attached to them as today's responses (created, then
//! updated), through API keys and CLI tokens, on the free plan, and every refusal.

use serde_json::{Value, json};
use teamcomm_tests::TestApp;

/// An organization on `plan`: an admin key, a member with a CLI token and an API key, and a
/// check-in "Standup" asking the member every day at 00:00 UTC (done, mood, doing, a blocker).
struct World {
    app: TestApp,
    org: String,
    admin_key: String,
    member: String,
    member_key: Option<String>,
    token: String,
    standup: String,
}

async fn cli_token(app: &TestApp, user: &str) -> String {
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/cli-tokens/"),
            None,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["token"].as_str().unwrap().to_owned()
}

fn standup_body(name: &str, participant: &str, time: &str) -> Value {
    json!({
        "name": name,
        "schedule": {"days": [0, 1, 2, 3, 4, 5, 6], "time": time, "timezone": "UTC"},
        "participants": {"user_uuids": [participant]},
        "allow_responses_before_trigger": false,
        "questions": [
            {"question": "What did you do yesterday?", "question_type": "text", "short_question": "Done"},
            {"question": "How do you feel?", "question_type": "multiple_choice", "options": ["Good", "Meh"], "required": false, "short_question": "Mood"},
            {"question": "What will you do today?", "question_type": "text", "short_question": "Doing"},
            {"question": "Is anything in your way?", "question_type": "text", "required": false, "is_blocker": true, "short_question": "Blockers"},
        ],
    })
}

impl World {
    async fn new(plan: &str) -> World {
        let app = TestApp::spawn().await;
        // Check-ins are authored with an admin's API key, which free plans refuse: author on
        // business, then move the organization to `plan`.
        let (org, _, session, admin_key) = app.org_with_admin_key("business").await;
        let member = app.create_user(&org, "member").await;
        let r = app
            .send(
                "POST",
                "/v1/checkins/create/",
                &[("X-API-KEY", &admin_key)],
                Some(standup_body("Standup", &member, "00:00")),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        let standup = r.body["uuid"].as_str().unwrap().to_owned();
        let member_key = if plan == "business" {
            let (_, key) = app
                .create_key(&session, json!({"name": "m", "for_user_id": member}))
                .await;
            Some(key)
        } else {
            let r = app
                .operator(
                    "PATCH",
                    &format!("/operator/v1/organizations/{org}/"),
                    Some(json!({"plan": plan})),
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.text);
            None
        };
        World {
            token: cli_token(&app, &member).await,
            app,
            org,
            admin_key,
            member,
            member_key,
            standup,
        }
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    async fn status(&self) -> Value {
        let r = self
            .app
            .send(
                "GET",
                "/v1/cli/status/",
                &[("Authorization", &self.bearer())],
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body
    }

    async fn update(&self, body: Value) -> teamcomm_tests::Resp {
        self.app
            .send(
                "POST",
                "/v1/cli/updates/",
                &[("Authorization", &self.bearer())],
                Some(body),
            )
            .await
    }

    /// The member's responses to `checkin`, as the admin lists them (what is stored).
    async fn stored(&self, checkin: &str) -> Vec<Value> {
        let r = self
            .app
            .get_with_key(
                &format!(
                    "/v1/checkins/{checkin}/responses/?page_size=100&user={}",
                    self.member
                ),
                &self.admin_key,
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["results"].as_array().unwrap().clone()
    }
}

fn today() -> String {
    time::OffsetDateTime::now_utc().date().to_string()
}

/// `(question, response)` of a stored response's answers.
fn answers(response: &Value) -> Vec<(String, Value)> {
    response["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["question"].as_str().unwrap().to_owned(),
                a["response"].clone(),
            )
        })
        .collect()
}

#[actix_web::test]
async fn cli_status_lists_todays_pending_check_ins_with_their_questions() {
    let w = World::new("business").await;
    // Not listed: a paused check-in of the member's, and one asking someone else.
    let other = w.app.create_user(&w.org, "member").await;
    for (name, who, active) in [("Paused", &w.member, false), ("Theirs", &other, true)] {
        let mut body = standup_body(name, who, "00:00");
        body["is_active"] = json!(active);
        let r = w
            .app
            .send(
                "POST",
                "/v1/checkins/create/",
                &[("X-API-KEY", &w.admin_key)],
                Some(body),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
    }

    let s = w.status().await;
    assert_eq!(s["count"], 1, "{s}");
    let pending = &s["pending_checkins"][0];
    assert_eq!(pending["followup_uuid"], w.standup.as_str(), "{s}");
    assert_eq!(pending["followup_name"], "Standup", "{s}");
    assert_eq!(pending["date"], today(), "{s}");
    let questions = pending["template_questions"].as_array().unwrap();
    assert_eq!(questions.len(), 4, "{s}");
    let q: Vec<(&str, &str, bool)> = questions
        .iter()
        .map(|q| {
            assert!(q["uuid"].is_string(), "{q}");
            (
                q["question"].as_str().unwrap(),
                q["question_type"].as_str().unwrap(),
                q["is_blocker"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        q,
        [
            ("What did you do yesterday?", "text", false),
            ("How do you feel?", "multiple_choice", false),
            ("What will you do today?", "text", false),
            ("Is anything in your way?", "text", true),
        ]
    );
    assert_eq!(questions[1]["options"], json!(["Good", "Meh"]));
    assert_eq!(questions[0]["options"], json!([]));

    // The member's API key reads the same list.
    let r = w
        .app
        .get_with_key("/v1/cli/status/", w.member_key.as_ref().unwrap())
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body, s);
    // The admin is asked nothing.
    let r = w.app.get_with_key("/v1/cli/status/", &w.admin_key).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body, json!({"pending_checkins": [], "count": 0}));

    // Once the member completed today's response, it is no longer pending.
    let ids: Vec<&Value> = questions.iter().map(|q| &q["uuid"]).collect();
    let r = w
        .app
        .send(
            "POST",
            &format!("/v1/checkins/{}/responses/", w.standup),
            &[("Authorization", &w.bearer())],
            Some(json!({"responses": [
                {"uuid": ids[0], "index": 0, "response": "a"},
                {"uuid": ids[2], "index": 2, "response": "b"},
            ]})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        w.status().await,
        json!({"pending_checkins": [], "count": 0})
    );
}

#[actix_web::test]
async fn cli_update_creates_then_updates_todays_response() {
    let w = World::new("business").await;
    let r = w
        .update(json!({"done": "Auth module", "doing": "Tests", "blocked": "Waiting on review"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["followups_count"], 1, "{}", r.text);
    let a = &r.body["attached_followups"][0];
    assert_eq!(a["followup_name"], "Standup", "{a}");
    assert_eq!(a["followup_uuid"], w.standup.as_str(), "{a}");
    assert_eq!(a["action"], "created", "{a}");
    assert_eq!(a["response_date"], today(), "{a}");
    assert_eq!(a["response_completed"], true, "{a}");

    let stored = w.stored(&w.standup).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["uuid"], a["response_uuid"]);
    assert_eq!(stored[0]["response_date"], today());
    assert_eq!(stored[0]["response_completed"], true);
    assert_eq!(
        answers(&stored[0]),
        [
            (
                "What did you do yesterday?".to_owned(),
                json!("Auth module")
            ),
            ("What will you do today?".to_owned(), json!("Tests")),
            (
                "Is anything in your way?".to_owned(),
                json!("Waiting on review")
            ),
        ]
    );
    let completed = w
        .app
        .events(&w.org, Some("followups.response.completed"))
        .await;
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["data"]["response"]["uuid"], a["response_uuid"]);
    // Completed: nothing pending any more.
    assert_eq!(w.status().await["count"], 0);

    // A message alone changes the first text question of the same response; the rest stays.
    let r = w
        .update(json!({"message": "Auth module and the docs"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"followups_count": 1, "attached_followups": [{
            "followup_uuid": w.standup, "followup_name": "Standup", "action": "updated",
            "response_uuid": a["response_uuid"], "response_date": today(), "response_completed": true,
        }]})
    );
    let stored = w.stored(&w.standup).await;
    assert_eq!(stored.len(), 1, "one response a day");
    assert_eq!(
        answers(&stored[0]),
        [
            (
                "What did you do yesterday?".to_owned(),
                json!("Auth module and the docs")
            ),
            ("What will you do today?".to_owned(), json!("Tests")),
            (
                "Is anything in your way?".to_owned(),
                json!("Waiting on review")
            ),
        ]
    );
    let updated = w
        .app
        .events(&w.org, Some("followups.response.updated"))
        .await;
    assert_eq!(updated.len(), 1);
}

#[actix_web::test]
async fn cli_update_of_done_only_leaves_a_partial_response_still_pending() {
    let w = World::new("business").await;
    let key = w.member_key.clone().unwrap();
    let r = w
        .app
        .send(
            "POST",
            "/v1/cli/updates/",
            &[("X-API-KEY", &key)],
            Some(json!({"done": "Reviews"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["attached_followups"][0]["action"], "created");
    assert_eq!(r.body["attached_followups"][0]["response_completed"], false);
    let stored = w.stored(&w.standup).await;
    assert_eq!(stored[0]["response_completed"], false);
    assert_eq!(
        answers(&stored[0]),
        [("What did you do yesterday?".to_owned(), json!("Reviews"))]
    );
    assert!(
        w.app
            .events(&w.org, Some("followups.response.completed"))
            .await
            .is_empty()
    );
    // Still pending; doing completes it.
    assert_eq!(w.status().await["count"], 1);
    let r = w.update(json!({"doing": "Planning"})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["attached_followups"][0]["action"], "updated");
    assert_eq!(r.body["attached_followups"][0]["response_completed"], true);
    assert_eq!(w.status().await["count"], 0);
}

#[actix_web::test]
async fn cli_update_refusals_and_nothing_due() {
    let w = World::new("business").await;
    // Nothing sent, blanks only, an unknown field, a part too long.
    for body in [
        json!({}),
        json!({"message": "   ", "done": ""}),
        json!({"done": "x".repeat(2001)}),
    ] {
        let r = w.update(body.clone()).await;
        r.assert_error(400, "params_validation_error");
    }
    w.update(json!({"message": "x", "mood": "great"}))
        .await
        .assert_error(400, "unknown_field");
    assert!(w.stored(&w.standup).await.is_empty());

    // The admin takes part in nothing: nothing attached.
    let r = w
        .app
        .send(
            "POST",
            "/v1/cli/updates/",
            &[("X-API-KEY", &w.admin_key)],
            Some(json!({"message": "hello"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"followups_count": 0, "attached_followups": []})
    );

    // No credential.
    let r = w
        .app
        .send(
            "POST",
            "/v1/cli/updates/",
            &[],
            Some(json!({"message": "x"})),
        )
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
}

#[actix_web::test]
async fn cli_update_before_the_check_ins_time_is_refused_by_its_rule() {
    let w = World::new("business").await;
    // A second member with only a check-in whose time is still ahead today (23:59 UTC) and
    // that takes no answers before then.
    let late = w.app.create_user(&w.org, "member").await;
    let r = w
        .app
        .send(
            "POST",
            "/v1/checkins/create/",
            &[("X-API-KEY", &w.admin_key)],
            Some(standup_body("Late", &late, "23:59")),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let late_id = r.body["uuid"].as_str().unwrap().to_owned();
    let token = cli_token(&w.app, &late).await;
    let bearer = format!("Bearer {token}");
    let r = w
        .app
        .send(
            "POST",
            "/v1/cli/updates/",
            &[("Authorization", &bearer)],
            Some(json!({"message": "early bird"})),
        )
        .await;
    // (Run in the last minute of a UTC day this would be accepted; the suite does not.)
    r.assert_error(400, "followup_not_allow_responses_before_trigger_time");
    let stored = w
        .app
        .get_with_key(&format!("/v1/checkins/{late_id}/responses/"), &w.admin_key)
        .await;
    assert_eq!(stored.body["count"], 0, "{}", stored.text);
}

#[actix_web::test]
async fn cli_status_is_on_the_free_plan_allow_list_and_updates_are_not() {
    let w = World::new("free").await;
    let s = w.status().await;
    assert_eq!(s["count"], 1, "{s}");
    assert_eq!(
        s["pending_checkins"][0]["followup_uuid"],
        w.standup.as_str()
    );
    let r = w.update(json!({"done": "x", "doing": "y"})).await;
    r.assert_error(403, "plan_upgrade_required");
    // Nothing was stored: the check-in is still pending and no response completed it.
    assert_eq!(w.status().await["count"], 1);
    assert!(
        w.app
            .events(&w.org, Some("followups.response.completed"))
            .await
            .is_empty()
    );
}
