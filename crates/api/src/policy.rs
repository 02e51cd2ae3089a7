//! Route policies: for every route, which credential it takes, the rate-limit scope it spends,
//! what it allows a CLI session, and whether it is admin only. A route is registered together
//! with its policy (`routes::declare`), so a route without one cannot exist. The [`Registry`]
//! is app data: the policy middleware (`auth.rs`) applies the policy of the route a request
//! reaches, `normalize_request` and `no_route` read the known paths and methods, and the domain
//! crates receive the enums, never a path.

use std::collections::HashMap;

use actix_web::dev::HttpServiceFactory;
use teamcomm_keys::{CliAccess, DailyLimit, RateScope};
use teamcomm_plan::actor::DoorNeed;
use utoipa::openapi::path::PathItem;
use utoipa_actix_web::OpenApiFactory;
use utoipa_actix_web::service_config::ServiceConfig;

/// Which credential a route takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credentials {
    /// `X-API-KEY`, or a CLI `Authorization: Bearer` token subject to [`Policy::cli`].
    ApiKeyOrCli,
    /// A web session, `Authorization: JWT <access>`.
    Session,
    /// The installation's operator, `Authorization: Bearer <TEAMCOMM_OPERATOR_TOKEN>`.
    Operator,
    /// None (health probes, token refresh).
    Public,
}

/// One route's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub credentials: Credentials,
    /// The hourly budget the request spends; `None` for routes that are not rate limited.
    pub rate: Option<RateScope>,
    pub cli: CliAccess,
    /// Non-admins are refused with 403 `org_admin_required` before the handler runs (the
    /// domain service enforces the same rule for every other caller).
    pub admin_only: bool,
    /// The free-plan daily limit a request counts against (CLI sessions of free-plan
    /// organizations only: `teamcomm_keys::DailyThrottle`); a refused request is given back.
    pub daily: Option<DailyLimit>,
    /// Agent keys (registered agents' `tca_` keys and `is_agent_key` API keys) are taken: the
    /// agent doors. Everywhere else they are refused with 403 `insufficient_scope` (an agent
    /// key never acts as a person).
    pub agent_keys: bool,
    /// A Plan (Beta) door: what it needs of its caller (`auth::authenticate_plan`).
    pub plan: Option<PlanDoor>,
}

/// The rules of a Plan door (wire contract §4.0): the scope it needs, whether only a person may
/// call it, and whether the beta gate applies (every Plan door but the entitlements).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanDoor {
    pub need: DoorNeed,
    pub person_only: bool,
    pub gated: bool,
    /// Takes an `Idempotency-Key` (marked [IK] in the wire contract).
    pub idempotency: Idempotency,
}

/// What a Plan door does with `Idempotency-Key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotency {
    /// Ignored.
    None,
    /// Honoured when sent.
    Optional,
    /// Refused without one (`idempotency_key_required`), except on a dry run.
    Required,
}

impl Policy {
    /// General API with the `reads` budget (CLI: paid plans).
    pub const fn read() -> Self {
        Policy::api(RateScope::Reads)
    }

    /// General API with the `writes` budget (CLI: paid plans).
    pub const fn write() -> Self {
        Policy::api(RateScope::Writes)
    }

    /// General API with the given budget (CLI: paid plans).
    pub const fn api(scope: RateScope) -> Self {
        Policy {
            credentials: Credentials::ApiKeyOrCli,
            rate: Some(scope),
            cli: CliAccess::PaidPlans,
            admin_only: false,
            daily: None,
            agent_keys: false,
            plan: None,
        }
    }

    pub const fn session(scope: RateScope) -> Self {
        Policy {
            credentials: Credentials::Session,
            rate: Some(scope),
            cli: CliAccess::Refused,
            admin_only: false,
            daily: None,
            agent_keys: false,
            plan: None,
        }
    }

    pub const fn operator() -> Self {
        Policy {
            credentials: Credentials::Operator,
            rate: None,
            cli: CliAccess::Refused,
            admin_only: false,
            daily: None,
            agent_keys: false,
            plan: None,
        }
    }

    pub const fn public() -> Self {
        Policy {
            credentials: Credentials::Public,
            rate: None,
            cli: CliAccess::Refused,
            admin_only: false,
            daily: None,
            agent_keys: false,
            plan: None,
        }
    }

    /// No credential, but the budget of `scope` per client address (the one-time-code login).
    pub const fn anonymous(scope: RateScope) -> Self {
        Policy {
            rate: Some(scope),
            ..Policy::public()
        }
    }

    /// A Plan door needing `need` (`tasks:read`, `tasks:write`, `tasks:admin`), spending the
    /// given budget. Organization and agent keys are taken (as no person).
    pub const fn plan(need: DoorNeed, scope: RateScope) -> Self {
        Policy {
            agent_keys: true,
            plan: Some(PlanDoor {
                need,
                person_only: false,
                gated: true,
                idempotency: Idempotency::None,
            }),
            ..Policy::api(scope)
        }
    }

    /// A Plan read (`tasks:read`).
    pub const fn plan_read() -> Self {
        Policy::plan(DoorNeed::Read, RateScope::PlanReads)
    }

    /// A Plan write (`tasks:write`).
    pub const fn plan_write() -> Self {
        Policy::plan(DoorNeed::Write, RateScope::PlanWrites)
    }

    /// A Plan structure write (`tasks:admin`: boards, columns, projects).
    pub const fn plan_admin() -> Self {
        Policy::plan(DoorNeed::Admin, RateScope::PlanWrites)
    }

    /// Only a person may call this Plan door (marked P in the wire contract).
    pub const fn person_only(mut self) -> Self {
        if let Some(door) = &mut self.plan {
            door.person_only = true;
        }
        self
    }

    /// Honours `Idempotency-Key` (an [IK] door).
    pub const fn idempotent(mut self) -> Self {
        if let Some(door) = &mut self.plan {
            door.idempotency = Idempotency::Optional;
        }
        self
    }

    /// Needs `Idempotency-Key` (`tasks/bulk/`).
    pub const fn idempotency_required(mut self) -> Self {
        if let Some(door) = &mut self.plan {
            door.idempotency = Idempotency::Required;
        }
        self
    }

    /// Not behind the beta gate (`GET /v1/plan/entitlements/`).
    pub const fn ungated(mut self) -> Self {
        if let Some(door) = &mut self.plan {
            door.gated = false;
        }
        self
    }

    /// Also for CLI sessions of free-plan organizations (the spec's allow-list).
    pub const fn cli_on_any_plan(mut self) -> Self {
        self.cli = CliAccess::AnyPlan;
        self
    }

    /// Not for CLI sessions: the matrix makes this group read-only to the CLI.
    pub const fn api_key_only(mut self) -> Self {
        self.cli = CliAccess::Refused;
        self
    }

    pub const fn admin_only(mut self) -> Self {
        self.admin_only = true;
        self
    }

    /// Also for agent keys (the agent doors).
    pub const fn agent_keys(mut self) -> Self {
        self.agent_keys = true;
        self
    }

    /// Counts each request of a free-plan CLI session against `limit` (spec "Free-plan daily
    /// throttles"): past it, 429 `free_plan_daily_limit_exceeded` until 00:00 UTC.
    pub const fn free_plan_daily(mut self, limit: DailyLimit) -> Self {
        self.daily = Some(limit);
        self
    }
}

/// A registered route: method, path template (as the router and the document write it) and policy.
#[derive(Debug, Clone)]
pub struct Route {
    pub method: &'static str,
    pub path: String,
    pub policy: Policy,
}

/// A route whose path has placeholders, registered once every fixed path is.
type Deferred<'s> = Box<dyn FnOnce(&mut ServiceConfig<'s>)>;

/// Registers routes with actix and the document, and records each one's policy.
///
/// actix tries routes in the order they were registered, and tries a path with placeholders
/// by running its regex: a fixed path registered after a hundred of those ran a hundred
/// regexes per request (about a tenth of a Plan task page's server time). So paths without
/// placeholders are registered as they are declared, and the others by [`Routes::finish`],
/// each group in declaration order: a fixed path wins over a template it also fits, which is
/// what [`Registry::route_for`] answers too.
pub struct Routes<'a, 's> {
    cfg: Option<&'a mut ServiceConfig<'s>>,
    deferred: Vec<Deferred<'s>>,
    routes: Vec<Route>,
}

impl<'a, 's> Routes<'a, 's> {
    pub fn registering(cfg: &'a mut ServiceConfig<'s>) -> Self {
        Routes {
            cfg: Some(cfg),
            deferred: Vec::new(),
            routes: Vec::new(),
        }
    }

    /// Registers the routes with placeholders, after every fixed one.
    pub fn finish(mut self) {
        if let Some(cfg) = self.cfg.take() {
            for register in self.deferred.drain(..) {
                register(cfg);
            }
        }
    }

    /// Registers `route` (a handler with its `#[utoipa::path]`) under `policy`.
    pub fn add<F>(&mut self, route: F, policy: Policy) -> &mut Self
    where
        F: HttpServiceFactory + OpenApiFactory + 'static,
    {
        let mut templated = false;
        for (path, item) in route.paths().paths {
            templated |= path.contains('{');
            for method in methods(&item) {
                self.routes.push(Route {
                    method,
                    path: path.clone(),
                    policy,
                });
            }
        }
        if templated && self.cfg.is_some() {
            self.deferred.push(Box::new(move |cfg| {
                cfg.service(route);
            }));
        } else if let Some(cfg) = self.cfg.as_deref_mut() {
            cfg.service(route);
        }
        self
    }
}

fn methods(item: &PathItem) -> Vec<&'static str> {
    [
        ("GET", item.get.is_some()),
        ("POST", item.post.is_some()),
        ("PUT", item.put.is_some()),
        ("PATCH", item.patch.is_some()),
        ("DELETE", item.delete.is_some()),
    ]
    .into_iter()
    .filter_map(|(m, present)| present.then_some(m))
    .collect()
}

/// Every route with its policy, looked up by method and path template.
#[derive(Debug)]
pub struct Registry {
    routes: Vec<Route>,
    /// Path template → (method, route index): looked up by `&str`, nothing allocated.
    index: HashMap<String, Vec<(&'static str, usize)>>,
}

impl Registry {
    /// Records the routes a table declares (without registering them anywhere).
    pub fn from_table(declare: fn(&mut Routes<'_, '_>)) -> Self {
        let mut table = Routes {
            cfg: None,
            deferred: Vec::new(),
            routes: Vec::new(),
        };
        declare(&mut table);
        Registry::new(table.routes)
    }

    fn new(routes: Vec<Route>) -> Self {
        let mut index: HashMap<String, Vec<(&'static str, usize)>> = HashMap::new();
        for (i, r) in routes.iter().enumerate() {
            index.entry(r.path.clone()).or_default().push((r.method, i));
        }
        Registry { routes, index }
    }

    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// The policy of the route that `method` and `path` reach: the first registered route
    /// whose template fits, as the router picks it (a path without placeholders is one lookup).
    pub fn policy_for(&self, method: &str, path: &str) -> Option<Policy> {
        self.route_for(method, path).map(|r| r.policy)
    }

    /// The path template of the route that `method` and `path` reach (`/v1/plan/tasks/{task}/`).
    pub fn template_for(&self, method: &str, path: &str) -> Option<String> {
        self.route_for(method, path).map(|r| r.path.clone())
    }

    fn route_for(&self, method: &str, path: &str) -> Option<&Route> {
        let method = match method {
            "HEAD" => "GET",
            m => method_name(m)?,
        };
        if let Some(route) = self.exact(method, path) {
            return Some(route);
        }
        self.routes
            .iter()
            .find(|r| r.method == method && template_fits(&r.path, path))
    }

    /// The policy of the route registered as `method` on exactly this path `template`.
    pub fn policy_of_template(&self, method: &str, template: &str) -> Option<Policy> {
        self.exact(method_name(method)?, template).map(|r| r.policy)
    }

    /// The route registered as `method` on exactly `path`.
    fn exact(&self, method: &str, path: &str) -> Option<&Route> {
        self.index
            .get(path)?
            .iter()
            .find(|(m, _)| *m == method)
            .map(|(_, i)| &self.routes[*i])
    }

    /// The methods registered for the path template that `path` fits (`HEAD` with `GET`). When
    /// several fit, the most specific wins (`/v1/pending-invitations/all/` over
    /// `/v1/pending-invitations/{id}/`), as the document describes each path.
    pub fn allowed_methods(&self, path: &str) -> Vec<&'static str> {
        let literals = |t: &str| t.split('/').filter(|s| !s.starts_with('{')).count();
        let fitting: Vec<&Route> = self
            .routes
            .iter()
            .filter(|r| template_fits(&r.path, path))
            .collect();
        let Some(best) = fitting.iter().map(|r| literals(&r.path)).max() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for r in fitting.into_iter().filter(|r| literals(&r.path) == best) {
            if !out.contains(&r.method) {
                out.push(r.method);
                if r.method == "GET" {
                    out.push("HEAD");
                }
            }
        }
        out
    }

    /// True when some route's template fits `path`.
    pub fn knows(&self, path: &str) -> bool {
        self.routes.iter().any(|r| template_fits(&r.path, path))
    }
}

fn method_name(m: &str) -> Option<&'static str> {
    ["GET", "POST", "PUT", "PATCH", "DELETE"]
        .into_iter()
        .find(|known| *known == m)
}

/// `/v1/teams/{uuid}/` fits `/v1/teams/abc/` (a placeholder takes one non-empty segment).
fn template_fits(template: &str, path: &str) -> bool {
    let mut t = template.split('/');
    let mut p = path.split('/');
    loop {
        match (t.next(), p.next()) {
            (None, None) => return true,
            (Some(ts), Some(ps)) if ts.starts_with('{') && !ps.is_empty() => {}
            (Some(ts), Some(ps)) if ts == ps => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::registry;

    #[test]
    fn templates_fit_paths_segment_by_segment() {
        assert!(template_fits("/v1/teams/{uuid}/", "/v1/teams/abc/"));
        assert!(!template_fits("/v1/teams/{uuid}/", "/v1/teams//"));
        assert!(!template_fits(
            "/v1/teams/{uuid}/",
            "/v1/teams/abc/members/"
        ));
        assert!(template_fits("/v1/me/", "/v1/me/"));
    }

    #[test]
    fn every_route_is_registered_once() {
        let mut seen = std::collections::HashSet::new();
        for r in registry().routes() {
            assert!(
                seen.insert((r.method, r.path.clone())),
                "{} {} twice",
                r.method,
                r.path
            );
        }
        assert!(registry().routes().len() > 40);
    }

    #[test]
    fn policies_are_found_as_the_router_finds_routes() {
        let r = registry();
        let get = |m: &str, p: &str| r.policy_for(m, p);
        assert_eq!(get("GET", "/v1/me/").unwrap().cli, CliAccess::AnyPlan);
        assert_eq!(get("HEAD", "/v1/me/"), get("GET", "/v1/me/"));
        // A fixed segment wins over a placeholder registered after it.
        let all = get("GET", "/v1/pending-invitations/all/").unwrap();
        assert_eq!(all, get("GET", "/v1/pending-invitations/x/").unwrap());
        assert!(get("GET", "/v1/teams/x/members/y/").unwrap().admin_only);
        assert!(!get("GET", "/v1/teams/x/members/").unwrap().admin_only);
        assert!(get("POST", "/v1/me/").is_none());
        assert!(get("GET", "/v1/nowhere/").is_none());
    }

    #[test]
    fn allowed_methods_include_head_with_get() {
        let allowed = registry().allowed_methods("/v1/teams/abc/");
        for m in ["GET", "HEAD", "PATCH", "DELETE"] {
            assert!(allowed.contains(&m), "{allowed:?}");
        }
        assert!(!allowed.contains(&"POST"));
        let allowed = registry().allowed_methods("/v1/pending-invitations/all/");
        assert_eq!(allowed, ["GET", "HEAD"]);
    }
}
