//! `GET /metrics`: the server's Prometheus metrics (OpenMetrics text), for the operator.
//!
//! Requests by route template, status and duration; the delivery worker's job outcomes; the
//! rate-limit checks the shared store (Redis) could not answer; read
//! at scrape time, the queue's backlog per kind (depth, age of the oldest due job) and the
//! database pool. Not under `/v1/`: only clients whose address is in `TEAMCOMM_METRICS_ALLOW`
//! (loopback by default) see it; everyone else gets the API's 404.

use std::sync::Arc;

use actix_web::{HttpRequest, HttpResponse, get, web};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use teamcomm_kernel::Error;
use teamcomm_messaging::RunSummary;
use teamcomm_store_pg::{Database, PgJobQueue};
use time::OffsetDateTime;

use crate::error::error_response;
use crate::state::AppState;

/// The networks allowed by default: loopback only.
pub const DEFAULT_ALLOW: &[&str] = &["127.0.0.0/8", "::1/128"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    /// The matched route template (`/v1/teams/{uuid}/`), never the raw path; `-` when none.
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: String,
}

type Durations = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// 1 ms to about 16 s, doubling.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// The metrics of this process and where the scrape-time ones are read from.
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

struct Inner {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Durations,
    delivery_jobs: Family<OutcomeLabels, Counter>,
    queue_depth: Family<KindLabels, Gauge>,
    queue_oldest_due: Family<KindLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    pool_max: Gauge,
    pool_open: Gauge,
    pool_idle: Gauge,
    pool_waiting: Gauge,
    rate_limit_store_unavailable: Counter,
    db: Database,
    jobs: PgJobQueue,
}

impl Metrics {
    pub fn new(db: Database) -> Self {
        let mut registry = Registry::with_prefix("teamcomm");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "Requests answered, by method, route template and status",
            requests.clone(),
        );
        let durations = Durations::new_with_constructor(duration_histogram);
        registry.register(
            "http_request_duration_seconds",
            "Time to answer, by method and route template",
            durations.clone(),
        );
        let delivery_jobs = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "delivery_jobs",
            "Message and e-mail jobs run by this process's delivery worker, by outcome \
             (completed, retried, failed, lost: taken over by another worker)",
            delivery_jobs.clone(),
        );
        let queue_depth = Family::<KindLabels, Gauge>::default();
        registry.register(
            "queue_depth",
            "Queued and running jobs, by kind (the whole database, read at scrape time)",
            queue_depth.clone(),
        );
        let queue_oldest_due = Family::default();
        registry.register(
            "queue_oldest_due_seconds",
            "How long the earliest-due unfinished job of each kind has been due (0 when none is)",
            queue_oldest_due.clone(),
        );
        let pool_gauge = |registry: &mut Registry, name: &str, help: &str| {
            let gauge = Gauge::default();
            registry.register(name, help, gauge.clone());
            gauge
        };
        let pool_max = pool_gauge(
            &mut registry,
            "db_pool_max_connections",
            "The database pool's size limit",
        );
        let pool_open = pool_gauge(
            &mut registry,
            "db_pool_connections",
            "Database connections open",
        );
        let pool_idle = pool_gauge(
            &mut registry,
            "db_pool_idle_connections",
            "Open database connections not in use",
        );
        let pool_waiting = pool_gauge(
            &mut registry,
            "db_pool_waiting",
            "Requests waiting for a database connection",
        );
        let rate_limit_store_unavailable = Counter::default();
        registry.register(
            "rate_limit_store_unavailable",
            "Rate-limit checks the shared store (Redis) did not answer: those requests were let \
             through unlimited (fail open)",
            rate_limit_store_unavailable.clone(),
        );
        Metrics(Arc::new(Inner {
            rate_limit_store_unavailable,
            registry,
            requests,
            durations,
            delivery_jobs,
            queue_depth,
            queue_oldest_due,
            pool_max,
            pool_open,
            pool_idle,
            pool_waiting,
            jobs: PgJobQueue::new(db.clone()),
            db,
        }))
    }

    /// Counts one answered request (called by `telemetry::access_log`, which sees every
    /// answer with its final status, errors and panics included).
    pub(crate) fn request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let m = &self.0;
        m.requests
            .get_or_create(&RequestLabels {
                method: method.to_owned(),
                route: route.to_owned(),
                status,
            })
            .inc();
        m.durations
            .get_or_create(&RouteLabels {
                method: method.to_owned(),
                route: route.to_owned(),
            })
            .observe(seconds);
    }

    /// Counts one rate-limit check the shared store could not answer (the request went through).
    pub fn rate_limit_store_unavailable(&self) {
        self.0.rate_limit_store_unavailable.inc();
    }

    /// Counts what a delivery pass did.
    pub fn delivery_pass(&self, summary: &RunSummary) {
        for (outcome, n) in [
            ("completed", summary.completed),
            ("retried", summary.retried),
            ("failed", summary.failed),
            ("lost", summary.lost),
        ] {
            if n > 0 {
                self.0
                    .delivery_jobs
                    .get_or_create(&OutcomeLabels { outcome })
                    .inc_by(u64::try_from(n).unwrap_or(u64::MAX));
            }
        }
    }

    /// The metrics as OpenMetrics text, the scrape-time ones read now. A backlog that cannot be
    /// read leaves the queue gauges as they were (and is logged): the rest is still worth having.
    async fn render(&self, now: OffsetDateTime) -> String {
        let m = &self.0;
        match m.jobs.backlog().await {
            Ok(kinds) => {
                m.queue_depth.clear();
                m.queue_oldest_due.clear();
                for b in kinds {
                    let labels = KindLabels { kind: b.kind };
                    m.queue_depth.get_or_create(&labels).set(b.depth);
                    let due_for = b
                        .oldest_run_at
                        .map_or(0.0, |at| (now - at).as_seconds_f64().max(0.0));
                    m.queue_oldest_due.get_or_create(&labels).set(due_for);
                }
            }
            Err(e) => tracing::warn!(error = %e, "metrics: the queue's backlog could not be read"),
        }
        let status = m.db.pool().status();
        let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        m.pool_max.set(count(status.max_size));
        m.pool_open.set(count(status.size));
        m.pool_idle.set(count(status.available));
        m.pool_waiting.set(count(status.waiting));
        let mut body = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut body, &m.registry);
        body
    }
}

/// The metrics, to allowed clients only.
#[get("/metrics")]
pub async fn scrape(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let allowed = req
        .peer_addr()
        // An IPv4 client of a dual-stack listener shows as `::ffff:a.b.c.d`.
        .map(|peer| peer.ip().to_canonical())
        .is_some_and(|ip| {
            state
                .settings
                .metrics_allow
                .iter()
                .any(|net| net.contains(&ip))
        });
    if !allowed {
        return error_response(&Error::not_found());
    }
    let body = state.metrics.render(OffsetDateTime::now_utc()).await;
    HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(body)
}
