//! Plan port contract: idempotency.
