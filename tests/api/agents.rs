//! The agent doors: `POST /v1/agent-email/send/` (e-mail an agent sends to people of the
//! organization through the queue), its refusals, its tenant boundary and its rate scope.

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
    let r = app
        .operator(
            "PATCH",
            &format!("/operator/v1/users/{gone}/"),
            Some(json!({"is_active": false})),
        )
        .await;
    assert!(r.status < 300, "{}", r.text);
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
