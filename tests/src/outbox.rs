//! Reading the outbox behind the app's back: the events a change wrote with it.

use diesel::QueryableByName;
use diesel::sql_types::{Jsonb, Text};
use diesel_async::RunQueryDsl;
use serde_json::Value;

use crate::TestApp;

#[derive(QueryableByName)]
struct Payload {
    #[diesel(sql_type = Jsonb)]
    payload: Value,
}

impl TestApp {
    /// The payloads of the organization's outbox events, oldest first; with `event_type`, only
    /// those of that type (`"kudos.posted"`).
    pub async fn events(&self, org: &str, event_type: Option<&str>) -> Vec<Value> {
        let mut conn = self.database.pool().get().await.expect("connection");
        let rows: Vec<Payload> = diesel::sql_query(
            "SELECT payload FROM outbox_events \
             WHERE organization_id::text = $1 AND ($2 = '' OR event_type = $2) ORDER BY id",
        )
        .bind::<Text, _>(org)
        .bind::<Text, _>(event_type.unwrap_or(""))
        .load(&mut conn)
        .await
        .expect("read outbox");
        rows.into_iter().map(|r| r.payload).collect()
    }

    /// Makes every later outbox write fail (a check no row passes), to show that a change
    /// whose events cannot be written is not stored either.
    pub async fn break_outbox(&self) {
        let mut conn = self.database.pool().get().await.expect("connection");
        diesel::sql_query(
            "ALTER TABLE outbox_events ADD CONSTRAINT test_outbox_broken CHECK (false) NOT VALID",
        )
        .execute(&mut conn)
        .await
        .expect("break outbox");
    }
}
