//! The credentials use cases: authenticating API keys and CLI tokens, and managing API keys
//! under the spec's role rules ("Roles for key management", "Member restrictions").

use std::sync::Arc;

use teamcomm_kernel::{
    ApiKeyId, Error, ErrorCode, OrgId, Page, PageRequest, RepoError, SharedClock, UserId, text,
};
use teamcomm_org::{OrgRepository, Organization, User};
use time::OffsetDateTime;

use crate::{
    ApiKey, CredentialKind, KeyChanges, KeyListScope, KeyRepository, NewKeyRecord, OrgSnapshots,
    Principal, Scope, Secret, SecretKind, UsageTracker,
};

/// The longest key name, in characters.
pub const MAX_KEY_NAME: usize = 255;

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

    /// Writes the pending last-usage instants in one batch and forgets what was written; on an
    /// error everything stays pending for the next flush. Answers how many keys were written.
    pub async fn flush_usage(&self) -> Result<usize, Error> {
        let batch = self.usage.snapshot();
        if batch.is_empty() {
            return Ok(0);
        }
        self.keys.record_key_usage(&batch).await?;
        self.usage.forget_flushed(&batch);
        Ok(batch.len())
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

    /// The person behind a verified web session (its token names the organization and the
    /// user): they must still exist there and be active, else the session is refused like a
    /// bad credential. Also returns the organization's snapshot, for its rate-limit budget.
    pub async fn session_user(
        &self,
        org: OrgId,
        user: UserId,
    ) -> Result<(User, Arc<Organization>), Error> {
        let user = match self.users.get_user(org, user).await {
            Ok(user) if user.is_active => user,
            Ok(_) | Err(RepoError::NotFound) => return Err(invalid_credentials()),
            Err(e) => return Err(e.into()),
        };
        let org = self.orgs.organization(user.org_id).await?;
        Ok((user, org))
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

/// Key names follow the one rule for human-readable names (`teamcomm_kernel::text`).
fn validate_key_name(name: &str) -> Result<String, Error> {
    text::name("name", name, MAX_KEY_NAME)
}

/// The answer to a key or token that does not resolve. The detail keeps the wording clients
/// know from the spec ("credentials were not provided").
pub fn invalid_credentials() -> Error {
    Error::new(
        ErrorCode::InvalidCredentials,
        "Authentication credentials were not provided or are invalid.",
    )
}

#[cfg(test)]
mod tests {
    //! Every rule of `KeyService`, through the in-memory ports.

    use std::sync::Arc;

    use teamcomm_kernel::{ErrorCode, SharedClock};
    use teamcomm_org::testing::{FixedClock, InMemoryOrgRepository};
    use teamcomm_org::{NewOrganization, NewUser, Organization, OrganizationPatch, UserPatch};
    use time::Duration;
    use time::macros::datetime;

    use super::*;
    use crate::testing::{InMemoryKeyRepository, UncachedOrgSnapshots};

    const T0: OffsetDateTime = datetime!(2026-11-23 07:00 UTC);

    /// One organization with an admin, a member and a guest, and a second organization.
    struct World {
        clock: Arc<FixedClock>,
        people: Arc<InMemoryOrgRepository>,
        keys: Arc<InMemoryKeyRepository>,
        service: KeyService,
        org: Organization,
        admin: User,
        member: User,
        guest: User,
        other_admin: User,
    }

    impl World {
        async fn new() -> World {
            World::on_plan("business").await
        }

        async fn on_plan(plan: &str) -> World {
            let clock = Arc::new(FixedClock::new(T0));
            let shared: SharedClock = clock.clone();
            let people = Arc::new(InMemoryOrgRepository::with_clock(shared.clone()));
            let keys = Arc::new(InMemoryKeyRepository::with_clock(
                people.clone(),
                shared.clone(),
            ));
            let service = KeyService::new(
                keys.clone(),
                people.clone(),
                Arc::new(UncachedOrgSnapshots::new(people.clone())),
                Arc::new(UsageTracker::default()),
                shared,
            );
            let org = organization(&people, plan).await;
            let other = organization(&people, "business").await;
            World {
                admin: person(&people, &org, "ada@acme.test", "admin").await,
                member: person(&people, &org, "max@acme.test", "member").await,
                guest: person(&people, &org, "gus@acme.test", "guest").await,
                other_admin: person(&people, &other, "olga@other.test", "admin").await,
                clock,
                people,
                keys,
                service,
                org,
            }
        }

        async fn create(&self, actor: &User, input: CreateKey) -> Result<(ApiKey, Secret), Error> {
            self.service.create_key(actor, input).await
        }

        /// A regular key of `actor`.
        async fn key_of(&self, actor: &User) -> (ApiKey, Secret) {
            self.create(actor, named("ci")).await.expect("create a key")
        }

        async fn auth(&self, secret: &Secret) -> Result<Principal, Error> {
            self.service.authenticate_api_key(secret.expose()).await
        }

        async fn set_active(&self, user: &User, active: bool) {
            let patch = UserPatch::new(Some(active), None).unwrap();
            self.people.update_user(user.id, &patch, &[]).await.unwrap();
        }

        async fn set_key_active(&self, key: &ApiKey, active: bool) {
            let changes = KeyChanges {
                active: Some(active),
                ..KeyChanges::default()
            };
            self.keys
                .update_key(key.org_id, key.id, &changes)
                .await
                .unwrap();
        }

        async fn patch_org(&self, plan: Option<&str>, api_access: Option<bool>) {
            let patch = OrganizationPatch::new(None, plan, api_access, None, None).unwrap();
            self.people
                .update_organization(self.org.id, &patch)
                .await
                .unwrap();
        }

        fn at(&self, offset: Duration) {
            self.clock.set(T0 + offset);
        }

        async fn update(
            &self,
            actor: &User,
            key: &ApiKey,
            input: UpdateKey,
        ) -> Result<ApiKey, Error> {
            self.service
                .update_key(actor, key.id, input)
                .await
                .map(|(key, _)| key)
        }

        async fn stored(&self, key: &ApiKey) -> ApiKey {
            self.keys.get_key(key.org_id, key.id).await.expect("stored")
        }
    }

    async fn organization(people: &InMemoryOrgRepository, plan: &str) -> Organization {
        let new = NewOrganization::new("Acme", plan, None, None, None).unwrap();
        people.create_organization(&new).await.unwrap()
    }

    async fn person(
        people: &InMemoryOrgRepository,
        org: &Organization,
        email: &str,
        role: &str,
    ) -> User {
        let new = NewUser::new(email, "Pat", email, role, None).unwrap();
        people.create_user(org.id, &new).await.unwrap()
    }

    fn named(name: &str) -> CreateKey {
        CreateKey {
            name: name.to_owned(),
            ..CreateKey::default()
        }
    }

    fn for_user(raw: &str) -> CreateKey {
        CreateKey {
            for_user_id: Some(raw.to_owned()),
            ..named("ci")
        }
    }

    #[track_caller]
    fn refused<T: std::fmt::Debug>(result: Result<T, Error>, code: ErrorCode) -> Error {
        let e = result.expect_err("refused");
        assert_eq!(e.code(), code, "{e}");
        assert_eq!(e.status(), code.default_status(), "{e}");
        e
    }

    #[track_caller]
    fn refused_field<T: std::fmt::Debug>(result: Result<T, Error>, field: &str) {
        let e = refused(result, ErrorCode::ParamsValidationError);
        assert!(e.field_errors().contains_key(field), "{e:?}");
        assert_eq!(e.field_errors().len(), 1, "{e:?}");
    }

    // ------------------------------------------------------------ API-key authentication

    #[tokio::test]
    async fn key_format_and_checksum_are_checked_before_any_io() {
        let w = World::new().await;
        let (_, secret) = w.key_of(&w.member).await;
        let calls = w.keys.port_calls();
        let mut wrong_checksum = secret.expose().to_owned();
        let last = if wrong_checksum.ends_with('0') {
            "1"
        } else {
            "0"
        };
        wrong_checksum.replace_range(41.., last);
        let cli_token = Secret::generate(SecretKind::CliToken);
        for presented in [
            "",
            "   ",
            "tck_",
            "not a key",
            &secret.expose()[..41],
            &format!("{}x", secret.expose()),
            &wrong_checksum,
            cli_token.expose(),
        ] {
            let e = refused(
                w.service.authenticate_api_key(presented).await,
                ErrorCode::InvalidCredentials,
            );
            assert!(e.detail().contains("credentials were not provided"), "{e}");
        }
        assert_eq!(w.keys.port_calls(), calls, "junk reached the repository");
    }

    #[tokio::test]
    async fn an_unknown_well_formed_key_is_invalid_credentials() {
        let w = World::new().await;
        let unknown = Secret::generate(SecretKind::ApiKey);
        refused(w.auth(&unknown).await, ErrorCode::InvalidCredentials);
        assert_eq!(w.keys.port_calls(), 1);
    }

    #[tokio::test]
    async fn a_key_authenticates_as_its_owner_and_records_the_use() {
        let w = World::new().await;
        let (key, secret) = w.key_of(&w.member).await;
        w.at(Duration::minutes(5));
        let padded = format!("  {}\n", secret.expose());
        let principal = w.service.authenticate_api_key(&padded).await.unwrap();
        assert_eq!(principal.user, w.member);
        assert_eq!(principal.org.id, w.org.id);
        assert_eq!(
            principal.credential,
            CredentialKind::ApiKey {
                id: key.id,
                is_agent_key: false,
                scopes: Scope::DEFAULT.to_vec(),
            }
        );
        assert_eq!(
            w.service.usage().pending(key.id),
            Some(T0 + Duration::minutes(5))
        );
    }

    #[tokio::test]
    async fn an_agent_key_carries_its_kind_and_scopes() {
        let w = World::new().await;
        let input = CreateKey {
            is_agent_key: true,
            scopes: Some(vec!["tasks:admin".to_owned()]),
            ..named("bot")
        };
        let (key, secret) = w.create(&w.admin, input).await.unwrap();
        let principal = w.auth(&secret).await.unwrap();
        assert_eq!(principal.user, w.admin);
        assert_eq!(
            principal.credential,
            CredentialKind::ApiKey {
                id: key.id,
                is_agent_key: true,
                scopes: vec![Scope::TasksAdmin],
            }
        );
    }

    #[tokio::test]
    async fn an_inactive_key_is_invalid_credentials_until_reactivated() {
        let w = World::new().await;
        let (key, secret) = w.key_of(&w.member).await;
        let off = UpdateKey {
            active: Some(false),
            ..UpdateKey::default()
        };
        w.update(&w.member, &key, off).await.unwrap();
        refused(w.auth(&secret).await, ErrorCode::InvalidCredentials);
        assert_eq!(
            w.service.usage().pending(key.id),
            None,
            "a refusal is no use"
        );
        let on = UpdateKey {
            active: Some(true),
            ..UpdateKey::default()
        };
        w.update(&w.member, &key, on).await.unwrap();
        w.auth(&secret).await.unwrap();
    }

    #[tokio::test]
    async fn a_key_expires_at_its_expiration_instant() {
        let w = World::new().await;
        let input = CreateKey {
            expiration: Some(T0 + Duration::hours(1)),
            ..named("short")
        };
        let (key, secret) = w.create(&w.member, input).await.unwrap();
        w.at(Duration::hours(1) - Duration::microseconds(1));
        w.auth(&secret).await.unwrap();
        w.at(Duration::hours(1));
        refused(w.auth(&secret).await, ErrorCode::CredentialExpired);
        w.at(Duration::hours(1) + Duration::microseconds(1));
        let e = refused(w.auth(&secret).await, ErrorCode::CredentialExpired);
        assert_eq!(e.status(), 401);
        assert_eq!(
            w.service.usage().pending(key.id),
            Some(T0 + Duration::hours(1) - Duration::microseconds(1))
        );
    }

    #[tokio::test]
    async fn a_key_of_a_deactivated_owner_is_refused_with_403() {
        let w = World::new().await;
        let (_, secret) = w.key_of(&w.member).await;
        w.set_active(&w.member, false).await;
        let e = refused(w.auth(&secret).await, ErrorCode::ApiKeyOwnerInactive);
        assert_eq!(e.status(), 403);
        w.set_active(&w.member, true).await;
        w.auth(&secret).await.unwrap();
    }

    #[tokio::test]
    async fn the_free_plan_and_plans_without_api_access_refuse_keys_at_use() {
        // Decision 6: keys are created on any plan; the gate applies when one is used.
        let w = World::on_plan("free").await;
        let (_, secret) = w.key_of(&w.admin).await;
        let e = refused(w.auth(&secret).await, ErrorCode::PlanFreeApiKeysForbidden);
        assert_eq!(e.status(), 403);
        w.patch_org(Some("business"), Some(false)).await;
        refused(
            w.auth(&secret).await,
            ErrorCode::PlanMissingCoreApiIntegrations,
        );
        w.patch_org(None, Some(true)).await;
        w.auth(&secret).await.unwrap();
        // A free plan with api_access still set is refused as free.
        w.patch_org(Some("free"), Some(true)).await;
        refused(w.auth(&secret).await, ErrorCode::PlanFreeApiKeysForbidden);
    }

    #[tokio::test]
    async fn the_gates_apply_in_the_spec_order() {
        let w = World::on_plan("free").await;
        let input = CreateKey {
            expiration: Some(T0 + Duration::hours(1)),
            ..named("all wrong")
        };
        let (key, secret) = w.create(&w.member, input).await.unwrap();
        w.set_active(&w.member, false).await;
        w.at(Duration::hours(2));
        w.set_key_active(&key, false).await;
        // An inactive key first, then expiry, then the owner, then the plan.
        refused(w.auth(&secret).await, ErrorCode::InvalidCredentials);
        w.set_key_active(&key, true).await;
        refused(w.auth(&secret).await, ErrorCode::CredentialExpired);
        w.at(Duration::ZERO);
        refused(w.auth(&secret).await, ErrorCode::ApiKeyOwnerInactive);
        w.set_active(&w.member, true).await;
        refused(w.auth(&secret).await, ErrorCode::PlanFreeApiKeysForbidden);
    }

    // ------------------------------------------------------------ CLI tokens

    #[tokio::test]
    async fn a_cli_token_is_stored_hashed_and_authenticates_its_user() {
        let w = World::new().await;
        let token = w.service.issue_cli_token(&w.guest, None).await.unwrap();
        assert!(token.expose().starts_with("tcc_"), "{token:?}");
        assert_eq!(
            Secret::parse(SecretKind::CliToken, token.expose()),
            Some(token.clone())
        );
        let stored = w
            .keys
            .find_cli_token_credential(&token.hash())
            .await
            .unwrap()
            .expect("stored under its hash");
        assert_eq!((stored.user.id, stored.org_id), (w.guest.id, w.org.id));
        assert_eq!(stored.expires_at, None);
        let principal = w
            .service
            .authenticate_cli_token(&format!(" {} ", token.expose()))
            .await
            .unwrap();
        assert_eq!(principal.user, w.guest);
        assert_eq!(principal.org.id, w.org.id);
        assert_eq!(
            principal.credential,
            CredentialKind::CliToken { id: stored.id }
        );
        // Years later, a token without a lifetime still works.
        w.at(Duration::days(3650));
        w.service
            .authenticate_cli_token(token.expose())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn cli_token_format_is_checked_before_any_io() {
        let w = World::new().await;
        let api_key = Secret::generate(SecretKind::ApiKey);
        for presented in ["", "tcc_", "Bearer x", api_key.expose()] {
            refused(
                w.service.authenticate_cli_token(presented).await,
                ErrorCode::InvalidCredentials,
            );
        }
        assert_eq!(w.keys.port_calls(), 0);
        let unknown = Secret::generate(SecretKind::CliToken);
        refused(
            w.service.authenticate_cli_token(unknown.expose()).await,
            ErrorCode::InvalidCredentials,
        );
    }

    #[tokio::test]
    async fn a_cli_token_expires_after_its_lifetime() {
        let w = World::new().await;
        let token = w
            .service
            .issue_cli_token(&w.member, Some(Duration::hours(8)))
            .await
            .unwrap();
        let stored = w
            .keys
            .find_cli_token_credential(&token.hash())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.expires_at, Some(T0 + Duration::hours(8)));
        w.at(Duration::hours(8) - Duration::microseconds(1));
        w.service
            .authenticate_cli_token(token.expose())
            .await
            .unwrap();
        w.at(Duration::hours(8));
        let e = refused(
            w.service.authenticate_cli_token(token.expose()).await,
            ErrorCode::CredentialExpired,
        );
        assert!(e.detail().contains("Log in again"), "{e}");
    }

    #[tokio::test]
    async fn a_revoked_token_or_a_deactivated_user_is_invalid_credentials() {
        let w = World::new().await;
        let token = w
            .service
            .issue_cli_token(&w.member, Some(Duration::hours(1)))
            .await
            .unwrap();
        w.set_active(&w.member, false).await;
        refused(
            w.service.authenticate_cli_token(token.expose()).await,
            ErrorCode::InvalidCredentials,
        );
        w.set_active(&w.member, true).await;
        let principal = w
            .service
            .authenticate_cli_token(token.expose())
            .await
            .unwrap();
        let CredentialKind::CliToken { id } = principal.credential else {
            panic!("{principal:?}");
        };
        w.keys.revoke_cli_token(id).await.unwrap();
        refused(
            w.service.authenticate_cli_token(token.expose()).await,
            ErrorCode::InvalidCredentials,
        );
        // Revoked and expired: revocation is answered first.
        w.at(Duration::hours(2));
        refused(
            w.service.authenticate_cli_token(token.expose()).await,
            ErrorCode::InvalidCredentials,
        );
    }

    #[tokio::test]
    async fn cli_tokens_pass_no_plan_gate() {
        // The free plan's CLI rules are per route (`check_cli_access`), not here.
        let w = World::on_plan("free").await;
        let token = w.service.issue_cli_token(&w.member, None).await.unwrap();
        let principal = w
            .service
            .authenticate_cli_token(token.expose())
            .await
            .unwrap();
        assert_eq!(principal.org.plan, teamcomm_org::PlanTier::Free);
    }

    // ------------------------------------------------------------ web sessions

    #[tokio::test]
    async fn a_session_resolves_to_its_active_person_and_organization() {
        let w = World::on_plan("free").await;
        let (user, org) = w.service.session_user(w.org.id, w.guest.id).await.unwrap();
        assert_eq!(user, w.guest);
        assert_eq!(org.id, w.org.id);
        assert_eq!(w.keys.port_calls(), 0, "sessions never read keys");
    }

    #[tokio::test]
    async fn a_session_of_a_missing_deactivated_or_moved_person_is_invalid_credentials() {
        let w = World::new().await;
        w.set_active(&w.member, false).await;
        let e = refused(
            w.service.session_user(w.org.id, w.member.id).await,
            ErrorCode::InvalidCredentials,
        );
        assert_eq!(e.status(), 401);
        refused(
            w.service.session_user(w.org.id, UserId::new()).await,
            ErrorCode::InvalidCredentials,
        );
        // A token naming another organization than the person's.
        refused(
            w.service
                .session_user(w.other_admin.org_id, w.admin.id)
                .await,
            ErrorCode::InvalidCredentials,
        );
        w.set_active(&w.member, true).await;
        w.service.session_user(w.org.id, w.member.id).await.unwrap();
    }

    // ------------------------------------------------------------ creating keys

    #[tokio::test]
    async fn a_new_key_shows_its_secret_once_and_stores_only_its_hash() {
        let w = World::new().await;
        let (key, secret) = w.create(&w.member, named("  deploy bot  ")).await.unwrap();
        assert_eq!(
            Secret::parse(SecretKind::ApiKey, secret.expose()),
            Some(secret.clone())
        );
        assert_eq!(w.keys.stored_hash(key.id), Some(secret.hash()));
        assert_eq!(key.key_suffix, secret.suffix());
        assert_eq!(key.name, "deploy bot");
        assert_eq!(key.org_id, w.org.id);
        assert_eq!(key.owner.id, w.member.id);
        assert_eq!(key.owner.full_name, w.member.full_name());
        assert_eq!(key.created_by.as_ref().map(|p| p.id), Some(w.member.id));
        assert!(key.active && !key.is_agent_key);
        assert_eq!(key.scopes, Scope::DEFAULT.to_vec());
        assert_eq!((key.expiration, key.last_usage_at), (None, None));
        assert_eq!(key.created_at, T0);
        assert_eq!(w.stored(&key).await, key);
        // Later reads never carry the secret: the record has no field for it, and a second key
        // gets a different one.
        let (_, again) = w.create(&w.member, named("deploy bot")).await.unwrap();
        assert_ne!(again, secret);
    }

    #[tokio::test]
    async fn key_names_are_trimmed_and_bounded() {
        let w = World::new().await;
        for blank in ["", "   ", "\t\n"] {
            refused_field(w.create(&w.admin, named(blank)).await, "name");
        }
        refused_field(w.create(&w.admin, named(&"n".repeat(256))).await, "name");
        // The shared rule for names: nothing invisible-only, no control or bidi characters.
        for hostile in [
            "\u{200b}",
            " \u{feff}\u{2060} ",
            "ci\nbot",
            "ci\u{0}",
            "evil\u{202e}txt",
        ] {
            refused_field(w.create(&w.admin, named(hostile)).await, "name");
            let (key, _) = w.key_of(&w.admin).await;
            let renamed = UpdateKey {
                name: Some(hostile.to_owned()),
                ..UpdateKey::default()
            };
            refused_field(w.update(&w.admin, &key, renamed).await, "name");
            w.service.delete_key(&w.admin, key.id).await.unwrap();
        }
        assert_eq!(w.keys.key_count(), 0);
        let (key, _) = w.create(&w.admin, named(&"é".repeat(255))).await.unwrap();
        assert_eq!(key.name.chars().count(), 255);
    }

    #[tokio::test]
    async fn only_admins_create_agent_keys() {
        let w = World::new().await;
        let agent = || CreateKey {
            is_agent_key: true,
            ..named("bot")
        };
        for actor in [&w.member, &w.guest] {
            let e = refused(w.create(actor, agent()).await, ErrorCode::AgentKeyAdminOnly);
            assert_eq!(e.status(), 400);
        }
        assert_eq!(w.keys.key_count(), 0);
        let (key, _) = w.create(&w.admin, agent()).await.unwrap();
        assert!(key.is_agent_key);
        assert_eq!(key.owner.id, w.admin.id);
        let for_member = CreateKey {
            for_user_id: Some(w.member.id.to_string()),
            ..agent()
        };
        let (key, _) = w.create(&w.admin, for_member).await.unwrap();
        assert!(key.is_agent_key);
        assert_eq!(key.owner.id, w.member.id);
        assert_eq!(key.created_by.map(|p| p.id), Some(w.admin.id));
    }

    #[tokio::test]
    async fn members_and_guests_create_keys_for_themselves_only() {
        let w = World::new().await;
        for (actor, other) in [(&w.member, &w.admin), (&w.guest, &w.member)] {
            // Decision 10: one's own id is not "another user", in any spelling.
            let own = actor.id.to_string().to_uppercase();
            let (key, _) = w
                .create(actor, for_user(&format!(" {own} ")))
                .await
                .unwrap();
            assert_eq!(key.owner.id, actor.id);
            let before = w.keys.key_count();
            for raw in [
                other.id.to_string(),
                "not-a-uuid".to_owned(),
                w.other_admin.id.to_string(),
            ] {
                refused(
                    w.create(actor, for_user(&raw)).await,
                    ErrorCode::OrgAdminRequired,
                );
            }
            assert_eq!(w.keys.key_count(), before);
        }
    }

    #[tokio::test]
    async fn admins_create_keys_for_active_people_of_their_organization() {
        let w = World::new().await;
        let (key, _) = w
            .create(&w.admin, for_user(&w.guest.id.to_string()))
            .await
            .unwrap();
        assert_eq!(key.owner.id, w.guest.id);
        assert_eq!(key.created_by.map(|p| p.id), Some(w.admin.id));
        let (own, _) = w
            .create(&w.admin, for_user(&w.admin.id.to_string()))
            .await
            .unwrap();
        assert_eq!(own.owner.id, w.admin.id);
        for raw in [
            "not-a-uuid".to_owned(),
            "".to_owned(),
            UserId::new().to_string(),
            w.other_admin.id.to_string(),
        ] {
            refused(
                w.create(&w.admin, for_user(&raw)).await,
                ErrorCode::TargetUserNotFound,
            );
        }
        w.set_active(&w.member, false).await;
        refused(
            w.create(&w.admin, for_user(&w.member.id.to_string())).await,
            ErrorCode::TargetUserInactive,
        );
        assert_eq!(w.keys.key_count(), 2);
    }

    #[tokio::test]
    async fn scopes_default_collapse_and_refuse_unknown_names() {
        let w = World::new().await;
        let with = |names: &[&str]| CreateKey {
            scopes: Some(names.iter().map(|s| (*s).to_owned()).collect()),
            ..named("scoped")
        };
        let (key, _) = w
            .create(
                &w.member,
                with(&["tasks:admin", "tasks:read", "tasks:admin"]),
            )
            .await
            .unwrap();
        assert_eq!(key.scopes, vec![Scope::TasksRead, Scope::TasksAdmin]);
        assert_eq!(w.stored(&key).await.scopes, key.scopes);
        let (none, _) = w.create(&w.member, with(&[])).await.unwrap();
        assert!(none.scopes.is_empty());
        for bad in [&["tasks:read", "tasks:delete"][..], &["TASKS:READ"], &[""]] {
            refused_field(w.create(&w.member, with(bad)).await, "scopes");
        }
        assert_eq!(w.keys.key_count(), 2);
    }

    #[tokio::test]
    async fn an_expiration_must_be_in_the_future() {
        let w = World::new().await;
        let expiring = |at| CreateKey {
            expiration: Some(at),
            ..named("temp")
        };
        for at in [T0, T0 - Duration::days(1)] {
            refused_field(w.create(&w.member, expiring(at)).await, "expiration");
        }
        assert_eq!(w.keys.key_count(), 0);
        let soon = T0 + Duration::microseconds(1);
        let (key, _) = w.create(&w.member, expiring(soon)).await.unwrap();
        assert_eq!(w.stored(&key).await.expiration, Some(soon));
    }

    // ------------------------------------------------------------ reading keys

    #[tokio::test]
    async fn admins_list_the_organization_and_others_their_own() {
        let w = World::new().await;
        let (a, _) = w.key_of(&w.admin).await;
        w.at(Duration::seconds(1));
        let (m, _) = w.key_of(&w.member).await;
        w.at(Duration::seconds(2));
        let (g, _) = w.key_of(&w.guest).await;
        w.key_of(&w.other_admin).await;
        let ids = |page: Page<ApiKey>| {
            (
                page.count,
                page.results.into_iter().map(|k| k.id).collect::<Vec<_>>(),
            )
        };
        let all = w
            .service
            .list_keys(&w.admin, PageRequest::default())
            .await
            .unwrap();
        assert_eq!(ids(all), (3, vec![g.id, m.id, a.id]));
        let second = PageRequest {
            offset: 1,
            limit: 1,
        };
        let page = w.service.list_keys(&w.admin, second).await.unwrap();
        assert_eq!(ids(page), (3, vec![m.id]));
        for (actor, own) in [(&w.member, &m), (&w.guest, &g)] {
            let listed = w
                .service
                .list_keys(actor, PageRequest::default())
                .await
                .unwrap();
            assert_eq!(ids(listed), (1, vec![own.id]));
        }
        let other = w
            .service
            .list_keys(&w.other_admin, PageRequest::default())
            .await
            .unwrap();
        assert_eq!(other.count, 1);
        assert!(other.results.iter().all(|k| k.org_id != w.org.id));
    }

    #[tokio::test]
    async fn a_key_is_visible_to_its_owner_and_admins_only() {
        let w = World::new().await;
        let (key, _) = w.key_of(&w.member).await;
        assert_eq!(w.service.get_key(&w.member, key.id).await.unwrap(), key);
        assert_eq!(w.service.get_key(&w.admin, key.id).await.unwrap(), key);
        for outsider in [&w.guest, &w.other_admin] {
            refused(
                w.service.get_key(outsider, key.id).await,
                ErrorCode::NotFound,
            );
        }
        refused(
            w.service.get_key(&w.admin, ApiKeyId::new()).await,
            ErrorCode::NotFound,
        );
    }

    // ------------------------------------------------------------ changing keys

    #[tokio::test]
    async fn updates_apply_each_given_field_and_keep_the_rest() {
        let w = World::new().await;
        let input = CreateKey {
            expiration: Some(T0 + Duration::days(30)),
            ..named("ci")
        };
        let (key, secret) = w.create(&w.member, input).await.unwrap();
        let renamed = w
            .update(
                &w.member,
                &key,
                UpdateKey {
                    name: Some("  ci-2 ".to_owned()),
                    ..UpdateKey::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(renamed.name, "ci-2");
        assert_eq!(
            (renamed.expiration, &renamed.scopes),
            (key.expiration, &key.scopes)
        );
        let rescoped = w
            .update(
                &w.member,
                &key,
                UpdateKey {
                    scopes: Some(vec!["tasks:admin".to_owned()]),
                    expiration: Some(None),
                    ..UpdateKey::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(rescoped.scopes, vec![Scope::TasksAdmin]);
        assert_eq!(rescoped.expiration, None);
        assert_eq!(rescoped.name, "ci-2");
        assert_eq!(w.stored(&key).await, rescoped);
        assert_eq!(
            w.keys.stored_hash(key.id),
            Some(secret.hash()),
            "no regeneration asked"
        );
        let (_, no_secret) = w
            .service
            .update_key(&w.member, key.id, UpdateKey::default())
            .await
            .unwrap();
        assert!(no_secret.is_none());
    }

    #[tokio::test]
    async fn invalid_updates_change_nothing() {
        let w = World::new().await;
        let (key, _) = w.key_of(&w.member).await;
        let cases = [
            (
                "name",
                UpdateKey {
                    name: Some(" ".to_owned()),
                    active: Some(false),
                    ..UpdateKey::default()
                },
            ),
            (
                "name",
                UpdateKey {
                    name: Some("x".repeat(256)),
                    ..UpdateKey::default()
                },
            ),
            (
                "scopes",
                UpdateKey {
                    scopes: Some(vec!["tasks:all".to_owned()]),
                    regenerate: true,
                    ..UpdateKey::default()
                },
            ),
            (
                "expiration",
                UpdateKey {
                    expiration: Some(Some(T0)),
                    ..UpdateKey::default()
                },
            ),
        ];
        for (field, input) in cases {
            refused_field(w.update(&w.member, &key, input).await, field);
            assert_eq!(w.stored(&key).await, key);
        }
    }

    #[tokio::test]
    async fn regenerating_replaces_the_secret_at_once() {
        let w = World::new().await;
        let (key, old) = w.key_of(&w.member).await;
        w.auth(&old).await.unwrap();
        let (updated, new) = w
            .service
            .update_key(
                &w.member,
                key.id,
                UpdateKey {
                    regenerate: true,
                    ..UpdateKey::default()
                },
            )
            .await
            .unwrap();
        let new = new.expect("the new secret is shown once");
        assert_ne!(new, old);
        assert_eq!(updated.id, key.id);
        assert_eq!(updated.key_suffix, new.suffix());
        assert_eq!(w.keys.stored_hash(key.id), Some(new.hash()));
        refused(w.auth(&old).await, ErrorCode::InvalidCredentials);
        assert_eq!(w.auth(&new).await.unwrap().user, w.member);
    }

    #[tokio::test]
    async fn deactivating_a_key_stops_it_at_once() {
        let w = World::new().await;
        let (key, secret) = w.key_of(&w.member).await;
        let off = w
            .update(
                &w.admin,
                &key,
                UpdateKey {
                    active: Some(false),
                    ..UpdateKey::default()
                },
            )
            .await
            .unwrap();
        assert!(!off.active);
        refused(w.auth(&secret).await, ErrorCode::InvalidCredentials);
    }

    #[tokio::test]
    async fn only_the_owner_and_admins_change_or_delete_a_key() {
        let w = World::new().await;
        let (key, secret) = w.key_of(&w.member).await;
        let rename = || UpdateKey {
            name: Some("taken over".to_owned()),
            regenerate: true,
            ..UpdateKey::default()
        };
        for outsider in [&w.guest, &w.other_admin] {
            refused(
                w.update(outsider, &key, rename()).await,
                ErrorCode::NotFound,
            );
            refused(
                w.service.delete_key(outsider, key.id).await,
                ErrorCode::NotFound,
            );
        }
        assert_eq!(w.stored(&key).await, key);
        w.auth(&secret).await.unwrap();
        assert_eq!(
            w.update(&w.admin, &key, rename()).await.unwrap().name,
            "taken over"
        );
        w.service.delete_key(&w.admin, key.id).await.unwrap();
        refused(
            w.service.get_key(&w.member, key.id).await,
            ErrorCode::NotFound,
        );
        refused(
            w.service.delete_key(&w.admin, key.id).await,
            ErrorCode::NotFound,
        );
        let (own, own_secret) = w.key_of(&w.guest).await;
        w.service.delete_key(&w.guest, own.id).await.unwrap();
        assert_eq!(w.keys.key_count(), 0);
        refused(w.auth(&own_secret).await, ErrorCode::InvalidCredentials);
    }

    // ------------------------------------------------------------ usage tracking

    #[tokio::test]
    async fn reads_show_the_last_use_before_it_is_flushed() {
        let w = World::new().await;
        let (key, secret) = w.key_of(&w.member).await;
        w.at(Duration::seconds(10));
        w.auth(&secret).await.unwrap();
        let seen = Some(T0 + Duration::seconds(10));
        assert_eq!(
            w.service
                .get_key(&w.member, key.id)
                .await
                .unwrap()
                .last_usage_at,
            seen
        );
        let listed = w
            .service
            .list_keys(&w.admin, PageRequest::default())
            .await
            .unwrap();
        assert_eq!(listed.results[0].last_usage_at, seen);
        assert_eq!(w.keys.stored_last_usage(key.id), None);

        assert_eq!(w.service.flush_usage().await.unwrap(), 1);
        assert_eq!(w.keys.stored_last_usage(key.id), seen);
        assert_eq!(w.service.usage().pending(key.id), None);
        assert_eq!(w.service.flush_usage().await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_failed_flush_keeps_the_uses_for_the_next_one() {
        let w = World::new().await;
        let (key, secret) = w.key_of(&w.member).await;
        w.auth(&secret).await.unwrap();
        w.keys.set_unavailable(true);
        refused(w.service.flush_usage().await, ErrorCode::ServiceUnavailable);
        assert_eq!(w.service.usage().pending(key.id), Some(T0));
        w.keys.set_unavailable(false);
        assert_eq!(w.service.flush_usage().await.unwrap(), 1);
        assert_eq!(w.keys.stored_last_usage(key.id), Some(T0));
    }

    #[tokio::test]
    async fn a_store_outage_is_503_never_a_credential_refusal() {
        let w = World::new().await;
        let (_, secret) = w.key_of(&w.member).await;
        let token = w.service.issue_cli_token(&w.member, None).await.unwrap();
        w.keys.set_unavailable(true);
        let e = refused(w.auth(&secret).await, ErrorCode::ServiceUnavailable);
        assert_eq!(e.status(), 503);
        refused(
            w.service.authenticate_cli_token(token.expose()).await,
            ErrorCode::ServiceUnavailable,
        );
        refused(
            w.service.list_keys(&w.admin, PageRequest::default()).await,
            ErrorCode::ServiceUnavailable,
        );
    }

    #[tokio::test]
    async fn a_newer_stored_use_wins_over_an_older_pending_one() {
        // Another instance flushed a later use than this one saw.
        let w = World::new().await;
        let (key, secret) = w.key_of(&w.member).await;
        let later = T0 + Duration::minutes(10);
        w.keys.record_key_usage(&[(key.id, later)]).await.unwrap();
        w.at(Duration::minutes(5));
        w.auth(&secret).await.unwrap();
        assert_eq!(
            w.service
                .get_key(&w.member, key.id)
                .await
                .unwrap()
                .last_usage_at,
            Some(later)
        );
        w.service.flush_usage().await.unwrap();
        assert_eq!(w.keys.stored_last_usage(key.id), Some(later));
    }
}
