//! SQL of the Plan area's tasks, their event log and the delta feed.

use async_trait::async_trait;
use teamcomm_plan::ports::TaskRepository;

use crate::Database;

pub struct PgTasks {
    #[allow(dead_code)]
    db: Database,
}

impl PgTasks {
    pub fn new(db: Database) -> Self {
        PgTasks { db }
    }
}

#[async_trait]
impl TaskRepository for PgTasks {}
