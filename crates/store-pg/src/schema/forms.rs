//! Forms, their responses and the responses' workflow moves
//! (`migrations/2026-11-23-140000_forms`).

use super::labels::{entity_labels, featured_entities};
use super::users;

diesel::table! {
    forms (id) {
        id -> Uuid,
        organization_id -> Uuid,
        owner_id -> Uuid,
        name -> Text,
        questions -> Jsonb,
        questions_version -> Int4,
        report_channels -> Array<Text>,
        is_active -> Bool,
        is_anonymous -> Bool,
        allow_public_responses -> Bool,
        require_email_and_name -> Bool,
        brand_with_logo -> Bool,
        allow_reopen_from_final_state -> Bool,
        use_for_approval -> Bool,
        workflow -> Nullable<Jsonb>,
        who_can_edit -> Jsonb,
        who_can_see_responses -> Jsonb,
        who_can_change_states -> Jsonb,
        approvers -> Jsonb,
        command -> Nullable<Text>,
        command_enabled -> Bool,
        is_archived -> Bool,
        version -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    form_responses (id) {
        id -> Uuid,
        organization_id -> Uuid,
        form_id -> Uuid,
        submitted_by -> Uuid,
        submission_source -> Text,
        submission_label -> Nullable<Text>,
        guest_name -> Nullable<Text>,
        guest_email -> Nullable<Text>,
        content -> Jsonb,
        search_text -> Text,
        current_state -> Nullable<Text>,
        edited -> Bool,
        version -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    form_response_transitions (id) {
        id -> Uuid,
        response_id -> Uuid,
        from_state -> Text,
        to_state -> Text,
        actor_id -> Nullable<Uuid>,
        note -> Nullable<Text>,
        at -> Timestamptz,
    }
}

diesel::joinable!(form_response_transitions -> form_responses (response_id));

diesel::allow_tables_to_appear_in_same_query!(
    forms,
    form_responses,
    form_response_transitions,
    users
);
diesel::allow_tables_to_appear_in_same_query!(forms, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(forms, featured_entities);
