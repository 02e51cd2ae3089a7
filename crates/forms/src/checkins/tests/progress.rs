//! Progress from the command line: which check-ins are due and pending today, how an update's
//! parts land on questions, and attaching it as today's responses (created, then updated).

use serde_json::{Value, json};
use time::macros::{date, datetime};

use super::*;

fn q(text: &str, kind: QuestionType, required: bool, blocker: bool) -> NewQuestion {
    NewQuestion {
        question_type: Some(kind),
        required: Some(required),
        is_blocker: Some(blocker),
        options: (kind == QuestionType::MultipleChoice).then(|| vec!["Good".into(), "Bad".into()]),
        ..text_question(text)
    }
}

/// A standup of the `eng` team: done, doing, a blocker question of `blocker_kind`, and a
/// multiple-choice mood.
async fn standup_with(w: &World, name: &str, blocker_kind: QuestionType) -> Checkin {
    let new = NewCheckin {
        settings: every_day(name, &[], &[w.eng]),
        questions: Some(vec![
            q(
                "What did you do yesterday?",
                QuestionType::Text,
                true,
                false,
            ),
            q(
                "How do you feel?",
                QuestionType::MultipleChoice,
                false,
                false,
            ),
            q("What will you do today?", QuestionType::Text, true, false),
            q("Is anything in your way?", blocker_kind, false, true),
        ]),
        ..NewCheckin::default()
    };
    w.service()
        .create_checkin(&w.admin, new)
        .await
        .unwrap()
        .checkin
}

fn update(
    message: Option<&str>,
    done: Option<&str>,
    doing: Option<&str>,
    blocked: Option<&str>,
) -> ProgressUpdate {
    ProgressUpdate::new(message, done, doing, blocked).unwrap()
}

/// The answers by question text.
fn by_text(c: &Checkin, answers: &[(Uuid, Value)]) -> Vec<(String, Value)> {
    answers
        .iter()
        .map(|(u, v)| {
            let q = c.questions.get(*u).unwrap();
            (q.question.clone(), v.clone())
        })
        .collect()
}

#[test]
fn an_update_needs_a_part_and_parts_have_a_length() {
    let e = ProgressUpdate::new(None, Some("  "), None, Some("")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::ParamsValidationError);
    let long = "x".repeat(MAX_UPDATE_PART_CHARS + 1);
    let e = ProgressUpdate::new(None, Some(&long), None, None).unwrap_err();
    assert_eq!(e.code(), ErrorCode::ParamsValidationError);
    assert!(
        e.to_string().contains("done") || format!("{e:?}").contains("done"),
        "{e:?}"
    );
    let u = update(Some(" hi "), None, None, None);
    assert_eq!(u.message(), Some("hi"));
}

#[tokio::test]
async fn parts_land_on_done_doing_and_the_blocker_question() {
    let w = World::new().await;
    let c = standup_with(&w, "Standup", QuestionType::Text).await;
    let got = progress_answers(
        &c.questions,
        &update(None, Some("Auth module"), Some("Tests"), Some("CI is red")),
    );
    assert_eq!(
        by_text(&c, &got),
        [
            (
                "What did you do yesterday?".to_owned(),
                json!("Auth module")
            ),
            ("What will you do today?".to_owned(), json!("Tests")),
            ("Is anything in your way?".to_owned(), json!("CI is red")),
        ]
    );
    // A message alone: the first text question.
    let got = progress_answers(&c.questions, &update(Some("Shipped v2"), None, None, None));
    assert_eq!(
        by_text(&c, &got),
        [("What did you do yesterday?".to_owned(), json!("Shipped v2"))]
    );
    // A message with parts: the next free text question, then folded into the first answer.
    let got = progress_answers(
        &c.questions,
        &update(Some("Also: lunch"), Some("A"), None, None),
    );
    assert_eq!(
        by_text(&c, &got),
        [
            ("What did you do yesterday?".to_owned(), json!("A")),
            ("What will you do today?".to_owned(), json!("Also: lunch")),
        ]
    );
    let got = progress_answers(
        &c.questions,
        &update(Some("More"), Some("A"), Some("B"), None),
    );
    assert_eq!(got[0].1, json!("A\n\nMore"));
}

#[tokio::test]
async fn a_yes_no_blocker_is_answered_yes_or_no_and_the_words_kept() {
    let w = World::new().await;
    let c = standup_with(&w, "Standup", QuestionType::Boolean).await;
    let got = progress_answers(&c.questions, &update(None, Some("A"), None, Some("None")));
    assert_eq!(
        by_text(&c, &got),
        [
            ("What did you do yesterday?".to_owned(), json!("A")),
            ("Is anything in your way?".to_owned(), json!(false)),
        ]
    );
    let got = progress_answers(
        &c.questions,
        &update(None, Some("A"), None, Some("Waiting on review")),
    );
    assert_eq!(
        by_text(&c, &got),
        [
            (
                "What did you do yesterday?".to_owned(),
                json!("A\n\nBlocked: Waiting on review")
            ),
            ("Is anything in your way?".to_owned(), json!(true)),
        ]
    );
}

#[tokio::test]
async fn without_a_blocker_flag_a_question_about_blocking_takes_blocked() {
    let w = World::new().await;
    // The two questions of `with_questions`: "What did you do?", "Anything blocking you?".
    let c = w.standup(|_| {}).await;
    let got = progress_answers(&c.questions, &update(None, Some("A"), Some("B"), Some("C")));
    assert_eq!(
        by_text(&c, &got),
        [
            ("What did you do?".to_owned(), json!("A\n\nDoing: B")),
            ("Anything blocking you?".to_owned(), json!("C")),
        ]
    );
}

#[tokio::test]
async fn due_and_pending_today_are_each_check_ins_own_day() {
    let w = World::new().await;
    let s = w.service();
    let daily = w.standup(|_| {}).await;
    // Weekends only: not due on a Monday.
    w.standup(|c| {
        c.name = Some("Weekend".into());
        c.schedule.as_mut().unwrap().days = Some(vec![0, 6]);
    })
    .await;
    // Paused.
    w.standup(|c| {
        c.name = Some("Paused".into());
        c.is_active = Some(false);
    })
    .await;
    // Not Ada's.
    w.create(&w.admin, every_day("Bob's", &[&w.bob], &[])).await;
    // In Auckland it is already Tuesday; its Monday-only check-in is not due there.
    w.standup(|c| {
        c.name = Some("Auckland Mondays".into());
        c.schedule = Some(ScheduleInput {
            days: Some(vec![1]),
            time: Some("00:00".into()),
            timezone: Some("Pacific/Auckland".into()),
        });
    })
    .await;

    let due = s.due_today(&w.ada).await.unwrap();
    let names: Vec<_> = due.iter().map(|t| t.checkin.name.as_str()).collect();
    assert_eq!(names, ["Standup"]);
    assert_eq!(due[0].date, date!(2026 - 11 - 23));

    assert_eq!(s.pending_today(&w.ada).await.unwrap().len(), 1);
    // Max answering does not take it off Ada's list; a partial answer of Ada's neither.
    s.submit_response(&w.max, daily.id, &full(&daily, &["x"]), None)
        .await
        .unwrap();
    let partial = ResponseInput {
        answers: vec![],
        last_question_index: Some(0),
        questions_version: None,
    };
    s.submit_response(&w.ada, daily.id, &partial, None)
        .await
        .unwrap();
    assert_eq!(s.pending_today(&w.ada).await.unwrap().len(), 1);
    s.edit_response(&w.ada, daily.id, &full(&daily, &["done"]), None)
        .await
        .unwrap();
    assert!(s.pending_today(&w.ada).await.unwrap().is_empty());
    // The next day it is pending again.
    w.at(datetime!(2026-11-24 08:00 UTC));
    assert_eq!(s.pending_today(&w.ada).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_update_creates_then_updates_todays_responses() {
    let w = World::new().await;
    let s = w.service();
    let c = standup_with(&w, "Standup", QuestionType::Text).await;
    let simple = w.standup(|c| c.name = Some("Simple".into())).await;

    let attached = s
        .attach_progress(&w.ada, &update(None, Some("Auth"), None, None))
        .await
        .unwrap();
    let mut summary: Vec<_> = attached
        .iter()
        .map(|a| (a.checkin.name.as_str(), a.action))
        .collect();
    summary.sort_by_key(|(name, _)| *name);
    assert_eq!(
        summary,
        [
            ("Simple", AttachAction::Created),
            ("Standup", AttachAction::Created)
        ]
    );
    let standup = attached.iter().find(|a| a.checkin.id == c.id).unwrap();
    // "What will you do today?" is required and unanswered: partial.
    assert!(!standup.response.completed);
    assert_eq!(standup.response.date, date!(2026 - 11 - 23));
    // The simple one's only required question is answered: complete, with its event.
    let simple_r = attached.iter().find(|a| a.checkin.id == simple.id).unwrap();
    assert!(simple_r.response.completed);
    assert_eq!(w.events(EventType::FollowupsResponseCompleted).len(), 1);

    // Again with doing and blocked: the same responses, "done" kept.
    let attached = s
        .attach_progress(&w.ada, &update(None, None, Some("Tests"), Some("Nothing")))
        .await
        .unwrap();
    assert!(attached.iter().all(|a| a.action == AttachAction::Updated));
    let standup = attached.iter().find(|a| a.checkin.id == c.id).unwrap();
    assert!(standup.response.completed);
    let answers: Vec<(String, Value)> = standup
        .response
        .answers
        .iter()
        .map(|a| (a.question.clone(), a.response.clone()))
        .collect();
    assert_eq!(
        answers,
        [
            ("What did you do yesterday?".to_owned(), json!("Auth")),
            ("What will you do today?".to_owned(), json!("Tests")),
            ("Is anything in your way?".to_owned(), json!("Nothing")),
        ]
    );
    let stored = w
        .repo
        .responses_between(
            w.org.id,
            c.id,
            w.ada.id,
            date!(2026 - 11 - 23),
            date!(2026 - 11 - 23),
        )
        .await
        .unwrap();
    assert_eq!(stored.len(), 1, "one response a day");
    assert_eq!(stored[0].answers, standup.response.answers);
    // The standup completed now; the simple one was complete before: updated.
    assert_eq!(w.events(EventType::FollowupsResponseCompleted).len(), 2);
    assert_eq!(w.events(EventType::FollowupsResponseUpdated).len(), 1);
    assert!(s.pending_today(&w.ada).await.unwrap().is_empty());
}

#[tokio::test]
async fn nothing_due_attaches_nothing_and_refusals_skip_a_check_in() {
    let w = World::new().await;
    let s = w.service();
    assert!(
        s.attach_progress(&w.bob, &update(Some("hi"), None, None, None))
            .await
            .unwrap()
            .is_empty()
    );
    // Not started yet today (18:00) and no answers before then.
    let late = w
        .standup(|c| {
            c.name = Some("Evening".into());
            c.schedule.as_mut().unwrap().time = Some("18:00".into());
            c.allow_responses_before_trigger = Some(false);
        })
        .await;
    assert_code(
        s.attach_progress(&w.ada, &update(Some("hi"), None, None, None))
            .await,
        ErrorCode::FollowupNotAllowResponsesBeforeTriggerTime,
    );
    // With another check-in that takes it, the evening one is skipped.
    w.standup(|_| {}).await;
    let attached = s
        .attach_progress(&w.ada, &update(Some("hi"), None, None, None))
        .await
        .unwrap();
    assert_eq!(attached.len(), 1);
    assert_ne!(attached[0].checkin.id, late.id);
}

#[tokio::test]
async fn a_check_in_without_text_questions_is_left_alone() {
    let w = World::new().await;
    let s = w.service();
    let new = NewCheckin {
        settings: every_day("Mood", &[], &[w.eng]),
        questions: Some(vec![q(
            "How do you feel?",
            QuestionType::MultipleChoice,
            true,
            false,
        )]),
        ..NewCheckin::default()
    };
    s.create_checkin(&w.admin, new).await.unwrap();
    assert!(
        s.attach_progress(&w.ada, &update(None, Some("x"), None, None))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(s.pending_today(&w.ada).await.unwrap().len(), 1);
}
