//! `/api/org/api-keys/`: API-key management with a web session (`Authorization: JWT`).
//! Rules live in `teamcomm_keys::KeyService`; this module only translates the wire.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::ApiKeyId;
use teamcomm_keys::{ApiKey, CreateKey, MAX_KEY_NAME, PersonRef, Secret, UpdateKey, masked};
use time::OffsetDateTime;
use utoipa::ToSchema;

use crate::auth::SessionUser;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{JsonBody, Name, nullable_datetime};
use crate::paging::{ListEnvelope, ListQuery, NoFilters, PageParams};
use crate::state::AppState;
use crate::views::iso;

#[derive(Debug, Serialize, ToSchema)]
pub struct PersonView {
    pub uuid: String,
    pub full_name: String,
}

impl From<&PersonRef> for PersonView {
    fn from(p: &PersonRef) -> Self {
        PersonView {
            uuid: p.id.to_string(),
            full_name: p.full_name.clone(),
        }
    }
}

/// An API key record. `key` appears only in the create (201) and regenerate (200) answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyView {
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub key_suffix: String,
    /// 8 dots and the last 4 characters.
    pub masked_key: String,
    pub active: bool,
    pub owner: PersonView,
    pub created_by: Option<PersonView>,
    pub is_agent_key: bool,
    /// Plan-area scopes: `tasks:read`, `tasks:write`, `tasks:admin`.
    pub scopes: Vec<String>,
    pub last_usage_at: Option<String>,
    pub expiration: Option<String>,
    pub created_at: String,
}

impl ApiKeyView {
    fn new(key: &ApiKey, secret: Option<&Secret>) -> Self {
        ApiKeyView {
            id: key.id.to_string(),
            name: key.name.clone(),
            key: secret.map(|s| s.expose().to_owned()),
            key_suffix: key.key_suffix.clone(),
            masked_key: masked(&key.key_suffix),
            active: key.active,
            owner: (&key.owner).into(),
            created_by: key.created_by.as_ref().map(Into::into),
            is_agent_key: key.is_agent_key,
            scopes: key.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
            last_usage_at: key.last_usage_at.map(iso),
            expiration: key.expiration.map(iso),
            created_at: iso(key.created_at),
        }
    }
}

/// Body of `POST /api/org/api-keys/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateApiKeyBody {
    #[schema(inline)]
    name: Name<{ MAX_KEY_NAME }>,
    is_agent_key: Option<bool>,
    /// Owner of the key (admins only); defaults to the caller.
    for_user_id: Option<String>,
    /// Subset of `tasks:read`, `tasks:write`, `tasks:admin`; default read and write.
    scopes: Option<Vec<String>>,
    /// ISO 8601; the key stops working then.
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expiration: Option<OffsetDateTime>,
}

impl From<CreateApiKeyBody> for CreateKey {
    fn from(b: CreateApiKeyBody) -> Self {
        CreateKey {
            name: b.name.0,
            is_agent_key: b.is_agent_key.unwrap_or(false),
            for_user_id: b.for_user_id,
            scopes: b.scopes,
            expiration: b.expiration,
        }
    }
}

/// Body of `PATCH /api/org/api-keys/{id}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateApiKeyBody {
    #[schema(inline)]
    name: Option<Name<{ MAX_KEY_NAME }>>,
    active: Option<bool>,
    /// ISO 8601, or null for a key that never expires.
    #[serde(default, deserialize_with = "nullable_datetime")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expiration: Option<Option<OffsetDateTime>>,
    scopes: Option<Vec<String>>,
    /// `true` returns a new `key` once; the old one stops working immediately.
    regenerate: Option<bool>,
}

impl From<UpdateApiKeyBody> for UpdateKey {
    fn from(b: UpdateApiKeyBody) -> Self {
        UpdateKey {
            name: b.name.map(|n| n.0),
            active: b.active,
            expiration: b.expiration,
            scopes: b.scopes,
            regenerate: b.regenerate.unwrap_or(false),
        }
    }
}

#[utoipa::path(
    tag = "api-keys",
    request_body = CreateApiKeyBody,
    responses(
        (status = 201, description = "Created; the only answer that shows `key`", body = ApiKeyView),
        (status = 400, description = "`agent_key_admin_only`, `target_user_inactive`, `target_user_not_found`, validation", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "`org_admin_required` (member used `for_user_id`)", body = ErrorBody),
    )
)]
#[post("/api/org/api-keys/")]
pub async fn create_api_key(
    state: web::Data<AppState>,
    session: SessionUser,
    body: JsonBody<CreateApiKeyBody>,
) -> ApiResult<HttpResponse> {
    let (key, secret) = state.keys.create_key(&session.0, body.0.into()).await?;
    Ok(HttpResponse::Created().json(ApiKeyView::new(&key, Some(&secret))))
}

#[utoipa::path(
    tag = "api-keys",
    params(PageParams),
    responses((status = 200, body = ListEnvelope<ApiKeyView>), (status = 401, body = ErrorBody))
)]
#[get("/api/org/api-keys/")]
pub async fn list_api_keys(
    state: web::Data<AppState>,
    session: SessionUser,
    q: ListQuery<NoFilters>,
) -> ApiResult<HttpResponse> {
    let page = state.keys.list_keys(&session.0, q.paging.request()).await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map(|k| ApiKeyView::new(&k, None)))))
}

#[utoipa::path(
    tag = "api-keys",
    params(("id" = String, Path, description = "Key id (UUID)")),
    responses((status = 200, body = ApiKeyView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[get("/api/org/api-keys/{id}/")]
pub async fn get_api_key(
    state: web::Data<AppState>,
    session: SessionUser,
    id: web::Path<ApiKeyId>,
) -> ApiResult<HttpResponse> {
    let key = state.keys.get_key(&session.0, *id).await?;
    Ok(HttpResponse::Ok().json(ApiKeyView::new(&key, None)))
}

#[utoipa::path(
    tag = "api-keys",
    params(("id" = String, Path, description = "Key id (UUID)")),
    request_body = UpdateApiKeyBody,
    responses(
        (status = 200, description = "Updated; `key` present only with `regenerate: true`", body = ApiKeyView),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, description = "Absent, another organization's, or (for members) another user's key", body = ErrorBody),
    )
)]
#[patch("/api/org/api-keys/{id}/")]
pub async fn update_api_key(
    state: web::Data<AppState>,
    session: SessionUser,
    id: web::Path<ApiKeyId>,
    body: JsonBody<UpdateApiKeyBody>,
) -> ApiResult<HttpResponse> {
    let (key, secret) = state
        .keys
        .update_key(&session.0, *id, body.0.into())
        .await?;
    Ok(HttpResponse::Ok().json(ApiKeyView::new(&key, secret.as_ref())))
}

#[utoipa::path(
    tag = "api-keys",
    params(("id" = String, Path, description = "Key id (UUID)")),
    responses((status = 204, description = "Deleted"), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/api/org/api-keys/{id}/")]
pub async fn delete_api_key(
    state: web::Data<AppState>,
    session: SessionUser,
    id: web::Path<ApiKeyId>,
) -> ApiResult<HttpResponse> {
    state.keys.delete_key(&session.0, *id).await?;
    Ok(HttpResponse::NoContent().finish())
}
