//! Plan routes: projects (list, create, detail, update, archive, restore, reorder, members).
//! Rules in `teamcomm_plan::projects`.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, ErrorCode, UserId};
use teamcomm_plan::ProjectId;
use teamcomm_plan::access::{Anchor, DryRunOr};
use teamcomm_plan::projects::{
    NewProject, ProjectFilter, ProjectIncludes, ProjectPatch, ProjectView, check_search,
};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::PlanCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::wire::{HealthName, VisibilityName};
use crate::extract::{Query, nullable};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::Day;
use crate::policy::{Policy as P, Routes};
use crate::routes::plan::common::{DryRun, IncludeList, ListSearch, OrPreview, PlanJson, preview};
use crate::routes::plan::members::{self, AddMemberBody, Holder, InspectMemberBody, PlanGrant};
use crate::state::AppState;
use crate::views::iso;

/// This module's part of the route table.
pub fn declare(r: &mut Routes<'_, '_>) {
    r.add(list_projects, P::plan_read())
        .add(create_project, P::plan_admin().idempotent())
        .add(get_project, P::plan_read())
        .add(update_project, P::plan_admin().idempotent())
        .add(archive_project, P::plan_admin().idempotent())
        .add(restore_project, P::plan_admin().idempotent())
        .add(reorder_project, P::plan_admin().admin_only())
        .add(list_project_members, P::plan_read().person_only())
        .add(add_project_member, P::plan_write().person_only())
        .add(get_project_member, P::plan_write().person_only())
        .add(remove_project_member, P::plan_write().person_only());
}

/// Someone named: `{uuid, name}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlanRef {
    pub uuid: String,
    pub name: String,
}

/// Closed over all tasks of the project's live boards (canceled ones count neither way).
#[derive(Debug, Serialize, ToSchema)]
pub struct ProgressView {
    pub percent_complete: u64,
    pub completed: u64,
    pub total: u64,
    /// True when some of the project's tasks were not counted (never, for now).
    pub is_partial: bool,
}

/// A project.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectBody {
    pub uuid: String,
    pub name: String,
    pub description: String,
    /// `org` or `members`.
    pub visibility: &'static str,
    pub lead: Option<PlanRef>,
    /// `not_set`, `on_track`, `at_risk` or `off_track`.
    pub health: &'static str,
    /// `YYYY-MM-DD`.
    pub start_date: Option<String>,
    pub target_date: Option<String>,
    /// Live boards.
    pub board_count: u64,
    pub is_archived: bool,
    pub created_at: String,
    pub updated_at: String,
    /// Only with `include=progress`; null when the project has no tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<ProgressView>)]
    pub progress: Option<Option<ProgressView>>,
}

impl From<ProjectView> for ProjectBody {
    fn from(v: ProjectView) -> Self {
        let p = v.project;
        ProjectBody {
            uuid: p.id.to_string(),
            name: p.name,
            description: p.description,
            visibility: p.visibility.as_str(),
            lead: p.lead.map(|id| PlanRef {
                uuid: id.to_string(),
                name: v.lead_name.unwrap_or_default(),
            }),
            health: p.health.as_str(),
            start_date: p.start_date.map(|d| d.to_string()),
            target_date: p.target_date.map(|d| d.to_string()),
            board_count: v.board_count,
            is_archived: p.is_archived,
            created_at: iso(p.created_at),
            updated_at: iso(p.updated_at),
            progress: v.progress.map(|p| {
                p.map(|p| ProgressView {
                    percent_complete: p.percent_complete(),
                    completed: p.completed,
                    total: p.total,
                    is_partial: false,
                })
            }),
        }
    }
}

/// `include=`: a comma list; `progress` is the only roll-up.
pub(crate) fn includes(raw: Option<&str>) -> Result<ProjectIncludes, Error> {
    let mut inc = ProjectIncludes::default();
    for part in raw
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        match part {
            "progress" => inc.progress = true,
            _ => {
                return Err(
                    Error::new(ErrorCode::InvalidFilterValue, "include takes: progress.")
                        .with_extra("parameter", "include"),
                );
            }
        }
    }
    Ok(inc)
}

/// Filters of `GET projects/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProjectListQuery {
    /// `progress` adds each project's progress (a comma list; another value is
    /// `invalid_filter_value`).
    #[param(inline)]
    include: Option<IncludeList>,
    /// Part of the name: once trimmed, 2 to 256 characters (`search_query_too_short`,
    /// `search_query_too_long`), no NUL (`invalid_filter_value`).
    #[param(inline)]
    search: Option<ListSearch>,
    /// Projects whose span reaches this day or later.
    #[param(value_type = Option<String>, format = Date)]
    start_date: Option<Day>,
    /// Projects whose span starts this day or earlier.
    #[param(value_type = Option<String>, format = Date)]
    end_date: Option<Day>,
    /// Archived projects too.
    include_archived: Option<bool>,
}

#[utoipa::path(
    tag = "plan",
    params(ProjectListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<ProjectBody>), (status = 400, body = ErrorBody))
)]
#[get("/v1/plan/projects/")]
pub async fn list_projects(
    state: web::Data<AppState>,
    caller: PlanCaller,
    q: ListQuery<ProjectListQuery>,
) -> ApiResult<HttpResponse> {
    let f = &q.filters;
    let filter = ProjectFilter {
        search: check_search(f.search.as_ref().map(|s| s.0.as_str()))?,
        start_date: f.start_date.map(|d| d.0),
        end_date: f.end_date.map(|d| d.0),
        include_archived: f.include_archived.unwrap_or(false),
        ..ProjectFilter::default()
    };
    let page = state
        .plan
        .list_projects(
            &caller.0,
            filter,
            includes(f.include.as_ref().map(|s| s.0.as_str()))?,
            q.paging.request(),
        )
        .await?;
    let page = teamcomm_kernel::Page {
        count: page.count,
        results: page.results.into_iter().map(ProjectBody::from).collect(),
    };
    Ok(HttpResponse::Ok().json(q.envelope(page)))
}

/// Body of `POST projects/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateProjectBody {
    /// Unique in the organization, any case, archived projects included.
    #[schema(min_length = 1, max_length = 255)]
    name: String,
    #[schema(max_length = 10000)]
    description: Option<String>,
    #[schema(inline)]
    visibility: Option<VisibilityName>,
    /// A person's uuid.
    lead: Option<Uuid>,
    #[schema(inline)]
    health: Option<HealthName>,
    #[schema(value_type = Option<String>, format = Date)]
    start_date: Option<Day>,
    #[schema(value_type = Option<String>, format = Date)]
    target_date: Option<Day>,
}

#[utoipa::path(
    tag = "plan",
    request_body = CreateProjectBody,
    responses((status = 201, body = ProjectBody), (status = 400, body = ErrorBody), (status = 402, body = ErrorBody), (status = 409, body = ErrorBody))
)]
#[post("/v1/plan/projects/")]
pub async fn create_project(
    state: web::Data<AppState>,
    caller: PlanCaller,
    body: PlanJson<CreateProjectBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let project = state
        .plan
        .create_project(
            &actor,
            NewProject {
                name: b.name,
                description: b.description,
                visibility: b.visibility.map(|v| v.0),
                lead: b.lead.map(UserId),
                health: b.health.map(|h| h.0),
                start_date: b.start_date.map(|d| d.0),
                target_date: b.target_date.map(|d| d.0),
            },
        )
        .await?;
    let view = state
        .plan
        .project_detail(&actor, project.id, ProjectIncludes::default())
        .await?;
    Ok(HttpResponse::Created().json(ProjectBody::from(view)))
}

/// `?include=progress`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IncludeQuery {
    /// `progress` adds the project's progress (a comma list; another value is
    /// `invalid_filter_value`).
    #[param(inline)]
    include: Option<IncludeList>,
}

#[utoipa::path(
    tag = "plan",
    params(IncludeQuery),
    responses((status = 200, body = ProjectBody), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/projects/{project}/")]
pub async fn get_project(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<Uuid>,
    q: Query<IncludeQuery>,
) -> ApiResult<HttpResponse> {
    let view = state
        .plan
        .project_detail(
            &caller.0,
            ProjectId(path.into_inner()),
            includes(q.0.include.as_ref().map(|s| s.0.as_str()))?,
        )
        .await?;
    Ok(HttpResponse::Ok().json(ProjectBody::from(view)))
}

/// Body of `PATCH projects/{p}/`: any subset.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateProjectBody {
    #[schema(min_length = 1, max_length = 255)]
    name: Option<String>,
    #[schema(max_length = 10000)]
    description: Option<String>,
    #[schema(inline)]
    visibility: Option<VisibilityName>,
    /// A person's uuid; null clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<Uuid>)]
    lead: Option<Option<Uuid>>,
    #[schema(inline)]
    health: Option<HealthName>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, format = Date)]
    start_date: Option<Option<Day>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, format = Date)]
    target_date: Option<Option<Day>>,
}

#[utoipa::path(
    tag = "plan",
    request_body = UpdateProjectBody,
    responses((status = 200, body = ProjectBody), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody))
)]
#[patch("/v1/plan/projects/{project}/")]
pub async fn update_project(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<Uuid>,
    body: PlanJson<UpdateProjectBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let id = ProjectId(path.into_inner());
    let patch = ProjectPatch {
        name: b.name,
        description: b.description,
        visibility: b.visibility.map(|v| v.0),
        lead: b.lead.map(|l| l.map(UserId)),
        health: b.health.map(|h| h.0),
        start_date: b.start_date.map(|d| d.map(|d| d.0)),
        target_date: b.target_date.map(|d| d.map(|d| d.0)),
        ..ProjectPatch::default()
    };
    state.plan.update_project(&actor, id, patch).await?;
    let view = state
        .plan
        .project_detail(&actor, id, ProjectIncludes::default())
        .await?;
    Ok(HttpResponse::Ok().json(ProjectBody::from(view)))
}

/// No fields (besides `agent_name`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyBody {}

#[utoipa::path(
    tag = "plan",
    params(("dry_run" = Option<bool>, Query, description = "Preview: writes nothing")),
    responses((status = 200, description = "The project, or the preview on a dry run", body = OrPreview<ProjectBody>), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/projects/{project}/archive/")]
pub async fn archive_project(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<Uuid>,
    dry_run: DryRun,
    body: PlanJson<EmptyBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let id = ProjectId(path.into_inner());
    match state.plan.archive_project(&actor, id, dry_run.0).await? {
        DryRunOr::Preview(p) => Ok(preview(p)),
        DryRunOr::Done(_) => project_answer(&state, &actor, id).await,
    }
}

async fn project_answer(
    state: &AppState,
    actor: &teamcomm_plan::PlanActor,
    id: ProjectId,
) -> ApiResult<HttpResponse> {
    let view = state
        .plan
        .project_detail(actor, id, ProjectIncludes::default())
        .await?;
    Ok(HttpResponse::Ok().json(ProjectBody::from(view)))
}

#[utoipa::path(
    tag = "plan",
    responses((status = 200, body = ProjectBody), (status = 402, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/projects/{project}/restore/")]
pub async fn restore_project(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<Uuid>,
    body: PlanJson<EmptyBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let id = ProjectId(path.into_inner());
    state.plan.restore_project(&actor, id).await?;
    project_answer(&state, &actor, id).await
}

/// Body of a reorder: at most one anchor; none puts it last.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReorderProjectBody {
    before: Option<Uuid>,
    after: Option<Uuid>,
}

/// The anchor of a reorder body (both → refused).
pub(crate) fn anchor_of<Id>(
    before: Option<Uuid>,
    after: Option<Uuid>,
    id: impl Fn(Uuid) -> Id,
) -> Result<Anchor<Id>, Error> {
    match (before, after) {
        (Some(_), Some(_)) => Err(teamcomm_plan::access::anchor_invalid(
            "Give before or after, not both.",
        )),
        (Some(b), None) => Ok(Anchor::Before(id(b))),
        (None, Some(a)) => Ok(Anchor::After(id(a))),
        (None, None) => Ok(Anchor::Last),
    }
}

#[utoipa::path(
    tag = "plan",
    request_body = ReorderProjectBody,
    responses((status = 200, body = ProjectBody), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/projects/{project}/reorder/")]
pub async fn reorder_project(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<Uuid>,
    body: PlanJson<ReorderProjectBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let id = ProjectId(path.into_inner());
    let anchor = anchor_of(body.body.before, body.body.after, ProjectId)?;
    state.plan.reorder_project(&actor, id, anchor).await?;
    project_answer(&state, &actor, id).await
}

#[utoipa::path(
    tag = "plan",
    responses((status = 200, body = Vec<PlanGrant>), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/projects/{project}/members/")]
pub async fn list_project_members(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let project = Holder::Project(ProjectId(path.into_inner()));
    members::list(&state, caller, project).await
}

#[utoipa::path(
    tag = "plan",
    request_body = AddMemberBody,
    responses((status = 201, body = PlanGrant), (status = 200, description = "Already a member", body = PlanGrant), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/projects/{project}/members/")]
pub async fn add_project_member(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<Uuid>,
    body: PlanJson<AddMemberBody>,
) -> ApiResult<HttpResponse> {
    let project = Holder::Project(ProjectId(path.into_inner()));
    members::add(&state, caller, project, body).await
}

#[utoipa::path(
    tag = "plan",
    request_body = InspectMemberBody,
    responses((status = 200, body = PlanGrant), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[patch("/v1/plan/projects/{project}/members/{member}/")]
pub async fn get_project_member(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(Uuid, Uuid)>,
    body: PlanJson<InspectMemberBody>,
) -> ApiResult<HttpResponse> {
    let (project, member) = path.into_inner();
    let project = Holder::Project(ProjectId(project));
    members::inspect(&state, caller, project, member, body).await
}

#[utoipa::path(
    tag = "plan",
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody))
)]
#[delete("/v1/plan/projects/{project}/members/{member}/")]
pub async fn remove_project_member(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(Uuid, Uuid)>,
) -> ApiResult<HttpResponse> {
    let (project, member) = path.into_inner();
    let project = Holder::Project(ProjectId(project));
    members::remove(&state, caller, project, member).await
}
