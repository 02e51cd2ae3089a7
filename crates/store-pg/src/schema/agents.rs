//! Agents' reports, health checks and messages, registration riddles, registrations and agent
//! keys (`migrations/2026-11-26-110000_agents`).

diesel::table! {
    agent_reports (id) {
        id -> Uuid,
        organization_id -> Uuid,
        agent_name -> Text,
        content -> Text,
        structured -> Jsonb,
        metadata -> Jsonb,
        is_milestone -> Bool,
        co_authors -> Jsonb,
        created_by_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    agent_health_checks (id) {
        id -> Uuid,
        organization_id -> Uuid,
        agent_name -> Text,
        ok -> Bool,
        message -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    agent_messages (id) {
        id -> Uuid,
        organization_id -> Uuid,
        agent_name -> Text,
        content -> Text,
        message_type -> Text,
        metadata -> Jsonb,
        sender_type -> Text,
        sender_name -> Nullable<Text>,
        expires_at -> Nullable<Timestamptz>,
        delivered_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    agent_register_challenges (id) {
        id -> Uuid,
        answer -> Int8,
        expires_at -> Timestamptz,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    agent_registrations (organization_id) {
        organization_id -> Uuid,
        agent_name -> Text,
        agent_email -> Text,
        reason -> Text,
        timezone -> Text,
        contact_email -> Nullable<Text>,
        claim_token_hash -> Bytea,
        claim_expires_at -> Timestamptz,
        claimed_by_id -> Nullable<Uuid>,
        claimed_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    agent_keys (id) {
        id -> Uuid,
        organization_id -> Uuid,
        agent_name -> Text,
        key_hash -> Bytea,
        key_suffix -> Text,
        active -> Bool,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    agent_webhooks (organization_id, agent_name) {
        organization_id -> Uuid,
        agent_name -> Text,
        url -> Text,
        secret_sealed -> Nullable<Bytea>,
        updated_at -> Timestamptz,
    }
}

diesel::allow_tables_to_appear_in_same_query!(agent_webhooks, agent_messages);
