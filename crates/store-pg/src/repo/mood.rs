//! SQL of mood scores.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use teamcomm_kernel::{OrgId, RepoError, UserId};
use teamcomm_org::{MoodEntry, MoodRepository};
use time::{Date, OffsetDateTime};

use crate::Database;
use crate::error::db_error;
use crate::schema::mood_entries;

/// Postgres implementation of [`MoodRepository`].
#[derive(Clone)]
pub struct PgMoodRepository {
    db: Database,
}

impl PgMoodRepository {
    pub fn new(db: Database) -> Self {
        PgMoodRepository { db }
    }
}

#[async_trait]
impl MoodRepository for PgMoodRepository {
    async fn insert_mood(
        &self,
        org: OrgId,
        user: UserId,
        date: Date,
        score: i16,
    ) -> Result<MoodEntry, RepoError> {
        let mut conn = self.db.conn().await?;
        let created_at: OffsetDateTime = diesel::insert_into(mood_entries::table)
            .values((
                mood_entries::user_id.eq(user.0),
                mood_entries::entry_date.eq(date),
                mood_entries::organization_id.eq(org.0),
                mood_entries::score.eq(score),
            ))
            .returning(mood_entries::created_at)
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(MoodEntry {
            user_id: user,
            date,
            score,
            created_at,
        })
    }

    async fn get_mood(&self, user: UserId, date: Date) -> Result<Option<MoodEntry>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<(i16, OffsetDateTime)> = mood_entries::table
            .find((user.0, date))
            .select((mood_entries::score, mood_entries::created_at))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(row.map(|(score, created_at)| MoodEntry {
            user_id: user,
            date,
            score,
            created_at,
        }))
    }
}
