//! Workflows and their runs (`migrations/2026-11-26-040000_workflows`,
//! `2026-11-26-050000_workflow_run_execution`).

use super::labels::{entity_labels, featured_entities};

diesel::table! {
    workflows (id) {
        id -> Uuid,
        organization_id -> Uuid,
        name -> Text,
        description -> Text,
        trigger_type -> Text,
        actions -> Jsonb,
        active -> Bool,
        frozen -> Bool,
        total_runs -> Int8,
        last_run_at -> Nullable<Timestamptz>,
        created_by_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    workflow_runs (id) {
        id -> Uuid,
        organization_id -> Uuid,
        workflow_id -> Uuid,
        status -> Text,
        payload -> Jsonb,
        triggered_by_id -> Nullable<Uuid>,
        queued_at -> Timestamptz,
        started_at -> Nullable<Timestamptz>,
        finished_at -> Nullable<Timestamptz>,
        error -> Nullable<Text>,
        actions_completed -> Int4,
    }
}

diesel::allow_tables_to_appear_in_same_query!(workflows, workflow_runs);
diesel::allow_tables_to_appear_in_same_query!(workflows, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(workflows, featured_entities);
