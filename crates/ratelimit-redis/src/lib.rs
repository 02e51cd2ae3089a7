//! The Redis adapter of the [`RateLimiter`] port: budgets (per hour, per minute for the Plan
//! scopes: [`RateScope::window`]) shared by every server process
//! that points at the same Redis (`TEAMCOMM_REDIS_URL`), so N processes behind a load balancer
//! grant one budget per credential and scope, not N.
//!
//! Each check is one round trip: `EVALSHA` of [`GCRA`] (loaded again with `EVAL` if Redis lost
//! it), which reads the key's theoretical arrival time, decides and writes it back atomically,
//! using Redis's own clock (`TIME`) so the processes' clocks need not agree. The algorithm and
//! the answers (`remaining`, `reset`, `Retry-After`) are those of the in-process governor
//! limiter: a budget of `n` per hour is a burst of `n` refilled one request every `3600 / n` s.
//!
//! Redis unreachable or too slow: the request is **allowed** (fail open) with a full budget in
//! its headers, a warning is logged (at most one per [`WARN_EVERY`], counting the failures in
//! between) and the `on_unavailable` hook runs (the server counts it in its metrics). After a
//! failure, Redis is not asked again for [`PAUSE_AFTER_FAILURE`], so an outage adds no latency to
//! every request. See docs/decisions.md for why open and not closed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use teamcomm_keys::{CredentialRef, RateDecision, RateLimiter, RateScope};

/// How long one check may wait for Redis before the request is let through.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);
/// After a failure, checks pass without asking Redis for this long.
pub const PAUSE_AFTER_FAILURE: Duration = Duration::from_secs(1);
/// At most one "Redis unavailable" warning per this period.
pub const WARN_EVERY: Duration = Duration::from_secs(30);

/// GCRA over microseconds. `KEYS[1]`: the budget's key; `ARGV[1]`: requests per window;
/// `ARGV[2]`: the window in seconds. Answers `{allowed (0|1), remaining, reset_us,
/// retry_after_us}`.
pub const GCRA: &str = r#"
local limit = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[2]) * 1000000
local interval = window / limit
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - window
if now < allow_at then
  return {0, 0, math.ceil(tat - now), math.ceil(allow_at - now)}
end
local ttl_ms = math.ceil((new_tat - now) / 1000)
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', ttl_ms)
local remaining = math.floor((window - (new_tat - now)) / interval + 0.000001)
return {1, remaining, math.ceil(new_tat - now), 0}
"#;

type Hook = Arc<dyn Fn() + Send + Sync>;

/// Budgets in Redis (see the module docs).
pub struct RedisRateLimiter {
    client: redis::Client,
    connection: OnceLock<ConnectionManager>,
    script: redis::Script,
    prefix: String,
    timeout: Duration,
    paused_until: Mutex<Option<Instant>>,
    warned_at: Mutex<Option<Instant>>,
    failures: AtomicU64,
    unwarned: AtomicU64,
    on_unavailable: Option<Hook>,
}

impl RedisRateLimiter {
    /// A limiter on the Redis at `url` (`redis://[:password@]host[:port][/db]`), its keys under
    /// `prefix`. Only the URL is checked here: the connection is made at the first check (and
    /// made again whenever it breaks), so a server starts while Redis is down.
    pub fn new(url: &str, prefix: &str) -> Result<Self, redis::RedisError> {
        Ok(RedisRateLimiter {
            client: redis::Client::open(url)?,
            connection: OnceLock::new(),
            script: redis::Script::new(GCRA),
            prefix: prefix.trim_end_matches(':').to_owned(),
            timeout: DEFAULT_TIMEOUT,
            paused_until: Mutex::new(None),
            warned_at: Mutex::new(None),
            failures: AtomicU64::new(0),
            unwarned: AtomicU64::new(0),
            on_unavailable: None,
        })
    }

    /// How long a check waits for Redis (default [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs `hook` on every check that Redis could not answer (the request was let through).
    pub fn on_unavailable(mut self, hook: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_unavailable = Some(Arc::new(hook));
        self
    }

    /// Checks Redis could not answer since this limiter was made.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// The Redis key of a credential's budget for a scope.
    pub fn key(&self, credential: CredentialRef, scope: RateScope) -> String {
        #[allow(unreachable_patterns)]
        let (kind, id) = match credential {
            CredentialRef::ApiKey(id) => ("key", id.to_string()),
            CredentialRef::CliToken(id) => ("cli", id.to_string()),
            CredentialRef::Session(id) => ("session", id.to_string()),
            // Budgets without a credential (a client address, a login address…): the variant's
            // own rendering, unique per value.
            other => ("other", format!("{other:?}").replace(' ', "")),
        };
        format!("{}:{}:{kind}:{id}", self.prefix, scope.as_str())
    }

    fn connection(&self) -> Result<ConnectionManager, redis::RedisError> {
        if let Some(c) = self.connection.get() {
            return Ok(c.clone());
        }
        // Reconnects in the background with short waits; each call is bounded by `timeout`.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let made = ConnectionManager::new_lazy_with_config(self.client.clone(), config)?;
        Ok(self.connection.get_or_init(|| made).clone())
    }

    async fn ask(
        &self,
        credential: CredentialRef,
        scope: RateScope,
        limit: u32,
    ) -> Result<[i64; 4], String> {
        let mut conn = self.connection().map_err(|e| e.to_string())?;
        let mut invocation = self.script.key(self.key(credential, scope));
        invocation.arg(limit).arg(scope.window().secs());
        let answer = tokio::time::timeout(self.timeout, invocation.invoke_async(&mut conn));
        match answer.await {
            Ok(Ok(values)) => {
                let values: Vec<i64> = values;
                values
                    .try_into()
                    .map_err(|v| format!("unexpected script answer {v:?}"))
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        }
    }

    fn paused(&self) -> bool {
        let mut until = self.paused_until.lock().unwrap_or_else(|p| p.into_inner());
        match *until {
            Some(t) if Instant::now() < t => true,
            Some(_) => {
                *until = None;
                false
            }
            None => false,
        }
    }

    /// Counts a check Redis did not answer, warns (rate-limited) and runs the hook.
    fn unavailable(&self, error: Option<&str>) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        if let Some(hook) = &self.on_unavailable {
            hook();
        }
        let Some(error) = error else {
            self.unwarned.fetch_add(1, Ordering::Relaxed);
            return;
        };
        *self.paused_until.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Instant::now() + PAUSE_AFTER_FAILURE);
        let mut warned = self.warned_at.lock().unwrap_or_else(|p| p.into_inner());
        if warned.is_some_and(|t| t.elapsed() < WARN_EVERY) {
            self.unwarned.fetch_add(1, Ordering::Relaxed);
            return;
        }
        *warned = Some(Instant::now());
        let also = self.unwarned.swap(0, Ordering::Relaxed);
        tracing::warn!(
            error,
            failures_since_last_warning = also,
            "Redis rate-limit store unavailable: requests are NOT rate limited (failing open) until it answers"
        );
    }
}

/// What a request is told when Redis could not decide: allowed, a whole budget.
fn open_decision(scope: RateScope, limit: u32) -> RateDecision {
    RateDecision {
        scope,
        limit,
        remaining: limit,
        reset_secs: 0,
        retry_after_secs: None,
    }
}

/// Whole seconds, rounded up, of a microsecond count.
fn ceil_secs(us: i64) -> u64 {
    u64::try_from(us.max(0)).unwrap_or(0).div_ceil(1_000_000)
}

#[async_trait]
impl RateLimiter for RedisRateLimiter {
    async fn check(&self, credential: CredentialRef, scope: RateScope, limit: u32) -> RateDecision {
        let limit = limit.max(1);
        if self.paused() {
            self.unavailable(None);
            return open_decision(scope, limit);
        }
        match self.ask(credential, scope, limit).await {
            Ok([allowed, remaining, reset_us, retry_us]) => RateDecision {
                scope,
                limit,
                remaining: u32::try_from(remaining.max(0)).unwrap_or(0).min(limit),
                reset_secs: ceil_secs(reset_us),
                retry_after_secs: (allowed == 0).then(|| ceil_secs(retry_us).max(1)),
            },
            Err(e) => {
                self.unavailable(Some(&e));
                open_decision(scope, limit)
            }
        }
    }
}
