//! `MoodRepository`: one score per person per day.

use teamcomm_kernel::{OrgId, UserId};
use time::macros::date;

use crate::ports::{Ports, assert_conflict, assert_refused_by_check};

contract!(
    a_score_reads_back_and_is_kept_once_a_day,
    scores_refuse_unknown_people_and_organizations,
    scores_outside_the_stored_range_are_refused,
);

async fn a_score_reads_back_and_is_kept_once_a_day(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let day = date!(2026 - 11 - 20);
    let entry = p.moods.insert_mood(org.id, ann.id, day, 4).await.unwrap();
    assert_eq!((entry.user_id, entry.date, entry.score), (ann.id, day, 4));
    assert_eq!(
        p.moods.get_mood(ann.id, day).await.unwrap(),
        Some(entry.clone())
    );
    assert_conflict(
        p.moods.insert_mood(org.id, ann.id, day, 2).await,
        "mood_entries_pkey",
    );
    assert_eq!(
        p.moods
            .get_mood(ann.id, day)
            .await
            .unwrap()
            .map(|e| e.score),
        Some(4)
    );
    let next = p
        .moods
        .insert_mood(org.id, ann.id, day.next_day().unwrap(), 1)
        .await
        .unwrap();
    assert_eq!(next.score, 1);
    p.moods.insert_mood(org.id, bob.id, day, 5).await.unwrap();
    assert_eq!(
        p.moods
            .get_mood(bob.id, day)
            .await
            .unwrap()
            .map(|e| e.score),
        Some(5)
    );
    assert_eq!(
        p.moods
            .get_mood(bob.id, date!(2026 - 11 - 19))
            .await
            .unwrap(),
        None
    );
    assert_eq!(p.moods.get_mood(UserId::new(), day).await.unwrap(), None);
}

async fn scores_refuse_unknown_people_and_organizations(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let day = date!(2026 - 11 - 20);
    assert_conflict(
        p.moods.insert_mood(org.id, UserId::new(), day, 3).await,
        "mood_entries_user_id_fkey",
    );
    assert_conflict(
        p.moods.insert_mood(OrgId::new(), ann.id, day, 3).await,
        "mood_entries_organization_id_fkey",
    );
    assert_eq!(p.moods.get_mood(ann.id, day).await.unwrap(), None);
}

async fn scores_outside_the_stored_range_are_refused(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let day = date!(2026 - 11 - 20);
    for score in [0, 6, -1] {
        assert_refused_by_check(p.moods.insert_mood(org.id, ann.id, day, score).await);
    }
    assert_eq!(p.moods.get_mood(ann.id, day).await.unwrap(), None);
}
