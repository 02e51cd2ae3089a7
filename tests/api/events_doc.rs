//! docs/events.md documents every event type the service writes, and nothing else.

use teamcomm_kernel::{EventType, WireEnum};
use teamcomm_tests::documented_event_types;

#[test]
fn every_event_type_has_a_documented_data_schema() {
    let mut written: Vec<String> = EventType::ALL
        .iter()
        .map(|t| t.as_str().to_owned())
        .collect();
    written.sort();
    assert_eq!(documented_event_types(), written);
}
