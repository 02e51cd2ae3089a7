//! Event names as subscribers write them: the dotted names of the spec's event list
//! (`kudos.posted`), and the legacy upper-case names of `/v1/webhook-subscription/`
//! (`KUDOS_POSTED`). One table maps every event to its upper-case name and back
//! (docs/events.md shows it).

use teamcomm_kernel::{EventType, WireEnum};

/// Every event with its legacy upper-case name. The rule behind it: the dotted name in upper
/// case with `.` written `_`; `FOLLOWUPS_DAILY_FINISHED` ("check-in round completed") is the
/// day's close, `followups.daily.finished`, not a person's completed response.
pub const LEGACY_NAMES: &[(EventType, &str)] = &[
    (
        EventType::FollowupsResponseCompleted,
        "FOLLOWUPS_RESPONSE_COMPLETED",
    ),
    (
        EventType::FollowupsResponseUpdated,
        "FOLLOWUPS_RESPONSE_UPDATED",
    ),
    (
        EventType::FollowupsResponseDeleted,
        "FOLLOWUPS_RESPONSE_DELETED",
    ),
    (
        EventType::FollowupsDailyFinished,
        "FOLLOWUPS_DAILY_FINISHED",
    ),
    (EventType::FormsResponseCreated, "FORMS_RESPONSE_CREATED"),
    (EventType::FormsResponseUpdated, "FORMS_RESPONSE_UPDATED"),
    (EventType::FormsResponseDeleted, "FORMS_RESPONSE_DELETED"),
    (EventType::KudosPosted, "KUDOS_POSTED"),
    (
        EventType::OrganizationUserActivated,
        "ORGANIZATION_USER_ACTIVATED",
    ),
    (
        EventType::OrganizationUserDeactivated,
        "ORGANIZATION_USER_DEACTIVATED",
    ),
    (
        EventType::OrganizationTeamUserAdded,
        "ORGANIZATION_TEAM_USER_ADDED",
    ),
    (
        EventType::OrganizationTeamUserRemoved,
        "ORGANIZATION_TEAM_USER_REMOVED",
    ),
    (EventType::WorkflowFinished, "WORKFLOW_FINISHED"),
];

/// The event's legacy upper-case name.
pub fn legacy_name(event: EventType) -> &'static str {
    LEGACY_NAMES
        .iter()
        .find(|(e, _)| *e == event)
        .map(|(_, name)| *name)
        .expect("LEGACY_NAMES names every event type")
}

/// The event of a legacy upper-case name (exact case).
pub fn from_legacy_name(name: &str) -> Option<EventType> {
    LEGACY_NAMES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(e, _)| *e)
}

/// The event of a dotted name (exact case).
pub fn from_dotted_name(name: &str) -> Option<EventType> {
    EventType::from_name(name)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_event_has_one_legacy_name_and_back() {
        assert_eq!(LEGACY_NAMES.len(), EventType::ALL.len());
        let names: HashSet<&str> = LEGACY_NAMES.iter().map(|(_, n)| *n).collect();
        assert_eq!(names.len(), LEGACY_NAMES.len(), "legacy names are distinct");
        for &event in EventType::ALL {
            let legacy = legacy_name(event);
            assert_eq!(from_legacy_name(legacy), Some(event), "{legacy}");
            assert_eq!(from_dotted_name(event.as_str()), Some(event));
        }
    }

    #[test]
    fn the_legacy_name_is_the_dotted_name_in_upper_case_with_underscores() {
        for &(event, legacy) in LEGACY_NAMES {
            assert_eq!(legacy, event.as_str().to_uppercase().replace('.', "_"));
            assert_eq!(legacy.to_lowercase(), event.as_str().replace('.', "_"));
        }
    }

    #[test]
    fn the_spec_examples_map_to_their_events() {
        assert_eq!(
            from_legacy_name("FOLLOWUPS_DAILY_FINISHED"),
            Some(EventType::FollowupsDailyFinished)
        );
        assert_eq!(
            from_legacy_name("FORMS_RESPONSE_CREATED"),
            Some(EventType::FormsResponseCreated)
        );
        assert_eq!(legacy_name(EventType::KudosPosted), "KUDOS_POSTED");
    }

    #[test]
    fn docs_events_md_shows_this_table() {
        let doc = include_str!("../../../docs/events.md");
        let (_, section) = doc
            .split_once("## Upper-case names")
            .expect("docs/events.md has the upper-case names section");
        let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
        assert_eq!(rows.len(), LEGACY_NAMES.len(), "{rows:#?}");
        for &(event, legacy) in LEGACY_NAMES {
            let row = format!("| `{}` | `{legacy}` |", event.as_str());
            assert!(rows.contains(&row.as_str()), "docs/events.md lacks {row}");
        }
    }

    #[test]
    fn names_without_an_event_of_ours_are_unknown() {
        for name in [
            "FORMS_RESPONSE_APPROVED",
            "FORMS_RESPONSE_DENIED",
            "kudos_posted",
            "KUDOS.POSTED",
            "kudos.posted",
        ] {
            assert_eq!(from_legacy_name(name), None, "{name}");
        }
        assert_eq!(from_dotted_name("KUDOS_POSTED"), None);
        assert_eq!(from_dotted_name("checkin.response.created"), None);
    }
}
