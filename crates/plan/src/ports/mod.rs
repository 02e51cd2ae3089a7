//! What the Plan area needs from storage. Every read and write takes the organization; a row of
//! another organization is `RepoError::NotFound`. One trait per aggregate, each implemented by
//! one module of `teamcomm-store-pg` (`repo/plan/`) and of [`crate::testing`].
//!
//! - [`ProjectRepository`]: projects and their member grants.
//! - [`BoardRepository`]: boards, their keys (current and retired), member grants, visits and
//!   columns.
//! - [`TaskRepository`]: tasks (numbers, versions, ranks), their event log, the delta feed.
//! - [`TaskSocialRepository`]: relations, comments, reactions, participants, task labels.
//! - [`IdempotencyRepository`]: the slots of the marked writes.

mod boards;
mod idempotency;
mod projects;
mod social;
mod tasks;

pub use boards::*;
pub use idempotency::*;
pub use projects::*;
pub use social::*;
pub use tasks::*;
