//! The check-in engine's rounds and finished days (`migrations/2026-11-25-210000_checkin_rounds`).

diesel::table! {
    checkin_rounds (id) {
        id -> Uuid,
        organization_id -> Uuid,
        checkin_id -> Uuid,
        user_id -> Uuid,
        day -> Date,
        opened_at -> Timestamptz,
        closes_at -> Timestamptz,
        asked -> Int2,
        answered -> Int2,
        reminders_sent -> Int2,
        last_sent_at -> Nullable<Timestamptz>,
        completed -> Bool,
        last_reply -> Nullable<Text>,
        closed_at -> Nullable<Timestamptz>,
        revision -> Int8,
    }
}

diesel::table! {
    checkin_finished_days (checkin_id, day) {
        checkin_id -> Uuid,
        day -> Date,
        organization_id -> Uuid,
        finished_at -> Timestamptz,
    }
}
