//! Access rules that depend on the credential type (spec "Authentication method matrix" and
//! "CLI Bearer tokens on free-plan organizations"). Paths are the normalised, trailing-slash form.

use teamcomm_kernel::{Error, ErrorCode};
use teamcomm_org::PlanTier;

/// The endpoints a CLI token of a free-plan organization may call.
pub fn free_plan_cli_allows(method: &str, path: &str) -> bool {
    let get = method == "GET";
    let post = method == "POST";
    match path {
        "/v1/agent-reports/" | "/v1/send-email/" | "/v1/agent-messages/read/" => post,
        "/v1/agent-messages/" => get || post,
        "/v1/agent/health/" | "/v1/me/" | "/v1/organization/" | "/v1/cli/status/" => get,
        p => p.starts_with("/v1/agent/register/") || p.starts_with("/v1/agent/claim"),
    }
}

/// Endpoint groups that CLI sessions may only read ("Y (read)" in the matrix).
const CLI_READ_ONLY: [&str; 3] = ["/v1/organization/", "/v1/users/", "/v1/teams/"];

/// Whether a CLI session of an organization on `plan` may make this request. `upgrade_url` is
/// where a free-plan user can upgrade.
pub fn check_cli_access(
    plan: PlanTier,
    method: &str,
    path: &str,
    upgrade_url: &str,
) -> Result<(), Error> {
    if plan == PlanTier::Free && !free_plan_cli_allows(method, path) {
        return Err(Error::new(
            ErrorCode::PlanUpgradeRequired,
            "This endpoint is not available on the free plan. Upgrade your plan to use it from the CLI.",
        )
        .with_upgrade_url(upgrade_url));
    }
    let reading = method == "GET" || method == "HEAD";
    if !reading && CLI_READ_ONLY.iter().any(|p| path.starts_with(p)) {
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
    fn free_plan_cli_allow_list_matches_the_spec() {
        let allowed = [
            ("POST", "/v1/agent-reports/"),
            ("POST", "/v1/send-email/"),
            ("GET", "/v1/agent-messages/"),
            ("POST", "/v1/agent-messages/"),
            ("POST", "/v1/agent-messages/read/"),
            ("GET", "/v1/agent/health/"),
            ("GET", "/v1/agent/register/challenge/"),
            ("POST", "/v1/agent/register/"),
            ("POST", "/v1/agent/claim/abc/"),
            ("GET", "/v1/me/"),
            ("GET", "/v1/organization/"),
            ("GET", "/v1/cli/status/"),
        ];
        for (m, p) in allowed {
            assert!(free_plan_cli_allows(m, p), "{m} {p} should be allowed");
            assert!(
                check_cli_access(PlanTier::Free, m, p, "u").is_ok() || p == "/v1/organization/"
            );
        }
        let refused = [
            ("GET", "/v1/users/"),
            ("GET", "/v1/kudos/"),
            ("POST", "/v1/send-message/"),
            ("GET", "/v1/agent-reports/"),
            ("DELETE", "/v1/me/"),
            ("POST", "/v1/cli/updates/"),
        ];
        for (m, p) in refused {
            assert!(!free_plan_cli_allows(m, p), "{m} {p} should be refused");
            let e = check_cli_access(PlanTier::Free, m, p, "https://app/billing").unwrap_err();
            assert_eq!(e.code(), ErrorCode::PlanUpgradeRequired);
            assert_eq!(e.upgrade_url(), Some("https://app/billing"));
        }
        assert!(check_cli_access(PlanTier::Business, "GET", "/v1/users/", "u").is_ok());
    }

    #[test]
    fn the_directory_is_read_only_to_cli_sessions() {
        for (m, p) in [
            ("PATCH", "/v1/users/x/"),
            ("POST", "/v1/teams/"),
            ("DELETE", "/v1/teams/t/members/u/"),
        ] {
            let e = check_cli_access(PlanTier::Business, m, p, "u").unwrap_err();
            assert_eq!(e.code(), ErrorCode::InsufficientScope, "{m} {p}");
        }
        assert!(check_cli_access(PlanTier::Business, "GET", "/v1/teams/t/members/", "u").is_ok());
        assert!(check_cli_access(PlanTier::Business, "POST", "/v1/invite-user/", "u").is_ok());
    }
}
