//! SQL of webhook deliveries (`webhook_deliveries`): the relay from the outbox (events claimed
//! with `FOR UPDATE SKIP LOCKED`, marked relayed, and their deliveries and jobs written in the
//! same statement), the worker's reads and writes, and replays.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Int4, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::Value;
use teamcomm_kernel::{EventType, OrgId, Page, PageRequest, RepoError, WireEnum};
use teamcomm_webhooks::{
    AttemptRecord, DeliveryRepository, DeliveryStatus, DeliveryWork, WebhookDelivery, WebhookId,
    WebhookRepository,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::count_from;
use super::paging::load_page;
use super::webhooks::PgWebhookRepository;
use crate::Database;
use crate::error::db_error;
use crate::rows::unknown_value;
use crate::schema::outbox_events;
use crate::schema::webhooks::{webhook_deliveries, webhook_endpoints};

/// Postgres implementation of [`DeliveryRepository`].
#[derive(Clone)]
pub struct PgWebhookDeliveries {
    db: Database,
    endpoints: PgWebhookRepository,
}

impl PgWebhookDeliveries {
    pub fn new(db: Database, endpoints: PgWebhookRepository) -> Self {
        PgWebhookDeliveries { db, endpoints }
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = webhook_deliveries, check_for_backend(diesel::pg::Pg))]
struct DeliveryRow {
    id: Uuid,
    organization_id: Uuid,
    endpoint_id: Uuid,
    event_id: Uuid,
    event_type: String,
    status: String,
    attempts: i32,
    last_status_code: Option<i32>,
    last_error: Option<String>,
    next_attempt_at: Option<OffsetDateTime>,
    delivered_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl TryFrom<DeliveryRow> for WebhookDelivery {
    type Error = RepoError;

    fn try_from(r: DeliveryRow) -> Result<Self, RepoError> {
        Ok(WebhookDelivery {
            id: r.id,
            org_id: OrgId(r.organization_id),
            endpoint_id: WebhookId(r.endpoint_id),
            event_id: r.event_id,
            event_type: EventType::from_name(&r.event_type)
                .ok_or_else(|| unknown_value("webhook_deliveries.event_type", &r.event_type))?,
            status: DeliveryStatus::parse(&r.status)
                .ok_or_else(|| unknown_value("webhook_deliveries.status", &r.status))?,
            attempts: u32::try_from(r.attempts)
                .map_err(|_| unknown_value("webhook_deliveries.attempts", r.attempts))?,
            last_status_code: r.last_status_code.and_then(|c| u16::try_from(c).ok()),
            last_error: r.last_error,
            next_attempt_at: r.next_attempt_at,
            delivered_at: r.delivered_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// The relay in one statement (one transaction): `ev` claims up to `$1` unrelayed events in id
/// (time) order, skipping those another relay holds; `marked` sets them relayed; `pairs` joins
/// them with the enabled endpoints of their organization subscribed to their type (and, when
/// the endpoint names objects, to their object) — `teamcomm_webhooks::delivery::subscribed` in
/// SQL; each pair gets a pending delivery and a `webhook_delivery` job due at `$2`.
/// The outbox's other reader rides along: `started` joins the events with the active, unfrozen
/// workflows of their organization triggered by their type
/// (`teamcomm_workflows::Workflow::runs_on` in SQL); each gets a queued run carrying the event's
/// document as its payload, counted on its workflow, and a `workflow_run` job (`$4` attempts).
const RELAY: &str = "\
WITH ev AS MATERIALIZED (
    SELECT id, organization_id, event_type, object_id, payload FROM outbox_events
     WHERE relayed_at IS NULL
     ORDER BY id
     LIMIT $1
       FOR UPDATE SKIP LOCKED
), marked AS (
    UPDATE outbox_events o SET relayed_at = $2 FROM ev WHERE o.id = ev.id
), pairs AS MATERIALIZED (
    SELECT gen_random_uuid() AS delivery_id, ev.organization_id, e.id AS endpoint_id,
           ev.id AS event_id, ev.event_type
      FROM ev JOIN webhook_endpoints e ON e.organization_id = ev.organization_id
     WHERE e.enabled AND ev.event_type = ANY (e.events)
       AND (cardinality(e.object_ids) = 0 OR ev.object_id = ANY (e.object_ids))
), deliveries AS (
    INSERT INTO webhook_deliveries
           (id, organization_id, endpoint_id, event_id, event_type, next_attempt_at, created_at, updated_at)
    SELECT delivery_id, organization_id, endpoint_id, event_id, event_type, $2, $2, $2 FROM pairs
), queued AS (
    INSERT INTO jobs (id, organization_id, kind, payload, max_attempts, run_at)
    SELECT gen_random_uuid(), organization_id, 'webhook_delivery',
           jsonb_build_object('delivery_id', delivery_id::text), $3, $2
      FROM pairs
), started AS MATERIALIZED (
    SELECT gen_random_uuid() AS run_id, ev.organization_id, w.id AS workflow_id, ev.payload
      FROM ev JOIN workflows w
        ON w.organization_id = ev.organization_id AND w.trigger_type = ev.event_type
     WHERE w.active AND NOT w.frozen
), runs AS (
    INSERT INTO workflow_runs (id, organization_id, workflow_id, status, payload, queued_at)
    SELECT run_id, organization_id, workflow_id, 'queued', payload, $2 FROM started
), counted AS (
    UPDATE workflows w SET total_runs = w.total_runs + s.n, last_run_at = $2
      FROM (SELECT workflow_id, count(*) AS n FROM started GROUP BY workflow_id) s
     WHERE w.id = s.workflow_id
), run_jobs AS (
    INSERT INTO jobs (id, organization_id, kind, payload, max_attempts, run_at)
    SELECT gen_random_uuid(), organization_id, 'workflow_run',
           jsonb_build_object('run_id', run_id::text), $4, $2
      FROM started
)
SELECT count(*) AS n FROM ev";

/// A replay in one statement: the endpoint's failed deliveries pending again, a job each.
const REPLAY: &str = "\
WITH replayed AS (
    UPDATE webhook_deliveries
       SET status = 'pending', attempts = 0, next_attempt_at = $3, updated_at = $3
     WHERE organization_id = $1 AND endpoint_id = $2 AND status = 'failed'
    RETURNING id, organization_id
), queued AS (
    INSERT INTO jobs (id, organization_id, kind, payload, max_attempts, run_at)
    SELECT gen_random_uuid(), organization_id, 'webhook_delivery',
           jsonb_build_object('delivery_id', id::text), $4, $3
      FROM replayed
)
SELECT count(*) AS n FROM replayed";

fn attempts_sql(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

#[async_trait]
impl DeliveryRepository for PgWebhookDeliveries {
    async fn relay(
        &self,
        limit: usize,
        now: OffsetDateTime,
        max_attempts: u32,
    ) -> Result<usize, RepoError> {
        let mut conn = self.db.conn().await?;
        let found: Count = diesel::sql_query(RELAY)
            .bind::<BigInt, _>(i64::try_from(limit).unwrap_or(i64::MAX))
            .bind::<Timestamptz, _>(now)
            .bind::<Int4, _>(attempts_sql(max_attempts))
            .bind::<Int4, _>(attempts_sql(teamcomm_workflows::RUN_ATTEMPTS))
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(usize::try_from(count_from(found.n)?).unwrap_or(usize::MAX))
    }

    async fn delivery_work(&self, org: OrgId, id: Uuid) -> Result<DeliveryWork, RepoError> {
        let (row, payload): (DeliveryRow, Value) = {
            let mut conn = self.db.conn().await?;
            webhook_deliveries::table
                .inner_join(
                    outbox_events::table.on(outbox_events::id.eq(webhook_deliveries::event_id)),
                )
                .filter(webhook_deliveries::organization_id.eq(org.0))
                .filter(webhook_deliveries::id.eq(id))
                .select((DeliveryRow::as_select(), outbox_events::payload))
                .first(&mut conn)
                .await
                .map_err(db_error)?
        };
        let delivery = WebhookDelivery::try_from(row)?;
        let endpoint = self
            .endpoints
            .get_endpoint(org, delivery.endpoint_id)
            .await?;
        Ok(DeliveryWork {
            delivery,
            endpoint,
            payload,
        })
    }

    async fn record_attempt(
        &self,
        org: OrgId,
        id: Uuid,
        record: &AttemptRecord,
    ) -> Result<(), RepoError> {
        let delivered_at = (record.status == DeliveryStatus::Delivered).then_some(record.at);
        let mut conn = self.db.conn().await?;
        let updated = diesel::update(
            webhook_deliveries::table
                .filter(webhook_deliveries::organization_id.eq(org.0))
                .filter(webhook_deliveries::id.eq(id)),
        )
        .set((
            webhook_deliveries::status.eq(record.status.as_str()),
            webhook_deliveries::attempts.eq(attempts_sql(record.attempts)),
            webhook_deliveries::last_status_code.eq(record.last_status_code.map(i32::from)),
            webhook_deliveries::last_error.eq(record.last_error.as_deref()),
            webhook_deliveries::next_attempt_at.eq(record.next_attempt_at),
            webhook_deliveries::delivered_at.eq(delivered_at),
            webhook_deliveries::updated_at.eq(record.at),
        ))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if updated == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn last_delivered_at(
        &self,
        org: OrgId,
        endpoint: WebhookId,
    ) -> Result<Option<OffsetDateTime>, RepoError> {
        let mut conn = self.db.conn().await?;
        webhook_deliveries::table
            .filter(webhook_deliveries::organization_id.eq(org.0))
            .filter(webhook_deliveries::endpoint_id.eq(endpoint.0))
            .select(diesel::dsl::max(webhook_deliveries::delivered_at))
            .get_result(&mut conn)
            .await
            .map_err(db_error)
    }

    async fn disable_endpoint(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        reason: &str,
    ) -> Result<(), RepoError> {
        set_enabled(&self.db, org, endpoint, false, Some(reason)).await
    }

    async fn enable_endpoint(&self, org: OrgId, endpoint: WebhookId) -> Result<(), RepoError> {
        set_enabled(&self.db, org, endpoint, true, None).await
    }

    async fn list_deliveries(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        page: PageRequest,
    ) -> Result<Page<WebhookDelivery>, RepoError> {
        let mut conn = self.db.conn().await?;
        let filtered = move || {
            webhook_deliveries::table
                .filter(webhook_deliveries::organization_id.eq(org.0))
                .filter(webhook_deliveries::endpoint_id.eq(endpoint.0))
                .into_boxed()
        };
        load_page::<DeliveryRow, WebhookDelivery, _, _>(&mut conn, page, filtered, |q| {
            q.order((
                webhook_deliveries::created_at.desc(),
                webhook_deliveries::id.desc(),
            ))
            .select(DeliveryRow::as_select())
        })
        .await
    }

    async fn replay_failed(
        &self,
        org: OrgId,
        endpoint: WebhookId,
        now: OffsetDateTime,
        max_attempts: u32,
    ) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let replayed: Count = diesel::sql_query(REPLAY)
            .bind::<SqlUuid, _>(org.0)
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Timestamptz, _>(now)
            .bind::<Int4, _>(attempts_sql(max_attempts))
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        count_from(replayed.n)
    }
}

async fn set_enabled(
    db: &Database,
    org: OrgId,
    endpoint: WebhookId,
    enabled: bool,
    reason: Option<&str>,
) -> Result<(), RepoError> {
    let mut conn = db.conn().await?;
    let updated = diesel::update(
        webhook_endpoints::table
            .filter(webhook_endpoints::organization_id.eq(org.0))
            .filter(webhook_endpoints::id.eq(endpoint.0)),
    )
    .set((
        webhook_endpoints::enabled.eq(enabled),
        webhook_endpoints::disabled_reason.eq(reason),
    ))
    .execute(&mut conn)
    .await
    .map_err(db_error)?;
    if updated == 0 {
        Err(RepoError::NotFound)
    } else {
        Ok(())
    }
}
