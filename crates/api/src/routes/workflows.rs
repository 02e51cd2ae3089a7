//! `/v1/workflows/`: an organization's workflows (automations), triggering the `api_trigger`
//! ones, and their runs. Rules in `teamcomm_workflows::WorkflowService`; a trigger queues a run
//! and its `workflow_run` job (answered 202). Their labels and stars are `routes/labels.rs`.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use teamcomm_kernel::WireEnum;
use teamcomm_workflows::{
    Action, MAX_WORKFLOW_NAME, Workflow, WorkflowId, WorkflowInput, WorkflowListFilter, WorkflowRun,
};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{JsonBody, Name};
use crate::paging::{ListEnvelope, ListQuery, NoFilters, PageParams};
use crate::params::{Day, Search, UuidList, search};
use crate::state::AppState;
use crate::views::iso;

/// A workflow.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkflowDefinitionView {
    pub uuid: String,
    pub name: String,
    pub description: String,
    /// `api_trigger`, or the dotted name of the event that runs it (`kudos.posted`).
    pub trigger_type: String,
    /// Each `{type: send_message | send_email | call_webhook, ...}`.
    #[schema(value_type = Vec<Object>)]
    pub actions: Vec<Action>,
    pub active: bool,
    /// Frozen workflows do not run (`workflow_frozen`).
    pub frozen: bool,
    pub total_runs: u64,
    pub last_run_at: Option<String>,
    /// Who created it; null once that person is deleted.
    pub created_by: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&Workflow> for WorkflowDefinitionView {
    fn from(w: &Workflow) -> Self {
        WorkflowDefinitionView {
            uuid: w.id.to_string(),
            name: w.name.clone(),
            description: w.description.clone(),
            trigger_type: w.trigger.as_str().to_owned(),
            actions: w.actions.clone(),
            active: w.active,
            frozen: w.frozen,
            total_runs: w.total_runs,
            last_run_at: w.last_run_at.map(iso),
            created_by: w.created_by.map(|u| u.0.to_string()),
            created_at: iso(w.created_at),
            updated_at: iso(w.updated_at),
        }
    }
}

/// One run of a workflow.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkflowRunView {
    pub uuid: String,
    pub workflow_uuid: String,
    /// `queued`, `running`, `succeeded` or `failed`.
    pub status: &'static str,
    /// The trigger payload, or the event's.
    #[schema(value_type = Object)]
    pub payload: Value,
    /// Who triggered it (null for an event).
    pub triggered_by: Option<String>,
    pub queued_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Which action failed and why (null while it runs and on success).
    pub error: Option<String>,
    /// How many of the workflow's actions ran.
    pub actions_completed: u32,
}

impl From<&WorkflowRun> for WorkflowRunView {
    fn from(r: &WorkflowRun) -> Self {
        WorkflowRunView {
            uuid: r.id.to_string(),
            workflow_uuid: r.workflow_id.to_string(),
            status: r.status.as_str(),
            payload: r.payload.clone(),
            triggered_by: r.triggered_by.map(|u| u.0.to_string()),
            queued_at: iso(r.queued_at),
            started_at: r.started_at.map(iso),
            finished_at: r.finished_at.map(iso),
            error: r.error.clone(),
            actions_completed: r.actions_completed,
        }
    }
}

/// The answer to a trigger: the run is queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct TriggerQueuedView {
    pub queued: bool,
    pub workflow_uuid: String,
    /// The queued run (`GET /v1/workflows/{uuid}/runs/`).
    pub run_uuid: String,
    pub detail: String,
}

/// Body of `PATCH /v1/workflows/{uuid}/`: what changes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowDefinitionBody {
    pub name: Option<Name<{ MAX_WORKFLOW_NAME }>>,
    pub description: Option<String>,
    /// `api_trigger` or a dotted event name (docs/events.md).
    pub trigger_type: Option<String>,
    /// 1 to 20 actions, run in order: `{type: "send_message", user_uuids?, team_uuids?,
    /// channel_ids?, text}`, `{type: "send_email", to, subject, body}` (only addresses of active
    /// people of the organization get mail), `{type: "call_webhook", url, body?}` (a JSON POST;
    /// `body` a template, by default `{workflow, run, payload}`). Texts and the body's strings may
    /// name `{{payload.key}}` (the trigger payload, or the event's document), `{{workflow.name}}`,
    /// `{{run.uuid}}`. `trigger_type` cannot be `workflow.finished`.
    #[schema(value_type = Option<Vec<Object>>, min_items = 1, max_items = 20)]
    pub actions: Option<Value>,
    pub active: Option<bool>,
}

/// Body of `POST /v1/workflows/`: what `PATCH` takes, with a name, a trigger and actions
/// required.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWorkflowBody {
    pub name: Name<{ MAX_WORKFLOW_NAME }>,
    pub description: Option<String>,
    /// `api_trigger` or a dotted event name (docs/events.md).
    #[schema(example = "api_trigger")]
    pub trigger_type: String,
    /// 1 to 20 actions, run in order: `{type: "send_message", user_uuids?, team_uuids?,
    /// channel_ids?, text}`, `{type: "send_email", to, subject, body}` (only addresses of active
    /// people of the organization get mail), `{type: "call_webhook", url, body?}` (a JSON POST;
    /// `body` a template, by default `{workflow, run, payload}`). Texts and the body's strings may
    /// name `{{payload.key}}` (the trigger payload, or the event's document), `{{workflow.name}}`,
    /// `{{run.uuid}}`. `trigger_type` cannot be `workflow.finished`.
    #[schema(value_type = Vec<Object>, min_items = 1, max_items = 20, example = json!([{"type": "send_email", "to": ["ada@example.com"], "subject": "Deployed", "body": "Version {{payload.version}} is live."}]))]
    pub actions: Value,
    pub active: Option<bool>,
}

impl From<NewWorkflowBody> for WorkflowInput {
    fn from(b: NewWorkflowBody) -> Self {
        WorkflowInput {
            name: Some(b.name.0),
            description: b.description,
            trigger_type: Some(b.trigger_type),
            actions: Some(b.actions),
            active: b.active,
        }
    }
}

impl From<WorkflowDefinitionBody> for WorkflowInput {
    fn from(b: WorkflowDefinitionBody) -> Self {
        WorkflowInput {
            name: b.name.map(|n| n.0),
            description: b.description,
            trigger_type: b.trigger_type,
            actions: b.actions,
            active: b.active,
        }
    }
}

/// Body of `POST /v1/workflows/{uuid}/trigger/`: `{}` or `{payload: {...}}`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TriggerBody {
    /// A JSON object of at most 8 KiB (as JSON), handed to the run; anything else is
    /// `workflow_trigger_payload_invalid`.
    pub payload: Option<Value>,
}

/// Filters of `GET /v1/workflows/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WorkflowListQuery {
    /// Name or description fragment, at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
    /// Created on or after this day (UTC).
    #[param(inline)]
    start_date: Option<Day>,
    /// Created on or before this day (UTC).
    #[param(inline)]
    end_date: Option<Day>,
    /// Label uuids, comma-separated: workflows carrying any of them.
    #[param(inline)]
    labels: Option<UuidList>,
    /// Only those the caller starred (`/v1/me/featured/automations/`).
    featured: Option<bool>,
}

impl From<&WorkflowListQuery> for WorkflowListFilter {
    fn from(q: &WorkflowListQuery) -> Self {
        WorkflowListFilter {
            search: search(q.search.clone()),
            start_date: q.start_date.map(|d| d.0),
            end_date: q.end_date.map(|d| d.0),
            labels: q.labels.clone().map(|l| l.0).unwrap_or_default(),
            featured: q.featured.unwrap_or(false),
        }
    }
}

#[utoipa::path(
    tag = "workflows",
    params(WorkflowListQuery, PageParams),
    responses(
        (status = 200, description = "The organization's workflows, by name", body = ListEnvelope<WorkflowDefinitionView>),
        (status = 400, description = "`invalid_date_range`, `search_query_too_long`, `invalid_filter_value`, `too_many_filter_values`", body = ErrorBody),
    )
)]
#[get("/v1/workflows/")]
pub async fn list_workflows(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<WorkflowListQuery>,
) -> ApiResult<HttpResponse> {
    let filter = WorkflowListFilter::from(&q.filters);
    let page = state
        .workflows
        .list(caller.user(), &filter, q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(WorkflowDefinitionView::from))))
}

#[utoipa::path(
    tag = "workflows",
    request_body = NewWorkflowBody,
    responses(
        (status = 201, body = WorkflowDefinitionView),
        (status = 400, description = "`params_validation_error` naming `name`, `trigger_type` or `actions` (a webhook URL the destination guard refuses too), `unknown_field`", body = ErrorBody),
        (status = 403, description = "`permission_denied` (guests); CLI sessions are refused: API keys only", body = ErrorBody),
    )
)]
#[post("/v1/workflows/")]
pub async fn create_workflow(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<NewWorkflowBody>,
) -> ApiResult<HttpResponse> {
    let created = state
        .workflows
        .create(caller.user(), &body.0.into())
        .await?;
    Ok(HttpResponse::Created().json(WorkflowDefinitionView::from(&created)))
}

#[utoipa::path(
    tag = "workflows",
    params(("uuid" = String, Path)),
    responses((status = 200, body = WorkflowDefinitionView), (status = 404, description = "another organization's workflow too", body = ErrorBody))
)]
#[get("/v1/workflows/{uuid}/")]
pub async fn get_workflow(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let w = state.workflows.get(caller.user(), WorkflowId(*id)).await?;
    Ok(HttpResponse::Ok().json(WorkflowDefinitionView::from(&w)))
}

#[utoipa::path(
    tag = "workflows",
    params(("uuid" = String, Path)),
    request_body = WorkflowDefinitionBody,
    responses(
        (status = 200, body = WorkflowDefinitionView),
        (status = 400, description = "`params_validation_error`, `unknown_field`", body = ErrorBody),
        (status = 403, description = "`permission_denied`: only admins and the creator change a workflow", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[patch("/v1/workflows/{uuid}/")]
pub async fn update_workflow(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<WorkflowDefinitionBody>,
) -> ApiResult<HttpResponse> {
    let w = state
        .workflows
        .update(caller.user(), WorkflowId(*id), &body.0.into())
        .await?;
    Ok(HttpResponse::Ok().json(WorkflowDefinitionView::from(&w)))
}

#[utoipa::path(
    tag = "workflows",
    params(("uuid" = String, Path)),
    responses(
        (status = 204),
        (status = 403, description = "`permission_denied`: only admins and the creator delete a workflow", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/v1/workflows/{uuid}/")]
pub async fn delete_workflow(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    state
        .workflows
        .delete(caller.user(), WorkflowId(*id))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "workflows",
    params(("uuid" = String, Path)),
    request_body = TriggerBody,
    responses(
        (status = 202, description = "A run is queued", body = TriggerQueuedView),
        (status = 400, description = "`workflow_not_triggerable` (not an `api_trigger` workflow), `workflow_trigger_payload_invalid` (not a JSON object, or over 8 KiB)", body = ErrorBody),
        (status = 403, description = "`workflow_execute_not_allowed` (guests)", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`workflow_frozen` (frozen or inactive)", body = ErrorBody),
    )
)]
#[post("/v1/workflows/{uuid}/trigger/")]
pub async fn trigger_workflow(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<TriggerBody>,
) -> ApiResult<HttpResponse> {
    let run = state
        .workflows
        .trigger(caller.user(), WorkflowId(*id), body.0.payload)
        .await?;
    Ok(HttpResponse::Accepted().json(TriggerQueuedView {
        queued: true,
        workflow_uuid: run.workflow_id.to_string(),
        run_uuid: run.id.to_string(),
        detail: "The workflow run is queued.".into(),
    }))
}

#[utoipa::path(
    tag = "workflows",
    params(("uuid" = String, Path), PageParams),
    responses(
        (status = 200, description = "Newest first", body = ListEnvelope<WorkflowRunView>),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/v1/workflows/{uuid}/runs/")]
pub async fn list_runs(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    q: ListQuery<NoFilters>,
) -> ApiResult<HttpResponse> {
    let page = state
        .workflows
        .runs(caller.user(), WorkflowId(*id), q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(WorkflowRunView::from))))
}
