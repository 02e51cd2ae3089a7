//! SQL of check-ins and their responses. A check-in is one row (participants and channels as
//! arrays of ids, checked against the directory inside each write's transaction); responses
//! are unique per (check-in, person, day), and their events go to the outbox in the same
//! transaction as the change.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use diesel::dsl::count_star;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Bool, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use teamcomm_forms::checkins::{
    AuthoredResponse, Checkin, CheckinDirectory, CheckinOptions, CheckinRepository,
    CheckinResponse, CheckinScope, CheckinSelection, Cron, DayResponse, FrequencyAdvanced,
    FrequencyType, ManagedScope, Participants, Recurrence, ResponseScope, ResponseSelection,
    Schedule,
};
use teamcomm_forms::questions::{Answer, Question, QuestionSet};
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, TeamId, UserId, WireEnum};
use teamcomm_org::{TeamRole, User};
use time::{Date, OffsetDateTime, Time};
use uuid::Uuid;

use super::channels::ChannelRow;
use super::outbox;
use super::paging::{count_from, like_pattern, limits, load_page};
use crate::Database;
use crate::error::{db_error, unknown_organization};
use crate::rows::{UserRow, unknown_value};
use crate::schema::checkins::{checkin_responses, checkins};
use crate::schema::labels::{entity_labels, featured_entities};
use crate::schema::{report_channels, team_members, teams, users};

/// The entity type check-ins have in `entity_labels` and `featured_entities`.
const ENTITY_TYPE: &str = "checkins";

/// Postgres implementation of [`CheckinRepository`].
#[derive(Clone)]
pub struct PgCheckinRepository {
    db: Database,
}

impl PgCheckinRepository {
    pub fn new(db: Database) -> Self {
        PgCheckinRepository { db }
    }
}

/// Why a write's transaction rolled back.
enum Refusal {
    Db(DieselError),
    Repo(RepoError),
}

impl From<DieselError> for Refusal {
    fn from(e: DieselError) -> Self {
        Refusal::Db(e)
    }
}

impl Refusal {
    fn into_repo(self) -> RepoError {
        match self {
            Refusal::Db(e) => unknown_organization(db_error(e)),
            Refusal::Repo(e) => e,
        }
    }
}

fn conflict(constraint: &str) -> Refusal {
    Refusal::Repo(RepoError::Conflict {
        constraint: constraint.to_owned(),
    })
}

fn stored<T: serde::Serialize>(column: &str, value: &T) -> Result<Value, RepoError> {
    serde_json::to_value(value).map_err(|e| RepoError::Other(format!("{column}: {e}")))
}

#[derive(Debug, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = checkins, check_for_backend(diesel::pg::Pg), treat_none_as_null = true)]
pub(super) struct CheckinRow {
    id: Uuid,
    #[diesel(skip_update)]
    organization_id: Uuid,
    name: String,
    created_by_id: Option<Uuid>,
    template_id: Option<Uuid>,
    active: bool,
    is_archived: bool,
    schedule_days: Vec<i16>,
    schedule_time: Time,
    schedule_timezone: String,
    frequency_type: String,
    frequency: i16,
    frequency_advanced: String,
    frequency_cron: Option<String>,
    start_on: Date,
    end_on: Option<Date>,
    options: Value,
    participant_user_ids: Vec<Uuid>,
    participant_team_ids: Vec<Uuid>,
    report_channel_ids: Vec<String>,
    questions: Value,
    questions_version: i32,
    revision: i64,
    #[diesel(skip_update)]
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl CheckinRow {
    fn of(c: &Checkin) -> Result<CheckinRow, RepoError> {
        Ok(CheckinRow {
            id: c.id,
            organization_id: c.org_id.0,
            name: c.name.clone(),
            created_by_id: c.created_by.map(|u| u.0),
            template_id: c.template,
            active: c.active,
            is_archived: c.archived,
            schedule_days: c.schedule.days.iter().map(|d| i16::from(*d)).collect(),
            schedule_time: c.schedule.time,
            schedule_timezone: c.schedule.timezone.clone(),
            frequency_type: c.recurrence.frequency_type.as_str().to_owned(),
            frequency: i16::try_from(c.recurrence.frequency)
                .map_err(|_| RepoError::Other("checkins.frequency out of range".into()))?,
            frequency_advanced: c.recurrence.advanced.as_str().to_owned(),
            frequency_cron: c.recurrence.cron.as_ref().map(|c| c.as_str().to_owned()),
            start_on: c.recurrence.start_on,
            end_on: c.recurrence.end_on,
            options: stored("checkins.options", &c.options)?,
            participant_user_ids: c.participants.users.iter().map(|u| u.0).collect(),
            participant_team_ids: c.participants.teams.iter().map(|t| t.0).collect(),
            report_channel_ids: c.report_channels.clone(),
            questions: stored("checkins.questions", &c.questions.questions)?,
            questions_version: c.questions.version,
            revision: c.revision,
            created_at: c.created_at,
            updated_at: c.updated_at,
        })
    }
}

impl TryFrom<CheckinRow> for Checkin {
    type Error = RepoError;
    fn try_from(r: CheckinRow) -> Result<Self, RepoError> {
        let days = r
            .schedule_days
            .iter()
            .map(|d| {
                u8::try_from(*d)
                    .ok()
                    .filter(|d| *d <= 6)
                    .ok_or_else(|| unknown_value("checkins.schedule_days", d))
            })
            .collect::<Result<Vec<u8>, _>>()?;
        let options: CheckinOptions =
            serde_json::from_value(r.options).map_err(|e| unknown_value("checkins.options", e))?;
        let questions: Vec<Question> = serde_json::from_value(r.questions)
            .map_err(|e| unknown_value("checkins.questions", e))?;
        Ok(Checkin {
            id: r.id,
            org_id: OrgId(r.organization_id),
            name: r.name,
            created_by: r.created_by_id.map(UserId),
            template: r.template_id,
            active: r.active,
            archived: r.is_archived,
            schedule: Schedule {
                days,
                time: r.schedule_time,
                timezone: r.schedule_timezone,
            },
            recurrence: Recurrence {
                frequency_type: FrequencyType::from_name(&r.frequency_type)
                    .ok_or_else(|| unknown_value("checkins.frequency_type", &r.frequency_type))?,
                frequency: u16::try_from(r.frequency)
                    .map_err(|_| unknown_value("checkins.frequency", r.frequency))?,
                advanced: FrequencyAdvanced::from_name(&r.frequency_advanced).ok_or_else(|| {
                    unknown_value("checkins.frequency_advanced", &r.frequency_advanced)
                })?,
                cron: r
                    .frequency_cron
                    .as_deref()
                    .map(|c| {
                        Cron::parse(c).map_err(|e| unknown_value("checkins.frequency_cron", e))
                    })
                    .transpose()?,
                start_on: r.start_on,
                end_on: r.end_on,
            },
            options,
            participants: Participants {
                users: r.participant_user_ids.into_iter().map(UserId).collect(),
                teams: r.participant_team_ids.into_iter().map(TeamId).collect(),
            },
            report_channels: r.report_channel_ids,
            questions: QuestionSet {
                questions,
                version: r.questions_version,
            },
            revision: r.revision,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = checkin_responses, check_for_backend(diesel::pg::Pg))]
struct ResponseRow {
    id: Uuid,
    organization_id: Uuid,
    checkin_id: Uuid,
    user_id: Uuid,
    response_date: Date,
    answers: Value,
    search_text: String,
    last_question_index: Option<i16>,
    completed: bool,
    questions_version: i32,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl ResponseRow {
    fn of(r: &CheckinResponse) -> Result<ResponseRow, RepoError> {
        Ok(ResponseRow {
            id: r.id,
            organization_id: r.org_id.0,
            checkin_id: r.checkin_id,
            user_id: r.user_id.0,
            response_date: r.date,
            answers: stored("checkin_responses.answers", &r.answers)?,
            search_text: r.search_text(),
            last_question_index: r
                .last_question_index
                .map(i16::try_from)
                .transpose()
                .map_err(|_| RepoError::Other("last_question_index out of range".into()))?,
            completed: r.completed,
            questions_version: r.questions_version,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

impl TryFrom<ResponseRow> for CheckinResponse {
    type Error = RepoError;
    fn try_from(r: ResponseRow) -> Result<Self, RepoError> {
        let answers: Vec<Answer> = serde_json::from_value(r.answers)
            .map_err(|e| unknown_value("checkin_responses.answers", e))?;
        Ok(CheckinResponse {
            id: r.id,
            org_id: OrgId(r.organization_id),
            checkin_id: r.checkin_id,
            user_id: UserId(r.user_id),
            date: r.response_date,
            answers,
            last_question_index: r
                .last_question_index
                .map(|i| {
                    u16::try_from(i)
                        .map_err(|_| unknown_value("checkin_responses.last_question_index", i))
                })
                .transpose()?,
            completed: r.completed,
            questions_version: r.questions_version,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

/// A response joined with its person.
#[derive(Debug)]
struct AuthoredRow {
    response: ResponseRow,
    author: UserRow,
}

impl TryFrom<AuthoredRow> for AuthoredResponse {
    type Error = RepoError;
    fn try_from(r: AuthoredRow) -> Result<Self, RepoError> {
        Ok(AuthoredResponse {
            response: r.response.try_into()?,
            author: r.author.try_into()?,
        })
    }
}

/// One row when check-in `$checkin` of organization `$org` asks the active person `$person`
/// (SQL expressions): by name, or as an active member of one of its active teams. Shared by
/// the participant check and the conditional insert of a response.
macro_rules! asking_checkin {
    ($org:literal, $checkin:literal, $person:literal) => {
        concat!(
            "SELECT 1 FROM checkins c \
             JOIN users u ON u.id = ",
            $person,
            " AND u.organization_id = c.organization_id AND u.is_active \
             WHERE c.id = ",
            $checkin,
            " AND c.organization_id = ",
            $org,
            " AND (u.id = ANY (c.participant_user_ids) \
                    OR EXISTS (SELECT 1 FROM team_members tm JOIN teams t ON t.id = tm.team_id \
                               WHERE tm.user_id = u.id AND t.active \
                                 AND t.id = ANY (c.participant_team_ids)))"
        )
    };
}

/// A response and its events written in one statement (one round trip, no explicit
/// transaction) only when the check-in is still at the revision the service read and asks the
/// person; it answers whether it was written.
///
/// A statement type of its own, not `sql_query`: diesel never caches `sql_query` statements, so
/// PostgreSQL would parse and plan this one on every submission (most of its cost, measured);
/// this one is prepared once per connection. Each bind appears once, in order, in the `p` row
/// the rest of the statement reads.
struct InsertResponse<'a> {
    row: &'a ResponseRow,
    expected_revision: i64,
    event_ids: Vec<Uuid>,
    event_types: Vec<&'static str>,
    object_ids: Vec<Option<Uuid>>,
    payloads: Vec<Value>,
    occurred_at: Vec<OffsetDateTime>,
}

impl<'a> InsertResponse<'a> {
    fn new(row: &'a ResponseRow, expected_revision: i64, events: &[Event]) -> Self {
        InsertResponse {
            row,
            expected_revision,
            event_ids: events.iter().map(|e| e.id).collect(),
            event_types: events.iter().map(|e| e.event_type.as_str()).collect(),
            object_ids: events.iter().map(|e| e.object_id).collect(),
            payloads: events.iter().map(Event::payload).collect(),
            occurred_at: events.iter().map(|e| e.occurred_at).collect(),
        }
    }
}

impl diesel::query_builder::QueryId for InsertResponse<'_> {
    type QueryId = InsertResponse<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::Query for InsertResponse<'_> {
    type SqlType = Bool;
}

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for InsertResponse<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        use diesel::sql_types::{
            Array, BigInt, Date as SqlDate, Int2, Int4, Jsonb, Nullable, Text, Timestamptz,
        };
        let r = self.row;
        out.push_sql("WITH p AS (SELECT ");
        out.push_bind_param::<SqlUuid, _>(&r.organization_id)?;
        out.push_sql("::uuid AS org, ");
        out.push_bind_param::<SqlUuid, _>(&r.checkin_id)?;
        out.push_sql("::uuid AS checkin, ");
        out.push_bind_param::<SqlUuid, _>(&r.user_id)?;
        out.push_sql("::uuid AS person, ");
        out.push_bind_param::<BigInt, _>(&self.expected_revision)?;
        out.push_sql("::bigint AS revision, ");
        out.push_bind_param::<SqlUuid, _>(&r.id)?;
        out.push_sql("::uuid AS id, ");
        out.push_bind_param::<SqlDate, _>(&r.response_date)?;
        out.push_sql("::date AS day, ");
        out.push_bind_param::<Jsonb, _>(&r.answers)?;
        out.push_sql("::jsonb AS answers, ");
        out.push_bind_param::<Text, _>(&r.search_text)?;
        out.push_sql("::text AS search_text, ");
        out.push_bind_param::<Nullable<Int2>, _>(&r.last_question_index)?;
        out.push_sql("::smallint AS last_question_index, ");
        out.push_bind_param::<Bool, _>(&r.completed)?;
        out.push_sql("::boolean AS completed, ");
        out.push_bind_param::<Int4, _>(&r.questions_version)?;
        out.push_sql("::integer AS questions_version, ");
        out.push_bind_param::<Timestamptz, _>(&r.created_at)?;
        out.push_sql("::timestamptz AS created_at, ");
        out.push_bind_param::<Timestamptz, _>(&r.updated_at)?;
        out.push_sql("::timestamptz AS updated_at, ");
        out.push_bind_param::<Array<SqlUuid>, _>(&self.event_ids)?;
        out.push_sql("::uuid[] AS event_ids, ");
        out.push_bind_param::<Array<Text>, _>(&self.event_types)?;
        out.push_sql("::text[] AS event_types, ");
        out.push_bind_param::<Array<Nullable<SqlUuid>>, _>(&self.object_ids)?;
        out.push_sql("::uuid[] AS object_ids, ");
        out.push_bind_param::<Array<Jsonb>, _>(&self.payloads)?;
        out.push_sql("::jsonb[] AS payloads, ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.occurred_at)?;
        out.push_sql("::timestamptz[] AS occurred_at), ");
        out.push_sql(concat!(
            "asked AS (SELECT 1 FROM p WHERE EXISTS (",
            asking_checkin!("p.org", "p.checkin", "p.person"),
            " AND c.revision = p.revision)), \
             response AS ( \
               INSERT INTO checkin_responses (id, organization_id, checkin_id, user_id, \
                 response_date, answers, search_text, last_question_index, completed, \
                 questions_version, created_at, updated_at) \
               SELECT p.id, p.org, p.checkin, p.person, p.day, p.answers, p.search_text, \
                 p.last_question_index, p.completed, p.questions_version, p.created_at, \
                 p.updated_at \
               FROM p, asked \
               RETURNING 1), \
             event AS ( \
               INSERT INTO outbox_events (id, organization_id, event_type, object_id, payload, \
                 occurred_at) \
               SELECT e.id, p.org, e.event_type, e.object_id, e.payload, e.occurred_at \
               FROM p, unnest(p.event_ids, p.event_types, p.object_ids, p.payloads, \
                 p.occurred_at) AS e (id, event_type, object_id, payload, occurred_at) \
               WHERE EXISTS (SELECT 1 FROM response)) \
             SELECT EXISTS (SELECT 1 FROM response)"
        ));
        Ok(())
    }
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = Bool)]
    yes: bool,
}

/// Counts `ids` among the rows `query` finds; true when every one is there.
fn all_found(found: i64, ids: &[impl Sized]) -> bool {
    usize::try_from(found).is_ok_and(|n| n == ids.len())
}

/// The check-in's people, teams and channels are of its organization (the foreign keys the
/// arrays cannot have), checked inside the write's transaction.
async fn check_references(conn: &mut AsyncPgConnection, c: &Checkin) -> Result<(), Refusal> {
    let org = c.org_id.0;
    let mut people: Vec<Uuid> = c
        .participants
        .users
        .iter()
        .chain(c.created_by.iter())
        .map(|u| u.0)
        .collect();
    people.sort();
    people.dedup();
    let found: i64 = users::table
        .filter(users::organization_id.eq(org))
        .filter(users::id.eq_any(&people))
        .count()
        .get_result(conn)
        .await?;
    let teams_found: i64 = teams::table
        .filter(teams::organization_id.eq(org))
        .filter(teams::id.eq_any(c.participants.teams.iter().map(|t| t.0).collect::<Vec<_>>()))
        .count()
        .get_result(conn)
        .await?;
    let channels_found: i64 = report_channels::table
        .filter(report_channels::organization_id.eq(org))
        .filter(report_channels::id.eq_any(&c.report_channels))
        .count()
        .get_result(conn)
        .await?;
    if all_found(found, &people)
        && all_found(teams_found, &c.participants.teams)
        && all_found(channels_found, &c.report_channels)
    {
        Ok(())
    } else {
        Err(Refusal::Repo(RepoError::NotFound))
    }
}

/// The active teams of `org` the person belongs to, or `None` when they are not an active
/// person of it.
async fn teams_taken_by(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    user: UserId,
) -> Result<Option<Vec<Uuid>>, RepoError> {
    let active: Option<bool> = users::table
        .filter(users::id.eq(user.0))
        .filter(users::organization_id.eq(org.0))
        .select(users::is_active)
        .first(conn)
        .await
        .optional()
        .map_err(db_error)?;
    if active != Some(true) {
        return Ok(None);
    }
    let teams: Vec<Uuid> = team_members::table
        .inner_join(teams::table)
        .filter(team_members::user_id.eq(user.0))
        .filter(teams::organization_id.eq(org.0))
        .filter(teams::active.eq(true))
        .select(teams::id)
        .load(conn)
        .await
        .map_err(db_error)?;
    Ok(Some(teams))
}

async fn managed_scope(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    user: UserId,
) -> Result<ManagedScope, RepoError> {
    let teams: Vec<Uuid> = team_members::table
        .inner_join(teams::table)
        .filter(team_members::user_id.eq(user.0))
        .filter(team_members::role.eq(TeamRole::Manager.as_str()))
        .filter(teams::organization_id.eq(org.0))
        .filter(teams::active.eq(true))
        .select(teams::id)
        .order(teams::id)
        .load(conn)
        .await
        .map_err(db_error)?;
    let members: Vec<Uuid> = if teams.is_empty() {
        Vec::new()
    } else {
        team_members::table
            .filter(team_members::team_id.eq_any(&teams))
            .select(team_members::user_id)
            .distinct()
            .order(team_members::user_id)
            .load(conn)
            .await
            .map_err(db_error)?
    };
    Ok(ManagedScope {
        teams: teams.into_iter().map(TeamId).collect(),
        members: members.into_iter().map(UserId).collect(),
    })
}

fn by_name(a: &User, b: &User) -> std::cmp::Ordering {
    (&a.first_name, &a.last_name, a.id).cmp(&(&b.first_name, &b.last_name, b.id))
}

#[async_trait]
impl CheckinRepository for PgCheckinRepository {
    async fn insert_checkin(&self, checkin: &Checkin) -> Result<(), RepoError> {
        let row = CheckinRow::of(checkin)?;
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            check_references(conn, checkin).await?;
            diesel::insert_into(checkins::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok::<_, Refusal>(())
        })
        .await
        .map_err(Refusal::into_repo)
    }

    async fn get_checkin(&self, org: OrgId, id: Uuid) -> Result<Checkin, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: CheckinRow = checkins::table
            .filter(checkins::id.eq(id))
            .filter(checkins::organization_id.eq(org.0))
            .select(CheckinRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn update_checkin(
        &self,
        checkin: &Checkin,
        expected_revision: i64,
    ) -> Result<(), RepoError> {
        let row = CheckinRow::of(checkin)?;
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            check_references(conn, checkin).await?;
            let of_org = checkins::table
                .filter(checkins::id.eq(checkin.id))
                .filter(checkins::organization_id.eq(checkin.org_id.0));
            let n = diesel::update(of_org.filter(checkins::revision.eq(expected_revision)))
                .set(&row)
                .execute(conn)
                .await?;
            if n == 1 {
                return Ok(());
            }
            let exists: bool = diesel::select(diesel::dsl::exists(of_org))
                .get_result(conn)
                .await?;
            Err(if exists {
                conflict("checkins_revision")
            } else {
                Refusal::Repo(RepoError::NotFound)
            })
        })
        .await
        .map_err(Refusal::into_repo)
    }

    async fn list_checkins(
        &self,
        org: OrgId,
        selection: &CheckinSelection,
        page: PageRequest,
    ) -> Result<Page<Checkin>, RepoError> {
        let mut conn = self.db.conn().await?;
        // Who the person is here: `None` for an inactive or unknown person, who takes part in
        // nothing (but still sees what they authored).
        let person = match selection.scope {
            CheckinScope::All => None,
            CheckinScope::VisibleTo(u) | CheckinScope::TakenBy(u) => {
                Some((u, teams_taken_by(&mut conn, org, u).await?))
            }
        };
        if let (CheckinScope::TakenBy(_), Some((_, None))) = (selection.scope, &person) {
            return Ok(Page {
                count: 0,
                results: Vec::new(),
            });
        }
        let filtered = || {
            let mut q = checkins::table
                .filter(checkins::organization_id.eq(org.0))
                .into_boxed();
            if !selection.include_archived {
                q = q.filter(checkins::is_archived.eq(false));
            }
            match (selection.scope, &person) {
                (CheckinScope::VisibleTo(u), Some((_, Some(teams)))) => {
                    q = q.filter(
                        checkins::created_by_id
                            .eq(u.0)
                            .or(checkins::participant_user_ids.contains(vec![u.0]))
                            .or(checkins::participant_team_ids.overlaps_with(teams.clone())),
                    );
                }
                (CheckinScope::VisibleTo(u), _) => {
                    q = q.filter(checkins::created_by_id.eq(u.0));
                }
                (CheckinScope::TakenBy(u), Some((_, Some(teams)))) => {
                    q = q.filter(
                        checkins::participant_user_ids
                            .contains(vec![u.0])
                            .or(checkins::participant_team_ids.overlaps_with(teams.clone())),
                    );
                }
                _ => {}
            }
            if let Some(search) = selection.search.as_deref() {
                q = q.filter(checkins::name.ilike(like_pattern(search)));
            }
            if let Some(until) = selection.running_until {
                q = q.filter(checkins::start_on.le(until));
            }
            if let Some(from) = selection.running_from {
                q = q.filter(checkins::end_on.is_null().or(checkins::end_on.ge(from)));
            }
            if !selection.labels.is_empty() {
                q = q.filter(
                    checkins::id.eq_any(
                        entity_labels::table
                            .filter(entity_labels::organization_id.eq(org.0))
                            .filter(entity_labels::entity_type.eq(ENTITY_TYPE))
                            .filter(entity_labels::label_id.eq_any(selection.labels.clone()))
                            .select(entity_labels::entity_id),
                    ),
                );
            }
            if let Some(u) = selection.featured_by {
                q = q.filter(
                    checkins::id.eq_any(
                        featured_entities::table
                            .filter(featured_entities::user_id.eq(u.0))
                            .filter(featured_entities::entity_type.eq(ENTITY_TYPE))
                            .select(featured_entities::entity_id),
                    ),
                );
            }
            q
        };
        let first_for = selection.featured_first_for;
        load_page::<CheckinRow, _, _, _>(&mut conn, page, filtered, move |q| {
            let q = match first_for {
                Some(u) => q
                    .order_by(
                        checkins::id
                            .eq_any(
                                featured_entities::table
                                    .filter(featured_entities::user_id.eq(u.0))
                                    .filter(featured_entities::entity_type.eq(ENTITY_TYPE))
                                    .select(featured_entities::entity_id),
                            )
                            .desc(),
                    )
                    .then_order_by((checkins::name, checkins::id)),
                None => q.order_by((checkins::name, checkins::id)),
            };
            q.select(CheckinRow::as_select())
        })
        .await
    }

    async fn directory(&self, checkin: &Checkin) -> Result<CheckinDirectory, RepoError> {
        let org = checkin.org_id.0;
        let mut conn = self.db.conn().await?;
        let user_ids: Vec<Uuid> = checkin.participants.users.iter().map(|u| u.0).collect();
        let team_ids: Vec<Uuid> = checkin.participants.teams.iter().map(|t| t.0).collect();
        let people: HashMap<Uuid, String> = users::table
            .filter(users::organization_id.eq(org))
            .filter(users::id.eq_any(&user_ids))
            .select((users::id, users::first_name, users::last_name))
            .load::<(Uuid, String, String)>(&mut conn)
            .await
            .map_err(db_error)?
            .into_iter()
            .map(|(id, first, last)| (id, teamcomm_org::full_name(&first, &last)))
            .collect();
        let team_names: HashMap<Uuid, String> = teams::table
            .filter(teams::organization_id.eq(org))
            .filter(teams::id.eq_any(&team_ids))
            .select((teams::id, teams::name))
            .load::<(Uuid, String)>(&mut conn)
            .await
            .map_err(db_error)?
            .into_iter()
            .collect();
        let mut channels = HashMap::new();
        for row in report_channels::table
            .filter(report_channels::organization_id.eq(org))
            .filter(report_channels::id.eq_any(&checkin.report_channels))
            .select(ChannelRow::as_select())
            .load::<ChannelRow>(&mut conn)
            .await
            .map_err(db_error)?
        {
            let channel: teamcomm_messaging::Channel = row.try_into()?;
            channels.insert(channel.id.clone(), channel);
        }
        Ok(CheckinDirectory {
            users: user_ids
                .iter()
                .filter_map(|id| people.get(id).map(|n| (UserId(*id), n.clone())))
                .collect(),
            teams: team_ids
                .iter()
                .filter_map(|id| team_names.get(id).map(|n| (TeamId(*id), n.clone())))
                .collect(),
            channels: checkin
                .report_channels
                .iter()
                .filter_map(|id| channels.remove(id))
                .collect(),
        })
    }

    async fn is_participant(&self, org: OrgId, id: Uuid, user: UserId) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        let found: Exists = diesel::sql_query(concat!(
            "SELECT EXISTS (",
            asking_checkin!("$1", "$2", "$3"),
            ") AS yes"
        ))
        .bind::<SqlUuid, _>(org.0)
        .bind::<SqlUuid, _>(id)
        .bind::<SqlUuid, _>(user.0)
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(found.yes)
    }

    async fn participants(
        &self,
        org: OrgId,
        checkins_asked: &[Uuid],
    ) -> Result<Vec<(Uuid, User)>, RepoError> {
        let mut conn = self.db.conn().await?;
        let mut named: Vec<(Uuid, Vec<Uuid>, Vec<Uuid>)> = checkins::table
            .filter(checkins::organization_id.eq(org.0))
            .filter(checkins::id.eq_any(checkins_asked))
            .select((
                checkins::id,
                checkins::participant_user_ids,
                checkins::participant_team_ids,
            ))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        named.sort_by_key(|(id, _, _)| *id);
        let all_teams: HashSet<Uuid> = named.iter().flat_map(|(_, _, t)| t.clone()).collect();
        let members: Vec<(Uuid, Uuid)> = team_members::table
            .inner_join(teams::table)
            .filter(teams::organization_id.eq(org.0))
            .filter(teams::active.eq(true))
            .filter(team_members::team_id.eq_any(all_teams.iter().copied().collect::<Vec<_>>()))
            .select((team_members::team_id, team_members::user_id))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let everyone: HashSet<Uuid> = named
            .iter()
            .flat_map(|(_, u, _)| u.clone())
            .chain(members.iter().map(|(_, u)| *u))
            .collect();
        let people: HashMap<Uuid, User> = users::table
            .filter(users::organization_id.eq(org.0))
            .filter(users::is_active.eq(true))
            .filter(users::id.eq_any(everyone.into_iter().collect::<Vec<_>>()))
            .select(UserRow::as_select())
            .load::<UserRow>(&mut conn)
            .await
            .map_err(db_error)?
            .into_iter()
            .map(|r| User::try_from(r).map(|u| (u.id.0, u)))
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for (checkin, listed, teams_listed) in named {
            let mut asked: Vec<User> = listed
                .iter()
                .chain(
                    members
                        .iter()
                        .filter(|(t, _)| teams_listed.contains(t))
                        .map(|(_, u)| u),
                )
                .filter_map(|u| people.get(u).cloned())
                .collect();
            asked.sort_by(by_name);
            asked.dedup_by_key(|u| u.id);
            out.extend(asked.into_iter().map(|u| (checkin, u)));
        }
        Ok(out)
    }

    async fn managed_scope(&self, org: OrgId, user: UserId) -> Result<ManagedScope, RepoError> {
        let mut conn = self.db.conn().await?;
        managed_scope(&mut conn, org, user).await
    }

    async fn insert_response(
        &self,
        response: &CheckinResponse,
        expected_revision: i64,
        events: &[Event],
    ) -> Result<(), RepoError> {
        let row = ResponseRow::of(response)?;
        let mut conn = self.db.conn().await?;
        let written: bool = InsertResponse::new(&row, expected_revision, events)
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        if written {
            return Ok(());
        }
        // Not written: say why (the rare path, a second read).
        let revision: Option<i64> = checkins::table
            .filter(checkins::id.eq(response.checkin_id))
            .filter(checkins::organization_id.eq(response.org_id.0))
            .select(checkins::revision)
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Err(match revision {
            None => RepoError::NotFound,
            Some(r) if r != expected_revision => RepoError::Conflict {
                constraint: "checkins_revision".into(),
            },
            Some(_) => RepoError::Conflict {
                constraint: "checkin_participants".into(),
            },
        })
    }

    async fn update_response(
        &self,
        response: &CheckinResponse,
        expected_updated_at: OffsetDateTime,
        events: &[Event],
    ) -> Result<(), RepoError> {
        let row = ResponseRow::of(response)?;
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            let of_org = checkin_responses::table
                .filter(checkin_responses::id.eq(response.id))
                .filter(checkin_responses::organization_id.eq(response.org_id.0));
            // Only the answers change: the day, the person and the check-in stay.
            let n = diesel::update(
                of_org.filter(checkin_responses::updated_at.eq(expected_updated_at)),
            )
            .set((
                checkin_responses::answers.eq(&row.answers),
                checkin_responses::search_text.eq(&row.search_text),
                checkin_responses::last_question_index.eq(row.last_question_index),
                checkin_responses::completed.eq(row.completed),
                checkin_responses::questions_version.eq(row.questions_version),
                checkin_responses::updated_at.eq(row.updated_at),
            ))
            .execute(conn)
            .await?;
            if n == 0 {
                let exists: bool = diesel::select(diesel::dsl::exists(of_org))
                    .get_result(conn)
                    .await?;
                return Err(if exists {
                    conflict("checkin_responses_updated_at")
                } else {
                    Refusal::Repo(RepoError::NotFound)
                });
            }
            outbox::record(conn, events).await?;
            Ok(())
        })
        .await
        .map_err(Refusal::into_repo)
    }

    async fn responses_between(
        &self,
        org: OrgId,
        checkin: Uuid,
        user: UserId,
        from: Date,
        until: Date,
    ) -> Result<Vec<CheckinResponse>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<ResponseRow> = checkin_responses::table
            .filter(checkin_responses::checkin_id.eq(checkin))
            .filter(checkin_responses::user_id.eq(user.0))
            .filter(checkin_responses::organization_id.eq(org.0))
            .filter(checkin_responses::response_date.between(from, until))
            .order((checkin_responses::response_date, checkin_responses::id))
            .select(ResponseRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    async fn delete_responses(
        &self,
        org: OrgId,
        ids: &[Uuid],
        events: &[Event],
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            let n = diesel::delete(
                checkin_responses::table
                    .filter(checkin_responses::organization_id.eq(org.0))
                    .filter(checkin_responses::id.eq_any(ids)),
            )
            .execute(conn)
            .await?;
            if n != ids.len() {
                return Err(conflict("checkin_responses_deleted"));
            }
            outbox::record(conn, events).await?;
            Ok(())
        })
        .await
        .map_err(Refusal::into_repo)
    }

    async fn list_responses(
        &self,
        org: OrgId,
        selection: &ResponseSelection,
        page: PageRequest,
    ) -> Result<Page<AuthoredResponse>, RepoError> {
        let mut conn = self.db.conn().await?;
        let visible: Option<Vec<Uuid>> = match selection.scope {
            ResponseScope::All => None,
            ResponseScope::Own(u) => Some(vec![u.0]),
            ResponseScope::ManagedBy(u) => {
                let scope = managed_scope(&mut conn, org, u).await?;
                Some(
                    scope
                        .members
                        .iter()
                        .map(|m| m.0)
                        .chain(std::iter::once(u.0))
                        .collect(),
                )
            }
        };
        let search = selection
            .search
            .as_deref()
            .map(|s| like_pattern(&s.to_lowercase()));
        // A LEFT JOIN on the person's primary key, which PostgreSQL drops from the count
        // (nothing of the person is read there), so the total is an index-only scan of the
        // listing index; the foreign key guarantees every response has its person.
        let filtered = || {
            let mut q = checkin_responses::table
                .left_join(users::table)
                .filter(checkin_responses::checkin_id.eq(selection.checkin))
                .filter(checkin_responses::organization_id.eq(org.0))
                .into_boxed();
            if let Some(from) = selection.from {
                q = q.filter(checkin_responses::response_date.ge(from));
            }
            if let Some(until) = selection.until {
                q = q.filter(checkin_responses::response_date.le(until));
            }
            if let Some(people) = &visible {
                q = q.filter(checkin_responses::user_id.eq_any(people.clone()));
            }
            if let Some(u) = selection.user {
                q = q.filter(checkin_responses::user_id.eq(u.0));
            }
            if let Some(pattern) = &search {
                q = q.filter(checkin_responses::search_text.like(pattern.clone()));
            }
            q
        };
        let (limit, offset) = limits(page);
        // One statement: the page in the listing index's order, each row carrying the total.
        let rows: Vec<(ResponseRow, Option<UserRow>, Option<i64>)> = filtered()
            .order_by((
                checkin_responses::response_date.desc(),
                checkin_responses::created_at,
                checkin_responses::id,
            ))
            .select((
                ResponseRow::as_select(),
                Option::<UserRow>::as_select(),
                filtered().select(count_star()).single_value(),
            ))
            .limit(limit)
            .offset(offset)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let count = match rows.as_slice().first() {
            Some((_, _, total)) => count_from(total.unwrap_or_default())?,
            // Past the end: the total still answers.
            None if offset > 0 => count_from(
                filtered()
                    .select(count_star())
                    .get_result(&mut conn)
                    .await
                    .map_err(db_error)?,
            )?,
            None => 0,
        };
        let results = rows
            .into_iter()
            .map(|(response, author, _)| {
                let author = author.ok_or_else(|| {
                    RepoError::Other(format!("response {} has no person", response.id))
                })?;
                AuthoredRow { response, author }.try_into()
            })
            .collect::<Result<_, RepoError>>()?;
        Ok(Page { count, results })
    }

    async fn day_responses(
        &self,
        org: OrgId,
        checkins_asked: &[Uuid],
        days: &[Date],
    ) -> Result<Vec<DayResponse>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<(Uuid, Uuid, Date, bool)> = checkin_responses::table
            .filter(checkin_responses::organization_id.eq(org.0))
            .filter(checkin_responses::checkin_id.eq_any(checkins_asked))
            .filter(checkin_responses::response_date.eq_any(days))
            .order((
                checkin_responses::checkin_id,
                checkin_responses::response_date,
                checkin_responses::user_id,
            ))
            .select((
                checkin_responses::checkin_id,
                checkin_responses::user_id,
                checkin_responses::response_date,
                checkin_responses::completed,
            ))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows
            .into_iter()
            .map(|(checkin_id, user_id, date, completed)| DayResponse {
                checkin_id,
                user_id: UserId(user_id),
                date,
                completed,
            })
            .collect())
    }
}
