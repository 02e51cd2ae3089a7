//! SQL of the Plan area's projects and their member grants.

use async_trait::async_trait;
use teamcomm_plan::ports::ProjectRepository;

use crate::Database;

pub struct PgProjects {
    #[allow(dead_code)]
    db: Database,
}

impl PgProjects {
    pub fn new(db: Database) -> Self {
        PgProjects { db }
    }
}

#[async_trait]
impl ProjectRepository for PgProjects {}
