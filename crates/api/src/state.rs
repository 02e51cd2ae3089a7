//! Shared application state and the composition of adapters into domain services.

use std::sync::Arc;

use teamcomm_cache::{OrgSnapshotCache, PeoplePageCache};
use teamcomm_forms::TemplateRepository;
use teamcomm_kernel::{SharedClock, SystemClock};
use teamcomm_keys::{KeyRepository, KeyService, UsageTracker};
use teamcomm_messaging::ChannelRepository;
use teamcomm_org::{Directory, OrgRepository, TeamRepository};
use teamcomm_store_pg::{
    Database, PgChannelRepository, PgInvitationRepository, PgKeyRepository, PgMoodRepository,
    PgOrgRepository, PgTeamRepository, PgTemplateRepository,
};

use crate::config::Settings;
use crate::jwt::JwtKeys;
use crate::ratelimit::InProcessRateLimiter;

/// Everything a handler may need, cheap to clone (all `Arc`s).
#[derive(Clone)]
pub struct AppState {
    pub db: Database,
    pub orgs: Arc<dyn OrgRepository>,
    /// Organization snapshots for the plan gate, cached (`TEAMCOMM_PLAN_CACHE_TTL_SECS`).
    pub org_cache: Arc<OrgSnapshotCache>,
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
        // The caches invalidate themselves on the writes they see, so every reader and writer
        // of organizations and people goes through the outer one.
        let people_pages = Arc::new(PeoplePageCache::new(
            Arc::new(PgOrgRepository::new(db.clone())),
            settings.directory_cache_ttl,
        ));
        let org_snapshots = Arc::new(OrgSnapshotCache::new(people_pages, settings.plan_cache_ttl));
        let orgs: Arc<dyn OrgRepository> = org_snapshots.clone();
        let key_repo: Arc<dyn KeyRepository> = Arc::new(PgKeyRepository::new(db.clone()));
        let teams: Arc<dyn TeamRepository> = Arc::new(PgTeamRepository::new(db.clone()));
        let channels: Arc<dyn ChannelRepository> = Arc::new(PgChannelRepository::new(db.clone()));
        let templates: Arc<dyn TemplateRepository> =
            Arc::new(PgTemplateRepository::new(db.clone()));
        let keys = KeyService::new(
            key_repo.clone(),
            orgs.clone(),
            org_snapshots.clone(),
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
            org_cache: org_snapshots,
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
