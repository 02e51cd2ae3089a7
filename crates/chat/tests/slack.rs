//! The Slack adapter against a local server that answers like the Web API and records what it
//! received.
//!
//! The fake decides by token and channel: token `xoxb-good` is valid (any other answers
//! `invalid_auth`); channel `C-RATE` answers 429 `ratelimited` with `Retry-After: 7`, `C-GONE`
//! `channel_not_found`, `C-DOWN` a 503, `C-LONG` `msg_too_long`, `C-HUGE` an answer larger
//! than the adapter reads; user `U-NOBODY` is
//! `user_not_found`; `conversations.list` has two pages.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::{Value, json};
use teamcomm_chat::{SlackConfig, SlackPlatform};
use teamcomm_messaging::platform::{
    BotAppearance, Button, ButtonKind, ChatPlatform, Destination, OutgoingMessage, PlatformChannel,
    PlatformError, SentMessage,
};

const TOKEN: &str = "xoxb-good";
const TS: &str = "1700000000.000100";

/// One request as the fake received it.
#[derive(Debug, Clone)]
struct Received {
    http_method: String,
    api_method: String,
    authorization: String,
    content_type: String,
    query: String,
    body: Value,
}

type Log = Arc<Mutex<Vec<Received>>>;

struct FakeSlack {
    base_url: String,
    received: Log,
    server: ServerHandle,
}

impl FakeSlack {
    async fn start() -> FakeSlack {
        let received = Log::default();
        let log = web::Data::new(received.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(log.clone())
                .route("/api/{method}", web::route().to(answer))
        })
        .workers(1)
        .bind(("127.0.0.1", 0))
        .unwrap();
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        FakeSlack {
            base_url: format!("http://127.0.0.1:{port}/api"),
            received,
            server: handle,
        }
    }

    fn platform(&self, token: &str) -> SlackPlatform {
        SlackPlatform::new(
            SlackConfig {
                base_url: self.base_url.clone(),
                bot_token: token.to_owned(),
            },
            teamcomm_chat::http_client().unwrap(),
        )
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    async fn stop(self) {
        self.server.stop(false).await;
    }
}

async fn answer(
    request: HttpRequest,
    api_method: web::Path<String>,
    body: web::Bytes,
    log: web::Data<Log>,
) -> HttpResponse {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    log.lock().unwrap().push(Received {
        http_method: request.method().to_string(),
        api_method: api_method.clone(),
        authorization: header("authorization"),
        content_type: header("content-type"),
        query: request.query_string().to_owned(),
        body: body.clone(),
    });
    let refuse = |error: &str| HttpResponse::Ok().json(json!({"ok": false, "error": error}));
    if header("authorization") != format!("Bearer {TOKEN}") {
        return refuse("invalid_auth");
    }
    match api_method.as_str() {
        "chat.postMessage" | "chat.update" => match body["channel"].as_str().unwrap_or_default() {
            "C-RATE" => HttpResponse::TooManyRequests()
                .insert_header(("Retry-After", "7"))
                .json(json!({"ok": false, "error": "ratelimited"})),
            "C-GONE" => refuse("channel_not_found"),
            "C-LONG" => refuse("msg_too_long"),
            "C-DOWN" => HttpResponse::ServiceUnavailable().body("upstream down"),
            "C-HUGE" => HttpResponse::Ok()
                .content_type("application/json")
                .body(format!(
                    "{{\"ok\": true, \"pad\": \"{}\"}}",
                    "x".repeat(9 << 20)
                )),
            channel => HttpResponse::Ok().json(json!({
                "ok": true, "channel": channel, "ts": body["ts"].as_str().unwrap_or(TS),
            })),
        },
        "conversations.open" => {
            let users = body["users"].as_str().unwrap_or_default();
            if users.split(',').any(|user| user == "U-NOBODY") {
                return refuse("user_not_found");
            }
            HttpResponse::Ok().json(json!({
                "ok": true, "channel": {"id": format!("D-{}", users.replace(',', "-"))},
            }))
        }
        "conversations.list" if !request.query_string().contains("cursor=page-2") => {
            HttpResponse::Ok().json(json!({
                "ok": true,
                "channels": [{"id": "C1", "name": "general", "is_private": false}],
                "response_metadata": {"next_cursor": "page-2"},
            }))
        }
        "conversations.list" => HttpResponse::Ok().json(json!({
            "ok": true,
            "channels": [{"id": "C2", "name": "leads", "is_private": true}],
            "response_metadata": {"next_cursor": ""},
        })),
        _ => refuse("unknown_method"),
    }
}

fn to_channel(channel_id: &str, text: &str) -> OutgoingMessage {
    OutgoingMessage {
        idempotency_key: "key-1".into(),
        destination: Destination::Channel {
            channel_id: channel_id.to_owned(),
            thread: None,
        },
        text: text.to_owned(),
        image_url: None,
        buttons: vec![],
        appearance: BotAppearance::default(),
    }
}

#[actix_web::test]
async fn a_channel_post_in_a_thread_carries_blocks_and_appearance() {
    let slack = FakeSlack::start().await;
    let message = OutgoingMessage {
        destination: Destination::Channel {
            channel_id: "C1".into(),
            thread: Some("1699999999.000001".into()),
        },
        image_url: Some("https://img.example/chart.png".into()),
        buttons: vec![
            Button {
                label: "Open".into(),
                kind: ButtonKind::Link {
                    url: "https://teamcomm.example/r/1".into(),
                },
            },
            Button {
                label: "Yes".into(),
                kind: ButtonKind::Interactive {
                    value: "yes".into(),
                },
            },
        ],
        appearance: BotAppearance {
            username: Some("Standup bot".into()),
            icon_url: Some("https://img.example/bot.png".into()),
            icon_emoji: Some(":robot_face:".into()),
        },
        ..to_channel("C1", "*Standup* today")
    };

    let sent = slack.platform(TOKEN).send(&message).await.unwrap();

    assert_eq!(
        sent,
        SentMessage {
            channel_id: "C1".into(),
            message_id: TS.into()
        }
    );
    let received = slack.received();
    assert_eq!(received.len(), 1);
    let post = &received[0];
    assert_eq!(post.http_method, "POST");
    assert_eq!(post.api_method, "chat.postMessage");
    assert_eq!(post.authorization, "Bearer xoxb-good");
    assert_eq!(post.content_type, "application/json; charset=utf-8");
    assert_eq!(
        post.body,
        json!({
            "channel": "C1",
            "thread_ts": "1699999999.000001",
            "text": "*Standup* today",
            "blocks": [
                {"type": "section", "text": {"type": "mrkdwn", "text": "*Standup* today"}},
                {"type": "image", "image_url": "https://img.example/chart.png", "alt_text": "image"},
                {"type": "actions", "elements": [
                    {"type": "button", "text": {"type": "plain_text", "text": "Open"},
                     "action_id": "teamcomm-0", "url": "https://teamcomm.example/r/1"},
                    {"type": "button", "text": {"type": "plain_text", "text": "Yes"},
                     "action_id": "teamcomm-1", "value": "yes"},
                ]},
            ],
            "username": "Standup bot",
            "icon_url": "https://img.example/bot.png",
            "icon_emoji": ":robot_face:",
        })
    );
    slack.stop().await;
}

#[actix_web::test]
async fn a_direct_message_opens_the_im_then_posts_to_it() {
    let slack = FakeSlack::start().await;
    let message = OutgoingMessage {
        destination: Destination::Person {
            platform_user_id: "U1".into(),
        },
        ..to_channel("", "hello")
    };

    let sent = slack.platform(TOKEN).send(&message).await.unwrap();

    assert_eq!(sent.channel_id, "D-U1");
    let received = slack.received();
    let calls: Vec<&str> = received.iter().map(|r| r.api_method.as_str()).collect();
    assert_eq!(calls, ["conversations.open", "chat.postMessage"]);
    assert_eq!(received[0].body, json!({"users": "U1"}));
    assert_eq!(received[1].body["channel"], "D-U1");
    assert!(received[1].body.get("thread_ts").is_none());
    slack.stop().await;
}

#[actix_web::test]
async fn an_edit_updates_text_and_blocks_of_the_message() {
    let slack = FakeSlack::start().await;
    let sent = SentMessage {
        channel_id: "C1".into(),
        message_id: "1700000000.000200".into(),
    };

    slack
        .platform(TOKEN)
        .edit(&sent, &to_channel("C1", "final"))
        .await
        .unwrap();

    let received = slack.received();
    assert_eq!(received[0].api_method, "chat.update");
    assert_eq!(
        received[0].body,
        json!({
            "channel": "C1", "ts": "1700000000.000200", "text": "final",
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "final"}}],
        })
    );
    slack.stop().await;
}

#[actix_web::test]
async fn open_conversation_names_every_person() {
    let slack = FakeSlack::start().await;

    let channel = slack
        .platform(TOKEN)
        .open_conversation(&["U1".into(), "U2".into()], "key")
        .await
        .unwrap();

    assert_eq!(channel, "D-U1-U2");
    assert_eq!(slack.received()[0].body, json!({"users": "U1,U2"}));
    slack.stop().await;
}

#[actix_web::test]
async fn list_channels_follows_the_cursor() {
    let slack = FakeSlack::start().await;

    let channels = slack.platform(TOKEN).list_channels().await.unwrap();

    assert_eq!(
        channels,
        [
            PlatformChannel {
                id: "C1".into(),
                name: "general".into(),
                is_private: false
            },
            PlatformChannel {
                id: "C2".into(),
                name: "leads".into(),
                is_private: true
            },
        ]
    );
    let received = slack.received();
    assert_eq!(received.len(), 2);
    for page in &received {
        assert_eq!(page.http_method, "GET");
        assert_eq!(page.authorization, "Bearer xoxb-good");
        assert!(
            page.query
                .contains("types=public_channel%2Cprivate_channel&exclude_archived=true&limit=200"),
            "{}",
            page.query
        );
    }
    assert!(!received[0].query.contains("cursor="));
    assert!(
        received[1].query.ends_with("&cursor=page-2"),
        "{}",
        received[1].query
    );
    slack.stop().await;
}

#[actix_web::test]
async fn refusals_map_to_retry_classes() {
    let slack = FakeSlack::start().await;
    let platform = slack.platform(TOKEN);
    let send = |channel: &'static str| {
        let platform = &platform;
        async move { platform.send(&to_channel(channel, "hi")).await.unwrap_err() }
    };

    assert_eq!(
        send("C-RATE").await,
        PlatformError::RateLimited {
            retry_after: Some(Duration::from_secs(7))
        }
    );
    assert!(matches!(send("C-GONE").await, PlatformError::NotFound(_)));
    assert!(matches!(send("C-DOWN").await, PlatformError::Temporary(_)));
    assert!(matches!(send("C-LONG").await, PlatformError::Permanent(_)));
    assert!(
        matches!(send("C-HUGE").await, PlatformError::Permanent(m) if m.contains("exceeds")),
        "an answer is read up to a bound"
    );
    let nobody = OutgoingMessage {
        destination: Destination::Person {
            platform_user_id: "U-NOBODY".into(),
        },
        ..to_channel("", "hi")
    };
    assert!(matches!(
        platform.send(&nobody).await.unwrap_err(),
        PlatformError::NotFound(_)
    ));
    let bad_token = slack.platform("xoxb-revoked");
    assert!(matches!(
        bad_token.send(&to_channel("C1", "hi")).await.unwrap_err(),
        PlatformError::Unauthorized(_)
    ));
    assert!(matches!(
        bad_token.list_channels().await.unwrap_err(),
        PlatformError::Unauthorized(_)
    ));
    slack.stop().await;
}

#[actix_web::test]
async fn an_unreachable_slack_is_temporary() {
    let slack = FakeSlack::start().await;
    let platform = slack.platform(TOKEN);
    slack.stop().await;

    let refused = platform.send(&to_channel("C1", "hi")).await.unwrap_err();

    assert!(
        matches!(refused, PlatformError::Temporary(_)),
        "{refused:?}"
    );
}

#[actix_web::test]
async fn poll_is_unsupported_because_slack_pushes_events() {
    let slack = FakeSlack::start().await;

    let refused = slack.platform(TOKEN).poll(None, Duration::ZERO).await;

    assert!(
        matches!(refused, Err(PlatformError::Unsupported(_))),
        "{refused:?}"
    );
    assert!(slack.received().is_empty());
    slack.stop().await;
}
