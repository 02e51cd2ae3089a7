//! Time as a port, so rules that depend on "now" (expiry, TTLs) can be tested without sleeping.

use std::sync::Arc;
use time::OffsetDateTime;

pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> OffsetDateTime;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    /// Microsecond precision, the precision Postgres stores, so an instant read back from the
    /// database equals the one that was written.
    fn now(&self) -> OffsetDateTime {
        let now = OffsetDateTime::now_utc();
        now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
            .unwrap_or(now)
    }
}

pub type SharedClock = Arc<dyn Clock>;
