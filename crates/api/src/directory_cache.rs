//! A read-through cache of directory pages (`GET /v1/users/`), in front of the organization
//! repository. Directory reads are frequent and people change rarely; a page is served from
//! memory for at most `TEAMCOMM_DIRECTORY_CACHE_TTL_SECS`. Every change to people made through
//! this process (operator API, profile updates) bumps the organization's generation, so this
//! instance never serves a page older than its own writes; changes made elsewhere (another
//! instance, `teamcomm admin`) show within the TTL.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, Organization, OrganizationPatch, ProfilePatch, User,
    UserFilter, UserPatch,
};

type PageKey = (OrgId, u64, UserFilter, PageRequest);

pub struct CachingOrgRepository {
    inner: Arc<dyn OrgRepository>,
    pages: Option<Cache<PageKey, Arc<Page<User>>>>,
    generations: Mutex<HashMap<OrgId, u64>>,
}

impl CachingOrgRepository {
    pub fn new(inner: Arc<dyn OrgRepository>, ttl: Duration) -> Self {
        let pages = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(10_000)
                .time_to_live(ttl)
                .build()
        });
        CachingOrgRepository {
            inner,
            pages,
            generations: Mutex::new(HashMap::new()),
        }
    }

    fn generation(&self, org: OrgId) -> u64 {
        *self
            .generations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&org)
            .unwrap_or(&0)
    }

    /// Makes every cached page of `org` unreachable (they expire on their own).
    fn changed(&self, org: OrgId) {
        *self
            .generations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(org)
            .or_insert(0) += 1;
    }
}

#[async_trait]
impl OrgRepository for CachingOrgRepository {
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
        self.changed(org);
        Ok(user)
    }

    async fn update_user(&self, id: UserId, patch: &UserPatch) -> Result<User, RepoError> {
        let user = self.inner.update_user(id, patch).await?;
        self.changed(user.org_id);
        Ok(user)
    }

    async fn find_user(&self, id: UserId) -> Result<User, RepoError> {
        self.inner.find_user(id).await
    }

    async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, RepoError> {
        self.inner.get_user(org, id).await
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
        let key = (org, self.generation(org), filter.clone(), page);
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
    ) -> Result<User, RepoError> {
        let user = self.inner.update_profile(org, id, patch).await?;
        self.changed(org);
        Ok(user)
    }

    async fn users_with_important_dates(&self, org: OrgId) -> Result<Vec<User>, RepoError> {
        self.inner.users_with_important_dates(org).await
    }
}
