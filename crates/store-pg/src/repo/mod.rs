mod directory;
mod keys;
mod org;
mod teams;

pub use directory::PgDirectoryRepository;
pub use keys::PgKeyRepository;
pub use org::PgOrgRepository;
pub use teams::PgTeamRepository;
