//! HTTP routes, one module per area. Registration (and with it the OpenAPI document) is in
//! [`configure`].

pub mod api_keys;
pub mod bench;
pub mod catalog;
pub mod health;
pub mod invitations;
pub mod me;
pub mod operator;
pub mod people;
pub mod session;
pub mod teams;

use utoipa_actix_web::service_config::ServiceConfig;

/// Registers every documented route. A route registered here is in `/v1/openapi.json`.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.service(health::healthz)
        .service(health::readyz)
        .service(me::get_me)
        .service(api_keys::create_api_key)
        .service(api_keys::list_api_keys)
        .service(api_keys::get_api_key)
        .service(api_keys::update_api_key)
        .service(api_keys::delete_api_key)
        .service(session::refresh_token)
        .service(people::get_organization)
        .service(people::list_users)
        .service(people::get_user)
        .service(people::update_user)
        .service(people::list_important_dates)
        .service(people::get_important_date)
        .service(teams::list_teams)
        .service(teams::create_team)
        .service(teams::get_team)
        .service(teams::update_team)
        .service(teams::archive_team)
        .service(teams::list_members)
        .service(teams::get_member)
        .service(teams::put_member)
        .service(teams::patch_member)
        .service(teams::remove_member)
        .service(teams::invite_to_team)
        .service(invitations::invite_user)
        // Fixed segments before `{id}`: actix tries routes in registration order.
        .service(invitations::list_member_invitations)
        .service(invitations::list_all_invitations)
        .service(invitations::list_guest_invitations)
        .service(invitations::get_guest_invitation)
        .service(invitations::delete_guest_invitation)
        .service(invitations::get_invitation)
        .service(invitations::delete_invitation)
        .service(catalog::list_templates)
        .service(catalog::get_template)
        .service(catalog::list_report_channels)
        .service(catalog::get_mood)
        .service(catalog::track_mood)
        .service(operator::create_organization)
        .service(operator::update_organization)
        .service(operator::create_user)
        .service(operator::update_user)
        .service(operator::create_session)
        .service(operator::create_cli_token)
        .service(operator::register_channel);
}
