//! SQL of the Plan area: one module per port of `teamcomm_plan::ports`, and `holders` for what
//! the project and board ports share.

mod boards;
mod holders;
mod idempotency;
mod projects;
mod social;
mod tasks;

pub use boards::PgBoards;
pub use idempotency::PgIdempotency;
pub use projects::PgProjects;
pub use social::PgTaskSocial;
pub use tasks::PgTasks;
