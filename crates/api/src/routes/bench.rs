//! `GET /bench/floor/?org=<uuid>`: the stack's floor for `make bench` — one indexed single-row
//! read through the same pool and repository layer as the API, no authentication. Registered only
//! when `TEAMCOMM_BENCH_FLOOR=true`; never part of the public API.

use actix_web::{HttpResponse, get, web};
use serde::Deserialize;
use serde_json::json;
use teamcomm_kernel::OrgId;

use crate::error::ApiResult;
use crate::extract::Query;
use crate::state::AppState;

#[derive(Deserialize)]
pub struct FloorQuery {
    org: uuid::Uuid,
}

#[get("/bench/floor/")]
pub async fn floor(state: web::Data<AppState>, q: Query<FloorQuery>) -> ApiResult<HttpResponse> {
    let org = state.organizations.get_organization(OrgId(q.0.org)).await?;
    Ok(HttpResponse::Ok().json(json!({"uuid": org.id.to_string(), "name": org.name})))
}
