//! A small world for the services' rule tests: two organizations on in-memory ports, with an
//! admin, a member and a guest in the first and an admin in the second, and a clock that stands
//! still.

use std::sync::Arc;

use teamcomm_kernel::{Error, ErrorCode, Event, EventType, PageRequest, SharedClock};
use time::{Date, OffsetDateTime, macros::datetime};

use crate::testing::{FixedClock, InMemoryOrgPorts};
use crate::{
    Invitation, InvitationKind, InvitationRepository, InvitationService, MoodService,
    NewOrganization, NewUser, OrgRepository, Organization, OrganizationService, PeopleService,
    TeamService, User,
};

pub(crate) const NOW: OffsetDateTime = datetime!(2026-11-23 12:00 UTC);

pub(crate) struct World {
    pub ports: InMemoryOrgPorts,
    pub clock: SharedClock,
    /// The same clock, to move.
    fixed_clock: Arc<FixedClock>,
    pub org: Organization,
    pub admin: User,
    pub member: User,
    pub guest: User,
    pub other_org: Organization,
    /// The admin of the other organization.
    pub outsider: User,
}

impl World {
    pub async fn new() -> Self {
        let fixed_clock = Arc::new(FixedClock::new(NOW));
        let clock: SharedClock = fixed_clock.clone();
        let ports = InMemoryOrgPorts::new(clock.clone());
        let org = organization(&ports, "Acme").await;
        let other_org = organization(&ports, "Globex").await;
        World {
            admin: person(&ports, &org, "ada@acme.test", "Ada", "admin").await,
            member: person(&ports, &org, "mia@acme.test", "Mia", "member").await,
            guest: person(&ports, &org, "gus@acme.test", "Gus", "guest").await,
            outsider: person(&ports, &other_org, "otto@globex.test", "Otto", "admin").await,
            ports,
            clock,
            fixed_clock,
            org,
            other_org,
        }
    }

    pub fn today(&self) -> Date {
        NOW.date()
    }

    /// Moves the clock to `at`.
    pub fn set_now(&self, at: OffsetDateTime) {
        self.fixed_clock.set(at);
    }

    /// The events the ports recorded of `event_type`, oldest first.
    pub fn events(&self, event_type: EventType) -> Vec<Event> {
        self.ports.events.of_type(event_type)
    }

    /// The person as stored now.
    pub async fn stored(&self, user: &User) -> User {
        self.ports.people.find_user(user.id).await.unwrap()
    }

    /// The first organization's pending invitations of `kind`, as stored now.
    pub async fn pending_invitations(&self, kind: InvitationKind) -> Vec<Invitation> {
        self.ports
            .invitations
            .list_invitations(self.org.id, kind, PageRequest::all())
            .await
            .unwrap()
            .results
    }

    pub fn people(&self) -> PeopleService {
        PeopleService::new(self.ports.people.clone(), self.clock.clone())
    }

    pub fn teams(&self) -> TeamService {
        TeamService::new(
            self.ports.people.clone(),
            self.ports.teams.clone(),
            self.ports.invitations.clone(),
            self.clock.clone(),
        )
    }

    pub fn invitations(&self) -> InvitationService {
        InvitationService::new(
            self.ports.people.clone(),
            self.ports.teams.clone(),
            self.ports.invitations.clone(),
        )
    }

    pub fn mood(&self) -> MoodService {
        MoodService::new(self.ports.moods.clone(), self.clock.clone())
    }

    pub fn organizations(&self) -> OrganizationService {
        OrganizationService::new(self.ports.people.clone(), self.clock.clone())
    }
}

async fn organization(ports: &InMemoryOrgPorts, name: &str) -> Organization {
    let new = NewOrganization::new(name, "business", None, None, None).unwrap();
    ports.people.create_organization(&new).await.unwrap()
}

async fn person(
    ports: &InMemoryOrgPorts,
    org: &Organization,
    email: &str,
    first_name: &str,
    role: &str,
) -> User {
    let new = NewUser::new(email, first_name, "Test", role, None).unwrap();
    ports.people.create_user(org.id, &new).await.unwrap()
}

/// The error's code, failing the test on success.
#[track_caller]
pub(crate) fn code<T: std::fmt::Debug>(result: Result<T, Error>) -> ErrorCode {
    result.expect_err("expected a refusal").code()
}

/// Asserts a `params_validation_error` naming `field`.
#[track_caller]
pub(crate) fn assert_field_error<T: std::fmt::Debug>(result: Result<T, Error>, field: &str) {
    let e = result.expect_err("expected a refusal");
    assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{e}");
    assert!(
        e.field_errors().contains_key(field),
        "{field} not named in {:?}",
        e.field_errors()
    );
}
