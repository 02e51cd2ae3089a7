//! Black-box API tests: the real app over HTTP against a fresh Postgres database per test.

mod admin;
mod api_keys;
mod auth;
mod cli;
mod envelope;
mod me;
mod openapi;
mod operator;
mod tls;
