//! Free-plan daily counters (`migrations/2026-11-26-120000_daily_counters`).

diesel::table! {
    daily_counters (organization_id, counter, day) {
        organization_id -> Uuid,
        counter -> Text,
        day -> Date,
        used -> Int4,
    }
}
