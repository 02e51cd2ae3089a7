//! `TaskSocialRepository`: relations, comments and reactions, participants and task labels,
//! each write with its task event (and the task bumped when the event says so).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::PageRequest;
use teamcomm_labels::{LabelId, NewLabel};
use teamcomm_org::{Organization, User};
use teamcomm_plan::actor::Executor;
use teamcomm_plan::ports::{
    Comment, CommentFilter, NewTask, NewTaskEvent, Participant, ParticipantSource,
    ParticipantUpdate, RELATION_CYCLE, RELATION_KEY, Reaction, Relation, SocialEvent,
    TaskSocialRepository,
};
use teamcomm_plan::{
    Board, BoardId, CommentId, EstimateScale, ParticipantRole, Project, ProjectHealth, ProjectId,
    RelationId, RelationType, State, StateCategory, StateId, Task, TaskId, Visibility,
};
use time::OffsetDateTime;

use crate::ports::{Ports, assert_conflict, assert_not_found};

contract!(
    relations_are_unique_either_way_and_never_close_a_blocking_cycle,
    racing_relation_writes_keep_one_link_and_no_cycle,
    a_page_of_tasks_reads_its_labels_participants_and_comment_counts_at_once,
    comments_read_back_oldest_first_filtered_and_soft_deleted,
    reactions_are_one_per_person_and_emoji,
    participants_are_put_once_and_updated,
    task_labels_are_replaced_and_counted,
);

fn now() -> OffsetDateTime {
    // Microseconds, as Postgres keeps them.
    crate::ports::micros(OffsetDateTime::now_utc())
}

/// A board with one column, and `n` tasks on it.
async fn tasks(p: &Ports, org: &Organization, by: &User, n: usize) -> Vec<Task> {
    let at = now();
    let project = Project {
        id: ProjectId::new(),
        org_id: org.id,
        name: format!("P {}", uuid::Uuid::now_v7()),
        description: String::new(),
        visibility: Visibility::Org,
        lead: None,
        health: ProjectHealth::NotSet,
        start_date: None,
        target_date: None,
        rank: 1,
        is_archived: false,
        archived_at: None,
        created_by: Some(by.id),
        created_at: at,
        updated_at: at,
    };
    p.plan.projects.create_project(&project).await.unwrap();
    let board = Board {
        id: BoardId::new(),
        org_id: org.id,
        project_id: project.id,
        name: "Eng".into(),
        key: "ENG".into(),
        visibility: Visibility::Org,
        estimate_scale: EstimateScale::None,
        archive_after_days: None,
        rank: 1,
        is_archived: false,
        archived_at: None,
        created_by: Some(by.id),
        created_at: at,
        updated_at: at,
    };
    let state = State {
        id: StateId::new(),
        board_id: board.id,
        name: "Todo".into(),
        category: StateCategory::Todo,
        position: 1,
        color: None,
        is_default: true,
        is_archived: false,
        created_at: at,
        updated_at: at,
    };
    p.plan
        .boards
        .create_board(&board, std::slice::from_ref(&state))
        .await
        .unwrap();
    let mut made = Vec::new();
    for i in 0..n {
        let new = NewTask {
            id: TaskId::new(),
            org_id: org.id,
            board_id: board.id,
            state_id: state.id,
            parent_id: None,
            title: format!("task {i}"),
            description: String::new(),
            owner: None,
            priority: None,
            estimate: None,
            start_date: None,
            due_date: None,
            completed_at: None,
            created_by: Some(by.id),
            created_by_agent: None,
            column_limit: 5_000,
        };
        let event = NewTaskEvent::new("created", Executor::default(), json!({}));
        made.push(p.plan.tasks.create_task(&new, &event).await.unwrap());
    }
    made
}

fn event(t: &Task, kind: &'static str, bumps_task: bool) -> SocialEvent {
    SocialEvent {
        task: t.id,
        board: t.board_id,
        event: NewTaskEvent::new(kind, Executor::default(), json!({"k": kind})),
        bumps_task,
    }
}

fn relation(from: &Task, to: &Task, kind: RelationType, by: &User) -> Relation {
    Relation {
        id: RelationId::new(),
        source: from.id,
        target: to.id,
        relation_type: kind,
        created_by: Some(by.id),
        created_by_agent: Some("Claude".into()),
        created_at: now(),
    }
}

/// The kinds of the task's events, oldest first.
async fn kinds(p: &Ports, t: &Task) -> Vec<String> {
    p.plan
        .tasks
        .task_events(t.org_id, t.id, &Default::default(), PageRequest::all())
        .await
        .unwrap()
        .results
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

async fn relations_are_unique_either_way_and_never_close_a_blocking_cycle(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let t = tasks(&p, &org, &ann, 4).await;
    let s: &dyn TaskSocialRepository = p.plan.social.as_ref();
    let add = |from: &Task, to: &Task, kind: RelationType| {
        let r = relation(from, to, kind, &ann);
        let e = event(from, "relation_added", true);
        async move { s.add_relation(org.id, &r, &e).await }
    };
    let ab = relation(&t[0], &t[1], RelationType::Blocks, &ann);
    let stored = s
        .add_relation(org.id, &ab, &event(&t[0], "relation_added", true))
        .await
        .unwrap();
    assert_eq!(stored, ab);
    let bumped = p.plan.tasks.get_task(org.id, t[0].id).await.unwrap();
    assert_eq!(bumped.version, t[0].version + 1);
    assert!(bumped.updated_at > t[0].updated_at);
    assert_eq!(kinds(&p, &t[0]).await, ["created", "relation_added"]);
    assert_conflict(add(&t[0], &t[1], RelationType::Blocks).await, RELATION_KEY);
    // The reverse block is the shortest cycle.
    assert_conflict(
        add(&t[1], &t[0], RelationType::Blocks).await,
        RELATION_CYCLE,
    );
    let bc = add(&t[1], &t[2], RelationType::Blocks).await.unwrap();
    assert_conflict(
        add(&t[2], &t[0], RelationType::Blocks).await,
        RELATION_CYCLE,
    );
    // relates_to and duplicates are one link either way round; another type is another link.
    let rel = add(&t[2], &t[3], RelationType::RelatesTo).await.unwrap();
    assert_conflict(
        add(&t[3], &t[2], RelationType::RelatesTo).await,
        RELATION_KEY,
    );
    add(&t[3], &t[2], RelationType::Duplicates).await.unwrap();
    assert_conflict(
        add(&t[2], &t[3], RelationType::Duplicates).await,
        RELATION_KEY,
    );
    // A relates_to is no block: t3 blocks t2 closes nothing.
    add(&t[3], &t[2], RelationType::Blocks).await.unwrap();
    // The refused writes recorded nothing.
    assert_eq!(kinds(&p, &t[0]).await, ["created", "relation_added"]);
    assert_eq!(kinds(&p, &t[1]).await, ["created", "relation_added"]);

    let of_b = s.relations_of(org.id, t[1].id).await.unwrap();
    assert_eq!(of_b, [ab.clone(), bc.clone()]);
    assert_eq!(s.relations_of(org.id, t[2].id).await.unwrap().len(), 4);
    assert!(s.relations_of(other.id, t[1].id).await.unwrap().is_empty());
    assert_eq!(s.get_relation(org.id, rel.id).await.unwrap(), rel);
    assert_not_found(s.get_relation(other.id, bc.id).await);
    assert_not_found(
        s.delete_relation(other.id, bc.id, &event(&t[1], "relation_removed", true))
            .await,
    );
    s.delete_relation(org.id, bc.id, &event(&t[1], "relation_removed", true))
        .await
        .unwrap();
    assert_not_found(s.get_relation(org.id, bc.id).await);
    // The chain is broken: t2 may block t0 now.
    add(&t[2], &t[0], RelationType::Blocks).await.unwrap();
}

/// Each adds a link from one task to another; answers what each write answered.
async fn race(
    s: &Arc<dyn TaskSocialRepository>,
    org: &Organization,
    by: &User,
    links: &[(&Task, &Task, RelationType)],
) -> Vec<Result<Relation, teamcomm_kernel::RepoError>> {
    let mut writes = Vec::new();
    for (from, to, kind) in links {
        let (s, org) = (s.clone(), org.id);
        let r = relation(from, to, *kind, by);
        let e = event(from, "relation_added", true);
        writes.push(tokio::spawn(
            async move { s.add_relation(org, &r, &e).await },
        ));
    }
    let mut answers = Vec::new();
    for w in writes {
        answers.push(w.await.unwrap());
    }
    answers
}

/// How many answers were stored, and the constraints the others conflicted on.
fn tally(answers: &[Result<Relation, teamcomm_kernel::RepoError>]) -> (usize, Vec<&str>) {
    let stored = answers.iter().filter(|a| a.is_ok()).count();
    let refused = answers
        .iter()
        .filter_map(|a| match a {
            Err(teamcomm_kernel::RepoError::Conflict { constraint }) => Some(constraint.as_str()),
            Ok(_) => None,
            Err(e) => panic!("unexpected {e:?}"),
        })
        .collect();
    (stored, refused)
}

async fn racing_relation_writes_keep_one_link_and_no_cycle(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let t = tasks(&p, &org, &ann, 6).await;
    let s = &p.plan.social;
    let blocks = RelationType::Blocks;
    // The same link ten times: one stored, nine refused on the key.
    let same: Vec<_> = (0..10).map(|_| (&t[0], &t[1], blocks)).collect();
    let answers = race(s, &org, &ann, &same).await;
    let (stored, refused) = tally(&answers);
    assert_eq!((stored, refused), (1, vec![RELATION_KEY; 9]));
    // relates_to both ways at once: one link.
    let mirrored: Vec<_> = (0..10)
        .map(|i| match i % 2 {
            0 => (&t[2], &t[3], RelationType::RelatesTo),
            _ => (&t[3], &t[2], RelationType::RelatesTo),
        })
        .collect();
    let answers = race(s, &org, &ann, &mirrored).await;
    let (stored, refused) = tally(&answers);
    assert_eq!((stored, refused), (1, vec![RELATION_KEY; 9]));
    // A cycle closed from three sides at once (t3 → t4 → t5 → t3): one of them is refused.
    let ring = [
        (&t[3], &t[4], blocks),
        (&t[4], &t[5], blocks),
        (&t[5], &t[3], blocks),
    ];
    let ring_answers = race(s, &org, &ann, &ring).await;
    let (stored, refused) = tally(&ring_answers);
    assert_eq!((stored, refused), (2, vec![RELATION_CYCLE]));
    // Stored: one row per pair and type, and no block reaches back to where it started.
    let mut pairs: HashMap<(TaskId, TaskId, RelationType), usize> = HashMap::new();
    for task in &t {
        for r in s.relations_of(org.id, task.id).await.unwrap() {
            let pair = (
                r.source.min(r.target),
                r.source.max(r.target),
                r.relation_type,
            );
            *pairs.entry(pair).or_default() += 1;
        }
    }
    // Each link is listed on both its tasks.
    assert!(pairs.values().all(|n| *n == 2), "{pairs:?}");
    assert_eq!(pairs.len(), 4);
    // A stored block's reverse is the shortest cycle.
    for stored in ring_answers.iter().flatten() {
        let by_id = |id: TaskId| t.iter().find(|t| t.id == id).unwrap();
        let (from, to) = (by_id(stored.source), by_id(stored.target));
        assert_conflict(
            s.add_relation(
                org.id,
                &relation(to, from, blocks, &ann),
                &event(to, "relation_added", true),
            )
            .await,
            RELATION_CYCLE,
        );
    }
}

async fn a_page_of_tasks_reads_its_labels_participants_and_comment_counts_at_once(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let t = tasks(&p, &org, &ann, 3).await;
    let ids: Vec<TaskId> = t.iter().map(|t| t.id).collect();
    let s = p.plan.social.as_ref();
    let mut labels = Vec::new();
    for name in ["a", "b"] {
        let new = NewLabel {
            id: LabelId::new(),
            name: name.into(),
            color: "#4A90E2".into(),
            description: String::new(),
            created_by: ann.id,
        };
        labels.push(p.labels.create_label(org.id, &new).await.unwrap().id);
    }
    labels.sort();
    for (task, carried) in [(&t[0], &labels[..]), (&t[1], &labels[1..])] {
        s.set_task_labels(
            org.id,
            task.id,
            carried,
            &event(task, "label_changed", true),
        )
        .await
        .unwrap();
    }
    let of = s.labels_of_tasks(org.id, &ids).await.unwrap();
    assert_eq!(
        of,
        HashMap::from([(t[0].id, labels.clone()), (t[1].id, labels[1..].to_vec())]),
        "by id; a task without labels is absent"
    );
    assert_eq!(s.task_labels(org.id, t[1].id).await.unwrap(), labels[1..]);
    assert!(s.labels_of_tasks(other.id, &ids).await.unwrap().is_empty());
    assert!(s.labels_of_tasks(org.id, &[]).await.unwrap().is_empty());

    let mut put = Vec::new();
    for (task, who) in [(&t[0], &bob), (&t[0], &ann), (&t[2], &ann)] {
        let new = Participant {
            task: task.id,
            user: who.id,
            role: ParticipantRole::Participant,
            source: ParticipantSource::Added,
            is_muted: false,
            created_at: now(),
        };
        let e = event(task, "participant_added", false);
        put.push(
            s.put_participant(org.id, &new, ParticipantUpdate::default(), &e)
                .await
                .unwrap()
                .0,
        );
    }
    let of = s.participants_of_tasks(org.id, &ids).await.unwrap();
    assert_eq!(
        of,
        HashMap::from([
            (t[0].id, put[..2].to_vec()),
            (t[2].id, vec![put[2].clone()])
        ]),
        "oldest first; a task without participants is absent"
    );
    assert_eq!(s.participants(org.id, t[0].id).await.unwrap(), put[..2]);
    assert!(
        s.participants_of_tasks(other.id, &ids)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        s.participants_of_tasks(org.id, &[])
            .await
            .unwrap()
            .is_empty()
    );

    let mut on_first = Vec::new();
    for (task, body) in [(&t[0], "a"), (&t[0], "b"), (&t[0], "c"), (&t[1], "d")] {
        let c = comment(task, &ann, body, None);
        s.add_comment(org.id, &c, &event(task, "comment_added", false))
            .await
            .unwrap();
        on_first.push(c.id);
    }
    s.delete_comment(
        org.id,
        on_first[1],
        now(),
        &event(&t[0], "comment_deleted", false),
    )
    .await
    .unwrap();
    assert_eq!(
        s.live_comment_counts(org.id, &ids).await.unwrap(),
        HashMap::from([(t[0].id, 2), (t[1].id, 1)]),
        "deleted comments are not counted; a task without any is absent"
    );
    assert!(
        s.live_comment_counts(other.id, &ids)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(s.live_comment_counts(org.id, &[]).await.unwrap().is_empty());
}

fn comment(t: &Task, by: &User, body: &str, parent: Option<CommentId>) -> Comment {
    Comment {
        id: CommentId::new(),
        task: t.id,
        parent,
        author: Some(by.id),
        agent_name: None,
        body: body.to_owned(),
        mentions: vec![by.id],
        edited_at: None,
        deleted_at: None,
        created_at: now(),
    }
}

async fn comments_read_back_oldest_first_filtered_and_soft_deleted(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let t = tasks(&p, &org, &ann, 2).await;
    let s = p.plan.social.as_ref();
    let first = comment(&t[0], &ann, "First Words", None);
    assert_eq!(
        s.add_comment(org.id, &first, &event(&t[0], "comment_added", false))
            .await
            .unwrap(),
        first
    );
    let unbumped = p.plan.tasks.get_task(org.id, t[0].id).await.unwrap();
    assert_eq!(
        unbumped.version, t[0].version,
        "a comment does not bump its task"
    );
    let reply = comment(&t[0], &ann, "a reply", Some(first.id));
    s.add_comment(org.id, &reply, &event(&t[0], "comment_added", false))
        .await
        .unwrap();
    let elsewhere = comment(&t[1], &ann, "words elsewhere", None);
    s.add_comment(org.id, &elsewhere, &event(&t[1], "comment_added", false))
        .await
        .unwrap();
    assert_eq!(s.get_comment(org.id, reply.id).await.unwrap(), reply);
    assert_not_found(s.get_comment(other.id, reply.id).await);

    let task = t[0].id;
    let list = |filter: CommentFilter, page: PageRequest| async move {
        let page = s.list_comments(org.id, task, &filter, page).await.unwrap();
        (
            page.count,
            page.results.into_iter().map(|c| c.id).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        list(CommentFilter::default(), PageRequest::all()).await,
        (2, vec![first.id, reply.id])
    );
    assert_eq!(
        list(
            CommentFilter::default(),
            PageRequest {
                offset: 1,
                limit: 1
            }
        )
        .await,
        (2, vec![reply.id])
    );
    let words = CommentFilter {
        search: Some("WORDS".into()),
        ..CommentFilter::default()
    };
    assert_eq!(list(words, PageRequest::all()).await, (1, vec![first.id]));
    let today = first.created_at.date();
    let later = CommentFilter {
        start_date: today.next_day(),
        ..CommentFilter::default()
    };
    assert_eq!(list(later, PageRequest::all()).await.0, 0);
    let through_today = CommentFilter {
        start_date: Some(today),
        end_date: Some(today),
        ..CommentFilter::default()
    };
    assert_eq!(list(through_today, PageRequest::all()).await.0, 2);

    let at = now();
    let edited = s
        .edit_comment(org.id, first.id, "Better", &[], at)
        .await
        .unwrap();
    assert_eq!(
        (&*edited.body, &edited.mentions, edited.edited_at),
        ("Better", &vec![], Some(at))
    );
    assert_not_found(s.edit_comment(other.id, first.id, "x", &[], at).await);
    s.delete_comment(
        org.id,
        reply.id,
        at,
        &event(&t[0], "comment_deleted", false),
    )
    .await
    .unwrap();
    let gone = s.get_comment(org.id, reply.id).await.unwrap();
    assert_eq!((&*gone.body, gone.deleted_at), ("", Some(at)));
    assert!(gone.mentions.is_empty());
    assert_not_found(
        s.delete_comment(
            other.id,
            first.id,
            at,
            &event(&t[0], "comment_deleted", false),
        )
        .await,
    );
    assert_eq!(
        kinds(&p, &t[0]).await,
        [
            "created",
            "comment_added",
            "comment_added",
            "comment_deleted"
        ]
    );
}

async fn reactions_are_one_per_person_and_emoji(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let t = tasks(&p, &org, &ann, 1).await;
    let s = p.plan.social.as_ref();
    let c = comment(&t[0], &ann, "hi", None);
    s.add_comment(org.id, &c, &event(&t[0], "comment_added", false))
        .await
        .unwrap();
    let react = |who: &User, emoji: &str| Reaction {
        comment: c.id,
        user: who.id,
        emoji: emoji.to_owned(),
        agent_name: None,
        created_at: now(),
    };
    let first = react(&ann, "👍");
    s.add_reaction(org.id, &first).await.unwrap();
    s.add_reaction(org.id, &react(&ann, "👍")).await.unwrap();
    s.add_reaction(org.id, &react(&bob, "👍")).await.unwrap();
    s.add_reaction(org.id, &react(&bob, "🎉")).await.unwrap();
    assert_not_found(s.add_reaction(other.id, &react(&bob, "🚀")).await);
    let all = s.reactions_on(org.id, &[c.id]).await.unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[0], first, "the first one stays as it was");
    assert!(s.reactions_on(other.id, &[c.id]).await.unwrap().is_empty());
    let thumbs = s
        .list_reactions(org.id, c.id, Some("👍"), PageRequest::all())
        .await
        .unwrap();
    assert_eq!(thumbs.count, 2);
    assert_eq!(
        thumbs.results.iter().map(|r| r.user).collect::<Vec<_>>(),
        [ann.id, bob.id]
    );
    let page = s
        .list_reactions(
            org.id,
            c.id,
            None,
            PageRequest {
                offset: 2,
                limit: 5,
            },
        )
        .await
        .unwrap();
    assert_eq!((page.count, page.results.len()), (3, 1));
    s.remove_reaction(other.id, c.id, bob.id, "👍")
        .await
        .unwrap();
    assert_eq!(s.reactions_on(org.id, &[c.id]).await.unwrap().len(), 3);
    s.remove_reaction(org.id, c.id, bob.id, "👍").await.unwrap();
    s.remove_reaction(org.id, c.id, bob.id, "👍").await.unwrap();
    assert_eq!(s.reactions_on(org.id, &[c.id]).await.unwrap().len(), 2);
}

async fn participants_are_put_once_and_updated(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let t = tasks(&p, &org, &ann, 1).await;
    let s = p.plan.social.as_ref();
    let new = Participant {
        task: t[0].id,
        user: ann.id,
        role: ParticipantRole::Participant,
        source: ParticipantSource::Mention,
        is_muted: false,
        created_at: now(),
    };
    let (row, created) = s
        .put_participant(
            org.id,
            &new,
            ParticipantUpdate::default(),
            &event(&t[0], "participant_added", false),
        )
        .await
        .unwrap();
    assert!(created);
    assert_eq!(row, new);
    let (row, created) = s
        .put_participant(
            org.id,
            &Participant {
                role: ParticipantRole::Watcher,
                source: ParticipantSource::Added,
                ..new.clone()
            },
            ParticipantUpdate {
                role: None,
                is_muted: Some(true),
            },
            &event(&t[0], "participant_added", false),
        )
        .await
        .unwrap();
    assert!(!created);
    assert_eq!(
        (row.role, row.source, row.is_muted),
        (
            ParticipantRole::Participant,
            ParticipantSource::Mention,
            true
        )
    );
    assert_eq!(s.participants(org.id, t[0].id).await.unwrap(), [row]);
    assert!(s.participants(other.id, t[0].id).await.unwrap().is_empty());
    assert_eq!(kinds(&p, &t[0]).await, ["created", "participant_added"]);
    let removed = event(&t[0], "participant_removed", false);
    assert!(
        !s.remove_participant(other.id, t[0].id, ann.id, &removed)
            .await
            .unwrap()
    );
    assert!(
        s.remove_participant(org.id, t[0].id, ann.id, &removed)
            .await
            .unwrap()
    );
    assert!(
        !s.remove_participant(org.id, t[0].id, ann.id, &removed)
            .await
            .unwrap()
    );
    assert!(s.participants(org.id, t[0].id).await.unwrap().is_empty());
    assert_eq!(
        kinds(&p, &t[0]).await,
        ["created", "participant_added", "participant_removed"]
    );
}

async fn task_labels_are_replaced_and_counted(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let t = tasks(&p, &org, &ann, 2).await;
    let s = p.plan.social.as_ref();
    let mut labels = Vec::new();
    for name in ["a", "b", "c"] {
        let new = NewLabel {
            id: LabelId::new(),
            name: name.into(),
            color: "#4A90E2".into(),
            description: String::new(),
            created_by: ann.id,
        };
        labels.push(p.labels.create_label(org.id, &new).await.unwrap().id);
    }
    let sorted = |mut v: Vec<LabelId>| {
        v.sort();
        v
    };
    s.set_task_labels(
        org.id,
        t[0].id,
        &labels[..2],
        &event(&t[0], "label_changed", true),
    )
    .await
    .unwrap();
    assert_eq!(
        s.task_labels(org.id, t[0].id).await.unwrap(),
        sorted(labels[..2].to_vec())
    );
    let bumped = p.plan.tasks.get_task(org.id, t[0].id).await.unwrap();
    assert_eq!(bumped.version, t[0].version + 1);
    s.set_task_labels(
        org.id,
        t[0].id,
        &labels[1..],
        &event(&t[0], "label_changed", true),
    )
    .await
    .unwrap();
    assert_eq!(
        s.task_labels(org.id, t[0].id).await.unwrap(),
        sorted(labels[1..].to_vec())
    );
    s.set_task_labels(
        org.id,
        t[1].id,
        &labels[1..2],
        &event(&t[1], "label_changed", true),
    )
    .await
    .unwrap();
    assert_eq!(s.tasks_with_label(org.id, labels[1]).await.unwrap(), 2);
    assert_eq!(s.tasks_with_label(org.id, labels[0]).await.unwrap(), 0);
    assert_eq!(s.tasks_with_label(other.id, labels[1]).await.unwrap(), 0);
    assert!(s.task_labels(other.id, t[0].id).await.unwrap().is_empty());
    s.set_task_labels(org.id, t[0].id, &[], &event(&t[0], "label_changed", true))
        .await
        .unwrap();
    assert!(s.task_labels(org.id, t[0].id).await.unwrap().is_empty());
    assert_eq!(
        p.plan
            .tasks
            .get_task(org.id, t[0].id)
            .await
            .unwrap()
            .version,
        t[0].version + 3
    );
}
