//! Plan: comments (rules on the [`crate::Plan`] service).
