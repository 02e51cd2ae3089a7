//! Boards, their keys (current and retired), member grants, visits and columns.

use async_trait::async_trait;

#[async_trait]
pub trait BoardRepository: Send + Sync + 'static {}
