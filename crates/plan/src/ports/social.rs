//! Task relations, comments, reactions, participants and labels.
//!
//! Every write that changes what a task shows carries the [`SocialEvent`] to record with it: the
//! adapter writes the `plan_task_events` row (and, when [`SocialEvent::bumps_task`], bumps the
//! task's `version` and `updated_at` for the delta feed) in the write's own transaction.

use std::collections::HashMap;

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_labels::LabelId;
use time::{Date, OffsetDateTime};

use super::NewTaskEvent;
use crate::model::{BoardId, CommentId, ParticipantRole, RelationId, RelationType, TaskId};

/// The relations' unique key: one link of a type between two tasks, whichever way it points.
pub const RELATION_KEY: &str = "plan_task_relations_pair_key";

/// What [`TaskSocialRepository::add_relation`] answers, as a `Conflict`, for a `blocks` link
/// that would close a cycle of blocks.
pub const RELATION_CYCLE: &str = "plan_task_relations_blocks_cycle";

/// What a social write records on its task.
#[derive(Debug, Clone, PartialEq)]
pub struct SocialEvent {
    pub task: TaskId,
    pub board: BoardId,
    /// `comment_added`, `relation_added`, `label_changed`, `participant_added`…
    pub event: NewTaskEvent,
    /// The task's visible state changed (labels, relations): bump its version and stamp
    /// `updated_at` so the delta feed lists it.
    pub bumps_task: bool,
}

/// A link between two tasks of one organization, outgoing from `source`.
#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    pub id: RelationId,
    pub source: TaskId,
    pub target: TaskId,
    pub relation_type: RelationType,
    pub created_by: Option<UserId>,
    pub created_by_agent: Option<String>,
    pub created_at: OffsetDateTime,
}

/// A comment on a task (one level of replies); a deleted one keeps its row with a blank body.
#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    pub id: CommentId,
    pub task: TaskId,
    pub parent: Option<CommentId>,
    pub author: Option<UserId>,
    pub agent_name: Option<String>,
    pub body: String,
    /// People mentioned with `<@DB@uuid>`, in the order written.
    pub mentions: Vec<UserId>,
    pub edited_at: Option<OffsetDateTime>,
    pub deleted_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
}

/// Which comments of a task a listing covers (oldest first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommentFilter {
    /// Case-insensitive fragment of the body.
    pub search: Option<String>,
    /// Created on or after this day (UTC).
    pub start_date: Option<Date>,
    /// Created on or before this day (UTC).
    pub end_date: Option<Date>,
}

/// One person's emoji on a comment.
#[derive(Debug, Clone, PartialEq)]
pub struct Reaction {
    pub comment: CommentId,
    pub user: UserId,
    pub emoji: String,
    pub agent_name: Option<String>,
    pub created_at: OffsetDateTime,
}

/// How a participant came to a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParticipantSource {
    /// Added by someone (`POST tasks/{t}/participants/`).
    Added,
    Owner,
    Creator,
    /// Mentioned in a comment.
    Mention,
    /// Watches the task (`POST tasks/{t}/subscription/`).
    Subscription,
}

impl ParticipantSource {
    pub const fn as_str(self) -> &'static str {
        match self {
            ParticipantSource::Added => "added",
            ParticipantSource::Owner => "owner",
            ParticipantSource::Creator => "creator",
            ParticipantSource::Mention => "mention",
            ParticipantSource::Subscription => "subscription",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            ParticipantSource::Added,
            ParticipantSource::Owner,
            ParticipantSource::Creator,
            ParticipantSource::Mention,
            ParticipantSource::Subscription,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// A person who follows a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Participant {
    pub task: TaskId,
    pub user: UserId,
    pub role: ParticipantRole,
    pub source: ParticipantSource,
    pub is_muted: bool,
    pub created_at: OffsetDateTime,
}

/// What [`TaskSocialRepository::put_participant`] changes on a row that exists; `None` keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParticipantUpdate {
    pub role: Option<ParticipantRole>,
    pub is_muted: Option<bool>,
}

#[async_trait]
pub trait TaskSocialRepository: Send + Sync + 'static {
    // --- relations ---

    /// Adds the link unless, checked in the write's own transaction (so racing writes cannot
    /// both pass): it is a `blocks` link whose target already reaches its source by `blocks`
    /// links (`Conflict` on [`RELATION_CYCLE`]; a reverse `blocks` is such a cycle), or a link
    /// of its type joins the two tasks either way round (`Conflict` on [`RELATION_KEY`]).
    /// Nothing is written then.
    async fn add_relation(
        &self,
        org: OrgId,
        relation: &Relation,
        event: &SocialEvent,
    ) -> Result<Relation, RepoError>;
    async fn get_relation(&self, org: OrgId, id: RelationId) -> Result<Relation, RepoError>;
    /// The task's links in both directions, oldest first.
    async fn relations_of(&self, org: OrgId, task: TaskId) -> Result<Vec<Relation>, RepoError>;
    async fn delete_relation(
        &self,
        org: OrgId,
        id: RelationId,
        event: &SocialEvent,
    ) -> Result<(), RepoError>;

    // --- comments and reactions ---

    async fn add_comment(
        &self,
        org: OrgId,
        comment: &Comment,
        event: &SocialEvent,
    ) -> Result<Comment, RepoError>;
    async fn get_comment(&self, org: OrgId, id: CommentId) -> Result<Comment, RepoError>;
    /// The task's comments, oldest first.
    async fn list_comments(
        &self,
        org: OrgId,
        task: TaskId,
        filter: &CommentFilter,
        page: PageRequest,
    ) -> Result<Page<Comment>, RepoError>;
    /// New body and mentions, `edited_at` stamped.
    async fn edit_comment(
        &self,
        org: OrgId,
        id: CommentId,
        body: &str,
        mentions: &[UserId],
        at: OffsetDateTime,
    ) -> Result<Comment, RepoError>;
    /// Blanks the body and mentions and stamps `deleted_at`; the row stays.
    async fn delete_comment(
        &self,
        org: OrgId,
        id: CommentId,
        at: OffsetDateTime,
        event: &SocialEvent,
    ) -> Result<(), RepoError>;
    /// The reactions on `comments`, oldest first.
    async fn reactions_on(
        &self,
        org: OrgId,
        comments: &[CommentId],
    ) -> Result<Vec<Reaction>, RepoError>;
    /// A page of one comment's reactions, oldest first, of one emoji when given.
    async fn list_reactions(
        &self,
        org: OrgId,
        comment: CommentId,
        emoji: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<Reaction>, RepoError>;
    /// Adds the reaction unless that person already reacted so (nothing changes then).
    async fn add_reaction(&self, org: OrgId, reaction: &Reaction) -> Result<(), RepoError>;
    /// Removes it if present.
    async fn remove_reaction(
        &self,
        org: OrgId,
        comment: CommentId,
        user: UserId,
        emoji: &str,
    ) -> Result<(), RepoError>;

    /// How many comments of each task are not deleted, in one read (a task without any is
    /// absent).
    async fn live_comment_counts(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, u64>, RepoError>;

    // --- participants ---

    /// Each task's participants, oldest first, in one read (a task without any is absent).
    async fn participants_of_tasks(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, Vec<Participant>>, RepoError>;
    /// The task's participants, oldest first.
    async fn participants(&self, org: OrgId, task: TaskId) -> Result<Vec<Participant>, RepoError> {
        let mut of = self.participants_of_tasks(org, &[task]).await?;
        Ok(of.remove(&task).unwrap_or_default())
    }
    /// Inserts `new`, or applies `update` to the row that exists; answers the row and whether
    /// it is new. The event is written only for a new row.
    async fn put_participant(
        &self,
        org: OrgId,
        new: &Participant,
        update: ParticipantUpdate,
        event: &SocialEvent,
    ) -> Result<(Participant, bool), RepoError>;
    /// Removes the person from the task; false when they were not on it.
    async fn remove_participant(
        &self,
        org: OrgId,
        task: TaskId,
        user: UserId,
        event: &SocialEvent,
    ) -> Result<bool, RepoError>;

    // --- labels (organization labels, stored as the other entities' are) ---

    /// The labels each task carries, by id, in one read (a task without any is absent).
    async fn labels_of_tasks(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, Vec<LabelId>>, RepoError>;
    /// The labels the task carries, by id.
    async fn task_labels(&self, org: OrgId, task: TaskId) -> Result<Vec<LabelId>, RepoError> {
        let mut of = self.labels_of_tasks(org, &[task]).await?;
        Ok(of.remove(&task).unwrap_or_default())
    }
    /// Makes `labels` the task's whole set.
    async fn set_task_labels(
        &self,
        org: OrgId,
        task: TaskId,
        labels: &[LabelId],
        event: &SocialEvent,
    ) -> Result<(), RepoError>;
    /// How many tasks carry the label.
    async fn tasks_with_label(&self, org: OrgId, label: LabelId) -> Result<u64, RepoError>;
}
