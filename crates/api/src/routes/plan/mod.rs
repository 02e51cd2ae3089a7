//! `/v1/plan/`: the Plan (Beta) area. Each module holds its handlers, body and query structs,
//! and its part of the route table (`declare`), which `routes::declare` calls in this order:
//! fixed segments come before `{id}` ones inside each module. The rules every Plan door shares
//! (credentials, the beta gate, scopes) are its policy (`Policy::plan_*`, applied by
//! `auth::authenticate_plan`); the rules of its bodies and answers are in `common`.

pub mod boards;
pub mod bulk;
pub mod common;
pub mod members;
pub mod projects;
pub mod social;
pub mod tasks;

use crate::policy::Routes;

/// The Plan part of the route table.
pub fn declare(r: &mut Routes<'_, '_>) {
    projects::declare(r);
    boards::declare(r);
    bulk::declare(r);
    tasks::declare(r);
    social::declare(r);
}
