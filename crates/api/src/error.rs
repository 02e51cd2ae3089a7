//! The JSON error envelope and every path that produces it: domain errors, extractor
//! rejections, unknown routes, wrong methods, oversized bodies and panics.
//!
//! Body: `{detail, code, errors?, extra?, upgrade_url?}`. A 429 also carries `Retry-After`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, ResponseError, error::JsonPayloadError, web};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use teamcomm_kernel::{Error, ErrorCode};
use utoipa::ToSchema;

use crate::policy::Registry;

/// A domain error on its way to the wire.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

impl From<teamcomm_kernel::RepoError> for ApiError {
    fn from(e: teamcomm_kernel::RepoError) -> Self {
        ApiError(e.into())
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// The error envelope every non-2xx answer carries.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody<'a> {
    /// Human-readable; may change.
    pub detail: &'a str,
    /// Machine-readable and frozen; dispatch on this.
    pub code: &'a str,
    /// Per-field messages on validation errors.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = Option<BTreeMap<String, Vec<String>>>)]
    pub errors: &'a BTreeMap<String, Vec<String>>,
    /// Extra data such as `retry_after`, `parameter`, `max_size_bytes`.
    #[serde(skip_serializing_if = "Map::is_empty")]
    #[schema(value_type = Option<Object>)]
    pub extra: &'a Map<String, Value>,
    /// Where to upgrade, on `plan_upgrade_required`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upgrade_url: Option<&'a str>,
}

/// Renders an error as the JSON envelope, logging the cause of a 5xx once.
pub fn error_response(e: &Error) -> HttpResponse {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(cause) = e.cause() {
        tracing::error!(error.code = %e.code(), error.cause = cause, "request failed");
    }
    let body = ErrorBody {
        detail: e.detail(),
        code: e.code().as_str(),
        errors: e.field_errors(),
        extra: e.extra(),
        upgrade_url: e.upgrade_url(),
    };
    let mut res = HttpResponse::build(status);
    if status == StatusCode::TOO_MANY_REQUESTS
        && let Some(after) = e.extra().get("retry_after").and_then(Value::as_u64)
    {
        res.insert_header((header::RETRY_AFTER, after.to_string()));
    }
    res.json(body)
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        error_response(&self.0)
    }
}

/// The largest JSON body accepted by default (`extra.max_size_bytes` on 413).
pub const MAX_JSON_BODY: usize = 256 * 1024;

fn too_large(limit: usize) -> Error {
    Error::new(
        ErrorCode::PayloadTooLarge,
        format!("Request body is larger than {limit} bytes."),
    )
    .with_extra("max_size_bytes", limit)
}

/// Maps actix's JSON extractor failures to the envelope.
pub fn json_error(err: JsonPayloadError, _req: &HttpRequest) -> actix_web::Error {
    let e = match &err {
        JsonPayloadError::OverflowKnownLength { limit, .. }
        | JsonPayloadError::Overflow { limit } => too_large(*limit),
        JsonPayloadError::ContentType => Error::new(
            ErrorCode::UnsupportedMediaType,
            "Unsupported media type; send Content-Type: application/json.",
        ),
        JsonPayloadError::Deserialize(de) if de.is_data() => Error::new(
            ErrorCode::ParamsValidationError,
            format!("Invalid request body: {de}."),
        ),
        JsonPayloadError::Deserialize(de) => {
            Error::new(ErrorCode::ParseError, format!("JSON parse error - {de}."))
        }
        other => Error::new(
            ErrorCode::ParseError,
            format!("Could not read the request body: {other}."),
        ),
    };
    ApiError(e).into()
}

/// Maps bad path segments (for example a malformed UUID) to 404: such an object cannot exist.
pub fn path_error(_err: actix_web::error::PathError, _req: &HttpRequest) -> actix_web::Error {
    ApiError(Error::not_found()).into()
}

/// The app's default service: 405 (with `Allow`) when the path exists with other methods,
/// else 404. The methods come from the route registry.
pub async fn no_route(req: HttpRequest) -> HttpResponse {
    let allowed = req
        .app_data::<&'static Registry>()
        .map(|r| r.allowed_methods(req.path()))
        .unwrap_or_default();
    if allowed.is_empty() {
        return error_response(&Error::not_found());
    }
    let mut res = error_response(&Error::new(
        ErrorCode::MethodNotAllowed,
        format!("Method \"{}\" not allowed.", req.method()),
    ));
    if let Ok(value) = HeaderValue::from_str(&allowed.join(", ")) {
        res.headers_mut().insert(header::ALLOW, value);
    }
    res
}

/// The envelope for a bare status produced outside our handlers (the safety net).
pub fn envelope_for_status(status: StatusCode) -> Error {
    let code = match status.as_u16() {
        400 => ErrorCode::ParseError,
        401 => ErrorCode::CredentialAbsent,
        403 => ErrorCode::OrgAdminRequired,
        404 => ErrorCode::NotFound,
        405 => ErrorCode::MethodNotAllowed,
        413 => ErrorCode::PayloadTooLarge,
        415 => ErrorCode::UnsupportedMediaType,
        429 => ErrorCode::Throttled,
        503 => ErrorCode::ServiceUnavailable,
        _ => ErrorCode::InternalError,
    };
    let detail = match code {
        ErrorCode::InternalError => teamcomm_kernel::INTERNAL_DETAIL.to_owned(),
        _ => status.canonical_reason().unwrap_or("Error").to_owned() + ".",
    };
    Error::new(code, detail).with_status(status.as_u16())
}

/// True when a response already carries a JSON body.
pub fn is_json(headers: &header::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json") || ct.contains("+json"))
}

/// Extractor configs that route every rejection through the envelope.
pub fn json_config() -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(MAX_JSON_BODY)
        .content_type_required(false)
        .error_handler(json_error)
}

pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(path_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;

    #[actix_web::test]
    async fn throttled_carries_retry_after_and_the_envelope() {
        let e = Error::new(
            ErrorCode::Throttled,
            "Request was throttled. Expected available in 30 seconds.",
        )
        .with_extra("retry_after", 30);
        let res = error_response(&e);
        assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(res.headers().get(header::RETRY_AFTER).unwrap(), "30");
        let body: Value =
            serde_json::from_slice(&to_bytes(res.into_body()).await.unwrap()).unwrap();
        assert_eq!(body["code"], "throttled");
        assert_eq!(body["extra"]["retry_after"], 30);
        assert!(body.get("errors").is_none() && body.get("upgrade_url").is_none());
    }

    #[actix_web::test]
    async fn internal_errors_never_show_their_cause() {
        let res = error_response(&teamcomm_kernel::internal(
            "connection string postgres://secret@db",
        ));
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = to_bytes(res.into_body()).await.unwrap();
        let text = String::from_utf8_lossy(&body);
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("internal_error"));
    }

    #[test]
    fn every_bare_status_maps_to_a_catalogued_code() {
        for s in [
            400u16, 401, 403, 404, 405, 406, 413, 415, 429, 500, 502, 503,
        ] {
            let e = envelope_for_status(StatusCode::from_u16(s).unwrap());
            assert_eq!(e.status(), s);
            assert!(ErrorCode::from_wire(e.code().as_str()).is_some());
        }
    }
}
