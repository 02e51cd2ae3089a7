//! Unit tests of the task rules through the in-memory ports.

use teamcomm_kernel::ErrorCode;
use teamcomm_org::Role;

use super::*;
use crate::boards::BoardPatch;
use crate::testing::World;
use crate::{AgentName, PlanScopes, StateCategory, Visibility};

async fn column(w: &World, b: &Board, category: StateCategory) -> State {
    w.plan
        .live_states(b)
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.category == category)
        .unwrap()
}

fn titled(b: &Board, title: &str) -> CreateTask {
    CreateTask {
        title: title.to_owned(),
        board: Some(BoardRef::Id(b.id)),
        ..CreateTask::default()
    }
}

async fn task(w: &World, b: &Board, title: &str) -> Task {
    w.plan
        .create_task(&w.member, titled(b, title))
        .await
        .unwrap()
}

fn key_of(t: &Task) -> TaskRef {
    TaskRef::parse(&t.key()).unwrap()
}

async fn events(w: &World, t: &Task) -> Vec<String> {
    w.plan
        .task_events(
            &w.admin,
            &TaskRef::Id(t.id),
            &EventFilter::default(),
            PageRequest::all(),
        )
        .await
        .unwrap()
        .results
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

async fn make_private(w: &World, b: &Board) {
    w.plan
        .ports
        .boards
        .update_board(
            w.org.id,
            b.id,
            &BoardPatch {
                visibility: Some(Visibility::Members),
                ..BoardPatch::default()
            },
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn tasks_are_numbered_per_board_in_the_default_column_last() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let ops = w.board("OPS").await;
    let a = task(&w, &eng, "a").await;
    let b = task(&w, &eng, "b").await;
    let c = task(&w, &ops, "c").await;
    assert_eq!(
        (a.key(), b.key(), c.key()),
        ("ENG-1".into(), "ENG-2".into(), "OPS-1".into())
    );
    let todo = w.plan.default_state(&eng).await.unwrap();
    assert_eq!(todo.category, StateCategory::Todo);
    assert_eq!(a.state_id, todo.id);
    assert!(a.rank < b.rank);
    assert_eq!(a.version, 1);
    assert_eq!(a.created_by, w.member.person_id());
    assert_eq!(events(&w, &a).await, ["created"]);
}

#[tokio::test]
async fn creation_records_the_agent() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let mut actor = w.member.clone();
    actor.agent_name = Some(AgentName::parse("Claude").unwrap());
    let t = w.plan.create_task(&actor, titled(&eng, "x")).await.unwrap();
    assert_eq!(t.created_by_agent.as_deref(), Some("Claude"));
    let log = w
        .plan
        .task_events(
            &w.admin,
            &TaskRef::Id(t.id),
            &EventFilter::default(),
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(log.results[0].agent_name.as_deref(), Some("Claude"));
    assert_eq!(log.results[0].actor, w.member.person_id());
}

#[tokio::test]
async fn creation_checks_every_field() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let ops = w.board("OPS").await;
    let refuse = |new: CreateTask, code: ErrorCode| {
        let w = &w;
        async move {
            let e = w.plan.create_task(&w.member, new).await.unwrap_err();
            assert_eq!(e.code(), code, "{e}");
            e
        }
    };
    let base = titled(&eng, "ok");
    refuse(
        CreateTask {
            title: " ".into(),
            ..base.clone()
        },
        ErrorCode::ParamsValidationError,
    )
    .await;
    refuse(
        CreateTask {
            title: "x".repeat(501),
            ..base.clone()
        },
        ErrorCode::ParamsValidationError,
    )
    .await;
    refuse(
        CreateTask {
            description: Some("x".repeat(50_001)),
            ..base.clone()
        },
        ErrorCode::DescriptionTooLong,
    )
    .await;
    let ops_todo = column(&w, &ops, StateCategory::Todo).await;
    refuse(
        CreateTask {
            state: Some(ops_todo.id),
            ..base.clone()
        },
        ErrorCode::StateNotOnBoard,
    )
    .await;
    refuse(
        CreateTask {
            priority: Some(6),
            ..base.clone()
        },
        ErrorCode::ParamsValidationError,
    )
    .await;
    refuse(
        CreateTask {
            estimate: Some(-1),
            ..base.clone()
        },
        ErrorCode::ParamsValidationError,
    )
    .await;
    refuse(
        CreateTask {
            milestone_given: true,
            ..base.clone()
        },
        ErrorCode::NotImplemented,
    )
    .await;
    refuse(
        CreateTask {
            board: None,
            ..base.clone()
        },
        ErrorCode::ParamsValidationError,
    )
    .await;
    let d = |s: &str| parse_date("due_date", s).unwrap();
    refuse(
        CreateTask {
            start_date: Some(d("2026-12-02")),
            due_date: Some(d("2026-12-01")),
            ..base.clone()
        },
        ErrorCode::InvalidDateRange,
    )
    .await;
    assert_eq!(
        parse_date("due_date", "2026-13-01").unwrap_err().code(),
        ErrorCode::InvalidDateRange
    );
    // owner=me needs a person
    let key = w.key(PlanScopes::ALL);
    let e = w
        .plan
        .create_task(
            &key,
            CreateTask {
                owner: Some(PersonRef::Me),
                ..base.clone()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ActorRequired);
    // an inactive owner
    let gone = w.person(Role::Member, "gone@example.com").await;
    let gone_id = gone.person_id().unwrap();
    use teamcomm_org::OrgRepository;
    w.org_ports
        .people
        .update_user(
            gone_id,
            &teamcomm_org::UserPatch {
                is_active: Some(false),
                role: None,
            },
            &[],
        )
        .await
        .unwrap();
    let e = refuse(
        CreateTask {
            owner: Some(PersonRef::Id(gone_id)),
            ..base.clone()
        },
        user_inactive("owner", &[]).code(),
    )
    .await;
    assert_eq!(e.extra()["parameter"], "owner");
    assert_eq!(e.extra()["uuids"][0], gone_id.0.to_string());
    // an owner who cannot see the board
    make_private(&w, &eng).await;
    let e = w
        .plan
        .create_task(
            &w.admin,
            CreateTask {
                owner: w.member.person_id().map(PersonRef::Id),
                ..base.clone()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ParticipantCannotAccessBoard);
    // the hidden board itself is 404 to the member
    let e = w.plan.create_task(&w.member, base).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn an_owner_of_a_members_only_board_s_task_is_someone_who_sees_it() {
    use crate::access::Grantee;
    let w = World::new().await;
    let eng = w.board("ENG").await;
    make_private(&w, &eng).await;
    let granted = w.person(Role::Member, "granted@example.com").await;
    let teammate = w.person(Role::Member, "teammate@example.com").await;
    let [granted, teammate] = [&granted, &teammate].map(|p| p.person_id().unwrap());
    let team = w.team(&[teammate]).await;
    for grantee in [Grantee::User(granted), Grantee::Team(team.id)] {
        w.plan
            .add_board_member(&w.admin, &BoardRef::Id(eng.id), grantee)
            .await
            .unwrap();
    }
    // Through a team.
    let new = CreateTask {
        owner: Some(PersonRef::Id(teammate)),
        ..titled(&eng, "t")
    };
    let t = w.plan.create_task(&w.admin, new).await.unwrap();
    assert_eq!(t.owner, Some(teammate));
    let set_owner = |owner: PersonRef| TaskPatch {
        owner: Some(Some(owner)),
        ..TaskPatch::default()
    };
    // Directly, and an admin without a grant.
    for (owner, id) in [
        (PersonRef::Id(granted), granted),
        (PersonRef::Me, w.admin.person_id().unwrap()),
    ] {
        let t = (w.plan)
            .update_task(&w.admin, &key_of(&t), set_owner(owner), None)
            .await
            .unwrap();
        assert_eq!(t.owner, Some(id));
    }
    // A member without a grant is refused; the owner stays.
    let outsider = w.member.person_id().unwrap();
    let e = (w.plan)
        .update_task(
            &w.admin,
            &key_of(&t),
            set_owner(PersonRef::Id(outsider)),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ParticipantCannotAccessBoard);
    assert_eq!(e.extra()["parameter"], "owner");
    let stored = w.plan.visible_task(&w.admin, &key_of(&t)).await.unwrap();
    assert_eq!(stored.owner, w.admin.person_id());
}

#[tokio::test]
async fn subtasks_nest_one_level_on_their_parents_board() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let ops = w.board("OPS").await;
    let parent = task(&w, &eng, "parent").await;
    let child = w
        .plan
        .create_task(
            &w.member,
            CreateTask {
                title: "child".into(),
                parent: Some(key_of(&parent)),
                ..CreateTask::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((child.board_id, child.parent_id), (eng.id, Some(parent.id)));
    let e = w
        .plan
        .create_task(
            &w.member,
            CreateTask {
                title: "grandchild".into(),
                parent: Some(key_of(&child)),
                ..CreateTask::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::SubtaskDepthExceeded);
    let e = w
        .plan
        .create_task(
            &w.member,
            CreateTask {
                parent: Some(key_of(&parent)),
                ..titled(&ops, "elsewhere")
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::SubtaskCrossBoard);
    let children = w
        .plan
        .task_children(&w.member, &key_of(&parent), None)
        .await
        .unwrap();
    assert_eq!(
        children.iter().map(|t| t.id).collect::<Vec<_>>(),
        [child.id]
    );
}

#[tokio::test]
async fn a_parent_is_set_and_cleared_under_the_subtask_rules() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let ops = w.board("OPS").await;
    let [a, b, c, d] = ["a", "b", "c", "d"].map(|t| titled(&eng, t));
    let mut made = Vec::new();
    for new in [a, b, c, d] {
        made.push(w.plan.create_task(&w.member, new).await.unwrap());
    }
    let [a, b, c, d] = <[Task; 4]>::try_from(made).unwrap();
    let elsewhere = task(&w, &ops, "elsewhere").await;
    let set = |t: &Task, parent: Option<&Task>, expected: Option<i64>| {
        let (t, parent) = (key_of(t), parent.map(key_of));
        let w = &w;
        async move {
            w.plan
                .set_task_parent(&w.member, &t, parent.as_ref(), expected)
                .await
        }
    };
    let code = |r: Result<Task, Error>| r.unwrap_err().code();

    let child = set(&b, Some(&a), Some(1)).await.unwrap();
    assert_eq!((child.parent_id, child.version), (Some(a.id), 2));
    assert_eq!(events(&w, &b).await, ["created", "updated"]);
    let children = w.plan.task_children(&w.member, &key_of(&a), None).await;
    assert_eq!(children.unwrap(), std::slice::from_ref(&child));
    // The same parent again: answered as is, nothing written.
    assert_eq!(set(&b, Some(&a), None).await.unwrap(), child);
    assert_eq!(
        code(set(&b, None, Some(1)).await),
        ErrorCode::VersionConflict
    );
    // One level deep, on the same board, never its own parent.
    assert_eq!(
        code(set(&c, Some(&b), None).await),
        ErrorCode::SubtaskDepthExceeded
    );
    assert_eq!(
        code(set(&a, Some(&c), None).await),
        ErrorCode::SubtaskDepthExceeded
    );
    assert_eq!(
        code(set(&c, Some(&c), None).await),
        ErrorCode::InvalidRelation
    );
    assert_eq!(
        code(set(&c, Some(&elsewhere), None).await),
        ErrorCode::SubtaskCrossBoard
    );
    // Archived: neither the task nor the parent.
    w.plan
        .archive_task(&w.member, &key_of(&d), false, None)
        .await
        .unwrap();
    assert_eq!(code(set(&c, Some(&d), None).await), ErrorCode::TaskArchived);
    assert_eq!(code(set(&d, Some(&a), None).await), ErrorCode::TaskArchived);
    // Cleared: top level again.
    let top = set(&b, None, Some(2)).await.unwrap();
    assert_eq!((top.parent_id, top.version), (None, 3));
    // An archived sub-task still counts: restoring it would nest two levels.
    let sub = w
        .plan
        .create_task(
            &w.member,
            CreateTask {
                parent: Some(key_of(&c)),
                ..titled(&eng, "sub")
            },
        )
        .await
        .unwrap();
    w.plan
        .archive_task(&w.member, &key_of(&sub), false, None)
        .await
        .unwrap();
    assert_eq!(
        code(set(&c, Some(&a), None).await),
        ErrorCode::SubtaskDepthExceeded
    );
    assert_eq!(events(&w, &c).await, ["created"]);
}

#[tokio::test]
async fn tasks_resolve_by_uuid_current_and_retired_keys_for_those_who_see_the_board() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let t = task(&w, &eng, "a").await;
    w.plan
        .ports
        .boards
        .update_board(
            w.org.id,
            eng.id,
            &BoardPatch {
                key: Some("CORE".into()),
                ..BoardPatch::default()
            },
        )
        .await
        .unwrap();
    for r in ["ENG-1", "CORE-1", "core-1", &t.id.to_string()] {
        let found = w
            .plan
            .visible_task(&w.member, &TaskRef::parse(r).unwrap())
            .await
            .unwrap();
        assert_eq!((found.id, found.key()), (t.id, "CORE-1".to_owned()), "{r}");
    }
    for r in ["ENG-2", "NOPE-1"] {
        let e = w
            .plan
            .visible_task(&w.member, &TaskRef::parse(r).unwrap())
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
    }
    make_private(&w, &eng).await;
    let e = w
        .plan
        .visible_task(&w.member, &key_of(&t))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(w.plan.visible_task(&w.admin, &key_of(&t)).await.is_ok());
}

#[tokio::test]
async fn updates_bump_the_version_and_refuse_stale_ones() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let t = task(&w, &eng, "a").await;
    let patch = TaskPatch {
        title: Some("b".into()),
        priority: Some(Some(2)),
        ..TaskPatch::default()
    };
    let u = w
        .plan
        .update_task(&w.member, &key_of(&t), patch.clone(), Some(1))
        .await
        .unwrap();
    assert_eq!((u.title.as_str(), u.priority, u.version), ("b", Some(2), 2));
    assert!(u.updated_at > t.updated_at);
    let e = w
        .plan
        .update_task(&w.member, &key_of(&t), patch.clone(), Some(1))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::VersionConflict);
    assert_eq!(e.extra()["current_version"], 2);
    // no precondition: last writer wins
    let u = w
        .plan
        .update_task(
            &w.member,
            &key_of(&t),
            TaskPatch {
                priority: Some(None),
                ..TaskPatch::default()
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!((u.priority, u.version), (None, 3));
    let e = w
        .plan
        .update_task(
            &w.member,
            &key_of(&t),
            TaskPatch {
                milestone: Some(Some(Uuid::now_v7())),
                ..TaskPatch::default()
            },
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::MilestoneNotOnProject);
    assert!(
        w.plan
            .update_task(
                &w.member,
                &key_of(&t),
                TaskPatch {
                    milestone: Some(None),
                    ..TaskPatch::default()
                },
                None
            )
            .await
            .is_ok()
    );
    assert_eq!(
        events(&w, &t).await,
        ["created", "updated", "updated", "updated"]
    );
    w.plan
        .archive_task(&w.member, &key_of(&t), false, None)
        .await
        .unwrap();
    let e = w
        .plan
        .update_task(&w.member, &key_of(&t), patch, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TaskArchived);
}

#[test]
fn preconditions_read_if_match_and_the_body() {
    assert_eq!(expected_version(Some("\"3\""), None).unwrap(), Some(3));
    assert_eq!(expected_version(Some("W/\"3\""), None).unwrap(), Some(3));
    assert_eq!(expected_version(Some("3"), Some(3)).unwrap(), Some(3));
    assert_eq!(expected_version(None, Some(4)).unwrap(), Some(4));
    assert_eq!(expected_version(None, None).unwrap(), None);
    assert_eq!(
        expected_version(Some("\"3\""), Some(4)).unwrap_err().code(),
        ErrorCode::VersionPreconditionAmbiguous
    );
    assert!(expected_version(Some("abc"), None).is_err());
}

#[tokio::test]
async fn moves_set_completion_and_rank_between_neighbours() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let ops = w.board("OPS").await;
    let done = column(&w, &eng, StateCategory::Done).await;
    let a = task(&w, &eng, "a").await;
    let m = w
        .plan
        .move_task(
            &w.member,
            &key_of(&a),
            MoveTask {
                state: Some(done.id),
                ..MoveTask::default()
            },
            None,
        )
        .await
        .unwrap();
    assert!(m.completed_at.is_some());
    assert_eq!(m.state_id, done.id);
    let todo = column(&w, &eng, StateCategory::Todo).await;
    let back = w
        .plan
        .move_task(
            &w.member,
            &key_of(&a),
            MoveTask {
                state: Some(todo.id),
                ..MoveTask::default()
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(back.completed_at, None);
    assert_eq!(events(&w, &a).await, ["created", "moved", "moved"]);
    // order: b c a, then put a before c and after b
    let b = task(&w, &eng, "b").await;
    let c = task(&w, &eng, "c").await;
    let order = |w: &World| {
        let eng = eng.clone();
        let plan = w.plan.clone();
        let actor = w.member.clone();
        async move {
            let q = TaskQuery {
                boards: vec![BoardRef::Id(eng.id)],
                ..TaskQuery::default()
            };
            plan.list_tasks(&actor, &q, PageRequest::all())
                .await
                .unwrap()
                .results
                .into_iter()
                .map(|t| t.title)
                .collect::<Vec<_>>()
        }
    };
    let to = |before: Option<&Task>, after: Option<&Task>| MoveTask {
        state: Some(todo.id),
        before: before.map(key_of),
        after: after.map(key_of),
    };
    w.plan
        .move_task(&w.member, &key_of(&a), to(Some(&b), None), None)
        .await
        .unwrap();
    assert_eq!(order(&w).await, ["a", "b", "c"]);
    w.plan
        .move_task(&w.member, &key_of(&a), to(None, Some(&b)), None)
        .await
        .unwrap();
    assert_eq!(order(&w).await, ["b", "a", "c"]);
    w.plan
        .move_task(&w.member, &key_of(&c), to(Some(&a), Some(&b)), None)
        .await
        .unwrap();
    assert_eq!(order(&w).await, ["b", "c", "a"]);
    // many moves into the same gap respace the column
    for _ in 0..20 {
        w.plan
            .move_task(&w.member, &key_of(&a), to(Some(&c), None), None)
            .await
            .unwrap();
        w.plan
            .move_task(&w.member, &key_of(&c), to(Some(&a), None), None)
            .await
            .unwrap();
    }
    assert_eq!(order(&w).await, ["b", "c", "a"]);
    // a neighbour not in the column names its head and tail
    let x = task(&w, &ops, "x").await;
    let e = w
        .plan
        .move_task(&w.member, &key_of(&a), to(Some(&x), None), None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::RankNeighborMissing);
    assert_eq!(e.extra()["head"], "ENG-2");
    assert_eq!(e.extra()["tail"], "ENG-3");
    let e = w
        .plan
        .move_task(
            &w.member,
            &key_of(&a),
            MoveTask {
                state: Some(column(&w, &ops, StateCategory::Done).await.id),
                ..MoveTask::default()
            },
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::StateNotOnBoard);
}

#[tokio::test]
async fn move_board_gives_a_new_key_and_keeps_subtasks_together() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let ops = w.board("OPS").await;
    task(&w, &ops, "already there").await;
    let t = task(&w, &eng, "a").await;
    let moved = w
        .plan
        .move_task_to_board(
            &w.member,
            &key_of(&t),
            &BoardRef::Key("OPS".into()),
            None,
            None,
        )
        .await
        .unwrap();
    assert_eq!(moved.key(), "OPS-2");
    assert_eq!(moved.state_id, w.plan.default_state(&ops).await.unwrap().id);
    // the old key names nothing now
    assert!(
        w.plan
            .visible_task(&w.member, &TaskRef::parse("ENG-1").unwrap())
            .await
            .is_err()
    );
    let e = w
        .plan
        .move_task_to_board(
            &w.member,
            &key_of(&moved),
            &BoardRef::Id(eng.id),
            Some(column(&w, &ops, StateCategory::Done).await.id),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::MoveBoardStateInvalid);
    let parent = task(&w, &eng, "parent").await;
    let child = w
        .plan
        .create_task(
            &w.member,
            CreateTask {
                parent: Some(key_of(&parent)),
                ..titled(&eng, "child")
            },
        )
        .await
        .unwrap();
    for t in [&parent, &child] {
        let e = w
            .plan
            .move_task_to_board(
                &w.member,
                &TaskRef::Id(t.id),
                &BoardRef::Id(ops.id),
                None,
                None,
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::SubtaskCrossBoard);
    }
}

#[tokio::test]
async fn archive_previews_writes_nothing_and_restore_needs_a_live_column() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let t = task(&w, &eng, "a").await;
    let Archived::Preview(p) = w
        .plan
        .archive_task(&w.member, &key_of(&t), true, None)
        .await
        .unwrap()
    else {
        panic!("a preview")
    };
    assert_eq!(p.restore, Some(Restore::Task("ENG-1".to_owned())));
    let still = w.plan.visible_task(&w.member, &key_of(&t)).await.unwrap();
    assert_eq!(still, t);
    assert_eq!(events(&w, &t).await, ["created"]);
    let Archived::Done(a) = w
        .plan
        .archive_task(&w.member, &key_of(&t), false, None)
        .await
        .unwrap()
    else {
        panic!("archived")
    };
    assert!(a.is_archived && a.archived_at.is_some());
    let listed = w
        .plan
        .list_tasks(&w.member, &TaskQuery::default(), PageRequest::all())
        .await
        .unwrap();
    assert_eq!(listed.count, 0);
    let r = w
        .plan
        .restore_task(&w.member, &key_of(&t), None)
        .await
        .unwrap();
    assert!(!r.is_archived);
    assert_eq!(events(&w, &t).await, ["created", "archived", "restored"]);
    // its column archived: state_in_use
    w.plan
        .archive_task(&w.member, &key_of(&t), false, None)
        .await
        .unwrap();
    let mut states = w.plan.live_states(&eng).await.unwrap();
    for s in states.iter_mut().filter(|s| s.id == t.state_id) {
        s.is_archived = true;
    }
    w.plan
        .ports
        .boards
        .put_states(w.org.id, &states)
        .await
        .unwrap();
    let e = w
        .plan
        .restore_task(&w.member, &key_of(&t), None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::StateInUse);
}

#[tokio::test]
async fn duplicates_copy_the_chosen_fields() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let t = w
        .plan
        .create_task(
            &w.member,
            CreateTask {
                description: Some("body".into()),
                priority: Some(2),
                estimate: Some(3),
                owner: Some(PersonRef::Me),
                ..titled(&eng, "a")
            },
        )
        .await
        .unwrap();
    let all = w
        .plan
        .duplicate_task(&w.member, &key_of(&t), None)
        .await
        .unwrap();
    assert_eq!(all.key(), "ENG-2");
    assert_eq!(
        (
            all.title.as_str(),
            all.description.as_str(),
            all.priority,
            all.estimate,
            all.owner
        ),
        ("a", "body", Some(2), Some(3), t.owner)
    );
    let some = w
        .plan
        .duplicate_task(
            &w.member,
            &key_of(&t),
            Some(vec![CopyField::Title, CopyField::Priority]),
        )
        .await
        .unwrap();
    assert_eq!(
        (some.description.as_str(), some.priority, some.owner),
        ("", Some(2), None)
    );
    w.plan
        .archive_task(&w.member, &key_of(&t), false, None)
        .await
        .unwrap();
    let e = w
        .plan
        .duplicate_task(&w.member, &key_of(&t), None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TaskArchived);
}

#[tokio::test]
async fn lists_filter_and_check_their_values() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let hidden = w.board("SEC").await;
    make_private(&w, &hidden).await;
    w.plan
        .create_task(&w.admin, titled(&hidden, "secret"))
        .await
        .unwrap();
    let mine = w
        .plan
        .create_task(
            &w.member,
            CreateTask {
                owner: Some(PersonRef::Me),
                ..titled(&eng, "mine")
            },
        )
        .await
        .unwrap();
    task(&w, &eng, "nobody's").await;
    let list = |q: TaskQuery| {
        let plan = w.plan.clone();
        let actor = w.member.clone();
        async move { plan.list_tasks(&actor, &q, PageRequest::all()).await }
    };
    let titles = |p: Page<Task>| p.results.into_iter().map(|t| t.title).collect::<Vec<_>>();
    assert_eq!(
        titles(list(TaskQuery::default()).await.unwrap()),
        ["mine", "nobody's"]
    );
    let me = TaskQuery {
        owners: vec!["me".into()],
        ..TaskQuery::default()
    };
    assert_eq!(titles(list(me.clone()).await.unwrap()), ["mine"]);
    let unowned = TaskQuery {
        owners: vec!["unowned".into()],
        ..TaskQuery::default()
    };
    assert_eq!(titles(list(unowned).await.unwrap()), ["nobody's"]);
    let e = w
        .plan
        .list_tasks(&w.key(PlanScopes::ALL), &me, PageRequest::all())
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ActorRequired);
    let sorted = TaskQuery {
        sort: Some("-created_at".into()),
        ..TaskQuery::default()
    };
    assert_eq!(titles(list(sorted).await.unwrap()), ["nobody's", "mine"]);
    let e = list(TaskQuery {
        sort: Some("title".into()),
        ..TaskQuery::default()
    })
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidSort);
    assert!(
        e.extra()["allowed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "-due_date")
    );
    let e = list(TaskQuery {
        labels: vec!["x".into()],
        ..TaskQuery::default()
    })
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidLabelFilter);
    let many: Vec<String> = (0..51).map(|_| Uuid::now_v7().to_string()).collect();
    let e = list(TaskQuery {
        labels: many.clone(),
        ..TaskQuery::default()
    })
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidLabelFilter);
    let e = list(TaskQuery {
        owners: many,
        ..TaskQuery::default()
    })
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TooManyFilterValues);
    assert_eq!(e.extra()["limit"], 50);
    let e = list(TaskQuery {
        boards: vec![BoardRef::Id(hidden.id)],
        ..TaskQuery::default()
    })
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    let found = w
        .plan
        .search_tasks(&w.member, "MIN", PageRequest::all())
        .await
        .unwrap();
    assert_eq!(titles(found), ["mine"]);
    let found = w
        .plan
        .search_tasks(&w.member, "eng-1", PageRequest::all())
        .await
        .unwrap();
    assert_eq!(found.results[0].id, mine.id);
    for (q, code) in [
        ("m", ErrorCode::SearchQueryTooShort),
        (&"m".repeat(257)[..], ErrorCode::SearchQueryTooLong),
    ] {
        let e = w
            .plan
            .search_tasks(&w.member, q, PageRequest::all())
            .await
            .unwrap_err();
        assert_eq!(e.code(), code);
    }
    let counts = w.plan.my_task_counts(&w.member).await.unwrap();
    assert_eq!(counts.open, 1);
}

#[test]
fn ranks_fall_between_neighbours() {
    assert_eq!(rank_between(None, None), Some(RANK_STEP));
    assert_eq!(rank_between(Some(1024), None), Some(2048));
    assert_eq!(rank_between(None, Some(1024)), Some(0));
    assert_eq!(rank_between(Some(0), Some(1024)), Some(512));
    assert_eq!(rank_between(Some(5), Some(6)), None);
}

#[tokio::test]
async fn the_delta_feed_splits_changes_between_cursors() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let b = BoardRef::Id(eng.id);
    let old = task(&w, &eng, "old").await;
    let gone = task(&w, &eng, "gone").await;
    let snap = w.plan.board_snapshot(&w.member, &b).await.unwrap();
    let todo = snap
        .groups
        .iter()
        .find(|g| g.state.category == StateCategory::Todo)
        .unwrap();
    assert_eq!(
        (todo.task_count, todo.has_more, todo.tasks.len()),
        (2, false, 2)
    );
    let c0 = snap.delta_cursor;
    let new = task(&w, &eng, "new").await;
    w.plan
        .update_task(
            &w.member,
            &key_of(&old),
            TaskPatch {
                title: Some("old!".into()),
                ..TaskPatch::default()
            },
            None,
        )
        .await
        .unwrap();
    w.plan
        .archive_task(&w.member, &key_of(&gone), false, None)
        .await
        .unwrap();
    let d = w.plan.board_delta(&w.member, &b, c0).await.unwrap();
    let ids = |v: &[Task]| v.iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(ids(&d.created), [new.id]);
    assert_eq!(ids(&d.changed), [old.id]);
    assert_eq!(ids(&d.archived), [gone.id]);
    let c1 = d.delta_cursor.unwrap();
    let empty = w.plan.board_delta(&w.member, &b, c1).await.unwrap();
    assert!(empty.created.is_empty() && empty.changed.is_empty() && empty.archived.is_empty());
    let e = w
        .plan
        .board_delta(&w.member, &b, c1 - time::Duration::days(8))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::DeltaWindowExpired);
    assert_eq!(e.extra()["max_window_days"], 7);
}

#[tokio::test]
async fn a_full_column_refuses_creates_and_copies_and_names_its_columns() {
    let w = World::new().await;
    let eng = w.board("ENG").await;
    let done = column(&w, &eng, StateCategory::Done).await;
    let first = task(&w, &eng, "first").await;
    let (made, columns) = w
        .plan
        .create_task_with_columns(&w.member, titled(&eng, "second"))
        .await
        .unwrap();
    assert_eq!(made.key(), "ENG-2");
    assert!(
        columns.iter().any(|s| s.id == made.state_id) && columns.iter().any(|s| s.id == done.id),
        "the board's columns come with the task"
    );
    // The default column filled to the limit behind the service's back.
    {
        let mut st = w.mem.lock();
        for n in 3..=i64::try_from(MAX_COLUMN_TASKS).unwrap() {
            let filler = Task {
                id: TaskId::new(),
                number: n,
                rank: n * RANK_STEP,
                ..first.clone()
            };
            st.tasks.tasks.push(filler);
        }
        st.tasks
            .next_numbers
            .insert(eng.id, i64::try_from(MAX_COLUMN_TASKS).unwrap() + 1);
    }
    let e = w
        .plan
        .create_task(&w.member, titled(&eng, "one more"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ColumnTooLarge);
    let e = w
        .plan
        .duplicate_task(&w.member, &key_of(&first), None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ColumnTooLarge);
    // Nothing was numbered: the next task elsewhere takes the next number.
    let elsewhere = w
        .plan
        .create_task(
            &w.member,
            CreateTask {
                state: Some(done.id),
                ..titled(&eng, "elsewhere")
            },
        )
        .await
        .unwrap();
    assert_eq!(
        elsewhere.number,
        i64::try_from(MAX_COLUMN_TASKS).unwrap() + 1
    );
    // The answer's context takes its column from the columns given.
    let ctx = w
        .plan
        .task_context_knowing(w.org.id, std::slice::from_ref(&elsewhere), columns)
        .await
        .unwrap();
    assert_eq!(ctx.states[&done.id].name, done.name);
}
