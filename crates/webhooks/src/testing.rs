//! In-memory ports for tests: a [`WebhookRepository`] (also the [`DeliveryRepository`], over
//! an outbox of its own and an [`InMemoryJobQueue`]) and a [`HostResolver`] answering from a
//! table.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::json;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::jobs::{JOB_LEASE, JobKind, JobQueue, NewJob};
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::delivery::subscribed;
use crate::{
    AttemptRecord, DeliveryRepository, DeliveryStatus, DeliveryWork, JobEnd, Settlement,
    WebhookDelivery,
};
use crate::{
    Delivery, DeliveryOutcome, EndpointSecrets, HostResolver, NewWebhookEndpoint, WebhookEndpoint,
    WebhookId, WebhookRepository, WebhookSender,
};

/// Endpoints and their secrets in memory, as the Postgres adapter keeps them.
#[derive(Default)]
pub struct InMemoryWebhookRepository {
    rows: Mutex<Vec<(WebhookEndpoint, EndpointSecrets)>>,
    /// The outbox: each event and when it was relayed.
    events: Mutex<Vec<(Event, Option<OffsetDateTime>)>>,
    deliveries: Mutex<Vec<WebhookDelivery>>,
    queue: InMemoryJobQueue,
}

impl InMemoryWebhookRepository {
    pub fn new() -> Self {
        Self::default()
    }

    /// The queue the relay and replays enqueue on (clones share it).
    pub fn queue(&self) -> InMemoryJobQueue {
        self.queue.clone()
    }

    /// Writes `events` to the outbox, as a change's repository does.
    pub fn record_events(&self, events: &[Event]) {
        let mut held = self.events.lock().unwrap();
        held.extend(events.iter().map(|e| (e.clone(), None)));
    }

    pub fn deliveries(&self) -> Vec<WebhookDelivery> {
        self.deliveries.lock().unwrap().clone()
    }

    fn job(org: OrgId, delivery: Uuid, now: OffsetDateTime, max_attempts: u32) -> NewJob {
        NewJob {
            id: Uuid::now_v7(),
            org_id: org,
            kind: JobKind::WebhookDelivery,
            payload: json!({"delivery_id": delivery.to_string()}),
            run_at: now,
            max_attempts,
        }
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

    async fn count_endpoints(&self, org: OrgId) -> Result<u64, RepoError> {
        let rows = self.rows.lock().unwrap();
        Ok(rows.iter().filter(|(e, _)| e.org_id == org).count() as u64)
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

#[async_trait]
impl DeliveryRepository for InMemoryWebhookRepository {
    async fn relay(
        &self,
        limit: usize,
        now: OffsetDateTime,
        max_attempts: u32,
    ) -> Result<usize, RepoError> {
        let endpoints: Vec<WebhookEndpoint> = self
            .rows
            .lock()
            .unwrap()
            .iter()
            .map(|(e, _)| e.clone())
            .collect();
        let mut events = self.events.lock().unwrap();
        let mut deliveries = Vec::new();
        let mut jobs = Vec::new();
        let mut relayed = 0;
        for (event, relayed_at) in events
            .iter_mut()
            .filter(|(_, relayed_at)| relayed_at.is_none())
            .take(limit)
        {
            *relayed_at = Some(now);
            relayed += 1;
            for endpoint in endpoints.iter().filter(|e| {
                e.org_id == event.org_id && subscribed(e, event.event_type, event.object_id)
            }) {
                let id = Uuid::now_v7();
                deliveries.push(WebhookDelivery {
                    id,
                    org_id: event.org_id,
                    endpoint_id: endpoint.id,
                    event_id: event.id,
                    event_type: event.event_type,
                    status: DeliveryStatus::Pending,
                    attempts: 0,
                    last_status_code: None,
                    last_error: None,
                    next_attempt_at: Some(now),
                    delivered_at: None,
                    created_at: now,
                    updated_at: now,
                });
                jobs.push(Self::job(event.org_id, id, now, max_attempts));
            }
        }
        self.queue.enqueue(&jobs)?;
        self.deliveries.lock().unwrap().extend(deliveries);
        Ok(relayed)
    }

    async fn deliveries_work(
        &self,
        wanted: &[(OrgId, Uuid)],
    ) -> Result<Vec<DeliveryWork>, RepoError> {
        let found: Vec<WebhookDelivery> = {
            let deliveries = self.deliveries.lock().unwrap();
            wanted
                .iter()
                .filter_map(|(org, id)| {
                    deliveries
                        .iter()
                        .find(|d| d.org_id == *org && d.id == *id)
                        .cloned()
                })
                .collect()
        };
        let mut works = Vec::new();
        for delivery in found {
            let org = delivery.org_id;
            let (endpoint, secrets) = match (
                self.get_endpoint(org, delivery.endpoint_id).await,
                self.endpoint_secrets(org, delivery.endpoint_id).await,
            ) {
                (Ok(e), Ok(s)) => (e, s),
                _ => continue,
            };
            let payload = self
                .events
                .lock()
                .unwrap()
                .iter()
                .find(|(e, _)| e.id == delivery.event_id)
                .map(|(e, _)| e.payload());
            let Some(payload) = payload else { continue };
            works.push(DeliveryWork {
                delivery,
                endpoint,
                secrets,
                payload,
            });
        }
        Ok(works)
    }

    async fn record_attempt(
        &self,
        org: OrgId,
        id: Uuid,
        record: &AttemptRecord,
    ) -> Result<(), RepoError> {
        let mut deliveries = self.deliveries.lock().unwrap();
        let d = deliveries
            .iter_mut()
            .find(|d| d.org_id == org && d.id == id)
            .ok_or(RepoError::NotFound)?;
        d.status = record.status;
        d.attempts = record.attempts;
        d.last_status_code = record.last_status_code;
        d.last_error = record.last_error.clone();
        d.next_attempt_at = record.next_attempt_at;
        if record.status == DeliveryStatus::Delivered {
            d.delivered_at = Some(record.at);
        }
        d.updated_at = record.at;
        Ok(())
    }

    async fn settle(
        &self,
        settlements: &[Settlement],
        now: OffsetDateTime,
    ) -> Result<Vec<bool>, RepoError> {
        let mut held = Vec::with_capacity(settlements.len());
        for s in settlements {
            // The record first, then the job: the record stands whatever the queue answers,
            // and a delivery since deleted is no error (as the Postgres adapter's statement).
            match self
                .record_attempt(s.job.org_id, s.delivery, &s.record)
                .await
            {
                Ok(()) | Err(RepoError::NotFound) => {}
                Err(e) => return Err(e),
            }
            let job = &s.job;
            let ended = match &s.end {
                JobEnd::Complete => self.queue.complete(job, now).await,
                JobEnd::Retry { at, error } => self.queue.retry(job, *at, error).await,
                JobEnd::Fail { error } => self.queue.fail(job, now, error).await,
            };
            match ended {
                Ok(()) => held.push(true),
                Err(RepoError::Conflict { constraint }) if constraint == JOB_LEASE => {
                    held.push(false)
                }
                Err(e) => return Err(e),
            }
        }
        Ok(held)
    }

    async fn last_delivered_at(
        &self,
        org: OrgId,
        endpoint: WebhookId,
    ) -> Result<Option<OffsetDateTime>, RepoError> {
        Ok(self
            .deliveries
            .lock()
            .unwrap()
            .iter()
            .filter(|d| d.org_id == org && d.endpoint_id == endpoint)
            .filter_map(|d| d.delivered_at)
            .max())
    }

    async fn disable_endpoint(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        reason: &str,
    ) -> Result<(), RepoError> {
        let mut rows = self.rows.lock().unwrap();
        let (e, _) = rows
            .iter_mut()
            .find(|(e, _)| e.org_id == org && e.id == endpoint)
            .ok_or(RepoError::NotFound)?;
        e.enabled = false;
        e.disabled_reason = Some(reason.to_owned());
        Ok(())
    }

    async fn enable_endpoint(&self, org: OrgId, endpoint: WebhookId) -> Result<(), RepoError> {
        let mut rows = self.rows.lock().unwrap();
        let (e, _) = rows
            .iter_mut()
            .find(|(e, _)| e.org_id == org && e.id == endpoint)
            .ok_or(RepoError::NotFound)?;
        e.enabled = true;
        e.disabled_reason = None;
        Ok(())
    }

    async fn list_deliveries(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        page: PageRequest,
    ) -> Result<Page<WebhookDelivery>, RepoError> {
        let mut all: Vec<WebhookDelivery> = self
            .deliveries
            .lock()
            .unwrap()
            .iter()
            .filter(|d| d.org_id == org && d.endpoint_id == endpoint)
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

    async fn replay_failed(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        now: OffsetDateTime,
        max_attempts: u32,
    ) -> Result<u64, RepoError> {
        let mut deliveries = self.deliveries.lock().unwrap();
        let mut jobs = Vec::new();
        for d in deliveries.iter_mut().filter(|d| {
            d.org_id == org && d.endpoint_id == endpoint && d.status == DeliveryStatus::Failed
        }) {
            d.status = DeliveryStatus::Pending;
            d.attempts = 0;
            d.next_attempt_at = Some(now);
            d.updated_at = now;
            jobs.push(Self::job(org, d.id, now, max_attempts));
        }
        self.queue.enqueue(&jobs)?;
        Ok(jobs.len() as u64)
    }

    async fn prune_relayed(&self, before: OffsetDateTime) -> Result<u64, RepoError> {
        let mut events = self.events.lock().unwrap();
        let mut deliveries = self.deliveries.lock().unwrap();
        let pending: HashSet<Uuid> = deliveries
            .iter()
            .filter(|d| d.status == DeliveryStatus::Pending)
            .map(|d| d.event_id)
            .collect();
        let gone: HashSet<Uuid> = events
            .iter()
            .filter(|(e, at)| at.is_some_and(|at| at < before) && !pending.contains(&e.id))
            .map(|(e, _)| e.id)
            .collect();
        events.retain(|(e, _)| !gone.contains(&e.id));
        deliveries.retain(|d| !gone.contains(&d.event_id));
        Ok(gone.len() as u64)
    }
}
