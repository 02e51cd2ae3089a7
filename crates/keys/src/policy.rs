//! Access rules that depend on the credential type (spec "Authentication method matrix" and
//! "CLI Bearer tokens on free-plan organizations"). Each route declares its [`CliAccess`] in the
//! app's route table; the rule applied to it lives here.

use teamcomm_kernel::{Error, ErrorCode};
use teamcomm_org::PlanTier;

/// What a route allows a CLI session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CliAccess {
    /// Paid plans only: a free-plan organization's CLI session gets `plan_upgrade_required`.
    PaidPlans,
    /// Every plan: the spec's free-plan allow-list.
    AnyPlan,
    /// Not for CLI sessions (a write in a group the matrix makes read-only to the CLI):
    /// `insufficient_scope`, or `plan_upgrade_required` first on the free plan.
    Refused,
}

/// Whether a CLI session of an organization on `plan` may call a route that declares `access`.
/// `upgrade_url` is where a free-plan user can upgrade.
pub fn check_cli_access(plan: PlanTier, access: CliAccess, upgrade_url: &str) -> Result<(), Error> {
    if plan == PlanTier::Free && access != CliAccess::AnyPlan {
        return Err(Error::new(
            ErrorCode::PlanUpgradeRequired,
            "This endpoint is not available on the free plan. Upgrade your plan to use it from the CLI.",
        )
        .with_upgrade_url(upgrade_url));
    }
    if access == CliAccess::Refused {
        return Err(Error::new(
            ErrorCode::InsufficientScope,
            "CLI sessions can only read this endpoint; use an API key to change it.",
        )
        .with_extra("required_scope", "api_key"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_plans_reach_only_the_allow_list() {
        assert!(check_cli_access(PlanTier::Free, CliAccess::AnyPlan, "u").is_ok());
        for access in [CliAccess::PaidPlans, CliAccess::Refused] {
            let e = check_cli_access(PlanTier::Free, access, "https://app/billing").unwrap_err();
            assert_eq!(e.code(), ErrorCode::PlanUpgradeRequired);
            assert_eq!(e.upgrade_url(), Some("https://app/billing"));
        }
    }

    #[test]
    fn paid_plans_reach_everything_but_refused_routes() {
        for plan in [PlanTier::Starter, PlanTier::Business, PlanTier::Enterprise] {
            assert!(check_cli_access(plan, CliAccess::PaidPlans, "u").is_ok());
            assert!(check_cli_access(plan, CliAccess::AnyPlan, "u").is_ok());
            let e = check_cli_access(plan, CliAccess::Refused, "u").unwrap_err();
            assert_eq!(e.code(), ErrorCode::InsufficientScope);
            assert_eq!(e.extra()["required_scope"], "api_key");
        }
    }
}
