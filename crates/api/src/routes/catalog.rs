//! Templates, report channels and mood tracking.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use teamcomm_forms::{Template, TemplateFilter, TemplateType};
use teamcomm_kernel::{Error, filters};
use teamcomm_messaging::Channel;
use teamcomm_org::{MoodEntry, parse_date, validate_score};
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::body::{Body, JsonBody, iso};
use crate::error::ApiResult;
use crate::openapi::ErrorBody;
use crate::paging::{Paging, query_params};
use crate::state::AppState;

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

#[derive(Debug, Serialize, ToSchema)]
pub struct TemplateList {
    pub count: u64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<TemplateView>,
}

#[utoipa::path(
    tag = "templates",
    params(
        ("type" = Option<String>, Query, description = "`checkins` or `forms`"),
        ("system_default" = Option<bool>, Query), ("search" = Option<String>, Query),
        ("page" = Option<u64>, Query, minimum = 1), ("page_size" = Option<u64>, Query, minimum = 1),
    ),
    responses((status = 200, body = TemplateList), (status = 400, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/templates/")]
pub async fn list_templates(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    let q = query_params(&req);
    let filter = TemplateFilter {
        template_type: q.get("type").map(|t| TemplateType::parse(t)).transpose()?,
        system_default: filters::flag(
            q.get("system_default").map(String::as_str),
            "system_default",
        )?,
        search: filters::search(q.get("search").map(String::as_str))?,
    };
    let paging = Paging::from_request(&req)?;
    let page = state
        .templates
        .list_templates(caller.0.org.id, &filter, paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(paging.envelope(
        &state.settings.base_url,
        page.map(|t| TemplateView::from(&t)),
    )))
}

#[utoipa::path(
    tag = "templates",
    params(("uuid" = String, Path)),
    responses((status = 200, body = TemplateView), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/templates/{uuid}/")]
pub async fn get_template(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id = uuid::Uuid::parse_str(&id).map_err(|_| Error::not_found())?;
    let t = state.templates.get_template(caller.0.org.id, id).await?;
    Ok(HttpResponse::Ok().json(TemplateView::from(&t)))
}

/// A chat channel usable in `report_channels`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChannelView {
    pub id: String,
    pub name: String,
    pub platform: String,
    /// `channel`, `private_channel`, `group_chat` or `direct_message`.
    #[serde(rename = "type")]
    pub channel_type: String,
}

impl From<&Channel> for ChannelView {
    fn from(c: &Channel) -> Self {
        ChannelView {
            id: c.id.clone(),
            name: c.name.clone(),
            platform: c.platform.clone(),
            channel_type: c.channel_type.as_str().to_owned(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ChannelList {
    pub channels: Vec<ChannelView>,
    pub total: usize,
}

#[utoipa::path(
    tag = "report-channels",
    params(("name" = Option<String>, Query, description = "Name fragment"), ("limit" = Option<u64>, Query, minimum = 1)),
    responses((status = 200, body = ChannelList), (status = 401, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/report-channels/")]
pub async fn list_report_channels(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    let q = query_params(&req);
    let name = filters::search(
        q.get("name")
            .or_else(|| q.get("search"))
            .map(String::as_str),
    )?;
    let limit = match q.get("limit") {
        None => usize::MAX,
        Some(l) => l
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| {
                Error::new(
                    teamcomm_kernel::ErrorCode::InvalidFilterValue,
                    "`limit` must be a whole number of at least 1.",
                )
                .with_extra("parameter", "limit")
            })?,
    };
    let channels = state
        .channels
        .list_channels(caller.0.org.id, name.as_deref())
        .await?;
    let total = channels.len();
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

fn mood_date(raw: Option<&str>) -> Result<Option<time::Date>, Error> {
    raw.map(|d| {
        parse_date(d).ok_or_else(|| {
            Error::new(
                teamcomm_kernel::ErrorCode::InvalidDateRange,
                "`date` must be a date in the format YYYY-MM-DD.",
            )
            .with_extra("parameter", "date")
        })
    })
    .transpose()
}

#[utoipa::path(
    tag = "mood",
    params(("date" = Option<time::Date>, Query, description = "YYYY-MM-DD; default today (UTC)")),
    responses((status = 200, body = MoodView), (status = 400, body = ErrorBody)),
    security(("api_key" = []), ("cli_token" = []))
)]
#[get("/v1/mood/track/")]
pub async fn get_mood(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> ApiResult<HttpResponse> {
    let q = query_params(&req);
    let date = mood_date(q.get("date").map(String::as_str))?;
    let entry = state.directory.mood(caller.user(), date).await?;
    Ok(HttpResponse::Ok().json(MoodView {
        motivation: entry.as_ref().map(MoodScore::from),
    }))
}

/// Body of `POST /v1/mood/track/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct MoodBody {
    /// 1 to 5.
    score: i64,
    /// YYYY-MM-DD; default today (UTC).
    date: Option<String>,
}

#[utoipa::path(
    tag = "mood",
    request_body = MoodBody,
    responses(
        (status = 200, description = "Recorded"),
        (status = 400, description = "`invalid_score`, `invalid_date_range`", body = ErrorBody),
        (status = 409, description = "`motivation_score_already_completed`", body = ErrorBody),
    ),
    security(("api_key" = []), ("cli_token" = []))
)]
#[post("/v1/mood/track/")]
pub async fn track_mood(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let Value::Object(mut map) = body.0 else {
        return Err(Error::new(
            teamcomm_kernel::ErrorCode::ParamsValidationError,
            "Expected a JSON object as the request body.",
        )
        .into());
    };
    let score = match map.remove("score") {
        Some(Value::Number(n)) if n.is_i64() => validate_score(n.as_i64().unwrap_or_default())?,
        _ => return Err(validate_score(0).unwrap_err().into()),
    };
    let mut b = Body::object(Value::Object(map), &["date"])?;
    let date = b.string("date");
    b.finish()?;
    let entry = state
        .directory
        .track_mood(caller.user(), score, mood_date(date.as_deref())?)
        .await?;
    let detail = "The mood response has been tracked";
    Ok(HttpResponse::Ok().json(json!({
        "detail": detail,
        "details": detail,
        "motivation": MoodScore::from(&entry),
    })))
}
