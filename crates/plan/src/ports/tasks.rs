//! Tasks (numbers, versions, ranks), their event log, the delta feed.

use async_trait::async_trait;

#[async_trait]
pub trait TaskRepository: Send + Sync + 'static {}
