mod keys;
mod org;

pub use keys::PgKeyRepository;
pub use org::PgOrgRepository;
