//! In memory: the projects part of [`super::PlanState`] and [`ProjectRepository`].

use async_trait::async_trait;

use super::InMemoryPlan;
use crate::ports::ProjectRepository;

#[derive(Debug, Default)]
pub struct ProjectsMem {}

#[async_trait]
impl ProjectRepository for InMemoryPlan {}
