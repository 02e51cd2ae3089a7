//! Plan: access (rules on the [`crate::Plan`] service).
