//! Messaging: bot messages on the organization's chat platform (`POST /v1/send-message/`, their
//! status at `GET /v1/messages/{id}/`), group conversations (`POST /v1/open-conversation/`),
//! e-mail (`POST /v1/send-email/`, each e-mail's status at `GET /v1/emails/{id}/`), and the operator's platform connection and people's platform
//! identities. Sends answer 202 once durably queued; the delivery worker sends them. Rules in
//! `teamcomm_messaging` (`MessagingService`, `EmailService`, `PlatformConnectionService`).

use actix_web::{HttpResponse, delete, get, post, put, web};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use teamcomm_kernel::{OrgId, UserId};
use teamcomm_keys::CredentialKind;
use teamcomm_messaging::connections::{NewPlatformConnection, PlatformSummary};
use teamcomm_messaging::email::{Email, EmailStatus};
use teamcomm_messaging::message::{DeliveryStatus, DeliveryTarget, Message, MessageKind};
use teamcomm_messaging::request::{
    ButtonInput, ChannelTargetInput, PlatformSettings, SendMessageRequest, ThreadResponseInput,
};
use teamcomm_messaging::{MessageReport, SendEmailRequest, SenderCredential};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::{Caller, Operator};
use crate::error::{ApiResult, ErrorBody};
use crate::extract::JsonBody;
use crate::state::AppState;
use crate::views::iso;

/// A button under a message. The `callback_*`, `modal_body`, `response` and
/// `label_after_click` settings are kept as sent for the click handler.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ButtonBody {
    /// At most 75 characters (`button_label_required`, `button_label_too_long`).
    label: Option<String>,
    /// `link` or `interactive` (`button_type_invalid`); absent, a button with a `url` is a
    /// link, else interactive.
    button_type: Option<String>,
    /// A link button's http(s) URL (`button_url_required`, `button_url_invalid`).
    url: Option<String>,
    /// An interactive button's value, at most 2000 characters (`button_value_required`,
    /// `button_value_too_long`).
    value: Option<String>,
    /// Where a click is reported, https (`button_url_invalid`).
    callback_url: Option<String>,
    /// `{type: bearer, token}` sent with the click report.
    #[schema(value_type = Option<Object>)]
    callback_auth: Option<Value>,
    #[schema(value_type = Option<Value>)]
    callback_workflow: Option<Value>,
    #[schema(value_type = Option<Value>)]
    callback_form: Option<Value>,
    #[schema(value_type = Option<Value>)]
    callback_command: Option<Value>,
    #[schema(value_type = Option<Value>)]
    callback_prompt: Option<Value>,
    #[schema(value_type = Option<Value>)]
    modal_body: Option<Value>,
    #[schema(value_type = Option<Value>)]
    response: Option<Value>,
    #[schema(value_type = Option<Value>)]
    label_after_click: Option<Value>,
}

impl From<ButtonBody> for ButtonInput {
    fn from(b: ButtonBody) -> Self {
        let settings: Map<String, Value> = [
            ("callback_auth", b.callback_auth),
            ("callback_workflow", b.callback_workflow),
            ("callback_form", b.callback_form),
            ("callback_command", b.callback_command),
            ("callback_prompt", b.callback_prompt),
            ("modal_body", b.modal_body),
            ("response", b.response),
            ("label_after_click", b.label_after_click),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
        .collect();
        ButtonInput {
            label: b.label,
            button_type: b.button_type,
            url: b.url,
            value: b.value,
            callback_url: b.callback_url,
            settings,
        }
    }
}

/// A channel named with its options.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChannelTargetObject {
    /// The platform's channel id.
    id: String,
    /// `channel`, `private_channel`, `group_chat` or `direct_message`.
    channel_type: Option<String>,
    /// The platform id of the message whose thread to post in.
    thread: Option<String>,
}

/// A channel target: its platform id, or an object with options.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ChannelTargetBody {
    Id(String),
    Object(ChannelTargetObject),
}

impl From<ChannelTargetBody> for ChannelTargetInput {
    fn from(t: ChannelTargetBody) -> Self {
        match t {
            ChannelTargetBody::Id(id) => ChannelTargetInput {
                id,
                ..ChannelTargetInput::default()
            },
            ChannelTargetBody::Object(o) => ChannelTargetInput {
                id: o.id,
                channel_type: o.channel_type,
                thread: o.thread,
            },
        }
    }
}

/// How the bot presents itself for this message (`send_as_user_conflict` with
/// `send_as_user`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlatformSettingsBody {
    /// At most 80 characters.
    bot_username: Option<String>,
    /// An https URL.
    bot_icon_url: Option<String>,
    /// At most 80 characters, e.g. `:robot_face:`.
    bot_icon_emoji: Option<String>,
    /// Kept; no platform adapter sends ephemeral messages yet.
    is_ephemeral: Option<bool>,
}

/// One reply posted in the message's thread.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadResponseBody {
    /// At most 40000 characters (`invalid_thread_responses` when blank or longer).
    message: Option<String>,
}

/// Body of `POST /v1/send-message/`. Name at least one target (`target_users`,
/// `target_channels` or `target_teams`) unless editing (`bot_message_id`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"message": "Deploy done", "target_users": ["ada@example.com"]}))]
pub struct SendMessageBody {
    /// The text, at most 40000 characters; may be left out when `image_url` is given.
    message: Option<String>,
    /// An https URL of an image shown with the message.
    image_url: Option<String>,
    // No `max_items` here or on `thread_responses`: the domain answers the count with its
    // own code, which a schema limit would preempt (utoipa drops `x-error-code` on lists).
    /// At most 25 (`button_limit_exceeded`).
    buttons: Option<Vec<ButtonBody>>,
    /// People: user UUIDs or e-mail addresses (`one_or_more_users_not_found`, `extra.users`).
    target_users: Option<Vec<String>>,
    /// Channels by platform id, or `{id, channel_type?, thread?}`.
    target_channels: Option<Vec<ChannelTargetBody>>,
    /// Teams: every active member receives it (`no_valid_team`, `extra.uuids`).
    target_teams: Option<Vec<Uuid>>,
    platform_settings: Option<PlatformSettingsBody>,
    /// The same as `platform_settings.bot_username` (which wins when both are given).
    bot_username: Option<String>,
    /// The same as `platform_settings.bot_icon_url`.
    bot_icon_url: Option<String>,
    /// The same as `platform_settings.bot_icon_emoji`.
    bot_icon_emoji: Option<String>,
    /// Admins only: show the message as coming from this person (`send_as_user_invalid_uuid`,
    /// `send_as_user_not_found`, `send_as_user_conflict` with the bot settings).
    send_as_user: Option<String>,
    /// Accepted; nobody is skipped yet (no time off is recorded).
    skip_users_on_time_off: Option<bool>,
    /// Stored with the message, at most 16 KiB of JSON.
    #[schema(value_type = Option<Object>)]
    metadata: Option<Value>,
    /// Edit this earlier message (a `bot_message_id` answered before) instead of sending a new
    /// one: every delivery of the original is rewritten.
    bot_message_id: Option<String>,
    /// Replies posted in the message's thread, in order; at most 10
    /// (`invalid_thread_responses`).
    thread_responses: Option<Vec<ThreadResponseBody>>,
}

impl From<SendMessageBody> for SendMessageRequest {
    fn from(b: SendMessageBody) -> Self {
        let settings = b.platform_settings.unwrap_or_default();
        SendMessageRequest {
            message: b.message,
            image_url: b.image_url,
            buttons: b
                .buttons
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            target_users: b.target_users.unwrap_or_default(),
            target_channels: b
                .target_channels
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            target_teams: b.target_teams.unwrap_or_default(),
            platform_settings: PlatformSettings {
                bot_username: settings.bot_username.or(b.bot_username),
                bot_icon_url: settings.bot_icon_url.or(b.bot_icon_url),
                bot_icon_emoji: settings.bot_icon_emoji.or(b.bot_icon_emoji),
                is_ephemeral: settings.is_ephemeral.unwrap_or(false),
            },
            send_as_user: b.send_as_user,
            skip_users_on_time_off: b.skip_users_on_time_off.unwrap_or(false),
            metadata: b.metadata,
            bot_message_id: b.bot_message_id,
            thread_responses: b
                .thread_responses
                .unwrap_or_default()
                .into_iter()
                .map(|r| ThreadResponseInput { message: r.message })
                .collect(),
        }
    }
}

/// What a send queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct MessageQueuedView {
    /// Our id of the message: edit it (`bot_message_id` in a send) and read its status
    /// (`GET /v1/messages/{id}/`) with it.
    pub bot_message_id: String,
    /// The ids of the thread responses, in order.
    pub thread_responses: Vec<String>,
}

/// How far a message may reach depends on the credential: an API key reaches the whole
/// organization; a person's own session (CLI or web) is role-scoped.
fn sender_credential(caller: &Caller) -> SenderCredential {
    match caller.0.credential {
        CredentialKind::ApiKey { .. } => SenderCredential::ApiKey,
        CredentialKind::CliToken { .. } | CredentialKind::Session => SenderCredential::CliSession,
    }
}

#[utoipa::path(
    tag = "messaging",
    request_body = SendMessageBody,
    responses(
        (status = 202, description = "Queued with its delivery job; the delivery worker sends it (read where it stands at `GET /v1/messages/{id}/`). An organization with no connected platform is accepted too: its deliveries end `failed` `platform_not_connected`", body = MessageQueuedView),
        (status = 400, description = "`params_validation_error` (`targets` when none is named), every `button_*` code (`extra.index`), `invalid_thread_responses`, `send_as_user_conflict`, `send_as_user_invalid_uuid`, `send_as_user_not_found`, `one_or_more_users_not_found` (`extra.users`), `no_valid_team` (`extra.uuids`), `no_users_found`", body = ErrorBody),
        (status = 403, description = "`org_admin_required` (`send_as_user` by a non-admin); `cli_send_message_target_not_allowed` (`extra.targets`): a member's own session reaches themself, the teams they are in and their people, and registered channels", body = ErrorBody),
        (status = 404, description = "`bot_message_id` names no message of the organization", body = ErrorBody),
    )
)]
#[post("/v1/send-message/")]
pub async fn send_message(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<SendMessageBody>,
) -> ApiResult<HttpResponse> {
    let queued = state
        .messages
        .send_message(caller.user(), sender_credential(&caller), body.0.into())
        .await?;
    Ok(HttpResponse::Accepted().json(MessageQueuedView {
        bot_message_id: queued.bot_message_id.to_string(),
        thread_responses: queued
            .thread_responses
            .iter()
            .map(ToString::to_string)
            .collect(),
    }))
}

/// One target of a message and where its delivery stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryView {
    /// Position in the message, from 0.
    pub index: u32,
    /// `user` or `channel`.
    pub target_type: &'static str,
    /// The person, for `user`.
    pub user_uuid: Option<String>,
    /// The platform's channel id, for `channel`.
    pub channel_id: Option<String>,
    /// The thread posted in, for `channel`.
    pub thread: Option<String>,
    /// `queued`, `delivered` or `failed`.
    pub status: &'static str,
    /// Why it failed: `platform_not_connected`, `platform_identity_missing`,
    /// `destination_not_found`, `platform_unauthorized`, `platform_refused`,
    /// `attempts_exhausted`, `parent_not_delivered`.
    pub reason: Option<&'static str>,
    /// Where it landed, once delivered: the conversation's platform id.
    pub platform_channel_id: Option<String>,
    /// The platform's id of the posted message (Matrix event id, Slack `ts`).
    pub platform_message_id: Option<String>,
    pub updated_at: String,
}

/// A bot message and where it stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct MessageView {
    /// The `bot_message_id`.
    pub id: String,
    /// `post`, `thread_response` or `edit`.
    pub kind: &'static str,
    /// The message replied to (thread responses) or rewritten (edits).
    pub parent: Option<String>,
    /// `queued` while a delivery is to be made; then `delivered` when every one landed, else
    /// `failed` (the deliveries say why).
    pub status: &'static str,
    pub message: String,
    /// The person whose credential sent it.
    pub sender_uuid: String,
    /// The person it is shown as coming from.
    pub send_as_user: Option<String>,
    pub deliveries: Vec<DeliveryView>,
    pub created_at: String,
}

impl From<&Message> for MessageView {
    fn from(m: &Message) -> Self {
        let (kind, parent) = match m.kind {
            MessageKind::Post => ("post", None),
            MessageKind::ThreadResponse { parent, .. } => ("thread_response", Some(parent)),
            MessageKind::Edit { original } => ("edit", Some(original)),
        };
        MessageView {
            id: m.id.to_string(),
            kind,
            parent: parent.map(|p| p.to_string()),
            status: m.status().as_str(),
            message: m.content.text.clone(),
            sender_uuid: m.sender.to_string(),
            send_as_user: m.send_as.map(|u| u.to_string()),
            deliveries: m
                .deliveries
                .iter()
                .map(|d| {
                    let (target_type, user_uuid, channel_id, thread) = match &d.target {
                        DeliveryTarget::Person(u) => ("user", Some(u.to_string()), None, None),
                        DeliveryTarget::Channel { channel_id, thread } => {
                            ("channel", None, Some(channel_id.clone()), thread.clone())
                        }
                    };
                    let (reason, sent) = match &d.status {
                        DeliveryStatus::Queued => (None, None),
                        DeliveryStatus::Delivered(sent) => (None, Some(sent)),
                        DeliveryStatus::Failed(reason) => (Some(reason.as_str()), None),
                    };
                    DeliveryView {
                        index: d.index,
                        target_type,
                        user_uuid,
                        channel_id,
                        thread,
                        status: d.status.as_str(),
                        reason,
                        platform_channel_id: sent.map(|s| s.channel_id.clone()),
                        platform_message_id: sent.map(|s| s.message_id.clone()),
                        updated_at: iso(d.updated_at),
                    }
                })
                .collect(),
            created_at: iso(m.created_at),
        }
    }
}

/// A bot message with its thread responses.
#[derive(Debug, Serialize, ToSchema)]
pub struct MessageReportView {
    #[serde(flatten)]
    pub message: MessageView,
    /// In order.
    pub thread_responses: Vec<MessageView>,
}

impl From<&MessageReport> for MessageReportView {
    fn from(r: &MessageReport) -> Self {
        MessageReportView {
            message: MessageView::from(&r.message),
            thread_responses: r.thread_responses.iter().map(MessageView::from).collect(),
        }
    }
}

#[utoipa::path(
    tag = "messaging",
    params(("id" = String, Path, description = "A `bot_message_id`")),
    responses(
        (status = 200, description = "The message, its deliveries and its thread responses (ours: not in the vendor's API). Its sender and admins see it", body = MessageReportView),
        (status = 404, description = "Not a message of the organization the caller may see", body = ErrorBody),
    )
)]
#[get("/v1/messages/{id}/")]
pub async fn get_message(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let report = state.messages.get_message(caller.user(), &id).await?;
    Ok(HttpResponse::Ok().json(MessageReportView::from(&report)))
}

/// Body of `POST /v1/open-conversation/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenConversationBody {
    /// 1 to 7 people of the organization, each with an identity on its platform
    /// (`no_valid_users`, `conversation_too_many_participants`, `one_or_more_users_not_found`).
    #[schema(example = json!(["0190a6b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"]))]
    users_uuids: Vec<String>,
}

/// An opened conversation.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConversationView {
    /// The conversation's platform id: send to it with `target_channels`.
    pub channel: String,
}

#[utoipa::path(
    tag = "messaging",
    request_body = OpenConversationBody,
    responses(
        (status = 200, description = "Opened, or found again: the same people answer the same conversation", body = ConversationView),
        (status = 400, description = "`no_valid_users`, `conversation_too_many_participants` (`extra.limit`), `one_or_more_users_not_found` (`extra.users`), `platform_not_connected`, `conversation_can_not_be_opened` (the platform refused; `extra.retry_after` when it asked to wait)", body = ErrorBody),
        (status = 403, description = "`org_admin_required`", body = ErrorBody),
        (status = 406, description = "`open_conversation_not_supported`: the platform has no group conversations", body = ErrorBody),
    )
)]
#[post("/v1/open-conversation/")]
pub async fn open_conversation(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<OpenConversationBody>,
) -> ApiResult<HttpResponse> {
    let channel = state
        .messages
        .open_conversation(caller.user(), &body.0.users_uuids)
        .await?;
    Ok(HttpResponse::Ok().json(ConversationView { channel }))
}

/// Body of `POST /v1/send-email/`: one e-mail per person.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendEmailBody {
    /// Active people of the organization (`one_or_more_users_not_found`, `extra.users`).
    #[schema(min_items = 1, max_items = 100, example = json!(["0190a6b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"]))]
    users_uuids: Vec<Uuid>,
    /// One line.
    #[schema(min_length = 1, max_length = 255)]
    email_subject: String,
    /// HTML (sent with a plain-text alternative made from it), or plain text; at most 256 KiB.
    #[schema(min_length = 1)]
    email_content: String,
}

/// What a send-email queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailsQueuedView {
    /// One e-mail per person, in the order named (duplicates collapse).
    pub email_ids: Vec<String>,
}

#[utoipa::path(
    tag = "messaging",
    request_body = SendEmailBody,
    responses(
        (status = 202, description = "Queued; the delivery worker sends each through the server's SMTP relay (`TEAMCOMM_SMTP_URL`; without one, each e-mail ends `failed` `mail_refused`). Read where each stands at `GET /v1/emails/{id}/`", body = EmailsQueuedView),
        (status = 400, description = "`params_validation_error`, `one_or_more_users_not_found` (`extra.users`)", body = ErrorBody),
        (status = 429, description = "`throttled`: the hourly `email` budget is spent; `free_plan_daily_limit_exceeded`: a free-plan organization's CLI sessions sent their 20 e-mails of the UTC day (`Retry-After` up to 00:00 UTC, `extra.limit`, `extra.limit_name`)", body = ErrorBody),
    )
)]
#[post("/v1/send-email/")]
pub async fn send_email(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<SendEmailBody>,
) -> ApiResult<HttpResponse> {
    let SendEmailBody {
        users_uuids,
        email_subject,
        email_content,
    } = body.0;
    let queued = state
        .emails
        .send_email(
            caller.user(),
            SendEmailRequest {
                users_uuids,
                email_subject,
                email_content,
            },
        )
        .await?;
    Ok(HttpResponse::Accepted().json(EmailsQueuedView {
        email_ids: queued.email_ids.iter().map(ToString::to_string).collect(),
    }))
}

/// An e-mail sent through the API and where it stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailView {
    /// One of the `email_ids` of `POST /v1/send-email/`.
    pub id: String,
    /// `queued` until the mail server accepts it (`sent`) or it fails for good (`failed`).
    pub status: &'static str,
    /// Why it failed: `mail_refused` (the relay refused it for good, or none is configured) or
    /// `attempts_exhausted` (every attempt allowed met a temporary refusal).
    pub reason: Option<&'static str>,
    /// The person whose credential sent it.
    pub sender_uuid: String,
    /// The person it is addressed to.
    pub recipient_uuid: String,
    pub subject: String,
    pub created_at: String,
}

impl From<&Email> for EmailView {
    fn from(e: &Email) -> Self {
        EmailView {
            id: e.id.to_string(),
            status: e.status.as_str(),
            reason: match e.status {
                EmailStatus::Failed(reason) => Some(reason.as_str()),
                EmailStatus::Queued | EmailStatus::Sent => None,
            },
            sender_uuid: e.sender.to_string(),
            recipient_uuid: e.recipient.to_string(),
            subject: e.subject.clone(),
            created_at: iso(e.created_at),
        }
    }
}

#[utoipa::path(
    tag = "messaging",
    params(("id" = String, Path, description = "One of the `email_ids` of a send-email")),
    responses(
        (status = 200, description = "The e-mail and where it stands (ours: not in the vendor's API). Its sender and admins see it", body = EmailView),
        (status = 404, description = "Not an e-mail of the organization the caller may see", body = ErrorBody),
    )
)]
#[get("/v1/emails/{id}/")]
pub async fn get_email(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let email = state.emails.get_email(caller.user(), &id).await?;
    Ok(HttpResponse::Ok().json(EmailView::from(&email)))
}

/// Body of `PUT /operator/v1/organizations/{uuid}/platform/`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectPlatformBody {
    /// `matrix` or `slack`.
    #[schema(example = "slack")]
    kind: String,
    /// The Matrix homeserver URL (required for Matrix); for Slack, another Web API base URL
    /// (default `https://slack.com/api`).
    base_url: Option<String>,
    /// The bot's token (Matrix access token, Slack `xoxb-…`): stored, never shown or logged.
    secret: String,
    /// Slack only: the app's signing secret (Basic Information → App Credentials). With it the
    /// organization's Slack events and button clicks are accepted at
    /// `/integrations/slack/{uuid}/events/` and `/integrations/slack/{uuid}/interactivity/`;
    /// stored sealed, never shown or logged.
    signing_secret: Option<String>,
}

/// An organization's platform connection, without its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlatformConnectionView {
    /// `matrix` or `slack`.
    pub kind: &'static str,
    pub base_url: Option<String>,
    /// Whether a signing secret is stored (Slack: its events and clicks are accepted).
    pub has_signing_secret: bool,
}

impl From<&PlatformSummary> for PlatformConnectionView {
    fn from(s: &PlatformSummary) -> Self {
        PlatformConnectionView {
            kind: s.kind.as_str(),
            base_url: s.base_url.clone(),
            has_signing_secret: s.has_signing_secret,
        }
    }
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "Organization")),
    request_body = ConnectPlatformBody,
    responses(
        (status = 200, description = "Connected, replacing the connection it had; the organization's `platform` names it", body = PlatformConnectionView),
        (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/operator/v1/organizations/{uuid}/platform/")]
pub async fn connect_platform(
    _op: Operator,
    state: web::Data<AppState>,
    org: web::Path<OrgId>,
    body: JsonBody<ConnectPlatformBody>,
) -> ApiResult<HttpResponse> {
    let ConnectPlatformBody {
        kind,
        base_url,
        secret,
        signing_secret,
    } = body.0;
    let summary = state
        .platforms
        .connect(
            *org,
            &NewPlatformConnection {
                kind,
                base_url,
                secret,
                signing_secret,
            },
        )
        .await?;
    Ok(HttpResponse::Ok().json(PlatformConnectionView::from(&summary)))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "Organization")),
    responses(
        (status = 200, body = PlatformConnectionView),
        (status = 404, description = "No such organization, or it has no platform connected", body = ErrorBody),
    )
)]
#[get("/operator/v1/organizations/{uuid}/platform/")]
pub async fn get_platform(
    _op: Operator,
    state: web::Data<AppState>,
    org: web::Path<OrgId>,
) -> ApiResult<HttpResponse> {
    let summary = state
        .platforms
        .connection(*org)
        .await?
        .ok_or_else(teamcomm_kernel::Error::not_found)?;
    Ok(HttpResponse::Ok().json(PlatformConnectionView::from(&summary)))
}

#[utoipa::path(
    tag = "operator",
    params(("uuid" = String, Path, description = "Organization")),
    responses(
        (status = 204, description = "Disconnected; people's platform identities are kept"),
        (status = 404, description = "It had no platform connected", body = ErrorBody),
    )
)]
#[delete("/operator/v1/organizations/{uuid}/platform/")]
pub async fn disconnect_platform(
    _op: Operator,
    state: web::Data<AppState>,
    org: web::Path<OrgId>,
) -> ApiResult<HttpResponse> {
    state.platforms.disconnect(*org).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Body of `PUT /operator/v1/organizations/{uuid}/users/{user}/platform-identity/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlatformIdentityBody {
    /// Who the person is on the organization's connected platform: a Matrix user id
    /// (`@ada:example.org`) or a Slack user id (`U…`); unique in the organization.
    #[schema(example = "U024BE7LH")]
    platform_user_id: String,
}

#[utoipa::path(
    tag = "operator",
    params(
        ("uuid" = String, Path, description = "Organization"),
        ("user" = String, Path, description = "Person of the organization"),
    ),
    request_body = PlatformIdentityBody,
    responses(
        (status = 204, description = "Recorded for the connected platform"),
        (status = 400, description = "`platform_not_connected`; `params_validation_error` when malformed or another person's", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/operator/v1/organizations/{uuid}/users/{user}/platform-identity/")]
pub async fn set_platform_identity(
    _op: Operator,
    state: web::Data<AppState>,
    path: web::Path<(OrgId, UserId)>,
    body: JsonBody<PlatformIdentityBody>,
) -> ApiResult<HttpResponse> {
    let (org, user) = *path;
    state
        .platforms
        .map_person(org, user, Some(&body.0.platform_user_id))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "operator",
    params(
        ("uuid" = String, Path, description = "Organization"),
        ("user" = String, Path, description = "Person of the organization"),
    ),
    responses(
        (status = 204, description = "Forgotten (also when none was recorded)"),
        (status = 400, description = "`platform_not_connected`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/operator/v1/organizations/{uuid}/users/{user}/platform-identity/")]
pub async fn remove_platform_identity(
    _op: Operator,
    state: web::Data<AppState>,
    path: web::Path<(OrgId, UserId)>,
) -> ApiResult<HttpResponse> {
    let (org, user) = *path;
    state.platforms.map_person(org, user, None).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use teamcomm_messaging::email::{MAX_EMAIL_RECIPIENTS, MAX_EMAIL_SUBJECT_CHARS};
    use utoipa::PartialSchema;

    use super::*;

    /// The document's limits are literals (schema attributes take no constants): they must
    /// say what the domain enforces.
    #[test]
    fn the_document_states_the_domains_limits() {
        let email = serde_json::to_value(SendEmailBody::schema()).unwrap();
        let p = &email["properties"];
        assert_eq!(p["users_uuids"]["maxItems"], json!(MAX_EMAIL_RECIPIENTS));
        assert_eq!(
            p["email_subject"]["maxLength"],
            json!(MAX_EMAIL_SUBJECT_CHARS)
        );
    }
}
