//! Responses: the day they count for, the refusals, answers against changed questions,
//! partial responses, edits and resets with their events, and who reads whose.

use serde_json::{Value, json};
use time::macros::{date, datetime};

use super::*;

#[tokio::test]
async fn a_completed_response_is_stored_once_a_day_with_its_event() {
    let w = World::new().await;
    let s = w.service();
    let c = w.standup(|_| {}).await;
    let r = s
        .submit_response(&w.ada, c.id, &full(&c, &["Shipped it", " "]), None)
        .await
        .unwrap()
        .1;
    assert!(r.completed);
    assert_eq!(r.date, date!(2026 - 11 - 23));
    assert_eq!(r.answers.len(), 1, "a blank optional answer is no answer");
    assert_eq!(r.questions_version, 1);
    let events = w.events(EventType::FollowupsResponseCompleted);
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!((e.org_id, e.object_id), (w.org.id, Some(c.id)));
    assert_eq!(
        e.data,
        json!({
            "checkin": {"uuid": c.id.to_string(), "name": "Standup"},
            "response": {
                "uuid": r.id.to_string(),
                "response_date": "2026-11-23",
                "response_completed": true,
                "answers": [{"uuid": c.questions.questions[0].uuid.to_string(), "question": "What did you do?", "response": "Shipped it"}],
                "user": {"uuid": w.ada.id.to_string(), "full_name": "Ada Test", "email": "ada@acme.test"},
            },
        })
    );
    let e = assert_code(
        s.submit_response(&w.ada, c.id, &full(&c, &["Again"]), None)
            .await,
        ErrorCode::ResponseAlreadyExists,
    );
    assert_eq!(e.status(), 409);
    assert_eq!(w.events(EventType::FollowupsResponseCompleted).len(), 1);
    // Another person, or another day, is another response.
    s.submit_response(&w.max, c.id, &full(&c, &["Reviewed"]), None)
        .await
        .unwrap();
}

#[tokio::test]
async fn only_participants_of_running_check_ins_answer() {
    let w = World::new().await;
    let s = w.service();
    let c = w.standup(|_| {}).await;
    let answers = full(&c, &["x"]);
    for outsider in [&w.bob, &w.admin] {
        let e = assert_code(
            s.submit_response(outsider, c.id, &answers, None).await,
            ErrorCode::UserIsNotAFollowupMember,
        );
        assert_eq!(e.status(), 403);
    }
    assert_code(
        s.submit_response(&w.outsider, c.id, &answers, None).await,
        ErrorCode::NotFound,
    );
    assert_code(
        s.submit_response(&w.ada, new_id(), &answers, None).await,
        ErrorCode::NotFound,
    );
    let paused = CheckinInput {
        is_active: Some(false),
        ..CheckinInput::default()
    };
    s.update_config(&w.admin, c.id, paused).await.unwrap();
    assert_code(
        s.submit_response(&w.ada, c.id, &answers, None).await,
        ErrorCode::ResponsesNotAllowedOnInactiveFollowup,
    );
    let archived = w.standup(|_| {}).await;
    s.archive_checkin(&w.admin, archived.id).await.unwrap();
    assert_code(
        s.submit_response(&w.ada, archived.id, &full(&archived, &["x"]), None)
            .await,
        ErrorCode::ResponsesNotAllowedOnInactiveFollowup,
    );
    assert!(w.events(EventType::FollowupsResponseCompleted).is_empty());
}

#[tokio::test]
async fn past_and_coming_days_need_the_check_ins_permission_within_bounds() {
    let w = World::new().await;
    let s = w.service();
    let strict = w.standup(|_| {}).await;
    let a = full(&strict, &["x"]);
    let on = |d: &'static str| Some(d);
    assert_code(
        s.submit_response(&w.ada, strict.id, &a, on("2026-11-22"))
            .await,
        ErrorCode::PreviousResponsesAreNotAllowed,
    );
    assert_code(
        s.submit_response(&w.ada, strict.id, &a, on("2026-11-24"))
            .await,
        ErrorCode::FutureResponsesAreNotAllowed,
    );
    for bad in ["2026-11-5", "23/11/2026", "yesterday", "2026-02-30"] {
        assert_code(
            s.submit_response(&w.ada, strict.id, &a, Some(bad)).await,
            ErrorCode::ResponseDateFormatIsInvalid,
        );
    }
    let open = w
        .standup(|i| {
            i.allow_past_responses = Some(true);
            i.allow_future_responses = Some(true);
            i.start_on = Some("2026-01-01".into());
            i.end_on = Some(Some("2026-12-31".into()));
        })
        .await;
    let a = full(&open, &["x"]);
    let r = s
        .submit_response(&w.ada, open.id, &a, on("2026-11-20"))
        .await
        .unwrap()
        .1;
    assert_eq!(r.date, date!(2026 - 11 - 20));
    s.submit_response(&w.ada, open.id, &a, on("2026-12-23"))
        .await
        .unwrap();
    let e = assert_code(
        s.submit_response(&w.ada, open.id, &a, on("2026-12-24"))
            .await,
        ErrorCode::FutureResponsesAreNotAllowed,
    );
    assert_eq!(e.extra()["max_days"], MAX_DAYS_AHEAD);
    let e = assert_code(
        s.submit_response(&w.ada, open.id, &a, on("2025-11-22"))
            .await,
        ErrorCode::PreviousResponsesAreNotAllowed,
    );
    assert_eq!(e.extra()["max_days"], MAX_DAYS_BACK);
    // The check-in's first and last days bound when people are asked, not what they answer.
    let r = s
        .submit_response(&w.ada, open.id, &a, on("2025-12-31"))
        .await
        .unwrap()
        .1;
    assert_eq!(r.date, date!(2025 - 12 - 31));
    let ended = w
        .standup(|i| {
            i.start_on = Some("2026-01-01".into());
            i.end_on = Some(Some("2026-06-30".into()));
        })
        .await;
    let r = s
        .submit_response(&w.ada, ended.id, &full(&ended, &["x"]), None)
        .await
        .unwrap()
        .1;
    assert_eq!(r.date, date!(2026 - 11 - 23));
}

#[tokio::test]
async fn today_before_the_trigger_time_needs_the_check_ins_permission() {
    let w = World::new().await;
    let s = w.service();
    // 09:00 in New York is 14:00 UTC in November; it is 12:00 UTC.
    let c = w
        .standup(|i| {
            i.schedule = Some(ScheduleInput {
                time: Some("09:00".into()),
                timezone: Some("America/New_York".into()),
                ..ScheduleInput::default()
            });
            i.allow_responses_before_trigger = Some(false);
        })
        .await;
    let a = full(&c, &["early"]);
    let e = assert_code(
        s.submit_response(&w.ada, c.id, &a, None).await,
        ErrorCode::FollowupNotAllowResponsesBeforeTriggerTime,
    );
    assert_eq!(e.extra()["trigger_at"], "2026-11-23T14:00:00Z");
    w.at(datetime!(2026-11-23 14:00 UTC));
    s.submit_response(&w.ada, c.id, &a, None).await.unwrap();

    // Check-ins started by events have no time to wait for.
    w.at(NOW);
    let triggered = w
        .standup(|i| {
            i.schedule = Some(ScheduleInput {
                time: Some("23:59".into()),
                ..ScheduleInput::default()
            });
            i.allow_responses_before_trigger = Some(false);
            i.is_trigger_based = Some(true);
        })
        .await;
    s.submit_response(&w.ada, triggered.id, &full(&triggered, &["x"]), None)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_day_is_the_participants_local_day_not_utcs() {
    let w = World::new().await;
    let s = w.service();
    // 12:00 UTC on Monday 23 is already Tuesday 24 in Kiritimati (UTC+14).
    let ada = w.in_zone(&w.ada, "Pacific/Kiritimati").await;
    let own_zone = w.standup(|i| i.use_participant_timezone = Some(true)).await;
    let r = s
        .submit_response(&ada, own_zone.id, &full(&own_zone, &["x"]), None)
        .await
        .unwrap()
        .1;
    assert_eq!(r.date, date!(2026 - 11 - 24));
    // With the schedule's zone (Honolulu, UTC-10: 02:00 on the 23rd) the zone of the person
    // does not matter.
    let schedule_zone = w
        .standup(|i| {
            i.schedule = Some(ScheduleInput {
                timezone: Some("Pacific/Honolulu".into()),
                ..ScheduleInput::default()
            })
        })
        .await;
    let r = s
        .submit_response(&ada, schedule_zone.id, &full(&schedule_zone, &["x"]), None)
        .await
        .unwrap()
        .1;
    assert_eq!(r.date, date!(2026 - 11 - 23));
    // At 10:30 UTC it is 16:00 in Kolkata, still the 23rd; at 18:30 UTC it is the 24th.
    let kolkata = w.in_zone(&w.max, "Asia/Kolkata").await;
    w.at(datetime!(2026-11-23 18:29 UTC));
    let r = s
        .submit_response(&kolkata, own_zone.id, &full(&own_zone, &["x"]), None)
        .await
        .unwrap()
        .1;
    assert_eq!(r.date, date!(2026 - 11 - 23));
    w.at(datetime!(2026-11-23 18:30 UTC));
    let r = s
        .submit_response(&kolkata, own_zone.id, &full(&own_zone, &["y"]), None)
        .await
        .unwrap()
        .1;
    assert_eq!(r.date, date!(2026 - 11 - 24));
}

#[tokio::test]
async fn answers_must_fit_the_questions_as_they_are_now() {
    let w = World::new().await;
    let s = w.service();
    let c = w.standup(|_| {}).await;
    let (q1, q2) = (&c.questions.questions[0], &c.questions.questions[1]);
    let input = |answers: Vec<AnswerInput>, version: Option<i32>| ResponseInput {
        answers,
        questions_version: version,
        ..ResponseInput::default()
    };
    let e = assert_code(
        s.submit_response(
            &w.ada,
            c.id,
            &input(vec![answer(q1, 0, json!("x"))], Some(7)),
            None,
        )
        .await,
        ErrorCode::TemplateQuestionsVersionConflict,
    );
    assert_eq!(
        (e.status(), e.extra()["current_version"].clone()),
        (409, json!(1))
    );
    let stranger = AnswerInput {
        uuid: new_id(),
        index: Some(1),
        response: json!("x"),
    };
    let e = assert_code(
        s.submit_response(
            &w.ada,
            c.id,
            &input(vec![answer(q1, 0, json!("x")), stranger.clone()], None),
            None,
        )
        .await,
        ErrorCode::TemplateQuestionsVersionConflict,
    );
    assert_eq!(uuid_list(&e), [stranger.uuid.to_string()]);
    // Answers read in another order than the questions' present one.
    let swapped = vec![answer(q2, 0, json!("b")), answer(q1, 1, json!("a"))];
    assert_code(
        s.submit_response(&w.ada, c.id, &input(swapped, None), None)
            .await,
        ErrorCode::TemplateQuestionsVersionConflict,
    );
    // Skipped positions are fine (an optional question left out, then the next one).
    let (_, q3) = s
        .add_question(&w.admin, c.id, text_question("And tomorrow?"), false)
        .await
        .unwrap();
    let skipping = vec![answer(q1, 0, json!("a")), answer(&q3, 1, json!("c"))];
    let r = s
        .submit_response(&w.ada, c.id, &input(skipping, Some(2)), None)
        .await
        .unwrap()
        .1;
    assert!(r.completed);
    assert_eq!(r.questions_version, 2);
    // A type mismatch is a plain validation error naming the answer.
    let numeric = w.standup(|_| {}).await;
    let (_, n) = s
        .add_question(
            &w.admin,
            numeric.id,
            NewQuestion {
                question: "Score?".into(),
                short_question: Some("Score".into()),
                question_type: Some(QuestionType::Numeric),
                ..NewQuestion::default()
            },
            false,
        )
        .await
        .unwrap();
    let bad = ResponseInput {
        answers: vec![
            answer(&numeric.questions.questions[0], 0, json!("a")),
            answer(&n, 2, json!("lots")),
        ],
        ..ResponseInput::default()
    };
    let e = assert_code(
        s.submit_response(&w.bob, numeric.id, &bad, None).await,
        ErrorCode::UserIsNotAFollowupMember,
    );
    assert_eq!(e.status(), 403);
    let e = assert_code(
        s.submit_response(&w.ada, numeric.id, &bad, None).await,
        ErrorCode::ParamsValidationError,
    );
    assert!(e.field_errors().contains_key("responses[1]"));
}

#[tokio::test]
async fn a_partial_response_completes_later_and_edits_say_updated() {
    let w = World::new().await;
    let s = w.service();
    let c = w.standup(|_| {}).await;
    let q1 = &c.questions.questions[0];
    // Nothing required answered, without saying where the person stopped: refused.
    let e = assert_code(
        s.submit_response(&w.ada, c.id, &ResponseInput::default(), None)
            .await,
        ErrorCode::ParamsValidationError,
    );
    assert_eq!(uuid_list(&e), [q1.uuid.to_string()]);
    // Stopped at the first question: partial, no event.
    let started = ResponseInput {
        last_question_index: Some(0),
        ..ResponseInput::default()
    };
    let r = s
        .submit_response(&w.ada, c.id, &started, None)
        .await
        .unwrap()
        .1;
    assert!(!r.completed);
    assert_eq!(r.last_question_index, Some(0));
    assert!(w.events(EventType::FollowupsResponseCompleted).is_empty());

    w.at(NOW + time::Duration::minutes(5));
    let done = s
        .edit_response(&w.ada, c.id, &full(&c, &["Done", "No"]), None)
        .await
        .unwrap()
        .1;
    assert!(done.completed);
    assert_eq!((done.id, done.created_at), (r.id, r.created_at));
    assert_eq!(w.events(EventType::FollowupsResponseCompleted).len(), 1);
    assert!(w.events(EventType::FollowupsResponseUpdated).is_empty());

    w.at(NOW + time::Duration::minutes(10));
    let edited = s
        .edit_response(&w.ada, c.id, &full(&c, &["Done twice"]), None)
        .await
        .unwrap()
        .1;
    assert_eq!(edited.answers[0].response, json!("Done twice"));
    let updated = w.events(EventType::FollowupsResponseUpdated);
    assert_eq!(updated.len(), 1);
    assert_eq!(
        updated[0].data["response"]["answers"][0]["response"],
        "Done twice"
    );

    // Nothing to edit for someone who did not answer today.
    assert_code(
        s.edit_response(&w.max, c.id, &full(&c, &["x"]), None).await,
        ErrorCode::NotFound,
    );
    // Edits are checked like submissions.
    assert_code(
        s.edit_response(
            &w.ada,
            c.id,
            &ResponseInput {
                questions_version: Some(9),
                ..full(&c, &["x"])
            },
            None,
        )
        .await,
        ErrorCode::TemplateQuestionsVersionConflict,
    );
    assert_code(
        s.edit_response(&w.ada, c.id, &full(&c, &["x"]), Some("23-11-2026"))
            .await,
        ErrorCode::ResponseDateFormatIsInvalid,
    );
    assert_code(
        s.edit_response(&w.ada, c.id, &full(&c, &["x"]), Some("2026-11-22"))
            .await,
        ErrorCode::PreviousResponsesAreNotAllowed,
    );
}

#[tokio::test]
async fn a_past_days_response_is_edited_when_the_check_in_takes_past_days() {
    let w = World::new().await;
    let s = w.service();
    let c = w
        .standup(|i| {
            i.allow_past_responses = Some(true);
            i.start_on = Some("2026-11-01".into());
        })
        .await;
    let friday = Some("2026-11-20");
    s.submit_response(&w.ada, c.id, &full(&c, &["Friday"]), friday)
        .await
        .unwrap();
    assert_code(
        s.edit_response(&w.ada, c.id, &full(&c, &["x"]), None).await,
        ErrorCode::NotFound,
    );
    let edited = s
        .edit_response(&w.ada, c.id, &full(&c, &["Friday, edited"]), friday)
        .await
        .unwrap()
        .1;
    assert_eq!(edited.date, time::macros::date!(2026 - 11 - 20));
    assert_eq!(edited.answers[0].response, json!("Friday, edited"));
    assert_eq!(w.events(EventType::FollowupsResponseUpdated).len(), 1);
}

#[tokio::test]
async fn branching_decides_which_required_questions_complete_a_response() {
    let w = World::new().await;
    let s = w.service();
    let c = w.standup(|_| {}).await;
    let (_, blocked) = s
        .add_question(
            &w.admin,
            c.id,
            NewQuestion {
                question: "Are you blocked?".into(),
                short_question: Some("Blocked".into()),
                question_type: Some(QuestionType::Boolean),
                ..NewQuestion::default()
            },
            false,
        )
        .await
        .unwrap();
    let (_, by_what) = s
        .add_question(&w.admin, c.id, text_question("By what?"), false)
        .await
        .unwrap();
    // "No" ends the conversation: "By what?" is not asked.
    let patch = crate::questions::QuestionPatch {
        logic: Some(
            json!({"rules": {"rules_if": [{"conditions": [{"operator": "equals", "comparison_value": false}], "then": {"action": "end"}}]}}),
        ),
        ..Default::default()
    };
    s.update_question(&w.admin, c.id, blocked.uuid, patch, false)
        .await
        .unwrap();
    let c = s.get_checkin(&w.admin, c.id).await.unwrap().checkin;
    let q1 = &c.questions.questions[0];
    let answers = |blocked_answer: Value| ResponseInput {
        answers: vec![
            answer(q1, 0, json!("x")),
            answer(&blocked, 2, blocked_answer),
        ],
        ..ResponseInput::default()
    };
    let r = s
        .submit_response(&w.ada, c.id, &answers(json!("no")), None)
        .await
        .unwrap()
        .1;
    assert!(r.completed);
    let e = assert_code(
        s.submit_response(&w.max, c.id, &answers(json!(true)), None)
            .await,
        ErrorCode::ParamsValidationError,
    );
    assert_eq!(uuid_list(&e), [by_what.uuid.to_string()]);
}

#[tokio::test]
async fn a_reset_deletes_the_persons_own_responses_of_the_days_with_events() {
    let w = World::new().await;
    let s = w.service();
    let c = w
        .standup(|i| {
            i.allow_past_responses = Some(true);
            i.start_on = Some("2026-11-01".into());
        })
        .await;
    for day in ["2026-11-20", "2026-11-21", "2026-11-23"] {
        s.submit_response(&w.ada, c.id, &full(&c, &["x"]), Some(day))
            .await
            .unwrap();
    }
    s.submit_response(&w.max, c.id, &full(&c, &["mine"]), None)
        .await
        .unwrap();
    let every_day = s
        .list_responses(
            &w.admin,
            c.id,
            &ResponseListFilter::default(),
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(
        every_day.page.count, 4,
        "a listing spans every day by default"
    );
    // Default: today only.
    assert_eq!(
        s.reset_responses(&w.ada, c.id, None, None).await.unwrap(),
        1
    );
    assert_eq!(
        s.reset_responses(
            &w.ada,
            c.id,
            Some(date!(2026 - 11 - 19)),
            Some(date!(2026 - 11 - 21))
        )
        .await
        .unwrap(),
        2
    );
    assert_eq!(
        s.reset_responses(&w.ada, c.id, None, None).await.unwrap(),
        0
    );
    let deleted = w.events(EventType::FollowupsResponseDeleted);
    let days: Vec<&Value> = deleted
        .iter()
        .map(|e| &e.data["response"]["response_date"])
        .collect();
    assert_eq!(
        days,
        [
            &json!("2026-11-23"),
            &json!("2026-11-20"),
            &json!("2026-11-21")
        ]
    );
    assert!(deleted.iter().all(|e| e.object_id == Some(c.id)));
    // Max's response is untouched.
    let left = s
        .list_responses(
            &w.admin,
            c.id,
            &ResponseListFilter::default(),
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(left.page.count, 1);
    assert_eq!(left.page.results[0].response.user_id, w.max.id);
    assert_code(
        s.reset_responses(
            &w.ada,
            c.id,
            Some(date!(2026 - 11 - 22)),
            Some(date!(2026 - 11 - 21)),
        )
        .await,
        ErrorCode::InvalidDateRange,
    );
    assert_code(
        s.reset_responses(&w.bob, c.id, None, None).await,
        ErrorCode::UserIsNotAFollowupMember,
    );
}

#[tokio::test]
async fn admins_read_every_response_managers_their_teams_members_their_own() {
    let w = World::new().await;
    let s = w.service();
    let c = w
        .create(&w.admin, every_day("Team", &[&w.bob], &[w.eng]))
        .await
        .checkin;
    for (who, text) in [
        (&w.ada, "Ada wrote"),
        (&w.bob, "Bob wrote"),
        (&w.max, "Max wrote"),
    ] {
        s.submit_response(who, c.id, &full(&c, &[text]), None)
            .await
            .unwrap();
    }
    let read = |who: &User, filter: ResponseListFilter| {
        let s = s.clone();
        let who = who.clone();
        async move {
            s.list_responses(&who, c.id, &filter, PageRequest::all())
                .await
                .unwrap()
                .page
                .results
                .into_iter()
                .map(|r| r.response.answers[0].response.as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let all = ResponseListFilter::default();
    assert_eq!(
        read(&w.admin, all.clone()).await,
        ["Ada wrote", "Bob wrote", "Max wrote"]
    );
    assert_eq!(
        read(&w.max, all.clone()).await,
        ["Ada wrote", "Max wrote"],
        "Bob is not in Max's team"
    );
    assert_eq!(read(&w.bob, all.clone()).await, ["Bob wrote"]);
    let about_ada = ResponseListFilter {
        user: Some(w.ada.id),
        ..ResponseListFilter::default()
    };
    assert_eq!(read(&w.admin, about_ada.clone()).await, ["Ada wrote"]);
    assert_eq!(
        read(&w.bob, about_ada).await,
        ["Bob wrote"],
        "a member's `user` is ignored"
    );
    let search = ResponseListFilter {
        search: Some("BOB".into()),
        ..ResponseListFilter::default()
    };
    assert_eq!(read(&w.admin, search).await, ["Bob wrote"]);
    let yesterday = ResponseListFilter {
        from: Some(date!(2026 - 11 - 22)),
        until: Some(date!(2026 - 11 - 22)),
        ..ResponseListFilter::default()
    };
    assert!(read(&w.admin, yesterday).await.is_empty());
    let reversed = ResponseListFilter {
        from: Some(date!(2026 - 11 - 23)),
        until: Some(date!(2026 - 11 - 22)),
        ..ResponseListFilter::default()
    };
    assert_code(
        s.list_responses(&w.admin, c.id, &reversed, PageRequest::all())
            .await,
        ErrorCode::InvalidDateRange,
    );
    assert_code(
        s.list_responses(&w.guest, c.id, &all, PageRequest::all())
            .await,
        ErrorCode::NotFound,
    );

    // Anonymous: nobody but the responder sees who answered, and nobody narrows to someone.
    let anon = CheckinInput {
        is_anonymous: Some(true),
        ..CheckinInput::default()
    };
    s.update_config(&w.admin, c.id, anon).await.unwrap();
    let page = s
        .list_responses(&w.admin, c.id, &all, PageRequest::all())
        .await
        .unwrap();
    assert!(page.page.results.iter().all(|r| r.author.is_none()));
    let own = s
        .list_responses(&w.bob, c.id, &all, PageRequest::all())
        .await
        .unwrap();
    assert_eq!(
        own.page.results[0].author.as_ref().map(|u| u.id),
        Some(w.bob.id)
    );
    let narrowed = ResponseListFilter {
        user: Some(w.ada.id),
        ..ResponseListFilter::default()
    };
    let page = s
        .list_responses(&w.admin, c.id, &narrowed, PageRequest::all())
        .await
        .unwrap();
    assert_eq!(page.page.count, 0);
    // The event of an anonymous check-in carries no person either.
    s.reset_responses(&w.bob, c.id, None, None).await.unwrap();
    let deleted = w.events(EventType::FollowupsResponseDeleted);
    assert_eq!(deleted[0].data["response"]["user"], Value::Null);
}
