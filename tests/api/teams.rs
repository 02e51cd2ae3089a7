//! `/v1/teams/`: visibility, admin-only membership management with real effects, invitations.

use serde_json::{Value, json};
use teamcomm_tests::TestApp;

struct Org {
    app: TestApp,
    admin_key: String,
    member: String,
    member_key: String,
    outsider: String,
}

async fn setup() -> Org {
    let app = TestApp::spawn().await;
    let (org, _, session, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let (_, member_key) = app
        .create_key(&session, json!({"name": "m", "for_user_id": member}))
        .await;
    let other_org = app.create_org("business").await;
    let outsider = app.create_user(&other_org, "member").await;
    Org {
        app,
        admin_key,
        member,
        member_key,
        outsider,
    }
}

impl Org {
    async fn call(
        &self,
        key: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> teamcomm_tests::Resp {
        self.app
            .send(method, path, &[("X-API-KEY", key)], body)
            .await
    }

    async fn team(&self, name: &str) -> String {
        let r = self
            .call(
                &self.admin_key,
                "POST",
                "/v1/teams/",
                Some(json!({"name": name})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }
}

#[actix_web::test]
async fn admins_create_rename_and_archive_teams() {
    let o = setup().await;
    let r = o
        .call(
            &o.member_key,
            "POST",
            "/v1/teams/",
            Some(json!({"name": "Nope"})),
        )
        .await;
    r.assert_error(403, "org_admin_required");
    let team = o.team("Platform").await;
    let r = o
        .call(&o.admin_key, "GET", &format!("/v1/teams/{team}/"), None)
        .await;
    assert_eq!(r.body["name"], "Platform");
    assert_eq!(
        (r.body["active"].as_bool(), r.body["is_default"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(r.body["members_count"], 0);

    let r = o
        .call(
            &o.admin_key,
            "PATCH",
            &format!("/v1/teams/{team}/"),
            Some(json!({"name": "Platform Eng"})),
        )
        .await;
    assert_eq!(r.body["name"], "Platform Eng");
    o.call(
        &o.member_key,
        "PATCH",
        &format!("/v1/teams/{team}/"),
        Some(json!({"name": "x"})),
    )
    .await
    .assert_error(403, "org_admin_required");
    o.call(
        &o.admin_key,
        "POST",
        "/v1/teams/",
        Some(json!({"name": ""})),
    )
    .await
    .assert_error(400, "params_validation_error");

    let r = o
        .call(&o.admin_key, "DELETE", &format!("/v1/teams/{team}/"), None)
        .await;
    assert_eq!(r.status, 204);
    let list = o.call(&o.admin_key, "GET", "/v1/teams/", None).await;
    assert_eq!(list.body["count"], 0, "archived teams are hidden");
    let list = o
        .call(
            &o.admin_key,
            "GET",
            "/v1/teams/?include_archived=true",
            None,
        )
        .await;
    assert_eq!(
        (
            list.body["count"].as_u64(),
            list.body["results"][0]["active"].as_bool()
        ),
        (Some(1), Some(false))
    );
}

#[actix_web::test]
async fn members_see_their_own_teams_only() {
    let o = setup().await;
    let mine = o.team("Mine").await;
    let theirs = o.team("Theirs").await;
    let r = o
        .call(
            &o.admin_key,
            "PUT",
            &format!("/v1/teams/{mine}/members/{}/", o.member),
            None,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);

    let admin_view = o.call(&o.admin_key, "GET", "/v1/teams/", None).await;
    assert_eq!(admin_view.body["count"], 2);
    let member_view = o.call(&o.member_key, "GET", "/v1/teams/", None).await;
    assert_eq!(member_view.body["count"], 1);
    assert_eq!(member_view.body["results"][0]["uuid"], mine.as_str());
    assert_eq!(member_view.body["results"][0]["members_count"], 1);

    assert_eq!(
        o.call(&o.member_key, "GET", &format!("/v1/teams/{mine}/"), None)
            .await
            .status,
        200
    );
    o.call(&o.member_key, "GET", &format!("/v1/teams/{theirs}/"), None)
        .await
        .assert_error(404, "not_found");
    o.call(
        &o.member_key,
        "GET",
        &format!("/v1/teams/{theirs}/members/"),
        None,
    )
    .await
    .assert_error(404, "not_found");
    let members = o
        .call(
            &o.member_key,
            "GET",
            &format!("/v1/teams/{mine}/members/"),
            None,
        )
        .await;
    assert_eq!(members.status, 200);
    assert_eq!(members.body["results"][0]["uuid"], o.member.as_str());
    assert_eq!(members.body["results"][0]["team_role"], "member");
}

#[actix_web::test]
async fn membership_management_is_admin_only_with_real_effects() {
    let o = setup().await;
    let team = o.team("Core").await;
    let path = format!("/v1/teams/{team}/members/{}/", o.member);

    // Members are refused every membership verb, and nothing changes.
    for method in ["GET", "PUT", "PATCH", "DELETE"] {
        o.call(&o.member_key, method, &path, None)
            .await
            .assert_error(403, "org_admin_required");
    }
    let r = o
        .call(
            &o.member_key,
            "POST",
            &format!("/v1/teams/{team}/invite/"),
            Some(json!({"users_identifiers": [o.member]})),
        )
        .await;
    r.assert_error(403, "org_admin_required");
    assert!(
        !o.app
            .team_repo()
            .is_member(team.parse().unwrap(), o.member.parse().unwrap())
            .await
            .unwrap()
    );

    // Not yet a member: GET/PATCH/DELETE are 404; PUT adds (201), again is 200.
    o.call(&o.admin_key, "GET", &path, None)
        .await
        .assert_error(404, "not_found");
    o.call(
        &o.admin_key,
        "PATCH",
        &path,
        Some(json!({"role": "manager"})),
    )
    .await
    .assert_error(404, "not_found");
    let r = o.call(&o.admin_key, "PUT", &path, Some(json!({}))).await;
    assert_eq!(
        (r.status, r.body["team_role"].as_str()),
        (201, Some("member")),
        "{}",
        r.text
    );
    assert!(
        o.app
            .team_repo()
            .is_member(team.parse().unwrap(), o.member.parse().unwrap())
            .await
            .unwrap()
    );
    let r = o.call(&o.admin_key, "PUT", &path, None).await;
    assert_eq!(r.status, 200);
    let r = o
        .call(
            &o.admin_key,
            "PATCH",
            &path,
            Some(json!({"role": "manager"})),
        )
        .await;
    assert_eq!(
        (r.status, r.body["team_role"].as_str()),
        (200, Some("manager"))
    );
    assert_eq!(
        o.call(&o.admin_key, "GET", &path, None).await.body["team_role"],
        "manager"
    );
    o.call(&o.admin_key, "PATCH", &path, Some(json!({"role": "owner"})))
        .await
        .assert_error(400, "params_validation_error");

    let r = o.call(&o.admin_key, "DELETE", &path, None).await;
    assert_eq!(r.status, 204);
    assert!(
        !o.app
            .team_repo()
            .is_member(team.parse().unwrap(), o.member.parse().unwrap())
            .await
            .unwrap()
    );
    o.call(&o.admin_key, "DELETE", &path, None)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn users_and_teams_of_other_organizations() {
    let o = setup().await;
    let team = o.team("Core").await;
    let r = o
        .call(
            &o.admin_key,
            "PUT",
            &format!("/v1/teams/{team}/members/{}/", o.outsider),
            None,
        )
        .await;
    r.assert_error(403, "member_in_scope_required");
    let r = o
        .call(
            &o.admin_key,
            "GET",
            &format!("/v1/teams/{team}/members/not-a-uuid/"),
            None,
        )
        .await;
    r.assert_error(403, "member_in_scope_required");
    let r = o
        .call(
            &o.admin_key,
            "POST",
            &format!("/v1/teams/{team}/invite/"),
            Some(json!({"users_identifiers": [o.outsider]})),
        )
        .await;
    r.assert_error(403, "member_in_scope_required");
    assert_eq!(
        o.call(&o.admin_key, "GET", &format!("/v1/teams/{team}/"), None)
            .await
            .body["members_count"],
        0
    );

    // Another organization's team is not found, for any verb.
    let (_, _, _, foreign_key) = o.app.org_with_admin_key("business").await;
    let foreign_team = o
        .call(
            &foreign_key,
            "POST",
            "/v1/teams/",
            Some(json!({"name": "Foreign"})),
        )
        .await
        .body["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    for (method, path) in [
        ("GET", format!("/v1/teams/{foreign_team}/")),
        ("PATCH", format!("/v1/teams/{foreign_team}/")),
        ("DELETE", format!("/v1/teams/{foreign_team}/")),
        ("GET", format!("/v1/teams/{foreign_team}/members/")),
        (
            "PUT",
            format!("/v1/teams/{foreign_team}/members/{}/", o.member),
        ),
    ] {
        let body = (method == "PATCH").then(|| json!({"name": "hijack"}));
        o.call(&o.admin_key, method, &path, body)
            .await
            .assert_error(404, "not_found");
    }
    let still = o
        .call(
            &foreign_key,
            "GET",
            &format!("/v1/teams/{foreign_team}/"),
            None,
        )
        .await;
    assert_eq!(
        (still.body["name"].as_str(), still.body["active"].as_bool()),
        (Some("Foreign"), Some(true))
    );
}

#[actix_web::test]
async fn team_invite_adds_members_and_invites_strangers_by_email() {
    let o = setup().await;
    let team = o.team("Growth").await;
    let member_email = o
        .app
        .orgs()
        .find_user(o.member.parse().unwrap())
        .await
        .unwrap()
        .email;
    let r = o
        .call(
            &o.admin_key,
            "POST",
            &format!("/v1/teams/{team}/invite/"),
            Some(json!({"users_identifiers": [member_email.to_uppercase(), "newbie@example.org"]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["members_added"]["count"], 1);
    assert_eq!(
        r.body["members_added"]["members"][0]["uuid"],
        o.member.as_str()
    );
    assert_eq!(r.body["users_invited"]["count"], 1);
    let invitation = &r.body["users_invited"]["members"][0];
    assert_eq!(invitation["email"], "newbie@example.org");
    assert_eq!(invitation["joinable_team_uuids"], json!([team]));
    assert_eq!(r.body["team"]["members_count"], 1);

    let pending = o
        .call(&o.admin_key, "GET", "/v1/pending-invitations/", None)
        .await;
    assert_eq!(pending.body["count"], 1);
}

#[actix_web::test]
async fn membership_bodies_are_optional_but_never_malformed() {
    let o = setup().await;
    let team = o.team("Bodies").await;
    let url = o
        .app
        .url(&format!("/v1/teams/{team}/members/{}/", o.member));
    let res = o
        .app
        .client
        .put(&url)
        .header("X-API-KEY", &o.admin_key)
        .header("Content-Type", "application/json")
        .body("{\"role\": ")
        .send()
        .await
        .unwrap();
    TestApp::read(res).await.assert_error(400, "parse_error");
    assert!(
        !o.app
            .team_repo()
            .is_member(team.parse().unwrap(), o.member.parse().unwrap())
            .await
            .unwrap()
    );
    let res = o
        .app
        .client
        .put(&url)
        .header("X-API-KEY", &o.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(TestApp::read(res).await.status, 201);
}
