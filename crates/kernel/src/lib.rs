//! teamcomm's shared kernel: what every domain crate speaks.

mod clock;
mod codes;
mod error;
pub mod events;
pub mod filters;
mod ids;
pub mod jobs;
mod paging;
pub mod text;
mod validation;
mod wire;
pub mod zone;

pub use clock::{Clock, SharedClock, SystemClock};
pub use codes::ErrorCode;
pub use error::{Error, INTERNAL_DETAIL, RepoError, internal};
pub use events::{Event, EventType};
pub use ids::{ApiKeyId, CliTokenId, OrgId, TeamId, UserId};
pub use paging::{Page, PageRequest};
pub use validation::FieldErrors;
pub use wire::WireEnum;

/// Result of a domain operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Whether the stores the service needs answer (the readiness probe's port).
#[async_trait::async_trait]
pub trait Readiness: Send + Sync + 'static {
    async fn ready(&self) -> bool;
}
