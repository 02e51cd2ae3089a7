//! The webhooks domain: an organization's webhook endpoints (where its events are delivered),
//! the event names subscribers use (dotted, and the legacy upper-case ones of
//! `/v1/webhook-subscription/`), and the destination guard that keeps deliveries off internal
//! networks.
//!
//! `WebhookService` applies the rules; storage is behind [`WebhookRepository`] and name
//! resolution behind [`HostResolver`]. `signing` makes and checks Standard Webhooks signatures;
//! `delivery` relays outbox events to deliveries and runs them through the durable queue.

pub mod delivery;
pub mod guard;
mod model;
pub mod names;
mod ports;
pub mod samples;
mod service;
pub mod signing;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use delivery::{
    AttemptRecord, DeliveryRepository, DeliverySettings, DeliveryStatus, DeliveryWork, JobEnd,
    Settlement, WebhookDelivery, WebhookRunSummary, WebhookWorker, WebhookWorkerPorts,
};
pub use guard::{AllowList, Refusal};
pub use model::{
    CreatedEndpoint, Delivery, DeliveryOutcome, EndpointRequest, EndpointSecrets,
    NewWebhookEndpoint, SIGNING_SECRET_BYTES, SIGNING_SECRET_PREFIX, SecretText, WebhookEndpoint,
    WebhookId, generate_signing_secret,
};
pub use names::{LEGACY_NAMES, from_dotted_name, from_legacy_name, legacy_name};
pub use ports::{HostResolver, WebhookRepository, WebhookSender};
pub use service::{
    MAX_BEARER_TOKEN, MAX_ENDPOINT_NAME, MAX_OBJECT_IDS, SampleSent, WebhookPorts, WebhookService,
};
