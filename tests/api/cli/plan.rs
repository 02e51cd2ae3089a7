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

/// The rows of a list the CLI prints: a bare array or a page's `results` (wire contract §4.0).
#[track_caller]
fn rows(list: &Value) -> &Vec<Value> {
    list.as_array()
        .or_else(|| list["results"].as_array())
        .unwrap_or_else(|| panic!("a list or a page: {list}"))
}

/// How many tasks `plan task list --board board` lists.
async fn task_count(app: &TestApp, key: &str, board: &str) -> usize {
    let listed = plan_ok(app, key, &["task", "list", "--board", board]).await;
    rows(&listed).len()
}

/// An items file for `plan task bulk -f`, in a directory of its own removed when dropped.
struct ItemsFile {
    dir: std::path::PathBuf,
    path: String,
}

impl ItemsFile {
    fn new() -> ItemsFile {
        let dir = std::env::temp_dir().join(format!("teamcomm-items-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("items.json");
        let path = path.to_str().expect("utf-8 path").to_owned();
        ItemsFile { dir, path }
    }

    /// Writes `items` as the file's JSON.
    fn write(&self, items: Value) {
        std::fs::write(&self.path, items.to_string()).expect("items file");
    }
}

impl Drop for ItemsFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
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

/// A new app with a Plan organization ([`plan_org`]) and a board keyed `board_key` made with
/// the CLI ([`project_and_board`]): (app, member key, board uuid).
async fn app_with_board(board_key: &str) -> (TestApp, String, String) {
    let app = TestApp::spawn().await;
    let (_, _, key) = plan_org(&app).await;
    let board = project_and_board(&app, &key, board_key).await;
    (app, key, board)
}

#[actix_web::test]
async fn plan_board_and_column_commands() {
    let (app, member_key, board) = app_with_board("ENG").await;

    let got = plan_ok(&app, &member_key, &["board", "get", "ENG"]).await;
    assert_eq!(
        (&got["uuid"], &got["name"]),
        (&json!(board), &json!("Engineering"))
    );
    let listed = plan_ok(&app, &member_key, &["board", "list"]).await;
    assert!(listed.to_string().contains(&board), "{listed}");

    // The default columns, left to right; a new one inserted second.
    let states = plan_ok(&app, &member_key, &["board", "states", "ENG"]).await;
    let columns = |v: &Value| -> Vec<(String, String)> {
        rows(v)
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    s["category"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(columns(&states).len(), 5, "{states}");
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
        columns(&states)[1],
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
        columns(&plan_ok(&app, &member_key, &["board", "states", "ENG"]).await).len(),
        6
    );
    plan_ok(
        &app,
        &member_key,
        &["board", "state", "archive", "ENG", &review_id, "--yes"],
    )
    .await;
    assert_eq!(
        columns(&plan_ok(&app, &member_key, &["board", "states", "ENG"]).await).len(),
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
    let (app, key, _) = app_with_board("ENG").await;

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
    assert_eq!(task_count(&app, &key, "ENG").await, 2);

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
    let bodies: Vec<&str> = rows(&comments)
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
    let relations = rows(&relations).clone();
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
    let (app, key, _) = app_with_board("OPS").await;

    let items = ItemsFile::new();
    items.write(json!([{"title": "One"}, {"title": "Two"}, {"title": "Three"}]));
    let file = items.path.as_str();

    // A dry run lists the changes and creates nothing.
    let create = [
        "task",
        "bulk",
        "--operation",
        "create",
        "--board",
        "OPS",
        "-f",
        file,
    ];
    let preview = plan_ok(&app, &key, &[&create[..], &["--dry-run"]].concat()).await;
    assert_eq!(preview["dry_run"], true, "{preview}");
    assert_eq!(
        preview["items"].as_array().map(Vec::len),
        Some(3),
        "{preview}"
    );
    assert_eq!(task_count(&app, &key, "OPS").await, 0);

    // Applied (after its own preview), then retried with the same key: replayed, not repeated.
    let args = [
        &create[..],
        &["--yes", "--idempotency-key", "bulk-create-ops-1"],
    ]
    .concat();
    let applied = plan_ok(&app, &key, &args).await;
    let results = applied["results"].as_array().expect("results");
    assert!(results.iter().all(|r| r["status"] == "ok"), "{applied}");
    plan_ok(&app, &key, &args).await;
    assert_eq!(task_count(&app, &key, "OPS").await, 3);

    // One operation over every task: archived together.
    items.write(json!([{"task": "OPS-1"}, {"task": "OPS-2"}, {"task": "OPS-404"}]));
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
            file,
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
}

#[actix_web::test]
async fn plan_task_bulk_sets_and_refuses_parents() {
    let (app, key, _) = app_with_board("SUB").await;
    for title in ["Parent", "Child"] {
        plan_ok(
            &app,
            &key,
            &["task", "create", "--board", "SUB", "--title", title],
        )
        .await;
    }
    let items = ItemsFile::new();
    // `set_parent` over the items file, with `--dry-run` or `--yes`.
    let bulk = |how: &'static str| {
        let (app, key, file) = (&app, &key, items.path.as_str());
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
    items.write(json!([{"task": "SUB-1", "parent": "SUB-1"}]));
    let preview = bulk("--dry-run").await;
    assert_eq!(preview.code, 1, "{preview:#?}");
    assert_eq!(
        preview.json()["refused"][0]["code"],
        "invalid_relation",
        "{preview:#?}"
    );

    // Previewed, then applied.
    items.write(json!([{"task": "SUB-2", "parent": "SUB-1"}]));
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
}

/// The cells after the group's name in the table `plan tasks board` prints without `--json`
/// (Column, Category, Tasks), in the row of the group named `name` (printed quoted, as the CLI
/// prints text from the server).
#[track_caller]
fn table_row(run: &Run, name: &str) -> Vec<String> {
    assert_eq!(run.code, EXIT_OK, "exit code: {run:#?}");
    let quoted = format!("\"{name}\"");
    run.stdout
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('│').map(str::trim).collect();
            let inner = cells.get(1..cells.len().checked_sub(1)?)?;
            (inner.first() == Some(&quoted.as_str()))
                .then(|| inner[1..].iter().map(|c| (*c).to_owned()).collect())
        })
        .next()
        .unwrap_or_else(|| panic!("no row {quoted} in {run:#?}"))
}

/// Each group of a `plan tasks board --json` document: (key, name, its cards' keys, task_count).
#[track_caller]
fn groups(view: &Value) -> Vec<(String, String, Vec<String>, u64)> {
    view["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("groups in {view}"))
        .iter()
        .map(|g| {
            let cards = g["tasks"].as_array().unwrap_or_else(|| panic!("{g}"));
            (
                g["key"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{g}"))
                    .to_owned(),
                g["name"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{g}"))
                    .to_owned(),
                cards
                    .iter()
                    .map(|t| t["key"].as_str().unwrap().to_owned())
                    .collect(),
                g["task_count"].as_u64().unwrap_or_else(|| panic!("{g}")),
            )
        })
        .collect()
}

/// One expected group: (key, name, card keys, their count).
fn group(key: &str, name: &str, cards: &[&str]) -> (String, String, Vec<String>, u64) {
    let cards: Vec<String> = cards.iter().map(|c| (*c).to_owned()).collect();
    let n = cards.len() as u64;
    (key.to_owned(), name.to_owned(), cards, n)
}

/// `plan tasks board` (`GET tasks/board/`) over tasks in several columns of two boards: the
/// table of groups with their counts, and under `--json` the grouped document with its cards,
/// by every `--group-by` the CLI offers, laned (`--sub-group-by`, `none` too), narrowed by its
/// filters, and a cell's next window (`--tasks-per-group`, `--group`, `--offset`).
#[actix_web::test]
async fn plan_tasks_board_groups_the_tasks() {
    let (app, key, eng) = app_with_board("ENG").await;
    let project = plan_ok(&app, &key, &["board", "get", "ENG"]).await["project"]["uuid"]
        .as_str()
        .expect("the board's project")
        .to_owned();
    let ops = plan_ok(
        &app,
        &key,
        &[
            "board",
            "create",
            "--name",
            "Operations",
            "--project",
            &project,
            "--key",
            "OPS",
        ],
    )
    .await["uuid"]
        .as_str()
        .expect("board uuid")
        .to_owned();
    // ENG-1 in progress, ENG-2 to do, ENG-3 done, OPS-1 to do.
    for (board, title, more) in [
        ("ENG", "Ship it", &["--priority", "1", "--owner", "me"][..]),
        ("ENG", "Write docs", &["--priority", "3"][..]),
        (
            "ENG",
            "Fix login",
            &["--priority", "1", "--owner", "me"][..],
        ),
        ("OPS", "Rotate keys", &[][..]),
    ] {
        let mut args = vec!["task", "create", "--board", board, "--title", title];
        args.extend_from_slice(more);
        plan_ok(&app, &key, &args).await;
    }
    for (task, column) in [("ENG-1", "In Progress"), ("ENG-3", "Done")] {
        plan_ok(&app, &key, &["task", "move", task, "--state", column]).await;
    }
    let first = plan_ok(&app, &key, &["task", "get", "ENG-1"]).await;
    let (me, my_name) = (
        first["owner"]["uuid"].as_str().expect("owner").to_owned(),
        first["owner"]["name"]
            .as_str()
            .expect("owner name")
            .to_owned(),
    );
    let in_progress = first["state"]["uuid"].as_str().expect("state").to_owned();
    let label = plan_ok(&app, &key, &["label", "create", "--name", "Backend"]).await;
    let backend = label["uuid"].as_str().expect("label uuid").to_owned();
    for task in ["ENG-1", "OPS-1"] {
        plan_ok(
            &app,
            &key,
            &["task", "labels", task, "--mode", "add", "--label", &backend],
        )
        .await;
    }
    // `plan tasks board --json` (cards by creation) with these arguments.
    let view = |args: &[&str]| {
        let mut all = vec!["tasks", "board", "--sort", "created_at"];
        all.extend_from_slice(args);
        let all: Vec<String> = all.into_iter().map(str::to_owned).collect();
        let (app, key) = (&app, &key);
        async move {
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            plan_ok(app, key, &all).await
        }
    };

    // The table: a row a group, with its category and its count.
    let table = dailybot(
        &app,
        &key_env(&key),
        &[
            "plan",
            "tasks",
            "board",
            "--group-by",
            "state",
            "--board",
            "ENG",
        ],
    )
    .await;
    assert!(table.stdout.contains("Board snapshot — ENG"), "{table:#?}");
    for (name, category, count) in [
        ("Todo", "todo", "1"),
        ("In Progress", "in_progress", "1"),
        ("Done", "done", "1"),
    ] {
        assert_eq!(table_row(&table, name), [category, count]);
    }
    let table = dailybot(
        &app,
        &key_env(&key),
        &["plan", "tasks", "board", "--group-by", "label"],
    )
    .await;
    assert_eq!(table_row(&table, "Backend"), ["", "2"]);
    assert_eq!(table_row(&table, "No label"), ["", "2"]);

    // The document, by every dimension the CLI offers.
    let by = |dimension: &'static str| view(&["--group-by", dimension]);
    let g = view(&[]).await;
    assert_eq!(
        (&g["total"], &g["group_by"], &g["sub_group_by"]),
        (&json!(4), &json!("category"), &Value::Null),
        "{g}"
    );
    assert_eq!(
        groups(&g),
        [
            group("todo", "todo", &["ENG-2", "OPS-1"]),
            group("in_progress", "in_progress", &["ENG-1"]),
            group("done", "done", &["ENG-3"]),
        ],
        "{g}"
    );
    assert_eq!(g["groups"][1]["category"], "in_progress", "{g}");
    assert_eq!(g["groups"][1]["tasks"][0]["title"], "Ship it", "{g}");
    let g = by("category").await;
    assert_eq!(
        (&g["group_by"], g["groups"].as_array().map(Vec::len)),
        (&json!("category"), Some(3))
    );
    let g = by("state").await;
    let mut columns: Vec<(String, Vec<String>)> = groups(&g)
        .into_iter()
        .map(|(_, name, cards, _)| (name, cards))
        .collect();
    columns.sort();
    assert_eq!(
        columns,
        [
            ("Done".into(), vec!["ENG-3".to_owned()]),
            ("In Progress".into(), vec!["ENG-1".to_owned()]),
            ("Todo".into(), vec!["ENG-2".to_owned()]),
            ("Todo".into(), vec!["OPS-1".to_owned()]),
        ],
        "{g}"
    );
    assert_eq!(g["group_by"], "state");
    assert_eq!(
        groups(&by("owner").await),
        [
            group(&me, &my_name, &["ENG-1", "ENG-3"]),
            group("none", "No owner", &["ENG-2", "OPS-1"]),
        ]
    );
    assert_eq!(
        groups(&by("priority").await),
        [
            group("1", "P1", &["ENG-1", "ENG-3"]),
            group("3", "P3", &["ENG-2"]),
            group("none", "No priority", &["OPS-1"]),
        ]
    );
    assert_eq!(
        groups(&by("project").await),
        [group(
            &project,
            "Launch",
            &["ENG-1", "ENG-2", "ENG-3", "OPS-1"]
        )]
    );
    assert_eq!(
        groups(&by("board").await),
        [
            group(&eng, "Engineering", &["ENG-1", "ENG-2", "ENG-3"]),
            group(&ops, "Operations", &["OPS-1"]),
        ]
    );
    assert_eq!(
        groups(&by("milestone").await),
        [group(
            "none",
            "No milestone",
            &["ENG-1", "ENG-2", "ENG-3", "OPS-1"]
        )]
    );
    let g = by("label").await;
    assert_eq!(
        groups(&g),
        [
            group(&backend, "Backend", &["ENG-1", "OPS-1"]),
            group("none", "No label", &["ENG-2", "ENG-3"]),
        ]
    );
    assert_eq!(g["total"], 4, "a task is counted once: {g}");

    // Lanes: a laned group's cards are in its lanes; `none` is no lanes.
    let g = view(&["--group-by", "priority", "--sub-group-by", "owner"]).await;
    assert_eq!(g["sub_group_by"], "owner", "{g}");
    let p1 = &g["groups"][0];
    assert_eq!((&p1["key"], &p1["tasks"]), (&json!("1"), &json!([])), "{g}");
    assert_eq!(
        groups(&json!({"groups": p1["lanes"]})),
        [group(&me, &my_name, &["ENG-1", "ENG-3"])]
    );
    let g = view(&["--group-by", "priority", "--sub-group-by", "none"]).await;
    assert_eq!(g["sub_group_by"], Value::Null, "{g}");
    assert!(g["groups"][0].get("lanes").is_none(), "{g}");

    // The filters the CLI sends.
    for (args, cards) in [
        (
            vec!["--board", "ENG", "--priority", "1"],
            vec!["ENG-1", "ENG-3"],
        ),
        (vec!["--board", &ops], vec!["OPS-1"]),
        (
            vec!["--project", &project, "--owner", "me"],
            vec!["ENG-1", "ENG-3"],
        ),
        (vec!["--owner", "unowned"], vec!["ENG-2", "OPS-1"]),
        (vec!["--label", &backend], vec!["ENG-1", "OPS-1"]),
        (vec!["--state", &in_progress], vec!["ENG-1"]),
        (vec!["-q", "login"], vec!["ENG-3"]),
    ] {
        let mut all = vec!["--group-by", "project"];
        all.extend_from_slice(&args);
        let g = view(&all).await;
        assert_eq!(groups(&g), [group(&project, "Launch", &cards)], "{args:?}");
        assert_eq!(g["total"], cards.len(), "{args:?}");
    }
    let g = view(&["--board", "ENG"]).await;
    assert_eq!(g["board"]["key"], "ENG", "{g}");

    // A cell's window, then its next one; the table counts what is left.
    let g = view(&["--tasks-per-group", "1"]).await;
    let todo = &g["groups"][0];
    assert_eq!(
        (
            &todo["key"],
            &todo["task_count"],
            &todo["has_more"],
            &todo["next_offset"]
        ),
        (&json!("todo"), &json!(2), &json!(true), &json!(1)),
        "{g}"
    );
    assert_eq!(todo["tasks"][0]["key"], "ENG-2", "{g}");
    let g = view(&["--tasks-per-group", "1", "--group", "todo", "--offset", "1"]).await;
    assert_eq!(groups(&g).len(), 1, "{g}");
    let todo = &g["groups"][0];
    assert_eq!(
        (&todo["tasks"][0]["key"], &todo["has_more"]),
        (&json!("OPS-1"), &json!(false)),
        "{g}"
    );
    let table = dailybot(
        &app,
        &key_env(&key),
        &["plan", "tasks", "board", "--tasks-per-group", "1"],
    )
    .await;
    assert_eq!(table_row(&table, "todo"), ["todo", "2 (+1 more)"]);
}
