//! Domain events: what subscribers are told about a change. A service builds the [`Event`]
//! together with the change and hands both to one port method; the adapter writes the event to
//! the outbox in the same transaction as the change, so they commit or roll back together.
//! Delivery (webhooks) reads the outbox later.

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::{OrgId, WireEnum};

/// The event types of the spec's event list; dotted names on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    FollowupsResponseCompleted,
    FollowupsResponseUpdated,
    FollowupsResponseDeleted,
    /// A check-in's day is over: its rounds closed and its report posted.
    FollowupsDailyFinished,
    FormsResponseCreated,
    FormsResponseUpdated,
    FormsResponseDeleted,
    KudosPosted,
    OrganizationUserActivated,
    OrganizationUserDeactivated,
    OrganizationTeamUserAdded,
    OrganizationTeamUserRemoved,
    /// A workflow's run ended, succeeded or failed.
    WorkflowFinished,
}

impl WireEnum for EventType {
    const NAME: &'static str = "EventType";
    const ALL: &'static [Self] = &[
        EventType::FollowupsResponseCompleted,
        EventType::FollowupsResponseUpdated,
        EventType::FollowupsResponseDeleted,
        EventType::FollowupsDailyFinished,
        EventType::FormsResponseCreated,
        EventType::FormsResponseUpdated,
        EventType::FormsResponseDeleted,
        EventType::KudosPosted,
        EventType::OrganizationUserActivated,
        EventType::OrganizationUserDeactivated,
        EventType::OrganizationTeamUserAdded,
        EventType::OrganizationTeamUserRemoved,
        EventType::WorkflowFinished,
    ];

    fn as_str(self) -> &'static str {
        match self {
            EventType::FollowupsResponseCompleted => "followups.response.completed",
            EventType::FollowupsResponseUpdated => "followups.response.updated",
            EventType::FollowupsResponseDeleted => "followups.response.deleted",
            EventType::FollowupsDailyFinished => "followups.daily.finished",
            EventType::FormsResponseCreated => "forms.response.created",
            EventType::FormsResponseUpdated => "forms.response.updated",
            EventType::FormsResponseDeleted => "forms.response.deleted",
            EventType::KudosPosted => "kudos.posted",
            EventType::OrganizationUserActivated => "organization.user_activated",
            EventType::OrganizationUserDeactivated => "organization.user_deactivated",
            EventType::OrganizationTeamUserAdded => "organization.team_user_added",
            EventType::OrganizationTeamUserRemoved => "organization.team_user_removed",
            EventType::WorkflowFinished => "workflow.finished",
        }
    }
}

/// One change worth telling subscribers about (docs/events.md documents each `data`).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Time-ordered (v7): the outbox is read in this order.
    pub id: Uuid,
    pub org_id: OrgId,
    pub event_type: EventType,
    /// The check-in, form or workflow the event concerns, if any (subscriptions may filter on
    /// it).
    pub object_id: Option<Uuid>,
    pub occurred_at: OffsetDateTime,
    /// The event's own fields, `data` in the delivered payload.
    pub data: Value,
}

impl Event {
    pub fn new(
        org_id: OrgId,
        event_type: EventType,
        object_id: Option<Uuid>,
        occurred_at: OffsetDateTime,
        data: Value,
    ) -> Self {
        Event {
            id: Uuid::now_v7(),
            org_id,
            event_type,
            object_id,
            occurred_at,
            data,
        }
    }

    /// The document a subscriber receives: the envelope of docs/events.md around `data`.
    pub fn payload(&self) -> Value {
        json!({
            "event": self.event_type.as_str(),
            "event_id": self.id.to_string(),
            "event_timestamp": self.occurred_at.format(&Rfc3339).unwrap_or_default(),
            "organization_uuid": self.org_id.0.to_string(),
            "object_uuid": self.object_id.map(|id| id.to_string()),
            "data": self.data,
        })
    }
}

/// An in-memory outbox for in-memory ports: they record here what the Postgres adapters write
/// to the outbox table.
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    use std::sync::{Arc, Mutex};

    use super::{Event, EventType};

    /// Shared by every in-memory port of a test world, like the outbox table is.
    #[derive(Clone, Default)]
    pub struct RecordedEvents(Arc<Mutex<Vec<Event>>>);

    impl RecordedEvents {
        pub fn record(&self, events: impl IntoIterator<Item = Event>) {
            self.0.lock().expect("events").extend(events);
        }

        pub fn all(&self) -> Vec<Event> {
            self.0.lock().expect("events").clone()
        }

        /// The recorded events of one type, oldest first.
        pub fn of_type(&self, event_type: EventType) -> Vec<Event> {
            self.all()
                .into_iter()
                .filter(|e| e.event_type == event_type)
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_specs_and_round_trip() {
        for t in EventType::ALL {
            assert_eq!(EventType::from_name(t.as_str()), Some(*t));
            assert!(t.as_str().contains('.'));
        }
        assert_eq!(EventType::ALL.len(), 13);
    }

    #[test]
    fn payload_wraps_data_in_the_envelope() {
        let org = OrgId::new();
        let object = Uuid::now_v7();
        let e = Event::new(
            org,
            EventType::KudosPosted,
            Some(object),
            OffsetDateTime::UNIX_EPOCH,
            json!({"a": 1}),
        );
        let p = e.payload();
        assert_eq!(p["event"], "kudos.posted");
        assert_eq!(p["event_id"], e.id.to_string());
        assert_eq!(p["event_timestamp"], "1970-01-01T00:00:00Z");
        assert_eq!(p["organization_uuid"], org.0.to_string());
        assert_eq!(p["object_uuid"], object.to_string());
        assert_eq!(p["data"]["a"], 1);
    }
}
