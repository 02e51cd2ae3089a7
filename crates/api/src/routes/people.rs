//! The directory: `GET /v1/organization/`, `/v1/users/` and important dates.

use actix_web::{HttpResponse, get, patch, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::UserId;
use teamcomm_org::{ImportantDate, MAX_PERSON_TEXT, ProfileInput, UserFilter};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{JsonBody, OptionalName, Query, RoleName, nullable};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::{Search, UserRef, search};
use crate::state::AppState;
use crate::views::{UserView, iso};

/// The caller's organization.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrganizationView {
    pub id: String,
    pub uuid: String,
    pub name: String,
    pub timezone: String,
    /// The connected chat platform, when one is.
    pub platform: Option<String>,
    pub image: Option<String>,
    pub created_at: String,
}

#[utoipa::path(
    tag = "directory",
    responses((status = 200, body = OrganizationView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody))
)]
#[get("/v1/organization/")]
pub async fn get_organization(caller: Caller) -> HttpResponse {
    let org = &caller.0.org;
    HttpResponse::Ok().json(OrganizationView {
        id: org.id.to_string(),
        uuid: org.id.to_string(),
        name: org.name.clone(),
        timezone: org.timezone.clone(),
        platform: org.platform.clone(),
        image: None,
        created_at: iso(org.created_at),
    })
}

/// Filters of `GET /v1/users/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UserListQuery {
    /// Name or e-mail fragment, at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
    /// Only active (true) or deactivated (false) people.
    is_active: Option<bool>,
    /// Show e-mail addresses.
    include_email: Option<bool>,
}

#[utoipa::path(
    tag = "directory",
    params(UserListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<UserView>), (status = 400, description = "`search_query_too_long`, `invalid_filter_value`", body = ErrorBody), (status = 401, body = ErrorBody))
)]
#[get("/v1/users/")]
pub async fn list_users(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<UserListQuery>,
) -> ApiResult<HttpResponse> {
    let filter = UserFilter {
        search: search(q.filters.search.clone()),
        is_active: q.filters.is_active,
    };
    let page = state
        .people
        .list_users(caller.user(), &filter, q.paging.request())
        .await?;
    let include_email = q.filters.include_email.unwrap_or(false);
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(|u| UserView::new(u, include_email)))))
}

/// `?include_email=`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IncludeEmail {
    /// Show e-mail addresses.
    include_email: Option<bool>,
}

#[utoipa::path(
    tag = "directory",
    params(("uuid" = String, Path), IncludeEmail),
    responses((status = 200, body = UserView), (status = 404, body = ErrorBody))
)]
#[get("/v1/users/{uuid}/")]
pub async fn get_user(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<UserId>,
    q: Query<IncludeEmail>,
) -> ApiResult<HttpResponse> {
    let user = state.people.get_user(caller.user(), *id).await?;
    Ok(HttpResponse::Ok().json(UserView::new(&user, q.0.include_email.unwrap_or(false))))
}

/// Body of `PATCH /v1/users/{uuid}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateUserBody {
    #[schema(inline)]
    first_name: Option<OptionalName<{ MAX_PERSON_TEXT }>>,
    #[schema(inline)]
    last_name: Option<OptionalName<{ MAX_PERSON_TEXT }>>,
    /// IANA zone name.
    #[schema(example = "Europe/Madrid")]
    timezone: Option<String>,
    #[schema(inline)]
    occupation: Option<OptionalName<{ MAX_PERSON_TEXT }>>,
    /// `MM-DD`, or null to clear.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, example = "12-31")]
    birth_date: Option<Option<String>>,
    /// `YYYY-MM-DD`, or null to clear.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, format = Date)]
    work_anniversary: Option<Option<String>>,
    /// Admins only.
    #[schema(inline)]
    role: Option<RoleName>,
    /// Admins only.
    is_active: Option<bool>,
}

impl From<UpdateUserBody> for ProfileInput {
    fn from(b: UpdateUserBody) -> Self {
        ProfileInput {
            first_name: b.first_name.map(|n| n.0),
            last_name: b.last_name.map(|n| n.0),
            timezone: b.timezone,
            occupation: b.occupation.map(|n| n.0),
            birth_date: b.birth_date,
            work_anniversary: b.work_anniversary,
            role: b.role.map(|r| r.0.as_str().to_owned()),
            is_active: b.is_active,
        }
    }
}

#[utoipa::path(
    tag = "directory",
    params(("uuid" = String, Path)),
    request_body = UpdateUserBody,
    responses(
        (status = 200, body = UserView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`org_admin_required` (someone else's profile, or role/activation)", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[patch("/v1/users/{uuid}/")]
pub async fn update_user(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<UserId>,
    body: JsonBody<UpdateUserBody>,
) -> ApiResult<HttpResponse> {
    let patch = ProfileInput::from(body.0).validate()?;
    let user = state.people.update_user(caller.user(), *id, patch).await?;
    Ok(HttpResponse::Ok().json(UserView::new(&user, true)))
}

/// A birthday or work anniversary at its next occurrence.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportantDateView {
    pub id: String,
    pub uuid: String,
    pub user: ImportantDateUser,
    pub name: String,
    /// False: the date recurs every year.
    pub is_specific_date: bool,
    pub start_date: String,
    pub end_date: String,
    /// `birthday` or `work_anniversary`.
    pub important_date_type: String,
    pub metadata: serde_json::Value,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ImportantDateUser {
    pub uuid: String,
    pub full_name: String,
    pub image: Option<String>,
    pub role: String,
    pub is_active: bool,
}

impl From<&ImportantDate> for ImportantDateView {
    fn from(d: &ImportantDate) -> Self {
        let day = d.next.to_string();
        ImportantDateView {
            id: d.id.to_string(),
            uuid: d.id.to_string(),
            user: ImportantDateUser {
                uuid: d.user.id.to_string(),
                full_name: d.user.full_name(),
                image: d.user.image.clone(),
                role: d.user.role.as_str().to_owned(),
                is_active: d.user.is_active,
            },
            name: d.kind.label().to_owned(),
            is_specific_date: false,
            start_date: day.clone(),
            end_date: day,
            important_date_type: d.kind.as_str().to_owned(),
            metadata: match d.years {
                Some(y) => serde_json::json!({ "years": y }),
                None => serde_json::json!({}),
            },
        }
    }
}

/// Filters of `GET /v1/important-date/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ImportantDateQuery {
    /// Only this person's dates.
    #[param(inline)]
    uuid: Option<UserRef>,
    /// Alias of `uuid`.
    #[param(inline)]
    user: Option<UserRef>,
}

#[utoipa::path(
    tag = "directory",
    params(ImportantDateQuery),
    responses(
        (status = 200, description = "Birthdays and work anniversaries, soonest first (a bare list)", body = [ImportantDateView]),
        (status = 400, description = "`invalid_user_identifier`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/v1/important-date/")]
pub async fn list_important_dates(
    state: web::Data<AppState>,
    caller: Caller,
    q: Query<ImportantDateQuery>,
) -> ApiResult<HttpResponse> {
    let of = q.0.uuid.or(q.0.user).map(|u| UserId(u.0));
    let dates = state.people.important_dates(caller.user(), of).await?;
    Ok(HttpResponse::Ok().json(
        dates
            .iter()
            .map(ImportantDateView::from)
            .collect::<Vec<_>>(),
    ))
}

#[utoipa::path(
    tag = "directory",
    params(("uuid" = String, Path)),
    responses((status = 200, body = ImportantDateView), (status = 404, body = ErrorBody))
)]
#[get("/v1/important-date/{uuid}/")]
pub async fn get_important_date(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<uuid::Uuid>,
) -> ApiResult<HttpResponse> {
    let date = state.people.important_date(caller.user(), *id).await?;
    Ok(HttpResponse::Ok().json(ImportantDateView::from(&date)))
}
