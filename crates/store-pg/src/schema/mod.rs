//! Table definitions, kept in step with `migrations/` by hand (diesel's `print-schema` needs
//! libpq, which the build avoids); a wrong column fails the first query that reads it, which the
//! port contract suite (`tests/contract`) runs against the migrated database.
//!
//! The directory's tables are here; each later area declares its own in a submodule (and the
//! pairs it joins with `allow_tables_to_appear_in_same_query!` there).

// `agents::{agent_reports, agent_health_checks, agent_messages, agent_register_challenges,
// agent_registrations, agent_keys}`.
pub(crate) mod agents;
// `labels::{labels, entity_labels, featured_entities}` (the module shares the table's name).
// `checkins::{checkins, checkin_responses}`.
pub(crate) mod checkins;
// `cursors::platform_poll_cursors`.
pub(crate) mod cursors;
// `daily_counters::daily_counters`.
pub(crate) mod daily_counters;
// `kudos::{company_values, kudos, kudos_receivers, kudos_boosts}`.
// `forms::{forms, form_responses, form_response_transitions}`.
pub(crate) mod forms;
// `jobs::jobs`.
pub(crate) mod jobs;
pub(crate) mod kudos;
pub(crate) mod labels;
// `login_codes::{login_codes, organization_login_numbers}`.
pub(crate) mod login_codes;
// `messaging::{messages, message_deliveries, emails, platform_connections, platform_identities}`.
pub(crate) mod messaging;
mod outbox;
// `rounds::{checkin_rounds, checkin_finished_days}`.
pub(crate) mod rounds;
// `webhooks::webhook_endpoints`.
pub(crate) mod webhooks;
// `workflows::{workflows, workflow_runs}`.
pub(crate) mod workflows;
// `assistant::assistant_turns`.
pub(crate) mod assistant;
// `plan::{plan_projects, plan_boards, plan_states, plan_tasks, …}`.
pub(crate) mod plan;

pub(crate) use outbox::outbox_events;

diesel::table! {
    organizations (id) {
        id -> Uuid,
        name -> Text,
        plan -> Text,
        api_access -> Bool,
        plan_beta -> Bool,
        exchange_tokens -> Bool,
        timezone -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        platform -> Nullable<Text>,
        user_count -> Int8,
        active_user_count -> Int8,
    }
}

diesel::table! {
    users (id) {
        id -> Uuid,
        organization_id -> Uuid,
        email -> Text,
        first_name -> Text,
        last_name -> Text,
        role -> Text,
        is_active -> Bool,
        timezone -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        occupation -> Text,
        image -> Nullable<Text>,
        birth_date -> Nullable<Text>,
        work_anniversary -> Nullable<Date>,
        search_name -> Text,
        search_email -> Text,
    }
}

diesel::table! {
    teams (id) {
        id -> Uuid,
        organization_id -> Uuid,
        name -> Text,
        created_at -> Timestamptz,
        active -> Bool,
        is_default -> Bool,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    team_members (team_id, user_id) {
        team_id -> Uuid,
        user_id -> Uuid,
        created_at -> Timestamptz,
        role -> Text,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Uuid,
        organization_id -> Uuid,
        owner_id -> Uuid,
        created_by_id -> Nullable<Uuid>,
        name -> Text,
        key_hash -> Bytea,
        key_suffix -> Text,
        is_agent_key -> Bool,
        scopes -> Array<Text>,
        active -> Bool,
        expiration -> Nullable<Timestamptz>,
        last_usage_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    cli_tokens (id) {
        id -> Uuid,
        organization_id -> Uuid,
        user_id -> Uuid,
        token_hash -> Bytea,
        expires_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    invitations (id) {
        id -> Uuid,
        organization_id -> Uuid,
        identifier -> Text,
        is_email -> Bool,
        is_guest -> Bool,
        team_ids -> Array<Uuid>,
        followup_ids -> Array<Uuid>,
        invited_by_id -> Nullable<Uuid>,
        resend_count -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    report_channels (organization_id, id) {
        organization_id -> Uuid,
        id -> Text,
        name -> Text,
        platform -> Text,
        channel_type -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    templates (id) {
        id -> Uuid,
        organization_id -> Nullable<Uuid>,
        name -> Text,
        template_type -> Text,
        system_default -> Bool,
        description -> Text,
        intro_message -> Text,
        outro_message -> Text,
        questions -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    mood_entries (user_id, entry_date) {
        user_id -> Uuid,
        entry_date -> Date,
        organization_id -> Uuid,
        score -> Int2,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(users -> organizations (organization_id));
diesel::joinable!(teams -> organizations (organization_id));
diesel::joinable!(team_members -> teams (team_id));
diesel::joinable!(team_members -> users (user_id));
diesel::joinable!(api_keys -> organizations (organization_id));
diesel::joinable!(cli_tokens -> users (user_id));

diesel::allow_tables_to_appear_in_same_query!(
    organizations,
    users,
    teams,
    team_members,
    api_keys,
    cli_tokens
);
