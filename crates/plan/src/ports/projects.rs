//! Projects and their member grants.

use async_trait::async_trait;

#[async_trait]
pub trait ProjectRepository: Send + Sync + 'static {}
