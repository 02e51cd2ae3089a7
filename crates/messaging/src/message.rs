//! A bot message as stored: what to say, to whom (one delivery per resolved target) and where
//! each delivery stands.
//!
//! A send stores one [`Message`] and one per thread response (their `parent` is the send); an
//! edit stores one whose `edit_of` is the message it rewrites. Each is queued with its
//! deliveries `queued`; the delivery worker moves every delivery to `delivered` (with the
//! platform's ids) or `failed` (with a [`FailureReason`]) and never sends a delivered one again.

use serde_json::{Map, Value};
use teamcomm_kernel::{OrgId, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::platform::{BotAppearance, Button, SentMessage};

/// Our id of a message: the `bot_message_id` clients read, edit by and look up with
/// `GET /v1/messages/{id}/` (its hyphenated UUID form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MessageId(pub Uuid);

impl MessageId {
    /// A fresh, time-ordered id.
    pub fn new() -> Self {
        MessageId(Uuid::now_v7())
    }

    /// The id a client sent, if it is one of ours; anything else names no message.
    pub fn parse(bot_message_id: &str) -> Option<Self> {
        Uuid::parse_str(bot_message_id.trim()).ok().map(MessageId)
    }
}

impl Default for MessageId {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for MessageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What a message says, the same for every delivery.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageContent {
    pub text: String,
    pub image_url: Option<String>,
    pub buttons: Vec<MessageButton>,
    /// The bot's name and icon for this message; for `send_as_user`, the person's name and
    /// picture.
    pub appearance: BotAppearance,
    /// Asked for in `platform_settings`; kept for the adapters that will honour it (the
    /// platform port has no ephemeral sends yet).
    pub is_ephemeral: bool,
    /// The client's object, stored as sent and never interpreted.
    pub metadata: Map<String, Value>,
}

/// A button as stored: what the platform shows, plus what a click should trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageButton {
    pub button: Button,
    /// Where a click is reported (https), for interactive buttons.
    pub callback_url: Option<String>,
    /// The button's other settings (`callback_auth`, `callback_workflow`, `label_after_click`,
    /// `modal_body`…), kept as sent for the click handler.
    pub settings: Map<String, Value>,
}

/// Why a message is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// A new message.
    Post,
    /// A reply in the thread of each delivery of `parent`, sent once the parent's delivery
    /// has landed; `position` orders the replies of one send from 0.
    ThreadResponse { parent: MessageId, position: u32 },
    /// New content for every delivery of `original` (always the first message of an edit
    /// chain: editing an edit edits the original).
    Edit { original: MessageId },
}

/// To whom or where one delivery goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DeliveryTarget {
    /// A direct message to a person; their platform identity is looked up when it is sent.
    Person(UserId),
    /// A channel by the platform's id, optionally in the thread of one of its messages.
    Channel {
        channel_id: String,
        thread: Option<String>,
    },
}

/// Why a delivery (or an e-mail) ended `failed`; the wire names are the reasons clients read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureReason {
    /// The organization has no chat platform connected.
    PlatformNotConnected,
    /// The person has no identity on the organization's platform.
    PlatformIdentityMissing,
    /// The platform does not know the destination, or the bot cannot reach it.
    DestinationNotFound,
    /// The platform refuses the organization's credentials.
    PlatformUnauthorized,
    /// The platform refused the message for another lasting reason.
    PlatformRefused,
    /// Every attempt allowed failed for a reason that could have passed.
    AttemptsExhausted,
    /// An edit or thread response whose original or parent delivery failed.
    ParentNotDelivered,
    /// The mail server refused the e-mail for good.
    MailRefused,
}

impl FailureReason {
    pub const ALL: [FailureReason; 8] = [
        FailureReason::PlatformNotConnected,
        FailureReason::PlatformIdentityMissing,
        FailureReason::DestinationNotFound,
        FailureReason::PlatformUnauthorized,
        FailureReason::PlatformRefused,
        FailureReason::AttemptsExhausted,
        FailureReason::ParentNotDelivered,
        FailureReason::MailRefused,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            FailureReason::PlatformNotConnected => "platform_not_connected",
            FailureReason::PlatformIdentityMissing => "platform_identity_missing",
            FailureReason::DestinationNotFound => "destination_not_found",
            FailureReason::PlatformUnauthorized => "platform_unauthorized",
            FailureReason::PlatformRefused => "platform_refused",
            FailureReason::AttemptsExhausted => "attempts_exhausted",
            FailureReason::ParentNotDelivered => "parent_not_delivered",
            FailureReason::MailRefused => "mail_refused",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// Where one delivery stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryStatus {
    Queued,
    /// Landed; for an edit, the message it rewrote.
    Delivered(SentMessage),
    Failed(FailureReason),
}

impl DeliveryStatus {
    /// The status's wire name: `queued`, `delivered` or `failed`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            DeliveryStatus::Queued => "queued",
            DeliveryStatus::Delivered(_) => "delivered",
            DeliveryStatus::Failed(_) => "failed",
        }
    }
}

/// One target of a message and where its delivery stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Position in the message, from 0: with the message id, the send's idempotency key.
    pub index: u32,
    pub target: DeliveryTarget,
    pub status: DeliveryStatus,
    /// When the status last changed (the queueing, then the outcome).
    pub updated_at: OffsetDateTime,
}

/// Where a whole message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageStatus {
    /// Some delivery is still to be made.
    Queued,
    /// Every delivery landed.
    Delivered,
    /// Every delivery is settled and at least one failed (the deliveries say which).
    Failed,
}

impl MessageStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Queued => "queued",
            MessageStatus::Delivered => "delivered",
            MessageStatus::Failed => "failed",
        }
    }
}

/// A bot message of an organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub id: MessageId,
    pub org_id: OrgId,
    /// The person whose credential sent it.
    pub sender: UserId,
    /// The person it is shown as coming from (`send_as_user`).
    pub send_as: Option<UserId>,
    pub kind: MessageKind,
    pub content: MessageContent,
    /// Ordered by `index`.
    pub deliveries: Vec<Delivery>,
    pub created_at: OffsetDateTime,
}

impl Message {
    /// The message's status, from its deliveries'.
    pub fn status(&self) -> MessageStatus {
        let statuses = || self.deliveries.iter().map(|d| &d.status);
        if statuses().any(|s| *s == DeliveryStatus::Queued) {
            MessageStatus::Queued
        } else if statuses().all(|s| matches!(s, DeliveryStatus::Delivered(_))) {
            MessageStatus::Delivered
        } else {
            MessageStatus::Failed
        }
    }

    /// The idempotency key of one delivery: stable across retries, so a retried send lands
    /// once.
    pub fn idempotency_key(&self, index: u32) -> String {
        format!("{}:{index}", self.id)
    }

    /// The deliveries still to be made.
    pub fn pending(&self) -> impl Iterator<Item = &Delivery> {
        self.deliveries
            .iter()
            .filter(|d| d.status == DeliveryStatus::Queued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(statuses: &[DeliveryStatus]) -> Message {
        Message {
            id: MessageId::new(),
            org_id: OrgId::new(),
            sender: UserId::new(),
            send_as: None,
            kind: MessageKind::Post,
            content: MessageContent {
                text: "hi".into(),
                image_url: None,
                buttons: vec![],
                appearance: BotAppearance::default(),
                is_ephemeral: false,
                metadata: Map::new(),
            },
            deliveries: statuses
                .iter()
                .enumerate()
                .map(|(i, s)| Delivery {
                    index: i as u32,
                    target: DeliveryTarget::Person(UserId::new()),
                    status: s.clone(),
                    updated_at: OffsetDateTime::UNIX_EPOCH,
                })
                .collect(),
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_message_is_queued_until_settled_then_delivered_only_when_every_delivery_is() {
        let sent = DeliveryStatus::Delivered(SentMessage {
            channel_id: "D1".into(),
            message_id: "1.2".into(),
        });
        let failed = DeliveryStatus::Failed(FailureReason::DestinationNotFound);
        let queued = DeliveryStatus::Queued;
        assert_eq!(
            message(&[sent.clone(), queued.clone()]).status(),
            MessageStatus::Queued
        );
        assert_eq!(
            message(&[failed.clone(), queued]).status(),
            MessageStatus::Queued
        );
        assert_eq!(
            message(&[sent.clone(), sent.clone()]).status(),
            MessageStatus::Delivered
        );
        assert_eq!(message(&[sent, failed]).status(), MessageStatus::Failed);
    }

    #[test]
    fn idempotency_keys_name_the_message_and_the_delivery() {
        let m = message(&[DeliveryStatus::Queued]);
        assert_eq!(m.idempotency_key(3), format!("{}:3", m.id));
    }

    #[test]
    fn reasons_and_ids_round_trip() {
        for r in FailureReason::ALL {
            assert_eq!(FailureReason::parse(r.as_str()), Some(r));
        }
        let id = MessageId::new();
        assert_eq!(MessageId::parse(&id.to_string()), Some(id));
        assert_eq!(MessageId::parse("$db/nope"), None);
    }
}
