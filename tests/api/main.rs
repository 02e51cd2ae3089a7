//! Black-box API tests: the real app over HTTP against a fresh Postgres database per test.

mod admin;
mod api_keys;
mod auth;
mod catalog;
mod checkin_responses;
mod checkins;
mod cli;
mod contract;
mod directory;
mod directory_events;
mod docs_ui;
mod envelope;
mod form_responses;
mod forms;
mod invitations;
mod kudos;
mod labels;
mod lifecycle;
mod logging;
mod me;
mod openapi;
mod operator;
mod ratelimit;
mod routes;
mod teams;
mod tls;
