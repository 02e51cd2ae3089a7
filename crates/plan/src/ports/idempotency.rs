//! The idempotency slots of the marked Plan writes.

use async_trait::async_trait;

#[async_trait]
pub trait IdempotencyRepository: Send + Sync + 'static {}
