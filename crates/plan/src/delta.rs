//! Plan: delta (rules on the [`crate::Plan`] service).
