//! What the agents domain needs from the outside world.

use async_trait::async_trait;
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::{OrgId, RepoError, UserId};
use teamcomm_keys::SecretHash;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{
    AgentHook, AgentKeyCredential, AgentMessage, AgentReport, Challenge, HealthCheck,
    MessageFilter, NewRegistration, Registration,
};

/// Reports, health checks and messages of agents. Every method a tenant drives is scoped by
/// `OrgId`: rows of another organization are never read, counted or changed.
#[async_trait]
pub trait AgentRepository: Send + Sync + 'static {
    async fn insert_report(&self, report: &AgentReport) -> Result<(), RepoError>;
    async fn insert_health(&self, check: &HealthCheck) -> Result<(), RepoError>;
    /// The agent's last `limit` checks, newest first.
    async fn health_history(
        &self,
        org: OrgId,
        agent_name: &str,
        limit: usize,
    ) -> Result<Vec<HealthCheck>, RepoError>;
    /// Stores the message and, when its agent has a webhook, `push` (the job that sends it
    /// there) in the same transaction.
    async fn insert_message(
        &self,
        message: &AgentMessage,
        push: Option<&NewJob>,
    ) -> Result<(), RepoError>;
    /// Messages not expired at `now`, oldest first, at most `limit`.
    async fn list_messages(
        &self,
        org: OrgId,
        filter: &MessageFilter,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<AgentMessage>, RepoError>;
    /// Marks the pending messages among `ids` delivered at `now`; answers how many changed.
    async fn mark_delivered(
        &self,
        org: OrgId,
        ids: &[Uuid],
        now: OffsetDateTime,
    ) -> Result<u64, RepoError>;
    /// Marks every pending, unexpired message of the agent delivered at `now`; answers them.
    async fn deliver_pending(
        &self,
        org: OrgId,
        agent_name: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<AgentMessage>, RepoError>;
}

/// Registration riddles, registrations with their agent keys, and claims.
#[async_trait]
pub trait RegistrationRepository: Send + Sync + 'static {
    async fn insert_challenge(&self, challenge: &Challenge) -> Result<(), RepoError>;
    /// Removes and answers the challenge (single use: a second take finds nothing).
    async fn take_challenge(&self, id: Uuid) -> Result<Option<Challenge>, RepoError>;
    /// Stores the registration of an organization created just before, and its agent key.
    async fn insert_registration(&self, new: &NewRegistration) -> Result<(), RepoError>;
    /// The agent key with this hash (the authentication hot path).
    async fn find_agent_key(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<AgentKeyCredential>, RepoError>;
    /// The registration this claim token opens while it is unclaimed and not expired at `now`.
    async fn find_claimable(
        &self,
        claim: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<Registration>, RepoError>;
    /// Marks the registration claimed at `now` if it still is claimable (one claim wins a
    /// race); answers it, or `None`.
    async fn claim(
        &self,
        claim: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<Registration>, RepoError>;
    /// Replaces the claim token of the organization's registration while it is unclaimed;
    /// answers whether it did (the old link stops working).
    async fn renew_claim(
        &self,
        org: OrgId,
        claim: &SecretHash,
        expires_at: OffsetDateTime,
    ) -> Result<bool, RepoError>;
    /// Records who claimed the organization.
    async fn set_claimed_by(&self, org: OrgId, user: UserId) -> Result<(), RepoError>;
    /// Undoes a claim whose owner could not be created.
    async fn unclaim(&self, org: OrgId) -> Result<(), RepoError>;
}

/// Agents' webhooks (one per organization and agent name); the secret is stored sealed and read
/// only to send.
#[async_trait]
pub trait AgentHookRepository: Send + Sync + 'static {
    /// Creates or replaces the agent's webhook.
    async fn set_hook(&self, hook: &AgentHook) -> Result<(), RepoError>;
    /// `false` when the agent had none.
    async fn delete_hook(&self, org: OrgId, agent_name: &str) -> Result<bool, RepoError>;
    async fn hook(&self, org: OrgId, agent_name: &str) -> Result<Option<AgentHook>, RepoError>;
    /// A message with its agent's current webhook, for a push (`None` when either is gone).
    async fn push_work(
        &self,
        org: OrgId,
        message: Uuid,
    ) -> Result<Option<(AgentMessage, AgentHook)>, RepoError>;
}
