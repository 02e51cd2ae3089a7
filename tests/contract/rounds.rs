//! `RoundRepository` and `ScheduledCheckins` (the check-in engine): a round is claimed by
//! opening it, once per (check-in, person, day) even with openers racing in two processes;
//! updates are fenced by the revision; finishing a day closes its rounds and writes its event
//! once, and no round of a finished day opens again; the schedule scan reads the running,
//! scheduled check-ins of every organization.

use std::sync::Arc;

use teamcomm_checkin_engine::testing::InMemoryRoundRepository;
use teamcomm_checkin_engine::{ROUNDS_REVISION, Round, RoundRepository, ScheduledCheckins};
use teamcomm_forms::checkins::{Checkin, CheckinOptions};
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::{EventType, OrgId, RepoError};
use teamcomm_org::{OrgRepository, Organization, User};
use teamcomm_store_pg::{Database, PgRoundRepository};
use time::macros::date;
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use crate::checkins::{CheckinPorts, checkin};
use crate::ports::{Ports, assert_conflict, assert_not_found, event, micros};

contract!(
    a_round_reads_back_as_opened_and_opens_once_per_checkin_person_and_day,
    rounds_name_a_checkin_and_a_person_of_their_organization,
    updates_are_fenced_by_the_revision,
    open_rounds_are_the_unclosed_ones_oldest_first_by_organization,
    finishing_a_day_closes_its_rounds_with_its_event_once,
    racing_openers_claim_each_round_once,
    the_schedule_is_the_running_scheduled_checkins_of_every_organization,
);

/// The engine's ports, and the same store as another server process sees it.
pub struct RoundPorts {
    pub rounds: Arc<dyn RoundRepository>,
    pub scheduled: Arc<dyn ScheduledCheckins>,
    /// Postgres: the database, for a pool of another process.
    url: Option<String>,
}

impl RoundPorts {
    pub fn in_memory(
        checkins: &CheckinPorts,
        people: Arc<dyn OrgRepository>,
        events: RecordedEvents,
    ) -> Self {
        let repo = checkins.in_memory_repo().expect("in-memory check-ins");
        RoundPorts {
            rounds: Arc::new(InMemoryRoundRepository::new(repo.clone(), people, events)),
            scheduled: repo,
            url: None,
        }
    }

    pub fn postgres(db: Database, url: &str) -> Self {
        let repo = Arc::new(PgRoundRepository::new(db));
        RoundPorts {
            rounds: repo.clone(),
            scheduled: repo,
            url: Some(url.to_owned()),
        }
    }

    /// The rounds as another server process sees them (Postgres: a pool of its own).
    fn another_process(&self) -> Arc<dyn RoundRepository> {
        match &self.url {
            None => self.rounds.clone(),
            Some(url) => Arc::new(PgRoundRepository::new(
                Database::connect(url, 4).expect("pool"),
            )),
        }
    }
}

fn now() -> OffsetDateTime {
    micros(OffsetDateTime::now_utc())
}

/// An organization with a person asked by a stored check-in.
async fn world(p: &Ports, name: &str) -> (Organization, User, Checkin) {
    let org = p.org(name).await;
    let ada = p
        .user(
            &org,
            &format!("ada@{}.test", name.to_lowercase()),
            "Ada",
            "Lovelace",
        )
        .await;
    let c = checkin(&org, &ada, "Standup", &[&ada], &[]);
    p.checkins.repo.insert_checkin(&c).await.expect("insert");
    (org, ada, c)
}

fn round(c: &Checkin, person: &User, day: Date, opened_at: OffsetDateTime) -> Round {
    Round {
        id: Uuid::now_v7(),
        org_id: c.org_id,
        checkin_id: c.id,
        user_id: person.id,
        day,
        opened_at,
        closes_at: opened_at + Duration::hours(8),
        asked: 0,
        answered: 0,
        reminders_sent: 0,
        last_sent_at: None,
        completed: false,
        last_reply: None,
        closed_at: None,
        revision: 1,
    }
}

async fn a_round_reads_back_as_opened_and_opens_once_per_checkin_person_and_day(p: Ports) {
    let (org, ada, c) = world(&p, "Acme").await;
    let r = round(&c, &ada, date!(2026 - 11 - 23), now());
    assert!(p.rounds.rounds.open_round(&r).await.unwrap());
    assert_eq!(
        p.rounds.rounds.open_rounds(Some(org.id)).await.unwrap(),
        std::slice::from_ref(&r)
    );
    // Another opener of the same round (its own id) finds it taken.
    let again = round(&c, &ada, r.day, now());
    assert!(!p.rounds.rounds.open_round(&again).await.unwrap());
    // The next day is another round.
    let next = round(&c, &ada, date!(2026 - 11 - 24), now());
    assert!(p.rounds.rounds.open_round(&next).await.unwrap());
    let ids: Vec<Uuid> = p
        .rounds
        .rounds
        .open_rounds(None)
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, [r.id, next.id]);
}

async fn rounds_name_a_checkin_and_a_person_of_their_organization(p: Ports) {
    let (_, ada, c) = world(&p, "Acme").await;
    let (other, otto, theirs) = world(&p, "Globex").await;
    let day = date!(2026 - 11 - 23);
    // Their check-in under our organization, our person under theirs, nobody at all.
    let mut wrong = round(&theirs, &otto, day, now());
    wrong.org_id = ada.org_id;
    assert_not_found(p.rounds.rounds.open_round(&wrong).await);
    let mut wrong = round(&theirs, &ada, day, now());
    wrong.org_id = other.id;
    assert_not_found(p.rounds.rounds.open_round(&wrong).await);
    let mut nobody = round(&c, &ada, day, now());
    nobody.user_id = teamcomm_kernel::UserId::new();
    assert_not_found(p.rounds.rounds.open_round(&nobody).await);
    assert!(p.rounds.rounds.open_rounds(None).await.unwrap().is_empty());
}

async fn updates_are_fenced_by_the_revision(p: Ports) {
    let (org, ada, c) = world(&p, "Acme").await;
    let r = round(&c, &ada, date!(2026 - 11 - 23), now());
    p.rounds.rounds.open_round(&r).await.unwrap();
    let at = now();
    let next = Round {
        asked: 2,
        answered: 1,
        reminders_sent: 1,
        last_sent_at: Some(at),
        completed: true,
        last_reply: Some("1700000000.0001".into()),
        revision: 2,
        ..r.clone()
    };
    p.rounds.rounds.update_round(&next, 1).await.unwrap();
    assert_eq!(
        p.rounds.rounds.open_rounds(Some(org.id)).await.unwrap(),
        std::slice::from_ref(&next)
    );
    // A writer that read revision 1 lost.
    let stale = Round {
        asked: 1,
        revision: 2,
        ..r.clone()
    };
    assert_conflict(
        p.rounds.rounds.update_round(&stale, 1).await,
        ROUNDS_REVISION,
    );
    let unknown = Round {
        id: Uuid::now_v7(),
        ..next.clone()
    };
    assert_not_found(p.rounds.rounds.update_round(&unknown, 2).await);
    let elsewhere = Round {
        org_id: OrgId::new(),
        revision: 3,
        ..next.clone()
    };
    assert_not_found(p.rounds.rounds.update_round(&elsewhere, 2).await);
    assert_eq!(p.rounds.rounds.open_rounds(None).await.unwrap(), [next]);
}

async fn open_rounds_are_the_unclosed_ones_oldest_first_by_organization(p: Ports) {
    let (org, ada, c) = world(&p, "Acme").await;
    let (other, otto, theirs) = world(&p, "Globex").await;
    let t = now();
    let late = round(&c, &ada, date!(2026 - 11 - 24), t + Duration::minutes(5));
    let early = round(&c, &ada, date!(2026 - 11 - 23), t);
    let middle = round(
        &theirs,
        &otto,
        date!(2026 - 11 - 23),
        t + Duration::minutes(1),
    );
    for r in [&late, &early, &middle] {
        assert!(p.rounds.rounds.open_round(r).await.unwrap());
    }
    let ids = |rs: Vec<Round>| rs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(p.rounds.rounds.open_rounds(None).await.unwrap()),
        [early.id, middle.id, late.id]
    );
    assert_eq!(
        ids(p.rounds.rounds.open_rounds(Some(org.id)).await.unwrap()),
        [early.id, late.id]
    );
    assert_eq!(
        ids(p.rounds.rounds.open_rounds(Some(other.id)).await.unwrap()),
        [middle.id]
    );
}

async fn finishing_a_day_closes_its_rounds_with_its_event_once(p: Ports) {
    let (org, ada, c) = world(&p, "Acme").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "Byte").await;
    let day = date!(2026 - 11 - 23);
    let today = [round(&c, &ada, day, now()), round(&c, &bob, day, now())];
    let tomorrow = round(&c, &ada, date!(2026 - 11 - 24), now());
    for r in today.iter().chain([&tomorrow]) {
        p.rounds.rounds.open_round(r).await.unwrap();
    }
    let at = now();
    let finished = event(org.id, EventType::FollowupsDailyFinished, "day");
    assert!(
        p.rounds
            .rounds
            .finish_day(org.id, c.id, day, at, std::slice::from_ref(&finished))
            .await
            .unwrap()
    );
    assert_eq!(
        p.rounds.rounds.open_rounds(None).await.unwrap(),
        std::slice::from_ref(&tomorrow)
    );
    // Again (another server): nothing more is written.
    let twice = event(org.id, EventType::FollowupsDailyFinished, "twice");
    assert!(
        !p.rounds
            .rounds
            .finish_day(org.id, c.id, day, at, &[twice])
            .await
            .unwrap()
    );
    let marks: Vec<serde_json::Value> = p
        .recorded_events()
        .await
        .into_iter()
        .filter(|e| e["event"] == "followups.daily.finished")
        .map(|e| e["data"]["mark"].clone())
        .collect();
    assert_eq!(marks, ["day"]);
    // No round of a finished day opens again, someone else's included.
    let carol = p.user(&org, "carol@acme.test", "Carol", "Cache").await;
    assert!(
        !p.rounds
            .rounds
            .open_round(&round(&c, &carol, day, now()))
            .await
            .unwrap()
    );
    // Another organization's check-in is not found.
    assert_not_found(
        p.rounds
            .rounds
            .finish_day(OrgId::new(), c.id, date!(2026 - 11 - 24), at, &[])
            .await,
    );
    assert_eq!(p.rounds.rounds.open_rounds(None).await.unwrap(), [tomorrow]);
}

async fn racing_openers_claim_each_round_once(p: Ports) {
    let (_, ada, c) = world(&p, "Acme").await;
    let other = p.rounds.another_process();
    let day = date!(2026 - 11 - 23);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let repo = if i % 2 == 0 {
            p.rounds.rounds.clone()
        } else {
            other.clone()
        };
        let r = round(&c, &ada, day, now());
        tasks.push(tokio::spawn(async move { repo.open_round(&r).await }));
    }
    let mut claimed = 0;
    for t in tasks {
        let opened: Result<bool, RepoError> = t.await.expect("task");
        claimed += usize::from(opened.expect("open"));
    }
    assert_eq!(claimed, 1);
    assert_eq!(p.rounds.rounds.open_rounds(None).await.unwrap().len(), 1);
}

async fn the_schedule_is_the_running_scheduled_checkins_of_every_organization(p: Ports) {
    let (_, ada, running) = world(&p, "Acme").await;
    let (_, _, theirs) = world(&p, "Globex").await;
    let org = p.orgs.get_organization(ada.org_id).await.unwrap();
    let paused = Checkin {
        active: false,
        ..checkin(&org, &ada, "Paused", &[&ada], &[])
    };
    let archived = Checkin {
        active: false,
        archived: true,
        ..checkin(&org, &ada, "Archived", &[&ada], &[])
    };
    let by_events = Checkin {
        options: CheckinOptions {
            is_trigger_based: true,
            ..CheckinOptions::default()
        },
        ..checkin(&org, &ada, "On demand", &[&ada], &[])
    };
    for c in [&paused, &archived, &by_events] {
        p.checkins.repo.insert_checkin(c).await.unwrap();
    }
    let mut scheduled = p.rounds.scheduled.scheduled_checkins().await.unwrap();
    scheduled.sort_by_key(|c| c.id);
    let mut expected = vec![running, theirs];
    expected.sort_by_key(|c| c.id);
    assert_eq!(scheduled, expected);
}
