//! The agent doors (the vendor CLI's `agent ...` commands): reports, health, messages left for
//! agents, e-mail an agent sends, and the registration of an agent without a credential with
//! the claim by which a person takes ownership of its organization.
//!
//! Every door but e-mail takes an agent key as well as a person's API key or CLI session
//! ([`AgentActor`]); the answers' ids and timestamps are strings (the CLI's tables print them
//! raw and crash on integers).

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use teamcomm_agents::{
    AgentHealth, AgentMessage, AgentReport, HealthCheck, HookInput, MessageFilter, MessageInput,
    RegisterInput, Registration, ReportInput,
};
use teamcomm_messaging::AgentEmailRequest;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, PrimitiveDateTime};
use utoipa::{IntoParams, ToSchema};

use crate::auth::{AgentActor, AgentDoorPerson, SessionUser};
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{JsonBody, Query};
use crate::state::AppState;
use crate::views::iso;

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
        (status = 403, description = "`insufficient_scope`: a registered agent's key (an e-mail's sender is a person)", body = ErrorBody),
        (status = 429, description = "The agent budget of the hour is spent (`Retry-After`)", body = ErrorBody),
    )
)]
#[post("/v1/agent-email/send/")]
pub async fn send_agent_email(
    state: web::Data<AppState>,
    // An e-mail's sender is a person: a registered agent's key has none.
    caller: AgentDoorPerson,
    body: JsonBody<AgentEmailBody>,
) -> ApiResult<HttpResponse> {
    let user = &caller.0;
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
            user,
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

// ---------------------------------------------------------------------------------- views

/// A message left for an agent.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentMessageView {
    pub id: String,
    /// The agent it is for.
    pub agent_name: String,
    /// `text`, `command` or `system`.
    pub message_type: &'static str,
    /// `agent`, `user` or `system`.
    pub sender_type: &'static str,
    pub sender_name: Option<String>,
    pub content: String,
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    /// Taken by the agent (a read mark or a health check).
    pub delivered: bool,
    pub delivered_at: Option<String>,
    pub expires_at: Option<String>,
    pub created_at: String,
}

impl From<AgentMessage> for AgentMessageView {
    fn from(m: AgentMessage) -> Self {
        AgentMessageView {
            id: m.id.to_string(),
            agent_name: m.agent_name,
            message_type: m.message_type.as_str(),
            sender_type: m.sender_type.as_str(),
            sender_name: m.sender_name,
            content: m.content,
            metadata: m.metadata,
            delivered: m.delivered_at.is_some(),
            delivered_at: m.delivered_at.map(iso),
            expires_at: m.expires_at.map(iso),
            created_at: iso(m.created_at),
        }
    }
}

fn message_views(messages: Vec<AgentMessage>) -> Vec<AgentMessageView> {
    messages.into_iter().map(AgentMessageView::from).collect()
}

/// A co-author of a report.
#[derive(Debug, Serialize, ToSchema)]
pub struct CoAuthorView {
    pub uuid: String,
    pub name: String,
}

/// A recorded report, with the messages waiting for its agent.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentReportView {
    pub id: String,
    pub agent_name: String,
    pub content: String,
    #[schema(value_type = Object)]
    pub structured: Map<String, Value>,
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    pub is_milestone: bool,
    pub co_authors: Vec<CoAuthorView>,
    pub created_at: String,
    /// Where the report is shown: `null` (the service has no web application pages).
    pub url: Option<String>,
    /// Messages waiting for the agent, oldest first (not marked delivered: the agent claims
    /// them with `PATCH /v1/agent-messages/read/`).
    pub pending_messages: Vec<AgentMessageView>,
}

impl AgentReportView {
    fn new(r: AgentReport, pending: Vec<AgentMessage>) -> Self {
        AgentReportView {
            id: r.id.to_string(),
            agent_name: r.agent_name,
            content: r.content,
            structured: r.structured,
            metadata: r.metadata,
            is_milestone: r.is_milestone,
            co_authors: r
                .co_authors
                .into_iter()
                .map(|c| CoAuthorView {
                    uuid: c.id.0.to_string(),
                    name: c.name,
                })
                .collect(),
            created_at: iso(r.created_at),
            url: None,
            pending_messages: message_views(pending),
        }
    }
}

/// One health check.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthEntryView {
    pub timestamp: String,
    /// `healthy` or `unhealthy`.
    pub status: &'static str,
    pub message: Option<String>,
}

impl From<HealthCheck> for HealthEntryView {
    fn from(c: HealthCheck) -> Self {
        HealthEntryView {
            timestamp: iso(c.created_at),
            status: c.status(),
            message: c.message,
        }
    }
}

/// An agent's health: every value a string or `null` but the lists.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentHealthView {
    pub agent_name: String,
    /// `healthy`, `unhealthy`, or `unknown` before the first check.
    pub status: &'static str,
    /// The last check's message.
    pub message: Option<String>,
    pub last_check: Option<String>,
    /// The last 20 checks, newest first.
    pub history: Vec<HealthEntryView>,
    /// After a posted check: the messages it delivered (marked delivered now); on a read: the
    /// messages waiting (nothing marked).
    pub pending_messages: Vec<AgentMessageView>,
}

impl From<AgentHealth> for AgentHealthView {
    fn from(h: AgentHealth) -> Self {
        let status = h.status();
        AgentHealthView {
            agent_name: h.agent_name,
            status,
            message: h.last.as_ref().and_then(|c| c.message.clone()),
            last_check: h.last.as_ref().map(|c| iso(c.created_at)),
            history: h.history.into_iter().map(HealthEntryView::from).collect(),
            pending_messages: message_views(h.pending_messages),
        }
    }
}

// ---------------------------------------------------------------------------------- reports

/// Body of `POST /v1/agent-reports/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentReportBody {
    /// The reporting agent; at most 128 characters, one line.
    #[schema(min_length = 1, max_length = 128)]
    agent_name: String,
    /// What the agent did; at most 10,000 characters.
    #[schema(min_length = 1, max_length = 10000)]
    content: String,
    /// Structured data (at most 16 KiB of JSON), kept as sent.
    #[serde(default)]
    structured: Option<Map<String, Value>>,
    /// The client's data (repository, branch, PR; at most 16 KiB of JSON), kept as sent.
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    #[serde(default)]
    is_milestone: bool,
    /// E-mails or uuids of active people of the organization (at most 20).
    #[serde(default)]
    #[schema(max_items = 20)]
    co_authors: Vec<String>,
}

#[utoipa::path(
    tag = "agents",
    request_body = AgentReportBody,
    responses(
        (status = 201, description = "Recorded", body = AgentReportView),
        (status = 400, description = "`params_validation_error` (field map: `agent_name`, `content`, `structured`, `metadata`, `co_authors`)", body = ErrorBody),
        (status = 429, description = "`throttled`: the agent budget of the hour is spent (`Retry-After`); `free_plan_daily_limit_exceeded`: a free-plan organization's CLI sessions posted their 50 reports of the UTC day (`Retry-After` up to 00:00 UTC)", body = ErrorBody),
    )
)]
#[post("/v1/agent-reports/")]
pub async fn create_report(
    state: web::Data<AppState>,
    caller: AgentActor,
    body: JsonBody<AgentReportBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let (report, pending) = state
        .agents
        .report(
            &caller.0,
            ReportInput {
                agent_name: b.agent_name,
                content: b.content,
                structured: b.structured,
                metadata: b.metadata,
                is_milestone: b.is_milestone,
                co_authors: b.co_authors,
            },
        )
        .await?;
    Ok(HttpResponse::Created().json(AgentReportView::new(report, pending)))
}

// ---------------------------------------------------------------------------------- health

/// Body of `POST /v1/agent-health/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentHealthBody {
    #[schema(min_length = 1, max_length = 128)]
    agent_name: String,
    /// `true`: healthy; `false`: unhealthy.
    ok: bool,
    /// At most 1,000 characters.
    #[serde(default)]
    message: Option<String>,
}

#[utoipa::path(
    tag = "agents",
    request_body = AgentHealthBody,
    responses(
        (status = 200, description = "The check is kept in the history; the agent's pending messages are marked delivered and answered", body = AgentHealthView),
        (status = 400, description = "`params_validation_error` (field map: `agent_name`, `ok`, `message`)", body = ErrorBody),
    )
)]
#[post("/v1/agent-health/")]
pub async fn post_health(
    state: web::Data<AppState>,
    caller: AgentActor,
    body: JsonBody<AgentHealthBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let health = state
        .agents
        .post_health(&caller.0, &b.agent_name, b.ok, b.message.as_deref())
        .await?;
    Ok(HttpResponse::Ok().json(AgentHealthView::from(health)))
}

/// Query of `GET /v1/agent-health/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AgentHealthQuery {
    /// The agent.
    agent_name: Option<String>,
}

#[utoipa::path(
    tag = "agents",
    params(AgentHealthQuery),
    responses(
        (status = 200, description = "The agent's health and waiting messages (nothing marked)", body = AgentHealthView),
        (status = 400, description = "`params_validation_error` (`agent_name`)", body = ErrorBody),
    )
)]
#[get("/v1/agent-health/")]
pub async fn get_health(
    state: web::Data<AppState>,
    caller: AgentActor,
    q: Query<AgentHealthQuery>,
) -> ApiResult<HttpResponse> {
    get_health_inner(state, caller, q).await
}

#[utoipa::path(
    tag = "agents",
    params(AgentHealthQuery),
    responses(
        (status = 200, description = "The spec's spelling of `GET /v1/agent-health/`", body = AgentHealthView),
        (status = 400, description = "`params_validation_error` (`agent_name`)", body = ErrorBody),
    )
)]
#[get("/v1/agent/health/")]
pub async fn get_health_alias(
    state: web::Data<AppState>,
    caller: AgentActor,
    q: Query<AgentHealthQuery>,
) -> ApiResult<HttpResponse> {
    get_health_inner(state, caller, q).await
}

async fn get_health_inner(
    state: web::Data<AppState>,
    caller: AgentActor,
    q: Query<AgentHealthQuery>,
) -> ApiResult<HttpResponse> {
    let name = q.0.agent_name.unwrap_or_default();
    let health = state.agents.health(&caller.0, &name).await?;
    Ok(HttpResponse::Ok().json(AgentHealthView::from(health)))
}

// ---------------------------------------------------------------------------------- messages

/// Body of `POST /v1/agent-messages/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentMessageBody {
    /// The agent the message is for.
    #[schema(min_length = 1, max_length = 128)]
    agent_name: String,
    /// At most 10,000 characters.
    #[schema(min_length = 1, max_length = 10000)]
    content: String,
    /// `text` (default), `command` or `system`.
    #[serde(default)]
    message_type: Option<String>,
    /// At most 16 KiB of JSON, kept as sent.
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    /// ISO 8601, in the future; without an offset it is UTC. Expired messages are not listed.
    #[serde(default)]
    #[schema(example = "2026-12-01T09:00:00Z")]
    expires_at: Option<String>,
    /// `agent`, `user` or `system`; default: `agent` when `sender_name` is given, else the
    /// caller (`user` with a person's name, `agent` with an agent key's agent).
    #[serde(default)]
    sender_type: Option<String>,
    #[serde(default)]
    #[schema(max_length = 128)]
    sender_name: Option<String>,
}

/// RFC 3339, or an ISO 8601 date and time without an offset (taken as UTC).
fn instant(field: &str, raw: &str) -> Result<OffsetDateTime, teamcomm_kernel::Error> {
    let raw = raw.trim();
    if let Ok(t) = OffsetDateTime::parse(raw, &Rfc3339) {
        return Ok(t);
    }
    let naive = time::macros::format_description!(
        version = 2,
        "[year]-[month]-[day]T[hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    PrimitiveDateTime::parse(raw, naive)
        .map(PrimitiveDateTime::assume_utc)
        .map_err(|_| {
            teamcomm_kernel::Error::invalid_field(
                field,
                "Send an ISO 8601 date and time, such as 2026-12-01T09:00:00Z.",
            )
        })
}

#[utoipa::path(
    tag = "agents",
    request_body = AgentMessageBody,
    responses(
        (status = 201, description = "Left for the agent", body = AgentMessageView),
        (status = 400, description = "`params_validation_error` (field map: `agent_name`, `content`, `message_type`, `metadata`, `expires_at`, `sender_type`, `sender_name`)", body = ErrorBody),
    )
)]
#[post("/v1/agent-messages/")]
pub async fn send_message(
    state: web::Data<AppState>,
    caller: AgentActor,
    body: JsonBody<AgentMessageBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let expires_at = match b.expires_at.as_deref() {
        Some(raw) => Some(instant("expires_at", raw)?),
        None => None,
    };
    let message = state
        .agents
        .send_message(
            &caller.0,
            MessageInput {
                agent_name: b.agent_name,
                content: b.content,
                message_type: b.message_type,
                metadata: b.metadata,
                expires_at,
                sender_type: b.sender_type,
                sender_name: b.sender_name,
            },
        )
        .await?;
    Ok(HttpResponse::Created().json(AgentMessageView::from(message)))
}

/// Query of `GET /v1/agent-messages/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AgentMessagesQuery {
    /// Only messages for this agent.
    agent_name: Option<String>,
    /// `false`: pending only; `true`: delivered only.
    delivered: Option<String>,
}

#[utoipa::path(
    tag = "agents",
    params(AgentMessagesQuery),
    responses(
        (status = 200, description = "A bare array, oldest first (the newest 200); expired messages are left out", body = Vec<AgentMessageView>),
        (status = 400, description = "`params_validation_error` (`agent_name`, `delivered`)", body = ErrorBody),
    )
)]
#[get("/v1/agent-messages/")]
pub async fn list_messages(
    state: web::Data<AppState>,
    caller: AgentActor,
    q: Query<AgentMessagesQuery>,
) -> ApiResult<HttpResponse> {
    let delivered = match q
        .0
        .delivered
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("") => None,
        Some("true" | "1") => Some(true),
        Some("false" | "0") => Some(false),
        Some(_) => {
            return Err(teamcomm_kernel::Error::invalid_field(
                "delivered",
                "Must be true or false.",
            )
            .into());
        }
    };
    let messages = state
        .agents
        .list_messages(
            &caller.0,
            MessageFilter {
                agent_name: q.0.agent_name,
                delivered,
            },
        )
        .await?;
    Ok(HttpResponse::Ok().json(message_views(messages)))
}

/// Body of `PATCH`/`POST /v1/agent-messages/read/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkReadBody {
    /// Ids of messages of the organization (1 to 100).
    #[schema(min_items = 1, max_items = 100, example = json!(["0190a6b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"]))]
    message_ids: Vec<String>,
}

/// How many messages a read mark delivered.
#[derive(Debug, Serialize, ToSchema)]
pub struct MarkReadView {
    /// Pending messages of the organization now delivered (unknown ids, other organizations'
    /// and already delivered ones are not counted).
    pub updated: u64,
}

#[utoipa::path(
    tag = "agents",
    request_body = MarkReadBody,
    responses(
        (status = 200, description = "Marked delivered", body = MarkReadView),
        (status = 400, description = "`params_validation_error` (`message_ids`)", body = ErrorBody),
    )
)]
#[patch("/v1/agent-messages/read/")]
pub async fn mark_read(
    state: web::Data<AppState>,
    caller: AgentActor,
    body: JsonBody<MarkReadBody>,
) -> ApiResult<HttpResponse> {
    mark(state, caller, body).await
}

/// Both spellings of the read mark.
async fn mark(
    state: web::Data<AppState>,
    caller: AgentActor,
    body: JsonBody<MarkReadBody>,
) -> ApiResult<HttpResponse> {
    let updated = state
        .agents
        .mark_read(&caller.0, &body.0.message_ids)
        .await?;
    Ok(HttpResponse::Ok().json(MarkReadView { updated }))
}

#[utoipa::path(
    tag = "agents",
    request_body = MarkReadBody,
    responses(
        (status = 200, description = "The same as `PATCH` (the spec's spelling)", body = MarkReadView),
        (status = 400, description = "`params_validation_error` (`message_ids`)", body = ErrorBody),
    )
)]
#[post("/v1/agent-messages/read/")]
pub async fn mark_read_post(
    state: web::Data<AppState>,
    caller: AgentActor,
    body: JsonBody<MarkReadBody>,
) -> ApiResult<HttpResponse> {
    mark(state, caller, body).await
}

// ---------------------------------------------------------------------------------- registration

/// A registration riddle.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeView {
    pub challenge_id: String,
    /// Contains `session is <N>.`; the answer is `N × 52`.
    pub instruction: String,
    pub expires_at: String,
}

#[utoipa::path(
    tag = "agents",
    responses(
        (status = 200, description = "A riddle to answer within 10 minutes, once", body = ChallengeView),
    )
)]
#[get("/v1/agent/register/challenge/")]
pub async fn register_challenge(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let c = state.agents.challenge().await?;
    Ok(HttpResponse::Ok().json(ChallengeView {
        challenge_id: c.id.to_string(),
        instruction: c.instruction,
        expires_at: iso(c.expires_at),
    }))
}

/// Body of `POST /v1/agent/register/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterBody {
    challenge_id: String,
    answer: i64,
    /// Why the agent registers; at most 500 characters.
    #[schema(min_length = 1, max_length = 500)]
    reason: String,
    /// The organization to create; at most 100 characters.
    #[schema(min_length = 1, max_length = 100)]
    org_name: String,
    #[schema(min_length = 1, max_length = 128)]
    agent_name: String,
    /// IANA name; default `UTC`.
    #[serde(default)]
    timezone: Option<String>,
    /// A person to reach about the organization.
    #[serde(default)]
    contact_email: Option<String>,
}

/// A registered agent: its key (shown once) and the link a person claims the organization with.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegisteredView {
    /// The agent key (`tca_…`), shown once: it works on the agent doors only.
    pub api_key: String,
    /// The agent's address (an identifier; the service reads no mail).
    pub agent_email: String,
    pub agent_name: String,
    pub org_name: String,
    pub org_uuid: String,
    /// `{app_url}/agent/claim/{token}`: a signed-in person posts the token to
    /// `POST /v1/agent/claim/{token}/` within 30 days to own the organization.
    pub claim_url: String,
    pub claim_expires_at: String,
}

#[utoipa::path(
    tag = "agents",
    request_body = RegisterBody,
    responses(
        (status = 201, description = "A free organization pending its claim and an agent key", body = RegisteredView),
        (status = 400, description = "`agent_challenge_expired` (detail says \"expired\"), `agent_challenge_failed` (wrong answer, unknown or used challenge), `params_validation_error` (field map)", body = ErrorBody),
    )
)]
#[post("/v1/agent/register/")]
pub async fn register(
    state: web::Data<AppState>,
    body: JsonBody<RegisterBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let done = state
        .agents
        .register(RegisterInput {
            challenge_id: b.challenge_id,
            answer: b.answer,
            reason: b.reason,
            org_name: b.org_name,
            agent_name: b.agent_name,
            timezone: b.timezone,
            contact_email: b.contact_email,
        })
        .await?;
    let r = done.registration;
    Ok(HttpResponse::Created().json(RegisteredView {
        api_key: done.api_key,
        agent_email: r.agent_email,
        agent_name: r.agent_name,
        org_name: r.org_name,
        org_uuid: r.org_id.0.to_string(),
        claim_url: done.claim_url,
        claim_expires_at: iso(r.claim_expires_at),
    }))
}

/// What a claim link opens.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimPreviewView {
    pub org_uuid: String,
    pub org_name: String,
    pub agent_name: String,
    pub agent_email: String,
    pub reason: String,
    pub created_at: String,
    pub claim_expires_at: String,
}

impl From<Registration> for ClaimPreviewView {
    fn from(r: Registration) -> Self {
        ClaimPreviewView {
            org_uuid: r.org_id.0.to_string(),
            org_name: r.org_name,
            agent_name: r.agent_name,
            agent_email: r.agent_email,
            reason: r.reason,
            created_at: iso(r.created_at),
            claim_expires_at: iso(r.claim_expires_at),
        }
    }
}

#[utoipa::path(
    tag = "agents",
    params(("token" = String, Path, description = "The claim link's token")),
    responses(
        (status = 200, description = "The organization the link claims", body = ClaimPreviewView),
        (status = 404, description = "`agent_claim_link_invalid`: unknown, used or expired link", body = ErrorBody),
    )
)]
#[get("/v1/agent/claim/{token}/preview/")]
pub async fn preview_claim(
    state: web::Data<AppState>,
    token: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let r = state.agents.preview_claim(&token).await?;
    Ok(HttpResponse::Ok().json(ClaimPreviewView::from(r)))
}

/// A claimed organization and its first admin.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimedView {
    pub org_uuid: String,
    pub org_name: String,
    pub agent_name: String,
    /// The person created in the claimed organization (the claimant's e-mail and name).
    pub admin_uuid: String,
    pub admin_email: String,
    pub role: &'static str,
    pub claimed_at: Option<String>,
}

#[utoipa::path(
    tag = "agents",
    params(("token" = String, Path, description = "The claim link's token")),
    responses(
        (status = 200, description = "The signed-in person is now the organization's first admin (a person of it with their e-mail and name); the link is spent", body = ClaimedView),
        (status = 401, description = "No web session", body = ErrorBody),
        (status = 404, description = "`agent_claim_link_invalid`: unknown, used or expired link", body = ErrorBody),
    )
)]
#[post("/v1/agent/claim/{token}/")]
pub async fn claim(
    state: web::Data<AppState>,
    person: SessionUser,
    token: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let claimed = state.agents.claim(&token, &person.0).await?;
    let r = claimed.registration;
    Ok(HttpResponse::Ok().json(ClaimedView {
        org_uuid: r.org_id.0.to_string(),
        org_name: r.org_name,
        agent_name: r.agent_name,
        admin_uuid: claimed.admin.id.0.to_string(),
        admin_email: claimed.admin.email,
        role: claimed.admin.role.as_str(),
        claimed_at: r.claimed_at.map(iso),
    }))
}

/// A fresh claim link.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimLinkView {
    /// `{app_url}/agent/claim/{token}`; the previous link stops working.
    pub claim_url: String,
    pub claim_expires_at: String,
}

#[utoipa::path(
    tag = "agents",
    responses(
        (status = 200, description = "A new claim link for the agent's organization, valid 30 days", body = ClaimLinkView),
        (status = 403, description = "`permission_denied`: not a registered agent's key", body = ErrorBody),
        (status = 409, description = "`agent_organization_claimed`: the organization is already claimed", body = ErrorBody),
    )
)]
#[post("/v1/agent/claim-token/")]
pub async fn renew_claim(
    state: web::Data<AppState>,
    caller: AgentActor,
) -> ApiResult<HttpResponse> {
    let (claim_url, expires_at) = state.agents.renew_claim(&caller.0).await?;
    Ok(HttpResponse::Ok().json(ClaimLinkView {
        claim_url,
        claim_expires_at: iso(expires_at),
    }))
}

// ---------------------------------------------------------------------------------- webhook

/// Body of `POST /v1/agent-webhook/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentWebhookBody {
    #[schema(min_length = 1, max_length = 128)]
    agent_name: String,
    /// HTTPS, not an internal address (the webhook destination guard).
    #[schema(
        min_length = 1,
        pattern = r"\S",
        example = "https://agent.example.com/inbox"
    )]
    webhook_url: String,
    /// Sent back as `X-Webhook-Secret` with each push; printable ASCII, at most 1,024.
    #[serde(default)]
    #[schema(max_length = 1024)]
    webhook_secret: Option<String>,
}

/// An agent's webhook (the secret is never shown).
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentWebhookView {
    pub agent_name: String,
    pub webhook_url: String,
    pub has_secret: bool,
}

#[utoipa::path(
    tag = "agents",
    request_body = AgentWebhookBody,
    responses(
        (status = 200, description = "Set (or replaced): messages left for the agent from now on are pushed there as `{event: \"agent.message\", agent_name, message}`, with `X-Webhook-Secret`", body = AgentWebhookView),
        (status = 400, description = "`params_validation_error` (field map: `agent_name`, `webhook_url` naming the guard's reason, `webhook_secret`)", body = ErrorBody),
    )
)]
#[post("/v1/agent-webhook/")]
pub async fn set_webhook(
    state: web::Data<AppState>,
    caller: AgentActor,
    body: JsonBody<AgentWebhookBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let hook = state
        .agents
        .set_webhook(
            &caller.0,
            HookInput {
                agent_name: b.agent_name,
                webhook_url: b.webhook_url,
                webhook_secret: b.webhook_secret,
            },
        )
        .await?;
    Ok(HttpResponse::Ok().json(AgentWebhookView {
        has_secret: hook.secret.is_some(),
        agent_name: hook.agent_name,
        webhook_url: hook.url,
    }))
}

/// Body of `DELETE /v1/agent-webhook/` (the CLI sends a JSON body).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentWebhookDeleteBody {
    #[schema(min_length = 1, max_length = 128)]
    agent_name: String,
}

/// What a removal says.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentWebhookRemovedView {
    pub detail: String,
}

#[utoipa::path(
    tag = "agents",
    request_body = AgentWebhookDeleteBody,
    responses(
        (status = 200, description = "Removed: messages are no longer pushed", body = AgentWebhookRemovedView),
        (status = 400, description = "`params_validation_error` (`agent_name`)", body = ErrorBody),
        (status = 404, description = "`not_found`: the agent has no webhook", body = ErrorBody),
    )
)]
#[delete("/v1/agent-webhook/")]
pub async fn delete_webhook(
    state: web::Data<AppState>,
    caller: AgentActor,
    body: JsonBody<AgentWebhookDeleteBody>,
) -> ApiResult<HttpResponse> {
    let name = state
        .agents
        .delete_webhook(&caller.0, &body.0.agent_name)
        .await?;
    Ok(HttpResponse::Ok().json(AgentWebhookRemovedView {
        detail: format!("Webhook of {name} removed."),
    }))
}
