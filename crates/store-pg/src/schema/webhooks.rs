//! Webhook endpoints (`migrations/2026-11-26-020000_webhooks`) and their deliveries
//! (`migrations/2026-11-26-030000_webhook_deliveries`).

diesel::table! {
    webhook_endpoints (id) {
        id -> Uuid,
        organization_id -> Uuid,
        url -> Text,
        events -> Array<Text>,
        name -> Text,
        object_ids -> Array<Uuid>,
        signing_secret -> Bytea,
        bearer_token -> Nullable<Bytea>,
        enabled -> Bool,
        disabled_reason -> Nullable<Text>,
        created_by_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> Uuid,
        organization_id -> Uuid,
        endpoint_id -> Uuid,
        event_id -> Uuid,
        event_type -> Text,
        status -> Text,
        attempts -> Int4,
        last_status_code -> Nullable<Int4>,
        last_error -> Nullable<Text>,
        next_attempt_at -> Nullable<Timestamptz>,
        delivered_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

use super::outbox_events;

diesel::allow_tables_to_appear_in_same_query!(webhook_endpoints, webhook_deliveries, outbox_events);
