//! The Plan ports (`teamcomm_plan::ports`), one module per port.

mod boards;
mod idempotency;
mod social;
mod task_batches;
mod tasks;

use std::sync::Arc;

use teamcomm_plan::ports::{
    BoardRepository, IdempotencyRepository, ProjectRepository, TaskRepository, TaskSocialRepository,
};
use teamcomm_store_pg::{Database, PgBoards, PgIdempotency, PgProjects, PgTaskSocial, PgTasks};

/// Every Plan port of one store.
pub struct PlanStores {
    pub projects: Arc<dyn ProjectRepository>,
    pub boards: Arc<dyn BoardRepository>,
    pub tasks: Arc<dyn TaskRepository>,
    pub social: Arc<dyn TaskSocialRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
}

impl PlanStores {
    pub fn in_memory(people: Arc<teamcomm_org::testing::InMemoryOrgRepository>) -> PlanStores {
        let mem = teamcomm_plan::testing::InMemoryPlan::new(people);
        PlanStores {
            projects: Arc::new(mem.clone()),
            boards: Arc::new(mem.clone()),
            tasks: Arc::new(mem.clone()),
            social: Arc::new(mem.clone()),
            idempotency: Arc::new(mem),
        }
    }

    pub fn postgres(db: Database) -> PlanStores {
        PlanStores {
            projects: Arc::new(PgProjects::new(db.clone())),
            boards: Arc::new(PgBoards::new(db.clone())),
            tasks: Arc::new(PgTasks::new(db.clone())),
            social: Arc::new(PgTaskSocial::new(db.clone())),
            idempotency: Arc::new(PgIdempotency::new(db)),
        }
    }
}
