//! Rate limits per credential and named scope: hourly for the general API (spec "Rate limiting
//! (general API)"), per minute for the Plan area (spec "Plan area limits": reads 120, writes 60,
//! bulk 30, delta 240 a minute). The rules — which scope a request falls in, what each scope
//! allows in which window — live here; the counting is a port ([`RateLimiter`]) so an in-process
//! limiter can be swapped for a shared store. A limiter reads a scope's window from
//! [`RateScope::window`].

use async_trait::async_trait;

use crate::CredentialRef;

/// The named budgets of the general API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RateScope {
    /// Every GET not covered by another scope.
    Reads,
    /// POST/PATCH/PUT/DELETE that are not agent or messaging calls.
    Writes,
    /// Bot messages on chat platforms, opening conversations.
    Messaging,
    Email,
    /// Creating or resending invitations.
    Invitations,
    WorkflowTriggers,
    /// Agent reports, health, messages, e-mail, webhook, registration.
    Agent,
    /// One-time-code, OAuth and token exchange.
    Auth,
    /// Plan (Beta) reads, per actor (spec "Plan area limits").
    PlanReads,
    /// Plan writes.
    PlanWrites,
    /// Plan bulk calls (`tasks/bulk/`).
    PlanBulk,
    /// The Plan delta feed (`boards/{b}/delta/`).
    PlanDelta,
}

/// The period a scope's budget refills over (a budget of `n` is a burst of `n`, refilled one
/// request every `window / n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateWindow {
    Hour,
    Minute,
}

impl RateWindow {
    pub const fn secs(self) -> u64 {
        match self {
            RateWindow::Hour => 3600,
            RateWindow::Minute => 60,
        }
    }

    /// The word of the `TEAMCOMM_RATE_LIMIT_PER_<WINDOW>_<SCOPE>` settings.
    pub const fn setting_word(self) -> &'static str {
        match self {
            RateWindow::Hour => "HOUR",
            RateWindow::Minute => "MINUTE",
        }
    }
}

impl RateScope {
    pub const ALL: [RateScope; 12] = [
        RateScope::Reads,
        RateScope::Writes,
        RateScope::Messaging,
        RateScope::Email,
        RateScope::Invitations,
        RateScope::WorkflowTriggers,
        RateScope::Agent,
        RateScope::Auth,
        RateScope::PlanReads,
        RateScope::PlanWrites,
        RateScope::PlanBulk,
        RateScope::PlanDelta,
    ];

    /// Name used in `RateLimit-Policy`/`RateLimit` headers and messages.
    pub const fn as_str(self) -> &'static str {
        match self {
            RateScope::Reads => "reads",
            RateScope::Writes => "writes",
            RateScope::Messaging => "messaging",
            RateScope::Email => "email",
            RateScope::Invitations => "invitations",
            RateScope::WorkflowTriggers => "workflow_triggers",
            RateScope::Agent => "agent",
            RateScope::Auth => "auth",
            RateScope::PlanReads => "plan_reads",
            RateScope::PlanWrites => "plan_writes",
            RateScope::PlanBulk => "plan_bulk",
            RateScope::PlanDelta => "plan_delta",
        }
    }

    /// The window of the scope's budget: a minute for the Plan scopes, an hour elsewhere.
    pub const fn window(self) -> RateWindow {
        match self {
            RateScope::PlanReads
            | RateScope::PlanWrites
            | RateScope::PlanBulk
            | RateScope::PlanDelta => RateWindow::Minute,
            _ => RateWindow::Hour,
        }
    }

    /// The setting that overrides the budget: `TEAMCOMM_RATE_LIMIT_PER_HOUR_READS`,
    /// `TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_READS`…
    pub fn setting(self) -> String {
        format!(
            "TEAMCOMM_RATE_LIMIT_PER_{}_{}",
            self.window().setting_word(),
            self.env_suffix()
        )
    }

    /// Suffix of the scope's setting ([`RateScope::setting`]).
    pub const fn env_suffix(self) -> &'static str {
        match self {
            RateScope::Reads => "READS",
            RateScope::Writes => "WRITES",
            RateScope::Messaging => "MESSAGING",
            RateScope::Email => "EMAIL",
            RateScope::Invitations => "INVITATIONS",
            RateScope::WorkflowTriggers => "WORKFLOW_TRIGGERS",
            RateScope::Agent => "AGENT",
            RateScope::Auth => "AUTH",
            RateScope::PlanReads => "PLAN_READS",
            RateScope::PlanWrites => "PLAN_WRITES",
            RateScope::PlanBulk => "PLAN_BULK",
            RateScope::PlanDelta => "PLAN_DELTA",
        }
    }

    /// Requests per window ([`RateScope::window`]) per credential on standard plans.
    pub const fn default_limit(self) -> u32 {
        match self {
            RateScope::Reads => 6_000,
            RateScope::Writes => 1_200,
            RateScope::Messaging => 600,
            RateScope::Email => 120,
            RateScope::Invitations => 120,
            RateScope::WorkflowTriggers => 600,
            RateScope::Agent => 3_600,
            RateScope::Auth => 30,
            // A minute each (per actor: a person's credentials share one budget).
            RateScope::PlanReads => 120,
            RateScope::PlanWrites => 60,
            RateScope::PlanBulk => 30,
            RateScope::PlanDelta => 240,
        }
    }
}

/// Budgets for every scope (each per its window), with the multiplier enterprise plans get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateQuotas {
    limits: [u32; RateScope::ALL.len()],
    pub enterprise_multiplier: u32,
}

impl Default for RateQuotas {
    fn default() -> Self {
        RateQuotas {
            limits: RateScope::ALL.map(RateScope::default_limit),
            enterprise_multiplier: 4,
        }
    }
}

impl RateQuotas {
    /// Sets the budget of `scope` (requests per its window).
    pub fn set(&mut self, scope: RateScope, limit: u32) {
        self.limits[scope as usize] = limit.max(1);
    }

    /// The budget of `scope` per its window for a standard or an enterprise organization.
    pub fn limit(&self, scope: RateScope, enterprise: bool) -> u32 {
        let base = self.limits[scope as usize];
        if enterprise {
            base.saturating_mul(self.enterprise_multiplier.max(1))
        } else {
            base
        }
    }
}

/// The verdict on one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateDecision {
    pub scope: RateScope,
    /// The budget per the scope's window.
    pub limit: u32,
    /// Requests left right now.
    pub remaining: u32,
    /// Seconds until the budget is whole again.
    pub reset_secs: u64,
    /// Seconds until a request would pass, when this one is refused.
    pub retry_after_secs: Option<u64>,
}

impl RateDecision {
    pub fn allowed(&self) -> bool {
        self.retry_after_secs.is_none()
    }
}

/// Counts requests per (credential, scope): `limit` requests per the scope's window
/// ([`RateScope::window`]). Implementations must be safe to share across workers; a
/// multi-instance deployment needs one whose state is shared (see docs).
#[async_trait]
pub trait RateLimiter: Send + Sync + 'static {
    async fn check(&self, credential: CredentialRef, scope: RateScope, limit: u32) -> RateDecision;

    /// Drops state nobody needs any more (called periodically); nothing by default.
    fn housekeeping(&self) {}
}

/// The rate-limit use case: a credential spends one request of a scope's budget, which is
/// larger for enterprise organizations.
#[derive(Clone)]
pub struct RateLimits {
    quotas: RateQuotas,
    limiter: std::sync::Arc<dyn RateLimiter>,
}

impl RateLimits {
    pub fn new(quotas: RateQuotas, limiter: std::sync::Arc<dyn RateLimiter>) -> Self {
        RateLimits { quotas, limiter }
    }

    /// Spends one request of `credential`'s budget for `scope`.
    pub async fn spend(
        &self,
        credential: CredentialRef,
        scope: RateScope,
        enterprise: bool,
    ) -> RateDecision {
        let limit = self.quotas.limit(scope, enterprise);
        self.limiter.check(credential, scope, limit).await
    }

    pub fn housekeeping(&self) {
        self.limiter.housekeeping();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas() {
        let mut q = RateQuotas::default();
        q.set(RateScope::Reads, 10);
        assert_eq!(q.limit(RateScope::Reads, false), 10);
        assert_eq!(q.limit(RateScope::Reads, true), 40);
        assert_eq!(q.limit(RateScope::Auth, false), 30);
    }

    #[test]
    fn plan_scopes_count_per_minute() {
        let q = RateQuotas::default();
        let per_minute = [
            (RateScope::PlanReads, 120),
            (RateScope::PlanWrites, 60),
            (RateScope::PlanBulk, 30),
            (RateScope::PlanDelta, 240),
        ];
        for (scope, n) in per_minute {
            assert_eq!(scope.window(), RateWindow::Minute);
            assert_eq!(q.limit(scope, false), n);
        }
        assert_eq!(RateScope::Reads.window().secs(), 3600);
        assert_eq!(
            RateScope::PlanBulk.setting(),
            "TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_BULK"
        );
        assert_eq!(
            RateScope::Reads.setting(),
            "TEAMCOMM_RATE_LIMIT_PER_HOUR_READS"
        );
    }

    /// Records the budget each check was given.
    #[derive(Default)]
    struct Recorder(std::sync::Mutex<Vec<(RateScope, u32)>>);

    #[async_trait]
    impl RateLimiter for Recorder {
        async fn check(
            &self,
            _credential: CredentialRef,
            scope: RateScope,
            per_hour: u32,
        ) -> RateDecision {
            self.0.lock().unwrap().push((scope, per_hour));
            RateDecision {
                scope,
                limit: per_hour,
                remaining: per_hour - 1,
                reset_secs: 0,
                retry_after_secs: None,
            }
        }
    }

    #[tokio::test]
    async fn a_spend_checks_the_scope_budget_of_the_plan() {
        let mut quotas = RateQuotas::default();
        quotas.set(RateScope::Writes, 100);
        let recorder = std::sync::Arc::new(Recorder::default());
        let limits = RateLimits::new(quotas, recorder.clone());
        let who = CredentialRef::Session(uuid::Uuid::nil());
        let standard = limits.spend(who, RateScope::Writes, false).await;
        let enterprise = limits.spend(who, RateScope::Writes, true).await;
        assert_eq!((standard.limit, enterprise.limit), (100, 400));
        assert_eq!(
            *recorder.0.lock().unwrap(),
            [(RateScope::Writes, 100), (RateScope::Writes, 400)]
        );
    }
}
