//! The teamcomm actix-web application: the public API's routes, credential extractors, the
//! error envelope and configuration. Rules live in the domain crates; SQL in `teamcomm-store-pg`.

pub mod admin;
pub mod app;
pub mod auth;
pub mod config;
pub mod demo;
pub mod dns;
pub mod error;
pub mod extract;
pub mod json_writer;
pub mod jwt;
pub mod localpg;
pub mod login_mail;
pub mod messaging;
pub mod metrics;
pub mod middleware;
pub mod openapi;
pub mod paging;
pub mod params;
pub mod plan_doors;
pub mod policy;
pub mod provision;
pub mod ratelimit;
pub mod routes;
pub mod server;
pub mod state;
pub mod telemetry;
pub mod views;

pub use app::app;
pub use config::Settings;
pub use state::AppState;
