//! SQL of the Plan area's idempotency slots (`plan_idempotency_keys`): one row per
//! (organization, route template, key). Every step is one statement, so two requests with one
//! key race on the primary key (insert) or on the row lock (take over), and exactly one wins.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use teamcomm_kernel::{OrgId, RepoError};
use teamcomm_plan::ports::{IdempotencyRepository, Slot, SlotKey, StoredAnswer};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::Database;
use crate::error::db_error;
use crate::schema::plan::plan_idempotency_keys as slots;

pub struct PgIdempotency {
    db: Database,
}

impl PgIdempotency {
    pub fn new(db: Database) -> Self {
        PgIdempotency { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = slots, check_for_backend(diesel::pg::Pg))]
struct SlotRow {
    request_hash: Vec<u8>,
    response_status: Option<i16>,
    response_body: Option<Vec<u8>>,
    locked_until: OffsetDateTime,
    created_at: OffsetDateTime,
}

impl From<SlotRow> for Slot {
    fn from(r: SlotRow) -> Slot {
        Slot {
            request_hash: r.request_hash,
            answer: r.response_status.map(|status| StoredAnswer {
                status: u16::try_from(status).unwrap_or(500),
                body: r.response_body.unwrap_or_default(),
            }),
            locked_until: r.locked_until,
            created_at: r.created_at,
        }
    }
}

/// The row of `slot` (a macro: the filter's type is not worth spelling).
macro_rules! row_of {
    ($slot:expr) => {
        slots::table
            .filter(slots::organization_id.eq($slot.org.0))
            .filter(slots::route.eq(&$slot.route))
            .filter(slots::key.eq(&$slot.key))
    };
}

#[async_trait]
impl IdempotencyRepository for PgIdempotency {
    async fn insert_slot(
        &self,
        slot: &SlotKey,
        request_hash: &[u8],
        now: OffsetDateTime,
        locked_until: OffsetDateTime,
    ) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        let org: OrgId = slot.org;
        let inserted = diesel::insert_into(slots::table)
            .values((
                slots::organization_id.eq::<Uuid>(org.0),
                slots::route.eq(&slot.route),
                slots::key.eq(&slot.key),
                slots::request_hash.eq(request_hash),
                slots::locked_until.eq(locked_until),
                slots::created_at.eq(now),
            ))
            .on_conflict_do_nothing()
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(inserted == 1)
    }

    async fn find_slot(&self, slot: &SlotKey) -> Result<Option<Slot>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row = row_of!(slot)
            .select(SlotRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(row.map(Slot::from))
    }

    async fn take_over_slot(
        &self,
        slot: &SlotKey,
        request_hash: &[u8],
        now: OffsetDateTime,
        locked_until: OffsetDateTime,
        stale_before: OffsetDateTime,
    ) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        // The condition is evaluated again on the locked row: of two takers, one updates.
        let abandoned = slots::response_status
            .is_null()
            .and(slots::locked_until.le(now));
        let taken =
            diesel::update(row_of!(slot).filter(abandoned.or(slots::created_at.le(stale_before))))
                .set((
                    slots::request_hash.eq(request_hash),
                    slots::response_status.eq(None::<i16>),
                    slots::response_body.eq(None::<Vec<u8>>),
                    slots::locked_until.eq(locked_until),
                    slots::created_at.eq(now),
                ))
                .execute(&mut conn)
                .await
                .map_err(db_error)?;
        Ok(taken == 1)
    }

    async fn complete_slot(
        &self,
        slot: &SlotKey,
        locked_until: OffsetDateTime,
        answer: &StoredAnswer,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let status = i16::try_from(answer.status).unwrap_or(i16::MAX);
        diesel::update(
            row_of!(slot)
                .filter(slots::response_status.is_null())
                .filter(slots::locked_until.eq(locked_until)),
        )
        .set((
            slots::response_status.eq(Some(status)),
            slots::response_body.eq(Some(&answer.body)),
        ))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn release_slot(
        &self,
        slot: &SlotKey,
        locked_until: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(
            row_of!(slot)
                .filter(slots::response_status.is_null())
                .filter(slots::locked_until.eq(locked_until)),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn prune_slots(&self, before: OffsetDateTime) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::delete(slots::table.filter(slots::created_at.le(before)))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(n as u64)
    }
}
