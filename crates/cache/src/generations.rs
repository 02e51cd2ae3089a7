//! Per-organization generation counters: a cache key includes the organization's generation,
//! and a write bumps it, which makes every entry cached before the write unreachable at once.
//! A load that started before the write stores its (possibly stale) result under the old
//! generation, where nobody looks: no race between a write and a concurrent read-through.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use teamcomm_kernel::OrgId;

#[derive(Default)]
pub(crate) struct Generations(Mutex<HashMap<OrgId, u64>>);

impl Generations {
    fn lock(&self) -> MutexGuard<'_, HashMap<OrgId, u64>> {
        // Counters stay consistent even if a holder panicked: each update is one statement.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn current(&self, org: OrgId) -> u64 {
        self.lock().get(&org).copied().unwrap_or(0)
    }

    /// Starts a new generation for `org`; returns the one that just ended.
    pub(crate) fn bump(&self, org: OrgId) -> u64 {
        let mut map = self.lock();
        let generation = map.entry(org).or_insert(0);
        *generation += 1;
        *generation - 1
    }
}
