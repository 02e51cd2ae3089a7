//! `teamcomm admin …` applies the operator API's rules straight to the database.

use serde_json::{Value, json};
use teamcomm_api::admin::{AdminCommand, AdminInputs};
use teamcomm_kernel::OrgId;
use teamcomm_tests::{FakeSlack, TestApp};

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

/// Runs an admin command with these environment variables and this standard input; answers
/// its JSON.
async fn admin(
    app: &TestApp,
    command: AdminCommand,
    vars: &[(&str, &str)],
    stdin: &[u8],
) -> Result<Value, teamcomm_kernel::Error> {
    let var = |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    };
    let mut stdin = stdin;
    let out = command
        .run_with(
            &app.state,
            AdminInputs {
                var: &var,
                stdin: &mut stdin,
            },
        )
        .await?;
    Ok(serde_json::from_str(&out).unwrap())
}

const KEY: (&str, &str) = (
    "TEAMCOMM_PLATFORM_SECRET_KEY",
    "the server's platform secret key, set",
);

#[actix_web::test]
async fn admin_platform_commands_connect_show_map_and_disconnect_without_ever_printing_the_secret()
{
    let app = TestApp::spawn().await;
    let (org_id, _, _, admin_key) = app.org_with_admin_key("business").await;
    let org: OrgId = org_id.parse().unwrap();
    let slack = FakeSlack::start();
    slack.add_channel("C-OPS", "ops", false);
    let connect = |secret_env: Option<&str>, secret_stdin: bool| AdminCommand::ConnectPlatform {
        org,
        kind: "slack".into(),
        base_url: Some(slack.base_url.clone()),
        secret_env: secret_env.map(str::to_owned),
        secret_stdin,
        signing_secret_env: None,
    };

    // Without the server's key nothing is sealed.
    let e = admin(
        &app,
        connect(Some("BOT"), false),
        &[("BOT", "xoxb-test")],
        b"",
    )
    .await
    .unwrap_err();
    assert!(e.detail().contains("TEAMCOMM_PLATFORM_SECRET_KEY"), "{e:?}");
    for command in [
        AdminCommand::ShowPlatform { org },
        AdminCommand::DisconnectPlatform { org },
    ] {
        let e = admin(&app, command, &[], b"").await.unwrap_err();
        assert!(e.detail().contains("TEAMCOMM_PLATFORM_SECRET_KEY"), "{e:?}");
    }
    let platform = format!("/operator/v1/organizations/{org_id}/platform/");
    app.operator("GET", &platform, None)
        .await
        .assert_error(404, "not_found");

    // The secret comes from the named variable or standard input, never printed.
    let e = admin(&app, connect(Some("BOT"), false), &[KEY], b"")
        .await
        .unwrap_err();
    assert!(e.detail().contains("BOT is not set"), "{e:?}");
    let e = admin(&app, connect(None, true), &[KEY], b"has spaces\n")
        .await
        .unwrap_err();
    assert_eq!(e.code().as_str(), "params_validation_error");
    let shown = admin(&app, connect(None, true), &[KEY], b"xoxb-test\n")
        .await
        .unwrap();
    assert_eq!(
        shown,
        json!({"kind": "slack", "base_url": slack.base_url.clone(), "has_signing_secret": false})
    );
    let shown = admin(&app, AdminCommand::ShowPlatform { org }, &[KEY], b"")
        .await
        .unwrap();
    assert!(!shown.to_string().contains("xoxb"), "{shown}");
    assert_eq!(shown["kind"], "slack");
    // A Slack signing secret comes from a named variable too.
    let signed_connect = || AdminCommand::ConnectPlatform {
        org,
        kind: "slack".into(),
        base_url: Some(slack.base_url.clone()),
        secret_env: Some("BOT".into()),
        secret_stdin: false,
        signing_secret_env: Some("SIGNING".into()),
    };
    let signed = signed_connect();
    let e = admin(&app, signed, &[KEY, ("BOT", "xoxb-test")], b"")
        .await
        .unwrap_err();
    assert!(e.detail().contains("SIGNING is not set"), "{e:?}");
    let signed = signed_connect();
    let shown = admin(
        &app,
        signed,
        &[
            KEY,
            ("BOT", "xoxb-test"),
            ("SIGNING", "8f742231b10e8888abcd99yyyzzz85a5"),
        ],
        b"",
    )
    .await
    .unwrap();
    assert_eq!(shown["has_signing_secret"], true, "{shown}");
    assert!(!shown.to_string().contains("8f742231"), "{shown}");
    // What was sealed is what the server unseals: it reaches Slack with the token.
    let r = app.get_with_key("/v1/report-channels/", &admin_key).await;
    assert_eq!(r.body["channels"][0]["id"], "C-OPS", "{}", r.text);

    let (ada, bob) = (
        app.create_user(&org_id, "member").await,
        app.create_user(&org_id, "member").await,
    );
    let map = |user: &str, id: Option<&str>| AdminCommand::MapPlatformIdentity {
        org,
        user: user.parse().unwrap(),
        platform_user_id: id.map(str::to_owned),
        forget: id.is_none(),
    };
    let out = admin(&app, map(&ada, Some(" U-ADA ")), &[KEY], b"")
        .await
        .unwrap();
    assert_eq!(out, json!({"uuid": ada, "platform_user_id": "U-ADA"}));
    let e = admin(&app, map(&bob, Some("U-ADA")), &[KEY], b"")
        .await
        .unwrap_err();
    assert!(e.field_errors().contains_key("platform_user_id"), "{e:?}");
    admin(&app, map(&ada, None), &[KEY], b"").await.unwrap();
    admin(&app, map(&bob, Some("U-ADA")), &[KEY], b"")
        .await
        .unwrap();

    admin(&app, AdminCommand::DisconnectPlatform { org }, &[KEY], b"")
        .await
        .unwrap();
    app.operator("GET", &platform, None)
        .await
        .assert_error(404, "not_found");
    for command in [
        AdminCommand::ShowPlatform { org },
        AdminCommand::DisconnectPlatform { org },
    ] {
        let e = admin(&app, command, &[KEY], b"").await.unwrap_err();
        assert_eq!(e.code().as_str(), "not_found");
    }
    let e = admin(&app, map(&ada, Some("U-ADA")), &[KEY], b"")
        .await
        .unwrap_err();
    assert_eq!(e.code().as_str(), "platform_not_connected");
}
