//! SQL of bot messages and their deliveries, e-mails, and the organizations' chat platforms
//! (connections with their sealed secrets, people's platform identities).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use diesel::dsl::{exists, now};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::{OrgId, RepoError, UserId};
use teamcomm_messaging::email::{Email, EmailStatus};
use teamcomm_messaging::mail::Mailbox;
use teamcomm_messaging::message::{
    Delivery, DeliveryStatus, DeliveryTarget, FailureReason, Message, MessageButton,
    MessageContent, MessageId, MessageKind,
};
use teamcomm_messaging::platform::{BotAppearance, Button, ButtonKind, PlatformKind, SentMessage};
use teamcomm_messaging::ports::{
    EmailRepository, MessageRepository, PlatformConnection, PlatformDirectory, PlatformSecret,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::jobs;
use crate::Database;
use crate::error::{db_error, unknown_organization};
use crate::rows::unknown_value;
use crate::schema::messaging::{
    emails, message_deliveries, messages, platform_connections, platform_identities,
};
use crate::schema::users;
use crate::secrets::PlatformSecretKey;

/// A position (delivery index, thread position) as stored.
fn stored_position(position: u32) -> Result<i32, RepoError> {
    i32::try_from(position).map_err(|_| RepoError::Other(format!("position {position} too large")))
}

fn position_from(column: &str, stored: i32) -> Result<u32, RepoError> {
    u32::try_from(stored).map_err(|_| unknown_value(column, stored))
}

// ---------------------------------------------------------------- messages

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = messages, check_for_backend(Pg))]
struct MessageRow {
    id: Uuid,
    organization_id: Uuid,
    sender_id: Uuid,
    send_as_id: Option<Uuid>,
    kind: String,
    thread_parent_id: Option<Uuid>,
    thread_position: Option<i32>,
    edit_of_id: Option<Uuid>,
    body: String,
    image_url: Option<String>,
    buttons: Value,
    bot_username: Option<String>,
    bot_icon_url: Option<String>,
    bot_icon_emoji: Option<String>,
    is_ephemeral: bool,
    metadata: Value,
    created_at: OffsetDateTime,
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = message_deliveries, check_for_backend(Pg))]
struct DeliveryRow {
    message_id: Uuid,
    position: i32,
    recipient_id: Option<Uuid>,
    channel_id: Option<String>,
    thread_id: Option<String>,
    status: String,
    platform_channel_id: Option<String>,
    platform_message_id: Option<String>,
    failure_reason: Option<String>,
    updated_at: OffsetDateTime,
}

/// A button in `messages.buttons`; unknown members are refused when read.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredButton {
    label: String,
    action: StoredAction,
    callback_url: Option<String>,
    settings: Map<String, Value>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum StoredAction {
    Link { url: String },
    Interactive { value: String },
}

const POST: &str = "post";
const THREAD_RESPONSE: &str = "thread_response";
const EDIT: &str = "edit";

const QUEUED: &str = "queued";
const DELIVERED: &str = "delivered";
const FAILED: &str = "failed";
const SENT: &str = "sent";

/// The status columns a delivery's row holds: its name, the platform's ids once delivered,
/// the reason once failed.
struct DeliveryStatusColumns<'a> {
    status: &'static str,
    platform_channel_id: Option<&'a str>,
    platform_message_id: Option<&'a str>,
    failure_reason: Option<&'static str>,
}

impl<'a> From<&'a DeliveryStatus> for DeliveryStatusColumns<'a> {
    fn from(status: &'a DeliveryStatus) -> Self {
        let (platform_channel_id, platform_message_id, failure_reason) = match status {
            DeliveryStatus::Queued => (None, None, None),
            DeliveryStatus::Delivered(sent) => (
                Some(sent.channel_id.as_str()),
                Some(sent.message_id.as_str()),
                None,
            ),
            DeliveryStatus::Failed(reason) => (None, None, Some(reason.as_str())),
        };
        DeliveryStatusColumns {
            status: status.as_str(),
            platform_channel_id,
            platform_message_id,
            failure_reason,
        }
    }
}

fn failure_reason_from(column: &str, reason: &str) -> Result<FailureReason, RepoError> {
    FailureReason::parse(reason).ok_or_else(|| unknown_value(column, reason))
}

/// The rows of one message: itself and its deliveries.
fn rows_of_message(m: &Message) -> Result<(MessageRow, Vec<DeliveryRow>), RepoError> {
    let (kind, thread_parent_id, thread_position, edit_of_id) = match m.kind {
        MessageKind::Post => (POST, None, None, None),
        MessageKind::ThreadResponse { parent, position } => (
            THREAD_RESPONSE,
            Some(parent.0),
            Some(stored_position(position)?),
            None,
        ),
        MessageKind::Edit { original } => (EDIT, None, None, Some(original.0)),
    };
    let content = &m.content;
    let buttons: Vec<StoredButton> = content
        .buttons
        .iter()
        .map(|b| StoredButton {
            label: b.button.label.clone(),
            action: match &b.button.kind {
                ButtonKind::Link { url } => StoredAction::Link { url: url.clone() },
                ButtonKind::Interactive { value } => StoredAction::Interactive {
                    value: value.clone(),
                },
            },
            callback_url: b.callback_url.clone(),
            settings: b.settings.clone(),
        })
        .collect();
    let buttons = serde_json::to_value(buttons).map_err(|e| RepoError::Other(e.to_string()))?;
    let row = MessageRow {
        id: m.id.0,
        organization_id: m.org_id.0,
        sender_id: m.sender.0,
        send_as_id: m.send_as.map(|u| u.0),
        kind: kind.to_owned(),
        thread_parent_id,
        thread_position,
        edit_of_id,
        body: content.text.clone(),
        image_url: content.image_url.clone(),
        buttons,
        bot_username: content.appearance.username.clone(),
        bot_icon_url: content.appearance.icon_url.clone(),
        bot_icon_emoji: content.appearance.icon_emoji.clone(),
        is_ephemeral: content.is_ephemeral,
        metadata: Value::Object(content.metadata.clone()),
        created_at: m.created_at,
    };
    let deliveries = m
        .deliveries
        .iter()
        .map(|d| {
            let (recipient_id, channel_id, thread_id) = match &d.target {
                DeliveryTarget::Person(user) => (Some(user.0), None, None),
                DeliveryTarget::Channel { channel_id, thread } => {
                    (None, Some(channel_id.clone()), thread.clone())
                }
            };
            let status = DeliveryStatusColumns::from(&d.status);
            Ok(DeliveryRow {
                message_id: m.id.0,
                position: stored_position(d.index)?,
                recipient_id,
                channel_id,
                thread_id,
                status: status.status.to_owned(),
                platform_channel_id: status.platform_channel_id.map(str::to_owned),
                platform_message_id: status.platform_message_id.map(str::to_owned),
                failure_reason: status.failure_reason.map(str::to_owned),
                updated_at: d.updated_at,
            })
        })
        .collect::<Result<_, RepoError>>()?;
    Ok((row, deliveries))
}

impl TryFrom<DeliveryRow> for Delivery {
    type Error = RepoError;
    fn try_from(r: DeliveryRow) -> Result<Self, RepoError> {
        let target = match (r.recipient_id, r.channel_id, r.thread_id) {
            (Some(user), None, None) => DeliveryTarget::Person(UserId(user)),
            (None, Some(channel_id), thread) => DeliveryTarget::Channel { channel_id, thread },
            _ => {
                return Err(RepoError::Other(format!(
                    "delivery {}:{} names no single target",
                    r.message_id, r.position
                )));
            }
        };
        let status = match (
            r.status.as_str(),
            r.platform_channel_id,
            r.platform_message_id,
            r.failure_reason,
        ) {
            (QUEUED, None, None, None) => DeliveryStatus::Queued,
            (DELIVERED, Some(channel_id), Some(message_id), None) => {
                DeliveryStatus::Delivered(SentMessage {
                    channel_id,
                    message_id,
                })
            }
            (FAILED, None, None, Some(reason)) => DeliveryStatus::Failed(failure_reason_from(
                "message_deliveries.failure_reason",
                &reason,
            )?),
            (status, ..) => return Err(unknown_value("message_deliveries.status", status)),
        };
        Ok(Delivery {
            index: position_from("message_deliveries.position", r.position)?,
            target,
            status,
            updated_at: r.updated_at,
        })
    }
}

/// A message from its row and its deliveries (ordered by index).
fn message_from(r: MessageRow, deliveries: Vec<Delivery>) -> Result<Message, RepoError> {
    let kind = match (
        r.kind.as_str(),
        r.thread_parent_id,
        r.thread_position,
        r.edit_of_id,
    ) {
        (POST, None, None, None) => MessageKind::Post,
        (THREAD_RESPONSE, Some(parent), Some(position), None) => MessageKind::ThreadResponse {
            parent: MessageId(parent),
            position: position_from("messages.thread_position", position)?,
        },
        (EDIT, None, None, Some(original)) => MessageKind::Edit {
            original: MessageId(original),
        },
        (kind, ..) => return Err(unknown_value("messages.kind", kind)),
    };
    let buttons: Vec<StoredButton> =
        serde_json::from_value(r.buttons).map_err(|e| unknown_value("messages.buttons", e))?;
    let metadata = match r.metadata {
        Value::Object(metadata) => metadata,
        other => return Err(unknown_value("messages.metadata", other)),
    };
    Ok(Message {
        id: MessageId(r.id),
        org_id: OrgId(r.organization_id),
        sender: UserId(r.sender_id),
        send_as: r.send_as_id.map(UserId),
        kind,
        content: MessageContent {
            text: r.body,
            image_url: r.image_url,
            buttons: buttons
                .into_iter()
                .map(|b| MessageButton {
                    button: Button {
                        label: b.label,
                        kind: match b.action {
                            StoredAction::Link { url } => ButtonKind::Link { url },
                            StoredAction::Interactive { value } => {
                                ButtonKind::Interactive { value }
                            }
                        },
                    },
                    callback_url: b.callback_url,
                    settings: b.settings,
                })
                .collect(),
            appearance: BotAppearance {
                username: r.bot_username,
                icon_url: r.bot_icon_url,
                icon_emoji: r.bot_icon_emoji,
            },
            is_ephemeral: r.is_ephemeral,
            metadata,
        },
        deliveries,
        created_at: r.created_at,
    })
}

/// Messages, their deliveries and their jobs written by one statement of data-modifying CTEs
/// over one array per column: its text is the same for every send, so diesel prepares it once
/// per connection, and a send costs one round trip (a transaction of multi-row inserts cost
/// five, each parsed and planned anew: docs/performance.md). The deliveries' and thread
/// responses' foreign keys are checked at the end of the statement, when every row is in.
struct QueueMessages<'a> {
    m_ids: Vec<Uuid>,
    m_orgs: Vec<Uuid>,
    m_senders: Vec<Uuid>,
    m_send_as: Vec<Option<Uuid>>,
    m_kinds: Vec<&'a str>,
    m_thread_parents: Vec<Option<Uuid>>,
    m_thread_positions: Vec<Option<i32>>,
    m_edit_of: Vec<Option<Uuid>>,
    m_bodies: Vec<&'a str>,
    m_image_urls: Vec<Option<&'a str>>,
    m_buttons: Vec<&'a Value>,
    m_bot_usernames: Vec<Option<&'a str>>,
    m_bot_icon_urls: Vec<Option<&'a str>>,
    m_bot_icon_emojis: Vec<Option<&'a str>>,
    m_ephemeral: Vec<bool>,
    m_metadata: Vec<&'a Value>,
    m_created_at: Vec<OffsetDateTime>,
    d_messages: Vec<Uuid>,
    d_positions: Vec<i32>,
    d_recipients: Vec<Option<Uuid>>,
    d_channels: Vec<Option<&'a str>>,
    d_threads: Vec<Option<&'a str>>,
    d_statuses: Vec<&'a str>,
    d_platform_channels: Vec<Option<&'a str>>,
    d_platform_messages: Vec<Option<&'a str>>,
    d_failure_reasons: Vec<Option<&'a str>>,
    d_updated_at: Vec<OffsetDateTime>,
    jobs: jobs::JobColumns<'a>,
}

impl<'a> QueueMessages<'a> {
    fn new(
        messages: &'a [MessageRow],
        deliveries: &'a [DeliveryRow],
        jobs: jobs::JobColumns<'a>,
    ) -> Self {
        QueueMessages {
            m_ids: messages.iter().map(|m| m.id).collect(),
            m_orgs: messages.iter().map(|m| m.organization_id).collect(),
            m_senders: messages.iter().map(|m| m.sender_id).collect(),
            m_send_as: messages.iter().map(|m| m.send_as_id).collect(),
            m_kinds: messages.iter().map(|m| m.kind.as_str()).collect(),
            m_thread_parents: messages.iter().map(|m| m.thread_parent_id).collect(),
            m_thread_positions: messages.iter().map(|m| m.thread_position).collect(),
            m_edit_of: messages.iter().map(|m| m.edit_of_id).collect(),
            m_bodies: messages.iter().map(|m| m.body.as_str()).collect(),
            m_image_urls: messages.iter().map(|m| m.image_url.as_deref()).collect(),
            m_buttons: messages.iter().map(|m| &m.buttons).collect(),
            m_bot_usernames: messages.iter().map(|m| m.bot_username.as_deref()).collect(),
            m_bot_icon_urls: messages.iter().map(|m| m.bot_icon_url.as_deref()).collect(),
            m_bot_icon_emojis: messages
                .iter()
                .map(|m| m.bot_icon_emoji.as_deref())
                .collect(),
            m_ephemeral: messages.iter().map(|m| m.is_ephemeral).collect(),
            m_metadata: messages.iter().map(|m| &m.metadata).collect(),
            m_created_at: messages.iter().map(|m| m.created_at).collect(),
            d_messages: deliveries.iter().map(|d| d.message_id).collect(),
            d_positions: deliveries.iter().map(|d| d.position).collect(),
            d_recipients: deliveries.iter().map(|d| d.recipient_id).collect(),
            d_channels: deliveries.iter().map(|d| d.channel_id.as_deref()).collect(),
            d_threads: deliveries.iter().map(|d| d.thread_id.as_deref()).collect(),
            d_statuses: deliveries.iter().map(|d| d.status.as_str()).collect(),
            d_platform_channels: deliveries
                .iter()
                .map(|d| d.platform_channel_id.as_deref())
                .collect(),
            d_platform_messages: deliveries
                .iter()
                .map(|d| d.platform_message_id.as_deref())
                .collect(),
            d_failure_reasons: deliveries
                .iter()
                .map(|d| d.failure_reason.as_deref())
                .collect(),
            d_updated_at: deliveries.iter().map(|d| d.updated_at).collect(),
            jobs,
        }
    }
}

impl diesel::query_builder::QueryId for QueueMessages<'_> {
    type QueryId = QueueMessages<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::QueryFragment<Pg> for QueueMessages<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, Pg>,
    ) -> QueryResult<()> {
        use diesel::sql_types::Uuid as SqlUuid;
        use diesel::sql_types::{Array, Bool, Int4, Jsonb, Nullable, Text, Timestamptz};
        out.push_sql(
            "WITH message AS (INSERT INTO messages (id, organization_id, sender_id, send_as_id, \
               kind, thread_parent_id, thread_position, edit_of_id, body, image_url, buttons, \
               bot_username, bot_icon_url, bot_icon_emoji, is_ephemeral, metadata, created_at) \
             SELECT * FROM unnest(",
        );
        out.push_bind_param::<Array<SqlUuid>, _>(&self.m_ids)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<SqlUuid>, _>(&self.m_orgs)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<SqlUuid>, _>(&self.m_senders)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Nullable<SqlUuid>>, _>(&self.m_send_as)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Text>, _>(&self.m_kinds)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<SqlUuid>>, _>(&self.m_thread_parents)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Nullable<Int4>>, _>(&self.m_thread_positions)?;
        out.push_sql("::integer[], ");
        out.push_bind_param::<Array<Nullable<SqlUuid>>, _>(&self.m_edit_of)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Text>, _>(&self.m_bodies)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.m_image_urls)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Jsonb>, _>(&self.m_buttons)?;
        out.push_sql("::jsonb[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.m_bot_usernames)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.m_bot_icon_urls)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.m_bot_icon_emojis)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Bool>, _>(&self.m_ephemeral)?;
        out.push_sql("::boolean[], ");
        out.push_bind_param::<Array<Jsonb>, _>(&self.m_metadata)?;
        out.push_sql("::jsonb[], ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.m_created_at)?;
        // Each insert waits for the one before (a one-time filter on its count), so they run
        // in order and a refusal names the first table that refuses: a taken message id is
        // `messages_pkey`, not its deliveries' key.
        out.push_sql(
            "::timestamptz[]) RETURNING 1), \
             delivery AS (INSERT INTO message_deliveries (message_id, position, recipient_id, \
               channel_id, thread_id, status, platform_channel_id, platform_message_id, \
               failure_reason, updated_at) \
             SELECT * FROM unnest(",
        );
        out.push_bind_param::<Array<SqlUuid>, _>(&self.d_messages)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Int4>, _>(&self.d_positions)?;
        out.push_sql("::integer[], ");
        out.push_bind_param::<Array<Nullable<SqlUuid>>, _>(&self.d_recipients)?;
        out.push_sql("::uuid[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.d_channels)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.d_threads)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Text>, _>(&self.d_statuses)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.d_platform_channels)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.d_platform_messages)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.d_failure_reasons)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<Timestamptz>, _>(&self.d_updated_at)?;
        out.push_sql(
            "::timestamptz[]) WHERE (SELECT count(*) FROM message) IS NOT NULL RETURNING 1) ",
        );
        self.jobs.push_insert(&mut out)?;
        out.push_sql(" WHERE (SELECT count(*) FROM delivery) IS NOT NULL");
        Ok(())
    }
}

/// Postgres implementation of [`MessageRepository`].
#[derive(Clone)]
pub struct PgMessageRepository {
    db: Database,
}

impl PgMessageRepository {
    pub fn new(db: Database) -> Self {
        PgMessageRepository { db }
    }
}

/// The messages of `rows` with their deliveries (one more statement for all of them).
async fn assemble(
    conn: &mut AsyncPgConnection,
    rows: Vec<MessageRow>,
) -> Result<Vec<Message>, RepoError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let delivery_rows: Vec<DeliveryRow> = message_deliveries::table
        .filter(message_deliveries::message_id.eq_any(&ids))
        .order_by((message_deliveries::message_id, message_deliveries::position))
        .select(DeliveryRow::as_select())
        .load(conn)
        .await
        .map_err(db_error)?;
    let mut deliveries: HashMap<Uuid, Vec<Delivery>> = HashMap::new();
    for row in delivery_rows {
        deliveries
            .entry(row.message_id)
            .or_default()
            .push(row.try_into()?);
    }
    rows.into_iter()
        .map(|r| {
            let of_message = deliveries.remove(&r.id).unwrap_or_default();
            message_from(r, of_message)
        })
        .collect()
}

#[async_trait]
impl MessageRepository for PgMessageRepository {
    async fn queue_messages(&self, messages: &[Message], jobs: &[NewJob]) -> Result<(), RepoError> {
        let mut message_rows = Vec::with_capacity(messages.len());
        let mut delivery_rows = Vec::new();
        for m in messages {
            let (row, deliveries) = rows_of_message(m)?;
            message_rows.push(row);
            delivery_rows.extend(deliveries);
        }
        let mut conn = self.db.conn().await?;
        // One statement is one transaction: the messages, their deliveries and their jobs are
        // written together or not at all.
        QueueMessages::new(&message_rows, &delivery_rows, jobs::JobColumns::of(jobs))
            .execute(&mut conn)
            .await
            .map_err(|e| unknown_organization(db_error(e)))?;
        Ok(())
    }

    async fn get_message(&self, org: OrgId, id: MessageId) -> Result<Message, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: MessageRow = messages::table
            .filter(messages::id.eq(id.0))
            .filter(messages::organization_id.eq(org.0))
            .select(MessageRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        assemble(&mut conn, vec![row])
            .await?
            .pop()
            .ok_or(RepoError::NotFound)
    }

    async fn thread_responses(
        &self,
        org: OrgId,
        parent: MessageId,
    ) -> Result<Vec<Message>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<MessageRow> = messages::table
            .filter(messages::thread_parent_id.eq(parent.0))
            .filter(messages::organization_id.eq(org.0))
            .order_by(messages::thread_position)
            .select(MessageRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        assemble(&mut conn, rows).await
    }

    async fn record_delivery(
        &self,
        org: OrgId,
        message: MessageId,
        index: u32,
        status: &DeliveryStatus,
        at: OffsetDateTime,
    ) -> Result<(), RepoError> {
        // An index no row can have names no delivery.
        let position = i32::try_from(index).map_err(|_| RepoError::NotFound)?;
        let columns = DeliveryStatusColumns::from(status);
        let mut conn = self.db.conn().await?;
        let of_org = messages::table
            .filter(messages::id.eq(message.0))
            .filter(messages::organization_id.eq(org.0));
        let updated = diesel::update(
            message_deliveries::table
                .filter(message_deliveries::message_id.eq(message.0))
                .filter(message_deliveries::position.eq(position))
                .filter(exists(of_org)),
        )
        .set((
            message_deliveries::status.eq(columns.status),
            message_deliveries::platform_channel_id.eq(columns.platform_channel_id),
            message_deliveries::platform_message_id.eq(columns.platform_message_id),
            message_deliveries::failure_reason.eq(columns.failure_reason),
            message_deliveries::updated_at.eq(at),
        ))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if updated == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- e-mails

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = emails, check_for_backend(Pg))]
struct EmailRow {
    id: Uuid,
    organization_id: Uuid,
    sender_id: Uuid,
    recipient_id: Uuid,
    to_address: String,
    to_name: Option<String>,
    subject: String,
    html_body: Option<String>,
    text_body: String,
    status: String,
    failure_reason: Option<String>,
    created_at: OffsetDateTime,
}

/// An e-mail's status as its two columns.
fn email_status_columns(status: EmailStatus) -> (&'static str, Option<&'static str>) {
    match status {
        EmailStatus::Queued | EmailStatus::Sent => (status.as_str(), None),
        EmailStatus::Failed(reason) => (status.as_str(), Some(reason.as_str())),
    }
}

impl From<&Email> for EmailRow {
    fn from(e: &Email) -> Self {
        let (status, failure_reason) = email_status_columns(e.status);
        EmailRow {
            id: e.id,
            organization_id: e.org_id.0,
            sender_id: e.sender.0,
            recipient_id: e.recipient.0,
            to_address: e.to.address.clone(),
            to_name: e.to.name.clone(),
            subject: e.subject.clone(),
            html_body: e.html.clone(),
            text_body: e.text.clone(),
            status: status.to_owned(),
            failure_reason: failure_reason.map(str::to_owned),
            created_at: e.created_at,
        }
    }
}

impl TryFrom<EmailRow> for Email {
    type Error = RepoError;
    fn try_from(r: EmailRow) -> Result<Self, RepoError> {
        let status = match (r.status.as_str(), r.failure_reason) {
            (QUEUED, None) => EmailStatus::Queued,
            (SENT, None) => EmailStatus::Sent,
            (FAILED, Some(reason)) => {
                EmailStatus::Failed(failure_reason_from("emails.failure_reason", &reason)?)
            }
            (status, _) => return Err(unknown_value("emails.status", status)),
        };
        Ok(Email {
            id: r.id,
            org_id: OrgId(r.organization_id),
            sender: UserId(r.sender_id),
            recipient: UserId(r.recipient_id),
            to: Mailbox {
                name: r.to_name,
                address: r.to_address,
            },
            subject: r.subject,
            html: r.html_body,
            text: r.text_body,
            status,
            created_at: r.created_at,
        })
    }
}

/// Postgres implementation of [`EmailRepository`].
#[derive(Clone)]
pub struct PgEmailRepository {
    db: Database,
}

impl PgEmailRepository {
    pub fn new(db: Database) -> Self {
        PgEmailRepository { db }
    }
}

#[async_trait]
impl EmailRepository for PgEmailRepository {
    async fn queue_emails(&self, emails: &[Email], jobs: &[NewJob]) -> Result<(), RepoError> {
        let rows: Vec<EmailRow> = emails.iter().map(EmailRow::from).collect();
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            if !rows.is_empty() {
                // `updated_at` starts as the queueing instant.
                let stamped: Vec<_> = rows
                    .iter()
                    .map(|r| (r, emails::updated_at.eq(r.created_at)))
                    .collect();
                diesel::insert_into(emails::table)
                    .values(stamped)
                    .execute(conn)
                    .await?;
            }
            jobs::enqueue(conn, jobs).await
        })
        .await
        .map_err(|e| unknown_organization(db_error(e)))
    }

    async fn get_email(&self, org: OrgId, id: Uuid) -> Result<Email, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: EmailRow = emails::table
            .filter(emails::id.eq(id))
            .filter(emails::organization_id.eq(org.0))
            .select(EmailRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn record_email(
        &self,
        org: OrgId,
        id: Uuid,
        status: &EmailStatus,
        at: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let (status, failure_reason) = email_status_columns(*status);
        let mut conn = self.db.conn().await?;
        let updated = diesel::update(
            emails::table
                .filter(emails::id.eq(id))
                .filter(emails::organization_id.eq(org.0)),
        )
        .set((
            emails::status.eq(status),
            emails::failure_reason.eq(failure_reason),
            emails::updated_at.eq(at),
        ))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if updated == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- platform directory

/// Postgres implementation of [`PlatformDirectory`]. Secrets are sealed with `key` when saved
/// and opened only by [`PlatformDirectory::connection`] (the read that hands them to the
/// platform connector); no other query reads `sealed_secret`.
#[derive(Clone)]
pub struct PgPlatformDirectory {
    db: Database,
    key: Arc<PlatformSecretKey>,
}

impl PgPlatformDirectory {
    pub fn new(db: Database, key: PlatformSecretKey) -> Self {
        PgPlatformDirectory {
            db,
            key: Arc::new(key),
        }
    }
}

fn platform_kind_from(column: &str, kind: &str) -> Result<PlatformKind, RepoError> {
    PlatformKind::parse(kind).ok_or_else(|| unknown_value(column, kind))
}

/// What a sealed signing secret's plaintext starts with: the bot token sealed for the same
/// organization and kind, moved into `sealed_signing_secret`, does not open as one.
const SIGNING_SECRET_PURPOSE: &str = "signing-secret:";

fn seal_signing_secret(
    key: &PlatformSecretKey,
    org: OrgId,
    kind: PlatformKind,
    signing: &PlatformSecret,
) -> Result<Vec<u8>, RepoError> {
    let marked = PlatformSecret::new(format!("{SIGNING_SECRET_PURPOSE}{}", signing.expose()));
    key.seal(org, kind, &marked)
}

fn open_signing_secret(
    key: &PlatformSecretKey,
    org: OrgId,
    kind: PlatformKind,
    sealed: &[u8],
) -> Result<PlatformSecret, RepoError> {
    let marked = key.open(org, kind, sealed)?;
    marked
        .expose()
        .strip_prefix(SIGNING_SECRET_PURPOSE)
        .map(PlatformSecret::new)
        .ok_or_else(|| RepoError::Other("the sealed signing secret is not one".into()))
}

#[async_trait]
impl PlatformDirectory for PgPlatformDirectory {
    async fn connection(&self, org: OrgId) -> Result<Option<PlatformConnection>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<(String, Option<String>, Vec<u8>, Option<Vec<u8>>)> =
            platform_connections::table
                .filter(platform_connections::organization_id.eq(org.0))
                .select((
                    platform_connections::kind,
                    platform_connections::base_url,
                    platform_connections::sealed_secret,
                    platform_connections::sealed_signing_secret,
                ))
                .first(&mut conn)
                .await
                .optional()
                .map_err(db_error)?;
        let Some((kind, base_url, sealed_secret, sealed_signing_secret)) = row else {
            return Ok(None);
        };
        let kind = platform_kind_from("platform_connections.kind", &kind)?;
        let signing_secret = match sealed_signing_secret {
            Some(sealed) => Some(open_signing_secret(&self.key, org, kind, &sealed)?),
            None => None,
        };
        Ok(Some(PlatformConnection {
            org_id: org,
            kind,
            base_url,
            secret: self.key.open(org, kind, &sealed_secret)?,
            signing_secret,
        }))
    }

    async fn connected_orgs(&self, kind: PlatformKind) -> Result<Vec<OrgId>, RepoError> {
        let mut conn = self.db.conn().await?;
        let ids: Vec<Uuid> = platform_connections::table
            .filter(platform_connections::kind.eq(kind.as_str()))
            .select(platform_connections::organization_id)
            .order(platform_connections::organization_id)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(ids.into_iter().map(OrgId).collect())
    }

    async fn platform_user_ids(
        &self,
        org: OrgId,
        kind: PlatformKind,
        people: &[UserId],
    ) -> Result<HashMap<UserId, String>, RepoError> {
        if people.is_empty() {
            return Ok(HashMap::new());
        }
        let ids: Vec<Uuid> = people.iter().map(|u| u.0).collect();
        let mut conn = self.db.conn().await?;
        let rows: Vec<(Uuid, String)> = platform_identities::table
            .filter(platform_identities::organization_id.eq(org.0))
            .filter(platform_identities::kind.eq(kind.as_str()))
            .filter(platform_identities::user_id.eq_any(&ids))
            .select((
                platform_identities::user_id,
                platform_identities::platform_user_id,
            ))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows
            .into_iter()
            .map(|(user, platform_user_id)| (UserId(user), platform_user_id))
            .collect())
    }

    async fn save_connection(&self, connection: &PlatformConnection) -> Result<(), RepoError> {
        let org = connection.org_id;
        let sealed_secret = self.key.seal(org, connection.kind, &connection.secret)?;
        let sealed_signing_secret = match &connection.signing_secret {
            Some(signing) => Some(seal_signing_secret(
                &self.key,
                org,
                connection.kind,
                signing,
            )?),
            None => None,
        };
        let mut conn = self.db.conn().await?;
        diesel::insert_into(platform_connections::table)
            .values((
                platform_connections::organization_id.eq(org.0),
                platform_connections::kind.eq(connection.kind.as_str()),
                platform_connections::base_url.eq(&connection.base_url),
                platform_connections::sealed_secret.eq(&sealed_secret),
                platform_connections::sealed_signing_secret.eq(&sealed_signing_secret),
            ))
            .on_conflict(platform_connections::organization_id)
            .do_update()
            .set((
                platform_connections::kind.eq(excluded(platform_connections::kind)),
                platform_connections::base_url.eq(excluded(platform_connections::base_url)),
                platform_connections::sealed_secret
                    .eq(excluded(platform_connections::sealed_secret)),
                platform_connections::sealed_signing_secret
                    .eq(excluded(platform_connections::sealed_signing_secret)),
                platform_connections::updated_at.eq(now),
            ))
            .execute(&mut conn)
            .await
            .map_err(|e| unknown_organization(db_error(e)))?;
        Ok(())
    }

    async fn remove_connection(&self, org: OrgId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let removed = diesel::delete(
            platform_connections::table.filter(platform_connections::organization_id.eq(org.0)),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if removed == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn set_platform_user_id(
        &self,
        org: OrgId,
        kind: PlatformKind,
        user: UserId,
        platform_user_id: Option<&str>,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        // A person never changes organization, so this check holds for the write after it.
        let of_org: bool = diesel::select(exists(
            users::table
                .filter(users::id.eq(user.0))
                .filter(users::organization_id.eq(org.0)),
        ))
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        if !of_org {
            return Err(RepoError::NotFound);
        }
        let identity = platform_identities::table
            .filter(platform_identities::organization_id.eq(org.0))
            .filter(platform_identities::kind.eq(kind.as_str()))
            .filter(platform_identities::user_id.eq(user.0));
        match platform_user_id {
            None => {
                diesel::delete(identity)
                    .execute(&mut conn)
                    .await
                    .map_err(db_error)?;
            }
            // Taken by another person: `platform_identities_unique`.
            Some(platform_user_id) => {
                diesel::insert_into(platform_identities::table)
                    .values((
                        platform_identities::organization_id.eq(org.0),
                        platform_identities::kind.eq(kind.as_str()),
                        platform_identities::user_id.eq(user.0),
                        platform_identities::platform_user_id.eq(platform_user_id),
                    ))
                    .on_conflict((
                        platform_identities::organization_id,
                        platform_identities::kind,
                        platform_identities::user_id,
                    ))
                    .do_update()
                    .set(
                        platform_identities::platform_user_id
                            .eq(excluded(platform_identities::platform_user_id)),
                    )
                    .execute(&mut conn)
                    .await
                    .map_err(db_error)?;
            }
        }
        Ok(())
    }
}
