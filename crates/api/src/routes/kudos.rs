//! `/v1/kudos/`: giving kudos, boosting them, the caller's and the organization's lists, the
//! wall of fame and the company values; the operator registers company values. Rules in
//! `teamcomm_kudos::KudosService`.

use actix_web::{HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use teamcomm_kernel::{OrgId, Page};
use teamcomm_kudos::{
    CompanyValue, GiveKudos, Kudos, KudosListFilter, MAX_COMPANY_VALUE_NAME, Standing, WallOfFame,
};
use teamcomm_org::User;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::{Caller, Operator};
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{JsonBody, Name};
use crate::paging::{ListEnvelope, ListQuery, NoFilters, PageParams};
use crate::params::{Day, KudosFilter, ReceiverRef, Search, SenderRef, search};
use crate::state::AppState;
use crate::views::iso;

/// A person named by kudos (receiver, booster, wall-of-fame entry).
#[derive(Debug, Serialize, ToSchema)]
pub struct KudosPersonView {
    pub uuid: String,
    pub full_name: String,
}

impl From<&User> for KudosPersonView {
    fn from(u: &User) -> Self {
        KudosPersonView {
            uuid: u.id.to_string(),
            full_name: u.full_name(),
        }
    }
}

/// Who gave kudos.
#[derive(Debug, Serialize, ToSchema)]
pub struct KudosGiverView {
    pub uuid: String,
    pub full_name: String,
    pub image: Option<String>,
    /// `admin`, `member` or `guest`.
    pub role: &'static str,
}

/// A company value. `value` repeats `name` (the wall of fame reads `value`).
#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyValueView {
    pub id: String,
    pub name: String,
    pub value: String,
    pub emoji: String,
}

impl From<&CompanyValue> for CompanyValueView {
    fn from(v: &CompanyValue) -> Self {
        CompanyValueView {
            id: v.id.to_string(),
            name: v.name.clone(),
            value: v.name.clone(),
            emoji: v.emoji.clone(),
        }
    }
}

/// Kudos. The `kudos.posted` event carries this object as an admin sees it (docs/events.md).
#[derive(Debug, Serialize, ToSchema)]
pub struct KudosView {
    pub id: String,
    /// The same as `id`.
    pub uuid: String,
    /// Always null: kudos here are not threaded.
    #[schema(value_type = Option<String>)]
    pub parent: Option<String>,
    /// The giver; null for anonymous kudos, except to their giver.
    pub user: Option<KudosGiverView>,
    /// By name.
    pub receivers: Vec<KudosPersonView>,
    pub company_value: Option<CompanyValueView>,
    pub content: String,
    pub is_anonymous: bool,
    pub by_dailybot: bool,
    /// Always empty.
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    /// How many +1s others added.
    pub boosts: usize,
    /// Who added them, oldest first.
    pub boosted_by: Vec<KudosPersonView>,
    pub created_at: String,
}

impl From<&Kudos> for KudosView {
    fn from(k: &Kudos) -> Self {
        KudosView {
            id: k.id.to_string(),
            uuid: k.id.to_string(),
            parent: None,
            user: k.giver.as_ref().map(|g| KudosGiverView {
                uuid: g.id.to_string(),
                full_name: g.full_name(),
                image: g.image.clone(),
                role: g.role.as_str(),
            }),
            receivers: k.receivers.iter().map(KudosPersonView::from).collect(),
            company_value: k.company_value.as_ref().map(CompanyValueView::from),
            content: k.content.clone(),
            is_anonymous: k.is_anonymous,
            by_dailybot: k.by_dailybot,
            metadata: Map::new(),
            boosts: k.boosted_by.len(),
            boosted_by: k.boosted_by.iter().map(KudosPersonView::from).collect(),
            created_at: iso(k.created_at),
        }
    }
}

/// Body of `POST /v1/kudos/`. Name receivers in `receivers` (people and teams merged), in
/// `users_receivers` and `teams_receivers`, or both ways (the vendor's CLI sends both).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GiveKudosBody {
    /// The message; line breaks allowed.
    #[schema(min_length = 1, max_length = 2000)]
    content: String,
    /// People and teams of the organization: each UUID is looked up as a person, then as a team.
    #[schema(max_items = 100)]
    receivers: Option<Vec<Uuid>>,
    /// People of the organization (inactive people and strangers are skipped;
    /// `no_valid_users` when none is left).
    #[schema(max_items = 100)]
    users_receivers: Option<Vec<Uuid>>,
    /// Teams of the organization: every active member receives, the giver excepted
    /// (`no_valid_team` for a team that is not an active team of the organization).
    #[schema(max_items = 100)]
    teams_receivers: Option<Vec<Uuid>>,
    /// A company value's `id`, or its name in any case (`company_value_not_found`).
    #[schema(max_length = 100)]
    company_value: Option<String>,
    /// Hide the giver from everyone but themself. Default false.
    is_anonymous: Option<bool>,
    /// Sent in the bot's name. Default false.
    by_dailybot: Option<bool>,
}

impl From<GiveKudosBody> for GiveKudos {
    fn from(b: GiveKudosBody) -> Self {
        GiveKudos {
            content: b.content,
            receivers: b.receivers.unwrap_or_default(),
            users_receivers: b.users_receivers.unwrap_or_default(),
            teams_receivers: b.teams_receivers.unwrap_or_default(),
            company_value: b.company_value,
            is_anonymous: b.is_anonymous.unwrap_or(false),
            by_dailybot: b.by_dailybot.unwrap_or(false),
        }
    }
}

#[utoipa::path(
    tag = "kudos",
    request_body = GiveKudosBody,
    responses(
        (status = 201, description = "Given; `kudos.posted` is written with them", body = KudosView),
        (status = 400, description = "`no_valid_users`, `no_valid_team`, `no_users_found`, `self_kudos_not_allowed`, `company_value_not_found`, `params_validation_error`", body = ErrorBody),
        (status = 406, description = "`kudos_daily_limit_reached`: 10 kudos per giver per day, the giver's local day (`extra.limit`, `extra.retry_after` in seconds until their midnight)", body = ErrorBody),
    )
)]
#[post("/v1/kudos/")]
pub async fn give_kudos(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<GiveKudosBody>,
) -> ApiResult<HttpResponse> {
    let kudos = state.kudos.give(caller.user(), body.0.into()).await?;
    Ok(HttpResponse::Created().json(KudosView::from(&kudos)))
}

/// Filters of `GET /v1/kudos/` and `GET /v1/kudos/organization/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct KudosListQuery {
    /// `kudos_received` or `kudos_given` (any case), relative to the caller. Without it, the
    /// caller's list holds what they gave or received, the organization's list everything.
    /// (`not_valid_kudos_filter` is a deprecated alias of `invalid_kudos_filter`, never sent.)
    #[param(inline)]
    filter: Option<KudosFilter>,
    /// Kudos given by this person (anonymous kudos match only for their own giver).
    #[param(inline)]
    sender_uuid: Option<SenderRef>,
    /// Kudos received by this person.
    #[param(inline)]
    receiver_uuid: Option<ReceiverRef>,
    /// Fragment of the message, of a receiver's or of the giver's name; at most 256
    /// characters.
    #[param(inline)]
    search: Option<Search>,
    /// First day, YYYY-MM-DD, on the caller's wall clock.
    #[param(inline)]
    start_date: Option<Day>,
    /// Last day, YYYY-MM-DD, on the caller's wall clock (`invalid_date_range` before
    /// `start_date`).
    #[param(inline)]
    end_date: Option<Day>,
}

impl From<&KudosListQuery> for KudosListFilter {
    fn from(q: &KudosListQuery) -> Self {
        KudosListFilter {
            direction: q.filter.map(|f| f.0),
            sender: q.sender_uuid.map(|s| s.0),
            receiver: q.receiver_uuid.map(|r| r.0),
            search: search(q.search.clone()),
            start_date: q.start_date.map(|d| d.0),
            end_date: q.end_date.map(|d| d.0),
        }
    }
}

fn kudos_page(page: Page<Kudos>) -> Page<KudosView> {
    page.map(|k| KudosView::from(&k))
}

#[utoipa::path(
    tag = "kudos",
    params(KudosListQuery, PageParams),
    responses(
        (status = 200, description = "The kudos the caller gave or received, newest first", body = ListEnvelope<KudosView>),
        (status = 400, description = "`invalid_kudos_filter`, `invalid_sender_uuid`, `invalid_receiver_uuid`, `search_query_too_long`, `invalid_date_range`", body = ErrorBody),
    )
)]
#[get("/v1/kudos/")]
pub async fn list_kudos(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<KudosListQuery>,
) -> ApiResult<HttpResponse> {
    let page = state
        .kudos
        .list_own(
            caller.user(),
            &KudosListFilter::from(&q.filters),
            q.paging.request(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(kudos_page(page))))
}

#[utoipa::path(
    tag = "kudos",
    params(KudosListQuery, PageParams),
    responses(
        (status = 200, description = "Every kudos of the organization, newest first", body = ListEnvelope<KudosView>),
        (status = 400, description = "`invalid_kudos_filter`, `invalid_sender_uuid`, `invalid_receiver_uuid`, `search_query_too_long`, `invalid_date_range`", body = ErrorBody),
        (status = 403, description = "`org_admin_required`", body = ErrorBody),
    )
)]
#[get("/v1/kudos/organization/")]
pub async fn list_organization_kudos(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<KudosListQuery>,
) -> ApiResult<HttpResponse> {
    let page = state
        .kudos
        .list_organization(
            caller.user(),
            &KudosListFilter::from(&q.filters),
            q.paging.request(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(kudos_page(page))))
}

#[utoipa::path(
    tag = "kudos",
    params(("uuid" = String, Path, description = "Kudos")),
    responses(
        (status = 200, description = "The kudos with the caller's +1", body = KudosView),
        (status = 400, description = "`self_kudos_not_allowed`: the caller received them", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`kudos_already_boosted`: the caller gave them or already boosted them", body = ErrorBody),
    )
)]
#[post("/v1/kudos/{uuid}/boost/")]
pub async fn boost_kudos(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let kudos = state.kudos.boost(caller.user(), *id).await?;
    Ok(HttpResponse::Ok().json(KudosView::from(&kudos)))
}

/// Filters of `GET /v1/kudos/wall-of-fame/` (all time by default); `limit`/`offset` or
/// `page`/`page_size` page the leaderboard.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WallOfFameQuery {
    /// First day, YYYY-MM-DD, on the caller's wall clock.
    #[param(inline)]
    start_date: Option<Day>,
    /// Last day, YYYY-MM-DD, on the caller's wall clock.
    #[param(inline)]
    end_date: Option<Day>,
}

/// The person who received the most kudos.
#[derive(Debug, Serialize, ToSchema)]
pub struct TopReceiverView {
    pub user: KudosPersonView,
    pub kudos_received: u64,
}

/// The person who gave the most signed kudos.
#[derive(Debug, Serialize, ToSchema)]
pub struct TopGiverView {
    pub user: KudosPersonView,
    pub kudos_given: u64,
}

/// The caller's place on the leaderboard.
#[derive(Debug, Serialize, ToSchema)]
pub struct LeaderboardSummaryView {
    /// Null when the caller received no kudos in the period.
    pub position: Option<u64>,
    /// People on the leaderboard.
    pub total: u64,
}

/// One company value's share of the kudos that celebrated a value.
#[derive(Debug, Serialize, ToSchema)]
pub struct DnaShareView {
    pub company_value: CompanyValueView,
    pub count: u64,
    /// Percent, one decimal.
    pub percentage: f64,
}

/// A leaderboard row.
#[derive(Debug, Serialize, ToSchema)]
pub struct StandingView {
    /// Equal scores share a position.
    pub position: u64,
    pub user: KudosPersonView,
    /// `kudos_received` plus `total_plus_kudos`.
    pub score: u64,
    pub kudos_received: u64,
    /// +1s others added to the kudos received.
    pub total_plus_kudos: u64,
}

impl From<&Standing> for StandingView {
    fn from(s: &Standing) -> Self {
        StandingView {
            position: s.position,
            user: KudosPersonView::from(&s.person),
            score: s.score,
            kudos_received: s.received,
            total_plus_kudos: s.plus,
        }
    }
}

/// The organization's kudos rankings.
#[derive(Debug, Serialize, ToSchema)]
pub struct WallOfFameView {
    pub top_receiver: Option<TopReceiverView>,
    pub top_giver: Option<TopGiverView>,
    pub leaderboard_summary: LeaderboardSummaryView,
    /// Most celebrated company values first.
    pub dna_distribution: Vec<DnaShareView>,
    /// Everyone who received kudos, by score.
    pub leaderboard: ListEnvelope<StandingView>,
}

#[utoipa::path(
    tag = "kudos",
    params(WallOfFameQuery, PageParams),
    responses(
        (status = 200, body = WallOfFameView),
        (status = 400, description = "`invalid_date_range`", body = ErrorBody),
    )
)]
#[get("/v1/kudos/wall-of-fame/")]
pub async fn wall_of_fame(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<WallOfFameQuery>,
) -> ApiResult<HttpResponse> {
    let WallOfFame {
        top_receiver,
        top_giver,
        viewer_position,
        ranked,
        dna,
        leaderboard,
    } = state
        .kudos
        .wall_of_fame(
            caller.user(),
            q.filters.start_date.map(|d| d.0),
            q.filters.end_date.map(|d| d.0),
            q.paging.request(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(WallOfFameView {
        top_receiver: top_receiver.map(|c| TopReceiverView {
            user: KudosPersonView::from(&c.person),
            kudos_received: c.count,
        }),
        top_giver: top_giver.map(|c| TopGiverView {
            user: KudosPersonView::from(&c.person),
            kudos_given: c.count,
        }),
        leaderboard_summary: LeaderboardSummaryView {
            position: viewer_position,
            total: ranked,
        },
        dna_distribution: dna
            .iter()
            .map(|d| DnaShareView {
                company_value: CompanyValueView::from(&d.value),
                count: d.count,
                percentage: d.percentage,
            })
            .collect(),
        leaderboard: q.envelope(leaderboard.map(|s| StandingView::from(&s))),
    }))
}

#[utoipa::path(
    tag = "kudos",
    params(PageParams),
    responses((status = 200, description = "The values kudos can celebrate, by name", body = ListEnvelope<CompanyValueView>))
)]
#[get("/v1/kudos/company-values/")]
pub async fn list_company_values(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<NoFilters>,
) -> ApiResult<HttpResponse> {
    let page = state
        .kudos
        .company_values(caller.user(), q.paging.request())
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map(|v| CompanyValueView::from(&v)))))
}

/// Body of `POST /operator/v1/organizations/{uuid}/company-values/`. Registering a `name` again
/// (any case) changes its emoji.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterCompanyValueBody {
    #[schema(inline, example = "Kindness")]
    name: Name<{ MAX_COMPANY_VALUE_NAME }>,
    /// Default ⭐.
    #[schema(max_length = 32, example = "💛")]
    emoji: Option<String>,
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "Organization")),
    request_body = RegisterCompanyValueBody,
    responses(
        (status = 201, description = "Registered (or given the new emoji); the organization's default values are kept", body = CompanyValueView),
        (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/operator/v1/organizations/{uuid}/company-values/")]
pub async fn register_company_value(
    _op: Operator,
    state: web::Data<AppState>,
    org: web::Path<OrgId>,
    body: JsonBody<RegisterCompanyValueBody>,
) -> ApiResult<HttpResponse> {
    let RegisterCompanyValueBody { name, emoji } = body.0;
    let value = state
        .kudos
        .register_company_value(*org, &name.0, emoji.as_deref())
        .await?;
    Ok(HttpResponse::Created().json(CompanyValueView::from(&value)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use teamcomm_kudos::{MAX_COMPANY_VALUE_NAME, MAX_EMOJI, MAX_KUDOS_CONTENT, MAX_RECEIVERS};
    use utoipa::PartialSchema;

    use super::*;

    /// The document's limits are literals (schema attributes take no constants): they must
    /// say what the domain enforces.
    #[test]
    fn the_document_states_the_domains_limits() {
        let body = serde_json::to_value(GiveKudosBody::schema()).unwrap();
        let p = &body["properties"];
        assert_eq!(p["content"]["maxLength"], json!(MAX_KUDOS_CONTENT));
        assert_eq!(
            p["company_value"]["maxLength"],
            json!(MAX_COMPANY_VALUE_NAME)
        );
        for list in ["receivers", "users_receivers", "teams_receivers"] {
            assert_eq!(p[list]["maxItems"], json!(MAX_RECEIVERS), "{list}");
        }
        let value = serde_json::to_value(RegisterCompanyValueBody::schema()).unwrap();
        assert_eq!(value["properties"]["emoji"]["maxLength"], json!(MAX_EMOJI));
    }
}
