//! SQL of the CLI assistant's sessions (`assistant_turns`): a session's newest turns, turns
//! appended in one statement, a session forgotten. Every statement names the organization and
//! the person: a session is theirs alone.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use teamcomm_assistant::{ConversationRepository, Role, SessionId, Turn};
use teamcomm_kernel::{OrgId, RepoError, UserId};
use time::OffsetDateTime;

use crate::Database;
use crate::error::db_error;
use crate::schema::assistant::assistant_turns;

/// Postgres implementation of [`ConversationRepository`].
#[derive(Clone)]
pub struct PgConversationRepository {
    db: Database,
}

impl PgConversationRepository {
    pub fn new(db: Database) -> Self {
        PgConversationRepository { db }
    }
}

#[async_trait]
impl ConversationRepository for PgConversationRepository {
    async fn recent_turns(
        &self,
        org: OrgId,
        user: UserId,
        session: &SessionId,
        limit: usize,
    ) -> Result<Vec<Turn>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<(String, String, OffsetDateTime)> = assistant_turns::table
            .filter(assistant_turns::user_id.eq(user.0))
            .filter(assistant_turns::session_id.eq(session.as_str()))
            .filter(assistant_turns::organization_id.eq(org.0))
            .order(assistant_turns::id.desc())
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .select((
                assistant_turns::role,
                assistant_turns::content,
                assistant_turns::created_at,
            ))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter()
            .rev()
            .map(|(role, content, at)| {
                let role = Role::parse(&role)
                    .ok_or_else(|| RepoError::Other(format!("unknown assistant role {role}")))?;
                Ok(Turn { role, content, at })
            })
            .collect()
    }

    async fn append_turns(
        &self,
        org: OrgId,
        user: UserId,
        session: &SessionId,
        turns: &[Turn],
    ) -> Result<(), RepoError> {
        if turns.is_empty() {
            return Ok(());
        }
        let rows: Vec<_> = turns
            .iter()
            .map(|t| {
                (
                    assistant_turns::organization_id.eq(org.0),
                    assistant_turns::user_id.eq(user.0),
                    assistant_turns::session_id.eq(session.as_str()),
                    assistant_turns::role.eq(t.role.as_str()),
                    assistant_turns::content.eq(t.content.as_str()),
                    assistant_turns::created_at.eq(t.at),
                )
            })
            .collect();
        let mut conn = self.db.conn().await?;
        diesel::insert_into(assistant_turns::table)
            .values(rows)
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn forget(&self, org: OrgId, user: UserId, session: &SessionId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(
            assistant_turns::table
                .filter(assistant_turns::user_id.eq(user.0))
                .filter(assistant_turns::session_id.eq(session.as_str()))
                .filter(assistant_turns::organization_id.eq(org.0)),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }
}
