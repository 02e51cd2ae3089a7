//! `/operator/v1/`: provisioning for the operator of this installation (enabled only when
//! `TEAMCOMM_OPERATOR_TOKEN` is set). Stands in for chat-platform onboarding and web login.

use actix_web::{HttpResponse, patch, post, web};
use serde::Deserialize;
use teamcomm_kernel::{Error, OrgId, UserId};
use teamcomm_org::{NewOrganization, NewUser, OrganizationPatch, UserPatch};
use utoipa::ToSchema;

use crate::auth::Operator;
use crate::body::{Body, JsonBody};
use crate::error::ApiResult;
use crate::jwt::TokenPair;
use crate::openapi::ErrorBody;
use crate::provision::{self, CliTokenView, OperatorOrganizationView, OperatorUserView};
use crate::state::AppState;

const ORG_FIELDS: &[&str] = &[
    "name",
    "plan",
    "api_access",
    "plan_beta",
    "exchange_tokens",
    "platform",
];

fn uuid_path<T: std::str::FromStr>(raw: &str) -> ApiResult<T> {
    raw.parse().map_err(|_| Error::not_found().into())
}

/// Body of `POST /operator/v1/organizations/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct CreateOrganizationBody {
    name: String,
    /// `free`, `starter`, `business` or `enterprise`.
    plan: String,
    /// Default: true unless the plan is free.
    api_access: Option<bool>,
    plan_beta: Option<bool>,
    exchange_tokens: Option<bool>,
    /// The connected chat platform (`slack`, `msteams`, `google_chat`, `discord`…).
    platform: Option<String>,
}

/// Body of `POST /operator/v1/organizations/{uuid}/users/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct CreateUserBody {
    email: String,
    first_name: String,
    last_name: String,
    /// `admin`, `member` or `guest`.
    role: String,
    is_active: Option<bool>,
}

#[utoipa::path(
    tag = "operator",
    request_body = CreateOrganizationBody,
    responses((status = 201, body = OperatorOrganizationView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("operator" = []))
)]
#[post("/operator/v1/organizations/")]
pub async fn create_organization(
    _op: Operator,
    state: web::Data<AppState>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let mut b = Body::object(body.0, ORG_FIELDS)?;
    let (name, plan) = (b.required_string("name"), b.required_string("plan"));
    let (api_access, plan_beta, exchange) = (
        b.bool("api_access"),
        b.bool("plan_beta"),
        b.bool("exchange_tokens"),
    );
    let platform = b.string("platform");
    b.finish()?;
    let new = NewOrganization::new(&name, &plan, api_access, plan_beta, exchange)?
        .with_platform(platform.as_deref())?;
    Ok(HttpResponse::Created().json(provision::create_organization(&state, new).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path)),
    request_body = CreateOrganizationBody,
    responses((status = 200, body = OperatorOrganizationView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = []))
)]
#[patch("/operator/v1/organizations/{uuid}/")]
pub async fn update_organization(
    _op: Operator,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let id: OrgId = uuid_path(&id)?;
    let mut b = Body::object(body.0, ORG_FIELDS)?;
    let (name, plan) = (b.string("name"), b.string("plan"));
    let (api_access, plan_beta, exchange) = (
        b.bool("api_access"),
        b.bool("plan_beta"),
        b.bool("exchange_tokens"),
    );
    let platform = b.string("platform");
    b.finish()?;
    let patch = OrganizationPatch::new(
        name.as_deref(),
        plan.as_deref(),
        api_access,
        plan_beta,
        exchange,
    )?
    .with_platform(platform.as_deref())?;
    Ok(HttpResponse::Ok().json(provision::update_organization(&state, id, patch).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "Organization")),
    request_body = CreateUserBody,
    responses(
        (status = 201, body = OperatorUserView),
        (status = 400, description = "Validation, or e-mail already used in the organization", body = ErrorBody),
        (status = 404, body = ErrorBody),
    ),
    security(("operator" = []))
)]
#[post("/operator/v1/organizations/{uuid}/users/")]
pub async fn create_user(
    _op: Operator,
    state: web::Data<AppState>,
    org: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let org: OrgId = uuid_path(&org)?;
    let mut b = Body::object(
        body.0,
        &["email", "first_name", "last_name", "role", "is_active"],
    )?;
    let email = b.required_string("email");
    let first = b.string("first_name").unwrap_or_default();
    let last = b.string("last_name").unwrap_or_default();
    let role = b.required_string("role");
    let is_active = b.bool("is_active");
    b.finish()?;
    let new = NewUser::new(&email, &first, &last, &role, is_active)?;
    Ok(HttpResponse::Created().json(provision::create_user(&state, org, new).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "User")),
    responses((status = 200, body = OperatorUserView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = []))
)]
#[patch("/operator/v1/users/{uuid}/")]
pub async fn update_user(
    _op: Operator,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let id: UserId = uuid_path(&id)?;
    let mut b = Body::object(body.0, &["is_active", "role"])?;
    let (is_active, role) = (b.bool("is_active"), b.string("role"));
    b.finish()?;
    let patch = UserPatch::new(is_active, role.as_deref())?;
    Ok(HttpResponse::Ok().json(provision::update_user(&state, id, patch).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "User")),
    responses((status = 201, description = "A web-session JWT pair for the user", body = TokenPair), (status = 404, body = ErrorBody)),
    security(("operator" = []))
)]
#[post("/operator/v1/users/{uuid}/sessions/")]
pub async fn create_session(
    _op: Operator,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: UserId = uuid_path(&id)?;
    Ok(HttpResponse::Created().json(provision::create_session(&state, id).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "User")),
    responses((status = 201, description = "A CLI bearer token for the user, shown once", body = CliTokenView), (status = 404, body = ErrorBody)),
    security(("operator" = []))
)]
#[post("/operator/v1/users/{uuid}/cli-tokens/")]
pub async fn create_cli_token(
    _op: Operator,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: UserId = uuid_path(&id)?;
    Ok(HttpResponse::Created().json(provision::create_cli_token(&state, id, None).await?))
}

/// Body of `POST /operator/v1/organizations/{uuid}/channels/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct RegisterChannelBody {
    /// The chat platform's channel id.
    id: String,
    name: String,
    /// Default: the organization's platform, else `slack`.
    platform: Option<String>,
    /// `channel` (default), `private_channel`, `group_chat` or `direct_message`.
    #[serde(rename = "type")]
    channel_type: Option<String>,
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "Organization")),
    request_body = RegisterChannelBody,
    responses((status = 201, description = "Registered (or renamed when the id exists)", body = crate::routes::catalog::ChannelView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = []))
)]
#[post("/operator/v1/organizations/{uuid}/channels/")]
pub async fn register_channel(
    _op: Operator,
    state: web::Data<AppState>,
    org: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let org: OrgId = uuid_path(&org)?;
    let mut b = Body::object(body.0, &["id", "name", "platform", "type"])?;
    let (id, name) = (b.required_string("id"), b.required_string("name"));
    let (platform, channel_type) = (b.string("platform"), b.string("type"));
    b.finish()?;
    let organization = state.orgs.get_organization(org).await?;
    let platform = platform
        .or(organization.platform)
        .unwrap_or_else(|| "slack".to_owned());
    let new = teamcomm_messaging::NewChannel::new(
        &id,
        &name,
        &platform,
        channel_type.as_deref().unwrap_or("channel"),
    )?;
    let channel = state.channels.upsert_channel(org, &new).await?;
    Ok(HttpResponse::Created().json(crate::routes::catalog::ChannelView::from(&channel)))
}
