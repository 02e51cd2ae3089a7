//! `/operator/v1/`: provisioning for the operator of this installation (enabled only when
//! `TEAMCOMM_OPERATOR_TOKEN` is set). Stands in for chat-platform onboarding and web login.

use actix_web::{HttpResponse, patch, post, web};
use serde::Deserialize;
use teamcomm_kernel::{OrgId, UserId};
use teamcomm_messaging::MAX_CHANNEL_NAME;
use teamcomm_org::{
    MAX_ORGANIZATION_NAME, MAX_PERSON_TEXT, NewOrganization, NewUser, OrganizationPatch, UserPatch,
};
use utoipa::ToSchema;

use crate::auth::Operator;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{EmailAddress, JsonBody, Name, OptionalName, PlanName, RoleName};
use crate::jwt::TokenPair;
use crate::provision::{self, CliTokenView, OperatorOrganizationView, OperatorUserView};
use crate::state::AppState;
use crate::views::ChannelView;

/// Body of `POST /operator/v1/organizations/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateOrganizationBody {
    #[schema(inline, example = "Acme")]
    name: Name<{ MAX_ORGANIZATION_NAME }>,
    #[schema(inline)]
    plan: PlanName,
    /// Default: true unless the plan is free.
    api_access: Option<bool>,
    plan_beta: Option<bool>,
    exchange_tokens: Option<bool>,
    /// The connected chat platform (`slack`, `msteams`, `google_chat`, `discord`…).
    platform: Option<String>,
}

impl TryFrom<CreateOrganizationBody> for NewOrganization {
    type Error = teamcomm_kernel::Error;
    fn try_from(b: CreateOrganizationBody) -> Result<Self, Self::Error> {
        NewOrganization::new(
            &b.name.0,
            b.plan.0.as_str(),
            b.api_access,
            b.plan_beta,
            b.exchange_tokens,
        )?
        .with_platform(b.platform.as_deref())
    }
}

/// Body of `PATCH /operator/v1/organizations/{uuid}/`: what it names changes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateOrganizationBody {
    #[schema(inline)]
    name: Option<Name<{ MAX_ORGANIZATION_NAME }>>,
    #[schema(inline)]
    plan: Option<PlanName>,
    api_access: Option<bool>,
    plan_beta: Option<bool>,
    exchange_tokens: Option<bool>,
    platform: Option<String>,
}

impl TryFrom<UpdateOrganizationBody> for OrganizationPatch {
    type Error = teamcomm_kernel::Error;
    fn try_from(b: UpdateOrganizationBody) -> Result<Self, Self::Error> {
        OrganizationPatch::new(
            b.name.as_ref().map(|n| n.0.as_str()),
            b.plan.map(|p| p.0.as_str()),
            b.api_access,
            b.plan_beta,
            b.exchange_tokens,
        )?
        .with_platform(b.platform.as_deref())
    }
}

/// Body of `POST /operator/v1/organizations/{uuid}/users/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUserBody {
    #[schema(inline, example = "ada@example.com")]
    email: EmailAddress,
    #[schema(inline)]
    first_name: Option<OptionalName<{ MAX_PERSON_TEXT }>>,
    #[schema(inline)]
    last_name: Option<OptionalName<{ MAX_PERSON_TEXT }>>,
    #[schema(inline)]
    role: RoleName,
    is_active: Option<bool>,
}

impl TryFrom<CreateUserBody> for NewUser {
    type Error = teamcomm_kernel::Error;
    fn try_from(b: CreateUserBody) -> Result<Self, Self::Error> {
        NewUser::new(
            &b.email.0,
            b.first_name.as_ref().map_or("", |n| n.0.as_str()),
            b.last_name.as_ref().map_or("", |n| n.0.as_str()),
            b.role.0.as_str(),
            b.is_active,
        )
    }
}

/// Body of `PATCH /operator/v1/users/{uuid}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorUserPatchBody {
    is_active: Option<bool>,
    #[schema(inline)]
    role: Option<RoleName>,
}

#[utoipa::path(
    tag = "operator",
    request_body = CreateOrganizationBody,
    responses((status = 201, body = OperatorOrganizationView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody))
)]
#[post("/operator/v1/organizations/")]
pub async fn create_organization(
    _op: Operator,
    state: web::Data<AppState>,
    body: JsonBody<CreateOrganizationBody>,
) -> ApiResult<HttpResponse> {
    let new = NewOrganization::try_from(body.0)?;
    Ok(HttpResponse::Created().json(provision::create_organization(&state, new).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path)),
    request_body = UpdateOrganizationBody,
    responses((status = 200, body = OperatorOrganizationView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[patch("/operator/v1/organizations/{uuid}/")]
pub async fn update_organization(
    _op: Operator,
    state: web::Data<AppState>,
    id: web::Path<OrgId>,
    body: JsonBody<UpdateOrganizationBody>,
) -> ApiResult<HttpResponse> {
    let patch = OrganizationPatch::try_from(body.0)?;
    Ok(HttpResponse::Ok().json(provision::update_organization(&state, *id, patch).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "Organization")),
    request_body = CreateUserBody,
    responses(
        (status = 201, body = OperatorUserView),
        (status = 400, description = "Validation, or e-mail already used in the organization", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/operator/v1/organizations/{uuid}/users/")]
pub async fn create_user(
    _op: Operator,
    state: web::Data<AppState>,
    org: web::Path<OrgId>,
    body: JsonBody<CreateUserBody>,
) -> ApiResult<HttpResponse> {
    let new = NewUser::try_from(body.0)?;
    Ok(HttpResponse::Created().json(provision::create_user(&state, *org, new).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "User")),
    request_body = OperatorUserPatchBody,
    responses((status = 200, body = OperatorUserView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[patch("/operator/v1/users/{uuid}/")]
pub async fn update_user(
    _op: Operator,
    state: web::Data<AppState>,
    id: web::Path<UserId>,
    body: JsonBody<OperatorUserPatchBody>,
) -> ApiResult<HttpResponse> {
    let OperatorUserPatchBody { is_active, role } = body.0;
    let patch = UserPatch::new(is_active, role.map(|r| r.0.as_str()))?;
    Ok(HttpResponse::Ok().json(provision::update_user(&state, *id, patch).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "User")),
    responses((status = 201, description = "A web-session JWT pair for the user", body = TokenPair), (status = 404, body = ErrorBody))
)]
#[post("/operator/v1/users/{uuid}/sessions/")]
pub async fn create_session(
    _op: Operator,
    state: web::Data<AppState>,
    id: web::Path<UserId>,
) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Created().json(provision::create_session(&state, *id).await?))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "User")),
    responses((status = 201, description = "A CLI bearer token for the user, shown once", body = CliTokenView), (status = 404, body = ErrorBody))
)]
#[post("/operator/v1/users/{uuid}/cli-tokens/")]
pub async fn create_cli_token(
    _op: Operator,
    state: web::Data<AppState>,
    id: web::Path<UserId>,
) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Created().json(provision::create_cli_token(&state, *id, None).await?))
}

/// Body of `POST /operator/v1/organizations/{uuid}/channels/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterChannelBody {
    /// The chat platform's channel id.
    #[schema(example = "C024BE91L")]
    id: String,
    #[schema(inline, example = "standup")]
    name: Name<{ MAX_CHANNEL_NAME }>,
    /// Default: the organization's platform, else `slack`.
    platform: Option<String>,
    /// `channel` (default), `private_channel`, `group_chat` or `direct_message`.
    #[serde(rename = "type")]
    #[schema(rename = "type")]
    channel_type: Option<String>,
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "Organization")),
    request_body = RegisterChannelBody,
    responses((status = 201, description = "Registered (or renamed when the id exists)", body = ChannelView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/operator/v1/organizations/{uuid}/channels/")]
pub async fn register_channel(
    _op: Operator,
    state: web::Data<AppState>,
    org: web::Path<OrgId>,
    body: JsonBody<RegisterChannelBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let channel = provision::register_channel(
        &state,
        *org,
        &b.id,
        &b.name.0,
        b.platform.as_deref(),
        b.channel_type.as_deref(),
    )
    .await?;
    Ok(HttpResponse::Created().json(ChannelView::from(&channel)))
}
