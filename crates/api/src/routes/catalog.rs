//! Templates, report channels and mood tracking.

use actix_web::{HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use teamcomm_forms::{Template, TemplateFilter};
use teamcomm_org::MoodEntry;
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{JsonBody, Query, TemplateTypeName};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::{AtLeastOne, Day, Search, search};
use crate::state::AppState;
use crate::views::{ChannelView, iso};

/// A check-in or form template.
#[derive(Debug, Serialize, ToSchema)]
pub struct TemplateView {
    pub id: String,
    pub uuid: String,
    pub name: String,
    /// `checkins` or `forms`.
    #[serde(rename = "type")]
    pub template_type: String,
    pub system_default: bool,
    pub description: String,
    pub intro_message: String,
    pub outro_message: String,
    #[schema(value_type = Vec<Object>)]
    pub questions: Vec<Value>,
    pub created_at: String,
}

impl From<&Template> for TemplateView {
    fn from(t: &Template) -> Self {
        TemplateView {
            id: t.id.to_string(),
            uuid: t.id.to_string(),
            name: t.name.clone(),
            template_type: t.template_type.as_str().to_owned(),
            system_default: t.system_default,
            description: t.description.clone(),
            intro_message: t.intro_message.clone(),
            outro_message: t.outro_message.clone(),
            questions: t.questions.clone(),
            created_at: iso(t.created_at),
        }
    }
}

/// Filters of `GET /v1/templates/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TemplateListQuery {
    /// `checkins` or `forms`.
    #[serde(rename = "type")]
    #[param(inline, rename = "type")]
    template_type: Option<TemplateTypeName>,
    /// Built-in templates only (true) or the organization's own (false).
    system_default: Option<bool>,
    /// Name fragment, at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
}

#[utoipa::path(
    tag = "templates",
    params(TemplateListQuery, PageParams),
    responses((status = 200, body = ListEnvelope<TemplateView>), (status = 400, body = ErrorBody))
)]
#[get("/v1/templates/")]
pub async fn list_templates(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<TemplateListQuery>,
) -> ApiResult<HttpResponse> {
    let filter = TemplateFilter {
        template_type: q.filters.template_type.map(|t| t.0),
        system_default: q.filters.system_default,
        search: search(q.filters.search.clone()),
    };
    let page = state
        .templates
        .list_templates(caller.0.org.id, &filter, q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map(|t| TemplateView::from(&t)))))
}

#[utoipa::path(
    tag = "templates",
    params(("uuid" = String, Path)),
    responses((status = 200, body = TemplateView), (status = 404, body = ErrorBody))
)]
#[get("/v1/templates/{uuid}/")]
pub async fn get_template(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<uuid::Uuid>,
) -> ApiResult<HttpResponse> {
    let t = state.templates.get_template(caller.0.org.id, *id).await?;
    Ok(HttpResponse::Ok().json(TemplateView::from(&t)))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ChannelList {
    pub channels: Vec<ChannelView>,
    pub total: usize,
}

/// Filters of `GET /v1/report-channels/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChannelListQuery {
    /// Name fragment, at most 256 characters.
    #[param(inline)]
    name: Option<Search>,
    /// Alias of `name`.
    #[param(inline)]
    search: Option<Search>,
    /// At most this many channels (`total` still counts them all).
    #[param(inline)]
    limit: Option<AtLeastOne>,
}

#[utoipa::path(
    tag = "report-channels",
    params(ChannelListQuery),
    responses((status = 200, body = ChannelList), (status = 401, body = ErrorBody))
)]
#[get("/v1/report-channels/")]
pub async fn list_report_channels(
    state: web::Data<AppState>,
    caller: Caller,
    q: Query<ChannelListQuery>,
) -> ApiResult<HttpResponse> {
    let ChannelListQuery {
        name,
        search: alias,
        limit,
    } = q.0;
    let name = search(name.or(alias));
    let org = caller.0.org.id;
    let listing = state.channels.list_current(org, name.as_deref()).await?;
    if let Some(e) = &listing.stale {
        tracing::warn!(%org, error = %e, "the platform's channels could not be listed; answering the stored ones");
    }
    let channels = listing.channels;
    let total = channels.len();
    let limit = limit.map_or(usize::MAX, |l| usize::try_from(l.0).unwrap_or(usize::MAX));
    let channels = channels.iter().take(limit).map(ChannelView::from).collect();
    Ok(HttpResponse::Ok().json(ChannelList { channels, total }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MoodView {
    /// The caller's score for the day, or null.
    pub motivation: Option<MoodScore>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MoodScore {
    pub score: i16,
    pub date: String,
    pub created_at: String,
}

impl From<&MoodEntry> for MoodScore {
    fn from(m: &MoodEntry) -> Self {
        MoodScore {
            score: m.score,
            date: m.date.to_string(),
            created_at: iso(m.created_at),
        }
    }
}

/// `?date=` of `GET /v1/mood/track/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MoodQuery {
    /// YYYY-MM-DD; default the caller's today, in their time zone.
    #[param(inline)]
    date: Option<Day>,
}

#[utoipa::path(
    tag = "mood",
    params(MoodQuery),
    responses((status = 200, body = MoodView), (status = 400, body = ErrorBody))
)]
#[get("/v1/mood/track/")]
pub async fn get_mood(
    state: web::Data<AppState>,
    caller: Caller,
    q: Query<MoodQuery>,
) -> ApiResult<HttpResponse> {
    let entry = state
        .moods
        .mood(caller.user(), q.0.date.map(|d| d.0))
        .await?;
    Ok(HttpResponse::Ok().json(MoodView {
        motivation: entry.as_ref().map(MoodScore::from),
    }))
}

/// Body of `POST /v1/mood/track/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoodBody {
    /// Any other value answers `invalid_score`.
    #[schema(minimum = 1, maximum = 5, extensions(("x-error-code" = json!("invalid_score"))))]
    score: i64,
    /// YYYY-MM-DD; default the caller's today, in their time zone.
    #[schema(value_type = Option<String>, format = Date, extensions(("x-error-code" = json!("invalid_date_range"))))]
    date: Option<String>,
}

#[utoipa::path(
    tag = "mood",
    request_body = MoodBody,
    responses(
        (status = 200, description = "Recorded"),
        (status = 400, description = "`invalid_score`, `invalid_date_range`", body = ErrorBody),
        (status = 409, description = "`motivation_score_already_completed`", body = ErrorBody),
    )
)]
#[post("/v1/mood/track/")]
pub async fn track_mood(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<MoodBody>,
) -> ApiResult<HttpResponse> {
    let MoodBody { score, date } = body.0;
    // The schema already refused a malformed date.
    let date = date
        .as_deref()
        .and_then(teamcomm_kernel::filters::parse_day);
    let entry = state.moods.track_mood(caller.user(), score, date).await?;
    let detail = "The mood response has been tracked";
    Ok(HttpResponse::Ok().json(json!({
        "detail": detail,
        "details": detail,
        "motivation": MoodScore::from(&entry),
    })))
}
