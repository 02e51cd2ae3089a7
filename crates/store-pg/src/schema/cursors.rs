//! Where the reply loop's polls ended (`migrations/2026-11-26-010000_platform_poll_cursors`).

diesel::table! {
    platform_poll_cursors (organization_id) {
        organization_id -> Uuid,
        kind -> Text,
        cursor -> Text,
        updated_at -> Timestamptz,
    }
}
