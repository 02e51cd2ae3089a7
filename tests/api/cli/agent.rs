//! `dailybot agent email send`: an agent mails people of the organization through the real CLI,
//! with an API key and with a login session; addresses outside the organization are counted and
//! skipped; the e-mails queued are those the server's SMTP relay then sends.

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;

use super::*;

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct QueuedEmail {
    #[diesel(sql_type = Text)]
    to_address: String,
    #[diesel(sql_type = Text)]
    subject: String,
    #[diesel(sql_type = Text)]
    status: String,
}

async fn queued_emails(app: &TestApp, org: &str) -> Vec<QueuedEmail> {
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query(
        "SELECT to_address, subject, status FROM emails \
         WHERE organization_id::text = $1 ORDER BY created_at, to_address",
    )
    .bind::<Text, _>(org)
    .load(&mut conn)
    .await
    .expect("read e-mails")
}

/// A person of `org` at `email`; answers their uuid.
async fn person_at(app: &TestApp, org: &str, email: &str, role: &str) -> String {
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": email, "first_name": "Pat", "last_name": "Doe", "role": role})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn agent_email_send_through_the_real_cli() {
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let tag = Uuid::new_v4().simple().to_string();
    let (admin_at, mia_at, tom_at) = (
        format!("admin-{tag}@example.com"),
        format!("mia-{tag}@example.com"),
        format!("tom-{tag}@example.com"),
    );
    let admin = person_at(&app, &org, &admin_at, "admin").await;
    let mia = person_at(&app, &org, &mia_at, "member").await;
    person_at(&app, &org, &tom_at, "member").await;
    let session = app.session(&admin).await;
    let admin_key = key_for(&app, &session, &admin).await;

    // With the organization's API key: two people of the organization and a stranger.
    let stranger = format!("stranger-{tag}@example.org");
    let run = dailybot(
        &app,
        &key_env(&admin_key),
        &[
            "agent",
            "email",
            "send",
            "--name",
            "Build Bot",
            "--to",
            &mia_at,
            "--to",
            &tom_at,
            "--to",
            &stranger,
            "--subject",
            "Build passed",
            "--body-html",
            "<p>All green.</p>",
            "--metadata",
            r#"{"run": 42}"#,
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    // The CLI's own rendering of `sent_count` and `total_recipients`.
    assert!(run.stdout.contains("2 of 3 recipients"), "{run:#?}");
    let mut queued = queued_emails(&app, &org).await;
    queued.sort_by(|a, b| a.to_address.cmp(&b.to_address));
    assert_eq!(
        queued,
        [
            QueuedEmail {
                to_address: mia_at.clone(),
                subject: "Build passed".into(),
                status: "queued".into()
            },
            QueuedEmail {
                to_address: tom_at.clone(),
                subject: "Build passed".into(),
                status: "queued".into()
            },
        ]
    );

    // With a member's login session (a CLI token), to the admin.
    let mia_token = cli_token(&app, &mia).await;
    let run = dailybot(
        &app,
        &token_env(&mia_token),
        &[
            "agent",
            "email",
            "send",
            "--name",
            "Mia's agent",
            "--to",
            &admin_at,
            "--subject",
            "Standup notes",
            "--body-html",
            "<h1>Notes</h1>",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    let queued = queued_emails(&app, &org).await;
    assert_eq!(queued.len(), 3, "{queued:?}");
    assert!(
        queued
            .iter()
            .any(|e| e.to_address == admin_at && e.subject == "Standup notes")
    );

    // A refusal: the CLI shows the server's detail and exits 1 (agent commands' failure).
    let run = dailybot(
        &app,
        &key_env(&admin_key),
        &[
            "agent",
            "email",
            "send",
            "--name",
            "Build Bot",
            "--to",
            "not-an-address",
            "--subject",
            "Hi",
            "--body-html",
            "<p>x</p>",
        ],
    )
    .await;
    assert_eq!(run.code, 1, "{run:#?}");
    assert_eq!(
        queued_emails(&app, &org).await.len(),
        3,
        "nothing more queued"
    );
}
