//! Replies on the platform answer the round's questions in order, through the response rules.

use teamcomm_forms::checkins::CheckinRepository;
use teamcomm_kernel::UserId;
use time::macros::{date, datetime};

use super::*;

#[tokio::test]
async fn replies_answer_the_questions_in_order_into_one_completed_response() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    let checkin = w.standup("Europe/Madrid", false, |_| {}).await;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    // Before the question lands there is nothing to answer in that conversation.
    assert!(w.reply(&w.ada, "too early").await.is_none());
    w.deliver().await;

    let round = w.reply(&w.ada, "  Shipped the report ").await.unwrap();
    assert_eq!(
        (round.asked, round.answered, round.completed),
        (2, 1, false)
    );
    let stored = w
        .checkin_store
        .responses_between(
            w.org.id,
            checkin.id,
            w.ada.id,
            date!(2026 - 11 - 23),
            date!(2026 - 11 - 23),
        )
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].answers.len(), 1);
    assert_eq!(stored[0].answers[0].response, "Shipped the report");
    // The second question is optional: the response is complete already, and says so once.
    assert_eq!(w.events(EventType::FollowupsResponseCompleted).len(), 1);

    w.deliver().await;
    let round = w.reply(&w.ada, "Nothing").await.unwrap();
    assert_eq!((round.asked, round.answered, round.completed), (2, 2, true));
    let stored = w
        .checkin_store
        .responses_between(
            w.org.id,
            checkin.id,
            w.ada.id,
            date!(2026 - 11 - 23),
            date!(2026 - 11 - 23),
        )
        .await
        .unwrap();
    let answers: Vec<&serde_json::Value> = stored[0].answers.iter().map(|a| &a.response).collect();
    assert_eq!(answers, ["Shipped the report", "Nothing"]);
    assert!(stored[0].completed);
    assert_eq!(w.events(EventType::FollowupsResponseUpdated).len(), 1);
    // Nothing more is asked, and a further message is not an answer.
    w.deliver().await;
    assert!(w.reply(&w.ada, "thanks").await.is_none());
    assert_eq!(w.messages_to(&w.ada).len(), 2);
}

#[tokio::test]
async fn a_reply_from_elsewhere_or_reported_twice_answers_nothing() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    let _ = w.standup("Europe/Madrid", false, |_| {}).await;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    w.deliver().await;
    let engine = w.engine();
    let now = datetime!(2026-11-23 08:05 UTC);
    let in_channel = InboundEvent::Reply {
        platform_user_id: slack_id(&w.ada),
        channel_id: "C-standup".into(),
        message_id: "r1".into(),
        text: "wrong place".into(),
        in_reply_to: None,
    };
    let none = engine
        .take_reply(w.org.id, PlatformKind::Slack, &in_channel, now)
        .await;
    assert!(
        none.unwrap().is_none(),
        "a channel is not the conversation asked in"
    );
    let stranger = InboundEvent::Reply {
        platform_user_id: "U-nobody".into(),
        channel_id: format!("D-{}", slack_id(&w.ada)),
        message_id: "r2".into(),
        text: "hi".into(),
        in_reply_to: None,
    };
    let none = engine
        .take_reply(w.org.id, PlatformKind::Slack, &stranger, now)
        .await;
    assert!(none.unwrap().is_none());

    let reply = InboundEvent::Reply {
        platform_user_id: slack_id(&w.ada),
        channel_id: format!("D-{}", slack_id(&w.ada)),
        message_id: "r3".into(),
        text: "Shipped".into(),
        in_reply_to: None,
    };
    assert!(
        engine
            .take_reply(w.org.id, PlatformKind::Slack, &reply, now)
            .await
            .unwrap()
            .is_some()
    );
    w.deliver().await;
    assert!(
        engine
            .take_reply(w.org.id, PlatformKind::Slack, &reply, now)
            .await
            .unwrap()
            .is_none(),
        "the same reply reported again"
    );
    let ada = w
        .rounds
        .all()
        .into_iter()
        .find(|r| r.user_id == w.ada.id)
        .unwrap();
    assert_eq!(ada.answered, 1);
    let _: UserId = ada.user_id;
}

#[tokio::test]
async fn an_answer_the_rules_refuse_is_explained_and_the_question_still_waits() {
    let w = World::new(datetime!(2026-11-23 08:00 UTC)).await;
    let settings = CheckinInput {
        name: Some("Pulse".into()),
        participants: Some(ParticipantsInput {
            user_uuids: vec![w.ada.id],
            team_uuids: vec![],
        }),
        schedule: Some(ScheduleInput {
            days: Some((0..=6).collect()),
            time: Some("09:00".into()),
            timezone: Some("Europe/Madrid".into()),
        }),
        start_on: Some("2026-01-01".into()),
        ..CheckinInput::default()
    };
    let new = NewCheckin {
        settings,
        questions: Some(vec![NewQuestion {
            question_type: Some(teamcomm_forms::questions::QuestionType::Numeric),
            ..question("How many hours of focus?", true)
        }]),
        ..NewCheckin::default()
    };
    let checkin = w
        .checkins()
        .create_checkin(&w.admin, new)
        .await
        .unwrap()
        .checkin;
    w.tick(datetime!(2026-11-23 08:00 UTC)).await;
    w.deliver().await;

    let round = w.reply(&w.ada, "lots").await.unwrap();
    assert_eq!((round.answered, round.completed), (0, false));
    let told = w.messages_to(&w.ada);
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(
        told[1],
        "I could not take that answer: Expected a number. Please answer again."
    );

    // The rules read the number from the text.
    let round = w.reply(&w.ada, "3.5").await.unwrap();
    assert_eq!((round.answered, round.completed), (1, true));
    let stored = w
        .checkin_store
        .responses_between(
            w.org.id,
            checkin.id,
            w.ada.id,
            date!(2026 - 11 - 23),
            date!(2026 - 11 - 23),
        )
        .await
        .unwrap();
    assert_eq!(stored[0].answers[0].response, 3.5);
}
