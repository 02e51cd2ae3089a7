//! Plan: states (rules on the [`crate::Plan`] service).
