//! What the organization domain needs from storage.

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, RepoError, UserId};

use crate::{NewOrganization, NewUser, Organization, OrganizationPatch, Team, User, UserPatch};

/// Organizations and their people. Every read that a tenant can trigger takes the `OrgId` and
/// answers `RepoError::NotFound` for rows of other organizations.
#[async_trait]
pub trait OrgRepository: Send + Sync + 'static {
    async fn create_organization(&self, new: &NewOrganization) -> Result<Organization, RepoError>;
    async fn update_organization(
        &self,
        id: OrgId,
        patch: &OrganizationPatch,
    ) -> Result<Organization, RepoError>;
    async fn get_organization(&self, id: OrgId) -> Result<Organization, RepoError>;
    /// True when no organization exists yet (used by `--demo`).
    async fn is_empty(&self) -> Result<bool, RepoError>;

    /// `RepoError::Conflict` when the e-mail is already used in that organization.
    async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, RepoError>;
    /// Operator-level update; the caller has no organization.
    async fn update_user(&self, id: UserId, patch: &UserPatch) -> Result<User, RepoError>;
    /// Operator-level read by id alone.
    async fn find_user(&self, id: UserId) -> Result<User, RepoError>;
    /// A person of `org`.
    async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, RepoError>;

    async fn create_team(
        &self,
        org: OrgId,
        name: &str,
        members: &[UserId],
    ) -> Result<Team, RepoError>;
}
