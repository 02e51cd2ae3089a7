//! What Slack pushes to us (the Events API and interactivity), read as the messaging domain's
//! [`InboundEvent`]s: the request signature, then the body.
//!
//! - **Signature** ([`verify_signature`]): `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256,
//!   keyed by the Slack app's signing secret, of `v0:{X-Slack-Request-Timestamp}:{raw body}`.
//!   A timestamp more than [`MAX_SIGNATURE_AGE_SECS`] away from now is refused (a replayed
//!   request), and the comparison is constant-time.
//! - **Events** ([`parse_event_body`], JSON): `url_verification` answers its `challenge`;
//!   `event_callback` carries one event under its `event_id` (the same id on Slack's retries).
//!   A `message` written by a person becomes [`InboundEvent::Reply`]; messages of bots
//!   (`bot_id`) and every subtype (edits, deletions, joins, the bot's own posts) are ignored.
//! - **Interactivity** ([`parse_interaction_body`], form-encoded `payload=` JSON): each
//!   `block_actions` button with a `value` becomes [`InboundEvent::ButtonClicked`].

use aws_lc_rs::hmac;
use percent_encoding::percent_decode_str;
use serde_json::Value;
use teamcomm_messaging::platform::InboundEvent;

/// How far (seconds) a request's timestamp may be from now (Slack's recommendation).
pub const MAX_SIGNATURE_AGE_SECS: i64 = 5 * 60;

/// Why a request's signature is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureError {
    /// `X-Slack-Signature` or `X-Slack-Request-Timestamp` is absent.
    Missing,
    /// Either header is not of Slack's form (`v0=` and 64 hex digits; whole seconds).
    Malformed,
    /// The timestamp is more than [`MAX_SIGNATURE_AGE_SECS`] from now.
    Stale,
    /// The signature is not the body's under this signing secret.
    Mismatch,
}

impl std::fmt::Display for SignatureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SignatureError::Missing => "the request is not signed",
            SignatureError::Malformed => "the request's signature headers are malformed",
            SignatureError::Stale => "the request's timestamp is too old or in the future",
            SignatureError::Mismatch => "the request's signature does not match",
        })
    }
}

impl std::error::Error for SignatureError {}

/// Checks Slack's signature of `body`: `signature` and `timestamp` are the
/// `X-Slack-Signature` and `X-Slack-Request-Timestamp` headers, `now` the current Unix time.
pub fn verify_signature(
    signing_secret: &str,
    timestamp: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<(), SignatureError> {
    let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
        return Err(SignatureError::Missing);
    };
    let at: i64 = timestamp
        .parse()
        .ok()
        .filter(|_| timestamp.bytes().all(|b| b.is_ascii_digit()))
        .ok_or(SignatureError::Malformed)?;
    let tag = signature
        .strip_prefix("v0=")
        .and_then(hex_decode)
        .filter(|t| t.len() == 32)
        .ok_or(SignatureError::Malformed)?;
    if (now - at).abs() > MAX_SIGNATURE_AGE_SECS {
        return Err(SignatureError::Stale);
    }
    let key = hmac::Key::new(hmac::HMAC_SHA256, signing_secret.as_bytes());
    let mut signed = Vec::with_capacity(body.len() + timestamp.len() + 4);
    signed.extend_from_slice(b"v0:");
    signed.extend_from_slice(timestamp.as_bytes());
    signed.push(b':');
    signed.extend_from_slice(body);
    // `hmac::verify` compares in constant time.
    hmac::verify(&key, &signed, &tag).map_err(|_| SignatureError::Mismatch)
}

/// `v0=` and the hex HMAC-SHA256 of `body` sent at `timestamp`: what Slack sends (for tests and
/// local tools that play Slack).
pub fn sign(signing_secret: &str, timestamp: i64, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, signing_secret.as_bytes());
    let mut ctx = hmac::Context::with_key(&key);
    ctx.update(format!("v0:{timestamp}:").as_bytes());
    ctx.update(body);
    let tag = ctx.sign();
    let mut out = String::from("v0=");
    for b in tag.as_ref() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.as_bytes()
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// A body Slack pushed that is not of the form it documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedBody(pub String);

impl std::fmt::Display for MalformedBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed Slack request: {}", self.0)
    }
}

impl std::error::Error for MalformedBody {}

/// What an Events API request asks of us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlackEventRequest {
    /// Slack checks the request URL: answer `challenge`.
    UrlVerification { challenge: String },
    /// One event, under its id (the same on Slack's retries), with its workspace; `event` is
    /// `None` for an event the service does not listen for.
    Callback {
        event_id: String,
        team_id: Option<String>,
        event: Option<InboundEvent>,
    },
    /// Another request type (e.g. `app_rate_limited`): acknowledged, nothing else.
    Other,
}

/// Reads the JSON body of an Events API request.
pub fn parse_event_body(body: &[u8]) -> Result<SlackEventRequest, MalformedBody> {
    let body: Value =
        serde_json::from_slice(body).map_err(|e| MalformedBody(format!("not JSON: {e}")))?;
    match body["type"].as_str() {
        Some("url_verification") => Ok(SlackEventRequest::UrlVerification {
            challenge: body["challenge"]
                .as_str()
                .ok_or_else(|| MalformedBody("url_verification without a challenge".into()))?
                .to_owned(),
        }),
        Some("event_callback") => Ok(SlackEventRequest::Callback {
            event_id: body["event_id"]
                .as_str()
                .filter(|id| !id.is_empty())
                .ok_or_else(|| MalformedBody("event_callback without an event_id".into()))?
                .to_owned(),
            team_id: body["team_id"].as_str().map(str::to_owned),
            event: reply_of(&body["event"]),
        }),
        Some(_) => Ok(SlackEventRequest::Other),
        None => Err(MalformedBody("no request type".into())),
    }
}

/// A person's message as a reply; `None` for anything else (bots, subtypes, other events).
fn reply_of(event: &Value) -> Option<InboundEvent> {
    if event["type"] != "message" || !event["subtype"].is_null() || !event["bot_id"].is_null() {
        return None;
    }
    let text = |field: &str| event[field].as_str().map(str::to_owned);
    let message_id = text("ts")?;
    // A reply in a thread names its root; the root itself carries its own ts as thread_ts.
    let in_reply_to = text("thread_ts").filter(|root| *root != message_id);
    Some(InboundEvent::Reply {
        platform_user_id: text("user")?,
        channel_id: text("channel")?,
        message_id,
        text: text("text").unwrap_or_default(),
        in_reply_to,
    })
}

/// Reads the form-encoded body of an interactivity request (`payload=<JSON>`): the buttons
/// clicked, in order; none for other interactions (shortcuts, modals).
pub fn parse_interaction_body(body: &[u8]) -> Result<Vec<InboundEvent>, MalformedBody> {
    let body = std::str::from_utf8(body).map_err(|_| MalformedBody("not UTF-8".into()))?;
    let payload = body
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "payload")
        .map(|(_, value)| value.replace('+', " "))
        .ok_or_else(|| MalformedBody("no payload field".into()))?;
    let payload = percent_decode_str(&payload)
        .decode_utf8()
        .map_err(|_| MalformedBody("payload is not UTF-8".into()))?;
    let payload: Value = serde_json::from_str(&payload)
        .map_err(|e| MalformedBody(format!("payload is not JSON: {e}")))?;
    if payload["type"] != "block_actions" {
        return Ok(Vec::new());
    }
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let user = text(&payload["user"]["id"])
        .ok_or_else(|| MalformedBody("block_actions without a user".into()))?;
    let channel =
        text(&payload["channel"]["id"]).or_else(|| text(&payload["container"]["channel_id"]));
    let message =
        text(&payload["container"]["message_ts"]).or_else(|| text(&payload["message"]["ts"]));
    let (Some(channel), Some(message)) = (channel, message) else {
        // An action outside a message (a modal, the app home) is not a button of ours.
        return Ok(Vec::new());
    };
    Ok(payload["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["type"] == "button")
        .filter_map(|a| text(&a["value"]))
        .map(|value| InboundEvent::ButtonClicked {
            platform_user_id: user.clone(),
            channel_id: channel.clone(),
            message_id: message.clone(),
            value,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

    #[test]
    fn slacks_documented_example_verifies() {
        // The example of Slack's "Verifying requests from Slack" guide.
        let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        let signature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
        assert_eq!(sign(SECRET, 1531420618, body), signature);
        let verify = |ts: &str, sig: &str, now: i64| {
            verify_signature(SECRET, Some(ts), Some(sig), body, now)
        };
        assert_eq!(verify("1531420618", signature, 1531420618 + 60), Ok(()));
        assert_eq!(
            verify(
                "1531420618",
                signature,
                1531420618 + MAX_SIGNATURE_AGE_SECS + 1
            ),
            Err(SignatureError::Stale)
        );
        assert_eq!(
            verify(
                "1531420618",
                signature,
                1531420618 - MAX_SIGNATURE_AGE_SECS - 1
            ),
            Err(SignatureError::Stale)
        );
        let mut tampered = signature.to_owned();
        tampered.pop();
        tampered.push('4');
        assert_eq!(
            verify("1531420618", &tampered, 1531420618),
            Err(SignatureError::Mismatch)
        );
        // Another timestamp signs other bytes.
        assert_eq!(
            verify("1531420619", signature, 1531420618),
            Err(SignatureError::Mismatch)
        );
        for bad in [
            "a2114d57",
            "v1=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
            "v0=zz",
        ] {
            assert_eq!(
                verify("1531420618", bad, 1531420618),
                Err(SignatureError::Malformed),
                "{bad}"
            );
        }
        assert_eq!(
            verify("+1531420618", signature, 1531420618),
            Err(SignatureError::Malformed)
        );
        assert_eq!(
            verify_signature(SECRET, None, Some(signature), body, 0),
            Err(SignatureError::Missing)
        );
    }

    #[test]
    fn a_persons_message_is_a_reply_and_the_rest_is_ignored() {
        let callback = |event: Value| {
            let body = json!({"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": event});
            parse_event_body(body.to_string().as_bytes()).unwrap()
        };
        let message = json!({"type": "message", "user": "U1", "channel": "D1", "ts": "1700000000.000200", "text": "Shipped"});
        assert_eq!(
            callback(message.clone()),
            SlackEventRequest::Callback {
                event_id: "Ev1".into(),
                team_id: Some("T1".into()),
                event: Some(InboundEvent::Reply {
                    platform_user_id: "U1".into(),
                    channel_id: "D1".into(),
                    message_id: "1700000000.000200".into(),
                    text: "Shipped".into(),
                    in_reply_to: None,
                }),
            }
        );
        let mut threaded = message.clone();
        threaded["thread_ts"] = json!("1700000000.000100");
        let SlackEventRequest::Callback {
            event: Some(InboundEvent::Reply { in_reply_to, .. }),
            ..
        } = callback(threaded)
        else {
            panic!("a reply");
        };
        assert_eq!(in_reply_to.as_deref(), Some("1700000000.000100"));
        for ignored in [
            json!({"type": "message", "subtype": "message_changed", "channel": "D1", "ts": "1"}),
            json!({"type": "message", "bot_id": "B1", "user": "U9", "channel": "D1", "ts": "1", "text": "question"}),
            json!({"type": "reaction_added", "user": "U1"}),
        ] {
            assert!(matches!(
                callback(ignored),
                SlackEventRequest::Callback { event: None, .. }
            ));
        }
        assert_eq!(
            parse_event_body(br#"{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","token":"x"}"#).unwrap(),
            SlackEventRequest::UrlVerification { challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P".into() }
        );
        assert_eq!(
            parse_event_body(br#"{"type":"app_rate_limited"}"#).unwrap(),
            SlackEventRequest::Other
        );
        assert!(parse_event_body(b"not json").is_err());
        assert!(parse_event_body(br#"{"type":"event_callback","event":{}}"#).is_err());
    }

    #[test]
    fn block_actions_buttons_are_clicks() {
        let payload = json!({
            "type": "block_actions",
            "user": {"id": "U1"},
            "container": {"type": "message", "message_ts": "1700000000.000300", "channel_id": "C1"},
            "channel": {"id": "C1"},
            "actions": [
                {"type": "button", "action_id": "a", "value": "yes & more"},
                {"type": "button", "action_id": "link", "url": "https://x.test"},
            ],
        });
        let form = format!(
            "payload={}",
            percent_encoding::utf8_percent_encode(
                &payload.to_string(),
                percent_encoding::NON_ALPHANUMERIC
            )
        );
        assert_eq!(
            parse_interaction_body(form.as_bytes()).unwrap(),
            [InboundEvent::ButtonClicked {
                platform_user_id: "U1".into(),
                channel_id: "C1".into(),
                message_id: "1700000000.000300".into(),
                value: "yes & more".into(),
            }]
        );
        // '+' is a space in a form.
        let shortcut = "payload=%7B%22type%22%3A+%22shortcut%22%7D";
        assert_eq!(parse_interaction_body(shortcut.as_bytes()).unwrap(), []);
        assert!(parse_interaction_body(b"other=1").is_err());
    }
}
