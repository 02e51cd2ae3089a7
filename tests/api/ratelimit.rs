//! Hourly budgets per credential and scope: 429 with a correct `Retry-After`, headers on every
//! answer, and budgets kept apart per credential and per scope.

use serde_json::json;
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn exhausting_a_scope_answers_429_with_retry_after() {
    let app = TestApp::builder()
        .var("TEAMCOMM_RATE_LIMIT_PER_HOUR_READS", "3")
        .var("TEAMCOMM_RATE_LIMIT_PER_HOUR_WRITES", "2")
        .spawn()
        .await;
    let (_, _, session, key) = app.org_with_admin_key("business").await;

    for remaining in [2, 1, 0] {
        let r = app.get_with_key("/v1/me/", &key).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("ratelimit-policy"), Some("\"reads\";q=3;w=3600"));
        let state = r.header("ratelimit").unwrap();
        assert!(
            state.starts_with(&format!("\"reads\";r={remaining};t=")),
            "{state}"
        );
    }
    let r = app.get_with_key("/v1/users/", &key).await;
    r.assert_error(429, "throttled");
    // One request every 1200 s; the next is about 20 minutes away.
    let retry: u64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!((1190..=1200).contains(&retry), "{retry}");
    assert_eq!(r.body["extra"]["retry_after"], retry);
    assert_eq!(r.body["extra"]["scope"], "reads");
    assert!(r.body["detail"].as_str().unwrap().contains("throttled"));

    // Writes have their own budget.
    let r = app
        .send(
            "POST",
            "/v1/teams/",
            &[("X-API-KEY", &key)],
            Some(json!({"name": "A"})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.header("ratelimit-policy"), Some("\"writes\";q=2;w=3600"));

    // Another key of the same person has its own budget.
    let (_, second) = app.create_key(&session, json!({"name": "second"})).await;
    assert_eq!(app.get_with_key("/v1/me/", &second).await.status, 200);
    // So does another organization.
    let (_, _, _, other) = app.org_with_admin_key("business").await;
    assert_eq!(app.get_with_key("/v1/me/", &other).await.status, 200);
}

#[actix_web::test]
async fn enterprise_organizations_get_more() {
    let app = TestApp::builder()
        .var("TEAMCOMM_RATE_LIMIT_PER_HOUR_READS", "1")
        .var("TEAMCOMM_RATE_LIMIT_ENTERPRISE_MULTIPLIER", "3")
        .spawn()
        .await;
    let (_, _, _, key) = app.org_with_admin_key("enterprise").await;
    for _ in 0..3 {
        assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);
    }
    let r = app.get_with_key("/v1/me/", &key).await;
    r.assert_error(429, "throttled");
    assert_eq!(r.header("retry-after"), Some("1200"));
}

#[actix_web::test]
async fn cli_sessions_and_web_sessions_are_limited_too() {
    let app = TestApp::builder()
        .var("TEAMCOMM_RATE_LIMIT_PER_HOUR_READS", "1")
        .spawn()
        .await;
    let (_, admin, session, _) = app.org_with_admin_key("business").await;
    let t = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{admin}/cli-tokens/"),
            None,
        )
        .await;
    let bearer = format!("Bearer {}", t.body["token"].as_str().unwrap());
    assert_eq!(
        app.send("GET", "/v1/me/", &[("Authorization", &bearer)], None)
            .await
            .status,
        200
    );
    app.send("GET", "/v1/me/", &[("Authorization", &bearer)], None)
        .await
        .assert_error(429, "throttled");

    assert_eq!(
        app.keys("GET", "/api/org/api-keys/", &session, None)
            .await
            .status,
        200
    );
    app.keys("GET", "/api/org/api-keys/", &session, None)
        .await
        .assert_error(429, "throttled");
}
