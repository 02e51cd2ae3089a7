//! Free-plan daily throttles (spec "Free-plan daily throttles"): a CLI session of an organization
//! on the free plan may post 50 agent reports and send 20 e-mails per UTC day, counted per
//! organization. API keys (refused on the free plan anyway), web sessions and paid plans are not
//! throttled. Each accepted request counts once, whatever it carries (docs/decisions.md).
//!
//! The counting is a port ([`DailyCounters`]) whose one call adds one and checks the limit
//! atomically, so the count is right across restarts and several server processes (Postgres:
//! `crates/store-pg/src/repo/daily_counters.rs`).

use std::sync::Arc;

use async_trait::async_trait;
use teamcomm_kernel::{Error, ErrorCode, OrgId, RepoError, SharedClock};
use teamcomm_org::PlanTier;
use time::{Date, Duration, OffsetDateTime, Time};

use crate::{CredentialKind, Principal};

/// What a route counts against a free-plan organization's day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DailyLimit {
    /// `POST /v1/agent-reports/`.
    AgentReports,
    /// `POST /v1/send-email/`, `POST /v1/agent-email/send/`.
    Emails,
}

impl DailyLimit {
    pub const ALL: [DailyLimit; 2] = [DailyLimit::AgentReports, DailyLimit::Emails];

    /// The counter's stored name, also shown in the refusal's `extra.limit_name`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DailyLimit::AgentReports => "agent_reports",
            DailyLimit::Emails => "emails",
        }
    }

    /// Requests per organization per UTC day.
    pub const fn per_day(self) -> u32 {
        match self {
            DailyLimit::AgentReports => 50,
            DailyLimit::Emails => 20,
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        DailyLimit::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// Per-organization daily counters.
#[async_trait]
pub trait DailyCounters: Send + Sync + 'static {
    /// Adds one to `org`'s count of `limit` on `day` unless it already reached `max`, in one
    /// atomic step; answers the count after adding, or `None` when the day's budget was spent
    /// (and nothing was added).
    async fn spend(
        &self,
        org: OrgId,
        limit: DailyLimit,
        day: Date,
        max: u32,
    ) -> Result<Option<u32>, RepoError>;

    /// Takes back one earlier [`spend`](DailyCounters::spend) of that day (never below zero).
    async fn give_back(&self, org: OrgId, limit: DailyLimit, day: Date) -> Result<(), RepoError>;

    /// The count of `org`'s `limit` on `day` (0 when nothing was counted).
    async fn used(&self, org: OrgId, limit: DailyLimit, day: Date) -> Result<u32, RepoError>;
}

/// One request counted against a day: what [`DailyThrottle::give_back`] takes back when the
/// request was then refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DailySpend {
    pub org: OrgId,
    pub limit: DailyLimit,
    pub day: Date,
    /// The day's count with this request.
    pub used: u32,
}

/// The free-plan daily throttle.
#[derive(Clone)]
pub struct DailyThrottle {
    counters: Arc<dyn DailyCounters>,
    clock: SharedClock,
}

impl DailyThrottle {
    pub fn new(counters: Arc<dyn DailyCounters>, clock: SharedClock) -> Self {
        DailyThrottle { counters, clock }
    }

    /// Whether `principal`'s requests count against the daily limits: CLI sessions of free-plan
    /// organizations only.
    pub fn applies_to(principal: &Principal) -> bool {
        principal.org.plan == PlanTier::Free
            && matches!(principal.credential, CredentialKind::CliToken { .. })
    }

    /// Counts one request of `principal` against `limit`: `Ok(None)` when the throttle does not
    /// apply to it, `Ok(Some(_))` when counted, 429 `free_plan_daily_limit_exceeded` with
    /// `retry_after` (seconds until the next 00:00 UTC) when the day's budget is spent.
    pub async fn spend(
        &self,
        principal: &Principal,
        limit: DailyLimit,
    ) -> Result<Option<DailySpend>, Error> {
        if !DailyThrottle::applies_to(principal) {
            return Ok(None);
        }
        let now = self.clock.now().to_offset(time::UtcOffset::UTC);
        let org = principal.org.id;
        let max = limit.per_day();
        match self.counters.spend(org, limit, now.date(), max).await? {
            Some(used) => Ok(Some(DailySpend {
                org,
                limit,
                day: now.date(),
                used,
            })),
            None => Err(exceeded(limit, now)),
        }
    }

    /// Takes back a spend whose request was refused afterwards (so a refused request costs
    /// nothing); failures are the caller's to log.
    pub async fn give_back(&self, spend: DailySpend) -> Result<(), RepoError> {
        self.counters
            .give_back(spend.org, spend.limit, spend.day)
            .await
    }

    /// What `org` counted of `limit` today (UTC).
    pub async fn used_today(&self, org: OrgId, limit: DailyLimit) -> Result<u32, RepoError> {
        let today = self.clock.now().to_offset(time::UtcOffset::UTC).date();
        self.counters.used(org, limit, today).await
    }
}

/// Seconds from `now` to the next 00:00 UTC (at least 1).
pub fn seconds_until_next_utc_midnight(now: OffsetDateTime) -> u64 {
    let now = now.to_offset(time::UtcOffset::UTC);
    let next = (now.date() + Duration::days(1))
        .with_time(Time::MIDNIGHT)
        .assume_utc();
    let secs = (next - now).as_seconds_f64().ceil();
    (secs as u64).max(1)
}

fn exceeded(limit: DailyLimit, now: OffsetDateTime) -> Error {
    let after = seconds_until_next_utc_midnight(now);
    let what = match limit {
        DailyLimit::AgentReports => "agent reports",
        DailyLimit::Emails => "e-mails",
    };
    Error::new(
        ErrorCode::FreePlanDailyLimitExceeded,
        format!(
            "The free plan allows {} {what} per organization per day; the limit resets at 00:00 UTC (in {after} seconds). Upgrade your plan for more.",
            limit.per_day()
        ),
    )
    .with_extra("retry_after", after)
    .with_extra("limit", limit.per_day())
    .with_extra("limit_name", limit.as_str())
}

/// In-memory [`DailyCounters`] (one mutex: atomic like the Postgres statement).
#[cfg(any(test, feature = "testing"))]
#[derive(Default)]
pub struct InMemoryDailyCounters {
    counts: std::sync::Mutex<std::collections::HashMap<(OrgId, DailyLimit, Date), u32>>,
}

#[cfg(any(test, feature = "testing"))]
#[async_trait]
impl DailyCounters for InMemoryDailyCounters {
    async fn spend(
        &self,
        org: OrgId,
        limit: DailyLimit,
        day: Date,
        max: u32,
    ) -> Result<Option<u32>, RepoError> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let used = counts.entry((org, limit, day)).or_default();
        if *used >= max {
            return Ok(None);
        }
        *used += 1;
        Ok(Some(*used))
    }

    async fn give_back(&self, org: OrgId, limit: DailyLimit, day: Date) -> Result<(), RepoError> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(used) = counts.get_mut(&(org, limit, day)) {
            *used = used.saturating_sub(1);
        }
        Ok(())
    }

    async fn used(&self, org: OrgId, limit: DailyLimit, day: Date) -> Result<u32, RepoError> {
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        Ok(counts.get(&(org, limit, day)).copied().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use teamcomm_kernel::{ApiKeyId, CliTokenId, UserId};
    use teamcomm_org::testing::FixedClock;
    use teamcomm_org::{Organization, Role, User};
    use time::macros::datetime;

    use super::*;

    fn organization() -> Organization {
        Organization {
            id: OrgId(uuid::Uuid::new_v4()),
            name: "Acme".into(),
            plan: PlanTier::Free,
            api_access: false,
            plan_beta: false,
            exchange_tokens: false,
            timezone: "UTC".into(),
            platform: None,
            created_at: datetime!(2026-01-01 00:00:00 UTC),
        }
    }

    fn principal(plan: PlanTier, credential: CredentialKind, org: &Organization) -> Principal {
        let org = Arc::new(Organization {
            plan,
            ..org.clone()
        });
        let user = User {
            id: UserId(uuid::Uuid::new_v4()),
            org_id: org.id,
            email: "a@example.com".into(),
            first_name: "A".into(),
            last_name: "B".into(),
            role: Role::Admin,
            is_active: true,
            timezone: "UTC".into(),
            occupation: String::new(),
            image: None,
            birth_date: None,
            work_anniversary: None,
            created_at: org.created_at,
        };
        Principal {
            user,
            org,
            credential,
        }
    }

    fn cli() -> CredentialKind {
        CredentialKind::CliToken {
            id: CliTokenId(uuid::Uuid::new_v4()),
        }
    }

    fn world(now: OffsetDateTime) -> (DailyThrottle, Arc<FixedClock>, Arc<InMemoryDailyCounters>) {
        let clock = Arc::new(FixedClock::new(now));
        let counters = Arc::new(InMemoryDailyCounters::default());
        (
            DailyThrottle::new(counters.clone(), clock.clone()),
            clock,
            counters,
        )
    }

    #[test]
    fn the_reset_is_the_next_midnight_utc() {
        assert_eq!(
            seconds_until_next_utc_midnight(datetime!(2026-11-26 23:59:30 UTC)),
            30
        );
        assert_eq!(
            seconds_until_next_utc_midnight(datetime!(2026-11-26 00:00:00 UTC)),
            86_400
        );
        // Another offset: the same instant, the same answer.
        assert_eq!(
            seconds_until_next_utc_midnight(datetime!(2026-11-27 01:59:30 +2)),
            30
        );
        assert_eq!(
            seconds_until_next_utc_midnight(datetime!(2026-11-26 23:59:59.5 UTC)),
            1
        );
    }

    #[tokio::test]
    async fn a_free_cli_session_gets_its_daily_budget_then_429_until_midnight() {
        let org = organization();
        let (throttle, clock, _) = world(datetime!(2026-11-26 22:00:00 UTC));
        let who = principal(PlanTier::Free, cli(), &org);
        for n in 1..=20 {
            let spend = throttle.spend(&who, DailyLimit::Emails).await.unwrap();
            assert_eq!(spend.unwrap().used, n);
        }
        let e = throttle
            .spend(&who, DailyLimit::Emails)
            .await
            .expect_err("21st");
        assert_eq!(e.code(), ErrorCode::FreePlanDailyLimitExceeded);
        assert_eq!(e.extra()["retry_after"], 7200);
        assert_eq!(e.extra()["limit"], 20);
        assert_eq!(e.extra()["limit_name"], "emails");
        // Agent reports have their own budget.
        let spend = throttle.spend(&who, DailyLimit::AgentReports).await;
        assert_eq!(spend.unwrap().unwrap().used, 1);
        // Another session of the same organization shares the organization's budget.
        let other = principal(PlanTier::Free, cli(), &org);
        assert!(throttle.spend(&other, DailyLimit::Emails).await.is_err());
        // A new UTC day, a new budget.
        clock.set(datetime!(2026-11-27 00:00:00 UTC));
        assert_eq!(
            throttle
                .spend(&who, DailyLimit::Emails)
                .await
                .unwrap()
                .unwrap()
                .used,
            1
        );
    }

    #[tokio::test]
    async fn paid_plans_api_keys_and_web_sessions_are_not_counted() {
        let org = organization();
        let (throttle, _, counters) = world(datetime!(2026-11-26 12:00:00 UTC));
        let key = CredentialKind::ApiKey {
            id: ApiKeyId(uuid::Uuid::new_v4()),
            is_agent_key: true,
            scopes: vec![],
        };
        for who in [
            principal(PlanTier::Starter, cli(), &org),
            principal(PlanTier::Enterprise, cli(), &org),
            principal(PlanTier::Free, key, &org),
            principal(PlanTier::Free, CredentialKind::Session, &org),
        ] {
            for _ in 0..30 {
                assert_eq!(
                    throttle.spend(&who, DailyLimit::Emails).await.unwrap(),
                    None
                );
            }
        }
        let today = datetime!(2026-11-26 12:00:00 UTC).date();
        assert_eq!(
            counters
                .used(org.id, DailyLimit::Emails, today)
                .await
                .unwrap(),
            0
        );
    }

    #[tokio::test]
    async fn a_spend_given_back_is_spent_again() {
        let org = organization();
        let (throttle, _, _) = world(datetime!(2026-11-26 12:00:00 UTC));
        let who = principal(PlanTier::Free, cli(), &org);
        let mut last = None;
        for _ in 0..50 {
            last = throttle
                .spend(&who, DailyLimit::AgentReports)
                .await
                .unwrap();
        }
        assert!(
            throttle
                .spend(&who, DailyLimit::AgentReports)
                .await
                .is_err()
        );
        throttle.give_back(last.unwrap()).await.unwrap();
        assert_eq!(
            throttle
                .used_today(org.id, DailyLimit::AgentReports)
                .await
                .unwrap(),
            49
        );
        assert!(throttle.spend(&who, DailyLimit::AgentReports).await.is_ok());
        assert!(
            throttle
                .spend(&who, DailyLimit::AgentReports)
                .await
                .is_err()
        );
    }
}
