//! In memory: the boards part of [`super::PlanState`] and [`BoardRepository`].

use async_trait::async_trait;

use super::InMemoryPlan;
use crate::ports::BoardRepository;

#[derive(Debug, Default)]
pub struct BoardsMem {}

#[async_trait]
impl BoardRepository for InMemoryPlan {}
