//! The Plan area (`migrations/2026-11-27-000000_plan`): projects, boards and their keys,
//! members and visits, columns and their kept task counts, tasks, the task event log,
//! relations, comments, reactions, participants, idempotency slots.

use super::labels::{entity_labels, labels};
use super::{team_members, teams, users};

diesel::table! {
    plan_projects (id) {
        id -> Uuid,
        organization_id -> Uuid,
        name -> Text,
        description -> Text,
        visibility -> Text,
        lead_id -> Nullable<Uuid>,
        health -> Text,
        start_date -> Nullable<Date>,
        target_date -> Nullable<Date>,
        rank -> Int8,
        is_archived -> Bool,
        archived_at -> Nullable<Timestamptz>,
        created_by_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    plan_project_members (id) {
        id -> Uuid,
        organization_id -> Uuid,
        project_id -> Uuid,
        user_id -> Nullable<Uuid>,
        team_id -> Nullable<Uuid>,
        role -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    plan_boards (id) {
        id -> Uuid,
        organization_id -> Uuid,
        project_id -> Uuid,
        name -> Text,
        key -> Text,
        visibility -> Text,
        estimate_scale -> Text,
        archive_after_days -> Nullable<Int4>,
        rank -> Int8,
        next_task_number -> Int8,
        is_archived -> Bool,
        archived_at -> Nullable<Timestamptz>,
        created_by_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    plan_board_keys (organization_id, key) {
        organization_id -> Uuid,
        key -> Text,
        board_id -> Uuid,
        retired_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    plan_board_members (id) {
        id -> Uuid,
        organization_id -> Uuid,
        board_id -> Uuid,
        user_id -> Nullable<Uuid>,
        team_id -> Nullable<Uuid>,
        role -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    plan_board_visits (user_id, board_id) {
        user_id -> Uuid,
        board_id -> Uuid,
        organization_id -> Uuid,
        visited_at -> Timestamptz,
    }
}

diesel::table! {
    plan_states (id) {
        id -> Uuid,
        organization_id -> Uuid,
        board_id -> Uuid,
        name -> Text,
        category -> Text,
        position -> Int4,
        color -> Nullable<Text>,
        is_default -> Bool,
        is_archived -> Bool,
        archived_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

// Live tasks per board column, kept by triggers on plan_tasks
// (`migrations/2026-11-28-000000_plan_task_counts`).
diesel::table! {
    plan_column_task_counts (board_id, state_id) {
        board_id -> Uuid,
        state_id -> Uuid,
        organization_id -> Uuid,
        live_tasks -> Int8,
    }
}

// Live tasks per board, kept by triggers of their own on plan_tasks
// (`migrations/2026-12-02-000000_plan_board_task_counts`).
diesel::table! {
    plan_board_task_counts (board_id) {
        board_id -> Uuid,
        organization_id -> Uuid,
        live_tasks -> Int8,
    }
}

diesel::table! {
    plan_tasks (id) {
        id -> Uuid,
        organization_id -> Uuid,
        board_id -> Uuid,
        number -> Int8,
        state_id -> Uuid,
        parent_id -> Nullable<Uuid>,
        title -> Text,
        description -> Text,
        owner_id -> Nullable<Uuid>,
        priority -> Nullable<Int2>,
        estimate -> Nullable<Int4>,
        start_date -> Nullable<Date>,
        due_date -> Nullable<Date>,
        milestone_id -> Nullable<Uuid>,
        rank -> Int8,
        version -> Int8,
        is_archived -> Bool,
        archived_at -> Nullable<Timestamptz>,
        archived_with_board -> Bool,
        completed_at -> Nullable<Timestamptz>,
        created_by_id -> Nullable<Uuid>,
        created_by_agent -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    plan_task_events (id) {
        id -> Uuid,
        organization_id -> Uuid,
        board_id -> Uuid,
        task_id -> Uuid,
        #[sql_name = "type"]
        event_type -> Text,
        actor_id -> Nullable<Uuid>,
        agent_name -> Nullable<Text>,
        data -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    plan_task_relations (id) {
        id -> Uuid,
        organization_id -> Uuid,
        source_task_id -> Uuid,
        target_task_id -> Uuid,
        relation_type -> Text,
        created_by_id -> Nullable<Uuid>,
        created_by_agent -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    plan_comments (id) {
        id -> Uuid,
        organization_id -> Uuid,
        task_id -> Uuid,
        parent_id -> Nullable<Uuid>,
        author_id -> Nullable<Uuid>,
        agent_name -> Nullable<Text>,
        body -> Text,
        mentions -> Array<Uuid>,
        edited_at -> Nullable<Timestamptz>,
        deleted_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    plan_comment_reactions (comment_id, user_id, emoji) {
        comment_id -> Uuid,
        user_id -> Uuid,
        emoji -> Text,
        agent_name -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    plan_task_participants (task_id, user_id) {
        task_id -> Uuid,
        user_id -> Uuid,
        organization_id -> Uuid,
        role -> Text,
        source -> Text,
        is_muted -> Bool,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    plan_idempotency_keys (organization_id, route, key) {
        organization_id -> Uuid,
        route -> Text,
        key -> Text,
        request_hash -> Bytea,
        response_status -> Nullable<Int2>,
        response_body -> Nullable<Bytea>,
        locked_until -> Timestamptz,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(plan_boards -> plan_projects (project_id));
diesel::joinable!(plan_states -> plan_boards (board_id));
diesel::joinable!(plan_column_task_counts -> plan_boards (board_id));
diesel::joinable!(plan_column_task_counts -> plan_states (state_id));
diesel::joinable!(plan_board_task_counts -> plan_boards (board_id));
diesel::joinable!(plan_tasks -> plan_boards (board_id));
diesel::joinable!(plan_tasks -> plan_states (state_id));
diesel::joinable!(plan_board_keys -> plan_boards (board_id));
diesel::joinable!(plan_board_members -> plan_boards (board_id));
diesel::joinable!(plan_project_members -> plan_projects (project_id));
diesel::joinable!(plan_comments -> plan_tasks (task_id));
diesel::joinable!(plan_task_events -> plan_tasks (task_id));
diesel::joinable!(plan_task_participants -> plan_tasks (task_id));
diesel::joinable!(plan_comment_reactions -> plan_comments (comment_id));

diesel::allow_tables_to_appear_in_same_query!(
    plan_projects,
    plan_project_members,
    plan_boards,
    plan_board_keys,
    plan_board_members,
    plan_board_visits,
    plan_states,
    plan_column_task_counts,
    plan_board_task_counts,
    plan_tasks,
    plan_task_events,
    plan_task_relations,
    plan_comments,
    plan_comment_reactions,
    plan_task_participants,
    plan_idempotency_keys,
);
// Plan rows joined with the directory (names, teams behind grants) and task labels.
diesel::allow_tables_to_appear_in_same_query!(plan_projects, users);
diesel::allow_tables_to_appear_in_same_query!(plan_projects, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_projects, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_projects, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_projects, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_project_members, users);
diesel::allow_tables_to_appear_in_same_query!(plan_project_members, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_project_members, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_project_members, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_project_members, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_boards, users);
diesel::allow_tables_to_appear_in_same_query!(plan_boards, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_boards, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_boards, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_boards, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_board_keys, users);
diesel::allow_tables_to_appear_in_same_query!(plan_board_keys, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_board_keys, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_board_keys, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_board_keys, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_board_members, users);
diesel::allow_tables_to_appear_in_same_query!(plan_board_members, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_board_members, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_board_members, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_board_members, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_board_visits, users);
diesel::allow_tables_to_appear_in_same_query!(plan_board_visits, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_board_visits, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_board_visits, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_board_visits, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_states, users);
diesel::allow_tables_to_appear_in_same_query!(plan_states, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_states, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_states, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_states, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_tasks, users);
diesel::allow_tables_to_appear_in_same_query!(plan_tasks, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_tasks, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_tasks, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_tasks, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_task_events, users);
diesel::allow_tables_to_appear_in_same_query!(plan_task_events, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_task_events, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_task_events, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_task_events, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_task_relations, users);
diesel::allow_tables_to_appear_in_same_query!(plan_task_relations, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_task_relations, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_task_relations, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_task_relations, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_comments, users);
diesel::allow_tables_to_appear_in_same_query!(plan_comments, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_comments, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_comments, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_comments, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_comment_reactions, users);
diesel::allow_tables_to_appear_in_same_query!(plan_comment_reactions, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_comment_reactions, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_comment_reactions, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_comment_reactions, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_task_participants, users);
diesel::allow_tables_to_appear_in_same_query!(plan_task_participants, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_task_participants, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_task_participants, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_task_participants, labels);
diesel::allow_tables_to_appear_in_same_query!(plan_idempotency_keys, users);
diesel::allow_tables_to_appear_in_same_query!(plan_idempotency_keys, teams);
diesel::allow_tables_to_appear_in_same_query!(plan_idempotency_keys, team_members);
diesel::allow_tables_to_appear_in_same_query!(plan_idempotency_keys, entity_labels);
diesel::allow_tables_to_appear_in_same_query!(plan_idempotency_keys, labels);
