//! `/v1/webhooks/`: an organization's webhook endpoints; `/v1/webhook-subscription/`: the legacy
//! form of the same (admins only, upper-case event names). Rules in
//! `teamcomm_webhooks::WebhookService`. Samples are delivered at once through the webhooks
//! sender (`teamcomm-webhook-http`); real events are delivered by the webhook worker
//! (`teamcomm_webhooks::delivery`), whose deliveries, re-enabling and replays are here too.

use actix_web::{HttpResponse, delete, get, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::WireEnum;
use teamcomm_webhooks::{
    CreatedEndpoint, DeliveryOutcome, EndpointRequest, SampleSent, WebhookDelivery,
    WebhookEndpoint, WebhookId, legacy_name,
};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::JsonBody;
use crate::paging::{ListEnvelope, ListQuery, NoFilters, PageParams};
use crate::state::AppState;
use crate::views::iso;

/// A webhook endpoint. Its signing secret and bearer token are never shown again.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookView {
    pub id: String,
    pub url: String,
    /// Dotted event names (docs/events.md).
    pub events: Vec<String>,
    pub name: String,
    /// Check-ins or forms whose events alone are delivered; empty: all.
    pub object_ids: Vec<String>,
    /// A bearer token is sent as `X-BEARER` with each delivery.
    pub has_bearer_token: bool,
    pub enabled: bool,
    /// Why deliveries stopped, when `enabled` is false.
    pub disabled_reason: Option<String>,
    pub created_at: String,
}

impl From<&WebhookEndpoint> for WebhookView {
    fn from(e: &WebhookEndpoint) -> Self {
        WebhookView {
            id: e.id.to_string(),
            url: e.url.clone(),
            events: e.events.iter().map(|t| t.as_str().to_owned()).collect(),
            name: e.name.clone(),
            object_ids: e.object_ids.iter().map(Uuid::to_string).collect(),
            has_bearer_token: e.has_bearer_token,
            enabled: e.enabled,
            disabled_reason: e.disabled_reason.clone(),
            created_at: iso(e.created_at),
        }
    }
}

/// What a sample delivery did.
#[derive(Debug, Serialize, ToSchema)]
pub struct SampleView {
    /// `sent` when the receiver answered 2xx, else `failed`.
    #[schema(example = "sent")]
    pub status: &'static str,
    /// The dotted event type of the sample.
    pub event: String,
    /// What happened, for a person: the receiver's status, or why nothing was delivered.
    pub message: String,
}

impl From<&SampleSent> for SampleView {
    fn from(s: &SampleSent) -> Self {
        let event = s.event.as_str().to_owned();
        let (status, message) = match &s.outcome {
            DeliveryOutcome::Delivered { status } => (
                "sent",
                format!("The sample {event} event was delivered (HTTP {status})."),
            ),
            DeliveryOutcome::Gone => ("failed", "The receiver answered 410 Gone.".to_owned()),
            DeliveryOutcome::Failed { error, .. } => (
                "failed",
                format!("The sample could not be delivered: {error}."),
            ),
            DeliveryOutcome::Refused(refusal) => (
                "failed",
                format!("The sample was not sent: {}", refusal.message()),
            ),
        };
        SampleView {
            status,
            event,
            message,
        }
    }
}

/// A created endpoint with its signing secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedWebhookView {
    #[serde(flatten)]
    pub endpoint: WebhookView,
    /// The Standard Webhooks signing secret (`whsec_` + base64): deliveries carry
    /// `webhook-id`, `webhook-timestamp` and `webhook-signature` made with it. Shown only here.
    pub secret: String,
    /// The sample delivered at creation, with `immediate_sample_event: true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<SampleView>,
}

impl From<&CreatedEndpoint> for CreatedWebhookView {
    fn from(c: &CreatedEndpoint) -> Self {
        CreatedWebhookView {
            endpoint: WebhookView::from(&c.endpoint),
            secret: c.signing_secret.expose().to_owned(),
            sample: c.sample.as_ref().map(SampleView::from),
        }
    }
}

/// Body of `POST /v1/webhooks/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookBody {
    /// Receives the payloads: `https://` to a public address (plain `http://` and internal
    /// addresses only for hosts in `TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS`).
    #[schema(
        example = "https://hooks.example.com/teamcomm",
        min_length = 1,
        pattern = r"\S"
    )]
    url: String,
    /// Dotted event names, at least one (docs/events.md).
    #[schema(example = json!(["kudos.posted"]))]
    events: Vec<String>,
    /// Descriptive name.
    #[schema(max_length = 255)]
    name: Option<String>,
    /// Sent as `X-BEARER` with each delivery; printable ASCII, at most 1024 characters.
    bearer_token: Option<String>,
    /// Check-in or form UUIDs whose events alone are delivered.
    object_ids: Option<Vec<String>>,
    /// True delivers a sample of the first event (in the order of docs/events.md) right after
    /// creation; the 201 then carries `sample`.
    immediate_sample_event: Option<bool>,
}

#[utoipa::path(
    tag = "webhooks",
    request_body = CreateWebhookBody,
    responses(
        (status = 201, body = CreatedWebhookView),
        (status = 400, description = "`params_validation_error`: an unknown event, a refused destination (`extra.reason` names why)", body = ErrorBody),
        (status = 403, description = "`guest_not_allowed`", body = ErrorBody),
    )
)]
#[post("/v1/webhooks/")]
pub async fn create_webhook(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<CreateWebhookBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let request = EndpointRequest {
        url: b.url,
        events: b.events,
        name: b.name,
        bearer_token: b.bearer_token,
        object_ids: b.object_ids.unwrap_or_default(),
        immediate_sample: b.immediate_sample_event.unwrap_or(false),
    };
    let created = state.webhooks.create(caller.user(), &request).await?;
    Ok(HttpResponse::Created().json(CreatedWebhookView::from(&created)))
}

#[utoipa::path(
    tag = "webhooks",
    params(PageParams),
    responses((status = 200, description = "Newest first; admins see the organization's endpoints, others those they created", body = ListEnvelope<WebhookView>))
)]
#[get("/v1/webhooks/")]
pub async fn list_webhooks(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<NoFilters>,
) -> ApiResult<HttpResponse> {
    let page = state
        .webhooks
        .list(caller.user(), q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(WebhookView::from))))
}

#[utoipa::path(
    tag = "webhooks",
    params(("id" = String, Path)),
    responses((status = 200, body = WebhookView), (status = 404, body = ErrorBody))
)]
#[get("/v1/webhooks/{id}/")]
pub async fn get_webhook(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let endpoint = state.webhooks.get(caller.user(), WebhookId(*id)).await?;
    Ok(HttpResponse::Ok().json(WebhookView::from(&endpoint)))
}

#[utoipa::path(
    tag = "webhooks",
    params(("id" = String, Path)),
    responses((status = 204), (status = 404, description = "another organization's endpoint too", body = ErrorBody))
)]
#[delete("/v1/webhooks/{id}/")]
pub async fn delete_webhook(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    state.webhooks.delete(caller.user(), WebhookId(*id)).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// One event name or a list of them (upper-case or dotted).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
#[schema(example = json!(["FORMS_RESPONSE_CREATED"]))]
pub enum EventNames {
    One(String),
    Many(Vec<String>),
}

impl EventNames {
    fn into_vec(self) -> Vec<String> {
        match self {
            EventNames::One(s) => vec![s],
            EventNames::Many(v) => v,
        }
    }
}

/// One value or a list of them.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// Body of `POST /v1/webhook-subscription/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSubscriptionBody {
    /// As `url` of `POST /v1/webhooks/`.
    #[schema(
        example = "https://hooks.example.com/teamcomm",
        min_length = 1,
        pattern = r"\S"
    )]
    url: String,
    /// Upper-case event names (`FOLLOWUPS_DAILY_FINISHED`, `FORMS_RESPONSE_CREATED`; the table
    /// in docs/events.md); dotted names are accepted too.
    subscriptions: EventNames,
    /// Check-in or form UUIDs whose events alone are delivered.
    subscribed_objects: Option<OneOrMany>,
    #[schema(max_length = 255)]
    name: Option<String>,
    /// Sent as `X-BEARER` with each delivery.
    bearer: Option<String>,
    /// True delivers a sample of the first event right after registration.
    immediate_sample_event: Option<bool>,
}

/// A subscription: the endpoint with its events in both vocabularies.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubscriptionView {
    #[serde(flatten)]
    pub endpoint: WebhookView,
    /// The endpoint's events, upper-case.
    pub subscriptions: Vec<String>,
    /// The signing secret, shown only here (as on `POST /v1/webhooks/`).
    pub secret: String,
    /// The sample delivered at registration, with `immediate_sample_event: true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<SampleView>,
}

#[utoipa::path(
    tag = "webhooks",
    request_body = CreateSubscriptionBody,
    responses(
        (status = 201, body = SubscriptionView),
        (status = 400, description = "`params_validation_error`: an unknown event, a refused destination (`extra.reason` names why)", body = ErrorBody),
        (status = 403, description = "`org_admin_required`", body = ErrorBody),
    )
)]
#[post("/v1/webhook-subscription/")]
pub async fn create_subscription(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<CreateSubscriptionBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let request = EndpointRequest {
        url: b.url,
        events: b.subscriptions.into_vec(),
        name: b.name,
        bearer_token: b.bearer,
        object_ids: b
            .subscribed_objects
            .map(OneOrMany::into_vec)
            .unwrap_or_default(),
        immediate_sample: b.immediate_sample_event.unwrap_or(false),
    };
    let created = state
        .webhooks
        .create_subscription(caller.user(), &request)
        .await?;
    let view = SubscriptionView {
        endpoint: WebhookView::from(&created.endpoint),
        subscriptions: created
            .endpoint
            .events
            .iter()
            .map(|e| legacy_name(*e).to_owned())
            .collect(),
        secret: created.signing_secret.expose().to_owned(),
        sample: created.sample.as_ref().map(SampleView::from),
    };
    Ok(HttpResponse::Created().json(view))
}

/// Body of `DELETE /v1/webhook-subscription/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteSubscriptionBody {
    /// The URL subscribed: every endpoint of the organization with this URL is deleted.
    #[schema(min_length = 1, pattern = r"\S")]
    url: String,
}

#[utoipa::path(
    tag = "webhooks",
    request_body = DeleteSubscriptionBody,
    responses(
        (status = 204),
        (status = 403, description = "`org_admin_required`", body = ErrorBody),
        (status = 404, description = "no endpoint of the organization has this URL", body = ErrorBody),
    )
)]
#[delete("/v1/webhook-subscription/")]
pub async fn delete_subscription(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<DeleteSubscriptionBody>,
) -> ApiResult<HttpResponse> {
    state
        .webhooks
        .delete_subscription(caller.user(), &body.0.url)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Body of `POST /v1/webhooks/{id}/sample/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleBody {
    /// The dotted event type of the sample (docs/events.md), not necessarily one the endpoint
    /// subscribes to.
    #[schema(example = "kudos.posted", min_length = 1)]
    event: String,
}

#[utoipa::path(
    tag = "webhooks",
    params(("id" = String, Path)),
    request_body = SampleBody,
    responses(
        (status = 200, description = "Delivered now, signed like any delivery (`webhook-id` starts with `sample_`); `status` says whether the receiver took it", body = SampleView),
        (status = 400, description = "`params_validation_error`: an unknown event", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/webhooks/{id}/sample/")]
pub async fn send_sample(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<SampleBody>,
) -> ApiResult<HttpResponse> {
    let sent = state
        .webhooks
        .send_sample(caller.user(), WebhookId(*id), &body.0.event)
        .await?;
    Ok(HttpResponse::Ok().json(SampleView::from(&sent)))
}

/// Body of `POST /v1/webhook-subscription/sample/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionSampleBody {
    /// Upper-case (or dotted) event type.
    #[schema(example = "KUDOS_POSTED", min_length = 1)]
    event_type: String,
    /// The URL of one of the organization's subscriptions.
    #[schema(min_length = 1, pattern = r"\S")]
    url: String,
}

#[utoipa::path(
    tag = "webhooks",
    request_body = SubscriptionSampleBody,
    responses(
        (status = 200, body = SampleView),
        (status = 400, description = "`params_validation_error`: an unknown event", body = ErrorBody),
        (status = 403, description = "`org_admin_required`", body = ErrorBody),
        (status = 404, description = "no subscription of the organization has this URL", body = ErrorBody),
    )
)]
#[post("/v1/webhook-subscription/sample/")]
pub async fn send_subscription_sample(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<SubscriptionSampleBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let sent = state
        .webhooks
        .send_subscription_sample(caller.user(), &b.url, &b.event_type)
        .await?;
    Ok(HttpResponse::Ok().json(SampleView::from(&sent)))
}

/// One event's delivery to the endpoint, with its outcome so far.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookDeliveryView {
    pub id: String,
    /// The event's id: the delivery's `webhook-id` and `event_id` of its payload.
    pub event_id: String,
    /// The dotted event type.
    #[schema(example = "kudos.posted")]
    pub event: String,
    /// `pending` (waiting for its next attempt), `delivered`, or `failed` (out of attempts,
    /// answered 410, or its endpoint was disabled; `POST /v1/webhooks/{id}/replay/` sends it
    /// again).
    #[schema(example = "delivered")]
    pub status: &'static str,
    /// Attempts made so far.
    pub attempts: u32,
    /// The receiver's HTTP status on the last attempt; null when none answered.
    pub last_status_code: Option<u16>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<String>,
    pub delivered_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&WebhookDelivery> for WebhookDeliveryView {
    fn from(d: &WebhookDelivery) -> Self {
        WebhookDeliveryView {
            id: d.id.to_string(),
            event_id: d.event_id.to_string(),
            event: d.event_type.as_str().to_owned(),
            status: d.status.as_str(),
            attempts: d.attempts,
            last_status_code: d.last_status_code,
            last_error: d.last_error.clone(),
            next_attempt_at: d.next_attempt_at.map(iso),
            delivered_at: d.delivered_at.map(iso),
            created_at: iso(d.created_at),
            updated_at: iso(d.updated_at),
        }
    }
}

#[utoipa::path(
    tag = "webhooks",
    params(("id" = String, Path), PageParams),
    responses(
        (status = 200, description = "The endpoint's deliveries of real events, newest first, with their outcome", body = ListEnvelope<WebhookDeliveryView>),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/v1/webhooks/{id}/deliveries/")]
pub async fn list_deliveries(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    q: ListQuery<NoFilters>,
) -> ApiResult<HttpResponse> {
    let page = state
        .webhooks
        .deliveries(caller.user(), WebhookId(*id), q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(WebhookDeliveryView::from))))
}

#[utoipa::path(
    tag = "webhooks",
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "Enabled again (`disabled_reason` cleared): new events are delivered; failed deliveries wait for a replay", body = WebhookView),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/webhooks/{id}/enable/")]
pub async fn enable_webhook(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let endpoint = state.webhooks.enable(caller.user(), WebhookId(*id)).await?;
    Ok(HttpResponse::Ok().json(WebhookView::from(&endpoint)))
}

/// What a replay queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReplayView {
    /// Failed deliveries queued again, each with a full set of attempts.
    pub replayed: u64,
}

#[utoipa::path(
    tag = "webhooks",
    params(("id" = String, Path)),
    responses(
        (status = 202, description = "The endpoint's failed deliveries are queued again", body = ReplayView),
        (status = 400, description = "`params_validation_error` on `enabled`: the endpoint is disabled (enable it first)", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/webhooks/{id}/replay/")]
pub async fn replay_webhook(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let replayed = state.webhooks.replay(caller.user(), WebhookId(*id)).await?;
    Ok(HttpResponse::Accepted().json(ReplayView { replayed }))
}
