//! Test kit: a fresh database per test cloned from a migrated template, the real app served on
//! an ephemeral port, and small helpers to provision organizations, people and credentials
//! through the operator API.

mod db;
mod http;
mod outbox;
pub mod receiver;
mod slack;
pub mod smtp;

pub use outbox::{check_documented, documented_event_types};
pub use slack::FakeSlack;

pub use db::TestDb;
pub use http::{OPERATOR_TOKEN, Resp, TestApp, TestAppBuilder};

/// A UUID that names nothing: what a path placeholder gets when the object does not matter.
pub const ANY_ID: &str = "0190a6b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b";

/// A concrete path for a route template: every placeholder left becomes [`ANY_ID`].
pub fn concrete_path(template: &str) -> String {
    template
        .split('/')
        .map(|s| if s.starts_with('{') { ANY_ID } else { s })
        .collect::<Vec<_>>()
        .join("/")
}
