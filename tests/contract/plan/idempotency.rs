//! Plan port contract: idempotency slots. One slot per (organization, route, key); of two
//! requests racing for a slot exactly one takes it, whether new or abandoned; an answer is kept
//! only under the lease that took the slot; old slots are pruned.

use std::sync::Arc;

use teamcomm_plan::ports::{IdempotencyRepository, SlotKey, StoredAnswer};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

use crate::ports::Ports;

contract!(
    a_slot_is_taken_once_and_read_back,
    racing_requests_take_a_slot_once,
    an_abandoned_or_stale_slot_is_taken_over_once,
    answers_are_kept_under_the_lease_only,
    old_slots_are_pruned,
);

const T0: OffsetDateTime = datetime!(2026-11-26 10:00 UTC);

fn slot(
    p: &Ports,
    org: teamcomm_kernel::OrgId,
    key: &str,
) -> (Arc<dyn IdempotencyRepository>, SlotKey) {
    (
        p.plan.idempotency.clone(),
        SlotKey {
            org,
            route: "/v1/plan/tasks/bulk/".to_owned(),
            key: key.to_owned(),
        },
    )
}

async fn a_slot_is_taken_once_and_read_back(p: Ports) {
    let org = p.org("Slots").await;
    let other = p.org("Other slots").await;
    let (repo, s) = slot(&p, org.id, "key-00000001");
    assert!(repo.find_slot(&s).await.unwrap().is_none());
    let until = T0 + Duration::seconds(120);
    assert!(repo.insert_slot(&s, b"hash-a", T0, until).await.unwrap());
    assert!(!repo.insert_slot(&s, b"hash-b", T0, until).await.unwrap());
    let found = repo.find_slot(&s).await.unwrap().unwrap();
    assert_eq!(found.request_hash, b"hash-a");
    assert_eq!((found.locked_until, found.created_at), (until, T0));
    assert!(found.answer.is_none());
    // Same key elsewhere: other slots.
    let (_, elsewhere) = slot(&p, other.id, "key-00000001");
    assert!(repo.insert_slot(&elsewhere, b"x", T0, until).await.unwrap());
    let mut other_route = s.clone();
    other_route.route = "/v1/plan/tasks/".to_owned();
    assert!(
        repo.insert_slot(&other_route, b"x", T0, until)
            .await
            .unwrap()
    );
}

async fn racing_requests_take_a_slot_once(p: Ports) {
    let org = p.org("Racing slots").await;
    let (repo, s) = slot(&p, org.id, "key-race-0001");
    let until = T0 + Duration::seconds(120);
    let tries = (0..8).map(|_| {
        let (repo, s) = (repo.clone(), s.clone());
        tokio::spawn(async move { repo.insert_slot(&s, b"h", T0, until).await.unwrap() })
    });
    let mut won = 0;
    for t in tries {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1);
}

async fn an_abandoned_or_stale_slot_is_taken_over_once(p: Ports) {
    let org = p.org("Abandoned slots").await;
    let (repo, s) = slot(&p, org.id, "key-abandon-1");
    let until = T0 + Duration::seconds(120);
    let stale_before = T0 - Duration::hours(24);
    repo.insert_slot(&s, b"h", T0, until).await.unwrap();
    // Still locked: not taken.
    let now = T0 + Duration::seconds(60);
    let later = now + Duration::seconds(120);
    assert!(
        !repo
            .take_over_slot(&s, b"h", now, later, stale_before)
            .await
            .unwrap()
    );
    // Lock over: exactly one of several takers.
    let now = T0 + Duration::seconds(121);
    let later = now + Duration::seconds(120);
    let tries = (0..6).map(|_| {
        let (repo, s) = (repo.clone(), s.clone());
        tokio::spawn(async move {
            repo.take_over_slot(&s, b"h2", now, later, stale_before)
                .await
                .unwrap()
        })
    });
    let mut won = 0;
    for t in tries {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1);
    let found = repo.find_slot(&s).await.unwrap().unwrap();
    assert_eq!(
        (
            found.request_hash.as_slice(),
            found.locked_until,
            found.created_at
        ),
        (&b"h2"[..], later, now)
    );
    // An answered slot is taken over only once it is stale.
    let answer = StoredAnswer {
        status: 200,
        body: b"{}".to_vec(),
    };
    repo.complete_slot(&s, later, &answer).await.unwrap();
    let after = later + Duration::seconds(1);
    assert!(
        !repo
            .take_over_slot(
                &s,
                b"h3",
                after,
                after + Duration::seconds(120),
                after - Duration::hours(24)
            )
            .await
            .unwrap()
    );
    let day_later = now + Duration::hours(24);
    assert!(
        repo.take_over_slot(
            &s,
            b"h3",
            day_later,
            day_later + Duration::seconds(120),
            day_later - Duration::hours(24)
        )
        .await
        .unwrap()
    );
    let found = repo.find_slot(&s).await.unwrap().unwrap();
    assert!(found.answer.is_none());
    assert_eq!(found.request_hash, b"h3");
}

async fn answers_are_kept_under_the_lease_only(p: Ports) {
    let org = p.org("Answered slots").await;
    let (repo, s) = slot(&p, org.id, "key-answer-01");
    let until = T0 + Duration::seconds(120);
    repo.insert_slot(&s, b"h", T0, until).await.unwrap();
    let answer = StoredAnswer {
        status: 201,
        body: br#"{"uuid":"x"}"#.to_vec(),
    };
    // Another lease (a request whose slot was taken over): nothing kept, nothing released.
    let wrong = until + Duration::seconds(1);
    repo.complete_slot(&s, wrong, &answer).await.unwrap();
    repo.release_slot(&s, wrong).await.unwrap();
    let found = repo.find_slot(&s).await.unwrap().unwrap();
    assert!(found.answer.is_none());
    repo.complete_slot(&s, until, &answer).await.unwrap();
    assert_eq!(
        repo.find_slot(&s).await.unwrap().unwrap().answer,
        Some(answer.clone())
    );
    // Kept once: a second answer or a release changes nothing.
    let other = StoredAnswer {
        status: 200,
        body: b"other".to_vec(),
    };
    repo.complete_slot(&s, until, &other).await.unwrap();
    repo.release_slot(&s, until).await.unwrap();
    assert_eq!(
        repo.find_slot(&s).await.unwrap().unwrap().answer,
        Some(answer)
    );
    // A slot without an answer is released under its lease.
    let (_, s2) = slot(&p, org.id, "key-answer-02");
    repo.insert_slot(&s2, b"h", T0, until).await.unwrap();
    repo.release_slot(&s2, until).await.unwrap();
    assert!(repo.find_slot(&s2).await.unwrap().is_none());
}

async fn old_slots_are_pruned(p: Ports) {
    // Long ago, so that no other test's slots are in the pruned range.
    let t = datetime!(2001-01-01 00:00 UTC);
    let org = p.org("Old slots").await;
    let (repo, old) = slot(&p, org.id, "key-prune-old");
    let (_, young) = slot(&p, org.id, "key-prune-new");
    repo.insert_slot(&old, b"h", t, t).await.unwrap();
    let later = t + Duration::hours(2);
    repo.insert_slot(&young, b"h", later, later).await.unwrap();
    assert_eq!(repo.prune_slots(t + Duration::hours(1)).await.unwrap(), 1);
    assert!(repo.find_slot(&old).await.unwrap().is_none());
    assert!(repo.find_slot(&young).await.unwrap().is_some());
}
