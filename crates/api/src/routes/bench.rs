//! The stack's floors for `make bench`, registered only when `TEAMCOMM_BENCH_FLOOR=true`; never
//! part of the public API. No authentication: they measure the pool and repository layer, so an
//! endpoint's percentage of its floor says what the endpoint's own work costs.
//!
//! - `GET /bench/floor/?org=<uuid>`: one indexed single-row read.
//! - `POST /bench/insert/?org=<uuid>`: one single-row insert (a report channel with a fresh id).

use actix_web::{HttpResponse, get, post, web};
use serde::Deserialize;
use serde_json::json;
use teamcomm_kernel::OrgId;
use teamcomm_messaging::NewChannel;

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

#[post("/bench/insert/")]
pub async fn insert_floor(
    state: web::Data<AppState>,
    q: Query<FloorQuery>,
) -> ApiResult<HttpResponse> {
    let id = uuid::Uuid::now_v7().to_string();
    let new = NewChannel::new(&id, "bench", "slack", "channel")?;
    let channel = state.channels.register(OrgId(q.0.org), &new).await?;
    Ok(HttpResponse::Created().json(json!({"id": channel.id})))
}
