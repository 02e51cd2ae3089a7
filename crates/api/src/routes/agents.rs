//! The agent doors (the vendor CLI's `agent ...` commands). For now: e-mail an agent sends.

use actix_web::{HttpResponse, post, web};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use teamcomm_messaging::AgentEmailRequest;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::JsonBody;
use crate::state::AppState;

/// Body of `POST /v1/agent-email/send/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentEmailBody {
    /// The agent sending it; one line.
    #[schema(min_length = 1, max_length = 100)]
    agent_name: String,
    /// Addresses; those of active people of the organization get the e-mail, the others are
    /// counted in `total_recipients` and skipped.
    #[schema(min_items = 1, max_items = 100, example = json!(["mia@example.com"]))]
    to: Vec<String>,
    /// One line.
    #[schema(min_length = 1, max_length = 255)]
    subject: String,
    /// HTML (sent with a plain-text alternative made from it), or plain text; at most 256 KiB.
    #[schema(min_length = 1)]
    body_html: String,
    /// The client's own data; accepted and not kept.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "parsed so it must be an object; not kept (decisions §52)"
    )]
    metadata: Option<Map<String, Value>>,
}

/// What an agent e-mail queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentEmailView {
    /// E-mails queued: one per distinct address that is an active person of the organization.
    pub sent_count: usize,
    /// Distinct addresses given.
    pub total_recipients: usize,
    /// Where replies go: `null` (the service reads no mail).
    pub reply_to: Option<String>,
    /// The queued e-mails (see `GET /v1/emails/{id}/`), in the order addressed.
    pub email_ids: Vec<String>,
}

#[utoipa::path(
    tag = "agents",
    request_body = AgentEmailBody,
    responses(
        (status = 202, description = "Queued through the same queue and SMTP relay as `POST /v1/send-email/`", body = AgentEmailView),
        (status = 400, description = "`params_validation_error` (field map: `agent_name`, `to`, `subject`, `body_html`)", body = ErrorBody),
        (status = 429, description = "The agent budget of the hour is spent (`Retry-After`)", body = ErrorBody),
    )
)]
#[post("/v1/agent-email/send/")]
pub async fn send_agent_email(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<AgentEmailBody>,
) -> ApiResult<HttpResponse> {
    let AgentEmailBody {
        agent_name,
        to,
        subject,
        body_html,
        ..
    } = body.0;
    let queued = state
        .emails
        .send_agent_email(
            caller.user(),
            AgentEmailRequest {
                agent_name,
                to,
                subject,
                body_html,
            },
        )
        .await?;
    Ok(HttpResponse::Accepted().json(AgentEmailView {
        sent_count: queued.sent_count,
        total_recipients: queued.total_recipients,
        reply_to: queued.reply_to,
        email_ids: queued.email_ids.iter().map(ToString::to_string).collect(),
    }))
}
