//! SQL of the reply loop's poll cursors (`platform_poll_cursors`): one row per connected
//! organization, removed with its connection by the foreign key.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use teamcomm_kernel::{OrgId, RepoError};
use teamcomm_messaging::cursors::PollCursors;
use teamcomm_messaging::platform::PlatformKind;
use time::OffsetDateTime;

use crate::Database;
use crate::error::{db_error, unknown_organization};
use crate::schema::cursors::platform_poll_cursors;

/// Postgres implementation of [`PollCursors`].
#[derive(Clone)]
pub struct PgPollCursors {
    db: Database,
}

impl PgPollCursors {
    pub fn new(db: Database) -> Self {
        PgPollCursors { db }
    }
}

#[async_trait]
impl PollCursors for PgPollCursors {
    async fn poll_cursor(
        &self,
        org: OrgId,
        kind: PlatformKind,
    ) -> Result<Option<String>, RepoError> {
        let mut conn = self.db.conn().await?;
        platform_poll_cursors::table
            .filter(platform_poll_cursors::organization_id.eq(org.0))
            .filter(platform_poll_cursors::kind.eq(kind.as_str()))
            .select(platform_poll_cursors::cursor)
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)
    }

    async fn save_poll_cursor(
        &self,
        org: OrgId,
        kind: PlatformKind,
        cursor: &str,
        at: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::insert_into(platform_poll_cursors::table)
            .values((
                platform_poll_cursors::organization_id.eq(org.0),
                platform_poll_cursors::kind.eq(kind.as_str()),
                platform_poll_cursors::cursor.eq(cursor),
                platform_poll_cursors::updated_at.eq(at),
            ))
            .on_conflict(platform_poll_cursors::organization_id)
            .do_update()
            .set((
                platform_poll_cursors::kind.eq(excluded(platform_poll_cursors::kind)),
                platform_poll_cursors::cursor.eq(excluded(platform_poll_cursors::cursor)),
                platform_poll_cursors::updated_at.eq(excluded(platform_poll_cursors::updated_at)),
            ))
            .execute(&mut conn)
            .await
            // No connection (the foreign key names `organization_id`): an unknown organization.
            .map_err(|e| unknown_organization(db_error(e)))?;
        Ok(())
    }
}
