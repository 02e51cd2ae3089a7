//! The agents domain: what an organization's agents (coding assistants, CI bots) tell it and
//! are told — reports, health checks, messages left for them — and the registration of an
//! agent without a credential, which creates a free organization pending a claim and an agent
//! key, and the claim by which a signed-in person takes ownership of it.
//!
//! An agent key (`tca_…`) is a credential of its organization, never of a person: the agent
//! doors take it; every door that needs a person refuses it (the app's route policy).
//! `AgentService` applies the rules; storage is behind [`AgentRepository`] and
//! [`RegistrationRepository`]; the organization and people behind the org crate's ports.

mod hooks;
mod model;
mod ports;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use hooks::{AgentHookWorker, HOOK_ATTEMPTS, HookPorts, HookRunSummary};
pub use model::{
    Actor, AgentCaller, AgentHealth, AgentHook, AgentKeyCredential, AgentMessage, AgentReport,
    Challenge, Claimed, CoAuthor, HealthCheck, HookInput, IssuedChallenge, MessageFilter,
    MessageInput, MessageType, NewAgentKey, NewRegistration, RegisterInput, Registered,
    Registration, ReportInput, SenderType,
};
pub use ports::{AgentHookRepository, AgentRepository, RegistrationRepository};
pub use service::{
    AgentPorts, AgentPrincipal, AgentService, AgentSettings, CHALLENGE_FACTOR, CHALLENGE_TTL,
    CLAIM_TTL, HEALTH_HISTORY, MAX_AGENT_NAME, MAX_CO_AUTHORS, MAX_CONTENT, MAX_LISTED_MESSAGES,
    MAX_OBJECT_BYTES, MAX_READ_IDS, agent_name,
};

#[cfg(test)]
mod tests;
