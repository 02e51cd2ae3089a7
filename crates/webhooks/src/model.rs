//! Webhook endpoints and what the ports exchange.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;
use teamcomm_kernel::{EventType, OrgId, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

/// A webhook endpoint's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WebhookId(pub Uuid);

impl WebhookId {
    /// A fresh, time-ordered id.
    pub fn new() -> Self {
        WebhookId(Uuid::now_v7())
    }
}

impl Default for WebhookId {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for WebhookId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Where an organization's events are delivered. Its secrets are not part of it: they are read
/// only for a delivery ([`crate::WebhookRepository::endpoint_secrets`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEndpoint {
    pub id: WebhookId,
    pub org_id: OrgId,
    /// Normalized (WHATWG URL rules), checked by the destination guard.
    pub url: String,
    /// Distinct, in the order of the spec's event list.
    pub events: Vec<EventType>,
    /// `""` when none was given.
    pub name: String,
    /// Check-ins or forms whose events alone are delivered; empty: all.
    pub object_ids: Vec<Uuid>,
    /// A bearer token is sent as `X-BEARER` with each delivery.
    pub has_bearer_token: bool,
    pub enabled: bool,
    /// Why deliveries stopped, when `enabled` is false.
    pub disabled_reason: Option<String>,
    /// Who created it; null once that person is deleted.
    pub created_by: Option<UserId>,
    pub created_at: OffsetDateTime,
}

/// A plaintext secret of an endpoint; `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(String);

impl SecretText {
    pub fn new(value: impl Into<String>) -> Self {
        SecretText(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretText(..)")
    }
}

/// Random bytes in a signing secret (Standard Webhooks: 24 to 64).
pub const SIGNING_SECRET_BYTES: usize = 32;
/// The prefix of Standard Webhooks symmetric secrets.
pub const SIGNING_SECRET_PREFIX: &str = "whsec_";

/// A fresh signing secret: `whsec_` and the standard base64 of [`SIGNING_SECRET_BYTES`] random
/// bytes (the form Standard Webhooks libraries take).
pub fn generate_signing_secret() -> SecretText {
    let mut bytes = [0u8; SIGNING_SECRET_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    SecretText(format!("{SIGNING_SECRET_PREFIX}{}", STANDARD.encode(bytes)))
}

/// What a delivery needs and no read shows: the signing secret and the bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointSecrets {
    pub signing_secret: SecretText,
    pub bearer_token: Option<SecretText>,
}

/// An endpoint to store, checked by [`crate::WebhookService`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWebhookEndpoint {
    pub id: WebhookId,
    pub url: String,
    pub events: Vec<EventType>,
    pub name: String,
    pub object_ids: Vec<Uuid>,
    pub secrets: EndpointSecrets,
    pub created_by: UserId,
    pub created_at: OffsetDateTime,
}

/// A created endpoint and its signing secret, shown this once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedEndpoint {
    pub endpoint: WebhookEndpoint,
    pub signing_secret: SecretText,
    /// The sample of the endpoint's first event, when the caller asked for one.
    pub sample: Option<crate::SampleSent>,
}

/// What a caller asks to create, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointRequest {
    pub url: String,
    /// Event names: dotted on `/v1/webhooks/`; upper-case (or dotted) on the legacy form.
    pub events: Vec<String>,
    pub name: Option<String>,
    pub bearer_token: Option<String>,
    pub object_ids: Vec<String>,
    /// Deliver a sample of the first event right after creation.
    pub immediate_sample: bool,
}

/// One signed POST to an endpoint: what a [`crate::WebhookSender`] sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub url: String,
    /// `webhook-id`: the event id, the same on every attempt (receivers deduplicate on it).
    pub message_id: String,
    /// `webhook-timestamp`: the attempt's time, unix seconds.
    pub timestamp: i64,
    /// The JSON body, signed as sent.
    pub body: Vec<u8>,
    /// Signs the request (`webhook-signature`). An endpoint always has one; a workflow's
    /// `call_webhook` has none: no secret was agreed with that receiver, so it goes unsigned.
    pub signing_secret: Option<SecretText>,
    /// Sent as `X-BEARER`.
    pub bearer_token: Option<SecretText>,
    /// Sent as `X-Webhook-Secret` (an agent's webhook: the secret it registered).
    pub webhook_secret: Option<SecretText>,
}

/// What became of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// A 2xx answer.
    Delivered { status: u16 },
    /// 410 Gone: the receiver asks to be forgotten (the endpoint is disabled at once).
    Gone,
    /// Worth retrying: a 3xx (redirects are not followed), another 4xx or 5xx, a timeout, a
    /// connection failure. `retry_after` is the receiver's `Retry-After` in seconds.
    Failed {
        status: Option<u16>,
        retry_after: Option<u64>,
        error: String,
    },
    /// The destination guard refused the address the host resolved to at send time (DNS
    /// rebinding, or a URL stored before a rule existed); nothing was sent.
    Refused(crate::Refusal),
}
