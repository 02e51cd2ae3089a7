//! Route policies applied: [`enforce_policy`] is the middleware that, before any extractor runs,
//! finds the policy the request's route was registered with (`routes::declare`), authenticates
//! the credential it takes, applies the CLI rule, spends the rate-limit budget, counts the
//! free-plan daily limits (given back when the request is then refused) and refuses non-admins on
//! admin-only routes. Handlers then take what it established: [`Caller`] (general
//! API: `X-API-KEY` or CLI `Bearer`), [`SessionUser`] (`Authorization: JWT`) or [`Operator`].
//!
//! Doing this before the extractors matters: actix polls a handler's extractors together, so a
//! malformed body must not be answered before a missing credential.

use std::future::{Ready, ready};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use subtle::ConstantTimeEq;
use teamcomm_agents::{AgentCaller, AgentPrincipal};
use teamcomm_kernel::{Error, ErrorCode};
use teamcomm_keys::{CredentialKind, SecretKind};
use teamcomm_keys::{CredentialRef, DailySpend, Principal, check_cli_access};
use teamcomm_org::{PlanTier, User};
use teamcomm_plan::{PlanActor, PlanScopes};

use crate::error::ApiError;
use crate::jwt::TokenType;
use crate::policy::{Credentials, Policy, Registry};
use crate::state::AppState;

fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

pub fn credential_absent() -> Error {
    Error::new(
        ErrorCode::CredentialAbsent,
        "Authentication credentials were not provided.",
    )
}

fn admin_required() -> Error {
    Error::new(
        ErrorCode::OrgAdminRequired,
        "Only organization admins can do this.",
    )
}

/// Splits `Authorization: <scheme> <token>`; the scheme is case-insensitive.
fn authorization(req: &HttpRequest) -> Option<(String, &str)> {
    let raw = header(req, "authorization")?.trim();
    let (scheme, token) = raw.split_once(' ').unwrap_or((raw, ""));
    Some((scheme.to_ascii_lowercase(), token.trim()))
}

/// What the policy middleware established about the caller, kept on the request.
#[derive(Debug, Clone)]
enum Authenticated {
    Api(Principal),
    /// A registered agent's key (`tca_…`): its organization, no person.
    Agent(AgentPrincipal),
    Session(User),
    Operator,
    /// The caller of a Plan door.
    Plan(PlanActor),
}

/// Applies the policy of the request's route (see the module docs). Requests to unknown routes
/// and public routes pass untouched.
pub async fn enforce_policy(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let policy = req
        .app_data::<&'static Registry>()
        .and_then(|r| r.policy_for(req.method().as_str(), req.path()));
    let state = req.app_data::<web::Data<AppState>>().cloned();
    // A Plan door's organization, once its caller is known: its handler runs `plan_doors::around`.
    let mut plan_org = None;
    if let (Some(policy), Some(state)) = (policy, state) {
        let authenticated = match policy.credentials {
            Credentials::Public => throttle_client(&state, req.request(), &policy)
                .await
                .map(|()| None),
            Credentials::ApiKeyOrCli if policy.plan.is_some() => {
                authenticate_plan(&state, req.request(), &policy)
                    .await
                    .map(|a| Some(Authenticated::Plan(a)))
            }
            Credentials::ApiKeyOrCli => match agent_key(req.request()) {
                Some(key) => authenticate_agent(&state, req.request(), &policy, key)
                    .await
                    .map(|a| Some(Authenticated::Agent(a))),
                None => authenticate_api(&state, req.request(), &policy)
                    .await
                    .map(|p| Some(Authenticated::Api(p))),
            },
            Credentials::Session => authenticate_session(&state, req.request(), &policy)
                .await
                .map(|u| Some(Authenticated::Session(u))),
            Credentials::Operator => {
                authenticate_operator(&state, req.request()).map(|()| Some(Authenticated::Operator))
            }
        };
        match authenticated {
            // Answered here, on this request, so the response keeps its rate-limit decision.
            Err(e) => return Ok(req.error_response(e).map_into_boxed_body()),
            Ok(Some(a)) => {
                if let Authenticated::Plan(actor) = &a {
                    plan_org = Some(actor.org_id());
                }
                req.extensions_mut().insert(a);
            }
            Ok(None) => {}
        }
    }
    let res = match (policy.and_then(|p| p.plan), plan_org) {
        (Some(door), Some(org)) => crate::plan_doors::around(req, next, door, org).await?,
        _ => next.call(req).await?.map_into_boxed_body(),
    };
    give_back_if_refused(&res).await;
    Ok(res)
}

/// A request counted against a free-plan daily limit but then refused (invalid body, not found,
/// a failure) costs nothing: its count is taken back.
async fn give_back_if_refused<B>(res: &ServiceResponse<B>) {
    if res.status().is_success() {
        return;
    }
    let spend = res.request().extensions().get::<DailySpend>().copied();
    let state = res.request().app_data::<web::Data<AppState>>();
    if let (Some(spend), Some(state)) = (spend, state)
        && let Err(e) = state.daily.give_back(spend).await
    {
        tracing::warn!(error = %e, limit = spend.limit.as_str(), "could not give back a daily count");
    }
}

/// An `X-API-KEY` value in the agent-key format (`tca_`).
fn agent_key(req: &HttpRequest) -> Option<&str> {
    header(req, "x-api-key")
        .map(str::trim)
        .filter(|k| k.starts_with(SecretKind::AgentKey.prefix()))
}

/// Refusal of an agent key where a person is needed.
fn agent_key_refused() -> Error {
    Error::new(
        ErrorCode::InsufficientScope,
        "Agent keys act for their organization, not for a person; this endpoint needs a person's credential.",
    )
}

/// A registered agent's key: only on routes that take agent keys, never admin only; spends the
/// route's budget as the key's own. Not subject to the API-key plan gate (a registered agent's
/// organization is on the free plan) nor to the free-plan daily limits (those count CLI
/// sessions).
async fn authenticate_agent(
    state: &AppState,
    req: &HttpRequest,
    policy: &Policy,
    key: &str,
) -> Result<AgentPrincipal, ApiError> {
    let agent = state.agents.authenticate(key).await?;
    if !policy.agent_keys || policy.admin_only {
        return Err(agent_key_refused().into());
    }
    let enterprise = agent.org.plan == PlanTier::Enterprise;
    throttle(
        state,
        req,
        policy,
        CredentialRef::ApiKey(agent.key_id),
        enterprise,
    )
    .await?;
    Ok(agent)
}

/// `X-API-KEY`, else a CLI `Authorization: Bearer` token under the route's CLI rule.
async fn authenticate_api(
    state: &AppState,
    req: &HttpRequest,
    policy: &Policy,
) -> Result<Principal, ApiError> {
    let principal = match (header(req, "x-api-key"), authorization(req)) {
        (Some(key), _) => state.keys.authenticate_api_key(key).await?,
        (None, Some((scheme, token))) if scheme == "bearer" => {
            if token.is_empty() {
                return Err(
                    Error::new(ErrorCode::CredentialMalformed, "Bearer token is empty.").into(),
                );
            }
            let principal = state.keys.authenticate_cli_token(token).await?;
            let upgrade_url = format!("{}/billing/plans", state.settings.app_url);
            check_cli_access(principal.org.plan, policy.cli, &upgrade_url)?;
            principal
        }
        _ => return Err(credential_absent().into()),
    };
    if !policy.agent_keys
        && matches!(
            principal.credential,
            CredentialKind::ApiKey {
                is_agent_key: true,
                ..
            }
        )
    {
        return Err(agent_key_refused().into());
    }
    let enterprise = principal.org.plan == PlanTier::Enterprise;
    throttle(state, req, policy, principal.credential_ref(), enterprise).await?;
    if policy.admin_only && !principal.user.role.is_admin() {
        return Err(admin_required().into());
    }
    if let Some(limit) = policy.daily
        && let Some(spend) = state.daily.spend(&principal, limit).await?
    {
        req.extensions_mut().insert(spend);
    }
    Ok(principal)
}

/// A Plan door (wire contract §4.0), in this order: the credential (a registered agent's key,
/// an API key or a CLI token; the credential and plan gates answer 401 here, as the Plan
/// area's code list says: docs/decisions.md §65), the beta gate (402 `plan_upgrade_required`
/// whatever the credential, except on the entitlements), the door's need (guests, scopes,
/// person-only doors), the budget, and org-admin doors.
async fn authenticate_plan(
    state: &AppState,
    req: &HttpRequest,
    policy: &Policy,
) -> Result<PlanActor, ApiError> {
    let Some(door) = policy.plan else {
        return Err(teamcomm_kernel::internal("not a Plan door").into());
    };
    let (actor, credential) = match agent_key(req) {
        Some(key) => {
            let agent = state.agents.authenticate(key).await.map_err(plan_status)?;
            let name = teamcomm_plan::AgentName::parse(&agent.agent_name).ok();
            let actor = PlanActor {
                org: agent.org.clone(),
                person: None,
                // A registered agent's key reads and writes tasks (docs/decisions.md §65).
                scopes: PlanScopes {
                    read: true,
                    write: true,
                    admin: false,
                },
                agent_name: name,
            };
            (actor, CredentialRef::ApiKey(agent.key_id))
        }
        None => {
            let principal = match (header(req, "x-api-key"), authorization(req)) {
                (Some(key), _) => state
                    .keys
                    .authenticate_api_key(key)
                    .await
                    .map_err(plan_status)?,
                (None, Some((scheme, token))) if scheme == "bearer" => {
                    if token.is_empty() {
                        return Err(Error::new(
                            ErrorCode::CredentialMalformed,
                            "Bearer token is empty.",
                        )
                        .into());
                    }
                    let principal = state
                        .keys
                        .authenticate_cli_token(token)
                        .await
                        .map_err(plan_status)?;
                    let upgrade_url = format!("{}/billing/plans", state.settings.app_url);
                    check_cli_access(principal.org.plan, policy.cli, &upgrade_url)?;
                    principal
                }
                _ => return Err(credential_absent().into()),
            };
            let credential = principal.credential_ref();
            let (person, scopes) = match &principal.credential {
                CredentialKind::ApiKey {
                    is_agent_key,
                    scopes,
                    ..
                } => {
                    let held = |s| scopes.contains(&s);
                    let scopes = PlanScopes {
                        read: held(teamcomm_keys::Scope::TasksRead),
                        write: held(teamcomm_keys::Scope::TasksWrite),
                        admin: held(teamcomm_keys::Scope::TasksAdmin),
                    };
                    ((!*is_agent_key).then(|| principal.user.clone()), scopes)
                }
                CredentialKind::CliToken { .. } | CredentialKind::Session => {
                    (Some(principal.user.clone()), PlanScopes::ALL)
                }
            };
            let actor = PlanActor {
                org: principal.org.clone(),
                person,
                scopes,
                agent_name: None,
            };
            (actor, credential)
        }
    };
    let mut actor = actor;
    if let Some(named) = agent_header(req)? {
        actor.agent_name = Some(crate::routes::plan::common::named_agent(&actor, named)?);
    }
    if door.gated && !actor.org.plan_beta {
        return Err(Error::new(
            ErrorCode::PlanUpgradeRequired,
            "Plan is not enabled for this organization.",
        )
        .with_status(402)
        .with_upgrade_url(format!("{}/billing/plans", state.settings.app_url))
        .into());
    }
    actor.check_door(door.need, door.person_only || policy.admin_only)?;
    let enterprise = actor.org.plan == PlanTier::Enterprise;
    // Per actor: a person's credentials (sessions, CLI tokens, personal keys) share one Plan
    // budget, kept under the person's id; a key without a person has its own.
    let budget = match &actor.person {
        Some(person) => CredentialRef::Session(person.id.0),
        None => credential,
    };
    throttle(state, req, policy, budget, enterprise).await?;
    if policy.admin_only && !actor.is_org_admin() {
        return Err(admin_required().into());
    }
    Ok(actor)
}

/// The agent a Plan request names in `X-Dailybot-Agent-Name` (the real CLI's) or
/// `X-Service-Agent-Name` (the spec's): percent-encoded UTF-8, checked as every agent name
/// (`invalid_agent_attribution`). The body's `agent_name` wins over it (`PlanCaller::acting`).
fn agent_header(req: &HttpRequest) -> Result<Option<teamcomm_plan::AgentName>, Error> {
    let Some(raw) = req
        .headers()
        .get("x-dailybot-agent-name")
        .or_else(|| req.headers().get("x-service-agent-name"))
    else {
        return Ok(None);
    };
    let refused = || {
        Error::new(
            ErrorCode::InvalidAgentAttribution,
            "Invalid agent name: the header is not percent-encoded UTF-8.",
        )
        .with_extra("parameter", "agent_name")
    };
    let raw = raw.to_str().map_err(|_| refused())?;
    let decoded = percent_decode(raw).ok_or_else(refused)?;
    teamcomm_plan::AgentName::parse(&decoded).map(Some)
}

/// `%XX` sequences decoded as UTF-8 (`+` is kept: the CLI keeps spaces literal); `None` when the
/// bytes are not UTF-8. A broken sequence stays literal, and `%` is no agent-name character, so
/// it is refused by the name's rule.
fn percent_decode(raw: &str) -> Option<String> {
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .ok()
        .map(std::borrow::Cow::into_owned)
}

/// The credential and plan gates answer 401 in the Plan area (its code list says so; the
/// general API keeps 403: docs/decisions.md §1 and §65).
fn plan_status(e: Error) -> Error {
    match e.code() {
        ErrorCode::ApiKeyOwnerInactive
        | ErrorCode::PlanFreeApiKeysForbidden
        | ErrorCode::PlanMissingCoreApiIntegrations
        | ErrorCode::InvalidCredentials => e.with_status(401),
        _ => e,
    }
}

/// `Authorization: JWT <access>` of a person who is still active.
async fn authenticate_session(
    state: &AppState,
    req: &HttpRequest,
    policy: &Policy,
) -> Result<User, ApiError> {
    let token = match authorization(req) {
        Some((scheme, token)) if scheme == "jwt" => token,
        _ => return Err(credential_absent().into()),
    };
    if token.is_empty() {
        return Err(Error::new(ErrorCode::CredentialMalformed, "JWT token is empty.").into());
    }
    let claims = state.jwt.verify(token, TokenType::Access)?;
    let (user, org) = state.keys.session_user(claims.org, claims.sub).await?;
    let enterprise = org.plan == PlanTier::Enterprise;
    throttle(
        state,
        req,
        policy,
        CredentialRef::Session(user.id.0),
        enterprise,
    )
    .await?;
    if policy.admin_only && !user.role.is_admin() {
        return Err(admin_required().into());
    }
    Ok(user)
}

/// `Authorization: Bearer <TEAMCOMM_OPERATOR_TOKEN>`. Without a configured operator token the
/// whole operator API answers 404.
fn authenticate_operator(state: &AppState, req: &HttpRequest) -> Result<(), ApiError> {
    let Some(expected) = &state.settings.operator_token else {
        return Err(Error::not_found().into());
    };
    match authorization(req) {
        Some((scheme, token)) if scheme == "bearer" && !token.is_empty() => {
            if constant_time_eq(token.as_bytes(), expected.expose().as_bytes()) {
                Ok(())
            } else {
                Err(teamcomm_keys::invalid_credentials().into())
            }
        }
        _ => Err(credential_absent().into()),
    }
}

/// Spends one request of the credential's budget for the route's scope; the decision is kept on
/// the request so the response carries the `RateLimit` headers.
async fn throttle(
    state: &AppState,
    req: &HttpRequest,
    policy: &Policy,
    credential: CredentialRef,
    enterprise: bool,
) -> Result<(), Error> {
    let Some(scope) = policy.rate else {
        return Ok(());
    };
    let decision = state.rate_limits.spend(credential, scope, enterprise).await;
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

/// A route taken without a credential spends the budget of the client's address, when its
/// policy names one (`Policy::anonymous`). The address honours `Forwarded`/`X-Forwarded-For`, as
/// the access log does (docs/decisions.md, "One-time-code login").
async fn throttle_client(
    state: &AppState,
    req: &HttpRequest,
    policy: &Policy,
) -> Result<(), ApiError> {
    if policy.rate.is_none() {
        return Ok(());
    }
    let client = CredentialRef::Client(client_ip(req));
    Ok(throttle(state, req, policy, client, false).await?)
}

/// The client's address: the real IP the connection info reports, else the peer's.
fn client_ip(req: &HttpRequest) -> std::net::IpAddr {
    let parse = |s: &str| {
        s.parse::<std::net::IpAddr>()
            .ok()
            .or_else(|| s.parse::<std::net::SocketAddr>().ok().map(|a| a.ip()))
    };
    req.connection_info()
        .realip_remote_addr()
        .and_then(parse)
        .or_else(|| req.peer_addr().map(|a| a.ip()))
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
}

/// What the middleware established, as the extractor wants it. Its absence means the handler's
/// extractor does not fit its route's declared credential: a programming error (500, logged).
fn established<T>(
    req: &HttpRequest,
    wanted: &str,
    pick: fn(Authenticated) -> Option<T>,
) -> Ready<Result<T, ApiError>> {
    let found = req
        .extensions()
        .get::<Authenticated>()
        .cloned()
        .and_then(pick);
    ready(found.ok_or_else(|| {
        teamcomm_kernel::internal(format!(
            "{} {} takes {wanted} but its route's policy does not authenticate one",
            req.method(),
            req.path()
        ))
        .into()
    }))
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
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        established(req, "an API caller", |a| match a {
            Authenticated::Api(p) => Some(Caller(p)),
            _ => None,
        })
    }
}

/// The caller of a Plan door (`Policy::plan_*`).
#[derive(Debug, Clone)]
pub struct PlanCaller(pub PlanActor);

impl FromRequest for PlanCaller {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        established(req, "a Plan caller", |a| match a {
            Authenticated::Plan(actor) => Some(PlanCaller(actor)),
            _ => None,
        })
    }
}

/// The caller of an agent door: a person (their API key or CLI session) or a registered
/// agent's key.
#[derive(Debug, Clone)]
pub struct AgentActor(pub AgentCaller);

impl FromRequest for AgentActor {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        established(req, "an agent door caller", |a| match a {
            Authenticated::Api(p) => Some(AgentActor(AgentCaller::person(p.user))),
            Authenticated::Agent(a) => Some(AgentActor(AgentCaller::agent(
                a.org.id,
                a.key_id,
                a.agent_name,
            ))),
            _ => None,
        })
    }
}

/// The person behind an agent door's caller: a registered agent's key has none and is refused
/// (403 `insufficient_scope`) before the body is read.
#[derive(Debug, Clone)]
pub struct AgentDoorPerson(pub User);

impl FromRequest for AgentDoorPerson {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let found = req.extensions().get::<Authenticated>().cloned();
        match found {
            Some(Authenticated::Agent(_)) => ready(Err(agent_key_refused().into())),
            _ => established(req, "a person at an agent door", |a| match a {
                Authenticated::Api(p) => Some(AgentDoorPerson(p.user)),
                _ => None,
            }),
        }
    }
}

/// A person signed in to the web application (`Authorization: JWT <access>`).
#[derive(Debug, Clone)]
pub struct SessionUser(pub User);

impl FromRequest for SessionUser {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        established(req, "a web session", |a| match a {
            Authenticated::Session(u) => Some(SessionUser(u)),
            _ => None,
        })
    }
}

/// The operator of this installation.
#[derive(Debug, Clone, Copy)]
pub struct Operator;

impl FromRequest for Operator {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        established(req, "the operator", |a| {
            matches!(a, Authenticated::Operator).then_some(Operator)
        })
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
    fn agent_headers_are_percent_decoded_utf8() {
        assert_eq!(percent_decode("Zo%C3%AB bot").as_deref(), Some("Zoë bot"));
        assert_eq!(percent_decode("a+b").as_deref(), Some("a+b"));
        assert_eq!(percent_decode("%C3"), None);
        for broken in ["%", "%4", "%zz"] {
            let decoded = percent_decode(broken).expect("kept literal");
            assert!(
                teamcomm_plan::AgentName::parse(&decoded).is_err(),
                "{broken}"
            );
        }
    }
}
