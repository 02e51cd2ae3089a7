//! `/v1/labels/`: organization labels; `/v1/{forms|checkins|workflows}/…/labels/`: the labels
//! those carry; `/v1/me/featured/`: the caller's private stars. Rules in
//! `teamcomm_labels::{LabelService, FeaturedService}`.

use actix_web::{HttpResponse, delete, get, patch, post, put, web};
use serde::{Deserialize, Serialize};
use teamcomm_labels::{
    BatchMode, Entitlement, EntityKind, FeaturedKind, Label, LabelChanges, LabelFilter, LabelId,
    MAX_LABEL_DESCRIPTION, MAX_LABEL_NAME,
};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{JsonBody, Name, OptionalName, Query, Wire};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::{Search, search};
use crate::state::AppState;
use crate::views::iso;

/// `forms`, `automations` (workflows) or `checkins`.
type FeaturedType = Wire<FeaturedKind>;
/// `add`, `remove` or `replace`.
type BatchModeName = Wire<BatchMode>;

/// The page size of `GET /v1/labels/` when the caller names none (the CLI's default).
const LABELS_PAGE_SIZE: u64 = 20;

#[derive(Debug, Serialize, ToSchema)]
pub struct LabelUsage {
    /// How many forms, check-ins and workflows carry the label.
    pub total: u64,
}

/// An organization label.
#[derive(Debug, Serialize, ToSchema)]
pub struct LabelView {
    pub uuid: String,
    pub id: String,
    pub name: String,
    /// `#RRGGBB`.
    pub color: String,
    pub description: String,
    pub is_archived: bool,
    pub usage: LabelUsage,
    /// Who created it (members edit their own labels); null once that person is deleted.
    pub created_by: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&Label> for LabelView {
    fn from(l: &Label) -> Self {
        LabelView {
            uuid: l.id.to_string(),
            id: l.id.to_string(),
            name: l.name.clone(),
            color: l.color.clone(),
            description: l.description.clone(),
            is_archived: l.is_archived,
            usage: LabelUsage { total: l.usage },
            created_by: l.created_by.map(|u| u.to_string()),
            created_at: iso(l.created_at),
            updated_at: iso(l.updated_at),
        }
    }
}

/// What the caller may do with labels.
#[derive(Debug, Serialize, ToSchema)]
pub struct EntitlementView {
    /// The organization's plan includes labels (paid plans).
    pub entitled: bool,
    /// May create labels and label forms, check-ins and workflows.
    pub can_create: bool,
    /// May edit and archive everyone's labels (others edit their own).
    pub can_manage_all: bool,
    /// May delete labels (admins).
    pub can_hard_delete: bool,
    pub is_guest: bool,
}

impl From<Entitlement> for EntitlementView {
    fn from(e: Entitlement) -> Self {
        EntitlementView {
            entitled: e.entitled,
            can_create: e.can_create,
            can_manage_all: e.can_manage_all,
            can_hard_delete: e.can_hard_delete,
            is_guest: e.is_guest,
        }
    }
}

#[utoipa::path(
    tag = "labels",
    responses((status = 200, body = EntitlementView), (status = 401, body = ErrorBody))
)]
#[get("/v1/labels/entitlement/")]
pub async fn get_entitlement(
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    let e = state.labels.entitlement(caller.user(), caller.0.org.plan);
    Ok(HttpResponse::Ok().json(EntitlementView::from(e)))
}

/// Filters of `GET /v1/labels/` (paged with `limit`, default 20, and `offset`).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LabelListQuery {
    /// True lists archived labels too; false (default) live ones only.
    is_archived: Option<bool>,
    /// Name fragment (case-insensitive), at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
}

#[utoipa::path(
    tag = "labels",
    params(LabelListQuery, PageParams),
    responses((status = 200, description = "By name; `limit` defaults to 20 here", body = ListEnvelope<LabelView>), (status = 400, body = ErrorBody))
)]
#[get("/v1/labels/")]
pub async fn list_labels(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<LabelListQuery>,
) -> ApiResult<HttpResponse> {
    let mut q = q;
    q.paging = q.paging.with_default_size(LABELS_PAGE_SIZE);
    let filter = LabelFilter {
        include_archived: q.filters.is_archived.unwrap_or(false),
        search: search(q.filters.search.clone()),
    };
    let page = state
        .labels
        .list_labels(caller.user(), &filter, q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(LabelView::from))))
}

/// Body of `POST /v1/labels/`. The name is unique in the organization regardless of case
/// (`duplicate_name`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLabelBody {
    #[schema(inline)]
    name: Name<{ MAX_LABEL_NAME }>,
    /// `#RRGGBB`; default `#4A90E2`.
    #[schema(pattern = "^#[0-9A-Fa-f]{6}$", example = "#4A90E2")]
    color: Option<String>,
    #[schema(inline)]
    description: Option<OptionalName<{ MAX_LABEL_DESCRIPTION }>>,
}

#[utoipa::path(
    tag = "labels",
    request_body = CreateLabelBody,
    responses(
        (status = 201, body = LabelView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`paid_plan_required`, `guest_not_allowed`", body = ErrorBody),
        (status = 409, description = "`duplicate_name`", body = ErrorBody),
    )
)]
#[post("/v1/labels/")]
pub async fn create_label(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<CreateLabelBody>,
) -> ApiResult<HttpResponse> {
    let CreateLabelBody {
        name,
        color,
        description,
    } = body.0;
    let label = state
        .labels
        .create_label(
            caller.user(),
            caller.0.org.plan,
            &name.0,
            color.as_deref(),
            description.as_ref().map(|d| d.0.as_str()),
        )
        .await?;
    Ok(HttpResponse::Created().json(LabelView::from(&label)))
}

#[utoipa::path(
    tag = "labels",
    params(("uuid" = String, Path)),
    responses((status = 200, body = LabelView), (status = 404, body = ErrorBody))
)]
#[get("/v1/labels/{uuid}/")]
pub async fn get_label(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let label = state.labels.get_label(caller.user(), LabelId(*id)).await?;
    Ok(HttpResponse::Ok().json(LabelView::from(&label)))
}

/// Body of `PATCH /v1/labels/{uuid}/`: the fields to change (an empty `description` clears it).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLabelBody {
    #[schema(inline)]
    name: Option<Name<{ MAX_LABEL_NAME }>>,
    /// `#RRGGBB`.
    #[schema(pattern = "^#[0-9A-Fa-f]{6}$", example = "#4A90E2")]
    color: Option<String>,
    #[schema(inline)]
    description: Option<OptionalName<{ MAX_LABEL_DESCRIPTION }>>,
    /// False restores an archived label (archive with `POST …/archive/`).
    is_archived: Option<bool>,
}

#[utoipa::path(
    tag = "labels",
    params(("uuid" = String, Path)),
    request_body = UpdateLabelBody,
    responses(
        (status = 200, body = LabelView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`paid_plan_required`, `guest_not_allowed`, `permission_denied` (members change their own labels only)", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`duplicate_name`", body = ErrorBody),
    )
)]
#[patch("/v1/labels/{uuid}/")]
pub async fn update_label(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<UpdateLabelBody>,
) -> ApiResult<HttpResponse> {
    let UpdateLabelBody {
        name,
        color,
        description,
        is_archived,
    } = body.0;
    let changes = LabelChanges {
        name: name.map(|n| n.0),
        color,
        description: description.map(|d| d.0),
        is_archived,
    };
    let label = state
        .labels
        .update_label(caller.user(), caller.0.org.plan, LabelId(*id), &changes)
        .await?;
    Ok(HttpResponse::Ok().json(LabelView::from(&label)))
}

#[utoipa::path(
    tag = "labels",
    params(("uuid" = String, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "`paid_plan_required`, `guest_not_allowed`, `permission_denied` (admins only)", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`label_in_use` with `extra.usage_count`: archive it instead", body = ErrorBody),
    )
)]
#[delete("/v1/labels/{uuid}/")]
pub async fn delete_label(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    state
        .labels
        .delete_label(caller.user(), caller.0.org.plan, LabelId(*id))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "labels",
    params(("uuid" = String, Path)),
    responses(
        (status = 200, description = "Archived (also when it already was)", body = LabelView),
        (status = 403, description = "`paid_plan_required`, `guest_not_allowed`, `permission_denied`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/labels/{uuid}/archive/")]
pub async fn archive_label(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let label = state
        .labels
        .archive_label(caller.user(), caller.0.org.plan, LabelId(*id))
        .await?;
    Ok(HttpResponse::Ok().json(LabelView::from(&label)))
}

/// A label as an entity shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct AssignedLabel {
    pub uuid: String,
    pub name: String,
    pub color: String,
}

/// An entity's labels after a change.
#[derive(Debug, Serialize, ToSchema)]
pub struct EntityLabelsView {
    /// The form, check-in or workflow.
    pub uuid: String,
    /// By name.
    pub labels: Vec<AssignedLabel>,
}

/// Body of `POST /v1/{forms|checkins|workflows}/{uuid}/labels/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityLabelsBody {
    /// The entity's whole set of labels (at most 50; `[]` clears it).
    label_uuids: Vec<Uuid>,
}

async fn set_entity_labels(
    state: &AppState,
    caller: &Caller,
    kind: EntityKind,
    entity: Uuid,
    body: EntityLabelsBody,
) -> ApiResult<HttpResponse> {
    let labels: Vec<LabelId> = body.label_uuids.into_iter().map(LabelId).collect();
    let set = state
        .labels
        .set_entity_labels(caller.user(), caller.0.org.plan, kind, entity, &labels)
        .await?;
    Ok(HttpResponse::Ok().json(EntityLabelsView {
        uuid: entity.to_string(),
        labels: set
            .iter()
            .map(|l| AssignedLabel {
                uuid: l.id.to_string(),
                name: l.name.clone(),
                color: l.color.clone(),
            })
            .collect(),
    }))
}

/// Body of `POST /v1/{forms|checkins|workflows}/labels/batch/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchLabelsBody {
    /// At most 100 (`too_many_items`); all must exist, or nothing changes (404 naming them in
    /// `extra.uuids`).
    entity_uuids: Vec<Uuid>,
    /// At most 50.
    label_uuids: Vec<Uuid>,
    #[schema(inline)]
    mode: BatchModeName,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BatchLabelsView {
    /// How many entities' labels changed.
    pub updated_count: u64,
}

async fn batch_entity_labels(
    state: &AppState,
    caller: &Caller,
    kind: EntityKind,
    body: BatchLabelsBody,
) -> ApiResult<HttpResponse> {
    let labels: Vec<LabelId> = body.label_uuids.into_iter().map(LabelId).collect();
    let updated_count = state
        .labels
        .batch_entity_labels(
            caller.user(),
            caller.0.org.plan,
            kind,
            &body.entity_uuids,
            &labels,
            body.mode.0,
        )
        .await?;
    Ok(HttpResponse::Ok().json(BatchLabelsView { updated_count }))
}

/// The two labelling routes of one collection (the paths differ only by the collection).
macro_rules! labelling_routes {
    ($kind:expr, $tag:literal, $set:ident, $set_path:literal, $batch:ident, $batch_path:literal) => {
        #[utoipa::path(
            tag = $tag,
            params(("uuid" = String, Path)),
            request_body = EntityLabelsBody,
            responses(
                (status = 200, body = EntityLabelsView),
                (status = 400, description = "`archived_label_not_assignable` (with `extra.uuids`), `too_many_items`", body = ErrorBody),
                (status = 403, description = "`paid_plan_required`, `guest_not_allowed`", body = ErrorBody),
                (status = 404, description = "The entity or a label is not found (`extra.uuids`)", body = ErrorBody),
            )
        )]
        #[post($set_path)]
        pub async fn $set(
            state: web::Data<AppState>,
            caller: Caller,
            id: web::Path<Uuid>,
            body: JsonBody<EntityLabelsBody>,
        ) -> ApiResult<HttpResponse> {
            set_entity_labels(&state, &caller, $kind, *id, body.0).await
        }

        #[utoipa::path(
            tag = $tag,
            request_body = BatchLabelsBody,
            responses(
                (status = 200, body = BatchLabelsView),
                (status = 400, description = "`archived_label_not_assignable` (with `extra.uuids`), `too_many_items`", body = ErrorBody),
                (status = 403, description = "`paid_plan_required`, `guest_not_allowed`", body = ErrorBody),
                (status = 404, description = "Entities or labels not found, named in `extra.uuids`; nothing changed", body = ErrorBody),
            )
        )]
        #[post($batch_path)]
        pub async fn $batch(
            state: web::Data<AppState>,
            caller: Caller,
            body: JsonBody<BatchLabelsBody>,
        ) -> ApiResult<HttpResponse> {
            batch_entity_labels(&state, &caller, $kind, body.0).await
        }
    };
}

labelling_routes!(
    EntityKind::Forms,
    "forms",
    label_form,
    "/v1/forms/{uuid}/labels/",
    batch_label_forms,
    "/v1/forms/labels/batch/"
);
labelling_routes!(
    EntityKind::Checkins,
    "checkins",
    label_checkin,
    "/v1/checkins/{uuid}/labels/",
    batch_label_checkins,
    "/v1/checkins/labels/batch/"
);
labelling_routes!(
    EntityKind::Workflows,
    "workflows",
    label_workflow,
    "/v1/workflows/{uuid}/labels/",
    batch_label_workflows,
    "/v1/workflows/labels/batch/"
);

/// `?entity_type=` of `GET /v1/me/featured/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeaturedQuery {
    #[param(inline)]
    entity_type: FeaturedType,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FeaturedListView {
    /// `forms`, `automations` or `checkins`.
    pub entity_type: &'static str,
    /// Oldest star first; entities since deleted are left out.
    pub entity_uuids: Vec<String>,
}

#[utoipa::path(
    tag = "featured",
    params(FeaturedQuery),
    responses((status = 200, body = FeaturedListView), (status = 400, body = ErrorBody))
)]
#[get("/v1/me/featured/")]
pub async fn list_featured(
    state: web::Data<AppState>,
    caller: Caller,
    q: Query<FeaturedQuery>,
) -> ApiResult<HttpResponse> {
    let kind = q.0.entity_type.0;
    let starred = state.featured.featured(caller.user(), kind.0).await?;
    Ok(HttpResponse::Ok().json(FeaturedListView {
        entity_type: kind.0.featured_name(),
        entity_uuids: starred.iter().map(Uuid::to_string).collect(),
    }))
}

/// Body of `PUT /v1/me/featured/{entity_type}/{uuid}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FeaturedBody {
    /// True stars, false unstars.
    featured: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FeaturedView {
    pub entity_type: &'static str,
    pub uuid: String,
    pub is_featured: bool,
}

#[utoipa::path(
    tag = "featured",
    params(("entity_type" = inline(FeaturedType), Path), ("uuid" = String, Path)),
    request_body = FeaturedBody,
    responses((status = 200, description = "Idempotent", body = FeaturedView), (status = 404, body = ErrorBody))
)]
#[put("/v1/me/featured/{entity_type}/{uuid}/")]
pub async fn set_featured(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(FeaturedType, Uuid)>,
    body: JsonBody<FeaturedBody>,
) -> ApiResult<HttpResponse> {
    let (kind, entity) = path.into_inner();
    let featured = body.0.featured;
    state
        .featured
        .set_featured(caller.user(), kind.0.0, &[entity], featured)
        .await?;
    Ok(HttpResponse::Ok().json(FeaturedView {
        entity_type: kind.0.0.featured_name(),
        uuid: entity.to_string(),
        is_featured: featured,
    }))
}

/// Body of `POST /v1/me/featured/batch/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FeaturedBatchBody {
    #[schema(inline)]
    entity_type: FeaturedType,
    /// At most 100 (`too_many_items`); all must exist, or nothing changes (404 naming them in
    /// `extra.uuids`).
    entity_uuids: Vec<Uuid>,
    featured: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FeaturedBatchView {
    /// The entities whose star changed, in the order given.
    pub updated_entity_uuids: Vec<String>,
}

#[utoipa::path(
    tag = "featured",
    request_body = FeaturedBatchBody,
    responses((status = 200, body = FeaturedBatchView), (status = 400, description = "`too_many_items`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/v1/me/featured/batch/")]
pub async fn batch_featured(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<FeaturedBatchBody>,
) -> ApiResult<HttpResponse> {
    let FeaturedBatchBody {
        entity_type,
        entity_uuids,
        featured,
    } = body.0;
    let changed = state
        .featured
        .set_featured(caller.user(), entity_type.0.0, &entity_uuids, featured)
        .await?;
    Ok(HttpResponse::Ok().json(FeaturedBatchView {
        updated_entity_uuids: changed.iter().map(Uuid::to_string).collect(),
    }))
}
