//! `POST /v1/invite-user/` and the pending invitations.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, TeamId};
use teamcomm_org::{Invitation, InvitationKind, InviteRequest};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::Caller;
use crate::body::{Body, JsonBody, iso};
use crate::error::ApiResult;
use crate::openapi::ErrorBody;
use crate::paging::Paging;
use crate::routes::people::UserView;
use crate::state::AppState;

/// A pending invitation.
#[derive(Debug, Serialize, ToSchema)]
pub struct InvitationView {
    pub id: String,
    pub uuid: String,
    /// The e-mail or chat-platform id invited.
    pub identifier: String,
    pub email: Option<String>,
    pub is_guest: bool,
    pub joinable_team_uuids: Vec<String>,
    pub joinable_followup_uuids: Vec<String>,
    pub invited_by: Option<String>,
    pub resend_count: i32,
    pub created_at: String,
}

impl From<&Invitation> for InvitationView {
    fn from(i: &Invitation) -> Self {
        InvitationView {
            id: i.id.to_string(),
            uuid: i.id.to_string(),
            identifier: i.identifier.clone(),
            email: i.is_email.then(|| i.identifier.clone()),
            is_guest: i.is_guest,
            joinable_team_uuids: i.team_ids.iter().map(ToString::to_string).collect(),
            joinable_followup_uuids: i.followup_ids.iter().map(ToString::to_string).collect(),
            invited_by: i.invited_by.map(|u| u.to_string()),
            resend_count: i.resend_count,
            created_at: iso(i.created_at),
        }
    }
}

/// Body of `POST /v1/invite-user/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct InviteBody {
    /// E-mail addresses (contain `@`) or chat-platform user ids; 1 to 100.
    users_identifiers: Vec<String>,
    /// Guests are invited by e-mail only.
    is_guest_account_invite: Option<bool>,
    joinable_team_uuids: Option<Vec<String>>,
    joinable_followup_uuids: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InviteResult<'a> {
    /// People who already belong to the organization (nothing sent).
    pub dailybot_members: InvitedMembers<'a>,
    /// Invitations created or resent.
    pub users_invited: InvitedUsers,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InvitedMembers<'a> {
    pub count: usize,
    pub members: Vec<UserView<'a>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InvitedUsers {
    pub count: usize,
    pub members: Vec<InvitationView>,
}

fn uuids(field: &str, raw: Vec<String>) -> Result<Vec<Uuid>, Error> {
    raw.iter()
        .map(|s| {
            Uuid::parse_str(s.trim())
                .map_err(|_| Error::invalid_field(field, format!("\"{s}\" is not a valid UUID.")))
        })
        .collect()
}

#[utoipa::path(
    tag = "invitations",
    request_body = InviteBody,
    responses((status = 200, body = InviteResult), (status = 400, body = ErrorBody), (status = 403, description = "`guest_not_allowed`", body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[post("/v1/invite-user/")]
pub async fn invite_user(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let mut b = Body::object(
        body.0,
        &[
            "users_identifiers",
            "is_guest_account_invite",
            "joinable_team_uuids",
            "joinable_followup_uuids",
        ],
    )?;
    let identifiers = b.string_list("users_identifiers");
    if identifiers.is_none() && !b.has("users_identifiers") {
        b.required_string("users_identifiers");
    }
    let is_guest = b.bool("is_guest_account_invite").unwrap_or(false);
    let teams = b.string_list("joinable_team_uuids").unwrap_or_default();
    let followups = b.string_list("joinable_followup_uuids").unwrap_or_default();
    b.finish()?;
    let req = InviteRequest {
        identifiers: identifiers.unwrap_or_default(),
        is_guest,
        team_ids: uuids("joinable_team_uuids", teams)?
            .into_iter()
            .map(TeamId)
            .collect(),
        followup_ids: uuids("joinable_followup_uuids", followups)?,
    };
    let outcome = state.directory.invite(caller.user(), req).await?;
    Ok(HttpResponse::Ok().json(InviteResult {
        dailybot_members: InvitedMembers {
            count: outcome.existing_members.len(),
            members: outcome
                .existing_members
                .iter()
                .map(|u| UserView::new(u, true))
                .collect(),
        },
        users_invited: InvitedUsers {
            count: outcome.invited.len(),
            members: outcome.invited.iter().map(InvitationView::from).collect(),
        },
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InvitationList {
    pub count: u64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<InvitationView>,
}

async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
    kind: InvitationKind,
) -> ApiResult<HttpResponse> {
    let paging = Paging::from_request(&req)?;
    let page = state
        .directory
        .list_invitations(caller.user(), kind, paging.request())
        .await?;
    let page = page.map(|i| InvitationView::from(&i));
    Ok(HttpResponse::Ok().json(paging.envelope(&state.settings.base_url, page)))
}

async fn show(
    state: web::Data<AppState>,
    caller: Caller,
    kind: InvitationKind,
    id: &str,
) -> ApiResult<HttpResponse> {
    let inv = state
        .directory
        .get_invitation(caller.user(), kind, invitation_id(id)?)
        .await?;
    Ok(HttpResponse::Ok().json(InvitationView::from(&inv)))
}

async fn revoke(
    state: web::Data<AppState>,
    caller: Caller,
    kind: InvitationKind,
    id: &str,
) -> ApiResult<HttpResponse> {
    state
        .directory
        .revoke_invitation(caller.user(), kind, invitation_id(id)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

fn invitation_id(raw: &str) -> ApiResult<Uuid> {
    Uuid::parse_str(raw).map_err(|_| Error::not_found().into())
}

#[utoipa::path(
    tag = "invitations",
    params(("page" = Option<u64>, Query, minimum = 1), ("page_size" = Option<u64>, Query, minimum = 1)),
    responses((status = 200, description = "Pending member invitations", body = InvitationList), (status = 403, description = "`org_admin_required`", body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/pending-invitations/")]
pub async fn list_member_invitations(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    list(req, state, caller, InvitationKind::Members).await
}

#[utoipa::path(
    tag = "invitations",
    params(("page" = Option<u64>, Query, minimum = 1), ("page_size" = Option<u64>, Query, minimum = 1)),
    responses((status = 200, description = "Every pending invitation", body = InvitationList), (status = 403, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/pending-invitations/all/")]
pub async fn list_all_invitations(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    list(req, state, caller, InvitationKind::All).await
}

#[utoipa::path(
    tag = "invitations",
    params(("page" = Option<u64>, Query, minimum = 1), ("page_size" = Option<u64>, Query, minimum = 1)),
    responses((status = 200, description = "Pending guest invitations", body = InvitationList), (status = 403, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/pending-invitations/guests/")]
pub async fn list_guest_invitations(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    list(req, state, caller, InvitationKind::Guests).await
}

#[utoipa::path(
    tag = "invitations",
    params(("id" = String, Path)),
    responses((status = 200, body = InvitationView), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/pending-invitations/guests/{id}/")]
pub async fn get_guest_invitation(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    show(state, caller, InvitationKind::Guests, &id).await
}

#[utoipa::path(
    tag = "invitations",
    params(("id" = String, Path)),
    responses((status = 204, description = "Revoked"), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[delete("/v1/pending-invitations/guests/{id}/")]
pub async fn delete_guest_invitation(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    revoke(state, caller, InvitationKind::Guests, &id).await
}

#[utoipa::path(
    tag = "invitations",
    params(("id" = String, Path)),
    responses((status = 200, body = InvitationView), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/pending-invitations/{id}/")]
pub async fn get_invitation(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    show(state, caller, InvitationKind::All, &id).await
}

#[utoipa::path(
    tag = "invitations",
    params(("id" = String, Path)),
    responses((status = 204, description = "Revoked"), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[delete("/v1/pending-invitations/{id}/")]
pub async fn delete_invitation(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    revoke(state, caller, InvitationKind::All, &id).await
}
