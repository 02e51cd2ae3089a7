//! A read-through cache of API-key credentials: the authentication hot path reads a key and its
//! owner once per time-to-live instead of on every request. What makes a credential stale is a
//! write to keys (created, changed, regenerated, deleted) or to people (an owner deactivated or
//! re-roled); every such write that passes through this process advances a shared
//! [`WriteEpoch`], and cached credentials are keyed by the epoch they were read in, so none
//! outlives a write this instance made. Writes made elsewhere (another instance, `teamcomm
//! admin`) show within the time-to-live (`TEAMCOMM_KEY_CACHE_TTL_SECS`).
//!
//! Only found credentials are kept: an unknown key is read every time, so guessing keys cannot
//! push real ones out of the cache.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use teamcomm_kernel::{ApiKeyId, CliTokenId, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_keys::{
    ApiKey, CliTokenCredential, KeyChanges, KeyCredential, KeyListScope, KeyRepository,
    NewKeyRecord, SecretHash,
};
use time::OffsetDateTime;

/// A count of the writes that make cached credentials stale, shared by the decorators that see
/// them (this one for keys, [`crate::PeoplePageCache`] for people).
#[derive(Debug, Clone, Default)]
pub struct WriteEpoch(Arc<AtomicU64>);

impl WriteEpoch {
    pub fn current(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Makes everything cached before now unreachable.
    pub fn advance(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// A `KeyRepository` that answers `find_key_credential` from memory and passes every other call
/// through.
pub struct KeyCredentialCache {
    inner: Arc<dyn KeyRepository>,
    /// `None` when the time-to-live is zero: every credential is read from `inner`.
    credentials: Option<Cache<(SecretHash, u64), Arc<KeyCredential>>>,
    epoch: WriteEpoch,
}

impl KeyCredentialCache {
    pub fn new(inner: Arc<dyn KeyRepository>, ttl: Duration, epoch: WriteEpoch) -> Self {
        let credentials = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(100_000)
                .time_to_live(ttl)
                .build()
        });
        KeyCredentialCache {
            inner,
            credentials,
            epoch,
        }
    }
}

#[async_trait]
impl KeyRepository for KeyCredentialCache {
    async fn insert_key(&self, new: &NewKeyRecord) -> Result<ApiKey, RepoError> {
        let key = self.inner.insert_key(new).await?;
        self.epoch.advance();
        Ok(key)
    }

    async fn find_key_credential(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<KeyCredential>, RepoError> {
        let Some(cache) = &self.credentials else {
            return self.inner.find_key_credential(hash).await;
        };
        // The epoch is read before the store: a write landing meanwhile keys its result under
        // an epoch nobody asks for again.
        let key = (*hash, self.epoch.current());
        if let Some(found) = cache.get(&key).await {
            return Ok(Some((*found).clone()));
        }
        let found = self.inner.find_key_credential(hash).await?;
        if let Some(credential) = &found {
            cache.insert(key, Arc::new(credential.clone())).await;
        }
        Ok(found)
    }

    async fn list_keys(
        &self,
        org: OrgId,
        scope: KeyListScope,
        page: PageRequest,
    ) -> Result<Page<ApiKey>, RepoError> {
        self.inner.list_keys(org, scope, page).await
    }

    async fn get_key(&self, org: OrgId, id: ApiKeyId) -> Result<ApiKey, RepoError> {
        self.inner.get_key(org, id).await
    }

    async fn update_key(
        &self,
        org: OrgId,
        id: ApiKeyId,
        changes: &KeyChanges,
    ) -> Result<ApiKey, RepoError> {
        let result = self.inner.update_key(org, id, changes).await;
        self.epoch.advance();
        result
    }

    async fn delete_key(&self, org: OrgId, id: ApiKeyId) -> Result<(), RepoError> {
        let result = self.inner.delete_key(org, id).await;
        self.epoch.advance();
        result
    }

    async fn record_key_usage(
        &self,
        batch: &[(ApiKeyId, OffsetDateTime)],
    ) -> Result<(), RepoError> {
        self.inner.record_key_usage(batch).await
    }

    async fn insert_cli_token(
        &self,
        org: OrgId,
        user: UserId,
        hash: &SecretHash,
        expires_at: Option<OffsetDateTime>,
    ) -> Result<CliTokenId, RepoError> {
        self.inner
            .insert_cli_token(org, user, hash, expires_at)
            .await
    }

    async fn find_cli_token_credential(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<CliTokenCredential>, RepoError> {
        self.inner.find_cli_token_credential(hash).await
    }

    async fn revoke_cli_token(&self, id: CliTokenId) -> Result<(), RepoError> {
        self.inner.revoke_cli_token(id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PeoplePageCache;
    use teamcomm_keys::testing::InMemoryKeyRepository;
    use teamcomm_keys::{Secret, SecretKind};
    use teamcomm_org::testing::InMemoryOrgRepository;
    use teamcomm_org::{NewOrganization, NewUser, OrgRepository, User, UserPatch};

    struct World {
        store: Arc<InMemoryKeyRepository>,
        keys: KeyCredentialCache,
        people: PeoplePageCache,
        owner: User,
        hash: SecretHash,
        id: ApiKeyId,
    }

    async fn world(ttl: Duration) -> World {
        let orgs = Arc::new(InMemoryOrgRepository::new());
        let org = orgs
            .create_organization(
                &NewOrganization::new("Acme", "business", None, None, None).unwrap(),
            )
            .await
            .unwrap();
        let owner = orgs
            .create_user(
                org.id,
                &NewUser::new("ada@acme.dev", "Ada", "L", "member", None).unwrap(),
            )
            .await
            .unwrap();
        let store = Arc::new(InMemoryKeyRepository::new(orgs.clone()));
        let epoch = WriteEpoch::default();
        let keys = KeyCredentialCache::new(store.clone(), ttl, epoch.clone());
        let people = PeoplePageCache::new(orgs, Duration::from_secs(60)).with_people_epoch(epoch);
        let hash = Secret::generate(SecretKind::ApiKey).hash();
        let id = ApiKeyId::new();
        keys.insert_key(&NewKeyRecord {
            id,
            org_id: org.id,
            owner_id: owner.id,
            created_by: None,
            name: "k".into(),
            hash,
            suffix: "abcd".into(),
            is_agent_key: false,
            scopes: Vec::new(),
            expiration: None,
        })
        .await
        .unwrap();
        World {
            store,
            keys,
            people,
            owner,
            hash,
            id,
        }
    }

    #[tokio::test]
    async fn a_credential_is_read_once_per_ttl() {
        let w = world(Duration::from_secs(60)).await;
        let before = w.store.port_calls();
        for _ in 0..3 {
            let found = w.keys.find_key_credential(&w.hash).await.unwrap().unwrap();
            assert_eq!(found.id, w.id);
        }
        assert_eq!(w.store.port_calls() - before, 1);
    }

    #[tokio::test]
    async fn unknown_keys_are_never_kept() {
        let w = world(Duration::from_secs(60)).await;
        let unknown = Secret::generate(SecretKind::ApiKey).hash();
        let before = w.store.port_calls();
        for _ in 0..2 {
            assert!(
                w.keys
                    .find_key_credential(&unknown)
                    .await
                    .unwrap()
                    .is_none()
            );
        }
        assert_eq!(w.store.port_calls() - before, 2);
    }

    #[tokio::test]
    async fn key_writes_are_seen_at_once() {
        let w = world(Duration::from_secs(60)).await;
        assert!(
            w.keys
                .find_key_credential(&w.hash)
                .await
                .unwrap()
                .unwrap()
                .active
        );
        let off = KeyChanges {
            active: Some(false),
            ..KeyChanges::default()
        };
        w.keys.update_key(w.owner.org_id, w.id, &off).await.unwrap();
        assert!(
            !w.keys
                .find_key_credential(&w.hash)
                .await
                .unwrap()
                .unwrap()
                .active
        );
        w.keys.delete_key(w.owner.org_id, w.id).await.unwrap();
        assert!(w.keys.find_key_credential(&w.hash).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn an_owner_deactivated_through_the_people_cache_is_seen_at_once() {
        let w = world(Duration::from_secs(60)).await;
        assert!(
            w.keys
                .find_key_credential(&w.hash)
                .await
                .unwrap()
                .unwrap()
                .owner
                .is_active
        );
        w.people
            .update_user(w.owner.id, &UserPatch::new(Some(false), None).unwrap(), &[])
            .await
            .unwrap();
        let found = w.keys.find_key_credential(&w.hash).await.unwrap().unwrap();
        assert!(!found.owner.is_active);
    }

    #[tokio::test]
    async fn a_zero_ttl_reads_every_time() {
        let w = world(Duration::ZERO).await;
        let before = w.store.port_calls();
        for _ in 0..2 {
            w.keys.find_key_credential(&w.hash).await.unwrap();
        }
        assert_eq!(w.store.port_calls() - before, 2);
    }
}
