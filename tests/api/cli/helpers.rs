//! `dailybot status`, `dailybot update …`, `dailybot checkin list|complete` (which read
//! `GET /v1/cli/status/`) and `dailybot ask …` (the assistant, against the local
//! OpenAI-compatible stub of `cli_assistant.rs`), logged in with a CLI token.

use super::*;
use crate::cli_assistant::Stub;

/// A member asked "Standup" (done, doing, a blocker question) every day at 00:00 UTC, with a
/// CLI token: (app's admin key, member, token, check-in).
async fn member_with_standup(app: &TestApp, plan: &str) -> (String, String, String, String) {
    let (org, _, _, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let r = app
        .send(
            "POST",
            "/v1/checkins/create/",
            &[("X-API-KEY", &admin_key)],
            Some(json!({
                "name": "Standup",
                "schedule": {"days": [0, 1, 2, 3, 4, 5, 6], "time": "00:00", "timezone": "UTC"},
                "participants": {"user_uuids": [member]},
                "questions": [
                    {"question": "What did you do yesterday?", "question_type": "text", "short_question": "Done"},
                    {"question": "What will you do today?", "question_type": "text", "short_question": "Doing"},
                    {"question": "Any blockers?", "question_type": "text", "required": false, "is_blocker": true, "short_question": "Blockers"},
                ],
            })),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let checkin = r.body["uuid"].as_str().unwrap().to_owned();
    if plan != "business" {
        let r = app
            .operator(
                "PATCH",
                &format!("/operator/v1/organizations/{org}/"),
                Some(json!({"plan": plan})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let token = cli_token(app, &member).await;
    (admin_key, member, token, checkin)
}

/// The member's responses to the check-in, as the admin's key lists them.
async fn stored(app: &TestApp, admin_key: &str, checkin: &str) -> Vec<Value> {
    let r = app
        .get_with_key(&format!("/v1/checkins/{checkin}/responses/"), admin_key)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["results"].as_array().unwrap().clone()
}

fn answer_texts(response: &Value) -> Vec<String> {
    response["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["response"].as_str().unwrap().to_owned())
        .collect()
}

#[actix_web::test]
async fn cli_status_shows_todays_pending_check_ins() {
    let app = TestApp::spawn().await;
    let (_, _, token, checkin) = member_with_standup(&app, "business").await;

    let s = dailybot(&app, &token_env(&token), &["status", "--json"])
        .await
        .ok_json();
    assert_eq!(s["count"], 1, "{s}");
    let c = &s["pending_checkins"][0];
    assert_eq!(c["followup_uuid"], checkin.as_str(), "{s}");
    assert_eq!(c["followup_name"], "Standup", "{s}");
    let questions: Vec<&str> = c["template_questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["question"].as_str().unwrap())
        .collect();
    assert_eq!(
        questions,
        [
            "What did you do yesterday?",
            "What will you do today?",
            "Any blockers?"
        ]
    );
    assert_eq!(c["template_questions"][2]["is_blocker"], true);

    // Human output: a panel per check-in, its questions, the blocker marked.
    let run = dailybot(&app, &token_env(&token), &["status"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    for needle in ["Standup", "What will you do today?", "[blocker]"] {
        assert!(run.stdout.contains(needle), "{needle:?}: {run:#?}");
    }

    // `checkin list` reads the same door (and adds each question's index).
    let l = dailybot(&app, &token_env(&token), &["checkin", "list", "--json"])
        .await
        .ok_json();
    assert_eq!(l["count"], 1, "{l}");
    assert_eq!(
        l["pending_checkins"][0]["template_questions"][1]["index"],
        1
    );
}

#[actix_web::test]
async fn cli_update_with_parts_then_a_message_submits_then_updates() {
    let app = TestApp::spawn().await;
    let (admin_key, _, token, checkin) = member_with_standup(&app, "business").await;

    let run = dailybot(
        &app,
        &token_env(&token),
        &[
            "update",
            "--done",
            "Auth module",
            "--doing",
            "Tests",
            "--blocked",
            "None",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Update submitted to 1 check-in(s)"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("Standup (Submitted)"), "{run:#?}");
    let rows = stored(&app, &admin_key, &checkin).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["response_completed"], true);
    assert_eq!(answer_texts(&rows[0]), ["Auth module", "Tests", "None"]);

    // Completed: `status` has nothing pending.
    let run = dailybot(&app, &token_env(&token), &["status"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("No pending check-ins"), "{run:#?}");

    // A free-text update changes the first question of the same response.
    let run = dailybot(
        &app,
        &token_env(&token),
        &["update", "Auth module, and the docs"],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Standup (Updated)"), "{run:#?}");
    let rows = stored(&app, &admin_key, &checkin).await;
    assert_eq!(rows.len(), 1, "one response a day");
    assert_eq!(
        answer_texts(&rows[0]),
        ["Auth module, and the docs", "Tests", "None"]
    );
}

#[actix_web::test]
async fn cli_update_with_nothing_due_says_so() {
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let member = app.create_user(&org, "member").await;
    let token = cli_token(&app, &member).await;
    let run = dailybot(&app, &token_env(&token), &["update", "hello"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        format!("{}{}", run.stdout, run.stderr).contains("no check-ins were matched"),
        "{run:#?}"
    );
}

#[actix_web::test]
async fn cli_checkin_complete_answers_a_pending_check_in() {
    let app = TestApp::spawn().await;
    let (admin_key, _, token, checkin) = member_with_standup(&app, "business").await;
    let run = dailybot(
        &app,
        &token_env(&token),
        &[
            "checkin",
            "complete",
            &checkin,
            "-a",
            "0=Shipped",
            "-a",
            "1=Planning",
            "-a",
            "2=Nothing",
            "--yes",
            "--json",
        ],
    )
    .await;
    let r = run.ok_json();
    assert_eq!(r["response_completed"], true, "{r}");
    let rows = stored(&app, &admin_key, &checkin).await;
    assert_eq!(answer_texts(&rows[0]), ["Shipped", "Planning", "Nothing"]);
    // No longer pending: completing it again is refused by the CLI (usage error).
    let run = dailybot(
        &app,
        &token_env(&token),
        &[
            "checkin", "complete", &checkin, "-a", "0=x", "--yes", "--json",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_USAGE, "{run:#?}");
}

#[actix_web::test]
async fn cli_free_plan_token_reads_status_but_cannot_update() {
    let app = TestApp::spawn().await;
    let (_, _, token, checkin) = member_with_standup(&app, "free").await;
    let s = dailybot(&app, &token_env(&token), &["status", "--json"])
        .await
        .ok_json();
    assert_eq!(s["pending_checkins"][0]["followup_uuid"], checkin.as_str());
    // 403 plan_upgrade_required: `update` exits 1 (it reports any 401/403 as a session problem).
    let run = dailybot(&app, &token_env(&token), &["update", "--done", "x"]).await;
    assert_eq!(run.code, 1, "{run:#?}");
    let s = dailybot(&app, &token_env(&token), &["status", "--json"])
        .await
        .ok_json();
    assert_eq!(s["count"], 1, "nothing was stored: {s}");
}

#[actix_web::test]
async fn cli_ask_answers_through_the_configured_model_and_keeps_the_session() {
    let stub = Stub::start();
    let app = crate::cli_assistant::app_with(&stub).await;
    let (_, _, token, _) = member_with_standup(&app, "business").await;

    let a = dailybot(
        &app,
        &token_env(&token),
        &["ask", "What is pending for me?", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(a["message"], "Answer 1", "{a}");
    assert_eq!(a["actions"], json!([]), "{a}");
    assert_eq!(a["classification"], "answer", "{a}");
    let session = a["session_id"].as_str().unwrap().to_owned();
    let seen = stub.seen();
    assert_eq!(seen.len(), 1);
    let system = seen[0].1["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Standup (pending)"), "{system}");
    assert_eq!(
        seen[0].1["messages"][1]["content"],
        "What is pending for me?"
    );

    // `--session-id` continues the thread; human output is the answer verbatim.
    let run = dailybot(
        &app,
        &token_env(&token),
        &["ask", "And then?", "--session-id", &session],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert_eq!(run.stdout.trim(), "Answer 2", "{run:#?}");
    let messages = stub.seen()[1].1["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[2]["content"], "Answer 1");
}

#[actix_web::test]
async fn cli_ask_without_a_model_reports_the_503() {
    let app = TestApp::spawn().await;
    let (_, _, token, _) = member_with_standup(&app, "business").await;
    dailybot(&app, &token_env(&token), &["ask", "hello", "--json"])
        .await
        .assert_api_error(1, 503, Some("assistant_not_configured"));
}
