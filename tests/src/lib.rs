//! Test kit: a fresh database per test cloned from a migrated template, the real app served on
//! an ephemeral port, and small helpers to provision organizations, people and credentials
//! through the operator API.

mod db;
mod http;

pub use db::TestDb;
pub use http::{OPERATOR_TOKEN, Resp, TestApp, TestAppBuilder};
