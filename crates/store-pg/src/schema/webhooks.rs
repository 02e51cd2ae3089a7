//! Webhook endpoints (`migrations/2026-11-26-020000_webhooks`).

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
