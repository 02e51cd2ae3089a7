//! Plan: idempotency (rules on the [`crate::Plan`] service).
