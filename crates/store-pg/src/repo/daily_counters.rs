//! SQL of the free-plan daily counters (`daily_counters`): one row per organization, counter and
//! UTC day. A spend is one statement that adds one unless the limit is reached, atomic under
//! concurrent requests of any number of server processes (the conflicting row is locked, and the
//! `WHERE` is evaluated on its latest version).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Date as SqlDate, Int4, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use teamcomm_kernel::{OrgId, RepoError};
use teamcomm_keys::{DailyCounters, DailyLimit};
use time::Date;

use crate::Database;
use crate::error::{db_error, unknown_organization};
use crate::schema::daily_counters::daily_counters;

/// Postgres implementation of [`DailyCounters`].
#[derive(Clone)]
pub struct PgDailyCounters {
    db: Database,
}

impl PgDailyCounters {
    pub fn new(db: Database) -> Self {
        PgDailyCounters { db }
    }
}

#[derive(QueryableByName)]
struct Used {
    #[diesel(sql_type = Int4)]
    used: i32,
}

/// Adds one to the day's count, or inserts it at one; with the count already at the limit the
/// `WHERE` leaves the row alone and nothing is returned.
const SPEND: &str = "INSERT INTO daily_counters AS c (organization_id, counter, day, used) \
     VALUES ($1, $2, $3, 1) \
     ON CONFLICT (organization_id, counter, day) DO UPDATE SET used = c.used + 1 \
     WHERE c.used < $4 \
     RETURNING c.used";

#[async_trait]
impl DailyCounters for PgDailyCounters {
    async fn spend(
        &self,
        org: OrgId,
        limit: DailyLimit,
        day: Date,
        max: u32,
    ) -> Result<Option<u32>, RepoError> {
        let max = i32::try_from(max.max(1)).unwrap_or(i32::MAX);
        let mut conn = self.db.conn().await?;
        let row: Option<Used> = diesel::sql_query(SPEND)
            .bind::<SqlUuid, _>(org.0)
            .bind::<Text, _>(limit.as_str())
            .bind::<SqlDate, _>(day)
            .bind::<Int4, _>(max)
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(|e| unknown_organization(db_error(e)))?;
        Ok(row.map(|r| u32::try_from(r.used).unwrap_or(0)))
    }

    async fn give_back(&self, org: OrgId, limit: DailyLimit, day: Date) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::update(
            daily_counters::table
                .filter(daily_counters::organization_id.eq(org.0))
                .filter(daily_counters::counter.eq(limit.as_str()))
                .filter(daily_counters::day.eq(day))
                .filter(daily_counters::used.gt(0)),
        )
        .set(daily_counters::used.eq(daily_counters::used - 1))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn used(&self, org: OrgId, limit: DailyLimit, day: Date) -> Result<u32, RepoError> {
        let mut conn = self.db.conn().await?;
        let used: Option<i32> = daily_counters::table
            .filter(daily_counters::organization_id.eq(org.0))
            .filter(daily_counters::counter.eq(limit.as_str()))
            .filter(daily_counters::day.eq(day))
            .select(daily_counters::used)
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(used.map_or(0, |u| u32::try_from(u).unwrap_or(0)))
    }
}
