//! `GET /v1/me/` with each credential the matrix accepts.

use serde_json::json;
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn me_with_api_key_returns_the_owner_and_organization() {
    let app = TestApp::spawn().await;
    let (org, admin, _, key) = app.org_with_admin_key("business").await;
    for path in ["/v1/me/", "/v1/me", "/v1/me/?include_email=true"] {
        let r = app.get_with_key(path, &key).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        assert_eq!(r.body["id"], admin.as_str());
        assert_eq!(r.body["uuid"], admin.as_str());
        assert_eq!(r.body["role"], "admin");
        assert_eq!(r.body["first_name"], "Test");
        assert_eq!(r.body["last_name"], "admin");
        assert_eq!(r.body["full_name"], "Test admin");
        assert!(r.body["email"].as_str().unwrap().ends_with("@example.com"));
        assert_eq!(r.body["organization_uuid"], org.as_str());
        assert_eq!(r.body["organization_name"], "Org");
        assert_eq!(r.body["organization"]["uuid"], org.as_str());
        assert_eq!(r.body["timezone"], "UTC");
    }
}

#[actix_web::test]
async fn key_created_for_a_member_acts_as_the_member() {
    let app = TestApp::spawn().await;
    let (org, _, session, _) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let (record, key) = app
        .create_key(
            &session,
            json!({"name": "for member", "for_user_id": member}),
        )
        .await;
    assert_eq!(record["owner"]["uuid"], member.as_str());
    let r = app.get_with_key("/v1/me/", &key).await;
    assert_eq!(
        (r.body["uuid"].as_str(), r.body["role"].as_str()),
        (Some(member.as_str()), Some("member"))
    );
}

#[actix_web::test]
async fn me_with_cli_bearer_token() {
    let app = TestApp::spawn().await;
    for plan in ["business", "free"] {
        let org = app.create_org(plan).await;
        let user = app.create_user(&org, "member").await;
        let t = app
            .operator(
                "POST",
                &format!("/operator/v1/users/{user}/cli-tokens/"),
                None,
            )
            .await;
        assert_eq!(t.status, 201, "{}", t.text);
        let token = t.body["token"].as_str().unwrap();
        assert!(token.starts_with("tcc_"));
        // /v1/me/ is on the free-plan allow-list, so both plans answer.
        let r = app
            .send(
                "GET",
                "/v1/me/",
                &[("Authorization", &format!("Bearer {token}"))],
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{plan}: {}", r.text);
        assert_eq!(r.body["uuid"], user.as_str());
        // The stored token is only a hash.
        let found = app.state.keys.authenticate_cli_token(token).await.unwrap();
        assert_eq!(found.user.id.to_string(), user);
    }
}

#[actix_web::test]
async fn session_jwt_is_not_a_v1_credential() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    app.send("GET", "/v1/me/", &[("Authorization", &session)], None)
        .await
        .assert_error(401, "credential_absent");
}
