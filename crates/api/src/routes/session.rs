//! `POST /api/auth/token/refresh/`: a new access token from a refresh token.

use actix_web::{HttpResponse, post, web};
use serde::Deserialize;
use teamcomm_kernel::Error;
use utoipa::ToSchema;

use crate::body::{Body, JsonBody};
use crate::error::ApiResult;
use crate::jwt::{TokenPair, TokenType};
use crate::openapi::ErrorBody;
use crate::state::AppState;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct RefreshBody {
    refresh: String,
}

#[utoipa::path(
    tag = "session",
    request_body = RefreshBody,
    responses(
        (status = 200, description = "A fresh pair", body = TokenPair),
        (status = 401, description = "Refresh token invalid, expired, or its user deactivated", body = ErrorBody),
    )
)]
#[post("/api/auth/token/refresh/")]
pub async fn refresh_token(state: web::Data<AppState>, body: JsonBody) -> ApiResult<HttpResponse> {
    let mut b = Body::object(body.0, &["refresh"])?;
    let refresh = b.required_string("refresh");
    b.finish()?;
    let claims = state.jwt.verify(&refresh, TokenType::Refresh)?;
    match state.orgs.get_user(claims.org, claims.sub).await {
        Ok(user) if user.is_active => {
            Ok(HttpResponse::Ok().json(state.jwt.issue_pair(user.id, user.org_id)?))
        }
        Ok(_) | Err(teamcomm_kernel::RepoError::NotFound) => {
            Err(teamcomm_keys::invalid_credentials().into())
        }
        Err(e) => Err(Error::from(e).into()),
    }
}
