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
