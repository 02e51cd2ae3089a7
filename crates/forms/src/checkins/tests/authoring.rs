//! Creating and changing check-ins: who may, what a check-in must hold, every authoring code.

use serde_json::json;
use time::macros::{date, time};

use super::*;
use crate::questions::QuestionPatch;
use crate::{Template, TemplateType};

#[tokio::test]
async fn admins_and_team_managers_author_check_ins_others_are_refused() {
    let w = World::new().await;
    let s = w.service();
    let by_admin = w.create(&w.admin, every_day("Org", &[&w.bob], &[])).await;
    assert_eq!(by_admin.checkin.created_by, Some(w.admin.id));
    assert!(by_admin.can_be_edited);

    // A team manager asks their team, its members and themself.
    let by_max = w
        .create(&w.max, every_day("Eng", &[&w.ada, &w.max], &[w.eng]))
        .await;
    assert_eq!(by_max.checkin.participants.teams, [w.eng]);

    // ... but nobody outside it.
    let e = assert_code(
        s.create_checkin(&w.max, with_questions(every_day("X", &[&w.bob], &[])))
            .await,
        ErrorCode::CheckinPermissionDenied,
    );
    assert_eq!(uuid_list(&e), [w.bob.id.to_string()]);
    for refused in [&w.ada, &w.bob, &w.guest] {
        assert_code(
            s.create_checkin(refused, with_questions(every_day("X", &[refused], &[])))
                .await,
            ErrorCode::CheckinPermissionDenied,
        );
    }
    let all = s
        .list_checkins(&w.admin, &CheckinListFilter::default(), PageRequest::all())
        .await
        .unwrap();
    assert_eq!(all.count, 2, "nothing refused was stored");
}

#[tokio::test]
async fn a_new_check_in_has_defaults_and_needs_a_name_questions_and_participants() {
    let w = World::new().await;
    let madrid = w.in_zone(&w.admin, "Europe/Madrid").await;
    let s = w.service();
    let settings = CheckinInput {
        name: Some("  Standup  ".into()),
        participants: Some(participants(&[&w.ada], &[])),
        ..CheckinInput::default()
    };
    let c = w.create(&madrid, settings.clone()).await.checkin;
    assert_eq!(c.name, "Standup");
    assert_eq!(c.schedule.days, [1, 2, 3, 4, 5]);
    assert_eq!(c.schedule.time, time!(09:00));
    assert_eq!(c.schedule.timezone, "Europe/Madrid", "the author's zone");
    assert_eq!(c.recurrence.frequency_type, FrequencyType::Weekly);
    assert_eq!((c.recurrence.frequency, c.recurrence.end_on), (1, None));
    assert_eq!(c.recurrence.start_on, date!(2026 - 11 - 23));
    assert!(c.active && !c.archived);
    assert_eq!(c.questions.version, 1);
    assert_eq!(c.options, CheckinOptions::default());

    // The first day is today where the check-in runs: already the 24th in Kiritimati.
    let far = CheckinInput {
        schedule: Some(ScheduleInput {
            timezone: Some("Pacific/Kiritimati".into()),
            ..ScheduleInput::default()
        }),
        ..settings.clone()
    };
    let c = w.create(&madrid, far).await.checkin;
    assert_eq!(c.recurrence.start_on, date!(2026 - 11 - 24));

    let nameless = CheckinInput {
        name: None,
        ..settings.clone()
    };
    let e = assert_code(
        s.create_checkin(&w.admin, with_questions(nameless)).await,
        ErrorCode::ParamsValidationError,
    );
    assert!(e.field_errors().contains_key("name"));
    let no_questions = NewCheckin {
        settings: settings.clone(),
        ..NewCheckin::default()
    };
    assert_code(
        s.create_checkin(&w.admin, no_questions).await,
        ErrorCode::QuestionsRequired,
    );
    let empty_questions = NewCheckin {
        settings: settings.clone(),
        questions: Some(Vec::new()),
        ..NewCheckin::default()
    };
    assert_code(
        s.create_checkin(&w.admin, empty_questions).await,
        ErrorCode::QuestionsRequired,
    );
    let nobody = CheckinInput {
        participants: Some(ParticipantsInput::default()),
        ..settings.clone()
    };
    assert_code(
        s.create_checkin(&w.admin, with_questions(nobody)).await,
        ErrorCode::CheckinRequiresParticipant,
    );
    let no_participants = CheckinInput {
        participants: None,
        ..settings.clone()
    };
    assert_code(
        s.create_checkin(&w.admin, with_questions(no_participants))
            .await,
        ErrorCode::CheckinRequiresParticipant,
    );
}

#[tokio::test]
async fn short_questions_are_required_unless_generated() {
    let w = World::new().await;
    let s = w.service();
    let unlabelled = || NewQuestion {
        question: "What did you complete yesterday?".into(),
        ..NewQuestion::default()
    };
    let new = |generate| NewCheckin {
        settings: every_day("Standup", &[&w.ada], &[]),
        questions: Some(vec![unlabelled()]),
        generate_short_question: generate,
        ..NewCheckin::default()
    };
    let e = assert_code(
        s.create_checkin(&w.admin, new(false)).await,
        ErrorCode::ShortQuestionRequired,
    );
    assert!(e.field_errors().contains_key("questions[0].short_question"));
    let c = s.create_checkin(&w.admin, new(true)).await.unwrap().checkin;
    assert_eq!(
        c.questions.questions[0].short_question,
        "Complete yesterday"
    );
}

#[tokio::test]
async fn a_template_gives_its_questions_and_messages() {
    let w = World::new().await;
    let s = w.service();
    let template = |kind| Template {
        id: new_id(),
        org_id: None,
        name: "Daily Standup".into(),
        template_type: kind,
        system_default: true,
        description: String::new(),
        intro_message: "Good morning!".into(),
        outro_message: String::new(),
        questions: vec![
            json!({"uuid": new_id(), "index": 0, "question": "What did you complete yesterday?", "question_type": "text", "required": true, "is_blocker": false}),
            json!({"uuid": new_id(), "index": 1, "question": "Anything blocking you?", "question_type": "boolean", "required": false, "is_blocker": true}),
        ],
        created_at: NOW,
    };
    let checkins = template(TemplateType::Checkins);
    let forms = template(TemplateType::Forms);
    w.templates.insert(checkins.clone());
    w.templates.insert(forms.clone());
    let from = |id| NewCheckin {
        settings: every_day("Standup", &[&w.ada], &[]),
        template: Some(id),
        ..NewCheckin::default()
    };
    let c = s
        .create_checkin(&w.admin, from(checkins.id))
        .await
        .unwrap()
        .checkin;
    assert_eq!(c.template, Some(checkins.id));
    let copied: Vec<(&str, QuestionType, bool, bool, &str)> = c
        .questions
        .questions
        .iter()
        .map(|q| {
            (
                q.question.as_str(),
                q.question_type,
                q.required,
                q.is_blocker,
                q.short_question.as_str(),
            )
        })
        .collect();
    assert_eq!(
        copied,
        [
            (
                "What did you complete yesterday?",
                QuestionType::Text,
                true,
                false,
                "Complete yesterday"
            ),
            (
                "Anything blocking you?",
                QuestionType::Boolean,
                false,
                true,
                "Blocking you"
            ),
        ]
    );
    assert_eq!(
        c.options.custom_template_intro.as_deref(),
        Some("Good morning!")
    );
    assert_eq!(c.options.custom_template_outro, None);
    for wrong in [forms.id, new_id()] {
        let e = assert_code(
            s.create_checkin(&w.admin, from(wrong)).await,
            ErrorCode::ParamsValidationError,
        );
        assert!(e.field_errors().contains_key("template"));
    }
}

#[tokio::test]
async fn every_bad_schedule_value_is_invalid_schedule_naming_it() {
    let w = World::new().await;
    let s = w.service();
    let schedule = |days: Option<Vec<i64>>, time: Option<&str>, tz: Option<&str>| {
        Some(ScheduleInput {
            days,
            time: time.map(str::to_owned),
            timezone: tz.map(str::to_owned),
        })
    };
    let cases: Vec<(&str, CheckinInput)> = vec![
        (
            "schedule.days",
            CheckinInput {
                schedule: schedule(Some(vec![1, 7]), None, None),
                ..CheckinInput::default()
            },
        ),
        (
            "schedule.days",
            CheckinInput {
                schedule: schedule(Some(vec![-1]), None, None),
                ..CheckinInput::default()
            },
        ),
        (
            "schedule.days",
            CheckinInput {
                schedule: schedule(Some(vec![]), None, None),
                ..CheckinInput::default()
            },
        ),
        (
            "schedule.time",
            CheckinInput {
                schedule: schedule(None, Some("9:00"), None),
                ..CheckinInput::default()
            },
        ),
        (
            "schedule.time",
            CheckinInput {
                schedule: schedule(None, Some("24:00"), None),
                ..CheckinInput::default()
            },
        ),
        (
            "schedule.timezone",
            CheckinInput {
                schedule: schedule(None, None, Some("Mars/Olympus")),
                ..CheckinInput::default()
            },
        ),
        (
            "frequency",
            CheckinInput {
                frequency: Some(0),
                ..CheckinInput::default()
            },
        ),
        (
            "frequency",
            CheckinInput {
                frequency: Some(53),
                ..CheckinInput::default()
            },
        ),
        (
            "frequency_type",
            CheckinInput {
                frequency_type: Some("hourly".into()),
                ..CheckinInput::default()
            },
        ),
        (
            "frequency_advanced",
            CheckinInput {
                frequency_advanced: Some("yearly".into()),
                ..CheckinInput::default()
            },
        ),
        (
            "frequency_cron",
            CheckinInput {
                frequency_advanced: Some("custom".into()),
                ..CheckinInput::default()
            },
        ),
        (
            "frequency_cron",
            CheckinInput {
                frequency_cron: Some(Some("0 9 * * 1".into())),
                ..CheckinInput::default()
            },
        ),
        (
            "frequency_cron",
            CheckinInput {
                frequency_advanced: Some("custom".into()),
                frequency_cron: Some(Some("0 9 * *".into())),
                ..CheckinInput::default()
            },
        ),
        (
            "start_on",
            CheckinInput {
                start_on: Some("2026-13-01".into()),
                ..CheckinInput::default()
            },
        ),
        (
            "end_on",
            CheckinInput {
                end_on: Some(Some("2026/12/01".into())),
                ..CheckinInput::default()
            },
        ),
        (
            "end_on",
            CheckinInput {
                start_on: Some("2026-12-01".into()),
                end_on: Some(Some("2026-11-30".into())),
                ..CheckinInput::default()
            },
        ),
    ];
    for (field, bad) in cases {
        let settings = CheckinInput {
            name: Some("S".into()),
            participants: Some(participants(&[&w.ada], &[])),
            ..bad
        };
        let e = assert_code(
            s.create_checkin(&w.admin, with_questions(settings)).await,
            ErrorCode::InvalidSchedule,
        );
        assert_eq!(e.extra()["parameter"], field, "{e}");
        assert!(e.field_errors().contains_key(field), "{e:?}");
    }
    // A custom cadence takes its time from the expression.
    let custom = CheckinInput {
        frequency_advanced: Some("custom".into()),
        frequency_cron: Some(Some("30 7 * * 1-5".into())),
        ..every_day("Cron", &[&w.ada], &[])
    };
    let c = w.create(&w.admin, custom).await.checkin;
    assert_eq!(c.schedule.time, time!(07:30));
    assert_eq!(
        c.recurrence.cron.as_ref().map(Cron::as_str),
        Some("30 7 * * 1-5")
    );
}

#[tokio::test]
async fn options_are_checked_and_every_bad_one_is_named() {
    let w = World::new().await;
    let s = w.service();
    let bad = CheckinInput {
        reminders_max_count: Some(6),
        reminders_frequency_time: Some(61),
        custom_template_intro: Some(Some("Hi".into())),
        time_for_report: Some(Some("5pm".into())),
        max_clarifying_questions: Some(2),
        name: Some("\u{200b}".into()),
        ..every_day("X", &[&w.ada], &[])
    };
    let e = assert_code(
        s.create_checkin(&w.admin, with_questions(bad)).await,
        ErrorCode::ParamsValidationError,
    );
    let fields: Vec<&str> = e.field_errors().keys().map(String::as_str).collect();
    assert_eq!(
        fields,
        [
            "custom_template_intro",
            "max_clarifying_questions",
            "name",
            "reminders_frequency_time",
            "reminders_max_count",
            "time_for_report",
        ]
    );
    let not_smart = CheckinInput {
        is_intelligence_enabled: Some(true),
        ..every_day("X", &[&w.ada], &[])
    };
    let e = assert_code(
        s.create_checkin(&w.admin, with_questions(not_smart)).await,
        ErrorCode::ParamsValidationError,
    );
    assert!(e.field_errors().contains_key("is_intelligence_enabled"));
    let good = CheckinInput {
        reminders_max_count: Some(5),
        reminders_frequency_time: Some(60),
        reminders_trigger_condition: Some(ReminderCondition::SmartFrequency),
        reminder_tone: Some(ReminderTone::Persuasive),
        custom_template_intro: Some(Some("Morning!\nReady?".into())),
        time_for_report: Some(Some("17:30".into())),
        is_smart_checkin: Some(true),
        is_intelligence_enabled: Some(true),
        max_clarifying_questions: Some(5),
        privacy: Some(Privacy::OrgAdmins),
        ..every_day("Y", &[&w.ada], &[])
    };
    let o = w.create(&w.admin, good).await.checkin.options;
    assert_eq!(
        (
            o.reminders_max_count,
            o.reminders_frequency_time,
            o.max_clarifying_questions
        ),
        (5, 60, 5)
    );
    assert_eq!(o.custom_template_intro.as_deref(), Some("Morning!\nReady?"));
    assert_eq!(o.time_for_report, Some(time!(17:30)));
    assert_eq!(o.privacy, Privacy::OrgAdmins);
}

#[tokio::test]
async fn participants_and_report_channels_must_be_the_organizations() {
    let w = World::new().await;
    let s = w.service();
    let named = |users: &[&User], teams: &[TeamId]| with_questions(every_day("X", users, teams));
    let e = assert_code(
        s.create_checkin(&w.admin, named(&[&w.ada, &w.outsider], &[]))
            .await,
        ErrorCode::ParamsValidationError,
    );
    assert_eq!(uuid_list(&e), [w.outsider.id.to_string()]);
    let gone = TeamId::new();
    let e = assert_code(
        s.create_checkin(&w.admin, named(&[], &[w.eng, gone])).await,
        ErrorCode::ParamsValidationError,
    );
    assert_eq!(uuid_list(&e), [gone.to_string()]);
    w.ports
        .teams
        .update_team(w.org.id, w.eng, None, Some(false))
        .await
        .unwrap();
    assert_code(
        s.create_checkin(&w.admin, named(&[], &[w.eng])).await,
        ErrorCode::ParamsValidationError,
    );

    let with_channels = |ids: &[&str]| {
        with_questions(CheckinInput {
            report_channels: Some(ids.iter().map(|c| (*c).to_owned()).collect()),
            ..every_day("X", &[&w.ada], &[])
        })
    };
    let e = assert_code(
        s.create_checkin(&w.admin, with_channels(&["C1", "C9"]))
            .await,
        ErrorCode::ReportChannelNotFound,
    );
    assert_eq!(uuid_list(&e), ["C9"]);
    assert_code(
        s.create_checkin(&w.admin, with_channels(&["C1", "C2", "C3", "C4"]))
            .await,
        ErrorCode::TooManyReportChannels,
    );
    // Listed twice counts once.
    let c = s
        .create_checkin(&w.admin, with_channels(&["C2", "C1", "C2"]))
        .await
        .unwrap();
    assert_eq!(c.checkin.report_channels, ["C2", "C1"]);
    let names: Vec<&str> = c
        .directory
        .channels
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["eng", "standups"]);
    assert_eq!(c.directory.users, [(w.ada.id, "Ada Test".to_owned())]);
}

#[tokio::test]
async fn settings_change_partially_and_only_by_admins_or_the_author() {
    let w = World::new().await;
    let s = w.service();
    let c = w
        .create(&w.max, every_day("Eng", &[&w.ada], &[w.eng]))
        .await
        .checkin;
    let patch = CheckinInput {
        name: Some("Eng daily".into()),
        schedule: Some(ScheduleInput {
            time: Some("10:15".into()),
            ..ScheduleInput::default()
        }),
        allow_past_responses: Some(true),
        ..CheckinInput::default()
    };
    let changed = s.update_config(&w.max, c.id, patch.clone()).await.unwrap();
    let after = &changed.checkin;
    assert_eq!(after.name, "Eng daily");
    assert_eq!(after.schedule.time, time!(10:15));
    assert_eq!(after.schedule.days, c.schedule.days, "days kept");
    assert_eq!(after.schedule.timezone, "UTC", "zone kept");
    assert!(after.options.allow_past_responses);
    assert_eq!(after.revision, c.revision + 1);
    assert_eq!(after.participants, c.participants, "participants kept");

    // A participant who did not author it is refused; someone who cannot see it gets 404.
    assert_code(
        s.update_config(&w.ada, c.id, patch.clone()).await,
        ErrorCode::CheckinPermissionDenied,
    );
    assert_code(
        s.update_config(&w.bob, c.id, patch.clone()).await,
        ErrorCode::NotFound,
    );
    assert_code(
        s.update_config(&w.outsider, c.id, patch.clone()).await,
        ErrorCode::NotFound,
    );
    // Admins may.
    let renamed = CheckinInput {
        name: Some("By admin".into()),
        ..CheckinInput::default()
    };
    s.update_config(&w.admin, c.id, renamed).await.unwrap();

    // Participants are replaced as a whole; none is refused.
    let only_ada = CheckinInput {
        participants: Some(participants(&[&w.ada], &[])),
        ..CheckinInput::default()
    };
    let after = s
        .update_config(&w.max, c.id, only_ada)
        .await
        .unwrap()
        .checkin;
    assert_eq!(after.participants.users, [w.ada.id]);
    assert!(after.participants.teams.is_empty());
    let nobody = CheckinInput {
        participants: Some(ParticipantsInput::default()),
        ..CheckinInput::default()
    };
    assert_code(
        s.update_config(&w.max, c.id, nobody).await,
        ErrorCode::CheckinRequiresParticipant,
    );
    // The manager still asks only their own people.
    let outside = CheckinInput {
        participants: Some(participants(&[&w.bob], &[])),
        ..CheckinInput::default()
    };
    assert_code(
        s.update_config(&w.max, c.id, outside.clone()).await,
        ErrorCode::CheckinPermissionDenied,
    );
    s.update_config(&w.admin, c.id, outside).await.unwrap();
    let stored = s.get_checkin(&w.admin, c.id).await.unwrap().checkin;
    assert_eq!(stored.name, "By admin");
    assert_eq!(stored.participants.users, [w.bob.id]);
}

#[tokio::test]
async fn anonymity_cannot_be_turned_off_and_archived_check_ins_stay_off() {
    let w = World::new().await;
    let s = w.service();
    let c = w.standup(|i| i.is_anonymous = Some(true)).await;
    let off = CheckinInput {
        is_anonymous: Some(false),
        ..CheckinInput::default()
    };
    assert_code(
        s.update_config(&w.admin, c.id, off).await,
        ErrorCode::AnonymousIrreversible,
    );
    let on = CheckinInput {
        is_anonymous: Some(true),
        ..CheckinInput::default()
    };
    let same = s.update_config(&w.admin, c.id, on).await.unwrap();
    assert_eq!(
        same.checkin.revision, c.revision,
        "nothing changed, nothing written"
    );

    let paused = CheckinInput {
        is_active: Some(false),
        ..CheckinInput::default()
    };
    assert!(
        !s.update_config(&w.admin, c.id, paused)
            .await
            .unwrap()
            .checkin
            .active
    );
    assert_code(
        s.archive_checkin(&w.ada, c.id).await,
        ErrorCode::CheckinPermissionDenied,
    );
    s.archive_checkin(&w.admin, c.id).await.unwrap();
    s.archive_checkin(&w.admin, c.id).await.unwrap();
    let archived = s.get_checkin(&w.admin, c.id).await.unwrap().checkin;
    assert!(archived.archived && !archived.active);
    let resume = CheckinInput {
        is_active: Some(true),
        ..CheckinInput::default()
    };
    let e = assert_code(
        s.update_config(&w.admin, c.id, resume).await,
        ErrorCode::ParamsValidationError,
    );
    assert!(e.field_errors().contains_key("is_active"));
}

#[tokio::test]
async fn questions_are_added_changed_removed_and_reordered_with_their_codes() {
    let w = World::new().await;
    let s = w.service();
    let c = w.standup(|_| {}).await;
    let (q1, q2) = (
        c.questions.questions[0].clone(),
        c.questions.questions[1].clone(),
    );
    let (index, q3) = s
        .add_question(
            &w.admin,
            c.id,
            NewQuestion {
                question: "How do you feel, from 1 to 5?".into(),
                question_type: Some(QuestionType::Numeric),
                ..NewQuestion::default()
            },
            true,
        )
        .await
        .unwrap();
    assert_eq!(index, 2);
    assert_eq!(
        q3.short_question,
        crate::questions::generate_short_question("How do you feel, from 1 to 5?")
    );
    assert_code(
        s.add_question(
            &w.admin,
            c.id,
            NewQuestion {
                question: "No label?".into(),
                ..NewQuestion::default()
            },
            false,
        )
        .await,
        ErrorCode::ShortQuestionRequired,
    );
    let patch = QuestionPatch {
        required: Some(false),
        ..QuestionPatch::default()
    };
    let (index, changed) = s
        .update_question(&w.admin, c.id, q1.uuid, patch.clone(), false)
        .await
        .unwrap();
    assert_eq!((index, changed.required), (0, false));
    assert_code(
        s.update_question(&w.admin, c.id, new_id(), patch.clone(), false)
            .await,
        ErrorCode::NotFound,
    );

    assert_code(
        s.reorder_questions(&w.admin, c.id, &[]).await,
        ErrorCode::QuestionUuidsRequired,
    );
    assert_code(
        s.reorder_questions(&w.admin, c.id, &[q3.uuid, q1.uuid])
            .await,
        ErrorCode::QuestionUuidsIncomplete,
    );
    assert_code(
        s.reorder_questions(&w.admin, c.id, &[q3.uuid, q1.uuid, q1.uuid, q2.uuid])
            .await,
        ErrorCode::QuestionUuidsDuplicate,
    );
    let order = s
        .reorder_questions(&w.admin, c.id, &[q3.uuid, q1.uuid, q2.uuid])
        .await
        .unwrap();
    let uuids: Vec<Uuid> = order.questions.iter().map(|q| q.uuid).collect();
    assert_eq!(uuids, [q3.uuid, q1.uuid, q2.uuid]);

    s.remove_question(&w.admin, c.id, q1.uuid).await.unwrap();
    s.remove_question(&w.admin, c.id, q2.uuid).await.unwrap();
    assert_code(
        s.remove_question(&w.admin, c.id, q3.uuid).await,
        ErrorCode::QuestionsRequired,
    );
    // Members who did not author it change nothing.
    assert_code(
        s.remove_question(&w.ada, c.id, q3.uuid).await,
        ErrorCode::CheckinPermissionDenied,
    );
    let stored = s.get_checkin(&w.admin, c.id).await.unwrap().checkin;
    assert_eq!(stored.questions.questions.len(), 1);
    // Created at 1; add, update, reorder and two removals made it 6.
    assert_eq!(stored.questions.version, 6);
}
