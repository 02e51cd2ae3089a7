//! `/operator/v1/`: provisioning, its token, and validation.

use serde_json::json;
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn operator_api_requires_its_token() {
    let app = TestApp::spawn().await;
    let body = Some(json!({"name": "Acme", "plan": "business"}));
    app.send("POST", "/operator/v1/organizations/", &[], body.clone())
        .await
        .assert_error(401, "credential_absent");
    let r = app
        .send(
            "POST",
            "/operator/v1/organizations/",
            &[("Authorization", "Bearer wrong-token-xxxxxxxxxx")],
            body,
        )
        .await;
    r.assert_error(401, "invalid_credentials");
}

#[actix_web::test]
async fn operator_api_is_absent_without_a_token() {
    let app = TestApp::builder()
        .var("TEAMCOMM_OPERATOR_TOKEN", "")
        .spawn()
        .await;
    let r = app
        .operator(
            "POST",
            "/operator/v1/organizations/",
            Some(json!({"name": "Acme", "plan": "business"})),
        )
        .await;
    r.assert_error(404, "not_found");
}

#[actix_web::test]
async fn organizations_users_and_their_defaults() {
    let app = TestApp::spawn().await;
    let r = app
        .operator(
            "POST",
            "/operator/v1/organizations/",
            Some(json!({"name": "Acme", "plan": "business"})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    for f in [
        "uuid",
        "name",
        "plan",
        "api_access",
        "plan_beta",
        "exchange_tokens",
        "created_at",
    ] {
        assert!(r.body.get(f).is_some(), "{f}");
    }
    assert_eq!(
        (
            r.body["api_access"].as_bool(),
            r.body["plan_beta"].as_bool()
        ),
        (Some(true), Some(false))
    );
    let org = r.body["uuid"].as_str().unwrap().to_owned();

    let free = app
        .operator(
            "POST",
            "/operator/v1/organizations/",
            Some(json!({"name": "Tiny", "plan": "free"})),
        )
        .await;
    assert_eq!(free.body["api_access"], false);

    let r = app
        .operator(
            "PATCH",
            &format!("/operator/v1/organizations/{org}/"),
            Some(json!({"plan_beta": true, "name": "Acme 2"})),
        )
        .await;
    assert_eq!(
        (
            r.status,
            r.body["name"].as_str(),
            r.body["plan_beta"].as_bool()
        ),
        (200, Some("Acme 2"), Some(true))
    );
    assert_eq!(r.body["plan"], "business");

    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": "Ada@Example.com", "first_name": "Ada", "last_name": "L", "role": "admin"})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["email"], "ada@example.com");
    assert_eq!(r.body["is_active"], true);
    let user = r.body["uuid"].as_str().unwrap().to_owned();

    // Same e-mail twice in one organization is refused; nothing changes.
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": "ada@example.com", "first_name": "X", "last_name": "Y", "role": "member"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");

    let r = app
        .operator(
            "PATCH",
            &format!("/operator/v1/users/{user}/"),
            Some(json!({"role": "member"})),
        )
        .await;
    assert_eq!((r.status, r.body["role"].as_str()), (200, Some("member")));

    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/sessions/"),
            None,
        )
        .await;
    assert_eq!(r.status, 201);
    assert!(r.body["access"].is_string() && r.body["refresh"].is_string());
}

#[actix_web::test]
async fn operator_validation_and_missing_objects() {
    let app = TestApp::spawn().await;
    let r = app
        .operator(
            "POST",
            "/operator/v1/organizations/",
            Some(json!({"name": "Acme", "plan": "gold"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["plan"].is_array());
    let r = app
        .operator(
            "POST",
            "/operator/v1/organizations/",
            Some(json!({"plan": "free"})),
        )
        .await;
    assert!(r.body["errors"]["name"].is_array(), "{}", r.text);
    let missing = "00000000-0000-0000-0000-000000000000";
    let r = app
        .operator(
            "PATCH",
            &format!("/operator/v1/organizations/{missing}/"),
            Some(json!({"plan": "free"})),
        )
        .await;
    r.assert_error(404, "not_found");
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{missing}/users/"),
            Some(json!({"email": "a@b.co", "first_name": "A", "last_name": "B", "role": "admin"})),
        )
        .await;
    r.assert_error(404, "not_found");
    let org = app.create_org("business").await;
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": "nope", "first_name": "A", "last_name": "B", "role": "owner"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["email"].is_array(), "{}", r.text);
    app.operator(
        "POST",
        &format!("/operator/v1/users/{missing}/sessions/"),
        None,
    )
    .await
    .assert_error(404, "not_found");
}
