//! Plan routes: tasks (`/v1/plan/tasks/…`), search, the caller's tasks (`me/tasks/…`), and a
//! board's task list, snapshot and delta feed (`boards/{b}/tasks|board|delta/`). Rules in
//! `teamcomm_plan::tasks` and `teamcomm_plan::delta`.
//!
//! Every task answer carries `ETag: "<version>"`; every task write takes `If-Match` (`"N"`,
//! `W/"N"` or `N`) or a body `version`.

use std::borrow::Cow;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use teamcomm_kernel::{Error, ErrorCode, OrgId, Page, PageRequest};
use teamcomm_plan::delta::{Delta, Snapshot, parse_cursor};
use teamcomm_plan::ports::{CommentFilter, EventFilter, Involvement, TaskEvent};
use teamcomm_plan::tasks::{
    Archived, CopyField, CreateTask, GroupBy, GroupedQuery, MoveTask, NONE_KEY, PersonRef,
    TaskContext, TaskCounts, TaskGroup, TaskPatch, TaskQuery, expected_version, parse_date,
    parse_priority_filter, parse_sort,
};
use teamcomm_plan::{BoardRef, ProjectId, StateId, Task, TaskKey, TaskRef};
use time::Date;
use utoipa::openapi::schema::{
    Array, ArrayBuilder, ArrayItems, KnownFormat, Object, ObjectBuilder, OneOfBuilder,
    SchemaFormat, Type,
};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::PlanCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::query_de::{MAX_VALUES, text};
use crate::extract::{Query, nullable};
use crate::json_writer;
use crate::paging::{Links, ListEnvelope, ListQuery, PageParams};
use crate::params::Offset;
use crate::policy::{Policy as P, Routes};
use crate::routes::plan::common::{DryRun, ListSearch, OrPreview, PlanJson};
use crate::routes::plan::social::{CommentAnswer, LabelBrief, ParticipantAnswer, RelationView};
use crate::state::AppState;
use crate::views::{Iso, as_display, as_display_opt, iso};

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
pub struct KeyedRef<'a> {
    #[schema(value_type = String)]
    pub uuid: Uuid,
    #[schema(value_type = String)]
    pub key: Cow<'a, str>,
}

/// A task's column.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskStateView {
    #[schema(value_type = String)]
    pub uuid: Uuid,
    pub name: String,
    /// `backlog`, `todo`, `in_progress`, `done` or `canceled`.
    pub category: &'static str,
}

/// A person on a task.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskPersonView {
    #[schema(value_type = String)]
    pub uuid: Uuid,
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
// It borrows from the task it shows: a page of tasks serialises without copying their texts.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskView<'a> {
    #[schema(value_type = String)]
    pub uuid: Uuid,
    /// `KEY-n` under the board's current key.
    #[schema(value_type = String)]
    #[serde(serialize_with = "as_display")]
    pub key: TaskKey<'a>,
    pub title: &'a str,
    pub description: &'a str,
    pub board: KeyedRef<'a>,
    pub state: TaskStateView,
    pub owner: Option<TaskPersonView>,
    /// The agent that created it, if one was named.
    pub executor: Option<AgentView>,
    /// 1 (highest) to 5.
    pub priority: Option<i16>,
    pub estimate: Option<i32>,
    /// `YYYY-MM-DD`.
    #[schema(value_type = Option<String>)]
    #[serde(serialize_with = "as_display_opt")]
    pub start_date: Option<Date>,
    /// `YYYY-MM-DD`.
    #[schema(value_type = Option<String>)]
    #[serde(serialize_with = "as_display_opt")]
    pub due_date: Option<Date>,
    /// The milestone's uuid.
    #[schema(value_type = Option<String>)]
    pub milestone: Option<Uuid>,
    pub parent: Option<KeyedRef<'a>>,
    /// Bumped by every write; send it back as `If-Match` or `version`.
    pub version: i64,
    pub is_archived: bool,
    #[schema(value_type = Option<String>)]
    pub completed_at: Option<Iso>,
    #[schema(value_type = String)]
    pub created_at: Iso,
    #[schema(value_type = String)]
    pub updated_at: Iso,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<LabelBrief>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participants: Option<Vec<ParticipantAnswer>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(no_recursion)]
    pub subtasks: Option<Vec<TaskView<'a>>>,
}

impl<'a> TaskView<'a> {
    /// The task with the column, owner and parent its context names.
    pub fn of(t: &'a Task, ctx: &TaskContext) -> TaskView<'a> {
        let state = ctx.states.get(&t.state_id);
        TaskView {
            uuid: t.id.0,
            key: t.key_display(),
            title: &t.title,
            description: &t.description,
            board: KeyedRef {
                uuid: t.board_id.0,
                key: Cow::Borrowed(&t.board_key),
            },
            state: TaskStateView {
                uuid: t.state_id.0,
                name: state.map(|s| s.name.clone()).unwrap_or_default(),
                category: state.map(|s| s.category.as_str()).unwrap_or_default(),
            },
            owner: t.owner.map(|u| match ctx.people.get(&u) {
                Some(p) => TaskPersonView {
                    uuid: u.0,
                    name: p.full_name(),
                    is_active: p.is_active,
                },
                None => TaskPersonView {
                    uuid: u.0,
                    name: String::new(),
                    is_active: false,
                },
            }),
            executor: t.created_by_agent.clone().map(|name| AgentView { name }),
            priority: t.priority,
            estimate: t.estimate,
            start_date: t.start_date,
            due_date: t.due_date,
            milestone: t.milestone_id,
            parent: t.parent_id.map(|p| KeyedRef {
                uuid: p.0,
                key: Cow::Owned(ctx.parents.get(&p).map(Task::key).unwrap_or_default()),
            }),
            version: t.version,
            is_archived: t.is_archived,
            completed_at: t.completed_at.map(Iso),
            created_at: Iso(t.created_at),
            updated_at: Iso(t.updated_at),
            labels: None,
            participants: None,
            subtasks: None,
        }
    }
}

/// The views of these tasks (their columns, owners and parents read once).
pub async fn task_views<'a>(
    state: &AppState,
    org: OrgId,
    tasks: &'a [Task],
) -> ApiResult<Vec<TaskView<'a>>> {
    task_views_knowing(state, org, tasks, Vec::new()).await
}

/// [`task_views`] given columns the request already read (their boards' are not read again).
async fn task_views_knowing<'a>(
    state: &AppState,
    org: OrgId,
    tasks: &'a [Task],
    columns: Vec<teamcomm_plan::State>,
) -> ApiResult<Vec<TaskView<'a>>> {
    let ctx = state.plan.task_context_knowing(org, tasks, columns).await?;
    Ok(tasks.iter().map(|t| TaskView::of(t, &ctx)).collect())
}

/// The views of several lists of tasks of one answer (a grouped view's cells, a delta's
/// parts, a page's sub-tasks), their context read once for all.
async fn task_view_lists<'a>(
    state: &AppState,
    org: OrgId,
    lists: &[&'a [Task]],
) -> ApiResult<Vec<Vec<TaskView<'a>>>> {
    let ctx = state.plan.task_context(org, &lists.concat()).await?;
    Ok(lists
        .iter()
        .map(|l| l.iter().map(|t| TaskView::of(t, &ctx)).collect())
        .collect())
}

/// An answer carrying `ETag: "<version>"`.
fn tagged(status: StatusCode, version: i64, body: &impl Serialize) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header(("ETag", format!("\"{version}\"")))
        .json(body)
}

/// The view of one task.
async fn task_view<'a>(state: &AppState, task: &'a Task) -> ApiResult<TaskView<'a>> {
    task_view_knowing(state, task, Vec::new()).await
}

/// [`task_view`] given columns already read.
async fn task_view_knowing<'a>(
    state: &AppState,
    task: &'a Task,
    columns: Vec<teamcomm_plan::State>,
) -> ApiResult<TaskView<'a>> {
    let mut views =
        task_views_knowing(state, task.org_id, std::slice::from_ref(task), columns).await?;
    Ok(views.remove(0))
}

/// A task answer: its view with its `ETag`.
async fn task_answer(state: &AppState, status: StatusCode, task: &Task) -> ApiResult<HttpResponse> {
    let view = task_view(state, task).await?;
    Ok(tagged(status, view.version, &view))
}

/// A page of tasks in the list envelope, with the embeds asked (`include=`): the answer.
async fn task_page<F>(
    state: &AppState,
    q: &ListQuery<F>,
    org: OrgId,
    page: Page<Task>,
    include: &[ListEmbed],
) -> ApiResult<HttpResponse> {
    let tasks = &page.results;
    // Read before the views, which borrow them.
    let children: Option<Vec<Vec<Task>>> = if include.contains(&ListEmbed::Subtasks) {
        let mut of = state.plan.subtasks_of_tasks(tasks).await?;
        Some(
            tasks
                .iter()
                .map(|t| of.remove(&t.id).unwrap_or_default())
                .collect(),
        )
    } else {
        None
    };
    let mut views = task_views(state, org, tasks).await?;
    if let Some(children) = &children {
        let lists: Vec<&[Task]> = children.iter().map(Vec::as_slice).collect();
        let subtasks = task_view_lists(state, org, &lists).await?;
        for (view, subtasks) in views.iter_mut().zip(subtasks) {
            view.subtasks = Some(subtasks);
        }
    }
    if include.contains(&ListEmbed::Labels) {
        let mut labels = state.plan.labels_of_tasks(tasks).await?;
        for (view, task) in views.iter_mut().zip(tasks) {
            let mine = labels.remove(&task.id).unwrap_or_default();
            view.labels = Some(mine.iter().map(LabelBrief::from).collect());
        }
    }
    if include.contains(&ListEmbed::Participants) {
        let mut participants = state.plan.participants_of_tasks(tasks).await?;
        for (view, task) in views.iter_mut().zip(tasks) {
            let mine = participants.remove(&task.id).unwrap_or_default();
            view.participants = Some(mine.iter().map(ParticipantAnswer::from).collect());
        }
    }
    let tasks = views.len();
    let envelope = q.envelope(Page {
        count: page.count,
        results: views,
    });
    json_ok(&envelope, tasks)
}

/// A 200 answer holding about `tasks` task views, written by [`json_writer`]: the answers
/// clients read and poll most (pages, the snapshot, the delta feed). A task runs to about
/// 550 bytes; written into a buffer of that size, the answer is not grown and copied.
fn json_ok(body: &impl Serialize, tasks: usize) -> ApiResult<HttpResponse> {
    let body = json_writer::to_vec(body, 512 + 640 * tasks).map_err(teamcomm_kernel::internal)?;
    Ok(HttpResponse::Ok()
        .content_type(actix_web::http::header::ContentType::json())
        .body(body))
}

/// A first page embedded in an answer, with the link to the next one.
fn first_page<T>(count: u64, next: Option<String>, results: Vec<T>) -> ListEnvelope<T> {
    ListEnvelope {
        count,
        next,
        previous: None,
        results,
    }
}

/// A task detail with the embeds asked with `include=`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskDetailView<'a> {
    #[serde(flatten)]
    pub task: TaskView<'a>,
    #[serde(flatten)]
    pub embeds: TaskEmbeds<'a>,
}

/// What a task detail embeds: each absent unless asked (`include=`); an envelope holds the
/// first page of the door it names.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct TaskEmbeds<'a> {
    /// As `GET tasks/{t}/relations/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relations: Option<Vec<RelationView>>,
    /// As `GET tasks/{t}/participants/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participants: Option<Vec<ParticipantAnswer>>,
    /// None yet: an empty envelope.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub attachments: Option<ListEnvelope<Value>>,
    /// As `GET tasks/{t}/comments/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comments: Option<ListEnvelope<CommentAnswer>>,
    /// As `GET tasks/{t}/activity/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activity: Option<ListEnvelope<TaskEventView>>,
    /// Its live sub-tasks, all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<ListEnvelope<TaskView<'a>>>,
    /// Its comments not deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment_count: Option<u64>,
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
// Query parameters: each type parses with the Plan area's rule and code (`query_de::text`);
// the extractor names the parameter.

/// A board's uuid or key.
#[derive(Debug, Clone)]
pub struct BoardParam(BoardRef);

impl<'de> Deserialize<'de> for BoardParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            BoardRef::parse(s)
                .map(BoardParam)
                .map_err(|_| Error::new(ErrorCode::InvalidFilterValue, "A board's uuid or key."))
        })
    }
}

/// An owner filter: a person's uuid, `me` or `unowned`.
#[derive(Debug, Clone)]
pub struct OwnerParam(String);

impl<'de> Deserialize<'de> for OwnerParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| match s.trim() {
            s @ ("me" | "unowned") => Ok(OwnerParam(s.to_owned())),
            s => Uuid::parse_str(s)
                .map(|u| OwnerParam(u.to_string()))
                .map_err(|_| {
                    Error::new(
                        ErrorCode::InvalidFilterValue,
                        "A person's uuid, me or unowned.",
                    )
                }),
        })
    }
}

/// A repeatable parameter's schema: values of `item`, at most [`MAX_VALUES`].
fn repeated(item: impl Into<ArrayItems>) -> Array {
    ArrayBuilder::new()
        .items(item)
        .max_items(Some(MAX_VALUES))
        .build()
}

fn uuid() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
}

fn uuids_schema() -> Array {
    repeated(uuid())
}

/// Boards by uuid or key.
fn boards_schema() -> Array {
    repeated(crate::routes::plan::common::board_ref_schema())
}

fn owners_schema() -> Array {
    repeated(
        OneOfBuilder::new().item(uuid()).item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["me", "unowned"])),
        ),
    )
}

/// A label filter: a label's uuid (`invalid_label_filter`).
#[derive(Debug, Clone, Copy)]
pub struct LabelParam(Uuid);

impl<'de> Deserialize<'de> for LabelParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            Uuid::parse_str(s.trim()).map(LabelParam).map_err(|_| {
                Error::new(
                    ErrorCode::InvalidLabelFilter,
                    "A label filter is a label uuid.",
                )
            })
        })
    }
}

/// A priority filter: 1 to 5, or `none`.
#[derive(Debug, Clone, Copy)]
pub struct PriorityParam(Option<i16>);

impl<'de> Deserialize<'de> for PriorityParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| parse_priority_filter(s).map(PriorityParam))
    }
}

fn priorities_schema() -> Array {
    repeated(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["1", "2", "3", "4", "5", NONE_KEY])),
    )
}

/// A task list's sort (`invalid_sort` with `extra.allowed`), kept as written for the rules.
#[derive(Debug, Clone)]
pub struct SortParam(String);

impl<'de> Deserialize<'de> for SortParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| parse_sort(s).map(|_| SortParam(s.to_owned())))
    }
}

impl SortParam {
    fn of(sort: &Option<SortParam>) -> Option<String> {
        sort.as_ref().map(|s| s.0.clone())
    }
}

fn boards(params: &[BoardParam]) -> Vec<BoardRef> {
    params.iter().map(|b| b.0.clone()).collect()
}

fn owners(params: &[OwnerParam]) -> Vec<String> {
    params.iter().map(|o| o.0.clone()).collect()
}

fn labels(params: &[LabelParam]) -> Vec<String> {
    params.iter().map(|l| l.0.to_string()).collect()
}

/// The sorts of task lists, for the document.
fn sort_schema() -> Object {
    let names = [
        "rank",
        "priority",
        "due_date",
        "start_date",
        "updated_at",
        "created_at",
        "completed_at",
    ];
    let all = names
        .iter()
        .map(|n| (*n).to_owned())
        .chain(names.iter().map(|n| format!("-{n}")));
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(all))
        .build()
}

/// `group_by`.
#[derive(Debug, Clone, Copy)]
pub struct GroupByParam(GroupBy);

impl<'de> Deserialize<'de> for GroupByParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| GroupBy::parse(s).map(GroupByParam))
    }
}

/// `sub_group_by`: a dimension or `none`.
#[derive(Debug, Clone, Copy)]
pub struct LanesParam(Option<GroupBy>);

impl<'de> Deserialize<'de> for LanesParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| GroupBy::parse_lanes(s).map(LanesParam))
    }
}

fn dimensions(none: bool) -> Object {
    let names = GroupBy::ALL.iter().map(|g| g.as_str());
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names.chain(none.then_some(NONE_KEY))))
        .build()
}

fn group_by_schema() -> Object {
    dimensions(false)
}

fn lanes_schema() -> Object {
    dimensions(true)
}

/// `scope` of `GET me/tasks/`.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MyTasksScope {
    /// Tasks they own.
    Owned,
    /// Tasks they take part in or watch.
    Participating,
    /// Either.
    Involved,
}

impl From<MyTasksScope> for Involvement {
    fn from(s: MyTasksScope) -> Self {
        match s {
            MyTasksScope::Owned => Involvement::Owned,
            MyTasksScope::Participating => Involvement::Participating,
            MyTasksScope::Involved => Involvement::Involved,
        }
    }
}

/// A delta cursor, `YYYY-MM-DDTHH:MM:SSZ`.
#[derive(Debug, Clone, Copy)]
pub struct CursorParam(time::OffsetDateTime);

impl<'de> Deserialize<'de> for CursorParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| parse_cursor(Some(s)).map(CursorParam))
    }
}

/// What `GET tasks/?include=` embeds in each task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ListEmbed {
    Labels,
    Participants,
    Subtasks,
}

/// What `GET tasks/{t}/?include=` embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DetailEmbed {
    Relations,
    Participants,
    Attachments,
    Comments,
    Activity,
    Children,
    CommentCount,
}

/// The filters of `GET tasks/`. Strict: any other parameter than these and paging is refused.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TaskListParams {
    /// Repeatable: a board's uuid or key.
    #[serde(default)]
    #[param(schema_with = boards_schema)]
    board: Vec<BoardParam>,
    /// A column's uuid.
    state: Option<Uuid>,
    /// Repeatable: a person's uuid, `me` or `unowned`.
    #[serde(default)]
    #[param(schema_with = owners_schema)]
    owner: Vec<OwnerParam>,
    /// Repeatable: a label's uuid (`invalid_label_filter`).
    #[serde(default)]
    #[param(schema_with = uuids_schema)]
    label: Vec<LabelParam>,
    /// Repeatable: a milestone's uuid.
    #[serde(default)]
    #[param(schema_with = uuids_schema)]
    milestone: Vec<Uuid>,
    /// Optionally prefixed with `-` (descending).
    #[param(schema_with = sort_schema)]
    sort: Option<SortParam>,
    /// With (`true`) or without (`false`) a start or due date.
    has_dates: Option<bool>,
    /// What to embed in each task (comma-separated or repeated).
    #[serde(default)]
    #[param(inline)]
    include: Vec<ListEmbed>,
}

impl TaskListParams {
    fn query(&self) -> TaskQuery {
        TaskQuery {
            boards: boards(&self.board),
            state: self.state.map(StateId),
            owners: owners(&self.owner),
            labels: labels(&self.label),
            milestones: self.milestone.iter().map(Uuid::to_string).collect(),
            has_dates: self.has_dates,
            sort: SortParam::of(&self.sort),
            ..TaskQuery::default()
        }
    }
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
    #[schema(schema_with = crate::routes::plan::common::person_schema)]
    pub owner: Option<String>,
    /// `YYYY-MM-DD`.
    #[schema(format = Date, extensions(("x-error-code" = json!("invalid_date_range"))))]
    pub due_date: Option<String>,
    /// `YYYY-MM-DD`, not after `due_date`.
    #[schema(format = Date, extensions(("x-error-code" = json!("invalid_date_range"))))]
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
    #[schema(value_type = Option<String>, format = Date, extensions(("x-error-code" = json!("invalid_date_range"))))]
    pub due_date: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, format = Date, extensions(("x-error-code" = json!("invalid_date_range"))))]
    pub start_date: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i32>, minimum = 0)]
    pub estimate: Option<Option<i32>>,
    /// A milestone's uuid, or null to clear.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<Uuid>)]
    pub milestone: Option<Option<Uuid>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i16>, minimum = 1, maximum = 5)]
    pub priority: Option<Option<i16>>,
    /// A person's uuid or `me`, or null to clear.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = crate::routes::plan::common::person_schema)]
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
    #[schema(schema_with = crate::routes::plan::common::task_ref_schema)]
    pub before: Option<String>,
    /// Put it just after this task (key or uuid) of the column.
    #[schema(schema_with = crate::routes::plan::common::task_ref_schema)]
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

fn invalid(parameter: &str, detail: &str) -> Error {
    Error::new(ErrorCode::InvalidFilterValue, detail.to_owned()).with_extra("parameter", parameter)
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
    let (task, columns) = state.plan.create_task_with_columns(&actor, new).await?;
    let view = task_view_knowing(&state, &task, columns).await?;
    Ok(tagged(StatusCode::CREATED, view.version, &view))
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
    q: ListQuery<TaskListParams>,
) -> ApiResult<HttpResponse> {
    let page = state
        .plan
        .list_tasks(&caller.0, &q.filters.query(), q.paging.request())
        .await?;
    let org = caller.0.org_id();
    task_page(&state, &q, org, page, &q.filters.include).await
}

/// A group (column) of `GET tasks/board/`, or one of its lanes.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskGroupView<'a> {
    /// The category, column uuid, owner uuid, priority, board, project, milestone or label
    /// uuid; `none` for the tasks without one. Send it back as `group` (or `lane`).
    pub key: String,
    pub name: String,
    /// Grouping by category or column.
    pub category: Option<String>,
    /// A window of its cards; empty in a laned group (its cards are in its lanes).
    pub tasks: Vec<TaskView<'a>>,
    /// Its cards, all lanes together.
    pub task_count: u64,
    pub has_more: bool,
    /// The `offset` of the next window (with `group` and `lane`).
    pub next_offset: Option<u64>,
    /// Its lanes, with `sub_group_by`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(no_recursion)]
    pub lanes: Option<Vec<TaskGroupView<'a>>>,
}

/// `GET tasks/board/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct GroupedTasksView<'a> {
    /// Tasks of the slice, each counted once (before `group` and `lane`).
    pub total: u64,
    pub group_by: String,
    /// The lanes' dimension; null without lanes.
    pub sub_group_by: Option<String>,
    pub groups: Vec<TaskGroupView<'a>>,
    /// The board, when exactly one is asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<KeyedRef<'a>>,
}

/// The query of `GET tasks/board/`: the slice (the task list's filters and the view's own),
/// and the grid.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GroupedParams {
    /// Repeatable: a board's uuid or key.
    #[serde(default)]
    #[param(schema_with = boards_schema)]
    board: Vec<BoardParam>,
    /// Repeatable: a project's uuid.
    #[serde(default)]
    #[param(schema_with = uuids_schema)]
    project: Vec<Uuid>,
    /// Repeatable: a milestone's uuid.
    #[serde(default)]
    #[param(schema_with = uuids_schema)]
    milestone: Vec<Uuid>,
    /// Repeatable: a column's uuid.
    #[serde(default)]
    #[param(schema_with = uuids_schema)]
    state: Vec<Uuid>,
    /// Repeatable: a person's uuid, `me` or `unowned`.
    #[serde(default)]
    #[param(schema_with = owners_schema)]
    owner: Vec<OwnerParam>,
    /// Repeatable: a label's uuid (`invalid_label_filter`).
    #[serde(default)]
    #[param(schema_with = uuids_schema)]
    label: Vec<LabelParam>,
    /// Repeatable: 1 to 5, or `none` (without a priority).
    #[serde(default)]
    #[param(schema_with = priorities_schema)]
    priority: Vec<PriorityParam>,
    /// The cards' order in each cell; optionally prefixed with `-`.
    #[param(schema_with = sort_schema)]
    sort: Option<SortParam>,
    /// The groups' dimension (default `category`).
    #[param(schema_with = group_by_schema)]
    group_by: Option<GroupByParam>,
    /// The lanes' dimension (default `none`): another one than `group_by`.
    #[param(schema_with = lanes_schema)]
    sub_group_by: Option<LanesParam>,
    /// Cards per cell, 1 to 50 (default 50).
    #[param(minimum = 1, maximum = 50)]
    tasks_per_group: Option<u64>,
    /// Cards to skip in each cell.
    #[param(inline)]
    offset: Option<Offset>,
    /// Only the group with this key.
    group: Option<String>,
    /// Only the lanes with this key (with `sub_group_by`).
    lane: Option<String>,
    /// In the title, description or key: once trimmed, 2 to 256 characters
    /// (`search_query_too_short`, `search_query_too_long`), no NUL (`invalid_filter_value`).
    #[param(inline)]
    search: Option<ListSearch>,
}

impl GroupedParams {
    fn query(self) -> GroupedQuery {
        let defaults = GroupedQuery::default();
        GroupedQuery {
            tasks: TaskQuery {
                boards: boards(&self.board),
                owners: owners(&self.owner),
                labels: labels(&self.label),
                milestones: self.milestone.iter().map(Uuid::to_string).collect(),
                search: self.search.map(|s| s.0),
                sort: SortParam::of(&self.sort),
                ..TaskQuery::default()
            },
            states: self.state.into_iter().map(StateId).collect(),
            projects: self.project.into_iter().map(ProjectId).collect(),
            priorities: self.priority.iter().map(|p| p.0).collect(),
            group_by: self.group_by.map_or(defaults.group_by, |g| g.0),
            sub_group_by: self.sub_group_by.and_then(|l| l.0),
            per_group: self.tasks_per_group.unwrap_or(defaults.per_group),
            offset: self.offset.map_or(defaults.offset, |o| o.0),
            group: self.group,
            lane: self.lane,
        }
    }
}

#[utoipa::path(
    tag = "plan",
    params(GroupedParams),
    responses(
        (status = 200, body = GroupedTasksView),
        (status = 400, description = "`invalid_filter_value`, `invalid_label_filter`, `invalid_sort`, `too_many_filter_values`, `search_query_too_short`, `search_query_too_long`, `actor_required`", body = ErrorBody),
        (status = 404, description = "A board or project not seen", body = ErrorBody),
    )
)]
#[get("/v1/plan/tasks/board/")]
pub async fn grouped_tasks(
    state: web::Data<AppState>,
    caller: PlanCaller,
    q: Query<GroupedParams>,
) -> ApiResult<HttpResponse> {
    let grouped = state.plan.grouped_tasks(&caller.0, &q.0.query()).await?;
    // Every cell's cards viewed at once, in the order they are taken back below: each group,
    // then its lanes.
    let mut cells: Vec<&[Task]> = Vec::new();
    for g in &grouped.groups {
        cells.push(&g.tasks);
        cells.extend(g.lanes.iter().map(|l| l.tasks.as_slice()));
    }
    let mut views = task_view_lists(&state, caller.0.org_id(), &cells)
        .await?
        .into_iter();
    let mut view = |g: &TaskGroup| TaskGroupView {
        key: g.key.clone(),
        name: g.name.clone(),
        category: g.category.map(|c| c.as_str().to_owned()),
        tasks: views.next().unwrap_or_default(),
        task_count: g.task_count,
        has_more: g.has_more,
        next_offset: g.next_offset,
        lanes: None,
    };
    let mut groups = Vec::with_capacity(grouped.groups.len());
    for g in &grouped.groups {
        let mut group = view(g);
        if grouped.sub_group_by.is_some() {
            group.lanes = Some(g.lanes.iter().map(&mut view).collect());
        }
        groups.push(group);
    }
    Ok(HttpResponse::Ok().json(GroupedTasksView {
        total: grouped.total,
        group_by: grouped.group_by.as_str().to_owned(),
        sub_group_by: grouped.sub_group_by.map(|g| g.as_str().to_owned()),
        groups,
        board: grouped.board.map(|b| KeyedRef {
            uuid: b.id.0,
            key: Cow::Owned(b.key),
        }),
    }))
}

/// The query of `GET search/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchParams {
    /// 2 to 256 characters: in the title, description or key. Missing or blank, it is too
    /// short (`search_query_too_short`), as the spec's Plan search codes say.
    #[param(inline, required = true)]
    q: Option<crate::routes::plan::common::SearchText>,
}

#[utoipa::path(
    tag = "plan",
    params(SearchParams, PageParams),
    responses(
        (status = 200, body = ListEnvelope<TaskView>),
        (status = 400, description = "`search_query_too_short` (also a missing `q`), `search_query_too_long`", body = ErrorBody),
    )
)]
#[get("/v1/plan/search/")]
pub async fn search(
    state: web::Data<AppState>,
    caller: PlanCaller,
    q: ListQuery<SearchParams>,
) -> ApiResult<HttpResponse> {
    let page = state
        .plan
        .search_tasks(
            &caller.0,
            q.filters.q.as_deref().unwrap_or_default(),
            q.paging.request(),
        )
        .await?;
    task_page(&state, &q, caller.0.org_id(), page, &[]).await
}

/// The query of `GET me/tasks/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MyTasksParams {
    /// Default `owned`.
    #[param(inline)]
    scope: Option<MyTasksScope>,
    /// Optionally prefixed with `-`.
    #[param(schema_with = sort_schema)]
    sort: Option<SortParam>,
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
    q: ListQuery<MyTasksParams>,
) -> ApiResult<HttpResponse> {
    let query = TaskQuery {
        involving: Some(q.filters.scope.unwrap_or(MyTasksScope::Owned).into()),
        sort: SortParam::of(&q.filters.sort),
        ..TaskQuery::default()
    };
    let page = state
        .plan
        .list_tasks(&caller.0, &query, q.paging.request())
        .await?;
    task_page(&state, &q, caller.0.org_id(), page, &[]).await
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
pub struct BoardTasksParams {
    /// Optionally prefixed with `-`.
    #[param(schema_with = sort_schema)]
    sort: Option<SortParam>,
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
    board: web::Path<String>,
    q: ListQuery<BoardTasksParams>,
) -> ApiResult<HttpResponse> {
    let query = TaskQuery {
        boards: vec![BoardRef::parse(&board)?],
        sort: SortParam::of(&q.filters.sort),
        ..TaskQuery::default()
    };
    let page = state
        .plan
        .list_tasks(&caller.0, &query, q.paging.request())
        .await?;
    task_page(&state, &q, caller.0.org_id(), page, &[]).await
}

/// A column of the snapshot.
#[derive(Debug, Serialize, ToSchema)]
pub struct SnapshotGroupView<'a> {
    pub uuid: String,
    pub name: String,
    pub category: String,
    /// The first 50 cards by rank.
    pub tasks: Vec<TaskView<'a>>,
    pub task_count: u64,
    pub has_more: bool,
}

/// `GET boards/{b}/board/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SnapshotView<'a> {
    pub board: SnapshotBoardView,
    pub groups: Vec<SnapshotGroupView<'a>>,
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
    let cells: Vec<&[Task]> = groups.iter().map(|g| g.tasks.as_slice()).collect();
    let cards = task_view_lists(&state, board.org_id, &cells).await?;
    let tasks = cells.iter().map(|c| c.len()).sum();
    let views = groups
        .iter()
        .zip(cards)
        .map(|(g, tasks)| SnapshotGroupView {
            uuid: g.state.id.to_string(),
            name: g.state.name.clone(),
            category: g.state.category.as_str().to_owned(),
            tasks,
            task_count: g.task_count,
            has_more: g.has_more,
        })
        .collect();
    json_ok(
        &SnapshotView {
            board: SnapshotBoardView {
                uuid: board.id.to_string(),
                key: board.key,
                name: board.name,
            },
            groups: views,
            delta_cursor: cursor(delta_cursor),
        },
        tasks,
    )
}

/// A task gone from the board (archived, or moved to another board).
#[derive(Debug, Serialize, ToSchema)]
pub struct GoneTaskView {
    pub uuid: String,
    pub key: String,
}

/// `GET boards/{b}/delta/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeltaView<'a> {
    pub changed: Vec<TaskView<'a>>,
    pub created: Vec<TaskView<'a>>,
    pub archived: Vec<GoneTaskView>,
    /// The next call's `updated_since`.
    pub delta_cursor: String,
}

/// The query of `GET boards/{b}/delta/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeltaParams {
    /// A `delta_cursor` (`YYYY-MM-DDTHH:MM:SSZ`), at most 7 days old.
    #[param(value_type = String, format = DateTime)]
    updated_since: CursorParam,
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
    board: web::Path<String>,
    q: Query<DeltaParams>,
) -> ApiResult<HttpResponse> {
    let since = q.0.updated_since.0;
    let Delta {
        created,
        changed,
        archived,
        delta_cursor,
    } = state
        .plan
        .board_delta(&caller.0, &BoardRef::parse(&board)?, since)
        .await?;
    let mut parts = task_view_lists(&state, caller.0.org_id(), &[&changed, &created])
        .await?
        .into_iter();
    json_ok(
        &DeltaView {
            changed: parts.next().unwrap_or_default(),
            created: parts.next().unwrap_or_default(),
            archived: archived
                .iter()
                .map(|t| GoneTaskView {
                    uuid: t.id.to_string(),
                    key: t.key(),
                })
                .collect(),
            delta_cursor: delta_cursor.map(cursor).unwrap_or_default(),
        },
        changed.len() + created.len(),
    )
}

/// The query of `GET tasks/{t}/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskDetailParams {
    /// What to embed (comma-separated or repeated).
    #[serde(default)]
    #[param(inline)]
    include: Vec<DetailEmbed>,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` (retired keys too) or uuid"), TaskDetailParams),
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
    t: web::Path<String>,
    q: Query<TaskDetailParams>,
) -> ApiResult<HttpResponse> {
    let task = state.plan.visible_task(&caller.0, &task_ref(&t)?).await?;
    let view = task_view(&state, &task).await?;
    // Read before the embeds, which borrow them.
    let children = if q.0.include.contains(&DetailEmbed::Children) {
        state.plan.children_of(&task, None).await?
    } else {
        Vec::new()
    };
    let mut embeds = TaskEmbeds::default();
    let here = TaskRef::Id(task.id);
    for embed in &q.0.include {
        match embed {
            DetailEmbed::Children => {
                let views = task_views(&state, task.org_id, &children).await?;
                embeds.children = Some(first_page(views.len() as u64, None, views));
            }
            DetailEmbed::Activity => {
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
                embeds.activity = Some(first_page(events.count, next, views));
            }
            DetailEmbed::Relations => {
                let links = state.plan.task_relations(&caller.0, &here).await?;
                embeds.relations = Some(links.iter().map(RelationView::from).collect());
            }
            DetailEmbed::Participants => {
                let rows = state.plan.list_participants(&caller.0, &here).await?;
                embeds.participants = Some(rows.iter().map(ParticipantAnswer::from).collect());
            }
            DetailEmbed::Comments => {
                // The first page, as `GET tasks/{t}/comments/` answers it.
                let paging = PageParams::default();
                let page = state
                    .plan
                    .list_comments(
                        &caller.0,
                        &here,
                        &CommentFilter::default(),
                        paging.request(),
                    )
                    .await?;
                let links = Links::new(
                    state.settings.base_url.clone(),
                    &format!("/v1/plan/tasks/{}/comments/", task.key()),
                    "",
                );
                embeds.comments = Some(links.envelope(&paging, page.map_ref(CommentAnswer::from)));
            }
            DetailEmbed::CommentCount => {
                embeds.comment_count = Some(state.plan.live_comment_count(&task).await?);
            }
            DetailEmbed::Attachments => embeds.attachments = Some(first_page(0, None, Vec::new())),
        }
    }
    let version = view.version;
    Ok(tagged(
        StatusCode::OK,
        version,
        &TaskDetailView { task: view, embeds },
    ))
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
    task_answer(&state, StatusCode::OK, &task).await
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
    task_answer(&state, StatusCode::OK, &task).await
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
    task_answer(&state, StatusCode::OK, &task).await
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("dry_run" = Option<bool>, Query)),
    request_body = VersionBody,
    responses(
        (status = 200, description = "The archived task, or with `dry_run=true` a preview (`operation`, `consequence`, `affects`, `reversible`, `restore_path`) that writes nothing", body = OrPreview<TaskView>),
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
        Archived::Done(task) => task_answer(&state, StatusCode::OK, &task).await,
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
    task_answer(&state, StatusCode::OK, &task).await
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
    task_answer(&state, StatusCode::CREATED, &task).await
}

/// The query of `GET tasks/{t}/children/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChildrenParams {
    /// Optionally prefixed with `-` (default `rank`).
    #[param(schema_with = sort_schema)]
    sort: Option<SortParam>,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ChildrenParams),
    responses((status = 200, description = "Its live sub-tasks", body = Vec<TaskView>), (status = 400, description = "`invalid_sort`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/tasks/{t}/children/")]
pub async fn task_children(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
    q: Query<ChildrenParams>,
) -> ApiResult<HttpResponse> {
    let sort = SortParam::of(&q.0.sort);
    let children = state
        .plan
        .task_children(&caller.0, &task_ref(&t)?, sort.as_deref())
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
pub struct ActivityParams {
    /// Events at or after this time (`YYYY-MM-DDTHH:MM:SSZ`).
    #[param(value_type = Option<String>, format = DateTime)]
    updated_since: Option<CursorParam>,
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
    t: web::Path<String>,
    q: ListQuery<ActivityParams>,
) -> ApiResult<HttpResponse> {
    let filter = EventFilter {
        since: q.filters.updated_since.map(|c| c.0),
        kind: q.filters.kind.clone(),
    };
    let page = state
        .plan
        .task_events(&caller.0, &task_ref(&t)?, &filter, q.paging.request())
        .await?;
    let views = event_views(&state, caller.0.org_id(), &page.results).await?;
    Ok(HttpResponse::Ok().json(q.envelope(Page {
        count: page.count,
        results: views,
    })))
}

#[cfg(test)]
mod tests {
    use teamcomm_kernel::UserId;
    use teamcomm_org::{Role, User};
    use teamcomm_plan::{BoardId, State, StateCategory, TaskId};
    use time::macros::{date, datetime};

    use super::*;

    fn task(n: i64, title: &str) -> Task {
        Task {
            id: TaskId::new(),
            org_id: OrgId::new(),
            board_id: BoardId::new(),
            board_key: "ENG".into(),
            number: n,
            state_id: StateId::new(),
            parent_id: None,
            title: title.into(),
            description: String::new(),
            owner: None,
            priority: None,
            estimate: None,
            start_date: None,
            due_date: None,
            milestone_id: None,
            rank: n,
            version: 1,
            is_archived: false,
            archived_at: None,
            archived_with_board: false,
            completed_at: None,
            created_by: None,
            created_by_agent: None,
            created_at: datetime!(2026-11-26 09:15:00.123456 UTC),
            updated_at: datetime!(2026-11-26 09:15:00 +02:00),
        }
    }

    /// A page of task views, every optional part both ways, as the hot path writes it: the same
    /// bytes as `serde_json`.
    #[test]
    fn a_page_of_tasks_is_written_as_serde_json_writes_it() {
        let bare = task(1, "Bare");
        let mut full = task(2, "Ship the \"plan\" \\ today\n😀");
        let owner = UserId::new();
        let parent = task(3, "Parent");
        full.description = "Line one\r\n\tline two \u{1}".into();
        full.owner = Some(owner);
        full.priority = Some(1);
        full.estimate = Some(8);
        full.start_date = Some(date!(2026 - 01 - 02));
        full.due_date = Some(date!(2026 - 12 - 31));
        full.milestone_id = Some(Uuid::nil());
        full.parent_id = Some(parent.id);
        full.version = i64::MAX;
        full.is_archived = true;
        full.completed_at = Some(datetime!(2026-11-26 23:59:59.999999999 -05:30));
        full.created_by_agent = Some("claude \"code\"".into());
        let mut ghost = task(4, "Owner unknown");
        ghost.owner = Some(UserId::new());
        let mut ctx = TaskContext::default();
        ctx.states.insert(
            full.state_id,
            State {
                id: full.state_id,
                board_id: full.board_id,
                name: "In \"progress\"".into(),
                category: StateCategory::InProgress,
                position: 1,
                color: None,
                is_default: false,
                is_archived: false,
                created_at: full.created_at,
                updated_at: full.updated_at,
            },
        );
        ctx.people.insert(
            owner,
            User {
                id: owner,
                org_id: full.org_id,
                email: "ada@example.com".into(),
                first_name: "Ada".into(),
                last_name: "Lovelace".into(),
                role: Role::Member,
                is_active: true,
                timezone: "UTC".into(),
                occupation: String::new(),
                image: None,
                birth_date: None,
                work_anniversary: None,
                created_at: full.created_at,
            },
        );
        ctx.parents.insert(parent.id, parent);
        let tasks = [bare, full, ghost];
        let mut views: Vec<TaskView<'_>> = tasks.iter().map(|t| TaskView::of(t, &ctx)).collect();
        views[1].labels = Some(Vec::new());
        views[1].subtasks = Some(vec![TaskView::of(&tasks[0], &ctx)]);
        let envelope = ListEnvelope {
            count: 100_000,
            next: Some("http://h/v1/plan/tasks/?board=ENG&page=2&page_size=25".into()),
            previous: None,
            results: views,
        };
        let ours = json_writer::to_vec(&envelope, 0).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string(&envelope).unwrap()
        );
    }
}
