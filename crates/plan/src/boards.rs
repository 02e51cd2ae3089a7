//! Plan: boards (rules on the [`crate::Plan`] service).
