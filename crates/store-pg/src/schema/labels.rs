//! Organization labels, the labels entities carry, and people's featured entities
//! (`migrations/2026-11-23-120000_labels`).

use super::{organizations, users};

diesel::table! {
    labels (id) {
        id -> Uuid,
        organization_id -> Uuid,
        name -> Text,
        color -> Text,
        description -> Text,
        is_archived -> Bool,
        created_by_id -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    entity_labels (entity_type, entity_id, label_id) {
        organization_id -> Uuid,
        entity_type -> Text,
        entity_id -> Uuid,
        label_id -> Uuid,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    featured_entities (user_id, entity_type, entity_id) {
        user_id -> Uuid,
        organization_id -> Uuid,
        entity_type -> Text,
        entity_id -> Uuid,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(entity_labels -> labels (label_id));
diesel::joinable!(labels -> organizations (organization_id));
diesel::joinable!(featured_entities -> users (user_id));

diesel::allow_tables_to_appear_in_same_query!(labels, entity_labels, organizations);
diesel::allow_tables_to_appear_in_same_query!(featured_entities, users);
