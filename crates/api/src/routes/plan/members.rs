//! The member doors of projects and boards (`…/members/`): one wire shape and one flow for
//! both. The handlers in `projects` and `boards` document their door and name the holder.
//! Rules (`last_grant_cannot_be_removed`…) in `teamcomm_plan::{projects, boards}`.

use actix_web::HttpResponse;
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, ErrorCode, TeamId, UserId};
use teamcomm_plan::access::{GrantView, Grantee};
use teamcomm_plan::{BoardRef, Plan, PlanActor, ProjectId};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::PlanCaller;
use crate::error::ApiResult;
use crate::routes::plan::common::PlanJson;
use crate::routes::plan::projects::PlanRef;
use crate::state::AppState;
use crate::views::iso;

/// A member grant: a person or a team.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlanGrant {
    pub uuid: String,
    pub user_uuid: Option<String>,
    pub team_uuid: Option<String>,
    /// The person granted, or null for a team grant.
    pub user: Option<PlanRef>,
    /// The team granted, or null for a person grant.
    pub team: Option<PlanRef>,
    /// Always `member`.
    pub role: String,
    pub created_at: String,
}

impl From<GrantView> for PlanGrant {
    fn from(v: GrantView) -> Self {
        let (user, team) = match v.grant.grantee {
            Grantee::User(u) => (Some(u.0), None),
            Grantee::Team(t) => (None, Some(t.0)),
        };
        let named = |id: Option<Uuid>| {
            id.map(|id| PlanRef {
                uuid: id.to_string(),
                name: v.name.clone(),
            })
        };
        PlanGrant {
            uuid: v.grant.id.to_string(),
            user_uuid: user.map(|u| u.to_string()),
            team_uuid: team.map(|t| t.to_string()),
            user: named(user),
            team: named(team),
            role: v.grant.role,
            created_at: iso(v.grant.created_at),
        }
    }
}

/// Body of `POST …/members/`: exactly one of the two.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMemberBody {
    user_uuid: Option<Uuid>,
    team_uuid: Option<Uuid>,
}

impl AddMemberBody {
    fn grantee(&self) -> Result<Grantee, Error> {
        match (self.user_uuid, self.team_uuid) {
            (Some(u), None) => Ok(Grantee::User(UserId(u))),
            (None, Some(t)) => Ok(Grantee::Team(TeamId(t))),
            _ => Err(Error::new(
                ErrorCode::InvalidFilterValue,
                "Give exactly one of user_uuid and team_uuid.",
            )
            .with_extra("parameter", "user_uuid")),
        }
    }
}

/// Body of `PATCH …/members/{u}/`: nothing may change (the role is read-only).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectMemberBody {}

/// What holds the grants, as the path names it.
pub enum Holder {
    Project(ProjectId),
    /// A board's uuid or key, read only once the body is (a bad body answers first).
    Board(String),
}

impl Holder {
    async fn grants(&self, plan: &Plan, actor: &PlanActor) -> Result<Vec<GrantView>, Error> {
        match self {
            Holder::Project(id) => plan.project_members(actor, *id).await,
            Holder::Board(raw) => plan.board_members(actor, &BoardRef::parse(raw)?).await,
        }
    }

    async fn add(
        &self,
        plan: &Plan,
        actor: &PlanActor,
        grantee: Grantee,
    ) -> Result<(GrantView, bool), Error> {
        match self {
            Holder::Project(id) => plan.add_project_member(actor, *id, grantee).await,
            Holder::Board(raw) => {
                plan.add_board_member(actor, &BoardRef::parse(raw)?, grantee)
                    .await
            }
        }
    }

    async fn grant(&self, plan: &Plan, actor: &PlanActor, who: Uuid) -> Result<GrantView, Error> {
        match self {
            Holder::Project(id) => plan.project_member(actor, *id, who).await,
            Holder::Board(raw) => plan.board_member(actor, &BoardRef::parse(raw)?, who).await,
        }
    }

    async fn remove(&self, plan: &Plan, actor: &PlanActor, who: Uuid) -> Result<(), Error> {
        match self {
            Holder::Project(id) => plan.remove_project_member(actor, *id, who).await,
            Holder::Board(raw) => {
                plan.remove_board_member(actor, &BoardRef::parse(raw)?, who)
                    .await
            }
        }
    }
}

/// `GET …/members/`: the grants, oldest first.
pub async fn list(state: &AppState, caller: PlanCaller, holder: Holder) -> ApiResult<HttpResponse> {
    let members = holder.grants(&state.plan, &caller.0).await?;
    Ok(HttpResponse::Ok().json(members.into_iter().map(PlanGrant::from).collect::<Vec<_>>()))
}

/// `POST …/members/`: 201 with the new grant, 200 with the one the grantee already has.
pub async fn add(
    state: &AppState,
    caller: PlanCaller,
    holder: Holder,
    body: PlanJson<AddMemberBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let grantee = body.body.grantee()?;
    let (grant, created) = holder.add(&state.plan, &actor, grantee).await?;
    let mut answer = if created {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    };
    Ok(answer.json(PlanGrant::from(grant)))
}

/// `PATCH …/members/{member}/`: the grant the path names (by grant, person or team uuid).
pub async fn inspect(
    state: &AppState,
    caller: PlanCaller,
    holder: Holder,
    member: Uuid,
    body: PlanJson<InspectMemberBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let grant = holder.grant(&state.plan, &actor, member).await?;
    Ok(HttpResponse::Ok().json(PlanGrant::from(grant)))
}

/// `DELETE …/members/{member}/`: 204.
pub async fn remove(
    state: &AppState,
    caller: PlanCaller,
    holder: Holder,
    member: Uuid,
) -> ApiResult<HttpResponse> {
    holder.remove(&state.plan, &caller.0, member).await?;
    Ok(HttpResponse::NoContent().finish())
}
