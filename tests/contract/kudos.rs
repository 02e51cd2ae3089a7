//! `KudosRepository`: company values, kudos with their people, the daily cap, boosts, listings
//! and the wall of fame's tallies.

use teamcomm_kernel::{EventType, OrgId, PageRequest};
use teamcomm_kudos::{
    CompanyValue, DailyCap, Kudos, KudosSelection, NewCompanyValue, Posting, Span, Tallies,
};
use teamcomm_org::{Organization, ProfilePatch, User};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::ports::{
    Ports, assert_conflict, assert_not_found, assert_refused_by_check, event, micros,
};

contract!(
    company_values_are_seeded_once_and_registered_by_name,
    kudos_read_back_with_their_people_value_and_event,
    the_daily_cap_counts_the_givers_kudos_since_the_start_of_the_day,
    concurrent_posts_never_exceed_the_cap,
    nothing_crosses_organizations,
    boosts_are_once_per_person_oldest_first,
    listings_select_order_and_count,
    anonymous_givers_match_giver_conditions_for_themselves_only,
    tallies_count_people_and_values_of_the_span,
);

fn value(name: &str, emoji: &str) -> NewCompanyValue {
    NewCompanyValue {
        name: name.into(),
        emoji: emoji.into(),
    }
}

fn defaults() -> Vec<NewCompanyValue> {
    vec![value("Teamwork", "🤝"), value("Care", "💛")]
}

/// A roomy cap: the day started long ago and allows plenty.
fn no_cap() -> DailyCap {
    DailyCap {
        since: OffsetDateTime::UNIX_EPOCH,
        limit: 1000,
    }
}

fn now() -> OffsetDateTime {
    micros(OffsetDateTime::now_utc())
}

fn kudos(
    giver: &User,
    receivers: &[&User],
    value: Option<&CompanyValue>,
    at: OffsetDateTime,
) -> Kudos {
    Kudos {
        id: Uuid::now_v7(),
        org_id: giver.org_id,
        giver: Some(giver.clone()),
        receivers: receivers.iter().map(|u| (*u).clone()).collect(),
        company_value: value.cloned(),
        content: format!("Thanks from {}", giver.first_name),
        is_anonymous: false,
        by_dailybot: false,
        boosted_by: Vec::new(),
        created_at: at,
    }
}

fn selection(viewer: &User) -> KudosSelection {
    KudosSelection {
        viewer: viewer.id,
        involving_viewer: false,
        given_by: Vec::new(),
        received_by: Vec::new(),
        search: None,
        span: Span::default(),
    }
}

async fn post(p: &Ports, k: &Kudos) {
    assert_eq!(
        p.kudos.insert_kudos(k, no_cap(), &[]).await.unwrap(),
        Posting::Stored
    );
}

async fn listed(p: &Ports, org: &Organization, s: &KudosSelection) -> Vec<Uuid> {
    p.kudos
        .list_kudos(org.id, s, PageRequest::all())
        .await
        .unwrap()
        .results
        .iter()
        .map(|k| k.id)
        .collect()
}

/// The organization's values, seeding the test defaults.
async fn values(p: &Ports, org: &Organization) -> Vec<CompanyValue> {
    p.kudos.company_values(org.id, &defaults()).await.unwrap()
}

/// Names of people are read as they are now (renamed after the fact here).
async fn rename(p: &Ports, user: &User, first_name: &str) -> User {
    let patch = ProfilePatch {
        first_name: Some(first_name.into()),
        ..ProfilePatch::default()
    };
    p.orgs
        .update_profile(user.org_id, user.id, &patch, &[])
        .await
        .unwrap()
}

async fn company_values_are_seeded_once_and_registered_by_name(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let seeded = values(&p, &org).await;
    let named: Vec<(&str, &str)> = seeded
        .iter()
        .map(|v| (v.name.as_str(), v.emoji.as_str()))
        .collect();
    assert_eq!(named, [("Care", "💛"), ("Teamwork", "🤝")], "by name");
    assert!(seeded.iter().all(|v| v.org_id == org.id));
    // Seeded once: later calls (with other defaults) read what is there.
    assert_eq!(
        p.kudos
            .company_values(org.id, &[value("Other", "⭐")])
            .await
            .unwrap(),
        seeded
    );
    // Registering: a new name is added, a known one (any case) gets the new emoji.
    let kind = p
        .kudos
        .upsert_company_value(org.id, &value("Kindness", "💗"))
        .await
        .unwrap();
    let care = p
        .kudos
        .upsert_company_value(org.id, &value("CARE", "🫶"))
        .await
        .unwrap();
    assert_eq!(
        (care.id, care.name.as_str(), care.emoji.as_str()),
        (seeded[0].id, "Care", "🫶")
    );
    let now_listed = values(&p, &org).await;
    assert_eq!(
        now_listed.iter().map(|v| v.id).collect::<Vec<_>>(),
        [care.id, kind.id, seeded[1].id]
    );
    // Another organization's values are its own; registering before reading adds to nothing.
    let theirs = p
        .kudos
        .upsert_company_value(other.id, &value("Care", "🧡"))
        .await
        .unwrap();
    assert_ne!(theirs.id, care.id);
    assert_eq!(
        p.kudos.company_values(other.id, &[]).await.unwrap(),
        [theirs]
    );

    let nowhere = OrgId::new();
    assert_not_found(p.kudos.company_values(nowhere, &defaults()).await);
    assert_not_found(p.kudos.company_values(nowhere, &[]).await);
    assert_not_found(
        p.kudos
            .upsert_company_value(nowhere, &value("Care", "⭐"))
            .await,
    );
    assert_refused_by_check(p.kudos.upsert_company_value(org.id, &value("", "⭐")).await);
    assert_refused_by_check(
        p.kudos
            .upsert_company_value(org.id, &value("Care", &"⭐".repeat(33)))
            .await,
    );
    assert_eq!(values(&p, &org).await, now_listed);
}

async fn kudos_read_back_with_their_people_value_and_event(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "Lee").await;
    let zed = p.user(&org, "zed@acme.test", "Zed", "Ray").await;
    let bea = p.user(&org, "bea@acme.test", "Bea", "Kim").await;
    let care = values(&p, &org).await.remove(0);
    let mut k = kudos(&ann, &[&zed, &bea], Some(&care), now());
    k.content = "Line one\nLine two".into();
    k.is_anonymous = true;
    k.by_dailybot = true;
    let posted = event(org.id, EventType::KudosPosted, "posted");
    assert_eq!(
        p.kudos
            .insert_kudos(&k, no_cap(), std::slice::from_ref(&posted))
            .await
            .unwrap(),
        Posting::Stored
    );
    let stored = p.kudos.get_kudos(org.id, k.id).await.unwrap();
    let expected = Kudos {
        receivers: vec![bea.clone(), zed.clone()],
        ..k.clone()
    };
    assert_eq!(stored, expected, "receivers by name, the giver kept");
    assert_eq!(
        p.recorded_events().await,
        [posted.payload()],
        "written with the kudos"
    );
    // People are read as they are now.
    let zed = rename(&p, &zed, "Abe").await;
    let stored = p.kudos.get_kudos(org.id, k.id).await.unwrap();
    assert_eq!(stored.receivers, [zed, bea]);
    assert_not_found(p.kudos.get_kudos(org.id, Uuid::now_v7()).await);

    // The table's CHECK on the message; the same id twice.
    let mut long = kudos(&ann, &[&stored.receivers[0]], None, now());
    long.content = "x".repeat(2001);
    assert_refused_by_check(p.kudos.insert_kudos(&long, no_cap(), &[]).await);
    assert_conflict(p.kudos.insert_kudos(&k, no_cap(), &[]).await, "kudos_pkey");
    assert_eq!(p.recorded_events().await.len(), 1);
}

async fn the_daily_cap_counts_the_givers_kudos_since_the_start_of_the_day(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let start = now() - Duration::hours(5);
    let cap = DailyCap {
        since: start,
        limit: 2,
    };
    // Yesterday's kudos do not count; today's and the first instant of today do.
    post(
        &p,
        &kudos(&ann, &[&bob], None, start - Duration::seconds(1)),
    )
    .await;
    post(&p, &kudos(&ann, &[&bob], None, start)).await;
    let second = kudos(&ann, &[&bob], None, now());
    assert_eq!(
        p.kudos.insert_kudos(&second, cap, &[]).await.unwrap(),
        Posting::Stored
    );
    let third = kudos(&ann, &[&bob], None, now());
    let posted = event(org.id, EventType::KudosPosted, "third");
    assert_eq!(
        p.kudos
            .insert_kudos(&third, cap, std::slice::from_ref(&posted))
            .await
            .unwrap(),
        Posting::DailyLimitReached
    );
    assert_not_found(p.kudos.get_kudos(org.id, third.id).await);
    assert_eq!(p.recorded_events().await, Vec::<serde_json::Value>::new());
    // Another giver has their own allowance.
    assert_eq!(
        p.kudos
            .insert_kudos(&kudos(&bob, &[&ann], None, now()), cap, &[])
            .await
            .unwrap(),
        Posting::Stored
    );
}

async fn concurrent_posts_never_exceed_the_cap(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let cap = DailyCap {
        since: now() - Duration::hours(1),
        limit: 3,
    };
    let posts: Vec<_> = (0..8)
        .map(|_| {
            let (repo, k) = (p.kudos.clone(), kudos(&ann, &[&bob], None, now()));
            tokio::spawn(async move { repo.insert_kudos(&k, cap, &[]).await })
        })
        .collect();
    let mut stored = 0;
    for post in posts {
        if post.await.unwrap().unwrap() == Posting::Stored {
            stored += 1;
        }
    }
    assert_eq!(stored, 3);
    assert_eq!(listed(&p, &org, &selection(&ann)).await.len(), 3);
}

async fn nothing_crosses_organizations(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let otto = p.user(&other, "otto@globex.test", "Otto", "").await;
    let theirs = values(&p, &other).await.remove(0);
    let ours = values(&p, &org).await.remove(0);
    let refused = [
        kudos(&otto, &[&bob], None, now()),
        Kudos {
            org_id: org.id,
            ..kudos(&otto, &[&bob], None, now())
        },
        kudos(&ann, &[&bob, &otto], None, now()),
        kudos(&ann, &[&bob], Some(&theirs), now()),
        kudos(
            &ann,
            &[&bob],
            Some(&CompanyValue {
                id: Uuid::now_v7(),
                ..ours.clone()
            }),
            now(),
        ),
    ];
    for k in &refused {
        let posted = event(org.id, EventType::KudosPosted, "refused");
        assert_not_found(
            p.kudos
                .insert_kudos(k, no_cap(), std::slice::from_ref(&posted))
                .await,
        );
    }
    assert_eq!(p.recorded_events().await, Vec::<serde_json::Value>::new());
    let mine = kudos(&ann, &[&bob], Some(&ours), now());
    post(&p, &mine).await;
    assert_not_found(p.kudos.get_kudos(other.id, mine.id).await);
    assert_not_found(p.kudos.boost_kudos(other.id, mine.id, otto.id, now()).await);
    assert_not_found(p.kudos.boost_kudos(org.id, mine.id, otto.id, now()).await);
    assert_not_found(
        p.kudos
            .boost_kudos(org.id, Uuid::now_v7(), ann.id, now())
            .await,
    );
    assert_eq!(
        p.kudos
            .list_kudos(other.id, &selection(&otto), PageRequest::all())
            .await
            .unwrap()
            .count,
        0
    );
    assert_eq!(listed(&p, &org, &selection(&ann)).await, [mine.id]);
    assert_eq!(
        p.kudos.get_kudos(org.id, mine.id).await.unwrap().boosted_by,
        []
    );
}

async fn boosts_are_once_per_person_oldest_first(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let cy = p.user(&org, "cy@acme.test", "Cy", "").await;
    let zoe = p.user(&org, "zoe@acme.test", "Zoe", "").await;
    let k = kudos(&ann, &[&bob], None, now());
    post(&p, &k).await;
    let t = now();
    let once = p.kudos.boost_kudos(org.id, k.id, zoe.id, t).await.unwrap();
    assert_eq!(once.boosted_by, std::slice::from_ref(&zoe));
    let twice = p
        .kudos
        .boost_kudos(org.id, k.id, cy.id, t + Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(twice.boosted_by, [zoe.clone(), cy.clone()], "oldest first");
    assert_eq!(twice.receivers, [bob]);
    assert_conflict(
        p.kudos
            .boost_kudos(org.id, k.id, zoe.id, t + Duration::seconds(2))
            .await,
        "kudos_boosts_pkey",
    );
    assert_eq!(
        p.kudos.get_kudos(org.id, k.id).await.unwrap().boosted_by,
        [zoe, cy]
    );
}

async fn listings_select_order_and_count(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "Lee").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "Stone").await;
    let cy = p.user(&org, "cy@acme.test", "Cy", "Wu").await;
    let t = now() - Duration::hours(3);
    let a_to_b = kudos(&ann, &[&bob], None, t);
    // The same instant: the greater id is listed first.
    let b_to_ac = Kudos {
        content: "Great DESIGN review".into(),
        ..kudos(&bob, &[&ann, &cy], None, t + Duration::hours(1))
    };
    let b_to_ac_twin = kudos(&bob, &[&cy], None, t + Duration::hours(1));
    let c_to_b = kudos(&cy, &[&bob], None, t + Duration::hours(2));
    for k in [&a_to_b, &b_to_ac, &b_to_ac_twin, &c_to_b] {
        post(&p, k).await;
    }
    let (twin_first, twin_second) = if b_to_ac_twin.id > b_to_ac.id {
        (b_to_ac_twin.id, b_to_ac.id)
    } else {
        (b_to_ac.id, b_to_ac_twin.id)
    };
    let all = selection(&bob);
    assert_eq!(
        listed(&p, &org, &all).await,
        [c_to_b.id, twin_first, twin_second, a_to_b.id]
    );
    let involving_ann = KudosSelection {
        involving_viewer: true,
        ..selection(&ann)
    };
    assert_eq!(
        listed(&p, &org, &involving_ann).await,
        [b_to_ac.id, a_to_b.id]
    );
    let given_by_bob_to_cy = KudosSelection {
        given_by: vec![bob.id],
        received_by: vec![cy.id],
        ..all.clone()
    };
    assert_eq!(
        listed(&p, &org, &given_by_bob_to_cy).await,
        [twin_first, twin_second]
    );
    let received_by_ann_and_cy = KudosSelection {
        received_by: vec![ann.id, cy.id],
        ..all.clone()
    };
    assert_eq!(
        listed(&p, &org, &received_by_ann_and_cy).await,
        [b_to_ac.id]
    );
    let given_by_two = KudosSelection {
        given_by: vec![bob.id, cy.id],
        ..all.clone()
    };
    assert_eq!(listed(&p, &org, &given_by_two).await, Vec::<Uuid>::new());
    // Search: the message, a receiver's or the giver's "first last", any case; LIKE's
    // wildcards are plain characters.
    for (text, expected) in [
        ("design", vec![b_to_ac.id]),
        ("ANN LEE", vec![b_to_ac.id, a_to_b.id]),
        ("y w", vec![c_to_b.id, twin_first, twin_second]),
        ("%", vec![]),
        ("_", vec![]),
    ] {
        let s = KudosSelection {
            search: Some(text.into()),
            ..all.clone()
        };
        assert_eq!(listed(&p, &org, &s).await, expected, "{text}");
    }
    // The span includes its start and excludes its end.
    let span = KudosSelection {
        span: Span {
            from: Some(t + Duration::hours(1)),
            until: Some(t + Duration::hours(2)),
        },
        ..all.clone()
    };
    assert_eq!(listed(&p, &org, &span).await, [twin_first, twin_second]);
    // A page counts the whole selection.
    let page = p
        .kudos
        .list_kudos(
            org.id,
            &all,
            PageRequest {
                offset: 1,
                limit: 2,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.count, 4);
    let ids: Vec<Uuid> = page.results.iter().map(|k| k.id).collect();
    assert_eq!(ids, [twin_first, twin_second]);
    let beyond = p
        .kudos
        .list_kudos(
            org.id,
            &all,
            PageRequest {
                offset: 8,
                limit: 2,
            },
        )
        .await
        .unwrap();
    assert_eq!((beyond.count, beyond.results.len()), (4, 0));
    // Listed kudos come with their people.
    let first = p
        .kudos
        .list_kudos(org.id, &span, PageRequest::all())
        .await
        .unwrap();
    let full = first.results.iter().find(|k| k.id == b_to_ac.id).unwrap();
    assert_eq!(full.giver.as_ref(), Some(&bob));
    assert_eq!(full.receivers, [ann, cy]);
}

async fn anonymous_givers_match_giver_conditions_for_themselves_only(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "Lee").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "Stone").await;
    let secret = Kudos {
        is_anonymous: true,
        content: "Well done".into(),
        ..kudos(&ann, &[&bob], None, now())
    };
    post(&p, &secret).await;
    for (viewer, expected) in [(&ann, vec![secret.id]), (&bob, vec![])] {
        let by_ann = KudosSelection {
            given_by: vec![ann.id],
            ..selection(viewer)
        };
        let named_ann = KudosSelection {
            search: Some("ann lee".into()),
            ..selection(viewer)
        };
        assert_eq!(listed(&p, &org, &by_ann).await, expected);
        assert_eq!(listed(&p, &org, &named_ann).await, expected);
    }
    let involving_ann = KudosSelection {
        involving_viewer: true,
        ..selection(&ann)
    };
    assert_eq!(listed(&p, &org, &involving_ann).await, [secret.id]);
    // Their receiver finds them as received, and by the receiver's own name; stores always
    // return the giver (hiding it is the service's rule).
    let bob_received = KudosSelection {
        received_by: vec![bob.id],
        search: Some("bob".into()),
        ..selection(&bob)
    };
    let found = p
        .kudos
        .list_kudos(org.id, &bob_received, PageRequest::all())
        .await
        .unwrap();
    assert_eq!(found.results[0].giver.as_ref(), Some(&ann));
}

/// Tallies in a comparable order.
fn sorted(mut t: Tallies) -> Tallies {
    t.people.sort_by_key(|p| p.person.id);
    t.values.sort_by_key(|v| v.value.id);
    t
}

async fn tallies_count_people_and_values_of_the_span(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let cy = p.user(&org, "cy@acme.test", "Cy", "").await;
    let dan = p.user(&org, "dan@acme.test", "Dan", "").await;
    let otto = p.user(&other, "otto@globex.test", "Otto", "").await;
    let olga = p.user(&other, "olga@globex.test", "Olga", "").await;
    let vals = values(&p, &org).await;
    let (care, teamwork) = (&vals[0], &vals[1]);
    let t = now() - Duration::hours(10);
    let k1 = kudos(&ann, &[&bob, &cy], Some(teamwork), t);
    let k2 = kudos(&bob, &[&cy], Some(teamwork), t + Duration::hours(1));
    let k3 = Kudos {
        is_anonymous: true,
        ..kudos(&dan, &[&ann], Some(care), t + Duration::hours(2))
    };
    let late = kudos(&cy, &[&dan], None, t + Duration::hours(5));
    for k in [&k1, &k2, &k3, &late] {
        post(&p, k).await;
    }
    post(&p, &kudos(&otto, &[&olga], None, t)).await;
    // +1s on k1 count for Bob and Cy each.
    p.kudos
        .boost_kudos(org.id, k1.id, dan.id, now())
        .await
        .unwrap();
    p.kudos
        .boost_kudos(org.id, k1.id, ann.id, now())
        .await
        .unwrap();
    p.kudos
        .boost_kudos(org.id, k3.id, bob.id, now())
        .await
        .unwrap();

    let span = Span {
        from: Some(t),
        until: Some(t + Duration::hours(5)),
    };
    let got = sorted(p.kudos.tallies(org.id, span).await.unwrap());
    let tally = |person: &User, received, plus, given| teamcomm_kudos::PersonTally {
        person: person.clone(),
        received,
        plus,
        given,
    };
    let expected = sorted(Tallies {
        people: vec![
            tally(&ann, 1, 1, 1),
            tally(&bob, 1, 2, 1),
            tally(&cy, 2, 2, 0),
        ],
        values: vec![
            teamcomm_kudos::ValueTally {
                value: teamwork.clone(),
                count: 2,
            },
            teamcomm_kudos::ValueTally {
                value: care.clone(),
                count: 1,
            },
        ],
    });
    assert_eq!(got, expected, "Dan gave anonymously only: not counted");

    let all_time = sorted(p.kudos.tallies(org.id, Span::default()).await.unwrap());
    let cy_all = all_time
        .people
        .iter()
        .find(|t| t.person.id == cy.id)
        .unwrap();
    assert_eq!((cy_all.received, cy_all.given), (2, 1));
    let dan_all = all_time
        .people
        .iter()
        .find(|t| t.person.id == dan.id)
        .unwrap();
    assert_eq!((dan_all.received, dan_all.plus, dan_all.given), (1, 0, 0));
    assert_eq!(
        p.kudos
            .tallies(OrgId::new(), Span::default())
            .await
            .unwrap(),
        Tallies::default()
    );
}
