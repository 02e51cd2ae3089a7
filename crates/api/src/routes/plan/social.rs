//! Plan routes around a task: relations, comments and their reactions, participants and the
//! caller's subscription, task labels; and the Plan label doors (`labels/`, `boards/{b}/labels/`)
//! over the organization's labels. Rules in `teamcomm_plan::{relations, comments, participants,
//! task_labels}`.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, Page};
use teamcomm_labels::{
    BatchMode, Label, LabelChanges, LabelFilter, LabelId, MAX_LABEL_DESCRIPTION, MAX_LABEL_NAME,
};
use teamcomm_org::User;
use teamcomm_plan::comments::{CommentView, ReactionView};
use teamcomm_plan::participants::ParticipantView;
use teamcomm_plan::ports::CommentFilter;
use teamcomm_plan::relations::TaskLink;
use teamcomm_plan::{BoardRef, CommentId, ParticipantRole, RelationId, RelationType, TaskRef};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::PlanCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Name, OptionalName, Wire};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::{Day, Search, search};
use crate::policy::{Policy as P, Routes};
use crate::routes::plan::common::PlanJson;
use crate::state::AppState;
use crate::views::iso;

/// This module's part of the route table (fixed segments before `{id}` ones).
pub fn declare(r: &mut Routes<'_, '_>) {
    r.add(list_plan_labels, P::plan_read())
        .add(create_plan_label, P::plan_write().person_only())
        .add(update_plan_label, P::plan_write().person_only())
        .add(delete_plan_label, P::plan_write().person_only())
        .add(list_board_labels, P::plan_read().person_only())
        .add(create_board_label, P::plan_write().person_only())
        .add(batch_task_labels, P::plan_write().idempotent())
        .add(add_relation, P::plan_write().idempotent())
        .add(list_relations, P::plan_read())
        .add(delete_relation, P::plan_write())
        .add(add_comment, P::plan_write().idempotent())
        .add(list_comments, P::plan_read())
        .add(edit_comment, P::plan_write())
        .add(delete_comment, P::plan_write())
        .add(add_reaction, P::plan_write().person_only())
        .add(list_reactions, P::plan_read())
        .add(delete_reaction, P::plan_write().person_only())
        .add(add_participant, P::plan_write().person_only().idempotent())
        .add(list_participants, P::plan_read().person_only())
        .add(delete_participant, P::plan_write().person_only())
        .add(subscribe, P::plan_write().person_only())
        .add(unsubscribe, P::plan_write().person_only());
}

/// `blocks`, `relates_to` or `duplicates` (aliases, so the document derive sees a plain type).
type RelationTypeName = Wire<RelationType>;
/// `participant` or `watcher`.
type ParticipantRoleName = Wire<ParticipantRole>;
/// `add`, `remove` or `replace`.
type BatchModeName = Wire<BatchMode>;

/// A path uuid; anything else names nothing (404).
fn path_uuid(raw: &str) -> Result<Uuid, Error> {
    Uuid::parse_str(raw).map_err(|_| Error::not_found())
}

// ---------------------------------------------------------------------------------------------
// Answers

/// A person, as social answers name them.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberView {
    pub uuid: String,
    /// Full name.
    pub name: String,
}

impl From<&User> for MemberView {
    fn from(u: &User) -> Self {
        MemberView {
            uuid: u.id.to_string(),
            name: u.full_name(),
        }
    }
}

/// An agent named on a write.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExecutingAgent {
    pub name: String,
}

fn executing(agent: &Option<String>) -> Option<ExecutingAgent> {
    agent
        .as_ref()
        .map(|name| ExecutingAgent { name: name.clone() })
}

/// The task at the other end of a link.
#[derive(Debug, Serialize, ToSchema)]
pub struct LinkedTaskView {
    pub uuid: String,
    pub key: String,
    pub title: String,
}

/// A link between two tasks, as one of them lists it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RelationView {
    pub uuid: String,
    /// `blocks`, `relates_to` or `duplicates` (from the source to the target).
    pub relation_type: String,
    /// `outgoing`: this task is the source; `incoming`: the target.
    pub direction: String,
    pub other_task: LinkedTaskView,
    pub created_at: String,
}

impl From<&TaskLink> for RelationView {
    fn from(l: &TaskLink) -> Self {
        RelationView {
            uuid: l.relation.id.to_string(),
            relation_type: l.relation.relation_type.as_str().to_owned(),
            direction: l.direction.as_str().to_owned(),
            other_task: LinkedTaskView {
                uuid: l.other.id.to_string(),
                key: l.other.key(),
                title: l.other.title.clone(),
            },
            created_at: iso(l.relation.created_at),
        }
    }
}

/// A comment's author.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuthorView {
    pub uuid: String,
    pub name: String,
    pub full_name: String,
}

/// One emoji on a comment.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReactionSummaryView {
    pub emoji: String,
    pub count: u64,
    pub users: Vec<MemberView>,
    /// The caller is one of them.
    pub reacted: bool,
}

/// A comment.
#[derive(Debug, Serialize, ToSchema)]
pub struct CommentAnswer {
    pub uuid: String,
    /// Blank once deleted.
    pub body: String,
    /// Null when a key without a person wrote it.
    pub author: Option<AuthorView>,
    /// `agent` when an agent was named on the write, else `human`.
    pub provenance: String,
    pub executed_by_agent: Option<ExecutingAgent>,
    /// The comment this one answers.
    pub parent_comment: Option<String>,
    pub reactions: Vec<ReactionSummaryView>,
    /// People mentioned with `<@DB@uuid>`.
    pub mentions: Vec<String>,
    pub edited_at: Option<String>,
    pub is_deleted: bool,
    pub created_at: String,
}

impl From<&CommentView> for CommentAnswer {
    fn from(v: &CommentView) -> Self {
        let c = &v.comment;
        CommentAnswer {
            uuid: c.id.to_string(),
            body: c.body.clone(),
            author: v.author.as_ref().map(|u| AuthorView {
                uuid: u.id.to_string(),
                name: u.full_name(),
                full_name: u.full_name(),
            }),
            provenance: if c.agent_name.is_some() {
                "agent"
            } else {
                "human"
            }
            .to_owned(),
            executed_by_agent: executing(&c.agent_name),
            parent_comment: c.parent.map(|p| p.to_string()),
            reactions: v
                .reactions
                .iter()
                .map(|r| ReactionSummaryView {
                    emoji: r.emoji.clone(),
                    count: r.count,
                    users: r.users.iter().map(MemberView::from).collect(),
                    reacted: r.reacted,
                })
                .collect(),
            mentions: c.mentions.iter().map(|m| m.to_string()).collect(),
            edited_at: c.edited_at.map(iso),
            is_deleted: c.deleted_at.is_some(),
            created_at: iso(c.created_at),
        }
    }
}

/// One person's reaction.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReactionAnswer {
    pub emoji: String,
    /// Null once the person left the organization.
    pub user: Option<MemberView>,
    pub executed_by_agent: Option<ExecutingAgent>,
    pub created_at: String,
}

impl From<&ReactionView> for ReactionAnswer {
    fn from(v: &ReactionView) -> Self {
        ReactionAnswer {
            emoji: v.reaction.emoji.clone(),
            user: v.user.as_ref().map(MemberView::from),
            executed_by_agent: executing(&v.reaction.agent_name),
            created_at: iso(v.reaction.created_at),
        }
    }
}

/// A person following a task.
#[derive(Debug, Serialize, ToSchema)]
pub struct ParticipantAnswer {
    pub member: MemberView,
    /// `participant` or `watcher`.
    pub role: String,
    /// `added`, `owner`, `creator`, `mention` or `subscription`.
    pub source: String,
    pub is_muted: bool,
}

impl From<&ParticipantView> for ParticipantAnswer {
    fn from(v: &ParticipantView) -> Self {
        ParticipantAnswer {
            member: MemberView::from(&v.member),
            role: v.participant.role.as_str().to_owned(),
            source: v.participant.source.as_str().to_owned(),
            is_muted: v.participant.is_muted,
        }
    }
}

/// The caller's subscription to a task.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubscriptionAnswer {
    pub subscribed: bool,
    /// The caller's row while subscribed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participant: Option<ParticipantAnswer>,
}

/// A label in short.
#[derive(Debug, Serialize, ToSchema)]
pub struct LabelBrief {
    pub uuid: String,
    pub name: String,
    /// `#RRGGBB`.
    pub color: String,
}

impl From<&Label> for LabelBrief {
    fn from(l: &Label) -> Self {
        LabelBrief {
            uuid: l.id.to_string(),
            name: l.name.clone(),
            color: l.color.clone(),
        }
    }
}

/// An organization label seen from Plan.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlanLabelView {
    pub uuid: String,
    pub name: String,
    /// `#RRGGBB`.
    pub color: String,
    pub description: String,
    pub is_archived: bool,
}

impl From<&Label> for PlanLabelView {
    fn from(l: &Label) -> Self {
        PlanLabelView {
            uuid: l.id.to_string(),
            name: l.name.clone(),
            color: l.color.clone(),
            description: l.description.clone(),
            is_archived: l.is_archived,
        }
    }
}

/// A task's labels after a batch.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskLabelsAnswer {
    pub labels: Vec<LabelBrief>,
}

// ---------------------------------------------------------------------------------------------
// Relations

/// Body of `POST tasks/{t}/relations/`: a link from this task to `target_task`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RelationBody {
    #[schema(inline)]
    relation_type: RelationTypeName,
    /// `KEY-n` or uuid of a task the caller sees.
    target_task: String,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    request_body = RelationBody,
    responses(
        (status = 201, body = RelationView),
        (status = 400, description = "`invalid_relation` (a task to itself)", body = ErrorBody),
        (status = 403, description = "`task_archived`", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`relation_exists`, `relation_cycle`", body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/relations/")]
pub async fn add_relation(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
    body: PlanJson<RelationBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let link = state
        .plan
        .add_relation(
            &actor,
            &TaskRef::parse(&t)?,
            body.body.relation_type.0,
            &TaskRef::parse(&body.body.target_task)?,
        )
        .await?;
    Ok(HttpResponse::Created().json(RelationView::from(&link)))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    responses((status = 200, description = "Both directions, oldest first", body = Vec<RelationView>), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/tasks/{t}/relations/")]
pub async fn list_relations(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let links = state
        .plan
        .task_relations(&caller.0, &TaskRef::parse(&t)?)
        .await?;
    Ok(HttpResponse::Ok().json(links.iter().map(RelationView::from).collect::<Vec<_>>()))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("r" = String, Path)),
    responses((status = 204), (status = 403, description = "`task_archived`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/v1/plan/tasks/{t}/relations/{r}/")]
pub async fn delete_relation(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (t, r) = path.into_inner();
    state
        .plan
        .remove_relation(&caller.0, &TaskRef::parse(&t)?, RelationId(path_uuid(&r)?))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

// ---------------------------------------------------------------------------------------------
// Comments and reactions

/// Body of `POST tasks/{t}/comments/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentBody {
    /// At most 10,000 characters (`comment_body_too_long`); `<@DB@uuid>` mentions a person.
    body: String,
    /// Answers this comment of the same task (one level: `invalid_relation`).
    parent_comment: Option<Uuid>,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    request_body = CommentBody,
    responses(
        (status = 201, body = CommentAnswer),
        (status = 400, description = "`comment_body_too_long`, `invalid_relation`", body = ErrorBody),
        (status = 403, description = "`task_archived`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/comments/")]
pub async fn add_comment(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
    body: PlanJson<CommentBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let view = state
        .plan
        .add_comment(
            &actor,
            &TaskRef::parse(&t)?,
            &body.body.body,
            body.body.parent_comment.map(CommentId),
        )
        .await?;
    Ok(HttpResponse::Created().json(CommentAnswer::from(&view)))
}

/// Filters of `GET tasks/{t}/comments/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CommentQuery {
    /// A fragment of the body (case-insensitive).
    #[param(inline)]
    search: Option<Search>,
    /// Written on or after this day (UTC).
    #[param(inline)]
    start_date: Option<Day>,
    /// Written on or before this day (UTC).
    #[param(inline)]
    end_date: Option<Day>,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), CommentQuery, PageParams),
    responses((status = 200, description = "Oldest first", body = ListEnvelope<CommentAnswer>), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/tasks/{t}/comments/")]
pub async fn list_comments(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
    q: ListQuery<CommentQuery>,
) -> ApiResult<HttpResponse> {
    let filter = CommentFilter {
        search: search(q.filters.search.clone()),
        start_date: q.filters.start_date.map(|d| d.0),
        end_date: q.filters.end_date.map(|d| d.0),
    };
    let page = state
        .plan
        .list_comments(&caller.0, &TaskRef::parse(&t)?, &filter, q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(CommentAnswer::from))))
}

/// Body of `PATCH tasks/{t}/comments/{c}/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentEditBody {
    /// At most 10,000 characters (`comment_body_too_long`).
    body: String,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("c" = String, Path)),
    request_body = CommentEditBody,
    responses(
        (status = 200, body = CommentAnswer),
        (status = 400, description = "`comment_body_too_long`", body = ErrorBody),
        (status = 403, description = "`comment_not_author`, `task_archived`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[patch("/v1/plan/tasks/{t}/comments/{c}/")]
pub async fn edit_comment(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, String)>,
    body: PlanJson<CommentEditBody>,
) -> ApiResult<HttpResponse> {
    let (t, c) = path.into_inner();
    let actor = caller.acting(body.agent_name);
    let view = state
        .plan
        .edit_comment(
            &actor,
            &TaskRef::parse(&t)?,
            CommentId(path_uuid(&c)?),
            &body.body.body,
        )
        .await?;
    Ok(HttpResponse::Ok().json(CommentAnswer::from(&view)))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("c" = String, Path)),
    responses((status = 204, description = "Body blanked, row kept"), (status = 403, description = "`comment_not_author` (author or organization admin), `task_archived`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/v1/plan/tasks/{t}/comments/{c}/")]
pub async fn delete_comment(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (t, c) = path.into_inner();
    state
        .plan
        .delete_comment(&caller.0, &TaskRef::parse(&t)?, CommentId(path_uuid(&c)?))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Body of `POST tasks/{t}/comments/{c}/reactions/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReactionBody {
    /// One emoji, at most 32 characters (`reaction_invalid_emoji`).
    #[schema(example = "👍")]
    emoji: String,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("c" = String, Path)),
    request_body = ReactionBody,
    responses(
        (status = 200, description = "The whole comment (idempotent)", body = CommentAnswer),
        (status = 400, description = "`reaction_invalid_emoji`, `reaction_limit_reached` (20 different emojis, `extra.limit`)", body = ErrorBody),
        (status = 403, description = "`task_archived`, `insufficient_scope` (keys without a person)", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/comments/{c}/reactions/")]
pub async fn add_reaction(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, String)>,
    body: PlanJson<ReactionBody>,
) -> ApiResult<HttpResponse> {
    let (t, c) = path.into_inner();
    let actor = caller.acting(body.agent_name);
    let view = state
        .plan
        .add_reaction(
            &actor,
            &TaskRef::parse(&t)?,
            CommentId(path_uuid(&c)?),
            &body.body.emoji,
        )
        .await?;
    Ok(HttpResponse::Ok().json(CommentAnswer::from(&view)))
}

/// Filter of `GET …/reactions/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReactionQuery {
    /// Only this emoji.
    emoji: Option<String>,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("c" = String, Path), ReactionQuery, PageParams),
    responses((status = 200, description = "Oldest first", body = ListEnvelope<ReactionAnswer>), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/tasks/{t}/comments/{c}/reactions/")]
pub async fn list_reactions(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, String)>,
    q: ListQuery<ReactionQuery>,
) -> ApiResult<HttpResponse> {
    let (t, c) = path.into_inner();
    let page: Page<ReactionView> = state
        .plan
        .list_reactions(
            &caller.0,
            &TaskRef::parse(&t)?,
            CommentId(path_uuid(&c)?),
            q.filters.emoji.as_deref(),
            q.paging.request(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(ReactionAnswer::from))))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("c" = String, Path), ("emoji" = String, Path, description = "Percent-encoded")),
    responses((status = 204, description = "Idempotent"), (status = 403, description = "`task_archived`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/v1/plan/tasks/{t}/comments/{c}/reactions/{emoji}/")]
pub async fn delete_reaction(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, String, String)>,
) -> ApiResult<HttpResponse> {
    let (t, c, emoji) = path.into_inner();
    state
        .plan
        .remove_reaction(
            &caller.0,
            &TaskRef::parse(&t)?,
            CommentId(path_uuid(&c)?),
            &emoji,
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

// ---------------------------------------------------------------------------------------------
// Participants and subscription

/// Body of `POST tasks/{t}/participants/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ParticipantBody {
    /// An active person of the organization who can see the board.
    user_uuid: Uuid,
    /// Default `participant`.
    #[schema(inline)]
    role: Option<ParticipantRoleName>,
    is_muted: Option<bool>,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    request_body = ParticipantBody,
    responses(
        (status = 201, description = "Added", body = ParticipantAnswer),
        (status = 200, description = "Already on the task: its row, with the role and mute sent", body = ParticipantAnswer),
        (status = 400, description = "`user_inactive`, `participant_cannot_access_board`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/participants/")]
pub async fn add_participant(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
    body: PlanJson<ParticipantBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let b = body.body;
    let (view, created) = state
        .plan
        .add_participant(
            &actor,
            &TaskRef::parse(&t)?,
            teamcomm_kernel::UserId(b.user_uuid),
            b.role.map(|r| r.0),
            b.is_muted,
        )
        .await?;
    let answer = ParticipantAnswer::from(&view);
    Ok(if created {
        HttpResponse::Created().json(answer)
    } else {
        HttpResponse::Ok().json(answer)
    })
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    responses((status = 200, description = "Oldest first", body = Vec<ParticipantAnswer>), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/tasks/{t}/participants/")]
pub async fn list_participants(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let rows = state
        .plan
        .list_participants(&caller.0, &TaskRef::parse(&t)?)
        .await?;
    Ok(HttpResponse::Ok().json(rows.iter().map(ParticipantAnswer::from).collect::<Vec<_>>()))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid"), ("u" = String, Path, description = "The person's uuid")),
    responses((status = 204, description = "Idempotent"), (status = 404, body = ErrorBody))
)]
#[delete("/v1/plan/tasks/{t}/participants/{u}/")]
pub async fn delete_participant(
    state: web::Data<AppState>,
    caller: PlanCaller,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (t, u) = path.into_inner();
    state
        .plan
        .remove_participant(
            &caller.0,
            &TaskRef::parse(&t)?,
            teamcomm_kernel::UserId(path_uuid(&u)?),
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    responses((status = 200, description = "The caller watches the task", body = SubscriptionAnswer), (status = 404, body = ErrorBody))
)]
#[post("/v1/plan/tasks/{t}/subscription/")]
pub async fn subscribe(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let view = state
        .plan
        .subscribe(&caller.0, &TaskRef::parse(&t)?)
        .await?;
    Ok(HttpResponse::Ok().json(SubscriptionAnswer {
        subscribed: true,
        participant: Some(ParticipantAnswer::from(&view)),
    }))
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    responses((status = 200, description = "The caller no longer follows the task", body = SubscriptionAnswer), (status = 404, body = ErrorBody))
)]
#[delete("/v1/plan/tasks/{t}/subscription/")]
pub async fn unsubscribe(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state
        .plan
        .unsubscribe(&caller.0, &TaskRef::parse(&t)?)
        .await?;
    Ok(HttpResponse::Ok().json(SubscriptionAnswer {
        subscribed: false,
        participant: None,
    }))
}

// ---------------------------------------------------------------------------------------------
// Labels

/// Body of `POST tasks/{t}/labels/batch/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskLabelsBody {
    #[schema(inline)]
    mode: BatchModeName,
    /// At most 50 labels of the organization (404 naming the others in `extra.uuids`).
    label_uuids: Vec<Uuid>,
}

#[utoipa::path(
    tag = "plan",
    params(("t" = String, Path, description = "`KEY-n` or uuid")),
    request_body = TaskLabelsBody,
    responses(
        (status = 200, description = "The task's labels", body = TaskLabelsAnswer),
        (status = 400, description = "`too_many_items`, `archived_label_not_assignable`", body = ErrorBody),
        (status = 403, description = "`task_archived`", body = ErrorBody),
        (status = 404, description = "The task, or labels (`extra.uuids`)", body = ErrorBody),
    )
)]
#[post("/v1/plan/tasks/{t}/labels/batch/")]
pub async fn batch_task_labels(
    state: web::Data<AppState>,
    caller: PlanCaller,
    t: web::Path<String>,
    body: PlanJson<TaskLabelsBody>,
) -> ApiResult<HttpResponse> {
    let actor = caller.acting(body.agent_name);
    let labels: Vec<LabelId> = body.body.label_uuids.iter().copied().map(LabelId).collect();
    let set = state
        .plan
        .change_task_labels(&actor, &TaskRef::parse(&t)?, body.body.mode.0, &labels)
        .await?;
    Ok(HttpResponse::Ok().json(TaskLabelsAnswer {
        labels: set.iter().map(LabelBrief::from).collect(),
    }))
}

/// Filters of `GET labels/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PlanLabelQuery {
    /// A fragment of the name (case-insensitive).
    #[param(inline)]
    search: Option<Search>,
    /// Archived labels too.
    include_archived: Option<bool>,
}

#[utoipa::path(
    tag = "plan",
    params(PlanLabelQuery, PageParams),
    responses((status = 200, description = "By name", body = ListEnvelope<PlanLabelView>), (status = 400, body = ErrorBody))
)]
#[get("/v1/plan/labels/")]
pub async fn list_plan_labels(
    state: web::Data<AppState>,
    caller: PlanCaller,
    q: ListQuery<PlanLabelQuery>,
) -> ApiResult<HttpResponse> {
    let filter = LabelFilter {
        include_archived: q.filters.include_archived.unwrap_or(false),
        search: search(q.filters.search.clone()),
    };
    let page = state
        .plan
        .list_plan_labels(&caller.0, &filter, q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(PlanLabelView::from))))
}

/// Body of `POST labels/` and `POST boards/{b}/labels/`: an organization label. Its name is
/// unique in the organization regardless of case (`duplicate_name`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanLabelBody {
    #[schema(inline)]
    name: Name<{ MAX_LABEL_NAME }>,
    /// `#RRGGBB`; default (or `""`) `#4A90E2`.
    #[schema(pattern = "^(#[0-9A-Fa-f]{6})?$", example = "#4A90E2")]
    color: Option<String>,
    /// One line, at most 500 characters.
    #[schema(inline)]
    description: Option<OptionalName<{ MAX_LABEL_DESCRIPTION }>>,
}

#[utoipa::path(
    tag = "plan",
    request_body = PlanLabelBody,
    responses(
        (status = 201, body = PlanLabelView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`paid_plan_required`, `insufficient_scope` (keys without a person)", body = ErrorBody),
        (status = 409, description = "`duplicate_name`", body = ErrorBody),
    )
)]
#[post("/v1/plan/labels/")]
pub async fn create_plan_label(
    state: web::Data<AppState>,
    caller: PlanCaller,
    body: PlanJson<PlanLabelBody>,
) -> ApiResult<HttpResponse> {
    let b = body.body;
    let label = state
        .plan
        .create_plan_label(
            &caller.0,
            &b.name.0,
            b.color.as_deref(),
            b.description.as_ref().map(|d| d.0.as_str()),
        )
        .await?;
    Ok(HttpResponse::Created().json(PlanLabelView::from(&label)))
}

/// Body of `PATCH labels/{l}/`: the fields to change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanLabelPatch {
    /// One visible line, at most 50 characters.
    #[schema(inline)]
    name: Option<Name<{ MAX_LABEL_NAME }>>,
    /// `#RRGGBB`, or `""` for the default colour.
    #[schema(pattern = "^(#[0-9A-Fa-f]{6})?$", example = "#4A90E2")]
    color: Option<String>,
    /// One line, at most 500 characters; `""` clears it.
    #[schema(inline)]
    description: Option<OptionalName<{ MAX_LABEL_DESCRIPTION }>>,
    /// True archives the label, false restores it.
    is_archived: Option<bool>,
}

#[utoipa::path(
    tag = "plan",
    params(("l" = String, Path)),
    request_body = PlanLabelPatch,
    responses(
        (status = 200, body = PlanLabelView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`permission_denied` (its creator or an admin)", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`duplicate_name`", body = ErrorBody),
    )
)]
#[patch("/v1/plan/labels/{l}/")]
pub async fn update_plan_label(
    state: web::Data<AppState>,
    caller: PlanCaller,
    l: web::Path<String>,
    body: PlanJson<PlanLabelPatch>,
) -> ApiResult<HttpResponse> {
    let b = body.body;
    let changes = LabelChanges {
        name: b.name.map(|n| n.0),
        color: b.color,
        description: b.description.map(|d| d.0),
        is_archived: b.is_archived,
    };
    let label = state
        .plan
        .update_plan_label(&caller.0, LabelId(path_uuid(&l)?), changes)
        .await?;
    Ok(HttpResponse::Ok().json(PlanLabelView::from(&label)))
}

#[utoipa::path(
    tag = "plan",
    params(("l" = String, Path)),
    responses(
        (status = 204),
        (status = 403, description = "`permission_denied` (admins only)", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`label_in_use` (`extra.usage_count`): archive it instead", body = ErrorBody),
    )
)]
#[delete("/v1/plan/labels/{l}/")]
pub async fn delete_plan_label(
    state: web::Data<AppState>,
    caller: PlanCaller,
    l: web::Path<String>,
) -> ApiResult<HttpResponse> {
    state
        .plan
        .delete_plan_label(&caller.0, LabelId(path_uuid(&l)?))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "plan",
    params(("b" = String, Path, description = "Board key or uuid")),
    responses((status = 200, description = "The organization's live labels, by name", body = Vec<LabelBrief>), (status = 404, body = ErrorBody))
)]
#[get("/v1/plan/boards/{b}/labels/")]
pub async fn list_board_labels(
    state: web::Data<AppState>,
    caller: PlanCaller,
    b: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let labels = state
        .plan
        .board_labels(&caller.0, &BoardRef::parse(&b)?)
        .await?;
    Ok(HttpResponse::Ok().json(labels.iter().map(LabelBrief::from).collect::<Vec<_>>()))
}

#[utoipa::path(
    tag = "plan",
    params(("b" = String, Path, description = "Board key or uuid")),
    request_body = PlanLabelBody,
    responses(
        (status = 201, description = "An organization label", body = PlanLabelView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`paid_plan_required`", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`duplicate_name`", body = ErrorBody),
    )
)]
#[post("/v1/plan/boards/{b}/labels/")]
pub async fn create_board_label(
    state: web::Data<AppState>,
    caller: PlanCaller,
    b: web::Path<String>,
    body: PlanJson<PlanLabelBody>,
) -> ApiResult<HttpResponse> {
    let body = body.body;
    let label = state
        .plan
        .create_board_label(
            &caller.0,
            &BoardRef::parse(&b)?,
            &body.name.0,
            body.color.as_deref(),
            body.description.as_ref().map(|d| d.0.as_str()),
        )
        .await?;
    Ok(HttpResponse::Created().json(PlanLabelView::from(&label)))
}
