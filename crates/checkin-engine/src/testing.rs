//! In-memory ports of the engine, for its rule tests and the port contract suite
//! (`tests/contract/rounds.rs`). They answer like the Postgres adapter: the same claims, fences
//! and conflicts (named as the adapter names them), organization scoping (`NotFound`), events
//! recorded under the same lock as the change they report.

use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_forms::checkins::testing::InMemoryCheckinRepository;
use teamcomm_forms::checkins::{Checkin, CheckinRepository};
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::{Event, OrgId, RepoError};
use teamcomm_org::OrgRepository;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::Round;
use crate::ports::{ROUNDS_REVISION, RoundRepository, ScheduledCheckins};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test must not poison the store for the assertions that report it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Default)]
struct State {
    rounds: Vec<Round>,
    /// (check-in, day) finished.
    finished: Vec<(Uuid, Date)>,
}

/// Rounds held in memory, over in-memory check-ins and people.
pub struct InMemoryRoundRepository {
    checkins: Arc<dyn CheckinRepository>,
    people: Arc<dyn OrgRepository>,
    events: RecordedEvents,
    state: Mutex<State>,
}

impl InMemoryRoundRepository {
    /// Rounds of these check-ins and people; events are recorded into `events`.
    pub fn new(
        checkins: Arc<dyn CheckinRepository>,
        people: Arc<dyn OrgRepository>,
        events: RecordedEvents,
    ) -> Self {
        InMemoryRoundRepository {
            checkins,
            people,
            events,
            state: Mutex::default(),
        }
    }

    /// Every round held, closed ones included, in the order they were opened.
    pub fn all(&self) -> Vec<Round> {
        lock(&self.state).rounds.clone()
    }
}

#[async_trait]
impl RoundRepository for InMemoryRoundRepository {
    async fn open_round(&self, round: &Round) -> Result<bool, RepoError> {
        // The references, as the table's foreign keys check them.
        self.checkins
            .get_checkin(round.org_id, round.checkin_id)
            .await?;
        self.people.get_user(round.org_id, round.user_id).await?;
        let mut state = lock(&self.state);
        let taken = state.rounds.iter().any(|r| {
            (r.checkin_id, r.user_id, r.day) == (round.checkin_id, round.user_id, round.day)
        }) || state.finished.contains(&(round.checkin_id, round.day));
        if taken {
            return Ok(false);
        }
        state.rounds.push(round.clone());
        Ok(true)
    }

    async fn update_round(&self, round: &Round, expected_revision: i64) -> Result<(), RepoError> {
        let mut state = lock(&self.state);
        let stored = state
            .rounds
            .iter_mut()
            .find(|r| r.id == round.id && r.org_id == round.org_id)
            .ok_or(RepoError::NotFound)?;
        if stored.revision != expected_revision {
            return Err(RepoError::Conflict {
                constraint: ROUNDS_REVISION.to_owned(),
            });
        }
        *stored = round.clone();
        Ok(())
    }

    async fn open_rounds(&self, org: Option<OrgId>) -> Result<Vec<Round>, RepoError> {
        let mut open: Vec<Round> = lock(&self.state)
            .rounds
            .iter()
            .filter(|r| r.closed_at.is_none() && org.is_none_or(|o| r.org_id == o))
            .cloned()
            .collect();
        open.sort_by_key(|r| (r.opened_at, r.id));
        Ok(open)
    }

    async fn finish_day(
        &self,
        org: OrgId,
        checkin: Uuid,
        day: Date,
        finished_at: OffsetDateTime,
        events: &[Event],
    ) -> Result<bool, RepoError> {
        self.checkins.get_checkin(org, checkin).await?;
        let mut state = lock(&self.state);
        if state.finished.contains(&(checkin, day)) {
            return Ok(false);
        }
        state.finished.push((checkin, day));
        for r in state
            .rounds
            .iter_mut()
            .filter(|r| r.checkin_id == checkin && r.day == day && r.closed_at.is_none())
        {
            r.closed_at = Some(finished_at);
            r.revision += 1;
        }
        self.events.record(events.iter().cloned());
        Ok(true)
    }
}

#[async_trait]
impl ScheduledCheckins for InMemoryCheckinRepository {
    async fn scheduled_checkins(&self) -> Result<Vec<Checkin>, RepoError> {
        Ok(self
            .all_checkins()
            .into_iter()
            .filter(|c| c.active && !c.archived && !c.options.is_trigger_based)
            .collect())
    }
}
