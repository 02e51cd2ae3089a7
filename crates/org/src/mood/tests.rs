use teamcomm_kernel::ErrorCode;
use time::macros::date;

use super::*;
use crate::test_world::{World, assert_field_error, code};

#[test]
fn scores_are_one_to_five() {
    assert_eq!(validate_score(1).unwrap(), 1);
    assert_eq!(validate_score(5).unwrap(), 5);
    for bad in [0, 6, -1, i64::MAX] {
        assert_eq!(code(validate_score(bad)), ErrorCode::InvalidScore, "{bad}");
    }
}

#[test]
fn a_mood_date_is_recent_and_not_in_the_future() {
    let today = date!(2026 - 11 - 23);
    let oldest = today - MOOD_BACKFILL;
    for ok in [today, date!(2026 - 01 - 05), oldest] {
        assert_eq!(validate_mood_date(ok, today).unwrap(), ok);
    }
    for bad in [
        today.next_day().unwrap(),
        date!(2999 - 01 - 01),
        oldest.previous_day().unwrap(),
        date!(1900 - 01 - 01),
    ] {
        assert_field_error(validate_mood_date(bad, today), "date");
    }
}

#[tokio::test]
async fn one_score_per_person_per_day() {
    let w = World::new().await;
    let mood = w.mood();
    assert_eq!(mood.mood(&w.member, None).await.unwrap(), None);

    let entry = mood.track_mood(&w.member, 4, None).await.unwrap();
    assert_eq!(
        (entry.user_id, entry.date, entry.score),
        (w.member.id, w.today(), 4)
    );
    assert_eq!(
        code(mood.track_mood(&w.member, 5, None).await),
        ErrorCode::MotivationScoreAlreadyCompleted
    );
    let kept = mood
        .mood(&w.member, Some(w.today()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.score, 4, "the first score stays");

    // Another day, and another person's day, are their own.
    let earlier = date!(2026 - 01 - 05);
    mood.track_mood(&w.member, 2, Some(earlier)).await.unwrap();
    assert_eq!(
        mood.mood(&w.member, Some(earlier))
            .await
            .unwrap()
            .unwrap()
            .score,
        2
    );
    assert_eq!(mood.mood(&w.guest, None).await.unwrap(), None);
    mood.track_mood(&w.guest, 1, None).await.unwrap();
    assert_eq!(mood.mood(&w.guest, None).await.unwrap().unwrap().score, 1);
}

#[tokio::test]
async fn a_bad_day_or_score_stores_nothing() {
    let w = World::new().await;
    let mood = w.mood();
    let tomorrow = w.today().next_day().unwrap();
    for day in [tomorrow, date!(1900 - 01 - 01)] {
        assert_field_error(mood.track_mood(&w.member, 3, Some(day)).await, "date");
        assert_eq!(mood.mood(&w.member, Some(day)).await.unwrap(), None);
    }
    for score in [0, 6] {
        assert_eq!(
            code(mood.track_mood(&w.member, score, None).await),
            ErrorCode::InvalidScore
        );
    }
    assert_eq!(mood.mood(&w.member, None).await.unwrap(), None);
}

#[tokio::test]
async fn the_default_day_is_the_actors_own() {
    let w = World::new().await;
    // 10:30 UTC on 23 November: 24 November in Kiritimati, 22 November in Pago Pago.
    w.set_now(time::macros::datetime!(2026-11-23 10:30 UTC));
    let in_zone = |user: &User, zone: &str| User {
        timezone: zone.to_owned(),
        ..user.clone()
    };
    let kiritimati = in_zone(&w.member, "Pacific/Kiritimati");
    let pago_pago = in_zone(&w.guest, "Pacific/Pago_Pago");
    let mood = w.mood();

    let early = mood.track_mood(&kiritimati, 4, None).await.unwrap();
    assert_eq!(early.date, date!(2026 - 11 - 24));
    let late = mood.track_mood(&pago_pago, 2, None).await.unwrap();
    assert_eq!(late.date, date!(2026 - 11 - 22));
    assert_eq!(mood.mood(&kiritimati, None).await.unwrap(), Some(early));
    assert_eq!(mood.mood(&pago_pago, None).await.unwrap(), Some(late));

    // UTC's 23rd is still the future in Pago Pago, and yesterday in Kiritimati.
    let utc_today = date!(2026 - 11 - 23);
    assert_field_error(
        mood.track_mood(&pago_pago, 3, Some(utc_today)).await,
        "date",
    );
    assert_eq!(mood.mood(&pago_pago, Some(utc_today)).await.unwrap(), None);
    let yesterday = mood
        .track_mood(&kiritimati, 5, Some(utc_today))
        .await
        .unwrap();
    assert_eq!(yesterday.date, utc_today);

    // Just past midnight UTC it is still the 23rd in Pago Pago.
    w.set_now(time::macros::datetime!(2026-11-24 00:30 UTC));
    let admin = in_zone(&w.admin, "Pacific/Pago_Pago");
    let entry = mood.track_mood(&admin, 1, None).await.unwrap();
    assert_eq!(entry.date, utc_today);
}
