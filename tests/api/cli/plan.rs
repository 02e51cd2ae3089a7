//! `dailybot plan …`: boards, columns, tasks, comments, relations, labels and bulk through the
//! real CLI, with its dry runs (always previewed first) and idempotent retries.

use super::*;

/// The CLI's exit codes for Plan refusals (wire contract §5).
const EXIT_PLAN_REFUSED: i32 = 4;

/// A paid organization with the Plan beta: (admin key, member key).
async fn plan_org(app: &TestApp) -> (String, String, String) {
    let (org, _, session, admin_key) = app.org_with_admin_key("business").await;
    let r = app
        .operator(
            "PATCH",
            &format!("/operator/v1/organizations/{org}/"),
            Some(json!({"plan_beta": true})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let member = app.create_user(&org, "member").await;
    let member_key = key_for(app, &session, &member).await;
    (org, admin_key, member_key)
}

/// A Plan refusal as the CLI prints it under `--json`: exit 4, `{status: "error", code, …}`.
#[track_caller]
fn assert_plan_refused(run: &Run, code: &str) {
    assert_eq!(run.code, EXIT_PLAN_REFUSED, "exit code: {run:#?}");
    let body = run.json();
    assert_eq!(
        (&body["status"], &body["code"]),
        (&json!("error"), &json!(code)),
        "{run:#?}"
    );
}

/// Runs a Plan command as `key` and returns its `--json` output.
async fn plan_ok(app: &TestApp, key: &str, args: &[&str]) -> Value {
    let mut all = vec!["plan"];
    all.extend_from_slice(args);
    all.push("--json");
    dailybot(app, &key_env(key), &all).await.ok_json()
}

/// A project and a board keyed `key` on it, made with the CLI: the board's uuid.
async fn project_and_board(app: &TestApp, key: &str, board_key: &str) -> String {
    let project = plan_ok(app, key, &["project", "create", "--name", "Launch"]).await;
    let project = project["uuid"].as_str().expect("project uuid").to_owned();
    let board = plan_ok(
        app,
        key,
        &[
            "board",
            "create",
            "--name",
            "Engineering",
            "--project",
            &project,
            "--key",
            board_key,
        ],
    )
    .await;
    assert_eq!(board["key"], board_key, "{board}");
    board["uuid"].as_str().expect("board uuid").to_owned()
}

#[actix_web::test]
async fn plan_board_and_column_commands() {
    let app = TestApp::spawn().await;
    let (_, _, member_key) = plan_org(&app).await;
    let board = project_and_board(&app, &member_key, "ENG").await;

    let got = plan_ok(&app, &member_key, &["board", "get", "ENG"]).await;
    assert_eq!(
        (&got["uuid"], &got["name"]),
        (&json!(board), &json!("Engineering"))
    );
    let listed = plan_ok(&app, &member_key, &["board", "list"]).await;
    assert!(listed.to_string().contains(&board), "{listed}");

    // The default columns, left to right; a new one inserted second.
    let states = plan_ok(&app, &member_key, &["board", "states", "ENG"]).await;
    let rows = |v: &Value| -> Vec<(String, String)> {
        let rows = v
            .as_array()
            .or_else(|| v["results"].as_array())
            .expect("state rows");
        rows.iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    s["category"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(rows(&states).len(), 5, "{states}");
    let review = plan_ok(
        &app,
        &member_key,
        &[
            "board",
            "state",
            "create",
            "ENG",
            "--name",
            "Review",
            "--category",
            "in_progress",
            "--position",
            "2",
        ],
    )
    .await;
    let review_id = review["uuid"].as_str().expect("state uuid").to_owned();
    let states = plan_ok(&app, &member_key, &["board", "states", "ENG"]).await;
    assert_eq!(
        rows(&states)[1],
        ("Review".to_owned(), "in_progress".to_owned())
    );

    // Retiring a column: the CLI previews first, then archives; a dry run alone changes nothing.
    let preview = plan_ok(
        &app,
        &member_key,
        &["board", "state", "archive", "ENG", &review_id, "--dry-run"],
    )
    .await;
    assert_eq!(preview["dry_run"], true, "{preview}");
    assert_eq!(
        rows(&plan_ok(&app, &member_key, &["board", "states", "ENG"]).await).len(),
        6
    );
    plan_ok(
        &app,
        &member_key,
        &["board", "state", "archive", "ENG", &review_id, "--yes"],
    )
    .await;
    assert_eq!(
        rows(&plan_ok(&app, &member_key, &["board", "states", "ENG"]).await).len(),
        5
    );

    // Archiving the board: previewed, then done; restored.
    let archived = plan_ok(&app, &member_key, &["board", "archive", "ENG", "--yes"]).await;
    assert_ne!(archived["dry_run"], true, "{archived}");
    let got = plan_ok(&app, &member_key, &["board", "get", &board]).await;
    assert_eq!(got["is_archived"], true, "{got}");
    plan_ok(&app, &member_key, &["board", "restore", &board]).await;
    let got = plan_ok(&app, &member_key, &["board", "get", &board]).await;
    assert_eq!(got["is_archived"], false, "{got}");
}

#[actix_web::test]
async fn plan_commands_meet_the_beta_gate() {
    let app = TestApp::spawn().await;
    let (_, _, session, key) = app.org_with_admin_key("business").await;
    let _ = session;
    let run = dailybot(&app, &key_env(&key), &["plan", "board", "list", "--json"]).await;
    assert_plan_refused(&run, "plan_upgrade_required");
    // The entitlements are always readable.
    let e = plan_ok(&app, &key, &["tasks", "entitlements"]).await;
    assert_eq!(e["enabled"], false, "{e}");
}

#[actix_web::test]
async fn plan_task_comment_relation_and_label_commands() {
    let app = TestApp::spawn().await;
    let (_, _, key) = plan_org(&app).await;
    project_and_board(&app, &key, "ENG").await;

    // Created twice with one idempotency key: one task, the second answer a replay.
    let args = [
        "task",
        "create",
        "--board",
        "ENG",
        "--title",
        "Ship it",
        "--priority",
        "2",
        "--idempotency-key",
        "retry-ship-it-1",
    ];
    let first = plan_ok(&app, &key, &args).await;
    let again = plan_ok(&app, &key, &args).await;
    assert_eq!(first["key"], "ENG-1", "{first}");
    assert_eq!(again["uuid"], first["uuid"], "{again}");
    assert_eq!(
        (
            &first["_idempotency_replayed"],
            &again["_idempotency_replayed"]
        ),
        (&json!(false), &json!(true))
    );
    let second = plan_ok(
        &app,
        &key,
        &["task", "create", "--board", "ENG", "--title", "Write docs"],
    )
    .await;
    assert_eq!(second["key"], "ENG-2", "{second}");
    let listed = plan_ok(&app, &key, &["task", "list", "--board", "ENG"]).await;
    let rows = listed
        .as_array()
        .or_else(|| listed["results"].as_array())
        .expect("task rows");
    assert_eq!(rows.len(), 2, "{listed}");

    // Changed, moved by column name, read back.
    plan_ok(
        &app,
        &key,
        &[
            "task",
            "update",
            "ENG-1",
            "--title",
            "Ship it now",
            "--estimate",
            "3",
        ],
    )
    .await;
    plan_ok(
        &app,
        &key,
        &["task", "move", "ENG-1", "--state", "In Progress"],
    )
    .await;
    let got = plan_ok(&app, &key, &["task", "get", "ENG-1"]).await;
    assert_eq!(got["title"], "Ship it now", "{got}");
    assert_eq!(got["estimate"], 3, "{got}");
    assert_eq!(got["state"]["name"], "In Progress", "{got}");

    // A comment and a reply; the thread reads back in order.
    let comment = plan_ok(&app, &key, &["task", "comment", "ENG-1", "Looks good"]).await;
    let comment_id = comment["uuid"].as_str().expect("comment uuid").to_owned();
    plan_ok(
        &app,
        &key,
        &[
            "task",
            "comment",
            "ENG-1",
            "Agreed",
            "--reply-to",
            &comment_id,
        ],
    )
    .await;
    let comments = plan_ok(&app, &key, &["task", "comments", "ENG-1"]).await;
    let bodies: Vec<&str> = comments
        .as_array()
        .or_else(|| comments["results"].as_array())
        .expect("comment rows")
        .iter()
        .map(|c| c["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, ["Looks good", "Agreed"], "{comments}");

    // ENG-1 blocks ENG-2; seen from both sides.
    plan_ok(
        &app,
        &key,
        &["task", "link", "ENG-1", "ENG-2", "--type", "blocks"],
    )
    .await;
    let relations = plan_ok(&app, &key, &["task", "relations", "ENG-2"]).await;
    let relations = relations
        .as_array()
        .or_else(|| relations["results"].as_array())
        .expect("relation rows")
        .clone();
    assert_eq!(relations.len(), 1, "{relations:?}");
    assert_eq!(
        (&relations[0]["relation_type"], &relations[0]["direction"]),
        (&json!("blocks"), &json!("incoming"))
    );
    assert_eq!(relations[0]["other_task"]["key"], "ENG-1");
    // A cycle of blocks is refused.
    let run = dailybot(
        &app,
        &key_env(&key),
        &[
            "plan", "task", "link", "ENG-2", "ENG-1", "--type", "blocks", "--json",
        ],
    )
    .await;
    assert_ne!(run.code, EXIT_OK, "{run:#?}");
    assert_eq!(run.json()["code"], "relation_cycle", "{run:#?}");

    // An organization label made from Plan, put on the task.
    let label = plan_ok(
        &app,
        &key,
        &["label", "create", "--name", "Backend", "--color", "#ef4444"],
    )
    .await;
    let label_id = label["uuid"].as_str().expect("label uuid").to_owned();
    let labelled = plan_ok(
        &app,
        &key,
        &[
            "task", "labels", "ENG-1", "--mode", "add", "--label", &label_id,
        ],
    )
    .await;
    assert_eq!(labelled["labels"][0]["uuid"], json!(label_id), "{labelled}");

    // Archived after the preview the CLI always asks for; a dry run alone changes nothing.
    let preview = plan_ok(&app, &key, &["task", "archive", "ENG-2", "--dry-run"]).await;
    assert_eq!(preview["dry_run"], true, "{preview}");
    assert_eq!(
        plan_ok(&app, &key, &["task", "get", "ENG-2"]).await["is_archived"],
        false
    );
    plan_ok(&app, &key, &["task", "archive", "ENG-2", "--yes"]).await;
    assert_eq!(
        plan_ok(&app, &key, &["task", "get", "ENG-2"]).await["is_archived"],
        true
    );
    plan_ok(&app, &key, &["task", "restore", "ENG-2"]).await;
    assert_eq!(
        plan_ok(&app, &key, &["task", "get", "ENG-2"]).await["is_archived"],
        false
    );
}

#[actix_web::test]
async fn plan_task_bulk_previews_then_applies() {
    let app = TestApp::spawn().await;
    let (_, _, key) = plan_org(&app).await;
    project_and_board(&app, &key, "OPS").await;

    let dir = std::env::temp_dir().join(format!("teamcomm-bulk-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("items.json");
    std::fs::write(
        &file,
        json!([{"title": "One"}, {"title": "Two"}, {"title": "Three"}]).to_string(),
    )
    .expect("items file");
    let file = file.to_str().expect("utf-8 path").to_owned();

    // A dry run lists the changes and creates nothing.
    let preview = plan_ok(
        &app,
        &key,
        &[
            "task",
            "bulk",
            "--operation",
            "create",
            "--board",
            "OPS",
            "-f",
            &file,
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(preview["dry_run"], true, "{preview}");
    assert_eq!(
        preview["items"].as_array().map(Vec::len),
        Some(3),
        "{preview}"
    );
    let listed = plan_ok(&app, &key, &["task", "list", "--board", "OPS"]).await;
    assert_eq!(
        listed
            .as_array()
            .or_else(|| listed["results"].as_array())
            .map(Vec::len),
        Some(0),
        "{listed}"
    );

    // Applied (after its own preview), then retried with the same key: replayed, not repeated.
    let args = [
        "task",
        "bulk",
        "--operation",
        "create",
        "--board",
        "OPS",
        "-f",
        &file,
        "--yes",
        "--idempotency-key",
        "bulk-create-ops-1",
    ];
    let applied = plan_ok(&app, &key, &args).await;
    let results = applied["results"].as_array().expect("results");
    assert!(results.iter().all(|r| r["status"] == "ok"), "{applied}");
    plan_ok(&app, &key, &args).await;
    let listed = plan_ok(&app, &key, &["task", "list", "--board", "OPS"]).await;
    assert_eq!(
        listed
            .as_array()
            .or_else(|| listed["results"].as_array())
            .map(Vec::len),
        Some(3),
        "{listed}"
    );

    // One operation over every task: archived together.
    std::fs::write(
        &file,
        json!([{"task": "OPS-1"}, {"task": "OPS-2"}, {"task": "OPS-404"}]).to_string(),
    )
    .expect("items file");
    let run = dailybot(
        &app,
        &key_env(&key),
        &[
            "plan",
            "task",
            "bulk",
            "--operation",
            "archive",
            "-f",
            &file,
            "--yes",
            "--json",
        ],
    )
    .await;
    // Each item is its own write: the two real tasks are archived, OPS-404 is that item's
    // `not_found`, and the CLI exits 1 for the error row.
    assert_eq!(run.code, 1, "{run:#?}");
    let results = run.json()["results"].as_array().expect("results").clone();
    let statuses: Vec<(&str, Option<&str>)> = results
        .iter()
        .map(|r| (r["status"].as_str().unwrap(), r["code"].as_str()))
        .collect();
    assert_eq!(
        statuses,
        [("ok", None), ("ok", None), ("error", Some("not_found"))]
    );
    for task in ["OPS-1", "OPS-2"] {
        let got = plan_ok(&app, &key, &["task", "get", task]).await;
        assert_eq!(got["is_archived"], true, "{got}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[actix_web::test]
async fn plan_task_bulk_sets_and_refuses_parents() {
    let app = TestApp::spawn().await;
    let (_, _, key) = plan_org(&app).await;
    project_and_board(&app, &key, "SUB").await;
    for title in ["Parent", "Child"] {
        plan_ok(
            &app,
            &key,
            &["task", "create", "--board", "SUB", "--title", title],
        )
        .await;
    }
    let dir = std::env::temp_dir().join(format!("teamcomm-parent-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("items.json");
    let file_arg = file.to_str().expect("utf-8 path").to_owned();
    // `set_parent` over the items file, with `--dry-run` or `--yes`.
    let bulk = |how: &'static str| {
        let (app, key, file) = (&app, &key, file_arg.as_str());
        async move {
            let args = [
                "plan",
                "task",
                "bulk",
                "--operation",
                "set_parent",
                "-f",
                file,
                "--json",
                how,
            ];
            dailybot(app, &key_env(key), &args).await
        }
    };

    // A parent of its own is refused by the preview (exit 1).
    std::fs::write(
        &file,
        json!([{"task": "SUB-1", "parent": "SUB-1"}]).to_string(),
    )
    .expect("items file");
    let preview = bulk("--dry-run").await;
    assert_eq!(preview.code, 1, "{preview:#?}");
    assert_eq!(
        preview.json()["refused"][0]["code"],
        "invalid_relation",
        "{preview:#?}"
    );

    // Previewed, then applied.
    std::fs::write(
        &file,
        json!([{"task": "SUB-2", "parent": "SUB-1"}]).to_string(),
    )
    .expect("items file");
    let preview = bulk("--dry-run").await.ok_json();
    assert_eq!(
        preview["items"][0]["changes"]["parent"],
        json!({"from": null, "to": "SUB-1"}),
        "{preview}"
    );
    let applied = bulk("--yes").await.ok_json();
    assert_eq!(applied["results"][0]["status"], "ok", "{applied}");
    let child = plan_ok(&app, &key, &["task", "get", "SUB-2"]).await;
    assert_eq!(child["parent"]["key"], "SUB-1", "{child}");
    let _ = std::fs::remove_dir_all(&dir);
}
