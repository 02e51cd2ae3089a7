//! Unit tests of the social rules (relations, comments, reactions, participants, task labels)
//! through the in-memory ports.

use teamcomm_kernel::{ErrorCode, PageRequest, UserId};
use teamcomm_labels::{BatchMode, LabelChanges, LabelFilter, LabelId};
use teamcomm_org::Role;

use crate::boards::BoardPatch;
use crate::ports::{CommentFilter, ParticipantSource};
use crate::tasks::CreateTask;
use crate::testing::World;
use crate::{
    Board, BoardRef, ParticipantRole, PlanScopes, RelationType, Task, TaskRef, Visibility,
};

async fn task(w: &World, b: &Board, title: &str) -> Task {
    w.plan
        .create_task(
            &w.member,
            CreateTask {
                title: title.to_owned(),
                board: Some(BoardRef::Id(b.id)),
                ..CreateTask::default()
            },
        )
        .await
        .unwrap()
}

fn r(t: &Task) -> TaskRef {
    TaskRef::Id(t.id)
}

/// The stored task (version, `updated_at`).
fn stored(w: &World, t: &Task) -> Task {
    w.mem
        .lock()
        .tasks
        .tasks
        .iter()
        .find(|x| x.id == t.id)
        .unwrap()
        .clone()
}

fn event_kinds(w: &World, t: &Task) -> Vec<String> {
    w.mem
        .lock()
        .tasks
        .events
        .iter()
        .filter(|(_, e)| e.task_id == t.id)
        .map(|(_, e)| e.kind.clone())
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
async fn relations_link_visible_tasks_once_and_never_in_a_blocking_cycle() {
    let w = World::new().await;
    let b = w.board("ENG").await;
    let (t1, t2, t3) = (
        task(&w, &b, "one").await,
        task(&w, &b, "two").await,
        task(&w, &b, "three").await,
    );
    let link = w
        .plan
        .add_relation(
            &w.member,
            &r(&t1),
            RelationType::Blocks,
            &TaskRef::parse("ENG-2").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(link.other.id, t2.id);
    assert_eq!(
        stored(&w, &t1).version,
        t1.version + 1,
        "a link bumps its source"
    );
    assert!(stored(&w, &t1).updated_at > t1.updated_at);
    assert!(event_kinds(&w, &t1).contains(&"relation_added".to_owned()));

    let code = |e: teamcomm_kernel::Error| e.code();
    let self_link = w
        .plan
        .add_relation(&w.member, &r(&t1), RelationType::RelatesTo, &r(&t1))
        .await;
    assert_eq!(code(self_link.unwrap_err()), ErrorCode::InvalidRelation);
    let again = w
        .plan
        .add_relation(&w.member, &r(&t1), RelationType::Blocks, &r(&t2))
        .await;
    assert_eq!(code(again.unwrap_err()), ErrorCode::RelationExists);
    // t2 blocks t3; t3 blocks t1 would close t1 → t2 → t3 → t1.
    w.plan
        .add_relation(&w.member, &r(&t2), RelationType::Blocks, &r(&t3))
        .await
        .unwrap();
    let cycle = w
        .plan
        .add_relation(&w.member, &r(&t3), RelationType::Blocks, &r(&t1))
        .await;
    assert_eq!(code(cycle.unwrap_err()), ErrorCode::RelationCycle);
    let reverse = w
        .plan
        .add_relation(&w.member, &r(&t2), RelationType::Blocks, &r(&t1))
        .await;
    assert_eq!(code(reverse.unwrap_err()), ErrorCode::RelationCycle);
    // relates_to either way round is one link; t3 relates_to t1 is not a cycle.
    w.plan
        .add_relation(&w.member, &r(&t1), RelationType::RelatesTo, &r(&t3))
        .await
        .unwrap();
    let mirrored = w
        .plan
        .add_relation(&w.member, &r(&t3), RelationType::RelatesTo, &r(&t1))
        .await;
    assert_eq!(code(mirrored.unwrap_err()), ErrorCode::RelationExists);

    let links = w.plan.task_relations(&w.member, &r(&t2)).await.unwrap();
    let seen: Vec<(&str, &str, Task)> = links
        .iter()
        .map(|l| {
            (
                l.relation.relation_type.as_str(),
                l.direction.as_str(),
                l.other.clone(),
            )
        })
        .collect();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        (seen[0].0, seen[0].1, seen[0].2.id),
        ("blocks", "incoming", t1.id)
    );
    assert_eq!(
        (seen[1].0, seen[1].1, seen[1].2.id),
        ("blocks", "outgoing", t3.id)
    );

    // Removing goes through either end; another task's link is 404.
    let e = w
        .plan
        .remove_relation(&w.member, &r(&t3), link.relation.id)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    w.plan
        .remove_relation(&w.member, &r(&t2), link.relation.id)
        .await
        .unwrap();
    assert_eq!(
        w.plan
            .task_relations(&w.member, &r(&t1))
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn relations_to_invisible_or_archived_tasks() {
    let w = World::new().await;
    let open = w.board("ENG").await;
    let secret = w.board("SEC").await;
    let a = task(&w, &open, "a").await;
    let hidden = task(&w, &secret, "hidden").await;
    w.plan
        .add_relation(&w.admin, &r(&a), RelationType::RelatesTo, &r(&hidden))
        .await
        .unwrap();
    make_private(&w, &secret).await;
    let stranger = w.person(Role::Member, "stranger@example.com").await;
    let e = w
        .plan
        .add_relation(&stranger, &r(&a), RelationType::Blocks, &r(&hidden))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    // The link to a task the caller cannot see is not listed to them.
    assert!(
        w.plan
            .task_relations(&stranger, &r(&a))
            .await
            .unwrap()
            .is_empty()
    );

    w.plan
        .archive_task(&w.admin, &r(&a), false, None)
        .await
        .unwrap();
    let other = task(&w, &open, "b").await;
    let e = w
        .plan
        .add_relation(&w.admin, &r(&a), RelationType::Blocks, &r(&other))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TaskArchived);
}

#[tokio::test]
async fn comments_reply_one_level_mention_people_and_are_edited_by_their_author() {
    let w = World::new().await;
    let b = w.board("ENG").await;
    let t = task(&w, &b, "t").await;
    let other = task(&w, &b, "other").await;
    let admin_id = w.admin.person_id().unwrap();
    let body = format!("ping <@DB@{admin_id}> and <@DB@{}>", uuid::Uuid::now_v7());
    let first = w
        .plan
        .add_comment(&w.member, &r(&t), &body, None)
        .await
        .unwrap();
    assert_eq!(
        first.comment.mentions,
        [admin_id],
        "only people of the organization"
    );
    assert_eq!(
        first.author.as_ref().unwrap().id,
        w.member.person_id().unwrap()
    );
    let participants = w.plan.list_participants(&w.member, &r(&t)).await.unwrap();
    let mentioned = participants
        .iter()
        .find(|p| p.member.id == admin_id)
        .expect("the mentioned admin follows the task");
    assert_eq!(mentioned.participant.source, ParticipantSource::Mention);
    assert!(event_kinds(&w, &t).contains(&"comment_added".to_owned()));

    let reply = w
        .plan
        .add_comment(&w.admin, &r(&t), "yes", Some(first.comment.id))
        .await
        .unwrap();
    for (on, parent) in [(&t, reply.comment.id), (&other, first.comment.id)] {
        let e = w
            .plan
            .add_comment(&w.admin, &r(on), "no", Some(parent))
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRelation);
    }
    let e = w
        .plan
        .add_comment(&w.admin, &r(&t), &"x".repeat(10_001), None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::CommentBodyTooLong);

    // Only the author edits; the author or an admin deletes.
    let e = w
        .plan
        .edit_comment(&w.admin, &r(&t), first.comment.id, "mine now")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::CommentNotAuthor);
    w.clock.set(time::macros::datetime!(2026-11-26 11:00 UTC));
    let edited = w
        .plan
        .edit_comment(&w.member, &r(&t), first.comment.id, "better")
        .await
        .unwrap();
    assert_eq!(edited.comment.body, "better");
    assert_eq!(
        edited.comment.edited_at,
        Some(time::macros::datetime!(2026-11-26 11:00 UTC))
    );
    let e = w
        .plan
        .delete_comment(&w.member, &r(&t), reply.comment.id)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::CommentNotAuthor);
    w.plan
        .delete_comment(&w.admin, &r(&t), first.comment.id)
        .await
        .unwrap();
    let page = w
        .plan
        .list_comments(
            &w.member,
            &r(&t),
            &CommentFilter::default(),
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(page.count, 2);
    let (kept, answer) = (&page.results[0].comment, &page.results[1].comment);
    assert_eq!((kept.id, kept.body.as_str()), (first.comment.id, ""));
    assert!(kept.deleted_at.is_some());
    assert_eq!(answer.parent, Some(first.comment.id));
    // A comment is reached through its own task only.
    let e = w
        .plan
        .edit_comment(&w.admin, &r(&other), reply.comment.id, "x")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    let found = w
        .plan
        .list_comments(
            &w.member,
            &r(&t),
            &CommentFilter {
                search: Some("YE".into()),
                ..CommentFilter::default()
            },
            PageRequest::all(),
        )
        .await
        .unwrap();
    assert_eq!(found.count, 1);
}

#[tokio::test]
async fn reactions_are_single_emojis_idempotent_and_bounded() {
    let w = World::new().await;
    let b = w.board("ENG").await;
    let t = task(&w, &b, "t").await;
    let c = w
        .plan
        .add_comment(&w.member, &r(&t), "hello", None)
        .await
        .unwrap()
        .comment;
    for _ in 0..2 {
        w.plan
            .add_reaction(&w.admin, &r(&t), c.id, "👍")
            .await
            .unwrap();
    }
    let view = w
        .plan
        .add_reaction(&w.member, &r(&t), c.id, "👍")
        .await
        .unwrap();
    assert_eq!(view.reactions.len(), 1);
    assert_eq!(
        (view.reactions[0].count, view.reactions[0].reacted),
        (2, true)
    );
    let e = w
        .plan
        .add_reaction(&w.member, &r(&t), c.id, "ok")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ReactionInvalidEmoji);
    let key = w.key(PlanScopes::ALL);
    let e = w
        .plan
        .add_reaction(&key, &r(&t), c.id, "👍")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ActorRequired);

    let emojis: Vec<String> = (0..19)
        .map(|i| char::from_u32(0x1F600 + i).unwrap().to_string())
        .collect();
    for e in &emojis {
        w.plan
            .add_reaction(&w.member, &r(&t), c.id, e)
            .await
            .unwrap();
    }
    let e = w
        .plan
        .add_reaction(&w.member, &r(&t), c.id, "🚀")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ReactionLimitReached);
    assert_eq!(e.extra()["limit"], 20);
    // An emoji already there is still taken.
    w.plan
        .add_reaction(&w.admin, &r(&t), c.id, &emojis[0])
        .await
        .unwrap();

    let thumbs = w
        .plan
        .list_reactions(&w.member, &r(&t), c.id, Some("👍"), PageRequest::all())
        .await
        .unwrap();
    assert_eq!(thumbs.count, 2);
    assert_eq!(
        thumbs.results[0].user.as_ref().unwrap().id,
        w.admin.person_id().unwrap()
    );
    for _ in 0..2 {
        w.plan
            .remove_reaction(&w.admin, &r(&t), c.id, "👍")
            .await
            .unwrap();
    }
    let thumbs = w
        .plan
        .list_reactions(&w.member, &r(&t), c.id, Some("👍"), PageRequest::all())
        .await
        .unwrap();
    assert_eq!(thumbs.count, 1);
}

#[tokio::test]
async fn participants_see_the_board_and_are_active() {
    let w = World::new().await;
    let b = w.board("ENG").await;
    let t = task(&w, &b, "t").await;
    let admin_id = w.admin.person_id().unwrap();
    let (row, created) = w
        .plan
        .add_participant(&w.member, &r(&t), admin_id, None, None)
        .await
        .unwrap();
    assert!(created);
    assert_eq!(
        (
            row.participant.role,
            row.participant.source,
            row.participant.is_muted
        ),
        (
            ParticipantRole::Participant,
            ParticipantSource::Added,
            false
        )
    );
    let (row, created) = w
        .plan
        .add_participant(
            &w.member,
            &r(&t),
            admin_id,
            Some(ParticipantRole::Watcher),
            Some(true),
        )
        .await
        .unwrap();
    assert!(!created);
    assert_eq!(
        (row.participant.role, row.participant.is_muted),
        (ParticipantRole::Watcher, true)
    );

    let gone = w.person(Role::Member, "gone@example.com").await;
    {
        use teamcomm_org::{OrgRepository, UserPatch};
        let patch = UserPatch {
            is_active: Some(false),
            role: None,
        };
        w.org_ports
            .people
            .update_user(gone.person_id().unwrap(), &patch, &[])
            .await
            .unwrap();
    }
    let e = w
        .plan
        .add_participant(&w.member, &r(&t), gone.person_id().unwrap(), None, None)
        .await
        .unwrap_err();
    assert_eq!(e.extra()["parameter"], "user_uuid");

    let secret = w.board("SEC").await;
    let hidden = w
        .plan
        .create_task(
            &w.admin,
            CreateTask {
                title: "h".into(),
                board: Some(BoardRef::Id(secret.id)),
                ..CreateTask::default()
            },
        )
        .await
        .unwrap();
    make_private(&w, &secret).await;
    let outsider = w.person(Role::Member, "outsider@example.com").await;
    let e = w
        .plan
        .add_participant(
            &w.admin,
            &r(&hidden),
            outsider.person_id().unwrap(),
            None,
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ParticipantCannotAccessBoard);
    let e = w
        .plan
        .add_participant(&w.admin, &r(&t), UserId(uuid::Uuid::now_v7()), None, None)
        .await
        .unwrap_err();
    assert!(e.field_errors().contains_key("user_uuid"));

    // Subscription: the caller watches, then stops.
    let me = w.plan.subscribe(&outsider, &r(&t)).await.unwrap();
    assert_eq!(me.participant.role, ParticipantRole::Watcher);
    assert_eq!(me.participant.source, ParticipantSource::Subscription);
    assert_eq!(
        w.plan
            .list_participants(&w.admin, &r(&t))
            .await
            .unwrap()
            .len(),
        2
    );
    w.plan.unsubscribe(&outsider, &r(&t)).await.unwrap();
    w.plan
        .remove_participant(&w.member, &r(&t), admin_id)
        .await
        .unwrap();
    assert!(
        w.plan
            .list_participants(&w.admin, &r(&t))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        w.plan
            .subscribe(&w.key(PlanScopes::ALL), &r(&t))
            .await
            .unwrap_err()
            .code(),
        ErrorCode::ActorRequired
    );
}

#[tokio::test]
async fn task_labels_change_in_batches_and_bump_the_task() {
    let w = World::new().await;
    let b = w.board("ENG").await;
    let t = task(&w, &b, "t").await;
    let new_label = |name: &'static str| {
        let w = &w;
        async move {
            w.plan
                .create_plan_label(&w.member, name, Some("#aabbcc"), None)
                .await
                .unwrap()
        }
    };
    let (bug, ui, old) = (
        new_label("bug").await,
        new_label("UI").await,
        new_label("old").await,
    );
    assert_eq!(bug.color, "#AABBCC");
    let set = w
        .plan
        .change_task_labels(&w.member, &r(&t), BatchMode::Add, &[ui.id, bug.id, bug.id])
        .await
        .unwrap();
    assert_eq!(
        set.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["bug", "UI"]
    );
    let after = stored(&w, &t);
    assert_eq!(after.version, t.version + 1);
    assert!(event_kinds(&w, &t).contains(&"label_changed".to_owned()));

    // Unchanged: no bump.
    w.plan
        .change_task_labels(&w.member, &r(&t), BatchMode::Add, &[bug.id])
        .await
        .unwrap();
    assert_eq!(stored(&w, &t).version, after.version);

    // Archived labels: kept when carried, refused when new.
    w.plan
        .change_task_labels(&w.member, &r(&t), BatchMode::Add, &[old.id])
        .await
        .unwrap();
    w.plan
        .update_plan_label(
            &w.admin,
            old.id,
            LabelChanges {
                is_archived: Some(true),
                ..LabelChanges::default()
            },
        )
        .await
        .unwrap();
    w.plan
        .change_task_labels(&w.member, &r(&t), BatchMode::Replace, &[old.id, bug.id])
        .await
        .unwrap();
    let other = task(&w, &b, "other").await;
    let e = w
        .plan
        .change_task_labels(&w.member, &r(&other), BatchMode::Add, &[old.id])
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ArchivedLabelNotAssignable);

    let unknown = LabelId(uuid::Uuid::now_v7());
    let e = w
        .plan
        .change_task_labels(&w.member, &r(&t), BatchMode::Remove, &[bug.id, unknown])
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert_eq!(
        e.extra()["uuids"],
        serde_json::json!([unknown.0.to_string()])
    );
    let many: Vec<LabelId> = (0..51).map(|_| LabelId::new()).collect();
    let e = w
        .plan
        .change_task_labels(&w.member, &r(&t), BatchMode::Add, &many)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TooManyItems);
    let left = w
        .plan
        .change_task_labels(&w.member, &r(&t), BatchMode::Remove, &[bug.id])
        .await
        .unwrap();
    assert_eq!(left.iter().map(|l| l.id).collect::<Vec<_>>(), [old.id]);

    // A label on a task is not deleted (admins only), one on none is.
    let e = w
        .plan
        .delete_plan_label(&w.admin, old.id)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::LabelInUse);
    let e = w
        .plan
        .delete_plan_label(&w.member, ui.id)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied);
    w.plan.delete_plan_label(&w.admin, ui.id).await.unwrap();
    let live = w
        .plan
        .list_plan_labels(&w.member, &LabelFilter::default(), PageRequest::all())
        .await
        .unwrap();
    assert_eq!(
        live.results
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>(),
        ["bug"]
    );
    assert_eq!(
        w.plan
            .board_labels(&w.member, &BoardRef::Id(b.id))
            .await
            .unwrap()
            .len(),
        1
    );

    // Only the creator or an admin edits a label; `""` puts the default colour back.
    let e = w
        .plan
        .update_plan_label(
            &w.person(Role::Member, "x@example.com").await,
            bug.id,
            LabelChanges::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied);
    let bug = w
        .plan
        .update_plan_label(
            &w.member,
            bug.id,
            LabelChanges {
                color: Some(String::new()),
                ..LabelChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(bug.color, teamcomm_labels::DEFAULT_COLOR);
}

/// A comment by the admin on `t` mentioning `people`; answers how many times it visited the
/// store.
async fn comment_visits(w: &World, t: &Task, people: &[UserId]) -> usize {
    let body: Vec<String> = people.iter().map(|p| format!("<@DB@{}>", p.0)).collect();
    let before = w.mem.visits();
    w.plan
        .add_comment(&w.admin, &r(t), &body.join(" "), None)
        .await
        .unwrap();
    w.mem.visits() - before
}

#[tokio::test]
async fn mentions_on_a_members_only_board_add_who_sees_it_reading_the_board_once() {
    use crate::access::Grantee;
    use teamcomm_org::{OrgRepository, UserPatch};
    let w = World::new().await;
    let b = w.board("SEC").await;
    let t = task(&w, &b, "t").await;
    make_private(&w, &b).await;
    let mut people = Vec::new();
    for (role, email) in [
        (Role::Member, "granted@example.com"),
        (Role::Member, "teammate@example.com"),
        (Role::Admin, "admin2@example.com"),
        (Role::Member, "gone@example.com"),
    ] {
        people.push(w.person(role, email).await.person_id().unwrap());
    }
    let [granted, teammate, admin2, gone] = people[..] else {
        unreachable!()
    };
    let mut outsiders = Vec::new();
    for i in 0..4 {
        let outsider = w.person(Role::Member, &format!("out{i}@example.com")).await;
        outsiders.push(outsider.person_id().unwrap());
    }
    let team = w.team(&[teammate]).await;
    // `gone` is granted but deactivated below: mentions skip them.
    for grantee in [
        Grantee::User(granted),
        Grantee::User(gone),
        Grantee::Team(team.id),
    ] {
        w.plan
            .add_board_member(&w.admin, &BoardRef::Id(b.id), grantee)
            .await
            .unwrap();
    }
    let deactivate = UserPatch {
        is_active: Some(false),
        role: None,
    };
    w.org_ports
        .people
        .update_user(gone, &deactivate, &[])
        .await
        .unwrap();
    let before = w.plan.list_participants(&w.admin, &r(&t)).await.unwrap();

    // The board and its grants are read once per comment, not per mention.
    let one = comment_visits(&w, &t, &outsiders[..1]).await;
    let four = comment_visits(&w, &t, &outsiders).await;
    assert_eq!(
        one, four,
        "store visits for 1 and 4 mentions who cannot see the board"
    );
    let unknown = UserId(uuid::Uuid::now_v7());
    let mut mixed = vec![granted, outsiders[0], teammate, gone, unknown, admin2];
    mixed.extend(&outsiders[1..]);
    let visits = comment_visits(&w, &t, &mixed).await;
    assert_eq!(visits, one + 3, "one store write per person added");

    let after = w.plan.list_participants(&w.admin, &r(&t)).await.unwrap();
    let mut added: Vec<_> = after
        .iter()
        .filter(|p| !before.iter().any(|b| b.member.id == p.member.id))
        .map(|p| (p.member.id, p.participant.source))
        .collect();
    added.sort_unstable_by_key(|(id, _)| *id);
    let mut seers = [granted, teammate, admin2];
    seers.sort_unstable();
    let by_mention = seers.map(|id| (id, ParticipantSource::Mention));
    assert_eq!(added, by_mention, "those who see the board, by mention");
}
