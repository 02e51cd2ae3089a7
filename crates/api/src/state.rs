//! Shared application state and the composition of adapters into domain services.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use teamcomm_forms::TemplateRepository;
use teamcomm_kernel::{Error, OrgId, SharedClock, SystemClock};
use teamcomm_keys::{KeyRepository, KeyService, OrgSnapshots, UsageTracker};
use teamcomm_messaging::ChannelRepository;
use teamcomm_org::{Directory, OrgRepository, Organization, TeamRepository};
use teamcomm_store_pg::{
    Database, PgChannelRepository, PgInvitationRepository, PgKeyRepository, PgMoodRepository,
    PgOrgRepository, PgTeamRepository, PgTemplateRepository,
};

use crate::config::Settings;
use crate::directory_cache::CachingOrgRepository;
use crate::jwt::JwtKeys;
use crate::ratelimit::InProcessRateLimiter;

/// Organization snapshots with a time-to-live: the spec's per-organization eligibility cache.
/// A plan change made elsewhere reaches existing keys within the TTL; changes made through this
/// process's operator API are applied at once (`invalidate`).
pub struct OrgCache {
    repo: Arc<dyn OrgRepository>,
    cache: Option<Cache<OrgId, Arc<Organization>>>,
}

impl OrgCache {
    pub fn new(repo: Arc<dyn OrgRepository>, ttl: Duration) -> Self {
        let cache = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(100_000)
                .time_to_live(ttl)
                .build()
        });
        OrgCache { repo, cache }
    }

    pub async fn invalidate(&self, id: OrgId) {
        if let Some(cache) = &self.cache {
            cache.invalidate(&id).await;
        }
    }
}

#[async_trait]
impl OrgSnapshots for OrgCache {
    async fn organization(&self, id: OrgId) -> Result<Arc<Organization>, Error> {
        let load = async {
            self.repo
                .get_organization(id)
                .await
                .map(Arc::new)
                .map_err(Error::from)
        };
        match &self.cache {
            None => load.await,
            Some(cache) => cache
                .try_get_with(id, load)
                .await
                .map_err(|e: Arc<Error>| (*e).clone()),
        }
    }
}

/// Everything a handler may need, cheap to clone (all `Arc`s).
#[derive(Clone)]
pub struct AppState {
    pub db: Database,
    pub orgs: Arc<dyn OrgRepository>,
    pub org_cache: Arc<OrgCache>,
    pub keys: KeyService,
    pub key_repo: Arc<dyn KeyRepository>,
    pub directory: Directory,
    pub teams: Arc<dyn TeamRepository>,
    pub channels: Arc<dyn ChannelRepository>,
    pub templates: Arc<dyn TemplateRepository>,
    pub limiter: Arc<InProcessRateLimiter>,
    pub jwt: JwtKeys,
    pub settings: Arc<Settings>,
}

impl AppState {
    /// Wires the Postgres adapters into the domain services.
    pub fn new(db: Database, settings: Settings) -> Self {
        let clock: SharedClock = Arc::new(SystemClock);
        let pg_orgs: Arc<dyn OrgRepository> = Arc::new(PgOrgRepository::new(db.clone()));
        let orgs: Arc<dyn OrgRepository> = Arc::new(CachingOrgRepository::new(
            pg_orgs,
            settings.directory_cache_ttl,
        ));
        let key_repo: Arc<dyn KeyRepository> = Arc::new(PgKeyRepository::new(db.clone()));
        let teams: Arc<dyn TeamRepository> = Arc::new(PgTeamRepository::new(db.clone()));
        let channels: Arc<dyn ChannelRepository> = Arc::new(PgChannelRepository::new(db.clone()));
        let templates: Arc<dyn TemplateRepository> =
            Arc::new(PgTemplateRepository::new(db.clone()));
        let org_cache = Arc::new(OrgCache::new(orgs.clone(), settings.plan_cache_ttl));
        let keys = KeyService::new(
            key_repo.clone(),
            orgs.clone(),
            org_cache.clone(),
            Arc::new(UsageTracker::default()),
            clock.clone(),
        );
        let directory = Directory::new(
            orgs.clone(),
            teams.clone(),
            Arc::new(PgInvitationRepository::new(db.clone())),
            Arc::new(PgMoodRepository::new(db.clone())),
            clock,
        );
        let jwt = JwtKeys::new(
            settings.jwt_secret.expose(),
            settings.jwt_access_ttl,
            settings.jwt_refresh_ttl,
        );
        AppState {
            db,
            orgs,
            org_cache,
            keys,
            key_repo,
            directory,
            teams,
            channels,
            templates,
            limiter: Arc::new(InProcessRateLimiter::default()),
            jwt,
            settings: Arc::new(settings),
        }
    }

    /// Writes pending last-usage instants to the database (called periodically and on shutdown).
    pub async fn flush_key_usage(&self) {
        let batch = self.keys.usage().snapshot();
        if batch.is_empty() {
            return;
        }
        match self.key_repo.record_key_usage(&batch).await {
            Ok(()) => self.keys.usage().forget_flushed(&batch),
            Err(e) => {
                tracing::warn!(error = %e, keys = batch.len(), "could not record key usage; will retry")
            }
        }
    }
}
