//! In-memory ports: conversations in a map, a scripted model that records what it was asked,
//! a fixed context.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use async_trait::async_trait;
use teamcomm_kernel::{Error, OrgId, RepoError, UserId};
use teamcomm_org::User;

use crate::{
    AssistantContext, Completion, CompletionRequest, ConversationRepository, LanguageModel,
    ModelError, OrgContext, SessionId, Turn,
};

/// Sessions per (organization, person, session id).
#[derive(Default)]
pub struct InMemoryConversations {
    threads: Mutex<HashMap<(OrgId, UserId, String), Vec<Turn>>>,
}

impl InMemoryConversations {
    /// Every turn of a session, oldest first.
    pub fn turns(&self, org: OrgId, user: UserId, session: &str) -> Vec<Turn> {
        self.threads
            .lock()
            .unwrap()
            .get(&(org, user, session.to_owned()))
            .cloned()
            .unwrap_or_default()
    }
}

#[async_trait]
impl ConversationRepository for InMemoryConversations {
    async fn recent_turns(
        &self,
        org: OrgId,
        user: UserId,
        session: &SessionId,
        limit: usize,
    ) -> Result<Vec<Turn>, RepoError> {
        let all = self.turns(org, user, session.as_str());
        Ok(all[all.len().saturating_sub(limit)..].to_vec())
    }

    async fn append_turns(
        &self,
        org: OrgId,
        user: UserId,
        session: &SessionId,
        turns: &[Turn],
    ) -> Result<(), RepoError> {
        self.threads
            .lock()
            .unwrap()
            .entry((org, user, session.as_str().to_owned()))
            .or_default()
            .extend_from_slice(turns);
        Ok(())
    }

    async fn forget(&self, org: OrgId, user: UserId, session: &SessionId) -> Result<(), RepoError> {
        self.threads
            .lock()
            .unwrap()
            .remove(&(org, user, session.as_str().to_owned()));
        Ok(())
    }
}

/// Answers from a script (then "ok"), and records every request.
#[derive(Default)]
pub struct ScriptedModel {
    script: Mutex<VecDeque<Result<Completion, ModelError>>>,
    requests: Mutex<Vec<CompletionRequest>>,
}

impl ScriptedModel {
    /// The next answer.
    pub fn then(&self, answer: Result<&str, ModelError>) -> &Self {
        self.script
            .lock()
            .unwrap()
            .push_back(answer.map(|c| Completion {
                content: c.to_owned(),
            }));
        self
    }

    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl LanguageModel for ScriptedModel {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        self.script.lock().unwrap().pop_front().unwrap_or_else(|| {
            Ok(Completion {
                content: "ok".into(),
            })
        })
    }
}

/// The same context for everyone (its `person` and `organization` filled from the call).
#[derive(Default)]
pub struct FixedContext(pub AssistantContext);

#[async_trait]
impl OrgContext for FixedContext {
    async fn context(&self, person: &User, organization: &str) -> Result<AssistantContext, Error> {
        Ok(AssistantContext {
            person: person.full_name(),
            organization: organization.to_owned(),
            ..self.0.clone()
        })
    }
}
