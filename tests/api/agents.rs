//! The agent doors: `POST /v1/agent-email/send/` (e-mail an agent sends to people of the
//! organization through the queue), its refusals, its tenant boundary and its rate scope;
//! reports, health, messages left for agents and their read marks; registration without a
//! credential, the agent key it mints (on the agent doors only) and the claim of its
//! organization by a signed-in person.

use serde_json::{Value, json};
use teamcomm_tests::TestApp;

/// A person of `org` at a fresh address; answers (uuid, address).
async fn person(app: &TestApp, org: &str, role: &str) -> (String, String) {
    let email = format!("{}@example.com", uuid::Uuid::new_v4().simple());
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": email, "first_name": "Pat", "last_name": "Doe", "role": role})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    (r.body["uuid"].as_str().unwrap().to_owned(), email)
}

async fn send(app: &TestApp, key: &str, body: Value) -> teamcomm_tests::Resp {
    app.send(
        "POST",
        "/v1/agent-email/send/",
        &[("X-API-KEY", key)],
        Some(body),
    )
    .await
}

#[actix_web::test]
async fn an_agent_email_is_queued_for_people_of_the_organization_only() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    let (mia, mia_at) = person(&app, &org, "member").await;
    let (gone, gone_at) = person(&app, &org, "member").await;
    app.deactivate(&gone).await;
    let (other_org, _, _, _) = app.org_with_admin_key("business").await;
    let (_, outsider_at) = person(&app, &other_org, "member").await;

    let r = send(
        &app,
        &key,
        json!({
            "agent_name": "Build Bot",
            "to": [mia_at.to_uppercase(), mia_at, gone_at, outsider_at, "someone@example.org"],
            "subject": "Build passed",
            "body_html": "<p>All <b>green</b>.</p>",
            "metadata": {"run": 42},
        }),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(
        (
            &r.body["sent_count"],
            &r.body["total_recipients"],
            &r.body["reply_to"]
        ),
        (&json!(1), &json!(4), &Value::Null),
        "{}",
        r.text
    );
    let ids = r.body["email_ids"].as_array().unwrap();
    assert_eq!(ids.len(), 1);
    let email = app
        .get_with_key(&format!("/v1/emails/{}/", ids[0].as_str().unwrap()), &key)
        .await;
    assert_eq!(email.status, 200, "{}", email.text);
    assert_eq!(
        (
            &email.body["status"],
            &email.body["recipient_uuid"],
            &email.body["subject"]
        ),
        (&json!("queued"), &json!(mia), &json!("Build passed"))
    );
}

#[actix_web::test]
async fn an_agent_email_names_its_bad_fields_and_queues_nothing() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    let (_, mia_at) = person(&app, &org, "member").await;

    let r = send(
        &app,
        &key,
        json!({"agent_name": " ", "to": ["nope"], "subject": "a\nb", "body_html": " "}),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    for field in ["agent_name", "to", "subject", "body_html"] {
        assert!(r.body["errors"][field].is_array(), "{field}: {}", r.text);
    }
    let r = send(
        &app,
        &key,
        json!({"agent_name": "Bot", "to": [], "subject": "Hi", "body_html": "x"}),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    let r = send(
        &app,
        &key,
        json!({"agent_name": "Bot", "to": [mia_at], "subject": "Hi", "body_html": "x", "cc": []}),
    )
    .await;
    r.assert_error(400, "unknown_field");
    assert_eq!(r.body["extra"]["parameter"], "cc", "{}", r.text);
    let r = send(&app, &key, json!({"agent_name": "Bot"})).await;
    r.assert_error(400, "params_validation_error");
    for field in ["to", "subject", "body_html"] {
        assert!(r.body["errors"][field].is_array(), "{field}: {}", r.text);
    }

    // Nothing was queued by any refusal.
    let mut conn = app.database.pool().get().await.expect("connection");
    let queued: i64 = diesel_async::RunQueryDsl::get_result(
        diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "(SELECT count(*) FROM emails) + (SELECT count(*) FROM jobs)",
        )),
        &mut conn,
    )
    .await
    .expect("count");
    assert_eq!(queued, 0);
}

#[actix_web::test]
async fn agent_emails_spend_the_agent_budget() {
    let app = TestApp::builder()
        .var("TEAMCOMM_RATE_LIMIT_PER_HOUR_AGENT", "1")
        .spawn()
        .await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    let (_, mia_at) = person(&app, &org, "member").await;
    let body = json!({"agent_name": "Bot", "to": [mia_at], "subject": "Hi", "body_html": "x"});
    assert_eq!(send(&app, &key, body.clone()).await.status, 202);
    let r = send(&app, &key, body).await;
    assert_eq!(r.status, 429, "{}", r.text);
    assert!(r.headers.contains_key("retry-after"), "{:?}", r.headers);
    // Other scopes are untouched.
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);
}

// ------------------------------------------------------------------ reports, health, messages

/// One number the database answers (`sql` selects a bigint).
async fn scalar(app: &TestApp, sql: &str) -> i64 {
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel_async::RunQueryDsl::get_result(
        diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(sql)),
        &mut conn,
    )
    .await
    .expect("scalar")
}

async fn agent(
    app: &TestApp,
    key: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> teamcomm_tests::Resp {
    app.send(method, path, &[("X-API-KEY", key)], body).await
}

/// Leaves a message for `to`; answers its id.
async fn leave_message(app: &TestApp, key: &str, to: &str, content: &str) -> String {
    let r = agent(
        app,
        key,
        "POST",
        "/v1/agent-messages/",
        Some(json!({"agent_name": to, "content": content})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["id"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn a_report_is_kept_with_its_co_authors_and_answers_the_pending_messages() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    let (mia, mia_at) = person(&app, &org, "member").await;
    let waiting = leave_message(&app, &key, "Build Bot", "Review PR #42").await;

    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-reports/",
        Some(json!({
            "agent_name": "Build Bot",
            "content": "Deployed v2.1 to staging",
            "structured": {"tests": 42, "passed": true},
            "metadata": {"repo": "api", "branch": "main"},
            "is_milestone": true,
            "co_authors": [mia_at.to_uppercase(), mia],
        })),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let b = &r.body;
    assert!(b["id"].is_string(), "{}", r.text);
    assert_eq!(b["agent_name"], "Build Bot");
    assert_eq!(b["content"], "Deployed v2.1 to staging");
    assert_eq!(b["structured"], json!({"tests": 42, "passed": true}));
    assert_eq!(b["metadata"], json!({"repo": "api", "branch": "main"}));
    assert_eq!(b["is_milestone"], true);
    assert_eq!(b["co_authors"], json!([{"uuid": mia, "name": "Pat Doe"}]));
    assert!(b["created_at"].is_string());
    let pending = b["pending_messages"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{}", r.text);
    assert_eq!(pending[0]["id"], waiting.as_str());
    assert_eq!(pending[0]["content"], "Review PR #42");
    assert_eq!(pending[0]["sender_type"], "user");

    // Stored as answered; the message is still pending (the agent claims it).
    let id = b["id"].as_str().unwrap();
    let stored = scalar(
        &app,
        &format!(
            "(SELECT count(*) FROM agent_reports WHERE id = '{id}' AND organization_id = '{org}' \
             AND is_milestone AND structured = '{{\"tests\": 42, \"passed\": true}}'::jsonb \
             AND co_authors->0->>'uuid' = '{mia}')"
        ),
    )
    .await;
    assert_eq!(stored, 1);
    let pending = scalar(
        &app,
        &format!(
            "(SELECT count(*) FROM agent_messages WHERE id = '{waiting}' AND delivered_at IS NULL)"
        ),
    )
    .await;
    assert_eq!(pending, 1);
}

#[actix_web::test]
async fn report_refusals_name_their_field_and_keep_nothing() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let (other_org, _, _, _) = app.org_with_admin_key("business").await;
    let (stranger, _) = person(&app, &other_org, "member").await;
    for (body, field) in [
        (json!({"agent_name": " ", "content": "x"}), "agent_name"),
        (
            json!({"agent_name": "a".repeat(129), "content": "x"}),
            "agent_name",
        ),
        (json!({"agent_name": "Bot", "content": " "}), "content"),
        (
            json!({"agent_name": "Bot", "content": "x", "co_authors": [stranger]}),
            "co_authors",
        ),
        (
            json!({"agent_name": "Bot", "content": "x", "co_authors": ["nobody@example.org"]}),
            "co_authors",
        ),
        (
            json!({"agent_name": "Bot", "content": "x", "structured": [1]}),
            "structured",
        ),
    ] {
        let r = agent(&app, &key, "POST", "/v1/agent-reports/", Some(body.clone())).await;
        r.assert_error(400, "params_validation_error");
        assert!(r.body["errors"][field].is_array(), "{body}: {}", r.text);
    }
    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-reports/",
        Some(json!({"agent_name": "Bot", "content": "x", "summary": "y"})),
    )
    .await;
    r.assert_error(400, "unknown_field");
    assert_eq!(
        scalar(&app, "(SELECT count(*) FROM agent_reports)").await,
        0
    );
}

#[actix_web::test]
async fn health_keeps_its_history_and_a_check_delivers_the_pending_messages() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let r = agent(
        &app,
        &key,
        "GET",
        "/v1/agent-health/?agent_name=Build%20Bot",
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (
            &r.body["agent_name"],
            &r.body["status"],
            &r.body["last_check"]
        ),
        (&json!("Build Bot"), &json!("unknown"), &Value::Null)
    );
    assert_eq!(r.body["history"], json!([]));

    let waiting = leave_message(&app, &key, "Build Bot", "Rebase").await;
    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-health/",
        Some(json!({"agent_name": "Build Bot", "ok": true, "message": "All good"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["status"], "healthy");
    assert_eq!(
        r.body["pending_messages"][0]["id"],
        waiting.as_str(),
        "{}",
        r.text
    );
    assert_eq!(r.body["pending_messages"][0]["delivered"], true);
    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-health/",
        Some(json!({"agent_name": "Build Bot", "ok": false, "message": "DB unreachable"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["pending_messages"], json!([]), "delivered once");

    for path in [
        "/v1/agent-health/?agent_name=Build%20Bot",
        "/v1/agent/health/?agent_name=Build%20Bot",
    ] {
        let r = agent(&app, &key, "GET", path, None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let b = &r.body;
        assert_eq!(
            (&b["status"], &b["message"]),
            (&json!("unhealthy"), &json!("DB unreachable"))
        );
        assert!(b["last_check"].is_string());
        let history = b["history"].as_array().unwrap();
        assert_eq!(history.len(), 2);
        assert_eq!(
            (
                &history[0]["status"],
                &history[0]["message"],
                &history[1]["status"],
                &history[1]["message"]
            ),
            (
                &json!("unhealthy"),
                &json!("DB unreachable"),
                &json!("healthy"),
                &json!("All good")
            )
        );
        // Every value of a check is a string or null (the CLI prints them raw).
        for entry in history {
            for (_, v) in entry.as_object().unwrap() {
                assert!(v.is_string() || v.is_null(), "{entry}");
            }
        }
    }
    assert_eq!(
        scalar(
            &app,
            "(SELECT count(*) FROM agent_health_checks WHERE agent_name = 'Build Bot')"
        )
        .await,
        2
    );
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_messages WHERE id = '{waiting}' AND delivered_at IS NOT NULL)")).await,
        1
    );
    let r = agent(&app, &key, "GET", "/v1/agent-health/", None).await;
    r.assert_error(400, "params_validation_error");
    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-health/",
        Some(json!({"agent_name": "Bot", "ok": "yes"})),
    )
    .await;
    r.assert_error(400, "params_validation_error");
}

#[actix_web::test]
async fn messages_are_listed_filtered_and_marked_read_within_their_organization() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let (_, _, _, other_key) = app.org_with_admin_key("business").await;
    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-messages/",
        Some(json!({
            "agent_name": "Claude Code",
            "content": "Review PR #42",
            "message_type": "command",
            "metadata": {"pr": 42},
            "expires_at": "2999-01-01T00:00:00",
            "sender_type": "agent",
            "sender_name": "CI Bot",
        })),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let first = r.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        (
            &r.body["agent_name"],
            &r.body["message_type"],
            &r.body["sender_type"],
            &r.body["sender_name"]
        ),
        (
            &json!("Claude Code"),
            &json!("command"),
            &json!("agent"),
            &json!("CI Bot")
        )
    );
    assert_eq!(r.body["expires_at"], "2999-01-01T00:00:00Z");
    let second = leave_message(&app, &key, "Claude Code", "Then merge").await;
    leave_message(&app, &key, "Other Agent", "Not yours").await;
    let theirs = leave_message(&app, &other_key, "Claude Code", "Another org").await;

    let r = agent(
        &app,
        &key,
        "GET",
        "/v1/agent-messages/?agent_name=Claude%20Code&delivered=false",
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let ids: Vec<&str> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [first.as_str(), second.as_str()],
        "a bare array, oldest first"
    );
    let r = agent(&app, &key, "GET", "/v1/agent-messages/", None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 3, "{}", r.text);

    // Another organization's id is not counted, nor changed.
    let r = agent(
        &app,
        &key,
        "PATCH",
        "/v1/agent-messages/read/",
        Some(json!({"message_ids": [first, theirs]})),
    )
    .await;
    assert_eq!(
        (r.status, &r.body),
        (200, &json!({"updated": 1})),
        "{}",
        r.text
    );
    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-messages/read/",
        Some(json!({"message_ids": [first, second]})),
    )
    .await;
    assert_eq!(
        (r.status, &r.body),
        (200, &json!({"updated": 1})),
        "{}",
        r.text
    );
    let r = agent(
        &app,
        &key,
        "GET",
        "/v1/agent-messages/?agent_name=Claude%20Code&delivered=false",
        None,
    )
    .await;
    assert_eq!(r.body, json!([]), "{}", r.text);
    let r = agent(
        &app,
        &key,
        "GET",
        "/v1/agent-messages/?agent_name=Claude%20Code&delivered=true",
        None,
    )
    .await;
    assert_eq!(r.body.as_array().unwrap().len(), 2, "{}", r.text);
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_messages WHERE id = '{theirs}' AND delivered_at IS NULL)")).await,
        1
    );
    let r = agent(&app, &other_key, "GET", "/v1/agent-messages/", None).await;
    assert_eq!(r.body.as_array().unwrap().len(), 1, "{}", r.text);

    for (body, field) in [
        (
            json!({"agent_name": "A", "content": "x", "message_type": "shout"}),
            "message_type",
        ),
        (
            json!({"agent_name": "A", "content": "x", "expires_at": "2001-01-01T00:00:00Z"}),
            "expires_at",
        ),
        (
            json!({"agent_name": "A", "content": "x", "expires_at": "soon"}),
            "expires_at",
        ),
        (
            json!({"agent_name": "A", "content": "x", "sender_type": "robot"}),
            "sender_type",
        ),
    ] {
        let r = agent(
            &app,
            &key,
            "POST",
            "/v1/agent-messages/",
            Some(body.clone()),
        )
        .await;
        r.assert_error(400, "params_validation_error");
        assert!(r.body["errors"][field].is_array(), "{body}: {}", r.text);
    }
    let r = agent(
        &app,
        &key,
        "PATCH",
        "/v1/agent-messages/read/",
        Some(json!({"message_ids": ["nope"]})),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    let r = agent(
        &app,
        &key,
        "GET",
        "/v1/agent-messages/?delivered=maybe",
        None,
    )
    .await;
    r.assert_error(400, "params_validation_error");
}

// ------------------------------------------------------------------ registration and claim

/// Fetches a riddle and answers (challenge_id, the right answer).
async fn challenge(app: &TestApp) -> (String, i64) {
    let r = app
        .send("GET", "/v1/agent/register/challenge/", &[], None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let instruction = r.body["instruction"].as_str().unwrap();
    let n: i64 = instruction
        .split("session is ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `session is <N>.` in {instruction}"));
    (r.body["challenge_id"].as_str().unwrap().to_owned(), n * 52)
}

fn registration(challenge_id: &str, answer: i64) -> Value {
    json!({
        "challenge_id": challenge_id,
        "answer": answer,
        "reason": "Agent 'Claude Code' registering for org 'Bots Inc'",
        "org_name": "Bots Inc",
        "agent_name": "Claude Code",
        "timezone": "UTC",
    })
}

/// Registers an agent; answers the registration's body.
async fn register(app: &TestApp) -> Value {
    let (id, answer) = challenge(app).await;
    let r = app
        .send(
            "POST",
            "/v1/agent/register/",
            &[],
            Some(registration(&id, answer)),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body
}

#[actix_web::test]
async fn registration_refuses_wrong_used_and_expired_answers() {
    let app = TestApp::spawn().await;
    let (id, answer) = challenge(&app).await;
    let r = app
        .send(
            "POST",
            "/v1/agent/register/",
            &[],
            Some(registration(&id, answer + 1)),
        )
        .await;
    r.assert_error(400, "agent_challenge_failed");
    let r = app
        .send(
            "POST",
            "/v1/agent/register/",
            &[],
            Some(registration(&id, answer)),
        )
        .await;
    r.assert_error(400, "agent_challenge_failed");

    let (id, answer) = challenge(&app).await;
    assert_eq!(
        scalar(&app, "(SELECT count(*) FROM agent_register_challenges)").await,
        1
    );
    {
        let mut conn = app.database.pool().get().await.expect("connection");
        diesel_async::RunQueryDsl::execute(
            diesel::sql_query(format!(
                "UPDATE agent_register_challenges SET expires_at = now() - interval '1 second' \
                 WHERE id = '{id}'"
            )),
            &mut conn,
        )
        .await
        .expect("expire the challenge");
    }
    let r = app
        .send(
            "POST",
            "/v1/agent/register/",
            &[],
            Some(registration(&id, answer)),
        )
        .await;
    r.assert_error(400, "agent_challenge_expired");
    assert!(
        r.body["detail"].as_str().unwrap().contains("expired"),
        "{}",
        r.text
    );

    // A malformed body does not spend the challenge.
    let (id, answer) = challenge(&app).await;
    let mut bad = registration(&id, answer);
    bad["org_name"] = json!(" ");
    let r = app
        .send("POST", "/v1/agent/register/", &[], Some(bad))
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["org_name"].is_array(), "{}", r.text);
    assert_eq!(
        scalar(&app, "(SELECT count(*) FROM agent_registrations)").await,
        0
    );
    let r = app
        .send(
            "POST",
            "/v1/agent/register/",
            &[],
            Some(registration(&id, answer)),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[actix_web::test]
async fn a_registered_agent_works_the_agent_doors_and_a_person_claims_its_organization() {
    let app = TestApp::spawn().await;
    let done = register(&app).await;
    let key = done["api_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("tca_"), "{done}");
    assert_eq!(
        (&done["agent_name"], &done["org_name"]),
        (&json!("Claude Code"), &json!("Bots Inc"))
    );
    let email = done["agent_email"].as_str().unwrap();
    assert!(
        email.starts_with("claude-code-") && email.contains("@agents."),
        "{done}"
    );
    let claim_url = done["claim_url"].as_str().unwrap();
    let token = claim_url.rsplit('/').next().unwrap().to_owned();
    assert!(claim_url.contains("/agent/claim/tcx_"), "{done}");
    let org = done["org_uuid"].as_str().unwrap().to_owned();

    // A free organization, its key and claim token stored hashed.
    assert_eq!(
        scalar(
            &app,
            &format!("(SELECT count(*) FROM organizations WHERE id = '{org}' AND plan = 'free')")
        )
        .await,
        1
    );
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_keys WHERE organization_id = '{org}' AND key_hash = sha256('{key}'::bytea))")).await,
        1
    );
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_registrations WHERE organization_id = '{org}' AND claim_token_hash = sha256('{token}'::bytea) AND claimed_at IS NULL)")).await,
        1
    );
    assert_eq!(
        scalar(
            &app,
            &format!("(SELECT count(*) FROM users WHERE organization_id = '{org}')")
        )
        .await,
        0
    );

    // The key works the agent doors of its organization, as its agent.
    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-reports/",
        Some(json!({"agent_name": "Claude Code", "content": "Registered"})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let r = agent(
        &app,
        &key,
        "POST",
        "/v1/agent-messages/",
        Some(json!({"agent_name": "Helper", "content": "hi"})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        (&r.body["sender_type"], &r.body["sender_name"]),
        (&json!("agent"), &json!("Claude Code"))
    );
    let r = agent(
        &app,
        &key,
        "GET",
        "/v1/agent-health/?agent_name=Claude%20Code",
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_reports WHERE organization_id = '{org}' AND created_by_id IS NULL)")).await,
        1
    );
    // ... and never acts as a person.
    for (method, path) in [
        ("GET", "/v1/me/"),
        ("GET", "/v1/users/"),
        ("POST", "/v1/kudos/"),
    ] {
        let r = agent(&app, &key, method, path, Some(json!({}))).await;
        r.assert_error(403, "insufficient_scope");
    }

    // The claim link: a preview, then a signed-in person of another organization claims it.
    let r = app
        .send(
            "GET",
            &format!("/v1/agent/claim/{token}/preview/"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (&r.body["org_uuid"], &r.body["agent_name"]),
        (&json!(org), &json!("Claude Code"))
    );
    let r = app
        .send("POST", &format!("/v1/agent/claim/{token}/"), &[], None)
        .await;
    r.assert_error(401, "credential_absent");
    let home = app.create_org("business").await;
    let (claimant, claimant_at) = person(&app, &home, "member").await;
    let session = app.session(&claimant).await;
    let r = app
        .send(
            "POST",
            &format!("/v1/agent/claim/{token}/"),
            &[("Authorization", &session)],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (&r.body["org_uuid"], &r.body["admin_email"], &r.body["role"]),
        (&json!(org), &json!(claimant_at), &json!("admin"))
    );
    let admin = r.body["admin_uuid"].as_str().unwrap();
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM users WHERE id = '{admin}' AND organization_id = '{org}' AND role = 'admin' AND email = '{claimant_at}')")).await,
        1
    );
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_registrations WHERE organization_id = '{org}' AND claimed_by_id = '{admin}' AND claimed_at IS NOT NULL)")).await,
        1
    );
    // The link is spent; the agent key keeps working.
    let r = app
        .send(
            "POST",
            &format!("/v1/agent/claim/{token}/"),
            &[("Authorization", &session)],
            None,
        )
        .await;
    r.assert_error(404, "agent_claim_link_invalid");
    let r = app
        .send(
            "GET",
            &format!("/v1/agent/claim/{token}/preview/"),
            &[],
            None,
        )
        .await;
    r.assert_error(404, "agent_claim_link_invalid");
    let r = app
        .send("GET", "/v1/agent/claim/tcx_garbage/preview/", &[], None)
        .await;
    r.assert_error(404, "agent_claim_link_invalid");
    let r = agent(&app, &key, "GET", "/v1/agent-messages/", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[actix_web::test]
async fn agent_keys_are_taken_by_the_agent_doors_only() {
    use teamcomm_api::policy::Credentials;
    use teamcomm_api::routes::registry;
    let app = TestApp::spawn().await;
    let registered = register(&app).await["api_key"].as_str().unwrap().to_owned();
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    let (_, minted) = app
        .create_key(&session, json!({"name": "bot", "is_agent_key": true}))
        .await;
    let mut doors = 0;
    for r in registry()
        .routes()
        .iter()
        // Plan doors take agent keys as no person (their own matrix: tests/api/plan/rules.rs).
        .filter(|r| r.policy.credentials == Credentials::ApiKeyOrCli && r.policy.plan.is_none())
    {
        let path = teamcomm_tests::concrete_path(&r.path);
        for key in [&registered, &minted] {
            let res = agent(&app, key, r.method, &path, Some(json!({}))).await;
            let refused = res.status == 403 && res.code() == "insufficient_scope";
            // A registered agent's key is refused by the e-mail door too (an e-mail's sender
            // is a person); an admin's agent key sends as its owner.
            let takes =
                r.policy.agent_keys && !(r.path.contains("email") && key.starts_with("tca_"));
            assert_eq!(
                refused,
                !takes,
                "{} {} with {}: {} {}",
                r.method,
                r.path,
                &key[..4],
                res.status,
                res.text
            );
            assert_ne!(res.status, 401, "{} {}: {}", r.method, r.path, res.text);
        }
        doors += usize::from(r.policy.agent_keys);
    }
    assert_eq!(doors, 12);
}

#[actix_web::test]
async fn registration_and_agent_keys_spend_the_agent_budget() {
    let app = TestApp::builder()
        .var("TEAMCOMM_RATE_LIMIT_PER_HOUR_AGENT", "2")
        .spawn()
        .await;
    // Per client address: a challenge and a registration, then the address is out of budget.
    let done = register(&app).await;
    let r = app
        .send("GET", "/v1/agent/register/challenge/", &[], None)
        .await;
    r.assert_error(429, "throttled");
    assert!(r.headers.contains_key("retry-after"), "{:?}", r.headers);
    // The agent key has a budget of its own.
    let key = done["api_key"].as_str().unwrap();
    let report = json!({"agent_name": "Claude Code", "content": "x"});
    for _ in 0..2 {
        let r = agent(
            &app,
            key,
            "POST",
            "/v1/agent-reports/",
            Some(report.clone()),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let r = agent(&app, key, "POST", "/v1/agent-reports/", Some(report)).await;
    r.assert_error(429, "throttled");
}

#[actix_web::test]
async fn of_two_racing_claims_one_wins() {
    let app = TestApp::spawn().await;
    let done = register(&app).await;
    let token = done["claim_url"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    let home = app.create_org("business").await;
    let (a, _) = person(&app, &home, "member").await;
    let (b, _) = person(&app, &home, "member").await;
    let (sa, sb) = (app.session(&a).await, app.session(&b).await);
    let path = format!("/v1/agent/claim/{token}/");
    let (ha, hb) = (
        [("Authorization", sa.as_str())],
        [("Authorization", sb.as_str())],
    );
    let (ra, rb) = tokio::join!(
        app.send("POST", &path, &ha, None),
        app.send("POST", &path, &hb, None),
    );
    let mut statuses = [ra.status, rb.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 404], "{} / {}", ra.text, rb.text);
    let org = done["org_uuid"].as_str().unwrap();
    assert_eq!(
        scalar(
            &app,
            &format!("(SELECT count(*) FROM users WHERE organization_id = '{org}')")
        )
        .await,
        1
    );
}

#[actix_web::test]
async fn an_agent_renews_its_claim_link_until_a_person_claims_the_organization() {
    let app = TestApp::spawn().await;
    let done = register(&app).await;
    let key = done["api_key"].as_str().unwrap();
    let token_of = |url: &str| url.rsplit('/').next().unwrap().to_owned();
    let old = token_of(done["claim_url"].as_str().unwrap());
    let r = agent(&app, key, "POST", "/v1/agent/claim-token/", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["claim_expires_at"].is_string(), "{}", r.text);
    let new = token_of(r.body["claim_url"].as_str().unwrap());
    assert_ne!(old, new);
    let r = app
        .send("GET", &format!("/v1/agent/claim/{old}/preview/"), &[], None)
        .await;
    r.assert_error(404, "agent_claim_link_invalid");
    let org = done["org_uuid"].as_str().unwrap();
    assert_eq!(
        scalar(
            &app,
            &format!(
                "(SELECT count(*) FROM agent_registrations WHERE organization_id = '{org}' \
                 AND claim_token_hash = sha256('{new}'::bytea))"
            )
        )
        .await,
        1
    );
    // A person's key may not ask (the organization has no person yet anyway).
    let (_, _, _, person_key) = app.org_with_admin_key("business").await;
    let r = agent(&app, &person_key, "POST", "/v1/agent/claim-token/", None).await;
    r.assert_error(403, "permission_denied");
    // Once claimed, no new link.
    let home = app.create_org("business").await;
    let (claimant, _) = person(&app, &home, "member").await;
    let session = app.session(&claimant).await;
    let r = app
        .send(
            "POST",
            &format!("/v1/agent/claim/{new}/"),
            &[("Authorization", &session)],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = agent(&app, key, "POST", "/v1/agent/claim-token/", None).await;
    r.assert_error(409, "agent_organization_claimed");
}
