//! Plan: participants (rules on the [`crate::Plan`] service).
