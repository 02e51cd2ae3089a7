//! Projects and their member grants.

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError};

use crate::access::{Anchor, Grant, Grantee};
use crate::projects::{ProjectFilter, ProjectPatch, ProjectProgress};
use crate::{GrantId, Project, ProjectId};

#[async_trait]
pub trait ProjectRepository: Send + Sync + 'static {
    /// Inserts the project last in the organization's order. `Conflict` on
    /// `plan_projects_org_lower_name_key` when a project (live or archived) has the name in any
    /// case.
    async fn create_project(&self, project: &Project) -> Result<Project, RepoError>;
    async fn get_project(&self, org: OrgId, id: ProjectId) -> Result<Project, RepoError>;
    /// The projects the filter's viewer sees, in the organization's order.
    async fn list_projects(
        &self,
        org: OrgId,
        filter: &ProjectFilter,
        page: PageRequest,
    ) -> Result<Page<Project>, RepoError>;
    /// Live projects of the organization (the free plan's limit).
    async fn count_live_projects(&self, org: OrgId) -> Result<u64, RepoError>;
    /// Applies the patch and stamps `updated_at`; `Conflict` as in `create_project`.
    async fn update_project(
        &self,
        org: OrgId,
        id: ProjectId,
        patch: &ProjectPatch,
    ) -> Result<Project, RepoError>;
    /// Live boards per project, for those of `ids` that have any.
    async fn board_counts(
        &self,
        org: OrgId,
        ids: &[ProjectId],
    ) -> Result<Vec<(ProjectId, u64)>, RepoError>;
    /// Closed and all live tasks of the live boards of each project, for those that have tasks.
    async fn progress(
        &self,
        org: OrgId,
        ids: &[ProjectId],
    ) -> Result<Vec<(ProjectId, ProjectProgress)>, RepoError>;
    /// Puts the project before or after another (or last) and renumbers the order.
    async fn move_project(
        &self,
        org: OrgId,
        id: ProjectId,
        anchor: Anchor<ProjectId>,
    ) -> Result<(), RepoError>;
    /// Grants, oldest first.
    async fn project_grants(&self, org: OrgId, id: ProjectId) -> Result<Vec<Grant>, RepoError>;
    /// Adds the grant, or answers the existing one (flag false).
    async fn add_project_grant(
        &self,
        org: OrgId,
        id: ProjectId,
        grantee: Grantee,
        grant: GrantId,
    ) -> Result<(Grant, bool), RepoError>;
    async fn remove_project_grant(
        &self,
        org: OrgId,
        id: ProjectId,
        grant: GrantId,
    ) -> Result<(), RepoError>;
}
