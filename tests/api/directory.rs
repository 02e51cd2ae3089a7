//! `/v1/organization/` and `/v1/users/`: visibility, profile rules, paging and filter codes.

use serde_json::{Value, json};
use teamcomm_tests::TestApp;

async fn key_for(app: &TestApp, session: &str, user: &str) -> String {
    app.create_key(session, json!({"name": "k", "for_user_id": user}))
        .await
        .1
}

#[actix_web::test]
async fn organization_of_the_credential() {
    let app = TestApp::spawn().await;
    let r = app
        .operator(
            "POST",
            "/operator/v1/organizations/",
            Some(json!({"name": "Acme", "plan": "business", "platform": "Slack"})),
        )
        .await;
    assert_eq!(r.body["platform"], "slack");
    let org = r.body["uuid"].as_str().unwrap().to_owned();
    let admin = app.create_user(&org, "admin").await;
    let session = app.session(&admin).await;
    let (_, key) = app.create_key(&session, json!({"name": "k"})).await;
    let r = app.get_with_key("/v1/organization/", &key).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (r.body["uuid"].as_str(), r.body["name"].as_str()),
        (Some(org.as_str()), Some("Acme"))
    );
    assert_eq!(
        (r.body["platform"].as_str(), r.body["timezone"].as_str()),
        (Some("slack"), Some("UTC"))
    );
}

#[actix_web::test]
async fn users_are_listed_by_name_with_email_only_on_request() {
    let app = TestApp::spawn().await;
    let (org, admin, _, key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let other_org = app.create_org("business").await;
    let stranger = app.create_user(&other_org, "member").await;

    let r = app.get_with_key("/v1/users/", &key).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["count"], 2);
    let uuids: Vec<&str> = r.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["uuid"].as_str().unwrap())
        .collect();
    assert!(
        uuids.contains(&admin.as_str())
            && uuids.contains(&member.as_str())
            && !uuids.contains(&stranger.as_str())
    );
    let row = &r.body["results"][0];
    for f in [
        "uuid",
        "full_name",
        "first_name",
        "last_name",
        "role",
        "is_active",
        "timezone",
    ] {
        assert!(row.get(f).is_some(), "{f} in {row}");
    }
    assert!(row.get("email").is_none());
    let r = app
        .get_with_key("/v1/users/?include_email=true", &key)
        .await;
    assert!(
        r.body["results"][0]["email"]
            .as_str()
            .unwrap()
            .ends_with("@example.com")
    );

    let r = app
        .get_with_key(&format!("/v1/users/{member}/?include_email=true"), &key)
        .await;
    assert_eq!((r.status, r.body["role"].as_str()), (200, Some("member")));
    assert!(r.body["email"].is_string());
    app.get_with_key(&format!("/v1/users/{stranger}/"), &key)
        .await
        .assert_error(404, "not_found");
    app.get_with_key("/v1/users/not-a-uuid/", &key)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn search_and_activity_filters() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    for (email, first, last) in [
        ("ada@x.io", "Ada", "Lovelace"),
        ("grace@x.io", "Grace", "Hopper"),
        ("alan@x.io", "Alan", "Turing"),
    ] {
        let r = app
            .operator(
                "POST",
                &format!("/operator/v1/organizations/{org}/users/"),
                Some(json!({"email": email, "first_name": first, "last_name": last, "role": "member"})),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let r = app.get_with_key("/v1/users/?search=lOVE", &key).await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["full_name"], "Ada Lovelace");
    let r = app.get_with_key("/v1/users/?search=grace%40x", &key).await;
    assert_eq!(r.body["count"], 1, "{}", r.text);
    let r = app.get_with_key("/v1/users/?search=Alan%20Tur", &key).await;
    assert_eq!(r.body["count"], 1, "{}", r.text);
    // LIKE wildcards in the query are literal.
    assert_eq!(
        app.get_with_key("/v1/users/?search=%25", &key).await.body["count"],
        0
    );

    let alan = app
        .get_with_key("/v1/users/?search=turing", &key)
        .await
        .body["results"][0]["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = app
        .send(
            "PATCH",
            &format!("/v1/users/{alan}/"),
            &[("X-API-KEY", &key)],
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!(
        (r.status, r.body["is_active"].as_bool()),
        (200, Some(false)),
        "{}",
        r.text
    );
    assert_eq!(
        app.get_with_key("/v1/users/?is_active=false", &key)
            .await
            .body["count"],
        1
    );
    assert_eq!(
        app.get_with_key("/v1/users/?is_active=true", &key)
            .await
            .body["count"],
        3
    );
    // Deactivated people stay in the default list (clients filter them by `is_active`).
    let all = app.get_with_key("/v1/users/", &key).await;
    assert_eq!(all.body["count"], 4);

    let long = "a".repeat(257);
    let r = app
        .get_with_key(&format!("/v1/users/?search={long}"), &key)
        .await;
    r.assert_error(400, "search_query_too_long");
    app.get_with_key("/v1/users/?is_active=maybe", &key)
        .await
        .assert_error(400, "invalid_filter_value");
}

#[actix_web::test]
async fn pagination_links_carry_the_filters() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    for _ in 0..6 {
        app.create_user(&org, "member").await;
    }
    let r = app
        .get_with_key(
            "/v1/users/?search=member&page_size=2&include_email=true",
            &key,
        )
        .await;
    assert_eq!(r.body["count"], 6, "{}", r.text);
    let next = r.body["next"].as_str().unwrap();
    assert!(
        next.starts_with("https://api.teamcomm.test/v1/users/?"),
        "{next}"
    );
    assert!(
        next.contains("search=member")
            && next.contains("include_email=true")
            && next.contains("page=2"),
        "{next}"
    );

    // Following the links (rebased on the test server, as clients do) walks every row once.
    let mut seen = Vec::new();
    let mut url = Some("/v1/users/?search=member&page_size=2&include_email=true".to_owned());
    while let Some(path) = url {
        let r = app.get_with_key(&path, &key).await;
        assert_eq!(r.status, 200);
        for u in r.body["results"].as_array().unwrap() {
            assert!(u["email"].is_string(), "filters survive the link: {u}");
            seen.push(u["uuid"].as_str().unwrap().to_owned());
        }
        url = r.body["next"]
            .as_str()
            .map(|n| n.trim_start_matches("https://api.teamcomm.test").to_owned());
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 6);

    // limit/offset works the same way.
    let r = app.get_with_key("/v1/users/?limit=3&offset=3", &key).await;
    assert_eq!(r.body["results"].as_array().unwrap().len(), 3);
    assert_eq!(r.body["count"], 7);
    assert!(r.body["previous"].as_str().unwrap().contains("offset=0"));
    assert!(
        r.body["next"]
            .as_str()
            .unwrap()
            .ends_with("limit=3&offset=6")
    );
    let r = app.get_with_key("/v1/users/?limit=3&offset=6", &key).await;
    assert_eq!(r.body["results"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["next"], Value::Null);
    app.get_with_key("/v1/users/?page=0", &key)
        .await
        .assert_error(400, "invalid_filter_value");
}

#[actix_web::test]
async fn profile_updates_follow_role_rules() {
    let app = TestApp::spawn().await;
    let (org, admin, session, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let other = app.create_user(&org, "member").await;
    let member_key = key_for(&app, &session, &member).await;
    let patch = |key: String, user: String, body: Value| {
        let app = &app;
        async move {
            app.send(
                "PATCH",
                &format!("/v1/users/{user}/"),
                &[("X-API-KEY", &key)],
                Some(body),
            )
            .await
        }
    };

    let r = patch(member_key.clone(), member.clone(), json!({"first_name": "Mia", "timezone": "Europe/Madrid", "birth_date": "04-23", "occupation": "Engineer"})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (r.body["first_name"].as_str(), r.body["timezone"].as_str()),
        (Some("Mia"), Some("Europe/Madrid"))
    );
    assert_eq!(r.body["birth_date"], "04-23");
    let stored = app.orgs().find_user(member.parse().unwrap()).await.unwrap();
    assert_eq!(
        (stored.first_name.as_str(), stored.occupation.as_str()),
        ("Mia", "Engineer")
    );

    patch(
        member_key.clone(),
        other.clone(),
        json!({"first_name": "X"}),
    )
    .await
    .assert_error(403, "org_admin_required");
    patch(member_key.clone(), member.clone(), json!({"role": "admin"}))
        .await
        .assert_error(403, "org_admin_required");
    patch(
        member_key.clone(),
        member.clone(),
        json!({"timezone": "Not A Zone"}),
    )
    .await
    .assert_error(400, "params_validation_error");
    let r = patch(
        member_key.clone(),
        member.clone(),
        json!({"birth_date": "02-30"}),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["birth_date"].is_array());
    patch(member_key.clone(), member.clone(), json!({"nickname": "x"}))
        .await
        .assert_error(400, "unknown_field");
    // Nothing above changed the stored profile.
    let after = app.orgs().find_user(member.parse().unwrap()).await.unwrap();
    assert_eq!(after, stored);

    let r = patch(
        admin_key.clone(),
        other.clone(),
        json!({"role": "admin", "last_name": "Boss"}),
    )
    .await;
    assert_eq!(
        (r.status, r.body["role"].as_str()),
        (200, Some("admin")),
        "{}",
        r.text
    );
    let r = patch(
        admin_key.clone(),
        admin.clone(),
        json!({"is_active": false}),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    let r = patch(admin_key, member.clone(), json!({"birth_date": null})).await;
    assert_eq!(r.body["birth_date"], Value::Null);
}

#[actix_web::test]
async fn cli_sessions_read_the_directory_but_do_not_change_it() {
    let app = TestApp::spawn().await;
    let (_, admin, _, _) = app.org_with_admin_key("business").await;
    let t = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{admin}/cli-tokens/"),
            None,
        )
        .await;
    let bearer = format!("Bearer {}", t.body["token"].as_str().unwrap());
    let r = app
        .send("GET", "/v1/users/", &[("Authorization", &bearer)], None)
        .await;
    assert_eq!(r.status, 200);
    let r = app
        .send(
            "PATCH",
            &format!("/v1/users/{admin}/"),
            &[("Authorization", &bearer)],
            Some(json!({"first_name": "Z"})),
        )
        .await;
    r.assert_error(403, "insufficient_scope");
    let r = app
        .send(
            "POST",
            "/v1/teams/",
            &[("Authorization", &bearer)],
            Some(json!({"name": "Z"})),
        )
        .await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(
        app.orgs()
            .find_user(admin.parse().unwrap())
            .await
            .unwrap()
            .first_name,
        "Test"
    );

    // Free-plan CLI sessions reach the allow-list only.
    let free = app.create_org("free").await;
    let user = app.create_user(&free, "member").await;
    let t = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/cli-tokens/"),
            None,
        )
        .await;
    let bearer = format!("Bearer {}", t.body["token"].as_str().unwrap());
    assert_eq!(
        app.send(
            "GET",
            "/v1/organization/",
            &[("Authorization", &bearer)],
            None
        )
        .await
        .status,
        200
    );
    let r = app
        .send("GET", "/v1/users/", &[("Authorization", &bearer)], None)
        .await;
    r.assert_error(403, "plan_upgrade_required");
    assert_eq!(
        r.body["upgrade_url"],
        "https://app.teamcomm.test/billing/plans"
    );
}

#[actix_web::test]
async fn directory_pages_are_cached_but_never_older_than_this_instances_writes() {
    use teamcomm_org::{NewUser, OrgRepository};
    let app = TestApp::builder()
        .var("TEAMCOMM_DIRECTORY_CACHE_TTL_SECS", "1")
        .spawn()
        .await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    assert_eq!(app.get_with_key("/v1/users/", &key).await.body["count"], 1);

    // A write through this instance shows at once.
    app.create_user(&org, "member").await;
    assert_eq!(app.get_with_key("/v1/users/", &key).await.body["count"], 2);

    // A write made elsewhere (another instance, `teamcomm admin`) shows within the TTL.
    let elsewhere = teamcomm_store_pg::PgOrgRepository::new(app.database.clone());
    let new = NewUser::new("late@example.com", "Late", "Comer", "member", None).unwrap();
    elsewhere
        .create_user(org.parse().unwrap(), &new)
        .await
        .unwrap();
    assert_eq!(
        app.get_with_key("/v1/users/", &key).await.body["count"],
        2,
        "served from the cache"
    );
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(app.get_with_key("/v1/users/", &key).await.body["count"], 3);
}
