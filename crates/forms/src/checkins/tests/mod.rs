//! Rule tests of check-ins through the in-memory ports: one organization with an admin, a team
//! manager and members, another organization, a clock that stands still until moved.

mod authoring;
mod due;
mod progress;
mod reading;
mod responses;

use std::sync::Arc;

use serde_json::Value;
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::{Error, ErrorCode, Event, EventType, PageRequest, TeamId, UserId};
use teamcomm_messaging::testing::InMemoryChannelRepository;
use teamcomm_messaging::{ChannelRepository, NewChannel};
use teamcomm_org::testing::{FixedClock, InMemoryOrgPorts};
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, Organization, ProfilePatch, TeamRepository, TeamRole,
    User,
};
use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

use super::testing::InMemoryCheckinRepository;
use super::*;
use crate::questions::{NewQuestion, Question, QuestionType};
use crate::testing::InMemoryTemplateRepository;

/// A Monday.
const NOW: OffsetDateTime = datetime!(2026-11-23 12:00 UTC);

struct World {
    ports: InMemoryOrgPorts,
    clock: Arc<FixedClock>,
    channels: Arc<InMemoryChannelRepository>,
    templates: Arc<InMemoryTemplateRepository>,
    repo: Arc<InMemoryCheckinRepository>,
    events: RecordedEvents,
    org: Organization,
    admin: User,
    /// Manages `eng`.
    max: User,
    /// A member of `eng`.
    ada: User,
    /// In no team.
    bob: User,
    guest: User,
    eng: TeamId,
    /// An admin of another organization.
    outsider: User,
}

impl World {
    async fn new() -> Self {
        let clock = Arc::new(FixedClock::new(NOW));
        let ports = InMemoryOrgPorts::new(clock.clone());
        let org = organization(&ports, "Acme").await;
        let other_org = organization(&ports, "Globex").await;
        let admin = person(&ports, &org, "Adele", "admin").await;
        let max = person(&ports, &org, "Max", "member").await;
        let ada = person(&ports, &org, "Ada", "member").await;
        let bob = person(&ports, &org, "Bob", "member").await;
        let guest = person(&ports, &org, "Gus", "guest").await;
        let outsider = person(&ports, &other_org, "Otto", "admin").await;
        let eng = ports
            .teams
            .create_team(org.id, TeamId::new(), "Eng", &[max.id, ada.id], &[])
            .await
            .unwrap()
            .id;
        ports
            .teams
            .put_member(
                org.id,
                eng,
                max.id,
                Some(TeamRole::Manager),
                &any_event(&org),
            )
            .await
            .unwrap();
        let people = ports.people.clone();
        let channels = Arc::new(
            InMemoryChannelRepository::new().with_organizations(move |id| people.org_exists(id)),
        );
        for (id, name) in [
            ("C1", "standups"),
            ("C2", "eng"),
            ("C3", "ops"),
            ("C4", "all"),
        ] {
            channels
                .upsert_channel(
                    org.id,
                    &NewChannel::new(id, name, "slack", "channel").unwrap(),
                )
                .await
                .unwrap();
        }
        let events = RecordedEvents::default();
        let repo = Arc::new(InMemoryCheckinRepository::new(
            ports.people.clone(),
            ports.teams.clone(),
            channels.clone(),
            events.clone(),
        ));
        World {
            templates: Arc::new(InMemoryTemplateRepository::new()),
            ports,
            clock,
            channels,
            repo,
            events,
            org,
            admin,
            max,
            ada,
            bob,
            guest,
            eng,
            outsider,
        }
    }

    fn service(&self) -> CheckinService {
        CheckinService::new(
            self.repo.clone(),
            self.ports.people.clone(),
            self.ports.teams.clone(),
            self.channels.clone(),
            self.templates.clone(),
            self.clock.clone(),
        )
    }

    async fn in_zone(&self, user: &User, zone: &str) -> User {
        let patch = ProfilePatch {
            timezone: Some(zone.to_owned()),
            ..ProfilePatch::default()
        };
        self.ports
            .people
            .update_profile(user.org_id, user.id, &patch, &[])
            .await
            .unwrap()
    }

    fn at(&self, now: OffsetDateTime) {
        self.clock.set(now);
    }

    fn events(&self, kind: EventType) -> Vec<Event> {
        self.events.of_type(kind)
    }

    /// A check-in by `actor` with `settings` and two questions (the second optional).
    async fn create(&self, actor: &User, settings: CheckinInput) -> CheckinDetail {
        self.service()
            .create_checkin(actor, with_questions(settings))
            .await
            .unwrap()
    }

    /// A daily check-in (every day, 00:00 UTC) of the `eng` team, by the admin, with `patch`.
    async fn standup(&self, patch: impl FnOnce(&mut CheckinInput)) -> Checkin {
        let mut settings = every_day("Standup", &[], &[self.eng]);
        patch(&mut settings);
        self.create(&self.admin, settings).await.checkin
    }
}

async fn organization(ports: &InMemoryOrgPorts, name: &str) -> Organization {
    let new = NewOrganization::new(name, "business", None, None, None).unwrap();
    ports.people.create_organization(&new).await.unwrap()
}

async fn person(ports: &InMemoryOrgPorts, org: &Organization, first: &str, role: &str) -> User {
    let email = format!("{}@{}.test", first.to_lowercase(), org.name.to_lowercase());
    let new = NewUser::new(&email, first, "Test", role, None).unwrap();
    ports.people.create_user(org.id, &new).await.unwrap()
}

/// An event to hand a port where the test is not about events.
fn any_event(org: &Organization) -> Event {
    Event::new(
        org.id,
        EventType::OrganizationTeamUserAdded,
        None,
        NOW,
        Value::Null,
    )
}

fn text_question(text: &str) -> NewQuestion {
    NewQuestion {
        question: text.to_owned(),
        short_question: Some(text.chars().take(20).collect()),
        ..NewQuestion::default()
    }
}

/// `settings` with two text questions, the second optional.
fn with_questions(settings: CheckinInput) -> NewCheckin {
    NewCheckin {
        settings,
        questions: Some(vec![
            text_question("What did you do?"),
            NewQuestion {
                required: Some(false),
                ..text_question("Anything blocking you?")
            },
        ]),
        ..NewCheckin::default()
    }
}

fn participants(users: &[&User], teams: &[TeamId]) -> ParticipantsInput {
    ParticipantsInput {
        user_uuids: users.iter().map(|u| u.id).collect(),
        team_uuids: teams.to_vec(),
    }
}

/// Every day at 00:00 UTC: answerable at any time of any day.
fn every_day(name: &str, users: &[&User], teams: &[TeamId]) -> CheckinInput {
    CheckinInput {
        name: Some(name.to_owned()),
        participants: Some(participants(users, teams)),
        schedule: Some(ScheduleInput {
            days: Some((0..=6).collect()),
            time: Some("00:00".into()),
            timezone: Some("UTC".into()),
        }),
        ..CheckinInput::default()
    }
}

fn answer(q: &Question, index: u16, response: Value) -> AnswerInput {
    AnswerInput {
        uuid: q.uuid,
        index: Some(index),
        response,
    }
}

/// Answers to every question of `checkin`, in order.
fn full(checkin: &Checkin, texts: &[&str]) -> ResponseInput {
    ResponseInput {
        answers: checkin
            .questions
            .questions
            .iter()
            .zip(texts)
            .enumerate()
            .map(|(i, (q, t))| answer(q, i as u16, Value::from(*t)))
            .collect(),
        ..ResponseInput::default()
    }
}

#[track_caller]
fn assert_code<T: std::fmt::Debug>(result: Result<T, Error>, code: ErrorCode) -> Error {
    match result {
        Err(e) => {
            assert_eq!(e.code(), code, "{e}");
            e
        }
        Ok(v) => panic!("expected {code}, got {v:?}"),
    }
}

fn uuid_list(e: &Error) -> Vec<String> {
    e.extra()["uuids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn new_id() -> Uuid {
    Uuid::now_v7()
}
