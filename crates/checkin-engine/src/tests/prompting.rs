//! Rounds open at each participant's local trigger time, once, and ask the first question;
//! reminders follow as configured.

use teamcomm_forms::checkins::{AnswerInput, ResponseInput};
use time::macros::{date, datetime};

use super::*;

#[tokio::test]
async fn each_participant_is_asked_at_nine_in_their_own_zone_across_madrids_spring_change() {
    let w = World::new(datetime!(2026-03-28 00:00 UTC)).await;
    w.standup("UTC", true, |_| {}).await;
    // Saturday 28 March: Madrid is UTC+1 (09:00 = 08:00 UTC), New York already UTC-4 (13:00).
    assert_eq!(w.tick(datetime!(2026-03-28 07:59 UTC)).await.opened, 0);
    assert_eq!(w.tick(datetime!(2026-03-28 08:00 UTC)).await.opened, 1);
    assert_eq!(w.messages_to(&w.ada).len(), 1, "Ada is asked");
    assert!(w.messages_to(&w.ned).is_empty(), "Ned's nine is later");
    assert_eq!(w.tick(datetime!(2026-03-28 12:59 UTC)).await.opened, 0);
    assert_eq!(w.tick(datetime!(2026-03-28 13:00 UTC)).await.opened, 1);
    assert_eq!(w.messages_to(&w.ned).len(), 1);

    // Sunday 29 March: Madrid moved to UTC+2 overnight, so Ada's nine is 07:00 UTC.
    assert_eq!(w.tick(datetime!(2026-03-29 06:59 UTC)).await.opened, 0);
    assert_eq!(w.tick(datetime!(2026-03-29 07:00 UTC)).await.opened, 1);
    assert_eq!(w.tick(datetime!(2026-03-29 13:00 UTC)).await.opened, 1);
    let days: Vec<(String, time::Date)> = w
        .rounds
        .all()
        .iter()
        .map(|r| {
            let who = if r.user_id == w.ada.id { "ada" } else { "ned" };
            (who.to_owned(), r.day)
        })
        .collect();
    assert_eq!(
        days,
        [
            ("ada".to_owned(), date!(2026 - 03 - 28)),
            ("ned".to_owned(), date!(2026 - 03 - 28)),
            ("ada".to_owned(), date!(2026 - 03 - 29)),
            ("ned".to_owned(), date!(2026 - 03 - 29)),
        ]
    );
    let first = &w.messages_to(&w.ada)[0];
    assert!(
        first.contains("Standup") && first.ends_with("What did you do?"),
        "{first}"
    );
}

#[tokio::test]
async fn a_round_missed_while_down_is_opened_once_on_return_the_same_day_only() {
    let w = World::new(datetime!(2026-11-23 00:00 UTC)).await;
    w.standup("Europe/Madrid", false, |_| {}).await;
    // Down from before 08:00 UTC (09:00 in Madrid) until 15:00: both are asked once.
    let back = w.tick(datetime!(2026-11-23 15:00 UTC)).await;
    assert_eq!((back.opened, back.questions), (2, 2));
    let again = w.tick(datetime!(2026-11-23 15:01 UTC)).await;
    assert_eq!((again.opened, again.questions), (0, 0));
    assert_eq!(w.messages_to(&w.ada).len(), 1);

    // Down the whole of the 24th (Madrid's day): that day is not asked any more on the 25th.
    w.tick(datetime!(2026-11-25 07:00 UTC)).await;
    let days: Vec<time::Date> = w.rounds.all().iter().map(|r| r.day).collect();
    assert_eq!(days, [date!(2026 - 11 - 23), date!(2026 - 11 - 23)]);
}

#[tokio::test]
async fn two_engines_ticking_at_once_ask_once() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    w.standup("Europe/Madrid", false, |_| {}).await;
    let (one, two) = (w.engine(), w.engine());
    let at = datetime!(2026-11-23 08:00 UTC);
    let (a, b) = tokio::join!(one.tick(at), two.tick(at));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.opened + b.opened, 2, "each round opened by one of them");
    assert_eq!(w.messages_to(&w.ada).len(), 1);
    assert_eq!(w.messages_to(&w.ned).len(), 1);
    assert_eq!(w.queue.all().len(), 2, "one delivery job per question");
}

#[tokio::test]
async fn who_answered_through_the_api_first_is_not_asked() {
    let w = World::new(datetime!(2026-11-23 07:00 UTC)).await;
    let checkin = w.standup("Europe/Madrid", false, |_| {}).await;
    let input = ResponseInput {
        answers: checkin
            .questions
            .questions
            .iter()
            .enumerate()
            .map(|(i, q)| AnswerInput {
                uuid: q.uuid,
                index: Some(i as u16),
                response: "done early".into(),
            })
            .collect(),
        ..ResponseInput::default()
    };
    w.checkins()
        .submit_response(&w.ada, checkin.id, &input, None)
        .await
        .unwrap();
    let summary = w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    assert_eq!((summary.opened, summary.questions), (2, 1));
    assert!(w.messages_to(&w.ada).is_empty());
    assert_eq!(w.messages_to(&w.ned).len(), 1);
}

#[tokio::test]
async fn reminders_follow_the_configured_count_and_interval_until_answered() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    w.standup("Europe/Madrid", false, |s| {
        s.reminders_max_count = Some(2);
        s.reminders_frequency_time = Some(30);
    })
    .await;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    assert_eq!(w.tick(datetime!(2026-11-23 08:29 UTC)).await.reminders, 0);
    assert_eq!(w.tick(datetime!(2026-11-23 08:30 UTC)).await.reminders, 2);
    assert_eq!(w.tick(datetime!(2026-11-23 08:45 UTC)).await.reminders, 0);
    // Ada answers the first question: she is asked the next one, and reminded no more.
    w.deliver().await;
    assert!(w.reply(&w.ada, "Shipped it").await.is_some());
    // Each reminder counts from the last message: Ned's second is due at 09:00, Ada's (for the
    // new question, asked at 08:45) at 09:15.
    assert_eq!(
        w.tick(datetime!(2026-11-23 09:00 UTC)).await.reminders,
        1,
        "Ned's second"
    );
    assert_eq!(
        w.tick(datetime!(2026-11-23 09:15 UTC)).await.reminders,
        1,
        "Ada's second"
    );
    assert_eq!(
        w.tick(datetime!(2026-11-23 12:00 UTC)).await.reminders,
        0,
        "two at most"
    );
    let ned = w.messages_to(&w.ned);
    assert_eq!(ned.len(), 3, "{ned:?}");
    assert!(ned[1].starts_with("Reminder: *Standup*") && ned[1].ends_with("What did you do?"));
    let ada = w.messages_to(&w.ada);
    assert_eq!(
        ada.len(),
        4,
        "question, reminder, next question, reminder: {ada:?}"
    );
    assert_eq!(ada[2], "Anything blocking you?");
    assert!(ada[3].ends_with("Anything blocking you?"));
}

#[tokio::test]
async fn no_reminders_without_an_interval_and_none_after_the_round_closes() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    w.standup("Europe/Madrid", false, |s| {
        s.reminders_max_count = Some(3);
        s.reminders_frequency_time = Some(0);
    })
    .await;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    assert_eq!(w.tick(datetime!(2026-11-23 12:00 UTC)).await.reminders, 0);

    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    w.standup("Europe/Madrid", false, |s| {
        s.reminders_max_count = Some(3);
        s.reminders_frequency_time = Some(60);
        s.time_for_report = Some(Some("10:00".into()));
    })
    .await;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    // The round closes at 10:00 in Madrid (09:00 UTC): the report, not a reminder.
    let at_close = w.tick(datetime!(2026-11-23 09:00 UTC)).await;
    assert_eq!((at_close.reminders, at_close.reports), (0, 1));
}
