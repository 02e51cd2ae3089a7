//! `FormRepository`: forms, their responses and the responses' workflow moves.

use std::collections::BTreeMap;
use std::sync::Arc;

use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::json;
use teamcomm_forms::forms::testing::InMemoryFormRepository;
use teamcomm_forms::forms::{
    Archived, Audience, AudienceMode, Form, FormOrder, FormRepository, FormResponse, FormSelection,
    FormSettings, GuestUser, Members, Person, ResponseSelection, StateChange, StateInput,
    StateMigration, SubmissionSource, Workflow, Written,
};
use teamcomm_forms::questions::{NewQuestion, QuestionSet};
use teamcomm_kernel::{EventType, OrgId, PageRequest, TeamId, UserId};
use teamcomm_org::testing::InMemoryOrgRepository;
use teamcomm_org::{Organization, User};
use teamcomm_store_pg::{Database, PgFormRepository};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::ports::{
    Ports, assert_conflict, assert_not_found, assert_refused_by_check, event, micros,
};

contract!(
    a_form_reads_back_as_written,
    form_writes_check_the_version,
    enabled_commands_are_unique_among_live_forms,
    workflow_changes_move_or_guard_the_responses_states,
    forms_are_listed_with_every_filter_and_order,
    form_owners_are_people_with_a_live_form,
    a_response_reads_back_with_its_history,
    response_writes_check_the_forms_version,
    content_edits_check_the_responses_version,
    a_response_moves_from_the_state_it_is_in_only,
    responses_are_listed_with_every_filter,
    deleting_a_response_records_its_event,
);

/// The forms port and what its tests need beside it: labelling and starring forms, which the
/// labels area writes (its rows in Postgres).
pub struct FormPorts {
    pub repo: Arc<dyn FormRepository>,
    side: Side,
}

enum Side {
    Memory(Arc<InMemoryFormRepository>),
    Postgres(String),
}

impl FormPorts {
    pub fn in_memory(people: Arc<InMemoryOrgRepository>) -> Self {
        let repo = Arc::new(InMemoryFormRepository::new(people));
        FormPorts {
            repo: repo.clone(),
            side: Side::Memory(repo),
        }
    }

    pub fn postgres(db: Database, url: &str) -> Self {
        FormPorts {
            repo: Arc::new(PgFormRepository::new(db)),
            side: Side::Postgres(url.to_owned()),
        }
    }

    async fn sql(url: &str, statement: &str, binds: [Uuid; 3]) {
        let mut conn = AsyncPgConnection::establish(url).await.expect("connect");
        diesel::sql_query(statement)
            .bind::<SqlUuid, _>(binds[0])
            .bind::<SqlUuid, _>(binds[1])
            .bind::<SqlUuid, _>(binds[2])
            .bind::<Text, _>("forms")
            .execute(&mut conn)
            .await
            .expect("write a labels-area row");
    }

    /// Puts a (new) label on the form.
    async fn label(&self, org: OrgId, form: Uuid, label: Uuid) {
        match &self.side {
            Side::Memory(repo) => repo.label(org, form, label),
            Side::Postgres(url) => {
                Self::sql(
                    url,
                    "WITH l AS (INSERT INTO labels (id, organization_id, name, color) \
                     VALUES ($3, $1, $3::text, '#000000') ON CONFLICT (id) DO NOTHING) \
                     INSERT INTO entity_labels (organization_id, entity_type, entity_id, label_id) \
                     VALUES ($1, $4, $2, $3)",
                    [org.0, form, label],
                )
                .await
            }
        }
    }

    /// Stars the form for the person.
    async fn star(&self, org: OrgId, user: UserId, form: Uuid) {
        match &self.side {
            Side::Memory(repo) => repo.star(user, form),
            Side::Postgres(url) => Self::sql(
                url,
                "INSERT INTO featured_entities (organization_id, user_id, entity_id, entity_type) \
                     VALUES ($1, $2, $3, $4)",
                [org.0, user.0, form],
            )
            .await,
        }
    }
}

fn now() -> OffsetDateTime {
    micros(OffsetDateTime::now_utc())
}

fn person(u: &User) -> Person {
    Person {
        id: u.id,
        full_name: u.full_name(),
        email: u.email.clone(),
    }
}

fn questions() -> QuestionSet {
    let q = |text: &str| NewQuestion {
        question: text.to_owned(),
        ..NewQuestion::default()
    };
    QuestionSet::create(vec![q("What shipped?"), q("Anything else?")], true).expect("valid")
}

fn workflow(labels: &[&str]) -> Workflow {
    let states: Vec<StateInput> = labels
        .iter()
        .map(|l| StateInput {
            label: (*l).to_owned(),
            color: "#123456".into(),
            is_final: None,
        })
        .collect();
    Workflow::build(&states).expect("valid")
}

fn form(org: &Organization, owner: &User, name: &str, at: OffsetDateTime) -> Form {
    Form {
        id: Uuid::now_v7(),
        org_id: org.id,
        owner: person(owner),
        name: name.to_owned(),
        questions: questions(),
        report_channels: Vec::new(),
        settings: FormSettings::default(),
        is_archived: false,
        version: 1,
        response_count: 0,
        created_at: at,
        updated_at: at,
    }
}

fn response(form: &Form, by: &User, answer: &str, at: OffsetDateTime) -> FormResponse {
    FormResponse {
        id: Uuid::now_v7(),
        org_id: form.org_id,
        form_id: form.id,
        submitter: person(by),
        source: SubmissionSource::Member,
        label: None,
        guest: None,
        content: BTreeMap::from([(form.questions.questions[0].uuid, json!(answer))]),
        current_state: form
            .settings
            .workflow
            .as_ref()
            .map(|w| w.initial().key.clone()),
        history: Vec::new(),
        edited: false,
        version: 1,
        created_at: at,
        updated_at: at,
    }
}

fn selection(viewer: &User) -> FormSelection {
    FormSelection {
        viewer: viewer.id,
        archived: Archived::Exclude,
        owners: None,
        public_only: false,
        approval_only: false,
        workflow_only: false,
        search: None,
        from: None,
        until: None,
        labels: Vec::new(),
        featured: None,
        featured_first: false,
        order: FormOrder::Recent,
        ascending: false,
    }
}

fn every_response(viewer: &User) -> ResponseSelection {
    ResponseSelection {
        viewer: viewer.id,
        own_only: false,
        submitters: None,
        states: None,
        sources: Vec::new(),
        search: None,
        from: None,
        until: None,
        oldest_first: false,
    }
}

async fn insert(p: &Ports, f: &Form) {
    p.forms.repo.insert_form(f).await.expect("insert form");
}

async fn submit(p: &Ports, f: &Form, r: &FormResponse) {
    let e = event(f.org_id, EventType::FormsResponseCreated, &r.id.to_string());
    assert_eq!(
        p.forms
            .repo
            .insert_response(r, f.version, &e)
            .await
            .unwrap(),
        Written::Done
    );
}

async fn names(p: &Ports, org: OrgId, s: &FormSelection) -> Vec<String> {
    p.forms
        .repo
        .list_forms(org, s, PageRequest::all())
        .await
        .unwrap()
        .results
        .into_iter()
        .map(|f| f.name)
        .collect()
}

async fn listed(p: &Ports, f: &Form, s: &ResponseSelection) -> Vec<Uuid> {
    p.forms
        .repo
        .list_responses(f.org_id, f.id, s, PageRequest::all())
        .await
        .unwrap()
        .results
        .into_iter()
        .map(|r| r.id)
        .collect()
}

async fn a_form_reads_back_as_written(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "Lovelace").await;
    let other = p.org("Globex").await;
    let outsider = p.user(&other, "otto@globex.test", "Otto", "X").await;
    let mut f = form(&org, &ada, "Release", now());
    f.report_channels = vec!["C1".into(), "C2".into()];
    f.settings = FormSettings {
        is_active: false,
        is_anonymous: true,
        allow_public_responses: true,
        require_email_and_name: true,
        brand_with_logo: true,
        allow_reopen_from_final_state: true,
        use_for_approval: true,
        workflow: Some(workflow(&["Draft", "Done"])),
        who_can_edit: Audience {
            mode: AudienceMode::Restricted,
            members: Members {
                users: vec![ada.id],
                teams: vec![TeamId(Uuid::now_v7())],
            },
        },
        who_can_see_responses: Audience {
            mode: AudienceMode::Everyone,
            members: Members::default(),
        },
        who_can_change_states: Audience::owner_and_admins(),
        approvers: Members {
            users: vec![ada.id],
            teams: Vec::new(),
        },
        command: Some("release".into()),
        command_enabled: true,
    };
    insert(&p, &f).await;
    assert_eq!(p.forms.repo.get_form(org.id, f.id).await.unwrap(), f);
    assert_not_found(p.forms.repo.get_form(other.id, f.id).await);
    assert_not_found(p.forms.repo.get_form(org.id, Uuid::now_v7()).await);
    // The table's bounds hold whatever the domain sends.
    assert_refused_by_check(
        p.forms
            .repo
            .insert_form(&form(&org, &ada, "ab", now()))
            .await,
    );
    // The owner must be a person of the form's organization.
    assert_not_found(
        p.forms
            .repo
            .insert_form(&form(&org, &outsider, "Theirs", now()))
            .await,
    );
    assert_eq!(
        names(&p, org.id, &selection(&ada)).await,
        ["Release"],
        "nothing else stored"
    );
}

async fn form_writes_check_the_version(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let f = form(&org, &ada, "Retro", now());
    insert(&p, &f).await;
    let mut next = f.clone();
    next.name = "Retro 2".into();
    next.is_archived = true;
    next.updated_at = now() + Duration::seconds(1);
    let repo = &p.forms.repo;
    assert_eq!(
        repo.update_form(&next, 1, &StateMigration::Keep)
            .await
            .unwrap(),
        Written::Done
    );
    let read = repo.get_form(org.id, f.id).await.unwrap();
    assert_eq!(
        read,
        Form {
            version: 2,
            ..next.clone()
        }
    );
    // Written against version 1 again: refused, nothing changed.
    let mut stale = next.clone();
    stale.name = "Stale".into();
    assert_eq!(
        repo.update_form(&stale, 1, &StateMigration::Keep)
            .await
            .unwrap(),
        Written::FormChanged
    );
    assert_eq!(repo.get_form(org.id, f.id).await.unwrap().name, "Retro 2");
    let other = p.org("Globex").await;
    let theirs = Form {
        org_id: other.id,
        ..next.clone()
    };
    assert_not_found(repo.update_form(&theirs, 2, &StateMigration::Keep).await);
}

async fn enabled_commands_are_unique_among_live_forms(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let with_command = |name: &str, enabled: bool| {
        let mut f = form(&org, &ada, name, now());
        f.settings.command = Some("release".into());
        f.settings.command_enabled = enabled;
        f
    };
    let first = with_command("First", true);
    insert(&p, &first).await;
    let repo = &p.forms.repo;
    assert_conflict(
        repo.insert_form(&with_command("Second", true)).await,
        "forms_live_command_key",
    );
    let disabled = with_command("Disabled", false);
    insert(&p, &disabled).await;
    let mut enable = disabled.clone();
    enable.settings.command_enabled = true;
    assert_conflict(
        repo.update_form(&enable, 1, &StateMigration::Keep).await,
        "forms_live_command_key",
    );
    assert_eq!(repo.get_form(org.id, disabled.id).await.unwrap().version, 1);
    // Another organization may; an archived form frees the name.
    let other = p.org("Globex").await;
    let otto = p.user(&other, "otto@globex.test", "Otto", "X").await;
    let mut theirs = form(&other, &otto, "Theirs", now());
    theirs.settings.command = Some("release".into());
    theirs.settings.command_enabled = true;
    insert(&p, &theirs).await;
    let archived = Form {
        is_archived: true,
        ..first.clone()
    };
    assert_eq!(
        repo.update_form(&archived, 1, &StateMigration::Keep)
            .await
            .unwrap(),
        Written::Done
    );
    assert_eq!(
        repo.update_form(&enable, 1, &StateMigration::Keep)
            .await
            .unwrap(),
        Written::Done
    );
}

async fn workflow_changes_move_or_guard_the_responses_states(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let mut f = form(&org, &ada, "Release", now());
    f.settings.workflow = Some(workflow(&["Draft", "QA", "Done"]));
    insert(&p, &f).await;
    let r = response(&f, &ada, "x", now());
    submit(&p, &f, &r).await;
    let repo = &p.forms.repo;
    let state = async || {
        repo.get_response(org.id, f.id, r.id)
            .await
            .unwrap()
            .current_state
    };
    // Removing the state a response is in: refused, nothing written.
    let mut next = f.clone();
    next.settings.workflow = Some(workflow(&["QA", "Done"]));
    let remove = StateMigration::Remove(vec!["draft".into()]);
    assert_eq!(
        repo.update_form(&next, 1, &remove).await.unwrap(),
        Written::StatesInUse(vec!["draft".into()])
    );
    assert_eq!(repo.get_form(org.id, f.id).await.unwrap().version, 1);
    // Off, then on again.
    next.settings.workflow = None;
    assert_eq!(
        repo.update_form(&next, 1, &StateMigration::Clear)
            .await
            .unwrap(),
        Written::Done
    );
    assert_eq!(state().await, None);
    next.settings.workflow = Some(workflow(&["New", "Old"]));
    let start = StateMigration::Start("new".into());
    assert_eq!(
        repo.update_form(&next, 2, &start).await.unwrap(),
        Written::Done
    );
    assert_eq!(state().await.as_deref(), Some("new"));
    // A removal that holds nothing goes through.
    next.settings.workflow = Some(workflow(&["New", "Shipped"]));
    let remove = StateMigration::Remove(vec!["old".into()]);
    assert_eq!(
        repo.update_form(&next, 3, &remove).await.unwrap(),
        Written::Done
    );
}

async fn forms_are_listed_with_every_filter_and_order(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "L").await;
    let t0 = now() - Duration::days(3);
    let mut a = form(&org, &ada, "beta_test", t0);
    a.settings.allow_public_responses = true;
    let mut b = form(&org, &bob, "Alpha 100%", t0 + Duration::days(1));
    b.settings.use_for_approval = true;
    b.settings.workflow = Some(Workflow::approval());
    let mut c = form(&org, &ada, "Gamma", t0 + Duration::days(2));
    c.is_archived = true;
    for f in [&a, &b, &c] {
        insert(&p, f).await;
    }
    let other = p.org("Globex").await;
    let otto = p.user(&other, "otto@globex.test", "Otto", "X").await;
    insert(&p, &form(&other, &otto, "Theirs", t0)).await;
    submit(&p, &a, &response(&a, &bob, "x", now())).await;
    submit(&p, &a, &response(&a, &ada, "y", now())).await;
    submit(&p, &b, &response(&b, &ada, "z", now())).await;

    let s = selection(&ada);
    let names = async |s: FormSelection| names(&p, org.id, &s).await;
    assert_eq!(
        names(s.clone()).await,
        ["Alpha 100%", "beta_test"],
        "newest first, live only"
    );
    assert_eq!(
        names(FormSelection {
            archived: Archived::Include,
            ..s.clone()
        })
        .await,
        ["Gamma", "Alpha 100%", "beta_test"]
    );
    assert_eq!(
        names(FormSelection {
            archived: Archived::Only,
            ..s.clone()
        })
        .await,
        ["Gamma"]
    );
    assert_eq!(
        names(FormSelection {
            owners: Some(vec![bob.id]),
            ..s.clone()
        })
        .await,
        ["Alpha 100%"]
    );
    assert_eq!(
        names(FormSelection {
            public_only: true,
            ..s.clone()
        })
        .await,
        ["beta_test"]
    );
    assert_eq!(
        names(FormSelection {
            approval_only: true,
            ..s.clone()
        })
        .await,
        ["Alpha 100%"]
    );
    assert_eq!(
        names(FormSelection {
            workflow_only: true,
            ..s.clone()
        })
        .await,
        ["Alpha 100%"]
    );
    // Searches are literal and ignore case.
    let search = |q: &str| FormSelection {
        search: Some(q.to_owned()),
        ..s.clone()
    };
    assert_eq!(names(search("ALPHA")).await, ["Alpha 100%"]);
    assert_eq!(names(search("0%")).await, ["Alpha 100%"]);
    assert_eq!(names(search("a_t")).await, ["beta_test"]);
    assert!(names(search("%")).await.len() == 1);
    let span = FormSelection {
        from: Some(t0 + Duration::hours(12)),
        until: Some(t0 + Duration::days(1) + Duration::seconds(1)),
        ..s.clone()
    };
    assert_eq!(names(span).await, ["Alpha 100%"]);
    let sorted = |order, ascending| FormSelection {
        order,
        ascending,
        ..s.clone()
    };
    assert_eq!(
        names(sorted(FormOrder::Alphabetical, true)).await,
        ["Alpha 100%", "beta_test"],
        "bytes: upper case first"
    );
    assert_eq!(
        names(sorted(FormOrder::Alphabetical, false)).await,
        ["beta_test", "Alpha 100%"]
    );
    assert_eq!(
        names(sorted(FormOrder::Recent, true)).await,
        ["beta_test", "Alpha 100%"]
    );
    assert_eq!(
        names(sorted(FormOrder::Total, false)).await,
        ["beta_test", "Alpha 100%"]
    );
    assert_eq!(
        names(sorted(FormOrder::Total, true)).await,
        ["Alpha 100%", "beta_test"]
    );
    // Labels (any of them) and stars (the viewer's).
    let label = Uuid::now_v7();
    p.forms.label(org.id, a.id, label).await;
    p.forms.star(org.id, bob.id, a.id).await;
    assert_eq!(
        names(FormSelection {
            labels: vec![Uuid::now_v7(), label],
            ..s.clone()
        })
        .await,
        ["beta_test"]
    );
    assert!(
        names(FormSelection {
            featured: Some(true),
            ..s.clone()
        })
        .await
        .is_empty()
    );
    let bobs = selection(&bob);
    assert_eq!(
        names(FormSelection {
            featured: Some(true),
            ..bobs.clone()
        })
        .await,
        ["beta_test"]
    );
    assert_eq!(
        names(FormSelection {
            featured: Some(false),
            ..bobs.clone()
        })
        .await,
        ["Alpha 100%"]
    );
    assert_eq!(
        names(FormSelection {
            featured_first: true,
            ..bobs.clone()
        })
        .await,
        ["beta_test", "Alpha 100%"]
    );
    // Counts, with the owner read as the directory has them.
    let page = p
        .forms
        .repo
        .list_forms(
            org.id,
            &s,
            PageRequest {
                offset: 1,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.count, 2);
    assert_eq!(page.results[0].response_count, 2);
    assert_eq!(page.results[0].owner, person(&ada));
    assert_eq!(
        page.results[0],
        Form {
            response_count: 2,
            ..a.clone()
        }
    );
    // Ties are broken by id.
    let (x, y) = (form(&org, &ada, "Same", t0), form(&org, &ada, "Same", t0));
    insert(&p, &x).await;
    insert(&p, &y).await;
    let ids: Vec<Uuid> = p
        .forms
        .repo
        .list_forms(
            org.id,
            &FormSelection {
                search: Some("same".into()),
                ascending: true,
                ..s
            },
            PageRequest::all(),
        )
        .await
        .unwrap()
        .results
        .iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(ids, [x.id, y.id]);
}

async fn form_owners_are_people_with_a_live_form(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "Lovelace").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "Builder").await;
    let cy = p.user(&org, "cy@acme.test", "Cy", "Archived").await;
    p.user(&org, "dee@acme.test", "Dee", "Nobody").await;
    insert(&p, &form(&org, &bob, "Bee 1", now())).await;
    insert(&p, &form(&org, &bob, "Bee 2", now())).await;
    insert(&p, &form(&org, &ada, "Ay 1", now())).await;
    let mut gone = form(&org, &cy, "Cee 1", now());
    gone.is_archived = true;
    insert(&p, &gone).await;
    let other = p.org("Globex").await;
    let otto = p.user(&other, "otto@globex.test", "Otto", "X").await;
    insert(&p, &form(&other, &otto, "Oh 1", now())).await;
    let owners = |search: Option<&'static str>| {
        let repo = p.forms.repo.clone();
        let org = org.id;
        async move {
            repo.list_form_owners(org, search, PageRequest::all())
                .await
                .unwrap()
        }
    };
    let all = owners(None).await;
    assert_eq!(
        (all.count, all.results),
        (2, vec![ada.clone(), bob.clone()])
    );
    assert_eq!(owners(Some("LOVE")).await.results, vec![ada]);
    assert_eq!(owners(Some("bob@")).await.results, vec![bob]);
    assert!(owners(Some("%")).await.results.is_empty());
}

async fn a_response_reads_back_with_its_history(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let mut f = form(&org, &ada, "Intake", now());
    f.settings.workflow = Some(workflow(&["Open", "Closed"]));
    insert(&p, &f).await;
    let mut r = response(&f, &ada, "deployed", now());
    r.source = SubmissionSource::Automation;
    r.label = Some("workflow:release".into());
    r.guest = Some(GuestUser {
        full_name: Some("Release Bot".into()),
        email: None,
    });
    r.content
        .insert(f.questions.questions[1].uuid, json!(["a", 2, true]));
    submit(&p, &f, &r).await;
    let repo = &p.forms.repo;
    assert_eq!(repo.get_response(org.id, f.id, r.id).await.unwrap(), r);
    let other = p.org("Globex").await;
    assert_not_found(repo.get_response(other.id, f.id, r.id).await);
    assert_not_found(repo.get_response(org.id, Uuid::now_v7(), r.id).await);
    let change = StateChange {
        from_state: "open".into(),
        to_state: "closed".into(),
        actor: Some(person(&ada)),
        note: Some("done\nfor now".into()),
        at: now() + Duration::seconds(1),
    };
    let e = event(org.id, EventType::FormsResponseUpdated, "moved");
    assert_eq!(
        repo.transition_response(org.id, f.id, 1, r.id, &change, &e)
            .await
            .unwrap(),
        Written::Done
    );
    let read = repo.get_response(org.id, f.id, r.id).await.unwrap();
    let expected = FormResponse {
        current_state: Some("closed".into()),
        history: vec![change.clone()],
        version: 2,
        updated_at: change.at,
        ..r.clone()
    };
    assert_eq!(read, expected);
    let listed = repo
        .list_responses(org.id, f.id, &every_response(&ada), PageRequest::all())
        .await
        .unwrap();
    assert_eq!((listed.count, listed.results), (1, vec![expected]));
    assert_eq!(repo.get_form(org.id, f.id).await.unwrap().response_count, 1);
}

async fn response_writes_check_the_forms_version(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let f = form(&org, &ada, "Retro", now());
    insert(&p, &f).await;
    let mut next = f.clone();
    next.name = "Retro 2".into();
    p.forms
        .repo
        .update_form(&next, 1, &StateMigration::Keep)
        .await
        .unwrap();
    let r = response(&f, &ada, "x", now());
    let e = event(org.id, EventType::FormsResponseCreated, "stale");
    assert_eq!(
        p.forms.repo.insert_response(&r, 1, &e).await.unwrap(),
        Written::FormChanged
    );
    assert_not_found(p.forms.repo.get_response(org.id, f.id, r.id).await);
    assert!(
        p.recorded_events().await.is_empty(),
        "no event without its change"
    );
    let other = p.org("Globex").await;
    let outsider = p.user(&other, "otto@globex.test", "Otto", "X").await;
    assert_not_found(
        p.forms
            .repo
            .insert_response(&response(&f, &outsider, "x", now()), 2, &e)
            .await,
    );
    let e = event(org.id, EventType::FormsResponseCreated, "fresh");
    assert_eq!(
        p.forms.repo.insert_response(&r, 2, &e).await.unwrap(),
        Written::Done
    );
    let recorded = p.recorded_events().await;
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0]["data"]["mark"], "fresh");
}

async fn content_edits_check_the_responses_version(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let f = form(&org, &ada, "Retro", now());
    insert(&p, &f).await;
    let r = response(&f, &ada, "first", now());
    submit(&p, &f, &r).await;
    let mut edited = r.clone();
    edited
        .content
        .insert(f.questions.questions[0].uuid, json!("second"));
    edited.edited = true;
    edited.updated_at = now() + Duration::seconds(1);
    let e = event(org.id, EventType::FormsResponseUpdated, "edit");
    let repo = &p.forms.repo;
    assert_eq!(
        repo.update_response_content(&edited, 1, 1, &e)
            .await
            .unwrap(),
        Written::Done
    );
    assert_eq!(
        repo.get_response(org.id, f.id, r.id).await.unwrap(),
        FormResponse {
            version: 2,
            ..edited.clone()
        }
    );
    assert_eq!(
        repo.update_response_content(&r, 1, 1, &e).await.unwrap(),
        Written::ResponseChanged
    );
    assert_eq!(
        repo.update_response_content(&r, 2, 7, &e).await.unwrap(),
        Written::FormChanged
    );
    let missing = FormResponse {
        id: Uuid::now_v7(),
        ..r.clone()
    };
    assert_not_found(repo.update_response_content(&missing, 1, 1, &e).await);
    assert_eq!(
        repo.get_response(org.id, f.id, r.id).await.unwrap().content,
        edited.content
    );
    assert_eq!(
        p.recorded_events().await.len(),
        2,
        "the response's and the edit's"
    );
}

async fn a_response_moves_from_the_state_it_is_in_only(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let mut f = form(&org, &ada, "Release", now());
    f.settings.workflow = Some(workflow(&["Draft", "QA", "Done"]));
    insert(&p, &f).await;
    let r = response(&f, &ada, "x", now());
    submit(&p, &f, &r).await;
    let repo = &p.forms.repo;
    let at = now();
    let change = |to: &str| StateChange {
        from_state: "draft".into(),
        to_state: to.to_owned(),
        actor: Some(person(&ada)),
        note: None,
        at,
    };
    let e = event(org.id, EventType::FormsResponseUpdated, "move");
    assert_eq!(
        repo.transition_response(org.id, f.id, 1, r.id, &change("qa"), &e)
            .await
            .unwrap(),
        Written::Done
    );
    // A second move from draft: someone moved it first.
    assert_eq!(
        repo.transition_response(org.id, f.id, 1, r.id, &change("done"), &e)
            .await
            .unwrap(),
        Written::ResponseChanged
    );
    assert_eq!(
        repo.transition_response(org.id, f.id, 9, r.id, &change("done"), &e)
            .await
            .unwrap(),
        Written::FormChanged
    );
    assert_not_found(
        repo.transition_response(org.id, f.id, 1, Uuid::now_v7(), &change("qa"), &e)
            .await,
    );
    let other = p.org("Globex").await;
    assert_not_found(
        repo.transition_response(other.id, f.id, 1, r.id, &change("qa"), &e)
            .await,
    );
    let read = repo.get_response(org.id, f.id, r.id).await.unwrap();
    assert_eq!(read.current_state.as_deref(), Some("qa"));
    assert_eq!(read.history, [change("qa")]);
    assert_eq!(p.recorded_events().await.len(), 2);
}

async fn responses_are_listed_with_every_filter(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "Lovelace").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "Builder").await;
    let mut f = form(&org, &ada, "Intake", now());
    f.settings.workflow = Some(workflow(&["Open", "Closed"]));
    insert(&p, &f).await;
    let t0 = now() - Duration::days(2);
    let by_bob = response(&f, &bob, "Bridge 50%", t0);
    let mut hidden = response(&f, &bob, "secret", t0 + Duration::days(1));
    hidden.source = SubmissionSource::Anonymous;
    let mut guest = response(&f, &ada, "hello", t0 + Duration::days(2));
    guest.source = SubmissionSource::Public;
    guest.guest = Some(GuestUser {
        full_name: Some("Gus Guest".into()),
        email: Some("gus@example.com".into()),
    });
    guest.current_state = Some("closed".into());
    for r in [&by_bob, &hidden, &guest] {
        submit(&p, &f, r).await;
    }
    let all = every_response(&ada);
    let list = async |s: ResponseSelection| listed(&p, &f, &s).await;
    assert_eq!(list(all.clone()).await, [guest.id, hidden.id, by_bob.id]);
    assert_eq!(
        list(ResponseSelection {
            oldest_first: true,
            ..all.clone()
        })
        .await,
        [by_bob.id, hidden.id, guest.id]
    );
    // Whose: the viewer's own of any source; another person's member responses only.
    let bobs = every_response(&bob);
    assert_eq!(
        list(ResponseSelection {
            own_only: true,
            ..bobs.clone()
        })
        .await,
        [hidden.id, by_bob.id]
    );
    assert_eq!(
        list(ResponseSelection {
            submitters: Some(vec![bob.id]),
            ..all.clone()
        })
        .await,
        [by_bob.id]
    );
    assert_eq!(
        list(ResponseSelection {
            submitters: Some(vec![bob.id]),
            ..bobs.clone()
        })
        .await,
        [hidden.id, by_bob.id]
    );
    assert_eq!(
        list(ResponseSelection {
            submitters: Some(vec![ada.id]),
            ..all.clone()
        })
        .await,
        [guest.id],
        "the viewer's own guest response"
    );
    assert_eq!(
        list(ResponseSelection {
            states: Some(vec!["closed".into()]),
            ..all.clone()
        })
        .await,
        [guest.id]
    );
    assert_eq!(
        list(ResponseSelection {
            sources: vec![SubmissionSource::Anonymous, SubmissionSource::Public],
            ..all.clone()
        })
        .await,
        [guest.id, hidden.id]
    );
    let search = |q: &str| ResponseSelection {
        search: Some(q.to_owned()),
        ..all.clone()
    };
    assert_eq!(list(search("BRIDGE")).await, [by_bob.id]);
    assert_eq!(list(search("50%")).await, [by_bob.id]);
    assert_eq!(
        list(search("%")).await,
        [by_bob.id],
        "wildcards are literal"
    );
    assert!(list(search("_")).await.is_empty());
    assert_eq!(
        list(search("builder")).await,
        [by_bob.id],
        "not the anonymous one"
    );
    assert_eq!(list(search("gus@")).await, [guest.id]);
    let span = ResponseSelection {
        from: Some(t0 + Duration::hours(1)),
        until: Some(t0 + Duration::days(2)),
        ..all.clone()
    };
    assert_eq!(list(span).await, [hidden.id]);
    let page = p
        .forms
        .repo
        .list_responses(
            org.id,
            f.id,
            &all,
            PageRequest {
                offset: 0,
                limit: 2,
            },
        )
        .await
        .unwrap();
    assert_eq!((page.count, page.results.len()), (3, 2));
    let other_form = form(&org, &ada, "Other", now());
    insert(&p, &other_form).await;
    assert!(listed(&p, &other_form, &all).await.is_empty());
}

async fn deleting_a_response_records_its_event(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "L").await;
    let f = form(&org, &ada, "Retro", now());
    insert(&p, &f).await;
    let r = response(&f, &ada, "x", now());
    submit(&p, &f, &r).await;
    let e = event(org.id, EventType::FormsResponseDeleted, "deleted");
    let other = p.org("Globex").await;
    assert_not_found(p.forms.repo.delete_response(other.id, f.id, r.id, &e).await);
    p.forms
        .repo
        .delete_response(org.id, f.id, r.id, &e)
        .await
        .unwrap();
    assert_not_found(p.forms.repo.get_response(org.id, f.id, r.id).await);
    assert_not_found(p.forms.repo.delete_response(org.id, f.id, r.id, &e).await);
    let marks: Vec<String> = p
        .recorded_events()
        .await
        .iter()
        .map(|e| e["data"]["mark"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(marks, [r.id.to_string(), "deleted".to_owned()]);
    assert_eq!(
        p.forms
            .repo
            .get_form(org.id, f.id)
            .await
            .unwrap()
            .response_count,
        0
    );
}
