//! `dailybot chat send` and `chat update`: a member's login session sends to themself, a
//! teammate and a registered channel, with thread messages and buttons, and is refused someone
//! outside its reach; an edit by `bot_message_id`; how the CLI reports the messaging codes.

use super::*;
use crate::kudos::person;

#[actix_web::test]
async fn chat_send_and_update_through_the_real_cli() {
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let admin = person(&app, &org, "Adele", "Admin", "admin").await;
    let session = app.session(&admin).await;
    let admin_key = key_for(&app, &session, &admin).await;
    let ada = person(&app, &org, "Ada", "Lovelace", "member").await;
    let bob = person(&app, &org, "Bob", "Stone", "member").await;
    let cy = person(&app, &org, "Cy", "Young", "member").await;
    let core = create_team(&app, &admin_key, "Core").await;
    for member in [&ada, &bob] {
        add_member(&app, &admin_key, &core, member).await;
    }
    add_channel(&app, &org, "C0123", "releases").await;
    let ada_token = cli_token(&app, &ada).await;
    let as_ada = token_env(&ada_token);
    let status = |id: String| {
        let app = &app;
        let admin_key = admin_key.clone();
        async move {
            let r = app
                .get_with_key(&format!("/v1/messages/{id}/"), &admin_key)
                .await;
            assert_eq!(r.status, 200, "{}", r.text);
            r.body
        }
    };

    let sent = dailybot(
        &app,
        &as_ada,
        &[
            "chat",
            "send",
            "-u",
            &ada,
            "-u",
            &bob,
            "-c",
            "C0123",
            "-m",
            "Release v2.4 shipped",
            "--thread-message",
            "Changelog: fixes",
            "--link-button",
            "Open report::https://example.org/r/1",
            "--bot-name",
            "Release Bot",
            "--json",
        ],
    )
    .await
    .ok_json();
    let id = sent["bot_message_id"]
        .as_str()
        .expect("bot_message_id")
        .to_owned();
    assert_eq!(sent["thread_responses"].as_array().unwrap().len(), 1);
    let stored = status(id.clone()).await;
    assert_eq!(stored["sender_uuid"], json!(ada));
    assert_eq!(stored["message"], "Release v2.4 shipped");
    let targets: Vec<&Value> = stored["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            if d["target_type"] == "user" {
                &d["user_uuid"]
            } else {
                &d["channel_id"]
            }
        })
        .collect();
    assert_eq!(targets, [&json!(ada), &json!(bob), &json!("C0123")]);
    assert_eq!(stored["thread_responses"][0]["message"], "Changelog: fixes");

    // Someone Ada shares no team with is out of a member's reach.
    let refused = dailybot(
        &app,
        &as_ada,
        &["chat", "send", "-u", &cy, "-m", "hi", "--json"],
    )
    .await;
    refused.assert_api_error(
        EXIT_PERMISSION,
        403,
        Some("cli_send_message_target_not_allowed"),
    );
    // A button the API refuses, with its code.
    let refused = dailybot(
        &app,
        &as_ada,
        &[
            "chat",
            "send",
            "-u",
            &ada,
            "-m",
            "hi",
            "--buttons",
            r#"[{"label": "Go", "button_type": "fancy"}]"#,
            "--json",
        ],
    )
    .await;
    assert_ne!(refused.code, EXIT_OK, "{refused:#?}");
    assert_eq!(
        refused.json()["code"],
        "button_type_invalid",
        "{refused:#?}"
    );

    // The edit keeps the original's targets and gets an id of its own.
    let edited = dailybot(
        &app,
        &as_ada,
        &[
            "chat",
            "update",
            &id,
            "-u",
            &ada,
            "-m",
            "Release v2.4 rolled back",
            "--json",
        ],
    )
    .await
    .ok_json();
    let edit_id = edited["bot_message_id"]
        .as_str()
        .expect("bot_message_id")
        .to_owned();
    let edit = status(edit_id).await;
    assert_eq!(
        (&edit["kind"], &edit["parent"]),
        (&json!("edit"), &json!(id))
    );
    assert_eq!(edit["deliveries"].as_array().unwrap().len(), 3);
}
