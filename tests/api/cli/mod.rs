//! End-to-end: the vendor's real command-line client (`dailybot-cli` 3.27.13) against the running app.
//!
//! The CLI is found through `DAILYBOT_CLI` (path to the `dailybot` executable) or at
//! `$HOME/.cache/teamcomm-cli-venv/bin/dailybot`; `scripts/install-cli.sh` puts it there. A missing
//! CLI fails these tests: they never pass without having run it.
//!
//! Each invocation runs non-interactively in a fresh temporary directory that is also its `HOME`
//! and `DAILYBOT_CONFIG_DIR`, with a clean environment, so no stored credential, `env.json` or
//! proxy setting of the machine leaks in. The server shares the test's single-threaded runtime, so
//! the child process is waited for on the blocking pool.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teamcomm_tests::TestApp;
use uuid::Uuid;

// Each area's commands (child modules use the harness below through `use super::*`).
mod agent;
mod agents;
mod chat;
mod checkins;
mod forms;
mod helpers;
mod kudos;
mod labels;
mod login;
mod plan;
mod workflows;

const TIMEOUT: Duration = Duration::from_secs(60);

/// Exit codes the CLI documents for non-Plan commands.
const EXIT_OK: i32 = 0;
const EXIT_USAGE: i32 = 2;
const EXIT_NOT_AUTHENTICATED: i32 = 3;
const EXIT_PERMISSION: i32 = 4;
const EXIT_NOT_FOUND: i32 = 5;

/// The `dailybot` executable, or a failing test that says how to get it.
fn cli_path() -> PathBuf {
    if let Some(p) = std::env::var_os("DAILYBOT_CLI").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "DAILYBOT_CLI={} does not exist: run scripts/install-cli.sh and point DAILYBOT_CLI at \
             the path it prints",
            p.display()
        );
        return p;
    }
    let home = std::env::var_os("HOME").expect("HOME is set");
    let p = PathBuf::from(home).join(".cache/teamcomm-cli-venv/bin/dailybot");
    assert!(
        p.is_file(),
        "dailybot CLI not found at {} and DAILYBOT_CLI is not set: run scripts/install-cli.sh",
        p.display()
    );
    p
}

/// One finished CLI run.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Stdout parsed as the single JSON document `--json` prints.
    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:#?}"))
    }

    /// Asserts the exit code and returns stdout as JSON.
    #[track_caller]
    fn ok_json(&self) -> Value {
        assert_eq!(self.code, EXIT_OK, "exit code: {self:#?}");
        self.json()
    }

    /// Asserts a `--json` API failure: exit code, and the `{error, status, code?}` the CLI prints.
    #[track_caller]
    fn assert_api_error(&self, exit: i32, status: u16, code: Option<&str>) {
        assert_eq!(self.code, exit, "exit code: {self:#?}");
        let body = self.json();
        assert_eq!(body["status"], status, "status in {self:#?}");
        assert!(body["error"].is_string(), "error message in {self:#?}");
        if let Some(code) = code {
            assert_eq!(body["code"], code, "code in {self:#?}");
        }
    }
}

/// Credential environment for an API key.
fn key_env(key: &str) -> [(&'static str, &str); 1] {
    [("DAILYBOT_API_KEY", key)]
}

/// Credential environment for a CLI login token.
fn token_env(token: &str) -> [(&'static str, &str); 1] {
    [("DAILYBOT_CLI_TOKEN", token)]
}

/// Runs `dailybot <args>` against `app` with `envs` added to a clean, isolated environment.
async fn dailybot(app: &TestApp, envs: &[(&str, &str)], args: &[&str]) -> Run {
    let dir = std::env::temp_dir().join(format!("teamcomm-cli-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let run = dailybot_in(app, &dir, envs, args).await;
    let _ = std::fs::remove_dir_all(&dir);
    run
}

/// Runs `dailybot <args>` like [`dailybot`], in `dir` (its `HOME` and configuration directory),
/// which outlives the run: what one command stores (a login) the next one reads.
async fn dailybot_in(
    app: &TestApp,
    dir: &std::path::Path,
    envs: &[(&str, &str)],
    args: &[&str],
) -> Run {
    let exe = cli_path();
    let out_path = dir.join(".stdout");
    let err_path = dir.join(".stderr");

    let mut cmd = Command::new(&exe);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("DAILYBOT_CONFIG_DIR", dir)
        .env("DAILYBOT_API_URL", &app.base)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("COLUMNS", "200")
        .env("LANG", "C.UTF-8")
        .env("PYTHONIOENCODING", "utf-8")
        .envs(envs.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"));
    let described = format!("dailybot {}", args.join(" "));

    let (status, timed_out) = tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", exe.display()));
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().expect("wait for the CLI") {
                return (status, false);
            }
            if started.elapsed() > TIMEOUT {
                let _ = child.kill();
                return (child.wait().expect("reap the CLI"), true);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    })
    .await
    .expect("CLI runner");

    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    };
    assert!(!timed_out, "{described} killed after {TIMEOUT:?}: {run:#?}");
    run
}

/// A CLI login token for `user`.
async fn cli_token(app: &TestApp, user: &str) -> String {
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/cli-tokens/"),
            None,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["token"].as_str().unwrap().to_owned()
}

/// An API key owned by `user`, minted by the admin behind `session`.
async fn key_for(app: &TestApp, session: &str, user: &str) -> String {
    let (_, key) = app
        .create_key(session, json!({"name": "cli", "for_user_id": user}))
        .await;
    key
}

/// Creates a team through the API with an admin key; returns its uuid.
async fn create_team(app: &TestApp, admin_key: &str, name: &str) -> String {
    let r = app
        .send(
            "POST",
            "/v1/teams/",
            &[("X-API-KEY", admin_key)],
            Some(json!({"name": name})),
        )
        .await;
    assert_eq!(r.status, 201, "create team {name}: {}", r.text);
    r.body["uuid"].as_str().expect("team uuid").to_owned()
}

async fn add_member(app: &TestApp, admin_key: &str, team: &str, user: &str) {
    let r = app
        .send(
            "PUT",
            &format!("/v1/teams/{team}/members/{user}/"),
            &[("X-API-KEY", admin_key)],
            None,
        )
        .await;
    assert!(
        (200..300).contains(&r.status),
        "add {user} to {team}: {} {}",
        r.status,
        r.text
    );
}

async fn add_channel(app: &TestApp, org: &str, id: &str, name: &str) {
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/channels/"),
            Some(json!({"id": id, "name": name, "type": "channel", "platform": "slack"})),
        )
        .await;
    assert_eq!(r.status, 201, "register channel {id}: {}", r.text);
}

/// The `uuid`s of a JSON array of rows.
#[track_caller]
fn uuids(rows: &Value) -> BTreeSet<String> {
    rows.as_array()
        .unwrap_or_else(|| panic!("expected an array: {rows}"))
        .iter()
        .map(|r| r["uuid"].as_str().expect("row uuid").to_owned())
        .collect()
}

/// The row of a JSON array whose `uuid` is `uuid`.
#[track_caller]
fn row<'a>(rows: &'a Value, uuid: &str) -> &'a Value {
    rows.as_array()
        .unwrap_or_else(|| panic!("expected an array: {rows}"))
        .iter()
        .find(|r| r["uuid"] == uuid)
        .unwrap_or_else(|| panic!("{uuid} not in {rows}"))
}

// ---------------------------------------------------------------------------------------------
// me: credentials and the exit codes of the auth gates
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn cli_is_the_pinned_version() {
    let app = TestApp::spawn().await;
    let run = dailybot(&app, &[], &["--version"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("3.27.13"), "{run:#?}");
}

#[actix_web::test]
async fn me_json_with_api_key() {
    let app = TestApp::spawn().await;
    let (org, admin, _, key) = app.org_with_admin_key("business").await;

    let me = dailybot(&app, &key_env(&key), &["me", "--json"])
        .await
        .ok_json();
    assert_eq!(me["uuid"], admin.as_str(), "{me}");
    assert_eq!(me["role"], "admin", "{me}");
    assert_eq!(me["full_name"], "Test admin", "{me}");
    assert_eq!(me["organization_uuid"], org.as_str(), "{me}");
    assert_eq!(me["organization_name"], "Org", "{me}");
    assert!(me["timezone"].is_string(), "{me}");

    let me = dailybot(&app, &key_env(&key), &["me", "--include-email", "--json"])
        .await
        .ok_json();
    assert_eq!(me["uuid"], admin.as_str(), "{me}");
    assert!(
        me["email"]
            .as_str()
            .is_some_and(|e| e.ends_with("@example.com")),
        "{me}"
    );
}

#[actix_web::test]
async fn me_human_output_shows_name_role_and_organization() {
    let app = TestApp::spawn().await;
    let (org, admin, _, key) = app.org_with_admin_key("business").await;
    let run = dailybot(&app, &key_env(&key), &["me"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    for needle in ["Test admin", "admin", "Org", org.as_str(), admin.as_str()] {
        assert!(run.stdout.contains(needle), "{needle:?} missing: {run:#?}");
    }
}

#[actix_web::test]
async fn me_with_cli_token() {
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let member = app.create_user(&org, "member").await;
    let token = cli_token(&app, &member).await;

    let me = dailybot(&app, &token_env(&token), &["me", "--json"])
        .await
        .ok_json();
    assert_eq!(me["uuid"], member.as_str(), "{me}");
    assert_eq!(me["role"], "member", "{me}");
    assert_eq!(me["organization_uuid"], org.as_str(), "{me}");
}

#[actix_web::test]
async fn free_plan_cli_token_reads_me_but_not_the_directory() {
    let app = TestApp::spawn().await;
    let org = app.create_org("free").await;
    let member = app.create_user(&org, "member").await;
    let token = cli_token(&app, &member).await;

    // /v1/me/ and /v1/organization/ are on the free-plan allow-list.
    let me = dailybot(&app, &token_env(&token), &["me", "--json"])
        .await
        .ok_json();
    assert_eq!(me["uuid"], member.as_str(), "{me}");
    let o = dailybot(&app, &token_env(&token), &["org", "--json"])
        .await
        .ok_json();
    assert_eq!(o["uuid"], org.as_str(), "{o}");

    // Everything else is refused with 403 plan_upgrade_required: exit 4.
    dailybot(&app, &token_env(&token), &["user", "list", "--json"])
        .await
        .assert_api_error(EXIT_PERMISSION, 403, Some("plan_upgrade_required"));
}

#[actix_web::test]
async fn no_credential_exits_3_without_a_request() {
    let app = TestApp::spawn().await;
    let run = dailybot(&app, &[], &["me", "--json"]).await;
    assert_eq!(run.code, EXIT_NOT_AUTHENTICATED, "{run:#?}");
}

#[actix_web::test]
async fn bad_api_key_exits_3() {
    let app = TestApp::spawn().await;
    let bad = format!("tck_{}", "A".repeat(38));
    dailybot(&app, &key_env(&bad), &["me", "--json"])
        .await
        .assert_api_error(EXIT_NOT_AUTHENTICATED, 401, None);
    // Human mode: same exit code, a message on stderr, nothing on stdout.
    let run = dailybot(&app, &key_env("hello"), &["me"]).await;
    assert_eq!(run.code, EXIT_NOT_AUTHENTICATED, "{run:#?}");
    assert!(!run.stderr.trim().is_empty(), "{run:#?}");
}

#[actix_web::test]
async fn bad_cli_token_exits_3() {
    let app = TestApp::spawn().await;
    dailybot(&app, &token_env("tcc_nope"), &["me", "--json"])
        .await
        .assert_api_error(EXIT_NOT_AUTHENTICATED, 401, None);
}

#[actix_web::test]
async fn rejected_token_falls_back_to_the_api_key() {
    // The CLI sends the Bearer token first and retries once with the key on 401/403.
    let app = TestApp::spawn().await;
    let (_, admin, _, key) = app.org_with_admin_key("business").await;
    let envs = [
        ("DAILYBOT_CLI_TOKEN", "tcc_nope"),
        ("DAILYBOT_API_KEY", key.as_str()),
    ];
    let me = dailybot(&app, &envs, &["me", "--json"]).await.ok_json();
    assert_eq!(me["uuid"], admin.as_str(), "{me}");
}

#[actix_web::test]
async fn deactivated_key_owner_exits_4() {
    let app = TestApp::spawn().await;
    let (org, _, session, _) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let key = key_for(&app, &session, &member).await;
    dailybot(&app, &key_env(&key), &["me", "--json"])
        .await
        .ok_json();

    app.deactivate(&member).await;
    dailybot(&app, &key_env(&key), &["me", "--json"])
        .await
        .assert_api_error(EXIT_PERMISSION, 403, Some("api_key_owner_inactive"));
}

#[actix_web::test]
async fn free_plan_api_key_exits_4() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("free").await;
    dailybot(&app, &key_env(&key), &["me", "--json"])
        .await
        .assert_api_error(EXIT_PERMISSION, 403, Some("plan_free_api_keys_forbidden"));
    // Human mode: same exit code, the refusal explained on stderr.
    let run = dailybot(&app, &key_env(&key), &["me"]).await;
    assert_eq!(run.code, EXIT_PERMISSION, "{run:#?}");
    assert!(run.stdout.trim().is_empty(), "{run:#?}");
    assert!(!run.stderr.trim().is_empty(), "{run:#?}");
}

// ---------------------------------------------------------------------------------------------
// org
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn org_json_and_human_output() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;

    let o = dailybot(&app, &key_env(&key), &["org", "--json"])
        .await
        .ok_json();
    assert_eq!(o["uuid"], org.as_str(), "{o}");
    assert_eq!(o["name"], "Org", "{o}");
    assert!(o.get("platform").is_some(), "platform in {o}");
    assert!(o["timezone"].is_string(), "{o}");

    let run = dailybot(&app, &key_env(&key), &["org"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains(org.as_str()), "{run:#?}");
}

// ---------------------------------------------------------------------------------------------
// user list / user get
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn user_list_follows_next_links_across_pages() {
    let app = TestApp::spawn().await;
    let (org, admin, _, key) = app.org_with_admin_key("business").await;
    let mut expected = BTreeSet::from([admin.clone()]);
    for _ in 0..30 {
        expected.insert(app.create_user(&org, "member").await);
    }
    // Another organization's people never show up.
    let other = app.create_org("business").await;
    let stranger = app.create_user(&other, "member").await;

    // The first page alone is not the whole directory, so the CLI has to walk `next`.
    let first = app.get_with_key("/v1/users/", &key).await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.body["count"], 31, "{}", first.text);
    assert!(first.body["next"].is_string(), "{}", first.text);
    assert!(
        first.body["results"].as_array().unwrap().len() < 31,
        "{}",
        first.text
    );

    let rows = dailybot(&app, &key_env(&key), &["user", "list", "--json"])
        .await
        .ok_json();
    assert_eq!(rows.as_array().unwrap().len(), 31, "{rows}");
    assert_eq!(uuids(&rows), expected);
    assert!(!uuids(&rows).contains(&stranger));
    let a = row(&rows, &admin);
    assert_eq!(
        (&a["full_name"], &a["role"], &a["is_active"]),
        (&json!("Test admin"), &json!("admin"), &json!(true)),
        "{a}"
    );

    // Human table: one line per person at least, names shown.
    let run = dailybot(&app, &key_env(&key), &["user", "list"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Test admin"), "{run:#?}");
    assert!(run.stdout.matches("Test member").count() >= 30, "{run:#?}");
}

#[actix_web::test]
async fn user_list_hides_inactive_unless_asked() {
    let app = TestApp::spawn().await;
    let (org, admin, _, key) = app.org_with_admin_key("business").await;
    let active = app.create_user(&org, "member").await;
    let gone = app.create_user(&org, "member").await;
    app.deactivate(&gone).await;

    let rows = dailybot(&app, &key_env(&key), &["user", "list", "--json"])
        .await
        .ok_json();
    assert_eq!(
        uuids(&rows),
        BTreeSet::from([admin.clone(), active.clone()]),
        "{rows}"
    );

    // `--include-inactive` only stops the client's own filter: the server must list
    // deactivated people (with is_active false) for them to appear.
    let rows = dailybot(
        &app,
        &key_env(&key),
        &["user", "list", "--include-inactive", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(
        uuids(&rows),
        BTreeSet::from([admin, active.clone(), gone.clone()]),
        "{rows}"
    );
    assert_eq!(row(&rows, &gone)["is_active"], false, "{rows}");
    assert_eq!(row(&rows, &active)["is_active"], true, "{rows}");
}

#[actix_web::test]
async fn user_get_by_uuid() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;

    let u = dailybot(&app, &key_env(&key), &["user", "get", &member, "--json"])
        .await
        .ok_json();
    assert_eq!(u["uuid"], member.as_str(), "{u}");
    assert_eq!(u["full_name"], "Test member", "{u}");
    assert_eq!(u["first_name"], "Test", "{u}");
    assert_eq!(u["last_name"], "member", "{u}");
    assert_eq!(u["role"], "member", "{u}");
    assert_eq!(u["is_active"], true, "{u}");
    assert!(u["timezone"].is_string(), "{u}");
    assert!(u.get("email").is_none(), "email only on request: {u}");

    let u = dailybot(
        &app,
        &key_env(&key),
        &["user", "get", &member, "--include-email", "--json"],
    )
    .await
    .ok_json();
    assert!(
        u["email"]
            .as_str()
            .is_some_and(|e| e.ends_with("@example.com")),
        "{u}"
    );

    let run = dailybot(&app, &key_env(&key), &["user", "get", &member]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Test member"), "{run:#?}");
}

#[actix_web::test]
async fn user_get_outside_the_organization_exits_5() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    let colleague = app.create_user(&org, "member").await;
    let other = app.create_org("business").await;
    let stranger = app.create_user(&other, "member").await;

    // Control: the same command finds someone of the caller's own organization.
    let u = dailybot(&app, &key_env(&key), &["user", "get", &colleague, "--json"])
        .await
        .ok_json();
    assert_eq!(u["uuid"], colleague.as_str(), "{u}");

    dailybot(&app, &key_env(&key), &["user", "get", &stranger, "--json"])
        .await
        .assert_api_error(EXIT_NOT_FOUND, 404, None);
    let unknown = Uuid::new_v4().to_string();
    dailybot(&app, &key_env(&key), &["user", "get", &unknown, "--json"])
        .await
        .assert_api_error(EXIT_NOT_FOUND, 404, None);
}

// ---------------------------------------------------------------------------------------------
// team list / team get
// ---------------------------------------------------------------------------------------------

/// An org with teams Engineering (one member) and Design (empty): (admin key, member key,
/// member, engineering, design).
async fn org_with_teams(app: &TestApp) -> (String, String, String, String, String) {
    let (org, _, session, key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let member_key = key_for(app, &session, &member).await;
    let eng = create_team(app, &key, "Engineering").await;
    let design = create_team(app, &key, "Design").await;
    add_member(app, &key, &eng, &member).await;
    (key, member_key, member, eng, design)
}

#[actix_web::test]
async fn team_list_is_scoped_by_role() {
    let app = TestApp::spawn().await;
    let (key, member_key, _, eng, design) = org_with_teams(&app).await;

    let rows = dailybot(&app, &key_env(&key), &["team", "list", "--json"])
        .await
        .ok_json();
    let seen = uuids(&rows);
    assert!(
        seen.contains(&eng) && seen.contains(&design),
        "admin sees all: {rows}"
    );
    let e = row(&rows, &eng);
    assert_eq!(e["name"], "Engineering", "{e}");
    assert_eq!(e["active"], true, "{e}");
    assert_eq!(e["members_count"], 1, "{e}");
    assert_eq!(e["is_default"], false, "{e}");
    assert_eq!(row(&rows, &design)["members_count"], 0, "{rows}");

    let rows = dailybot(&app, &key_env(&member_key), &["team", "list", "--json"])
        .await
        .ok_json();
    let seen = uuids(&rows);
    assert!(seen.contains(&eng), "member sees own team: {rows}");
    assert!(
        !seen.contains(&design),
        "member sees only own teams: {rows}"
    );

    let run = dailybot(&app, &key_env(&key), &["team", "list"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Engineering") && run.stdout.contains("Design"),
        "{run:#?}"
    );
}

#[actix_web::test]
async fn team_get_by_uuid_and_by_name_with_members() {
    let app = TestApp::spawn().await;
    let (key, _, member, eng, _) = org_with_teams(&app).await;

    let t = dailybot(&app, &key_env(&key), &["team", "get", &eng, "--json"])
        .await
        .ok_json();
    assert_eq!(t["uuid"], eng.as_str(), "{t}");
    assert_eq!(t["name"], "Engineering", "{t}");
    assert_eq!(t["active"], true, "{t}");
    assert_eq!(t["is_default"], false, "{t}");
    assert!(t.get("members").is_none(), "{t}");

    // Names resolve case-insensitively through GET /v1/teams/ (client side).
    let t = dailybot(
        &app,
        &key_env(&key),
        &["team", "get", "engineering", "--with-members", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(t["uuid"], eng.as_str(), "{t}");
    let members = &t["members"];
    assert_eq!(uuids(members), BTreeSet::from([member.clone()]), "{t}");
    assert_eq!(row(members, &member)["full_name"], "Test member", "{t}");

    let run = dailybot(
        &app,
        &key_env(&key),
        &["team", "get", "Engineering", "--with-members"],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Engineering") && run.stdout.contains("Test member"),
        "{run:#?}"
    );
}

#[actix_web::test]
async fn member_cannot_get_a_team_they_are_not_in() {
    let app = TestApp::spawn().await;
    let (_, member_key, member, eng, design) = org_with_teams(&app).await;

    let t = dailybot(
        &app,
        &key_env(&member_key),
        &["team", "get", "Engineering", "--with-members", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(t["uuid"], eng.as_str(), "{t}");
    assert_eq!(uuids(&t["members"]), BTreeSet::from([member]), "{t}");

    // By uuid the CLI asks the server directly: an invisible team is a 404.
    dailybot(
        &app,
        &key_env(&member_key),
        &["team", "get", &design, "--json"],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, None);
    // By name it is resolved from the member's own list, so it is simply not found there.
    let run = dailybot(
        &app,
        &key_env(&member_key),
        &["team", "get", "Design", "--json"],
    )
    .await;
    assert_eq!(run.code, EXIT_USAGE, "{run:#?}");
}

// ---------------------------------------------------------------------------------------------
// channels list
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn channels_list_shows_the_organizations_report_channels() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    add_channel(&app, &org, "C0ALPHA01", "general").await;
    add_channel(&app, &org, "C0BETA002", "standups").await;
    let other = app.create_org("business").await;
    add_channel(&app, &other, "C0OTHER03", "elsewhere").await;

    let rows = dailybot(&app, &key_env(&key), &["channels", "list", "--json"])
        .await
        .ok_json();
    let rows = rows.as_array().unwrap_or_else(|| panic!("array: {rows}"));
    let mut got: Vec<(String, String)> = rows
        .iter()
        .map(|c| {
            assert_eq!(c["platform"], "slack", "{c}");
            assert_eq!(c["type"], "channel", "{c}");
            (
                c["id"].as_str().expect("string id").to_owned(),
                c["name"].as_str().expect("name").to_owned(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("C0ALPHA01".to_owned(), "general".to_owned()),
            ("C0BETA002".to_owned(), "standups".to_owned()),
        ]
    );

    let run = dailybot(&app, &key_env(&key), &["channels", "list"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("general") && run.stdout.contains("standups"),
        "{run:#?}"
    );
}
