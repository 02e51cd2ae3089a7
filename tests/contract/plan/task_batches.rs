//! Plan port contract: the batched task reads behind a page's embeds (tasks by ids for the
//! parents it names, the live sub-tasks of many tasks), one read each whatever the page holds.

use teamcomm_kernel::PageRequest;
use teamcomm_plan::ports::{ListedBoard, NewTask, TaskFilter, TaskSort};
use teamcomm_plan::{StateCategory, Task, TaskId};

use super::tasks::{board, create_tasks, event, new_task, state};
use crate::ports::Ports;

contract!(
    tasks_are_read_by_ids_of_their_organization_only,
    live_subtasks_of_many_tasks_read_at_once_as_each_tasks_list,
);

/// By id, each once, archived tasks too (as a task reads alone); unknown ids and another
/// organization's tasks left out.
async fn tasks_are_read_by_ids_of_their_organization_only(p: Ports) {
    let org = p.org("Batch").await;
    let other = p.org("Elsewhere").await;
    let (b, states) = board(&p, org.id, "BAT").await;
    let (ob, other_states) = board(&p, other.id, "OTH").await;
    let todo = state(&states, StateCategory::Todo);
    let repo = &p.plan.tasks;
    let made = create_tasks(&p, org.id, &b, todo, &["one", "two", "three"]).await;
    let archived = Task {
        is_archived: true,
        ..made[2].clone()
    };
    repo.save_task(&archived, &event("archived")).await.unwrap();
    let elsewhere = new_task(
        other.id,
        &ob,
        state(&other_states, StateCategory::Todo),
        "theirs",
    );
    let stranger = repo
        .create_task(&elsewhere, &event("created"))
        .await
        .unwrap();

    let asked = [
        made[2].id,
        TaskId::new(),
        stranger.id,
        made[0].id,
        made[2].id,
    ];
    let mut expected = Vec::new();
    for t in [&made[0], &made[2]] {
        expected.push(repo.get_task(org.id, t.id).await.unwrap());
    }
    expected.sort_by_key(|t| t.id);
    assert!(expected.iter().any(|t| t.is_archived));
    assert_eq!(repo.tasks_by_ids(org.id, &asked).await.unwrap(), expected);
    let theirs = repo.get_task(other.id, stranger.id).await.unwrap();
    assert_eq!(repo.tasks_by_ids(other.id, &asked).await.unwrap(), [theirs]);
    assert!(repo.tasks_by_ids(org.id, &[]).await.unwrap().is_empty());
}

/// Grouped by parent (by the parents' ids), each parent's live sub-tasks in the order of its
/// own list (rank, then id); archived sub-tasks, tasks without any and other organizations
/// read nothing.
async fn live_subtasks_of_many_tasks_read_at_once_as_each_tasks_list(p: Ports) {
    let org = p.org("Subtasks").await;
    let other = p.org("Elsewhere").await;
    let (b, states) = board(&p, org.id, "KID").await;
    let todo = state(&states, StateCategory::Todo);
    let doing = state(&states, StateCategory::InProgress);
    let repo = &p.plan.tasks;
    let parents = create_tasks(&p, org.id, &b, todo, &["first", "second", "childless"]).await;
    let mut children = Vec::new();
    for (parent, title, column) in [
        (0, "a1", todo),
        (0, "a2", doing),
        (0, "a3", todo),
        (1, "b1", todo),
    ] {
        let new = NewTask {
            parent_id: Some(parents[parent].id),
            ..new_task(org.id, &b, column, title)
        };
        children.push(repo.create_task(&new, &event("created")).await.unwrap());
    }
    // a1 goes after a2 (ranks order across columns), a3 is archived.
    let after = Task {
        rank: children[1].rank + 1,
        ..children[0].clone()
    };
    repo.save_task(&after, &event("moved")).await.unwrap();
    let archived = Task {
        is_archived: true,
        ..children[2].clone()
    };
    repo.save_task(&archived, &event("archived")).await.unwrap();

    let asked: Vec<TaskId> = parents.iter().rev().map(|t| t.id).collect();
    let read = repo.live_subtasks_of(org.id, &asked).await.unwrap();
    let mut by_id = asked.clone();
    by_id.sort();
    let mut expected = Vec::new();
    for parent in by_id {
        let filter = TaskFilter {
            boards: vec![ListedBoard::from(&b)],
            parent: Some(parent),
            ..TaskFilter::default()
        };
        let list = repo
            .list_tasks(org.id, &filter, TaskSort::default(), PageRequest::all())
            .await
            .unwrap();
        expected.extend(list.results);
    }
    assert_eq!(read, expected);
    let of = |parent: &Task| -> Vec<&str> {
        read.iter()
            .filter(|t| t.parent_id == Some(parent.id))
            .map(|t| t.title.as_str())
            .collect()
    };
    assert_eq!(of(&parents[0]), ["a2", "a1"]);
    assert_eq!(of(&parents[1]), ["b1"]);
    assert!(of(&parents[2]).is_empty());
    assert_eq!(read.len(), 3);
    assert!(
        repo.live_subtasks_of(other.id, &asked)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(repo.live_subtasks_of(org.id, &[]).await.unwrap().is_empty());
}
