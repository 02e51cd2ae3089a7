//! The Postgres adapter: implements the domain ports with diesel + diesel-async, and owns the
//! embedded migrations of the top-level `migrations/` directory.

mod error;
mod pool;
mod repo;
mod rows;
mod schema;
mod secrets;

pub use pool::{
    Database, MIGRATIONS, PgPool, StartupError, StartupFailure, create_database_if_missing,
    quote_ident, run_migrations, split_database,
};
pub use repo::PgDailyCounters;
pub use repo::PgLoginCodes;
pub use repo::PgPollCursors;
pub use repo::PgRoundRepository;
pub use repo::PgWebhookDeliveries;
pub use repo::PgWebhookRepository;
pub use repo::PgWorkflowRepository;
pub use repo::{Backlog, PgConversationRepository, PgJobQueue};
pub use repo::{PgAgentHooks, PgAgentRepository};
pub use repo::{PgBoards, PgIdempotency, PgProjects, PgTaskSocial, PgTasks};
pub use repo::{
    PgChannelRepository, PgCheckinRepository, PgFeaturedRepository, PgFormRepository,
    PgInvitationRepository, PgKeyRepository, PgKudosRepository, PgLabelRepository,
    PgLabelledEntities, PgMoodRepository, PgOrgRepository, PgTeamRepository, PgTemplateRepository,
};
pub use repo::{PgEmailRepository, PgMessageRepository, PgPlatformDirectory};
pub use secrets::{MIN_CONFIGURED_SECRET_LEN, PlatformSecretKey, SecretKeyTooShort};

#[async_trait::async_trait]
impl teamcomm_kernel::Readiness for Database {
    async fn ready(&self) -> bool {
        self.ping().await
    }
}
