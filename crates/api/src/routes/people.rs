//! The directory: `GET /v1/organization/`, `/v1/users/` and important dates.

use actix_web::{HttpRequest, HttpResponse, get, patch, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, UserId, filters};
use teamcomm_org::{ImportantDate, ProfileInput, User, UserFilter};
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::body::{Body, JsonBody, iso};
use crate::error::ApiResult;
use crate::openapi::ErrorBody;
use crate::paging::{Paging, query_params};
use crate::state::AppState;

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
    responses((status = 200, body = OrganizationView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
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

/// A person of the organization. `email` only with `include_email=true`. Borrows from the
/// [`User`] it shows: a directory page serialises without copying its strings.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserView<'a> {
    #[schema(value_type = String)]
    #[serde(serialize_with = "as_display")]
    pub id: UserId,
    #[schema(value_type = String)]
    #[serde(serialize_with = "as_display")]
    pub uuid: UserId,
    #[schema(value_type = String)]
    #[serde(serialize_with = "as_display")]
    pub full_name: FullName<'a>,
    pub first_name: &'a str,
    pub last_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<&'a str>,
    pub role: &'static str,
    pub is_active: bool,
    pub timezone: &'a str,
    pub occupation: &'a str,
    pub image: Option<&'a str>,
    /// `MM-DD`.
    pub birth_date: Option<&'a str>,
    /// `YYYY-MM-DD`: when the person joined; its yearly return is the work anniversary.
    #[schema(value_type = Option<String>)]
    #[serde(serialize_with = "as_display_opt")]
    pub work_anniversary: Option<time::Date>,
}

/// "First Last", written straight into the output.
#[derive(Debug, Clone, Copy)]
pub struct FullName<'a>(&'a User);

impl std::fmt::Display for FullName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (first, last) = (self.0.first_name.trim(), self.0.last_name.trim());
        match (first.is_empty(), last.is_empty()) {
            (false, false) => write!(f, "{first} {last}"),
            (false, true) => f.write_str(first),
            _ => f.write_str(last),
        }
    }
}

fn as_display<S: serde::Serializer>(v: &impl std::fmt::Display, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn as_display_opt<S: serde::Serializer>(
    v: &Option<impl std::fmt::Display>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

impl<'a> UserView<'a> {
    pub fn new(u: &'a User, include_email: bool) -> Self {
        UserView {
            id: u.id,
            uuid: u.id,
            full_name: FullName(u),
            first_name: &u.first_name,
            last_name: &u.last_name,
            email: include_email.then_some(u.email.as_str()),
            role: u.role.as_str(),
            is_active: u.is_active,
            timezone: &u.timezone,
            occupation: &u.occupation,
            image: u.image.as_deref(),
            birth_date: u.birth_date.as_deref(),
            work_anniversary: u.work_anniversary,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct UserList<'a> {
    pub count: u64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<UserView<'a>>,
}

fn user_id(raw: &str) -> ApiResult<UserId> {
    raw.parse().map_err(|_| Error::not_found().into())
}

#[utoipa::path(
    tag = "directory",
    params(
        ("search" = Option<String>, Query, description = "Name or e-mail fragment, at most 256 characters"),
        ("is_active" = Option<bool>, Query, description = "Only active (true) or deactivated (false) people"),
        ("include_email" = Option<bool>, Query),
        ("page" = Option<u64>, Query, minimum = 1), ("page_size" = Option<u64>, Query, minimum = 1),
        ("limit" = Option<u64>, Query, minimum = 1), ("offset" = Option<u64>, Query),
    ),
    responses((status = 200, body = UserList), (status = 400, description = "`search_query_too_long`, `invalid_filter_value`", body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/users/")]
pub async fn list_users(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    let q = query_params(&req);
    let filter = UserFilter {
        search: filters::search(q.get("search").map(String::as_str))?,
        is_active: filters::flag(q.get("is_active").map(String::as_str), "is_active")?,
    };
    let include_email = filters::flag(q.get("include_email").map(String::as_str), "include_email")?
        .unwrap_or(false);
    let paging = Paging::from_request(&req)?;
    let page = state
        .directory
        .list_users(caller.user(), &filter, paging.request())
        .await?;
    let page = page.map_ref(|u| UserView::new(u, include_email));
    Ok(HttpResponse::Ok().json(paging.envelope(&state.settings.base_url, page)))
}

#[utoipa::path(
    tag = "directory",
    params(("uuid" = String, Path), ("include_email" = Option<bool>, Query)),
    responses((status = 200, body = UserView), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/users/{uuid}/")]
pub async fn get_user(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let q = query_params(&req);
    let include_email = filters::flag(q.get("include_email").map(String::as_str), "include_email")?
        .unwrap_or(false);
    let user = state
        .directory
        .get_user(caller.user(), user_id(&id)?)
        .await?;
    Ok(HttpResponse::Ok().json(UserView::new(&user, include_email)))
}

/// Body of `PATCH /v1/users/{uuid}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct UpdateUserBody {
    first_name: Option<String>,
    last_name: Option<String>,
    /// IANA zone name.
    timezone: Option<String>,
    occupation: Option<String>,
    /// `MM-DD`, or null to clear.
    birth_date: Option<String>,
    /// `YYYY-MM-DD`, or null to clear.
    work_anniversary: Option<String>,
    /// Admins only.
    role: Option<String>,
    /// Admins only.
    is_active: Option<bool>,
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
    ),
    security(("api_key" = []))
)]
#[patch("/v1/users/{uuid}/")]
pub async fn update_user(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let id = user_id(&id)?;
    let mut b = Body::object(
        body.0,
        &[
            "first_name",
            "last_name",
            "timezone",
            "occupation",
            "birth_date",
            "work_anniversary",
            "role",
            "is_active",
        ],
    )?;
    let birth_present = b.has("birth_date");
    let anniversary_present = b.has("work_anniversary");
    let input = ProfileInput {
        first_name: b.string("first_name"),
        last_name: b.string("last_name"),
        timezone: b.string("timezone"),
        occupation: b.string("occupation"),
        birth_date: birth_present.then(|| b.string("birth_date")),
        work_anniversary: anniversary_present.then(|| b.string("work_anniversary")),
        role: b.string("role"),
        is_active: b.bool("is_active"),
    };
    b.finish()?;
    let patch = input.validate()?;
    let user = state
        .directory
        .update_user(caller.user(), id, patch)
        .await?;
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

#[utoipa::path(
    tag = "directory",
    params(("uuid" = Option<uuid::Uuid>, Query, description = "Only this person's dates")),
    responses(
        (status = 200, description = "Birthdays and work anniversaries, soonest first (a bare list)", body = [ImportantDateView]),
        (status = 400, description = "`invalid_user_identifier`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/important-date/")]
pub async fn list_important_dates(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    let q = query_params(&req);
    let of = match q.get("uuid").or_else(|| q.get("user")) {
        Some(raw) => Some(UserId(
            filters::user_identifier(Some(raw))?.unwrap_or_default(),
        )),
        None => None,
    };
    let dates = state.directory.important_dates(caller.user(), of).await?;
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
    responses((status = 200, body = ImportantDateView), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/important-date/{uuid}/")]
pub async fn get_important_date(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id = uuid::Uuid::parse_str(&id).map_err(|_| Error::not_found())?;
    let date = state.directory.important_date(caller.user(), id).await?;
    Ok(HttpResponse::Ok().json(ImportantDateView::from(&date)))
}
