//! Provisioning by the operator of the installation (`OrganizationService`): creating and
//! changing organizations and their people. The operator HTTP API, `teamcomm admin` and
//! `--demo` all go through it, so they apply the same rules.

use std::sync::Arc;

use teamcomm_kernel::{Error, ErrorCode, OrgId, RepoError, SharedClock, UserId};

use crate::events::activation_changed;
use crate::{
    NewOrganization, NewUser, OrgRepository, Organization, OrganizationPatch, User, UserPatch,
};

#[cfg(test)]
mod tests;

/// The chat platform assumed for an organization that has not named one.
pub const DEFAULT_CHAT_PLATFORM: &str = "slack";

/// Organizations and their people, as the operator sees them (no tenant scoping: the operator
/// stands above organizations).
#[derive(Clone)]
pub struct OrganizationService {
    orgs: Arc<dyn OrgRepository>,
    /// Stamps the activation events.
    clock: SharedClock,
}

impl OrganizationService {
    pub fn new(orgs: Arc<dyn OrgRepository>, clock: SharedClock) -> Self {
        OrganizationService { orgs, clock }
    }

    /// True before the first organization exists (`--demo` seeds only an empty installation).
    pub async fn is_empty(&self) -> Result<bool, Error> {
        Ok(self.orgs.is_empty().await?)
    }

    pub async fn create_organization(&self, new: &NewOrganization) -> Result<Organization, Error> {
        Ok(self.orgs.create_organization(new).await?)
    }

    pub async fn update_organization(
        &self,
        id: OrgId,
        patch: &OrganizationPatch,
    ) -> Result<Organization, Error> {
        Ok(self.orgs.update_organization(id, patch).await?)
    }

    pub async fn get_organization(&self, id: OrgId) -> Result<Organization, Error> {
        Ok(self.orgs.get_organization(id).await?)
    }

    /// The chat platform channels of `org` are on: the one it connected, else
    /// [`DEFAULT_CHAT_PLATFORM`].
    pub async fn chat_platform(&self, org: OrgId) -> Result<String, Error> {
        Ok(self
            .get_organization(org)
            .await?
            .platform
            .unwrap_or_else(|| DEFAULT_CHAT_PLATFORM.to_owned()))
    }

    /// Adds a person to an existing organization (`not_found` otherwise). An e-mail already
    /// used in that organization is a validation error on `email`, not a server error.
    pub async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, Error> {
        self.orgs.get_organization(org).await?;
        match self.orgs.create_user(org, new).await {
            Ok(user) => Ok(user),
            Err(RepoError::Conflict { .. }) => Err(Error::new(
                ErrorCode::ParamsValidationError,
                "A user with this e-mail already exists in the organization.",
            )
            .with_field_error(
                "email",
                "A user with this e-mail already exists in the organization.",
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// Activates, deactivates or changes the role of a person of any organization; activating
    /// or deactivating someone is reported when it changes them.
    pub async fn update_user(&self, id: UserId, patch: &UserPatch) -> Result<User, Error> {
        let mut changed = self.orgs.find_user(id).await?;
        patch.apply_to(&mut changed);
        // Recorded by the port only if `is_active` really flips (see `PeopleService::update_user`).
        let activation: Vec<_> = patch
            .is_active
            .map(|_| activation_changed(&changed, self.clock.now()))
            .into_iter()
            .collect();
        Ok(self.orgs.update_user(id, patch, &activation).await?)
    }

    /// A person of `org` (the user behind a web session, say); anyone else is `not_found`.
    pub async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, Error> {
        Ok(self.orgs.get_user(org, id).await?)
    }

    /// A person of any organization.
    pub async fn find_user(&self, id: UserId) -> Result<User, Error> {
        Ok(self.orgs.find_user(id).await?)
    }

    /// A person who may be handed a credential (a web session or a CLI token): they must exist
    /// and be active.
    pub async fn active_user(&self, id: UserId) -> Result<User, Error> {
        let user = self.find_user(id).await?;
        if !user.is_active {
            return Err(Error::invalid_field("user", "The user is deactivated."));
        }
        Ok(user)
    }
}
