//! What the workflows domain needs from outside: storage of workflows and their runs. Every read
//! and write takes the `OrgId`; a workflow of another organization is `RepoError::NotFound`.

use async_trait::async_trait;
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError};

use crate::{Workflow, WorkflowId, WorkflowRun, WorkflowSelection};

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
}
