//! The credentials use cases: authenticating API keys and CLI tokens, and managing API keys
//! under the spec's role rules ("Roles for key management", "Member restrictions").

use std::sync::Arc;

use teamcomm_kernel::{
    ApiKeyId, Error, ErrorCode, Page, PageRequest, RepoError, SharedClock, UserId,
};
use teamcomm_org::{OrgRepository, User};
use time::OffsetDateTime;

use crate::{
    ApiKey, CredentialKind, KeyChanges, KeyListScope, KeyRepository, NewKeyRecord, OrgSnapshots,
    Principal, Scope, Secret, SecretKind, UsageTracker,
};

const MAX_KEY_NAME: usize = 255;

/// Input of "create a key", already parsed from the wire.
#[derive(Debug, Clone, Default)]
pub struct CreateKey {
    pub name: String,
    pub is_agent_key: bool,
    /// Raw `for_user_id` as sent (validated here so the right code is answered).
    pub for_user_id: Option<String>,
    pub scopes: Option<Vec<String>>,
    pub expiration: Option<OffsetDateTime>,
}

/// Input of "update a key".
#[derive(Debug, Clone, Default)]
pub struct UpdateKey {
    pub name: Option<String>,
    pub active: Option<bool>,
    pub expiration: Option<Option<OffsetDateTime>>,
    pub scopes: Option<Vec<String>>,
    pub regenerate: bool,
}

#[derive(Clone)]
pub struct KeyService {
    keys: Arc<dyn KeyRepository>,
    users: Arc<dyn OrgRepository>,
    orgs: Arc<dyn OrgSnapshots>,
    usage: Arc<UsageTracker>,
    clock: SharedClock,
}

impl KeyService {
    pub fn new(
        keys: Arc<dyn KeyRepository>,
        users: Arc<dyn OrgRepository>,
        orgs: Arc<dyn OrgSnapshots>,
        usage: Arc<UsageTracker>,
        clock: SharedClock,
    ) -> Self {
        KeyService {
            keys,
            users,
            orgs,
            usage,
            clock,
        }
    }

    pub fn usage(&self) -> &Arc<UsageTracker> {
        &self.usage
    }

    // ---------------------------------------------------------------- authentication

    /// Resolves an `X-API-KEY` value to a principal, applying every gate in the spec's order:
    /// the key must exist and be active, not be expired, have an active owner, and belong to an
    /// organization whose plan allows API keys.
    pub async fn authenticate_api_key(&self, presented: &str) -> Result<Principal, Error> {
        let secret =
            Secret::parse(SecretKind::ApiKey, presented.trim()).ok_or_else(invalid_credentials)?;
        let hash = secret.hash();
        let cred = self
            .keys
            .find_key_credential(&hash)
            .await?
            .ok_or_else(invalid_credentials)?;
        if !cred.active {
            return Err(invalid_credentials());
        }
        let now = self.clock.now();
        if cred.expiration.is_some_and(|exp| exp <= now) {
            return Err(Error::new(
                ErrorCode::CredentialExpired,
                "This API key has expired.",
            ));
        }
        if !cred.owner.is_active {
            return Err(Error::new(
                ErrorCode::ApiKeyOwnerInactive,
                "The owner of this API key is deactivated.",
            ));
        }
        let org = self.orgs.organization(cred.org_id).await?;
        org.check_api_key_eligibility()?;
        self.usage.touch(cred.id, now);
        Ok(Principal {
            user: cred.owner,
            org,
            credential: CredentialKind::ApiKey {
                id: cred.id,
                is_agent_key: cred.is_agent_key,
                scopes: cred.scopes,
            },
        })
    }

    /// Resolves an `Authorization: Bearer` CLI token. Plan restrictions of free organizations are
    /// applied per endpoint by the caller (they depend on the route).
    pub async fn authenticate_cli_token(&self, presented: &str) -> Result<Principal, Error> {
        let secret = Secret::parse(SecretKind::CliToken, presented.trim())
            .ok_or_else(invalid_credentials)?;
        let cred = self
            .keys
            .find_cli_token_credential(&secret.hash())
            .await?
            .ok_or_else(invalid_credentials)?;
        if cred.revoked || !cred.user.is_active {
            return Err(invalid_credentials());
        }
        if cred.expires_at.is_some_and(|exp| exp <= self.clock.now()) {
            return Err(Error::new(
                ErrorCode::CredentialExpired,
                "This session has expired. Log in again.",
            ));
        }
        let org = self.orgs.organization(cred.org_id).await?;
        Ok(Principal {
            user: cred.user,
            org,
            credential: CredentialKind::CliToken { id: cred.id },
        })
    }

    /// Mints a CLI token for `user`; the plaintext is returned once.
    pub async fn issue_cli_token(
        &self,
        user: &User,
        ttl: Option<time::Duration>,
    ) -> Result<Secret, Error> {
        let secret = Secret::generate(SecretKind::CliToken);
        let expires_at = ttl.map(|ttl| self.clock.now() + ttl);
        self.keys
            .insert_cli_token(user.org_id, user.id, &secret.hash(), expires_at)
            .await?;
        Ok(secret)
    }

    // ---------------------------------------------------------------- key management

    /// Creates a key. Members create regular keys for themselves only.
    pub async fn create_key(
        &self,
        actor: &User,
        input: CreateKey,
    ) -> Result<(ApiKey, Secret), Error> {
        let name = validate_key_name(&input.name)?;
        if input.is_agent_key && !actor.role.is_admin() {
            return Err(Error::new(
                ErrorCode::AgentKeyAdminOnly,
                "Only organization admins can create agent keys.",
            ));
        }
        let owner = match input.for_user_id.as_deref() {
            None => actor.clone(),
            Some(raw) => self.resolve_key_owner(actor, raw).await?,
        };
        let scopes = match &input.scopes {
            None => Scope::DEFAULT.to_vec(),
            Some(names) => Scope::parse_list(names)?,
        };
        if let Some(exp) = input.expiration {
            self.check_future("expiration", exp)?;
        }
        let secret = Secret::generate(SecretKind::ApiKey);
        let record = NewKeyRecord {
            id: ApiKeyId::new(),
            org_id: actor.org_id,
            owner_id: owner.id,
            created_by: Some(actor.id),
            name,
            hash: secret.hash(),
            suffix: secret.suffix(),
            is_agent_key: input.is_agent_key,
            scopes,
            expiration: input.expiration,
        };
        let key = self.keys.insert_key(&record).await?;
        Ok((key, secret))
    }

    /// Lists the keys the actor may see: admins all of the organization's, others their own.
    pub async fn list_keys(&self, actor: &User, page: PageRequest) -> Result<Page<ApiKey>, Error> {
        let scope = if actor.role.is_admin() {
            KeyListScope::Organization
        } else {
            KeyListScope::OwnedBy(actor.id)
        };
        let page = self.keys.list_keys(actor.org_id, scope, page).await?;
        Ok(page.map(|key| self.with_pending_usage(key)))
    }

    /// One key, if the actor may see it (another user's key is "not found" to a member).
    pub async fn get_key(&self, actor: &User, id: ApiKeyId) -> Result<ApiKey, Error> {
        let key = self.visible_key(actor, id).await?;
        Ok(self.with_pending_usage(key))
    }

    /// Updates a key; with `regenerate` the new secret is returned once and the old one stops
    /// working immediately.
    pub async fn update_key(
        &self,
        actor: &User,
        id: ApiKeyId,
        input: UpdateKey,
    ) -> Result<(ApiKey, Option<Secret>), Error> {
        self.visible_key(actor, id).await?;
        let name = input.name.as_deref().map(validate_key_name).transpose()?;
        let scopes = input.scopes.as_deref().map(Scope::parse_list).transpose()?;
        if let Some(Some(exp)) = input.expiration {
            self.check_future("expiration", exp)?;
        }
        let secret = input
            .regenerate
            .then(|| Secret::generate(SecretKind::ApiKey));
        let changes = KeyChanges {
            name,
            active: input.active,
            expiration: input.expiration,
            scopes,
            new_secret: secret.as_ref().map(|s| (s.hash(), s.suffix())),
        };
        let key = self.keys.update_key(actor.org_id, id, &changes).await?;
        Ok((self.with_pending_usage(key), secret))
    }

    /// Deletes a key the actor may manage.
    pub async fn delete_key(&self, actor: &User, id: ApiKeyId) -> Result<(), Error> {
        self.visible_key(actor, id).await?;
        self.keys.delete_key(actor.org_id, id).await?;
        Ok(())
    }

    async fn visible_key(&self, actor: &User, id: ApiKeyId) -> Result<ApiKey, Error> {
        let key = self.keys.get_key(actor.org_id, id).await?;
        if !actor.role.is_admin() && key.owner.id != actor.id {
            return Err(Error::not_found());
        }
        Ok(key)
    }

    async fn resolve_key_owner(&self, actor: &User, raw: &str) -> Result<User, Error> {
        let target_id: Option<UserId> = raw.trim().parse().ok();
        if target_id == Some(actor.id) {
            return Ok(actor.clone());
        }
        if !actor.role.is_admin() {
            return Err(Error::new(
                ErrorCode::OrgAdminRequired,
                "Only organization admins can create keys for other users.",
            ));
        }
        let not_found = || {
            Error::new(
                ErrorCode::TargetUserNotFound,
                "No user of this organization has that id.",
            )
        };
        let target_id = target_id.ok_or_else(not_found)?;
        let target = match self.users.get_user(actor.org_id, target_id).await {
            Ok(user) => user,
            Err(RepoError::NotFound) => return Err(not_found()),
            Err(e) => return Err(e.into()),
        };
        if !target.is_active {
            return Err(Error::new(
                ErrorCode::TargetUserInactive,
                "That user is deactivated.",
            ));
        }
        Ok(target)
    }

    fn check_future(&self, field: &str, at: OffsetDateTime) -> Result<(), Error> {
        if at <= self.clock.now() {
            return Err(Error::invalid_field(field, "Must be in the future."));
        }
        Ok(())
    }

    fn with_pending_usage(&self, mut key: ApiKey) -> ApiKey {
        if let Some(at) = self.usage.pending(key.id)
            && key.last_usage_at.is_none_or(|stored| stored < at)
        {
            key.last_usage_at = Some(at);
        }
        key
    }
}

fn validate_key_name(name: &str) -> Result<String, Error> {
    let name = name.trim();
    if name.is_empty() {
        return Err(Error::invalid_field("name", "This field may not be blank."));
    }
    if name.chars().count() > MAX_KEY_NAME {
        return Err(Error::invalid_field(
            "name",
            "Ensure this field has no more than 255 characters.",
        ));
    }
    Ok(name.to_owned())
}

/// The answer to a key or token that does not resolve. The detail keeps the wording clients
/// know from the spec ("credentials were not provided").
pub fn invalid_credentials() -> Error {
    Error::new(
        ErrorCode::InvalidCredentials,
        "Authentication credentials were not provided or are invalid.",
    )
}
