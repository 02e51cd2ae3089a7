//! In-memory ports for tests: a [`WebhookRepository`] and a [`HostResolver`] answering from a
//! table.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};

use crate::{
    Delivery, DeliveryOutcome, EndpointSecrets, HostResolver, NewWebhookEndpoint, WebhookEndpoint,
    WebhookId, WebhookRepository, WebhookSender,
};

/// Endpoints and their secrets in memory, as the Postgres adapter keeps them.
#[derive(Default)]
pub struct InMemoryWebhookRepository {
    rows: Mutex<Vec<(WebhookEndpoint, EndpointSecrets)>>,
}

impl InMemoryWebhookRepository {
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl WebhookRepository for InMemoryWebhookRepository {
    async fn create_endpoint(
        &self,
        org: OrgId,
        new: &NewWebhookEndpoint,
    ) -> Result<WebhookEndpoint, RepoError> {
        let endpoint = WebhookEndpoint {
            id: new.id,
            org_id: org,
            url: new.url.clone(),
            events: new.events.clone(),
            name: new.name.clone(),
            object_ids: new.object_ids.clone(),
            has_bearer_token: new.secrets.bearer_token.is_some(),
            enabled: true,
            disabled_reason: None,
            created_by: Some(new.created_by),
            created_at: new.created_at,
        };
        let mut rows = self.rows.lock().unwrap();
        if rows.iter().any(|(e, _)| e.id == new.id) {
            return Err(RepoError::Conflict {
                constraint: "webhook_endpoints_pkey".into(),
            });
        }
        rows.push((endpoint.clone(), new.secrets.clone()));
        Ok(endpoint)
    }

    async fn get_endpoint(&self, org: OrgId, id: WebhookId) -> Result<WebhookEndpoint, RepoError> {
        self.rows
            .lock()
            .unwrap()
            .iter()
            .find(|(e, _)| e.org_id == org && e.id == id)
            .map(|(e, _)| e.clone())
            .ok_or(RepoError::NotFound)
    }

    async fn list_endpoints(
        &self,
        org: OrgId,
        created_by: Option<UserId>,
        page: PageRequest,
    ) -> Result<Page<WebhookEndpoint>, RepoError> {
        let mut all: Vec<WebhookEndpoint> = self
            .rows
            .lock()
            .unwrap()
            .iter()
            .map(|(e, _)| e)
            .filter(|e| e.org_id == org && created_by.is_none_or(|u| e.created_by == Some(u)))
            .cloned()
            .collect();
        all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        let count = all.len() as u64;
        let results = all
            .into_iter()
            .skip(page.offset as usize)
            .take(page.limit as usize)
            .collect();
        Ok(Page { count, results })
    }

    async fn delete_endpoint(&self, org: OrgId, id: WebhookId) -> Result<(), RepoError> {
        let mut rows = self.rows.lock().unwrap();
        let before = rows.len();
        rows.retain(|(e, _)| !(e.org_id == org && e.id == id));
        if rows.len() == before {
            Err(RepoError::NotFound)
        } else {
            Ok(())
        }
    }

    async fn delete_endpoints_by_url(&self, org: OrgId, url: &str) -> Result<u64, RepoError> {
        let mut rows = self.rows.lock().unwrap();
        let before = rows.len();
        rows.retain(|(e, _)| !(e.org_id == org && e.url == url));
        Ok((before - rows.len()) as u64)
    }

    async fn endpoint_secrets(
        &self,
        org: OrgId,
        id: WebhookId,
    ) -> Result<EndpointSecrets, RepoError> {
        self.rows
            .lock()
            .unwrap()
            .iter()
            .find(|(e, _)| e.org_id == org && e.id == id)
            .map(|(_, s)| s.clone())
            .ok_or(RepoError::NotFound)
    }
}

/// Answers names from a table; any other name does not resolve.
#[derive(Debug, Default)]
pub struct StaticResolver(HashMap<String, Vec<IpAddr>>);

impl StaticResolver {
    pub fn new() -> Self {
        Self::default()
    }

    /// `host` resolves to `ips` (parsed; panics on a malformed address).
    pub fn with(mut self, host: &str, ips: &[&str]) -> Self {
        self.0.insert(
            host.to_ascii_lowercase(),
            ips.iter()
                .map(|ip| ip.parse().expect("an IP address"))
                .collect(),
        );
        self
    }
}

#[async_trait]
impl HostResolver for StaticResolver {
    async fn resolve(&self, host: &str, _port: u16) -> Result<Vec<IpAddr>, String> {
        self.0
            .get(&host.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| format!("{host} is not known"))
    }
}

/// Records every delivery and answers one set outcome (2xx by default).
pub struct RecordingSender {
    sent: Mutex<Vec<Delivery>>,
    outcome: Mutex<DeliveryOutcome>,
}

impl Default for RecordingSender {
    fn default() -> Self {
        RecordingSender {
            sent: Mutex::new(Vec::new()),
            outcome: Mutex::new(DeliveryOutcome::Delivered { status: 200 }),
        }
    }
}

impl RecordingSender {
    pub fn new() -> Self {
        Self::default()
    }

    /// What every later delivery answers.
    pub fn answer(&self, outcome: DeliveryOutcome) {
        *self.outcome.lock().unwrap() = outcome;
    }

    pub fn sent(&self) -> Vec<Delivery> {
        self.sent.lock().unwrap().clone()
    }
}

#[async_trait]
impl WebhookSender for RecordingSender {
    async fn send(&self, delivery: &Delivery) -> DeliveryOutcome {
        self.sent.lock().unwrap().push(delivery.clone());
        self.outcome.lock().unwrap().clone()
    }
}
