//! In memory: the social part of [`super::PlanState`] and [`TaskSocialRepository`].

use async_trait::async_trait;

use super::InMemoryPlan;
use crate::ports::TaskSocialRepository;

#[derive(Debug, Default)]
pub struct SocialMem {}

#[async_trait]
impl TaskSocialRepository for InMemoryPlan {}
