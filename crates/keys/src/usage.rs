//! Last-usage tracking without a database write per request: requests touch an in-memory map;
//! a background task flushes it in batches (`KeyRepository::record_key_usage`).

use std::collections::HashMap;
use std::sync::Mutex;

use teamcomm_kernel::ApiKeyId;
use time::OffsetDateTime;

#[derive(Debug, Default)]
pub struct UsageTracker {
    pending: Mutex<HashMap<ApiKeyId, OffsetDateTime>>,
}

impl UsageTracker {
    /// Records that `key` was used at `at`.
    pub fn touch(&self, key: ApiKeyId, at: OffsetDateTime) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let slot = pending.entry(key).or_insert(at);
        if *slot < at {
            *slot = at;
        }
    }

    /// The newest unflushed use of `key`, so reads are current before the flush.
    pub fn pending(&self, key: ApiKeyId) -> Option<OffsetDateTime> {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .copied()
    }

    /// What to flush now.
    pub fn snapshot(&self) -> Vec<(ApiKeyId, OffsetDateTime)> {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.iter().map(|(k, v)| (*k, *v)).collect()
    }

    /// Drops what was written, keeping entries touched again since the snapshot.
    pub fn forget_flushed(&self, flushed: &[(ApiKeyId, OffsetDateTime)]) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        for (key, at) in flushed {
            if pending.get(key) == Some(at) {
                pending.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::Duration;

    #[test]
    fn keeps_newest_and_survives_concurrent_touch_during_flush() {
        let t = UsageTracker::default();
        let k = ApiKeyId::new();
        let t0 = OffsetDateTime::UNIX_EPOCH;
        t.touch(k, t0 + Duration::seconds(5));
        t.touch(k, t0);
        assert_eq!(t.pending(k), Some(t0 + Duration::seconds(5)));
        let batch = t.snapshot();
        t.touch(k, t0 + Duration::seconds(9));
        t.forget_flushed(&batch);
        assert_eq!(t.pending(k), Some(t0 + Duration::seconds(9)));
        let batch = t.snapshot();
        t.forget_flushed(&batch);
        assert_eq!(t.pending(k), None);
    }
}
