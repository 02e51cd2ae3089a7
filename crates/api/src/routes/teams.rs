//! `/v1/teams/`: teams, memberships and team invitations. Member management and team invites
//! are admin only (`org_admin_required`); rules in `teamcomm_org::Directory`.

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, put, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, PageRequest, TeamId, UserId, filters};
use teamcomm_org::{Team, TeamFilter, TeamMember, TeamRole};
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::body::{Body, JsonBody, iso};
use crate::error::ApiResult;
use crate::openapi::ErrorBody;
use crate::paging::{Paging, query_params};
use crate::routes::invitations::{InvitationView, InvitedUsers};
use crate::routes::people::UserView;
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct TeamView {
    pub id: String,
    pub uuid: String,
    pub name: String,
    pub active: bool,
    pub is_default: bool,
    pub members_count: u64,
    pub created_at: String,
}

impl From<&Team> for TeamView {
    fn from(t: &Team) -> Self {
        TeamView {
            id: t.id.to_string(),
            uuid: t.id.to_string(),
            name: t.name.clone(),
            active: t.active,
            is_default: t.is_default,
            members_count: t.members_count,
            created_at: iso(t.created_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TeamList {
    pub count: u64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<TeamView>,
}

/// A member of a team: the person's directory row plus their role in the team.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamMemberView<'a> {
    #[serde(flatten)]
    pub user: UserView<'a>,
    pub team_uuid: String,
    /// `member` or `manager`.
    pub team_role: String,
    pub joined_at: String,
}

impl<'a> TeamMemberView<'a> {
    fn new(m: &'a TeamMember, include_email: bool) -> Self {
        TeamMemberView {
            user: UserView::new(&m.user, include_email),
            team_uuid: m.team_id.to_string(),
            team_role: m.role.as_str().to_owned(),
            joined_at: iso(m.joined_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TeamMemberList<'a> {
    pub count: u64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<TeamMemberView<'a>>,
}

fn team_id(raw: &str) -> ApiResult<TeamId> {
    raw.parse().map_err(|_| Error::not_found().into())
}

/// A member path segment that is not a UUID names nobody in the organization.
fn member_id(raw: &str) -> ApiResult<UserId> {
    raw.parse().map_err(|_| {
        Error::new(
            teamcomm_kernel::ErrorCode::MemberInScopeRequired,
            "That user is not a member of your organization.",
        )
        .into()
    })
}

fn role_of(b: &mut Body) -> Result<Option<TeamRole>, Error> {
    b.string("role")
        .map(|r| {
            TeamRole::parse(&r)
                .ok_or_else(|| Error::invalid_field("role", "Must be member or manager."))
        })
        .transpose()
}

#[utoipa::path(
    tag = "teams",
    params(
        ("search" = Option<String>, Query), ("include_archived" = Option<bool>, Query),
        ("page" = Option<u64>, Query, minimum = 1), ("page_size" = Option<u64>, Query, minimum = 1),
    ),
    responses((status = 200, description = "Admins see every team, others their own", body = TeamList), (status = 401, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/teams/")]
pub async fn list_teams(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    let q = query_params(&req);
    let filter = TeamFilter {
        member_of: None,
        include_archived: filters::flag(
            q.get("include_archived").map(String::as_str),
            "include_archived",
        )?
        .unwrap_or(false),
        search: filters::search(q.get("search").map(String::as_str))?,
    };
    let paging = Paging::from_request(&req)?;
    let page = state
        .directory
        .list_teams(caller.user(), filter, paging.request())
        .await?;
    Ok(HttpResponse::Ok()
        .json(paging.envelope(&state.settings.base_url, page.map(|t| TeamView::from(&t)))))
}

/// Body of `POST /v1/teams/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct CreateTeamBody {
    #[schema(min_length = 1, max_length = 200)]
    name: String,
    /// People of the organization to add at once.
    member_uuids: Option<Vec<uuid::Uuid>>,
}

/// Body of `PATCH /v1/teams/{uuid}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct UpdateTeamBody {
    #[schema(min_length = 1, max_length = 200)]
    name: Option<String>,
    /// False archives, true restores.
    active: Option<bool>,
}

#[utoipa::path(
    tag = "teams",
    request_body = CreateTeamBody,
    responses((status = 201, body = TeamView), (status = 400, body = ErrorBody), (status = 403, description = "`org_admin_required`, `member_in_scope_required`", body = ErrorBody)),
    security(("api_key" = []))
)]
#[post("/v1/teams/")]
pub async fn create_team(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let mut b = Body::object(body.0, &["name", "member_uuids"])?;
    let name = b.required_string("name");
    let members = b.string_list("member_uuids").unwrap_or_default();
    b.finish()?;
    let members = members
        .iter()
        .map(|m| member_id(m))
        .collect::<Result<Vec<_>, _>>()?;
    let team = state
        .directory
        .create_team(caller.user(), &name, &members)
        .await?;
    Ok(HttpResponse::Created().json(TeamView::from(&team)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path)),
    responses((status = 200, body = TeamView), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/teams/{uuid}/")]
pub async fn get_team(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let team = state
        .directory
        .get_team(caller.user(), team_id(&id)?)
        .await?;
    Ok(HttpResponse::Ok().json(TeamView::from(&team)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path)),
    request_body = UpdateTeamBody,
    responses((status = 200, body = TeamView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = []))
)]
#[patch("/v1/teams/{uuid}/")]
pub async fn update_team(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let id = team_id(&id)?;
    let mut b = Body::object(body.0, &["name", "active"])?;
    let (name, active) = (b.string("name"), b.bool("active"));
    b.finish()?;
    let team = state
        .directory
        .update_team(caller.user(), id, name.as_deref(), active)
        .await?;
    Ok(HttpResponse::Ok().json(TeamView::from(&team)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path)),
    responses((status = 204, description = "Archived"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = []))
)]
#[delete("/v1/teams/{uuid}/")]
pub async fn archive_team(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state
        .directory
        .archive_team(caller.user(), team_id(&id)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path), ("include_email" = Option<bool>, Query), ("page" = Option<u64>, Query, minimum = 1), ("page_size" = Option<u64>, Query, minimum = 1)),
    responses((status = 200, description = "Members; all of them unless paging parameters are given", body = TeamMemberList), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/teams/{uuid}/members/")]
pub async fn list_members(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let q = query_params(&req);
    let include_email = filters::flag(q.get("include_email").map(String::as_str), "include_email")?
        .unwrap_or(false);
    let paging = Paging::from_request(&req)?;
    // Clients read this list whole (no paging is followed), so it is unpaged unless asked.
    let asked = ["page", "page_size", "limit", "offset"]
        .iter()
        .any(|k| q.contains_key(*k));
    let request = if asked {
        paging.request()
    } else {
        PageRequest::all()
    };
    let page = state
        .directory
        .list_members(caller.user(), team_id(&id)?, request)
        .await?;
    let page = page.map_ref(|m| TeamMemberView::new(m, include_email));
    Ok(HttpResponse::Ok().json(paging.envelope(&state.settings.base_url, page)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path), ("user" = String, Path)),
    responses((status = 200, body = TeamMemberView), (status = 403, description = "`org_admin_required`, `member_in_scope_required`", body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = []))
)]
#[get("/v1/teams/{uuid}/members/{user}/")]
pub async fn get_member(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (team, user) = path.into_inner();
    let m = state
        .directory
        .get_member(caller.user(), team_id(&team)?, member_id(&user)?)
        .await?;
    Ok(HttpResponse::Ok().json(TeamMemberView::new(&m, true)))
}

/// Body of `PUT|PATCH /v1/teams/{uuid}/members/{user}/` (may be empty).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct MemberBody {
    /// `member` (default) or `manager`.
    role: Option<String>,
}

fn optional_body(body: JsonBody) -> Result<Body, Error> {
    let value = if body.0.is_null() {
        serde_json::json!({})
    } else {
        body.0
    };
    Body::object(value, &["role"])
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path), ("user" = String, Path)),
    request_body = MemberBody,
    responses(
        (status = 201, description = "Added to the team", body = TeamMemberView),
        (status = 200, description = "Was already a member; role updated if given", body = TeamMemberView),
        (status = 403, description = "`org_admin_required`, `member_in_scope_required`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []))
)]
#[put("/v1/teams/{uuid}/members/{user}/")]
pub async fn put_member(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let (team, user) = path.into_inner();
    let mut b = optional_body(body)?;
    let role = role_of(&mut b)?;
    b.finish()?;
    let (m, added) = state
        .directory
        .put_member(caller.user(), team_id(&team)?, member_id(&user)?, role)
        .await?;
    let view = TeamMemberView::new(&m, true);
    Ok(if added {
        HttpResponse::Created().json(view)
    } else {
        HttpResponse::Ok().json(view)
    })
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path), ("user" = String, Path)),
    request_body = MemberBody,
    responses((status = 200, body = TeamMemberView), (status = 403, body = ErrorBody), (status = 404, description = "Not a member of the team", body = ErrorBody)),
    security(("api_key" = []))
)]
#[patch("/v1/teams/{uuid}/members/{user}/")]
pub async fn patch_member(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let (team, user) = path.into_inner();
    let mut b = optional_body(body)?;
    let role = role_of(&mut b)?;
    b.finish()?;
    let m = state
        .directory
        .patch_member(caller.user(), team_id(&team)?, member_id(&user)?, role)
        .await?;
    Ok(HttpResponse::Ok().json(TeamMemberView::new(&m, true)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path), ("user" = String, Path)),
    responses((status = 204, description = "Removed from the team"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = []))
)]
#[delete("/v1/teams/{uuid}/members/{user}/")]
pub async fn remove_member(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (team, user) = path.into_inner();
    state
        .directory
        .remove_member(caller.user(), team_id(&team)?, member_id(&user)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Body of `POST /v1/teams/{uuid}/invite/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct TeamInviteBody {
    /// User UUIDs of the organization, or e-mail addresses (unknown ones get an invitation).
    users_identifiers: Option<Vec<String>>,
    /// Alias of `users_identifiers` limited to user UUIDs.
    user_uuids: Option<Vec<String>>,
    /// Alias of `users_identifiers` limited to e-mails.
    emails: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TeamInviteResult<'a> {
    pub team: TeamView,
    pub members_added: CountedMembers<'a>,
    pub users_invited: InvitedUsers,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CountedMembers<'a> {
    pub count: usize,
    pub members: Vec<TeamMemberView<'a>>,
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path)),
    request_body = TeamInviteBody,
    responses(
        (status = 200, body = TeamInviteResult),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`org_admin_required`, `member_in_scope_required`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []))
)]
#[post("/v1/teams/{uuid}/invite/")]
pub async fn invite_to_team(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let team = team_id(&id)?;
    let mut b = Body::object(body.0, &["users_identifiers", "user_uuids", "emails"])?;
    let mut identifiers = b.string_list("users_identifiers").unwrap_or_default();
    identifiers.extend(b.string_list("user_uuids").unwrap_or_default());
    identifiers.extend(b.string_list("emails").unwrap_or_default());
    b.finish()?;
    let outcome = state
        .directory
        .invite_to_team(caller.user(), team, &identifiers)
        .await?;
    let team = state.directory.get_team(caller.user(), team).await?;
    Ok(HttpResponse::Ok().json(TeamInviteResult {
        team: TeamView::from(&team),
        members_added: CountedMembers {
            count: outcome.added.len(),
            members: outcome
                .added
                .iter()
                .map(|m| TeamMemberView::new(m, true))
                .collect(),
        },
        users_invited: InvitedUsers {
            count: outcome.invited.len(),
            members: outcome.invited.iter().map(InvitationView::from).collect(),
        },
    }))
}
