//! `teamcomm admin …` applies the operator API's rules straight to the database.

use serde_json::Value;
use teamcomm_api::admin::AdminCommand;
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn admin_commands_provision_an_organization_with_a_working_key() {
    let app = TestApp::spawn().await;
    let out = AdminCommand::CreateOrg {
        name: "Offline Org".into(),
        plan: "enterprise".into(),
        api_access: None,
        plan_beta: Some(true),
        exchange_tokens: None,
    }
    .run(&app.state)
    .await
    .unwrap();
    let org: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (org["plan"].as_str(), org["plan_beta"].as_bool()),
        (Some("enterprise"), Some(true))
    );

    let out = AdminCommand::CreateUser {
        org: org["uuid"].as_str().unwrap().parse().unwrap(),
        email: "Root@Offline.test".into(),
        first_name: "Root".into(),
        last_name: "User".into(),
        role: "admin".into(),
        is_active: None,
    }
    .run(&app.state)
    .await
    .unwrap();
    let user: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(user["email"], "root@offline.test");

    let uuid = user["uuid"].as_str().unwrap().parse().unwrap();
    let out = AdminCommand::CreateApiKey {
        uuid,
        name: "ops".into(),
        agent: false,
    }
    .run(&app.state)
    .await
    .unwrap();
    let key: Value = serde_json::from_str(&out).unwrap();
    let r = app
        .get_with_key("/v1/me/", key["key"].as_str().unwrap())
        .await;
    assert_eq!(
        (r.status, r.body["email"].as_str()),
        (200, Some("root@offline.test")),
        "{}",
        r.text
    );

    // Validation is the same as the operator API's.
    let e = AdminCommand::CreateOrg {
        name: "x".into(),
        plan: "platinum".into(),
        api_access: None,
        plan_beta: None,
        exchange_tokens: None,
    }
    .run(&app.state)
    .await
    .unwrap_err();
    assert_eq!(e.code().as_str(), "params_validation_error");
}
