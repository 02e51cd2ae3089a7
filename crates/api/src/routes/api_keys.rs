//! `/api/org/api-keys/`: API-key management with a web session (`Authorization: JWT`).
//! Rules live in `teamcomm_keys::KeyService`; this module only translates the wire.

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::ApiKeyId;
use teamcomm_keys::{ApiKey, CreateKey, PersonRef, Secret, UpdateKey, masked};
use utoipa::ToSchema;

use crate::auth::SessionUser;
use crate::body::{Body, JsonBody, iso};
use crate::error::ApiResult;
use crate::openapi::ErrorBody;
use crate::paging::Paging;
use crate::state::AppState;

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

/// `{count, next, previous, results}` of key records (never with `key`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyList {
    pub count: u64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<ApiKeyView>,
}

/// Body of `POST /api/org/api-keys/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct CreateApiKeyBody {
    name: String,
    is_agent_key: Option<bool>,
    /// Owner of the key (admins only); defaults to the caller.
    for_user_id: Option<String>,
    /// Subset of `tasks:read`, `tasks:write`, `tasks:admin`; default read and write.
    scopes: Option<Vec<String>>,
    /// ISO 8601; the key stops working then.
    expiration: Option<String>,
}

/// Body of `PATCH /api/org/api-keys/{id}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct UpdateApiKeyBody {
    name: Option<String>,
    active: Option<bool>,
    expiration: Option<String>,
    scopes: Option<Vec<String>>,
    /// `true` returns a new `key` once; the old one stops working immediately.
    regenerate: Option<bool>,
}

fn key_id(raw: &str) -> ApiResult<ApiKeyId> {
    raw.parse()
        .map_err(|_| teamcomm_kernel::Error::not_found().into())
}

#[utoipa::path(
    tag = "api-keys",
    request_body = CreateApiKeyBody,
    responses(
        (status = 201, description = "Created; the only answer that shows `key`", body = ApiKeyView),
        (status = 400, description = "`agent_key_admin_only`, `target_user_inactive`, `target_user_not_found`, validation", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "`org_admin_required` (member used `for_user_id`)", body = ErrorBody),
    ),
    security(("jwt" = []))
)]
#[post("/api/org/api-keys/")]
pub async fn create_api_key(
    state: web::Data<AppState>,
    session: SessionUser,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let mut b = Body::object(
        body.0,
        &[
            "name",
            "is_agent_key",
            "for_user_id",
            "scopes",
            "expiration",
        ],
    )?;
    let input = CreateKey {
        name: b.required_string("name"),
        is_agent_key: b.bool("is_agent_key").unwrap_or(false),
        for_user_id: b.string("for_user_id"),
        scopes: b.string_list("scopes"),
        expiration: b.nullable_datetime("expiration").flatten(),
    };
    b.finish()?;
    let (key, secret) = state.keys.create_key(&session.0, input).await?;
    Ok(HttpResponse::Created().json(ApiKeyView::new(&key, Some(&secret))))
}

#[utoipa::path(
    tag = "api-keys",
    params(
        ("page" = Option<u64>, Query, minimum = 1, description = "1-based page"),
        ("page_size" = Option<u64>, Query, minimum = 1, description = "default 25, max 100"),
    ),
    responses((status = 200, body = ApiKeyList), (status = 401, body = ErrorBody)),
    security(("jwt" = []))
)]
#[get("/api/org/api-keys/")]
pub async fn list_api_keys(
    req: HttpRequest,
    state: web::Data<AppState>,
    session: SessionUser,
) -> ApiResult<HttpResponse> {
    let paging = Paging::from_request(&req)?;
    let page = state.keys.list_keys(&session.0, paging.request()).await?;
    let page = page.map(|k| ApiKeyView::new(&k, None));
    Ok(HttpResponse::Ok().json(paging.envelope(&state.settings.base_url, page)))
}

#[utoipa::path(
    tag = "api-keys",
    params(("id" = String, Path, description = "Key id (UUID)")),
    responses((status = 200, body = ApiKeyView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("jwt" = []))
)]
#[get("/api/org/api-keys/{id}/")]
pub async fn get_api_key(
    state: web::Data<AppState>,
    session: SessionUser,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let key = state.keys.get_key(&session.0, key_id(&id)?).await?;
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
    ),
    security(("jwt" = []))
)]
#[patch("/api/org/api-keys/{id}/")]
pub async fn update_api_key(
    state: web::Data<AppState>,
    session: SessionUser,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let id = key_id(&id)?;
    let mut b = Body::object(
        body.0,
        &["name", "active", "expiration", "scopes", "regenerate"],
    )?;
    let input = UpdateKey {
        name: b.string("name"),
        active: b.bool("active"),
        expiration: b.nullable_datetime("expiration"),
        scopes: b.string_list("scopes"),
        regenerate: b.bool("regenerate").unwrap_or(false),
    };
    b.finish()?;
    let (key, secret) = state.keys.update_key(&session.0, id, input).await?;
    Ok(HttpResponse::Ok().json(ApiKeyView::new(&key, secret.as_ref())))
}

#[utoipa::path(
    tag = "api-keys",
    params(("id" = String, Path, description = "Key id (UUID)")),
    responses((status = 204, description = "Deleted"), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("jwt" = []))
)]
#[delete("/api/org/api-keys/{id}/")]
pub async fn delete_api_key(
    state: web::Data<AppState>,
    session: SessionUser,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state.keys.delete_key(&session.0, key_id(&id)?).await?;
    Ok(HttpResponse::NoContent().finish())
}
