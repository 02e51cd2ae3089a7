//! The rules of `KudosService`, through the in-memory ports.

use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::{Error, ErrorCode, Event, EventType, PageRequest, TeamId, UserId};
use teamcomm_org::testing::{FixedClock, InMemoryOrgPorts};
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, Organization, ProfilePatch, TeamRepository, User,
    UserPatch,
};
use time::macros::{date, datetime};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::*;
use crate::testing::InMemoryKudosRepository;
use crate::{DAILY_KUDOS_LIMIT, DEFAULT_COMPANY_VALUES, MAX_KUDOS_CONTENT};

const NOW: OffsetDateTime = datetime!(2026-11-23 12:00 UTC);

/// Two organizations on in-memory ports: in the first an admin and three people, in the second
/// one admin; a clock that stands still until moved.
struct World {
    ports: InMemoryOrgPorts,
    clock: Arc<FixedClock>,
    kudos: Arc<InMemoryKudosRepository>,
    org: Organization,
    admin: User,
    ada: User,
    bob: User,
    cy: User,
    other_org: Organization,
    outsider: User,
}

impl World {
    async fn new() -> Self {
        let clock = Arc::new(FixedClock::new(NOW));
        let ports = InMemoryOrgPorts::new(clock.clone());
        let org = organization(&ports, "Acme").await;
        let other_org = organization(&ports, "Globex").await;
        World {
            admin: person(&ports, &org, "Adele", "admin").await,
            ada: person(&ports, &org, "Ada", "member").await,
            bob: person(&ports, &org, "Bob", "member").await,
            cy: person(&ports, &org, "Cy", "guest").await,
            outsider: person(&ports, &other_org, "Otto", "admin").await,
            kudos: Arc::new(InMemoryKudosRepository::new(ports.people.clone())),
            ports,
            clock,
            org,
            other_org,
        }
    }

    fn service(&self) -> KudosService {
        KudosService::new(
            self.kudos.clone(),
            self.ports.people.clone(),
            self.ports.teams.clone(),
            self.clock.clone(),
        )
    }

    async fn person(&self, first_name: &str) -> User {
        person(&self.ports, &self.org, first_name, "member").await
    }

    async fn team(&self, org: &Organization, name: &str, members: &[&User]) -> TeamId {
        let ids: Vec<UserId> = members.iter().map(|u| u.id).collect();
        self.ports
            .teams
            .create_team(org.id, TeamId::new(), name, &ids, &[])
            .await
            .unwrap()
            .id
    }

    async fn deactivate(&self, user: &User) {
        let patch = UserPatch::new(Some(false), None).unwrap();
        self.ports
            .people
            .update_user(user.id, &patch, &[])
            .await
            .unwrap();
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

    fn posted(&self) -> Vec<Event> {
        self.ports.events.of_type(EventType::KudosPosted)
    }

    /// Every kudos of the first organization, as its admin lists them.
    async fn stored(&self) -> Vec<Kudos> {
        self.service()
            .list_organization(&self.admin, &KudosListFilter::default(), PageRequest::all())
            .await
            .unwrap()
            .results
    }

    async fn give(&self, giver: &User, to: &[&User]) -> Kudos {
        self.service()
            .give(giver, to_people(to, "Thanks!"))
            .await
            .unwrap()
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

fn to_people(to: &[&User], content: &str) -> GiveKudos {
    GiveKudos {
        content: content.to_owned(),
        users_receivers: to.iter().map(|u| u.id.0).collect(),
        ..GiveKudos::default()
    }
}

fn ids(people: &[User]) -> Vec<UserId> {
    people.iter().map(|u| u.id).collect()
}

#[track_caller]
fn code<T: std::fmt::Debug>(result: Result<T, Error>) -> ErrorCode {
    result.expect_err("expected a refusal").code()
}

#[tokio::test]
async fn kudos_are_stored_with_their_event() {
    let w = World::new().await;
    let cmd = GiveKudos {
        content: "  Great release!\nThanks for the late nights.  ".into(),
        users_receivers: vec![w.cy.id.0, w.bob.id.0],
        company_value: Some("tEAMWORK".into()),
        by_dailybot: true,
        ..GiveKudos::default()
    };
    let given = w.service().give(&w.ada, cmd).await.unwrap();
    assert_eq!(given.giver.as_ref().map(|g| g.id), Some(w.ada.id));
    assert_eq!(ids(&given.receivers), [w.bob.id, w.cy.id], "by name");
    assert_eq!(given.content, "Great release!\nThanks for the late nights.");
    let value = given.company_value.clone().expect("value");
    assert_eq!(
        (value.name.as_str(), value.emoji.as_str()),
        ("Teamwork", "🤝")
    );
    assert!(given.by_dailybot && !given.is_anonymous);
    assert_eq!(given.created_at, NOW);

    assert_eq!(w.stored().await, std::slice::from_ref(&given));
    let events = w.posted();
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(
        (e.org_id, e.object_id, e.occurred_at),
        (w.org.id, None, NOW)
    );
    assert_eq!(e.data, json!({"kudos": kudos_document(&given)}));
    assert_eq!(e.data["kudos"]["user"]["uuid"], w.ada.id.to_string());
    assert_eq!(e.data["kudos"]["company_value"]["value"], "Teamwork");
}

#[tokio::test]
async fn teams_give_their_active_members_but_not_the_giver() {
    let w = World::new().await;
    let dan = w.person("Dan").await;
    w.deactivate(&dan).await;
    let team = w.team(&w.org, "Core", &[&w.ada, &w.bob, &dan]).await;
    let other = w.team(&w.org, "Ops", &[&w.cy, &w.bob]).await;
    let by_type = GiveKudos {
        content: "Shipped".into(),
        teams_receivers: vec![team.0],
        ..GiveKudos::default()
    };
    let k = w.service().give(&w.ada, by_type).await.unwrap();
    assert_eq!(ids(&k.receivers), [w.bob.id]);

    // The merged list resolves people and teams; each receiver once.
    let merged = GiveKudos {
        content: "Shipped".into(),
        receivers: vec![team.0, w.cy.id.0, other.0],
        users_receivers: vec![w.cy.id.0],
        ..GiveKudos::default()
    };
    let k = w.service().give(&w.ada, merged).await.unwrap();
    assert_eq!(ids(&k.receivers), [w.bob.id, w.cy.id]);
    assert_eq!(w.stored().await.len(), 2);
    assert_eq!(w.posted().len(), 2);
}

#[tokio::test]
async fn receivers_that_resolve_to_nobody_are_refused_and_store_nothing() {
    let w = World::new().await;
    let dan = w.person("Dan").await;
    w.deactivate(&dan).await;
    let foreign_team = w.team(&w.other_org, "Theirs", &[&w.outsider]).await;
    let archived = w.team(&w.org, "Old", &[&w.bob]).await;
    w.ports
        .teams
        .update_team(w.org.id, archived, None, Some(false))
        .await
        .unwrap();
    let only_giver = w.team(&w.org, "Solo", &[&w.ada]).await;
    let empty = w.team(&w.org, "Empty", &[]).await;
    let nobody = Uuid::now_v7();
    let users = |ids: &[Uuid]| GiveKudos {
        content: "Hi".into(),
        users_receivers: ids.to_vec(),
        ..GiveKudos::default()
    };
    let teams = |ids: &[Uuid]| GiveKudos {
        content: "Hi".into(),
        teams_receivers: ids.to_vec(),
        ..GiveKudos::default()
    };
    let merged = |ids: &[Uuid]| GiveKudos {
        content: "Hi".into(),
        receivers: ids.to_vec(),
        ..GiveKudos::default()
    };
    let s = w.service();
    let cases = [
        (users(&[nobody]), ErrorCode::NoValidUsers),
        (users(&[w.outsider.id.0, dan.id.0]), ErrorCode::NoValidUsers),
        (merged(&[nobody]), ErrorCode::NoValidUsers),
        (teams(&[foreign_team.0]), ErrorCode::NoValidTeam),
        (teams(&[archived.0]), ErrorCode::NoValidTeam),
        (teams(&[nobody]), ErrorCode::NoValidTeam),
        // A bad team refuses the whole request, even with good people.
        (
            GiveKudos {
                teams_receivers: vec![foreign_team.0],
                ..users(&[w.bob.id.0])
            },
            ErrorCode::NoValidTeam,
        ),
        (merged(&[w.bob.id.0, archived.0]), ErrorCode::NoValidTeam),
        (users(&[w.ada.id.0]), ErrorCode::SelfKudosNotAllowed),
        (
            GiveKudos {
                teams_receivers: vec![only_giver.0],
                ..users(&[w.ada.id.0])
            },
            ErrorCode::SelfKudosNotAllowed,
        ),
        (teams(&[only_giver.0, empty.0]), ErrorCode::NoUsersFound),
        (users(&[]), ErrorCode::NoUsersFound),
    ];
    for (cmd, expected) in cases {
        assert_eq!(code(s.give(&w.ada, cmd.clone()).await), expected, "{cmd:?}");
    }
    assert_eq!(w.stored().await, []);
    assert_eq!(w.posted(), []);

    // People who are not receivers are dropped when someone else is left.
    let k = s
        .give(&w.ada, users(&[nobody, w.ada.id.0, w.bob.id.0, dan.id.0]))
        .await
        .unwrap();
    assert_eq!(ids(&k.receivers), [w.bob.id]);
}

#[tokio::test]
async fn company_values_are_named_by_uuid_or_name() {
    let w = World::new().await;
    let s = w.service();
    let values = s
        .company_values(&w.ada, PageRequest::all())
        .await
        .unwrap()
        .results;
    let names: Vec<&str> = values.iter().map(|v| v.name.as_str()).collect();
    let defaults: Vec<&str> = DEFAULT_COMPANY_VALUES.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, defaults);
    let growth = values.iter().find(|v| v.name == "Growth").unwrap().clone();
    let with = |value: &str| GiveKudos {
        company_value: Some(value.to_owned()),
        ..to_people(&[&w.bob], "Nice")
    };
    let k = s.give(&w.ada, with(&growth.id.to_string())).await.unwrap();
    assert_eq!(k.company_value, Some(growth.clone()));
    let k = s.give(&w.ada, with(" growth ")).await.unwrap();
    assert_eq!(k.company_value, Some(growth));
    let k = s.give(&w.ada, with("  ")).await.unwrap();
    assert_eq!(k.company_value, None);

    let theirs = s
        .company_values(&w.outsider, PageRequest::all())
        .await
        .unwrap()
        .results;
    for bad in [
        "Kindness".to_owned(),
        Uuid::now_v7().to_string(),
        theirs[0].id.to_string(),
    ] {
        let e = s.give(&w.ada, with(&bad)).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::CompanyValueNotFound, "{bad}");
        assert_eq!(e.extra()["parameter"], "company_value");
    }
    assert_eq!(w.stored().await.len(), 3);
}

#[tokio::test]
async fn operators_add_company_values_to_the_defaults() {
    let w = World::new().await;
    let s = w.service();
    let added = s
        .register_company_value(w.org.id, " Kindness ", Some("💛"))
        .await
        .unwrap();
    assert_eq!(
        (added.name.as_str(), added.emoji.as_str()),
        ("Kindness", "💛")
    );
    // The same name in another case changes the emoji only; no emoji means ⭐.
    let again = s
        .register_company_value(w.org.id, "KINDNESS", None)
        .await
        .unwrap();
    assert_eq!(
        (again.id, again.name.as_str(), again.emoji.as_str()),
        (added.id, "Kindness", "⭐")
    );
    let values = s.company_values(&w.ada, PageRequest::all()).await.unwrap();
    assert_eq!(values.count, DEFAULT_COMPANY_VALUES.len() as u64 + 1);
    assert!(values.results.contains(&again));
    let page = s
        .company_values(
            &w.ada,
            PageRequest {
                offset: 1,
                limit: 2,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.count, values.count);
    assert_eq!(page.results, values.results[1..3]);
    // The other organization has the defaults only.
    assert_eq!(
        s.company_values(&w.outsider, PageRequest::all())
            .await
            .unwrap()
            .count,
        DEFAULT_COMPANY_VALUES.len() as u64
    );

    for (name, emoji, field) in [
        ("", None, "name"),
        ("\u{200B}", None, "name"),
        ("Care", Some("a b"), "emoji"),
        ("Care", Some("\u{7}"), "emoji"),
    ] {
        let e = s
            .register_company_value(w.org.id, name, emoji)
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        assert!(e.field_errors().contains_key(field), "{name:?} {emoji:?}");
    }
    let long = "x".repeat(crate::MAX_COMPANY_VALUE_NAME + 1);
    assert_eq!(
        code(s.register_company_value(w.org.id, &long, None).await),
        ErrorCode::ParamsValidationError
    );
    assert_eq!(
        code(
            s.register_company_value(teamcomm_kernel::OrgId::new(), "Care", None)
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(
        values.count,
        s.company_values(&w.ada, PageRequest::all())
            .await
            .unwrap()
            .count
    );
}

#[tokio::test]
async fn a_message_is_visible_text_of_bounded_length() {
    let w = World::new().await;
    let s = w.service();
    let long = "é".repeat(MAX_KUDOS_CONTENT + 1);
    for bad in [
        "",
        "   ",
        "\n\t",
        "\u{200B}\u{FEFF}",
        "a\u{0}b",
        "a\u{1B}[31m",
        "x\u{202E}y",
        &long,
    ] {
        let e = s.give(&w.ada, to_people(&[&w.bob], bad)).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{bad:?}");
        assert!(e.field_errors().contains_key("content"), "{bad:?}");
    }
    assert_eq!(w.stored().await, []);
    let longest = "é".repeat(MAX_KUDOS_CONTENT);
    let k = s
        .give(&w.ada, to_people(&[&w.bob], &format!(" {longest}\n")))
        .await
        .unwrap();
    assert_eq!(k.content, longest);
    let k = s
        .give(&w.ada, to_people(&[&w.bob], "1. ship\r\n\t2. celebrate 🎉"))
        .await
        .unwrap();
    assert_eq!(k.content, "1. ship\r\n\t2. celebrate 🎉");
}

#[tokio::test]
async fn the_daily_limit_counts_the_givers_local_day() {
    let w = World::new().await;
    // 12:00 UTC is 21:00 in Tokyo: three hours of the giver's day are left.
    let ada = w.in_zone(&w.ada, "Asia/Tokyo").await;
    let s = w.service();
    for _ in 0..DAILY_KUDOS_LIMIT {
        w.give(&ada, &[&w.bob]).await;
    }
    let e = s
        .give(&ada, to_people(&[&w.bob], "One more"))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::KudosDailyLimitReached, 406)
    );
    assert_eq!(e.extra()["limit"], DAILY_KUDOS_LIMIT);
    assert_eq!(e.extra()["retry_after"], 3 * 3600);
    assert_eq!(w.stored().await.len(), DAILY_KUDOS_LIMIT as usize);
    assert_eq!(w.posted().len(), DAILY_KUDOS_LIMIT as usize);
    // Boosts and other givers are not limited.
    w.give(&w.bob, &[&ada]).await;

    // A second before Tokyo's midnight: still today, one second left.
    w.clock.set(datetime!(2026-11-23 14:59:59.5 UTC));
    let e = s
        .give(&ada, to_people(&[&w.bob], "Late"))
        .await
        .unwrap_err();
    assert_eq!(e.extra()["retry_after"], 1, "rounded up");
    w.clock.set(datetime!(2026-11-23 15:00 UTC));
    w.give(&ada, &[&w.bob]).await;

    // In Los Angeles 2026-11-23 12:00 UTC is 04:00: kudos of 07:00 UTC were yesterday's.
    let cy = w.in_zone(&w.cy, "America/Los_Angeles").await;
    w.clock.set(datetime!(2026-11-23 07:00 UTC));
    for _ in 0..DAILY_KUDOS_LIMIT - 1 {
        w.give(&cy, &[&w.bob]).await;
    }
    w.clock.set(NOW);
    for _ in 0..DAILY_KUDOS_LIMIT {
        w.give(&cy, &[&w.bob]).await;
    }
    let e = s.give(&cy, to_people(&[&w.bob], "More")).await.unwrap_err();
    // 04:00 PST: twenty hours to midnight.
    assert_eq!(e.extra()["retry_after"], 20 * 3600);
}

#[tokio::test]
async fn anonymous_givers_are_known_to_themselves_only() {
    let w = World::new().await;
    let s = w.service();
    let cmd = GiveKudos {
        is_anonymous: true,
        ..to_people(&[&w.bob], "From a secret admirer")
    };
    let given = s.give(&w.ada, cmd).await.unwrap();
    assert_eq!(
        given.giver.as_ref().map(|g| g.id),
        Some(w.ada.id),
        "to the giver"
    );
    let event = &w.posted()[0];
    assert_eq!(event.data["kudos"]["user"], serde_json::Value::Null);
    assert_eq!(event.data["kudos"]["is_anonymous"], true);
    assert_eq!(
        event.data,
        json!({"kudos": kudos_document(&given.clone().seen_by(None))})
    );

    let seen = |k: &Page<Kudos>| -> Vec<(Uuid, Option<UserId>)> {
        k.results
            .iter()
            .map(|k| (k.id, k.giver.as_ref().map(|g| g.id)))
            .collect()
    };
    let all = KudosListFilter::default();
    let page = PageRequest::all();
    assert_eq!(
        seen(&s.list_own(&w.bob, &all, page).await.unwrap()),
        [(given.id, None)]
    );
    assert_eq!(
        seen(&s.list_organization(&w.admin, &all, page).await.unwrap()),
        [(given.id, None)]
    );
    assert_eq!(
        seen(&s.list_own(&w.ada, &all, page).await.unwrap()),
        [(given.id, Some(w.ada.id))]
    );
    // Nobody else finds them by their giver: not by sender, not by the giver's name.
    let by_ada = KudosListFilter {
        sender: Some(w.ada.id),
        ..all.clone()
    };
    let named_ada = KudosListFilter {
        search: Some("ada test".into()),
        ..all.clone()
    };
    for filter in [&by_ada, &named_ada] {
        assert_eq!(s.list_own(&w.bob, filter, page).await.unwrap().count, 0);
        assert_eq!(
            s.list_organization(&w.admin, filter, page)
                .await
                .unwrap()
                .count,
            0
        );
        assert_eq!(s.list_own(&w.ada, filter, page).await.unwrap().count, 1);
    }
    let given_by_ada = KudosListFilter {
        direction: Some(KudosDirection::Given),
        ..all.clone()
    };
    assert_eq!(
        s.list_own(&w.ada, &given_by_ada, page).await.unwrap().count,
        1
    );
    // Their giver's +1 would give them away to nobody but themself; others boost normally.
    let boosted = s.boost(&w.cy, given.id).await.unwrap();
    assert_eq!(boosted.giver, None);
}

#[tokio::test]
async fn lists_filter_by_direction_people_text_and_local_days() {
    let w = World::new().await;
    let s = w.service();
    let a_to_b = s
        .give(&w.ada, to_people(&[&w.bob], "Release notes"))
        .await
        .unwrap();
    w.clock.set(NOW + Duration::hours(1));
    let b_to_a = s
        .give(&w.bob, to_people(&[&w.ada, &w.cy], "Design review"))
        .await
        .unwrap();
    w.clock.set(NOW + Duration::days(2));
    let c_to_b = s
        .give(&w.cy, to_people(&[&w.bob], "On-call help"))
        .await
        .unwrap();
    let page = PageRequest::all();
    let listed = |p: Page<Kudos>| -> Vec<Uuid> { p.results.iter().map(|k| k.id).collect() };
    let own = |who: &User, f: KudosListFilter| {
        let s = s.clone();
        let who = who.clone();
        async move { listed(s.list_own(&who, &f, page).await.unwrap()) }
    };
    let f = KudosListFilter::default();
    // Newest first; without a direction, what the reader gave or received.
    assert_eq!(own(&w.ada, f.clone()).await, [b_to_a.id, a_to_b.id]);
    assert_eq!(
        own(&w.bob, f.clone()).await,
        [c_to_b.id, b_to_a.id, a_to_b.id]
    );
    assert_eq!(own(&w.admin, f.clone()).await, Vec::<Uuid>::new());
    let received = KudosListFilter {
        direction: Some(KudosDirection::Received),
        ..f.clone()
    };
    let given = KudosListFilter {
        direction: Some(KudosDirection::Given),
        ..f.clone()
    };
    assert_eq!(own(&w.bob, received.clone()).await, [c_to_b.id, a_to_b.id]);
    assert_eq!(own(&w.bob, given.clone()).await, [b_to_a.id]);
    assert_eq!(
        own(
            &w.bob,
            KudosListFilter {
                sender: Some(w.cy.id),
                ..received.clone()
            }
        )
        .await,
        [c_to_b.id]
    );
    assert_eq!(
        own(
            &w.bob,
            KudosListFilter {
                sender: Some(w.cy.id),
                ..f.clone()
            }
        )
        .await,
        [c_to_b.id]
    );
    assert_eq!(
        own(
            &w.bob,
            KudosListFilter {
                receiver: Some(w.cy.id),
                ..f.clone()
            }
        )
        .await,
        [b_to_a.id]
    );
    assert_eq!(
        own(
            &w.bob,
            KudosListFilter {
                receiver: Some(w.cy.id),
                ..given.clone()
            }
        )
        .await,
        [b_to_a.id]
    );
    // Text: the message, a receiver's or the giver's name, any case.
    for (text, expected) in [
        ("DESIGN", vec![b_to_a.id]),
        ("cy test", vec![c_to_b.id, b_to_a.id]),
        ("ada", vec![b_to_a.id, a_to_b.id]),
        ("nothing like it", vec![]),
    ] {
        let search = KudosListFilter {
            search: Some(text.into()),
            ..f.clone()
        };
        assert_eq!(own(&w.bob, search).await, expected, "{text}");
    }
    // Days are the reader's: at UTC+14, 12:00 and 13:00 UTC are already 2026-11-24.
    let day = |start, end| KudosListFilter {
        start_date: Some(start),
        end_date: Some(end),
        ..f.clone()
    };
    let nov_23 = date!(2026 - 11 - 23);
    let nov_24 = date!(2026 - 11 - 24);
    assert_eq!(
        own(&w.bob, day(nov_23, nov_23)).await,
        [b_to_a.id, a_to_b.id]
    );
    let bob_at_utc14 = w.in_zone(&w.bob, "Pacific/Kiritimati").await;
    assert_eq!(
        own(&bob_at_utc14, day(nov_23, nov_23)).await,
        Vec::<Uuid>::new()
    );
    assert_eq!(
        own(&bob_at_utc14, day(nov_24, nov_24)).await,
        [b_to_a.id, a_to_b.id]
    );
    assert_eq!(
        own(
            &bob_at_utc14,
            KudosListFilter {
                start_date: Some(nov_24),
                ..f.clone()
            }
        )
        .await,
        [c_to_b.id, b_to_a.id, a_to_b.id]
    );
    assert_eq!(
        own(
            &bob_at_utc14,
            KudosListFilter {
                end_date: Some(nov_23),
                ..f.clone()
            }
        )
        .await,
        Vec::<Uuid>::new()
    );
    assert_eq!(
        code(s.list_own(&w.bob, &day(nov_24, nov_23), page).await),
        ErrorCode::InvalidDateRange
    );

    // Paging counts the whole filtered list.
    let first = s
        .list_own(
            &w.bob,
            &f,
            PageRequest {
                offset: 0,
                limit: 2,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (first.count, listed(first)),
        (3, vec![c_to_b.id, b_to_a.id])
    );
}

#[tokio::test]
async fn the_organization_list_is_for_admins_and_stays_in_the_organization() {
    let w = World::new().await;
    let s = w.service();
    let ours = w.give(&w.ada, &[&w.bob]).await;
    let page = PageRequest::all();
    let f = KudosListFilter::default();
    let theirs_member = person(&w.ports, &w.other_org, "Tia", "member").await;
    w.give(&w.outsider, &[&theirs_member]).await;
    for not_admin in [&w.ada, &w.bob, &w.cy] {
        assert_eq!(
            code(s.list_organization(not_admin, &f, page).await),
            ErrorCode::OrgAdminRequired
        );
    }
    let listed = s.list_organization(&w.admin, &f, page).await.unwrap();
    assert_eq!(listed.results, std::slice::from_ref(&ours));
    // A direction is the admin's own.
    let admin_received = KudosListFilter {
        direction: Some(KudosDirection::Received),
        ..f.clone()
    };
    assert_eq!(
        s.list_organization(&w.admin, &admin_received, page)
            .await
            .unwrap()
            .count,
        0
    );
    assert_eq!(
        s.list_organization(&w.outsider, &f, page)
            .await
            .unwrap()
            .count,
        1
    );
    assert_eq!(
        code(s.boost(&w.outsider, ours.id).await),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn boosts_add_other_peoples_plus_one_once() {
    let w = World::new().await;
    let s = w.service();
    let dan = w.person("Dan").await;
    let k = w.give(&w.ada, &[&w.bob]).await;
    w.clock.set(NOW + Duration::minutes(1));
    let once = s.boost(&w.cy, k.id).await.unwrap();
    assert_eq!(ids(&once.boosted_by), [w.cy.id]);
    w.clock.set(NOW + Duration::minutes(2));
    let twice = s.boost(&dan, k.id).await.unwrap();
    assert_eq!(ids(&twice.boosted_by), [w.cy.id, dan.id], "oldest first");
    assert_eq!(
        code(s.boost(&w.cy, k.id).await),
        ErrorCode::KudosAlreadyBoosted
    );
    let by_giver = s.boost(&w.ada, k.id).await.unwrap_err();
    assert_eq!(
        (by_giver.code(), by_giver.status()),
        (ErrorCode::KudosAlreadyBoosted, 409)
    );
    assert_eq!(
        code(s.boost(&w.bob, k.id).await),
        ErrorCode::SelfKudosNotAllowed
    );
    assert_eq!(
        code(s.boost(&w.cy, Uuid::now_v7()).await),
        ErrorCode::NotFound
    );
    let stored = w.stored().await;
    assert_eq!(ids(&stored[0].boosted_by), [w.cy.id, dan.id]);
    assert_eq!(w.posted().len(), 1, "a boost is not a posting");
}

#[tokio::test]
async fn the_wall_of_fame_ranks_received_kudos_and_their_plus_ones() {
    let w = World::new().await;
    let s = w.service();
    let dan = w.person("Dan").await;
    let valued = |name: &str, cmd: GiveKudos| GiveKudos {
        company_value: Some(name.into()),
        ..cmd
    };
    // Bob: 2 kudos; Cy: 1 kudos + 1 boost; Dan: 1 kudos + 1 boost; Ada: 1 kudos.
    s.give(&w.ada, valued("Teamwork", to_people(&[&w.bob], "a")))
        .await
        .unwrap();
    s.give(&w.cy, valued("Teamwork", to_people(&[&w.bob], "a")))
        .await
        .unwrap();
    let to_cy_and_dan = s
        .give(&w.bob, valued("Growth", to_people(&[&w.cy, &dan], "b")))
        .await
        .unwrap();
    s.boost(&w.ada, to_cy_and_dan.id).await.unwrap();
    // Anonymous kudos count for their receiver, never for their giver.
    s.give(
        &dan,
        GiveKudos {
            is_anonymous: true,
            ..to_people(&[&w.ada], "c")
        },
    )
    .await
    .unwrap();
    // Another day, outside the range asked below.
    w.clock.set(NOW + Duration::days(3));
    s.give(&w.cy, to_people(&[&w.bob], "later")).await.unwrap();

    let day = date!(2026 - 11 - 23);
    let wall = s
        .wall_of_fame(&w.ada, Some(day), Some(day), PageRequest::all())
        .await
        .unwrap();
    let rows: Vec<(u64, &str, u64, u64, u64)> = wall
        .leaderboard
        .results
        .iter()
        .map(|r| {
            (
                r.position,
                r.person.first_name.as_str(),
                r.score,
                r.received,
                r.plus,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (1, "Bob", 2, 2, 0),
            (1, "Cy", 2, 1, 1),
            (1, "Dan", 2, 1, 1),
            (4, "Ada", 1, 1, 0),
        ]
    );
    assert_eq!((wall.viewer_position, wall.ranked), (Some(4), 4));
    assert_eq!(wall.leaderboard.count, 4);
    let top = wall.top_receiver.as_ref().unwrap();
    assert_eq!((top.person.id, top.count), (w.bob.id, 2));
    // Ada, Bob and Cy gave one signed kudos each; Dan's was anonymous.
    let giver = wall.top_giver.as_ref().unwrap();
    assert_eq!((giver.person.id, giver.count), (w.ada.id, 1));
    let dna: Vec<(&str, u64, f64)> = wall
        .dna
        .iter()
        .map(|d| (d.value.name.as_str(), d.count, d.percentage))
        .collect();
    assert_eq!(dna, [("Teamwork", 2, 66.7), ("Growth", 1, 33.3)]);

    // All time: Bob's third kudos puts him alone on top; the admin is not ranked.
    let wall = s
        .wall_of_fame(
            &w.admin,
            None,
            None,
            PageRequest {
                offset: 1,
                limit: 2,
            },
        )
        .await
        .unwrap();
    assert_eq!((wall.viewer_position, wall.ranked), (None, 4));
    let rows: Vec<(u64, &str)> = wall
        .leaderboard
        .results
        .iter()
        .map(|r| (r.position, r.person.first_name.as_str()))
        .collect();
    assert_eq!(rows, [(2, "Cy"), (2, "Dan")]);
    assert_eq!(wall.top_receiver.unwrap().count, 3);
    assert_eq!(wall.top_giver.unwrap().person.id, w.cy.id, "Cy gave two");

    // Nothing in range: empty, not an error; a reversed range is.
    let empty = s
        .wall_of_fame(
            &w.ada,
            Some(date!(2020 - 01 - 01)),
            Some(date!(2020 - 01 - 31)),
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(
        (
            empty.top_receiver,
            empty.top_giver,
            empty.viewer_position,
            empty.ranked
        ),
        (None, None, None, 0)
    );
    assert!(empty.dna.is_empty() && empty.leaderboard.results.is_empty());
    assert_eq!(
        code(
            s.wall_of_fame(
                &w.ada,
                Some(day),
                Some(date!(2026 - 11 - 22)),
                PageRequest::all()
            )
            .await
        ),
        ErrorCode::InvalidDateRange
    );
    // Another organization's wall is its own.
    let theirs = s
        .wall_of_fame(&w.outsider, None, None, PageRequest::all())
        .await
        .unwrap();
    assert_eq!(theirs.ranked, 0);
}

#[test]
fn filters_parse_in_any_case_with_their_codes() {
    for (raw, expected) in [
        ("kudos_received", KudosDirection::Received),
        ("KUDOS_GIVEN", KudosDirection::Given),
        (" Kudos_Received ", KudosDirection::Received),
    ] {
        assert_eq!(KudosDirection::parse(raw).unwrap(), expected);
    }
    for bad in ["received", "given", "kudos", ""] {
        let e = KudosDirection::parse(bad).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidKudosFilter, "{bad}");
        assert_eq!(
            e.extra()["allowed"],
            json!(["kudos_received", "kudos_given"])
        );
    }
    let id = Uuid::now_v7();
    assert_eq!(crate::parse_sender(&id.to_string()).unwrap(), UserId(id));
    assert_eq!(crate::parse_receiver(&id.to_string()).unwrap(), UserId(id));
    assert_eq!(
        crate::parse_sender("bob").unwrap_err().code(),
        ErrorCode::InvalidSenderUuid
    );
    assert_eq!(
        crate::parse_receiver("bob").unwrap_err().code(),
        ErrorCode::InvalidReceiverUuid
    );
}
