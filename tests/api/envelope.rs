//! Every error is the JSON envelope, including the framework's own answers.

use serde_json::json;
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn unknown_route_is_json_not_found() {
    let app = TestApp::spawn().await;
    for path in ["/v1/nope/", "/v1/nope", "/api/nothing/here/", "/nowhere"] {
        let r = app.send("GET", path, &[], None).await;
        r.assert_error(404, "not_found");
    }
}

#[actix_web::test]
async fn wrong_method_is_405() {
    let app = TestApp::spawn().await;
    let r = app.send("DELETE", "/v1/me/", &[], None).await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    let r = app
        .send(
            "TRACE",
            "/api/org/api-keys/00000000-0000-0000-0000-000000000000/",
            &[],
            None,
        )
        .await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET, HEAD, PATCH, DELETE"));
    let r = app
        .send("PUT", "/api/org/api-keys/", &[], Some(json!({})))
        .await;
    r.assert_error(405, "method_not_allowed");
}

#[actix_web::test]
async fn malformed_json_wrong_content_type_and_oversized_bodies() {
    let app = TestApp::spawn().await;
    let (_, admin, session, _) = app.org_with_admin_key("business").await;
    let _ = admin;
    let url = app.url("/api/org/api-keys/");

    let res = app
        .client
        .post(&url)
        .header("Authorization", &session)
        .header("Content-Type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    TestApp::read(res).await.assert_error(400, "parse_error");

    let res = app
        .client
        .post(&url)
        .header("Authorization", &session)
        .header("Content-Type", "text/plain")
        .body("{\"name\": \"k\"}")
        .send()
        .await
        .unwrap();
    TestApp::read(res)
        .await
        .assert_error(415, "unsupported_media_type");

    let big = format!("{{\"name\": \"{}\"}}", "x".repeat(300 * 1024));
    let res = app
        .client
        .post(&url)
        .header("Authorization", &session)
        .header("Content-Type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    let r = TestApp::read(res).await;
    r.assert_error(413, "payload_too_large");
    assert_eq!(r.body["extra"]["max_size_bytes"], 256 * 1024);

    // Nothing was stored by any of the refused requests.
    let list = app.keys("GET", "/api/org/api-keys/", &session, None).await;
    assert_eq!(list.body["count"], 1, "{}", list.text);
}

#[actix_web::test]
async fn missing_content_type_is_accepted_as_json() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    let res = app
        .client
        .post(app.url("/api/org/api-keys/"))
        .header("Authorization", &session)
        .body("{\"name\": \"no content type\"}")
        .send()
        .await
        .unwrap();
    let r = TestApp::read(res).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

#[actix_web::test]
async fn bad_path_and_query_values() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    app.keys("GET", "/api/org/api-keys/not-a-uuid/", &session, None)
        .await
        .assert_error(404, "not_found");
    let r = app
        .keys("GET", "/api/org/api-keys/?page=zero", &session, None)
        .await;
    r.assert_error(400, "invalid_filter_value");
    assert_eq!(r.body["extra"]["parameter"], "page");
}

#[actix_web::test]
async fn panics_become_a_fixed_500_without_the_cause() {
    let app = TestApp::builder().with_test_routes().spawn().await;
    let r = app.send("GET", "/v1/__test/panic/", &[], None).await;
    r.assert_error(500, "internal_error");
    assert!(!r.text.contains("secret internal detail"), "{}", r.text);
    // The server keeps serving afterwards.
    app.send("GET", "/v1/nope/", &[], None)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn unknown_body_fields_are_refused_by_name() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    let r = app
        .keys(
            "POST",
            "/api/org/api-keys/",
            &session,
            Some(json!({"name": "k", "colour": "red"})),
        )
        .await;
    r.assert_error(400, "unknown_field");
    assert_eq!(r.body["extra"]["parameter"], "colour");
    let r = app
        .keys(
            "POST",
            "/api/org/api-keys/",
            &session,
            Some(json!({"is_agent_key": "yes", "scopes": "all", "expiration": "soon"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    // Every bad field in one answer, and nothing stored.
    let named: Vec<&String> = r.body["errors"].as_object().unwrap().keys().collect();
    assert_eq!(
        named,
        ["expiration", "is_agent_key", "name", "scopes"],
        "{}",
        r.text
    );
    let keys = app.keys("GET", "/api/org/api-keys/", &session, None).await;
    assert_eq!(
        keys.body["count"], 1,
        "only the admin's own key: {}",
        keys.text
    );
}

#[actix_web::test]
async fn health_and_readiness() {
    let app = TestApp::spawn().await;
    let r = app.send("GET", "/healthz", &[], None).await;
    assert_eq!((r.status, r.body["status"].as_str()), (200, Some("ok")));
    let r = app.send("GET", "/readyz", &[], None).await;
    assert_eq!((r.status, r.body["database"].as_str()), (200, Some("ok")));
}

#[actix_web::test]
async fn a_lost_database_is_503_never_500_and_service_recovers() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);

    app.db().terminate_connections().await;
    let mut recovered = false;
    for _ in 0..20 {
        let r = app.get_with_key("/v1/me/", &key).await;
        match r.status {
            200 => {
                recovered = true;
                break;
            }
            503 => r.assert_error(503, "service_unavailable"),
            other => panic!("a lost connection answered {other}: {}", r.text),
        }
    }
    assert!(recovered, "the pool never replaced its dead connections");
}

#[actix_web::test]
async fn nul_characters_are_refused_not_a_server_error() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let r = app.get_with_key("/v1/users/?search=a%00b", &key).await;
    r.assert_error(400, "invalid_filter_value");
    let r = app.get_with_key("/v1/teams/?search=%00", &key).await;
    r.assert_error(400, "invalid_filter_value");
    let r = app
        .send(
            "POST",
            "/v1/teams/",
            &[("X-API-KEY", &key)],
            Some(json!({"name": "a\u{0}b"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["name"].is_array());
    let r = app
        .send(
            "POST",
            "/v1/invite-user/",
            &[("X-API-KEY", &key)],
            Some(json!({"users_identifiers": ["a\u{0}@x.io"]})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert_eq!(app.get_with_key("/v1/teams/", &key).await.body["count"], 0);
}
