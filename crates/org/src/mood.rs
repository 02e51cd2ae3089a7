//! Mood tracking (`MoodService`): one score from 1 to 5 per person per day, for a recent day.

use std::sync::Arc;

use teamcomm_kernel::{Error, ErrorCode, RepoError, SharedClock, UserId, zone};
use time::{Date, Duration, OffsetDateTime};

use crate::{MoodRepository, User};

#[cfg(test)]
mod tests;

/// One mood score of a person for a day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoodEntry {
    pub user_id: UserId,
    pub date: Date,
    pub score: i16,
    pub created_at: OffsetDateTime,
}

/// Validates a mood score (1 to 5).
pub fn validate_score(score: i64) -> Result<i16, Error> {
    if (1..=5).contains(&score) {
        Ok(score as i16)
    } else {
        Err(Error::new(
            ErrorCode::InvalidScore,
            "The score must be a whole number from 1 to 5.",
        ))
    }
}

/// How far back a missed day may still be scored. A mood score is a daily check-in whose worth
/// is in recent trends: backfilling a forgotten day, week or quarter is useful, scores from
/// years ago are not (and 1900-01-01 is a typo). Two years leaves room for a yearly review
/// looking back over the whole past year.
pub const MOOD_BACKFILL: Duration = Duration::days(730);

/// The day a score is for: not in the future, not more than [`MOOD_BACKFILL`] ago.
pub fn validate_mood_date(date: Date, today: Date) -> Result<Date, Error> {
    if date > today {
        return Err(Error::invalid_field(
            "date",
            "The date cannot be in the future.",
        ));
    }
    if date < today - MOOD_BACKFILL {
        return Err(Error::invalid_field(
            "date",
            format!(
                "The date cannot be more than {} days ago.",
                MOOD_BACKFILL.whole_days()
            ),
        ));
    }
    Ok(date)
}

/// The actor's own mood scores.
#[derive(Clone)]
pub struct MoodService {
    moods: Arc<dyn MoodRepository>,
    clock: SharedClock,
}

impl MoodService {
    pub fn new(moods: Arc<dyn MoodRepository>, clock: SharedClock) -> Self {
        MoodService { moods, clock }
    }

    /// The actor's today: the day it is in their time zone.
    fn today(&self, actor: &User) -> Date {
        zone::local_date(self.clock.now(), &actor.timezone)
    }

    /// Records the actor's mood for `date` (default their today, in their time zone); one score
    /// per person per day, a second is `motivation_score_already_completed`.
    pub async fn track_mood(
        &self,
        actor: &User,
        score: i64,
        date: Option<Date>,
    ) -> Result<MoodEntry, Error> {
        let today = self.today(actor);
        let date = validate_mood_date(date.unwrap_or(today), today)?;
        let score = validate_score(score)?;
        match self
            .moods
            .insert_mood(actor.org_id, actor.id, date, score)
            .await
        {
            Err(RepoError::Conflict { .. }) => Err(Error::new(
                ErrorCode::MotivationScoreAlreadyCompleted,
                "Motivation score already completed.",
            )),
            other => Ok(other?),
        }
    }

    /// The actor's score for `date` (default their today), if any.
    pub async fn mood(&self, actor: &User, date: Option<Date>) -> Result<Option<MoodEntry>, Error> {
        Ok(self
            .moods
            .get_mood(actor.id, date.unwrap_or_else(|| self.today(actor)))
            .await?)
    }
}
