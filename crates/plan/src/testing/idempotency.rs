//! In memory: the idempotency part of [`super::PlanState`] and [`IdempotencyRepository`].

use std::collections::HashMap;

use async_trait::async_trait;
use teamcomm_kernel::RepoError;
use time::OffsetDateTime;

use super::InMemoryPlan;
use crate::ports::{IdempotencyRepository, Slot, SlotKey, StoredAnswer};

#[derive(Debug, Default)]
pub struct IdempotencyMem {
    pub slots: HashMap<SlotKey, Slot>,
}

fn fresh(request_hash: &[u8], now: OffsetDateTime, locked_until: OffsetDateTime) -> Slot {
    Slot {
        request_hash: request_hash.to_vec(),
        answer: None,
        locked_until,
        created_at: now,
    }
}

#[async_trait]
impl IdempotencyRepository for InMemoryPlan {
    async fn insert_slot(
        &self,
        slot: &SlotKey,
        request_hash: &[u8],
        now: OffsetDateTime,
        locked_until: OffsetDateTime,
    ) -> Result<bool, RepoError> {
        let mut s = self.lock();
        if s.idempotency.slots.contains_key(slot) {
            return Ok(false);
        }
        s.idempotency
            .slots
            .insert(slot.clone(), fresh(request_hash, now, locked_until));
        Ok(true)
    }

    async fn find_slot(&self, slot: &SlotKey) -> Result<Option<Slot>, RepoError> {
        Ok(self.lock().idempotency.slots.get(slot).cloned())
    }

    async fn take_over_slot(
        &self,
        slot: &SlotKey,
        request_hash: &[u8],
        now: OffsetDateTime,
        locked_until: OffsetDateTime,
        stale_before: OffsetDateTime,
    ) -> Result<bool, RepoError> {
        let mut s = self.lock();
        let Some(found) = s.idempotency.slots.get_mut(slot) else {
            return Ok(false);
        };
        let abandoned = found.answer.is_none() && found.locked_until <= now;
        if !abandoned && found.created_at > stale_before {
            return Ok(false);
        }
        *found = fresh(request_hash, now, locked_until);
        Ok(true)
    }

    async fn complete_slot(
        &self,
        slot: &SlotKey,
        locked_until: OffsetDateTime,
        answer: &StoredAnswer,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        if let Some(found) = s.idempotency.slots.get_mut(slot)
            && found.answer.is_none()
            && found.locked_until == locked_until
        {
            found.answer = Some(answer.clone());
        }
        Ok(())
    }

    async fn release_slot(
        &self,
        slot: &SlotKey,
        locked_until: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        if s.idempotency
            .slots
            .get(slot)
            .is_some_and(|f| f.answer.is_none() && f.locked_until == locked_until)
        {
            s.idempotency.slots.remove(slot);
        }
        Ok(())
    }

    async fn prune_slots(&self, before: OffsetDateTime) -> Result<u64, RepoError> {
        let mut s = self.lock();
        let n = s.idempotency.slots.len();
        s.idempotency
            .slots
            .retain(|_, slot| slot.created_at > before);
        Ok((n - s.idempotency.slots.len()) as u64)
    }
}
