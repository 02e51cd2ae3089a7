//! In memory: the idempotency part of [`super::PlanState`] and [`IdempotencyRepository`].

use async_trait::async_trait;

use super::InMemoryPlan;
use crate::ports::IdempotencyRepository;

#[derive(Debug, Default)]
pub struct IdempotencyMem {}

#[async_trait]
impl IdempotencyRepository for InMemoryPlan {}
