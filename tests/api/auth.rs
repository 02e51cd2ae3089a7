//! Credential resolution and the plan gates, with their codes.

use std::time::Duration;

use serde_json::json;
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn missing_and_invalid_credentials_are_401() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;

    let r = app.send("GET", "/v1/me/", &[], None).await;
    r.assert_error(401, "credential_absent");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("credentials were not provided")
    );

    // Right shape, unknown secret; wrong checksum; junk.
    let unknown = format!("tck_{}", "A".repeat(38));
    let mut tampered = key.clone().into_bytes();
    tampered[8] = if tampered[8] == b'a' { b'b' } else { b'a' };
    for bad in [
        unknown,
        String::from_utf8(tampered).unwrap(),
        "hello".to_owned(),
    ] {
        let r = app.get_with_key("/v1/me/", &bad).await;
        r.assert_error(401, "invalid_credentials");
        assert!(
            r.body["detail"]
                .as_str()
                .unwrap()
                .contains("credentials were not provided")
        );
    }

    let r = app
        .send("GET", "/v1/me/", &[("Authorization", "Bearer ")], None)
        .await;
    r.assert_error(401, "credential_malformed");
    let r = app
        .send(
            "GET",
            "/v1/me/",
            &[("Authorization", "Bearer tcc_nope")],
            None,
        )
        .await;
    r.assert_error(401, "invalid_credentials");
}

#[actix_web::test]
async fn deactivated_owner_is_403_and_reactivation_restores_access() {
    let app = TestApp::spawn().await;
    let (org, _, session, _) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let (_, key) = app
        .create_key(&session, json!({"name": "m", "for_user_id": member}))
        .await;
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);

    let r = app
        .operator(
            "PATCH",
            &format!("/operator/v1/users/{member}/"),
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!(
        (r.status, r.body["is_active"].as_bool()),
        (200, Some(false)),
        "{}",
        r.text
    );
    app.get_with_key("/v1/me/", &key)
        .await
        .assert_error(403, "api_key_owner_inactive");

    app.operator(
        "PATCH",
        &format!("/operator/v1/users/{member}/"),
        Some(json!({"is_active": true})),
    )
    .await;
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);
}

#[actix_web::test]
async fn free_plan_and_missing_api_access_are_refused() {
    let app = TestApp::spawn().await;
    // Keys can be minted on any plan; the gate applies when they are used.
    let (_, _, _, free_key) = app.org_with_admin_key("free").await;
    app.get_with_key("/v1/me/", &free_key)
        .await
        .assert_error(403, "plan_free_api_keys_forbidden");

    let org = app.create_org("business").await;
    let r = app
        .operator(
            "PATCH",
            &format!("/operator/v1/organizations/{org}/"),
            Some(json!({"api_access": false})),
        )
        .await;
    assert_eq!(
        (r.status, r.body["api_access"].as_bool()),
        (200, Some(false)),
        "{}",
        r.text
    );
    let admin = app.create_user(&org, "admin").await;
    let session = app.session(&admin).await;
    let (_, key) = app.create_key(&session, json!({"name": "k"})).await;
    app.get_with_key("/v1/me/", &key)
        .await
        .assert_error(403, "plan_missing_core_api_integrations");
}

#[actix_web::test]
async fn plan_change_from_elsewhere_is_seen_after_the_cache_ttl() {
    let app = TestApp::builder()
        .var("TEAMCOMM_PLAN_CACHE_TTL_SECS", "1")
        .spawn()
        .await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);

    // A change written straight to the database (another instance, or `teamcomm admin`) does not
    // invalidate this process's cache: the old eligibility holds until the TTL passes.
    let patch = teamcomm_org::OrganizationPatch::new(None, Some("free"), None, None, None).unwrap();
    app.orgs()
        .update_organization(org.parse().unwrap(), &patch)
        .await
        .unwrap();
    assert_eq!(
        app.get_with_key("/v1/me/", &key).await.status,
        200,
        "cached eligibility still applies"
    );

    tokio::time::sleep(Duration::from_millis(1100)).await;
    app.get_with_key("/v1/me/", &key)
        .await
        .assert_error(403, "plan_free_api_keys_forbidden");
}

#[actix_web::test]
async fn operator_plan_change_applies_at_once() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);
    app.operator(
        "PATCH",
        &format!("/operator/v1/organizations/{org}/"),
        Some(json!({"plan": "free"})),
    )
    .await;
    app.get_with_key("/v1/me/", &key)
        .await
        .assert_error(403, "plan_free_api_keys_forbidden");
    app.operator(
        "PATCH",
        &format!("/operator/v1/organizations/{org}/"),
        Some(json!({"plan": "starter"})),
    )
    .await;
    let r = app.get_with_key("/v1/me/", &key).await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[actix_web::test]
async fn expired_key_is_401_credential_expired() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    let soon = time::OffsetDateTime::now_utc() + time::Duration::seconds(1);
    let soon = soon
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let (record, key) = app
        .create_key(&session, json!({"name": "short", "expiration": soon}))
        .await;
    assert!(record["expiration"].is_string());
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    app.get_with_key("/v1/me/", &key)
        .await
        .assert_error(401, "credential_expired");

    // An expiration in the past is refused at creation.
    let r = app
        .keys(
            "POST",
            "/api/org/api-keys/",
            &session,
            Some(json!({"name": "x", "expiration": "2020-01-01T00:00:00Z"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["expiration"].is_array());
}

#[actix_web::test]
async fn session_tokens_refresh_and_stop_for_deactivated_users() {
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let admin = app.create_user(&org, "admin").await;
    let pair = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{admin}/sessions/"),
            None,
        )
        .await;
    let refresh = pair.body["refresh"].as_str().unwrap().to_owned();

    // A refresh token is not an access token.
    let r = app
        .keys("GET", "/api/org/api-keys/", &format!("JWT {refresh}"), None)
        .await;
    r.assert_error(401, "invalid_credentials");
    app.keys("GET", "/api/org/api-keys/", "JWT not.a.jwt", None)
        .await
        .assert_error(401, "credential_malformed");
    app.keys("GET", "/api/org/api-keys/", "Token abc", None)
        .await
        .assert_error(401, "credential_absent");

    let r = app
        .send(
            "POST",
            "/api/auth/token/refresh/",
            &[],
            Some(json!({"refresh": refresh})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let access = format!("JWT {}", r.body["access"].as_str().unwrap());
    assert_eq!(
        app.keys("GET", "/api/org/api-keys/", &access, None)
            .await
            .status,
        200
    );

    app.deactivate(&admin).await;
    app.keys("GET", "/api/org/api-keys/", &access, None)
        .await
        .assert_error(401, "invalid_credentials");
    let r = app
        .send(
            "POST",
            "/api/auth/token/refresh/",
            &[],
            Some(json!({"refresh": refresh})),
        )
        .await;
    r.assert_error(401, "invalid_credentials");
}
