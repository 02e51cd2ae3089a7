//! Credential extractors. Each route declares which credential it accepts by the extractor it
//! takes: [`Caller`] (general API: `X-API-KEY` or CLI `Bearer`), [`SessionUser`]
//! (`Authorization: JWT`, key management) or [`Operator`] (provisioning).

use std::future::Future;
use std::pin::Pin;

use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};
use subtle::ConstantTimeEq;
use teamcomm_kernel::{Error, ErrorCode};
use teamcomm_keys::{
    CredentialRef, OrgSnapshots, Principal, RateLimiter, RateScope, check_cli_access,
};
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
                    let upgrade_url = format!("{}/billing/plans", state.settings.app_url);
                    check_cli_access(
                        principal.org.plan,
                        req.method().as_str(),
                        req.path(),
                        &upgrade_url,
                    )?;
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
