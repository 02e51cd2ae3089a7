//! What chat platforms push to us: Slack's Events API and interactivity requests. These are
//! not part of the public API (no `/v1/` prefix, no API credential, not in `/v1/openapi.json`):
//! Slack calls them, signed with the organization's Slack app signing secret, which the
//! operator stores with the connection (`PUT /operator/v1/organizations/{uuid}/platform/`,
//! `signing_secret`). The organization is the one in the path: each organization's Slack app
//! is configured with its own request URLs (docs/decisions.md, "Slack events").
//!
//! - `POST /integrations/slack/{uuid}/events/` (Event Subscriptions request URL): answers
//!   `url_verification` with its `challenge`; a person's `message` event goes to
//!   [`AppState::take_inbound`], as the Matrix reply loop's events do.
//! - `POST /integrations/slack/{uuid}/interactivity/` (Interactivity request URL): each
//!   `block_actions` button becomes a click for the same intake.
//!
//! Both answer Slack as it expects (200, an empty body or the challenge). Refusals are our
//! JSON error envelope: 401 `credential_absent` without the signature headers,
//! `credential_malformed` when they are not of Slack's form, `invalid_credentials` for a wrong
//! or stale (over 5 minutes) signature; 404 `not_found` when the organization has no Slack
//! connection with a signing secret; 400 `parse_error` for a signed body Slack would not send;
//! a server-side failure is a 5xx, so Slack sends the event again. An event is taken once: a
//! retry (same `event_id`, `X-Slack-Retry-Num`) of one taken by this server within the hour is
//! acknowledged without being handed over again, and the check-in engine takes a message once
//! in any case (a round remembers the last reply it took).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use actix_web::{HttpRequest, HttpResponse, post, web};
use serde_json::json;
use teamcomm_chat::slack_events::{
    SignatureError, SlackEventRequest, parse_event_body, parse_interaction_body, verify_signature,
};
use teamcomm_kernel::{Error, ErrorCode, OrgId};
use teamcomm_messaging::platform::{InboundEvent, PlatformKind};

use crate::error::ApiResult;
use crate::state::AppState;

/// Registers the inbound routes (outside the route table: they are not in the API document).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(slack_events).service(slack_interactivity);
}

/// How long a taken event's id is remembered (Slack retries within minutes).
const REMEMBERED_FOR: Duration = Duration::from_secs(60 * 60);
/// Past this many remembered ids, the expired ones are forgotten at the next insert.
const PRUNE_ABOVE: usize = 10_000;

/// The Slack events this server took lately, by organization and `event_id`.
static TAKEN: LazyLock<Mutex<HashMap<(OrgId, String), Instant>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn already_taken(key: &(OrgId, String)) -> bool {
    let taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    taken
        .get(key)
        .is_some_and(|at| at.elapsed() < REMEMBERED_FOR)
}

fn remember_taken(key: (OrgId, String)) {
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    if taken.len() > PRUNE_ABOVE {
        taken.retain(|_, at| at.elapsed() < REMEMBERED_FOR);
    }
    taken.insert(key, Instant::now());
}

/// Checks the request's Slack signature against the organization's signing secret.
async fn verify(state: &AppState, org: OrgId, req: &HttpRequest, body: &[u8]) -> Result<(), Error> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let (timestamp, signature) = (
        header("X-Slack-Request-Timestamp"),
        header("X-Slack-Signature"),
    );
    if timestamp.is_none() || signature.is_none() {
        return Err(Error::new(
            ErrorCode::CredentialAbsent,
            "Sign the request with X-Slack-Signature and X-Slack-Request-Timestamp.",
        ));
    }
    let secret = state
        .platforms
        .slack_signing_secret(org)
        .await?
        .ok_or_else(Error::not_found)?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    verify_signature(secret.expose(), timestamp, signature, body, now).map_err(|e| match e {
        SignatureError::Missing | SignatureError::Malformed => Error::new(
            ErrorCode::CredentialMalformed,
            "X-Slack-Signature is v0= and 64 hex digits; X-Slack-Request-Timestamp whole seconds.",
        ),
        SignatureError::Stale | SignatureError::Mismatch => Error::new(
            ErrorCode::InvalidCredentials,
            "The request's Slack signature is wrong or too old.",
        ),
    })
}

/// Hands `event` over; a refusal (4xx) is logged and acknowledged (Slack sending it again
/// would be refused again), a server-side failure is answered so that Slack retries.
async fn hand_over(state: &AppState, org: OrgId, event: &InboundEvent) -> Result<(), Error> {
    match state.take_inbound(org, PlatformKind::Slack, event).await {
        Ok(_) => Ok(()),
        Err(e) if e.status() < 500 => {
            tracing::warn!(organization = %org, error = %e, "a Slack event was refused");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn parse_error(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::ParseError, e.to_string())
}

#[post("/integrations/slack/{uuid}/events/")]
pub async fn slack_events(
    state: web::Data<AppState>,
    org: web::Path<OrgId>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let org = *org;
    verify(&state, org, &req, &body).await?;
    match parse_event_body(&body).map_err(parse_error)? {
        SlackEventRequest::UrlVerification { challenge } => {
            Ok(HttpResponse::Ok().json(json!({ "challenge": challenge })))
        }
        SlackEventRequest::Other => Ok(HttpResponse::Ok().finish()),
        SlackEventRequest::Callback {
            event_id, event, ..
        } => {
            let key = (org, event_id);
            if already_taken(&key) {
                let retry = req
                    .headers()
                    .get("X-Slack-Retry-Num")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("-");
                tracing::info!(organization = %org, event_id = %key.1, retry, "a Slack event taken already");
                return Ok(HttpResponse::Ok().finish());
            }
            if let Some(event) = event {
                hand_over(&state, org, &event).await?;
            }
            remember_taken(key);
            Ok(HttpResponse::Ok().finish())
        }
    }
}

#[post("/integrations/slack/{uuid}/interactivity/")]
pub async fn slack_interactivity(
    state: web::Data<AppState>,
    org: web::Path<OrgId>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let org = *org;
    verify(&state, org, &req, &body).await?;
    for click in parse_interaction_body(&body).map_err(parse_error)? {
        hand_over(&state, org, &click).await?;
    }
    Ok(HttpResponse::Ok().finish())
}
