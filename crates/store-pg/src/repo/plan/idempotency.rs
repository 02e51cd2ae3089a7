//! SQL of the Plan area's the idempotency slots of the marked Plan writes.

use async_trait::async_trait;
use teamcomm_plan::ports::IdempotencyRepository;

use crate::Database;

pub struct PgIdempotency {
    #[allow(dead_code)]
    db: Database,
}

impl PgIdempotency {
    pub fn new(db: Database) -> Self {
        PgIdempotency { db }
    }
}

#[async_trait]
impl IdempotencyRepository for PgIdempotency {}
