//! Plan: bulk (rules on the [`crate::Plan`] service).
