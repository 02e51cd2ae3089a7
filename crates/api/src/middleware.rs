//! App-wide middleware: request normalisation (HEAD, trailing slash) and the JSON safety net
//! (panics and any non-JSON error become the envelope).

use std::panic::AssertUnwindSafe;

use actix_web::HttpMessage;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::InternalError;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::{Method, Uri};
use actix_web::middleware::Next;
use futures_util::FutureExt;
use teamcomm_kernel::{ErrorCode, INTERNAL_DETAIL};
use teamcomm_keys::RateDecision;

use crate::error::{envelope_for_status, error_response, is_json};
use crate::policy::Registry;

/// Normalises a request before routing:
/// - `HEAD` is served by the `GET` route of the same path (the codec drops the body);
/// - the trailing slash the API's paths are written with is appended (`/v1/me` → `/v1/me/`)
///   when that names a registered route, so both forms reach it without a redirect.
pub async fn normalize_request(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if req.method() == Method::HEAD {
        req.head_mut().method = Method::GET;
    }
    let path = req.path();
    // Only a path without its slash is looked at (most requests have it: nothing to build).
    let with_slash = (!path.ends_with('/'))
        .then(|| format!("{path}/"))
        .filter(|p| {
            req.app_data::<&'static Registry>()
                .is_some_and(|r| r.knows(p))
        });
    if let Some(with_slash) = with_slash {
        let new_path = match req.uri().query() {
            Some(q) => format!("{with_slash}?{q}"),
            None => with_slash,
        };
        if let Ok(pq) = new_path.parse::<actix_web::http::uri::PathAndQuery>() {
            let mut parts = req.head().uri.clone().into_parts();
            parts.path_and_query = Some(pq);
            if let Ok(uri) = Uri::from_parts(parts) {
                req.match_info_mut().get_mut().update(&uri);
                req.head_mut().uri = uri;
            }
        }
    }
    next.call(req).await
}

/// Catches panics (500 with a fixed detail; the cause is logged once) and rewrites any error
/// response that is not JSON into the envelope.
///
/// No clone of the request is held across `next.call` (routing needs sole ownership of it), so a
/// panic or an error is answered as an `Err` whose response is the envelope.
pub async fn json_safety_net(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let path = req.path().to_owned();
    match AssertUnwindSafe(next.call(req)).catch_unwind().await {
        Ok(Ok(mut res)) => {
            let decision = res.request().extensions().get::<RateDecision>().copied();
            if let Some(decision) = decision {
                for (name, value) in crate::ratelimit::headers(&decision) {
                    if let Ok(value) = HeaderValue::from_str(&value) {
                        res.headers_mut()
                            .insert(HeaderName::from_static(name), value);
                    }
                }
            }
            let status = res.status();
            if (status.is_client_error() || status.is_server_error()) && !is_json(res.headers()) {
                let (req, _) = res.into_parts();
                return Ok(ServiceResponse::new(
                    req,
                    error_response(&envelope_for_status(status)),
                ));
            }
            Ok(res.map_into_boxed_body())
        }
        Ok(Err(err)) => {
            let res = err.as_response_error().error_response();
            if is_json(res.headers()) {
                return Err(err);
            }
            let envelope = error_response(&envelope_for_status(res.status()));
            Err(InternalError::from_response(err.to_string(), envelope).into())
        }
        Err(panic) => {
            let cause = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_owned());
            tracing::error!(panic.message = %cause, path = %path, "handler panicked");
            let envelope = error_response(&teamcomm_kernel::Error::new(
                ErrorCode::InternalError,
                INTERNAL_DETAIL,
            ));
            Err(InternalError::from_response("handler panicked", envelope).into())
        }
    }
}
