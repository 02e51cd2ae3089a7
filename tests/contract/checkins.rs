//! `CheckinRepository`: check-ins (one row, references checked in the write, optimistic
//! revisions), who takes part, and responses (one per person per check-in per day, events in
//! the change's transaction).

use std::sync::Arc;

use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::json;
use teamcomm_forms::checkins::testing::InMemoryCheckinRepository;
use teamcomm_forms::checkins::{
    Checkin, CheckinOptions, CheckinRepository, CheckinResponse, CheckinScope, CheckinSelection,
    Cron, DayResponse, FrequencyAdvanced, FrequencyType, ManagedScope, Participants, Privacy,
    Recurrence, ResponseScope, ResponseSelection, Schedule,
};
use teamcomm_forms::questions::{Answer, NewQuestion, QuestionSet};
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::{EventType, OrgId, PageRequest, TeamId, UserId};
use teamcomm_messaging::{ChannelRepository, NewChannel};
use teamcomm_org::{OrgRepository, Organization, TeamRepository, TeamRole, User, UserPatch};
use teamcomm_store_pg::{Database, PgCheckinRepository};
use time::macros::{date, time};
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use crate::ports::{
    Ports, assert_conflict, assert_not_found, assert_refused_by_check, event, micros,
};

contract!(
    a_checkin_reads_back_as_written,
    writes_check_the_revision,
    references_must_be_of_the_checkins_organization,
    checkins_are_listed_by_scope_and_every_filter,
    participants_are_the_people_and_active_team_members_asked,
    the_directory_names_what_the_checkin_holds,
    a_response_reads_back_and_is_kept_once_a_day,
    response_edits_check_what_they_read,
    deleting_responses_is_all_or_nothing,
    responses_are_listed_by_scope_person_text_and_days,
);

/// The check-ins port and what its tests need beside it: labelling and starring check-ins,
/// which the labels area writes (its rows in Postgres).
pub struct CheckinPorts {
    pub repo: Arc<dyn CheckinRepository>,
    side: Side,
}

enum Side {
    Memory(Arc<InMemoryCheckinRepository>),
    Postgres(String),
}

impl CheckinPorts {
    pub fn in_memory(
        people: Arc<dyn OrgRepository>,
        teams: Arc<dyn TeamRepository>,
        channels: Arc<dyn ChannelRepository>,
        events: RecordedEvents,
    ) -> Self {
        let repo = Arc::new(InMemoryCheckinRepository::new(
            people, teams, channels, events,
        ));
        CheckinPorts {
            repo: repo.clone(),
            side: Side::Memory(repo),
        }
    }

    /// The in-memory repository itself, for in-memory ports built over it.
    pub fn in_memory_repo(&self) -> Option<Arc<InMemoryCheckinRepository>> {
        match &self.side {
            Side::Memory(repo) => Some(repo.clone()),
            Side::Postgres(_) => None,
        }
    }

    pub fn postgres(db: Database, url: &str) -> Self {
        CheckinPorts {
            repo: Arc::new(PgCheckinRepository::new(db)),
            side: Side::Postgres(url.to_owned()),
        }
    }

    async fn sql(url: &str, statement: &str, binds: [Uuid; 3]) {
        let mut conn = AsyncPgConnection::establish(url).await.expect("connect");
        diesel::sql_query(statement)
            .bind::<SqlUuid, _>(binds[0])
            .bind::<SqlUuid, _>(binds[1])
            .bind::<SqlUuid, _>(binds[2])
            .bind::<Text, _>("checkins")
            .execute(&mut conn)
            .await
            .expect("write a labels-area row");
    }

    /// Puts a (new) label on the check-in.
    async fn label(&self, org: OrgId, checkin: Uuid, label: Uuid) {
        match &self.side {
            Side::Memory(repo) => repo.label(checkin, label),
            Side::Postgres(url) => {
                Self::sql(
                    url,
                    "WITH l AS (INSERT INTO labels (id, organization_id, name, color) \
                     VALUES ($3, $1, $3::text, '#000000') ON CONFLICT (id) DO NOTHING) \
                     INSERT INTO entity_labels (organization_id, entity_type, entity_id, label_id) \
                     VALUES ($1, $4, $2, $3)",
                    [org.0, checkin, label],
                )
                .await
            }
        }
    }

    /// Stars the check-in for the person.
    async fn star(&self, org: OrgId, user: UserId, checkin: Uuid) {
        match &self.side {
            Side::Memory(repo) => repo.star(user, checkin),
            Side::Postgres(url) => Self::sql(
                url,
                "INSERT INTO featured_entities (organization_id, user_id, entity_id, entity_type) \
                     VALUES ($1, $2, $3, $4)",
                [org.0, user.0, checkin],
            )
            .await,
        }
    }
}

fn now() -> OffsetDateTime {
    micros(OffsetDateTime::now_utc())
}

fn questions() -> QuestionSet {
    let q = |text: &str| NewQuestion {
        question: text.to_owned(),
        ..NewQuestion::default()
    };
    QuestionSet::create(vec![q("What shipped?"), q("Anything blocking?")], true).expect("valid")
}

/// A check-in of `org` by `author` asking these people and teams.
pub(crate) fn checkin(
    org: &Organization,
    author: &User,
    name: &str,
    users: &[&User],
    teams: &[TeamId],
) -> Checkin {
    let at = now();
    Checkin {
        id: Uuid::now_v7(),
        org_id: org.id,
        name: name.to_owned(),
        created_by: Some(author.id),
        template: None,
        active: true,
        archived: false,
        schedule: Schedule {
            days: vec![1, 2, 3, 4, 5],
            time: time!(09:30),
            timezone: "Europe/Madrid".into(),
        },
        recurrence: Recurrence {
            frequency_type: FrequencyType::Weekly,
            frequency: 2,
            advanced: FrequencyAdvanced::Disabled,
            cron: None,
            start_on: date!(2026 - 01 - 01),
            end_on: None,
        },
        options: CheckinOptions::default(),
        participants: Participants {
            users: users.iter().map(|u| u.id).collect(),
            teams: teams.to_vec(),
        },
        report_channels: Vec::new(),
        questions: questions(),
        revision: 1,
        created_at: at,
        updated_at: at,
    }
}

fn response(c: &Checkin, user: &User, day: Date, text: &str) -> CheckinResponse {
    let at = now();
    let q = &c.questions.questions[0];
    CheckinResponse {
        id: Uuid::now_v7(),
        org_id: c.org_id,
        checkin_id: c.id,
        user_id: user.id,
        date: day,
        answers: vec![Answer {
            uuid: q.uuid,
            question: q.question.clone(),
            response: json!(text),
        }],
        last_question_index: None,
        completed: true,
        questions_version: c.questions.version,
        created_at: at,
        updated_at: at,
    }
}

async fn team(p: &Ports, org: &Organization, name: &str, members: &[&User]) -> TeamId {
    let ids: Vec<UserId> = members.iter().map(|u| u.id).collect();
    p.teams
        .create_team(org.id, TeamId::new(), name, &ids, &[])
        .await
        .expect("team")
        .id
}

async fn manage(p: &Ports, org: &Organization, team: TeamId, who: &User) {
    p.teams
        .put_member(
            org.id,
            team,
            who.id,
            Some(TeamRole::Manager),
            &event(org.id, EventType::OrganizationTeamUserAdded, "manager"),
        )
        .await
        .expect("manager");
}

fn names(page: &[Checkin]) -> Vec<&str> {
    page.iter().map(|c| c.name.as_str()).collect()
}

async fn listed(p: &Ports, org: OrgId, selection: CheckinSelection) -> Vec<String> {
    p.checkins
        .repo
        .list_checkins(org, &selection, PageRequest::all())
        .await
        .unwrap()
        .results
        .into_iter()
        .map(|c| c.name)
        .collect()
}

async fn a_checkin_reads_back_as_written(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    p.channels
        .upsert_channel(
            org.id,
            &NewChannel::new("C1", "general", "slack", "channel").unwrap(),
        )
        .await
        .unwrap();
    let mut c = checkin(&org, &ann, "Standup", &[&ann], &[]);
    c.report_channels = vec!["C1".into()];
    c.recurrence.advanced = FrequencyAdvanced::Custom;
    c.recurrence.cron = Some(Cron::parse("15 8 1,15 * *").unwrap());
    c.recurrence.end_on = Some(date!(2026 - 12 - 31));
    c.options = CheckinOptions {
        privacy: Privacy::Everyone,
        time_for_report: Some(time!(17:00)),
        custom_template_intro: Some("Hello".into()),
        is_anonymous: true,
        ..CheckinOptions::default()
    };
    c.template = Some(Uuid::parse_str("0190a000-0000-7000-8000-000000000001").unwrap());
    p.checkins.repo.insert_checkin(&c).await.unwrap();
    assert_eq!(p.checkins.repo.get_checkin(org.id, c.id).await.unwrap(), c);
    assert_conflict(p.checkins.repo.insert_checkin(&c).await, "checkins_pkey");
    let other = p.org("Other").await;
    assert_not_found(p.checkins.repo.get_checkin(other.id, c.id).await);
    assert_not_found(p.checkins.repo.get_checkin(org.id, Uuid::now_v7()).await);
}

async fn writes_check_the_revision(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let c = checkin(&org, &ann, "Standup", &[&ann], &[]);
    p.checkins.repo.insert_checkin(&c).await.unwrap();
    let mut next = c.clone();
    next.name = "Daily".into();
    next.active = false;
    next.questions = next
        .questions
        .remove(c.questions.questions[1].uuid)
        .unwrap();
    next.revision = 2;
    next.updated_at = c.updated_at + Duration::seconds(1);
    p.checkins.repo.update_checkin(&next, 1).await.unwrap();
    assert_eq!(
        p.checkins.repo.get_checkin(org.id, c.id).await.unwrap(),
        next
    );
    // A writer that read revision 1 comes second: refused, nothing changed.
    let mut stale = c.clone();
    stale.name = "Stale".into();
    stale.revision = 2;
    assert_conflict(
        p.checkins.repo.update_checkin(&stale, 1).await,
        "checkins_revision",
    );
    assert_eq!(
        p.checkins
            .repo
            .get_checkin(org.id, c.id)
            .await
            .unwrap()
            .name,
        "Daily"
    );
    let mut elsewhere = next.clone();
    elsewhere.org_id = p.org("Other").await.id;
    assert_not_found(p.checkins.repo.update_checkin(&elsewhere, 2).await);
    // The stored row refuses what the domain never writes.
    let mut long = checkin(&org, &ann, &"x".repeat(201), &[&ann], &[]);
    assert_refused_by_check(p.checkins.repo.insert_checkin(&long).await);
    long.name = String::new();
    assert_refused_by_check(p.checkins.repo.insert_checkin(&long).await);
}

async fn references_must_be_of_the_checkins_organization(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Other").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let otto = p.user(&other, "otto@other.test", "Otto", "").await;
    let theirs = team(&p, &other, "Theirs", &[&otto]).await;
    let mut bad = vec![
        checkin(&org, &ann, "Their person", &[&ann, &otto], &[]),
        checkin(&org, &ann, "Their team", &[&ann], &[theirs]),
        checkin(&org, &otto, "Their author", &[&ann], &[]),
        checkin(&org, &ann, "Unknown team", &[], &[TeamId::new()]),
    ];
    let mut unknown_channel = checkin(&org, &ann, "Unknown channel", &[&ann], &[]);
    unknown_channel.report_channels = vec!["C9".into()];
    bad.push(unknown_channel);
    let mut unknown_org = checkin(&org, &ann, "Unknown org", &[], &[]);
    unknown_org.org_id = OrgId::new();
    unknown_org.created_by = None;
    bad.push(unknown_org);
    for c in &bad {
        assert_not_found(p.checkins.repo.insert_checkin(c).await);
        assert_not_found(p.checkins.repo.get_checkin(c.org_id, c.id).await);
    }
    let good = checkin(&org, &ann, "Good", &[&ann], &[]);
    p.checkins.repo.insert_checkin(&good).await.unwrap();
    let mut worse = good.clone();
    worse.participants.users.push(otto.id);
    worse.revision = 2;
    assert_not_found(p.checkins.repo.update_checkin(&worse, 1).await);
    assert_eq!(
        p.checkins.repo.get_checkin(org.id, good.id).await.unwrap(),
        good
    );
}

async fn checkins_are_listed_by_scope_and_every_filter(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let cy = p.user(&org, "cy@acme.test", "Cy", "").await;
    let eng = team(&p, &org, "Eng", &[&bob]).await;
    let ops = team(&p, &org, "Ops", &[&cy]).await;
    let by_ann = checkin(&org, &ann, "b_standup 100%", &[&cy], &[]);
    let for_eng = checkin(&org, &cy, "a_eng", &[], &[eng]);
    let mut for_ops = checkin(&org, &ann, "C_ops", &[], &[ops]);
    for_ops.recurrence.end_on = Some(date!(2026 - 03 - 31));
    let mut archived = checkin(&org, &ann, "archived", &[&bob], &[]);
    archived.archived = true;
    archived.active = false;
    for c in [&by_ann, &for_eng, &for_ops, &archived] {
        p.checkins.repo.insert_checkin(c).await.unwrap();
    }
    let other = p.org("Other").await;
    let otto = p.user(&other, "otto@other.test", "Otto", "").await;
    p.checkins
        .repo
        .insert_checkin(&checkin(&other, &otto, "theirs", &[&otto], &[]))
        .await
        .unwrap();

    let sel = |scope| CheckinSelection::new(scope);
    // Byte order: upper case first.
    assert_eq!(
        listed(&p, org.id, sel(CheckinScope::All)).await,
        ["C_ops", "a_eng", "b_standup 100%"]
    );
    let all_too = CheckinSelection {
        include_archived: true,
        ..sel(CheckinScope::All)
    };
    assert_eq!(listed(&p, org.id, all_too).await.len(), 4);
    assert_eq!(
        listed(&p, org.id, sel(CheckinScope::VisibleTo(ann.id))).await,
        ["C_ops", "b_standup 100%"],
        "authored"
    );
    assert!(
        listed(&p, org.id, sel(CheckinScope::TakenBy(ann.id)))
            .await
            .is_empty()
    );
    assert_eq!(
        listed(&p, org.id, sel(CheckinScope::TakenBy(bob.id))).await,
        ["a_eng"]
    );
    assert_eq!(
        listed(&p, org.id, sel(CheckinScope::TakenBy(cy.id))).await,
        ["C_ops", "b_standup 100%"],
        "named and through a team"
    );
    assert_eq!(
        listed(&p, org.id, sel(CheckinScope::VisibleTo(cy.id))).await,
        ["C_ops", "a_eng", "b_standup 100%"]
    );
    // An archived team asks nobody; an inactive person takes part in nothing but still sees
    // what they authored.
    p.teams
        .update_team(org.id, ops, None, Some(false))
        .await
        .unwrap();
    assert_eq!(
        listed(&p, org.id, sel(CheckinScope::TakenBy(cy.id))).await,
        ["b_standup 100%"]
    );
    let off = UserPatch::new(Some(false), None).unwrap();
    p.orgs.update_user(cy.id, &off, &[]).await.unwrap();
    assert!(
        listed(&p, org.id, sel(CheckinScope::TakenBy(cy.id)))
            .await
            .is_empty()
    );
    assert_eq!(
        listed(&p, org.id, sel(CheckinScope::VisibleTo(cy.id))).await,
        ["a_eng"]
    );

    let search = |s: &str| CheckinSelection {
        search: Some(s.into()),
        ..sel(CheckinScope::All)
    };
    assert_eq!(
        listed(&p, org.id, search("STAND")).await,
        ["b_standup 100%"]
    );
    assert_eq!(
        listed(&p, org.id, search("%")).await,
        ["b_standup 100%"],
        "literal %"
    );
    assert_eq!(listed(&p, org.id, search("_")).await.len(), 3, "literal _");
    let running = |from: Option<Date>, until: Option<Date>| CheckinSelection {
        running_from: from,
        running_until: until,
        ..sel(CheckinScope::All)
    };
    assert_eq!(
        listed(&p, org.id, running(Some(date!(2026 - 04 - 01)), None)).await,
        ["a_eng", "b_standup 100%"]
    );
    assert!(
        listed(&p, org.id, running(None, Some(date!(2025 - 12 - 31))))
            .await
            .is_empty()
    );
    assert_eq!(
        listed(
            &p,
            org.id,
            running(Some(date!(2026 - 03 - 31)), Some(date!(2026 - 03 - 31)))
        )
        .await
        .len(),
        3
    );

    let (red, blue) = (Uuid::now_v7(), Uuid::now_v7());
    p.checkins.label(org.id, for_eng.id, red).await;
    p.checkins.label(org.id, by_ann.id, blue).await;
    let labelled = |labels: Vec<Uuid>| CheckinSelection {
        labels,
        ..sel(CheckinScope::All)
    };
    assert_eq!(listed(&p, org.id, labelled(vec![red])).await, ["a_eng"]);
    assert_eq!(
        listed(&p, org.id, labelled(vec![red, blue])).await,
        ["a_eng", "b_standup 100%"]
    );
    assert!(
        listed(&p, org.id, labelled(vec![Uuid::now_v7()]))
            .await
            .is_empty()
    );
    p.checkins.star(org.id, ann.id, by_ann.id).await;
    p.checkins.star(org.id, bob.id, for_eng.id).await;
    let starred = CheckinSelection {
        featured_by: Some(ann.id),
        ..sel(CheckinScope::All)
    };
    assert_eq!(listed(&p, org.id, starred).await, ["b_standup 100%"]);
    let first = CheckinSelection {
        featured_first_for: Some(ann.id),
        ..sel(CheckinScope::All)
    };
    assert_eq!(
        listed(&p, org.id, first).await,
        ["b_standup 100%", "C_ops", "a_eng"]
    );
    let page = p
        .checkins
        .repo
        .list_checkins(
            org.id,
            &sel(CheckinScope::All),
            PageRequest {
                offset: 1,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!((page.count, names(&page.results)), (3, vec!["a_eng"]));
}

async fn participants_are_the_people_and_active_team_members_asked(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "Zed").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let cy = p.user(&org, "cy@acme.test", "Cy", "").await;
    let dee = p.user(&org, "dee@acme.test", "Dee", "").await;
    let eng = team(&p, &org, "Eng", &[&bob, &cy, &ann]).await;
    let old = team(&p, &org, "Old", &[&dee]).await;
    let c1 = checkin(&org, &ann, "One", &[&ann, &dee], &[eng]);
    let c2 = checkin(&org, &ann, "Two", &[&bob], &[old]);
    for c in [&c1, &c2] {
        p.checkins.repo.insert_checkin(c).await.unwrap();
    }
    p.teams
        .update_team(org.id, old, None, Some(false))
        .await
        .unwrap();
    let off = UserPatch::new(Some(false), None).unwrap();
    p.orgs.update_user(cy.id, &off, &[]).await.unwrap();
    let mut both = [c2.id, c1.id];
    both.sort();
    let asked: Vec<(Uuid, UserId)> = p
        .checkins
        .repo
        .participants(org.id, &[c2.id, c1.id, c1.id])
        .await
        .unwrap()
        .into_iter()
        .map(|(c, u)| (c, u.id))
        .collect();
    let expected_for = |c: Uuid| -> Vec<(Uuid, UserId)> {
        if c == c1.id {
            vec![(c, ann.id), (c, bob.id), (c, dee.id)]
        } else {
            vec![(c, bob.id)]
        }
    };
    let expected: Vec<(Uuid, UserId)> = both.iter().flat_map(|c| expected_for(*c)).collect();
    assert_eq!(
        asked, expected,
        "by check-in, then name; once each; active only"
    );
    let other = p.org("Other").await;
    assert!(
        p.checkins
            .repo
            .participants(other.id, &[c1.id])
            .await
            .unwrap()
            .is_empty()
    );

    let is = |c: Uuid, u: &User| p.checkins.repo.is_participant(org.id, c, u.id);
    assert!(is(c1.id, &ann).await.unwrap(), "named");
    assert!(is(c1.id, &bob).await.unwrap(), "through a team");
    assert!(!is(c1.id, &cy).await.unwrap(), "inactive");
    assert!(!is(c2.id, &dee).await.unwrap(), "archived team");
    assert!(!is(Uuid::now_v7(), &ann).await.unwrap());
    assert!(
        !p.checkins
            .repo
            .is_participant(other.id, c1.id, ann.id)
            .await
            .unwrap()
    );

    assert_eq!(
        p.checkins.repo.managed_scope(org.id, bob.id).await.unwrap(),
        ManagedScope::default()
    );
    manage(&p, &org, eng, &bob).await;
    let mut members = vec![ann.id, bob.id, cy.id];
    members.sort();
    assert_eq!(
        p.checkins.repo.managed_scope(org.id, bob.id).await.unwrap(),
        ManagedScope {
            teams: vec![eng],
            members,
        }
    );
    p.teams
        .update_team(org.id, eng, None, Some(false))
        .await
        .unwrap();
    assert_eq!(
        p.checkins.repo.managed_scope(org.id, bob.id).await.unwrap(),
        ManagedScope::default(),
        "an archived team is managed by nobody"
    );
}

async fn the_directory_names_what_the_checkin_holds(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "Lee").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let eng = team(&p, &org, "Eng", &[&bob]).await;
    for (id, name) in [("C1", "general"), ("C2", "random")] {
        p.channels
            .upsert_channel(
                org.id,
                &NewChannel::new(id, name, "slack", "channel").unwrap(),
            )
            .await
            .unwrap();
    }
    let mut c = checkin(&org, &ann, "Standup", &[&bob, &ann], &[eng]);
    c.report_channels = vec!["C2".into(), "C1".into()];
    p.checkins.repo.insert_checkin(&c).await.unwrap();
    let d = p.checkins.repo.directory(&c).await.unwrap();
    assert_eq!(
        d.users,
        [(bob.id, "Bob".to_owned()), (ann.id, "Ann Lee".to_owned())],
        "in the check-in's order"
    );
    assert_eq!(d.teams, [(eng, "Eng".to_owned())]);
    let channels: Vec<(&str, &str)> = d
        .channels
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    assert_eq!(channels, [("C2", "random"), ("C1", "general")]);
}

async fn a_response_reads_back_and_is_kept_once_a_day(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let c = checkin(&org, &ann, "Standup", &[&ann], &[]);
    p.checkins.repo.insert_checkin(&c).await.unwrap();
    let day = date!(2026 - 11 - 20);
    let mut first = response(&c, &ann, day, "Shipped");
    first.last_question_index = Some(0);
    first.completed = false;
    let done = event(org.id, EventType::FollowupsResponseCompleted, "first");
    p.checkins
        .repo
        .insert_response(&first, c.revision, std::slice::from_ref(&done))
        .await
        .unwrap();
    let twice = response(&c, &ann, day, "Again");
    assert_conflict(
        p.checkins
            .repo
            .insert_response(
                &twice,
                c.revision,
                &[event(
                    org.id,
                    EventType::FollowupsResponseCompleted,
                    "twice",
                )],
            )
            .await,
        "checkin_responses_checkin_user_day_key",
    );
    let next_day = response(&c, &ann, day + Duration::days(1), "Next");
    p.checkins
        .repo
        .insert_response(&next_day, c.revision, &[])
        .await
        .unwrap();
    assert_eq!(
        p.checkins
            .repo
            .responses_between(org.id, c.id, ann.id, day, day + Duration::days(7))
            .await
            .unwrap(),
        vec![first.clone(), next_day.clone()]
    );
    assert!(
        p.checkins
            .repo
            .responses_between(
                org.id,
                c.id,
                ann.id,
                day - Duration::days(7),
                day - Duration::days(1)
            )
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        p.checkins
            .repo
            .day_responses(org.id, &[c.id, Uuid::now_v7()], &[day])
            .await
            .unwrap(),
        [DayResponse {
            checkin_id: c.id,
            user_id: ann.id,
            date: day,
            completed: false,
        }]
    );
    let marks: Vec<serde_json::Value> = p
        .recorded_events()
        .await
        .into_iter()
        .filter(|e| e["event"] == "followups.response.completed")
        .map(|e| e["data"]["mark"].clone())
        .collect();
    assert_eq!(
        marks,
        [json!("first")],
        "the refused write recorded nothing"
    );

    // Another organization's check-in or person: nothing is written.
    let other = p.org("Other").await;
    let otto = p.user(&other, "otto@other.test", "Otto", "").await;
    assert_conflict(
        p.checkins
            .repo
            .insert_response(&response(&c, &otto, day, "x"), c.revision, &[])
            .await,
        "checkin_participants",
    );
    // Someone of the organization the check-in does not ask, and a check-in changed since it
    // was read: nothing is written either.
    let cy = p.user(&org, "cy@acme.test", "Cy", "").await;
    assert_conflict(
        p.checkins
            .repo
            .insert_response(&response(&c, &cy, day, "x"), c.revision, &[])
            .await,
        "checkin_participants",
    );
    assert_conflict(
        p.checkins
            .repo
            .insert_response(
                &response(&c, &ann, day + Duration::days(3), "x"),
                c.revision + 1,
                &[event(
                    org.id,
                    EventType::FollowupsResponseCompleted,
                    "stale",
                )],
            )
            .await,
        "checkins_revision",
    );
    let mut elsewhere = response(&c, &ann, day + Duration::days(2), "x");
    elsewhere.org_id = other.id;
    assert_not_found(
        p.checkins
            .repo
            .insert_response(&elsewhere, c.revision, &[])
            .await,
    );
    assert!(
        !p.recorded_events()
            .await
            .iter()
            .any(|e| e["data"]["mark"] == "stale"),
        "a refused write records no event"
    );
    assert!(
        p.checkins
            .repo
            .responses_between(other.id, c.id, ann.id, day, day + Duration::days(7))
            .await
            .unwrap()
            .is_empty()
    );
}

async fn response_edits_check_what_they_read(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let c = checkin(&org, &ann, "Standup", &[&ann], &[]);
    p.checkins.repo.insert_checkin(&c).await.unwrap();
    let day = date!(2026 - 11 - 20);
    let r = response(&c, &ann, day, "Shipped");
    p.checkins
        .repo
        .insert_response(&r, c.revision, &[])
        .await
        .unwrap();
    let mut edited = r.clone();
    edited.answers[0].response = json!("Shipped twice");
    edited.last_question_index = Some(1);
    edited.questions_version = 2;
    edited.updated_at = r.updated_at + Duration::seconds(5);
    let updated = event(org.id, EventType::FollowupsResponseUpdated, "edit");
    p.checkins
        .repo
        .update_response(&edited, r.updated_at, std::slice::from_ref(&updated))
        .await
        .unwrap();
    // An edit based on the old read comes second: refused, nothing recorded.
    let mut late = r.clone();
    late.answers[0].response = json!("late");
    assert_conflict(
        p.checkins
            .repo
            .update_response(
                &late,
                r.updated_at,
                &[event(org.id, EventType::FollowupsResponseUpdated, "late")],
            )
            .await,
        "checkin_responses_updated_at",
    );
    let stored = p
        .checkins
        .repo
        .responses_between(org.id, c.id, ann.id, day, day)
        .await
        .unwrap();
    assert_eq!(stored, [edited.clone()]);
    let mut unknown = edited.clone();
    unknown.id = Uuid::now_v7();
    assert_not_found(
        p.checkins
            .repo
            .update_response(&unknown, edited.updated_at, &[])
            .await,
    );
    let marks: Vec<serde_json::Value> = p
        .recorded_events()
        .await
        .into_iter()
        .filter(|e| e["event"] == "followups.response.updated")
        .map(|e| e["data"]["mark"].clone())
        .collect();
    assert_eq!(marks, [json!("edit")]);
    // A search finds the new text only.
    let found = p
        .checkins
        .repo
        .list_responses(
            org.id,
            &ResponseSelection {
                checkin: c.id,
                scope: ResponseScope::All,
                user: None,
                search: Some("TWICE".into()),
                from: Some(day),
                until: Some(day),
            },
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(found.count, 1);
}

async fn deleting_responses_is_all_or_nothing(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let c = checkin(&org, &ann, "Standup", &[&ann], &[]);
    p.checkins.repo.insert_checkin(&c).await.unwrap();
    let day = date!(2026 - 11 - 20);
    let rs: Vec<CheckinResponse> = (0..3)
        .map(|i| response(&c, &ann, day + Duration::days(i), "x"))
        .collect();
    for r in &rs {
        p.checkins
            .repo
            .insert_response(r, c.revision, &[])
            .await
            .unwrap();
    }
    let gone = |mark: &str| event(org.id, EventType::FollowupsResponseDeleted, mark);
    p.checkins
        .repo
        .delete_responses(org.id, &[rs[0].id, rs[1].id], &[gone("a"), gone("b")])
        .await
        .unwrap();
    // One of these is already gone: nothing is deleted, nothing recorded.
    assert_conflict(
        p.checkins
            .repo
            .delete_responses(org.id, &[rs[1].id, rs[2].id], &[gone("c"), gone("d")])
            .await,
        "checkin_responses_deleted",
    );
    let other = p.org("Other").await;
    assert_conflict(
        p.checkins
            .repo
            .delete_responses(other.id, &[rs[2].id], &[gone("e")])
            .await,
        "checkin_responses_deleted",
    );
    let left = p
        .checkins
        .repo
        .responses_between(org.id, c.id, ann.id, day, day + Duration::days(7))
        .await
        .unwrap();
    assert_eq!(left, [rs[2].clone()]);
    let marks: Vec<serde_json::Value> = p
        .recorded_events()
        .await
        .into_iter()
        .filter(|e| e["event"] == "followups.response.deleted")
        .map(|e| e["data"]["mark"].clone())
        .collect();
    assert_eq!(marks, [json!("a"), json!("b")]);
}

async fn responses_are_listed_by_scope_person_text_and_days(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let cy = p.user(&org, "cy@acme.test", "Cy", "").await;
    let eng = team(&p, &org, "Eng", &[&ann, &bob]).await;
    manage(&p, &org, eng, &ann).await;
    let c = checkin(&org, &ann, "Standup", &[&cy], &[eng]);
    let elsewhere = checkin(&org, &ann, "Other", &[&cy], &[eng]);
    for x in [&c, &elsewhere] {
        p.checkins.repo.insert_checkin(x).await.unwrap();
    }
    let d1 = date!(2026 - 11 - 20);
    let d2 = date!(2026 - 11 - 21);
    for (who, day, text) in [
        (&cy, d1, "Cy on the 20th: 50% done"),
        (&bob, d1, "Bob on the 20th"),
        (&ann, d2, "Ann on the 21st"),
        (&cy, d2, "Cy on the 21st"),
    ] {
        p.checkins
            .repo
            .insert_response(&response(&c, who, day, text), c.revision, &[])
            .await
            .unwrap();
    }
    p.checkins
        .repo
        .insert_response(
            &response(&elsewhere, &cy, d1, "Elsewhere"),
            elsewhere.revision,
            &[],
        )
        .await
        .unwrap();
    let list = |scope, user: Option<&User>, search: Option<&str>, from, until| {
        let selection = ResponseSelection {
            checkin: c.id,
            scope,
            user: user.map(|u| u.id),
            search: search.map(str::to_owned),
            from: Some(from),
            until: Some(until),
        };
        let repo = p.checkins.repo.clone();
        async move {
            repo.list_responses(org.id, &selection, PageRequest::all())
                .await
                .unwrap()
                .results
                .into_iter()
                .map(|r| {
                    assert_eq!(r.author.id, r.response.user_id);
                    r.response.answers[0].response.as_str().unwrap().to_owned()
                })
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list(ResponseScope::All, None, None, d1, d2).await,
        [
            "Ann on the 21st",
            "Cy on the 21st",
            "Cy on the 20th: 50% done",
            "Bob on the 20th"
        ],
        "newest day first, then in the order they came in"
    );
    assert_eq!(
        list(ResponseScope::ManagedBy(ann.id), None, None, d1, d2).await,
        ["Ann on the 21st", "Bob on the 20th"]
    );
    assert_eq!(
        list(ResponseScope::Own(cy.id), None, None, d1, d2).await,
        ["Cy on the 21st", "Cy on the 20th: 50% done"]
    );
    assert_eq!(
        list(ResponseScope::All, Some(&bob), None, d1, d2).await,
        ["Bob on the 20th"]
    );
    assert!(
        list(ResponseScope::Own(cy.id), Some(&bob), None, d1, d2)
            .await
            .is_empty()
    );
    assert_eq!(
        list(ResponseScope::All, None, Some("ON THE 21"), d1, d2).await,
        ["Ann on the 21st", "Cy on the 21st"]
    );
    assert_eq!(
        list(ResponseScope::All, None, Some("50%"), d1, d2).await,
        ["Cy on the 20th: 50% done"],
        "a literal %"
    );
    assert_eq!(list(ResponseScope::All, None, None, d2, d2).await.len(), 2);
    let open = |from: Option<Date>, until: Option<Date>| {
        let selection = ResponseSelection {
            checkin: c.id,
            scope: ResponseScope::All,
            user: None,
            search: None,
            from,
            until,
        };
        let repo = p.checkins.repo.clone();
        async move {
            repo.list_responses(org.id, &selection, PageRequest::all())
                .await
                .unwrap()
                .count
        }
    };
    assert_eq!(open(None, None).await, 4, "every day");
    assert_eq!(open(Some(d2), None).await, 2);
    assert_eq!(open(None, Some(d1)).await, 2);
    let page = p
        .checkins
        .repo
        .list_responses(
            org.id,
            &ResponseSelection {
                checkin: c.id,
                scope: ResponseScope::All,
                user: None,
                search: None,
                from: Some(d1),
                until: Some(d2),
            },
            PageRequest {
                offset: 3,
                limit: 2,
            },
        )
        .await
        .unwrap();
    assert_eq!((page.count, page.results.len()), (4, 1));
    let other = p.org("Other").await;
    let nothing = p
        .checkins
        .repo
        .list_responses(
            other.id,
            &ResponseSelection {
                checkin: c.id,
                scope: ResponseScope::All,
                user: None,
                search: None,
                from: Some(d1),
                until: Some(d2),
            },
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(nothing.count, 0);
}
