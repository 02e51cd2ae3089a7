//! `dailybot label …` and `dailybot featured …`.

use super::*;
use crate::labels::seed_assignment;

/// The CLI's exit code for an API failure it has no specific one for (409 among them).
const EXIT_FAILURE: i32 = 1;

/// A business organization: (org, admin key, member key, guest key).
async fn org(app: &TestApp) -> (String, String, String, String) {
    let (org, _, session, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let guest = app.create_user(&org, "guest").await;
    let member_key = key_for(app, &session, &member).await;
    let guest_key = key_for(app, &session, &guest).await;
    (org, admin_key, member_key, guest_key)
}

#[actix_web::test]
async fn label_commands_create_list_change_archive_and_delete() {
    let app = TestApp::spawn().await;
    let (_, admin_key, member_key, _) = org(&app).await;
    let member = key_env(&member_key);

    let e = dailybot(&app, &member, &["label", "entitlement", "--json"])
        .await
        .ok_json();
    assert_eq!(
        e,
        json!({"entitled": true, "can_create": true, "can_manage_all": false, "can_hard_delete": false, "is_guest": false})
    );

    let created = dailybot(
        &app,
        &member,
        &[
            "label",
            "create",
            "--name",
            "Urgent",
            "--color",
            "#4a90e2",
            "--description",
            "Act now",
            "--json",
        ],
    )
    .await
    .ok_json();
    let id = created["uuid"].as_str().expect("uuid").to_owned();
    assert_eq!(
        (&created["name"], &created["color"], &created["description"]),
        (&json!("Urgent"), &json!("#4A90E2"), &json!("Act now"))
    );
    dailybot(
        &app,
        &member,
        &["label", "create", "--name", "Later", "--json"],
    )
    .await
    .ok_json();

    // The envelope is printed verbatim; the CLI always sends limit, offset and is_archived.
    let list = dailybot(&app, &member, &["label", "list", "--json"])
        .await
        .ok_json();
    assert_eq!(list["count"], 2, "{list}");
    assert_eq!(list["results"][0]["name"], "Later");
    let urgent = row(&list["results"], &id);
    assert_eq!(urgent["usage"], json!({"total": 0}));
    assert_eq!(urgent["is_archived"], false);
    let run = dailybot(&app, &member, &["label", "list"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    for needle in ["Urgent", "Later", id.as_str(), "#4A90E2", "2 total"] {
        assert!(run.stdout.contains(needle), "{needle:?} missing: {run:#?}");
    }

    let got = dailybot(&app, &member, &["label", "get", &id, "--json"])
        .await
        .ok_json();
    assert_eq!(got, *urgent);
    let changed = dailybot(
        &app,
        &member,
        &[
            "label",
            "update",
            &id,
            "--name",
            "Very urgent",
            "--description",
            "",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(
        (&changed["name"], &changed["description"]),
        (&json!("Very urgent"), &json!(""))
    );
    let run = dailybot(&app, &member, &["label", "archive", &id]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Very urgent"), "{run:#?}");
    let archived = dailybot(&app, &member, &["label", "archive", &id, "--json"])
        .await
        .ok_json();
    assert_eq!(archived["is_archived"], true);

    let live = dailybot(&app, &member, &["label", "list", "--json"])
        .await
        .ok_json();
    assert_eq!(uuids(&live["results"]).len(), 1);
    let found = dailybot(
        &app,
        &member,
        &[
            "label",
            "list",
            "--archived",
            "--search",
            "URG",
            "--limit",
            "5",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(uuids(&found["results"]), BTreeSet::from([id.clone()]));

    // Deleting is the admins' (the CLI needs the 204).
    let deleted = dailybot(
        &app,
        &key_env(&admin_key),
        &["label", "delete", &id, "--yes", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(deleted, json!({"deleted": true, "uuid": id}));
    dailybot(&app, &member, &["label", "get", &id, "--json"])
        .await
        .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
}

#[actix_web::test]
async fn label_command_refusals_keep_their_codes() {
    let app = TestApp::spawn().await;
    let (org, admin_key, member_key, guest_key) = org(&app).await;
    let member = key_env(&member_key);
    let created = dailybot(
        &app,
        &member,
        &["label", "create", "--name", "Busy", "--json"],
    )
    .await
    .ok_json();
    let id = created["uuid"].as_str().unwrap().to_owned();

    dailybot(
        &app,
        &member,
        &["label", "create", "--name", "BUSY", "--json"],
    )
    .await
    .assert_api_error(EXIT_FAILURE, 409, Some("duplicate_name"));
    dailybot(
        &app,
        &key_env(&guest_key),
        &["label", "create", "--name", "Guest", "--json"],
    )
    .await
    .assert_api_error(EXIT_PERMISSION, 403, Some("guest_not_allowed"));
    dailybot(&app, &member, &["label", "delete", &id, "--yes", "--json"])
        .await
        .assert_api_error(EXIT_PERMISSION, 403, Some("permission_denied"));
    dailybot(
        &app,
        &member,
        &[
            "label", "create", "--name", "Bad", "--color", "red", "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("params_validation_error"));

    seed_assignment(&app, &org, &id).await;
    dailybot(
        &app,
        &key_env(&admin_key),
        &["label", "delete", &id, "--yes", "--json"],
    )
    .await
    .assert_api_error(EXIT_FAILURE, 409, Some("label_in_use"));
    let kept = dailybot(&app, &member, &["label", "get", &id, "--json"])
        .await
        .ok_json();
    assert_eq!(kept["usage"], json!({"total": 1}));
    let list = dailybot(&app, &member, &["label", "list", "--json"])
        .await
        .ok_json();
    assert_eq!(list["count"], 1);
}

#[actix_web::test]
async fn labelling_and_featured_commands_reach_their_doors() {
    let app = TestApp::spawn().await;
    let (_, _, member_key, _) = org(&app).await;
    let member = key_env(&member_key);
    let label = dailybot(&app, &member, &["label", "create", "--name", "A", "--json"])
        .await
        .ok_json();
    let id = label["uuid"].as_str().unwrap().to_owned();
    let (w1, w2) = (Uuid::now_v7().to_string(), Uuid::now_v7().to_string());

    // Workflows have no table yet, so every workflow is not found (`automations` is the
    // CLI's alias of `workflows` in labelling paths).
    dailybot(
        &app,
        &member,
        &[
            "label",
            "assign",
            &w1,
            "--type",
            "automations",
            "--label",
            &id,
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
    dailybot(
        &app,
        &member,
        &[
            "label",
            "batch",
            "--type",
            "workflows",
            "--uuids",
            &format!("{w1},{w2}"),
            "--label",
            &id,
            "--mode",
            "remove",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));

    for kind in ["forms", "automations", "checkins"] {
        let list = dailybot(
            &app,
            &member,
            &["featured", "list", "--entity-type", kind, "--json"],
        )
        .await
        .ok_json();
        assert_eq!(list, json!({"entity_type": kind, "entity_uuids": []}));
    }
    let run = dailybot(
        &app,
        &member,
        &["featured", "list", "--entity-type", "forms"],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Featured forms"), "{run:#?}");
    dailybot(
        &app,
        &member,
        &[
            "featured",
            "set",
            "--entity-type",
            "automations",
            &w1,
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
    dailybot(
        &app,
        &member,
        &[
            "featured",
            "batch",
            "--entity-type",
            "automations",
            "--uuids",
            &w2,
            "--unfeatured",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
}

/// A form made through the API by the owner of `key`; answers its uuid.
async fn form(app: &TestApp, key: &str, name: &str) -> String {
    let body = json!({
        "name": name,
        "questions": [{"question": "What shipped?", "short_question": "Shipped"}],
    });
    let r = app
        .send(
            "POST",
            "/v1/forms/create/",
            &[("X-API-KEY", key)],
            Some(body),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn label_assign_batch_and_featured_commands_on_forms() {
    let app = TestApp::spawn().await;
    let (_, admin_key, member_key, _) = org(&app).await;
    let member = key_env(&member_key);
    let (f1, f2) = (
        form(&app, &admin_key, "Release").await,
        form(&app, &admin_key, "Retro").await,
    );
    let mut ids = Vec::new();
    for name in ["Urgent", "Later"] {
        let l = dailybot(
            &app,
            &member,
            &["label", "create", "--name", name, "--json"],
        )
        .await
        .ok_json();
        ids.push(l["uuid"].as_str().unwrap().to_owned());
    }
    let (urgent, later) = (&ids[0], &ids[1]);

    let assigned = dailybot(
        &app,
        &member,
        &[
            "label",
            "assign",
            &f1,
            "--type",
            "forms",
            "--label",
            &format!("{urgent},{later}"),
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(assigned["uuid"], f1.as_str(), "{assigned}");
    assert_eq!(
        uuids(&assigned["labels"]),
        BTreeSet::from([urgent.clone(), later.clone()])
    );
    // Human output names the labels now on the form.
    let run = dailybot(
        &app,
        &member,
        &["label", "assign", &f1, "--type", "forms", "--label", later],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Later") && !run.stdout.contains("Urgent"),
        "{run:#?}"
    );

    let batch = dailybot(
        &app,
        &member,
        &[
            "label",
            "batch",
            "--type",
            "forms",
            "--uuids",
            &format!("{f1},{f2}"),
            "--label",
            urgent,
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(batch, json!({"updated_count": 2}));
    let got = dailybot(&app, &member, &["label", "get", urgent, "--json"])
        .await
        .ok_json();
    assert_eq!(got["usage"], json!({"total": 2}));
    let cleared = dailybot(
        &app,
        &member,
        &[
            "label", "assign", &f2, "--type", "forms", "--clear", "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(cleared, json!({"uuid": f2, "labels": []}));

    // Archived labels are not newly assignable.
    dailybot(&app, &member, &["label", "archive", later, "--json"])
        .await
        .ok_json();
    dailybot(
        &app,
        &member,
        &[
            "label", "assign", &f2, "--type", "forms", "--label", later, "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("archived_label_not_assignable"));

    // Stars.
    let set = dailybot(
        &app,
        &member,
        &["featured", "set", "--entity-type", "forms", &f2, "--json"],
    )
    .await
    .ok_json();
    assert_eq!(
        set,
        json!({"entity_type": "forms", "uuid": f2, "is_featured": true})
    );
    let batch = dailybot(
        &app,
        &member,
        &[
            "featured",
            "batch",
            "--entity-type",
            "forms",
            "--uuids",
            &format!("{f1},{f2}"),
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(batch, json!({"updated_entity_uuids": [f1]}));
    let list = dailybot(
        &app,
        &member,
        &["featured", "list", "--entity-type", "forms", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(
        list,
        json!({"entity_type": "forms", "entity_uuids": [f2, f1]})
    );
    let run = dailybot(
        &app,
        &member,
        &[
            "featured",
            "set",
            "--entity-type",
            "forms",
            &f2,
            "--unfeatured",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("unfeatured"), "{run:#?}");
    let run = dailybot(
        &app,
        &member,
        &["featured", "list", "--entity-type", "forms"],
    )
    .await;
    assert!(
        run.stdout.contains(&f1) && !run.stdout.contains(&f2),
        "{run:#?}"
    );
}
