//! `dailybot login` the way its users log in, non-interactively (wire contract §2): step 1 asks
//! for a code, the code is read from the mail a real SMTP server received, step 2 verifies it
//! (with `--org` for an address in several organizations); then the stored login runs `status`,
//! `me` and `logout`. A free-plan login makes the CLI refuse some commands itself.

use teamcomm_tests::smtp::SmtpSink;

use super::*;
use crate::cli_login::{address, code_of, org_named, person_at};

/// The app sending its mail to `sink`.
async fn app_with_mail(sink: &SmtpSink) -> TestApp {
    TestApp::builder()
        .var("TEAMCOMM_SMTP_URL", &sink.url())
        .var("TEAMCOMM_MAIL_FROM", "Teamcomm <noreply@teamcomm.test>")
        .spawn()
        .await
}

/// A configuration directory kept across the commands of one test (removed when dropped).
struct ConfigDir(std::path::PathBuf);

impl ConfigDir {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("teamcomm-login-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("config dir");
        ConfigDir(dir)
    }

    fn json(&self, name: &str) -> Value {
        let text = std::fs::read_to_string(self.0.join(name))
            .unwrap_or_else(|e| panic!("{name} in the config dir: {e}"));
        serde_json::from_str(&text).unwrap()
    }
}

impl Drop for ConfigDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn run(app: &TestApp, dir: &ConfigDir, args: &[&str]) -> Run {
    dailybot_in(app, &dir.0, &[], args).await
}

#[track_caller]
fn assert_ok(run: &Run) {
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
}

#[actix_web::test]
async fn cli_login_with_one_organization_then_status_me_and_logout() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink).await;
    let org = org_named(&app, "Acme", "business").await;
    let email = address();
    let user = person_at(&app, &org, &email).await;
    let dir = ConfigDir::new();

    // Step 1: the code is mailed; the CLI says how to go on.
    let step1 = run(&app, &dir, &["login", &format!("--email={email}")]).await;
    assert_ok(&step1);
    assert!(
        step1
            .stdout
            .contains(&format!("dailybot login --email={email} --code=CODE")),
        "{step1:#?}"
    );
    let code = code_of(&sink.wait_for(&email, 1).await[0]);

    // Step 2: logged in; the token is stored for this server.
    let step2 = run(
        &app,
        &dir,
        &[
            "login",
            &format!("--email={email}"),
            &format!("--code={code}"),
        ],
    )
    .await;
    assert_ok(&step2);
    assert!(
        step2
            .stdout
            .contains(&format!("Logged in as {email} (Acme)")),
        "{step2:#?}"
    );
    let stored = dir.json("credentials.json");
    assert_eq!(stored["organization_uuid"], org.as_str(), "{stored}");
    assert_eq!(stored["email"], email.as_str(), "{stored}");
    let token = stored["token"].as_str().expect("a stored token").to_owned();
    assert!(token.starts_with("tcc_"), "{stored}");
    assert_eq!(dir.json("plan_cache.json")[&org], "business");

    // The stored login works: status --auth and me.
    let status = run(&app, &dir, &["status", "--auth"]).await;
    assert_ok(&status);
    for needle in [
        "Authenticated via login (OTP)",
        email.as_str(),
        "Acme",
        org.as_str(),
    ] {
        assert!(status.stdout.contains(needle), "{needle:?}: {status:#?}");
    }
    let me = run(&app, &dir, &["me", "--json"]).await.ok_json();
    assert_eq!(me["uuid"], user.as_str(), "{me}");
    assert_eq!(me["organization_uuid"], org.as_str(), "{me}");

    // Logout revokes the token on the server.
    let out = run(&app, &dir, &["logout"]).await;
    assert_ok(&out);
    assert!(!dir.0.join("credentials.json").exists());
    dailybot(&app, &token_env(&token), &["me", "--json"])
        .await
        .assert_api_error(EXIT_NOT_AUTHENTICATED, 401, None);
}

#[actix_web::test]
async fn cli_login_with_several_organizations_picks_one_with_org() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink).await;
    let acme = org_named(&app, "Acme", "business").await;
    let beta = org_named(&app, "Beta", "business").await;
    let email = address();
    person_at(&app, &acme, &email).await;
    let in_beta = person_at(&app, &beta, &email).await;
    let dir = ConfigDir::new();

    // Step 1 lists both organizations and keeps them for step 2.
    let step1 = run(&app, &dir, &["login", &format!("--email={email}")]).await;
    assert_ok(&step1);
    for needle in [
        format!("Acme (uuid: {acme})"),
        format!("Beta (uuid: {beta})"),
        format!("dailybot login --email={email} --code=CODE --org=ORG_UUID"),
    ] {
        assert!(step1.stdout.contains(&needle), "{needle:?}: {step1:#?}");
    }
    let cached = dir.json("org_cache.json");
    assert!(
        cached["organizations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["id"].is_i64()),
        "{cached}"
    );
    let code = code_of(&sink.wait_for(&email, 1).await[0]);

    // Step 2 without --org: the server asks to choose (the code stays good), the CLI says how.
    let no_org = run(
        &app,
        &dir,
        &[
            "login",
            &format!("--email={email}"),
            &format!("--code={code}"),
        ],
    )
    .await;
    assert_eq!(no_org.code, 1, "{no_org:#?}");
    assert!(no_org.stdout.contains("--org=ORG_UUID"), "{no_org:#?}");
    assert!(!dir.0.join("credentials.json").exists());

    // The same code with --org (resolved to its integer id from step 1's list): Beta.
    let step2 = run(
        &app,
        &dir,
        &[
            "login",
            &format!("--email={email}"),
            &format!("--code={code}"),
            &format!("--org={beta}"),
        ],
    )
    .await;
    assert_ok(&step2);
    assert!(
        step2
            .stdout
            .contains(&format!("Logged in as {email} (Beta)")),
        "{step2:#?}"
    );
    assert_eq!(
        dir.json("credentials.json")["organization_uuid"],
        beta.as_str()
    );
    let me = run(&app, &dir, &["me", "--json"]).await.ok_json();
    assert_eq!(me["uuid"], in_beta.as_str(), "{me}");
    assert_eq!(me["organization_uuid"], beta.as_str(), "{me}");
    let status = run(&app, &dir, &["status", "--auth"]).await;
    assert_ok(&status);
    assert!(status.stdout.contains("Beta"), "{status:#?}");
}

#[actix_web::test]
async fn cli_login_to_a_free_organization_reports_the_free_plan() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink).await;
    let org = org_named(&app, "Free", "free").await;
    let email = address();
    let user = person_at(&app, &org, &email).await;
    let dir = ConfigDir::new();

    assert_ok(&run(&app, &dir, &["login", &format!("--email={email}")]).await);
    let code = code_of(&sink.wait_for(&email, 1).await[0]);
    assert_ok(
        &run(
            &app,
            &dir,
            &[
                "login",
                &format!("--email={email}"),
                &format!("--code={code}"),
            ],
        )
        .await,
    );
    assert_eq!(dir.json("plan_cache.json")[&org], "free");

    // What the free plan allows works; the CLI refuses the rest itself.
    let me = run(&app, &dir, &["me", "--json"]).await.ok_json();
    assert_eq!(me["uuid"], user.as_str(), "{me}");
    run(&app, &dir, &["checkin", "list", "--json"])
        .await
        .assert_api_error(EXIT_PERMISSION, 403, Some("plan_upgrade_required"));
    assert_ok(&run(&app, &dir, &["status", "--auth"]).await);
}

#[actix_web::test]
async fn cli_login_with_a_wrong_code_fails_and_stores_nothing() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink).await;
    let org = org_named(&app, "Acme", "business").await;
    let email = address();
    person_at(&app, &org, &email).await;
    let dir = ConfigDir::new();

    assert_ok(&run(&app, &dir, &["login", &format!("--email={email}")]).await);
    let code = code_of(&sink.wait_for(&email, 1).await[0]);
    let wrong = format!("{:06}", (code.parse::<u32>().unwrap() + 1) % 1_000_000);
    let failed = run(
        &app,
        &dir,
        &[
            "login",
            &format!("--email={email}"),
            &format!("--code={wrong}"),
        ],
    )
    .await;
    assert_eq!(failed.code, 1, "{failed:#?}");
    assert!(
        format!("{}{}", failed.stdout, failed.stderr).contains("4 tries left"),
        "{failed:#?}"
    );
    assert!(!dir.0.join("credentials.json").exists());
    // The right code still works after one wrong try.
    assert_ok(
        &run(
            &app,
            &dir,
            &[
                "login",
                &format!("--email={email}"),
                &format!("--code={code}"),
            ],
        )
        .await,
    );
}

/// Issue 10 §5: logged in the way users log in (the code read from the mail that arrived), the
/// CLI's daily commands work on that login alone: `status` lists the check-in due today,
/// `update` answers it, `status` then has nothing pending, `ask` goes through the model, and
/// `agent update` / `agent health` report for an agent.
#[actix_web::test]
async fn logged_in_by_mail_the_cli_checks_in_and_asks() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let stub = crate::cli_assistant::Stub::start();
    let app = stub
        .configure(
            TestApp::builder()
                .var("TEAMCOMM_SMTP_URL", &sink.url())
                .var("TEAMCOMM_MAIL_FROM", "Teamcomm <noreply@teamcomm.test>"),
        )
        .spawn()
        .await;
    let (org, _admin, _session, admin_key) = app.org_with_admin_key("business").await;
    let email = address();
    let member = person_at(&app, &org, &email).await;
    let checkin = app.create_daily_checkin(&admin_key, &member).await;
    let dir = ConfigDir::new();

    assert_ok(&run(&app, &dir, &["login", &format!("--email={email}")]).await);
    let code = code_of(&sink.wait_for(&email, 1).await[0]);
    let (email_arg, code_arg) = (format!("--email={email}"), format!("--code={code}"));
    assert_ok(&run(&app, &dir, &["login", &email_arg, &code_arg]).await);

    let status = run(&app, &dir, &["status", "--json"]).await.ok_json();
    assert_eq!(status["count"], 1, "{status}");
    assert_eq!(
        status["pending_checkins"][0]["followup_uuid"],
        checkin.as_str()
    );

    let update = run(&app, &dir, &["update", "--done", "Shipped the login"]).await;
    assert_ok(&update);
    assert!(update.stdout.contains("Standup (Submitted)"), "{update:#?}");
    let r = app
        .get_with_key(&format!("/v1/checkins/{checkin}/responses/"), &admin_key)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let rows = r.body["results"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{}", r.text);
    assert_eq!(rows[0]["user"]["uuid"], member.as_str());
    assert_eq!(rows[0]["responses"][0]["response"], "Shipped the login");
    let status = run(&app, &dir, &["status", "--json"]).await.ok_json();
    assert_eq!(status["count"], 0, "{status}");

    let ask = run(&app, &dir, &["ask", "What did I ship?", "--json"])
        .await
        .ok_json();
    assert_eq!(ask["message"], "Answer 1", "{ask}");
    let seen = stub.seen();
    assert_eq!(seen.len(), 1);
    let system = seen[0].1["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Shipped the login"), "{system}");

    // The agent commands on the same login: a report, and its health.
    let report = [
        "agent",
        "update",
        "Login flow shipped",
        "--name",
        "Claude Code",
    ];
    let run_report = run(&app, &dir, &report).await;
    assert_ok(&run_report);
    let reports: i64 = {
        let mut conn = app.database.pool().get().await.expect("connection");
        diesel_async::RunQueryDsl::get_result(
            diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
                "(SELECT count(*) FROM agent_reports WHERE agent_name = 'Claude Code' \
                 AND content = 'Login flow shipped')",
            )),
            &mut conn,
        )
        .await
        .expect("count")
    };
    assert_eq!(reports, 1);
    let health = [
        "agent",
        "health",
        "--ok",
        "--message",
        "all good",
        "--name",
        "Claude Code",
    ];
    assert_ok(&run(&app, &dir, &health).await);
    let r = app
        .get_with_key("/v1/agent-health/?agent_name=Claude%20Code", &admin_key)
        .await;
    assert_eq!(r.body["status"], "healthy", "{}", r.text);
}
