//! Task relations, comments, reactions, participants and labels.

use async_trait::async_trait;

#[async_trait]
pub trait TaskSocialRepository: Send + Sync + 'static {}
