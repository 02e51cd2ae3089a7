//! `POST /v1/plan/tasks/bulk/` (wire contract #169): one operation over at most 100 tasks,
//! each item its own write (`teamcomm_plan::bulk`). Requires `Idempotency-Key` (its policy),
//! except on a dry run.

use actix_web::{HttpResponse, post};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use teamcomm_kernel::Error;
use teamcomm_keys::RateScope;
use teamcomm_plan::BoardRef;
use teamcomm_plan::actor::DoorNeed;
use teamcomm_plan::bulk::{BulkCall, BulkOperation, BulkOutcome, BulkPreview};
use utoipa::ToSchema;

use crate::auth::PlanCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::policy::{Policy as P, Routes};
use crate::routes::plan::common::{DryRun, PlanJson};

/// A bulk call.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkBody {
    /// `create`, `move`, `update`, `archive`, `restore`, `set_labels`, `set_owner`,
    /// `set_priority`, `set_due_date`, `set_parent` or `delete` (archives); any other is 400
    /// `invalid_relation`.
    #[schema(example = "set_priority")]
    pub operation: String,
    /// At most 100 (`too_many_items`): `{"task": key|uuid, "version"?: n, …fields}`, or
    /// `{"title": …, …}` for `create`. Fields: `create`/`update` those of `POST tasks/` /
    /// `PATCH tasks/{t}/`; `move` `state` (`before`, `after`); `set_labels` `labels` (uuids,
    /// the whole set); `set_owner` `owner` (uuid, `me` or null); `set_priority` `priority`
    /// (1–5 or null); `set_due_date` `due_date` (YYYY-MM-DD or null); `set_parent` `parent`
    /// (a task of the same board, key or uuid; null makes the task top-level).
    #[schema(value_type = Vec<Object>)]
    pub items: Vec<Value>,
    /// The board new tasks go on (uuid or key; required for `create`).
    pub board: Option<String>,
}

/// A task written by an item.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkTaskView {
    pub uuid: String,
    pub key: String,
    pub version: i64,
}

/// One item's outcome.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkResultRow {
    /// The item's position in `items`.
    pub index: usize,
    /// `ok` or `error`.
    pub status: &'static str,
    /// The task written (`ok`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<BulkTaskView>,
    /// The task's uuid (`ok`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The task reference the item gave (`error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_ref: Option<String>,
    /// Why the item was refused (`error`): a Plan code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Per-field messages of a refused item.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub errors: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub extra: Option<Value>,
}

/// The answer of a bulk call: every item's outcome, in order.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkResults {
    pub results: Vec<BulkResultRow>,
}

/// An item a dry run would change.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkPlannedView {
    pub index: usize,
    /// The task's key (none for `create`).
    pub key: Option<String>,
    /// The task's uuid (none for `create`).
    pub task: Option<String>,
    /// Field → `{from, to}`.
    #[schema(value_type = Object)]
    pub changes: Map<String, Value>,
}

/// An item a dry run would refuse.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkRefusedView {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_ref: Option<String>,
    pub code: String,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub errors: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub extra: Option<Value>,
}

/// A bulk dry run: what the call would change and refuse; nothing written.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkPreviewView {
    /// Always true.
    pub dry_run: bool,
    /// The bulk operation.
    pub operation: String,
    pub consequence: String,
    /// `{"tasks": n}`: the items that would be changed.
    #[schema(value_type = Object)]
    pub affects: Map<String, Value>,
    pub reversible: bool,
    pub items: Vec<BulkPlannedView>,
    pub refused: Vec<BulkRefusedView>,
}

/// A bulk answer: the results, or the dry run's preview.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum BulkAnswer {
    Results(BulkResults),
    Preview(BulkPreviewView),
}

fn error_parts(e: &Error) -> (Option<Value>, Option<Value>) {
    let errors = (!e.field_errors().is_empty())
        .then(|| serde_json::to_value(e.field_errors()).unwrap_or(Value::Null));
    let extra = (!e.extra().is_empty()).then(|| Value::Object(e.extra().clone()));
    (errors, extra)
}

fn row(o: BulkOutcome) -> BulkResultRow {
    match o.result {
        Ok(t) => BulkResultRow {
            index: o.index,
            status: "ok",
            uuid: Some(t.id.to_string()),
            task: Some(BulkTaskView {
                uuid: t.id.to_string(),
                key: t.key(),
                version: t.version,
            }),
            task_ref: None,
            code: None,
            detail: None,
            errors: None,
            extra: None,
        },
        Err(e) => {
            let (errors, extra) = error_parts(&e);
            BulkResultRow {
                index: o.index,
                status: "error",
                task: None,
                uuid: None,
                task_ref: o.named,
                code: Some(e.code().as_str().to_owned()),
                detail: Some(e.detail().to_owned()),
                errors,
                extra,
            }
        }
    }
}

fn preview_view(p: BulkPreview) -> BulkPreviewView {
    let mut affects = Map::new();
    affects.insert("tasks".to_owned(), p.items.len().into());
    BulkPreviewView {
        dry_run: true,
        operation: p.operation.as_str().to_owned(),
        consequence: p.consequence,
        affects,
        reversible: p.operation != BulkOperation::Create,
        items: p
            .items
            .into_iter()
            .map(|i| BulkPlannedView {
                index: i.index,
                key: i.task.as_ref().map(|t| t.key()),
                task: i.task.as_ref().map(|t| t.id.to_string()),
                changes: i.changes,
            })
            .collect(),
        refused: p
            .refused
            .into_iter()
            .map(|r| {
                let (errors, extra) = error_parts(&r.error);
                BulkRefusedView {
                    index: r.index,
                    task_ref: r.named,
                    code: r.error.code().as_str().to_owned(),
                    detail: r.error.detail().to_owned(),
                    errors,
                    extra,
                }
            })
            .collect(),
    }
}

/// Runs one operation over at most 100 tasks: each item its own write, so a refused item
/// leaves the others done; every item's outcome is listed. `?dry_run=true` lists the changes
/// and refusals instead, writing nothing (no `Idempotency-Key` needed then).
#[utoipa::path(
    tag = "plan",
    request_body = BulkBody,
    params(("dry_run" = Option<bool>, Query, description = "Preview: nothing is written.")),
    responses(
        (status = 200, description = "`{results}`, or with `?dry_run=true` the preview", body = BulkAnswer),
        (status = 400, description = "`too_many_items`, `invalid_relation` (unknown operation), `idempotency_key_required`, `invalid_idempotency_key`; a field map for body errors", body = ErrorBody),
        (status = 404, description = "`board` not found", body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/bulk/")]
pub async fn bulk_tasks(
    state: actix_web::web::Data<crate::state::AppState>,
    caller: PlanCaller,
    dry_run: DryRun,
    body: PlanJson<BulkBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let body = body.body;
    let call = BulkCall {
        operation: BulkOperation::parse(&body.operation)?,
        board: body.board.as_deref().map(BoardRef::parse).transpose()?,
        items: body.items,
    };
    let answer = if dry_run.0 {
        BulkAnswer::Preview(preview_view(state.plan.bulk_preview(&actor, call).await?))
    } else {
        let outcomes = state.plan.bulk(&actor, call).await?;
        BulkAnswer::Results(BulkResults {
            results: outcomes.into_iter().map(row).collect(),
        })
    };
    Ok(HttpResponse::Ok().json(answer))
}

/// This module's part of the route table (before `tasks/{t}/`).
pub fn declare(r: &mut Routes<'_, '_>) {
    r.add(
        bulk_tasks,
        P::plan(DoorNeed::Write, RateScope::PlanBulk).idempotency_required(),
    );
}
