//! The idempotency slots of the marked Plan writes (`plan_idempotency_keys`).

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, RepoError};
use time::OffsetDateTime;

/// Where a slot lives: one per (organization, route template, key).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SlotKey {
    pub org: OrgId,
    /// The route template (`/v1/plan/tasks/{task}/move/`), not the path.
    pub route: String,
    pub key: String,
}

/// A slot as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// SHA-256 of the first request (method, route, body).
    pub request_hash: Vec<u8>,
    /// The first request's answer, once it has one.
    pub answer: Option<StoredAnswer>,
    /// Until when the request that holds it may still be running.
    pub locked_until: OffsetDateTime,
    pub created_at: OffsetDateTime,
}

/// The answer a slot keeps, replayed as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub status: u16,
    pub body: Vec<u8>,
}

#[async_trait]
pub trait IdempotencyRepository: Send + Sync + 'static {
    /// Takes a new slot, running until `locked_until`; false when the slot exists
    /// (`INSERT … ON CONFLICT DO NOTHING`).
    async fn insert_slot(
        &self,
        slot: &SlotKey,
        request_hash: &[u8],
        now: OffsetDateTime,
        locked_until: OffsetDateTime,
    ) -> Result<bool, RepoError>;

    async fn find_slot(&self, slot: &SlotKey) -> Result<Option<Slot>, RepoError>;

    /// Takes over, in one atomic step, a slot that is still without an answer but whose lock
    /// ended at `now` or before, or one created at `stale_before` or before (answered or not):
    /// it starts again as new. False when neither holds (someone else took it first).
    async fn take_over_slot(
        &self,
        slot: &SlotKey,
        request_hash: &[u8],
        now: OffsetDateTime,
        locked_until: OffsetDateTime,
        stale_before: OffsetDateTime,
    ) -> Result<bool, RepoError>;

    /// Keeps the answer of the request holding the slot under the lease `locked_until`
    /// (nothing when another request took the slot over since).
    async fn complete_slot(
        &self,
        slot: &SlotKey,
        locked_until: OffsetDateTime,
        answer: &StoredAnswer,
    ) -> Result<(), RepoError>;

    /// Gives up a slot still without an answer held under the lease `locked_until`.
    async fn release_slot(
        &self,
        slot: &SlotKey,
        locked_until: OffsetDateTime,
    ) -> Result<(), RepoError>;

    /// Deletes the slots created at `before` or earlier; how many.
    async fn prune_slots(&self, before: OffsetDateTime) -> Result<u64, RepoError>;
}
