//! The durable job queue (`migrations/2026-11-25-100000_jobs`).

diesel::table! {
    jobs (id) {
        id -> Uuid,
        organization_id -> Uuid,
        kind -> Text,
        payload -> Jsonb,
        state -> Text,
        attempt -> Int4,
        max_attempts -> Int4,
        run_at -> Timestamptz,
        lease_until -> Nullable<Timestamptz>,
        last_error -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        finished_at -> Nullable<Timestamptz>,
    }
}
