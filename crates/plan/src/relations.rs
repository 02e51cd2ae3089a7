//! Plan: relations (rules on the [`crate::Plan`] service).
