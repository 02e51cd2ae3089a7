//! Test kit for the adapters and for end-to-end tests elsewhere (feature `testing`): a real
//! Synapse homeserver, started and owned by the test process.

pub mod synapse;
