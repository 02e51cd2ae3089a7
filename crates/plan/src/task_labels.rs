//! Plan: task_labels (rules on the [`crate::Plan`] service).
