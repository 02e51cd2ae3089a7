//! Sample events: what `POST /v1/webhooks/{id}/sample/` delivers. Each is a complete event of
//! its type, shaped exactly as docs/events.md documents it (the API tests check that), about
//! made-up people and objects (`example.com` addresses, fresh uuids), so a receiver can be
//! built and tested before real traffic. The delivery's `webhook-id` starts with `sample_`.

use serde_json::{Value, json};
use teamcomm_kernel::{Event, EventType, OrgId};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

/// The prefix of a sample delivery's `webhook-id`.
pub const SAMPLE_ID_PREFIX: &str = "sample_";

fn id() -> String {
    Uuid::now_v7().to_string()
}

fn person(name: &str, email: &str) -> Value {
    json!({"uuid": id(), "full_name": name, "email": email})
}

/// A sample event of `event_type` for `org`, at `now`.
pub fn sample_event(org: OrgId, event_type: EventType, now: OffsetDateTime) -> Event {
    let at = now.format(&Rfc3339).unwrap_or_default();
    let date = now.date().to_string();
    let checkin = json!({"uuid": id(), "name": "Daily standup (sample)"});
    let form = json!({"uuid": id(), "name": "Expense request (sample)"});
    let team = json!({"uuid": id(), "name": "Platform (sample)"});
    let ada = || person("Ada Sample", "ada.sample@example.com");
    let checkin_response = || {
        json!({
            "uuid": id(),
            "response_date": date,
            "response_completed": true,
            "answers": [
                {"uuid": id(), "question": "What did you do yesterday?", "response": "Shipped the release."},
                {"uuid": id(), "question": "Any blockers?", "response": false},
            ],
            "user": ada(),
        })
    };
    let form_response = || {
        json!({
            "uuid": id(),
            "current_state": null,
            "content": {id(): "Team offsite travel", id(): 120},
            "submission_source": "member",
            "submission_label": null,
            "edited": false,
            "created_at": at,
            "updated_at": at,
            "user": ada(),
            "guest_user": null,
        })
    };
    let object = |v: &Value| v["uuid"].as_str().and_then(|s| Uuid::parse_str(s).ok());
    let (object_id, data) = match event_type {
        EventType::FollowupsResponseCompleted
        | EventType::FollowupsResponseUpdated
        | EventType::FollowupsResponseDeleted => (
            object(&checkin),
            json!({"checkin": checkin, "response": checkin_response()}),
        ),
        EventType::FollowupsDailyFinished => (
            object(&checkin),
            json!({
                "checkin": checkin,
                "report_date": date,
                "expected_responses": 2,
                "completed_responses": 1,
                "responses": [
                    {"uuid": id(), "response_completed": true, "user": ada()},
                    {"uuid": id(), "response_completed": false,
                     "user": person("Bob Sample", "bob.sample@example.com")},
                ],
            }),
        ),
        EventType::FormsResponseCreated => (
            object(&form),
            json!({"form": form, "response": form_response()}),
        ),
        EventType::FormsResponseUpdated => (
            object(&form),
            json!({"form": form, "response": form_response(), "change": "content"}),
        ),
        EventType::FormsResponseDeleted => (
            object(&form),
            json!({"form": form, "response": {"uuid": id()}}),
        ),
        EventType::KudosPosted => {
            let kudos_id = id();
            (
                None,
                json!({"kudos": {
                    "id": kudos_id,
                    "uuid": kudos_id,
                    "parent": null,
                    "user": {"uuid": id(), "full_name": "Ada Sample", "image": null, "role": "member"},
                    "receivers": [{"uuid": id(), "full_name": "Bob Sample"}],
                    "company_value": null,
                    "content": "Thanks for the release notes! (sample)",
                    "is_anonymous": false,
                    "by_dailybot": false,
                    "metadata": {},
                    "boosts": 0,
                    "boosted_by": [],
                    "created_at": at,
                }}),
            )
        }
        EventType::OrganizationUserActivated | EventType::OrganizationUserDeactivated => {
            let active = event_type == EventType::OrganizationUserActivated;
            let mut user = ada();
            user["role"] = json!("member");
            user["is_active"] = json!(active);
            (None, json!({"user": user}))
        }
        EventType::OrganizationTeamUserAdded | EventType::OrganizationTeamUserRemoved => {
            (None, json!({"team": team, "user": ada(), "role": "member"}))
        }
        EventType::WorkflowFinished => {
            let workflow = json!({"uuid": id(), "name": "Sample release notes", "trigger_type": "api_trigger"});
            (
                object(&workflow),
                json!({
                    "workflow": workflow,
                    "run": {
                        "uuid": id(),
                        "status": "succeeded",
                        "queued_at": at,
                        "started_at": at,
                        "finished_at": at,
                        "error": null,
                        "actions_total": 2,
                        "actions_completed": 2,
                    },
                }),
            )
        }
    };
    Event::new(org, event_type, object_id, now, data)
}

#[cfg(test)]
mod tests {
    use teamcomm_kernel::WireEnum;

    use super::*;

    #[test]
    fn every_event_type_has_a_sample_of_its_type_and_organization() {
        let org = OrgId::new();
        let now = OffsetDateTime::now_utc();
        for &t in EventType::ALL {
            let e = sample_event(org, t, now);
            let payload = e.payload();
            assert_eq!(payload["event"], t.as_str());
            assert_eq!(payload["organization_uuid"], org.0.to_string());
            assert!(payload["data"].is_object(), "{t:?}");
            let scoped = ["followups.", "forms.", "workflow."]
                .iter()
                .any(|p| t.as_str().starts_with(p));
            assert_eq!(e.object_id.is_some(), scoped, "{t:?}");
        }
    }
}
