//! The CLI assistant's sessions (`migrations/2026-11-26-130000_assistant_turns`).

diesel::table! {
    assistant_turns (id) {
        id -> Int8,
        organization_id -> Uuid,
        user_id -> Uuid,
        session_id -> Text,
        role -> Text,
        content -> Text,
        created_at -> Timestamptz,
    }
}
