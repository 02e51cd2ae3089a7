//! Credential extractors. Each route declares which credential it accepts by the extractor it
//! takes: [`Caller`] (general API: `X-API-KEY` or CLI `Bearer`), [`SessionUser`]
//! (`Authorization: JWT`, key management) or [`Operator`] (provisioning).

use std::future::Future;
use std::pin::Pin;

use actix_web::http::Method;
use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};
use subtle::ConstantTimeEq;
use teamcomm_kernel::{Error, ErrorCode};
use teamcomm_keys::{CredentialRef, OrgSnapshots, Principal, RateLimiter, RateScope};
use teamcomm_org::{PlanTier, User};

use crate::error::ApiError;
use crate::jwt::TokenType;
use crate::state::AppState;

type Fut<T> = Pin<Box<dyn Future<Output = Result<T, ApiError>>>>;

fn state(req: &HttpRequest) -> AppState {
    req.app_data::<web::Data<AppState>>()
        .expect("AppState is registered")
        .get_ref()
        .clone()
}

fn header(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub fn credential_absent() -> Error {
    Error::new(
        ErrorCode::CredentialAbsent,
        "Authentication credentials were not provided.",
    )
}

/// Splits `Authorization: <scheme> <token>`; the scheme is case-insensitive.
fn authorization(req: &HttpRequest) -> Option<(String, String)> {
    let raw = header(req, "authorization")?;
    let (scheme, token) = raw.trim().split_once(' ').unwrap_or((raw.trim(), ""));
    Some((scheme.to_ascii_lowercase(), token.trim().to_owned()))
}

/// The authenticated caller of a `/v1/` endpoint.
#[derive(Debug, Clone)]
pub struct Caller(pub Principal);

impl Caller {
    pub fn user(&self) -> &User {
        &self.0.user
    }
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Fut<Self>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let api_key = header(req, "x-api-key");
        let authz = authorization(req);
        let req = req.clone();
        Box::pin(async move {
            let principal = match (api_key, authz) {
                (Some(key), _) => state.keys.authenticate_api_key(&key).await?,
                (None, Some((scheme, token))) if scheme == "bearer" => {
                    if token.is_empty() {
                        return Err(Error::new(
                            ErrorCode::CredentialMalformed,
                            "Bearer token is empty.",
                        )
                        .into());
                    }
                    let principal = state.keys.authenticate_cli_token(&token).await?;
                    check_cli_access(&state, &principal, req.method(), req.path())?;
                    principal
                }
                _ => return Err(credential_absent().into()),
            };
            let enterprise = principal.org.plan == PlanTier::Enterprise;
            throttle(&state, &req, principal.credential_ref(), enterprise).await?;
            Ok(Caller(principal))
        })
    }
}

/// What a CLI session may not do: free-plan organizations reach only an allow-list, and the
/// directory is read-only to CLI sessions (spec "Authentication method matrix").
fn check_cli_access(
    state: &AppState,
    principal: &Principal,
    method: &Method,
    path: &str,
) -> Result<(), Error> {
    if principal.org.plan == PlanTier::Free && !free_plan_cli_allows(method, path) {
        return Err(Error::new(
            ErrorCode::PlanUpgradeRequired,
            "This endpoint is not available on the free plan. Upgrade your plan to use it from the CLI.",
        )
        .with_upgrade_url(format!("{}/billing/plans", state.settings.app_url)));
    }
    let read_only = ["/v1/organization/", "/v1/users/", "/v1/teams/"]
        .iter()
        .any(|p| path.starts_with(p));
    if read_only && method != Method::GET && method != Method::HEAD {
        return Err(Error::new(
            ErrorCode::InsufficientScope,
            "CLI sessions can only read this endpoint; use an API key to change it.",
        )
        .with_extra("required_scope", "api_key"));
    }
    Ok(())
}

/// Spends one request of the credential's budget for the request's scope; the decision is
/// kept on the request so the response carries the `RateLimit` headers.
async fn throttle(
    state: &AppState,
    req: &HttpRequest,
    credential: CredentialRef,
    enterprise: bool,
) -> Result<(), Error> {
    let scope = RateScope::for_request(req.method().as_str(), req.path());
    let per_hour = state.settings.rate_quotas.per_hour(scope, enterprise);
    let decision = state.limiter.check(credential, scope, per_hour).await;
    req.extensions_mut().insert(decision);
    match decision.retry_after_secs {
        None => Ok(()),
        Some(after) => Err(Error::new(
            ErrorCode::Throttled,
            format!("Request was throttled. Expected available in {after} seconds."),
        )
        .with_extra("retry_after", after)
        .with_extra("scope", scope.as_str())),
    }
}

/// The endpoints a CLI token of a free-plan organization may call (spec "CLI Bearer tokens on
/// free-plan organizations").
pub fn free_plan_cli_allows(method: &Method, path: &str) -> bool {
    let get = method == Method::GET;
    let post = method == Method::POST;
    match path {
        "/v1/agent-reports/" | "/v1/send-email/" | "/v1/agent-messages/read/" => post,
        "/v1/agent-messages/" => get || post,
        "/v1/agent/health/" | "/v1/me/" | "/v1/organization/" | "/v1/cli/status/" => get,
        p => p.starts_with("/v1/agent/register/") || p.starts_with("/v1/agent/claim"),
    }
}

/// A person signed in to the web application (`Authorization: JWT <access>`).
#[derive(Debug, Clone)]
pub struct SessionUser(pub User);

impl FromRequest for SessionUser {
    type Error = ApiError;
    type Future = Fut<Self>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let authz = authorization(req);
        let req = req.clone();
        Box::pin(async move {
            let token = match authz {
                Some((scheme, token)) if scheme == "jwt" => token,
                _ => return Err(credential_absent().into()),
            };
            if token.is_empty() {
                return Err(
                    Error::new(ErrorCode::CredentialMalformed, "JWT token is empty.").into(),
                );
            }
            let claims = state.jwt.verify(&token, TokenType::Access)?;
            let user = match state.orgs.get_user(claims.org, claims.sub).await {
                Ok(user) if user.is_active => user,
                Ok(_) | Err(teamcomm_kernel::RepoError::NotFound) => {
                    return Err(teamcomm_keys::invalid_credentials().into());
                }
                Err(e) => return Err(e.into()),
            };
            let enterprise =
                state.org_cache.organization(user.org_id).await?.plan == PlanTier::Enterprise;
            throttle(&state, &req, CredentialRef::Session(user.id.0), enterprise).await?;
            Ok(SessionUser(user))
        })
    }
}

/// The operator of this installation (`Authorization: Bearer <TEAMCOMM_OPERATOR_TOKEN>`).
/// When no operator token is configured the whole operator API answers 404.
#[derive(Debug, Clone, Copy)]
pub struct Operator;

impl FromRequest for Operator {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = state(req);
        let result = match &state.settings.operator_token {
            None => Err(Error::not_found().into()),
            Some(expected) => match authorization(req) {
                Some((scheme, token)) if scheme == "bearer" && !token.is_empty() => {
                    if constant_time_eq(token.as_bytes(), expected.expose().as_bytes()) {
                        Ok(Operator)
                    } else {
                        Err(teamcomm_keys::invalid_credentials().into())
                    }
                }
                _ => Err(credential_absent().into()),
            },
        };
        std::future::ready(result)
    }
}

/// Compares two secrets in time independent of where they differ. Lengths are not secret here
/// (the operator token's length is fixed by configuration).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_plan_cli_allow_list_matches_the_spec() {
        let allowed = [
            (Method::POST, "/v1/agent-reports/"),
            (Method::POST, "/v1/send-email/"),
            (Method::GET, "/v1/agent-messages/"),
            (Method::POST, "/v1/agent-messages/"),
            (Method::POST, "/v1/agent-messages/read/"),
            (Method::GET, "/v1/agent/health/"),
            (Method::GET, "/v1/agent/register/challenge/"),
            (Method::POST, "/v1/agent/register/"),
            (Method::POST, "/v1/agent/claim/abc/"),
            (Method::GET, "/v1/me/"),
            (Method::GET, "/v1/organization/"),
            (Method::GET, "/v1/cli/status/"),
        ];
        for (m, p) in &allowed {
            assert!(free_plan_cli_allows(m, p), "{m} {p} should be allowed");
        }
        let refused = [
            (Method::GET, "/v1/users/"),
            (Method::GET, "/v1/kudos/"),
            (Method::POST, "/v1/send-message/"),
            (Method::GET, "/v1/agent-reports/"),
            (Method::DELETE, "/v1/me/"),
            (Method::POST, "/v1/cli/updates/"),
        ];
        for (m, p) in &refused {
            assert!(!free_plan_cli_allows(m, p), "{m} {p} should be refused");
        }
    }
}
