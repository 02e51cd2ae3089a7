//! What the Plan tests share: an organization with the beta and people with credentials.

use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};

/// An organization with the Plan beta, an admin and a member, each with an API key.
pub struct PlanOrg {
    pub org: String,
    pub admin: String,
    pub admin_key: String,
    pub member: String,
    pub member_key: String,
}

impl PlanOrg {
    /// A paid (`business`) organization with the beta on.
    pub async fn new(app: &TestApp) -> PlanOrg {
        Self::on_plan(app, "business", true).await
    }

    pub async fn on_plan(app: &TestApp, plan: &str, beta: bool) -> PlanOrg {
        let (org, admin, _session, admin_key) = app.org_with_admin_key(plan).await;
        let r = app
            .operator(
                "PATCH",
                &format!("/operator/v1/organizations/{org}/"),
                Some(json!({"plan_beta": beta})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let member = app.create_user(&org, "member").await;
        let member_key = key_for(app, &member, json!({"name": "member key"})).await;
        PlanOrg {
            org,
            admin,
            admin_key,
            member,
            member_key,
        }
    }

    /// Another person of this organization with `role` and a key: (uuid, key).
    pub async fn person(&self, app: &TestApp, role: &str) -> (String, String) {
        let user = app.create_user(&self.org, role).await;
        let key = key_for(app, &user, json!({"name": "key"})).await;
        (user, key)
    }

    /// An admin-made agent key (no person in Plan) with these scopes.
    pub async fn agent_key(&self, app: &TestApp, scopes: &[&str]) -> String {
        let session = app.session(&self.admin).await;
        let (_, key) = app
            .create_key(
                &session,
                json!({"name": "agent", "is_agent_key": true, "scopes": scopes}),
            )
            .await;
        key
    }
}

/// A key of `user` (its own, made in their web session).
pub async fn key_for(app: &TestApp, user: &str, body: Value) -> String {
    let session = app.session(user).await;
    app.create_key(&session, body).await.1
}

/// A Plan call with an API key: `path` is below `/v1/plan/`.
pub async fn plan(app: &TestApp, method: &str, path: &str, key: &str, body: Option<Value>) -> Resp {
    app.send(
        method,
        &format!("/v1/plan/{path}"),
        &[("X-API-KEY", key)],
        body,
    )
    .await
}
