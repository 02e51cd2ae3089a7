//! The CLI helpers (wire contract §3.1): `GET /v1/cli/status/` (the caller's check-ins pending
//! today, with their questions), `POST /v1/cli/updates/` (a progress update attached to today's
//! check-ins), `POST /v1/cli/chat/completions/` (the assistant, `dailybot ask`). Rules in
//! `teamcomm_forms::checkins` (`progress`) and `teamcomm_assistant`.

use std::num::NonZeroU32;

use actix_web::{HttpResponse, get, post, web};
use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use serde::{Deserialize, Serialize};
use teamcomm_assistant::{Ask, ChatMessage, Role, SessionId};
use teamcomm_forms::checkins::{AttachedCheckin, ProgressUpdate, TodayCheckin};
use teamcomm_kernel::{Error, ErrorCode};
use teamcomm_keys::CredentialRef;
use utoipa::ToSchema;

use super::questions::QuestionView;
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::JsonBody;
use crate::state::AppState;

// ---------------------------------------------------------------------------- status

/// A check-in the caller is asked today and has not completed.
#[derive(Debug, Serialize, ToSchema)]
pub struct PendingCheckinView {
    pub followup_uuid: String,
    pub followup_name: String,
    /// The caller's day, as this check-in counts days (`YYYY-MM-DD`).
    pub date: String,
    /// Its questions in order (answer them with `POST /v1/checkins/{uuid}/responses/`).
    pub template_questions: Vec<QuestionView>,
    /// The version of the questions, for `questions_version`.
    pub questions_version: i32,
}

/// `GET /v1/cli/status/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CliStatusView {
    pub pending_checkins: Vec<PendingCheckinView>,
    /// How many are pending.
    pub count: usize,
}

fn pending_view(t: TodayCheckin) -> PendingCheckinView {
    PendingCheckinView {
        followup_uuid: t.checkin.id.to_string(),
        followup_name: t.checkin.name.clone(),
        date: t.date.to_string(),
        template_questions: QuestionView::list(&t.checkin.questions.questions),
        questions_version: t.checkin.questions.version,
    }
}

#[utoipa::path(
    tag = "cli",
    responses(
        (status = 200, description = "The check-ins due today (each on the caller's day as it counts days) that the caller has not completed, soonest first", body = CliStatusView),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/v1/cli/status/")]
pub async fn get_status(state: web::Data<AppState>, caller: Caller) -> ApiResult<HttpResponse> {
    let pending: Vec<PendingCheckinView> = state
        .checkins
        .pending_today(caller.user())
        .await?
        .into_iter()
        .map(pending_view)
        .collect();
    Ok(HttpResponse::Ok().json(CliStatusView {
        count: pending.len(),
        pending_checkins: pending,
    }))
}

// ---------------------------------------------------------------------------- updates

/// Body of `POST /v1/cli/updates/`: a message and/or the standup parts (at least one not
/// blank). How they land on each check-in's questions: docs/decisions.md, "CLI progress
/// updates".
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"done": "Finished the auth module", "doing": "Tests"}))]
pub struct UpdateBody {
    /// Free text: the first text question no other part fills.
    #[schema(max_length = 2000, example = "Finished the auth module, now on tests.")]
    message: Option<String>,
    /// What was completed: the first text question.
    #[schema(max_length = 2000)]
    done: Option<String>,
    /// What is in progress: the second text question.
    #[schema(max_length = 2000)]
    doing: Option<String>,
    /// Blockers: the blocker question.
    #[schema(max_length = 2000)]
    blocked: Option<String>,
}

/// A check-in the update was attached to.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttachedFollowupView {
    pub followup_uuid: String,
    pub followup_name: String,
    /// `created` (today's response is new) or `updated` (it changed the one there was).
    pub action: String,
    /// Today's response, as it now is.
    pub response_uuid: String,
    pub response_date: String,
    pub response_completed: bool,
}

/// `POST /v1/cli/updates/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct UpdateResultView {
    /// How many check-ins took the update.
    pub followups_count: usize,
    pub attached_followups: Vec<AttachedFollowupView>,
}

fn attached_view(a: AttachedCheckin) -> AttachedFollowupView {
    AttachedFollowupView {
        followup_uuid: a.checkin.id.to_string(),
        followup_name: a.checkin.name,
        action: a.action.as_str().to_owned(),
        response_uuid: a.response.id.to_string(),
        response_date: a.response.date.to_string(),
        response_completed: a.response.completed,
    }
}

#[utoipa::path(
    tag = "cli",
    request_body = UpdateBody,
    responses(
        (status = 200, description = "Attached to the check-ins due today that it answers (none: `followups_count` 0)", body = UpdateResultView),
        (status = 400, description = "`params_validation_error` (nothing sent); a check-in rule's refusal (`followup_not_allow_responses_before_trigger_time`, ...) when every check-in due refused it", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[post("/v1/cli/updates/")]
pub async fn post_update(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<UpdateBody>,
) -> ApiResult<HttpResponse> {
    let b = body.0;
    let update = ProgressUpdate::new(
        b.message.as_deref(),
        b.done.as_deref(),
        b.doing.as_deref(),
        b.blocked.as_deref(),
    )?;
    let attached: Vec<AttachedFollowupView> = state
        .checkins
        .attach_progress(caller.user(), &update)
        .await?
        .into_iter()
        .map(attached_view)
        .collect();
    Ok(HttpResponse::Ok().json(UpdateResultView {
        followups_count: attached.len(),
        attached_followups: attached,
    }))
}

// ---------------------------------------------------------------------------- assistant

/// Questions to the assistant per credential per minute (on top of the hourly writes budget).
pub const ASSISTANT_PER_MINUTE: u32 = 30;

/// The assistant's budget: [`ASSISTANT_PER_MINUTE`] per credential, in this process (a GCRA
/// per credential: a burst of 30, then one every two seconds).
pub struct AssistantBudget {
    limiter: RateLimiter<CredentialRef, DefaultKeyedStateStore<CredentialRef>, DefaultClock>,
    clock: DefaultClock,
}

impl Default for AssistantBudget {
    fn default() -> Self {
        let quota =
            Quota::per_minute(NonZeroU32::new(ASSISTANT_PER_MINUTE).unwrap_or(NonZeroU32::MIN));
        AssistantBudget {
            limiter: RateLimiter::keyed(quota),
            clock: DefaultClock::default(),
        }
    }
}

impl AssistantBudget {
    /// Spends one question of `credential`'s budget: 429 `throttled` (scope `assistant`,
    /// `Retry-After`) when it is spent.
    pub fn spend(&self, credential: CredentialRef) -> Result<(), Error> {
        self.limiter.check_key(&credential).map_err(|not_until| {
            let after = not_until
                .wait_time_from(self.clock.now())
                .as_secs_f64()
                .ceil()
                .max(1.0) as u64;
            Error::new(
                ErrorCode::Throttled,
                format!(
                    "At most {ASSISTANT_PER_MINUTE} questions a minute; expected available in {after} seconds."
                ),
            )
            .with_extra("retry_after", after)
            .with_extra("scope", "assistant")
        })
    }

    /// Forgets credentials whose budget is whole again.
    pub fn housekeeping(&self) {
        self.limiter.retain_recent();
    }
}

/// A message of the client's own record of the conversation.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ChatTurnBody {
    /// `user` or `assistant` (`system` is ignored).
    #[schema(pattern = "^(user|assistant|system)$")]
    role: String,
    #[schema(max_length = 8000)]
    content: String,
}

/// A command the client can run (told to the model).
#[derive(Debug, Deserialize, ToSchema)]
pub struct ChatCommandBody {
    #[schema(max_length = 100)]
    name: String,
    #[schema(max_length = 500)]
    description: Option<String>,
}

/// Body of `POST /v1/cli/chat/completions/` (what `dailybot ask` and its chat window send).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatBody {
    /// The question. Without it, the last `user` entry of `messages`; a request with neither is
    /// refused unless it only resets the thread.
    #[schema(max_length = 8000, example = "Summarize my pending check-ins")]
    message: Option<String>,
    /// The session to continue (the caller's own); a new one when absent.
    #[schema(max_length = 100, pattern = "^[A-Za-z0-9_-]+$")]
    session_id: Option<String>,
    /// Forget the session's earlier turns first.
    reset_thread: Option<bool>,
    /// The client's own record of the conversation: used when the session has no turns kept
    /// here.
    #[schema(max_items = 100)]
    history: Option<Vec<ChatTurnBody>>,
    /// OpenAI-style messages: the last `user` one is the question when `message` is absent.
    #[schema(max_items = 100)]
    messages: Option<Vec<ChatTurnBody>>,
    #[schema(max_items = 100)]
    available_commands: Option<Vec<ChatCommandBody>>,
}

fn chat_message(t: ChatTurnBody) -> Option<ChatMessage> {
    Role::parse(&t.role).map(|role| ChatMessage::new(role, t.content))
}

impl TryFrom<ChatBody> for Ask {
    type Error = Error;

    fn try_from(b: ChatBody) -> Result<Ask, Error> {
        let message = b.message.or_else(|| {
            b.messages
                .unwrap_or_default()
                .into_iter()
                .rev()
                .find(|m| m.role == "user")
                .map(|m| m.content)
        });
        Ok(Ask {
            message,
            session_id: b.session_id.as_deref().map(SessionId::parse).transpose()?,
            reset_thread: b.reset_thread.unwrap_or(false),
            history: b
                .history
                .unwrap_or_default()
                .into_iter()
                .filter_map(chat_message)
                .collect(),
            available_commands: b
                .available_commands
                .unwrap_or_default()
                .into_iter()
                .map(|c| (c.name, c.description.unwrap_or_default()))
                .collect(),
        })
    }
}

/// The assistant's answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatAnswerMessage {
    /// Always `assistant`.
    pub role: &'static str,
    pub content: String,
}

/// `POST /v1/cli/chat/completions/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatAnswerView {
    pub message: ChatAnswerMessage,
    /// Actions for the client to run: none (this assistant only answers).
    #[schema(value_type = Vec<Object>)]
    pub actions: Vec<serde_json::Value>,
    /// Always `answer`.
    pub classification: &'static str,
    /// The session the answer belongs to: send it back to continue the thread.
    pub session_id: String,
}

#[utoipa::path(
    tag = "cli",
    request_body = ChatBody,
    responses(
        (status = 200, description = "The answer, from the configured language model given the caller's own data (check-ins due today, recent responses, kudos) and the session's earlier turns", body = ChatAnswerView),
        (status = 400, description = "`params_validation_error`", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 429, description = "`throttled`: 30 questions a minute per credential (`extra.scope` `assistant`), or the hourly writes budget", body = ErrorBody),
        (status = 502, description = "`assistant_upstream_error`: the language model failed", body = ErrorBody),
        (status = 503, description = "`assistant_not_configured`: no language model on this server", body = ErrorBody),
        (status = 504, description = "`assistant_upstream_timeout`: the language model did not answer in time", body = ErrorBody),
    )
)]
#[post("/v1/cli/chat/completions/")]
pub async fn chat_completion(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<ChatBody>,
) -> ApiResult<HttpResponse> {
    let ask = Ask::try_from(body.0)?;
    if state.assistant.is_configured() {
        state.assistant_budget.spend(caller.0.credential_ref())?;
    }
    let reply = state
        .assistant
        .ask(caller.user(), &caller.0.org.name, ask)
        .await?;
    Ok(HttpResponse::Ok().json(ChatAnswerView {
        message: ChatAnswerMessage {
            role: "assistant",
            content: reply.content,
        },
        actions: Vec::new(),
        classification: teamcomm_assistant::CLASSIFICATION,
        session_id: reply.session_id.as_str().to_owned(),
    }))
}
