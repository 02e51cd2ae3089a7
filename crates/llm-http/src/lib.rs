//! The assistant's [`LanguageModel`] over HTTP: `POST {base}/chat/completions` in the OpenAI
//! wire format (`{model, messages: [{role, content}]}` → `choices[0].message.content`), which
//! OpenAI, Azure-style gateways, vLLM, Ollama, llama.cpp and LiteLLM all serve.
//!
//! - The key, when set, goes as `Authorization: Bearer <key>`; it is never logged.
//! - One request per question, no retries (the person asks again); a whole-request time limit
//!   ([`LlmSettings::timeout`]) and a connect limit; answers over [`MAX_ANSWER_BYTES`] are
//!   refused.
//! - An HTTP error status is [`ModelError::Status`] (its body's `error.message`, cut, for the
//!   log), a timeout [`ModelError::Timeout`], no connection [`ModelError::Unreachable`],
//!   anything that is not a completion [`ModelError::Malformed`].

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use teamcomm_assistant::{Completion, CompletionRequest, LanguageModel, ModelError};

/// The largest answer read, in bytes.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Where the model is and how long it may take.
#[derive(Clone)]
pub struct LlmSettings {
    /// The API's base URL, `…/v1` for OpenAI (`/chat/completions` is appended).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The whole request, connect to last byte.
    pub timeout: Duration,
    pub connect_timeout: Duration,
}

impl std::fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The HTTP adapter.
pub struct HttpLanguageModel {
    client: reqwest::Client,
    endpoint: String,
    settings: LlmSettings,
}

impl HttpLanguageModel {
    pub fn new(settings: LlmSettings) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .connect_timeout(settings.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(HttpLanguageModel {
            endpoint: format!(
                "{}/chat/completions",
                settings.base_url.trim_end_matches('/')
            ),
            client,
            settings,
        })
    }
}

#[derive(Deserialize)]
struct Answer {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
}

fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// What an error body says (`{"error": {"message": …}}`, or the text), cut.
fn error_detail(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .map_or_else(|| cut(&text, 200), |m| cut(&m, 200))
}

fn transport(e: &reqwest::Error) -> ModelError {
    if e.is_timeout() {
        ModelError::Timeout
    } else if e.is_connect() {
        ModelError::Unreachable(e.to_string())
    } else {
        ModelError::Malformed(e.to_string())
    }
}

#[async_trait]
impl LanguageModel for HttpLanguageModel {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, ModelError> {
        let messages: Vec<serde_json::Value> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        let mut req = self
            .client
            .post(&self.endpoint)
            .header("Accept", "application/json")
            .json(&json!({"model": self.settings.model, "messages": messages}));
        if let Some(key) = &self.settings.api_key {
            req = req.bearer_auth(key);
        }
        let outcome = async {
            let mut res = req.send().await.map_err(|e| transport(&e))?;
            let status = res.status();
            let mut body = Vec::new();
            while let Some(chunk) = res.chunk().await.map_err(|e| transport(&e))? {
                if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(ModelError::Malformed(format!(
                        "answer over {MAX_ANSWER_BYTES} bytes"
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            if !status.is_success() {
                return Err(ModelError::Status {
                    status: status.as_u16(),
                    detail: error_detail(&body),
                });
            }
            let answer: Answer = serde_json::from_slice(&body)
                .map_err(|e| ModelError::Malformed(format!("not a chat completion: {e}")))?;
            answer
                .choices
                .into_iter()
                .next()
                .and_then(|c| c.message.content)
                .map(|content| Completion { content })
                .ok_or_else(|| ModelError::Malformed("no choice with content".into()))
        }
        .await;
        if let Err(e) = &outcome {
            tracing::warn!(endpoint = %self.endpoint, model = %self.settings.model, error = %e, "language model call failed");
        }
        outcome
    }
}
