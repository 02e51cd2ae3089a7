//! `dailybot workflow …`: list (with its search and client-side trigger filter), get, trigger
//! (with and without a payload), and how the CLI reports the trigger codes.

use super::*;

/// A business organization: an admin with an API key (workflows are authored with API keys) and
/// a member with a CLI token; one `api_trigger` workflow and one run by an event.
struct Org {
    admin_key: String,
    member_token: String,
    deploy: String,
    on_kudos: String,
}

async fn create(app: &TestApp, key: &str, name: &str, trigger: &str) -> String {
    let r = app
        .send(
            "POST",
            "/v1/workflows/",
            &[("X-API-KEY", key)],
            Some(json!({
                "name": name,
                "trigger_type": trigger,
                "actions": [{"type": "send_email", "to": ["ops@example.com"], "subject": "s", "body": "b"}],
            })),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

async fn org(app: &TestApp) -> Org {
    let (id, _admin, _session, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&id, "member").await;
    Org {
        deploy: create(app, &admin_key, "Deploy", "api_trigger").await,
        on_kudos: create(app, &admin_key, "Thank on kudos", "kudos.posted").await,
        member_token: cli_token(app, &member).await,
        admin_key,
    }
}

/// The runs of a workflow, as the API lists them (newest first).
async fn runs(app: &TestApp, o: &Org, workflow: &str) -> Vec<Value> {
    let r = app
        .get_with_key(&format!("/v1/workflows/{workflow}/runs/"), &o.admin_key)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["results"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn workflows_are_listed_read_and_triggered() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let member = token_env(&o.member_token);

    let listed = dailybot(&app, &member, &["workflow", "list", "--json"])
        .await
        .ok_json();
    assert_eq!(
        uuids(&listed),
        BTreeSet::from([o.deploy.clone(), o.on_kudos.clone()])
    );
    assert_eq!(row(&listed, &o.deploy)["trigger_type"], "api_trigger");
    assert_eq!(row(&listed, &o.on_kudos)["trigger_type"], "kudos.posted");
    let searched = dailybot(
        &app,
        &member,
        &["workflow", "list", "--search", "kudos", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(uuids(&searched), BTreeSet::from([o.on_kudos.clone()]));
    let api_only = dailybot(
        &app,
        &member,
        &["workflow", "list", "--filter", "api_trigger", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(uuids(&api_only), BTreeSet::from([o.deploy.clone()]));

    let got = dailybot(&app, &member, &["workflow", "get", &o.deploy, "--json"])
        .await
        .ok_json();
    assert_eq!(got["name"], "Deploy");
    assert_eq!(got["uuid"], o.deploy.as_str());

    let queued = dailybot(
        &app,
        &member,
        &[
            "workflow",
            "trigger",
            &o.deploy,
            "--payload",
            r#"{"env":"production"}"#,
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(queued["workflow_uuid"], o.deploy.as_str(), "{queued}");
    dailybot(&app, &member, &["workflow", "trigger", &o.deploy, "--json"])
        .await
        .ok_json();
    let stored = runs(&app, &o, &o.deploy).await;
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[1]["payload"], json!({"env": "production"}));
    assert_eq!(stored[0]["payload"], json!({}));
    assert_eq!(stored[0]["status"], "queued");
}

#[actix_web::test]
async fn trigger_refusals_reach_the_cli_with_their_codes() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let member = token_env(&o.member_token);
    let run = dailybot(
        &app,
        &member,
        &["workflow", "trigger", &o.on_kudos, "--json"],
    )
    .await;
    assert_ne!(run.code, EXIT_OK, "{run:#?}");
    assert_eq!(run.json()["code"], "workflow_not_triggerable", "{run:#?}");
    let missing = Uuid::now_v7().to_string();
    dailybot(&app, &member, &["workflow", "get", &missing, "--json"])
        .await
        .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
    assert!(runs(&app, &o, &o.on_kudos).await.is_empty());
}
