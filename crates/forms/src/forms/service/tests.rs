//! The rules of `FormService`, through the in-memory ports: authoring here, responses in
//! `tests/responses.rs`.

use std::sync::Arc;

use teamcomm_kernel::{Error, ErrorCode, Event, EventType, PageRequest, TeamId, UserId};
use teamcomm_messaging::testing::InMemoryChannelRepository;
use teamcomm_messaging::{ChannelRepository, NewChannel};
use teamcomm_org::testing::{FixedClock, InMemoryOrgPorts};
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Organization, TeamRepository, User};
use time::OffsetDateTime;
use time::macros::datetime;

use super::*;
use crate::forms::model::{FormOrder, FormScope};
use crate::forms::testing::InMemoryFormRepository;
use crate::forms::workflow::StateInput;
use crate::questions::QuestionType;

mod responses;

const NOW: OffsetDateTime = datetime!(2026-11-23 12:00 UTC);

/// Two organizations on in-memory ports: in the first an admin, three members and a guest,
/// one registered channel; in the second an admin. A clock that stands still until moved.
struct World {
    ports: InMemoryOrgPorts,
    clock: Arc<FixedClock>,
    forms: Arc<InMemoryFormRepository>,
    channels: Arc<InMemoryChannelRepository>,
    org: Organization,
    admin: User,
    ada: User,
    bob: User,
    cy: User,
    guest: User,
    outsider: User,
}

impl World {
    async fn new() -> Self {
        let clock = Arc::new(FixedClock::new(NOW));
        let ports = InMemoryOrgPorts::new(clock.clone());
        let org = organization(&ports, "Acme").await;
        let other = organization(&ports, "Globex").await;
        let channels = Arc::new(InMemoryChannelRepository::with_clock(clock.clone()));
        channels
            .upsert_channel(
                org.id,
                &NewChannel::new("C1", "general", "slack", "channel").unwrap(),
            )
            .await
            .unwrap();
        World {
            admin: person(&ports, &org, "Adele", "admin").await,
            ada: person(&ports, &org, "Ada", "member").await,
            bob: person(&ports, &org, "Bob", "member").await,
            cy: person(&ports, &org, "Cy", "member").await,
            guest: person(&ports, &org, "Gus", "guest").await,
            outsider: person(&ports, &other, "Otto", "admin").await,
            forms: Arc::new(InMemoryFormRepository::new(ports.people.clone())),
            channels,
            ports,
            clock,
            org,
        }
    }

    fn service(&self) -> FormService {
        FormService::new(
            self.forms.clone(),
            self.ports.people.clone(),
            self.ports.teams.clone(),
            self.channels.clone(),
            self.clock.clone(),
        )
    }

    async fn team(&self, name: &str, members: &[&User]) -> TeamId {
        let ids: Vec<UserId> = members.iter().map(|u| u.id).collect();
        self.ports
            .teams
            .create_team(self.org.id, TeamId::new(), name, &ids, &[])
            .await
            .unwrap()
            .id
    }

    /// A form by `owner` with two text questions (the second optional) and `config`.
    async fn form(&self, owner: &User, name: &str, config: FormConfig) -> Form {
        self.service()
            .create_form(
                owner,
                NewForm {
                    config: FormConfig {
                        name: Some(name.to_owned()),
                        ..config
                    },
                    questions: vec![question("What shipped?"), optional("Anything else?")],
                    generate_short_question: true,
                },
            )
            .await
            .unwrap()
            .form
    }

    async fn plain(&self, owner: &User, name: &str) -> Form {
        self.form(owner, name, FormConfig::default()).await
    }

    fn events(&self, kind: EventType) -> Vec<Event> {
        self.ports.events.of_type(kind)
    }
}

async fn organization(ports: &InMemoryOrgPorts, name: &str) -> Organization {
    let new = NewOrganization::new(name, "business", None, None, None).unwrap();
    ports.people.create_organization(&new).await.unwrap()
}

async fn person(ports: &InMemoryOrgPorts, org: &Organization, first: &str, role: &str) -> User {
    let email = format!("{}@{}.test", first.to_lowercase(), org.name.to_lowercase());
    let new = NewUser::new(&email, first, "Test", role, None).unwrap();
    ports.people.create_user(org.id, &new).await.unwrap()
}

fn question(text: &str) -> NewQuestion {
    NewQuestion {
        question: text.to_owned(),
        ..NewQuestion::default()
    }
}

fn optional(text: &str) -> NewQuestion {
    NewQuestion {
        required: Some(false),
        ..question(text)
    }
}

fn states(labels: &[&str]) -> WorkflowInput {
    WorkflowInput::Enabled(
        labels
            .iter()
            .map(|l| StateInput {
                label: (*l).to_owned(),
                color: "#3498db".into(),
                is_final: None,
            })
            .collect(),
    )
}

fn restricted(users: &[&User], teams: &[TeamId]) -> AudienceInput {
    AudienceInput {
        mode: AudienceMode::Restricted,
        user_uuids: users.iter().map(|u| u.id.0).collect(),
        team_uuids: teams.iter().map(|t| t.0).collect(),
    }
}

#[track_caller]
fn code<T: std::fmt::Debug>(result: Result<T, Error>) -> ErrorCode {
    result.expect_err("expected a refusal").code()
}

#[track_caller]
fn fields<T: std::fmt::Debug>(result: Result<T, Error>) -> Vec<String> {
    let e = result.expect_err("expected a refusal");
    assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{e:?}");
    e.field_errors().keys().cloned().collect()
}

fn names(page: &teamcomm_kernel::Page<VisibleForm>) -> Vec<&str> {
    page.results.iter().map(|f| f.form.name.as_str()).collect()
}

#[tokio::test]
async fn a_form_is_created_with_defaults_owned_by_its_creator() {
    let w = World::new().await;
    let seen = w
        .service()
        .create_form(
            &w.ada,
            NewForm {
                config: FormConfig {
                    name: Some("  Sprint retro ".into()),
                    report_channels: Some(vec!["C1".into(), " C1".into()]),
                    ..FormConfig::default()
                },
                questions: vec![
                    question("What went well?"),
                    NewQuestion {
                        question_type: Some(QuestionType::Boolean),
                        short_question: Some("Ship".into()),
                        ..question("Ship it?")
                    },
                ],
                generate_short_question: true,
            },
        )
        .await
        .unwrap();
    let f = &seen.form;
    assert_eq!(f.name, "Sprint retro");
    assert_eq!(
        (f.owner.id, f.owner.full_name.as_str()),
        (w.ada.id, "Ada Test")
    );
    assert_eq!(f.org_id, w.org.id);
    assert_eq!(f.settings, FormSettings::default());
    assert!(f.settings.is_active && !f.is_archived);
    assert_eq!(f.report_channels, ["C1"], "each channel once");
    assert_eq!(seen.channels[0].channel.as_ref().unwrap().name, "general");
    let shorts: Vec<&str> = f
        .questions
        .questions
        .iter()
        .map(|q| q.short_question.as_str())
        .collect();
    assert_eq!(shorts, ["Went well", "Ship"]);
    assert_eq!((f.version, f.questions.version), (1, 1));
    assert_eq!((f.created_at, f.updated_at), (NOW, NOW));
    assert_eq!(
        seen.access,
        FormAccess {
            can_edit: true,
            can_see_responses: true,
            can_change_states: true,
            is_manager: true
        }
    );
    // Stored as shown, readable by anyone of the organization.
    let read = w.service().get_form(&w.bob, f.id).await.unwrap();
    assert_eq!(&read.form, f);
    assert!(!read.access.can_edit && !read.access.can_see_responses);
    assert_eq!(
        code(w.service().get_form(&w.outsider, f.id).await),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn guests_do_not_author_forms_and_creation_needs_questions_and_a_name() {
    let w = World::new().await;
    let s = w.service();
    let new = |name: &str, questions: Vec<NewQuestion>, generate: bool| NewForm {
        config: FormConfig {
            name: Some(name.to_owned()),
            ..FormConfig::default()
        },
        questions,
        generate_short_question: generate,
    };
    let e = s
        .create_form(&w.guest, new("Retro", vec![question("Q?")], true))
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.status()), (ErrorCode::GuestNotAllowed, 403));
    assert_eq!(
        code(s.create_form(&w.ada, new("Retro", Vec::new(), true)).await),
        ErrorCode::QuestionsRequired
    );
    assert_eq!(
        code(
            s.create_form(&w.ada, new("Retro", vec![question("Q?")], false))
                .await
        ),
        ErrorCode::ShortQuestionRequired
    );
    for bad in ["ab", "   ", "a\u{202e}bc"] {
        assert_eq!(
            fields(
                s.create_form(&w.ada, new(bad, vec![question("Q?")], true))
                    .await
            ),
            ["name"],
            "{bad:?}"
        );
    }
    let nameless = NewForm {
        questions: vec![question("Q?")],
        generate_short_question: true,
        ..NewForm::default()
    };
    assert_eq!(fields(s.create_form(&w.ada, nameless).await), ["name"]);
    let listed = s
        .list_forms(&w.admin, &FormListFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.count, 0, "nothing was stored");
}

#[tokio::test]
async fn report_channels_must_be_the_organizations_and_at_most_three() {
    let w = World::new().await;
    let s = w.service();
    let with = |ids: &[&str]| FormConfig {
        name: Some("Retro".into()),
        report_channels: Some(ids.iter().map(|i| (*i).to_owned()).collect()),
        ..FormConfig::default()
    };
    let create = |config| {
        s.create_form(
            &w.ada,
            NewForm {
                config,
                questions: vec![question("Q?")],
                generate_short_question: true,
            },
        )
    };
    let e = create(with(&["C1", "C404"])).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::ReportChannelNotFound);
    assert_eq!(e.extra()["ids"], serde_json::json!(["C404"]));
    let e = create(with(&["C1", "C2", "C3", "C4"])).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::TooManyReportChannels);
    assert_eq!(e.extra()["limit"], 3);
    // Another organization's channel is not one of ours.
    w.channels
        .upsert_channel(
            w.outsider.org_id,
            &NewChannel::new("C9", "theirs", "slack", "channel").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        code(create(with(&["C9"])).await),
        ErrorCode::ReportChannelNotFound
    );
}

#[tokio::test]
async fn workflows_get_keys_and_approval_forms_get_the_approval_workflow() {
    let w = World::new().await;
    let f = w
        .form(
            &w.ada,
            "Release",
            FormConfig {
                workflow: Some(states(&["Draft", "In QA", "Done"])),
                ..FormConfig::default()
            },
        )
        .await;
    let wf = f.settings.workflow.as_ref().unwrap();
    let keys: Vec<&str> = wf.states().iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["draft", "in_qa", "done"]);
    assert!(wf.states()[2].is_final);

    let approval = w
        .form(
            &w.ada,
            "Expenses",
            FormConfig {
                use_for_approval: Some(true),
                ..FormConfig::default()
            },
        )
        .await;
    assert_eq!(approval.settings.workflow, Some(Workflow::approval()));

    let e = w
        .service()
        .update_config(
            &w.ada,
            approval.id,
            FormConfig {
                workflow: Some(WorkflowInput::Disabled),
                ..FormConfig::default()
            },
        )
        .await;
    assert_eq!(fields(e), ["workflow"]);
    // Turning approval off first lets the workflow go.
    let off = w
        .service()
        .update_config(
            &w.ada,
            approval.id,
            FormConfig {
                use_for_approval: Some(false),
                workflow: Some(WorkflowInput::Disabled),
                ..FormConfig::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(off.form.settings.workflow, None);
    let e = w
        .service()
        .update_config(
            &w.ada,
            approval.id,
            FormConfig {
                workflow: Some(states(&["Only"])),
                ..FormConfig::default()
            },
        )
        .await;
    assert_eq!(fields(e), ["workflow.states"]);
}

#[tokio::test]
async fn audiences_name_people_and_teams_of_the_organization() {
    let w = World::new().await;
    let team = w.team("Core", &[&w.bob]).await;
    let s = w.service();
    let config = |edit: AudienceInput| FormConfig {
        who_can_edit: Some(edit),
        ..FormConfig::default()
    };
    let f = w
        .form(
            &w.ada,
            "Retro",
            config(restricted(&[&w.cy, &w.cy], &[team])),
        )
        .await;
    assert_eq!(
        f.settings.who_can_edit.members,
        Members {
            users: vec![w.cy.id],
            teams: vec![team]
        }
    );
    let update = |c| s.update_config(&w.ada, f.id, c);
    assert_eq!(
        fields(update(config(restricted(&[&w.outsider], &[TeamId::new()]))).await),
        ["who_can_edit.team_uuids", "who_can_edit.user_uuids"]
    );
    assert_eq!(
        fields(update(config(restricted(&[], &[]))).await),
        ["who_can_edit"]
    );
    let everyone_named = AudienceInput {
        mode: AudienceMode::Everyone,
        ..restricted(&[&w.bob], &[])
    };
    assert_eq!(
        fields(update(config(everyone_named)).await),
        ["who_can_edit"]
    );
    let approvers = FormConfig {
        approvers: Some(MembersInput {
            user_uuids: vec![w.outsider.id.0],
            team_uuids: Vec::new(),
        }),
        ..FormConfig::default()
    };
    assert_eq!(fields(update(approvers).await), ["approvers.user_uuids"]);
    // Every bad field at once.
    let many = FormConfig {
        name: Some("x".into()),
        who_can_see_responses: Some(restricted(&[], &[])),
        command: Some(Some("Not ok!".into())),
        workflow: Some(states(&["A"])),
        ..FormConfig::default()
    };
    assert_eq!(
        fields(update(many).await),
        [
            "command",
            "name",
            "who_can_see_responses",
            "workflow.states"
        ]
    );
    assert_eq!(s.get_form(&w.ada, f.id).await.unwrap().form, f, "unchanged");
}

#[tokio::test]
async fn only_editors_change_a_form() {
    let w = World::new().await;
    let team = w.team("Core", &[&w.bob]).await;
    let f = w
        .form(
            &w.ada,
            "Retro",
            FormConfig {
                who_can_edit: Some(restricted(&[], &[team])),
                ..FormConfig::default()
            },
        )
        .await;
    let s = w.service();
    let rename = |name: &str| FormConfig {
        name: Some(name.to_owned()),
        ..FormConfig::default()
    };
    let e = s
        .update_config(&w.cy, f.id, rename("Mine"))
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.status()), (ErrorCode::FormEditForbidden, 403));
    assert_eq!(
        code(s.archive_form(&w.cy, f.id).await),
        ErrorCode::FormEditForbidden
    );
    assert_eq!(
        code(s.add_question(&w.cy, f.id, question("More?"), true).await),
        ErrorCode::FormEditForbidden
    );
    assert_eq!(
        code(s.update_config(&w.outsider, f.id, rename("Theirs")).await),
        ErrorCode::NotFound
    );

    // A team member edits; only what was sent changes.
    w.clock.set(NOW + time::Duration::hours(1));
    let edited = s
        .update_config(
            &w.bob,
            f.id,
            FormConfig {
                name: Some("Retro 2".into()),
                is_anonymous: Some(true),
                ..FormConfig::default()
            },
        )
        .await
        .unwrap()
        .form;
    assert_eq!(edited.name, "Retro 2");
    assert!(edited.settings.is_anonymous);
    assert_eq!(edited.settings.who_can_edit, f.settings.who_can_edit);
    assert_eq!(
        (edited.version, edited.updated_at),
        (2, NOW + time::Duration::hours(1))
    );
    assert_eq!(s.get_form(&w.admin, f.id).await.unwrap().form, edited);
    // The admin may too.
    s.update_config(&w.admin, f.id, rename("Retro 3"))
        .await
        .unwrap();
}

#[tokio::test]
async fn commands_are_unique_among_live_forms_while_enabled() {
    let w = World::new().await;
    let s = w.service();
    let cmd = |c: Option<&str>| FormConfig {
        command: Some(c.map(str::to_owned)),
        ..FormConfig::default()
    };
    let first = w.form(&w.ada, "Deploys", cmd(Some(" Release "))).await;
    assert_eq!(first.settings.command.as_deref(), Some("release"));
    assert!(first.settings.command_enabled);
    let second = w.plain(&w.bob, "Hotfixes").await;
    let e = s
        .update_config(&w.bob, second.id, cmd(Some("release")))
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.status()), (ErrorCode::FormCommandTaken, 409));
    // Other organizations and disabled commands do not count.
    let theirs = w.plain(&w.outsider, "Theirs").await;
    s.update_config(&w.outsider, theirs.id, cmd(Some("release")))
        .await
        .unwrap();
    s.update_config(
        &w.ada,
        first.id,
        FormConfig {
            command_enabled: Some(false),
            ..FormConfig::default()
        },
    )
    .await
    .unwrap();
    s.update_config(&w.bob, second.id, cmd(Some("release")))
        .await
        .unwrap();
    // Enabling the first again collides; archiving the second frees the name.
    let enable = FormConfig {
        command_enabled: Some(true),
        ..FormConfig::default()
    };
    assert_eq!(
        code(s.update_config(&w.ada, first.id, enable.clone()).await),
        ErrorCode::FormCommandTaken
    );
    s.archive_form(&w.bob, second.id).await.unwrap();
    s.update_config(&w.ada, first.id, enable).await.unwrap();
    // A command is removed with null; enabling none is refused.
    let cleared = s
        .update_config(&w.ada, first.id, cmd(None))
        .await
        .unwrap()
        .form;
    assert_eq!(
        (cleared.settings.command, cleared.settings.command_enabled),
        (None, false)
    );
    let e = s
        .update_config(
            &w.ada,
            first.id,
            FormConfig {
                command_enabled: Some(true),
                ..FormConfig::default()
            },
        )
        .await;
    assert_eq!(fields(e), ["command_enabled"]);
    for bad in ["-x", "", &"a".repeat(32), "ünicode", "a b"] {
        assert_eq!(
            fields(s.update_config(&w.ada, first.id, cmd(Some(bad))).await),
            ["command"],
            "{bad:?}"
        );
    }
}

#[tokio::test]
async fn archiving_hides_a_form_from_lists_and_is_idempotent() {
    let w = World::new().await;
    let s = w.service();
    let f = w.plain(&w.ada, "Retro").await;
    s.archive_form(&w.ada, f.id).await.unwrap();
    s.archive_form(&w.ada, f.id).await.unwrap();
    let read = s.get_form(&w.bob, f.id).await.unwrap().form;
    assert!(read.is_archived);
    assert_eq!(read.version, 2, "the second archive wrote nothing");
    let list =
        async |filter: FormListFilter| s.list_forms(&w.bob, &filter, PageRequest::default()).await;
    assert_eq!(list(FormListFilter::default()).await.unwrap().count, 0);
    let with_archived = FormListFilter {
        include_archived: true,
        ..FormListFilter::default()
    };
    assert_eq!(list(with_archived).await.unwrap().count, 1);
}

#[tokio::test]
async fn questions_are_edited_through_the_form() {
    let w = World::new().await;
    let s = w.service();
    let f = w.plain(&w.ada, "Retro").await;
    let (index, added) = s
        .add_question(&w.ada, f.id, question("Blockers?"), true)
        .await
        .unwrap();
    assert_eq!((index, added.short_question.as_str()), (2, "Blockers"));
    let patch = QuestionPatch {
        question: Some("Any blockers?".into()),
        ..QuestionPatch::default()
    };
    let (index, changed) = s
        .update_question(&w.ada, f.id, added.uuid, patch, true)
        .await
        .unwrap();
    assert_eq!((index, changed.question.as_str()), (2, "Any blockers?"));
    let first = f.questions.questions[0].uuid;
    let order = [added.uuid, f.questions.questions[1].uuid, first];
    let reordered = s.reorder_questions(&w.ada, f.id, &order).await.unwrap();
    let got: Vec<_> = reordered.iter().map(|q| q.uuid).collect();
    assert_eq!(got, order);
    s.remove_question(&w.ada, f.id, first).await.unwrap();
    let read = s.get_form(&w.ada, f.id).await.unwrap().form;
    assert_eq!(read.questions.questions.len(), 2);
    assert_eq!(
        read.questions.version, 5,
        "every change bumps the set's version"
    );
    assert_eq!(read.version, 5);
    assert_eq!(
        code(s.remove_question(&w.ada, f.id, uuid::Uuid::now_v7()).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(s.reorder_questions(&w.ada, f.id, &[added.uuid]).await),
        ErrorCode::QuestionUuidsIncomplete
    );
}

#[tokio::test]
async fn workflow_edits_keep_every_response_in_a_state_of_the_workflow() {
    let w = World::new().await;
    let s = w.service();
    let f = w
        .form(
            &w.ada,
            "Release",
            FormConfig {
                workflow: Some(states(&["Draft", "QA", "Done"])),
                ..FormConfig::default()
            },
        )
        .await;
    let r = responses::submit(&w, &w.ada, &f).await;
    s.transition_response(&w.ada, f.id, r.id, "qa", None)
        .await
        .unwrap();
    let set = |labels: &[&str]| FormConfig {
        workflow: Some(states(labels)),
        ..FormConfig::default()
    };
    // QA holds a response: it cannot go.
    let e = s
        .update_config(&w.ada, f.id, set(&["Draft", "Done"]))
        .await
        .unwrap_err();
    assert_eq!((e.code(), e.status()), (ErrorCode::StateInUse, 409));
    assert_eq!(e.extra()["states"], serde_json::json!(["qa"]));
    // Draft holds none: it may.
    s.update_config(&w.ada, f.id, set(&["QA", "Done", "Shipped"]))
        .await
        .unwrap();
    assert_eq!(
        s.get_response(&w.ada, f.id, r.id)
            .await
            .unwrap()
            .current_state
            .as_deref(),
        Some("qa")
    );
    // Off: responses have no state; on again: they start over.
    s.update_config(
        &w.ada,
        f.id,
        FormConfig {
            workflow: Some(WorkflowInput::Disabled),
            ..FormConfig::default()
        },
    )
    .await
    .unwrap();
    let read = s.get_response(&w.ada, f.id, r.id).await.unwrap();
    assert_eq!(
        (read.current_state, read.allowed_transitions.len()),
        (None, 0)
    );
    s.update_config(&w.ada, f.id, set(&["New", "Old"]))
        .await
        .unwrap();
    let read = s.get_response(&w.ada, f.id, r.id).await.unwrap();
    assert_eq!(read.current_state.as_deref(), Some("new"));
    assert_eq!(read.history.len(), 1, "the history stays");
}

#[tokio::test]
async fn forms_are_listed_filtered_and_sorted() {
    let w = World::new().await;
    let s = w.service();
    let at = |h: i64| NOW + time::Duration::hours(h);
    w.clock.set(at(-48));
    let retro = w.plain(&w.ada, "Retro").await;
    w.clock.set(at(-24));
    let public = w
        .form(
            &w.bob,
            "Applications",
            FormConfig {
                allow_public_responses: Some(true),
                ..FormConfig::default()
            },
        )
        .await;
    w.clock.set(at(0));
    let approval = w
        .form(
            &w.bob,
            "Expenses",
            FormConfig {
                use_for_approval: Some(true),
                ..FormConfig::default()
            },
        )
        .await;
    let other = w.plain(&w.outsider, "Theirs").await;
    responses::submit(&w, &w.ada, &public).await;
    responses::submit(&w, &w.bob, &public).await;
    responses::submit(&w, &w.ada, &approval).await;

    let list = async |filter: FormListFilter| {
        s.list_forms(&w.cy, &filter, PageRequest::default())
            .await
            .unwrap()
    };
    let f = FormListFilter::default;
    assert_eq!(
        names(&list(f()).await),
        ["Expenses", "Applications", "Retro"],
        "newest first"
    );
    let asc = FormListFilter {
        order: FormOrder::Alphabetical,
        ascending: true,
        ..f()
    };
    assert_eq!(
        names(&list(asc).await),
        ["Applications", "Expenses", "Retro"]
    );
    let total = FormListFilter {
        order: FormOrder::Total,
        ..f()
    };
    let page = list(total).await;
    assert_eq!(names(&page), ["Applications", "Expenses", "Retro"]);
    let counts: Vec<u64> = page.results.iter().map(|v| v.form.response_count).collect();
    assert_eq!(counts, [2, 1, 0]);
    let scoped = |scope| FormListFilter { scope, ..f() };
    assert_eq!(
        names(&list(scoped(FormScope::Public)).await),
        ["Applications"]
    );
    assert_eq!(
        names(&list(scoped(FormScope::Approval)).await),
        ["Expenses"]
    );
    assert_eq!(
        names(&list(scoped(FormScope::Workflow)).await),
        ["Expenses"]
    );
    let mine = s
        .list_forms(&w.ada, &scoped(FormScope::Me), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(names(&mine), ["Retro"]);
    let owners = FormListFilter {
        owners: vec![w.bob.id, w.outsider.id],
        ..f()
    };
    assert_eq!(names(&list(owners).await), ["Expenses", "Applications"]);
    let search = FormListFilter {
        search: Some("PENS".into()),
        ..f()
    };
    assert_eq!(names(&list(search).await), ["Expenses"]);
    let days = FormListFilter {
        start_date: Some(time::macros::date!(2026 - 11 - 22)),
        end_date: Some(time::macros::date!(2026 - 11 - 22)),
        ..f()
    };
    assert_eq!(names(&list(days).await), ["Applications"]);
    let backwards = FormListFilter {
        start_date: Some(time::macros::date!(2026 - 11 - 23)),
        end_date: Some(time::macros::date!(2026 - 11 - 22)),
        ..f()
    };
    assert_eq!(
        code(
            s.list_forms(&w.cy, &backwards, PageRequest::default())
                .await
        ),
        ErrorCode::InvalidDateRange
    );
    // Labels and stars, as the labels area records them.
    let label = uuid::Uuid::now_v7();
    w.forms.label(w.org.id, retro.id, label);
    w.forms.star(w.cy.id, public.id);
    let labelled = FormListFilter {
        labels: vec![label, uuid::Uuid::now_v7()],
        ..f()
    };
    assert_eq!(names(&list(labelled).await), ["Retro"]);
    let starred = FormListFilter {
        featured: Some(true),
        ..f()
    };
    assert_eq!(names(&list(starred).await), ["Applications"]);
    let first = FormListFilter {
        prioritize_featured: true,
        ..f()
    };
    assert_eq!(
        names(&list(first).await),
        ["Applications", "Expenses", "Retro"]
    );
    assert!(names(&list(f()).await).iter().all(|n| *n != other.name));
    let paged = s
        .list_forms(
            &w.cy,
            &f(),
            PageRequest {
                offset: 1,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!((paged.count, names(&paged)), (3, vec!["Applications"]));
}

#[tokio::test]
async fn form_owners_are_people_with_a_live_form() {
    let w = World::new().await;
    let s = w.service();
    w.plain(&w.bob, "Retro").await;
    w.plain(&w.ada, "Release").await;
    let archived = w.plain(&w.cy, "Old").await;
    s.archive_form(&w.cy, archived.id).await.unwrap();
    w.plain(&w.outsider, "Theirs").await;
    let owners = s
        .list_form_owners(&w.guest, None, PageRequest::default())
        .await
        .unwrap();
    let got: Vec<UserId> = owners.results.iter().map(|u| u.id).collect();
    assert_eq!((owners.count, got), (2, vec![w.ada.id, w.bob.id]));
    let found = s
        .list_form_owners(&w.guest, Some("BOB@"), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(found.results, vec![w.bob.clone()]);
}

#[tokio::test]
async fn team_audiences_read_the_viewers_teams() {
    let w = World::new().await;
    let team = w.team("Core", &[&w.cy]).await;
    let f = w
        .form(
            &w.ada,
            "Retro",
            FormConfig {
                who_can_see_responses: Some(restricted(&[], &[team])),
                ..FormConfig::default()
            },
        )
        .await;
    let s = w.service();
    assert!(
        s.get_form(&w.cy, f.id)
            .await
            .unwrap()
            .access
            .can_see_responses
    );
    assert!(
        !s.get_form(&w.bob, f.id)
            .await
            .unwrap()
            .access
            .can_see_responses
    );
    let listed = s
        .list_forms(&w.cy, &FormListFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert!(listed.results[0].access.can_see_responses);
    assert_eq!(
        listed.results[0].form.settings.who_can_see_responses.mode,
        AudienceMode::Restricted
    );
}
