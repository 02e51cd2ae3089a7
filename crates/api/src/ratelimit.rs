//! The in-process [`RateLimiter`]: one governor (GCRA) keyed limiter per scope and budget,
//! keyed by credential; a budget of `n` per the scope's window (an hour, a minute for the Plan
//! scopes) is a burst of `n` refilled one request every `window / n`. Right for a single instance; several instances behind a load balancer
//! set `TEAMCOMM_REDIS_URL` and share their budgets through the Redis adapter of the same port
//! (`crates/ratelimit-redis`, same algorithm and answers). The `RateLimit` headers are made here
//! for both.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter as Governor};
use teamcomm_keys::{CredentialRef, RateDecision, RateLimiter, RateScope};

type Keyed = Governor<
    CredentialRef,
    DefaultKeyedStateStore<CredentialRef>,
    DefaultClock,
    StateInformationMiddleware,
>;

#[derive(Default)]
pub struct InProcessRateLimiter {
    limiters: RwLock<HashMap<(RateScope, u32), Arc<Keyed>>>,
    clock: DefaultClock,
}

impl InProcessRateLimiter {
    fn limiter(&self, scope: RateScope, limit: u32) -> Arc<Keyed> {
        if let Some(l) = self
            .limiters
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(scope, limit))
        {
            return l.clone();
        }
        let mut all = self.limiters.write().unwrap_or_else(|p| p.into_inner());
        all.entry((scope, limit))
            .or_insert_with(|| {
                let burst = NonZeroU32::new(limit.max(1)).unwrap_or(NonZeroU32::MIN);
                let window = Duration::from_secs(scope.window().secs());
                let quota = Quota::with_period(window / burst.get())
                    .unwrap_or_else(|| Quota::per_hour(burst))
                    .allow_burst(burst);
                Arc::new(Governor::keyed(quota).with_middleware::<StateInformationMiddleware>())
            })
            .clone()
    }
}

#[async_trait]
impl RateLimiter for InProcessRateLimiter {
    /// Forgets credentials whose budgets are whole again (bounded memory).
    fn housekeeping(&self) {
        for l in self
            .limiters
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            l.retain_recent();
        }
    }

    async fn check(&self, credential: CredentialRef, scope: RateScope, limit: u32) -> RateDecision {
        let limit = limit.max(1);
        let seconds_per_request = scope.window().secs() as f64 / f64::from(limit);
        match self.limiter(scope, limit).check_key(&credential) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                RateDecision {
                    scope,
                    limit,
                    remaining,
                    reset_secs: (f64::from(limit - remaining.min(limit)) * seconds_per_request)
                        .ceil() as u64,
                    retry_after_secs: None,
                }
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                RateDecision {
                    scope,
                    limit,
                    remaining: 0,
                    reset_secs: (f64::from(limit) * seconds_per_request).ceil() as u64,
                    retry_after_secs: Some(wait.as_secs_f64().ceil().max(1.0) as u64),
                }
            }
        }
    }
}

/// `RateLimit-Policy` and `RateLimit` headers (IETF httpapi-ratelimit-headers), lower-case
/// names as HTTP/2 wants them.
pub fn headers(d: &RateDecision) -> [(&'static str, String); 2] {
    let name = d.scope.as_str();
    [
        (
            "ratelimit-policy",
            format!("\"{name}\";q={};w={}", d.limit, d.scope.window().secs()),
        ),
        (
            "ratelimit",
            format!("\"{name}\";r={};t={}", d.remaining, d.reset_secs),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn budgets_are_per_credential_and_per_scope() {
        let l = InProcessRateLimiter::default();
        let (a, b) = (
            CredentialRef::ApiKey(uuid::Uuid::new_v4()),
            CredentialRef::ApiKey(uuid::Uuid::new_v4()),
        );
        let first = l.check(a, RateScope::Reads, 2).await;
        assert!(first.allowed());
        assert_eq!(first.remaining, 1);
        assert!(l.check(a, RateScope::Reads, 2).await.allowed());
        let refused = l.check(a, RateScope::Reads, 2).await;
        assert!(!refused.allowed());
        // One request every 1800 s: the next is about half an hour away.
        let wait = refused.retry_after_secs.unwrap();
        assert!((1790..=1800).contains(&wait), "{wait}");
        // Other credential, other scope: untouched.
        assert!(l.check(b, RateScope::Reads, 2).await.allowed());
        assert!(l.check(a, RateScope::Writes, 2).await.allowed());
        let h = headers(&first);
        assert_eq!(h[0].1, "\"reads\";q=2;w=3600");
        assert!(h[1].1.starts_with("\"reads\";r=1;t="));
    }

    #[actix_web::test]
    async fn plan_budgets_refill_per_minute() {
        let l = InProcessRateLimiter::default();
        let a = CredentialRef::Session(uuid::Uuid::new_v4());
        for _ in 0..2 {
            assert!(l.check(a, RateScope::PlanBulk, 2).await.allowed());
        }
        let refused = l.check(a, RateScope::PlanBulk, 2).await;
        // One request every 30 s.
        let wait = refused.retry_after_secs.unwrap();
        assert!((29..=30).contains(&wait), "{wait}");
        assert_eq!(headers(&refused)[0].1, "\"plan_bulk\";q=2;w=60");
    }
}
