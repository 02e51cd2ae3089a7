//! `GET /v1/me/`: who the credential acts as.

use actix_web::{HttpResponse, get};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::ErrorBody;
use crate::extract::Query;

/// Query of `GET /v1/me/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MeQuery {
    /// Accepted for compatibility (the real CLI sends it): `/v1/me/` always includes the
    /// caller's own e-mail, so it changes nothing, but a value that is not a boolean is refused.
    #[serde(rename = "include_email")]
    _include_email: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrganizationSummary {
    pub uuid: String,
    pub name: String,
}

/// The current user.
#[derive(Debug, Serialize, ToSchema)]
pub struct MeResponse {
    pub id: String,
    pub uuid: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub full_name: String,
    pub role: String,
    pub is_active: bool,
    pub timezone: String,
    pub organization_uuid: String,
    pub organization_name: String,
    pub organization: OrganizationSummary,
}

#[utoipa::path(
    tag = "identity",
    params(MeQuery),
    responses(
        (status = 200, description = "The user the credential acts as", body = MeResponse),
        (status = 401, description = "Missing or invalid credential", body = ErrorBody),
        (status = 403, description = "Owner deactivated or plan without API access", body = ErrorBody),
    )
)]
#[get("/v1/me/")]
pub async fn get_me(caller: Caller, _query: Query<MeQuery>) -> HttpResponse {
    let Caller(principal) = caller;
    let user = &principal.user;
    let org = &principal.org;
    HttpResponse::Ok().json(MeResponse {
        id: user.id.to_string(),
        uuid: user.id.to_string(),
        email: user.email.clone(),
        first_name: user.first_name.clone(),
        last_name: user.last_name.clone(),
        full_name: user.full_name(),
        role: user.role.as_str().to_owned(),
        is_active: user.is_active,
        timezone: user.timezone.clone(),
        organization_uuid: org.id.to_string(),
        organization_name: org.name.clone(),
        organization: OrganizationSummary {
            uuid: org.id.to_string(),
            name: org.name.clone(),
        },
    })
}
