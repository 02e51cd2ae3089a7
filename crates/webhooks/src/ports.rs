//! What the webhooks domain needs from outside: storage of endpoints, and name resolution for
//! the destination guard. Every storage read and write takes the `OrgId`; an endpoint of another
//! organization is `RepoError::NotFound`.

use std::net::IpAddr;

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};

use crate::{
    Delivery, DeliveryOutcome, EndpointSecrets, NewWebhookEndpoint, WebhookEndpoint, WebhookId,
};

/// Webhook endpoints. Secrets are stored so that they can be sent (sealed, not hashed) and are
/// read only by [`WebhookRepository::endpoint_secrets`].
#[async_trait]
pub trait WebhookRepository: Send + Sync + 'static {
    async fn create_endpoint(
        &self,
        org: OrgId,
        new: &NewWebhookEndpoint,
    ) -> Result<WebhookEndpoint, RepoError>;
    async fn get_endpoint(&self, org: OrgId, id: WebhookId) -> Result<WebhookEndpoint, RepoError>;
    /// Newest first; only those `created_by` made when it is given.
    async fn list_endpoints(
        &self,
        org: OrgId,
        created_by: Option<UserId>,
        page: PageRequest,
    ) -> Result<Page<WebhookEndpoint>, RepoError>;
    /// How many endpoints the organization has.
    async fn count_endpoints(&self, org: OrgId) -> Result<u64, RepoError>;
    /// `NotFound` when the organization has no such endpoint.
    async fn delete_endpoint(&self, org: OrgId, id: WebhookId) -> Result<(), RepoError>;
    /// Deletes the organization's endpoints of exactly this URL; answers how many.
    async fn delete_endpoints_by_url(&self, org: OrgId, url: &str) -> Result<u64, RepoError>;
    /// The endpoint's signing secret and bearer token, for a delivery.
    async fn endpoint_secrets(
        &self,
        org: OrgId,
        id: WebhookId,
    ) -> Result<EndpointSecrets, RepoError>;
}

/// A host name's addresses (DNS in production).
#[async_trait]
pub trait HostResolver: Send + Sync + 'static {
    /// The addresses `host` resolves to for a connection on `port`; empty or an error (its
    /// reason) when it does not resolve.
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, String>;
}

/// Sends one delivery over HTTP (an adapter: `teamcomm-webhook-http`). It must connect only to
/// an address the destination guard accepted, resolving the host once, follow no redirect and
/// read a bounded part of the answer within a short timeout.
#[async_trait]
pub trait WebhookSender: Send + Sync + 'static {
    async fn send(&self, delivery: &Delivery) -> DeliveryOutcome;
}
