//! In-memory implementations of the credentials ports, for rule tests without a database and for
//! the contract tests that hold them to the Postgres adapter's behaviour
//! (`crates/store-pg/src/repo/keys.rs`): keys are scoped by organization (another
//! organization's key is `RepoError::NotFound`), only hashes are kept, listings are newest first,
//! and a write naming a missing organization or person, or reusing an id or hash, is
//! `RepoError::Conflict` with the constraint Postgres would name.
//!
//! People are read through an [`OrgRepository`] (normally `teamcomm_org::testing`'s), as the
//! Postgres adapter joins the `users` table.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_kernel::{
    ApiKeyId, CliTokenId, Error, OrgId, Page, PageRequest, RepoError, SharedClock, SystemClock,
    UserId,
};
use teamcomm_org::{OrgRepository, Organization, User};
use time::OffsetDateTime;

use crate::{
    ApiKey, CliTokenCredential, KeyChanges, KeyCredential, KeyListScope, KeyRepository,
    NewKeyRecord, OrgSnapshots, PersonRef, Scope, SecretHash,
};

pub use crate::daily::InMemoryDailyCounters;

/// The database's limit on key names, in characters (`api_keys.name` CHECK).
const MAX_STORED_NAME: usize = 255;

#[derive(Debug, Clone)]
struct StoredKey {
    id: ApiKeyId,
    org_id: OrgId,
    owner_id: UserId,
    created_by: Option<UserId>,
    name: String,
    hash: SecretHash,
    suffix: String,
    is_agent_key: bool,
    scopes: Vec<Scope>,
    active: bool,
    expiration: Option<OffsetDateTime>,
    last_usage_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
}

#[derive(Debug, Clone)]
struct StoredCliToken {
    id: CliTokenId,
    org_id: OrgId,
    user_id: UserId,
    hash: SecretHash,
    expires_at: Option<OffsetDateTime>,
    revoked: bool,
}

#[derive(Default)]
struct Tables {
    keys: HashMap<ApiKeyId, StoredKey>,
    cli_tokens: HashMap<CliTokenId, StoredCliToken>,
}

/// [`KeyRepository`] in memory.
pub struct InMemoryKeyRepository {
    people: Arc<dyn OrgRepository>,
    clock: SharedClock,
    tables: Mutex<Tables>,
    port_calls: AtomicUsize,
    unavailable: AtomicBool,
}

impl InMemoryKeyRepository {
    /// Keys whose organizations and people live in `people`.
    pub fn new(people: Arc<dyn OrgRepository>) -> Self {
        Self::with_clock(people, Arc::new(SystemClock))
    }

    /// Stamps `created_at` from `clock`, as the database stamps it with `now()`.
    pub fn with_clock(people: Arc<dyn OrgRepository>, clock: SharedClock) -> Self {
        InMemoryKeyRepository {
            people,
            clock,
            tables: Mutex::new(Tables::default()),
            port_calls: AtomicUsize::new(0),
            unavailable: AtomicBool::new(false),
        }
    }

    /// How many times a [`KeyRepository`] method was called: a rule that must decide without
    /// I/O is checked by this staying put.
    pub fn port_calls(&self) -> usize {
        self.port_calls.load(Ordering::Relaxed)
    }

    /// While set, every call answers `RepoError::Unavailable`, as when the database is down.
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.store(unavailable, Ordering::Relaxed);
    }

    fn called(&self) -> Result<(), RepoError> {
        self.port_calls.fetch_add(1, Ordering::Relaxed);
        if self.unavailable.load(Ordering::Relaxed) {
            return Err(RepoError::Unavailable("the store is down".to_owned()));
        }
        Ok(())
    }

    /// The stored hash of a key, to check that a regenerated secret replaced it.
    pub fn stored_hash(&self, id: ApiKeyId) -> Option<SecretHash> {
        self.tables().keys.get(&id).map(|k| k.hash)
    }

    /// How many keys are stored, across organizations.
    pub fn key_count(&self) -> usize {
        self.tables().keys.len()
    }

    /// The stored `last_usage_at` of a key, as the flush left it.
    pub fn stored_last_usage(&self, id: ApiKeyId) -> Option<OffsetDateTime> {
        self.tables().keys.get(&id).and_then(|k| k.last_usage_at)
    }

    fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Foreign keys: the organization and every named person must exist.
    async fn check_references(
        &self,
        table: &str,
        org: OrgId,
        people: &[(&str, UserId)],
    ) -> Result<(), RepoError> {
        match self.people.get_organization(org).await {
            Ok(_) => {}
            Err(RepoError::NotFound) => {
                return Err(conflict(&format!("{table}_organization_id_fkey")));
            }
            Err(e) => return Err(e),
        }
        for (column, id) in people {
            match self.people.find_user(*id).await {
                Ok(_) => {}
                Err(RepoError::NotFound) => {
                    return Err(conflict(&format!("{table}_{column}_fkey")));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn person(&self, id: UserId) -> Result<PersonRef, RepoError> {
        let user = self.people.find_user(id).await?;
        Ok(PersonRef {
            id: user.id,
            full_name: user.full_name(),
        })
    }

    /// A stored key with its owner's and creator's names; a missing owner drops the row, as the
    /// inner join does.
    async fn view(&self, key: StoredKey) -> Result<Option<ApiKey>, RepoError> {
        let owner = match self.person(key.owner_id).await {
            Ok(owner) => owner,
            Err(RepoError::NotFound) => return Ok(None),
            Err(e) => return Err(e),
        };
        let created_by = match key.created_by {
            None => None,
            Some(id) => match self.person(id).await {
                Ok(p) => Some(p),
                Err(RepoError::NotFound) => None,
                Err(e) => return Err(e),
            },
        };
        Ok(Some(ApiKey {
            id: key.id,
            org_id: key.org_id,
            name: key.name,
            key_suffix: key.suffix,
            active: key.active,
            owner,
            created_by,
            is_agent_key: key.is_agent_key,
            scopes: key.scopes,
            last_usage_at: key.last_usage_at,
            expiration: key.expiration,
            created_at: key.created_at,
        }))
    }

    async fn load_key(&self, org: OrgId, id: ApiKeyId) -> Result<ApiKey, RepoError> {
        let found = self
            .tables()
            .keys
            .get(&id)
            .filter(|k| k.org_id == org)
            .cloned();
        let key = found.ok_or(RepoError::NotFound)?;
        self.view(key).await?.ok_or(RepoError::NotFound)
    }

    async fn user_or_none(&self, id: UserId) -> Result<Option<User>, RepoError> {
        match self.people.find_user(id).await {
            Ok(user) => Ok(Some(user)),
            Err(RepoError::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

fn conflict(constraint: &str) -> RepoError {
    RepoError::Conflict {
        constraint: constraint.to_owned(),
    }
}

/// The table's CHECK constraints; Postgres reports their violation as an unexpected error.
fn check_stored_name(name: &str) -> Result<(), RepoError> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_STORED_NAME {
        return Err(RepoError::Other("api_keys_name_check".to_owned()));
    }
    Ok(())
}

fn check_stored_suffix(suffix: &str) -> Result<(), RepoError> {
    if suffix.chars().count() != 4 {
        return Err(RepoError::Other("api_keys_key_suffix_check".to_owned()));
    }
    Ok(())
}

/// Newest first, ties broken by id, as `api_keys_org_idx` serves it.
fn newest_first(a: &StoredKey, b: &StoredKey) -> std::cmp::Ordering {
    (b.created_at, b.id).cmp(&(a.created_at, a.id))
}

fn page_window(len: usize, page: PageRequest) -> std::ops::Range<usize> {
    let start = usize::try_from(page.offset).unwrap_or(usize::MAX).min(len);
    let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
    start..start.saturating_add(limit).min(len)
}

#[async_trait]
impl KeyRepository for InMemoryKeyRepository {
    async fn insert_key(&self, new: &NewKeyRecord) -> Result<ApiKey, RepoError> {
        self.called()?;
        let mut people = vec![("owner_id", new.owner_id)];
        people.extend(new.created_by.map(|id| ("created_by_id", id)));
        self.check_references("api_keys", new.org_id, &people)
            .await?;
        check_stored_name(&new.name)?;
        check_stored_suffix(&new.suffix)?;
        {
            let mut tables = self.tables();
            if tables.keys.contains_key(&new.id) {
                return Err(conflict("api_keys_pkey"));
            }
            if tables.keys.values().any(|k| k.hash == new.hash) {
                return Err(conflict("api_keys_hash_key"));
            }
            tables.keys.insert(
                new.id,
                StoredKey {
                    id: new.id,
                    org_id: new.org_id,
                    owner_id: new.owner_id,
                    created_by: new.created_by,
                    name: new.name.clone(),
                    hash: new.hash,
                    suffix: new.suffix.clone(),
                    is_agent_key: new.is_agent_key,
                    scopes: new.scopes.clone(),
                    active: true,
                    expiration: new.expiration,
                    last_usage_at: None,
                    created_at: self.clock.now(),
                },
            );
        }
        self.load_key(new.org_id, new.id).await
    }

    async fn find_key_credential(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<KeyCredential>, RepoError> {
        self.called()?;
        let found = self
            .tables()
            .keys
            .values()
            .find(|k| k.hash.matches(hash.as_bytes()))
            .cloned();
        let Some(key) = found else {
            return Ok(None);
        };
        let Some(owner) = self.user_or_none(key.owner_id).await? else {
            return Ok(None);
        };
        Ok(Some(KeyCredential {
            id: key.id,
            org_id: key.org_id,
            active: key.active,
            is_agent_key: key.is_agent_key,
            scopes: key.scopes,
            expiration: key.expiration,
            owner,
        }))
    }

    async fn list_keys(
        &self,
        org: OrgId,
        scope: KeyListScope,
        page: PageRequest,
    ) -> Result<Page<ApiKey>, RepoError> {
        self.called()?;
        let mut listed: Vec<StoredKey> = self
            .tables()
            .keys
            .values()
            .filter(|k| k.org_id == org)
            .filter(|k| match scope {
                KeyListScope::Organization => true,
                KeyListScope::OwnedBy(user) => k.owner_id == user,
            })
            .cloned()
            .collect();
        listed.sort_by(newest_first);
        let count = listed.len() as u64;
        let window = page_window(listed.len(), page);
        let mut results = Vec::with_capacity(window.len());
        for key in listed.drain(window) {
            results.extend(self.view(key).await?);
        }
        Ok(Page { count, results })
    }

    async fn get_key(&self, org: OrgId, id: ApiKeyId) -> Result<ApiKey, RepoError> {
        self.called()?;
        self.load_key(org, id).await
    }

    async fn update_key(
        &self,
        org: OrgId,
        id: ApiKeyId,
        changes: &KeyChanges,
    ) -> Result<ApiKey, RepoError> {
        self.called()?;
        if let Some(name) = &changes.name {
            check_stored_name(name)?;
        }
        if let Some((_, suffix)) = &changes.new_secret {
            check_stored_suffix(suffix)?;
        }
        {
            let mut tables = self.tables();
            if let Some((hash, _)) = &changes.new_secret
                && tables.keys.values().any(|k| k.id != id && k.hash == *hash)
            {
                return Err(conflict("api_keys_hash_key"));
            }
            let key = tables
                .keys
                .get_mut(&id)
                .filter(|k| k.org_id == org)
                .ok_or(RepoError::NotFound)?;
            if let Some(name) = &changes.name {
                key.name.clone_from(name);
            }
            if let Some(active) = changes.active {
                key.active = active;
            }
            if let Some(expiration) = changes.expiration {
                key.expiration = expiration;
            }
            if let Some(scopes) = &changes.scopes {
                key.scopes.clone_from(scopes);
            }
            if let Some((hash, suffix)) = &changes.new_secret {
                key.hash = *hash;
                key.suffix.clone_from(suffix);
            }
        }
        self.load_key(org, id).await
    }

    async fn delete_key(&self, org: OrgId, id: ApiKeyId) -> Result<(), RepoError> {
        self.called()?;
        let mut tables = self.tables();
        match tables.keys.get(&id) {
            Some(k) if k.org_id == org => {
                tables.keys.remove(&id);
                Ok(())
            }
            _ => Err(RepoError::NotFound),
        }
    }

    async fn record_key_usage(
        &self,
        batch: &[(ApiKeyId, OffsetDateTime)],
    ) -> Result<(), RepoError> {
        self.called()?;
        let mut tables = self.tables();
        for (id, at) in batch {
            if let Some(key) = tables.keys.get_mut(id) {
                key.last_usage_at = Some(key.last_usage_at.map_or(*at, |stored| stored.max(*at)));
            }
        }
        Ok(())
    }

    async fn insert_cli_token(
        &self,
        org: OrgId,
        user: UserId,
        hash: &SecretHash,
        expires_at: Option<OffsetDateTime>,
    ) -> Result<CliTokenId, RepoError> {
        self.called()?;
        self.check_references("cli_tokens", org, &[("user_id", user)])
            .await?;
        let id = CliTokenId::new();
        let mut tables = self.tables();
        if tables.cli_tokens.values().any(|t| t.hash == *hash) {
            return Err(conflict("cli_tokens_hash_key"));
        }
        tables.cli_tokens.insert(
            id,
            StoredCliToken {
                id,
                org_id: org,
                user_id: user,
                hash: *hash,
                expires_at,
                revoked: false,
            },
        );
        Ok(id)
    }

    async fn find_cli_token_credential(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<CliTokenCredential>, RepoError> {
        self.called()?;
        let found = self
            .tables()
            .cli_tokens
            .values()
            .find(|t| t.hash.matches(hash.as_bytes()))
            .cloned();
        let Some(token) = found else {
            return Ok(None);
        };
        let Some(user) = self.user_or_none(token.user_id).await? else {
            return Ok(None);
        };
        Ok(Some(CliTokenCredential {
            id: token.id,
            org_id: token.org_id,
            expires_at: token.expires_at,
            revoked: token.revoked,
            user,
        }))
    }

    async fn revoke_cli_token(&self, id: CliTokenId) -> Result<(), RepoError> {
        self.called()?;
        if let Some(token) = self.tables().cli_tokens.get_mut(&id) {
            token.revoked = true;
        }
        Ok(())
    }
}

/// [`OrgSnapshots`] read straight through an [`OrgRepository`], with no cache: a plan change is
/// seen by the next authentication.
pub struct UncachedOrgSnapshots {
    orgs: Arc<dyn OrgRepository>,
}

impl UncachedOrgSnapshots {
    pub fn new(orgs: Arc<dyn OrgRepository>) -> Self {
        UncachedOrgSnapshots { orgs }
    }
}

#[async_trait]
impl OrgSnapshots for UncachedOrgSnapshots {
    async fn organization(&self, id: OrgId) -> Result<Arc<Organization>, Error> {
        Ok(Arc::new(self.orgs.get_organization(id).await?))
    }
}

pub use crate::login_memory::{InMemoryLoginCodes, RecordingLoginMailer};
