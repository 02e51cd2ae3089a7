//! What Slack pushes, through the real app: `POST /integrations/slack/{uuid}/events/` and
//! `.../interactivity/` accept only requests signed with the organization's signing secret
//! (stored with its Slack connection) within five minutes, answer Slack's URL check, and hand a
//! person's message to the check-in engine as the answer to the question waiting in that
//! conversation, once, however often Slack retries it. Slack's Web API is a local fake.

use serde_json::{Value, json};
use teamcomm_chat::slack_events::sign;
use teamcomm_checkin_engine::{Round, RoundRepository};
use teamcomm_kernel::OrgId;
use teamcomm_store_pg::PgRoundRepository;
use teamcomm_tests::{FakeSlack, Resp, TestApp};

const SIGNING_SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

struct World {
    app: TestApp,
    org: String,
    admin_key: String,
    checkin: String,
    slack: FakeSlack,
}

/// An organization connected to (fake) Slack with a signing secret, whose member (Slack `U-ADA`)
/// is asked a two-question check-in every day at 00:00 UTC.
async fn world() -> World {
    let app = TestApp::spawn().await;
    let slack = FakeSlack::start();
    let (org, _, _, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let r = app
        .operator(
            "PUT",
            &format!("/operator/v1/organizations/{org}/platform/"),
            Some(json!({
                "kind": "slack",
                "base_url": slack.base_url,
                "secret": "xoxb-test",
                "signing_secret": SIGNING_SECRET,
            })),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["has_signing_secret"], true, "{}", r.text);
    assert!(!r.text.contains(SIGNING_SECRET));
    let r = app
        .operator(
            "PUT",
            &format!("/operator/v1/organizations/{org}/users/{member}/platform-identity/"),
            Some(json!({"platform_user_id": "U-ADA"})),
        )
        .await;
    assert_eq!(r.status, 204, "{}", r.text);
    let checkin = app.create_daily_checkin(&admin_key, &member).await;
    World {
        app,
        org,
        admin_key,
        checkin,
        slack,
    }
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl World {
    /// POSTs `body` to the organization's `route` (`events` or `interactivity`) with `headers`.
    async fn push_raw(&self, route: &str, body: &[u8], headers: &[(&str, String)]) -> Resp {
        self.push_to(&self.org, route, body, headers).await
    }

    async fn push_to(
        &self,
        org: &str,
        route: &str,
        body: &[u8],
        headers: &[(&str, String)],
    ) -> Resp {
        let mut req = self
            .app
            .client
            .post(self.app.url(&format!("/integrations/slack/{org}/{route}/")))
            .body(body.to_vec());
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        TestApp::read(req.send().await.expect("request")).await
    }

    /// POSTs `body` signed as Slack does, at `at`, with `extra` headers.
    async fn push_signed(
        &self,
        route: &str,
        body: &[u8],
        secret: &str,
        at: i64,
        extra: &[(&str, String)],
    ) -> Resp {
        let mut headers = vec![
            ("X-Slack-Request-Timestamp", at.to_string()),
            ("X-Slack-Signature", sign(secret, at, body)),
        ];
        headers.extend(extra.iter().cloned());
        self.push_raw(route, body, &headers).await
    }

    async fn event(&self, body: &Value, extra: &[(&str, String)]) -> Resp {
        let body = body.to_string();
        self.push_signed("events", body.as_bytes(), SIGNING_SECRET, now(), extra)
            .await
    }

    /// The member's open round.
    async fn round(&self) -> Round {
        let mut rounds = PgRoundRepository::new(self.app.database.clone())
            .open_rounds(Some(OrgId(self.org.parse().unwrap())))
            .await
            .expect("read rounds");
        assert_eq!(rounds.len(), 1, "{rounds:?}");
        rounds.pop().unwrap()
    }
}

/// Ada's message `text` (Slack ts `ts`) in the DM the fake opened for her, as Slack pushes it.
fn message(event_id: &str, ts: &str, text: &str) -> Value {
    json!({
        "token": "unused",
        "team_id": "T-ACME",
        "api_app_id": "A1",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": now(),
        "event": {
            "type": "message", "channel_type": "im", "channel": "D-U-ADA",
            "user": "U-ADA", "text": text, "ts": ts,
        },
    })
}

#[actix_web::test]
async fn only_requests_signed_with_the_organizations_secret_in_the_last_five_minutes_pass() {
    let w = world().await;
    let check = json!({"token": "unused", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification"});
    let body = check.to_string();
    let body = body.as_bytes();

    // Signed: Slack's URL check gets its challenge back.
    let r = w
        .push_signed("events", body, SIGNING_SECRET, now(), &[])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"})
    );
    // Four minutes old still passes; six minutes old, or ahead, does not.
    let r = w
        .push_signed("events", body, SIGNING_SECRET, now() - 240, &[])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    for at in [now() - 360, now() + 360] {
        w.push_signed("events", body, SIGNING_SECRET, at, &[])
            .await
            .assert_error(401, "invalid_credentials");
    }
    // Another secret, or a body changed after signing.
    w.push_signed("events", body, "another-apps-signing-secret", now(), &[])
        .await
        .assert_error(401, "invalid_credentials");
    let at = now();
    let signature = sign(SIGNING_SECRET, at, body);
    let tampered = String::from_utf8_lossy(body).replace("3eZbrw", "4eZbrw");
    w.push_raw(
        "events",
        tampered.as_bytes(),
        &[
            ("X-Slack-Request-Timestamp", at.to_string()),
            ("X-Slack-Signature", signature.clone()),
        ],
    )
    .await
    .assert_error(401, "invalid_credentials");
    // Unsigned, or not of Slack's form.
    w.push_raw("events", body, &[])
        .await
        .assert_error(401, "credential_absent");
    w.push_raw(
        "events",
        body,
        &[
            ("X-Slack-Request-Timestamp", at.to_string()),
            ("X-Slack-Signature", signature.replace("v0=", "v1=")),
        ],
    )
    .await
    .assert_error(401, "credential_malformed");
    // Interactivity is held to the same rule.
    w.push_raw("interactivity", b"payload=%7B%7D", &[])
        .await
        .assert_error(401, "credential_absent");
    w.push_signed(
        "interactivity",
        b"payload=%7B%7D",
        "another-apps-signing-secret",
        now(),
        &[],
    )
    .await
    .assert_error(401, "invalid_credentials");
    // A signed body Slack would not send.
    w.push_signed("events", b"{\"no\": \"type\"}", SIGNING_SECRET, now(), &[])
        .await
        .assert_error(400, "parse_error");

    // An organization without a signing secret (or without Slack) accepts nothing.
    let r = w
        .app
        .operator(
            "PUT",
            &format!("/operator/v1/organizations/{}/platform/", w.org),
            Some(json!({"kind": "slack", "base_url": w.slack.base_url, "secret": "xoxb-test"})),
        )
        .await;
    assert_eq!(
        (r.status, &r.body["has_signing_secret"]),
        (200, &json!(false))
    );
    w.push_signed("events", body, SIGNING_SECRET, now(), &[])
        .await
        .assert_error(404, "not_found");
    let other = w.app.create_org("business").await;
    let at = now();
    let headers = [
        ("X-Slack-Request-Timestamp", at.to_string()),
        ("X-Slack-Signature", sign(SIGNING_SECRET, at, body)),
    ];
    w.push_to(&other, "events", body, &headers)
        .await
        .assert_error(404, "not_found");
    w.push_to("not-a-uuid", "events", body, &headers)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn a_message_answers_the_waiting_question_once_however_often_slack_sends_it() {
    let w = world().await;
    assert_eq!(w.app.state.tick_checkins().await.unwrap().questions, 1);
    w.app.state.deliver_due().await.unwrap();
    let round = w.round().await;
    assert_eq!((round.asked, round.answered), (1, 0), "{round:?}");

    // A bot's message (the question itself, as Slack echoes it) and an edit are not answers.
    let mut echo = message("Ev-echo", "1700000000.000001", "What did you do?");
    echo["event"]["bot_id"] = json!("B-TEAMCOMM");
    let mut edit = message("Ev-edit", "1700000000.000002", "Shipped");
    edit["event"]["subtype"] = json!("message_changed");
    for ignored in [echo, edit] {
        let r = w.event(&ignored, &[]).await;
        assert_eq!((r.status, r.text.as_str()), (200, ""), "{}", r.text);
    }
    assert_eq!(w.round().await.answered, 0);

    // Ada answers in her DM: the round takes it and asks the next question.
    let answer = message("Ev-answer", "1700000100.000100", "Shipped the release");
    let r = w.event(&answer, &[]).await;
    assert_eq!((r.status, r.text.as_str()), (200, ""), "{}", r.text);
    let round = w.round().await;
    assert_eq!((round.asked, round.answered), (2, 1), "{round:?}");

    // Slack retries it (it did not see our answer in time): acknowledged, not taken again.
    for retry in ["1", "2"] {
        let r = w
            .event(
                &answer,
                &[
                    ("X-Slack-Retry-Num", retry.to_owned()),
                    ("X-Slack-Retry-Reason", "http_timeout".to_owned()),
                ],
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    // The same message under another event id (another server took the first) is not taken
    // again either: the round remembers the last reply it took.
    let r = w
        .event(
            &message("Ev-other", "1700000100.000100", "Shipped the release"),
            &[],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let round = w.round().await;
    assert_eq!((round.asked, round.answered), (2, 1), "{round:?}");

    // A click on a button is acknowledged (the engine asks by text, so it takes none).
    let payload = json!({
        "type": "block_actions", "user": {"id": "U-ADA"}, "channel": {"id": "D-U-ADA"},
        "container": {"type": "message", "message_ts": "1700000000.000003", "channel_id": "D-U-ADA"},
        "actions": [{"type": "button", "action_id": "x", "value": "yes"}],
    });
    let form = format!("payload={}", percent_encode(&payload.to_string()));
    let r = w
        .push_signed("interactivity", form.as_bytes(), SIGNING_SECRET, now(), &[])
        .await;
    assert_eq!((r.status, r.text.as_str()), (200, ""), "{}", r.text);

    // The second answer completes the round; the API reads both answers.
    w.app.state.deliver_due().await.unwrap();
    let r = w
        .event(&message("Ev-second", "1700000200.000100", "Nothing"), &[])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let round = w.round().await;
    assert!(round.completed && round.answered == 2, "{round:?}");
    let r = w
        .app
        .get_with_key(
            &format!("/v1/checkins/{}/responses/", w.checkin),
            &w.admin_key,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("Shipped the release"), "{}", r.text);
    assert!(r.text.contains("Nothing"), "{}", r.text);
    assert_eq!(
        r.text.matches("Shipped the release").count(),
        1,
        "{}",
        r.text
    );
}

/// Form encoding of a value (every byte but unreserved ones escaped).
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
