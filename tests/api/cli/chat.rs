//! `dailybot chat send` and `chat update`: a member's login session sends to themself, a
//! teammate and a registered channel, with thread messages and buttons, and is refused someone
//! outside its reach; an edit by `bot_message_id`; how the CLI reports the messaging codes.
//! `dailybot conversation open` (the CLI's command for `POST /v1/open-conversation/`, with `-m`
//! chained to a send to the opened conversation): an admin on Slack and on a real Matrix
//! homeserver, and its refusals.

use super::*;
use crate::kudos::person;
use teamcomm_chat::testing::synapse::Synapse;
use teamcomm_tests::FakeSlack;

/// The exit code of every `conversation open` failure.
const EXIT_FAILURE: i32 = 1;

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

#[actix_web::test]
async fn conversation_open_through_the_real_cli() {
    let app = TestApp::spawn().await;
    let slack = FakeSlack::start();
    let org = app.create_org("business").await;
    let admin = person(&app, &org, "Adele", "Admin", "admin").await;
    let ada = person(&app, &org, "Ada", "Lovelace", "member").await;
    let bob = person(&app, &org, "Bob", "Stone", "member").await;
    let cy = person(&app, &org, "Cy", "Young", "member").await;
    let admin_token = cli_token(&app, &admin).await;
    let as_admin = token_env(&admin_token);
    let ada_token = cli_token(&app, &ada).await;
    let as_ada = token_env(&ada_token);
    let platform = format!("/operator/v1/organizations/{org}/platform/");
    let r = app
        .operator(
            "PUT",
            &platform,
            Some(json!({"kind": "slack", "secret": "xoxb-test", "base_url": slack.base_url})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    for (who, slack_id) in [(&ada, "U-ADA"), (&bob, "U-BOB")] {
        let r = app
            .operator(
                "PUT",
                &format!("/operator/v1/organizations/{org}/users/{who}/platform-identity/"),
                Some(json!({ "platform_user_id": slack_id })),
            )
            .await;
        assert_eq!(r.status, 204, "{}", r.text);
    }

    // Opened, then the message is queued for the conversation and lands there.
    let run = dailybot(
        &app,
        &as_admin,
        &[
            "conversation",
            "open",
            "-u",
            &ada,
            "-u",
            &bob,
            "-m",
            "Kick-off at 10",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("D-U-ADA,U-BOB"), "{run:#?}");
    assert_eq!(
        slack.calls("conversations.open"),
        [json!({"users": "U-ADA,U-BOB"})]
    );
    assert!(
        slack.calls("chat.postMessage").is_empty(),
        "queued, not sent"
    );
    app.state.deliver_due().await.unwrap();
    let posts = slack.calls("chat.postMessage");
    assert_eq!(posts.len(), 1, "{posts:#?}");
    assert_eq!(
        (&posts[0]["channel"], &posts[0]["text"]),
        (&json!("D-U-ADA,U-BOB"), &json!("Kick-off at 10"))
    );

    // Without -m nothing is sent; --json names the channel and the participants.
    let opened = dailybot(
        &app,
        &as_admin,
        &["conversation", "open", "-u", &ada, "-u", &bob, "--json"],
    )
    .await
    .ok_json();
    assert_eq!(opened["channel"], "D-U-ADA,U-BOB", "{opened}");
    assert_eq!(opened["message_sent"], false, "{opened}");
    let named: Vec<&Value> = opened["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["uuid"])
        .collect();
    assert_eq!(named, [&json!(ada), &json!(bob)], "{opened}");
    app.state.deliver_due().await.unwrap();
    assert_eq!(slack.calls("chat.postMessage").len(), 1);

    // Someone without a Slack identity; a member instead of an admin.
    dailybot(
        &app,
        &as_admin,
        &["conversation", "open", "-u", &ada, "-u", &cy, "--json"],
    )
    .await
    .assert_api_error(EXIT_FAILURE, 400, Some("one_or_more_users_not_found"));
    dailybot(
        &app,
        &as_ada,
        &["conversation", "open", "-u", &bob, "-m", "hi", "--json"],
    )
    .await
    .assert_api_error(EXIT_FAILURE, 403, Some("org_admin_required"));
    let run = dailybot(&app, &as_ada, &["conversation", "open", "-u", &bob]).await;
    assert_eq!(run.code, EXIT_FAILURE, "{run:#?}");
    assert!(run.stderr.contains("admin privileges"), "{run:#?}");

    // No platform at all.
    assert_eq!(app.operator("DELETE", &platform, None).await.status, 204);
    dailybot(
        &app,
        &as_admin,
        &["conversation", "open", "-u", &ada, "--json"],
    )
    .await
    .assert_api_error(EXIT_FAILURE, 400, Some("platform_not_connected"));
    assert_eq!(
        slack.calls("conversations.open").len(),
        2,
        "no call refused ever reached Slack"
    );
    assert_eq!(slack.calls("chat.postMessage").len(), 1);
}

/// Matrix has group conversations too (a private room of the bot and the people), so the CLI's
/// Slack-only refusal (406 `open_conversation_not_supported`) is never what it gets here.
#[actix_web::test]
async fn conversation_open_on_matrix_through_the_real_cli() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, _) = synapse.bot("teamcomm-cli-conversation-bot").await;
    let (ada_mx, bob_mx) = (synapse.person("ada").await, synapse.person("bob").await);
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let admin = person(&app, &org, "Adele", "Admin", "admin").await;
    let ada = person(&app, &org, "Ada", "Lovelace", "member").await;
    let bob = person(&app, &org, "Bob", "Stone", "member").await;
    let admin_token = cli_token(&app, &admin).await;
    let as_admin = token_env(&admin_token);
    let r = app
        .operator(
            "PUT",
            &format!("/operator/v1/organizations/{org}/platform/"),
            Some(
                json!({"kind": "matrix", "base_url": synapse.base_url, "secret": bot.access_token}),
            ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    for (who, account) in [(&ada, &ada_mx), (&bob, &bob_mx)] {
        let r = app
            .operator(
                "PUT",
                &format!("/operator/v1/organizations/{org}/users/{who}/platform-identity/"),
                Some(json!({ "platform_user_id": account.user_id })),
            )
            .await;
        assert_eq!(r.status, 204, "{}", r.text);
    }

    let opened = dailybot(
        &app,
        &as_admin,
        &[
            "conversation",
            "open",
            "-u",
            &ada,
            "-u",
            &bob,
            "-m",
            "Kick-off at 10",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(opened["message_sent"], true, "{opened}");
    let room = opened["channel"].as_str().expect("channel").to_owned();
    assert!(room.starts_with('!'), "a Matrix room id: {opened}");
    let mut members = bot.memberships(&room).await;
    members.retain(|(user, _)| *user != bot.user_id);
    let mut invited = vec![
        (ada_mx.user_id.clone(), "invite".to_owned()),
        (bob_mx.user_id.clone(), "invite".to_owned()),
    ];
    invited.sort();
    assert_eq!(members, invited);

    app.state.deliver_due().await.unwrap();
    let bodies: Vec<Value> = bot
        .messages(&room)
        .await
        .iter()
        .map(|e| e["content"]["body"].clone())
        .collect();
    assert_eq!(bodies, [json!("Kick-off at 10")]);

    // The same people again: the same room (human output names it).
    let run = dailybot(
        &app,
        &as_admin,
        &["conversation", "open", "-u", &bob, "-u", &ada],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains(&room), "{run:#?}");
}
