//! Liveness and readiness probes (outside `/v1/`) and the OpenAPI document: unauthenticated.

use actix_web::{HttpResponse, get, web};
use serde_json::json;

use crate::state::AppState;

#[utoipa::path(tag = "health", responses((status = 200, description = "The process is up")))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

#[utoipa::path(
    tag = "health",
    responses((status = 200, description = "The database answers"), (status = 503, description = "The database does not answer"))
)]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if state.readiness.ready().await {
        HttpResponse::Ok().json(json!({"status": "ok", "database": "ok"}))
    } else {
        HttpResponse::ServiceUnavailable().json(json!({
            "detail": "The database does not answer.",
            "code": "service_unavailable",
            "database": "unavailable"
        }))
    }
}

#[utoipa::path(tag = "meta", responses((status = 200, description = "This document")))]
#[get("/v1/openapi.json")]
pub async fn openapi_json(doc: web::Data<utoipa::openapi::OpenApi>) -> HttpResponse {
    HttpResponse::Ok().json(doc.get_ref())
}
