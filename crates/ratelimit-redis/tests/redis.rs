//! The Redis rate limiter against the real Redis at 127.0.0.1:6379 (`.ci/run` starts one). Each
//! test has its own key prefix. Without a Redis the tests skip, unless `CI` is set: then they
//! fail, so CI cannot pass without running them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use teamcomm_keys::{CredentialRef, RateLimiter, RateScope};
use teamcomm_ratelimit_redis::RedisRateLimiter;

const URL: &str = "redis://127.0.0.1:6379";

/// True when the Redis answers `PING`; without one, false (skip) outside CI, a panic in CI.
fn redis_answers() -> bool {
    let ping = redis::Client::open(URL).and_then(|c| {
        let mut conn = c.get_connection_with_timeout(Duration::from_secs(2))?;
        redis::cmd("PING").query::<String>(&mut conn)
    });
    match ping {
        Ok(_) => true,
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("CI is set and Redis does not answer on {URL}: {e}")
        }
        Err(e) => {
            eprintln!("skipped: Redis does not answer on {URL} ({e})");
            false
        }
    }
}

fn prefix() -> String {
    format!("teamcomm-test:{}", uuid::Uuid::new_v4().simple())
}

fn key() -> CredentialRef {
    CredentialRef::ApiKey(uuid::Uuid::new_v4())
}

#[tokio::test]
async fn a_budget_is_spent_then_refused_with_the_wait_of_one_request() {
    if !redis_answers() {
        return;
    }
    let limiter = RedisRateLimiter::new(URL, &prefix()).unwrap();
    let (a, b) = (key(), key());
    let first = limiter.check(a, RateScope::Reads, 2).await;
    assert!(first.allowed());
    assert_eq!((first.limit, first.remaining), (2, 1));
    // One request used: whole again in one interval (1800 s).
    assert!((1799..=1800).contains(&first.reset_secs), "{first:?}");
    let second = limiter.check(a, RateScope::Reads, 2).await;
    assert!(second.allowed());
    assert_eq!(second.remaining, 0);
    let refused = limiter.check(a, RateScope::Reads, 2).await;
    assert!(!refused.allowed());
    assert_eq!(refused.remaining, 0);
    let wait = refused.retry_after_secs.unwrap();
    assert!((1790..=1800).contains(&wait), "{wait}");
    // Another credential, another scope: their own budgets.
    assert!(limiter.check(b, RateScope::Reads, 2).await.allowed());
    assert!(limiter.check(a, RateScope::Writes, 2).await.allowed());
    assert_eq!(limiter.failures(), 0);
}

#[tokio::test]
async fn plan_budgets_refill_per_minute() {
    if !redis_answers() {
        return;
    }
    let limiter = RedisRateLimiter::new(URL, &prefix()).unwrap();
    let a = key();
    let first = limiter.check(a, RateScope::PlanBulk, 2).await;
    // One request used of 2 a minute: whole again in 30 s.
    assert!((29..=30).contains(&first.reset_secs), "{first:?}");
    assert!(limiter.check(a, RateScope::PlanBulk, 2).await.allowed());
    let refused = limiter.check(a, RateScope::PlanBulk, 2).await;
    let wait = refused.retry_after_secs.unwrap();
    assert!((29..=30).contains(&wait), "{wait}");
}

#[tokio::test]
async fn limiters_of_several_processes_share_one_budget() {
    if !redis_answers() {
        return;
    }
    let prefix = prefix();
    // Two limiters, two connections: as two server processes have.
    let one = RedisRateLimiter::new(URL, &prefix).unwrap();
    let two = RedisRateLimiter::new(URL, &prefix).unwrap();
    let who = CredentialRef::CliToken(uuid::Uuid::new_v4());
    let mut allowed = 0;
    for i in 0..20 {
        let limiter = if i % 2 == 0 { &one } else { &two };
        if limiter.check(who, RateScope::Writes, 10).await.allowed() {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 10);
}

#[tokio::test]
async fn concurrent_checks_never_grant_more_than_the_budget() {
    if !redis_answers() {
        return;
    }
    let limiter = Arc::new(RedisRateLimiter::new(URL, &prefix()).unwrap());
    let who = key();
    let tasks: Vec<_> = (0..40)
        .map(|_| {
            let limiter = limiter.clone();
            tokio::spawn(async move { limiter.check(who, RateScope::Email, 25).await.allowed() })
        })
        .collect();
    let mut allowed = 0;
    for t in tasks {
        allowed += usize::from(t.await.unwrap());
    }
    assert_eq!(allowed, 25);
}

#[tokio::test]
async fn the_script_is_loaded_again_when_redis_forgot_it() {
    if !redis_answers() {
        return;
    }
    let limiter = RedisRateLimiter::new(URL, &prefix()).unwrap();
    let who = key();
    assert!(limiter.check(who, RateScope::Auth, 3).await.allowed());
    let mut conn = redis::Client::open(URL).unwrap().get_connection().unwrap();
    redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query::<()>(&mut conn)
        .unwrap();
    let d = limiter.check(who, RateScope::Auth, 3).await;
    assert!(d.allowed());
    assert_eq!(d.remaining, 1);
    assert_eq!(limiter.failures(), 0);
}

#[tokio::test]
async fn an_unreachable_redis_lets_requests_through_and_counts_it() {
    // Nothing listens on port 1.
    let failures = Arc::new(AtomicUsize::new(0));
    let seen = failures.clone();
    let limiter = RedisRateLimiter::new("redis://127.0.0.1:1", "teamcomm-test:down")
        .unwrap()
        .with_timeout(Duration::from_millis(200))
        .on_unavailable(move || {
            seen.fetch_add(1, Ordering::SeqCst);
        });
    let who = key();
    for _ in 0..5 {
        let started = Instant::now();
        let d = limiter.check(who, RateScope::Reads, 1).await;
        assert!(d.allowed(), "{d:?}");
        assert_eq!((d.limit, d.remaining), (1, 1));
        // Bounded by the timeout; after the first failure, no wait at all.
        assert!(started.elapsed() < Duration::from_secs(2));
    }
    assert_eq!(limiter.failures(), 5);
    assert_eq!(failures.load(Ordering::SeqCst), 5);
}

#[test]
fn keys_name_the_prefix_scope_and_credential() {
    let limiter = RedisRateLimiter::new(URL, "p:").unwrap();
    let id = uuid::Uuid::nil();
    assert_eq!(
        limiter.key(CredentialRef::CliToken(id), RateScope::WorkflowTriggers),
        format!("p:workflow_triggers:cli:{id}")
    );
    assert!(RedisRateLimiter::new("not a url", "p").is_err());
}
