//! What task answers embed when asked (`include=`): the social state of tasks the caller
//! already sees (a listed page, a task read), so no visibility is checked again here.

use std::collections::HashMap;

use teamcomm_kernel::{Error, PageRequest};
use teamcomm_labels::{Label, LabelId};

use crate::model::{Task, TaskId};
use crate::participants::ParticipantView;
use crate::ports::CommentFilter;
use crate::service::Plan;

impl Plan {
    /// Each task's labels by name. The social port reads one task's label ids at a time; the
    /// labels themselves are read once for all the tasks.
    pub async fn labels_of_tasks(
        &self,
        tasks: &[Task],
    ) -> Result<HashMap<TaskId, Vec<Label>>, Error> {
        let Some(org) = tasks.first().map(|t| t.org_id) else {
            return Ok(HashMap::new());
        };
        let mut ids_of = Vec::with_capacity(tasks.len());
        for task in tasks {
            ids_of.push((task.id, self.ports.social.task_labels(org, task.id).await?));
        }
        let mut all: Vec<LabelId> = ids_of
            .iter()
            .flat_map(|(_, ids)| ids.iter().copied())
            .collect();
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
        Ok(ids_of
            .into_iter()
            .map(|(task, ids)| {
                let mut mine: Vec<Label> = ids
                    .iter()
                    .filter_map(|id| labels.get(id).cloned())
                    .collect();
                mine.sort_by_key(|l| (l.name.to_lowercase(), l.id));
                (task, mine)
            })
            .collect())
    }

    /// Each task's participants, oldest first (people no longer in the organization left
    /// out). The social port reads one task's rows at a time; the people are read once.
    pub async fn participants_of_tasks(
        &self,
        tasks: &[Task],
    ) -> Result<HashMap<TaskId, Vec<ParticipantView>>, Error> {
        let Some(org) = tasks.first().map(|t| t.org_id) else {
            return Ok(HashMap::new());
        };
        let mut rows_of = Vec::with_capacity(tasks.len());
        for task in tasks {
            rows_of.push((task.id, self.ports.social.participants(org, task.id).await?));
        }
        let people = self
            .social_people(
                org,
                rows_of
                    .iter()
                    .flat_map(|(_, rows)| rows.iter().map(|p| p.user)),
            )
            .await?;
        Ok(rows_of
            .into_iter()
            .map(|(task, rows)| {
                let views = rows
                    .into_iter()
                    .filter_map(|participant| {
                        let member = people.get(&participant.user)?.clone();
                        Some(ParticipantView {
                            participant,
                            member,
                        })
                    })
                    .collect();
                (task, views)
            })
            .collect())
    }

    /// How many comments of the task are not deleted (a deleted one keeps its row).
    pub async fn live_comment_count(&self, task: &Task) -> Result<u64, Error> {
        let mut live = 0;
        let mut offset = 0;
        loop {
            let page = self
                .ports
                .social
                .list_comments(
                    task.org_id,
                    task.id,
                    &CommentFilter::default(),
                    PageRequest {
                        offset,
                        limit: PageRequest::MAX_SIZE,
                    },
                )
                .await?;
            let read = page.results.len() as u64;
            live += page
                .results
                .iter()
                .filter(|c| c.deleted_at.is_none())
                .count() as u64;
            offset += read;
            if read == 0 || offset >= page.count {
                return Ok(live);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::boards::NewBoard;
    use crate::projects::NewProject;
    use crate::tasks::CreateTask;
    use crate::testing::World;
    use crate::{BoardRef, Task, TaskRef};

    async fn tasks(w: &World, titles: &[&str]) -> Vec<Task> {
        let project = w
            .plan
            .create_project(&w.admin, NewProject::named("Embeds"))
            .await
            .unwrap();
        let board = w
            .plan
            .create_board(
                &w.admin,
                NewBoard {
                    name: "Embeds".to_owned(),
                    project: project.id,
                    key: "EMB".to_owned(),
                },
            )
            .await
            .unwrap();
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
    async fn participants_are_read_per_task_as_their_listing_shows_them() {
        let w = World::new().await;
        let ts = tasks(&w, &["one", "two"]).await;
        let admin = w.admin.person().unwrap().id;
        w.plan
            .add_participant(&w.member, &TaskRef::Id(ts[0].id), admin, None, None)
            .await
            .unwrap();
        let mut of = w.plan.participants_of_tasks(&ts).await.unwrap();
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
    async fn deleted_comments_are_not_counted() {
        let w = World::new().await;
        let ts = tasks(&w, &["one"]).await;
        let t = TaskRef::Id(ts[0].id);
        let mut ids = Vec::new();
        for body in ["a", "b", "c"] {
            let c = w.plan.add_comment(&w.member, &t, body, None).await.unwrap();
            ids.push(c.comment.id);
        }
        assert_eq!(w.plan.live_comment_count(&ts[0]).await.unwrap(), 3);
        w.plan.delete_comment(&w.member, &t, ids[1]).await.unwrap();
        assert_eq!(w.plan.live_comment_count(&ts[0]).await.unwrap(), 2);
    }
}
