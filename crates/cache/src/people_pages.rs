//! A read-through cache of directory pages (`GET /v1/users/`). Directory reads are frequent and
//! people change rarely; a page is served from memory for at most
//! `TEAMCOMM_DIRECTORY_CACHE_TTL_SECS`. Every change to people that passes through this
//! decorator (operator API, profile updates) starts a new generation for the organization, so
//! this instance never serves a page older than its own writes; changes made elsewhere (another
//! instance, `teamcomm admin`) show within the time-to-live.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, Organization, OrganizationPatch, ProfilePatch, User,
    UserFilter, UserPatch,
};

use crate::WriteEpoch;
use crate::generations::Generations;

type PageKey = (OrgId, u64, UserFilter, PageRequest);

/// An `OrgRepository` that answers `list_users` from memory and passes every other call through.
pub struct PeoplePageCache {
    inner: Arc<dyn OrgRepository>,
    /// `None` when the time-to-live is zero: every page is read from `inner`.
    pages: Option<Cache<PageKey, Arc<Page<User>>>>,
    generations: Generations,
    /// Advanced on every change to people, for the caches that hold people elsewhere (API-key
    /// owners in [`crate::KeyCredentialCache`]).
    people_epoch: Option<WriteEpoch>,
}

impl PeoplePageCache {
    pub fn new(inner: Arc<dyn OrgRepository>, ttl: Duration) -> Self {
        let pages = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(10_000)
                .time_to_live(ttl)
                .build()
        });
        PeoplePageCache {
            inner,
            pages,
            generations: Generations::default(),
            people_epoch: None,
        }
    }

    /// Also advances `epoch` on every change to people.
    pub fn with_people_epoch(mut self, epoch: WriteEpoch) -> Self {
        self.people_epoch = Some(epoch);
        self
    }

    /// Makes every cached page of `org` unreachable (they expire on their own).
    fn people_changed(&self, org: OrgId) {
        self.generations.bump(org);
        if let Some(epoch) = &self.people_epoch {
            epoch.advance();
        }
    }
}

#[async_trait]
impl OrgRepository for PeoplePageCache {
    async fn create_organization(&self, new: &NewOrganization) -> Result<Organization, RepoError> {
        self.inner.create_organization(new).await
    }

    async fn update_organization(
        &self,
        id: OrgId,
        patch: &OrganizationPatch,
    ) -> Result<Organization, RepoError> {
        self.inner.update_organization(id, patch).await
    }

    async fn get_organization(&self, id: OrgId) -> Result<Organization, RepoError> {
        self.inner.get_organization(id).await
    }

    async fn is_empty(&self) -> Result<bool, RepoError> {
        self.inner.is_empty().await
    }

    async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, RepoError> {
        let user = self.inner.create_user(org, new).await?;
        self.people_changed(org);
        Ok(user)
    }

    async fn update_user(
        &self,
        id: UserId,
        patch: &UserPatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError> {
        let user = self.inner.update_user(id, patch, activation_events).await?;
        self.people_changed(user.org_id);
        Ok(user)
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
        let Some(pages) = &self.pages else {
            return self.inner.list_users(org, filter, page).await;
        };
        let key = (org, self.generations.current(org), filter.clone(), page);
        let load = async { self.inner.list_users(org, filter, page).await.map(Arc::new) };
        let cached = pages
            .try_get_with(key, load)
            .await
            .map_err(|e: Arc<RepoError>| (*e).clone())?;
        Ok((*cached).clone())
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
        let user = self
            .inner
            .update_profile(org, id, patch, activation_events)
            .await?;
        self.people_changed(org);
        Ok(user)
    }

    async fn users_with_important_dates(&self, org: OrgId) -> Result<Vec<User>, RepoError> {
        self.inner.users_with_important_dates(org).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use teamcomm_kernel::{Event, EventType, OrgId, PageRequest};
    use teamcomm_org::testing::InMemoryOrgRepository;
    use teamcomm_org::{
        NewOrganization, NewUser, OrgRepository, ProfilePatch, UserFilter, UserPatch,
    };

    use super::PeoplePageCache;

    const LONG: Duration = Duration::from_secs(3600);
    const FIRST_PAGE: PageRequest = PageRequest {
        offset: 0,
        limit: 25,
    };

    struct Fixture {
        store: Arc<InMemoryOrgRepository>,
        cache: PeoplePageCache,
        org: OrgId,
        other_org: OrgId,
    }

    impl Fixture {
        async fn new(ttl: Duration) -> Self {
            let store = Arc::new(InMemoryOrgRepository::new());
            let cache = PeoplePageCache::new(store.clone(), ttl);
            let mut orgs = Vec::new();
            for name in ["Acme", "Other"] {
                let new = NewOrganization::new(name, "business", None, None, None).unwrap();
                orgs.push(cache.create_organization(&new).await.unwrap().id);
            }
            Fixture {
                store,
                cache,
                org: orgs[0],
                other_org: orgs[1],
            }
        }

        /// How many people the cache shows in `org`'s first page.
        async fn listed(&self, org: OrgId) -> u64 {
            self.count(org, &UserFilter::default()).await
        }

        /// How many active people the cache shows in the first organization's first page.
        async fn active(&self) -> u64 {
            let active = UserFilter {
                is_active: Some(true),
                ..UserFilter::default()
            };
            self.count(self.org, &active).await
        }

        async fn count(&self, org: OrgId, filter: &UserFilter) -> u64 {
            self.cache
                .list_users(org, filter, FIRST_PAGE)
                .await
                .unwrap()
                .count
        }
    }

    fn person(email: &str) -> NewUser {
        NewUser::new(email, "Ada", "Lovelace", "member", None).unwrap()
    }

    #[tokio::test]
    async fn a_page_is_served_from_memory_until_a_write_passes_through() {
        let f = Fixture::new(LONG).await;
        assert_eq!(f.listed(f.org).await, 0);
        // Behind the cache's back, as another instance would: not seen within the time-to-live.
        f.store.create_user(f.org, &person("a@x.io")).await.unwrap();
        assert_eq!(f.listed(f.org).await, 0);
        // Through the cache: every page of the organization is read afresh.
        f.cache.create_user(f.org, &person("b@x.io")).await.unwrap();
        assert_eq!(f.listed(f.org).await, 2);
    }

    fn event(org: OrgId, event_type: EventType) -> Event {
        Event::new(
            org,
            event_type,
            None,
            time::OffsetDateTime::UNIX_EPOCH,
            serde_json::json!({}),
        )
    }

    #[tokio::test]
    async fn every_people_write_starts_a_new_generation_and_passes_its_events_on() {
        let f = Fixture::new(LONG).await;
        let ada = f.cache.create_user(f.org, &person("a@x.io")).await.unwrap();
        assert_eq!(f.active().await, 1);
        let deactivate = UserPatch {
            is_active: Some(false),
            role: None,
        };
        let off = event(f.org, EventType::OrganizationUserDeactivated);
        f.cache
            .update_user(ada.id, &deactivate, std::slice::from_ref(&off))
            .await
            .unwrap();
        assert_eq!(f.active().await, 0);

        let reactivate = ProfilePatch {
            is_active: Some(true),
            ..ProfilePatch::default()
        };
        let on = event(f.org, EventType::OrganizationUserActivated);
        f.cache
            .update_profile(f.org, ada.id, &reactivate, std::slice::from_ref(&on))
            .await
            .unwrap();
        assert_eq!(f.active().await, 1);
        assert_eq!(f.store.events().all(), [off, on]);
    }

    #[tokio::test]
    async fn a_write_refreshes_only_its_own_organization() {
        let f = Fixture::new(LONG).await;
        assert_eq!(f.listed(f.org).await, 0);
        assert_eq!(f.listed(f.other_org).await, 0);
        f.store.create_user(f.org, &person("a@x.io")).await.unwrap();
        f.cache
            .create_user(f.other_org, &person("b@x.io"))
            .await
            .unwrap();
        assert_eq!(f.listed(f.org).await, 0);
        assert_eq!(f.listed(f.other_org).await, 1);
    }

    #[tokio::test]
    async fn a_failed_write_changes_nothing() {
        let f = Fixture::new(LONG).await;
        f.cache.create_user(f.org, &person("a@x.io")).await.unwrap();
        assert_eq!(f.listed(f.org).await, 1);
        f.store.create_user(f.org, &person("b@x.io")).await.unwrap();
        // The same e-mail again: refused, so the cached page stays.
        assert!(f.cache.create_user(f.org, &person("a@x.io")).await.is_err());
        assert_eq!(f.listed(f.org).await, 1);
    }

    #[tokio::test]
    async fn a_zero_time_to_live_reads_through_every_time() {
        let f = Fixture::new(Duration::ZERO).await;
        assert_eq!(f.listed(f.org).await, 0);
        f.store.create_user(f.org, &person("a@x.io")).await.unwrap();
        assert_eq!(f.listed(f.org).await, 1);
    }
}
