//! What the credentials domain needs from the outside world.

use std::sync::Arc;

use async_trait::async_trait;
use teamcomm_kernel::{ApiKeyId, CliTokenId, Error, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_org::Organization;
use time::OffsetDateTime;

use crate::{ApiKey, CliTokenCredential, KeyCredential, Scope, SecretHash};

/// A key to insert. The secret itself is not here: only its hash and suffix are stored.
#[derive(Debug, Clone)]
pub struct NewKeyRecord {
    pub id: ApiKeyId,
    pub org_id: OrgId,
    pub owner_id: UserId,
    pub created_by: Option<UserId>,
    pub name: String,
    pub hash: SecretHash,
    pub suffix: String,
    pub is_agent_key: bool,
    pub scopes: Vec<Scope>,
    pub expiration: Option<OffsetDateTime>,
}

/// Changes to a stored key; `None` keeps the stored value.
#[derive(Debug, Clone, Default)]
pub struct KeyChanges {
    pub name: Option<String>,
    pub active: Option<bool>,
    pub expiration: Option<Option<OffsetDateTime>>,
    pub scopes: Option<Vec<Scope>>,
    /// A regenerated secret: replaces the hash, so the old secret stops working at once.
    pub new_secret: Option<(SecretHash, String)>,
}

/// Which keys a listing covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyListScope {
    Organization,
    OwnedBy(UserId),
}

/// API keys and CLI tokens. Every method that a tenant drives is scoped by `OrgId`; a row of
/// another organization is `RepoError::NotFound`.
#[async_trait]
pub trait KeyRepository: Send + Sync + 'static {
    async fn insert_key(&self, new: &NewKeyRecord) -> Result<ApiKey, RepoError>;
    /// The key with this hash and its owner, in one read (the authentication hot path).
    async fn find_key_credential(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<KeyCredential>, RepoError>;
    async fn list_keys(
        &self,
        org: OrgId,
        scope: KeyListScope,
        page: PageRequest,
    ) -> Result<Page<ApiKey>, RepoError>;
    async fn get_key(&self, org: OrgId, id: ApiKeyId) -> Result<ApiKey, RepoError>;
    async fn update_key(
        &self,
        org: OrgId,
        id: ApiKeyId,
        changes: &KeyChanges,
    ) -> Result<ApiKey, RepoError>;
    async fn delete_key(&self, org: OrgId, id: ApiKeyId) -> Result<(), RepoError>;
    /// Writes a batch of last-usage instants (never moving one backwards).
    async fn record_key_usage(&self, batch: &[(ApiKeyId, OffsetDateTime)])
    -> Result<(), RepoError>;

    async fn insert_cli_token(
        &self,
        org: OrgId,
        user: UserId,
        hash: &SecretHash,
        expires_at: Option<OffsetDateTime>,
    ) -> Result<CliTokenId, RepoError>;
    async fn find_cli_token_credential(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<CliTokenCredential>, RepoError>;
    async fn revoke_cli_token(&self, id: CliTokenId) -> Result<(), RepoError>;
}

/// Organization snapshots as the plan gate sees them. The app implements this with a cache whose
/// time-to-live bounds how long a plan change takes to reach existing keys.
#[async_trait]
pub trait OrgSnapshots: Send + Sync + 'static {
    async fn organization(&self, id: OrgId) -> Result<Arc<Organization>, Error>;
}
