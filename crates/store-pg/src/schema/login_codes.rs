//! CLI one-time-code login (`migrations/2026-11-26-100000_login_codes`).

use super::{organizations, users};

diesel::table! {
    organization_login_numbers (organization_id) {
        organization_id -> Uuid,
        number -> Int8,
    }
}

diesel::table! {
    login_codes (address_hash) {
        address_hash -> Bytea,
        id -> Uuid,
        salt -> Bytea,
        code_hash -> Bytea,
        tries -> Int4,
        expires_at -> Timestamptz,
        used_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(organization_login_numbers -> organizations (organization_id));

diesel::allow_tables_to_appear_in_same_query!(organization_login_numbers, organizations);
diesel::allow_tables_to_appear_in_same_query!(organization_login_numbers, users);
