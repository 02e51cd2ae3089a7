//! The Matrix adapter against a real Synapse (`teamcomm_chat::testing::synapse`; skipped with a
//! note when `TEAMCOMM_TEST_SYNAPSE_PYTHON` is unset, failing under CI).

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use teamcomm_chat::MatrixPlatform;
use teamcomm_chat::testing::synapse::{Account, SERVER_NAME, Synapse, enc, unique};
use teamcomm_messaging::platform::{
    BotAppearance, Button, ButtonKind, ChatPlatform, Destination, InboundEvent, OutgoingMessage,
    PlatformChannel, PlatformError,
};

fn to_channel(room_id: &str, key: &str, text: &str) -> OutgoingMessage {
    OutgoingMessage {
        idempotency_key: key.to_owned(),
        destination: Destination::Channel {
            channel_id: room_id.to_owned(),
            thread: None,
        },
        text: text.to_owned(),
        image_url: None,
        buttons: vec![],
        appearance: BotAppearance::default(),
    }
}

fn to_person(user_id: &str, key: &str, text: &str) -> OutgoingMessage {
    OutgoingMessage {
        destination: Destination::Person {
            platform_user_id: user_id.to_owned(),
        },
        ..to_channel("", key, text)
    }
}

fn choice(label: &str, value: &str) -> Button {
    Button {
        label: label.to_owned(),
        kind: ButtonKind::Interactive {
            value: value.to_owned(),
        },
    }
}

/// A room of `person`'s with the bot joined.
async fn shared_room(person: &Account, bot: &Account, name: Option<&str>) -> String {
    let room_id = person.create_room(name, false, &[&bot.user_id]).await;
    bot.join(&room_id).await;
    room_id
}

/// Polls until `count` events came (or ten polls passed); answers them and the last cursor.
async fn poll_for(platform: &MatrixPlatform, cursor: String, count: usize) -> Vec<InboundEvent> {
    let mut cursor = cursor;
    let mut events = Vec::new();
    for _ in 0..10 {
        let batch = platform
            .poll(Some(&cursor), Duration::from_secs(3))
            .await
            .unwrap();
        events.extend(batch.events);
        cursor = batch.next_cursor;
        if events.len() >= count {
            break;
        }
    }
    events
}

#[tokio::test]
async fn send_to_a_room_reads_back_with_links_and_a_numbered_list() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-send").await;
    let ada = synapse.person("ada").await;
    let room_id = shared_room(&ada, &bot, Some("standup")).await;

    let mut message = to_channel(&room_id, "send-1", "Standup <today>");
    message.image_url = Some("https://img.example/chart.png".into());
    message.buttons = vec![
        Button {
            label: "Open report".into(),
            kind: ButtonKind::Link {
                url: "https://teamcomm.example/r/1".into(),
            },
        },
        choice("Yes", "yes"),
        choice("No", "no"),
    ];
    let sent = platform.send(&message).await.unwrap();

    assert_eq!(sent.channel_id, room_id);
    let events = ada.messages(&room_id).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let event = &events[0];
    assert_eq!(event["event_id"], sent.message_id.as_str());
    assert_eq!(event["sender"], bot.user_id.as_str());
    let content = &event["content"];
    assert_eq!(
        content["body"],
        "Standup <today>\n\nhttps://img.example/chart.png\n\nOpen report: \
         https://teamcomm.example/r/1\n\nReply with a number:\n1. Yes\n2. No"
    );
    let html = content["formatted_body"].as_str().unwrap();
    assert!(html.starts_with("Standup &lt;today&gt;"), "{html}");
    assert!(
        html.contains("<a href=\"https://teamcomm.example/r/1\">Open report</a>"),
        "{html}"
    );
    assert!(html.contains("<ol><li>Yes</li><li>No</li></ol>"), "{html}");
    assert_eq!(
        content["org.teamcomm.buttons"],
        json!([{"label": "Yes", "value": "yes"}, {"label": "No", "value": "no"}])
    );
}

#[tokio::test]
async fn the_same_key_twice_posts_once_even_after_a_new_login_on_the_pinned_device() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-dedupe").await;
    let ada = synapse.person("ada").await;
    let room_id = shared_room(&ada, &bot, None).await;

    let message = to_channel(&room_id, "dedupe-1", "once");
    let first = platform.send(&message).await.unwrap();
    let retry = platform.send(&message).await.unwrap();
    // A restarted process logs in again on the same device: a new token, the same dedupe.
    let relogin = synapse
        .login(
            bot.user_id
                .trim_start_matches('@')
                .split(':')
                .next()
                .unwrap(),
            &bot.device_id,
        )
        .await;
    assert_ne!(relogin.access_token, bot.access_token);
    let after_restart = synapse
        .platform(&bot, &relogin.access_token)
        .send(&message)
        .await
        .unwrap();

    assert_eq!(retry, first);
    assert_eq!(after_restart, first);
    assert_eq!(ada.messages(&room_id).await.len(), 1);
    let another = platform
        .send(&to_channel(&room_id, "dedupe-2", "twice"))
        .await
        .unwrap();
    assert_ne!(another.message_id, first.message_id);
}

#[tokio::test]
async fn a_token_of_another_device_is_refused_before_sending() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, _) = synapse.bot("bot-device").await;
    let ada = synapse.person("ada").await;
    let room_id = shared_room(&ada, &bot, None).await;
    let localpart = bot
        .user_id
        .trim_start_matches('@')
        .split(':')
        .next()
        .unwrap();
    let elsewhere = synapse.login(localpart, "ANOTHERDEVICE").await;

    let refused = synapse
        .platform(&bot, &elsewhere.access_token)
        .send(&to_channel(&room_id, "device-1", "hi"))
        .await
        .unwrap_err();

    assert!(
        matches!(&refused, PlatformError::Permanent(m) if m.contains("pinned device")),
        "{refused:?}"
    );
    assert!(ada.messages(&room_id).await.is_empty());
}

#[tokio::test]
async fn a_direct_message_creates_the_room_once_and_records_it_in_m_direct() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-dm").await;
    let ada = synapse.person("ada").await;
    let m_direct = format!("user/{}/account_data/m.direct", enc(&bot.user_id));
    // What another client of the bot account recorded stays as it was.
    let recorded_elsewhere = json!({"@carol:elsewhere": ["!old"], "odd": {"shape": 1}});
    bot.ok(Method::PUT, &m_direct, Some(recorded_elsewhere))
        .await;

    let first = platform
        .send(&to_person(&ada.user_id, "dm-1", "hello ada"))
        .await
        .unwrap();
    let second = platform
        .send(&to_person(&ada.user_id, "dm-2", "again"))
        .await
        .unwrap();

    assert_eq!(second.channel_id, first.channel_id);
    // Two first messages to a new person at once still make one room.
    let bob = synapse.person("bob").await;
    let (hi, hi_again) = (
        to_person(&bob.user_id, "dm-bob-1", "hi bob"),
        to_person(&bob.user_id, "dm-bob-2", "hi again"),
    );
    let (to_bob, again_to_bob) = tokio::join!(platform.send(&hi), platform.send(&hi_again));
    let to_bob = to_bob.unwrap();
    assert_eq!(again_to_bob.unwrap().channel_id, to_bob.channel_id);
    let direct = bot.ok(Method::GET, &m_direct, None).await;
    assert_eq!(
        direct,
        json!({
            "@carol:elsewhere": ["!old"],
            "odd": {"shape": 1},
            ada.user_id.clone(): [first.channel_id.clone()],
            bob.user_id.clone(): [to_bob.channel_id],
        })
    );
    ada.join(&first.channel_id).await;
    let bodies: Vec<Value> = ada
        .messages(&first.channel_id)
        .await
        .iter()
        .map(|event| event["content"]["body"].clone())
        .collect();
    assert_eq!(bodies, [json!("hello ada"), json!("again")]);
}

#[tokio::test]
async fn a_thread_reply_relates_to_its_root() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-thread").await;
    let ada = synapse.person("ada").await;
    let room_id = shared_room(&ada, &bot, None).await;

    let root = platform
        .send(&to_channel(&room_id, "thread-root", "Daily report"))
        .await
        .unwrap();
    let mut reply = to_channel(&room_id, "thread-reply", "Ada: done");
    reply.destination = Destination::Channel {
        channel_id: room_id.clone(),
        thread: Some(root.message_id.clone()),
    };
    let in_thread = platform.send(&reply).await.unwrap();

    let events = ada.messages(&room_id).await;
    let event = events
        .iter()
        .find(|e| e["event_id"] == in_thread.message_id.as_str())
        .unwrap();
    let relation = &event["content"]["m.relates_to"];
    assert_eq!(relation["rel_type"], "m.thread");
    assert_eq!(relation["event_id"], root.message_id.as_str());
}

#[tokio::test]
async fn an_edit_replaces_the_content_once_per_edit() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-edit").await;
    let ada = synapse.person("ada").await;
    let room_id = shared_room(&ada, &bot, None).await;
    let sent = platform
        .send(&to_channel(&room_id, "edit-1", "draft"))
        .await
        .unwrap();

    let mut edited = to_channel(&room_id, "edit-1", "final");
    edited.buttons = vec![choice("Ack", "ack")];
    platform.edit(&sent, &edited).await.unwrap();
    platform.edit(&sent, &edited).await.unwrap();

    let events = ada.messages(&room_id).await;
    assert_eq!(events.len(), 2, "one original and one edit: {events:#?}");
    let edit = &events[1]["content"];
    assert_eq!(edit["m.relates_to"]["rel_type"], "m.replace");
    assert_eq!(edit["m.relates_to"]["event_id"], sent.message_id.as_str());
    assert_eq!(
        edit["m.new_content"]["body"],
        "final\n\nReply with a number:\n1. Ack"
    );
    assert_eq!(edit["body"], "* final\n\nReply with a number:\n1. Ack");
}

#[tokio::test]
async fn open_conversation_invites_the_people_and_a_retry_finds_the_same_room() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-open").await;
    let ada = synapse.person("ada").await;
    let bob = synapse.person("bob").await;
    let people = [ada.user_id.clone(), bob.user_id.clone()];
    let key = unique("open-");

    let room_id = platform.open_conversation(&people, &key).await.unwrap();
    let again = platform.open_conversation(&people, &key).await.unwrap();
    let other = platform
        .open_conversation(&people, &format!("{key}-other"))
        .await
        .unwrap();

    assert_eq!(again, room_id);
    assert_ne!(other, room_id);
    // Two processes (adapter instances) racing to open with one key answer one room.
    let racing_key = format!("{key}-race");
    let other_process = synapse.platform(&bot, &bot.access_token);
    let (first, second) = tokio::join!(
        platform.open_conversation(&people, &racing_key),
        other_process.open_conversation(&people, &racing_key),
    );
    assert_eq!(first.unwrap(), second.unwrap());
    let mut expected = vec![
        (ada.user_id.clone(), "invite".to_owned()),
        (bob.user_id.clone(), "invite".to_owned()),
        (bot.user_id.clone(), "join".to_owned()),
    ];
    expected.sort();
    assert_eq!(bot.memberships(&room_id).await, expected);
    let ghost = format!("@ghost-{key}:{SERVER_NAME}");
    let refused = platform
        .open_conversation(&[ada.user_id.clone(), ghost], &format!("{key}-ghost"))
        .await
        .unwrap_err();
    assert!(matches!(refused, PlatformError::NotFound(_)), "{refused:?}");
}

#[tokio::test]
async fn list_channels_answers_the_named_joined_rooms() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-list").await;
    let ada = synapse.person("ada").await;
    let general = ada.create_room(Some("general"), true, &[]).await;
    bot.join(&general).await;
    let leads = shared_room(&ada, &bot, Some("leads")).await;
    // Neither a DM nor a room the bot was only invited to is a channel.
    platform
        .send(&to_person(&ada.user_id, "list-dm", "hi"))
        .await
        .unwrap();
    ada.create_room(Some("invited only"), false, &[&bot.user_id])
        .await;

    let mut channels = platform.list_channels().await.unwrap();
    channels.sort_by(|a, b| a.name.cmp(&b.name));

    assert_eq!(
        channels,
        [
            PlatformChannel {
                id: general,
                name: "general".into(),
                is_private: false,
            },
            PlatformChannel {
                id: leads,
                name: "leads".into(),
                is_private: true,
            },
        ]
    );
}

#[tokio::test]
async fn poll_answers_peoples_replies_and_never_the_bots_own_messages() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-poll").await;
    let ada = synapse.person("ada").await;
    let room_id = shared_room(&ada, &bot, Some("standup")).await;
    ada.send(
        &room_id,
        json!({"msgtype": "m.text", "body": "before the cursor"}),
    )
    .await;
    let start = platform.poll(None, Duration::ZERO).await.unwrap();
    assert!(start.events.is_empty(), "{:?}", start.events);

    let question = platform
        .send(&to_channel(&room_id, "poll-q", "What did you do?"))
        .await
        .unwrap();
    let reply = ada
        .send(
            &room_id,
            json!({
                "msgtype": "m.text",
                "body": format!("> <{}> What did you do?\n\nShipped it", bot.user_id),
                "m.relates_to": {"m.in_reply_to": {"event_id": question.message_id}},
            }),
        )
        .await;
    let in_thread = ada
        .send(
            &room_id,
            json!({
                "msgtype": "m.text",
                "body": "and tests",
                "m.relates_to": {
                    "rel_type": "m.thread", "event_id": question.message_id,
                    "is_falling_back": true,
                    "m.in_reply_to": {"event_id": question.message_id},
                },
            }),
        )
        .await;
    let plain = ada
        .send(&room_id, json!({"msgtype": "m.text", "body": "lunch?"}))
        .await;
    platform
        .send(&to_channel(&room_id, "poll-after", "bot again"))
        .await
        .unwrap();

    let events = poll_for(&platform, start.next_cursor, 3).await;

    let reply_of = |message_id: &str, text: &str, in_reply_to: Option<&str>| InboundEvent::Reply {
        platform_user_id: ada.user_id.clone(),
        channel_id: room_id.clone(),
        message_id: message_id.to_owned(),
        text: text.to_owned(),
        in_reply_to: in_reply_to.map(str::to_owned),
    };
    assert_eq!(
        events,
        [
            reply_of(&reply, "Shipped it", Some(&question.message_id)),
            reply_of(&in_thread, "and tests", Some(&question.message_id)),
            reply_of(&plain, "lunch?", None),
        ]
    );
}

#[tokio::test]
async fn poll_accepts_invitations_so_the_room_becomes_a_channel() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-invited").await;
    let ada = synapse.person("ada").await;
    let before = ada.create_room(Some("retro"), false, &[&bot.user_id]).await;
    let start = platform.poll(None, Duration::ZERO).await.unwrap();
    let after = ada.create_room(Some("demo"), false, &[&bot.user_id]).await;
    poll_for(&platform, start.next_cursor, 0).await;

    let mut names: Vec<String> = platform
        .list_channels()
        .await
        .unwrap()
        .into_iter()
        .map(|channel| channel.name)
        .collect();
    names.sort();

    assert_eq!(names, ["demo", "retro"]);
    for room_id in [before, after] {
        let joined = (bot.user_id.clone(), "join".to_owned());
        assert!(bot.memberships(&room_id).await.contains(&joined));
    }
}

#[tokio::test]
async fn a_numbered_reply_to_a_message_with_buttons_is_a_click() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-click").await;
    let ada = synapse.person("ada").await;
    let start = platform.poll(None, Duration::ZERO).await.unwrap();
    let mut question = to_person(&ada.user_id, "click-q", "Coming?");
    question.buttons = vec![choice("Yes", "yes"), choice("No", "no")];
    let sent = platform.send(&question).await.unwrap();
    ada.join(&sent.channel_id).await;

    ada.send(
        &sent.channel_id,
        json!({
            "msgtype": "m.text", "body": " 2 ",
            "m.relates_to": {"m.in_reply_to": {"event_id": sent.message_id}},
        }),
    )
    .await;
    let events = poll_for(&platform, start.next_cursor, 1).await;

    assert_eq!(
        events,
        [InboundEvent::ButtonClicked {
            platform_user_id: ada.user_id.clone(),
            channel_id: sent.channel_id.clone(),
            message_id: sent.message_id.clone(),
            value: "no".into(),
        }]
    );
    let _ = bot;
}

#[tokio::test]
async fn too_many_sends_are_rate_limited_with_a_delay() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-limited").await;
    let ada = synapse.person("ada").await;
    let room_id = shared_room(&ada, &bot, None).await;
    // Synapse's default message limit, for this bot only (the server's limits are relaxed).
    let override_path = format!(
        "{}/_synapse/admin/v1/users/{}/override_ratelimit",
        synapse.base_url,
        enc(&bot.user_id)
    );
    let answer = reqwest::Client::new()
        .post(override_path)
        .bearer_auth(&bot.access_token)
        .json(&json!({"messages_per_second": 1, "burst_count": 1}))
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());

    let mut refusal = None;
    for attempt in 0..10 {
        let message = to_channel(&room_id, &format!("limited-{attempt}"), "spam");
        if let Err(error) = platform.send(&message).await {
            refusal = Some(error);
            break;
        }
    }

    match refusal {
        Some(PlatformError::RateLimited {
            retry_after: Some(delay),
        }) => assert!(delay <= Duration::from_secs(2), "{delay:?}"),
        other => panic!("expected RateLimited with a delay, got {other:?}"),
    }
}

#[tokio::test]
async fn a_bad_token_is_unauthorized() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, _) = synapse.bot("bot-token").await;
    let platform = synapse.platform(&bot, "syt_not_a_token");

    let send = platform
        .send(&to_channel("!anything", "token-1", "hi"))
        .await
        .unwrap_err();
    let list = platform.list_channels().await.unwrap_err();
    let poll = platform.poll(None, Duration::ZERO).await.unwrap_err();

    for refused in [send, list, poll] {
        assert!(
            matches!(refused, PlatformError::Unauthorized(_)),
            "{refused:?}"
        );
    }
}

#[tokio::test]
async fn unknown_rooms_and_people_are_not_found() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, platform) = synapse.bot("bot-unknown").await;
    let ada = synapse.person("ada").await;
    let not_joined = ada.create_room(None, false, &[]).await;
    let ghost = format!("@{}:{SERVER_NAME}", unique("ghost"));

    let refusals = [
        platform
            .send(&to_channel("!nowhere", "unknown-1", "hi"))
            .await
            .unwrap_err(),
        platform
            .send(&to_channel(&not_joined, "unknown-2", "hi"))
            .await
            .unwrap_err(),
        platform
            .send(&to_person(&ghost, "unknown-3", "hi"))
            .await
            .unwrap_err(),
    ];

    for refused in refusals {
        assert!(matches!(refused, PlatformError::NotFound(_)), "{refused:?}");
    }
    // No DM room was made for the unknown person: m.direct was never written.
    let (status, _) = bot
        .call(
            Method::GET,
            &format!("user/{}/account_data/m.direct", enc(&bot.user_id)),
            None,
        )
        .await;
    assert_eq!(status, 404);
}
