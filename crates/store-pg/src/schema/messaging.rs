//! Bot messages and their deliveries, e-mails, platform connections and identities
//! (`migrations/2026-11-25-110000_messaging`).

diesel::table! {
    messages (id) {
        id -> Uuid,
        organization_id -> Uuid,
        sender_id -> Uuid,
        send_as_id -> Nullable<Uuid>,
        kind -> Text,
        thread_parent_id -> Nullable<Uuid>,
        thread_position -> Nullable<Int4>,
        edit_of_id -> Nullable<Uuid>,
        body -> Text,
        image_url -> Nullable<Text>,
        buttons -> Jsonb,
        bot_username -> Nullable<Text>,
        bot_icon_url -> Nullable<Text>,
        bot_icon_emoji -> Nullable<Text>,
        is_ephemeral -> Bool,
        metadata -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    message_deliveries (message_id, position) {
        message_id -> Uuid,
        position -> Int4,
        recipient_id -> Nullable<Uuid>,
        channel_id -> Nullable<Text>,
        thread_id -> Nullable<Text>,
        status -> Text,
        platform_channel_id -> Nullable<Text>,
        platform_message_id -> Nullable<Text>,
        failure_reason -> Nullable<Text>,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    emails (id) {
        id -> Uuid,
        organization_id -> Uuid,
        sender_id -> Uuid,
        recipient_id -> Uuid,
        to_address -> Text,
        to_name -> Nullable<Text>,
        subject -> Text,
        html_body -> Nullable<Text>,
        text_body -> Text,
        status -> Text,
        failure_reason -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    platform_connections (organization_id) {
        organization_id -> Uuid,
        kind -> Text,
        base_url -> Nullable<Text>,
        sealed_secret -> Bytea,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        sealed_signing_secret -> Nullable<Bytea>,
    }
}

diesel::table! {
    platform_identities (organization_id, kind, user_id) {
        organization_id -> Uuid,
        kind -> Text,
        user_id -> Uuid,
        platform_user_id -> Text,
    }
}

diesel::joinable!(message_deliveries -> messages (message_id));

diesel::allow_tables_to_appear_in_same_query!(messages, message_deliveries);
