//! In memory: the social part of [`super::PlanState`] and [`TaskSocialRepository`]. Answers as
//! the Postgres adapter does: organization scoping (`NotFound`), the relations' unique key
//! and its cycle check (`Conflict`), comments and reactions oldest first.

use std::collections::{BTreeSet, HashMap, HashSet};

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_labels::LabelId;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{InMemoryPlan, PlanState};
use crate::model::{CommentId, RelationId, RelationType, TaskId};
use crate::ports::{
    Comment, CommentFilter, Participant, ParticipantUpdate, RELATION_CYCLE, RELATION_KEY, Reaction,
    Relation, SocialEvent, TaskEvent, TaskSocialRepository,
};

#[derive(Debug, Default)]
pub struct SocialMem {
    pub relations: Vec<(OrgId, Relation)>,
    pub comments: Vec<(OrgId, Comment)>,
    pub reactions: Vec<(OrgId, Reaction)>,
    pub participants: Vec<(OrgId, Participant)>,
    /// `entity_labels` rows of kind `tasks`.
    pub task_labels: Vec<(OrgId, TaskId, LabelId)>,
}

impl SocialMem {
    /// Whether `to` can be reached from `from` following `blocks` links forward.
    fn blocks_path(&self, org: OrgId, from: TaskId, to: TaskId) -> bool {
        let mut seen = HashSet::from([from]);
        let mut frontier = vec![from];
        while let Some(at) = frontier.pop() {
            if at == to {
                return true;
            }
            for (_, r) in self.relations.iter().filter(|(o, r)| {
                *o == org && r.relation_type == RelationType::Blocks && r.source == at
            }) {
                if seen.insert(r.target) {
                    frontier.push(r.target);
                }
            }
        }
        false
    }
}

impl PlanState {
    /// Writes the event into the tasks' log and, when it says so, bumps the task's version and
    /// `updated_at` (stamps strictly increase, as `clock_timestamp()` does).
    fn record(&mut self, org: OrgId, e: &SocialEvent) {
        let now = match self.tasks.last_stamp {
            Some(last) => OffsetDateTime::now_utc().max(last + time::Duration::microseconds(1)),
            None => OffsetDateTime::now_utc(),
        };
        self.tasks.last_stamp = Some(now);
        if e.bumps_task
            && let Some(t) = self
                .tasks
                .tasks
                .iter_mut()
                .find(|t| t.id == e.task && t.org_id == org)
        {
            t.version += 1;
            t.updated_at = now;
        }
        self.tasks.events.push((
            org,
            TaskEvent {
                id: Uuid::now_v7(),
                task_id: e.task,
                board_id: e.board,
                kind: e.event.kind.to_owned(),
                actor: e.event.by.user,
                agent_name: e.event.by.agent.clone(),
                data: e.event.data.clone(),
                created_at: now,
            },
        ));
    }
}

fn page_of<T: Clone>(rows: Vec<T>, page: PageRequest) -> Page<T> {
    let count = rows.len() as u64;
    let results = rows
        .into_iter()
        .skip(usize::try_from(page.offset).unwrap_or(usize::MAX))
        .take(usize::try_from(page.limit).unwrap_or(usize::MAX))
        .collect();
    Page { count, results }
}

#[async_trait]
impl TaskSocialRepository for InMemoryPlan {
    async fn add_relation(
        &self,
        org: OrgId,
        relation: &Relation,
        event: &SocialEvent,
    ) -> Result<Relation, RepoError> {
        let mut s = self.lock();
        let social = &mut s.social;
        let conflict = |constraint: &str| {
            Err(RepoError::Conflict {
                constraint: constraint.to_owned(),
            })
        };
        if relation.relation_type == RelationType::Blocks
            && social.blocks_path(org, relation.target, relation.source)
        {
            return conflict(RELATION_CYCLE);
        }
        let pair = |a: TaskId, b: TaskId| (a.min(b), a.max(b));
        if social.relations.iter().any(|(_, r)| {
            r.relation_type == relation.relation_type
                && pair(r.source, r.target) == pair(relation.source, relation.target)
        }) {
            return conflict(RELATION_KEY);
        }
        social.relations.push((org, relation.clone()));
        s.record(org, event);
        Ok(relation.clone())
    }

    async fn get_relation(&self, org: OrgId, id: RelationId) -> Result<Relation, RepoError> {
        self.lock()
            .social
            .relations
            .iter()
            .find(|(o, r)| *o == org && r.id == id)
            .map(|(_, r)| r.clone())
            .ok_or(RepoError::NotFound)
    }

    async fn relations_of(&self, org: OrgId, task: TaskId) -> Result<Vec<Relation>, RepoError> {
        let mut rows: Vec<Relation> = self
            .lock()
            .social
            .relations
            .iter()
            .filter(|(o, r)| *o == org && (r.source == task || r.target == task))
            .map(|(_, r)| r.clone())
            .collect();
        rows.sort_by_key(|r| (r.created_at, r.id));
        Ok(rows)
    }

    async fn delete_relation(
        &self,
        org: OrgId,
        id: RelationId,
        event: &SocialEvent,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        let social = &mut s.social;
        let before = social.relations.len();
        social.relations.retain(|(o, r)| !(*o == org && r.id == id));
        if social.relations.len() == before {
            return Err(RepoError::NotFound);
        }
        s.record(org, event);
        Ok(())
    }

    async fn add_comment(
        &self,
        org: OrgId,
        comment: &Comment,
        event: &SocialEvent,
    ) -> Result<Comment, RepoError> {
        let mut s = self.lock();
        s.social.comments.push((org, comment.clone()));
        s.record(org, event);
        Ok(comment.clone())
    }

    async fn get_comment(&self, org: OrgId, id: CommentId) -> Result<Comment, RepoError> {
        self.lock()
            .social
            .comments
            .iter()
            .find(|(o, c)| *o == org && c.id == id)
            .map(|(_, c)| c.clone())
            .ok_or(RepoError::NotFound)
    }

    async fn list_comments(
        &self,
        org: OrgId,
        task: TaskId,
        filter: &CommentFilter,
        page: PageRequest,
    ) -> Result<Page<Comment>, RepoError> {
        let search = filter.search.as_ref().map(|s| s.to_lowercase());
        let mut rows: Vec<Comment> = self
            .lock()
            .social
            .comments
            .iter()
            .filter(|(o, c)| *o == org && c.task == task)
            .map(|(_, c)| c)
            .filter(|c| {
                search
                    .as_ref()
                    .is_none_or(|s| c.body.to_lowercase().contains(s))
                    && filter.start_date.is_none_or(|d| c.created_at.date() >= d)
                    && filter.end_date.is_none_or(|d| c.created_at.date() <= d)
            })
            .cloned()
            .collect();
        rows.sort_by_key(|c| (c.created_at, c.id));
        Ok(page_of(rows, page))
    }

    async fn edit_comment(
        &self,
        org: OrgId,
        id: CommentId,
        body: &str,
        mentions: &[UserId],
        at: OffsetDateTime,
    ) -> Result<Comment, RepoError> {
        let mut s = self.lock();
        let (_, c) = s
            .social
            .comments
            .iter_mut()
            .find(|(o, c)| *o == org && c.id == id)
            .ok_or(RepoError::NotFound)?;
        c.body = body.to_owned();
        c.mentions = mentions.to_vec();
        c.edited_at = Some(at);
        Ok(c.clone())
    }

    async fn delete_comment(
        &self,
        org: OrgId,
        id: CommentId,
        at: OffsetDateTime,
        event: &SocialEvent,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        let (_, c) = s
            .social
            .comments
            .iter_mut()
            .find(|(o, c)| *o == org && c.id == id)
            .ok_or(RepoError::NotFound)?;
        c.body.clear();
        c.mentions.clear();
        c.deleted_at = Some(at);
        s.record(org, event);
        Ok(())
    }

    async fn reactions_on(
        &self,
        org: OrgId,
        comments: &[CommentId],
    ) -> Result<Vec<Reaction>, RepoError> {
        let mut rows: Vec<Reaction> = self
            .lock()
            .social
            .reactions
            .iter()
            .filter(|(o, r)| *o == org && comments.contains(&r.comment))
            .map(|(_, r)| r.clone())
            .collect();
        rows.sort_by(|a, b| {
            (a.created_at, a.user, &a.emoji).cmp(&(b.created_at, b.user, &b.emoji))
        });
        Ok(rows)
    }

    async fn list_reactions(
        &self,
        org: OrgId,
        comment: CommentId,
        emoji: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<Reaction>, RepoError> {
        let rows: Vec<Reaction> = self
            .reactions_on(org, &[comment])
            .await?
            .into_iter()
            .filter(|r| emoji.is_none_or(|e| r.emoji == e))
            .collect();
        Ok(page_of(rows, page))
    }

    async fn add_reaction(&self, org: OrgId, reaction: &Reaction) -> Result<(), RepoError> {
        let mut s = self.lock();
        if !s
            .social
            .comments
            .iter()
            .any(|(o, c)| *o == org && c.id == reaction.comment)
        {
            return Err(RepoError::NotFound);
        }
        let exists = s.social.reactions.iter().any(|(_, r)| {
            r.comment == reaction.comment && r.user == reaction.user && r.emoji == reaction.emoji
        });
        if !exists {
            s.social.reactions.push((org, reaction.clone()));
        }
        Ok(())
    }

    async fn remove_reaction(
        &self,
        org: OrgId,
        comment: CommentId,
        user: UserId,
        emoji: &str,
    ) -> Result<(), RepoError> {
        self.lock().social.reactions.retain(|(o, r)| {
            !(*o == org && r.comment == comment && r.user == user && r.emoji == emoji)
        });
        Ok(())
    }

    async fn live_comment_counts(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, u64>, RepoError> {
        let mut of: HashMap<TaskId, u64> = HashMap::new();
        for (_, c) in self
            .lock()
            .social
            .comments
            .iter()
            .filter(|(o, c)| *o == org && c.deleted_at.is_none() && tasks.contains(&c.task))
        {
            *of.entry(c.task).or_default() += 1;
        }
        Ok(of)
    }

    async fn participants_of_tasks(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, Vec<Participant>>, RepoError> {
        let mut rows: Vec<Participant> = self
            .lock()
            .social
            .participants
            .iter()
            .filter(|(o, p)| *o == org && tasks.contains(&p.task))
            .map(|(_, p)| p.clone())
            .collect();
        rows.sort_by_key(|p| (p.created_at, p.user));
        let mut of: HashMap<TaskId, Vec<Participant>> = HashMap::new();
        for p in rows {
            of.entry(p.task).or_default().push(p);
        }
        Ok(of)
    }

    async fn put_participant(
        &self,
        org: OrgId,
        new: &Participant,
        update: ParticipantUpdate,
        event: &SocialEvent,
    ) -> Result<(Participant, bool), RepoError> {
        let mut s = self.lock();
        if let Some((_, p)) = s
            .social
            .participants
            .iter_mut()
            .find(|(o, p)| *o == org && p.task == new.task && p.user == new.user)
        {
            if let Some(role) = update.role {
                p.role = role;
            }
            if let Some(muted) = update.is_muted {
                p.is_muted = muted;
            }
            return Ok((p.clone(), false));
        }
        s.social.participants.push((org, new.clone()));
        s.record(org, event);
        Ok((new.clone(), true))
    }

    async fn remove_participant(
        &self,
        org: OrgId,
        task: TaskId,
        user: UserId,
        event: &SocialEvent,
    ) -> Result<bool, RepoError> {
        let mut s = self.lock();
        let before = s.social.participants.len();
        s.social
            .participants
            .retain(|(o, p)| !(*o == org && p.task == task && p.user == user));
        let removed = s.social.participants.len() != before;
        if removed {
            s.record(org, event);
        }
        Ok(removed)
    }

    async fn labels_of_tasks(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, Vec<LabelId>>, RepoError> {
        let carried: BTreeSet<(TaskId, LabelId)> = self
            .lock()
            .social
            .task_labels
            .iter()
            .filter(|(o, t, _)| *o == org && tasks.contains(t))
            .map(|(_, t, l)| (*t, *l))
            .collect();
        let mut of: HashMap<TaskId, Vec<LabelId>> = HashMap::new();
        for (t, l) in carried {
            of.entry(t).or_default().push(l);
        }
        Ok(of)
    }

    async fn set_task_labels(
        &self,
        org: OrgId,
        task: TaskId,
        labels: &[LabelId],
        event: &SocialEvent,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        s.social
            .task_labels
            .retain(|(o, t, _)| !(*o == org && *t == task));
        let wanted: BTreeSet<LabelId> = labels.iter().copied().collect();
        s.social
            .task_labels
            .extend(wanted.into_iter().map(|l| (org, task, l)));
        s.record(org, event);
        Ok(())
    }

    async fn tasks_with_label(&self, org: OrgId, label: LabelId) -> Result<u64, RepoError> {
        Ok(self
            .lock()
            .social
            .task_labels
            .iter()
            .filter(|(o, _, l)| *o == org && *l == label)
            .count() as u64)
    }
}
