//! Plan: tasks (rules on the [`crate::Plan`] service).
