//! `dailybot form …`: authoring (create from a questions file with workflow states, command,
//! permissions and channels; get; config and edit; questions add, edit, reorder, list, delete;
//! archive), listing (filters, owners) and responses (submit as a member, anonymously, as an
//! automation; list; get; update; transition by label; delete), with the exit codes the CLI
//! gives the forms' refusals.

use super::*;
use crate::forms::person;

/// A business organization with an admin (API key), four members with CLI tokens and a guest,
/// and the report channel `C1`.
struct Org {
    admin_key: String,
    ada: String,
    ada_token: String,
    bob: String,
    bob_token: String,
    cy: String,
    cy_token: String,
    guest_token: String,
}

async fn org(app: &TestApp) -> Org {
    let org = app.create_org("business").await;
    let admin = person(app, &org, "Adele", "Admin", "admin").await;
    let session = app.session(&admin).await;
    let admin_key = key_for(app, &session, &admin).await;
    let ada = person(app, &org, "Ada", "Lovelace", "member").await;
    let bob = person(app, &org, "Bob", "Stone", "member").await;
    let cy = person(app, &org, "Cy", "Young", "member").await;
    let guest = person(app, &org, "Gus", "Guest", "guest").await;
    add_channel(app, &org, "C1", "general").await;
    Org {
        ada_token: cli_token(app, &ada).await,
        bob_token: cli_token(app, &bob).await,
        cy_token: cli_token(app, &cy).await,
        guest_token: cli_token(app, &guest).await,
        admin_key,
        ada,
        bob,
        cy,
    }
}

/// `GET <path>` with the admin's key.
async fn api(app: &TestApp, o: &Org, path: &str) -> Value {
    let r = app.get_with_key(path, &o.admin_key).await;
    assert_eq!(r.status, 200, "{path}: {}", r.text);
    r.body
}

/// A questions file the CLI reads (`--questions-file`), removed with its directory on drop.
struct QuestionsFile(PathBuf);

impl QuestionsFile {
    fn new(questions: &Value) -> Self {
        let dir = std::env::temp_dir().join(format!("teamcomm-forms-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("questions.json"), questions.to_string()).expect("write");
        QuestionsFile(dir)
    }

    fn path(&self) -> String {
        self.0
            .join("questions.json")
            .to_str()
            .expect("utf-8 path")
            .to_owned()
    }
}

impl Drop for QuestionsFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn keys(form: &Value) -> Vec<String> {
    form["workflow"]["states"]
        .as_array()
        .expect("states")
        .iter()
        .map(|s| s["key"].as_str().unwrap().to_owned())
        .collect()
}

#[actix_web::test]
async fn forms_are_authored_listed_and_archived_through_the_cli() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let ada = token_env(&o.ada_token);
    let questions = QuestionsFile::new(&json!([
        {"question": "What shipped?", "question_type": "text", "short_question": "Shipped"},
        {"question": "Ship it?", "question_type": "boolean", "short_question": "Ship", "required": false},
    ]));
    let file = questions.path();
    let one = QuestionsFile::new(
        &json!([{"question": "Why?", "question_type": "text", "short_question": "Why"}]),
    );
    let created = dailybot(
        &app,
        &ada,
        &[
            "form",
            "create",
            "-n",
            "Release train",
            "--questions-file",
            &file,
            "--state",
            "Draft:#cccccc",
            "--state",
            "QA:#3498db",
            "--state",
            "Done:#2ecc71",
            "--command",
            "release",
            "--can-edit",
            "restricted",
            "--can-edit-user",
            "Bob Stone",
            "--report-channel",
            "C1",
            "--public",
            "--json",
        ],
    )
    .await
    .ok_json();
    let uuid = created["uuid"].as_str().expect("uuid").to_owned();
    assert_eq!(created["name"], "Release train");
    assert_eq!(
        created["public_url"],
        format!("https://app.teamcomm.test/forms/{uuid}/")
    );
    assert_eq!(keys(&created), ["draft", "qa", "done"]);
    assert_eq!(created["command"], "release");
    assert_eq!(created["who_can_edit"]["user_uuids"], json!([o.bob]));
    assert_eq!(created["allow_public_responses"], true);
    assert_eq!(created["report_channels"][0]["name"], "general");
    let stored = api(&app, &o, &format!("/v1/forms/{uuid}/")).await;
    assert_eq!(stored["owner"]["uuid"], o.ada);
    assert_eq!(stored["questions"].as_array().unwrap().len(), 2);

    // get: JSON is the API's document; the human panel shows workflow, command and channels.
    let got = dailybot(&app, &ada, &["form", "get", &uuid, "--json"])
        .await
        .ok_json();
    assert_eq!(
        got,
        api_as(&app, &o.ada_token, &format!("/v1/forms/{uuid}/")).await
    );
    let run = dailybot(&app, &ada, &["form", "get", &uuid]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    for needle in [
        "Release train",
        "draft",
        "QA",
        "@dailybot release",
        "#general",
        "What shipped?",
    ] {
        assert!(run.stdout.contains(needle), "{needle:?} missing: {run:#?}");
    }

    // config and edit: what is passed changes; a member who may not edit gets exit 4.
    let bob = token_env(&o.bob_token);
    let changed = dailybot(
        &app,
        &bob,
        &[
            "form",
            "config",
            &uuid,
            "--inactive",
            "--no-command",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(
        (
            changed["is_active"].clone(),
            changed["command_enabled"].clone()
        ),
        (json!(false), json!(false))
    );
    let renamed = dailybot(
        &app,
        &ada,
        &["form", "edit", &uuid, "--name", "Release trains", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(renamed["name"], "Release trains");
    assert_eq!(
        api(&app, &o, &format!("/v1/forms/{uuid}/")).await["name"],
        "Release trains"
    );
    let cy = token_env(&o.cy_token);
    dailybot(
        &app,
        &cy,
        &["form", "edit", &uuid, "--name", "Mine", "--json"],
    )
    .await
    .assert_api_error(EXIT_PERMISSION, 403, Some("form_edit_forbidden"));

    // questions: add, edit, reorder, list, delete.
    let added = dailybot(
        &app,
        &ada,
        &[
            "form",
            "questions",
            "add",
            &uuid,
            "--type",
            "multiple_choice",
            "--question",
            "Rating?",
            "--options",
            "Good,Bad",
            "--ai-short-question",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(
        (added["index"].clone(), added["short_question"].clone()),
        (json!(2), json!("Rating"))
    );
    let q3 = added["uuid"].as_str().unwrap().to_owned();
    let edited = dailybot(
        &app,
        &ada,
        &[
            "form",
            "questions",
            "edit",
            &uuid,
            &q3,
            "--question",
            "Your rating?",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(edited["question"], "Your rating?");
    let ids: Vec<String> = stored["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["uuid"].as_str().unwrap().to_owned())
        .collect();
    let reordered = dailybot(
        &app,
        &ada,
        &[
            "form",
            "questions",
            "reorder",
            &uuid,
            &q3,
            &ids[0],
            &ids[1],
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(reordered["reordered"], true);
    let listed = dailybot(&app, &ada, &["form", "questions", "list", &uuid, "--json"])
        .await
        .ok_json();
    let order: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["uuid"].as_str().unwrap())
        .collect();
    assert_eq!(order, [q3.as_str(), ids[0].as_str(), ids[1].as_str()]);
    dailybot(
        &app,
        &ada,
        &[
            "form",
            "questions",
            "delete",
            &uuid,
            &ids[1],
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(
        api(&app, &o, &format!("/v1/forms/{uuid}/")).await["questions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    dailybot(
        &app,
        &ada,
        &["form", "questions", "reorder", &uuid, &q3, "--json"],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("question_uuids_incomplete"));

    // list: filters, owners by name, and the table.
    let other = dailybot(
        &app,
        &bob,
        &[
            "form",
            "create",
            "-n",
            "Applications",
            "--questions-file",
            &one.path(),
            "--public",
            "--json",
        ],
    )
    .await
    .ok_json();
    let rows = dailybot(
        &app,
        &cy,
        &["form", "list", "--json", "--include-questions"],
    )
    .await
    .ok_json();
    assert_eq!(
        uuids(&rows),
        [uuid.clone(), other["uuid"].as_str().unwrap().to_owned()]
            .into_iter()
            .collect()
    );
    assert_eq!(row(&rows, &uuid)["questions"].as_array().unwrap().len(), 2);
    let mine = dailybot(
        &app,
        &cy,
        &["form", "list", "--owner", "Ada Lovelace", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(uuids(&mine), [uuid.clone()].into_iter().collect());
    let workflow = dailybot(
        &app,
        &cy,
        &[
            "form",
            "list",
            "--filter",
            "workflow",
            "--order",
            "alphabetical",
            "--asc",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(uuids(&workflow), [uuid.clone()].into_iter().collect());
    let run = dailybot(&app, &cy, &["form", "list"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Release trains") && run.stdout.contains("Applications"),
        "{run:#?}"
    );
    let owners = dailybot(&app, &cy, &["form", "owners", "--json"])
        .await
        .ok_json();
    let names: Vec<&str> = owners
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["full_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Ada Lovelace", "Bob Stone"]);
    assert_eq!(owners[0]["uuid"], o.ada);
    assert_eq!(owners[0]["role"], "member");

    // A guest creates nothing; archiving hides the form from the default list.
    dailybot(
        &app,
        &token_env(&o.guest_token),
        &[
            "form",
            "create",
            "-n",
            "Nope",
            "--questions-file",
            &one.path(),
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_PERMISSION, 403, Some("guest_not_allowed"));
    let archived = dailybot(&app, &ada, &["form", "archive", &uuid, "--yes", "--json"])
        .await
        .ok_json();
    assert_eq!(archived, json!({"archived": true, "form_uuid": uuid}));
    assert_eq!(
        api(&app, &o, &format!("/v1/forms/{uuid}/")).await["is_archived"],
        true
    );
    let rows = dailybot(&app, &cy, &["form", "list", "--json"])
        .await
        .ok_json();
    assert!(!uuids(&rows).contains(&uuid));
    let rows = dailybot(&app, &cy, &["form", "list", "--include-archived", "--json"])
        .await
        .ok_json();
    assert!(uuids(&rows).contains(&uuid));
    dailybot(
        &app,
        &ada,
        &["form", "get", &Uuid::new_v4().to_string(), "--json"],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
}

/// `GET <path>` with a CLI token.
async fn api_as(app: &TestApp, token: &str, path: &str) -> Value {
    let auth = format!("Bearer {token}");
    let r = app
        .send("GET", path, &[("Authorization", &auth)], None)
        .await;
    assert_eq!(r.status, 200, "{path}: {}", r.text);
    r.body
}

#[actix_web::test]
async fn responses_are_submitted_moved_edited_and_deleted_through_the_cli() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let r = app
        .send(
            "POST",
            "/v1/forms/create/",
            &[("X-API-KEY", &o.admin_key)],
            Some(json!({
                "name": "Release",
                "questions": [
                    {"question": "What shipped?", "short_question": "Shipped"},
                    {"question": "Notes?", "short_question": "Notes", "required": false},
                ],
                "workflow": {"enabled": true, "states": [
                    {"label": "Draft", "color": "#cccccc"},
                    {"label": "QA", "color": "#3498db"},
                    {"label": "Done", "color": "#2ecc71"},
                ]},
                "who_can_see_responses": {"mode": "restricted", "user_uuids": [o.cy]},
                "who_can_change_states": {"mode": "restricted", "user_uuids": [o.cy]},
            })),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let form = r.body["uuid"].as_str().unwrap().to_owned();
    let q0 = r.body["questions"][0]["uuid"].as_str().unwrap().to_owned();
    let q1 = r.body["questions"][1]["uuid"].as_str().unwrap().to_owned();
    let (bob, cy) = (token_env(&o.bob_token), token_env(&o.cy_token));

    // submit: a member, with a provenance label.
    let content = json!({&q0: "v1.2 shipped"}).to_string();
    let sent = dailybot(
        &app,
        &bob,
        &[
            "form",
            "submit",
            &form,
            "--content",
            &content,
            "--source",
            "workflow:deploy",
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    let response = sent["uuid"].as_str().expect("response uuid").to_owned();
    assert_eq!(sent["current_state"], "draft");
    assert_eq!(sent["submission_label"], "workflow:deploy");
    assert_eq!(sent["user"]["uuid"], o.bob);
    let run = dailybot(
        &app,
        &bob,
        &[
            "form",
            "submit",
            &form,
            "--content",
            &content,
            "--anonymous",
            "--yes",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout
            .contains("Form response submitted for \"Release\""),
        "{run:#?}"
    );
    let bot = dailybot(
        &app,
        &cy,
        &[
            "form",
            "submit",
            &form,
            "--content",
            &content,
            "--automation",
            "--guest-name",
            "Release Bot",
            "--guest-email",
            "bot@example.com",
            "--source",
            "ci",
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(
        (bot["submission_source"].clone(), bot["user"].clone()),
        (json!("automation"), Value::Null)
    );
    assert_eq!(bot["guest_user"]["full_name"], "Release Bot");
    dailybot(
        &app,
        &bob,
        &[
            "form",
            "submit",
            &form,
            "--content",
            &json!({&q1: "only notes"}).to_string(),
            "--yes",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("params_validation_error"));

    // responses: the caller's own by default; everyone's for the audience.
    let own = dailybot(&app, &bob, &["form", "responses", &form, "--json"])
        .await
        .ok_json();
    assert_eq!(own.as_array().unwrap().len(), 2, "{own}");
    dailybot(&app, &bob, &["form", "responses", &form, "--all", "--json"])
        .await
        .assert_api_error(
            EXIT_PERMISSION,
            403,
            Some("form_response_view_all_forbidden"),
        );
    let all = dailybot(&app, &cy, &["form", "responses", &form, "--all", "--json"])
        .await
        .ok_json();
    assert_eq!(all.as_array().unwrap().len(), 3);
    let sources = dailybot(
        &app,
        &cy,
        &[
            "form",
            "responses",
            &form,
            "--all",
            "--source",
            "member,automation",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(sources.as_array().unwrap().len(), 2);
    let mine = dailybot(
        &app,
        &cy,
        &["form", "responses", &form, "--submitter", &o.bob, "--json"],
    )
    .await
    .ok_json();
    assert_eq!(
        uuids(&mine),
        [response.clone()].into_iter().collect(),
        "the anonymous one stays hidden"
    );
    dailybot(
        &app,
        &cy,
        &[
            "form",
            "responses",
            &form,
            "--all",
            "--state",
            "Draft",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("invalid_workflow_state"));
    let run = dailybot(&app, &cy, &["form", "responses", &form, "--all"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains(&response), "{run:#?}");

    // transition: by label (the CLI finds the key), with a note; the gate and the workflow's
    // refusals.
    dailybot(
        &app,
        &bob,
        &[
            "form",
            "transition",
            &form,
            &response,
            "qa",
            "--yes",
            "--json",
        ],
    )
    .await
    .assert_api_error(
        EXIT_PERMISSION,
        403,
        Some("form_response_change_state_forbidden"),
    );
    let moved = dailybot(
        &app,
        &cy,
        &[
            "form",
            "transition",
            &form,
            &response,
            "QA",
            "--note",
            "QA assigned",
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(moved["current_state"], "qa");
    assert_eq!(moved["state_history"][0]["actor_name"], "Cy Young");
    let in_qa = dailybot(
        &app,
        &cy,
        &[
            "form",
            "responses",
            &form,
            "--all",
            "--state",
            "qa",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(uuids(&in_qa), [response.clone()].into_iter().collect());
    dailybot(
        &app,
        &cy,
        &[
            "form",
            "transition",
            &form,
            &response,
            "Done",
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    dailybot(
        &app,
        &cy,
        &[
            "form",
            "transition",
            &form,
            &response,
            "Draft",
            "--yes",
            "--json",
        ],
    )
    .await
    .assert_api_error(1, 409, Some("final_state_locked"));
    let run = dailybot(&app, &cy, &["form", "response", "get", &form, &response]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    for needle in ["Cy Young", "QA assigned", "v1.2 shipped"] {
        assert!(run.stdout.contains(needle), "{needle:?} missing: {run:#?}");
    }
    let seen = dailybot(
        &app,
        &bob,
        &["form", "response", "get", &form, &response, "--json"],
    )
    .await
    .ok_json();
    assert_eq!(seen["current_state"], "done");
    assert_eq!(seen["state_history"].as_array().unwrap().len(), 2);
    assert_eq!(
        seen["state_history"][0]["actor_name"],
        Value::Null,
        "the submitter does not see who moved it"
    );

    // update: the submitter merges answers; others may not.
    let notes = json!({&q1: "with notes"}).to_string();
    let updated = dailybot(
        &app,
        &bob,
        &[
            "form",
            "update",
            &form,
            &response,
            "--content",
            &notes,
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(updated["edited"], true);
    assert_eq!(
        updated["content"],
        json!({&q0: "v1.2 shipped", &q1: "with notes"})
    );
    dailybot(
        &app,
        &cy,
        &[
            "form",
            "update",
            &form,
            &response,
            "--content",
            &notes,
            "--yes",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_PERMISSION, 403, Some("form_response_edit_forbidden"));

    // delete: not someone else's; one's own.
    dailybot(
        &app,
        &cy,
        &["form", "delete", &form, &response, "--yes", "--json"],
    )
    .await
    .assert_api_error(EXIT_PERMISSION, 403, Some("form_response_delete_forbidden"));
    let deleted = dailybot(
        &app,
        &bob,
        &["form", "delete", &form, &response, "--yes", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(
        deleted,
        json!({"deleted": true, "form_uuid": form, "response_uuid": response})
    );
    dailybot(
        &app,
        &bob,
        &["form", "response", "get", &form, &response, "--json"],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
    let left = api(&app, &o, &format!("/v1/forms/{form}/responses/?all=true")).await;
    assert_eq!(left["count"], 2);
}
