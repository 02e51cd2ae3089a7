//! The rules of responses: sources, answers, visibility, edits, deletes and the workflow.

use serde_json::{Value, json};

use super::*;
use crate::forms::model::{GuestUser, ResponseListFilter, ResponseOrder, SubmissionSource};
use crate::forms::workflow::FlowStatus;

/// The content answering the form's first (required) question.
fn answer(form: &Form, text: &str) -> Vec<(String, Value)> {
    vec![(form.questions.questions[0].uuid.to_string(), json!(text))]
}

fn send(form: &Form, text: &str) -> Submission {
    Submission {
        content: answer(form, text),
        ..Submission::default()
    }
}

/// A member response of `who` to `form`.
pub(super) async fn submit(w: &World, who: &User, form: &Form) -> VisibleResponse {
    w.service()
        .submit_response(who, form.id, send(form, "It shipped"))
        .await
        .unwrap()
}

async fn list(w: &World, who: &User, form: &Form, filter: ResponseListFilter) -> Vec<uuid::Uuid> {
    w.service()
        .list_responses(who, form.id, &filter, PageRequest::default())
        .await
        .unwrap()
        .results
        .iter()
        .map(|r| r.id)
        .collect()
}

fn all() -> ResponseListFilter {
    ResponseListFilter {
        all: true,
        ..ResponseListFilter::default()
    }
}

async fn workflow_form(w: &World, config: FormConfig) -> Form {
    w.form(
        &w.ada,
        "Release",
        FormConfig {
            workflow: Some(states(&["Draft", "QA", "Done"])),
            ..config
        },
    )
    .await
}

#[tokio::test]
async fn a_member_response_is_stored_with_its_event() {
    let w = World::new().await;
    let f = w.plain(&w.ada, "Retro").await;
    let q = &f.questions.questions;
    let r = w
        .service()
        .submit_response(
            &w.bob,
            f.id,
            Submission {
                content: vec![
                    (q[0].uuid.to_string(), json!("  It shipped ")),
                    (q[1].uuid.to_string(), Value::Null),
                ],
                label: Some(" workflow:release ".into()),
                ..Submission::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.source, SubmissionSource::Member);
    assert_eq!(r.user.as_ref().map(|u| u.id), Some(w.bob.id));
    assert!(r.is_own && !r.edited);
    assert_eq!(r.label.as_deref(), Some("workflow:release"));
    assert_eq!(r.content.len(), 1, "a blank answer is no answer");
    assert_eq!(r.content[&q[0].uuid], json!("It shipped"));
    assert_eq!((r.current_state.clone(), r.flow_status), (None, None));
    assert_eq!((r.created_at, r.updated_at), (NOW, NOW));
    assert_eq!(
        w.service().get_response(&w.bob, f.id, r.id).await.unwrap(),
        r
    );
    let events = w.events(EventType::FormsResponseCreated);
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(
        (e.org_id, e.object_id, e.occurred_at),
        (w.org.id, Some(f.id), NOW)
    );
    assert_eq!(
        e.data,
        json!({
            "form": {"uuid": f.id.to_string(), "name": "Retro"},
            "response": {
                "uuid": r.id.to_string(),
                "current_state": null,
                "content": {q[0].uuid.to_string(): "It shipped"},
                "submission_source": "member",
                "submission_label": "workflow:release",
                "edited": false,
                "created_at": "2026-11-23T12:00:00Z",
                "updated_at": "2026-11-23T12:00:00Z",
                "user": {"uuid": w.bob.id.to_string(), "full_name": "Bob Test", "email": "bob@acme.test"},
                "guest_user": null,
            },
        })
    );
}

#[tokio::test]
async fn answers_are_checked_against_the_questions() {
    let w = World::new().await;
    let f = w.plain(&w.ada, "Retro").await;
    let s = w.service();
    let q = &f.questions.questions;
    let submit = |content: Vec<(String, Value)>| {
        s.submit_response(
            &w.bob,
            f.id,
            Submission {
                content,
                ..Submission::default()
            },
        )
    };
    let e = submit(vec![(q[1].uuid.to_string(), json!("extra"))])
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ParamsValidationError);
    assert!(e.field_errors().contains_key("content"));
    assert_eq!(e.extra()["uuids"], json!([q[0].uuid.to_string()]));
    let stranger = uuid::Uuid::now_v7();
    assert_eq!(
        fields(
            submit(vec![
                (stranger.to_string(), json!("x")),
                ("nope".into(), json!("y"))
            ])
            .await
        ),
        ["content.nope"],
        "keys that are not uuids are refused first"
    );
    assert_eq!(
        fields(submit(vec![(stranger.to_string(), json!("x"))]).await),
        [format!("content.{stranger}")]
    );
    assert_eq!(
        fields(submit(vec![(q[0].uuid.to_string(), json!({"a": 1}))]).await),
        [format!("content.{}", q[0].uuid)]
    );
    assert!(w.events(EventType::FormsResponseCreated).is_empty());
}

#[tokio::test]
async fn paused_and_archived_forms_take_no_responses() {
    let w = World::new().await;
    let s = w.service();
    let paused = w
        .form(
            &w.ada,
            "Paused",
            FormConfig {
                is_active: Some(false),
                ..FormConfig::default()
            },
        )
        .await;
    let e = s
        .submit_response(&w.bob, paused.id, send(&paused, "x"))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::FormNotAcceptingResponses, 400)
    );
    let archived = w.plain(&w.ada, "Archived").await;
    s.archive_form(&w.ada, archived.id).await.unwrap();
    assert_eq!(
        code(
            s.submit_response(&w.bob, archived.id, send(&archived, "x"))
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(
            s.submit_response(&w.outsider, paused.id, send(&paused, "x"))
                .await
        ),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn anonymous_responses_never_reveal_their_submitter() {
    let w = World::new().await;
    let s = w.service();
    let f = w.plain(&w.ada, "Retro").await;
    let hidden = s
        .submit_response(
            &w.bob,
            f.id,
            Submission {
                anonymous: true,
                ..send(&f, "secret plan")
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (hidden.source, hidden.user.clone()),
        (SubmissionSource::Anonymous, None)
    );
    assert!(hidden.is_own);
    // The owner reads it without a name, and no filter on Bob finds it.
    let read = s.get_response(&w.ada, f.id, hidden.id).await.unwrap();
    assert_eq!((read.user, read.is_own), (None, false));
    let bob = |filter: ResponseListFilter| list(&w, &w.ada, &f, filter);
    assert!(
        bob(ResponseListFilter {
            user: Some(w.bob.id),
            ..all()
        })
        .await
        .is_empty()
    );
    assert!(
        bob(ResponseListFilter {
            submitters: vec![w.bob.id],
            ..all()
        })
        .await
        .is_empty()
    );
    assert!(
        bob(ResponseListFilter {
            search: Some("Bob".into()),
            ..all()
        })
        .await
        .is_empty()
    );
    assert_eq!(
        bob(ResponseListFilter {
            search: Some("PLAN".into()),
            ..all()
        })
        .await,
        [hidden.id]
    );
    // Bob still finds his own.
    assert_eq!(
        list(&w, &w.bob, &f, ResponseListFilter::default()).await,
        [hidden.id]
    );
    let e = &w.events(EventType::FormsResponseCreated)[0];
    assert_eq!(e.data["response"]["user"], Value::Null);
    // An anonymous form makes every member response anonymous.
    let anon = w
        .form(
            &w.ada,
            "Pulse",
            FormConfig {
                is_anonymous: Some(true),
                ..FormConfig::default()
            },
        )
        .await;
    assert_eq!(
        submit(&w, &w.bob, &anon).await.source,
        SubmissionSource::Anonymous
    );
}

#[tokio::test]
async fn automation_and_guest_responses() {
    let w = World::new().await;
    let s = w.service();
    let f = w.plain(&w.ada, "Intake").await;
    let bot = GuestUser {
        full_name: Some("Release Bot".into()),
        email: Some(" BOT@Example.com ".into()),
    };
    let r = s
        .submit_response(
            &w.bob,
            f.id,
            Submission {
                automation: true,
                guest: Some(bot.clone()),
                ..send(&f, "deployed")
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (r.source, r.user.clone()),
        (SubmissionSource::Automation, None)
    );
    assert_eq!(
        r.guest.as_ref().unwrap().email.as_deref(),
        Some("bot@example.com")
    );
    let combined = Submission {
        automation: true,
        anonymous: true,
        ..send(&f, "x")
    };
    assert_eq!(
        fields(s.submit_response(&w.bob, f.id, combined).await),
        ["anonymous"]
    );
    let member_guest = Submission {
        guest: Some(bot.clone()),
        ..send(&f, "x")
    };
    assert_eq!(
        fields(s.submit_response(&w.bob, f.id, member_guest).await),
        ["guest_user"]
    );
    let bad_mail = Submission {
        automation: true,
        guest: Some(GuestUser {
            full_name: None,
            email: Some("not-an-email".into()),
        }),
        ..send(&f, "x")
    };
    assert_eq!(
        fields(s.submit_response(&w.bob, f.id, bad_mail).await),
        ["guest_user.email"]
    );

    // Guests respond only where public responses are allowed…
    let e = s
        .submit_response(&w.guest, f.id, send(&f, "hi"))
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.status()), (ErrorCode::GuestNotAllowed, 403));
    let public = w
        .form(
            &w.ada,
            "Applications",
            FormConfig {
                allow_public_responses: Some(true),
                require_email_and_name: Some(true),
                ..FormConfig::default()
            },
        )
        .await;
    // …with a name and an e-mail when the form requires them.
    let e = s
        .submit_response(&w.guest, public.id, send(&public, "hi"))
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.status()), (ErrorCode::GuestUserRequired, 400));
    let half = Submission {
        guest: Some(GuestUser {
            full_name: Some("Gus".into()),
            email: Some("  ".into()),
        }),
        ..send(&public, "hi")
    };
    assert_eq!(
        code(s.submit_response(&w.guest, public.id, half).await),
        ErrorCode::GuestUserRequired
    );
    let whole = Submission {
        guest: Some(bot),
        ..send(&public, "hi")
    };
    let r = s.submit_response(&w.guest, public.id, whole).await.unwrap();
    assert_eq!((r.source, r.user), (SubmissionSource::Public, None));
    let sources = |list: Vec<SubmissionSource>| ResponseListFilter {
        sources: list,
        ..all()
    };
    assert_eq!(
        list(&w, &w.ada, &public, sources(vec![SubmissionSource::Public])).await,
        [r.id]
    );
    assert!(
        list(&w, &w.ada, &public, sources(vec![SubmissionSource::Member]))
            .await
            .is_empty()
    );
    // The guest's name and e-mail are searchable.
    let found = ResponseListFilter {
        search: Some("release bot".into()),
        ..all()
    };
    assert_eq!(list(&w, &w.ada, &public, found).await, [r.id]);
}

#[tokio::test]
async fn people_see_their_own_responses_and_the_audience_sees_all() {
    let w = World::new().await;
    let s = w.service();
    let f = w
        .form(
            &w.ada,
            "Retro",
            FormConfig {
                who_can_see_responses: Some(restricted(&[&w.cy], &[])),
                ..FormConfig::default()
            },
        )
        .await;
    let by_bob = submit(&w, &w.bob, &f).await;
    w.clock.set(NOW + time::Duration::minutes(1));
    let by_admin = submit(&w, &w.admin, &f).await;
    // Default: one's own.
    assert_eq!(
        list(&w, &w.bob, &f, ResponseListFilter::default()).await,
        [by_bob.id]
    );
    assert_eq!(
        list(&w, &w.cy, &f, ResponseListFilter::default()).await,
        Vec::<uuid::Uuid>::new()
    );
    // Everyone's and someone else's need the audience.
    let e = s
        .list_responses(&w.bob, f.id, &all(), PageRequest::default())
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::FormResponseViewAllForbidden, 403)
    );
    let other = ResponseListFilter {
        user: Some(w.admin.id),
        ..ResponseListFilter::default()
    };
    assert_eq!(
        code(
            s.list_responses(&w.bob, f.id, &other, PageRequest::default())
                .await
        ),
        ErrorCode::FormResponseViewAllForbidden
    );
    let submitters = ResponseListFilter {
        submitters: vec![w.bob.id, w.admin.id],
        ..ResponseListFilter::default()
    };
    assert_eq!(
        code(
            s.list_responses(&w.bob, f.id, &submitters, PageRequest::default())
                .await
        ),
        ErrorCode::UserCanNotSeeFormResponses
    );
    let me = ResponseListFilter {
        user: Some(w.bob.id),
        submitters: vec![w.bob.id],
        ..ResponseListFilter::default()
    };
    assert_eq!(list(&w, &w.bob, &f, me).await, [by_bob.id]);
    assert_eq!(list(&w, &w.cy, &f, all()).await, [by_admin.id, by_bob.id]);
    let oldest = ResponseListFilter {
        order: ResponseOrder::Oldest,
        ..all()
    };
    assert_eq!(list(&w, &w.cy, &f, oldest).await, [by_bob.id, by_admin.id]);
    let ascending = ResponseListFilter {
        ascending: true,
        ..all()
    };
    assert_eq!(
        list(&w, &w.cy, &f, ascending).await,
        [by_bob.id, by_admin.id]
    );
    assert_eq!(
        list(&w, &w.cy, &f, submitters.clone()).await,
        [by_admin.id, by_bob.id]
    );
    let both = ResponseListFilter {
        user: Some(w.admin.id),
        ..submitters
    };
    assert_eq!(list(&w, &w.cy, &f, both).await, [by_admin.id]);
    let by_name = ResponseListFilter {
        search: Some("adele".into()),
        ..all()
    };
    assert_eq!(list(&w, &w.cy, &f, by_name).await, [by_admin.id]);
    // Reading one: the submitter and the audience; others get 404.
    assert!(s.get_response(&w.cy, f.id, by_bob.id).await.is_ok());
    assert_eq!(
        code(s.get_response(&w.bob, f.id, by_admin.id).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(s.get_response(&w.outsider, f.id, by_bob.id).await),
        ErrorCode::NotFound
    );
    let other_form = w.plain(&w.ada, "Other").await;
    assert_eq!(
        code(s.get_response(&w.ada, other_form.id, by_bob.id).await),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn responses_are_filtered_by_days_on_the_callers_clock() {
    let w = World::new().await;
    let f = w.plain(&w.ada, "Retro").await;
    let day = |d: u8| time::Date::from_calendar_date(2026, time::Month::November, d).unwrap();
    w.clock.set(datetime!(2026-11-21 23:30 UTC));
    let late = submit(&w, &w.bob, &f).await;
    w.clock.set(datetime!(2026-11-23 08:00 UTC));
    let today = submit(&w, &w.bob, &f).await;
    let range = |from: Option<u8>, to: Option<u8>| ResponseListFilter {
        date_from: from.map(day),
        date_to: to.map(day),
        ..all()
    };
    assert_eq!(
        list(&w, &w.ada, &f, range(Some(22), None)).await,
        [today.id]
    );
    assert_eq!(list(&w, &w.ada, &f, range(None, Some(21))).await, [late.id]);
    // Both pairs narrow together.
    let narrowed = ResponseListFilter {
        start_date: Some(day(21)),
        end_date: Some(day(21)),
        ..range(Some(20), Some(23))
    };
    assert_eq!(list(&w, &w.ada, &f, narrowed).await, [late.id]);
    let e = w
        .service()
        .list_responses(
            &w.ada,
            f.id,
            &range(Some(23), Some(22)),
            PageRequest::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.extra()["parameter"].clone()),
        (ErrorCode::InvalidDateRange, json!("date_from"))
    );
}

#[tokio::test]
async fn state_filters_need_a_workflow_and_one_of_its_states() {
    let w = World::new().await;
    let s = w.service();
    let plain = w.plain(&w.ada, "Retro").await;
    let by_state = |state: &str| ResponseListFilter {
        state: Some(state.to_owned()),
        ..all()
    };
    let e = s
        .list_responses(&w.ada, plain.id, &by_state("draft"), PageRequest::default())
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::InvalidWorkflowState, 400)
    );
    let status = ResponseListFilter {
        flow_status: Some(FlowStatus::Pending),
        ..all()
    };
    assert_eq!(
        code(
            s.list_responses(&w.ada, plain.id, &status, PageRequest::default())
                .await
        ),
        ErrorCode::InvalidWorkflowState
    );
    let f = workflow_form(&w, FormConfig::default()).await;
    let e = s
        .list_responses(&w.ada, f.id, &by_state("Draft"), PageRequest::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidWorkflowState);
    assert_eq!(e.extra()["allowed"], json!(["draft", "qa", "done"]));
    let a = submit(&w, &w.bob, &f).await;
    let b = submit(&w, &w.cy, &f).await;
    s.transition_response(&w.ada, f.id, b.id, "done", None)
        .await
        .unwrap();
    assert_eq!(list(&w, &w.ada, &f, by_state("draft")).await, [a.id]);
    assert_eq!(list(&w, &w.ada, &f, by_state("done")).await, [b.id]);
    assert_eq!(
        list(&w, &w.ada, &f, status.clone()).await,
        [a.id],
        "pending: not final"
    );
    let both = ResponseListFilter {
        state: Some("done".into()),
        ..status
    };
    assert!(list(&w, &w.ada, &f, both).await.is_empty());
}

#[tokio::test]
async fn responses_move_through_the_workflow() {
    let w = World::new().await;
    let s = w.service();
    let f = workflow_form(
        &w,
        FormConfig {
            who_can_change_states: Some(restricted(&[&w.cy], &[])),
            ..FormConfig::default()
        },
    )
    .await;
    let r = submit(&w, &w.bob, &f).await;
    assert_eq!(r.current_state.as_deref(), Some("draft"));
    let next: Vec<&str> = r
        .allowed_transitions
        .iter()
        .map(|t| t.key.as_str())
        .collect();
    assert_eq!(next, ["qa", "done"]);
    assert!(!r.can_change_state, "the submitter is no mover");

    // The submitter may not move it.
    let e = s
        .transition_response(&w.bob, f.id, r.id, "qa", None)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::FormResponseChangeStateForbidden, 403)
    );
    // A mover may, with a note.
    w.clock.set(NOW + time::Duration::minutes(5));
    let moved = s
        .transition_response(&w.cy, f.id, r.id, " qa ", Some("  QA assigned\nto Cy  "))
        .await
        .unwrap();
    assert_eq!(moved.current_state.as_deref(), Some("qa"));
    assert!(moved.can_change_state);
    assert_eq!(
        moved.history,
        [VisibleChange {
            from_state: "draft".into(),
            to_state: "qa".into(),
            at: NOW + time::Duration::minutes(5),
            note: Some("QA assigned\nto Cy".into()),
            is_self: true,
            actor_name: Some("Cy Test".into()),
        }]
    );
    assert_eq!(moved.updated_at, NOW + time::Duration::minutes(5));
    assert_eq!(s.get_response(&w.cy, f.id, r.id).await.unwrap(), moved);
    // The submitter sees the move but not who made it.
    let seen = s.get_response(&w.bob, f.id, r.id).await.unwrap();
    assert_eq!(
        (seen.history[0].is_self, seen.history[0].actor_name.clone()),
        (false, None)
    );

    let e = s
        .transition_response(&w.cy, f.id, r.id, "qa", None)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::WorkflowTransitionNotAllowed, 409)
    );
    assert_eq!(e.extra()["allowed"], json!(["draft", "done"]));
    assert_eq!(
        code(
            s.transition_response(&w.cy, f.id, r.id, "shipped", None)
                .await
        ),
        ErrorCode::WorkflowTransitionNotAllowed
    );
    assert_eq!(
        fields(
            s.transition_response(&w.cy, f.id, r.id, "done", Some("a\u{202e}b"))
                .await
        ),
        ["note"]
    );
    s.transition_response(&w.cy, f.id, r.id, "done", None)
        .await
        .unwrap();
    let e = s
        .transition_response(&w.cy, f.id, r.id, "draft", None)
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.status()), (ErrorCode::FinalStateLocked, 409));
    let locked = s.get_response(&w.cy, f.id, r.id).await.unwrap();
    assert!(locked.allowed_transitions.is_empty() && !locked.can_change_state);

    // Reopening, once the form allows it.
    s.update_config(
        &w.ada,
        f.id,
        FormConfig {
            allow_reopen_from_final_state: Some(true),
            ..FormConfig::default()
        },
    )
    .await
    .unwrap();
    let reopened = s
        .transition_response(&w.cy, f.id, r.id, "draft", None)
        .await
        .unwrap();
    assert_eq!(reopened.history.len(), 3);

    let events = w.events(EventType::FormsResponseUpdated);
    assert_eq!(events.len(), 3);
    let first = &events[0].data;
    assert_eq!(
        (&first["change"], &first["from_state"], &first["to_state"]),
        (&json!("state"), &json!("draft"), &json!("qa"))
    );
    assert_eq!(first["response"]["current_state"], "qa");
}

#[tokio::test]
async fn a_form_without_workflow_has_no_transitions() {
    let w = World::new().await;
    let f = w.plain(&w.ada, "Retro").await;
    let r = submit(&w, &w.bob, &f).await;
    let e = w
        .service()
        .transition_response(&w.ada, f.id, r.id, "done", None)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::InvalidWorkflowState, 400)
    );
}

#[tokio::test]
async fn approvers_move_approval_requests() {
    let w = World::new().await;
    let s = w.service();
    let team = w.team("Finance", &[&w.cy]).await;
    let f = w
        .form(
            &w.ada,
            "Expenses",
            FormConfig {
                use_for_approval: Some(true),
                approvers: Some(MembersInput {
                    user_uuids: Vec::new(),
                    team_uuids: vec![team.0],
                }),
                who_can_change_states: Some(restricted(&[&w.bob], &[])),
                ..FormConfig::default()
            },
        )
        .await;
    let r = submit(&w, &w.bob, &f).await;
    assert_eq!(
        (r.current_state.as_deref(), r.flow_status),
        (Some("pending"), Some(FlowStatus::Pending))
    );
    assert_eq!(
        code(
            s.transition_response(&w.bob, f.id, r.id, "approved", None)
                .await
        ),
        ErrorCode::FormResponseChangeStateForbidden
    );
    let approved = s
        .transition_response(&w.cy, f.id, r.id, "approved", None)
        .await
        .unwrap();
    assert_eq!(approved.flow_status, Some(FlowStatus::Approved));
    let approvals = ResponseListFilter {
        flow_status: Some(FlowStatus::Approved),
        ..all()
    };
    assert_eq!(list(&w, &w.cy, &f, approvals).await, [r.id]);
}

#[tokio::test]
async fn a_response_is_edited_by_its_submitter_or_the_forms_editors() {
    let w = World::new().await;
    let s = w.service();
    let f = w
        .form(
            &w.ada,
            "Retro",
            FormConfig {
                who_can_see_responses: Some(restricted(&[&w.cy], &[])),
                ..FormConfig::default()
            },
        )
        .await;
    let q = &f.questions.questions;
    let r = submit(&w, &w.bob, &f).await;
    w.clock.set(NOW + time::Duration::hours(1));
    let edited = s
        .edit_response(
            &w.bob,
            f.id,
            r.id,
            vec![(q[1].uuid.to_string(), json!("More"))],
        )
        .await
        .unwrap();
    assert_eq!(edited.content[&q[0].uuid], json!("It shipped"), "merged");
    assert_eq!(edited.content[&q[1].uuid], json!("More"));
    assert!(edited.edited);
    assert_eq!(edited.updated_at, NOW + time::Duration::hours(1));
    assert_eq!(s.get_response(&w.bob, f.id, r.id).await.unwrap(), edited);
    let e = &w.events(EventType::FormsResponseUpdated)[0];
    assert_eq!(e.data["change"], "content");
    assert_eq!(e.data["response"]["edited"], true);

    // null clears an answer; a required one cannot be cleared.
    let cleared = s
        .edit_response(
            &w.bob,
            f.id,
            r.id,
            vec![(q[1].uuid.to_string(), Value::Null)],
        )
        .await
        .unwrap();
    assert!(!cleared.content.contains_key(&q[1].uuid));
    let e = s
        .edit_response(
            &w.bob,
            f.id,
            r.id,
            vec![(q[0].uuid.to_string(), Value::Null)],
        )
        .await
        .unwrap_err();
    assert_eq!(e.extra()["uuids"], json!([q[0].uuid.to_string()]));

    // Who sees responses without editing: 403; who does not see them: 404; the owner may.
    let e = s
        .edit_response(&w.cy, f.id, r.id, vec![(q[1].uuid.to_string(), json!("x"))])
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::FormResponseEditForbidden, 403)
    );
    assert_eq!(
        code(s.edit_response(&w.guest, f.id, r.id, answer(&f, "x")).await),
        ErrorCode::NotFound
    );
    let by_admin = s
        .edit_response(&w.admin, f.id, r.id, answer(&f, "by admin"))
        .await
        .unwrap();
    assert_eq!(by_admin.content[&q[0].uuid], json!("by admin"));
    assert_eq!(w.events(EventType::FormsResponseUpdated).len(), 3);
}

#[tokio::test]
async fn answers_to_removed_questions_stay_and_changed_questions_are_rechecked() {
    let w = World::new().await;
    let s = w.service();
    let f = w.plain(&w.ada, "Retro").await;
    let q = f.questions.questions.clone();
    let r = s
        .submit_response(
            &w.bob,
            f.id,
            Submission {
                content: vec![
                    (q[0].uuid.to_string(), json!("It shipped")),
                    (q[1].uuid.to_string(), json!("old")),
                ],
                ..Submission::default()
            },
        )
        .await
        .unwrap();
    s.remove_question(&w.ada, f.id, q[1].uuid).await.unwrap();
    let numeric = QuestionPatch {
        question_type: Some(QuestionType::Numeric),
        ..QuestionPatch::default()
    };
    s.update_question(&w.ada, f.id, q[0].uuid, numeric, false)
        .await
        .unwrap();
    // The kept answer no longer fits its question: the edit must replace it.
    assert_eq!(
        fields(s.edit_response(&w.bob, f.id, r.id, Vec::new()).await),
        [format!("content.{}", q[0].uuid)]
    );
    let edited = s
        .edit_response(
            &w.bob,
            f.id,
            r.id,
            vec![(q[0].uuid.to_string(), json!("4"))],
        )
        .await
        .unwrap();
    assert_eq!(edited.content[&q[0].uuid], json!(4));
    assert_eq!(edited.content[&q[1].uuid], json!("old"), "kept as answered");
}

#[tokio::test]
async fn a_response_is_deleted_by_its_submitter_the_owner_or_an_admin() {
    let w = World::new().await;
    let s = w.service();
    let f = w
        .form(
            &w.ada,
            "Retro",
            FormConfig {
                who_can_edit: Some(restricted(&[&w.cy], &[])),
                ..FormConfig::default()
            },
        )
        .await;
    let mine = submit(&w, &w.bob, &f).await;
    let other = submit(&w, &w.bob, &f).await;
    let third = submit(&w, &w.bob, &f).await;
    // An editor who is not the owner: 403.
    let e = s.delete_response(&w.cy, f.id, mine.id).await.unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::FormResponseDeleteForbidden, 403)
    );
    s.delete_response(&w.bob, f.id, mine.id).await.unwrap();
    s.delete_response(&w.ada, f.id, other.id).await.unwrap();
    s.delete_response(&w.admin, f.id, third.id).await.unwrap();
    assert_eq!(
        code(s.get_response(&w.bob, f.id, mine.id).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(s.delete_response(&w.bob, f.id, mine.id).await),
        ErrorCode::NotFound
    );
    let deleted = w.events(EventType::FormsResponseDeleted);
    assert_eq!(deleted.len(), 3);
    assert_eq!(
        deleted[0].data,
        json!({"form": {"uuid": f.id.to_string(), "name": "Retro"}, "response": {"uuid": mine.id.to_string()}})
    );
    assert_eq!(
        w.service()
            .get_form(&w.ada, f.id)
            .await
            .unwrap()
            .form
            .response_count,
        0
    );
}
