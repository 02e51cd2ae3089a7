//! Check-ins and their responses (`migrations/2026-11-23-130000_checkins`).

use super::labels::{entity_labels, featured_entities};
use super::users;

diesel::table! {
    checkins (id) {
        id -> Uuid,
        organization_id -> Uuid,
        name -> Text,
        created_by_id -> Nullable<Uuid>,
        template_id -> Nullable<Uuid>,
        active -> Bool,
        is_archived -> Bool,
        schedule_days -> Array<Int2>,
        schedule_time -> Time,
        schedule_timezone -> Text,
        frequency_type -> Text,
        frequency -> Int2,
        frequency_advanced -> Text,
        frequency_cron -> Nullable<Text>,
        start_on -> Date,
        end_on -> Nullable<Date>,
        options -> Jsonb,
        participant_user_ids -> Array<Uuid>,
        participant_team_ids -> Array<Uuid>,
        report_channel_ids -> Array<Text>,
        questions -> Jsonb,
        questions_version -> Int4,
        revision -> Int8,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    checkin_responses (id) {
        id -> Uuid,
        organization_id -> Uuid,
        checkin_id -> Uuid,
        user_id -> Uuid,
        response_date -> Date,
        answers -> Jsonb,
        search_text -> Text,
        last_question_index -> Nullable<Int2>,
        completed -> Bool,
        questions_version -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(checkin_responses -> checkins (checkin_id));
diesel::joinable!(checkin_responses -> users (user_id));

// Only pairs with a check-in table: the others are declared by their own modules.
diesel::allow_tables_to_appear_in_same_query!(checkins, checkin_responses);
diesel::allow_tables_to_appear_in_same_query!(checkins, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(checkins, featured_entities);
diesel::allow_tables_to_appear_in_same_query!(checkin_responses, users);
