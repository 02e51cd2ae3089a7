//! In memory: the tasks part of [`super::PlanState`] and [`TaskRepository`].

use async_trait::async_trait;

use super::InMemoryPlan;
use crate::ports::TaskRepository;

#[derive(Debug, Default)]
pub struct TasksMem {}

#[async_trait]
impl TaskRepository for InMemoryPlan {}
