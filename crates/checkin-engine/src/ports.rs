//! What the engine needs from storage: its rounds, and the check-ins that run on a schedule.

use async_trait::async_trait;
use teamcomm_forms::checkins::Checkin;
use teamcomm_kernel::{Event, OrgId, RepoError};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::Round;

/// The constraint a round update is refused with when another write came first.
pub const ROUNDS_REVISION: &str = "checkin_rounds_revision";

/// Rounds and finished days. Every round of one (check-in, person, day) is the same row.
#[async_trait]
pub trait RoundRepository: Send + Sync + 'static {
    /// Stores `round` unless its (check-in, person, day) already has one or that day of the
    /// check-in is finished; `true` when this call stored it (the caller opened the round:
    /// the claim). `NotFound` when the organization, check-in or person is unknown.
    async fn open_round(&self, round: &Round) -> Result<bool, RepoError>;

    /// Replaces the stored round by `round` (its revision bumped by the caller) when the stored
    /// revision is still `expected_revision`; `Conflict` ([`ROUNDS_REVISION`]) when another
    /// write came first, `NotFound` when there is no such round.
    async fn update_round(&self, round: &Round, expected_revision: i64) -> Result<(), RepoError>;

    /// The rounds not closed yet, of every organization or of `org`, oldest opened first.
    async fn open_rounds(&self, org: Option<OrgId>) -> Result<Vec<Round>, RepoError>;

    /// Finishes `day` of a check-in: records it finished, closes its rounds at `finished_at` and
    /// writes `events`, together. `false`, nothing written, when the day was already finished
    /// (another server finished it).
    async fn finish_day(
        &self,
        org: OrgId,
        checkin: Uuid,
        day: Date,
        finished_at: OffsetDateTime,
        events: &[Event],
    ) -> Result<bool, RepoError>;
}

/// The check-ins of every organization that ask people on a schedule.
#[async_trait]
pub trait ScheduledCheckins: Send + Sync + 'static {
    /// Active, not archived, not started by events; any order.
    async fn scheduled_checkins(&self) -> Result<Vec<Checkin>, RepoError>;
}
