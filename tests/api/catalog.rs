//! Templates, report channels, mood tracking and important dates.

use serde_json::{Value, json};
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn built_in_templates_by_type() {
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let all = app.get_with_key("/v1/templates/", &key).await;
    assert_eq!(all.status, 200, "{}", all.text);
    assert!(all.body["count"].as_u64().unwrap() >= 6);
    let checkins = app.get_with_key("/v1/templates/?type=checkins", &key).await;
    let names: Vec<&str> = checkins.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"Daily Standup")
            && names.contains(&"Weekly Retrospective")
            && names.contains(&"Mood Check")
    );
    assert!(
        checkins.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["type"] == "checkins")
    );
    let forms = app.get_with_key("/v1/templates/?type=forms", &key).await;
    assert!(
        forms.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["type"] == "forms")
    );
    assert_eq!(
        checkins.body["count"].as_u64().unwrap() + forms.body["count"].as_u64().unwrap(),
        all.body["count"].as_u64().unwrap()
    );

    let standup = checkins.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Daily Standup")
        .unwrap()
        .clone();
    let id = standup["uuid"].as_str().unwrap();
    let r = app
        .get_with_key(&format!("/v1/templates/{id}/"), &key)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["system_default"], true);
    let questions = r.body["questions"].as_array().unwrap();
    assert_eq!(questions.len(), 3);
    assert!(questions.iter().all(|q| q["uuid"].is_string()
        && q["question"].is_string()
        && q["question_type"].is_string()));

    app.get_with_key("/v1/templates/?type=kudos", &key)
        .await
        .assert_error(400, "invalid_filter_value");
    app.get_with_key("/v1/templates/00000000-0000-0000-0000-000000000000/", &key)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn report_channels_are_per_organization() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    let (other_org, _, _, other_key) = app.org_with_admin_key("business").await;
    let empty = app.get_with_key("/v1/report-channels/", &key).await;
    assert_eq!(empty.body, json!({"channels": [], "total": 0}));

    for (id, name) in [("C01", "#general"), ("C02", "standups")] {
        let r = app
            .operator(
                "POST",
                &format!("/operator/v1/organizations/{org}/channels/"),
                Some(json!({"id": id, "name": name})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{other_org}/channels/"),
            Some(json!({"id": "X9", "name": "secret", "platform": "msteams", "type": "private_channel"})),
        )
        .await;
    assert_eq!(
        (r.status, r.body["type"].as_str()),
        (201, Some("private_channel"))
    );
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/channels/"),
            Some(json!({"id": "C03", "name": "x", "type": "room"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");

    let r = app.get_with_key("/v1/report-channels/", &key).await;
    assert_eq!(r.body["total"], 2);
    assert_eq!(
        r.body["channels"][0],
        json!({"id": "C01", "name": "general", "platform": "slack", "type": "channel"})
    );
    let r = app
        .get_with_key("/v1/report-channels/?name=stand", &key)
        .await;
    assert_eq!(
        (
            r.body["total"].as_u64(),
            r.body["channels"][0]["id"].as_str()
        ),
        (Some(1), Some("C02"))
    );
    let r = app.get_with_key("/v1/report-channels/", &other_key).await;
    assert_eq!(r.body["total"], 1);
    assert_eq!(r.body["channels"][0]["id"], "X9");
}

#[actix_web::test]
async fn mood_is_one_score_per_person_per_day() {
    let app = TestApp::spawn().await;
    let (org, _, session, key) = app.org_with_admin_key("business").await;
    let r = app.get_with_key("/v1/mood/track/", &key).await;
    assert_eq!(r.body, json!({"motivation": null}));

    let post = |body: Value| {
        let app = &app;
        let key = key.clone();
        async move {
            app.send(
                "POST",
                "/v1/mood/track/",
                &[("X-API-KEY", &key)],
                Some(body),
            )
            .await
        }
    };
    let r = post(json!({"score": 4})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["detail"], "The mood response has been tracked");
    assert_eq!(r.body["motivation"]["score"], 4);
    let r = app.get_with_key("/v1/mood/track/", &key).await;
    assert_eq!(r.body["motivation"]["score"], 4);

    post(json!({"score": 5}))
        .await
        .assert_error(409, "motivation_score_already_completed");
    assert_eq!(
        app.get_with_key("/v1/mood/track/", &key).await.body["motivation"]["score"],
        4,
        "the first score stays"
    );
    // A past day within the backfill window (relative, so the test does not age).
    let past = (time::OffsetDateTime::now_utc() - time::Duration::days(40)).date();
    let r = post(json!({"score": 2, "date": past.to_string()})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        app.get_with_key(&format!("/v1/mood/track/?date={past}"), &key)
            .await
            .body["motivation"]["score"],
        2
    );
    // JSON Schema counts 3.0 as an integer, and Python clients send it so.
    let earlier = past - time::Duration::days(1);
    let r = post(json!({"score": 3.0, "date": earlier.to_string()})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["motivation"]["score"], 3);

    for bad in [
        json!({"score": 0}),
        json!({"score": 6}),
        json!({"score": "3"}),
        json!({"score": 2.5}),
        json!({}),
    ] {
        post(bad).await.assert_error(400, "invalid_score");
    }
    post(json!({"score": 3, "date": "05/01/2026"}))
        .await
        .assert_error(400, "invalid_date_range");
    post(json!({"score": 3, "date": "2999-01-01"}))
        .await
        .assert_error(400, "params_validation_error");
    app.get_with_key("/v1/mood/track/?date=yesterday", &key)
        .await
        .assert_error(400, "invalid_date_range");

    // Another person's day is their own.
    let member = app.create_user(&org, "member").await;
    let (_, member_key) = app
        .create_key(&session, json!({"name": "m", "for_user_id": member}))
        .await;
    assert_eq!(
        app.get_with_key("/v1/mood/track/", &member_key).await.body["motivation"],
        Value::Null
    );
    let r = app
        .send(
            "POST",
            "/v1/mood/track/",
            &[("X-API-KEY", &member_key)],
            Some(json!({"score": 1})),
        )
        .await;
    assert_eq!(r.status, 200);
}

#[actix_web::test]
async fn important_dates_come_from_profiles() {
    let app = TestApp::spawn().await;
    let (org, admin, session, key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let (_, member_key) = app
        .create_key(&session, json!({"name": "m", "for_user_id": member}))
        .await;
    assert_eq!(
        app.get_with_key("/v1/important-date/", &key).await.body,
        json!([])
    );

    let r = app
        .send(
            "PATCH",
            &format!("/v1/users/{member}/"),
            &[("X-API-KEY", &member_key)],
            Some(json!({"birth_date": "12-31", "work_anniversary": "2020-06-15"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = app.get_with_key("/v1/important-date/", &key).await;
    let dates = r.body.as_array().unwrap();
    assert_eq!(dates.len(), 2, "{}", r.text);
    let kinds: Vec<&str> = dates
        .iter()
        .map(|d| d["important_date_type"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"birthday") && kinds.contains(&"work_anniversary"));
    let birthday = dates
        .iter()
        .find(|d| d["important_date_type"] == "birthday")
        .unwrap();
    assert!(birthday["start_date"].as_str().unwrap().ends_with("-12-31"));
    assert_eq!(birthday["user"]["uuid"], member.as_str());
    let anniversary = dates
        .iter()
        .find(|d| d["important_date_type"] == "work_anniversary")
        .unwrap();
    assert!(anniversary["metadata"]["years"].as_i64().unwrap() >= 6);
    // Soonest first.
    assert!(dates[0]["start_date"].as_str() <= dates[1]["start_date"].as_str());

    let id = birthday["uuid"].as_str().unwrap();
    let r = app
        .get_with_key(&format!("/v1/important-date/{id}/"), &key)
        .await;
    assert_eq!((r.status, r.body["name"].as_str()), (200, Some("Birthday")));
    let r = app
        .get_with_key(&format!("/v1/important-date/?uuid={admin}"), &key)
        .await;
    assert_eq!(r.body, json!([]));
    let r = app
        .get_with_key(&format!("/v1/important-date/?uuid={member}"), &key)
        .await;
    assert_eq!(r.body.as_array().unwrap().len(), 2);
    app.get_with_key("/v1/important-date/?uuid=nope", &key)
        .await
        .assert_error(400, "invalid_user_identifier");

    // Other organizations see none of it.
    let (_, _, _, other_key) = app.org_with_admin_key("business").await;
    assert_eq!(
        app.get_with_key("/v1/important-date/", &other_key)
            .await
            .body,
        json!([])
    );
    app.get_with_key(&format!("/v1/important-date/{id}/"), &other_key)
        .await
        .assert_error(404, "not_found");
    app.get_with_key(&format!("/v1/important-date/?uuid={member}"), &other_key)
        .await
        .assert_error(404, "not_found");
}
