//! SQL of webhook deliveries (`webhook_deliveries`): the relay from the outbox (events claimed
//! with `FOR UPDATE SKIP LOCKED`, marked relayed, and their deliveries and jobs written in the
//! same statement), the worker's reads (a batch's deliveries at once) and writes (a batch's
//! attempts and their jobs' ends in one statement), and replays.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::Value;
use teamcomm_kernel::jobs::JobState;
use teamcomm_kernel::{EventType, OrgId, Page, PageRequest, RepoError, WireEnum};
use teamcomm_webhooks::{
    AttemptRecord, DeliveryRepository, DeliveryStatus, DeliveryWork, EndpointSecrets, JobEnd,
    Settlement, WebhookDelivery, WebhookEndpoint, WebhookId, WebhookRepository,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::count_from;
use super::paging::load_page;
use super::prepared::Prepared;
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

/// A batch's attempts recorded and their jobs ended in one statement (one round trip and one
/// commit for the batch, prepared once per connection: the text never changes). `p` holds one
/// row per attempt (the arrays, one per column). `job` ends each claim as `PgJobQueue` does
/// (`repo/jobs.rs`): fenced by the claimed attempt and `running`; `done` or `failed` at
/// `now`, or, for a retry, `queued` again at `run_at` (`failed` when that was the last
/// attempt); `last_error` kept when none is given. `recorded` writes each attempt on its
/// delivery whether or not its fence held. The answer: the jobs whose fence held.
struct Settle<'a> {
    job_ids: Vec<Uuid>,
    job_attempts: Vec<i32>,
    /// `done`, `failed`, or `retry`.
    ends: Vec<&'static str>,
    run_at: Vec<Option<OffsetDateTime>>,
    job_errors: Vec<Option<&'a str>>,
    now: OffsetDateTime,
    orgs: Vec<Uuid>,
    deliveries: Vec<Uuid>,
    statuses: Vec<&'static str>,
    attempts: Vec<i32>,
    last_status_codes: Vec<Option<i32>>,
    last_errors: Vec<Option<&'a str>>,
    next_attempt_at: Vec<Option<OffsetDateTime>>,
    delivered_at: Vec<Option<OffsetDateTime>>,
    at: Vec<OffsetDateTime>,
}

impl<'a> Settle<'a> {
    fn new(settlements: &'a [Settlement], now: OffsetDateTime) -> Self {
        let mut q = Settle {
            job_ids: Vec::with_capacity(settlements.len()),
            job_attempts: Vec::new(),
            ends: Vec::new(),
            run_at: Vec::new(),
            job_errors: Vec::new(),
            now,
            orgs: Vec::new(),
            deliveries: Vec::new(),
            statuses: Vec::new(),
            attempts: Vec::new(),
            last_status_codes: Vec::new(),
            last_errors: Vec::new(),
            next_attempt_at: Vec::new(),
            delivered_at: Vec::new(),
            at: Vec::new(),
        };
        for s in settlements {
            let (end, run_at, error) = match &s.end {
                JobEnd::Complete => (JobState::Done.as_str(), None, None),
                JobEnd::Retry { at, error } => ("retry", Some(*at), Some(error.as_str())),
                JobEnd::Fail { error } => (JobState::Failed.as_str(), None, Some(error.as_str())),
            };
            let r = &s.record;
            q.job_ids.push(s.job.id);
            q.job_attempts.push(attempts_sql(s.job.attempt));
            q.ends.push(end);
            q.run_at.push(run_at);
            q.job_errors.push(error);
            q.orgs.push(s.job.org_id.0);
            q.deliveries.push(s.delivery);
            q.statuses.push(r.status.as_str());
            q.attempts.push(attempts_sql(r.attempts));
            q.last_status_codes.push(r.last_status_code.map(i32::from));
            q.last_errors.push(r.last_error.as_deref());
            q.next_attempt_at.push(r.next_attempt_at);
            q.delivered_at
                .push((r.status == DeliveryStatus::Delivered).then_some(r.at));
            q.at.push(r.at);
        }
        q
    }
}

impl diesel::query_builder::QueryId for Settle<'_> {
    type QueryId = Settle<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::Query for Settle<'_> {
    type SqlType = SqlUuid;
}

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for Settle<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        out.push_sql("WITH p AS MATERIALIZED (SELECT * FROM unnest(");
        out.push_bind_param::<Array<SqlUuid>, _>(&self.job_ids)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Int4>, _>(&self.job_attempts)?;
        out.push_sql("::integer[], ");
        out.push_bind_param::<Array<Text>, _>(&self.ends)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Timestamptz>>, _>(&self.run_at)?;
        out.push_sql("::timestamptz[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.job_errors)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<SqlUuid>, _>(&self.orgs)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<SqlUuid>, _>(&self.deliveries)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Text>, _>(&self.statuses)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Int4>, _>(&self.attempts)?;
        out.push_sql("::integer[], ");
        out.push_bind_param::<Array<Nullable<Int4>>, _>(&self.last_status_codes)?;
        out.push_sql("::integer[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.last_errors)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Timestamptz>>, _>(&self.next_attempt_at)?;
        out.push_sql("::timestamptz[], ");
        out.push_bind_param::<Array<Nullable<Timestamptz>>, _>(&self.delivered_at)?;
        out.push_sql("::timestamptz[], ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.at)?;
        out.push_sql(
            "::timestamptz[]) AS p(job_id, job_attempt, job_end, run_at, job_error, org, \
               delivery, status, attempts, last_status_code, last_error, next_attempt_at, \
               delivered_at, at)), \
             job AS ( \
               UPDATE jobs j SET \
                 state = CASE WHEN p.job_end <> 'retry' THEN p.job_end \
                              WHEN j.attempt >= j.max_attempts THEN 'failed' ELSE 'queued' END, \
                 run_at = CASE WHEN p.job_end = 'retry' AND j.attempt < j.max_attempts \
                               THEN p.run_at ELSE j.run_at END, \
                 finished_at = CASE WHEN p.job_end = 'retry' AND j.attempt < j.max_attempts \
                                    THEN NULL ELSE ",
        );
        out.push_bind_param::<Timestamptz, _>(&self.now)?;
        out.push_sql(
            "::timestamptz END, \
                 lease_until = NULL, \
                 last_error = COALESCE(p.job_error, j.last_error), \
                 updated_at = ",
        );
        out.push_bind_param::<Timestamptz, _>(&self.now)?;
        out.push_sql(
            "::timestamptz \
               FROM p \
               WHERE j.id = p.job_id AND j.attempt = p.job_attempt AND j.state = 'running' \
               RETURNING j.id), \
             recorded AS ( \
               UPDATE webhook_deliveries d SET \
                 status = p.status, attempts = p.attempts, last_status_code = p.last_status_code, \
                 last_error = p.last_error, next_attempt_at = p.next_attempt_at, \
                 delivered_at = p.delivered_at, updated_at = p.at \
               FROM p \
               WHERE d.organization_id = p.org AND d.id = p.delivery) \
             SELECT id FROM job",
        );
        Ok(())
    }
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
        let found: Count = Prepared(
            diesel::sql_query(RELAY)
                .bind::<BigInt, _>(i64::try_from(limit).unwrap_or(i64::MAX))
                .bind::<Timestamptz, _>(now)
                .bind::<Int4, _>(attempts_sql(max_attempts))
                .bind::<Int4, _>(attempts_sql(teamcomm_workflows::RUN_ATTEMPTS)),
        )
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(usize::try_from(count_from(found.n)?).unwrap_or(usize::MAX))
    }

    async fn deliveries_work(
        &self,
        wanted: &[(OrgId, Uuid)],
    ) -> Result<Vec<DeliveryWork>, RepoError> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Uuid> = wanted.iter().map(|(_, id)| *id).collect();
        let rows: Vec<(DeliveryRow, Value)> = {
            let mut conn = self.db.conn().await?;
            webhook_deliveries::table
                .inner_join(
                    outbox_events::table.on(outbox_events::id.eq(webhook_deliveries::event_id)),
                )
                .filter(webhook_deliveries::id.eq_any(&ids))
                .select((DeliveryRow::as_select(), outbox_events::payload))
                .load(&mut conn)
                .await
                .map_err(db_error)?
        };
        // Each endpoint (and its secrets) read once for the batch.
        let mut endpoints: HashMap<(OrgId, WebhookId), Option<(WebhookEndpoint, EndpointSecrets)>> =
            HashMap::new();
        let mut works = Vec::with_capacity(rows.len());
        for (row, payload) in rows {
            let delivery = WebhookDelivery::try_from(row)?;
            let org = delivery.org_id;
            if !wanted.contains(&(org, delivery.id)) {
                continue;
            }
            let key = (org, delivery.endpoint_id);
            let endpoint = match endpoints.get(&key) {
                Some(found) => found.clone(),
                None => {
                    let found = match self.endpoints.get_endpoint(org, key.1).await {
                        Ok(endpoint) => {
                            let secrets = self.endpoints.endpoint_secrets(org, key.1).await?;
                            Some((endpoint, secrets))
                        }
                        Err(RepoError::NotFound) => None,
                        Err(e) => return Err(e),
                    };
                    endpoints.insert(key, found.clone());
                    found
                }
            };
            // Deleted meanwhile (its deliveries with it).
            let Some((endpoint, secrets)) = endpoint else {
                continue;
            };
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

    async fn settle(
        &self,
        settlements: &[Settlement],
        now: OffsetDateTime,
    ) -> Result<Vec<bool>, RepoError> {
        if settlements.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        let held: HashSet<Uuid> = Settle::new(settlements, now)
            .load::<Uuid>(&mut conn)
            .await
            .map_err(db_error)?
            .into_iter()
            .collect();
        Ok(settlements
            .iter()
            .map(|s| held.contains(&s.job.id))
            .collect())
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

    async fn prune_relayed(&self, before: OffsetDateTime) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        // Their deliveries go with them (`ON DELETE CASCADE`); a pending one holds its event.
        let pending = webhook_deliveries::table
            .filter(webhook_deliveries::event_id.eq(outbox_events::id))
            .filter(webhook_deliveries::status.eq(DeliveryStatus::Pending.as_str()));
        let gone = diesel::delete(
            outbox_events::table
                .filter(outbox_events::relayed_at.lt(before))
                .filter(diesel::dsl::not(diesel::dsl::exists(pending))),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(u64::try_from(gone).unwrap_or(0))
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
