use serde_json::json;

use super::*;

fn text(q: &str) -> NewQuestion {
    NewQuestion {
        question: q.to_owned(),
        short_question: Some(q.chars().take(20).collect()),
        ..NewQuestion::default()
    }
}

fn choice(q: &str, options: &[&str]) -> NewQuestion {
    NewQuestion {
        question_type: Some(QuestionType::MultipleChoice),
        options: Some(options.iter().map(|o| (*o).to_owned()).collect()),
        ..text(q)
    }
}

#[test]
fn short_questions_are_generated_deterministically() {
    assert_eq!(
        generate_short_question("What did you complete yesterday?"),
        "Complete yesterday"
    );
    assert_eq!(
        generate_short_question("Anything blocking you?"),
        "Blocking you"
    );
    assert_eq!(
        generate_short_question("How are you feeling today, from 1 to 5?"),
        "Feeling today from 1"
    );
    assert_eq!(generate_short_question("What is it?"), "It");
    // Only fillers: the first words stay.
    assert_eq!(
        generate_short_question("What did you do?"),
        "What did you do"
    );
    assert_eq!(generate_short_question("???"), "Question");
    let long = "Supercalifragilisticexpialidocious ".repeat(5);
    assert!(generate_short_question(&long).chars().count() <= MAX_SHORT_QUESTION_CHARS);
}

#[test]
fn creation_needs_questions_and_short_questions() {
    let e = QuestionSet::create(Vec::new(), false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::QuestionsRequired);

    let bare = NewQuestion {
        question: "What did you do?".into(),
        ..NewQuestion::default()
    };
    let e = QuestionSet::create(vec![bare.clone()], false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::ShortQuestionRequired);
    assert!(e.field_errors().contains_key("questions[0].short_question"));

    let set = QuestionSet::create(vec![bare], true).unwrap();
    assert_eq!(set.questions[0].short_question, "What did you do");
    assert_eq!(set.version, 1);
    assert!(
        set.questions[0].required,
        "questions are required by default"
    );
}

#[test]
fn every_bad_question_is_named_at_once() {
    let e = QuestionSet::create(
        vec![choice("Pick", &["only one"]), text(""), text("fine")],
        false,
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ParamsValidationError);
    assert!(
        e.field_errors().contains_key("questions[1].question"),
        "{e:?}"
    );
    let e = QuestionSet::create(vec![choice("Pick", &["only one"])], false).unwrap_err();
    assert!(e.field_errors().contains_key("questions[0].options"));
    let e = QuestionSet::create(vec![choice("Pick", &["a", "A"])], false).unwrap_err();
    assert!(
        e.field_errors().contains_key("questions[0].options"),
        "duplicates"
    );
}

#[test]
fn options_belong_to_multiple_choice_only() {
    let mut q = text("Anything?");
    q.options = Some(vec!["x".into(), "y".into()]);
    let set = QuestionSet::create(vec![q], false).unwrap();
    assert!(set.questions[0].options.is_empty());
}

fn logic_jump(target: Uuid, when: &str) -> Value {
    json!({"rules": {
        "rules_if": [{"conditions": [{"operator": "equals", "comparison_value": when, "logic_connector": "and"}],
                      "then": {"action": "go_to", "target": target}}],
        "rules_else": {"action": "next"}
    }})
}

#[test]
fn logic_is_validated_against_the_type_and_the_set() {
    let set = QuestionSet::create(
        vec![
            choice("Blocked?", &["Yes", "No"]),
            text("On what?"),
            text("Plans?"),
        ],
        false,
    )
    .unwrap();
    let [first, second, third] = [0, 1, 2].map(|i| set.questions[i].uuid);

    // Jump forward: fine.
    let (next, q) = set
        .update(
            first,
            QuestionPatch {
                logic: Some(logic_jump(third, "No")),
                ..QuestionPatch::default()
            },
            false,
        )
        .unwrap();
    assert!(q.logic.is_some());
    assert_eq!(next.version, 2);

    // A comparison value that is not an option.
    let e = set
        .update(
            first,
            QuestionPatch {
                logic: Some(logic_jump(third, "Maybe")),
                ..QuestionPatch::default()
            },
            false,
        )
        .unwrap_err();
    assert!(e.field_errors().contains_key("logic"));

    // Backwards and unknown targets.
    for target in [first, Uuid::now_v7()] {
        let e = next
            .update(
                second,
                QuestionPatch {
                    logic: Some(
                        json!({"rules": {"rules_else": {"action": "go_to", "target": target}}}),
                    ),
                    ..QuestionPatch::default()
                },
                false,
            )
            .unwrap_err();
        assert!(e.field_errors().contains_key("logic"), "{e:?}");
    }

    // Operators must fit the type; unknown keys are refused.
    let e = next
        .update(
            second,
            QuestionPatch {
                logic: Some(json!({"rules": {"rules_if": [{"conditions": [{"operator": "greater_than", "comparison_value": 3}], "then": {"action": "end"}}]}})),
                ..QuestionPatch::default()
            },
            false,
        )
        .unwrap_err();
    assert!(e.field_errors().contains_key("logic"));
    let e = Logic::parse("logic", &json!({"rules": {}, "extra": 1})).unwrap_err();
    assert!(e.field_errors().contains_key("logic"));

    // The target cannot be removed while jumped to, nor reordered before its source.
    let e = next.remove(third).unwrap_err();
    assert!(e.field_errors().contains_key("question"));
    let e = next.reorder(&[third, first, second]).unwrap_err();
    assert!(e.field_errors().contains_key("logic"));
}

#[test]
fn branching_decides_which_required_questions_are_asked() {
    let set = QuestionSet::create(
        vec![
            choice("Blocked?", &["Yes", "No"]),
            text("On what?"),
            text("Plans?"),
        ],
        false,
    )
    .unwrap();
    let [first, second, third] = [0, 1, 2].map(|i| set.questions[i].uuid);
    let (set, _) = set
        .update(
            first,
            QuestionPatch {
                logic: Some(logic_jump(third, "no")),
                ..QuestionPatch::default()
            },
            false,
        )
        .unwrap();
    // "No" skips the second question: it need not be answered.
    let answers = set
        .answers(&[(first, json!("No")), (third, json!("ship it"))], true)
        .unwrap();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0].response, json!("No"), "normalized to the option");
    // "Yes" asks it.
    let e = set
        .answers(&[(first, json!("Yes")), (third, json!("ship it"))], true)
        .unwrap_err();
    assert_eq!(e.extra()["uuids"], json!([second.to_string()]));
    // Incomplete answers are fine when not completing.
    assert!(set.answers(&[(first, json!("Yes"))], false).is_ok());
}

#[test]
fn answers_are_normalized_by_type() {
    let set = QuestionSet::create(
        vec![
            NewQuestion {
                question_type: Some(QuestionType::Boolean),
                ..text("Blocked?")
            },
            NewQuestion {
                question_type: Some(QuestionType::Numeric),
                ..text("Hours?")
            },
            choice("Areas?", &["API", "Web"]),
            text("Notes?"),
        ],
        false,
    )
    .unwrap();
    let ids: Vec<Uuid> = set.questions.iter().map(|q| q.uuid).collect();
    let a = set
        .answers(
            &[
                (ids[0], json!("yes")),
                (ids[1], json!("7.5")),
                (ids[2], json!(["web", "API", "Web"])),
                (ids[3], json!("  done  ")),
            ],
            true,
        )
        .unwrap();
    assert_eq!(a[0].response, json!(true));
    assert_eq!(a[1].response, json!(7.5));
    assert_eq!(a[2].response, json!(["Web", "API"]));
    assert_eq!(a[3].response, json!("done"));
    let a = set.answers(&[(ids[1], json!(3))], false).unwrap();
    assert_eq!(a[0].response, json!(3));

    for (i, bad) in [
        (0, json!("perhaps")),
        (1, json!("many")),
        (2, json!("Mobile")),
        (3, json!({})),
    ] {
        let e = set.answers(&[(ids[i], bad)], false).unwrap_err();
        assert!(e.field_errors().contains_key("responses[0]"), "{i}: {e:?}");
    }
    let e = set
        .answers(&[(Uuid::now_v7(), json!("x"))], false)
        .unwrap_err();
    assert!(e.field_errors().contains_key("responses[0]"));
    let e = set
        .answers(&[(ids[3], json!("a")), (ids[3], json!("b"))], false)
        .unwrap_err();
    assert!(e.field_errors().contains_key("responses[1]"));
}

#[test]
fn reorder_names_every_question_once() {
    let set = QuestionSet::create(vec![text("A?"), text("B?"), text("C?")], false).unwrap();
    let ids: Vec<Uuid> = set.questions.iter().map(|q| q.uuid).collect();
    assert_eq!(
        set.reorder(&[]).unwrap_err().code(),
        ErrorCode::QuestionUuidsRequired
    );
    assert_eq!(
        set.reorder(&[ids[0], ids[0], ids[1], ids[2]])
            .unwrap_err()
            .code(),
        ErrorCode::QuestionUuidsDuplicate
    );
    let e = set.reorder(&[ids[2], ids[0]]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::QuestionUuidsIncomplete);
    assert_eq!(e.extra()["uuids"], json!([ids[1].to_string()]));
    let e = set
        .reorder(&[ids[2], ids[1], ids[0], Uuid::now_v7()])
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ParamsValidationError);
    let next = set.reorder(&[ids[2], ids[0], ids[1]]).unwrap();
    let order: Vec<Uuid> = next.questions.iter().map(|q| q.uuid).collect();
    assert_eq!(order, [ids[2], ids[0], ids[1]]);
    assert_eq!(next.version, set.version + 1);
}

#[test]
fn the_last_question_stays() {
    let set = QuestionSet::create(vec![text("A?"), text("B?")], false).unwrap();
    let next = set.remove(set.questions[0].uuid).unwrap();
    assert_eq!(next.questions.len(), 1);
    assert_eq!(
        next.remove(next.questions[0].uuid).unwrap_err().code(),
        ErrorCode::QuestionsRequired
    );
    assert_eq!(
        next.remove(Uuid::now_v7()).unwrap_err().code(),
        ErrorCode::NotFound
    );
}

#[test]
fn updates_keep_the_short_question_unless_asked() {
    let set = QuestionSet::create(vec![text("What did you do?")], false).unwrap();
    let id = set.questions[0].uuid;
    let (_, q) = set
        .update(
            id,
            QuestionPatch {
                question: Some("What will you do next?".into()),
                ..QuestionPatch::default()
            },
            false,
        )
        .unwrap();
    assert_eq!(q.short_question, "What did you do?");
    let (_, q) = set
        .update(
            id,
            QuestionPatch {
                question: Some("What will you do next?".into()),
                ..QuestionPatch::default()
            },
            true,
        )
        .unwrap();
    assert_eq!(q.short_question, "Next");
    // Clearing the short question without generating one is refused.
    let e = set
        .update(
            id,
            QuestionPatch {
                short_question: Some(String::new()),
                ..QuestionPatch::default()
            },
            false,
        )
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ShortQuestionRequired);
    // A type change to multiple choice needs options.
    let e = set
        .update(
            id,
            QuestionPatch {
                question_type: Some(QuestionType::MultipleChoice),
                ..QuestionPatch::default()
            },
            false,
        )
        .unwrap_err();
    assert!(e.field_errors().contains_key("options"));
}
