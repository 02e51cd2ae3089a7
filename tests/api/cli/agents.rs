//! `dailybot agent update|health|message|register|webhook`: the real CLI's agent commands against the
//! agent doors — a report with structured data, metadata, a milestone and a co-author, and the
//! messages it shows; health checks and their history; messages sent, listed, claimed one by
//! one and all at once; a free-plan login session on the allow-list; and an agent registering
//! itself, then reporting with the key the CLI saved in its profile.

use super::*;

/// One number the database answers (`sql` selects a bigint).
async fn scalar(app: &TestApp, sql: &str) -> i64 {
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel_async::RunQueryDsl::get_result(
        diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(sql)),
        &mut conn,
    )
    .await
    .expect("scalar")
}

/// A person of `org` at a fresh address named Pat Doe; answers (uuid, address).
async fn pat(app: &TestApp, org: &str) -> (String, String) {
    let email = format!("pat-{}@example.com", Uuid::new_v4().simple());
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(
                json!({"email": email, "first_name": "Pat", "last_name": "Doe", "role": "member"}),
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    (r.body["uuid"].as_str().unwrap().to_owned(), email)
}

#[actix_web::test]
async fn agent_update_health_and_messages_through_the_real_cli() {
    let app = TestApp::spawn().await;
    let (org, _, _, key) = app.org_with_admin_key("business").await;
    let (_, pat_at) = pat(&app, &org).await;
    let env = key_env(&key);

    // A message from another agent, waiting for Claude Code.
    let run = dailybot(
        &app,
        &env,
        &[
            "agent",
            "message",
            "send",
            "--to",
            "Claude Code",
            "--content",
            "Review PR 42",
            "--type",
            "command",
            "--name",
            "CI Bot",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Message Sent") && run.stdout.contains("CI Bot"),
        "{run:#?}"
    );
    let message_id: String = {
        let mut conn = app.database.pool().get().await.expect("connection");
        #[derive(diesel::QueryableByName)]
        struct Id {
            #[diesel(sql_type = diesel::sql_types::Text)]
            id: String,
        }
        let rows: Vec<Id> = diesel_async::RunQueryDsl::load(
            diesel::sql_query(
                "SELECT id::text AS id FROM agent_messages WHERE agent_name = 'Claude Code' \
                 AND message_type = 'command' AND sender_type = 'agent' AND sender_name = 'CI Bot'",
            ),
            &mut conn,
        )
        .await
        .expect("message ids");
        assert_eq!(rows.len(), 1);
        rows.into_iter().next().unwrap().id
    };
    assert!(run.stdout.contains(&message_id), "{run:#?}");

    // The report, as the CLI sends it; the CLI shows its id, the milestone, the co-author and
    // the waiting message with the id to claim it by.
    let run = dailybot(
        &app,
        &env,
        &[
            "agent",
            "update",
            "Deployed v2.1 to staging",
            "--name",
            "Claude Code",
            "--milestone",
            "--json-data",
            r#"{"tests": 42}"#,
            "--metadata",
            r#"{"branch": "main"}"#,
            "--co-authors",
            &pat_at,
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Report submitted (id: "), "{run:#?}");
    assert!(run.stdout.contains("[Milestone]"), "{run:#?}");
    assert!(run.stdout.contains("Co-authors: Pat Doe"), "{run:#?}");
    assert!(
        run.stdout.contains(&format!("[id:{message_id}]")),
        "{run:#?}"
    );
    assert!(run.stdout.contains("Review PR 42"), "{run:#?}");
    assert_eq!(
        scalar(
            &app,
            &format!(
                "(SELECT count(*) FROM agent_reports WHERE organization_id = '{org}' \
                 AND agent_name = 'Claude Code' AND content = 'Deployed v2.1 to staging' \
                 AND is_milestone AND structured->>'tests' = '42' \
                 AND metadata->>'branch' = 'main' AND co_authors->0->>'name' = 'Pat Doe')"
            )
        )
        .await,
        1
    );

    // Listing the pending messages, then claiming the one by its id.
    let run = dailybot(
        &app,
        &env,
        &[
            "agent",
            "message",
            "list",
            "--name",
            "Claude Code",
            "--pending",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Review PR 42") && run.stdout.contains("CI Bot (agent)"),
        "{run:#?}"
    );
    let run = dailybot(&app, &env, &["agent", "message", "claim", &message_id]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Marked 1 message(s) as read."),
        "{run:#?}"
    );
    let run = dailybot(
        &app,
        &env,
        &[
            "agent",
            "message",
            "list",
            "--name",
            "Claude Code",
            "--pending",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("No messages found."), "{run:#?}");

    // Health: a check, a failing one, then the status with its history.
    let run = dailybot(
        &app,
        &env,
        &[
            "agent",
            "health",
            "--ok",
            "--message",
            "All good",
            "--name",
            "Claude Code",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("healthy"), "{run:#?}");
    let run = dailybot(
        &app,
        &env,
        &[
            "agent",
            "health",
            "--fail",
            "--message",
            "DB unreachable",
            "--name",
            "Claude Code",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    let run = dailybot(
        &app,
        &env,
        &["agent", "health", "--status", "--name", "Claude Code"],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    for shown in ["unhealthy", "Recent History", "DB unreachable", "All good"] {
        assert!(run.stdout.contains(shown), "{shown}: {run:#?}");
    }
    assert_eq!(
        scalar(
            &app,
            &format!("(SELECT count(*) FROM agent_health_checks WHERE organization_id = '{org}')")
        )
        .await,
        2
    );

    // claim-all is a health check: it delivers what waits.
    for content in ["one", "two"] {
        let run = dailybot(
            &app,
            &env,
            &[
                "agent",
                "message",
                "send",
                "--to",
                "Claude Code",
                "--content",
                content,
            ],
        )
        .await;
        assert_eq!(run.code, EXIT_OK, "{run:#?}");
    }
    let run = dailybot(
        &app,
        &env,
        &["agent", "message", "claim-all", "--name", "Claude Code"],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout
            .contains("All pending messages marked as delivered."),
        "{run:#?}"
    );
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_messages WHERE organization_id = '{org}' AND delivered_at IS NULL)")).await,
        0
    );

    // A refusal: the server's detail, exit 1.
    let run = dailybot(
        &app,
        &env,
        &[
            "agent",
            "update",
            "x",
            "--name",
            "Claude Code",
            "--co-authors",
            "nobody@example.org",
        ],
    )
    .await;
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("Invalid input."), "{run:#?}");
    assert_eq!(
        scalar(
            &app,
            &format!("(SELECT count(*) FROM agent_reports WHERE organization_id = '{org}')")
        )
        .await,
        1,
        "the refused report is not kept"
    );
}

#[actix_web::test]
async fn a_free_plan_login_session_reports_and_reads_its_messages() {
    let app = TestApp::spawn().await;
    let org = app.create_org("free").await;
    let user = app.create_user(&org, "member").await;
    let token = cli_token(&app, &user).await;
    let env = token_env(&token);
    let run = dailybot(
        &app,
        &env,
        &[
            "agent",
            "update",
            "Fixed the flaky test",
            "--name",
            "Claude Code",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Report submitted"), "{run:#?}");
    let run = dailybot(
        &app,
        &env,
        &["agent", "message", "list", "--name", "Claude Code"],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    let run = dailybot(
        &app,
        &env,
        &["agent", "health", "--status", "--name", "Claude Code"],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("unknown"), "{run:#?}");
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_reports WHERE organization_id = '{org}' AND created_by_id = '{user}')")).await,
        1
    );
}

#[actix_web::test]
async fn an_agent_registers_itself_and_reports_with_the_key_its_profile_keeps() {
    let app = TestApp::spawn().await;
    let dir = std::env::temp_dir().join(format!("teamcomm-cli-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let run = dailybot_in(
        &app,
        &dir,
        &[],
        &[
            "agent",
            "register",
            "--org-name",
            "Bots Inc",
            "--agent-name",
            "Claude Code",
            "--email",
            "me@example.com",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(
        run.stdout.contains("Agent Registered") && run.stdout.contains("Bots Inc"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("/agent/claim/tcx_"), "{run:#?}");
    let org: String = {
        let mut conn = app.database.pool().get().await.expect("connection");
        #[derive(diesel::QueryableByName)]
        struct Org {
            #[diesel(sql_type = diesel::sql_types::Text)]
            id: String,
        }
        let rows: Vec<Org> = diesel_async::RunQueryDsl::load(
            diesel::sql_query(
                "SELECT organization_id::text AS id FROM agent_registrations \
                 WHERE agent_name = 'Claude Code' AND contact_email = 'me@example.com'",
            ),
            &mut conn,
        )
        .await
        .expect("registrations");
        assert_eq!(rows.len(), 1);
        rows.into_iter().next().unwrap().id
    };

    // The saved profile's key reports into the new organization.
    let run = dailybot_in(
        &app,
        &dir,
        &[],
        &[
            "agent",
            "update",
            "Hello from a new agent",
            "--profile",
            "claude-code",
        ],
    )
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Report submitted"), "{run:#?}");
    assert_eq!(
        scalar(&app, &format!("(SELECT count(*) FROM agent_reports WHERE organization_id = '{org}' AND agent_name = 'Claude Code' AND created_by_id IS NULL)")).await,
        1
    );
}

/// `dailybot agent webhook register|unregister`, then a message left for the agent is pushed
/// to a real local receiver with the secret as `X-Webhook-Secret`; the secret is stored sealed;
/// another organization cannot remove it; once removed, nothing more is pushed.
#[actix_web::test]
async fn agent_webhooks_push_messages_with_their_secret() {
    use teamcomm_tests::receiver::{Answer, Receiver};

    let app = TestApp::builder()
        .var("TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS", "127.0.0.1")
        .spawn()
        .await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let (_, _, _, other_key) = app.org_with_admin_key("business").await;
    let receiver = Receiver::start(&[Answer::Status(503)]);
    let env = key_env(&key);
    let register = [
        "agent",
        "webhook",
        "register",
        "--url",
        &receiver.url(),
        "--secret",
        "s3cret-42",
        "--name",
        "Claude Code",
    ];
    let run = dailybot(&app, &env, &register).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains(&receiver.url()), "{run:#?}");
    let sealed = scalar(
        &app,
        "(SELECT count(*) FROM agent_webhooks WHERE agent_name = 'Claude Code' \
          AND secret_sealed IS NOT NULL AND position('s3cret-42'::bytea in secret_sealed) = 0)",
    )
    .await;
    assert_eq!(sealed, 1, "stored, and not in plaintext");

    // The guard: plain http elsewhere, or an internal address, is refused naming the field.
    let r = app
        .send(
            "POST",
            "/v1/agent-webhook/",
            &[("X-API-KEY", &key)],
            Some(json!({"agent_name": "Claude Code", "webhook_url": "https://10.1.2.3/hook"})),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(r.body["errors"]["webhook_url"].is_array(), "{}", r.text);

    // A message for the agent is pushed; the first answer (503) is retried.
    let sent = app
        .send(
            "POST",
            "/v1/agent-messages/",
            &[("X-API-KEY", &key)],
            Some(json!({"agent_name": "Claude Code", "content": "Review PR 42"})),
        )
        .await;
    assert!(sent.status == 201 || sent.status == 200, "{}", sent.text);
    let t0 = time::OffsetDateTime::now_utc() + time::Duration::minutes(1);
    let first = app.state.push_agent_messages_at(t0).await.unwrap();
    assert_eq!(first.retried, 1, "{first:?}");
    let second = app
        .state
        .push_agent_messages_at(t0 + time::Duration::hours(1))
        .await
        .unwrap();
    assert_eq!(second.pushed, 1, "{second:?}");
    let got = receiver.got();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].header("x-webhook-secret"), Some("s3cret-42"));
    let body = got[1].payload();
    assert_eq!(body["event"], "agent.message");
    assert_eq!(body["agent_name"], "Claude Code");
    assert_eq!(body["message"]["content"], "Review PR 42");
    assert_eq!(got[1].header("webhook-id"), body["message"]["id"].as_str());

    // Another organization's key cannot remove it.
    let r = app
        .send(
            "DELETE",
            "/v1/agent-webhook/",
            &[("X-API-KEY", &other_key)],
            Some(json!({"agent_name": "Claude Code"})),
        )
        .await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (404, Some("not_found")),
        "{}",
        r.text
    );

    let run = dailybot(
        &app,
        &env,
        &["agent", "webhook", "unregister", "--name", "Claude Code"],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    let left = scalar(&app, "(SELECT count(*) FROM agent_webhooks)").await;
    assert_eq!(left, 0);
    let later = app
        .send(
            "POST",
            "/v1/agent-messages/",
            &[("X-API-KEY", &key)],
            Some(json!({"agent_name": "Claude Code", "content": "Nobody pushes this"})),
        )
        .await;
    assert!(later.status < 300, "{}", later.text);
    let third = app
        .state
        .push_agent_messages_at(t0 + time::Duration::hours(2))
        .await
        .unwrap();
    assert_eq!(third.claimed, 0, "{third:?}");
    assert_eq!(receiver.got().len(), 2);
}
