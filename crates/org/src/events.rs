//! The organization events (docs/events.md, "Organization events"). The services build them
//! with the change they report and hand both to one port method, which records the event only
//! when the change really happens (a membership inserted, `is_active` flipped).

use serde_json::{Value, json};
use teamcomm_kernel::{Event, EventType, OrgId, TeamId};
use time::OffsetDateTime;

use crate::{Team, TeamRole, User};

/// What team events tell of the team (a team being created has no stored [`Team`] yet).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TeamRef<'a> {
    pub org_id: OrgId,
    pub id: TeamId,
    pub name: &'a str,
}

impl<'a> From<&'a Team> for TeamRef<'a> {
    fn from(t: &'a Team) -> Self {
        TeamRef {
            org_id: t.org_id,
            id: t.id,
            name: &t.name,
        }
    }
}

/// The person as team events show them.
fn team_person(user: &User) -> Value {
    json!({
        "uuid": user.id.to_string(),
        "full_name": user.full_name(),
        "email": user.email,
    })
}

fn team_event(
    event_type: EventType,
    team: TeamRef<'_>,
    user: &User,
    role: TeamRole,
    at: OffsetDateTime,
) -> Event {
    Event::new(
        team.org_id,
        event_type,
        None,
        at,
        json!({
            "team": {"uuid": team.id.to_string(), "name": team.name},
            "user": team_person(user),
            "role": role.as_str(),
        }),
    )
}

/// `organization.team_user_added`: `user` joins `team` as `role`.
pub(crate) fn team_user_added(
    team: TeamRef<'_>,
    user: &User,
    role: TeamRole,
    at: OffsetDateTime,
) -> Event {
    team_event(EventType::OrganizationTeamUserAdded, team, user, role, at)
}

/// `organization.team_user_removed`: `user` leaves `team`, where they were `role`.
pub(crate) fn team_user_removed(
    team: TeamRef<'_>,
    user: &User,
    role: TeamRole,
    at: OffsetDateTime,
) -> Event {
    team_event(EventType::OrganizationTeamUserRemoved, team, user, role, at)
}

/// `organization.user_activated` or `organization.user_deactivated`, after `user` (as it will
/// be stored) was set to its `is_active`.
pub(crate) fn activation_changed(user: &User, at: OffsetDateTime) -> Event {
    let event_type = if user.is_active {
        EventType::OrganizationUserActivated
    } else {
        EventType::OrganizationUserDeactivated
    };
    Event::new(
        user.org_id,
        event_type,
        None,
        at,
        json!({
            "user": {
                "uuid": user.id.to_string(),
                "full_name": user.full_name(),
                "email": user.email,
                "role": user.role.as_str(),
                "is_active": user.is_active,
            }
        }),
    )
}
