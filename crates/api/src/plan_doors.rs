//! What happens around the handler of every Plan door, once `auth::enforce_policy` has
//! established its caller (wire contract §4.0):
//!
//! - Body validation errors take the Plan shape (spec "Error body"): 400 with a map of field
//!   names to message arrays, a `detail`, and no `code` ([`PlanFieldErrors`]). Every
//!   `params_validation_error` a Plan door answers is rendered so, from the body's schema check
//!   or from a domain rule (`Error::invalid_field`): this is the one place. Coded 400s
//!   (`unknown_field`, `parse_error`, domain codes) keep the envelope.
//! - `Idempotency-Key` on the doors whose policy takes one ([`Idempotency`]), with the rules of
//!   `teamcomm_plan::idempotency`: the request is hashed (method, route template, raw body),
//!   its slot taken, the handler run and a 2xx/4xx answer kept for replays
//!   (`Idempotency-Replayed: true`). A dry run (`?dry_run=true`) is never subject to it.

use std::collections::BTreeMap;

use actix_web::body::{BoxBody, MessageBody, to_bytes};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{HttpResponse, web};
use serde::Serialize;
use teamcomm_kernel::{Error, ErrorCode, OrgId};
use teamcomm_plan::idempotency::{Claim, IdempotencyKey, key_required, request_hash};
use utoipa::ToSchema;
use utoipa::openapi::path::Operation;

use crate::error::{ApiError, MAX_JSON_BODY, error_response};
use crate::policy::{Idempotency, PlanDoor};
use crate::state::AppState;

/// The response header marking a replayed answer.
pub const REPLAYED: &str = "idempotency-replayed";

/// A Plan body validation error (spec "Error body"): each refused field with its messages, and
/// `detail`; no `code`. A refusal that names no field lists its message under
/// `non_field_errors`.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({"detail": "Invalid input.", "title": ["This field is required."]}))]
pub struct PlanFieldErrors {
    /// Human-readable summary.
    pub detail: String,
    /// Field name → messages.
    #[serde(flatten)]
    pub fields: BTreeMap<String, Vec<String>>,
}

/// The Plan shape of a `params_validation_error`.
pub fn field_errors_response(e: &Error) -> HttpResponse {
    let mut fields = e.field_errors().clone();
    fields.remove("detail");
    if fields.is_empty() {
        fields.insert("non_field_errors".to_owned(), vec![e.detail().to_owned()]);
    }
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
    HttpResponse::build(status).json(PlanFieldErrors {
        detail: e.detail().to_owned(),
        fields,
    })
}

/// Runs a Plan door's handler with the rules of the module docs.
pub async fn around<B: MessageBody + 'static>(
    mut req: ServiceRequest,
    next: Next<B>,
    door: PlanDoor,
    org: OrgId,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let key = match idempotency_key(&req, door) {
        Ok(key) => key,
        Err(e) => return Ok(req.error_response(ApiError(e)).map_into_boxed_body()),
    };
    let Some(key) = key else {
        return Ok(plan_shaped(next.call(req).await?));
    };
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let route = req
        .app_data::<&'static crate::policy::Registry>()
        .and_then(|r| r.template_for(req.method().as_str(), req.path()))
        .unwrap_or_else(|| req.path().to_owned());
    let (Some(state), route) = (state, route) else {
        return Ok(plan_shaped(next.call(req).await?));
    };
    let body = match req.extract::<web::Bytes>().await {
        Ok(b) => b,
        Err(e) => return Ok(req.error_response(e).map_into_boxed_body()),
    };
    if body.len() > MAX_JSON_BODY {
        let e = Error::new(
            ErrorCode::PayloadTooLarge,
            format!("Request body is larger than {MAX_JSON_BODY} bytes."),
        )
        .with_extra("max_size_bytes", MAX_JSON_BODY);
        return Ok(req.error_response(ApiError(e)).map_into_boxed_body());
    }
    let hash = request_hash(req.method().as_str(), &route, &body);
    req.set_payload(Payload::from(body));
    let lease = match state.plan.claim_idempotent(org, &route, &key, &hash).await {
        Err(e) => return Ok(req.error_response(ApiError(e)).map_into_boxed_body()),
        Ok(Claim::Replay(answer)) => {
            let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
            let res = HttpResponse::build(status)
                .content_type("application/json")
                .insert_header((REPLAYED, "true"))
                .body(answer.body);
            return Ok(req.into_response(res));
        }
        Ok(Claim::Run(lease)) => lease,
    };
    let res = match next.call(req).await {
        Ok(res) => plan_shaped(res),
        Err(e) => {
            let failed = e.as_response_error().status_code().as_u16();
            if let Err(e) = state.plan.finish_idempotent(&lease, failed, b"").await {
                tracing::warn!(error = %e, "could not give back an idempotency slot");
            }
            return Err(e);
        }
    };
    let (http_req, res) = res.into_parts();
    let status = res.status();
    let (head, body) = res.into_parts();
    let bytes = match to_bytes(body).await {
        Ok(b) => b,
        Err(_) => {
            if let Err(e) = state.plan.finish_idempotent(&lease, 500, b"").await {
                tracing::warn!(error = %e, "could not give back an idempotency slot");
            }
            let e = teamcomm_kernel::internal("could not read a Plan answer");
            return Ok(ServiceResponse::new(http_req, error_response(&e)));
        }
    };
    if let Err(e) = state
        .plan
        .finish_idempotent(&lease, status.as_u16(), &bytes)
        .await
    {
        tracing::warn!(error = %e, "could not keep an idempotent answer");
    }
    let res = head.set_body(BoxBody::new(bytes));
    Ok(ServiceResponse::new(http_req, res))
}

/// The key a request brings for its door: `None` when idempotency does not apply (a door
/// without it, a dry run, an optional key not sent).
fn idempotency_key(req: &ServiceRequest, door: PlanDoor) -> Result<Option<IdempotencyKey>, Error> {
    if door.idempotency == Idempotency::None
        || crate::routes::plan::common::dry_run_of(req.query_string()).unwrap_or(false)
    {
        return Ok(None);
    }
    match req.headers().get("idempotency-key") {
        None if door.idempotency == Idempotency::Required => Err(key_required()),
        None => Ok(None),
        Some(v) => {
            let raw = v
                .to_str()
                .map_err(|_| IdempotencyKey::parse("").expect_err("an empty key is refused"))?;
            IdempotencyKey::parse(raw).map(Some)
        }
    }
}

/// A Plan door's answer with its `params_validation_error` in the Plan shape.
fn plan_shaped<B: MessageBody + 'static>(res: ServiceResponse<B>) -> ServiceResponse<BoxBody> {
    let field_error = res
        .response()
        .error()
        .and_then(|e| e.as_error::<ApiError>())
        .filter(|e| e.0.code() == ErrorCode::ParamsValidationError)
        .map(|e| e.0.clone());
    match field_error {
        Some(e) => {
            let (req, old) = res.into_parts();
            let mut new = field_errors_response(&e);
            // Keep what the middleware stack put on the answer (rate-limit headers…).
            for (name, value) in old.headers() {
                if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
                    new.headers_mut().insert(name.clone(), value.clone());
                }
            }
            ServiceResponse::new(req, new)
        }
        None => res.map_into_boxed_body(),
    }
}

/// What `teamcomm_plan::tasks::expected_version` reads from `If-Match` (`"N"`, `W/"N"`, `N` or
/// `*`; blank is none), as the header's pattern on the doors that declare it.
pub const IF_MATCH_PATTERN: &str = r#"^[ \t]*(\*|(W/)?"*[+-]?[0-9]{1,19}"*)?[ \t]*$"#;

/// Documents what [`around`] does on a Plan door's operation: the Plan shape of its 400 when it
/// takes a body, its `Idempotency-Key` header and 409s when it honours one, the agent headers on
/// writes.
pub fn document(operation: &mut Operation, door: PlanDoor) {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
    use utoipa::openapi::{ContentBuilder, Ref, RefOr, Required, ResponseBuilder};
    // What the parsers accept, stated so that a client (or a fuzzer) can tell: the key's
    // `IdempotencyKey::parse`, the agent's `AgentName::parse` (percent-encoded non-ASCII
    // letters are read too; the pattern states the ASCII subset).
    let text = |pattern: &str, max: usize| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(pattern))
            .max_length(Some(max))
            .build()
    };
    let header = |name: &str, required: bool, description: &str, schema: Schema| {
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Header)
            .required(if required {
                Required::True
            } else {
                Required::False
            })
            .description(Some(description))
            .schema(Some(schema))
            .build()
            .into()
    };
    let responses = &mut operation.responses.responses;
    // Any door can refuse a field (a body's or a query's) with the Plan's field map; coded
    // refusals keep the envelope. The route's own words about its 400 are kept.
    let shape = Schema::OneOf(
        OneOfBuilder::new()
            .item(Ref::from_schema_name("PlanFieldErrors"))
            .item(Ref::from_schema_name("ErrorBody"))
            .build(),
    );
    let described = match responses.get("400") {
        Some(RefOr::T(r)) => r.description.clone(),
        _ => String::new(),
    };
    let description = if described.is_empty() {
        "Invalid input: a map of field names to messages with `detail` and no `code` \
         (`PlanFieldErrors`); coded refusals (`unknown_field`, `parse_error`, domain codes) \
         carry the error envelope."
            .to_owned()
    } else {
        format!("{described}; an invalid field answers the field map (`PlanFieldErrors`)")
    };
    responses.insert(
        "400".to_owned(),
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new().schema(Some(shape)).build(),
            )
            .build()
            .into(),
    );
    let parameters = operation.parameters.get_or_insert_with(Vec::new);
    for p in parameters.iter_mut().filter_map(|p| match p {
        RefOr::T(p) if p.parameter_in == ParameterIn::Header => Some(p),
        _ => None,
    }) {
        if !p.name.eq_ignore_ascii_case("If-Match") {
            continue;
        }
        let schema = ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(IF_MATCH_PATTERN))
            .build();
        p.schema = Some(schema.into());
    }
    if door.idempotency != Idempotency::None {
        let required = door.idempotency == Idempotency::Required;
        parameters.push(header(
            "Idempotency-Key",
            required,
            "8 to 128 characters (`invalid_idempotency_key`). The first answer (2xx or 4xx) to a \
             key is kept 24 hours per organization and route and replayed for the same request \
             with `Idempotency-Replayed: true`; another request with the key is refused (409 \
             `idempotency_key_payload_mismatch`), a duplicate while the first runs too (409 \
             `idempotency_in_progress`, up to 120 s). Not applied to dry runs.",
            text("^[!-~]{8,128}$", 128).into(),
        ));
        let conflict = ResponseBuilder::new()
            .description("`idempotency_key_payload_mismatch` or `idempotency_in_progress`")
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build();
        responses
            .entry("409".to_owned())
            .or_insert_with(|| conflict.into());
    }
    if door.need != teamcomm_plan::actor::DoorNeed::Read {
        parameters.push(header(
            "X-Dailybot-Agent-Name",
            false,
            "The agent acting for the person (percent-encoded UTF-8; also `X-Service-Agent-Name`; \
             a body's `agent_name` wins). Refused from keys without a person \
             (`invalid_agent_attribution`).",
            text(
                "^[A-Za-z0-9.\\-_()'#+/&,:]([A-Za-z0-9 .\\-_()'#+/&,:]*[A-Za-z0-9.\\-_()'#+/&,:])?$",
                128,
            )
            .into(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn field_errors_are_a_map_with_detail_and_no_code() {
        let e = Error::invalid_field("title", "This field is required.")
            .with_field_error("priority", "Must be 1 to 5.");
        let res = field_errors_response(&e);
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let body: serde_json::Value =
            serde_json::from_slice(&to_bytes(res.into_body()).await.unwrap()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "detail": "Invalid input.",
                "title": ["This field is required."],
                "priority": ["Must be 1 to 5."],
            })
        );
        let bare = Error::new(ErrorCode::ParamsValidationError, "Expected a JSON object.");
        let body: serde_json::Value = serde_json::from_slice(
            &to_bytes(field_errors_response(&bare).into_body())
                .await
                .unwrap(),
        )
        .unwrap();
        assert_eq!(body["non_field_errors"][0], "Expected a JSON object.");
        assert!(body.get("code").is_none());
    }

    #[test]
    fn the_if_match_pattern_is_expected_version() {
        use teamcomm_plan::tasks::expected_version;
        let re = regex::Regex::new(IF_MATCH_PATTERN).unwrap();
        for s in [
            "",
            "*",
            "5",
            "\"5\"",
            "W/\"5\"",
            "\"\"7\"",
            "+3",
            "-2",
            "\"*\"",
            "W/",
            "\"",
            "null",
            "5 ",
            " W/\"5\"\t",
            "\" 5\"",
            "W/ 5",
            "W/5",
            "w/\"5\"",
            "5.0",
            "9223372036854775807",
            "1e3",
            "\"W/5\"",
        ] {
            assert_eq!(
                re.is_match(s),
                expected_version(Some(s), None).is_ok(),
                "{s:?}"
            );
        }
        let doc = serde_json::to_value(crate::openapi::document()).unwrap();
        let params = doc["paths"]["/v1/plan/tasks/{t}/"]["patch"]["parameters"]
            .as_array()
            .unwrap();
        let if_match = params.iter().find(|p| p["name"] == "If-Match").unwrap();
        assert_eq!(if_match["schema"]["pattern"], IF_MATCH_PATTERN);
    }
}
