//! `POST /v1/invite-user/` and the pending invitations.

use serde_json::json;
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn invite_records_invitations_and_recognises_members() {
    let app = TestApp::spawn().await;
    let (org, admin, session, key) = app.org_with_admin_key("business").await;
    let admin_email = app
        .orgs()
        .find_user(admin.parse().unwrap())
        .await
        .unwrap()
        .email;
    let team = app
        .send(
            "POST",
            "/v1/teams/",
            &[("X-API-KEY", &key)],
            Some(json!({"name": "T"})),
        )
        .await
        .body["uuid"]
        .as_str()
        .unwrap()
        .to_owned();

    let body = json!({
        "users_identifiers": [admin_email, "Zoe@Example.org", "U0123ABC", "zoe@example.org"],
        "joinable_team_uuids": [team],
    });
    let r = app
        .send(
            "POST",
            "/v1/invite-user/",
            &[("X-API-KEY", &key)],
            Some(body),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["dailybot_members"]["count"], 1);
    assert_eq!(
        r.body["dailybot_members"]["members"][0]["uuid"],
        admin.as_str()
    );
    assert_eq!(
        r.body["users_invited"]["count"], 2,
        "duplicates collapse: {}",
        r.text
    );
    let invited: Vec<&str> = r.body["users_invited"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["identifier"].as_str().unwrap())
        .collect();
    assert!(invited.contains(&"zoe@example.org") && invited.contains(&"U0123ABC"));

    // Inviting again resends instead of duplicating.
    let r = app
        .send(
            "POST",
            "/v1/invite-user/",
            &[("X-API-KEY", &key)],
            Some(json!({"users_identifiers": ["zoe@example.org"]})),
        )
        .await;
    assert_eq!(r.body["users_invited"]["members"][0]["resend_count"], 1);
    let list = app
        .send(
            "GET",
            "/v1/pending-invitations/all/",
            &[("X-API-KEY", &key)],
            None,
        )
        .await;
    assert_eq!(list.body["count"], 2, "{}", list.text);

    // Guests by e-mail only; listed separately.
    let r = app
        .send(
            "POST",
            "/v1/invite-user/",
            &[("X-API-KEY", &key)],
            Some(json!({"users_identifiers": ["U999"], "is_guest_account_invite": true})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    let r = app
        .send("POST", "/v1/invite-user/", &[("X-API-KEY", &key)], Some(json!({"users_identifiers": ["guest@example.org"], "is_guest_account_invite": true})))
        .await;
    assert_eq!(r.status, 200);
    let guest_id = r.body["users_invited"]["members"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        app.send(
            "GET",
            "/v1/pending-invitations/guests/",
            &[("X-API-KEY", &key)],
            None
        )
        .await
        .body["count"],
        1
    );
    assert_eq!(
        app.send(
            "GET",
            "/v1/pending-invitations/",
            &[("X-API-KEY", &key)],
            None
        )
        .await
        .body["count"],
        2
    );
    let r = app
        .send(
            "GET",
            &format!("/v1/pending-invitations/guests/{guest_id}/"),
            &[("X-API-KEY", &key)],
            None,
        )
        .await;
    assert_eq!((r.status, r.body["is_guest"].as_bool()), (200, Some(true)));
    let r = app
        .send(
            "DELETE",
            &format!("/v1/pending-invitations/{guest_id}/"),
            &[("X-API-KEY", &key)],
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    app.send(
        "GET",
        &format!("/v1/pending-invitations/{guest_id}/"),
        &[("X-API-KEY", &key)],
        None,
    )
    .await
    .assert_error(404, "not_found");

    // Validation.
    for body in [
        json!({"users_identifiers": []}),
        json!({}),
        json!({"users_identifiers": ["a@b"]}),
        json!({"users_identifiers": ["x@y.io"], "joinable_team_uuids": ["not-a-uuid"]}),
        json!({"users_identifiers": ["x@y.io"], "joinable_team_uuids": ["00000000-0000-0000-0000-000000000000"]}),
        json!({"users_identifiers": (0..101).map(|i| format!("u{i}@x.io")).collect::<Vec<_>>()}),
    ] {
        let r = app
            .send(
                "POST",
                "/v1/invite-user/",
                &[("X-API-KEY", &key)],
                Some(body.clone()),
            )
            .await;
        r.assert_error(400, "params_validation_error");
    }
    assert_eq!(
        app.send(
            "GET",
            "/v1/pending-invitations/all/",
            &[("X-API-KEY", &key)],
            None
        )
        .await
        .body["count"],
        2
    );

    // Members may invite but not read or revoke the pending list; guests may not invite.
    let member = app.create_user(&org, "member").await;
    let (_, member_key) = app
        .create_key(&session, json!({"name": "m", "for_user_id": member}))
        .await;
    let r = app
        .send(
            "POST",
            "/v1/invite-user/",
            &[("X-API-KEY", &member_key)],
            Some(json!({"users_identifiers": ["friend@x.io"]})),
        )
        .await;
    assert_eq!(r.status, 200);
    app.send(
        "GET",
        "/v1/pending-invitations/",
        &[("X-API-KEY", &member_key)],
        None,
    )
    .await
    .assert_error(403, "org_admin_required");
    let guest = app.create_user(&org, "guest").await;
    let (_, guest_key) = app
        .create_key(&session, json!({"name": "g", "for_user_id": guest}))
        .await;
    let r = app
        .send(
            "POST",
            "/v1/invite-user/",
            &[("X-API-KEY", &guest_key)],
            Some(json!({"users_identifiers": ["x@x.io"]})),
        )
        .await;
    r.assert_error(403, "guest_not_allowed");

    // Another organization never sees these invitations.
    let (_, _, _, other_key) = app.org_with_admin_key("business").await;
    assert_eq!(
        app.send(
            "GET",
            "/v1/pending-invitations/all/",
            &[("X-API-KEY", &other_key)],
            None
        )
        .await
        .body["count"],
        0
    );
    let any = list.body["results"][0]["id"].as_str().unwrap();
    app.send(
        "DELETE",
        &format!("/v1/pending-invitations/{any}/"),
        &[("X-API-KEY", &other_key)],
        None,
    )
    .await
    .assert_error(404, "not_found");
}
