//! Plan port contract: tasks (numbers without gaps or duplicates under concurrency, version-
//! guarded writes with their events, board moves, lists) and the delta feed's window rule.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use teamcomm_kernel::{OrgId, PageRequest, RepoError};
use teamcomm_plan::actor::Executor;
use teamcomm_plan::ports::{
    COLUMN_FULL, COLUMN_GONE, EventFilter, ListedBoard, NewTask, NewTaskEvent, OwnerFilter,
    SUBTASK_ONE_LEVEL, TaskFilter, TaskRepository, TaskSort, TaskSortKey,
};
use teamcomm_plan::states::default_columns;
use teamcomm_plan::{
    Board, BoardId, EstimateScale, Project, ProjectHealth, ProjectId, State, StateCategory, Task,
    TaskId, Visibility,
};
use time::OffsetDateTime;
use time::macros::datetime;

use crate::ports::Ports;

contract!(
    numbers_have_no_gaps_or_duplicates_under_concurrency,
    writes_are_version_guarded_and_logged,
    board_moves_take_the_next_number_there,
    lists_filter_sort_and_page,
    subtasks_are_found_archived_ones_too,
    the_store_nests_subtasks_one_level_even_under_races,
    a_full_column_refuses_creates_even_under_races,
    a_live_task_is_stored_only_in_a_live_column_of_a_live_board,
    a_list_shows_each_task_as_a_read_by_id_does,
    counts_follow_every_write,
    the_delta_window_sees_every_write_once,
);

const T0: OffsetDateTime = datetime!(2026-11-26 10:00 UTC);

pub(super) async fn board(p: &Ports, org: OrgId, key: &str) -> (Board, Vec<State>) {
    let project = Project {
        id: ProjectId::new(),
        org_id: org,
        name: format!("Project {key}"),
        description: String::new(),
        visibility: Visibility::Org,
        lead: None,
        health: ProjectHealth::NotSet,
        start_date: None,
        target_date: None,
        rank: 0,
        is_archived: false,
        archived_at: None,
        created_by: None,
        created_at: T0,
        updated_at: T0,
    };
    let project = p.plan.projects.create_project(&project).await.unwrap();
    let b = Board {
        id: BoardId::new(),
        org_id: org,
        project_id: project.id,
        name: format!("Board {key}"),
        key: key.to_owned(),
        visibility: Visibility::Org,
        estimate_scale: EstimateScale::None,
        archive_after_days: None,
        rank: 0,
        is_archived: false,
        archived_at: None,
        created_by: None,
        created_at: T0,
        updated_at: T0,
    };
    let states = default_columns(&b);
    let b = p.plan.boards.create_board(&b, &states).await.unwrap();
    (b, states)
}

pub(super) fn state(states: &[State], category: StateCategory) -> &State {
    states.iter().find(|s| s.category == category).unwrap()
}

pub(super) fn new_task(org: OrgId, board: &Board, state: &State, title: &str) -> NewTask {
    NewTask {
        id: TaskId::new(),
        org_id: org,
        board_id: board.id,
        state_id: state.id,
        parent_id: None,
        title: title.to_owned(),
        description: String::new(),
        owner: None,
        priority: None,
        estimate: None,
        start_date: None,
        due_date: None,
        completed_at: None,
        created_by: None,
        created_by_agent: Some("Claude".into()),
        column_limit: 5_000,
    }
}

/// Creates a task of each title on the board's column, in order.
pub(super) async fn create_tasks(
    p: &Ports,
    org: OrgId,
    board: &Board,
    state: &State,
    titles: &[&str],
) -> Vec<Task> {
    let mut made = Vec::with_capacity(titles.len());
    for title in titles {
        let new = new_task(org, board, state, title);
        made.push(
            p.plan
                .tasks
                .create_task(&new, &event("created"))
                .await
                .unwrap(),
        );
    }
    made
}

pub(super) fn event(kind: &'static str) -> NewTaskEvent {
    NewTaskEvent::new(
        kind,
        Executor {
            user: None,
            agent: Some("Claude".into()),
        },
        json!({"k": kind}),
    )
}

async fn numbers_have_no_gaps_or_duplicates_under_concurrency(p: Ports) {
    let org = p.org("Numbers").await;
    let (b, states) = board(&p, org.id, "NUM").await;
    let todo = state(&states, StateCategory::Todo).clone();
    let mut handles = Vec::new();
    for i in 0..50 {
        let repo: Arc<dyn TaskRepository> = p.plan.tasks.clone();
        let new = new_task(org.id, &b, &todo, &format!("t{i}"));
        handles.push(tokio::spawn(async move {
            repo.create_task(&new, &event("created")).await.unwrap()
        }));
    }
    let mut created = Vec::new();
    for h in handles {
        let t = h.await.unwrap();
        assert_eq!((t.version, t.board_key.as_str()), (1, "NUM"));
        created.push((t.number, t.rank));
    }
    created.sort_unstable();
    let numbers: Vec<i64> = created.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, (1..=50).collect::<Vec<i64>>());
    assert!(
        created.windows(2).all(|w| w[0].1 < w[1].1),
        "each task last in its column when created: {created:?}"
    );
}

async fn writes_are_version_guarded_and_logged(p: Ports) {
    let org = p.org("Versions").await;
    let other = p.org("Elsewhere").await;
    let (b, states) = board(&p, org.id, "VER").await;
    let repo = &p.plan.tasks;
    let t = repo
        .create_task(
            &new_task(org.id, &b, state(&states, StateCategory::Todo), "a"),
            &event("created"),
        )
        .await
        .unwrap();
    assert_eq!(t.created_by_agent.as_deref(), Some("Claude"));
    assert_eq!(repo.task_by_number(org.id, b.id, 1).await.unwrap().id, t.id);
    assert!(matches!(
        repo.get_task(other.id, t.id).await,
        Err(RepoError::NotFound)
    ));
    assert!(matches!(
        repo.task_by_number(org.id, b.id, 2).await,
        Err(RepoError::NotFound)
    ));
    let mut change = t.clone();
    change.title = "b".into();
    change.priority = Some(2);
    let saved = repo.save_task(&change, &event("updated")).await.unwrap();
    assert_eq!(
        (saved.title.as_str(), saved.priority, saved.version),
        ("b", Some(2), 2)
    );
    assert!(saved.updated_at > t.updated_at);
    assert_eq!(saved.number, 1);
    // a write based on version 1 again: the version moved
    match repo.save_task(&change, &event("updated")).await {
        Err(RepoError::Conflict { constraint }) => assert_eq!(constraint, "version"),
        other => panic!("expected a version conflict, got {other:?}"),
    }
    let mut foreign = saved.clone();
    foreign.org_id = other.id;
    assert!(repo.save_task(&foreign, &event("updated")).await.is_err());
    let log = repo
        .task_events(org.id, t.id, &EventFilter::default(), PageRequest::all())
        .await
        .unwrap();
    let kinds: Vec<&str> = log.results.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["created", "updated"]);
    assert_eq!(log.results[1].agent_name.as_deref(), Some("Claude"));
    assert_eq!(log.results[1].data, json!({"k": "updated"}));
    assert_eq!(log.results[1].created_at, saved.updated_at);
    let only = repo
        .task_events(
            org.id,
            t.id,
            &EventFilter {
                kind: Some("updated".into()),
                since: None,
            },
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(only.count, 1);
    assert_eq!(
        repo.task_events(other.id, t.id, &EventFilter::default(), PageRequest::all())
            .await
            .unwrap()
            .count,
        0
    );
}

async fn board_moves_take_the_next_number_there(p: Ports) {
    let org = p.org("Moves").await;
    let (eng, eng_states) = board(&p, org.id, "ENG").await;
    let (ops, ops_states) = board(&p, org.id, "OPS").await;
    let repo = &p.plan.tasks;
    let ops_todo = state(&ops_states, StateCategory::Todo);
    repo.create_task(
        &new_task(org.id, &ops, ops_todo, "there"),
        &event("created"),
    )
    .await
    .unwrap();
    let t = repo
        .create_task(
            &new_task(org.id, &eng, state(&eng_states, StateCategory::Todo), "a"),
            &event("created"),
        )
        .await
        .unwrap();
    let mut moved = t.clone();
    moved.board_id = ops.id;
    moved.state_id = ops_todo.id;
    let moved = repo
        .save_task_on_board(&moved, &event("moved_board"))
        .await
        .unwrap();
    assert_eq!((moved.key(), moved.version), ("OPS-2".to_owned(), 2));
    assert!(matches!(
        repo.task_by_number(org.id, eng.id, 1).await,
        Err(RepoError::NotFound)
    ));
    // the board it left lists it among its changes
    let far = OffsetDateTime::now_utc() + time::Duration::hours(1);
    let since = OffsetDateTime::now_utc() - time::Duration::hours(1);
    let left = repo
        .board_changes(org.id, eng.id, since, far)
        .await
        .unwrap();
    assert_eq!(
        left.iter().map(|t| (t.id, t.board_id)).collect::<Vec<_>>(),
        [(t.id, ops.id)]
    );
    let counts: HashMap<_, _> = repo
        .count_by_state(org.id, ops.id)
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(counts[&ops_todo.id], 2);
}

async fn lists_filter_sort_and_page(p: Ports) {
    let org = p.org("Lists").await;
    let someone = p.user(&org, "owner@example.com", "Own", "Er").await.id;
    let (b, states) = board(&p, org.id, "LST").await;
    let todo = state(&states, StateCategory::Todo);
    let done = state(&states, StateCategory::Done);
    let repo = &p.plan.tasks;
    let mut a = new_task(org.id, &b, todo, "Alpha release");
    a.priority = Some(3);
    a.owner = Some(someone);
    a.due_date = Some(datetime!(2026-12-01 0:00 UTC).date());
    let a = repo.create_task(&a, &event("created")).await.unwrap();
    let mut c = new_task(org.id, &b, done, "Gamma");
    c.priority = Some(1);
    c.description = "mentions alpha".into();
    let c = repo.create_task(&c, &event("created")).await.unwrap();
    let bt = repo
        .create_task(&new_task(org.id, &b, todo, "Beta"), &event("created"))
        .await
        .unwrap();
    let list = |filter: TaskFilter, key: TaskSortKey, descending: bool| {
        let repo = repo.clone();
        async move {
            repo.list_tasks(
                org.id,
                &filter,
                TaskSort { key, descending },
                PageRequest::all(),
            )
            .await
            .unwrap()
            .results
            .into_iter()
            .map(|t| t.title)
            .collect::<Vec<_>>()
        }
    };
    let all = TaskFilter {
        boards: vec![ListedBoard::from(&b)],
        ..TaskFilter::default()
    };
    assert_eq!(
        list(all.clone(), TaskSortKey::Priority, false).await,
        ["Gamma", "Alpha release", "Beta"]
    );
    assert_eq!(
        list(all.clone(), TaskSortKey::Priority, true).await,
        ["Alpha release", "Gamma", "Beta"]
    );
    assert_eq!(
        list(all.clone(), TaskSortKey::DueDate, false).await[0],
        "Alpha release"
    );
    let owned = TaskFilter {
        owners: vec![OwnerFilter::Person(someone)],
        ..all.clone()
    };
    assert_eq!(
        list(owned, TaskSortKey::Rank, false).await,
        ["Alpha release"]
    );
    let unowned = TaskFilter {
        owners: vec![OwnerFilter::Unowned],
        ..all.clone()
    };
    assert_eq!(
        list(unowned, TaskSortKey::CreatedAt, false).await,
        ["Gamma", "Beta"]
    );
    let searched = TaskFilter {
        search: Some("ALPHA".into()),
        ..all.clone()
    };
    assert_eq!(
        list(searched, TaskSortKey::CreatedAt, false).await,
        ["Alpha release", "Gamma"]
    );
    let by_key = TaskFilter {
        search: Some("lst-3".into()),
        ..all.clone()
    };
    assert_eq!(list(by_key, TaskSortKey::Rank, false).await, ["Beta"]);
    let open = TaskFilter {
        open_only: true,
        ..all.clone()
    };
    assert_eq!(
        list(open, TaskSortKey::Rank, false).await,
        ["Alpha release", "Beta"]
    );
    let dated = TaskFilter {
        has_dates: Some(true),
        ..all.clone()
    };
    assert_eq!(
        list(dated, TaskSortKey::Rank, false).await,
        ["Alpha release"]
    );
    let column = TaskFilter {
        state: Some(done.id),
        ..all.clone()
    };
    assert_eq!(list(column, TaskSortKey::Rank, false).await, ["Gamma"]);
    assert!(
        list(TaskFilter::default(), TaskSortKey::Rank, false)
            .await
            .is_empty()
    );
    let page = repo
        .list_tasks(
            org.id,
            &all,
            TaskSort::default(),
            PageRequest {
                offset: 1,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!((page.count, page.results.len()), (3, 1));
    // archived tasks leave lists; ranks of a column come back in order and respace
    let mut gone = bt.clone();
    gone.is_archived = true;
    repo.save_task(&gone, &event("archived")).await.unwrap();
    assert_eq!(
        list(all, TaskSortKey::Rank, false).await,
        ["Alpha release", "Gamma"]
    );
    let ranks = repo.column_ranks(org.id, todo.id).await.unwrap();
    assert_eq!(ranks.iter().map(|r| r.0).collect::<Vec<_>>(), [a.id]);
    repo.respace_column(org.id, todo.id).await.unwrap();
    assert_eq!(repo.column_ranks(org.id, todo.id).await.unwrap()[0].1, 1024);
    let _ = c;
}

/// The live tasks of each column of `b` are `expected` (the others none), as every count
/// reads them: a list of the board, of each column (a page of one, so the count is not
/// proved by the page, and a page past the end), the board's own count, the column limit's
/// count, the board's counts by column.
async fn assert_counts(
    p: &Ports,
    org: OrgId,
    b: &Board,
    states: &[State],
    expected: &[(&State, u64)],
) {
    let repo = &p.plan.tasks;
    let of = |s: &State| {
        expected
            .iter()
            .find(|(e, _)| e.id == s.id)
            .map_or(0, |(_, n)| *n)
    };
    let count = |state: Option<&State>, offset: u64| {
        let filter = TaskFilter {
            boards: vec![ListedBoard::from(b)],
            state: state.map(|s| s.id),
            ..TaskFilter::default()
        };
        async move {
            repo.list_tasks(
                org,
                &filter,
                TaskSort::default(),
                PageRequest { offset, limit: 1 },
            )
            .await
            .unwrap()
            .count
        }
    };
    let total: u64 = expected.iter().map(|(_, n)| n).sum();
    for offset in [0, 100] {
        assert_eq!(count(None, offset).await, total, "tasks of {}", b.key);
    }
    assert_eq!(
        p.plan.boards.count_board_tasks(org, b.id).await.unwrap(),
        total,
        "tasks of {} as the board counts them",
        b.key
    );
    for s in states {
        for offset in [0, 100] {
            assert_eq!(
                count(Some(s), offset).await,
                of(s),
                "tasks of {} {}",
                b.key,
                s.name
            );
        }
        assert_eq!(
            repo.count_column(org, b.id, s.id, 5_000).await.unwrap(),
            of(s),
            "room of {} {}",
            b.key,
            s.name
        );
    }
    let mut by_state: Vec<_> = repo.count_by_state(org, b.id).await.unwrap();
    by_state.retain(|(_, n)| *n > 0);
    by_state.sort();
    let mut wanted: Vec<_> = expected
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| (s.id, *n))
        .collect();
    wanted.sort();
    assert_eq!(by_state, wanted, "counts by column of {}", b.key);
}

/// Every write that adds, removes or moves live tasks changes the counts the lists and the
/// column limit read: creates, archives and restores, moves between columns and boards, a
/// column's archive (its tasks moved) and a board's (its tasks archived).
async fn counts_follow_every_write(p: Ports) {
    let org = p.org("Counts").await;
    let (b, states) = board(&p, org.id, "CNT").await;
    let (other, other_states) = board(&p, org.id, "OTH").await;
    let todo = state(&states, StateCategory::Todo);
    let done = state(&states, StateCategory::Done);
    let other_todo = state(&other_states, StateCategory::Todo);
    let repo = &p.plan.tasks;
    let mut tasks = Vec::new();
    for (column, title) in [(todo, "a"), (todo, "b"), (todo, "c"), (done, "d")] {
        tasks.push(
            repo.create_task(&new_task(org.id, &b, column, title), &event("created"))
                .await
                .unwrap(),
        );
    }
    repo.create_task(
        &new_task(org.id, &other, other_todo, "e"),
        &event("created"),
    )
    .await
    .unwrap();
    assert_counts(&p, org.id, &b, &states, &[(todo, 3), (done, 1)]).await;

    let mut archived = tasks[0].clone();
    archived.is_archived = true;
    let archived = repo.save_task(&archived, &event("archived")).await.unwrap();
    assert_counts(&p, org.id, &b, &states, &[(todo, 2), (done, 1)]).await;
    let mut moved = tasks[1].clone();
    moved.state_id = done.id;
    repo.save_task(&moved, &event("moved")).await.unwrap();
    assert_counts(&p, org.id, &b, &states, &[(todo, 1), (done, 2)]).await;
    let mut restored = archived;
    restored.is_archived = false;
    repo.save_task(&restored, &event("restored")).await.unwrap();
    assert_counts(&p, org.id, &b, &states, &[(todo, 2), (done, 2)]).await;

    let mut away = tasks[3].clone();
    away.board_id = other.id;
    away.state_id = other_todo.id;
    repo.save_task_on_board(&away, &event("moved_board"))
        .await
        .unwrap();
    assert_counts(&p, org.id, &b, &states, &[(todo, 2), (done, 1)]).await;
    assert_counts(&p, org.id, &other, &other_states, &[(other_todo, 2)]).await;
    // A list of both boards counts both, each once, and of one column only that column.
    for (state, expected) in [(None, 5), (Some(todo.id), 2), (Some(other_todo.id), 2)] {
        let both = TaskFilter {
            boards: vec![ListedBoard::from(&b), ListedBoard::from(&other)],
            state,
            ..TaskFilter::default()
        };
        for offset in [0, 100] {
            let page = repo
                .list_tasks(
                    org.id,
                    &both,
                    TaskSort::default(),
                    PageRequest { offset, limit: 1 },
                )
                .await
                .unwrap();
            assert_eq!(page.count, expected, "{state:?} from {offset}");
        }
    }

    let mut columns = states.clone();
    for s in columns.iter_mut().filter(|s| s.id == done.id) {
        s.is_archived = true;
    }
    let n = p
        .plan
        .boards
        .archive_state(
            org.id,
            &columns,
            done.id,
            Some(teamcomm_plan::ports::MigrateTo {
                state: todo.id,
                limit: 5_000,
            }),
            &Executor::default(),
            T0,
        )
        .await
        .unwrap();
    assert_eq!(n, 1);
    assert_counts(&p, org.id, &b, &states, &[(todo, 3)]).await;
    let n = p
        .plan
        .boards
        .archive_board(org.id, b.id, &Executor::default(), T0)
        .await
        .unwrap();
    assert_eq!(n, 3);
    assert_counts(&p, org.id, &b, &states, &[]).await;
    assert_counts(&p, org.id, &other, &other_states, &[(other_todo, 2)]).await;
}

async fn subtasks_are_found_archived_ones_too(p: Ports) {
    let org = p.org("Subtasks").await;
    let other = p.org("Elsewhere").await;
    let (b, states) = board(&p, org.id, "SUB").await;
    let todo = state(&states, StateCategory::Todo);
    let repo = &p.plan.tasks;
    let made = create_tasks(&p, org.id, &b, todo, &["parent", "alone"]).await;
    let (parent, alone) = (&made[0], &made[1]);
    let child = repo
        .create_task(
            &NewTask {
                parent_id: Some(parent.id),
                ..new_task(org.id, &b, todo, "child")
            },
            &event("created"),
        )
        .await
        .unwrap();
    let has = |org: OrgId, t: TaskId| repo.has_subtasks(org, t);
    assert!(has(org.id, parent.id).await.unwrap());
    assert!(!has(org.id, alone.id).await.unwrap());
    assert!(!has(org.id, child.id).await.unwrap());
    assert!(!has(other.id, parent.id).await.unwrap());
    let archived = Task {
        is_archived: true,
        ..child
    };
    repo.save_task(&archived, &event("archived")).await.unwrap();
    assert!(has(org.id, parent.id).await.unwrap());
}

fn one_level_refusal<T: std::fmt::Debug>(r: Result<T, RepoError>) {
    match r {
        Err(RepoError::Conflict { constraint }) => assert_eq!(constraint, SUBTASK_ONE_LEVEL),
        other => panic!("expected the one-level conflict, got {other:?}"),
    }
}

/// The store checks one-level nesting itself (the service checks first, but a racing write
/// can change the tree in between): no sub-task under a sub-task, no parent for a parent;
/// and of A put under B while B is put under A, one write wins.
async fn the_store_nests_subtasks_one_level_even_under_races(p: Ports) {
    let org = p.org("One level").await;
    let (b, states) = board(&p, org.id, "ONE").await;
    let todo = state(&states, StateCategory::Todo);
    let repo = p.plan.tasks.clone();
    let create = |title: &str, parent: Option<TaskId>| NewTask {
        parent_id: parent,
        ..new_task(org.id, &b, todo, title)
    };
    let top = repo
        .create_task(&create("top", None), &event("created"))
        .await
        .unwrap();
    let sub = repo
        .create_task(&create("sub", Some(top.id)), &event("created"))
        .await
        .unwrap();
    one_level_refusal(
        repo.create_task(&create("deeper", Some(sub.id)), &event("created"))
            .await,
    );
    let other = repo
        .create_task(&create("other", None), &event("created"))
        .await
        .unwrap();
    // A parent cannot become a sub-task; a sub-task cannot take sub-tasks.
    let top_under_other = Task {
        parent_id: Some(other.id),
        ..top.clone()
    };
    one_level_refusal(repo.save_task(&top_under_other, &event("updated")).await);
    let other_under_sub = Task {
        parent_id: Some(sub.id),
        ..other.clone()
    };
    one_level_refusal(repo.save_task(&other_under_sub, &event("updated")).await);
    // Unchanged parents and other fields still save.
    let renamed = Task {
        title: "renamed".into(),
        ..sub.clone()
    };
    repo.save_task(&renamed, &event("updated")).await.unwrap();
    // Pairs of top-level tasks, each put under the other at the same time.
    let mut pairs = Vec::new();
    for i in 0..10 {
        let a = repo
            .create_task(&create(&format!("a{i}"), None), &event("created"))
            .await
            .unwrap();
        let b = repo
            .create_task(&create(&format!("b{i}"), None), &event("created"))
            .await
            .unwrap();
        pairs.push((a, b));
    }
    let mut writes = Vec::new();
    for (a, b) in &pairs {
        for (t, parent) in [(a.clone(), b.id), (b.clone(), a.id)] {
            let repo = repo.clone();
            writes.push(tokio::spawn(async move {
                let t = Task {
                    parent_id: Some(parent),
                    ..t
                };
                repo.save_task(&t, &event("updated")).await
            }));
        }
    }
    let mut results = Vec::new();
    for w in writes {
        results.push(w.await.unwrap());
    }
    for pair in results.chunks(2) {
        let won = pair.iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "one of each pair wins: {pair:?}");
        for r in pair.iter().filter(|r| r.is_err()) {
            one_level_refusal(r.clone());
        }
    }
    for (a, b) in &pairs {
        let a = repo.get_task(org.id, a.id).await.unwrap();
        let b = repo.get_task(org.id, b.id).await.unwrap();
        assert!(
            a.parent_id.is_none() || b.parent_id.is_none(),
            "{a:?} {b:?}"
        );
    }
}

/// The column limit is the store's to check, under the board row's lock that numbers the
/// task: of creates racing into a column with room for three, three are stored and the others
/// refused (`COLUMN_FULL`) without taking a number.
async fn a_full_column_refuses_creates_even_under_races(p: Ports) {
    let org = p.org("Column limit").await;
    let (b, states) = board(&p, org.id, "LIM").await;
    let todo = state(&states, StateCategory::Todo).clone();
    let done = state(&states, StateCategory::Done).clone();
    let limited = |state: &State, title: &str| NewTask {
        column_limit: 3,
        ..new_task(org.id, &b, state, title)
    };
    let mut handles = Vec::new();
    for i in 0..20 {
        let repo: Arc<dyn TaskRepository> = p.plan.tasks.clone();
        let new = limited(&todo, &format!("t{i}"));
        handles.push(tokio::spawn(async move {
            repo.create_task(&new, &event("created")).await
        }));
    }
    let mut numbers = Vec::new();
    for h in handles {
        match h.await.unwrap() {
            Ok(t) => numbers.push(t.number),
            Err(RepoError::Conflict { constraint }) if constraint == COLUMN_FULL => {}
            Err(e) => panic!("a create into a full column: {e:?}"),
        }
    }
    numbers.sort_unstable();
    assert_eq!(numbers, [1, 2, 3], "three creates stored");
    let repo = p.plan.tasks.clone();
    assert_eq!(
        repo.count_column(org.id, b.id, todo.id, 5_000)
            .await
            .unwrap(),
        3
    );
    // The refused creates took no number; another column still has room.
    let t = repo
        .create_task(&limited(&done, "elsewhere"), &event("created"))
        .await
        .unwrap();
    assert_eq!(t.number, 4);
    // An archived task frees its place.
    let mut listed = repo
        .list_tasks(
            org.id,
            &TaskFilter {
                boards: vec![ListedBoard::from(&b)],
                state: Some(todo.id),
                ..TaskFilter::default()
            },
            TaskSort::default(),
            PageRequest::all(),
        )
        .await
        .unwrap()
        .results;
    let first = listed.remove(0);
    let archived = Task {
        is_archived: true,
        archived_at: Some(T0),
        ..first
    };
    repo.save_task(&archived, &event("archived")).await.unwrap();
    let t = repo
        .create_task(&limited(&todo, "in its place"), &event("created"))
        .await
        .unwrap();
    assert_eq!((t.number, t.state_id), (5, todo.id));
    assert!(matches!(
        repo.create_task(&limited(&todo, "one more"), &event("created")).await,
        Err(RepoError::Conflict { constraint }) if constraint == COLUMN_FULL
    ));
}

/// A list of live tasks does not read what it knows of them (their organization, that they
/// are not archived and carry no archive stamp): each listed task is the task a read by id
/// gives, field for field, also after an archive (with its board's stamp) and a restore.
async fn a_list_shows_each_task_as_a_read_by_id_does(p: Ports) {
    let org = p.org("Listed as read").await;
    let (b, states) = board(&p, org.id, "LST").await;
    let repo = &p.plan.tasks;
    let todo = state(&states, StateCategory::Todo);
    let mut made = create_tasks(&p, org.id, &b, todo, &["plain", "cycled"]).await;
    let archived = Task {
        is_archived: true,
        archived_at: Some(T0),
        archived_with_board: true,
        ..made[1].clone()
    };
    let archived = repo.save_task(&archived, &event("archived")).await.unwrap();
    let restored = Task {
        is_archived: false,
        archived_at: None,
        archived_with_board: false,
        ..archived
    };
    made[1] = repo.save_task(&restored, &event("restored")).await.unwrap();
    let filter = TaskFilter {
        boards: vec![ListedBoard::from(&b)],
        ..TaskFilter::default()
    };
    let listed = repo
        .list_tasks(org.id, &filter, TaskSort::default(), PageRequest::all())
        .await
        .unwrap();
    assert_eq!(listed.count, 2);
    for t in &listed.results {
        let read = repo.get_task(org.id, t.id).await.unwrap();
        assert_eq!(t, &read);
        assert_eq!(t.org_id, org.id);
        assert!(!t.is_archived && t.archived_at.is_none() && !t.archived_with_board);
    }
    let ids: HashSet<_> = listed.results.iter().map(|t| t.id).collect();
    assert_eq!(ids, made.iter().map(|t| t.id).collect());
}

/// The store checks the board and column a task write names, whatever the service read (its
/// board cache, or columns read before a concurrent archive): a live task goes only into a
/// live column of its own live board (`COLUMN_GONE`), and an archived board numbers nothing.
async fn a_live_task_is_stored_only_in_a_live_column_of_a_live_board(p: Ports) {
    let org = p.org("Column live").await;
    let (b, mut states) = board(&p, org.id, "LIV").await;
    let (other, other_states) = board(&p, org.id, "OTH").await;
    let repo = &p.plan.tasks;
    let gone = |r: Result<Task, RepoError>| {
        assert!(
            matches!(&r, Err(RepoError::Conflict { constraint }) if constraint == COLUMN_GONE),
            "{r:?}"
        );
    };
    let todo = state(&states, StateCategory::Todo).clone();
    let backlog = state(&states, StateCategory::Backlog).clone();
    let elsewhere = state(&other_states, StateCategory::Todo).clone();
    // Another board's column.
    gone(
        repo.create_task(&new_task(org.id, &b, &elsewhere, "x"), &event("created"))
            .await,
    );
    let t = repo
        .create_task(&new_task(org.id, &b, &todo, "kept"), &event("created"))
        .await
        .unwrap();
    let shelved = repo
        .create_task(
            &new_task(org.id, &b, &backlog, "shelved"),
            &event("created"),
        )
        .await
        .unwrap();
    let shelved = Task {
        is_archived: true,
        archived_at: Some(T0),
        ..shelved
    };
    let shelved = repo.save_task(&shelved, &event("archived")).await.unwrap();
    // An archived column: refused on create, on a move into it, and on a restore into it.
    for s in states.iter_mut().filter(|s| s.id == backlog.id) {
        s.is_archived = true;
    }
    p.plan.boards.put_states(org.id, &states).await.unwrap();
    gone(
        repo.create_task(&new_task(org.id, &b, &backlog, "y"), &event("created"))
            .await,
    );
    let moved = Task {
        state_id: backlog.id,
        ..t.clone()
    };
    gone(repo.save_task(&moved, &event("moved")).await);
    let restored = Task {
        is_archived: false,
        archived_at: None,
        ..shelved
    };
    gone(repo.save_task(&restored, &event("restored")).await);
    // Moved to another board, into a column of the board it leaves.
    let onto = Task {
        board_id: other.id,
        ..t.clone()
    };
    gone(repo.save_task_on_board(&onto, &event("moved")).await);
    // Nothing of that was stored: the task as it was, numbered 1; the next takes 3.
    let stored = repo.get_task(org.id, t.id).await.unwrap();
    assert_eq!(
        (stored.state_id, stored.version, stored.board_id),
        (todo.id, t.version, b.id)
    );
    let next = repo
        .create_task(&new_task(org.id, &b, &todo, "next"), &event("created"))
        .await
        .unwrap();
    assert_eq!(next.number, 3);
    // An archived task may stay in an archived column; a live one on an archived board's
    // create is not found, and takes no number.
    let archived = Task {
        is_archived: true,
        archived_at: Some(T0),
        ..stored
    };
    repo.save_task(&archived, &event("archived")).await.unwrap();
    p.plan
        .boards
        .archive_board(org.id, b.id, &Executor::default(), T0)
        .await
        .unwrap();
    assert!(matches!(
        repo.create_task(&new_task(org.id, &b, &todo, "late"), &event("created"))
            .await,
        Err(RepoError::NotFound)
    ));
}

/// Writers change tasks while a poller follows the feed from cursor to cursor: every write
/// comes in exactly the window holding its stamp, and once the writers stop, a window holds
/// nothing.
async fn the_delta_window_sees_every_write_once(p: Ports) {
    let org = p.org("Delta").await;
    let (b, states) = board(&p, org.id, "DLT").await;
    let repo = p.plan.tasks.clone();
    let todo = state(&states, StateCategory::Todo).clone();
    let mut tasks = Vec::new();
    for i in 0..4 {
        tasks.push(
            repo.create_task(
                &new_task(org.id, &b, &todo, &format!("t{i}")),
                &event("created"),
            )
            .await
            .unwrap(),
        );
    }
    let start = repo.delta_cursor().await.unwrap();
    let writing = Arc::new(AtomicBool::new(true));
    let mut writers = Vec::new();
    for t in tasks.clone() {
        let repo = repo.clone();
        writers.push(tokio::spawn(async move {
            let mut current = t;
            let mut stamps = Vec::new();
            for i in 0..15 {
                current.title = format!("{} #{i}", current.title);
                current = repo.save_task(&current, &event("updated")).await.unwrap();
                stamps.push((current.id, current.version, current.updated_at));
                tokio::time::sleep(std::time::Duration::from_millis(40)).await;
            }
            stamps
        }));
    }
    let poller = {
        let repo = repo.clone();
        let writing = writing.clone();
        tokio::spawn(async move {
            let mut since = start;
            let mut seen: Vec<(TaskId, i64, OffsetDateTime, OffsetDateTime)> = Vec::new();
            loop {
                let done = !writing.load(Ordering::SeqCst);
                let until = repo.delta_cursor().await.unwrap();
                if until > since {
                    for t in repo
                        .board_changes(org.id, b.id, since, until)
                        .await
                        .unwrap()
                    {
                        assert!(since <= t.updated_at && t.updated_at < until);
                        seen.push((t.id, t.version, since, until));
                    }
                    since = until;
                }
                if done {
                    return (seen, since);
                }
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }
        })
    };
    let mut stamps = Vec::new();
    for w in writers {
        stamps.extend(w.await.unwrap());
    }
    // Past the lag, every write is before some cursor.
    tokio::time::sleep(
        teamcomm_plan::delta::SAFETY_LAG.unsigned_abs() + std::time::Duration::from_millis(1100),
    )
    .await;
    writing.store(false, Ordering::SeqCst);
    let (seen, last) = poller.await.unwrap();
    // The last write of each task came once, in the window holding its stamp.
    for t in &tasks {
        let (_, version, at) = stamps
            .iter()
            .filter(|s| s.0 == t.id)
            .max_by_key(|s| s.1)
            .unwrap();
        let hits: Vec<_> = seen
            .iter()
            .filter(|s| s.0 == t.id && s.1 == *version)
            .collect();
        assert_eq!(hits.len(), 1, "final write of {} seen once", t.title);
        assert!(hits[0].2 <= *at && *at < hits[0].3);
    }
    // No row came twice with the same version.
    let unique: HashSet<_> = seen.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(unique.len(), seen.len());
    // Nothing changed since: an empty window.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let next = repo.delta_cursor().await.unwrap();
    assert!(
        repo.board_changes(org.id, b.id, last, next.max(last))
            .await
            .unwrap()
            .is_empty()
    );
}
