//! SQL of the Plan area's boards, their keys, member grants, visits and columns.

use async_trait::async_trait;
use teamcomm_plan::ports::BoardRepository;

use crate::Database;

pub struct PgBoards {
    #[allow(dead_code)]
    db: Database,
}

impl PgBoards {
    pub fn new(db: Database) -> Self {
        PgBoards { db }
    }
}

#[async_trait]
impl BoardRepository for PgBoards {}
