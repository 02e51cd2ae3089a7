//! `POST /api/auth/token/refresh/`: a new access token from a refresh token.

use actix_web::{HttpResponse, post, web};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::error::{ApiResult, ErrorBody};
use crate::extract::JsonBody;
use crate::jwt::{TokenPair, TokenType};
use crate::state::AppState;

/// Body of `POST /api/auth/token/refresh/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshBody {
    /// The refresh token of a pair.
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
pub async fn refresh_token(
    state: web::Data<AppState>,
    body: JsonBody<RefreshBody>,
) -> ApiResult<HttpResponse> {
    let claims = state.jwt.verify(&body.0.refresh, TokenType::Refresh)?;
    let (user, _) = state.keys.session_user(claims.org, claims.sub).await?;
    Ok(HttpResponse::Ok().json(state.jwt.issue_pair(user.id, user.org_id)?))
}
