//! Plan routes: entitlements, boards (list, create, detail, update, move preview, archive,
//! restore, reorder, members, visits, mentionables) and their columns. Rules in
//! `teamcomm_plan::{boards, states, access}`.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, Page};
use teamcomm_plan::access::DryRunOr;
use teamcomm_plan::boards::{BoardFilter, BoardPatch, BoardView, NewBoard};
use teamcomm_plan::projects::check_search;
use teamcomm_plan::states::{NewState, StatePatch};
use teamcomm_plan::{BoardId, BoardRef, MAX_BOARD_KEY, PlanActor, ProjectId, State, StateId};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};
use uuid::Uuid;

use crate::auth::PlanCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::text::TRIMMED;
use crate::extract::wire::{CategoryName, EstimateScaleName, VisibilityName};
use crate::extract::{Query, nullable};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::Day;
use crate::policy::{Policy as P, Routes};
use crate::routes::plan::common::{DryRun, ListSearch, OrPreview, PlanJson, preview};
use crate::routes::plan::members::{self, AddMemberBody, Holder, InspectMemberBody, PlanGrant};
use crate::routes::plan::projects::{EmptyBody, PlanRef, anchor_of};
use crate::state::AppState;
use crate::views::iso;

/// This module's part of the route table (fixed segments before `{…}` ones).
pub fn declare(r: &mut Routes<'_, '_>) {
    r.add(entitlements, P::plan_read().ungated())
        .add(recent_boards, P::plan_read().person_only())
        .add(list_boards, P::plan_read())
        .add(create_board, P::plan_admin().idempotent())
        .add(get_board, P::plan_read())
        .add(update_board, P::plan_admin().idempotent())
        .add(move_preview, P::plan_read())
        .add(archive_board, P::plan_admin().idempotent())
        .add(restore_board, P::plan_admin().idempotent())
        .add(reorder_board, P::plan_admin().admin_only())
        .add(visit_board, P::plan_read().person_only())
        .add(mentionables, P::plan_read().person_only())
        .add(list_board_members, P::plan_read())
        .add(add_board_member, P::plan_write().person_only().idempotent())
        .add(get_board_member, P::plan_write().person_only())
        .add(remove_board_member, P::plan_write().person_only())
        .add(list_states, P::plan_read())
        .add(create_state, P::plan_admin().idempotent())
        .add(reorder_states, P::plan_admin())
        .add(update_state, P::plan_admin())
        .add(archive_state, P::plan_admin())
        .add(restore_state, P::plan_admin());
}

fn board_ref(raw: &str) -> Result<BoardRef, Error> {
    BoardRef::parse(raw)
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BoardsEntitlement {
    /// Live boards.
    pub used: u64,
    /// 3 on the free plan; null: no limit.
    pub limit: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LabelsEntitlement {
    pub enabled: bool,
}

/// What the Plan area allows the organization.
#[derive(Debug, Serialize, ToSchema)]
pub struct EntitlementsBody {
    /// The organization has the Plan beta.
    pub enabled: bool,
    pub boards: BoardsEntitlement,
    pub labels: LabelsEntitlement,
    /// Why it is not enabled; null when it is.
    pub reason: Option<String>,
}

#[utoipa::path(
    tag = "plan",
    responses((status = 200, description = "Always 200, beta or not", body = EntitlementsBody))
)]
#[get("/v1/plan/entitlements/")]
pub async fn entitlements(
    state: web::Data<AppState>,
    caller: PlanCaller,
) -> ApiResult<HttpResponse> {
    let e = state.plan.entitlements(&caller.0).await?;
    Ok(HttpResponse::Ok().json(EntitlementsBody {
        enabled: e.enabled,
        boards: BoardsEntitlement {
            used: e.boards_used,
            limit: e.boards_limit,
        },
        labels: LabelsEntitlement {
            enabled: e.labels_enabled,
        },
        reason: e.reason,
    }))
}

/// A board.
#[derive(Debug, Serialize, ToSchema)]
pub struct BoardBody {
    pub uuid: String,
    /// The current key (`ENG`).
    pub key: String,
    pub name: String,
    pub project: PlanRef,
    /// `org` or `members`.
    pub visibility: &'static str,
    /// `none`, `fibonacci` or `linear`.
    pub estimate_scale: &'static str,
    /// Done tasks are archived after this many days; null: never.
    pub archive_after_days: Option<i32>,
    pub is_archived: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl From<BoardView> for BoardBody {
    fn from(v: BoardView) -> Self {
        let b = v.board;
        BoardBody {
            uuid: b.id.to_string(),
            key: b.key,
            name: b.name,
            project: PlanRef {
                uuid: b.project_id.to_string(),
                name: v.project_name,
            },
            visibility: b.visibility.as_str(),
            estimate_scale: b.estimate_scale.as_str(),
            archive_after_days: b.archive_after_days,
            is_archived: b.is_archived,
            created_at: iso(b.created_at),
            updated_at: iso(b.updated_at),
        }
    }
}

async fn board_answer(state: &AppState, actor: &PlanActor, id: BoardId) -> ApiResult<HttpResponse> {
    let view = state.plan.board_detail(actor, &BoardRef::Id(id)).await?;
    Ok(HttpResponse::Ok().json(BoardBody::from(view)))
}

/// Filters of `GET boards/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BoardListQuery {
    /// Part of the name or key: once trimmed, 2 to 256 characters (`search_query_too_short`,
    /// `search_query_too_long`), no NUL (`invalid_filter_value`).
    #[param(inline)]
    search: Option<ListSearch>,
    /// Boards created on this day or later.
    #[param(value_type = Option<String>, format = Date)]
    start_date: Option<Day>,
    /// Boards created on this day or earlier.
    #[param(value_type = Option<String>, format = Date)]
    end_date: Option<Day>,
    /// Boards of this project only.
    project: Option<Uuid>,
    /// Archived boards too.
    include_archived: Option<bool>,
}

#[utoipa::path(
    tag = "plan",
    params(BoardListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<BoardBody>), (status = 400, body = ErrorBody))
)]
#[get("/v1/plan/boards/")]
pub async fn list_boards(
    state: web::Data<AppState>,
    caller: PlanCaller,
    q: ListQuery<BoardListQuery>,
) -> ApiResult<HttpResponse> {
    let f = &q.filters;
    let filter = BoardFilter {
        search: check_search(f.search.as_ref().map(|s| s.0.as_str()))?,
        start_date: f.start_date.map(|d| d.0),
        end_date: f.end_date.map(|d| d.0),
        project: f.project.map(ProjectId),
        include_archived: f.include_archived.unwrap_or(false),
        ..BoardFilter::default()
    };
    let page = state
        .plan
        .list_boards(&caller.0, filter, q.paging.request())
        .await?;
    let page = Page {
        count: page.count,
        results: page.results.into_iter().map(BoardBody::from).collect(),
    };
    Ok(HttpResponse::Ok().json(q.envelope(page)))
}

/// A board key as a body gives it, with the rule of `teamcomm_plan::BoardKey::parse` stated:
/// once trimmed, a letter then 1 to 9 letters or digits, either case (kept upper-case); at most
/// 10 characters as sent. The domain applies the rule; the pattern says the same.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct KeyText(String);

/// The pattern of [`KeyText`].
pub fn board_key_pattern() -> String {
    let more = MAX_BOARD_KEY - 1;
    format!("^[{TRIMMED}]*[A-Za-z][A-Za-z0-9]{{1,{more}}}[{TRIMMED}]*$")
}

impl PartialSchema for KeyText {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(teamcomm_plan::MIN_BOARD_KEY))
                .max_length(Some(MAX_BOARD_KEY))
                .pattern(Some(board_key_pattern()))
                .description(Some(
                    "2 to 10 letters or digits, starting with a letter; upper-cased.",
                ))
                .examples(["ENG"])
                .build(),
        ))
    }
}

impl ToSchema for KeyText {}

/// Body of `POST boards/`: all three required. The key is unique in the organization, retired
/// keys included.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBoardBody {
    #[schema(min_length = 1, max_length = 255)]
    name: String,
    /// The project's uuid.
    project: Uuid,
    #[schema(inline)]
    key: KeyText,
}

#[utoipa::path(
    tag = "plan",
    request_body = CreateBoardBody,
    responses((status = 201, body = BoardBody), (status = 400, body = ErrorBody), (status = 402, body = ErrorBody), (status = 409, body = ErrorBody))
)]
#[post("/v1/plan/boards/")]
pub async fn create_board(
    state: web::Data<AppState>,
    caller: PlanCaller,
    body: PlanJson<CreateBoardBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let board = state
        .plan
        .create_board(
            &actor,
            NewBoard {
                name: b.name,
                project: ProjectId(b.project),
                key: b.key.0,
            },
        )
        .await?;
    let view = state
        .plan
        .board_detail(&actor, &BoardRef::Id(board.id))
        .await?;
    Ok(HttpResponse::Created().json(BoardBody::from(view)))
}

#[utoipa::path(
    tag = "plan",
    params(("board" = String, Path, description = "Board uuid or key (current or retired)")),
    responses((status = 200, body = BoardBody), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/boards/{board}/")]
pub async fn get_board(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let view = state
        .plan
        .board_detail(&caller.0, &board_ref(&path)?)
        .await?;
    Ok(HttpResponse::Ok().json(BoardBody::from(view)))
}

/// Body of `PATCH boards/{b}/`: any subset.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBoardBody {
    #[schema(min_length = 1, max_length = 255)]
    name: Option<String>,
    /// A new key; the old one is retired (it keeps resolving and stays reserved).
    #[schema(inline)]
    key: Option<KeyText>,
    #[schema(inline)]
    visibility: Option<VisibilityName>,
    #[schema(inline)]
    estimate_scale: Option<EstimateScaleName>,
    /// Days after which done tasks are archived; null turns it off.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i32>, minimum = 1, maximum = 3650)]
    archive_after_days: Option<Option<i32>>,
    /// Moves the board to this project.
    project: Option<Uuid>,
}

#[utoipa::path(
    tag = "plan",
    request_body = UpdateBoardBody,
    responses((status = 200, body = BoardBody), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody))
)]
#[patch("/v1/plan/boards/{board}/")]
pub async fn update_board(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    body: PlanJson<UpdateBoardBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let patch = BoardPatch {
        name: b.name,
        key: b.key.map(|k| k.0),
        visibility: b.visibility.map(|v| v.0),
        estimate_scale: b.estimate_scale.map(|v| v.0),
        archive_after_days: b.archive_after_days,
        project: b.project.map(ProjectId),
        ..BoardPatch::default()
    };
    let board = state
        .plan
        .update_board(&actor, &board_ref(&path)?, patch)
        .await?;
    board_answer(&state, &actor, board.id).await
}

/// `?project=`: where the board would go.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MovePreviewQuery {
    project: Uuid,
}

/// What moving a board to another project touches.
#[derive(Debug, Serialize, ToSchema)]
pub struct MovePreviewBody {
    pub from_project_uuid: String,
    pub to_project_uuid: String,
    pub tasks_count: u64,
    pub tasks_with_foreign_milestone: u64,
    pub goals_affected: u64,
}

#[utoipa::path(
    tag = "plan",
    params(MovePreviewQuery),
    responses((status = 200, body = MovePreviewBody), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/boards/{board}/move-preview/")]
pub async fn move_preview(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    q: Query<MovePreviewQuery>,
) -> ApiResult<HttpResponse> {
    let p = state
        .plan
        .board_move_preview(&caller.0, &board_ref(&path)?, ProjectId(q.0.project))
        .await?;
    Ok(HttpResponse::Ok().json(MovePreviewBody {
        from_project_uuid: p.from.to_string(),
        to_project_uuid: p.to.to_string(),
        tasks_count: p.tasks,
        tasks_with_foreign_milestone: p.tasks_with_foreign_milestone,
        goals_affected: p.goals_affected,
    }))
}

#[utoipa::path(
    tag = "plan",
    params(("dry_run" = Option<bool>, Query, description = "Preview: writes nothing")),
    responses((status = 200, description = "The board, or the preview on a dry run", body = OrPreview<BoardBody>), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/boards/{board}/archive/")]
pub async fn archive_board(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    dry_run: DryRun,
    body: PlanJson<EmptyBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    match state
        .plan
        .archive_board(&actor, &board_ref(&path)?, dry_run.0)
        .await?
    {
        DryRunOr::Preview(p) => Ok(preview(p)),
        DryRunOr::Done(b) => board_answer(&state, &actor, b.id).await,
    }
}

#[utoipa::path(
    tag = "plan",
    responses((status = 200, body = BoardBody), (status = 402, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/boards/{board}/restore/")]
pub async fn restore_board(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    body: PlanJson<EmptyBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let board = state.plan.restore_board(&actor, &board_ref(&path)?).await?;
    board_answer(&state, &actor, board.id).await
}

/// Body of a board reorder: at most one anchor (none: last); `project` moves it there.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReorderBoardBody {
    before: Option<Uuid>,
    after: Option<Uuid>,
    project: Option<Uuid>,
}

#[utoipa::path(
    tag = "plan",
    request_body = ReorderBoardBody,
    responses((status = 200, body = BoardBody), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/boards/{board}/reorder/")]
pub async fn reorder_board(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    body: PlanJson<ReorderBoardBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let anchor = anchor_of(b.before, b.after, BoardId)?;
    let board = state
        .plan
        .reorder_board(&actor, &board_ref(&path)?, anchor, b.project.map(ProjectId))
        .await?;
    board_answer(&state, &actor, board.id).await
}

#[utoipa::path(tag = "plan", responses((status = 204), (status = 404, body = ErrorBody)))]
#[post("/v1/plan/boards/{board}/visit/")]
pub async fn visit_board(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state
        .plan
        .visit_board(&caller.0, &board_ref(&path)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A board the person visited.
#[derive(Debug, Serialize, ToSchema)]
pub struct RecentBody {
    /// The board's uuid.
    pub board: String,
    pub name: String,
    pub key: String,
    pub visited_at: String,
}

#[utoipa::path(tag = "plan", responses((status = 200, description = "Latest first", body = Vec<RecentBody>)))]
#[get("/v1/plan/me/recents/")]
pub async fn recent_boards(
    state: web::Data<AppState>,
    caller: PlanCaller,
) -> ApiResult<HttpResponse> {
    let recents = state.plan.recent_boards(&caller.0).await?;
    Ok(HttpResponse::Ok().json(
        recents
            .into_iter()
            .map(|r| RecentBody {
                board: r.board.id.to_string(),
                name: r.board.name,
                key: r.board.key,
                visited_at: iso(r.visited_at),
            })
            .collect::<Vec<_>>(),
    ))
}

/// Someone to mention (`<@DB@{uuid}>`).
#[derive(Debug, Serialize, ToSchema)]
pub struct MentionableBody {
    pub uuid: String,
    pub name: String,
    /// `user`.
    pub kind: &'static str,
}

#[utoipa::path(tag = "plan", responses((status = 200, body = Vec<MentionableBody>), (status = 404, body = ErrorBody)))]
#[get("/v1/plan/boards/{board}/mentionables/")]
pub async fn mentionables(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let people = state
        .plan
        .mentionables(&caller.0, &board_ref(&path)?)
        .await?;
    Ok(HttpResponse::Ok().json(
        people
            .into_iter()
            .map(|m| MentionableBody {
                uuid: m.id.to_string(),
                name: m.name,
                kind: "user",
            })
            .collect::<Vec<_>>(),
    ))
}

#[utoipa::path(tag = "plan", responses((status = 200, body = Vec<PlanGrant>), (status = 404, body = ErrorBody)))]
#[get("/v1/plan/boards/{board}/members/")]
pub async fn list_board_members(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    members::list(&state, caller, Holder::Board(path.into_inner())).await
}

#[utoipa::path(
    tag = "plan",
    request_body = AddMemberBody,
    responses((status = 201, body = PlanGrant), (status = 200, description = "Already a member", body = PlanGrant), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/boards/{board}/members/")]
pub async fn add_board_member(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    body: PlanJson<AddMemberBody>,
) -> ApiResult<HttpResponse> {
    members::add(&state, caller, Holder::Board(path.into_inner()), body).await
}

#[utoipa::path(
    tag = "plan",
    request_body = InspectMemberBody,
    responses((status = 200, body = PlanGrant), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[patch("/v1/plan/boards/{board}/members/{member}/")]
pub async fn get_board_member(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, Uuid)>,
    body: PlanJson<InspectMemberBody>,
) -> ApiResult<HttpResponse> {
    let (board, member) = path.into_inner();
    members::inspect(&state, caller, Holder::Board(board), member, body).await
}

#[utoipa::path(tag = "plan", responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
#[delete("/v1/plan/boards/{board}/members/{member}/")]
pub async fn remove_board_member(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, Uuid)>,
) -> ApiResult<HttpResponse> {
    let (board, member) = path.into_inner();
    members::remove(&state, caller, Holder::Board(board), member).await
}

/// A column.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlanState {
    pub uuid: String,
    pub name: String,
    /// `backlog`, `todo`, `in_progress`, `done` or `canceled`.
    pub category: &'static str,
    /// 1-based among the live columns.
    pub position: i32,
    pub is_archived: bool,
    pub color: Option<String>,
    /// New tasks go here.
    pub is_default: bool,
}

impl From<State> for PlanState {
    fn from(s: State) -> Self {
        PlanState {
            uuid: s.id.to_string(),
            name: s.name,
            category: s.category.as_str(),
            position: s.position,
            is_archived: s.is_archived,
            color: s.color,
            is_default: s.is_default,
        }
    }
}

fn states_answer(states: Vec<State>) -> HttpResponse {
    HttpResponse::Ok().json(states.into_iter().map(PlanState::from).collect::<Vec<_>>())
}

/// `?include_archived=true`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StatesQuery {
    include_archived: Option<bool>,
}

#[utoipa::path(tag = "plan", params(StatesQuery), responses((status = 200, description = "Live columns by position, then archived ones when asked", body = Vec<PlanState>), (status = 404, body = ErrorBody)))]
#[get("/v1/plan/boards/{board}/states/")]
pub async fn list_states(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    q: Query<StatesQuery>,
) -> ApiResult<HttpResponse> {
    let states = state
        .plan
        .list_states(
            &caller.0,
            &board_ref(&path)?,
            q.0.include_archived.unwrap_or(false),
        )
        .await?;
    Ok(states_answer(states))
}

/// Body of `POST boards/{b}/states/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateStateBody {
    #[schema(min_length = 1, max_length = 48)]
    name: String,
    #[schema(inline)]
    category: CategoryName,
    /// 1-based place among the live columns (the others shift); last when absent.
    #[schema(minimum = 1)]
    position: Option<i32>,
    /// `#rgb` or `#rrggbb`.
    color: Option<String>,
    /// Makes it the default column of new tasks.
    is_default: Option<bool>,
}

#[utoipa::path(tag = "plan", request_body = CreateStateBody, responses((status = 201, body = PlanState), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[post("/v1/plan/boards/{board}/states/")]
pub async fn create_state(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    body: PlanJson<CreateStateBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let created = state
        .plan
        .create_state(
            &actor,
            &board_ref(&path)?,
            NewState {
                name: b.name,
                category: b.category.0,
                position: b.position,
                color: b.color,
                is_default: b.is_default.unwrap_or(false),
            },
        )
        .await?;
    Ok(HttpResponse::Created().json(PlanState::from(created)))
}

/// Body of `POST boards/{b}/states/reorder/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReorderStatesBody {
    /// Every live column's uuid exactly once, in the new order.
    order: Vec<Uuid>,
}

#[utoipa::path(tag = "plan", request_body = ReorderStatesBody, responses((status = 200, body = Vec<PlanState>), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[post("/v1/plan/boards/{board}/states/reorder/")]
pub async fn reorder_states(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<String>,
    body: PlanJson<ReorderStatesBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let order: Vec<StateId> = body.body.order.into_iter().map(StateId).collect();
    let states = state
        .plan
        .reorder_states(&actor, &board_ref(&path)?, &order)
        .await?;
    Ok(states_answer(states))
}

/// Body of `PATCH boards/{b}/states/{s}/`: any subset; the category never changes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateStateBody {
    #[schema(min_length = 1, max_length = 48)]
    name: Option<String>,
    /// `#rgb` or `#rrggbb`; null clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    color: Option<Option<String>>,
    /// 1-based place among the live columns.
    #[schema(minimum = 1)]
    position: Option<i32>,
    /// Refused: a column's category is fixed.
    #[schema(value_type = Option<String>)]
    category: Option<serde_json::Value>,
}

#[utoipa::path(tag = "plan", request_body = UpdateStateBody, responses((status = 200, body = PlanState), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
#[patch("/v1/plan/boards/{board}/states/{state}/")]
pub async fn update_state(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, Uuid)>,
    body: PlanJson<UpdateStateBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    if b.category.is_some() {
        return Err(Error::invalid_field(
            "category",
            "A column's category cannot change; add a column instead.",
        )
        .into());
    }
    let (board, id) = path.into_inner();
    let updated = state
        .plan
        .update_state(
            &actor,
            &board_ref(&board)?,
            StateId(id),
            StatePatch {
                name: b.name,
                color: b.color,
                position: b.position,
            },
        )
        .await?;
    Ok(HttpResponse::Ok().json(PlanState::from(updated)))
}

/// Body of a column archive: where its live tasks go.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchiveStateBody {
    /// A live column of the same board.
    migrate_to: Option<Uuid>,
}

#[utoipa::path(
    tag = "plan",
    request_body = ArchiveStateBody,
    params(("dry_run" = Option<bool>, Query, description = "Preview: writes nothing")),
    responses((status = 200, description = "The column, or the preview on a dry run", body = OrPreview<PlanState>), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, description = "`column_too_large`: `migrate_to` would then hold more than 5,000 live tasks", body = ErrorBody))
)]
#[post("/v1/plan/boards/{board}/states/{state}/archive/")]
pub async fn archive_state(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, Uuid)>,
    dry_run: DryRun,
    body: PlanJson<ArchiveStateBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let (board, id) = path.into_inner();
    match state
        .plan
        .archive_state(
            &actor,
            &board_ref(&board)?,
            StateId(id),
            body.body.migrate_to.map(StateId),
            dry_run.0,
        )
        .await?
    {
        DryRunOr::Preview(p) => Ok(preview(p)),
        DryRunOr::Done(s) => Ok(HttpResponse::Ok().json(PlanState::from(s))),
    }
}

#[utoipa::path(tag = "plan", responses((status = 200, body = PlanState), (status = 404, body = ErrorBody)))]
#[post("/v1/plan/boards/{board}/states/{state}/restore/")]
pub async fn restore_state(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, Uuid)>,
    body: PlanJson<EmptyBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let (board, id) = path.into_inner();
    let restored = state
        .plan
        .restore_state(&actor, &board_ref(&board)?, StateId(id))
        .await?;
    Ok(HttpResponse::Ok().json(PlanState::from(restored)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamcomm_plan::BoardKey;

    #[test]
    fn the_key_schema_is_board_key_parse() {
        let json = serde_json::to_value(KeyText::schema()).unwrap();
        let re = regex::Regex::new(json["pattern"].as_str().unwrap()).unwrap();
        let max = json["maxLength"].as_u64().unwrap() as usize;
        let min = json["minLength"].as_u64().unwrap() as usize;
        let fits = |s: &str| {
            let n = s.chars().count();
            (min..=max).contains(&n) && re.is_match(s)
        };
        for s in [
            "ENG",
            "eng",
            "Dsn2",
            " eng ",
            "\teng\n",
            "\u{3000}AB",
            "A1",
            "ABCDEFGHIJ",
            " ABCDEFGH ",
        ] {
            assert!(fits(s), "{s:?}");
            assert!(BoardKey::parse(s).is_ok(), "{s:?}");
        }
        // Refused by both; the last ones are keys the rule takes once trimmed, but longer than
        // ten characters as sent (the schema's `maxLength`, checked before the rule).
        for s in [
            "",
            "A",
            "1AB",
            "AB-C",
            "A B",
            "ÉQUIPE",
            "ABCDEFGHIJK",
            "\u{feff}AB",
            "A\u{0}B",
        ] {
            assert!(!fits(s), "{s:?}");
            assert!(BoardKey::parse(s).is_err(), "{s:?}");
        }
        assert!(!fits(" ABCDEFGHIJ") && BoardKey::parse(" ABCDEFGHIJ").is_ok());
    }
}
