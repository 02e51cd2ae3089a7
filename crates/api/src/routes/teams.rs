//! `/v1/teams/`: teams, memberships and team invitations. Member management and team invites
//! are admin only (`org_admin_required`); rules in `teamcomm_org::TeamService`.

use actix_web::{HttpResponse, delete, get, patch, post, put, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{ErrorCode, PageRequest, TeamId, UserId};
use teamcomm_org::{MAX_TEAM_NAME, Team, TeamFilter, TeamMember};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{EmailAddress, Identifier, JsonBody, Name, OptionalJsonBody, TeamRoleName};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::{Search, search};
use crate::state::AppState;
use crate::views::{InvitationView, InvitedUsers, UserView, iso};

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

/// A member path segment that is not a UUID names nobody in the organization.
fn member_id(raw: &str) -> ApiResult<UserId> {
    raw.parse().map_err(|_| {
        teamcomm_kernel::Error::new(
            ErrorCode::MemberInScopeRequired,
            "That user is not a member of your organization.",
        )
        .into()
    })
}

/// Filters of `GET /v1/teams/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TeamListQuery {
    /// Name fragment, at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
    /// Include archived teams.
    include_archived: Option<bool>,
}

#[utoipa::path(
    tag = "teams",
    params(TeamListQuery, PageParams),
    responses((status = 200, description = "Admins see every team, others their own", body = ListEnvelope<TeamView>), (status = 401, body = ErrorBody))
)]
#[get("/v1/teams/")]
pub async fn list_teams(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<TeamListQuery>,
) -> ApiResult<HttpResponse> {
    let filter = TeamFilter {
        member_of: None,
        include_archived: q.filters.include_archived.unwrap_or(false),
        search: search(q.filters.search.clone()),
    };
    let page = state
        .teams
        .list_teams(caller.user(), filter, q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map(|t| TeamView::from(&t)))))
}

/// Body of `POST /v1/teams/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTeamBody {
    #[schema(inline)]
    name: Name<{ MAX_TEAM_NAME }>,
    /// People of the organization to add at once.
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    member_uuids: Option<Vec<UserId>>,
}

/// Body of `PATCH /v1/teams/{uuid}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTeamBody {
    #[schema(inline)]
    name: Option<Name<{ MAX_TEAM_NAME }>>,
    /// False archives, true restores.
    active: Option<bool>,
}

#[utoipa::path(
    tag = "teams",
    request_body = CreateTeamBody,
    responses((status = 201, body = TeamView), (status = 400, body = ErrorBody), (status = 403, description = "`org_admin_required`, `member_in_scope_required`", body = ErrorBody))
)]
#[post("/v1/teams/")]
pub async fn create_team(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<CreateTeamBody>,
) -> ApiResult<HttpResponse> {
    let CreateTeamBody { name, member_uuids } = body.0;
    let team = state
        .teams
        .create_team(caller.user(), &name.0, &member_uuids.unwrap_or_default())
        .await?;
    Ok(HttpResponse::Created().json(TeamView::from(&team)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path)),
    responses((status = 200, body = TeamView), (status = 404, body = ErrorBody))
)]
#[get("/v1/teams/{uuid}/")]
pub async fn get_team(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<TeamId>,
) -> ApiResult<HttpResponse> {
    let team = state.teams.get_team(caller.user(), *id).await?;
    Ok(HttpResponse::Ok().json(TeamView::from(&team)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path)),
    request_body = UpdateTeamBody,
    responses((status = 200, body = TeamView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[patch("/v1/teams/{uuid}/")]
pub async fn update_team(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<TeamId>,
    body: JsonBody<UpdateTeamBody>,
) -> ApiResult<HttpResponse> {
    let UpdateTeamBody { name, active } = body.0;
    let team = state
        .teams
        .update_team(
            caller.user(),
            *id,
            name.as_ref().map(|n| n.0.as_str()),
            active,
        )
        .await?;
    Ok(HttpResponse::Ok().json(TeamView::from(&team)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path)),
    responses((status = 204, description = "Archived"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/v1/teams/{uuid}/")]
pub async fn archive_team(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<TeamId>,
) -> ApiResult<HttpResponse> {
    state.teams.archive_team(caller.user(), *id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `?include_email=` of a member listing.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MemberListQuery {
    /// Show e-mail addresses.
    include_email: Option<bool>,
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path), MemberListQuery, PageParams),
    responses((status = 200, description = "Members; all of them unless paging parameters are given", body = ListEnvelope<TeamMemberView>), (status = 404, body = ErrorBody))
)]
#[get("/v1/teams/{uuid}/members/")]
pub async fn list_members(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<TeamId>,
    q: ListQuery<MemberListQuery>,
) -> ApiResult<HttpResponse> {
    // Clients read this list whole (no paging is followed), so it is unpaged unless asked.
    let request = if q.paging.given() {
        q.paging.request()
    } else {
        PageRequest::all()
    };
    let page = state
        .teams
        .list_members(caller.user(), *id, request)
        .await?;
    let include_email = q.filters.include_email.unwrap_or(false);
    Ok(
        HttpResponse::Ok()
            .json(q.envelope(page.map_ref(|m| TeamMemberView::new(m, include_email)))),
    )
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path), ("user" = String, Path)),
    responses((status = 200, body = TeamMemberView), (status = 403, description = "`org_admin_required`, `member_in_scope_required`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[get("/v1/teams/{uuid}/members/{user}/")]
pub async fn get_member(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(TeamId, String)>,
) -> ApiResult<HttpResponse> {
    let (team, user) = path.into_inner();
    let m = state
        .teams
        .get_member(caller.user(), team, member_id(&user)?)
        .await?;
    Ok(HttpResponse::Ok().json(TeamMemberView::new(&m, true)))
}

/// Body of `PUT|PATCH /v1/teams/{uuid}/members/{user}/` (may be left out).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberBody {
    /// Default `member` when added.
    #[schema(inline)]
    role: Option<TeamRoleName>,
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
    )
)]
#[put("/v1/teams/{uuid}/members/{user}/")]
pub async fn put_member(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(TeamId, String)>,
    body: OptionalJsonBody<MemberBody>,
) -> ApiResult<HttpResponse> {
    let (team, user) = path.into_inner();
    let (m, added) = state
        .teams
        .put_member(
            caller.user(),
            team,
            member_id(&user)?,
            body.0.role.map(|r| r.0),
        )
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
    responses((status = 200, body = TeamMemberView), (status = 403, body = ErrorBody), (status = 404, description = "Not a member of the team", body = ErrorBody))
)]
#[patch("/v1/teams/{uuid}/members/{user}/")]
pub async fn patch_member(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(TeamId, String)>,
    body: OptionalJsonBody<MemberBody>,
) -> ApiResult<HttpResponse> {
    let (team, user) = path.into_inner();
    let m = state
        .teams
        .patch_member(
            caller.user(),
            team,
            member_id(&user)?,
            body.0.role.map(|r| r.0),
        )
        .await?;
    Ok(HttpResponse::Ok().json(TeamMemberView::new(&m, true)))
}

#[utoipa::path(
    tag = "teams",
    params(("uuid" = String, Path), ("user" = String, Path)),
    responses((status = 204, description = "Removed from the team"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/v1/teams/{uuid}/members/{user}/")]
pub async fn remove_member(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(TeamId, String)>,
) -> ApiResult<HttpResponse> {
    let (team, user) = path.into_inner();
    state
        .teams
        .remove_member(caller.user(), team, member_id(&user)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Body of `POST /v1/teams/{uuid}/invite/`: people of the organization join at once; unknown
/// e-mail addresses get an invitation that includes the team.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamInviteBody {
    /// User UUIDs of the organization, or e-mail addresses.
    #[schema(inline)]
    users_identifiers: Option<Vec<Identifier>>,
    /// Alias of `users_identifiers` limited to user UUIDs.
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    user_uuids: Option<Vec<UserId>>,
    /// Alias of `users_identifiers` limited to e-mail addresses.
    #[schema(inline)]
    emails: Option<Vec<EmailAddress>>,
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
    )
)]
#[post("/v1/teams/{uuid}/invite/")]
pub async fn invite_to_team(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<TeamId>,
    body: JsonBody<TeamInviteBody>,
) -> ApiResult<HttpResponse> {
    let TeamInviteBody {
        users_identifiers,
        user_uuids,
        emails,
    } = body.0;
    let mut identifiers: Vec<String> = users_identifiers
        .into_iter()
        .flatten()
        .map(|i| i.0)
        .collect();
    identifiers.extend(user_uuids.into_iter().flatten().map(|u| u.to_string()));
    identifiers.extend(emails.into_iter().flatten().map(|e| e.0));
    let outcome = state
        .teams
        .invite_to_team(caller.user(), *id, &identifiers)
        .await?;
    let team = state.teams.get_team(caller.user(), *id).await?;
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
