//! What task answers embed when asked (`include=`): the social state of tasks the caller
//! already sees (a listed page, a task read), so no visibility is checked again here.

use std::collections::HashMap;

use teamcomm_kernel::Error;
use teamcomm_labels::{Label, LabelId};

use crate::model::{Task, TaskId};
use crate::participants::ParticipantView;
use crate::service::Plan;

impl Plan {
    /// Each task's labels by name: one read of the tasks' label ids, one of the labels.
    pub async fn labels_of_tasks(
        &self,
        tasks: &[Task],
    ) -> Result<HashMap<TaskId, Vec<Label>>, Error> {
        let Some(org) = tasks.first().map(|t| t.org_id) else {
            return Ok(HashMap::new());
        };
        let ids = tasks.iter().map(|t| t.id).collect::<Vec<_>>();
        let ids_of = self.ports.social.labels_of_tasks(org, &ids).await?;
        let mut all: Vec<LabelId> = ids_of.values().flatten().copied().collect();
        all.sort();
        all.dedup();
        let labels: HashMap<LabelId, Label> = self
            .ports
            .labels
            .find_labels(org, &all)
            .await?
            .into_iter()
            .map(|l| (l.id, l))
            .collect();
        Ok(tasks
            .iter()
            .map(|task| {
                let mut mine: Vec<Label> = ids_of
                    .get(&task.id)
                    .into_iter()
                    .flatten()
                    .filter_map(|id| labels.get(id).cloned())
                    .collect();
                mine.sort_by_key(|l| (l.name.to_lowercase(), l.id));
                (task.id, mine)
            })
            .collect())
    }

    /// Each task's live sub-tasks (on its board), by rank, as [`Plan::children_of`] lists
    /// them in its default order: one read for all the tasks.
    pub async fn subtasks_of_tasks(
        &self,
        tasks: &[Task],
    ) -> Result<HashMap<TaskId, Vec<Task>>, Error> {
        let Some(org) = tasks.first().map(|t| t.org_id) else {
            return Ok(HashMap::new());
        };
        let ids = tasks.iter().map(|t| t.id).collect::<Vec<_>>();
        let mut of: HashMap<TaskId, Vec<Task>> = ids.iter().map(|id| (*id, Vec::new())).collect();
        let board_of: HashMap<TaskId, _> = tasks.iter().map(|t| (t.id, t.board_id)).collect();
        for child in self.ports.tasks.live_subtasks_of(org, &ids).await? {
            let Some(parent) = child.parent_id else {
                continue;
            };
            if board_of.get(&parent) == Some(&child.board_id)
                && let Some(children) = of.get_mut(&parent)
            {
                children.push(child);
            }
        }
        Ok(of)
    }

    /// Each task's participants, oldest first (people no longer in the organization left
    /// out): one read of the rows, one of the people.
    pub async fn participants_of_tasks(
        &self,
        tasks: &[Task],
    ) -> Result<HashMap<TaskId, Vec<ParticipantView>>, Error> {
        let Some(org) = tasks.first().map(|t| t.org_id) else {
            return Ok(HashMap::new());
        };
        let ids = tasks.iter().map(|t| t.id).collect::<Vec<_>>();
        let mut rows_of = self.ports.social.participants_of_tasks(org, &ids).await?;
        let people = self
            .people(org, rows_of.values().flatten().map(|p| p.user))
            .await?;
        Ok(tasks
            .iter()
            .map(|task| {
                let views = rows_of
                    .remove(&task.id)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|participant| {
                        let member = people.get(&participant.user)?.clone();
                        Some(ParticipantView {
                            participant,
                            member,
                        })
                    })
                    .collect();
                (task.id, views)
            })
            .collect())
    }

    /// How many comments of the task are not deleted (a deleted one keeps its row).
    pub async fn live_comment_count(&self, task: &Task) -> Result<u64, Error> {
        let counts = self
            .ports
            .social
            .live_comment_counts(task.org_id, &[task.id])
            .await?;
        Ok(counts.get(&task.id).copied().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use teamcomm_labels::BatchMode;

    use crate::tasks::{CreateTask, MoveTask, PersonRef};
    use crate::testing::World;
    use crate::{BoardRef, Task, TaskRef};

    async fn tasks(w: &World, titles: &[&str]) -> Vec<Task> {
        let board = w.board("EMB").await;
        let mut made = Vec::new();
        for title in titles {
            let new = CreateTask {
                title: (*title).to_owned(),
                board: Some(BoardRef::Id(board.id)),
                ..CreateTask::default()
            };
            made.push(w.plan.create_task(&w.member, new).await.unwrap());
        }
        made
    }

    #[tokio::test]
    async fn a_page_gets_each_tasks_participants_as_their_listing_shows_them() {
        let w = World::new().await;
        let ts = tasks(&w, &["one", "two", "three"]).await;
        let admin = w.admin.person().unwrap().id;
        w.plan
            .add_participant(&w.member, &TaskRef::Id(ts[0].id), admin, None, None)
            .await
            .unwrap();
        w.plan
            .remove_participant(
                &w.member,
                &TaskRef::Id(ts[2].id),
                w.member.person().unwrap().id,
            )
            .await
            .unwrap();
        let mut of = w.plan.participants_of_tasks(&ts).await.unwrap();
        assert_eq!(of.len(), ts.len(), "every task has its entry");
        for t in &ts {
            let listed = w
                .plan
                .list_participants(&w.member, &TaskRef::Id(t.id))
                .await
                .unwrap();
            assert_eq!(of.remove(&t.id).unwrap(), listed);
        }
        let first = w.plan.participants_of_tasks(&ts[..1]).await.unwrap();
        assert!(first[&ts[0].id].iter().any(|p| p.member.id == admin));
        assert!(w.plan.participants_of_tasks(&[]).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_page_gets_each_tasks_live_subtasks_as_its_children_list() {
        let w = World::new().await;
        let ts = tasks(&w, &["one", "two", "three"]).await;
        let mut made = Vec::new();
        for (parent, title) in [(0, "a1"), (0, "a2"), (0, "a3"), (1, "b1")] {
            let new = CreateTask {
                title: title.to_owned(),
                parent: Some(TaskRef::Id(ts[parent].id)),
                ..CreateTask::default()
            };
            made.push(w.plan.create_task(&w.member, new).await.unwrap());
        }
        let after_a2 = MoveTask {
            state: None,
            before: None,
            after: Some(TaskRef::Id(made[1].id)),
        };
        w.plan
            .move_task(&w.member, &TaskRef::Id(made[0].id), after_a2, None)
            .await
            .unwrap();
        w.plan
            .archive_task(&w.member, &TaskRef::Id(made[2].id), false, None)
            .await
            .unwrap();
        let mut of = w.plan.subtasks_of_tasks(&ts).await.unwrap();
        let titles =
            |list: &[Task]| -> Vec<String> { list.iter().map(|t| t.title.clone()).collect() };
        assert_eq!(titles(&of[&ts[0].id]), ["a2", "a1"]);
        assert_eq!(titles(&of[&ts[1].id]), ["b1"]);
        assert_eq!(of.len(), ts.len(), "every task has its entry");
        for t in &ts {
            let listed = w.plan.children_of(t, None).await.unwrap();
            assert_eq!(of.remove(&t.id).unwrap(), listed);
        }
        assert!(w.plan.subtasks_of_tasks(&[]).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_context_names_every_owner_and_parent_in_or_out_of_the_list() {
        let w = World::new().await;
        let ts = tasks(&w, &["one", "two"]).await;
        let admin = w.admin.person().unwrap().id;
        let mut children = Vec::new();
        for (parent, owner) in [
            (0, Some(PersonRef::Id(admin))),
            (0, None),
            (1, Some(PersonRef::Me)),
        ] {
            let new = CreateTask {
                title: "child".to_owned(),
                parent: Some(TaskRef::Id(ts[parent].id)),
                owner,
                ..CreateTask::default()
            };
            children.push(w.plan.create_task(&w.member, new).await.unwrap());
        }
        // The parents outside the list are read; one inside it is taken as it is.
        let ctx = w.plan.task_context(w.org.id, &children).await.unwrap();
        let mut parents: Vec<_> = ctx.parents.keys().copied().collect();
        parents.sort();
        assert_eq!(parents, [ts[0].id, ts[1].id]);
        assert_eq!(ctx.parents[&ts[0].id], ts[0]);
        let mut owners: Vec<_> = ctx.people.keys().copied().collect();
        owners.sort();
        let mut expected = vec![admin, w.member.person().unwrap().id];
        expected.sort();
        assert_eq!(owners, expected);
        let mixed = [ts[1].clone(), children[2].clone()];
        let ctx = w.plan.task_context(w.org.id, &mixed).await.unwrap();
        assert_eq!(ctx.parents.len(), 1);
        assert_eq!(ctx.parents[&ts[1].id], ts[1]);
        let none = w.plan.task_context(w.org.id, &ts).await.unwrap();
        assert!(none.parents.is_empty() && none.people.is_empty());
    }

    /// What a page's embeds and its sub-tasks' context read does not grow with the page: as
    /// many store visits and people reads for one task as for eight.
    #[tokio::test]
    async fn a_page_reads_as_often_for_one_task_as_for_many() {
        let w = World::new().await;
        let ts = tasks(&w, &["1", "2", "3", "4", "5", "6", "7", "8"]).await;
        // A person of their own owns each task's sub-task and follows the task.
        for (i, t) in ts.iter().enumerate() {
            let person = w
                .person(teamcomm_org::Role::Member, &format!("p{i}@example.com"))
                .await;
            let person = person.person().unwrap().id;
            let new = CreateTask {
                title: format!("child {i}"),
                parent: Some(TaskRef::Id(t.id)),
                owner: Some(PersonRef::Id(person)),
                ..CreateTask::default()
            };
            w.plan.create_task(&w.member, new).await.unwrap();
            w.plan
                .add_participant(&w.member, &TaskRef::Id(t.id), person, None, None)
                .await
                .unwrap();
        }
        let reads = |page: &'static str| {
            let w = &w;
            let page: Vec<Task> = match page {
                "one" => ts[..1].to_vec(),
                _ => ts.clone(),
            };
            async move {
                let (visits, people) = (w.mem.visits(), w.org_ports.people.reads_by_id());
                let mut subtasks = w.plan.subtasks_of_tasks(&page).await.unwrap();
                let participants = w.plan.participants_of_tasks(&page).await.unwrap();
                let children: Vec<Task> = page
                    .iter()
                    .flat_map(|t| subtasks.remove(&t.id).unwrap())
                    .collect();
                let ctx = w.plan.task_context(w.org.id, &children).await.unwrap();
                assert_eq!(children.len(), page.len());
                assert_eq!(ctx.parents.len(), page.len());
                assert!(participants.values().all(|p| !p.is_empty()));
                (
                    w.mem.visits() - visits,
                    w.org_ports.people.reads_by_id() - people,
                )
            }
        };
        let (one, many) = (reads("one").await, reads("many").await);
        assert_eq!(one, many, "(store visits, people reads) for 1 and 8 tasks");
        assert_eq!(many.1, 2, "the participants' people, the owners");
    }

    #[tokio::test]
    async fn a_page_gets_each_tasks_labels_by_name() {
        let w = World::new().await;
        let ts = tasks(&w, &["one", "two", "three"]).await;
        let mut made = Vec::new();
        for name in ["zeta", "Alpha", "mid"] {
            let label = w
                .plan
                .create_plan_label(&w.member, name, None, None)
                .await
                .unwrap();
            made.push(label.id);
        }
        for (t, labels) in [(&ts[0], &made[..]), (&ts[1], &made[..1])] {
            w.plan
                .change_task_labels(&w.member, &TaskRef::Id(t.id), BatchMode::Add, labels)
                .await
                .unwrap();
        }
        let of = w.plan.labels_of_tasks(&ts).await.unwrap();
        let names =
            |t: &Task| -> Vec<String> { of[&t.id].iter().map(|l| l.name.clone()).collect() };
        assert_eq!(names(&ts[0]), ["Alpha", "mid", "zeta"]);
        assert_eq!(names(&ts[1]), ["zeta"]);
        assert!(names(&ts[2]).is_empty());
        assert!(w.plan.labels_of_tasks(&[]).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn deleted_comments_are_not_counted() {
        let w = World::new().await;
        let ts = tasks(&w, &["one", "two"]).await;
        assert_eq!(w.plan.live_comment_count(&ts[0]).await.unwrap(), 0);
        let elsewhere = TaskRef::Id(ts[1].id);
        w.plan
            .add_comment(&w.member, &elsewhere, "other", None)
            .await
            .unwrap();
        let t = TaskRef::Id(ts[0].id);
        let mut ids = Vec::new();
        for body in ["a", "b", "c"] {
            let c = w.plan.add_comment(&w.member, &t, body, None).await.unwrap();
            ids.push(c.comment.id);
        }
        assert_eq!(w.plan.live_comment_count(&ts[0]).await.unwrap(), 3);
        w.plan.delete_comment(&w.member, &t, ids[1]).await.unwrap();
        assert_eq!(w.plan.live_comment_count(&ts[0]).await.unwrap(), 2);
        assert_eq!(w.plan.live_comment_count(&ts[1]).await.unwrap(), 1);
    }
}
