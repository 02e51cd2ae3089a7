diesel::table! {
    outbox_events (id) {
        id -> Uuid,
        organization_id -> Uuid,
        event_type -> Text,
        object_id -> Nullable<Uuid>,
        payload -> Jsonb,
        occurred_at -> Timestamptz,
        created_at -> Timestamptz,
        relayed_at -> Nullable<Timestamptz>,
    }
}
