//! The Slack adapter: a bot token on the Web API.
//!
//! Choices a reader needs:
//! - **No send dedupe on Slack's side.** `chat.postMessage` has no idempotency key, so a retry
//!   that follows a lost answer posts twice. Sends land once because the caller (the domain's
//!   delivery worker) records each delivered target and never sends it again; only a crash
//!   between Slack's answer and that record can duplicate.
//! - **Direct messages** go to the IM channel `conversations.open` answers for the person (Slack
//!   returns the existing one, so no mapping is kept here).
//! - **Buttons** are Block Kit: the text in `section` blocks, the image in an `image` block, and
//!   one `actions` block with link buttons (`url`) and interactive ones (`value`); `text` stays
//!   the notification and fallback text.
//! - **Receiving**: Slack pushes events and clicks over HTTP (Events API, interactivity), so
//!   [`ChatPlatform::poll`] answers [`PlatformError::Unsupported`].

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::CONTENT_TYPE;
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value, json};
use teamcomm_messaging::platform::{
    ButtonKind, ChatPlatform, Destination, InboundBatch, OutgoingMessage, PlatformChannel,
    PlatformError, PlatformKind, SentMessage,
};

use crate::http::{REQUEST_TIMEOUT, excerpt, read_answer, retry_after, transport};

/// Characters of a `section` block's text (Block Kit's limit).
const SECTION_TEXT_LIMIT: usize = 3000;
/// Channels asked for per `conversations.list` page (Slack's recommended maximum).
const LIST_PAGE_SIZE: &str = "200";
/// Pages read at most: a cursor that never ends must not loop forever.
const LIST_MAX_PAGES: usize = 100;

/// How to reach Slack as the bot.
#[derive(Clone)]
pub struct SlackConfig {
    /// The Web API's base URL, [`SlackConfig::DEFAULT_BASE_URL`] but in tests.
    pub base_url: String,
    /// The bot token (`xoxb-…`).
    pub bot_token: String,
}

impl SlackConfig {
    pub const DEFAULT_BASE_URL: &str = "https://slack.com/api";

    pub fn new(bot_token: impl Into<String>) -> Self {
        SlackConfig {
            base_url: Self::DEFAULT_BASE_URL.to_owned(),
            bot_token: bot_token.into(),
        }
    }
}

impl fmt::Debug for SlackConfig {
    // The token never reaches a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlackConfig")
            .field("base_url", &self.base_url)
            .field("bot_token", &"<redacted>")
            .finish()
    }
}

/// [`ChatPlatform`] over the Slack Web API.
pub struct SlackPlatform {
    config: SlackConfig,
    http: reqwest::Client,
}

impl SlackPlatform {
    pub fn new(config: SlackConfig, http: reqwest::Client) -> Self {
        SlackPlatform { config, http }
    }

    /// One Web API method: a JSON body (write methods), or query parameters with `GET` (the read
    /// methods, which take no JSON). Answers the body of an `ok: true` answer.
    async fn call(
        &self,
        api_method: &str,
        body: Option<&Value>,
        query: &[(&str, &str)],
    ) -> Result<Value, PlatformError> {
        let base = self.config.base_url.trim_end_matches('/');
        let mut url = reqwest::Url::parse(&format!("{base}/{api_method}"))
            .map_err(|e| PlatformError::Permanent(format!("bad Slack base URL {base:?}: {e}")))?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let http_method = if body.is_some() {
            Method::POST
        } else {
            Method::GET
        };
        let mut request = self
            .http
            .request(http_method, url)
            .bearer_auth(&self.config.bot_token)
            .timeout(REQUEST_TIMEOUT);
        if let Some(body) = body {
            // Slack wants the charset named (else it answers with a `missing_charset` warning).
            request = request
                .header(CONTENT_TYPE, "application/json; charset=utf-8")
                .body(body.to_string());
        }
        let answer = request.send().await.map_err(transport)?;
        let status = answer.status();
        let delay = retry_after(answer.headers());
        let bytes = read_answer(answer).await?;
        if status == StatusCode::TOO_MANY_REQUESTS {
            return Err(PlatformError::RateLimited { retry_after: delay });
        }
        if status.is_server_error() {
            return Err(PlatformError::Temporary(format!(
                "{api_method}: HTTP {status}"
            )));
        }
        let answer: Value = serde_json::from_slice(&bytes).map_err(|e| {
            PlatformError::Permanent(format!(
                "{api_method}: unreadable answer (HTTP {status}): {e}"
            ))
        })?;
        if answer["ok"] == true {
            return Ok(answer);
        }
        let error = answer["error"].as_str().unwrap_or("unknown_error");
        Err(refusal(api_method, error, delay))
    }

    /// The IM or group conversation with these people (Slack answers the existing one).
    async fn open(&self, user_ids: &[&str]) -> Result<String, PlatformError> {
        let answer = self
            .call(
                "conversations.open",
                Some(&json!({"users": user_ids.join(",")})),
                &[],
            )
            .await?;
        string_at(&answer["channel"]["id"], "conversations.open", "channel.id")
    }
}

/// What Slack's `error` means for a retry.
fn refusal(api_method: &str, error: &str, retry_after: Option<Duration>) -> PlatformError {
    let detail = format!("{api_method}: {}", excerpt(error, 100));
    match error {
        "ratelimited" => PlatformError::RateLimited { retry_after },
        "invalid_auth" | "not_authed" | "account_inactive" | "token_revoked" | "token_expired" => {
            PlatformError::Unauthorized(detail)
        }
        "channel_not_found" | "user_not_found" | "users_not_found" | "not_in_channel"
        | "is_archived" | "message_not_found" => PlatformError::NotFound(detail),
        // Slack's own transient failures.
        "internal_error" | "fatal_error" | "service_unavailable" | "request_timeout" => {
            PlatformError::Temporary(detail)
        }
        _ => PlatformError::Permanent(detail),
    }
}

fn string_at(value: &Value, api_method: &str, field: &str) -> Result<String, PlatformError> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| PlatformError::Permanent(format!("{api_method} answered no {field}")))
}

/// The Block Kit layout of a message: text sections, the image, the buttons.
fn blocks(message: &OutgoingMessage) -> Vec<Value> {
    let mut blocks: Vec<Value> = text_sections(&message.text)
        .into_iter()
        .map(|text| json!({"type": "section", "text": {"type": "mrkdwn", "text": text}}))
        .collect();
    if let Some(image_url) = &message.image_url {
        blocks.push(json!({"type": "image", "image_url": image_url, "alt_text": "image"}));
    }
    if !message.buttons.is_empty() {
        let elements: Vec<Value> = message
            .buttons
            .iter()
            .enumerate()
            .map(|(index, button)| {
                let mut element = json!({
                    "type": "button",
                    "text": {"type": "plain_text", "text": button.label},
                    // Unique within the message, as Slack requires.
                    "action_id": format!("teamcomm-{index}"),
                });
                match &button.kind {
                    ButtonKind::Link { url } => element["url"] = json!(url),
                    ButtonKind::Interactive { value } => element["value"] = json!(value),
                }
                element
            })
            .collect();
        blocks.push(json!({"type": "actions", "elements": elements}));
    }
    blocks
}

/// The text cut into pieces a section block accepts (none for empty text).
fn text_sections(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(SECTION_TEXT_LIMIT)
        .map(|piece| piece.iter().collect())
        .collect()
}

/// The fields `chat.postMessage` and `chat.update` share.
fn message_fields(message: &OutgoingMessage) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("text".into(), json!(message.text));
    fields.insert("blocks".into(), json!(blocks(message)));
    fields
}

#[async_trait]
impl ChatPlatform for SlackPlatform {
    fn kind(&self) -> PlatformKind {
        PlatformKind::Slack
    }

    async fn send(&self, message: &OutgoingMessage) -> Result<SentMessage, PlatformError> {
        let mut body = message_fields(message);
        match &message.destination {
            Destination::Person { platform_user_id } => {
                body.insert(
                    "channel".into(),
                    json!(self.open(&[platform_user_id]).await?),
                );
            }
            Destination::Channel { channel_id, thread } => {
                body.insert("channel".into(), json!(channel_id));
                if let Some(thread_ts) = thread {
                    body.insert("thread_ts".into(), json!(thread_ts));
                }
            }
        }
        let appearance = &message.appearance;
        for (field, value) in [
            ("username", &appearance.username),
            ("icon_url", &appearance.icon_url),
            ("icon_emoji", &appearance.icon_emoji),
        ] {
            if let Some(value) = value {
                body.insert(field.into(), json!(value));
            }
        }
        let answer = self
            .call("chat.postMessage", Some(&Value::Object(body)), &[])
            .await?;
        Ok(SentMessage {
            channel_id: string_at(&answer["channel"], "chat.postMessage", "channel")?,
            message_id: string_at(&answer["ts"], "chat.postMessage", "ts")?,
        })
    }

    async fn edit(
        &self,
        sent: &SentMessage,
        message: &OutgoingMessage,
    ) -> Result<(), PlatformError> {
        let mut body = message_fields(message);
        body.insert("channel".into(), json!(sent.channel_id));
        body.insert("ts".into(), json!(sent.message_id));
        self.call("chat.update", Some(&Value::Object(body)), &[])
            .await
            .map(|_| ())
    }

    /// Slack answers the same group conversation for the same people, so the key is not needed.
    async fn open_conversation(
        &self,
        platform_user_ids: &[String],
        _idempotency_key: &str,
    ) -> Result<String, PlatformError> {
        let user_ids: Vec<&str> = platform_user_ids.iter().map(String::as_str).collect();
        self.open(&user_ids).await
    }

    async fn list_channels(&self) -> Result<Vec<PlatformChannel>, PlatformError> {
        let mut channels = Vec::new();
        let mut cursor = String::new();
        for _ in 0..LIST_MAX_PAGES {
            let mut query = vec![
                ("types", "public_channel,private_channel"),
                ("exclude_archived", "true"),
                ("limit", LIST_PAGE_SIZE),
            ];
            if !cursor.is_empty() {
                query.push(("cursor", cursor.as_str()));
            }
            let page = self.call("conversations.list", None, &query).await?;
            for channel in page["channels"].as_array().into_iter().flatten() {
                channels.push(PlatformChannel {
                    id: string_at(&channel["id"], "conversations.list", "channels[].id")?,
                    name: channel["name"].as_str().unwrap_or_default().to_owned(),
                    is_private: channel["is_private"] == true,
                });
            }
            cursor = page["response_metadata"]["next_cursor"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if cursor.is_empty() {
                return Ok(channels);
            }
        }
        Err(PlatformError::Permanent(format!(
            "conversations.list: more than {LIST_MAX_PAGES} pages"
        )))
    }

    async fn poll(
        &self,
        _cursor: Option<&str>,
        _wait: Duration,
    ) -> Result<InboundBatch, PlatformError> {
        Err(PlatformError::Unsupported(
            "Slack pushes events over HTTP (Events API); it is not polled".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_retry_classes() {
        let delay = Some(Duration::from_secs(3));
        assert_eq!(
            refusal("m", "ratelimited", delay),
            PlatformError::RateLimited { retry_after: delay }
        );
        for error in [
            "invalid_auth",
            "not_authed",
            "account_inactive",
            "token_revoked",
        ] {
            assert!(
                matches!(refusal("m", error, None), PlatformError::Unauthorized(_)),
                "{error}"
            );
        }
        for error in ["channel_not_found", "user_not_found", "not_in_channel"] {
            assert!(
                matches!(refusal("m", error, None), PlatformError::NotFound(_)),
                "{error}"
            );
        }
        assert!(matches!(
            refusal("m", "internal_error", None),
            PlatformError::Temporary(_)
        ));
        assert!(matches!(
            refusal("m", "msg_too_long", None),
            PlatformError::Permanent(_)
        ));
    }

    #[test]
    fn long_text_is_split_into_sections() {
        let text = "é".repeat(SECTION_TEXT_LIMIT + 1);
        let sections = text_sections(&text);
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[1], "é");
        assert!(text_sections("").is_empty());
    }
}
