//! `/api/org/api-keys/`: show-once, regenerate, revocation, role rules, tenant isolation.

use std::time::Duration;

use serde_json::{Value, json};
use teamcomm_tests::TestApp;

const FIELDS: [&str; 12] = [
    "id",
    "name",
    "key_suffix",
    "masked_key",
    "active",
    "owner",
    "created_by",
    "is_agent_key",
    "scopes",
    "last_usage_at",
    "expiration",
    "created_at",
];

fn assert_record_shape(r: &Value, with_key: bool) {
    for f in FIELDS {
        assert!(r.get(f).is_some(), "field {f} missing in {r}");
    }
    assert_eq!(r.get("key").is_some(), with_key, "key presence in {r}");
    let suffix = r["key_suffix"].as_str().unwrap();
    assert_eq!(suffix.chars().count(), 4);
    assert_eq!(
        r["masked_key"].as_str().unwrap(),
        format!("••••••••{suffix}")
    );
    assert!(r["owner"]["uuid"].is_string() && r["owner"]["full_name"].is_string());
    if with_key {
        assert!(r["key"].as_str().unwrap().ends_with(suffix));
    }
}

#[actix_web::test]
async fn create_shows_the_key_once_and_never_again() {
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let admin = app.create_user(&org, "admin").await;
    let session = app.session(&admin).await;

    let (created, key) = app.create_key(&session, json!({"name": "ci"})).await;
    assert_record_shape(&created, true);
    assert!(key.starts_with("tck_") && key.len() == 42, "{key}");
    assert_eq!(created["name"], "ci");
    assert_eq!(created["active"], true);
    assert_eq!(created["is_agent_key"], false);
    assert_eq!(created["owner"]["uuid"], admin.as_str());
    assert_eq!(created["created_by"]["uuid"], admin.as_str());
    assert_eq!(created["scopes"], json!(["tasks:read", "tasks:write"]));
    assert_eq!(created["last_usage_at"], Value::Null);
    let id = created["id"].as_str().unwrap();

    let list = app.keys("GET", "/api/org/api-keys/", &session, None).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body["count"], 1);
    assert_record_shape(&list.body["results"][0], false);
    assert!(!list.text.contains(&key));

    let detail = app
        .keys("GET", &format!("/api/org/api-keys/{id}/"), &session, None)
        .await;
    assert_eq!(detail.status, 200);
    assert_record_shape(&detail.body, false);

    let renamed = app
        .keys(
            "PATCH",
            &format!("/api/org/api-keys/{id}/"),
            &session,
            Some(json!({"name": "ci-2"})),
        )
        .await;
    assert_eq!(renamed.status, 200);
    assert_record_shape(&renamed.body, false);
    assert_eq!(renamed.body["name"], "ci-2");
}

async fn database_contains(app: &TestApp, needle: &str) -> bool {
    use diesel::QueryableByName;
    use diesel::sql_types::Bool;
    use diesel_async::RunQueryDsl;
    #[derive(QueryableByName)]
    struct Found {
        #[diesel(sql_type = Bool)]
        found: bool,
    }
    let mut conn = app.database.pool().get().await.unwrap();
    let r: Found = diesel::sql_query(
        "SELECT EXISTS (SELECT 1 FROM api_keys k WHERE k::text LIKE '%' || $1 || '%') AS found",
    )
    .bind::<diesel::sql_types::Text, _>(needle)
    .get_result(&mut conn)
    .await
    .unwrap();
    r.found
}

#[actix_web::test]
async fn plaintext_is_not_stored() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    assert!(!database_contains(&app, &key).await);
    assert!(!database_contains(&app, &key[4..30]).await);
}

#[actix_web::test]
async fn regenerate_returns_a_new_key_and_kills_the_old_one() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    let (created, old) = app.create_key(&session, json!({"name": "rotating"})).await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(app.get_with_key("/v1/me/", &old).await.status, 200);

    let r = app
        .keys(
            "PATCH",
            &format!("/api/org/api-keys/{id}/"),
            &session,
            Some(json!({"regenerate": true})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_record_shape(&r.body, true);
    let new = r.body["key"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    assert_eq!(r.body["id"], id);

    app.get_with_key("/v1/me/", &old)
        .await
        .assert_error(401, "invalid_credentials");
    assert_eq!(app.get_with_key("/v1/me/", &new).await.status, 200);
    let detail = app
        .keys("GET", &format!("/api/org/api-keys/{id}/"), &session, None)
        .await;
    assert_eq!(
        detail.body["key_suffix"].as_str().unwrap(),
        &new[new.len() - 4..]
    );
}

#[actix_web::test]
async fn deactivate_and_delete_revoke_at_once() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    let (created, key) = app.create_key(&session, json!({"name": "temp"})).await;
    let id = created["id"].as_str().unwrap();

    let r = app
        .keys(
            "PATCH",
            &format!("/api/org/api-keys/{id}/"),
            &session,
            Some(json!({"active": false})),
        )
        .await;
    assert_eq!((r.status, r.body["active"].as_bool()), (200, Some(false)));
    app.get_with_key("/v1/me/", &key)
        .await
        .assert_error(401, "invalid_credentials");
    app.keys(
        "PATCH",
        &format!("/api/org/api-keys/{id}/"),
        &session,
        Some(json!({"active": true})),
    )
    .await;
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);

    let r = app
        .keys(
            "DELETE",
            &format!("/api/org/api-keys/{id}/"),
            &session,
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    assert!(r.text.is_empty());
    app.get_with_key("/v1/me/", &key)
        .await
        .assert_error(401, "invalid_credentials");
    app.keys("GET", &format!("/api/org/api-keys/{id}/"), &session, None)
        .await
        .assert_error(404, "not_found");
    app.keys(
        "DELETE",
        &format!("/api/org/api-keys/{id}/"),
        &session,
        None,
    )
    .await
    .assert_error(404, "not_found");
}

#[actix_web::test]
async fn member_rules() {
    let app = TestApp::spawn().await;
    let (org, admin, admin_session, _) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let other = app.create_user(&org, "member").await;
    let session = app.session(&member).await;

    // Agent keys are admin-only.
    let r = app
        .keys(
            "POST",
            "/api/org/api-keys/",
            &session,
            Some(json!({"name": "a", "is_agent_key": true})),
        )
        .await;
    r.assert_error(400, "agent_key_admin_only");
    // Keys for someone else are admin-only.
    let r = app
        .keys(
            "POST",
            "/api/org/api-keys/",
            &session,
            Some(json!({"name": "a", "for_user_id": other})),
        )
        .await;
    r.assert_error(403, "org_admin_required");
    // For oneself is fine.
    let (mine, _) = app
        .create_key(&session, json!({"name": "mine", "for_user_id": member}))
        .await;
    assert_eq!(mine["owner"]["uuid"], member.as_str());
    let (mine2, _) = app.create_key(&session, json!({"name": "mine too"})).await;

    // The admin's key and another member's key are invisible: 404, and nothing changes.
    let (others, _) = app
        .create_key(
            &admin_session,
            json!({"name": "theirs", "for_user_id": other}),
        )
        .await;
    let admin_list = app
        .keys("GET", "/api/org/api-keys/", &admin_session, None)
        .await;
    let admin_key_id = admin_list.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["owner"]["uuid"] == admin.as_str())
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for id in [others["id"].as_str().unwrap(), admin_key_id.as_str()] {
        let path = format!("/api/org/api-keys/{id}/");
        app.keys("GET", &path, &session, None)
            .await
            .assert_error(404, "not_found");
        app.keys("PATCH", &path, &session, Some(json!({"name": "hijack"})))
            .await
            .assert_error(404, "not_found");
        let r = app
            .keys("PATCH", &path, &session, Some(json!({"regenerate": true})))
            .await;
        r.assert_error(404, "not_found");
        app.keys("DELETE", &path, &session, None)
            .await
            .assert_error(404, "not_found");
    }
    let still = app
        .keys(
            "GET",
            &format!("/api/org/api-keys/{}/", others["id"].as_str().unwrap()),
            &admin_session,
            None,
        )
        .await;
    assert_eq!(
        (still.status, still.body["name"].as_str()),
        (200, Some("theirs"))
    );

    // Members list only their own keys.
    let list = app.keys("GET", "/api/org/api-keys/", &session, None).await;
    assert_eq!(list.body["count"], 2, "{}", list.text);
    let ids: Vec<&str> = list.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&mine["id"].as_str().unwrap()) && ids.contains(&mine2["id"].as_str().unwrap())
    );

    // Members manage their own keys.
    let r = app
        .keys(
            "PATCH",
            &format!("/api/org/api-keys/{}/", mine["id"].as_str().unwrap()),
            &session,
            Some(json!({"regenerate": true})),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(r.body["key"].is_string());
    let r = app
        .keys(
            "DELETE",
            &format!("/api/org/api-keys/{}/", mine2["id"].as_str().unwrap()),
            &session,
            None,
        )
        .await;
    assert_eq!(r.status, 204);
}

#[actix_web::test]
async fn admin_rules() {
    let app = TestApp::spawn().await;
    let (org, admin, session, _) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let inactive = app.create_user(&org, "member").await;
    app.deactivate(&inactive).await;
    let other_org = app.create_org("business").await;
    let stranger = app.create_user(&other_org, "member").await;

    let (agent, _) = app
        .create_key(&session, json!({"name": "bot", "is_agent_key": true}))
        .await;
    assert_eq!(agent["is_agent_key"], true);
    assert_eq!(agent["owner"]["uuid"], admin.as_str());

    let (for_member, member_key) = app
        .create_key(&session, json!({"name": "m", "for_user_id": member}))
        .await;
    assert_eq!(for_member["owner"]["uuid"], member.as_str());
    assert_eq!(for_member["created_by"]["uuid"], admin.as_str());
    assert_eq!(
        app.get_with_key("/v1/me/", &member_key).await.body["role"],
        "member"
    );

    let r = app
        .keys(
            "POST",
            "/api/org/api-keys/",
            &session,
            Some(json!({"name": "x", "for_user_id": inactive})),
        )
        .await;
    r.assert_error(400, "target_user_inactive");
    for target in [
        stranger.as_str(),
        "00000000-0000-0000-0000-000000000000",
        "not-a-uuid",
    ] {
        let r = app
            .keys(
                "POST",
                "/api/org/api-keys/",
                &session,
                Some(json!({"name": "x", "for_user_id": target})),
            )
            .await;
        r.assert_error(400, "target_user_not_found");
    }

    // Admins see and manage every key of the organization.
    let list = app.keys("GET", "/api/org/api-keys/", &session, None).await;
    assert_eq!(list.body["count"], 3, "{}", list.text);
    let r = app
        .keys(
            "DELETE",
            &format!("/api/org/api-keys/{}/", for_member["id"].as_str().unwrap()),
            &session,
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    app.get_with_key("/v1/me/", &member_key)
        .await
        .assert_error(401, "invalid_credentials");

    // Scopes: explicit subsets; unknown scopes refused.
    let (scoped, _) = app
        .create_key(&session, json!({"name": "ro", "scopes": ["tasks:read"]}))
        .await;
    assert_eq!(scoped["scopes"], json!(["tasks:read"]));
    let r = app
        .keys(
            "POST",
            "/api/org/api-keys/",
            &session,
            Some(json!({"name": "x", "scopes": ["tasks:root"]})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["scopes"].is_array());
}

#[actix_web::test]
async fn another_organizations_key_is_not_found() {
    let app = TestApp::spawn().await;
    let (_, _, session_a, _) = app.org_with_admin_key("business").await;
    let (_, _, session_b, _) = app.org_with_admin_key("business").await;
    let (key_b, secret_b) = app.create_key(&session_b, json!({"name": "b"})).await;
    let path = format!("/api/org/api-keys/{}/", key_b["id"].as_str().unwrap());
    app.keys("GET", &path, &session_a, None)
        .await
        .assert_error(404, "not_found");
    app.keys(
        "PATCH",
        &path,
        &session_a,
        Some(json!({"regenerate": true})),
    )
    .await
    .assert_error(404, "not_found");
    app.keys("DELETE", &path, &session_a, None)
        .await
        .assert_error(404, "not_found");
    let list = app
        .keys("GET", "/api/org/api-keys/", &session_a, None)
        .await;
    assert!(!list.text.contains(key_b["id"].as_str().unwrap()));
    // Untouched.
    assert_eq!(app.get_with_key("/v1/me/", &secret_b).await.status, 200);
}

#[actix_web::test]
async fn last_usage_is_shown_at_once_and_flushed_to_the_database() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    let (created, key) = app.create_key(&session, json!({"name": "used"})).await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);

    let detail = app
        .keys("GET", &format!("/api/org/api-keys/{id}/"), &session, None)
        .await;
    let seen = detail.body["last_usage_at"]
        .as_str()
        .expect("pending usage is merged into reads")
        .to_owned();

    // Not yet written…
    let stored = app
        .key_repo()
        .get_key(created_org(&app, &session).await, id.parse().unwrap())
        .await
        .unwrap();
    assert!(stored.last_usage_at.is_none());
    // …until the flush.
    app.state.flush_key_usage().await;
    let stored = app
        .key_repo()
        .get_key(created_org(&app, &session).await, id.parse().unwrap())
        .await
        .unwrap();
    let at = stored.last_usage_at.expect("flushed");
    assert_eq!(teamcomm_api::views::iso(at), seen);
    tokio::time::sleep(Duration::from_millis(5)).await;
}

async fn created_org(app: &TestApp, session: &str) -> teamcomm_kernel::OrgId {
    let r = app.keys("GET", "/api/org/api-keys/", session, None).await;
    let owner = r.body["results"][0]["owner"]["uuid"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    app.orgs().find_user(owner).await.unwrap().org_id
}

#[actix_web::test]
async fn pagination_of_keys() {
    let app = TestApp::spawn().await;
    let (_, _, session, _) = app.org_with_admin_key("business").await;
    for i in 0..4 {
        app.create_key(&session, json!({"name": format!("k{i}")}))
            .await;
    }
    let r = app
        .keys("GET", "/api/org/api-keys/?page_size=2", &session, None)
        .await;
    assert_eq!(r.body["count"], 5);
    assert_eq!(r.body["results"].as_array().unwrap().len(), 2);
    assert_eq!(r.body["previous"], Value::Null);
    let next = r.body["next"].as_str().unwrap();
    assert_eq!(
        next,
        "https://api.teamcomm.test/api/org/api-keys/?page=2&page_size=2"
    );
    let r = app
        .keys(
            "GET",
            "/api/org/api-keys/?page=3&page_size=2",
            &session,
            None,
        )
        .await;
    assert_eq!(r.body["results"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["next"], Value::Null);
}
