//! In-memory implementations of the ports, for unit tests here and in other crates.

use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::{OrgId, RepoError, UserId};
use teamcomm_keys::SecretHash;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{
    AgentHook, AgentHookRepository, AgentKeyCredential, AgentMessage, AgentReport, AgentRepository,
    Challenge, HealthCheck, MessageFilter, NewRegistration, Registration, RegistrationRepository,
};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reports, checks and messages in memory.
#[derive(Default)]
pub struct InMemoryAgents {
    pub reports: Mutex<Vec<AgentReport>>,
    pub checks: Mutex<Vec<HealthCheck>>,
    pub messages: Mutex<Vec<AgentMessage>>,
    /// Agents' webhooks.
    pub hooks: Mutex<Vec<AgentHook>>,
    /// Where pushes are enqueued.
    pub queue: InMemoryJobQueue,
}

fn listed(m: &AgentMessage, org: OrgId, filter: &MessageFilter, now: OffsetDateTime) -> bool {
    m.org_id == org
        && filter
            .agent_name
            .as_ref()
            .is_none_or(|a| *a == m.agent_name)
        && filter
            .delivered
            .is_none_or(|d| d == m.delivered_at.is_some())
        && m.expires_at.is_none_or(|at| at > now)
}

#[async_trait]
impl AgentRepository for InMemoryAgents {
    async fn insert_report(&self, report: &AgentReport) -> Result<(), RepoError> {
        lock(&self.reports).push(report.clone());
        Ok(())
    }

    async fn insert_health(&self, check: &HealthCheck) -> Result<(), RepoError> {
        lock(&self.checks).push(check.clone());
        Ok(())
    }

    async fn health_history(
        &self,
        org: OrgId,
        agent_name: &str,
        limit: usize,
    ) -> Result<Vec<HealthCheck>, RepoError> {
        let mut out: Vec<HealthCheck> = lock(&self.checks)
            .iter()
            .filter(|c| c.org_id == org && c.agent_name == agent_name)
            .cloned()
            .collect();
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        out.truncate(limit);
        Ok(out)
    }

    async fn insert_message(
        &self,
        message: &AgentMessage,
        push: Option<&NewJob>,
    ) -> Result<(), RepoError> {
        if let Some(job) = push {
            self.queue.enqueue(std::slice::from_ref(job))?;
        }
        lock(&self.messages).push(message.clone());
        Ok(())
    }

    async fn list_messages(
        &self,
        org: OrgId,
        filter: &MessageFilter,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<AgentMessage>, RepoError> {
        let mut out: Vec<AgentMessage> = lock(&self.messages)
            .iter()
            .filter(|m| listed(m, org, filter, now))
            .cloned()
            .collect();
        out.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        let skip = out.len().saturating_sub(limit);
        Ok(out.split_off(skip))
    }

    async fn mark_delivered(
        &self,
        org: OrgId,
        ids: &[Uuid],
        now: OffsetDateTime,
    ) -> Result<u64, RepoError> {
        let mut n = 0;
        for m in lock(&self.messages).iter_mut() {
            if m.org_id == org && ids.contains(&m.id) && m.delivered_at.is_none() {
                m.delivered_at = Some(now);
                n += 1;
            }
        }
        Ok(n)
    }

    async fn deliver_pending(
        &self,
        org: OrgId,
        agent_name: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<AgentMessage>, RepoError> {
        let filter = MessageFilter {
            agent_name: Some(agent_name.to_owned()),
            delivered: Some(false),
        };
        let mut out = Vec::new();
        for m in lock(&self.messages).iter_mut() {
            if listed(m, org, &filter, now) {
                m.delivered_at = Some(now);
                out.push(m.clone());
            }
        }
        out.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        Ok(out)
    }
}

/// One stored registration with its claim hash.
#[derive(Debug, Clone)]
pub struct StoredRegistration {
    pub registration: Registration,
    pub claim_hash: SecretHash,
}

/// Challenges, registrations and agent keys in memory.
#[derive(Default)]
pub struct InMemoryRegistrations {
    pub challenges: Mutex<Vec<Challenge>>,
    pub registrations: Mutex<Vec<StoredRegistration>>,
    pub keys: Mutex<Vec<(SecretHash, AgentKeyCredential)>>,
}

fn claimable(r: &StoredRegistration, claim: &SecretHash, now: OffsetDateTime) -> bool {
    r.claim_hash == *claim
        && r.registration.claimed_at.is_none()
        && r.registration.claim_expires_at > now
}

#[async_trait]
impl RegistrationRepository for InMemoryRegistrations {
    async fn insert_challenge(&self, challenge: &Challenge) -> Result<(), RepoError> {
        lock(&self.challenges).push(challenge.clone());
        Ok(())
    }

    async fn take_challenge(&self, id: Uuid) -> Result<Option<Challenge>, RepoError> {
        let mut all = lock(&self.challenges);
        let at = all.iter().position(|c| c.id == id);
        Ok(at.map(|i| all.remove(i)))
    }

    async fn insert_registration(&self, new: &NewRegistration) -> Result<(), RepoError> {
        lock(&self.registrations).push(StoredRegistration {
            registration: new.registration.clone(),
            claim_hash: new.claim_hash,
        });
        lock(&self.keys).push((
            new.key.hash,
            AgentKeyCredential {
                id: new.key.id,
                org_id: new.key.org_id,
                agent_name: new.key.agent_name.clone(),
                active: true,
            },
        ));
        Ok(())
    }

    async fn find_agent_key(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<AgentKeyCredential>, RepoError> {
        Ok(lock(&self.keys)
            .iter()
            .find(|(h, _)| h == hash)
            .map(|(_, c)| c.clone()))
    }

    async fn find_claimable(
        &self,
        claim: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<Registration>, RepoError> {
        Ok(lock(&self.registrations)
            .iter()
            .find(|r| claimable(r, claim, now))
            .map(|r| r.registration.clone()))
    }

    async fn claim(
        &self,
        claim: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<Registration>, RepoError> {
        let mut all = lock(&self.registrations);
        let Some(r) = all.iter_mut().find(|r| claimable(r, claim, now)) else {
            return Ok(None);
        };
        r.registration.claimed_at = Some(now);
        Ok(Some(r.registration.clone()))
    }

    async fn renew_claim(
        &self,
        org: OrgId,
        claim: &SecretHash,
        expires_at: OffsetDateTime,
    ) -> Result<bool, RepoError> {
        let mut all = lock(&self.registrations);
        let Some(r) = all
            .iter_mut()
            .find(|r| r.registration.org_id == org && r.registration.claimed_at.is_none())
        else {
            return Ok(false);
        };
        r.claim_hash = *claim;
        r.registration.claim_expires_at = expires_at;
        Ok(true)
    }

    async fn set_claimed_by(&self, org: OrgId, user: UserId) -> Result<(), RepoError> {
        for r in lock(&self.registrations).iter_mut() {
            if r.registration.org_id == org {
                r.registration.claimed_by = Some(user);
            }
        }
        Ok(())
    }

    async fn unclaim(&self, org: OrgId) -> Result<(), RepoError> {
        for r in lock(&self.registrations).iter_mut() {
            if r.registration.org_id == org {
                r.registration.claimed_at = None;
                r.registration.claimed_by = None;
            }
        }
        Ok(())
    }
}

#[async_trait]
impl AgentHookRepository for InMemoryAgents {
    async fn set_hook(&self, hook: &AgentHook) -> Result<(), RepoError> {
        let mut hooks = lock(&self.hooks);
        hooks.retain(|h| !(h.org_id == hook.org_id && h.agent_name == hook.agent_name));
        hooks.push(hook.clone());
        Ok(())
    }

    async fn delete_hook(&self, org: OrgId, agent_name: &str) -> Result<bool, RepoError> {
        let mut hooks = lock(&self.hooks);
        let before = hooks.len();
        hooks.retain(|h| !(h.org_id == org && h.agent_name == agent_name));
        Ok(hooks.len() < before)
    }

    async fn hook(&self, org: OrgId, agent_name: &str) -> Result<Option<AgentHook>, RepoError> {
        Ok(lock(&self.hooks)
            .iter()
            .find(|h| h.org_id == org && h.agent_name == agent_name)
            .cloned())
    }

    async fn push_work(
        &self,
        org: OrgId,
        message: Uuid,
    ) -> Result<Option<(AgentMessage, AgentHook)>, RepoError> {
        let Some(m) = lock(&self.messages)
            .iter()
            .find(|m| m.org_id == org && m.id == message)
            .cloned()
        else {
            return Ok(None);
        };
        Ok(self.hook(org, &m.agent_name).await?.map(|h| (m, h)))
    }
}
