//! The route table's policies, checked over HTTP for every registered route: the spec's
//! "Authentication method matrix", the free-plan CLI allow-list, admin-only routes, HEAD.

use serde_json::json;
use teamcomm_api::policy::{Credentials, Route};
use teamcomm_api::routes::registry;
use teamcomm_keys::CliAccess;
use teamcomm_tests::{TestApp, concrete_path};

fn general_routes() -> impl Iterator<Item = &'static Route> {
    registry()
        .routes()
        .iter()
        .filter(|r| r.policy.credentials == Credentials::ApiKeyOrCli)
}

/// An operator-issued CLI token for a new user of `org`.
async fn cli_token(app: &TestApp, org: &str, role: &str) -> String {
    let user = app.create_user(org, role).await;
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/cli-tokens/"),
            None,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    format!("Bearer {}", r.body["token"].as_str().unwrap())
}

#[actix_web::test]
async fn every_general_route_refuses_a_request_without_credentials() {
    let app = TestApp::spawn().await;
    let mut checked = 0;
    for r in general_routes() {
        let res = app.send(r.method, &concrete_path(&r.path), &[], None).await;
        assert_eq!(
            (res.status, res.code()),
            (401, "credential_absent"),
            "{} {}",
            r.method,
            r.path
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} general routes");
}

/// Calls every general route with a CLI token of a new organization on `plan`, and checks that
/// exactly the routes `refused` picks answer 403 `code`; returns those answers.
async fn cli_walk(
    plan: &str,
    code: &str,
    refused: impl Fn(&Route) -> bool,
) -> Vec<teamcomm_tests::Resp> {
    let app = TestApp::spawn().await;
    let org = app.create_org(plan).await;
    let token = cli_token(&app, &org, "admin").await;
    let mut answers = Vec::new();
    // Logout would end the walk's session (it is tested on its own: tests/api/cli_login.rs).
    for r in general_routes().filter(|r| r.path != "/v1/cli/auth/logout/") {
        let res = app
            .send(
                r.method,
                &concrete_path(&r.path),
                &[("Authorization", &token)],
                Some(json!({})),
            )
            .await;
        let was_refused = res.status == 403 && res.code() == code;
        assert_eq!(
            was_refused,
            refused(r),
            "{} {}: {} {}",
            r.method,
            r.path,
            res.status,
            res.text
        );
        if was_refused {
            answers.push(res);
        }
    }
    answers
}

#[actix_web::test]
async fn free_plan_cli_sessions_reach_only_the_allow_list() {
    let refused = cli_walk("free", "plan_upgrade_required", |r| {
        r.policy.cli != CliAccess::AnyPlan
    })
    .await;
    for res in refused {
        let url = res.body["upgrade_url"].as_str().unwrap_or_default();
        assert!(url.ends_with("/billing/plans"), "{}", res.text);
    }
}

#[actix_web::test]
async fn the_directory_is_read_only_to_paid_cli_sessions() {
    let refused = cli_walk("business", "insufficient_scope", |r| {
        r.policy.cli == CliAccess::Refused
    })
    .await;
    for res in refused {
        assert_eq!(
            res.body["extra"]["required_scope"], "api_key",
            "{}",
            res.text
        );
    }
}

#[actix_web::test]
async fn admin_only_routes_refuse_members_before_anything_else() {
    let app = TestApp::spawn().await;
    let (org, _, session, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let (_, member_key) = app
        .create_key(&session, json!({"name": "m", "for_user_id": member}))
        .await;
    let team = app
        .send(
            "POST",
            "/v1/teams/",
            &[("X-API-KEY", &admin_key)],
            Some(json!({"name": "Core"})),
        )
        .await;
    let team = team.body["uuid"].as_str().unwrap().to_owned();
    let mut admin_only = 0;
    // Plan's org-admin doors come after its beta gate and scopes (tests/api/plan/rules.rs).
    for r in general_routes().filter(|r| r.policy.admin_only && r.policy.plan.is_none()) {
        // A real team and person, and a body that would change them were the call allowed.
        let path = concrete_path(&r.path.replace("{uuid}", &team).replace("{user}", &member));
        let res = app
            .send(
                r.method,
                &path,
                &[("X-API-KEY", &member_key)],
                Some(json!({"name": "Taken over"})),
            )
            .await;
        res.assert_error(403, "org_admin_required");
        admin_only += 1;
    }
    // The spec's list: team members (GET, PUT, PATCH, DELETE) and team invite, plus the
    // pending invitations and team authoring, which only admins may do here.
    assert!(admin_only >= 5, "{admin_only}");
    let teams = app
        .get_with_key("/v1/teams/?include_archived=true", &admin_key)
        .await;
    assert_eq!(teams.body["count"], 1, "{}", teams.text);
    assert_eq!(teams.body["results"][0]["name"], "Core");
    assert_eq!(teams.body["results"][0]["active"], true);
    assert_eq!(teams.body["results"][0]["members_count"], 0);
}

#[test]
fn the_matrix_of_the_spec_is_the_table() {
    let policy = |method: &str, path: &str| {
        registry()
            .routes()
            .iter()
            .find(|r| r.method == method && r.path == path)
            .unwrap_or_else(|| panic!("{method} {path} is not registered"))
            .policy
    };
    // Free-plan allow-list among the routes that exist today.
    for (m, p) in [
        ("GET", "/v1/me/"),
        ("GET", "/v1/organization/"),
        ("POST", "/v1/send-email/"),
    ] {
        assert_eq!(policy(m, p).cli, CliAccess::AnyPlan, "{m} {p}");
    }
    // "Y (read)": the directory is readable, not writable, from the CLI.
    for r in general_routes().filter(|r| {
        ["/v1/organization/", "/v1/users/", "/v1/teams/"]
            .iter()
            .any(|g| r.path.starts_with(g))
    }) {
        assert_eq!(
            r.policy.cli == CliAccess::Refused,
            r.method != "GET",
            "{} {}",
            r.method,
            r.path
        );
    }
    // Admin-only endpoints of the spec.
    for (m, p) in [
        ("GET", "/v1/teams/{uuid}/members/{user}/"),
        ("PUT", "/v1/teams/{uuid}/members/{user}/"),
        ("PATCH", "/v1/teams/{uuid}/members/{user}/"),
        ("DELETE", "/v1/teams/{uuid}/members/{user}/"),
        ("POST", "/v1/teams/{uuid}/invite/"),
        ("POST", "/v1/open-conversation/"),
    ] {
        assert!(policy(m, p).admin_only, "{m} {p}");
    }
    // Key management takes a web session; provisioning the operator token.
    assert_eq!(
        policy("POST", "/api/org/api-keys/").credentials,
        Credentials::Session
    );
    assert_eq!(
        policy("POST", "/operator/v1/organizations/").credentials,
        Credentials::Operator
    );
    // Bot messages and conversations spend the messaging budget, e-mail its own; a CLI
    // session sends (role-scoped by the service).
    for (m, p, scope) in [
        (
            "POST",
            "/v1/send-message/",
            teamcomm_keys::RateScope::Messaging,
        ),
        (
            "POST",
            "/v1/open-conversation/",
            teamcomm_keys::RateScope::Messaging,
        ),
        ("POST", "/v1/send-email/", teamcomm_keys::RateScope::Email),
    ] {
        assert_eq!(policy(m, p).rate, Some(scope), "{m} {p}");
        assert_ne!(policy(m, p).cli, CliAccess::Refused, "{m} {p}");
    }
    // The CLI login: no credential but the `auth` budget (per client address); who-am-I and
    // logout for CLI sessions on any plan (API keys on status too, decision 2).
    for p in ["/v1/cli/auth/request-code/", "/v1/cli/auth/verify-code/"] {
        assert_eq!(policy("POST", p).credentials, Credentials::Public, "{p}");
        assert_eq!(
            policy("POST", p).rate,
            Some(teamcomm_keys::RateScope::Auth),
            "{p}"
        );
    }
    for (m, p) in [
        ("GET", "/v1/cli/auth/status/"),
        ("POST", "/v1/cli/auth/logout/"),
    ] {
        assert_eq!(
            policy(m, p).credentials,
            Credentials::ApiKeyOrCli,
            "{m} {p}"
        );
        assert_eq!(policy(m, p).cli, CliAccess::AnyPlan, "{m} {p}");
    }
    // Invitations spend their own budget.
    for (m, p) in [
        ("POST", "/v1/invite-user/"),
        ("POST", "/v1/teams/{uuid}/invite/"),
    ] {
        assert_eq!(
            policy(m, p).rate,
            Some(teamcomm_keys::RateScope::Invitations)
        );
    }
}

#[actix_web::test]
async fn head_is_served_wherever_get_is() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let get = app.get_with_key("/v1/me/", &key).await;
    let head = app
        .send("HEAD", "/v1/me/", &[("X-API-KEY", &key)], None)
        .await;
    assert_eq!(head.status, 200);
    assert!(head.text.is_empty(), "HEAD has no body: {}", head.text);
    assert_eq!(head.header("content-type"), get.header("content-type"));
    let head = app
        .send("HEAD", "/v1/users", &[("X-API-KEY", &key)], None)
        .await;
    assert_eq!(head.status, 200);
    // A path served only with POST answers 405 to HEAD, and says what it allows.
    let r = app
        .send("HEAD", "/v1/invite-user/", &[("X-API-KEY", &key)], None)
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("POST"));
    let r = app
        .send("POST", "/v1/me/", &[("X-API-KEY", &key)], None)
        .await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
}

#[actix_web::test]
async fn team_invite_aliases_are_validated_and_nothing_is_stored() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let team = app
        .send(
            "POST",
            "/v1/teams/",
            &[("X-API-KEY", &key)],
            Some(json!({"name": "A"})),
        )
        .await;
    let path = format!("/v1/teams/{}/invite/", team.body["uuid"].as_str().unwrap());
    let r = app
        .send(
            "POST",
            &path,
            &[("X-API-KEY", &key)],
            Some(json!({"user_uuids": ["../../etc/passwd"], "emails": ["not-an-email"]})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["user_uuids.0"].is_array(), "{}", r.text);
    assert!(r.body["errors"]["emails.0"].is_array(), "{}", r.text);
    let pending = app.get_with_key("/v1/pending-invitations/all/", &key).await;
    assert_eq!(pending.body["count"], 0, "{}", pending.text);
}

#[actix_web::test]
async fn every_documented_operation_has_a_policy() {
    let app = TestApp::spawn().await;
    let doc = app.send("GET", "/v1/openapi.json", &[], None).await.body;
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let concrete = concrete_path(path);
        for method in item.as_object().unwrap().keys() {
            let method = method.to_uppercase();
            assert!(
                registry().policy_for(&method, &concrete).is_some(),
                "{method} {path} is documented but has no policy"
            );
            operations += 1;
        }
    }
    assert_eq!(operations, registry().routes().len());
}

/// The spec's free-plan CLI allow-list ("CLI Bearer tokens on free-plan organizations"): is the
/// request `method path` (a registered template) on it?
fn on_the_free_plan_allow_list(method: &str, path: &str) -> bool {
    matches!(
        (method, path),
        ("POST", "/v1/agent-reports/")
            | ("POST", "/v1/send-email/")
            | ("GET" | "POST", "/v1/agent-messages/")
            | ("POST" | "PATCH", "/v1/agent-messages/read/")
            | ("GET" | "POST", "/v1/agent-health/")
            | ("GET", "/v1/agent/health/")
            | ("GET", "/v1/me/")
            | ("GET", "/v1/organization/")
            | ("GET", "/v1/cli/status/")
    )
    // Agent registration and the claim flow.
    || path.starts_with("/v1/agent/")
}

/// Routes a free-plan CLI session reaches beyond the spec's list, each for a recorded reason.
fn free_plan_additions(method: &str, path: &str) -> bool {
    // Who may send an e-mail may read its outcome (decisions.md: e-mail status).
    (method == "GET" && path.starts_with("/v1/emails/"))
        // The login's own doors (status, logout) serve the session itself.
        || path.starts_with("/v1/cli/auth/")
}

#[test]
fn the_free_plan_allow_list_is_the_spec_s_on_every_route() {
    // Every route of the registry, the ones added later included: on the list (or a recorded
    // addition) exactly when a free-plan CLI session may call it.
    for r in general_routes() {
        let listed = on_the_free_plan_allow_list(r.method, &r.path);
        assert_eq!(
            r.policy.cli == CliAccess::AnyPlan,
            listed || free_plan_additions(r.method, &r.path),
            "{} {}: {:?}",
            r.method,
            r.path,
            r.policy.cli
        );
        if listed {
            assert_ne!(r.policy.cli, CliAccess::Refused, "{} {}", r.method, r.path);
        }
    }
    // The daily limits sit on the routes the spec names (and on the agent's e-mail send, which
    // sends e-mail too), and on no other route.
    for r in general_routes() {
        let expected = match (r.method, r.path.as_str()) {
            ("POST", "/v1/agent-reports/") => Some(teamcomm_keys::DailyLimit::AgentReports),
            ("POST", "/v1/send-email/" | "/v1/agent-email/send/") => {
                Some(teamcomm_keys::DailyLimit::Emails)
            }
            _ => None,
        };
        assert_eq!(r.policy.daily, expected, "{} {}", r.method, r.path);
    }
}
