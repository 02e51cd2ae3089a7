//! Company values, kudos, their receivers and boosts (`migrations/2026-11-23-110000_kudos`).

use super::users;

diesel::table! {
    company_values (id) {
        id -> Uuid,
        organization_id -> Uuid,
        name -> Text,
        emoji -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    kudos (id) {
        id -> Uuid,
        organization_id -> Uuid,
        giver_id -> Uuid,
        company_value_id -> Nullable<Uuid>,
        content -> Text,
        is_anonymous -> Bool,
        by_dailybot -> Bool,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    kudos_receivers (kudos_id, user_id) {
        kudos_id -> Uuid,
        user_id -> Uuid,
    }
}

diesel::table! {
    kudos_boosts (kudos_id, user_id) {
        kudos_id -> Uuid,
        user_id -> Uuid,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(kudos -> company_values (company_value_id));
diesel::joinable!(kudos_receivers -> kudos (kudos_id));
diesel::joinable!(kudos_receivers -> users (user_id));
diesel::joinable!(kudos_boosts -> kudos (kudos_id));
diesel::joinable!(kudos_boosts -> users (user_id));

diesel::allow_tables_to_appear_in_same_query!(
    company_values,
    kudos,
    kudos_receivers,
    kudos_boosts,
    users
);
