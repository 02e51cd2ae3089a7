//! At the report time the day closes: the report goes to the report channels, all at once or
//! one message per response, with `followups.daily.finished`, once.

use time::macros::datetime;

use super::*;

#[tokio::test]
async fn the_report_is_posted_all_at_once_at_report_time_and_the_day_finished_once() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    let checkin = w
        .standup("Europe/Madrid", false, |s| {
            s.time_for_report = Some(Some("17:00".into()));
        })
        .await;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    w.deliver().await;
    w.reply(&w.ada, "Shipped").await.unwrap();
    // 17:00 in Madrid is 16:00 UTC.
    assert_eq!(w.tick(datetime!(2026-11-23 15:59 UTC)).await.reports, 0);
    w.deliver().await;
    assert!(
        w.reply(&w.ada, "late").await.is_some(),
        "still open at 15:59"
    );
    let summary = w.tick(datetime!(2026-11-23 16:00 UTC)).await;
    assert_eq!(summary.reports, 1);
    let reports = w.reports();
    assert_eq!(reports.len(), 1);
    let text = &reports[0].content.text;
    assert!(
        text.starts_with("*Standup* report for 2026-11-23"),
        "{text}"
    );
    assert!(
        text.contains("*Ada Test*") && text.contains("Shipped") && text.contains("late"),
        "{text}"
    );
    assert!(text.ends_with("No answer from: Ned Test"), "{text}");
    assert_eq!(reports[0].sender, w.admin.id, "on behalf of the author");

    let finished = w.events(EventType::FollowupsDailyFinished);
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].object_id, Some(checkin.id));
    assert_eq!(finished[0].data["report_date"], "2026-11-23");
    assert_eq!(finished[0].data["expected_responses"], 2);
    assert_eq!(finished[0].data["completed_responses"], 1);
    assert!(w.rounds.all().iter().all(|r| r.closed_at.is_some()));

    // Nothing happens twice, and a closed round takes no answers.
    assert_eq!(w.tick(datetime!(2026-11-23 16:01 UTC)).await.reports, 0);
    assert_eq!(w.reports().len(), 1);
    assert!(w.reply(&w.ned, "sorry").await.is_none());
    // The next day opens new rounds.
    assert_eq!(w.tick(datetime!(2026-11-24 08:00 UTC)).await.opened, 2);
}

#[tokio::test]
async fn one_by_one_posts_a_message_per_response_at_the_end_of_the_day() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    w.standup("Europe/Madrid", false, |s| {
        s.send_reports_one_by_one = Some(true);
    })
    .await;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    w.deliver().await;
    w.reply(&w.ned, "Fixed the build").await.unwrap();
    w.reply(&w.ada, "Wrote docs").await.unwrap();
    // No report time: the day ends at midnight in Madrid (23:00 UTC).
    assert_eq!(w.tick(datetime!(2026-11-23 22:59 UTC)).await.reports, 0);
    assert_eq!(w.tick(datetime!(2026-11-23 23:00 UTC)).await.reports, 1);
    let texts: Vec<String> = w.reports().into_iter().map(|m| m.content.text).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("Ned Test") && texts[0].contains("Fixed the build"));
    assert!(texts[1].contains("Ada Test") && texts[1].contains("Wrote docs"));
}

#[tokio::test]
async fn a_report_time_before_the_trigger_leaves_the_day_open_until_its_end() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    w.standup("Europe/Madrid", false, |s| {
        s.time_for_report = Some(Some("08:00".into()));
    })
    .await;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    let closes: Vec<_> = w.rounds.all().iter().map(|r| r.closes_at).collect();
    assert_eq!(
        closes,
        [datetime!(2026-11-23 23:00 UTC); 2],
        "midnight in Madrid"
    );
    assert_eq!(w.tick(datetime!(2026-11-23 22:59 UTC)).await.reports, 0);
    assert_eq!(w.tick(datetime!(2026-11-23 23:00 UTC)).await.reports, 1);
}
