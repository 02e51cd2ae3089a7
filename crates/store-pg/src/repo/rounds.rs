//! SQL of the check-in engine: rounds (claimed by inserting them: the unique (check-in, person,
//! day) lets one server open each), finished days with their events, and the scan of the
//! check-ins that run on a schedule.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::Uuid as SqlUuid;
use diesel::sql_types::{Bool, Date as SqlDate, Int2, Int8, Nullable, Text, Timestamptz};
use diesel_async::{AsyncConnection, RunQueryDsl};
use teamcomm_checkin_engine::{ROUNDS_REVISION, Round, RoundRepository, ScheduledCheckins};
use teamcomm_forms::checkins::Checkin;
use teamcomm_kernel::{Event, OrgId, RepoError, UserId};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::checkins::CheckinRow;
use super::outbox;
use crate::Database;
use crate::error::db_error;
use crate::schema::checkins::checkins;
use crate::schema::rounds::{checkin_finished_days, checkin_rounds};
use crate::schema::users;

/// Postgres implementation of [`RoundRepository`] and [`ScheduledCheckins`].
#[derive(Clone)]
pub struct PgRoundRepository {
    db: Database,
}

impl PgRoundRepository {
    pub fn new(db: Database) -> Self {
        PgRoundRepository { db }
    }
}

#[derive(Debug, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = checkin_rounds, check_for_backend(diesel::pg::Pg), treat_none_as_null = true)]
struct RoundRow {
    id: Uuid,
    #[diesel(skip_update)]
    organization_id: Uuid,
    #[diesel(skip_update)]
    checkin_id: Uuid,
    #[diesel(skip_update)]
    user_id: Uuid,
    #[diesel(skip_update)]
    day: Date,
    #[diesel(skip_update)]
    opened_at: OffsetDateTime,
    closes_at: OffsetDateTime,
    asked: i16,
    answered: i16,
    reminders_sent: i16,
    last_sent_at: Option<OffsetDateTime>,
    completed: bool,
    last_reply: Option<String>,
    closed_at: Option<OffsetDateTime>,
    revision: i64,
}

fn stored_count(column: &str, n: impl Into<i64>) -> Result<i16, RepoError> {
    i16::try_from(n.into()).map_err(|_| RepoError::Other(format!("{column} out of range")))
}

impl RoundRow {
    fn of(r: &Round) -> Result<RoundRow, RepoError> {
        Ok(RoundRow {
            id: r.id,
            organization_id: r.org_id.0,
            checkin_id: r.checkin_id,
            user_id: r.user_id.0,
            day: r.day,
            opened_at: r.opened_at,
            closes_at: r.closes_at,
            asked: stored_count("checkin_rounds.asked", r.asked)?,
            answered: stored_count("checkin_rounds.answered", r.answered)?,
            reminders_sent: stored_count("checkin_rounds.reminders_sent", r.reminders_sent)?,
            last_sent_at: r.last_sent_at,
            completed: r.completed,
            last_reply: r.last_reply.clone(),
            closed_at: r.closed_at,
            revision: r.revision,
        })
    }
}

fn count_from<T: TryFrom<i16>>(column: &str, stored: i16) -> Result<T, RepoError> {
    T::try_from(stored).map_err(|_| RepoError::Other(format!("{column}: {stored} out of range")))
}

impl TryFrom<RoundRow> for Round {
    type Error = RepoError;
    fn try_from(r: RoundRow) -> Result<Self, RepoError> {
        Ok(Round {
            id: r.id,
            org_id: OrgId(r.organization_id),
            checkin_id: r.checkin_id,
            user_id: UserId(r.user_id),
            day: r.day,
            opened_at: r.opened_at,
            closes_at: r.closes_at,
            asked: count_from("checkin_rounds.asked", r.asked)?,
            answered: count_from("checkin_rounds.answered", r.answered)?,
            reminders_sent: count_from("checkin_rounds.reminders_sent", r.reminders_sent)?,
            last_sent_at: r.last_sent_at,
            completed: r.completed,
            last_reply: r.last_reply,
            closed_at: r.closed_at,
            revision: r.revision,
        })
    }
}

/// The claim: inserts the round when its check-in and person are of its organization, its day
/// is not finished, and no round of (check-in, person, day) exists.
const OPEN_ROUND: &str = "\
INSERT INTO checkin_rounds (id, organization_id, checkin_id, user_id, day, opened_at, closes_at,
                            asked, answered, reminders_sent, last_sent_at, completed, last_reply,
                            closed_at, revision)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15
 WHERE EXISTS (SELECT 1 FROM checkins WHERE id = $3 AND organization_id = $2)
   AND EXISTS (SELECT 1 FROM users WHERE id = $4 AND organization_id = $2)
   AND NOT EXISTS (SELECT 1 FROM checkin_finished_days WHERE checkin_id = $3 AND day = $5)
ON CONFLICT (checkin_id, user_id, day) DO NOTHING";

#[async_trait]
impl RoundRepository for PgRoundRepository {
    async fn open_round(&self, round: &Round) -> Result<bool, RepoError> {
        let row = RoundRow::of(round)?;
        let mut conn = self.db.conn().await?;
        let inserted = diesel::sql_query(OPEN_ROUND)
            .bind::<SqlUuid, _>(row.id)
            .bind::<SqlUuid, _>(row.organization_id)
            .bind::<SqlUuid, _>(row.checkin_id)
            .bind::<SqlUuid, _>(row.user_id)
            .bind::<SqlDate, _>(row.day)
            .bind::<Timestamptz, _>(row.opened_at)
            .bind::<Timestamptz, _>(row.closes_at)
            .bind::<Int2, _>(row.asked)
            .bind::<Int2, _>(row.answered)
            .bind::<Int2, _>(row.reminders_sent)
            .bind::<Nullable<Timestamptz>, _>(row.last_sent_at)
            .bind::<Bool, _>(row.completed)
            .bind::<Nullable<Text>, _>(&row.last_reply)
            .bind::<Nullable<Timestamptz>, _>(row.closed_at)
            .bind::<Int8, _>(row.revision)
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        if inserted == 1 {
            return Ok(true);
        }
        // Nothing inserted: taken (or finished), unless what it names is not of the organization.
        let checkin_known: bool = diesel::select(diesel::dsl::exists(
            checkins::table
                .filter(checkins::id.eq(row.checkin_id))
                .filter(checkins::organization_id.eq(row.organization_id)),
        ))
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        let person_known: bool = diesel::select(diesel::dsl::exists(
            users::table
                .filter(users::id.eq(row.user_id))
                .filter(users::organization_id.eq(row.organization_id)),
        ))
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        if checkin_known && person_known {
            Ok(false)
        } else {
            Err(RepoError::NotFound)
        }
    }

    async fn update_round(&self, round: &Round, expected_revision: i64) -> Result<(), RepoError> {
        let row = RoundRow::of(round)?;
        let mut conn = self.db.conn().await?;
        let updated = diesel::update(
            checkin_rounds::table
                .filter(checkin_rounds::id.eq(row.id))
                .filter(checkin_rounds::organization_id.eq(row.organization_id))
                .filter(checkin_rounds::revision.eq(expected_revision)),
        )
        .set(&row)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if updated == 1 {
            return Ok(());
        }
        let exists: bool = diesel::select(diesel::dsl::exists(
            checkin_rounds::table
                .filter(checkin_rounds::id.eq(row.id))
                .filter(checkin_rounds::organization_id.eq(row.organization_id)),
        ))
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        if exists {
            Err(RepoError::Conflict {
                constraint: ROUNDS_REVISION.to_owned(),
            })
        } else {
            Err(RepoError::NotFound)
        }
    }

    async fn open_rounds(&self, org: Option<OrgId>) -> Result<Vec<Round>, RepoError> {
        let mut conn = self.db.conn().await?;
        let mut query = checkin_rounds::table
            .filter(checkin_rounds::closed_at.is_null())
            .select(RoundRow::as_select())
            .order((checkin_rounds::opened_at, checkin_rounds::id))
            .into_boxed();
        if let Some(org) = org {
            query = query.filter(checkin_rounds::organization_id.eq(org.0));
        }
        let rows: Vec<RoundRow> = query.load(&mut conn).await.map_err(db_error)?;
        rows.into_iter().map(Round::try_from).collect()
    }

    async fn finish_day(
        &self,
        org: OrgId,
        checkin: Uuid,
        day: Date,
        finished_at: OffsetDateTime,
        events: &[Event],
    ) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        let finished = conn
            .transaction(async |conn| {
                let known: bool = diesel::select(diesel::dsl::exists(
                    checkins::table
                        .filter(checkins::id.eq(checkin))
                        .filter(checkins::organization_id.eq(org.0)),
                ))
                .get_result(conn)
                .await?;
                if !known {
                    return Err(diesel::result::Error::NotFound);
                }
                let inserted = diesel::insert_into(checkin_finished_days::table)
                    .values((
                        checkin_finished_days::checkin_id.eq(checkin),
                        checkin_finished_days::day.eq(day),
                        checkin_finished_days::organization_id.eq(org.0),
                        checkin_finished_days::finished_at.eq(finished_at),
                    ))
                    .on_conflict_do_nothing()
                    .execute(conn)
                    .await?;
                if inserted == 0 {
                    return Ok(false);
                }
                diesel::update(
                    checkin_rounds::table
                        .filter(checkin_rounds::checkin_id.eq(checkin))
                        .filter(checkin_rounds::day.eq(day))
                        .filter(checkin_rounds::closed_at.is_null()),
                )
                .set((
                    checkin_rounds::closed_at.eq(finished_at),
                    checkin_rounds::revision.eq(checkin_rounds::revision + 1),
                ))
                .execute(conn)
                .await?;
                outbox::record(conn, events).await?;
                Ok(true)
            })
            .await
            .map_err(db_error)?;
        Ok(finished)
    }
}

#[async_trait]
impl ScheduledCheckins for PgRoundRepository {
    async fn scheduled_checkins(&self) -> Result<Vec<Checkin>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<CheckinRow> = checkins::table
            .filter(checkins::active.eq(true))
            .filter(checkins::is_archived.eq(false))
            .select(CheckinRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let mut scheduled = Vec::with_capacity(rows.len());
        for row in rows {
            let checkin = Checkin::try_from(row)?;
            // The options document is read whole; trigger-based ones are asked by events.
            if !checkin.options.is_trigger_based {
                scheduled.push(checkin);
            }
        }
        Ok(scheduled)
    }
}
