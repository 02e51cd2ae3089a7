//! An in-memory [`ChannelRepository`], for rule tests and the port contract suite. It answers
//! like the Postgres adapter: one channel per (organization, id), re-registering renames it,
//! listings ordered by name then id (byte-wise, as the database's C collation).
//! Unlike the adapter it cannot check that the organization exists (this crate does not know
//! organizations).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, RepoError, SharedClock, SystemClock};

use crate::{Channel, ChannelRepository, NewChannel};

/// Channels held in memory.
pub struct InMemoryChannelRepository {
    clock: SharedClock,
    channels: Mutex<Vec<Channel>>,
    /// Which organizations exist, when known: a channel of another one is refused as the
    /// Postgres foreign key refuses it.
    organizations: Option<Arc<dyn Fn(OrgId) -> bool + Send + Sync>>,
}

impl Default for InMemoryChannelRepository {
    fn default() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }
}

impl InMemoryChannelRepository {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stamps `created_at` from `clock`.
    pub fn with_clock(clock: SharedClock) -> Self {
        InMemoryChannelRepository {
            clock,
            channels: Mutex::new(Vec::new()),
            organizations: None,
        }
    }

    /// Refuses channels of organizations for which `exists` says no
    /// (`report_channels_organization_id_fkey`, as Postgres does).
    pub fn with_organizations(
        mut self,
        exists: impl Fn(OrgId) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.organizations = Some(Arc::new(exists));
        self
    }
}

#[async_trait]
impl ChannelRepository for InMemoryChannelRepository {
    async fn upsert_channel(&self, org: OrgId, new: &NewChannel) -> Result<Channel, RepoError> {
        // The schema's `CHECK (length(…) BETWEEN 1 AND 200)` on id and name.
        for (constraint, value) in [
            ("report_channels_id_check", &new.id),
            ("report_channels_name_check", &new.name),
        ] {
            if !(1..=200).contains(&value.chars().count()) {
                return Err(RepoError::Other(format!(
                    "violates check constraint {constraint}"
                )));
            }
        }
        if self
            .organizations
            .as_ref()
            .is_some_and(|exists| !exists(org))
        {
            return Err(RepoError::Conflict {
                constraint: "report_channels_organization_id_fkey".to_owned(),
            });
        }
        let mut channels = self.channels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = channels
            .iter_mut()
            .find(|c| c.org_id == org && c.id == new.id)
        {
            existing.name.clone_from(&new.name);
            existing.platform.clone_from(&new.platform);
            existing.channel_type = new.channel_type;
            return Ok(existing.clone());
        }
        let channel = Channel {
            org_id: org,
            id: new.id.clone(),
            name: new.name.clone(),
            platform: new.platform.clone(),
            channel_type: new.channel_type,
            created_at: self.clock.now(),
        };
        channels.push(channel.clone());
        Ok(channel)
    }

    async fn list_channels(
        &self,
        org: OrgId,
        name: Option<&str>,
    ) -> Result<Vec<Channel>, RepoError> {
        let mut rows: Vec<Channel> = self
            .channels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|c| c.org_id == org)
            .filter(|c| name.is_none_or(|n| c.name.to_lowercase().contains(&n.to_lowercase())))
            .cloned()
            .collect();
        rows.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
        Ok(rows)
    }
}
