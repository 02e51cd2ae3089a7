//! The Plan (Beta) area: a project tracker driven through the public API by people and agents.
//!
//! - [`actor`]: who acts ([`PlanActor`]: a person, or an organization/agent key with Tasks
//!   scopes), the agent named on a request ([`AgentName`]), and what each kind of door needs.
//! - [`model`]: ids, the enums the wire names, board keys and task references (`ENG-12`).
//! - [`preview`]: what a dry run answers instead of writing.
//!
//! Every rule lives in a service of this crate and reaches storage through the ports of
//! [`ports`]; `testing` (feature `testing`) holds in-memory implementations.

pub mod actor;
pub mod model;
pub mod ports;
pub mod preview;
pub mod service;

// Each area's rules, as methods of the one `Plan` service.
pub mod access;
pub mod boards;
pub mod bulk;
pub mod comments;
pub mod delta;
pub mod embeds;
pub mod idempotency;
pub mod participants;
pub mod projects;
pub mod relations;
pub mod states;
pub mod task_labels;
pub mod tasks;

pub use actor::{AgentName, PlanActor, PlanScopes};
pub use model::*;
pub use preview::{Preview, Restore};
pub use service::{Plan, PlanPorts};

#[cfg(any(test, feature = "testing"))]
pub mod testing;
