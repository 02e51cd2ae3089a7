//! [`Plan`]: the one application service of the Plan area. Its methods are spread over the
//! area's modules (`projects.rs`, `boards.rs`, `states.rs`, `tasks.rs`, `social.rs`, …), each
//! holding its rules; they share the ports below.

use std::sync::Arc;

use teamcomm_kernel::SharedClock;
use teamcomm_labels::LabelRepository;
use teamcomm_org::{OrgRepository, TeamRepository};

use crate::ports::{
    BoardRepository, IdempotencyRepository, ProjectRepository, TaskRepository, TaskSocialRepository,
};

/// Everything the Plan service reaches.
#[derive(Clone)]
pub struct PlanPorts {
    pub projects: Arc<dyn ProjectRepository>,
    pub boards: Arc<dyn BoardRepository>,
    pub tasks: Arc<dyn TaskRepository>,
    pub social: Arc<dyn TaskSocialRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    /// People (owners, participants, mentions must be active people of the organization).
    pub people: Arc<dyn OrgRepository>,
    /// Teams behind member grants.
    pub teams: Arc<dyn TeamRepository>,
    /// The organization's labels (task labels are organization labels).
    pub labels: Arc<dyn LabelRepository>,
    pub clock: SharedClock,
}

/// The Plan area's rules.
#[derive(Clone)]
pub struct Plan {
    pub(crate) ports: Arc<PlanPorts>,
}

impl Plan {
    pub fn new(ports: PlanPorts) -> Plan {
        Plan {
            ports: Arc::new(ports),
        }
    }
}
