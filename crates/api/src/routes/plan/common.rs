//! What every Plan door shares beyond its policy: bodies ([`PlanJson`]: agent attribution
//! taken out, then the body checked against its schema), dry runs ([`DryRun`] and the answer
//! of one, [`preview`]), the actor of a write ([`PlanCaller::acting`]).
//!
//! Idempotency keys are applied from the route's policy (`Policy::idempotent`), not here: a
//! handler of an [IK] door does nothing for them.

use actix_web::{FromRequest, HttpRequest, HttpResponse, dev::Payload};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use teamcomm_kernel::Error;
use teamcomm_plan::{AgentName, PlanActor, Preview, Restore};
use utoipa::ToSchema;

use crate::auth::PlanCaller;
use crate::error::ApiError;
use crate::extract::{BoxFut, decode_body, read_json};

/// A Plan JSON body: `agent_name` (agent attribution) taken out and checked, the rest decoded
/// into `T` against its documented schema. An absent body reads as `{}`, so bodies whose fields
/// are all optional need no second type.
#[derive(Debug)]
pub struct PlanJson<T> {
    pub body: T,
    pub agent_name: Option<AgentName>,
}

impl<T: DeserializeOwned + ToSchema + 'static> FromRequest for PlanJson<T> {
    type Error = actix_web::Error;
    type Future = BoxFut<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = read_json(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let mut value = match json.await? {
                Value::Null => Value::Object(Default::default()),
                v => v,
            };
            let agent_name = match value.as_object_mut().and_then(|m| m.remove("agent_name")) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(AgentName::parse(&s).map_err(ApiError)?),
                Some(_) => {
                    return Err(ApiError(
                        AgentName::parse("<not a string>").expect_err("not a name"),
                    )
                    .into());
                }
            };
            if let Some(name) = agent_name.clone() {
                let caller = PlanCaller::from_request(&req, &mut Payload::None).into_inner()?;
                named_agent(&caller.0, name).map_err(ApiError)?;
            }
            let body = decode_body::<T>(value).map_err(ApiError)?;
            Ok(PlanJson { body, agent_name })
        })
    }
}

/// `?dry_run=true`: preview instead of writing.
#[derive(Debug, Clone, Copy, Default)]
pub struct DryRun(pub bool);

impl FromRequest for DryRun {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(dry_run_of(req.query_string()).map(DryRun).map_err(ApiError))
    }
}

/// Whether a query string asks for a dry run (`dry_run=true|1`; `false|0` or absent: no).
pub fn dry_run_of(query: &str) -> Result<bool, Error> {
    /// Read by the one query deserializer: percent-decoded, blank is absent, a flag as
    /// everywhere (`true`/`false`, `1`/`0`), a bad value `invalid_filter_value` naming it.
    #[derive(serde::Deserialize)]
    struct DryRunParam {
        dry_run: Option<bool>,
    }
    let found: DryRunParam = crate::extract::query_de::from_query_string(query)?;
    Ok(found.dry_run.unwrap_or(false))
}

/// A dry run's answer as every previewing door writes it.
#[derive(Debug, Serialize)]
struct PreviewBody {
    /// Always true.
    dry_run: bool,
    operation: String,
    consequence: String,
    affects: Map<String, Value>,
    reversible: bool,
    /// The call that undoes the write, when reversible.
    #[serde(skip_serializing_if = "Option::is_none")]
    restore_path: Option<String>,
}

/// 200 with the dry run's preview (`teamcomm_plan::Preview`).
pub fn preview(p: Preview) -> HttpResponse {
    HttpResponse::Ok().json(PreviewBody {
        dry_run: true,
        reversible: p.reversible(),
        restore_path: p.restore.as_ref().map(restore_path),
        operation: p.operation,
        consequence: p.consequence,
        affects: p.affects,
    })
}

/// The restore door of what a preview says can be restored.
fn restore_path(what: &Restore) -> String {
    match what {
        Restore::Project(id) => format!("/v1/plan/projects/{id}/restore/"),
        Restore::Board(id) => format!("/v1/plan/boards/{id}/restore/"),
        Restore::State { board, state } => {
            format!("/v1/plan/boards/{board}/states/{state}/restore/")
        }
        Restore::Task(key) => format!("/v1/plan/tasks/{key}/restore/"),
    }
}

/// An agent named on a request (`agent_name` or its headers) by `actor`: a person's credential
/// may name the agent acting for them; an organization or agent key acts as no person and
/// names no agent (400 `invalid_agent_attribution`; a registered agent's key is its agent).
pub fn named_agent(actor: &PlanActor, name: AgentName) -> Result<AgentName, Error> {
    if actor.person.is_none() {
        return Err(Error::new(
            teamcomm_kernel::ErrorCode::InvalidAgentAttribution,
            "Only a person's credential names the agent acting for them; this key acts as no person.",
        )
        .with_extra("parameter", "agent_name"));
    }
    Ok(name)
}

impl PlanCaller {
    /// The actor of a write, with the agent its body names (a body's name wins over the
    /// header's, both checked by [`named_agent`]).
    pub fn acting(self, agent_name: Option<AgentName>) -> PlanActor {
        let mut actor = self.0;
        if agent_name.is_some() {
            actor.agent_name = agent_name;
        }
        actor
    }
}
