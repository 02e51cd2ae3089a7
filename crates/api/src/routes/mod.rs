//! HTTP routes, one module per area. Registration (and with it the OpenAPI document) is in
//! [`configure`].

pub mod api_keys;
pub mod bench;
pub mod health;
pub mod me;
pub mod operator;
pub mod session;

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
        .service(operator::create_organization)
        .service(operator::update_organization)
        .service(operator::create_user)
        .service(operator::update_user)
        .service(operator::create_session)
        .service(operator::create_cli_token);
}
