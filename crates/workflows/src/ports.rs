//! What the workflows domain needs from outside: storage of workflows and their runs. Every read
//! and write takes the `OrgId`; a workflow of another organization is `RepoError::NotFound`.

use async_trait::async_trait;
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{RunEnd, Workflow, WorkflowId, WorkflowRun, WorkflowSelection};

#[async_trait]
pub trait WorkflowRepository: Send + Sync + 'static {
    async fn create_workflow(&self, org: OrgId, workflow: &Workflow)
    -> Result<Workflow, RepoError>;
    async fn get_workflow(&self, org: OrgId, id: WorkflowId) -> Result<Workflow, RepoError>;
    /// Writes name, description, trigger, actions, active and `updated_at`.
    async fn update_workflow(&self, org: OrgId, workflow: &Workflow)
    -> Result<Workflow, RepoError>;
    /// Deletes the workflow, its runs, labels and stars; `NotFound` when there is none.
    async fn delete_workflow(&self, org: OrgId, id: WorkflowId) -> Result<(), RepoError>;
    /// Alphabetically by name, then id.
    async fn list_workflows(
        &self,
        org: OrgId,
        selection: &WorkflowSelection,
        page: PageRequest,
    ) -> Result<Page<Workflow>, RepoError>;
    /// Records the run and enqueues its job in one transaction.
    async fn queue_run(&self, org: OrgId, run: &WorkflowRun, job: &NewJob)
    -> Result<(), RepoError>;
    /// Newest first.
    async fn list_runs(
        &self,
        org: OrgId,
        workflow: WorkflowId,
        page: PageRequest,
    ) -> Result<Page<WorkflowRun>, RepoError>;

    /// A run and its workflow, for the runner (`NotFound` once the workflow is deleted).
    async fn run_work(&self, org: OrgId, run: Uuid) -> Result<(Workflow, WorkflowRun), RepoError>;

    /// Marks a queued or running run `running`; the first start time is kept.
    async fn start_run(&self, org: OrgId, run: Uuid, at: OffsetDateTime) -> Result<(), RepoError>;

    /// Records that the run's first `completed` actions ran.
    async fn record_progress(&self, org: OrgId, run: Uuid, completed: u32)
    -> Result<(), RepoError>;

    /// Ends the run as `end` says and records `event` (its `workflow.finished`) in the same
    /// transaction.
    async fn finish_run(
        &self,
        org: OrgId,
        run: Uuid,
        end: &RunEnd,
        event: &Event,
    ) -> Result<(), RepoError>;
}
