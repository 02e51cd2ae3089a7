//! `POST /v1/invite-user/` and the pending invitations.

use actix_web::{HttpResponse, delete, get, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::TeamId;
use teamcomm_org::{InvitationKind, InviteRequest};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Identifier, JsonBody};
use crate::paging::{ListEnvelope, ListQuery, NoFilters, PageParams};
use crate::state::AppState;
use crate::views::{InvitationView, InvitedUsers, UserView};

/// Body of `POST /v1/invite-user/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteBody {
    /// E-mail addresses (contain `@`) or chat-platform user ids.
    #[schema(inline, min_items = 1, max_items = 100, example = json!(["ada@example.com"]))]
    users_identifiers: Vec<Identifier>,
    /// Guests are invited by e-mail only.
    is_guest_account_invite: Option<bool>,
    /// Teams the invited people join when they accept.
    #[schema(value_type = Option<Vec<Uuid>>)]
    joinable_team_uuids: Option<Vec<TeamId>>,
    /// Check-ins the invited people join when they accept.
    joinable_followup_uuids: Option<Vec<Uuid>>,
}

impl From<InviteBody> for InviteRequest {
    fn from(b: InviteBody) -> Self {
        InviteRequest {
            identifiers: b.users_identifiers.into_iter().map(|i| i.0).collect(),
            is_guest: b.is_guest_account_invite.unwrap_or(false),
            team_ids: b.joinable_team_uuids.unwrap_or_default(),
            followup_ids: b.joinable_followup_uuids.unwrap_or_default(),
        }
    }
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

#[utoipa::path(
    tag = "invitations",
    request_body = InviteBody,
    responses((status = 200, body = InviteResult), (status = 400, body = ErrorBody), (status = 403, description = "`guest_not_allowed`", body = ErrorBody))
)]
#[post("/v1/invite-user/")]
pub async fn invite_user(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<InviteBody>,
) -> ApiResult<HttpResponse> {
    let outcome = state
        .invitations
        .invite(caller.user(), InviteRequest::from(body.0))
        .await?;
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

async fn list(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<NoFilters>,
    kind: InvitationKind,
) -> ApiResult<HttpResponse> {
    let page = state
        .invitations
        .list_invitations(caller.user(), kind, q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map(|i| InvitationView::from(&i)))))
}

async fn show(
    state: web::Data<AppState>,
    caller: Caller,
    kind: InvitationKind,
    id: Uuid,
) -> ApiResult<HttpResponse> {
    let inv = state
        .invitations
        .get_invitation(caller.user(), kind, id)
        .await?;
    Ok(HttpResponse::Ok().json(InvitationView::from(&inv)))
}

async fn revoke(
    state: web::Data<AppState>,
    caller: Caller,
    kind: InvitationKind,
    id: Uuid,
) -> ApiResult<HttpResponse> {
    state
        .invitations
        .revoke_invitation(caller.user(), kind, id)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "invitations",
    params(PageParams),
    responses((status = 200, description = "Pending member invitations", body = ListEnvelope<InvitationView>), (status = 403, description = "`org_admin_required`", body = ErrorBody))
)]
#[get("/v1/pending-invitations/")]
pub async fn list_member_invitations(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<NoFilters>,
) -> ApiResult<HttpResponse> {
    list(state, caller, q, InvitationKind::Members).await
}

#[utoipa::path(
    tag = "invitations",
    params(PageParams),
    responses((status = 200, description = "Every pending invitation", body = ListEnvelope<InvitationView>), (status = 403, body = ErrorBody))
)]
#[get("/v1/pending-invitations/all/")]
pub async fn list_all_invitations(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<NoFilters>,
) -> ApiResult<HttpResponse> {
    list(state, caller, q, InvitationKind::All).await
}

#[utoipa::path(
    tag = "invitations",
    params(PageParams),
    responses((status = 200, description = "Pending guest invitations", body = ListEnvelope<InvitationView>), (status = 403, body = ErrorBody))
)]
#[get("/v1/pending-invitations/guests/")]
pub async fn list_guest_invitations(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<NoFilters>,
) -> ApiResult<HttpResponse> {
    list(state, caller, q, InvitationKind::Guests).await
}

#[utoipa::path(
    tag = "invitations",
    params(("id" = String, Path)),
    responses((status = 200, body = InvitationView), (status = 404, body = ErrorBody))
)]
#[get("/v1/pending-invitations/guests/{id}/")]
pub async fn get_guest_invitation(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    show(state, caller, InvitationKind::Guests, *id).await
}

#[utoipa::path(
    tag = "invitations",
    params(("id" = String, Path)),
    responses((status = 204, description = "Revoked"), (status = 404, body = ErrorBody))
)]
#[delete("/v1/pending-invitations/guests/{id}/")]
pub async fn delete_guest_invitation(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    revoke(state, caller, InvitationKind::Guests, *id).await
}

#[utoipa::path(
    tag = "invitations",
    params(("id" = String, Path)),
    responses((status = 200, body = InvitationView), (status = 404, body = ErrorBody))
)]
#[get("/v1/pending-invitations/{id}/")]
pub async fn get_invitation(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    show(state, caller, InvitationKind::All, *id).await
}

#[utoipa::path(
    tag = "invitations",
    params(("id" = String, Path)),
    responses((status = 204, description = "Revoked"), (status = 404, body = ErrorBody))
)]
#[delete("/v1/pending-invitations/{id}/")]
pub async fn delete_invitation(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    revoke(state, caller, InvitationKind::All, *id).await
}
