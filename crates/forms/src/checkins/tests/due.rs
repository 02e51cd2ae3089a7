//! Which check-ins are due for a person on a local day, and the instant each asks them, across
//! zones and daylight-saving changes.

use time::macros::{date, datetime};

use super::*;

/// Every day at `time` in `zone`, for the `eng` team.
async fn daily_at(w: &World, name: &str, time: &str, zone: &str, own_zone: bool) -> Checkin {
    let settings = CheckinInput {
        schedule: Some(ScheduleInput {
            days: Some((0..=6).collect()),
            time: Some(time.into()),
            timezone: Some(zone.into()),
        }),
        use_participant_timezone: Some(own_zone),
        start_on: Some("2026-01-01".into()),
        ..every_day(name, &[], &[w.eng])
    };
    w.create(&w.admin, settings).await.checkin
}

async fn due(w: &World, person: &User, day: time::Date) -> Vec<(String, OffsetDateTime)> {
    w.service()
        .due_checkins(w.org.id, person, day)
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.checkin.name, d.trigger_at))
        .collect()
}

#[tokio::test]
async fn madrid_mornings_move_by_an_hour_in_utc_across_both_changes() {
    let w = World::new().await;
    daily_at(&w, "Standup", "09:00", "Europe/Madrid", false).await;
    let cases = [
        // Winter (UTC+1), then the spring change on Sunday 29 March (UTC+2).
        (date!(2026 - 03 - 28), datetime!(2026-03-28 08:00 UTC)),
        (date!(2026 - 03 - 29), datetime!(2026-03-29 07:00 UTC)),
        // Summer, then the autumn change on Sunday 25 October.
        (date!(2026 - 10 - 24), datetime!(2026-10-24 07:00 UTC)),
        (date!(2026 - 10 - 25), datetime!(2026-10-25 08:00 UTC)),
    ];
    for (day, at) in cases {
        assert_eq!(
            due(&w, &w.ada, day).await,
            [("Standup".to_owned(), at)],
            "{day}"
        );
    }
}

#[tokio::test]
async fn times_the_change_skips_or_repeats_resolve_once() {
    let w = World::new().await;
    daily_at(&w, "Night shift", "02:30", "Europe/Madrid", false).await;
    // 02:30 does not exist on 29 March (02:00 -> 03:00): asked at 03:30 CEST.
    assert_eq!(
        due(&w, &w.ada, date!(2026 - 03 - 29)).await,
        [("Night shift".to_owned(), datetime!(2026-03-29 01:30 UTC))]
    );
    // 02:30 happens twice on 25 October: asked once, at the first (CEST).
    assert_eq!(
        due(&w, &w.ada, date!(2026 - 10 - 25)).await,
        [("Night shift".to_owned(), datetime!(2026-10-25 00:30 UTC))]
    );
}

#[tokio::test]
async fn participants_own_zones_ask_each_at_their_own_nine() {
    let w = World::new().await;
    daily_at(&w, "Own zones", "09:00", "UTC", true).await;
    let ny = w.in_zone(&w.ada, "America/New_York").await;
    let kolkata = w.in_zone(&w.max, "Asia/Kolkata").await;
    let day = date!(2026 - 11 - 23);
    assert_eq!(
        due(&w, &ny, day).await,
        [("Own zones".to_owned(), datetime!(2026-11-23 14:00 UTC))]
    );
    assert_eq!(
        due(&w, &kolkata, day).await,
        [("Own zones".to_owned(), datetime!(2026-11-23 03:30 UTC))]
    );
    let kiritimati = w.in_zone(&w.max, "Pacific/Kiritimati").await;
    assert_eq!(
        due(&w, &kiritimati, day).await,
        [("Own zones".to_owned(), datetime!(2026-11-22 19:00 UTC))],
        "UTC+14: the 23rd's morning is the 22nd's evening in UTC"
    );
    // New York's spring change (8 March): 13:00 UTC after, 14:00 before.
    assert_eq!(
        due(&w, &ny, date!(2026 - 03 - 07)).await,
        [("Own zones".to_owned(), datetime!(2026-03-07 14:00 UTC))]
    );
    assert_eq!(
        due(&w, &ny, date!(2026 - 03 - 09)).await,
        [("Own zones".to_owned(), datetime!(2026-03-09 13:00 UTC))]
    );
    // Without participants' zones the schedule's zone decides, wherever the person is.
    daily_at(&w, "Schedule zone", "09:00", "Asia/Kolkata", false).await;
    let both = due(&w, &ny, day).await;
    assert_eq!(
        both,
        [
            ("Schedule zone".to_owned(), datetime!(2026-11-23 03:30 UTC)),
            ("Own zones".to_owned(), datetime!(2026-11-23 14:00 UTC)),
        ],
        "soonest first"
    );
}

#[tokio::test]
async fn only_running_scheduled_check_ins_the_person_takes_part_in_are_due() {
    let w = World::new().await;
    let s = w.service();
    let weekly = CheckinInput {
        schedule: Some(ScheduleInput {
            days: Some(vec![1, 3]),
            time: Some("10:00".into()),
            timezone: Some("America/New_York".into()),
        }),
        frequency: Some(2),
        start_on: Some("2026-11-02".into()),
        end_on: Some(Some("2026-12-31".into())),
        ..every_day("Fortnightly", &[], &[w.eng])
    };
    w.create(&w.admin, weekly).await;
    let on = |d| due(&w, &w.ada, d);
    // Weeks of 1 and 15 November count from 2 November's week; 8 and 22 do not.
    assert_eq!(
        on(date!(2026 - 11 - 16)).await.len(),
        1,
        "a Monday of an even week"
    );
    assert_eq!(on(date!(2026 - 11 - 18)).await.len(), 1, "its Wednesday");
    assert!(on(date!(2026 - 11 - 17)).await.is_empty(), "a Tuesday");
    assert!(on(date!(2026 - 11 - 23)).await.is_empty(), "an odd week");
    assert!(
        on(date!(2027 - 01 - 11)).await.is_empty(),
        "after the last day"
    );
    assert!(
        on(date!(2026 - 10 - 26)).await.is_empty(),
        "before the first day"
    );

    // Paused, archived and event-started check-ins are never due; nor for non-participants.
    let paused = daily_at(&w, "Paused", "09:00", "UTC", false).await;
    let archived = daily_at(&w, "Archived", "09:00", "UTC", false).await;
    let triggered = daily_at(&w, "Triggered", "09:00", "UTC", false).await;
    s.update_config(
        &w.admin,
        paused.id,
        CheckinInput {
            is_active: Some(false),
            ..CheckinInput::default()
        },
    )
    .await
    .unwrap();
    s.archive_checkin(&w.admin, archived.id).await.unwrap();
    s.update_config(
        &w.admin,
        triggered.id,
        CheckinInput {
            is_trigger_based: Some(true),
            ..CheckinInput::default()
        },
    )
    .await
    .unwrap();
    let running = daily_at(&w, "Running", "09:00", "UTC", false).await;
    let names: Vec<String> = on(date!(2026 - 11 - 16))
        .await
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["Running", "Fortnightly"]);
    assert!(due(&w, &w.bob, date!(2026 - 11 - 16)).await.is_empty());
    assert!(
        due(&w, &w.admin, date!(2026 - 11 - 16)).await.is_empty(),
        "authoring is not taking part"
    );
    assert!(running.is_due_on(date!(2026 - 11 - 16)));
}
