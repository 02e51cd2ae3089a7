//! SQL of the Plan area's task relations, comments, reactions, participants and labels.

use async_trait::async_trait;
use teamcomm_plan::ports::TaskSocialRepository;

use crate::Database;

pub struct PgTaskSocial {
    #[allow(dead_code)]
    db: Database,
}

impl PgTaskSocial {
    pub fn new(db: Database) -> Self {
        PgTaskSocial { db }
    }
}

#[async_trait]
impl TaskSocialRepository for PgTaskSocial {}
