//! Reading the outbox behind the app's back: the events a change wrote with it. Every payload
//! read is checked against docs/events.md (the envelope and its type's `data` schema), so the
//! documented schemas are a contract the tests hold the app to.

use std::collections::BTreeMap;

use diesel::QueryableByName;
use diesel::sql_types::{Jsonb, Text};
use diesel_async::RunQueryDsl;
use serde_json::Value;
use teamcomm_api::extract::schema_check::BodySchema;

use crate::TestApp;

const EVENTS_DOC: &str = include_str!("../../docs/events.md");

/// The ```json blocks of docs/events.md: the envelope's schema (after "JSON Schema of the
/// envelope"), and each event type's `data` schema (after its "#### `type`" heading).
fn documented_schemas() -> (Value, BTreeMap<String, Value>) {
    let mut envelope = None;
    let mut data = BTreeMap::new();
    let mut heading: Option<String> = None;
    let mut lines = EVENTS_DOC.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("#### ") {
            heading = Some(rest.trim().trim_matches('`').to_owned());
        } else if line.starts_with("JSON Schema of the envelope") {
            heading = Some("envelope".to_owned());
        } else if line.trim() == "```json" {
            let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            let Some(name) = heading.take() else { continue };
            let schema: Value = serde_json::from_str(&block.join("\n"))
                .unwrap_or_else(|e| panic!("docs/events.md: schema of {name} is not JSON: {e}"));
            if name == "envelope" {
                envelope = Some(schema);
            } else {
                data.insert(name, schema);
            }
        }
    }
    (
        envelope.expect("docs/events.md documents the envelope's schema"),
        data,
    )
}

/// The event types docs/events.md gives a `data` schema for.
pub fn documented_event_types() -> Vec<String> {
    documented_schemas().1.into_keys().collect()
}

/// Panics unless `payload` fits the envelope and its type's documented `data` schema.
pub fn check_documented(payload: &Value) {
    let (mut envelope, data) = documented_schemas();
    let event = payload["event"].as_str().expect("payload names its event");
    let schema = data.get(event).unwrap_or_else(|| {
        panic!(
            "docs/events.md documents no data schema for {event}: add a \"#### `{event}`\" \
                 heading followed by a ```json block holding the JSON Schema of its data"
        )
    });
    envelope["properties"]["data"] = schema.clone();
    let mut object = payload.as_object().expect("payload is an object").clone();
    if let Err(e) = BodySchema::from_json(envelope).check(&mut object) {
        panic!(
            "{event} payload does not fit docs/events.md: {:?} {:?}\n{payload:#}",
            e.field_errors(),
            e.extra()
        );
    }
}

#[derive(QueryableByName)]
struct Payload {
    #[diesel(sql_type = Jsonb)]
    payload: Value,
}

impl TestApp {
    /// The payloads of the organization's outbox events, oldest first; with `event_type`, only
    /// those of that type (`"kudos.posted"`). Each is checked against docs/events.md.
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
        let payloads: Vec<Value> = rows.into_iter().map(|r| r.payload).collect();
        payloads.iter().for_each(check_documented);
        payloads
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
