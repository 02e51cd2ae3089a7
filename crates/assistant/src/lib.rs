//! The assistant of `POST /v1/cli/chat/completions/` (`dailybot ask`): a person asks a question
//! in a session; the answer comes from a language model that is given the organization's own
//! data about that person (their check-ins due today, their recent responses, the kudos they
//! received and gave) and the session's earlier turns.
//!
//! - [`AssistantService::ask`] holds the rules: no model configured → 503
//!   `assistant_not_configured` before anything is read or sent; a session is the person's own
//!   (threads are kept per person and `session_id`, so another person's id starts a new thread
//!   of one's own); `reset_thread` forgets the session's turns first; the last
//!   [`MAX_THREAD_TURNS`] turns go with the question; the question and the answer are kept
//!   once the model answered (a failed call keeps nothing). Model failures map to 502
//!   `assistant_upstream_error` and 504 `assistant_upstream_timeout`.
//! - Ports: [`LanguageModel`] (an OpenAI-compatible HTTP adapter: `teamcomm-llm-http`),
//!   [`ConversationRepository`] (Postgres: `store-pg/src/repo/assistant.rs`) and
//!   [`OrgContext`] (what the model is told; [`context::ServicesContext`] reads it through the
//!   check-in and kudos services, so it sees what the person may see).
//! - `testing` (feature `testing`): in-memory conversations, a scripted model, a fixed context.

pub mod context;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use async_trait::async_trait;
use teamcomm_kernel::{Error, ErrorCode, OrgId, RepoError, SharedClock, UserId};
use teamcomm_org::User;
use time::OffsetDateTime;

pub use context::{AssistantContext, CheckinBrief, KudosBrief, ResponseBrief};

/// How many earlier turns (questions and answers) of a session go with a question.
pub const MAX_THREAD_TURNS: usize = 20;
/// The longest question, in characters.
pub const MAX_MESSAGE_CHARS: usize = 8_000;
/// The longest session id.
pub const MAX_SESSION_ID_CHARS: usize = 100;
/// What the answer's `classification` says: this assistant answers; it does not classify
/// intents or propose actions.
pub const CLASSIFICATION: &str = "answer";

/// Who wrote a message of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "system" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
}

/// One message sent to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
        }
    }
}

/// A turn kept in a session: a question (`User`) or an answer (`Assistant`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub role: Role,
    pub content: String,
    pub at: OffsetDateTime,
}

/// A session's id: what the client sent (`[A-Za-z0-9_-]`, at most
/// [`MAX_SESSION_ID_CHARS`]; the CLI sends a UUID), or a new UUID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId(String);

impl SessionId {
    pub fn parse(raw: &str) -> Result<SessionId, Error> {
        let ok = !raw.is_empty()
            && raw.chars().count() <= MAX_SESSION_ID_CHARS
            && raw
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if ok {
            Ok(SessionId(raw.to_owned()))
        } else {
            Err(Error::invalid_field(
                "session_id",
                format!(
                    "At most {MAX_SESSION_ID_CHARS} letters, digits, '-' and '_' (the CLI sends a UUID)."
                ),
            ))
        }
    }

    pub fn generate() -> SessionId {
        SessionId(uuid::Uuid::new_v4().to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What the model is asked: the messages, system first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    pub messages: Vec<ChatMessage>,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub content: String,
}

/// Why the model gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// It answered with an HTTP error status.
    Status { status: u16, detail: String },
    /// It did not answer within the adapter's time limit.
    Timeout,
    /// It could not be reached (connection refused, TLS, DNS).
    Unreachable(String),
    /// It answered something that is not a completion.
    Malformed(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Status { status, detail } => write!(f, "HTTP {status}: {detail}"),
            ModelError::Timeout => f.write_str("timed out"),
            ModelError::Unreachable(e) => write!(f, "unreachable: {e}"),
            ModelError::Malformed(e) => write!(f, "malformed answer: {e}"),
        }
    }
}

/// A chat-completion model.
#[async_trait]
pub trait LanguageModel: Send + Sync + 'static {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, ModelError>;
}

/// Sessions' turns, per person.
#[async_trait]
pub trait ConversationRepository: Send + Sync + 'static {
    /// The last `limit` turns of the person's session, oldest first.
    async fn recent_turns(
        &self,
        org: OrgId,
        user: UserId,
        session: &SessionId,
        limit: usize,
    ) -> Result<Vec<Turn>, RepoError>;

    /// Adds turns at the end of the person's session (creating it).
    async fn append_turns(
        &self,
        org: OrgId,
        user: UserId,
        session: &SessionId,
        turns: &[Turn],
    ) -> Result<(), RepoError>;

    /// Forgets the person's session.
    async fn forget(&self, org: OrgId, user: UserId, session: &SessionId) -> Result<(), RepoError>;
}

/// What the model may know about a person: the organization's own data, as they may see it.
#[async_trait]
pub trait OrgContext: Send + Sync + 'static {
    /// `organization`: the person's organization's name.
    async fn context(&self, person: &User, organization: &str) -> Result<AssistantContext, Error>;
}

/// A question as asked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ask {
    /// The question; may be absent only with `reset_thread`.
    pub message: Option<String>,
    pub session_id: Option<SessionId>,
    pub reset_thread: bool,
    /// The client's own record of the conversation (the TUI sends it): used when the session
    /// has no turns kept here.
    pub history: Vec<ChatMessage>,
    /// Commands the client can run (`name`, `description`), told to the model.
    pub available_commands: Vec<(String, String)>,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub content: String,
    pub session_id: SessionId,
}

/// The assistant's rules.
#[derive(Clone)]
pub struct AssistantService {
    model: Option<Arc<dyn LanguageModel>>,
    conversations: Arc<dyn ConversationRepository>,
    context: Arc<dyn OrgContext>,
    clock: SharedClock,
}

fn not_configured() -> Error {
    Error::new(
        ErrorCode::AssistantNotConfigured,
        "The assistant is not configured on this server (TEAMCOMM_LLM_URL and TEAMCOMM_LLM_MODEL).",
    )
}

/// The client's view of a model failure; the cause goes to the log.
fn model_failure(e: &ModelError) -> Error {
    match e {
        ModelError::Timeout => Error::new(
            ErrorCode::AssistantUpstreamTimeout,
            "The assistant's language model did not answer in time; try again.",
        ),
        ModelError::Status { status, .. } => Error::new(
            ErrorCode::AssistantUpstreamError,
            "The assistant's language model answered with an error; try again later.",
        )
        .with_extra("upstream_status", *status),
        ModelError::Unreachable(_) | ModelError::Malformed(_) => Error::new(
            ErrorCode::AssistantUpstreamError,
            "The assistant's language model could not be used; try again later.",
        ),
    }
}

/// What the model is told before the conversation.
pub fn system_prompt(
    context: &AssistantContext,
    commands: &[(String, String)],
    today: OffsetDateTime,
) -> String {
    let mut s = String::from(
        "You are the teamcomm assistant, answering a person of an organization from the \
         command line. Answer from the organization data below; when it does not hold the \
         answer, say so rather than guessing. Be brief; plain text or Markdown.\n",
    );
    s.push_str(&format!("Now (UTC): {}\n\n", today.date()));
    s.push_str(&context.render());
    if !commands.is_empty() {
        s.push_str("\nCommands the person's client can run:\n");
        for (name, description) in commands {
            s.push_str(&format!("- {name}: {description}\n"));
        }
    }
    s
}

impl AssistantService {
    /// `model` is `None` when none is configured: every question is then 503.
    pub fn new(
        model: Option<Arc<dyn LanguageModel>>,
        conversations: Arc<dyn ConversationRepository>,
        context: Arc<dyn OrgContext>,
        clock: SharedClock,
    ) -> Self {
        AssistantService {
            model,
            conversations,
            context,
            clock,
        }
    }

    pub fn is_configured(&self) -> bool {
        self.model.is_some()
    }

    /// Answers `ask` for `person` of the organization named `organization` (the rules in the
    /// crate's documentation).
    pub async fn ask(&self, person: &User, organization: &str, ask: Ask) -> Result<Reply, Error> {
        let model = self.model.as_ref().ok_or_else(not_configured)?;
        let message = ask
            .message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty());
        if let Some(m) = message
            && m.chars().count() > MAX_MESSAGE_CHARS
        {
            return Err(Error::invalid_field(
                "message",
                format!("At most {MAX_MESSAGE_CHARS} characters."),
            ));
        }
        if message.is_none() && !ask.reset_thread {
            return Err(Error::invalid_field("message", "Ask something."));
        }
        let session = ask.session_id.clone().unwrap_or_else(SessionId::generate);
        let (org, user) = (person.org_id, person.id);
        if ask.reset_thread {
            self.conversations.forget(org, user, &session).await?;
        }
        let Some(message) = message else {
            // Only a reset: nothing to ask.
            return Ok(Reply {
                content: String::new(),
                session_id: session,
            });
        };
        let turns = self
            .conversations
            .recent_turns(org, user, &session, MAX_THREAD_TURNS)
            .await?;
        let context = self.context.context(person, organization).await?;
        let now = self.clock.now();
        let mut messages = vec![ChatMessage::new(
            Role::System,
            system_prompt(&context, &ask.available_commands, now),
        )];
        if turns.is_empty() {
            let skip = ask.history.len().saturating_sub(MAX_THREAD_TURNS);
            messages.extend(
                ask.history
                    .iter()
                    .skip(skip)
                    .filter(|m| m.role != Role::System)
                    .cloned(),
            );
        } else {
            messages.extend(
                turns
                    .iter()
                    .map(|t| ChatMessage::new(t.role, t.content.clone())),
            );
        }
        messages.push(ChatMessage::new(Role::User, message));
        let completion = model
            .complete(&CompletionRequest { messages })
            .await
            .map_err(|e| model_failure(&e))?;
        let answered = self.clock.now();
        self.conversations
            .append_turns(
                org,
                user,
                &session,
                &[
                    Turn {
                        role: Role::User,
                        content: message.to_owned(),
                        at: now,
                    },
                    Turn {
                        role: Role::Assistant,
                        content: completion.content.clone(),
                        at: answered,
                    },
                ],
            )
            .await?;
        Ok(Reply {
            content: completion.content,
            session_id: session,
        })
    }
}
