//! SQL of the Plan area's task relations, comments, reactions, participants and labels.
//!
//! A write that records a task event does it in its own transaction, with the task's version
//! and `updated_at` (`clock_timestamp()`) bumped there when the event says so: the delta feed
//! sees the change as soon as it is committed, never before.

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_labels::{EntityKind, LabelId};
use teamcomm_plan::ports::{
    Comment, CommentFilter, Participant, ParticipantSource, ParticipantUpdate, RELATION_CYCLE,
    Reaction, Relation, SocialEvent, TaskSocialRepository,
};
use teamcomm_plan::{CommentId, ParticipantRole, RelationId, RelationType, TaskId};
use time::{OffsetDateTime, Time};
use uuid::Uuid;

use super::super::paging::{count_from, like_pattern, load_page};
use crate::Database;
use crate::error::db_error;
use crate::schema::labels::entity_labels;
use crate::schema::plan::{
    plan_comment_reactions, plan_comments, plan_task_participants, plan_task_relations,
};

pub struct PgTaskSocial {
    db: Database,
}

impl PgTaskSocial {
    pub fn new(db: Database) -> Self {
        PgTaskSocial { db }
    }
}

fn undecodable(what: &str, value: &str) -> RepoError {
    RepoError::Other(format!("unknown {what} {value:?} in the database"))
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = plan_task_relations, check_for_backend(diesel::pg::Pg))]
struct RelationRow {
    id: Uuid,
    organization_id: Uuid,
    source_task_id: Uuid,
    target_task_id: Uuid,
    relation_type: String,
    created_by_id: Option<Uuid>,
    created_by_agent: Option<String>,
    created_at: OffsetDateTime,
}

impl TryFrom<RelationRow> for Relation {
    type Error = RepoError;
    fn try_from(r: RelationRow) -> Result<Self, RepoError> {
        Ok(Relation {
            id: RelationId(r.id),
            source: TaskId(r.source_task_id),
            target: TaskId(r.target_task_id),
            relation_type: RelationType::parse(&r.relation_type)
                .ok_or_else(|| undecodable("relation type", &r.relation_type))?,
            created_by: r.created_by_id.map(UserId),
            created_by_agent: r.created_by_agent,
            created_at: r.created_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = plan_comments, check_for_backend(diesel::pg::Pg))]
struct CommentRow {
    id: Uuid,
    organization_id: Uuid,
    task_id: Uuid,
    parent_id: Option<Uuid>,
    author_id: Option<Uuid>,
    agent_name: Option<String>,
    body: String,
    mentions: Vec<Uuid>,
    edited_at: Option<OffsetDateTime>,
    deleted_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
}

impl TryFrom<CommentRow> for Comment {
    type Error = RepoError;
    fn try_from(r: CommentRow) -> Result<Self, RepoError> {
        Ok(Comment {
            id: CommentId(r.id),
            task: TaskId(r.task_id),
            parent: r.parent_id.map(CommentId),
            author: r.author_id.map(UserId),
            agent_name: r.agent_name,
            body: r.body,
            mentions: r.mentions.into_iter().map(UserId).collect(),
            edited_at: r.edited_at,
            deleted_at: r.deleted_at,
            created_at: r.created_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = plan_comment_reactions, check_for_backend(diesel::pg::Pg))]
struct ReactionRow {
    comment_id: Uuid,
    user_id: Uuid,
    emoji: String,
    agent_name: Option<String>,
    created_at: OffsetDateTime,
}

impl TryFrom<ReactionRow> for Reaction {
    type Error = RepoError;
    fn try_from(r: ReactionRow) -> Result<Self, RepoError> {
        Ok(Reaction {
            comment: CommentId(r.comment_id),
            user: UserId(r.user_id),
            emoji: r.emoji,
            agent_name: r.agent_name,
            created_at: r.created_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = plan_task_participants, check_for_backend(diesel::pg::Pg))]
struct ParticipantRow {
    task_id: Uuid,
    user_id: Uuid,
    organization_id: Uuid,
    role: String,
    source: String,
    is_muted: bool,
    created_at: OffsetDateTime,
}

impl TryFrom<ParticipantRow> for Participant {
    type Error = RepoError;
    fn try_from(r: ParticipantRow) -> Result<Self, RepoError> {
        Ok(Participant {
            task: TaskId(r.task_id),
            user: UserId(r.user_id),
            role: ParticipantRole::parse(&r.role)
                .ok_or_else(|| undecodable("participant role", &r.role))?,
            source: ParticipantSource::parse(&r.source)
                .ok_or_else(|| undecodable("participant source", &r.source))?,
            is_muted: r.is_muted,
            created_at: r.created_at,
        })
    }
}

fn ids(tasks: &[TaskId]) -> Vec<Uuid> {
    tasks.iter().map(|t| t.0).collect()
}

fn decode_all<R, T: TryFrom<R, Error = RepoError>>(rows: Vec<R>) -> Result<Vec<T>, RepoError> {
    rows.into_iter().map(T::try_from).collect()
}

#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = Bool)]
    value: bool,
}

/// Writes the event into the task's log and, when it says so, bumps the task's version and
/// `updated_at`; both stamped with `clock_timestamp()`, inside the caller's transaction.
async fn record(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    e: &SocialEvent,
) -> Result<(), diesel::result::Error> {
    if e.bumps_task {
        diesel::sql_query(
            "UPDATE plan_tasks SET version = version + 1, updated_at = clock_timestamp() \
             WHERE id = $1 AND organization_id = $2",
        )
        .bind::<SqlUuid, _>(e.task.0)
        .bind::<SqlUuid, _>(org.0)
        .execute(conn)
        .await?;
    }
    diesel::sql_query(
        "INSERT INTO plan_task_events \
         (id, organization_id, board_id, task_id, type, actor_id, agent_name, data, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp())",
    )
    .bind::<SqlUuid, _>(Uuid::now_v7())
    .bind::<SqlUuid, _>(org.0)
    .bind::<SqlUuid, _>(e.board.0)
    .bind::<SqlUuid, _>(e.task.0)
    .bind::<Text, _>(e.event.kind)
    .bind::<Nullable<SqlUuid>, _>(e.event.by.user.map(|u| u.0))
    .bind::<Nullable<Text>, _>(e.event.by.agent.clone())
    .bind::<Jsonb, _>(e.event.data.clone())
    .execute(conn)
    .await?;
    Ok(())
}

/// Whether `to` can be reached from `from` following `blocks` links forward.
async fn blocks_path(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    from: TaskId,
    to: TaskId,
) -> Result<bool, diesel::result::Error> {
    // UNION (not UNION ALL) stops at tasks already reached, so a cycle ends the walk.
    let found: Found = diesel::sql_query(
        "WITH RECURSIVE reach(id) AS ( \
             SELECT $2::uuid \
             UNION \
             SELECT r.target_task_id FROM plan_task_relations r JOIN reach \
             ON r.source_task_id = reach.id \
             WHERE r.organization_id = $1 AND r.relation_type = 'blocks' \
         ) SELECT EXISTS (SELECT 1 FROM reach WHERE id = $3) AS value",
    )
    .bind::<SqlUuid, _>(org.0)
    .bind::<SqlUuid, _>(from.0)
    .bind::<SqlUuid, _>(to.0)
    .get_result(conn)
    .await?;
    Ok(found.value)
}

fn not_found_unless_one(n: usize) -> Result<(), diesel::result::Error> {
    if n == 0 {
        Err(diesel::result::Error::NotFound)
    } else {
        Ok(())
    }
}

#[async_trait]
impl TaskSocialRepository for PgTaskSocial {
    async fn add_relation(
        &self,
        org: OrgId,
        relation: &Relation,
        event: &SocialEvent,
    ) -> Result<Relation, RepoError> {
        let row = RelationRow {
            id: relation.id.0,
            organization_id: org.0,
            source_task_id: relation.source.0,
            target_task_id: relation.target.0,
            relation_type: relation.relation_type.as_str().to_owned(),
            created_by_id: relation.created_by.map(|u| u.0),
            created_by_agent: relation.created_by_agent.clone(),
            created_at: relation.created_at,
        };
        let blocks = relation.relation_type == RelationType::Blocks;
        let mut conn = self.db.conn().await?;
        let row: Option<RelationRow> = conn
            .transaction(async |conn| {
                if blocks {
                    // One blocks write of the organization at a time (links cross boards), so
                    // the walk below sees every committed link and no two writes close a
                    // cycle together; the lock ends with the transaction.
                    diesel::sql_query(
                        "SELECT pg_advisory_xact_lock(hashtextextended('plan_blocks:' || $1::text, 0))",
                    )
                    .bind::<SqlUuid, _>(org.0)
                    .execute(conn)
                    .await?;
                    if blocks_path(conn, org, relation.target, relation.source).await? {
                        return Ok(None);
                    }
                }
                // The same link twice fails on the pair key (`RELATION_KEY`), racing or not.
                let row = diesel::insert_into(plan_task_relations::table)
                    .values(&row)
                    .returning(RelationRow::as_returning())
                    .get_result(conn)
                    .await?;
                record(conn, org, event).await?;
                Ok::<_, diesel::result::Error>(Some(row))
            })
            .await
            .map_err(db_error)?;
        row.ok_or_else(|| RepoError::Conflict {
            constraint: RELATION_CYCLE.to_owned(),
        })?
        .try_into()
    }

    async fn get_relation(&self, org: OrgId, id: RelationId) -> Result<Relation, RepoError> {
        let mut conn = self.db.conn().await?;
        plan_task_relations::table
            .filter(plan_task_relations::id.eq(id.0))
            .filter(plan_task_relations::organization_id.eq(org.0))
            .select(RelationRow::as_select())
            .first::<RelationRow>(&mut conn)
            .await
            .map_err(db_error)?
            .try_into()
    }

    async fn relations_of(&self, org: OrgId, task: TaskId) -> Result<Vec<Relation>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<RelationRow> = plan_task_relations::table
            .filter(plan_task_relations::organization_id.eq(org.0))
            .filter(
                plan_task_relations::source_task_id
                    .eq(task.0)
                    .or(plan_task_relations::target_task_id.eq(task.0)),
            )
            .order((plan_task_relations::created_at, plan_task_relations::id))
            .select(RelationRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        decode_all(rows)
    }

    async fn delete_relation(
        &self,
        org: OrgId,
        id: RelationId,
        event: &SocialEvent,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            let n = diesel::delete(
                plan_task_relations::table
                    .filter(plan_task_relations::id.eq(id.0))
                    .filter(plan_task_relations::organization_id.eq(org.0)),
            )
            .execute(conn)
            .await?;
            not_found_unless_one(n)?;
            record(conn, org, event).await
        })
        .await
        .map_err(db_error)
    }

    async fn add_comment(
        &self,
        org: OrgId,
        comment: &Comment,
        event: &SocialEvent,
    ) -> Result<Comment, RepoError> {
        let row = CommentRow {
            id: comment.id.0,
            organization_id: org.0,
            task_id: comment.task.0,
            parent_id: comment.parent.map(|p| p.0),
            author_id: comment.author.map(|u| u.0),
            agent_name: comment.agent_name.clone(),
            body: comment.body.clone(),
            mentions: comment.mentions.iter().map(|u| u.0).collect(),
            edited_at: comment.edited_at,
            deleted_at: comment.deleted_at,
            created_at: comment.created_at,
        };
        let mut conn = self.db.conn().await?;
        let row: CommentRow = conn
            .transaction(async |conn| {
                let row = diesel::insert_into(plan_comments::table)
                    .values(&row)
                    .returning(CommentRow::as_returning())
                    .get_result(conn)
                    .await?;
                record(conn, org, event).await?;
                Ok::<_, diesel::result::Error>(row)
            })
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn get_comment(&self, org: OrgId, id: CommentId) -> Result<Comment, RepoError> {
        let mut conn = self.db.conn().await?;
        plan_comments::table
            .filter(plan_comments::id.eq(id.0))
            .filter(plan_comments::organization_id.eq(org.0))
            .select(CommentRow::as_select())
            .first::<CommentRow>(&mut conn)
            .await
            .map_err(db_error)?
            .try_into()
    }

    async fn list_comments(
        &self,
        org: OrgId,
        task: TaskId,
        filter: &CommentFilter,
        page: PageRequest,
    ) -> Result<Page<Comment>, RepoError> {
        let search = filter.search.as_deref().map(like_pattern);
        let from = filter
            .start_date
            .map(|d| d.with_time(Time::MIDNIGHT).assume_utc());
        let until = filter
            .end_date
            .and_then(|d| d.next_day())
            .map(|d| d.with_time(Time::MIDNIGHT).assume_utc());
        let filtered = move || {
            let mut q = plan_comments::table
                .filter(plan_comments::organization_id.eq(org.0))
                .filter(plan_comments::task_id.eq(task.0))
                .into_boxed();
            if let Some(pattern) = search.clone() {
                q = q.filter(plan_comments::body.ilike(pattern));
            }
            if let Some(from) = from {
                q = q.filter(plan_comments::created_at.ge(from));
            }
            if let Some(until) = until {
                q = q.filter(plan_comments::created_at.lt(until));
            }
            q
        };
        let mut conn = self.db.conn().await?;
        load_page::<CommentRow, Comment, _, _>(&mut conn, page, filtered, |q| {
            q.order((plan_comments::created_at, plan_comments::id))
                .select(CommentRow::as_select())
        })
        .await
    }

    async fn edit_comment(
        &self,
        org: OrgId,
        id: CommentId,
        body: &str,
        mentions: &[UserId],
        at: OffsetDateTime,
    ) -> Result<Comment, RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::update(
            plan_comments::table
                .filter(plan_comments::id.eq(id.0))
                .filter(plan_comments::organization_id.eq(org.0)),
        )
        .set((
            plan_comments::body.eq(body),
            plan_comments::mentions.eq(mentions.iter().map(|u| u.0).collect::<Vec<_>>()),
            plan_comments::edited_at.eq(Some(at)),
        ))
        .returning(CommentRow::as_returning())
        .get_result::<CommentRow>(&mut conn)
        .await
        .map_err(db_error)?
        .try_into()
    }

    async fn delete_comment(
        &self,
        org: OrgId,
        id: CommentId,
        at: OffsetDateTime,
        event: &SocialEvent,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            let n = diesel::update(
                plan_comments::table
                    .filter(plan_comments::id.eq(id.0))
                    .filter(plan_comments::organization_id.eq(org.0)),
            )
            .set((
                plan_comments::body.eq(""),
                plan_comments::mentions.eq(Vec::<Uuid>::new()),
                plan_comments::deleted_at.eq(Some(at)),
            ))
            .execute(conn)
            .await?;
            not_found_unless_one(n)?;
            record(conn, org, event).await
        })
        .await
        .map_err(db_error)
    }

    async fn reactions_on(
        &self,
        org: OrgId,
        comments: &[CommentId],
    ) -> Result<Vec<Reaction>, RepoError> {
        if comments.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Uuid> = comments.iter().map(|c| c.0).collect();
        let mut conn = self.db.conn().await?;
        let rows: Vec<ReactionRow> = plan_comment_reactions::table
            .inner_join(plan_comments::table)
            .filter(plan_comments::organization_id.eq(org.0))
            .filter(plan_comment_reactions::comment_id.eq_any(ids))
            .order((
                plan_comment_reactions::created_at,
                plan_comment_reactions::user_id,
                plan_comment_reactions::emoji,
            ))
            .select(ReactionRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        decode_all(rows)
    }

    async fn list_reactions(
        &self,
        org: OrgId,
        comment: CommentId,
        emoji: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<Reaction>, RepoError> {
        let emoji = emoji.map(str::to_owned);
        let filtered = move || {
            let mut q = plan_comment_reactions::table
                .inner_join(plan_comments::table)
                .filter(plan_comments::organization_id.eq(org.0))
                .filter(plan_comment_reactions::comment_id.eq(comment.0))
                .into_boxed();
            if let Some(emoji) = emoji.clone() {
                q = q.filter(plan_comment_reactions::emoji.eq(emoji));
            }
            q
        };
        let mut conn = self.db.conn().await?;
        load_page::<ReactionRow, Reaction, _, _>(&mut conn, page, filtered, |q| {
            q.order((
                plan_comment_reactions::created_at,
                plan_comment_reactions::user_id,
                plan_comment_reactions::emoji,
            ))
            .select(ReactionRow::as_select())
        })
        .await
    }

    async fn add_reaction(&self, org: OrgId, reaction: &Reaction) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        // The comment must be of the organization: the insert reads it in the same statement.
        let n = diesel::sql_query(
            "INSERT INTO plan_comment_reactions (comment_id, user_id, emoji, agent_name, created_at) \
             SELECT id, $3, $4, $5, $6 FROM plan_comments WHERE id = $1 AND organization_id = $2 \
             ON CONFLICT DO NOTHING",
        )
        .bind::<SqlUuid, _>(reaction.comment.0)
        .bind::<SqlUuid, _>(org.0)
        .bind::<SqlUuid, _>(reaction.user.0)
        .bind::<Text, _>(reaction.emoji.clone())
        .bind::<Nullable<Text>, _>(reaction.agent_name.clone())
        .bind::<Timestamptz, _>(reaction.created_at)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if n == 0 {
            // Nothing new: an existing reaction, or no such comment.
            self.get_comment(org, reaction.comment).await?;
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
        let mut conn = self.db.conn().await?;
        let of_org = plan_comments::table
            .filter(plan_comments::id.eq(comment.0))
            .filter(plan_comments::organization_id.eq(org.0))
            .select(plan_comments::id);
        diesel::delete(
            plan_comment_reactions::table
                .filter(plan_comment_reactions::comment_id.eq_any(of_org))
                .filter(plan_comment_reactions::user_id.eq(user.0))
                .filter(plan_comment_reactions::emoji.eq(emoji)),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn live_comment_counts(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, u64>, RepoError> {
        if tasks.is_empty() {
            return Ok(HashMap::new());
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<(Uuid, i64)> = plan_comments::table
            .filter(plan_comments::organization_id.eq(org.0))
            .filter(plan_comments::task_id.eq_any(ids(tasks)))
            .filter(plan_comments::deleted_at.is_null())
            .group_by(plan_comments::task_id)
            .select((plan_comments::task_id, diesel::dsl::count_star()))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter()
            .map(|(task, n)| Ok((TaskId(task), count_from(n)?)))
            .collect()
    }

    async fn participants_of_tasks(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, Vec<Participant>>, RepoError> {
        if tasks.is_empty() {
            return Ok(HashMap::new());
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<ParticipantRow> = plan_task_participants::table
            .filter(plan_task_participants::organization_id.eq(org.0))
            .filter(plan_task_participants::task_id.eq_any(ids(tasks)))
            .order((
                plan_task_participants::created_at,
                plan_task_participants::user_id,
            ))
            .select(ParticipantRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let mut of: HashMap<TaskId, Vec<Participant>> = HashMap::new();
        for row in rows {
            let p = Participant::try_from(row)?;
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
        let row = ParticipantRow {
            task_id: new.task.0,
            user_id: new.user.0,
            organization_id: org.0,
            role: new.role.as_str().to_owned(),
            source: new.source.as_str().to_owned(),
            is_muted: new.is_muted,
            created_at: new.created_at,
        };
        let mut conn = self.db.conn().await?;
        let (row, created) = conn
            .transaction(async |conn| {
                let inserted: Option<ParticipantRow> =
                    diesel::insert_into(plan_task_participants::table)
                        .values(&row)
                        .on_conflict_do_nothing()
                        .returning(ParticipantRow::as_returning())
                        .get_result(conn)
                        .await
                        .optional()?;
                if let Some(row) = inserted {
                    record(conn, org, event).await?;
                    return Ok::<_, diesel::result::Error>((row, true));
                }
                let target = plan_task_participants::table
                    .filter(plan_task_participants::task_id.eq(new.task.0))
                    .filter(plan_task_participants::user_id.eq(new.user.0))
                    .filter(plan_task_participants::organization_id.eq(org.0));
                let row = diesel::update(target)
                    .set((
                        update
                            .role
                            .map(|r| plan_task_participants::role.eq(r.as_str())),
                        update
                            .is_muted
                            .map(|m| plan_task_participants::is_muted.eq(m)),
                        // An update that changes nothing still needs one assignment.
                        plan_task_participants::task_id.eq(new.task.0),
                    ))
                    .returning(ParticipantRow::as_returning())
                    .get_result(conn)
                    .await?;
                Ok((row, false))
            })
            .await
            .map_err(db_error)?;
        Ok((row.try_into()?, created))
    }

    async fn remove_participant(
        &self,
        org: OrgId,
        task: TaskId,
        user: UserId,
        event: &SocialEvent,
    ) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            let n = diesel::delete(
                plan_task_participants::table
                    .filter(plan_task_participants::task_id.eq(task.0))
                    .filter(plan_task_participants::user_id.eq(user.0))
                    .filter(plan_task_participants::organization_id.eq(org.0)),
            )
            .execute(conn)
            .await?;
            if n > 0 {
                record(conn, org, event).await?;
            }
            Ok::<_, diesel::result::Error>(n > 0)
        })
        .await
        .map_err(db_error)
    }

    async fn labels_of_tasks(
        &self,
        org: OrgId,
        tasks: &[TaskId],
    ) -> Result<HashMap<TaskId, Vec<LabelId>>, RepoError> {
        if tasks.is_empty() {
            return Ok(HashMap::new());
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<(Uuid, Uuid)> = entity_labels::table
            .filter(entity_labels::organization_id.eq(org.0))
            .filter(entity_labels::entity_type.eq(EntityKind::Tasks.as_str()))
            .filter(entity_labels::entity_id.eq_any(ids(tasks)))
            .order((entity_labels::entity_id, entity_labels::label_id))
            .select((entity_labels::entity_id, entity_labels::label_id))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let mut of: HashMap<TaskId, Vec<LabelId>> = HashMap::new();
        for (task, label) in rows {
            of.entry(TaskId(task)).or_default().push(LabelId(label));
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
        let wanted: Vec<Uuid> = labels.iter().map(|l| l.0).collect();
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            let carried = entity_labels::table
                .filter(entity_labels::organization_id.eq(org.0))
                .filter(entity_labels::entity_type.eq(EntityKind::Tasks.as_str()))
                .filter(entity_labels::entity_id.eq(task.0));
            diesel::delete(carried.filter(entity_labels::label_id.ne_all(wanted.clone())))
                .execute(conn)
                .await?;
            // Only labels of the organization go on (the labels table says which).
            diesel::sql_query(
                "INSERT INTO entity_labels (organization_id, entity_type, entity_id, label_id) \
                 SELECT $1, $2, $3, l.id FROM labels l \
                 WHERE l.organization_id = $1 AND l.id = ANY($4) \
                 ON CONFLICT DO NOTHING",
            )
            .bind::<SqlUuid, _>(org.0)
            .bind::<Text, _>(EntityKind::Tasks.as_str())
            .bind::<SqlUuid, _>(task.0)
            .bind::<diesel::sql_types::Array<SqlUuid>, _>(wanted.clone())
            .execute(conn)
            .await?;
            record(conn, org, event).await
        })
        .await
        .map_err(db_error)
    }

    async fn tasks_with_label(&self, org: OrgId, label: LabelId) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let n: i64 = entity_labels::table
            .filter(entity_labels::organization_id.eq(org.0))
            .filter(entity_labels::entity_type.eq(EntityKind::Tasks.as_str()))
            .filter(entity_labels::label_id.eq(label.0))
            .count()
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        count_from(n)
    }
}
