//! The per-organization plan-eligibility cache: organization snapshots that the plan gate reads
//! on every API-key request (`OrgSnapshots`), kept for a time-to-live
//! (`TEAMCOMM_PLAN_CACHE_TTL_SECS`). An organization updated through this decorator is read
//! afresh by the next request; one updated elsewhere within the time-to-live.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use teamcomm_kernel::{Error, Event, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_keys::OrgSnapshots;
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, Organization, OrganizationPatch, ProfilePatch, User,
    UserFilter, UserPatch,
};

use crate::generations::Generations;

/// An `OrgRepository` that passes every call through and also serves [`OrgSnapshots`] from
/// memory; `update_organization` drops that organization's snapshot.
pub struct OrgSnapshotCache {
    inner: Arc<dyn OrgRepository>,
    /// `None` when the time-to-live is zero: every snapshot is read from `inner`.
    snapshots: Option<Cache<(OrgId, u64), Arc<Organization>>>,
    generations: Generations,
}

impl OrgSnapshotCache {
    pub fn new(inner: Arc<dyn OrgRepository>, ttl: Duration) -> Self {
        let snapshots = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(100_000)
                .time_to_live(ttl)
                .build()
        });
        OrgSnapshotCache {
            inner,
            snapshots,
            generations: Generations::default(),
        }
    }
}

#[async_trait]
impl OrgSnapshots for OrgSnapshotCache {
    async fn organization(&self, id: OrgId) -> Result<Arc<Organization>, Error> {
        let load = async {
            self.inner
                .get_organization(id)
                .await
                .map(Arc::new)
                .map_err(Error::from)
        };
        match &self.snapshots {
            None => load.await,
            Some(snapshots) => snapshots
                .try_get_with((id, self.generations.current(id)), load)
                .await
                .map_err(|e: Arc<Error>| (*e).clone()),
        }
    }
}

#[async_trait]
impl OrgRepository for OrgSnapshotCache {
    async fn create_organization(&self, new: &NewOrganization) -> Result<Organization, RepoError> {
        self.inner.create_organization(new).await
    }

    async fn update_organization(
        &self,
        id: OrgId,
        patch: &OrganizationPatch,
    ) -> Result<Organization, RepoError> {
        let updated = self.inner.update_organization(id, patch).await?;
        let ended = self.generations.bump(id);
        if let Some(snapshots) = &self.snapshots {
            snapshots.invalidate(&(id, ended)).await;
        }
        Ok(updated)
    }

    async fn get_organization(&self, id: OrgId) -> Result<Organization, RepoError> {
        self.inner.get_organization(id).await
    }

    async fn is_empty(&self) -> Result<bool, RepoError> {
        self.inner.is_empty().await
    }

    async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, RepoError> {
        self.inner.create_user(org, new).await
    }

    async fn update_user(
        &self,
        id: UserId,
        patch: &UserPatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError> {
        self.inner.update_user(id, patch, activation_events).await
    }

    async fn find_user(&self, id: UserId) -> Result<User, RepoError> {
        self.inner.find_user(id).await
    }

    async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, RepoError> {
        self.inner.get_user(org, id).await
    }

    async fn users_by_ids(&self, org: OrgId, ids: &[UserId]) -> Result<Vec<User>, RepoError> {
        self.inner.users_by_ids(org, ids).await
    }

    async fn list_users(
        &self,
        org: OrgId,
        filter: &UserFilter,
        page: PageRequest,
    ) -> Result<Page<User>, RepoError> {
        self.inner.list_users(org, filter, page).await
    }

    async fn find_users_by_email(
        &self,
        org: OrgId,
        emails: &[String],
    ) -> Result<Vec<User>, RepoError> {
        self.inner.find_users_by_email(org, emails).await
    }

    async fn update_profile(
        &self,
        org: OrgId,
        id: UserId,
        patch: &ProfilePatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError> {
        self.inner
            .update_profile(org, id, patch, activation_events)
            .await
    }

    async fn users_with_important_dates(&self, org: OrgId) -> Result<Vec<User>, RepoError> {
        self.inner.users_with_important_dates(org).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use teamcomm_kernel::{ErrorCode, Event, OrgId, Page, PageRequest, RepoError, UserId};
    use teamcomm_keys::OrgSnapshots;
    use teamcomm_org::testing::InMemoryOrgRepository;
    use teamcomm_org::{
        NewOrganization, NewUser, OrgRepository, Organization, OrganizationPatch, PlanTier,
        ProfilePatch, User, UserFilter, UserPatch,
    };

    use super::OrgSnapshotCache;

    const LONG: Duration = Duration::from_secs(3600);

    async fn with_org(ttl: Duration) -> (Arc<InMemoryOrgRepository>, OrgSnapshotCache, OrgId) {
        let store = Arc::new(InMemoryOrgRepository::new());
        let cache = OrgSnapshotCache::new(store.clone(), ttl);
        let new = NewOrganization::new("Acme", "free", None, None, None).unwrap();
        let org = cache.create_organization(&new).await.unwrap();
        (store, cache, org.id)
    }

    fn to_plan(plan: &str) -> OrganizationPatch {
        OrganizationPatch {
            plan: Some(match plan {
                "business" => PlanTier::Business,
                _ => PlanTier::Enterprise,
            }),
            ..OrganizationPatch::default()
        }
    }

    #[tokio::test]
    async fn an_update_through_the_cache_is_seen_at_once() {
        let (_, cache, org) = with_org(LONG).await;
        assert_eq!(cache.organization(org).await.unwrap().plan, PlanTier::Free);
        cache
            .update_organization(org, &to_plan("business"))
            .await
            .unwrap();
        assert_eq!(
            cache.organization(org).await.unwrap().plan,
            PlanTier::Business
        );
    }

    #[tokio::test]
    async fn an_update_made_elsewhere_waits_for_the_time_to_live() {
        let (store, cache, org) = with_org(LONG).await;
        assert_eq!(cache.organization(org).await.unwrap().plan, PlanTier::Free);
        // Behind the cache's back, as another instance would.
        store
            .update_organization(org, &to_plan("business"))
            .await
            .unwrap();
        assert_eq!(cache.organization(org).await.unwrap().plan, PlanTier::Free);
        // A later write through the cache drops the stale snapshot too.
        cache
            .update_organization(org, &to_plan("enterprise"))
            .await
            .unwrap();
        assert_eq!(
            cache.organization(org).await.unwrap().plan,
            PlanTier::Enterprise
        );
    }

    #[tokio::test]
    async fn an_update_drops_only_that_organizations_snapshot() {
        let (store, cache, acme) = with_org(LONG).await;
        let other = cache
            .create_organization(&NewOrganization::new("Other", "free", None, None, None).unwrap())
            .await
            .unwrap()
            .id;
        cache.organization(acme).await.unwrap();
        cache.organization(other).await.unwrap();
        store
            .update_organization(acme, &to_plan("business"))
            .await
            .unwrap();
        cache
            .update_organization(other, &to_plan("business"))
            .await
            .unwrap();
        assert_eq!(cache.organization(acme).await.unwrap().plan, PlanTier::Free);
        assert_eq!(
            cache.organization(other).await.unwrap().plan,
            PlanTier::Business
        );
    }

    #[tokio::test]
    async fn a_zero_time_to_live_reads_through_every_time() {
        let (store, cache, org) = with_org(Duration::ZERO).await;
        cache.organization(org).await.unwrap();
        store
            .update_organization(org, &to_plan("business"))
            .await
            .unwrap();
        assert_eq!(
            cache.organization(org).await.unwrap().plan,
            PlanTier::Business
        );
    }

    /// Reads organizations from `inner`, but `get_organization` signals `read` and then holds
    /// what it read until `release`: a read that started before a write and finishes after it.
    struct SlowReads {
        inner: Arc<InMemoryOrgRepository>,
        read: tokio::sync::Notify,
        release: tokio::sync::Notify,
    }

    #[async_trait::async_trait]
    impl OrgRepository for SlowReads {
        async fn get_organization(&self, id: OrgId) -> Result<Organization, RepoError> {
            let read = self.inner.get_organization(id).await;
            self.read.notify_one();
            self.release.notified().await;
            read
        }
        async fn create_organization(
            &self,
            new: &NewOrganization,
        ) -> Result<Organization, RepoError> {
            self.inner.create_organization(new).await
        }
        async fn update_organization(
            &self,
            id: OrgId,
            patch: &OrganizationPatch,
        ) -> Result<Organization, RepoError> {
            self.inner.update_organization(id, patch).await
        }
        async fn is_empty(&self) -> Result<bool, RepoError> {
            self.inner.is_empty().await
        }
        async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, RepoError> {
            self.inner.create_user(org, new).await
        }
        async fn update_user(
            &self,
            id: UserId,
            patch: &UserPatch,
            activation_events: &[Event],
        ) -> Result<User, RepoError> {
            self.inner.update_user(id, patch, activation_events).await
        }
        async fn find_user(&self, id: UserId) -> Result<User, RepoError> {
            self.inner.find_user(id).await
        }
        async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, RepoError> {
            self.inner.get_user(org, id).await
        }
        async fn users_by_ids(&self, org: OrgId, ids: &[UserId]) -> Result<Vec<User>, RepoError> {
            self.inner.users_by_ids(org, ids).await
        }
        async fn list_users(
            &self,
            org: OrgId,
            filter: &UserFilter,
            page: PageRequest,
        ) -> Result<Page<User>, RepoError> {
            self.inner.list_users(org, filter, page).await
        }
        async fn find_users_by_email(
            &self,
            org: OrgId,
            emails: &[String],
        ) -> Result<Vec<User>, RepoError> {
            self.inner.find_users_by_email(org, emails).await
        }
        async fn update_profile(
            &self,
            org: OrgId,
            id: UserId,
            patch: &ProfilePatch,
            activation_events: &[Event],
        ) -> Result<User, RepoError> {
            self.inner
                .update_profile(org, id, patch, activation_events)
                .await
        }
        async fn users_with_important_dates(&self, org: OrgId) -> Result<Vec<User>, RepoError> {
            self.inner.users_with_important_dates(org).await
        }
    }

    #[tokio::test]
    async fn a_read_in_flight_during_an_update_does_not_leave_a_stale_snapshot() {
        let store = Arc::new(InMemoryOrgRepository::new());
        let new = NewOrganization::new("Acme", "free", None, None, None).unwrap();
        let org = store.create_organization(&new).await.unwrap().id;
        let slow = Arc::new(SlowReads {
            inner: store,
            read: tokio::sync::Notify::new(),
            release: tokio::sync::Notify::new(),
        });
        let cache = Arc::new(OrgSnapshotCache::new(slow.clone(), LONG));

        // A plan-gate read starts and reads `free`; the update lands while it is in flight.
        let in_flight = tokio::spawn({
            let cache = cache.clone();
            async move { cache.organization(org).await.unwrap().plan }
        });
        slow.read.notified().await;
        cache
            .update_organization(org, &to_plan("business"))
            .await
            .unwrap();
        slow.release.notify_one();
        assert_eq!(in_flight.await.unwrap(), PlanTier::Free);

        // What the late read cached is not served after the update.
        let fresh = tokio::spawn({
            let cache = cache.clone();
            async move { cache.organization(org).await.unwrap().plan }
        });
        // A stale snapshot would be answered without reading at all.
        if tokio::time::timeout(Duration::from_secs(5), slow.read.notified())
            .await
            .is_ok()
        {
            slow.release.notify_one();
        }
        assert_eq!(fresh.await.unwrap(), PlanTier::Business, "stale snapshot");
    }

    #[tokio::test]
    async fn an_unknown_organization_is_not_found() {
        let (_, cache, _) = with_org(LONG).await;
        let err = cache.organization(OrgId::new()).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotFound);
    }
}
