//! `dailybot checkin …`: authoring (create with schedule, team, questions file, channels and
//! config flags; show; config; questions add, edit, reorder, delete; archive) and responding
//! (status, history, edit, reset), and how the CLI reports the check-in codes. `checkin
//! complete` and `checkin list` read `GET /v1/cli/status/`, which the CLI helpers area serves.

use super::*;

/// A business organization: an admin (API key), the manager of "Eng" (`max`) and a member of
/// it (`ada`) with CLI tokens, and `bob`, in no team, with a CLI token.
struct Org {
    admin_key: String,
    max: String,
    max_token: String,
    ada: String,
    ada_token: String,
    bob_token: String,
}

async fn person(app: &TestApp, org: &str, first: &str, role: &str) -> String {
    let email = format!(
        "{}.{}@example.com",
        first.to_lowercase(),
        Uuid::new_v4().simple()
    );
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": email, "first_name": first, "last_name": "Test", "role": role})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

async fn org(app: &TestApp) -> Org {
    let org = app.create_org("business").await;
    let admin = person(app, &org, "Adele", "admin").await;
    let session = app.session(&admin).await;
    let admin_key = key_for(app, &session, &admin).await;
    let max = person(app, &org, "Max", "member").await;
    let ada = person(app, &org, "Ada", "member").await;
    let bob = person(app, &org, "Bob", "member").await;
    let eng = create_team(app, &admin_key, "Eng").await;
    for member in [&max, &ada] {
        add_member(app, &admin_key, &eng, member).await;
    }
    let r = app
        .send(
            "PATCH",
            &format!("/v1/teams/{eng}/members/{max}/"),
            &[("X-API-KEY", &admin_key)],
            Some(json!({"role": "manager"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    add_channel(app, &org, "C1", "standups").await;
    Org {
        max_token: cli_token(app, &max).await,
        ada_token: cli_token(app, &ada).await,
        bob_token: cli_token(app, &bob).await,
        admin_key,
        max,
        ada,
    }
}

/// The check-in as its admin reads it over the API.
async fn stored(app: &TestApp, o: &Org, id: &str) -> Value {
    let r = app
        .get_with_key(&format!("/v1/checkins/{id}/detail/"), &o.admin_key)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

/// A questions file for `--questions-file` (absolute path; the CLI runs elsewhere).
fn questions_file(questions: Value) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("teamcomm-q-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("questions.json");
    std::fs::write(&path, questions.to_string()).expect("questions file");
    let shown = path.display().to_string();
    (dir, shown)
}

fn texts(questions: &Value) -> Vec<String> {
    questions
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| q["question"].as_str().unwrap().to_owned())
        .collect()
}

#[actix_web::test]
async fn a_check_in_is_authored_end_to_end() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let admin = key_env(&o.admin_key);
    let (dir, file) = questions_file(json!([
        {"question_type": "text", "question": "What did you do?", "short_question": "Done"},
        {"question_type": "multiple_choice", "question": "How was it?", "options": ["Good", "Bad"], "short_question": "Mood", "required": false},
    ]));
    let created = dailybot(
        &app,
        &admin,
        &[
            "checkin",
            "create",
            "-n",
            "Daily standup",
            "--time",
            "09:30",
            "--days",
            "1,2,3,4,5",
            "--timezone",
            "America/New_York",
            "--team",
            "Eng",
            "--questions-file",
            &file,
            "--report-channel",
            "C1",
            "--reminders",
            "2",
            "--reminder-interval",
            "15",
            "--no-past",
            "--privacy",
            "everyone",
            "--every",
            "2",
            "--frequency",
            "weekly",
            "--json",
        ],
    )
    .await
    .ok_json();
    let _ = std::fs::remove_dir_all(dir);
    let id = created["uuid"].as_str().expect("uuid").to_owned();
    let stored_now = stored(&app, &o, &id).await;
    assert_eq!(stored_now["name"], "Daily standup");
    assert_eq!(
        stored_now["schedule"],
        json!({"days": [1, 2, 3, 4, 5], "time": "09:30", "timezone": "America/New_York"})
    );
    assert_eq!(stored_now["participants"]["teams"][0]["name"], "Eng");
    assert_eq!(stored_now["report_channels"][0]["id"], "C1");
    assert_eq!(
        (
            stored_now["reminders_max_count"].clone(),
            stored_now["reminders_frequency_time"].clone(),
            stored_now["allow_past_responses"].clone(),
            stored_now["privacy"].clone(),
            stored_now["frequency"].clone(),
        ),
        (
            json!(2),
            json!(15),
            json!(false),
            json!("everyone"),
            json!(2)
        )
    );
    assert_eq!(
        texts(&stored_now["questions"]),
        ["What did you do?", "How was it?"]
    );

    // show, as the CLI renders it and as JSON.
    let shown = dailybot(&app, &admin, &["checkin", "show", &id, "--json"])
        .await
        .ok_json();
    assert_eq!(shown["uuid"], id);
    assert_eq!(shown["questions"][1]["choices"][0]["label"], "Good");
    let table = dailybot(&app, &admin, &["checkin", "show", &id]).await;
    assert_eq!(table.code, EXIT_OK, "{table:#?}");
    assert!(table.stdout.contains("Daily standup"), "{table:#?}");

    // config: a partial update.
    let changed = dailybot(
        &app,
        &admin,
        &[
            "checkin",
            "config",
            &id,
            "--time",
            "10:15",
            "--allow-past",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(changed["schedule"]["time"], "10:15");
    let after = stored(&app, &o, &id).await;
    assert_eq!(after["schedule"]["days"], json!([1, 2, 3, 4, 5]));
    assert_eq!(after["allow_past_responses"], true);
    dailybot(
        &app,
        &admin,
        &[
            "checkin",
            "config",
            &id,
            "--timezone",
            "Mars/Base",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("invalid_schedule"));
    assert_eq!(
        stored(&app, &o, &id).await["schedule"]["timezone"],
        "America/New_York"
    );

    // questions add, edit, reorder, delete.
    let added = dailybot(
        &app,
        &admin,
        &[
            "checkin",
            "questions",
            "add",
            &id,
            "--type",
            "boolean",
            "--question",
            "Are you blocked?",
            "--blocker",
            "--ai-short-question",
            "--json",
        ],
    )
    .await
    .ok_json();
    let q3 = added["uuid"].as_str().expect("question uuid").to_owned();
    assert_eq!(added["is_blocker"], true);
    let q1 = after["questions"][0]["uuid"].as_str().unwrap().to_owned();
    let q2 = after["questions"][1]["uuid"].as_str().unwrap().to_owned();
    let edited = dailybot(
        &app,
        &admin,
        &[
            "checkin",
            "questions",
            "edit",
            &id,
            &q1,
            "--question",
            "What did you ship?",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(edited["question"], "What did you ship?");
    let reordered = dailybot(
        &app,
        &admin,
        &[
            "checkin",
            "questions",
            "reorder",
            &id,
            &q3,
            &q1,
            &q2,
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(reordered["reordered"], true);
    dailybot(
        &app,
        &admin,
        &["checkin", "questions", "reorder", &id, &q3, &q1, "--json"],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("question_uuids_incomplete"));
    dailybot(
        &app,
        &admin,
        &[
            "checkin",
            "questions",
            "delete",
            &id,
            &q2,
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(
        texts(&stored(&app, &o, &id).await["questions"]),
        ["Are you blocked?", "What did you ship?"]
    );

    // archive.
    let archived = dailybot(
        &app,
        &admin,
        &["checkin", "archive", &id, "--yes", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(archived["archived"], true);
    assert_eq!(stored(&app, &o, &id).await["is_archived"], true);
}

#[actix_web::test]
async fn the_cli_reports_who_may_author() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let (dir, file) = questions_file(json!([
        {"question_type": "text", "question": "What did you do?", "short_question": "Done"},
    ]));
    let create = |name: &'static str, who: &'static str| {
        vec![
            "checkin",
            "create",
            "-n",
            name,
            "--user",
            who,
            "--questions-file",
            file.as_str(),
            "--json",
        ]
    };
    // A member is refused by role; the team's manager asks a member of the team.
    dailybot(&app, &token_env(&o.ada_token), &create("Mine", "Ada Test"))
        .await
        .assert_api_error(EXIT_PERMISSION, 403, Some("checkin_permission_denied"));
    let made = dailybot(&app, &token_env(&o.max_token), &create("Eng's", "Ada Test"))
        .await
        .ok_json();
    let _ = std::fs::remove_dir_all(dir);
    let id = made["uuid"].as_str().unwrap().to_owned();
    assert_eq!(stored(&app, &o, &id).await["created_by"], o.max);
    // The author changes it; a participant who did not author it may not.
    dailybot(
        &app,
        &token_env(&o.max_token),
        &["checkin", "config", &id, "--name", "Eng daily", "--json"],
    )
    .await
    .ok_json();
    dailybot(
        &app,
        &token_env(&o.ada_token),
        &["checkin", "config", &id, "--name", "Ada's", "--json"],
    )
    .await
    .assert_api_error(EXIT_PERMISSION, 403, Some("checkin_permission_denied"));
    // Someone who does not take part does not see it.
    dailybot(
        &app,
        &token_env(&o.bob_token),
        &["checkin", "show", &id, "--json"],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
    assert_eq!(stored(&app, &o, &id).await["name"], "Eng daily");
}

#[actix_web::test]
async fn responses_are_read_edited_and_reset_through_the_cli() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let mut body = json!({
        "name": "Standup",
        "schedule": {"days": [0, 1, 2, 3, 4, 5, 6], "time": "00:00", "timezone": "UTC"},
        "participants": {"user_uuids": [o.ada, o.max]},
        "questions": [
            {"question": "What did you do?", "short_question": "Done"},
            {"question": "Blocked?", "question_type": "boolean", "short_question": "Blocked"},
        ],
    });
    let r = app
        .send(
            "POST",
            "/v1/checkins/create/",
            &[("X-API-KEY", &o.admin_key)],
            Some(body.take()),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let checkin = r.body;
    let id = checkin["uuid"].as_str().unwrap().to_owned();
    let q = |i: usize| checkin["questions"][i]["uuid"].clone();
    for (token, text) in [
        (&o.ada_token, "Shipped the CLI"),
        (&o.max_token, "Reviewed"),
    ] {
        let r = app
            .send(
                "POST",
                &format!("/v1/checkins/{id}/responses/"),
                &[("Authorization", &format!("Bearer {token}"))],
                Some(json!({"responses": [{"uuid": q(0), "index": 0, "response": text}, {"uuid": q(1), "index": 1, "response": false}]})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let ada = token_env(&o.ada_token);

    // status: the caller's completion for today.
    let status = dailybot(&app, &ada, &["checkin", "status", "--json"])
        .await
        .ok_json();
    let row = row(&status["checkins"], &id);
    assert_eq!(row["response_completed"], true);
    assert_eq!(row["summary"]["completed_responses"], 2);

    // history: a member reads their own; the admin anyone's, narrowed by --user.
    let mine = dailybot(&app, &ada, &["checkin", "history", &id, "--json"])
        .await
        .ok_json();
    assert_eq!(mine["count"], 1);
    assert_eq!(
        mine["responses"][0]["responses"][0]["response"],
        "Shipped the CLI"
    );
    let admin = key_env(&o.admin_key);
    let all = dailybot(
        &app,
        &admin,
        &["checkin", "history", &id, "--days", "1", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(all["count"], 2);
    let maxs = dailybot(
        &app,
        &admin,
        &["checkin", "history", &id, "--user", &o.max, "--json"],
    )
    .await
    .ok_json();
    assert_eq!(maxs["responses"][0]["user"]["uuid"], o.max);
    let found = dailybot(
        &app,
        &admin,
        &["checkin", "history", &id, "--search", "cli", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(found["count"], 1);

    // edit: today's answers, overridden by index.
    let edited = dailybot(
        &app,
        &ada,
        &[
            "checkin",
            "edit",
            &id,
            "-a",
            "0=Shipped it twice",
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(edited["responses"][0]["response"], "Shipped it twice");
    assert_eq!(edited["responses"][1]["response"], false, "kept");
    let mine = dailybot(&app, &ada, &["checkin", "history", &id, "--json"])
        .await
        .ok_json();
    assert_eq!(
        mine["responses"][0]["responses"][0]["response"],
        "Shipped it twice"
    );

    // reset: the caller's own response for the day.
    let reset = dailybot(&app, &ada, &["checkin", "reset", &id, "--yes", "--json"])
        .await
        .ok_json();
    assert_eq!(reset["deleted_count"], 1);
    let all = dailybot(&app, &admin, &["checkin", "history", &id, "--json"])
        .await
        .ok_json();
    assert_eq!(all["count"], 1);
    assert_eq!(all["responses"][0]["user"]["uuid"], o.max);
    // Nothing left to edit.
    let nothing = dailybot(
        &app,
        &ada,
        &["checkin", "edit", &id, "-a", "0=x", "--yes", "--json"],
    )
    .await;
    assert_eq!(nothing.code, EXIT_USAGE, "{nothing:#?}");

    // The response doors' own codes, as the CLI reports them.
    dailybot(
        &app,
        &token_env(&o.bob_token),
        &["checkin", "history", &id, "--json"],
    )
    .await
    .assert_api_error(EXIT_NOT_FOUND, 404, Some("not_found"));
    dailybot(
        &app,
        &ada,
        &["checkin", "reset", "not-a-uuid", "--yes", "--json"],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("not_valid_followup_uuid"));
    dailybot(
        &app,
        &ada,
        &[
            "checkin",
            "reset",
            &id,
            "--date",
            "yesterday",
            "--yes",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("invalid_date_range"));
    let r = app
        .send(
            "PATCH",
            &format!("/v1/checkins/{id}/config/"),
            &[("X-API-KEY", &o.admin_key)],
            Some(json!({"is_active": false})),
        )
        .await;
    assert_eq!(r.status, 200);
    dailybot(&app, &ada, &["checkin", "reset", &id, "--yes", "--json"])
        .await
        .assert_api_error(
            EXIT_USAGE,
            400,
            Some("responses_not_allowed_on_inactive_followup"),
        );
}
