//! Plan: relations between tasks (`blocks`, `relates_to`, `duplicates`), and what the social
//! modules (relations, comments, participants, task labels) share: the writable task and the
//! event a write records.

use serde_json::{Value, json};
use teamcomm_kernel::{Error, ErrorCode, RepoError};

use crate::actor::PlanActor;
use crate::model::{RelationId, RelationType, Task, TaskRef};
use crate::ports::{NewTaskEvent, RELATION_CYCLE, RELATION_KEY, Relation, SocialEvent};
use crate::service::Plan;

/// Which way a link points, seen from the task it is listed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationDirection {
    /// This task is the link's source (`ENG-1 blocks ENG-2` listed on ENG-1).
    Outgoing,
    Incoming,
}

impl RelationDirection {
    pub const fn as_str(self) -> &'static str {
        match self {
            RelationDirection::Outgoing => "outgoing",
            RelationDirection::Incoming => "incoming",
        }
    }
}

/// A link as a task lists it: the task at its other end, which the caller can see.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskLink {
    pub relation: Relation,
    pub direction: RelationDirection,
    pub other: Task,
}

/// Writes refuse an archived task (`task_archived`): restore it first.
pub(crate) fn refuse_archived(task: &Task) -> Result<(), Error> {
    if task.is_archived {
        Err(crate::tasks::task_archived())
    } else {
        Ok(())
    }
}

/// The event a social write records on `task`.
pub(crate) fn social_event(
    actor: &PlanActor,
    task: &Task,
    kind: &'static str,
    data: Value,
    bumps_task: bool,
) -> SocialEvent {
    SocialEvent {
        task: task.id,
        board: task.board_id,
        event: NewTaskEvent::new(kind, actor.executor(), data),
        bumps_task,
    }
}

fn invalid_relation(detail: &'static str) -> Error {
    Error::new(ErrorCode::InvalidRelation, detail)
}

impl Plan {
    /// Links `task` to `target` (outgoing from `task`): not to itself (`invalid_relation`),
    /// not twice (`relation_exists`; `relates_to` and `duplicates` either way round), and a
    /// `blocks` link never closes a cycle of blocks (`relation_cycle`). Both tasks must be
    /// visible; the source must be live. The store checks the last two in the write's own
    /// transaction, so racing requests cannot both pass them.
    pub async fn add_relation(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        relation_type: RelationType,
        target: &TaskRef,
    ) -> Result<TaskLink, Error> {
        let source = self.visible_task(actor, task).await?;
        refuse_archived(&source)?;
        let other = self.visible_task(actor, target).await?;
        if other.id == source.id {
            return Err(invalid_relation("A task cannot be linked to itself."));
        }
        let org = actor.org_id();
        let relation = Relation {
            id: RelationId::new(),
            source: source.id,
            target: other.id,
            relation_type,
            created_by: actor.person_id(),
            created_by_agent: actor.executor().agent,
            created_at: self.ports.clock.now(),
        };
        let event = social_event(
            actor,
            &source,
            "relation_added",
            json!({
                "relation": relation.id.0,
                "relation_type": relation_type.as_str(),
                "target_task": other.id.0,
                "target_key": other.key(),
            }),
            true,
        );
        let relation = self
            .ports
            .social
            .add_relation(org, &relation, &event)
            .await
            .map_err(|e| match e {
                RepoError::Conflict { constraint } if constraint == RELATION_KEY => Error::new(
                    ErrorCode::RelationExists,
                    "These tasks are already linked this way.",
                ),
                RepoError::Conflict { constraint } if constraint == RELATION_CYCLE => Error::new(
                    ErrorCode::RelationCycle,
                    "This link would close a cycle of blocking tasks.",
                ),
                other => other.into(),
            })?;
        Ok(TaskLink {
            relation,
            direction: RelationDirection::Outgoing,
            other,
        })
    }

    /// The task's links both ways, oldest first; a link whose other task the caller cannot see
    /// is left out.
    pub async fn task_relations(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
    ) -> Result<Vec<TaskLink>, Error> {
        let task = self.visible_task(actor, task).await?;
        let relations = self
            .ports
            .social
            .relations_of(actor.org_id(), task.id)
            .await?;
        let mut links = Vec::with_capacity(relations.len());
        for relation in relations {
            let (direction, other) = if relation.source == task.id {
                (RelationDirection::Outgoing, relation.target)
            } else {
                (RelationDirection::Incoming, relation.source)
            };
            match self.visible_task(actor, &TaskRef::Id(other)).await {
                Ok(other) => links.push(TaskLink {
                    relation,
                    direction,
                    other,
                }),
                Err(e) if e.code() == ErrorCode::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(links)
    }

    /// Removes one of the task's links (either direction); a link of another task is 404.
    pub async fn remove_relation(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        id: RelationId,
    ) -> Result<(), Error> {
        let task = self.visible_task(actor, task).await?;
        refuse_archived(&task)?;
        let org = actor.org_id();
        let relation = self.ports.social.get_relation(org, id).await?;
        if relation.source != task.id && relation.target != task.id {
            return Err(Error::not_found());
        }
        let event = social_event(
            actor,
            &task,
            "relation_removed",
            json!({
                "relation": relation.id.0,
                "relation_type": relation.relation_type.as_str(),
                "source_task": relation.source.0,
                "target_task": relation.target.0,
            }),
            true,
        );
        Ok(self.ports.social.delete_relation(org, id, &event).await?)
    }
}

#[cfg(test)]
mod tests;
