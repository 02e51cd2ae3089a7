//! Hourly rate limits per credential and named scope (spec "Rate limiting (general API)").
//! The rules — which scope a request falls in, what each scope allows — live here; the counting
//! is a port ([`RateLimiter`]) so an in-process limiter can be swapped for a shared store.

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

    /// Suffix of the `TEAMCOMM_RATE_LIMIT_PER_HOUR_<SCOPE>` setting.
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

    /// Requests per hour per credential on standard plans.
    pub const fn default_per_hour(self) -> u32 {
        match self {
            RateScope::Reads => 6_000,
            RateScope::Writes => 1_200,
            RateScope::Messaging => 600,
            RateScope::Email => 120,
            RateScope::Invitations => 120,
            RateScope::WorkflowTriggers => 600,
            RateScope::Agent => 3_600,
            RateScope::Auth => 30,
            // Placeholders until the Plan scopes get their per-minute windows (120, 60, 30,
            // 240 a minute): the same counts spread over an hour.
            RateScope::PlanReads => 120 * 60,
            RateScope::PlanWrites => 60 * 60,
            RateScope::PlanBulk => 30 * 60,
            RateScope::PlanDelta => 240 * 60,
        }
    }
}

/// Hourly budgets for every scope, with the multiplier enterprise plans get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateQuotas {
    per_hour: [u32; RateScope::ALL.len()],
    pub enterprise_multiplier: u32,
}

impl Default for RateQuotas {
    fn default() -> Self {
        RateQuotas {
            per_hour: RateScope::ALL.map(RateScope::default_per_hour),
            enterprise_multiplier: 4,
        }
    }
}

impl RateQuotas {
    pub fn set(&mut self, scope: RateScope, per_hour: u32) {
        self.per_hour[scope as usize] = per_hour.max(1);
    }

    /// The hourly budget of `scope` for a standard or an enterprise organization.
    pub fn per_hour(&self, scope: RateScope, enterprise: bool) -> u32 {
        let base = self.per_hour[scope as usize];
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
    /// The hourly budget.
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

/// Counts requests per (credential, scope). Implementations must be safe to share across
/// workers; a multi-instance deployment needs one whose state is shared (see docs).
#[async_trait]
pub trait RateLimiter: Send + Sync + 'static {
    async fn check(
        &self,
        credential: CredentialRef,
        scope: RateScope,
        per_hour: u32,
    ) -> RateDecision;

    /// Drops state nobody needs any more (called periodically); nothing by default.
    fn housekeeping(&self) {}
}

/// The rate-limit use case: a credential spends one request of a scope's hourly budget, which
/// is larger for enterprise organizations.
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
        let per_hour = self.quotas.per_hour(scope, enterprise);
        self.limiter.check(credential, scope, per_hour).await
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
        assert_eq!(q.per_hour(RateScope::Reads, false), 10);
        assert_eq!(q.per_hour(RateScope::Reads, true), 40);
        assert_eq!(q.per_hour(RateScope::Auth, false), 30);
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
