//! Plan: projects (rules on the [`crate::Plan`] service).
