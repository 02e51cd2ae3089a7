//! The outbox: events are inserted by the repository that writes their change, inside its
//! transaction ([`record`]), so a change and its events commit or roll back together.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{Event, WireEnum};

use crate::schema::outbox_events;

/// Inserts `events` on `conn`; call it inside the transaction of the change they report.
pub(crate) async fn record(conn: &mut AsyncPgConnection, events: &[Event]) -> QueryResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let rows: Vec<_> = events
        .iter()
        .map(|e| {
            (
                outbox_events::id.eq(e.id),
                outbox_events::organization_id.eq(e.org_id.0),
                outbox_events::event_type.eq(e.event_type.as_str()),
                outbox_events::object_id.eq(e.object_id),
                outbox_events::payload.eq(e.payload()),
                outbox_events::occurred_at.eq(e.occurred_at),
            )
        })
        .collect();
    diesel::insert_into(outbox_events::table)
        .values(&rows)
        .execute(conn)
        .await?;
    Ok(())
}
