//! Plan routes: tasks (`/v1/plan/tasks/…`), search, the caller's tasks (`me/tasks/…`), and a
//! board's task list, snapshot and delta feed (`boards/{b}/tasks|board|delta/`). Rules in
//! `teamcomm_plan::tasks` and `teamcomm_plan::delta`.
//!
//! Every task answer carries `ETag: "<version>"`; every task write takes `If-Match` (`"N"`,
//! `W/"N"` or `N`) or a body `version`.

use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use teamcomm_kernel::{Error, ErrorCode, OrgId, Page, PageRequest};
use teamcomm_plan::delta::{Delta, Snapshot, parse_cursor};
use teamcomm_plan::ports::{CommentFilter, EventFilter, Involvement, TaskEvent};
use teamcomm_plan::tasks::{
    Archived, CopyField, CreateTask, GroupBy, MoveTask, PersonRef, TaskContext, TaskCounts,
    TaskPatch, TaskQuery, expected_version, parse_date,
};
use teamcomm_plan::{BoardRef, StateId, Task, TaskRef};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::PlanCaller;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::nullable;
use crate::extract::query_de::url_pairs;
use crate::paging::{Links, ListEnvelope, PageParams};
use crate::policy::{Policy as P, Routes};
use crate::routes::plan::common::{DryRun, PlanJson};
use crate::routes::plan::social::{CommentAnswer, LabelBrief, ParticipantAnswer, RelationView};
use crate::state::AppState;
use crate::views::iso;

/// This module's part of the route table (fixed segments before `{t}`).
pub fn declare(r: &mut Routes<'_, '_>) {
    r.add(create_task, P::plan_write().idempotent())
        .add(list_tasks, P::plan_read())
        .add(grouped_tasks, P::plan_read())
        .add(search, P::plan_read())
        .add(my_tasks, P::plan_read().person_only())
        .add(my_task_counts, P::plan_read().person_only())
        .add(board_tasks, P::plan_read())
        .add(board_snapshot, P::plan_read())
        .add(
            board_delta,
            P::plan(
                teamcomm_plan::actor::DoorNeed::Read,
                teamcomm_keys::RateScope::PlanDelta,
            ),
        )
        .add(get_task, P::plan_read())
        .add(update_task, P::plan_write().idempotent())
        .add(move_task, P::plan_write().idempotent())
        .add(move_task_to_board, P::plan_write())
        .add(archive_task, P::plan_write().idempotent())
        .add(restore_task, P::plan_write().idempotent())
        .add(duplicate_task, P::plan_write().idempotent())
        .add(task_children, P::plan_read())
        .add(task_events, P::plan_read())
        .add(task_activity, P::plan_read());
}

// ---------------------------------------------------------------------------------------------
// Answers

/// `{uuid, key}` of a board or parent task.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct KeyedRef {
    pub uuid: String,
    pub key: String,
}

/// A task's column.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskStateView {
    pub uuid: String,
    pub name: String,
    /// `backlog`, `todo`, `in_progress`, `done` or `canceled`.
    pub category: String,
}

/// A person on a task.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskPersonView {
    pub uuid: String,
    pub name: String,
    pub is_active: bool,
}

/// An agent named on a change.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentView {
    pub name: String,
}

/// A task (the wire shape every task answer shares). `labels`, `participants` and
/// `subtasks` are present only when asked with `include=`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskView {
    pub uuid: String,
    /// `KEY-n` under the board's current key.
    pub key: String,
    pub title: String,
    pub description: String,
    pub board: KeyedRef,
    pub state: TaskStateView,
    pub owner: Option<TaskPersonView>,
    /// The agent that created it, if one was named.
    pub executor: Option<AgentView>,
    /// 1 (highest) to 5.
    pub priority: Option<i16>,
    pub estimate: Option<i32>,
    /// `YYYY-MM-DD`.
    pub start_date: Option<String>,
    /// `YYYY-MM-DD`.
    pub due_date: Option<String>,
    /// The milestone's uuid.
    pub milestone: Option<String>,
    pub parent: Option<KeyedRef>,
    /// Bumped by every write; send it back as `If-Match` or `version`.
    pub version: i64,
    pub is_archived: bool,
    pub completed_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub labels: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub participants: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(no_recursion)]
    pub subtasks: Option<Vec<TaskView>>,
}

impl TaskView {
    /// The task with the column, owner and parent its context names.
    pub fn of(t: &Task, ctx: &TaskContext) -> TaskView {
        let state = ctx.states.get(&t.state_id);
        TaskView {
            uuid: t.id.to_string(),
            key: t.key(),
            title: t.title.clone(),
            description: t.description.clone(),
            board: KeyedRef {
                uuid: t.board_id.to_string(),
                key: t.board_key.clone(),
            },
            state: TaskStateView {
                uuid: t.state_id.to_string(),
                name: state.map(|s| s.name.clone()).unwrap_or_default(),
                category: state
                    .map(|s| s.category.as_str().to_owned())
                    .unwrap_or_default(),
            },
            owner: t.owner.map(|u| match ctx.people.get(&u) {
                Some(p) => TaskPersonView {
                    uuid: u.0.to_string(),
                    name: p.full_name(),
                    is_active: p.is_active,
                },
                None => TaskPersonView {
                    uuid: u.0.to_string(),
                    name: String::new(),
                    is_active: false,
                },
            }),
            executor: t.created_by_agent.clone().map(|name| AgentView { name }),
            priority: t.priority,
            estimate: t.estimate,
            start_date: t.start_date.map(|d| d.to_string()),
            due_date: t.due_date.map(|d| d.to_string()),
            milestone: t.milestone_id.map(|m| m.to_string()),
            parent: t.parent_id.map(|p| KeyedRef {
                uuid: p.to_string(),
                key: ctx.parents.get(&p).map(Task::key).unwrap_or_default(),
            }),
            version: t.version,
            is_archived: t.is_archived,
            completed_at: t.completed_at.map(iso),
            created_at: iso(t.created_at),
            updated_at: iso(t.updated_at),
            labels: None,
            participants: None,
            subtasks: None,
        }
    }
}

/// The views of these tasks (their columns, owners and parents read once).
pub async fn task_views(state: &AppState, org: OrgId, tasks: &[Task]) -> ApiResult<Vec<TaskView>> {
    let ctx = state.plan.task_context(org, tasks).await?;
    Ok(tasks.iter().map(|t| TaskView::of(t, &ctx)).collect())
}

/// The view of one task.
pub async fn task_view(state: &AppState, task: &Task) -> ApiResult<TaskView> {
    let mut views = task_views(state, task.org_id, std::slice::from_ref(task)).await?;
    Ok(views.remove(0))
}

/// A task answer with its `ETag`.
fn task_response(status: actix_web::http::StatusCode, view: &TaskView) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header(("ETag", format!("\"{}\"", view.version)))
        .json(view)
}

/// A task detail with the embeds asked with `include=` (each absent unless asked).
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskDetailView {
    #[serde(flatten)]
    pub task: TaskView,
    /// `relations`, `participants`, `attachments`, `comments`, `activity`, `children`,
    /// `comment_count`: only those asked.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub embeds: Map<String, Value>,
}

/// A row of a task's event log.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskEventView {
    pub uuid: String,
    pub created_at: String,
    /// `created`, `updated`, `moved`, `moved_board`, `archived`, `restored`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The person who did it; null for keys acting for no person.
    pub actor: Option<AgentView>,
    pub executed_by_agent: Option<AgentView>,
    #[schema(value_type = Object)]
    pub data: Value,
}

async fn event_views(
    state: &AppState,
    org: OrgId,
    events: &[TaskEvent],
) -> ApiResult<Vec<TaskEventView>> {
    let people = state
        .plan
        .people(org, events.iter().filter_map(|e| e.actor))
        .await?;
    Ok(events
        .iter()
        .map(|e| TaskEventView {
            uuid: e.id.to_string(),
            created_at: iso(e.created_at),
            kind: e.kind.clone(),
            actor: e.actor.map(|u| AgentView {
                name: people.get(&u).map(|p| p.full_name()).unwrap_or_default(),
            }),
            executed_by_agent: e.agent_name.clone().map(|name| AgentView { name }),
            data: e.data.clone(),
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Query strings

/// A query string's pairs, each name allowed once unless repeatable; unknown names refused when
/// `strict` (`invalid_filter_value` naming it).
struct QueryPairs {
    pairs: Vec<(String, String)>,
}

const PAGING: [&str; 4] = ["page", "page_size", "limit", "offset"];

fn invalid(parameter: &str, detail: &str) -> Error {
    Error::new(ErrorCode::InvalidFilterValue, detail.to_owned()).with_extra("parameter", parameter)
}

impl QueryPairs {
    fn of(req: &HttpRequest, allowed: &[&str], strict: bool) -> Result<QueryPairs, Error> {
        let pairs = url_pairs(req.query_string());
        if strict
            && let Some((name, _)) = pairs
                .iter()
                .find(|(k, _)| !allowed.contains(&k.as_str()) && !PAGING.contains(&k.as_str()))
        {
            return Err(invalid(name, &format!("Unknown query parameter {name}.")));
        }
        Ok(QueryPairs { pairs })
    }

    fn all(&self, name: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .flat_map(|(_, v)| v.split(',').map(str::trim).map(str::to_owned))
            .filter(|v| !v.is_empty())
            .collect()
    }

    fn one(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn bool(&self, name: &str) -> Result<Option<bool>, Error> {
        match self.one(name) {
            None => Ok(None),
            Some("true" | "1" | "True") => Ok(Some(true)),
            Some("false" | "0" | "False") => Ok(Some(false)),
            Some(_) => Err(invalid(name, &format!("{name} is true or false."))),
        }
    }

    fn state(&self) -> Result<Option<StateId>, Error> {
        self.one("state")
            .map(|s| {
                Uuid::parse_str(s)
                    .map(StateId)
                    .map_err(|_| invalid("state", "state is a column's uuid."))
            })
            .transpose()
    }

    fn boards(&self) -> Result<Vec<BoardRef>, Error> {
        self.all("board")
            .iter()
            .map(|b| BoardRef::parse(b).map_err(|_| invalid("board", "board is a uuid or key.")))
            .collect()
    }

    /// `include=` tokens, each one of `known`.
    fn include(&self, known: &[&str]) -> Result<Vec<String>, Error> {
        let tokens = self.all("include");
        if let Some(bad) = tokens.iter().find(|t| !known.contains(&t.as_str())) {
            return Err(invalid(
                "include",
                &format!("Unknown include {bad}; one of {}.", known.join(", ")),
            ));
        }
        Ok(tokens)
    }

    fn paging(&self, req: &HttpRequest) -> Result<PageParams, Error> {
        crate::extract::query_de::from_query_string(req.query_string())
    }
}

fn links(state: &AppState, req: &HttpRequest) -> Links {
    Links::new(
        state.settings.base_url.clone(),
        req.path(),
        req.query_string(),
    )
}

async fn envelope_of(
    state: &AppState,
    req: &HttpRequest,
    paging: &PageParams,
    org: OrgId,
    page: Page<Task>,
    include: &[String],
) -> ApiResult<ListEnvelope<TaskView>> {
    let mut views = task_views(state, org, &page.results).await?;
    if include.iter().any(|i| i == "subtasks") {
        for (view, task) in views.iter_mut().zip(&page.results) {
            let children = state.plan.children_of(task, None).await?;
            view.subtasks = Some(task_views(state, org, &children).await?);
        }
    }
    if include.iter().any(|i| i == "labels") {
        let mut labels = state.plan.labels_of_tasks(&page.results).await?;
        for (view, task) in views.iter_mut().zip(&page.results) {
            let mine = labels.remove(&task.id).unwrap_or_default();
            view.labels = Some(embedded(mine.iter().map(LabelBrief::from))?);
        }
    }
    if include.iter().any(|i| i == "participants") {
        let mut participants = state.plan.participants_of_tasks(&page.results).await?;
        for (view, task) in views.iter_mut().zip(&page.results) {
            let mine = participants.remove(&task.id).unwrap_or_default();
            view.participants = Some(embedded(mine.iter().map(ParticipantAnswer::from))?);
        }
    }
    Ok(links(state, req).envelope(
        paging,
        Page {
            count: page.count,
            results: views,
        },
    ))
}

/// Embedded rows as the JSON a task view carries.
fn embedded<T: Serialize>(rows: impl Iterator<Item = T>) -> Result<Vec<Value>, Error> {
    rows.map(|r| serde_json::to_value(r).map_err(teamcomm_kernel::internal))
        .collect()
}

/// The filters of `GET tasks/` (strict: any other parameter is refused).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query; read by hand (repeatable, strict)
pub struct TaskListParams {
    /// A board's uuid or key.
    board: Option<String>,
    /// A column's uuid.
    state: Option<Uuid>,
    /// Repeatable: a person's uuid, `me` or `unowned` (at most 50).
    owner: Option<Vec<String>>,
    /// Repeatable: a label's uuid (at most 50).
    label: Option<Vec<Uuid>>,
    /// Repeatable: a milestone's uuid (at most 50).
    milestone: Option<Vec<Uuid>>,
    /// `rank`, `priority`, `due_date`, `start_date`, `updated_at`, `created_at`,
    /// `completed_at`, optionally prefixed with `-`.
    sort: Option<String>,
    /// With (`true`) or without (`false`) a start or due date.
    has_dates: Option<bool>,
    /// Comma list of `labels`, `participants`, `subtasks`.
    include: Option<String>,
}

const LIST_PARAMS: [&str; 8] = [
    "board",
    "state",
    "owner",
    "label",
    "milestone",
    "sort",
    "has_dates",
    "include",
];

fn list_query(q: &QueryPairs) -> Result<TaskQuery, Error> {
    Ok(TaskQuery {
        boards: q.boards()?,
        state: q.state()?,
        owners: q.all("owner"),
        labels: q.all("label"),
        milestones: q.all("milestone"),
        has_dates: q.bool("has_dates")?,
        sort: q.one("sort").map(str::to_owned),
        ..TaskQuery::default()
    })
}

// ---------------------------------------------------------------------------------------------
// Bodies

/// `POST tasks/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTaskBody {
    /// 1 to 500 characters.
    #[schema(min_length = 1, max_length = 500)]
    pub title: String,
    /// The board's uuid or key; required unless `parent_task` is given.
    pub board: Option<String>,
    /// At most 50,000 characters (`description_too_long`).
    pub description: Option<String>,
    /// A live column of the board (default: its default column).
    pub state: Option<Uuid>,
    /// A person's uuid or `me`.
    pub owner: Option<String>,
    /// `YYYY-MM-DD`.
    pub due_date: Option<String>,
    /// `YYYY-MM-DD`, not after `due_date`.
    pub start_date: Option<String>,
    #[schema(minimum = 0)]
    pub estimate: Option<i32>,
    /// The parent's key or uuid: the sub-task goes on its board.
    pub parent_task: Option<String>,
    #[schema(minimum = 1, maximum = 5)]
    pub priority: Option<i16>,
    /// Not yet: any value answers 501 `not_implemented` (set it with PATCH afterwards).
    #[schema(value_type = Option<String>)]
    pub milestone: Option<Value>,
}

fn date_of(field: &str, raw: Option<&str>) -> Result<Option<time::Date>, Error> {
    raw.map(|d| parse_date(field, d)).transpose()
}

/// `PATCH tasks/{t}/`: only the fields sent change; `null` clears.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTaskBody {
    #[schema(min_length = 1, max_length = 500)]
    pub title: Option<String>,
    pub description: Option<String>,
    pub state: Option<Uuid>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub due_date: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub start_date: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i32>, minimum = 0)]
    pub estimate: Option<Option<i32>>,
    /// A milestone's uuid, or null to clear.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub milestone: Option<Option<Uuid>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i16>, minimum = 1, maximum = 5)]
    pub priority: Option<Option<i16>>,
    /// A person's uuid or `me`, or null to clear.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub owner: Option<Option<String>>,
    /// The version this change is based on (as `If-Match`).
    pub version: Option<i64>,
}

/// `POST tasks/{t}/move/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveTaskBody {
    /// A live column of the task's board (default: its column).
    pub state: Option<Uuid>,
    /// Put it just before this task (key or uuid) of the column.
    pub before: Option<String>,
    /// Put it just after this task (key or uuid) of the column.
    pub after: Option<String>,
    pub version: Option<i64>,
}

/// `POST tasks/{t}/move-board/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveBoardBody {
    /// The target board's uuid or key.
    pub board: String,
    /// A live column of the target board (default: its default column).
    pub state: Option<Uuid>,
    pub version: Option<i64>,
}

/// `POST tasks/{t}/archive/` and `…/restore/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VersionBody {
    pub version: Option<i64>,
}

/// `POST tasks/{t}/duplicate/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DuplicateBody {
    /// What to copy: `title`, `description`, `labels`, `priority`, `estimate`, `owner`,
    /// `start_date`, `due_date` (default: all).
    pub include: Option<Vec<String>>,
}

fn task_ref(raw: &str) -> Result<TaskRef, Error> {
    TaskRef::parse(raw)
}

fn neighbour(field: &str, raw: Option<String>) -> Result<Option<TaskRef>, Error> {
    raw.map(|r| {
        TaskRef::try_parse(&r).ok_or_else(|| Error::invalid_field(field, "A task's key or uuid."))
    })
    .transpose()
}

fn if_match(req: &HttpRequest) -> Option<String> {
    req.headers()
        .get("If-Match")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn person(field: &str, raw: &str) -> Result<PersonRef, Error> {
    PersonRef::parse(field, raw)
}

// ---------------------------------------------------------------------------------------------
// Handlers

#[utoipa::path(
    tag = "plan",
    request_body = CreateTaskBody,
    responses(
        (status = 201, body = TaskView, headers(("ETag" = String, description = "\"<version>\""))),
        (status = 400, description = "`state_not_on_board`, `actor_required`, `user_inactive`, `participant_cannot_access_board`, `invalid_date_range`, `description_too_long`, `subtask_depth_exceeded`, `subtask_cross_board`", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`identifier_allocation_failed`", body = ErrorBody),
        (status = 422, description = "`column_too_large`", body = ErrorBody),
        (status = 501, description = "`not_implemented` (milestone at creation)", body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/")]
pub async fn create_task(
    state: web::Data<AppState>,
    caller: PlanCaller,
    body: PlanJson<CreateTaskBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let new = CreateTask {
        title: b.title,
        board: b
            .board
            .as_deref()
            .map(|r| BoardRef::parse(r).map_err(|_| Error::not_found()))
            .transpose()?,
        description: b.description,
        state: b.state.map(StateId),
        owner: b.owner.as_deref().map(|o| person("owner", o)).transpose()?,
        due_date: date_of("due_date", b.due_date.as_deref())?,
        start_date: date_of("start_date", b.start_date.as_deref())?,
        estimate: b.estimate,
        parent: b.parent_task.as_deref().map(task_ref).transpose()?,
        priority: b.priority,
        milestone_given: b.milestone.is_some_and(|m| !m.is_null()),
    };
    let task = state.plan.create_task(&actor, new).await?;
    Ok(task_response(
        actix_web::http::StatusCode::CREATED,
        &task_view(&state, &task).await?,
    ))
}

#[utoipa::path(
    tag = "plan",
    params(TaskListParams, PageParams),
    responses(
        (status = 200, body = ListEnvelope<TaskView>),
        (status = 400, description = "`invalid_filter_value` (unknown parameter: `extra.parameter`), `invalid_sort`, `invalid_label_filter`, `too_many_filter_values`, `actor_required`", body = ErrorBody),
    )
)]
#[get("/v1/plan/tasks/")]
pub async fn list_tasks(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &LIST_PARAMS, true)?;
    let include = q.include(&["labels", "participants", "subtasks"])?;
    let paging = q.paging(&req)?;
    let query = list_query(&q)?;
    let page = state
        .plan
        .list_tasks(&caller.0, &query, paging.request())
        .await?;
    let body = envelope_of(&state, &req, &paging, caller.0.org_id(), page, &include).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// A group of `GET tasks/board/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskGroupView {
    /// The category, column uuid, owner uuid, priority or board uuid; null for "none".
    pub key: Option<String>,
    pub name: String,
    pub category: Option<String>,
    pub tasks: Vec<TaskView>,
    pub task_count: u64,
    pub has_more: bool,
    pub next_offset: Option<u64>,
}

/// `GET tasks/board/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct GroupedTasksView {
    pub total: u64,
    pub group_by: String,
    /// Not supported yet: always null.
    pub sub_group_by: Option<String>,
    pub groups: Vec<TaskGroupView>,
    /// The board, when exactly one is asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<KeyedRef>,
}

/// The query of `GET tasks/board/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query; read by hand (repeatable)
pub struct GroupedParams {
    /// Repeatable: a board's uuid or key.
    board: Option<Vec<String>>,
    state: Option<Uuid>,
    /// Repeatable: uuid, `me` or `unowned`.
    owner: Option<Vec<String>>,
    label: Option<Vec<Uuid>>,
    milestone: Option<Vec<Uuid>>,
    sort: Option<String>,
    /// `category` (default), `state`, `owner`, `priority` or `board`.
    group_by: Option<String>,
    /// Cards per group, 1 to 50 (default 50).
    tasks_per_group: Option<u64>,
    /// Cards to skip in each group.
    offset: Option<u64>,
    /// In the title, description or key.
    search: Option<String>,
}

#[utoipa::path(
    tag = "plan",
    params(GroupedParams),
    responses((status = 200, body = GroupedTasksView), (status = 400, body = ErrorBody))
)]
#[get("/v1/plan/tasks/board/")]
pub async fn grouped_tasks(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &[], false)?;
    let mut query = list_query(&q)?;
    query.search = q.one("search").map(str::to_owned).filter(|s| !s.is_empty());
    let group_by = GroupBy::parse(q.one("group_by").unwrap_or("category"))?;
    let number = |name: &str, default: u64| {
        q.one(name)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| invalid(name, &format!("{name} is a number.")))
            })
            .transpose()
            .map(|v| v.unwrap_or(default))
    };
    let per_group = number("tasks_per_group", 50)?;
    let offset = number("offset", 0)?;
    let grouped = state
        .plan
        .grouped_tasks(&caller.0, &query, group_by, per_group, offset)
        .await?;
    let org = caller.0.org_id();
    let board = match query.boards.as_slice() {
        [one] => {
            let b = state.plan.visible_board(&caller.0, one).await?;
            Some(KeyedRef {
                uuid: b.id.to_string(),
                key: b.key,
            })
        }
        _ => None,
    };
    let mut groups = Vec::with_capacity(grouped.groups.len());
    for g in grouped.groups {
        groups.push(TaskGroupView {
            key: (!g.key.is_empty()).then_some(g.key),
            name: g.name,
            category: g.category.map(|c| c.as_str().to_owned()),
            tasks: task_views(&state, org, &g.tasks).await?,
            task_count: g.task_count,
            has_more: g.has_more,
            next_offset: g.next_offset,
        });
    }
    Ok(HttpResponse::Ok().json(GroupedTasksView {
        total: grouped.total,
        group_by: grouped.group_by.as_str().to_owned(),
        sub_group_by: None,
        groups,
        board,
    }))
}

/// The query of `GET search/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query
pub struct SearchParams {
    /// 2 to 256 characters: in the title, description or key.
    q: String,
}

#[utoipa::path(
    tag = "plan",
    params(SearchParams, PageParams),
    responses(
        (status = 200, body = ListEnvelope<TaskView>),
        (status = 400, description = "`search_query_too_short`, `search_query_too_long`", body = ErrorBody),
    )
)]
#[get("/v1/plan/search/")]
pub async fn search(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &[], false)?;
    let paging = q.paging(&req)?;
    let page = state
        .plan
        .search_tasks(&caller.0, q.one("q").unwrap_or(""), paging.request())
        .await?;
    let body = envelope_of(&state, &req, &paging, caller.0.org_id(), page, &[]).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// The query of `GET me/tasks/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query
pub struct MyTasksParams {
    /// `owned` (default), `participating` or `involved`.
    scope: Option<String>,
    sort: Option<String>,
}

#[utoipa::path(
    tag = "plan",
    params(MyTasksParams, PageParams),
    responses((status = 200, body = ListEnvelope<TaskView>), (status = 400, body = ErrorBody))
)]
#[get("/v1/plan/me/tasks/")]
pub async fn my_tasks(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &[], false)?;
    let involving = match q.one("scope").unwrap_or("owned") {
        "owned" => Involvement::Owned,
        "participating" => Involvement::Participating,
        "involved" => Involvement::Involved,
        _ => {
            return Err(ApiError(invalid(
                "scope",
                "scope is owned, participating or involved.",
            )));
        }
    };
    let paging = q.paging(&req)?;
    let query = TaskQuery {
        involving: Some(involving),
        sort: q.one("sort").map(str::to_owned),
        ..TaskQuery::default()
    };
    let page = state
        .plan
        .list_tasks(&caller.0, &query, paging.request())
        .await?;
    let body = envelope_of(&state, &req, &paging, caller.0.org_id(), page, &[]).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// `GET me/tasks/counts/`: the caller's owned live tasks by bucket.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskCountsView {
    /// Not done or canceled.
    pub open: u64,
    /// Open, due before today (UTC).
    pub overdue: u64,
    /// Open, due today (UTC).
    pub due_today: u64,
    /// Open in an `in_progress` column.
    pub in_progress: u64,
    /// Done since Monday (UTC).
    pub done_this_week: u64,
}

impl From<TaskCounts> for TaskCountsView {
    fn from(c: TaskCounts) -> Self {
        TaskCountsView {
            open: c.open,
            overdue: c.overdue,
            due_today: c.due_today,
            in_progress: c.in_progress,
            done_this_week: c.done_this_week,
        }
    }
}

#[utoipa::path(tag = "plan", responses((status = 200, body = TaskCountsView)))]
#[get("/v1/plan/me/tasks/counts/")]
pub async fn my_task_counts(
    state: web::Data<AppState>,
    caller: PlanCaller,
) -> ApiResult<HttpResponse> {
    let counts = state.plan.my_task_counts(&caller.0).await?;
    Ok(HttpResponse::Ok().json(TaskCountsView::from(counts)))
}

/// The query of `GET boards/{b}/tasks/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query
pub struct BoardTasksParams {
    sort: Option<String>,
}

#[utoipa::path(
    tag = "plan",
    params(("b" = String, Path, description = "The board's uuid or key"), BoardTasksParams, PageParams),
    responses((status = 200, body = ListEnvelope<TaskView>), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/boards/{b}/tasks/")]
pub async fn board_tasks(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    board: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &[], false)?;
    let paging = q.paging(&req)?;
    let query = TaskQuery {
        boards: vec![BoardRef::parse(&board)?],
        sort: q.one("sort").map(str::to_owned),
        ..TaskQuery::default()
    };
    let page = state
        .plan
        .list_tasks(&caller.0, &query, paging.request())
        .await?;
    let body = envelope_of(&state, &req, &paging, caller.0.org_id(), page, &[]).await?;
    Ok(HttpResponse::Ok().json(body))
}

/// A column of the snapshot.
#[derive(Debug, Serialize, ToSchema)]
pub struct SnapshotGroupView {
    pub uuid: String,
    pub name: String,
    pub category: String,
    /// The first 50 cards by rank.
    pub tasks: Vec<TaskView>,
    pub task_count: u64,
    pub has_more: bool,
}

/// `GET boards/{b}/board/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SnapshotView {
    pub board: SnapshotBoardView,
    pub groups: Vec<SnapshotGroupView>,
    /// Where `GET boards/{b}/delta/?updated_since=` starts (`YYYY-MM-DDTHH:MM:SSZ`).
    pub delta_cursor: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SnapshotBoardView {
    pub uuid: String,
    pub key: String,
    pub name: String,
}

/// A delta cursor as the wire writes it.
fn cursor(at: time::OffsetDateTime) -> String {
    let f = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    at.to_offset(time::UtcOffset::UTC)
        .format(&f)
        .unwrap_or_default()
}

#[utoipa::path(
    tag = "plan",
    params(("b" = String, Path, description = "The board's uuid or key")),
    responses((status = 200, body = SnapshotView), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/boards/{b}/board/")]
pub async fn board_snapshot(
    state: web::Data<AppState>,
    caller: PlanCaller,
    board: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let Snapshot {
        board,
        groups,
        delta_cursor,
    } = state
        .plan
        .board_snapshot(&caller.0, &BoardRef::parse(&board)?)
        .await?;
    let mut views = Vec::with_capacity(groups.len());
    for g in groups {
        views.push(SnapshotGroupView {
            uuid: g.state.id.to_string(),
            name: g.state.name.clone(),
            category: g.state.category.as_str().to_owned(),
            tasks: task_views(&state, board.org_id, &g.tasks).await?,
            task_count: g.task_count,
            has_more: g.has_more,
        });
    }
    Ok(HttpResponse::Ok().json(SnapshotView {
        board: SnapshotBoardView {
            uuid: board.id.to_string(),
            key: board.key,
            name: board.name,
        },
        groups: views,
        delta_cursor: cursor(delta_cursor),
    }))
}

/// A task gone from the board (archived, or moved to another board).
#[derive(Debug, Serialize, ToSchema)]
pub struct GoneTaskView {
    pub uuid: String,
    pub key: String,
}

/// `GET boards/{b}/delta/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeltaView {
    pub changed: Vec<TaskView>,
    pub created: Vec<TaskView>,
    pub archived: Vec<GoneTaskView>,
    /// The next call's `updated_since`.
    pub delta_cursor: String,
}

/// The query of `GET boards/{b}/delta/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query
pub struct DeltaParams {
    /// A `delta_cursor` (`YYYY-MM-DDTHH:MM:SSZ`), at most 7 days old.
    updated_since: String,
}

#[utoipa::path(
    tag = "plan",
    params(("b" = String, Path, description = "The board's uuid or key"), DeltaParams),
    responses(
        (status = 200, body = DeltaView),
        (status = 400, description = "`invalid_filter_value` (`updated_since` missing or unparseable), `delta_window_expired` (`extra.max_window_days`)", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/v1/plan/boards/{b}/delta/")]
pub async fn board_delta(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    board: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &[], false)?;
    let since = parse_cursor(q.one("updated_since"))?;
    let Delta {
        created,
        changed,
        archived,
        delta_cursor,
    } = state
        .plan
        .board_delta(&caller.0, &BoardRef::parse(&board)?, since)
        .await?;
    let org = caller.0.org_id();
    Ok(HttpResponse::Ok().json(DeltaView {
        changed: task_views(&state, org, &changed).await?,
        created: task_views(&state, org, &created).await?,
        archived: archived
            .iter()
            .map(|t| GoneTaskView {
                uuid: t.id.to_string(),
                key: t.key(),
            })
            .collect(),
        delta_cursor: delta_cursor.map(cursor).unwrap_or_default(),
    }))
}

/// What `GET tasks/{t}/?include=` embeds.
const DETAIL_EMBEDS: [&str; 7] = [
    "relations",
    "participants",
    "attachments",
    "comments",
    "activity",
    "children",
    "comment_count",
];

fn empty_envelope() -> Value {
    json!({"count": 0, "next": null, "previous": null, "results": []})
}

#[utoipa::path(
    tag = "plan",
    params(
        ("t" = String, Path, description = "`KEY-n` (retired keys too) or uuid"),
        ("include" = Option<String>, Query, description = "Comma list of relations, participants, attachments, comments, activity, children, comment_count"),
    ),
    responses(
        (status = 200, body = TaskDetailView, headers(("ETag" = String))),
        (status = 400, description = "`invalid_filter_value`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/v1/plan/tasks/{t}/")]
pub async fn get_task(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    t: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &[], false)?;
    let include = q.include(&DETAIL_EMBEDS)?;
    let task = state.plan.visible_task(&caller.0, &task_ref(&t)?).await?;
    let view = task_view(&state, &task).await?;
    let mut embeds = Map::new();
    for embed in &include {
        let value = match embed.as_str() {
            "children" => {
                let children = state.plan.children_of(&task, None).await?;
                let views = task_views(&state, task.org_id, &children).await?;
                json!({"count": views.len(), "next": null, "previous": null, "results": views})
            }
            "activity" => {
                let page = PageRequest {
                    offset: 0,
                    limit: PageRequest::DEFAULT_SIZE,
                };
                let events = state
                    .plan
                    .events_of(&task, &EventFilter::default(), page)
                    .await?;
                let views = event_views(&state, task.org_id, &events.results).await?;
                let next = (events.count > views.len() as u64).then(|| {
                    format!(
                        "{}/v1/plan/tasks/{}/activity/?page=2",
                        state.settings.base_url,
                        task.key()
                    )
                });
                json!({"count": events.count, "next": next, "previous": null, "results": views})
            }
            "relations" => {
                let links = state
                    .plan
                    .task_relations(&caller.0, &TaskRef::Id(task.id))
                    .await?;
                json!(links.iter().map(RelationView::from).collect::<Vec<_>>())
            }
            "participants" => {
                let rows = state
                    .plan
                    .list_participants(&caller.0, &TaskRef::Id(task.id))
                    .await?;
                json!(rows.iter().map(ParticipantAnswer::from).collect::<Vec<_>>())
            }
            "comments" => {
                // The first page, as `GET tasks/{t}/comments/` answers it.
                let paging = PageParams::default();
                let page = state
                    .plan
                    .list_comments(
                        &caller.0,
                        &TaskRef::Id(task.id),
                        &CommentFilter::default(),
                        paging.request(),
                    )
                    .await?;
                let links = Links::new(
                    state.settings.base_url.clone(),
                    &format!("/v1/plan/tasks/{}/comments/", task.key()),
                    "",
                );
                json!(links.envelope(&paging, page.map_ref(CommentAnswer::from)))
            }
            "comment_count" => json!(state.plan.live_comment_count(&task).await?),
            _ => empty_envelope(),
        };
        embeds.insert(embed.clone(), value);
    }
    let etag = format!("\"{}\"", view.version);
    Ok(HttpResponse::Ok()
        .insert_header(("ETag", etag))
        .json(TaskDetailView { task: view, embeds }))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("If-Match" = Option<String>, Header, description = "\"<version>\"")),
    request_body = UpdateTaskBody,
    responses(
        (status = 200, body = TaskView, headers(("ETag" = String))),
        (status = 400, description = "`version_precondition_ambiguous`, `state_not_on_board`, `milestone_not_on_project`, `invalid_date_range`, `user_inactive`", body = ErrorBody),
        (status = 403, description = "`task_archived`", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`version_conflict` (`extra.current_version`)", body = ErrorBody),
    )
)]
#[patch("/v1/plan/tasks/{t}/")]
pub async fn update_task(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    t: web::Path<String>,
    body: PlanJson<UpdateTaskBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let expected = expected_version(if_match(&req).as_deref(), b.version)?;
    let dates = |field: &str, v: Option<Option<String>>| {
        v.map(|d| date_of(field, d.as_deref())).transpose()
    };
    let patch = TaskPatch {
        title: b.title,
        description: b.description,
        state: b.state.map(StateId),
        due_date: dates("due_date", b.due_date)?,
        start_date: dates("start_date", b.start_date)?,
        estimate: b.estimate,
        milestone: b.milestone,
        priority: b.priority,
        owner: b
            .owner
            .map(|o| o.as_deref().map(|o| person("owner", o)).transpose())
            .transpose()?,
    };
    let task = state
        .plan
        .update_task(&actor, &task_ref(&t)?, patch, expected)
        .await?;
    Ok(task_response(
        actix_web::http::StatusCode::OK,
        &task_view(&state, &task).await?,
    ))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    request_body = MoveTaskBody,
    responses(
        (status = 200, body = TaskView, headers(("ETag" = String))),
        (status = 400, description = "`state_not_on_board`", body = ErrorBody),
        (status = 403, description = "`task_archived`", body = ErrorBody),
        (status = 409, description = "`rank_neighbor_missing` (`extra.head`, `extra.tail`), `version_conflict`", body = ErrorBody),
        (status = 422, description = "`column_too_large`", body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/move/")]
pub async fn move_task(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    t: web::Path<String>,
    body: PlanJson<MoveTaskBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let expected = expected_version(if_match(&req).as_deref(), b.version)?;
    let to = MoveTask {
        state: b.state.map(StateId),
        before: neighbour("before", b.before)?,
        after: neighbour("after", b.after)?,
    };
    let task = state
        .plan
        .move_task(&actor, &task_ref(&t)?, to, expected)
        .await?;
    Ok(task_response(
        actix_web::http::StatusCode::OK,
        &task_view(&state, &task).await?,
    ))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    request_body = MoveBoardBody,
    responses(
        (status = 200, description = "The task under its new key", body = TaskView, headers(("ETag" = String))),
        (status = 400, description = "`move_board_state_invalid`, `subtask_cross_board`", body = ErrorBody),
        (status = 403, description = "`task_archived`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/move-board/")]
pub async fn move_task_to_board(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    t: web::Path<String>,
    body: PlanJson<MoveBoardBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let expected = expected_version(if_match(&req).as_deref(), b.version)?;
    let task = state
        .plan
        .move_task_to_board(
            &actor,
            &task_ref(&t)?,
            &BoardRef::parse(&b.board)?,
            b.state.map(StateId),
            expected,
        )
        .await?;
    Ok(task_response(
        actix_web::http::StatusCode::OK,
        &task_view(&state, &task).await?,
    ))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("dry_run" = Option<bool>, Query)),
    request_body = VersionBody,
    responses(
        (status = 200, description = "The archived task, or with `dry_run=true` a preview (`operation`, `consequence`, `affects`, `reversible`, `restore_path`) that writes nothing", body = TaskView),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`version_conflict`", body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/archive/")]
pub async fn archive_task(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    t: web::Path<String>,
    dry_run: DryRun,
    body: PlanJson<VersionBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let expected = expected_version(if_match(&req).as_deref(), body.body.version)?;
    match state
        .plan
        .archive_task(&actor, &task_ref(&t)?, dry_run.0, expected)
        .await?
    {
        Archived::Preview(p) => Ok(super::common::preview(p)),
        Archived::Done(task) => Ok(task_response(
            actix_web::http::StatusCode::OK,
            &task_view(&state, &task).await?,
        )),
    }
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    request_body = VersionBody,
    responses(
        (status = 200, body = TaskView, headers(("ETag" = String))),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`state_in_use` (its column or board is archived), `version_conflict`", body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/restore/")]
pub async fn restore_task(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    t: web::Path<String>,
    body: PlanJson<VersionBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let expected = expected_version(if_match(&req).as_deref(), body.body.version)?;
    let task = state
        .plan
        .restore_task(&actor, &task_ref(&t)?, expected)
        .await?;
    Ok(task_response(
        actix_web::http::StatusCode::OK,
        &task_view(&state, &task).await?,
    ))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    request_body = DuplicateBody,
    responses(
        (status = 201, description = "The copy", body = TaskView, headers(("ETag" = String))),
        (status = 400, description = "`invalid_filter_value` (an unknown `include` field)", body = ErrorBody),
        (status = 403, description = "`task_archived`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/duplicate/")]
pub async fn duplicate_task(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
    body: PlanJson<DuplicateBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let include = body
        .body
        .include
        .map(|fields| {
            fields
                .iter()
                .map(|f| {
                    CopyField::parse(f)
                        .ok_or_else(|| invalid("include", &format!("Unknown field {f} to copy.")))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let task = state
        .plan
        .duplicate_task(&actor, &task_ref(&t)?, include)
        .await?;
    Ok(task_response(
        actix_web::http::StatusCode::CREATED,
        &task_view(&state, &task).await?,
    ))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("sort" = Option<String>, Query)),
    responses((status = 200, description = "Its live sub-tasks", body = Vec<TaskView>), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/tasks/{t}/children/")]
pub async fn task_children(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    t: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &[], false)?;
    let children = state
        .plan
        .task_children(&caller.0, &task_ref(&t)?, q.one("sort"))
        .await?;
    Ok(HttpResponse::Ok().json(task_views(&state, caller.0.org_id(), &children).await?))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    responses((status = 200, description = "Oldest first", body = Vec<TaskEventView>), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/tasks/{t}/events/")]
pub async fn task_events(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let events = state
        .plan
        .task_events(
            &caller.0,
            &task_ref(&t)?,
            &EventFilter::default(),
            PageRequest::all(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(event_views(&state, caller.0.org_id(), &events.results).await?))
}

/// The query of `GET tasks/{t}/activity/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query
pub struct ActivityParams {
    /// Events at or after this time (`YYYY-MM-DDTHH:MM:SSZ`).
    updated_since: Option<String>,
    /// Only events of this type.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    kind: Option<String>,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ActivityParams, PageParams),
    responses((status = 200, body = ListEnvelope<TaskEventView>), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/tasks/{t}/activity/")]
pub async fn task_activity(
    state: web::Data<AppState>,
    caller: PlanCaller,
    req: HttpRequest,
    t: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let q = QueryPairs::of(&req, &[], false)?;
    let paging = q.paging(&req)?;
    let filter = EventFilter {
        since: q
            .one("updated_since")
            .map(|s| parse_cursor(Some(s)))
            .transpose()?,
        kind: q.one("type").map(str::to_owned),
    };
    let page = state
        .plan
        .task_events(&caller.0, &task_ref(&t)?, &filter, paging.request())
        .await?;
    let views = event_views(&state, caller.0.org_id(), &page.results).await?;
    Ok(HttpResponse::Ok().json(links(&state, &req).envelope(
        &paging,
        Page {
            count: page.count,
            results: views,
        },
    )))
}
