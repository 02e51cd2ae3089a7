//! SQL of API keys and CLI tokens.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use teamcomm_kernel::{ApiKeyId, CliTokenId, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_keys::{
    ApiKey, CliTokenCredential, KeyChanges, KeyCredential, KeyListScope, KeyRepository,
    NewKeyRecord, PersonRef, Scope, SecretHash,
};
use teamcomm_org::full_name;
use time::OffsetDateTime;
use uuid::Uuid;

use super::paging::load_page;
use crate::Database;
use crate::error::db_error;
use crate::rows::{UserRow, unknown_value};
use crate::schema::{api_keys, cli_tokens, users};

/// Postgres implementation of [`KeyRepository`].
#[derive(Clone)]
pub struct PgKeyRepository {
    db: Database,
}

impl PgKeyRepository {
    pub fn new(db: Database) -> Self {
        PgKeyRepository { db }
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
struct KeyRow {
    id: Uuid,
    organization_id: Uuid,
    name: String,
    key_suffix: String,
    active: bool,
    is_agent_key: bool,
    scopes: Vec<String>,
    last_usage_at: Option<OffsetDateTime>,
    expiration: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
}

type PersonCols = (Uuid, String, String);

diesel::alias!(users as key_owner: KeyOwner, users as key_creator: KeyCreator);

fn person((id, first, last): PersonCols) -> PersonRef {
    PersonRef {
        id: UserId(id),
        full_name: full_name(&first, &last),
    }
}

/// Stored scope names as the domain's scopes; a name the domain does not know is an error.
fn scopes_from(names: &[String]) -> Result<Vec<Scope>, RepoError> {
    names
        .iter()
        .map(|n| Scope::parse(n).ok_or_else(|| unknown_value("api_keys.scopes", n)))
        .collect()
}

fn scope_names(scopes: &[Scope]) -> Vec<String> {
    scopes.iter().map(|s| s.as_str().to_owned()).collect()
}

/// A key with its owner's and creator's names.
#[derive(Debug, Queryable)]
struct KeyWithPeopleRow {
    key: KeyRow,
    owner: PersonCols,
    creator: Option<PersonCols>,
}

impl TryFrom<KeyWithPeopleRow> for ApiKey {
    type Error = RepoError;
    fn try_from(
        KeyWithPeopleRow {
            key,
            owner,
            creator,
        }: KeyWithPeopleRow,
    ) -> Result<Self, RepoError> {
        Ok(ApiKey {
            id: ApiKeyId(key.id),
            org_id: OrgId(key.organization_id),
            name: key.name,
            key_suffix: key.key_suffix,
            active: key.active,
            owner: person(owner),
            created_by: creator.map(person),
            is_agent_key: key.is_agent_key,
            scopes: scopes_from(&key.scopes)?,
            last_usage_at: key.last_usage_at,
            expiration: key.expiration,
            created_at: key.created_at,
        })
    }
}

/// What authentication reads of a key: the key, its stored hash, and its owner.
#[derive(Debug, Queryable)]
struct KeyCredentialRow {
    id: Uuid,
    organization_id: Uuid,
    active: bool,
    is_agent_key: bool,
    scopes: Vec<String>,
    expiration: Option<OffsetDateTime>,
    key_hash: Vec<u8>,
    owner: UserRow,
}

impl TryFrom<KeyCredentialRow> for KeyCredential {
    type Error = RepoError;
    fn try_from(r: KeyCredentialRow) -> Result<Self, RepoError> {
        Ok(KeyCredential {
            id: ApiKeyId(r.id),
            org_id: OrgId(r.organization_id),
            active: r.active,
            is_agent_key: r.is_agent_key,
            scopes: scopes_from(&r.scopes)?,
            expiration: r.expiration,
            owner: r.owner.try_into()?,
        })
    }
}

/// What authentication reads of a CLI token: the token and its user.
#[derive(Debug, Queryable)]
struct CliTokenCredentialRow {
    id: Uuid,
    organization_id: Uuid,
    expires_at: Option<OffsetDateTime>,
    revoked_at: Option<OffsetDateTime>,
    user: UserRow,
}

impl TryFrom<CliTokenCredentialRow> for CliTokenCredential {
    type Error = RepoError;
    fn try_from(r: CliTokenCredentialRow) -> Result<Self, RepoError> {
        Ok(CliTokenCredential {
            id: CliTokenId(r.id),
            org_id: OrgId(r.organization_id),
            expires_at: r.expires_at,
            revoked: r.revoked_at.is_some(),
            user: r.user.try_into()?,
        })
    }
}

/// The keys of an organization joined with their owner and creator, boxed so that callers can
/// filter further; select `key_with_people_columns!()` in [`key_order`].
macro_rules! keys_with_people {
    ($org:expr) => {
        api_keys::table
            .inner_join(key_owner.on(key_owner.field(users::id).eq(api_keys::owner_id)))
            .left_join(
                key_creator.on(api_keys::created_by_id.eq(key_creator.field(users::id).nullable())),
            )
            .filter(api_keys::organization_id.eq($org.0))
            .into_boxed()
    };
}

/// The columns of a [`KeyWithPeopleRow`].
macro_rules! key_with_people_columns {
    () => {
        (
            KeyRow::as_select(),
            key_owner.fields((users::id, users::first_name, users::last_name)),
            key_creator
                .fields((users::id, users::first_name, users::last_name))
                .nullable(),
        )
    };
}

/// Keys newest first.
fn key_order() -> (
    diesel::dsl::Desc<api_keys::created_at>,
    diesel::dsl::Desc<api_keys::id>,
) {
    (api_keys::created_at.desc(), api_keys::id.desc())
}

#[derive(AsChangeset)]
#[diesel(table_name = api_keys)]
struct KeyRowChanges<'a> {
    name: Option<&'a str>,
    active: Option<bool>,
    expiration: Option<Option<OffsetDateTime>>,
    scopes: Option<Vec<String>>,
    key_hash: Option<&'a [u8]>,
    key_suffix: Option<&'a str>,
    updated_at: OffsetDateTime,
}

#[async_trait]
impl KeyRepository for PgKeyRepository {
    async fn insert_key(&self, new: &NewKeyRecord) -> Result<ApiKey, RepoError> {
        {
            let mut conn = self.db.conn().await?;
            diesel::insert_into(api_keys::table)
                .values((
                    api_keys::id.eq(new.id.0),
                    api_keys::organization_id.eq(new.org_id.0),
                    api_keys::owner_id.eq(new.owner_id.0),
                    api_keys::created_by_id.eq(new.created_by.map(|u| u.0)),
                    api_keys::name.eq(&new.name),
                    api_keys::key_hash.eq(new.hash.as_bytes()),
                    api_keys::key_suffix.eq(&new.suffix),
                    api_keys::is_agent_key.eq(new.is_agent_key),
                    api_keys::scopes.eq(scope_names(&new.scopes)),
                    api_keys::expiration.eq(new.expiration),
                ))
                .execute(&mut conn)
                .await
                .map_err(db_error)?;
        }
        self.get_key(new.org_id, new.id).await
    }

    async fn find_key_credential(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<KeyCredential>, RepoError> {
        let mut conn = self.db.conn().await?;
        let found: Option<KeyCredentialRow> = api_keys::table
            .inner_join(users::table.on(users::id.eq(api_keys::owner_id)))
            .filter(api_keys::key_hash.eq(hash.as_bytes()))
            .select((
                api_keys::id,
                api_keys::organization_id,
                api_keys::active,
                api_keys::is_agent_key,
                api_keys::scopes,
                api_keys::expiration,
                api_keys::key_hash,
                UserRow::as_select(),
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        let Some(found) = found else {
            return Ok(None);
        };
        // The index lookup already matched; this constant-time check guards against collation or
        // driver surprises ever turning the lookup into a prefix match.
        if !hash.matches(&found.key_hash) {
            return Ok(None);
        }
        found.try_into().map(Some)
    }

    async fn list_keys(
        &self,
        org: OrgId,
        scope: KeyListScope,
        page: PageRequest,
    ) -> Result<Page<ApiKey>, RepoError> {
        let owner = match scope {
            KeyListScope::Organization => None,
            KeyListScope::OwnedBy(user) => Some(user),
        };
        let mut conn = self.db.conn().await?;
        let filtered = || {
            let q = keys_with_people!(org);
            match owner {
                Some(owner) => q.filter(api_keys::owner_id.eq(owner.0)),
                None => q,
            }
        };
        load_page::<KeyWithPeopleRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by(key_order()).select(key_with_people_columns!())
        })
        .await
    }

    async fn get_key(&self, org: OrgId, id: ApiKeyId) -> Result<ApiKey, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: KeyWithPeopleRow = keys_with_people!(org)
            .filter(api_keys::id.eq(id.0))
            .select(key_with_people_columns!())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn update_key(
        &self,
        org: OrgId,
        id: ApiKeyId,
        changes: &KeyChanges,
    ) -> Result<ApiKey, RepoError> {
        {
            let mut conn = self.db.conn().await?;
            let row_changes = KeyRowChanges {
                name: changes.name.as_deref(),
                active: changes.active,
                expiration: changes.expiration,
                scopes: changes.scopes.as_deref().map(scope_names),
                key_hash: changes.new_secret.as_ref().map(|(h, _)| h.as_bytes()),
                key_suffix: changes.new_secret.as_ref().map(|(_, s)| s.as_str()),
                updated_at: OffsetDateTime::now_utc(),
            };
            let updated = diesel::update(
                api_keys::table.filter(
                    api_keys::id
                        .eq(id.0)
                        .and(api_keys::organization_id.eq(org.0)),
                ),
            )
            .set(&row_changes)
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
            if updated == 0 {
                return Err(RepoError::NotFound);
            }
        }
        self.get_key(org, id).await
    }

    async fn delete_key(&self, org: OrgId, id: ApiKeyId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let deleted = diesel::delete(
            api_keys::table.filter(
                api_keys::id
                    .eq(id.0)
                    .and(api_keys::organization_id.eq(org.0)),
            ),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if deleted == 0 {
            Err(RepoError::NotFound)
        } else {
            Ok(())
        }
    }

    async fn record_key_usage(
        &self,
        batch: &[(ApiKeyId, OffsetDateTime)],
    ) -> Result<(), RepoError> {
        if batch.is_empty() {
            return Ok(());
        }
        let ids: Vec<Uuid> = batch.iter().map(|(id, _)| id.0).collect();
        let ats: Vec<OffsetDateTime> = batch.iter().map(|(_, at)| *at).collect();
        let mut conn = self.db.conn().await?;
        diesel::sql_query(
            "UPDATE api_keys SET last_usage_at = GREATEST(COALESCE(api_keys.last_usage_at, u.at), u.at) \
             FROM (SELECT id, max(at) AS at FROM unnest($1, $2) AS b(id, at) GROUP BY id) AS u \
             WHERE api_keys.id = u.id",
        )
        .bind::<Array<SqlUuid>, _>(ids)
        .bind::<Array<Timestamptz>, _>(ats)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn insert_cli_token(
        &self,
        org: OrgId,
        user: UserId,
        hash: &SecretHash,
        expires_at: Option<OffsetDateTime>,
    ) -> Result<CliTokenId, RepoError> {
        let id = CliTokenId::new();
        let mut conn = self.db.conn().await?;
        diesel::insert_into(cli_tokens::table)
            .values((
                cli_tokens::id.eq(id.0),
                cli_tokens::organization_id.eq(org.0),
                cli_tokens::user_id.eq(user.0),
                cli_tokens::token_hash.eq(hash.as_bytes()),
                cli_tokens::expires_at.eq(expires_at),
            ))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(id)
    }

    async fn find_cli_token_credential(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<CliTokenCredential>, RepoError> {
        let mut conn = self.db.conn().await?;
        let found: Option<CliTokenCredentialRow> = cli_tokens::table
            .inner_join(users::table)
            .filter(cli_tokens::token_hash.eq(hash.as_bytes()))
            .select((
                cli_tokens::id,
                cli_tokens::organization_id,
                cli_tokens::expires_at,
                cli_tokens::revoked_at,
                UserRow::as_select(),
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        found.map(TryInto::try_into).transpose()
    }

    async fn revoke_cli_token(&self, id: CliTokenId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::update(
            cli_tokens::table
                .find(id.0)
                .filter(cli_tokens::revoked_at.is_null()),
        )
        .set(cli_tokens::revoked_at.eq(OffsetDateTime::now_utc()))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_row(scopes: &[&str]) -> KeyWithPeopleRow {
        KeyWithPeopleRow {
            key: KeyRow {
                id: Uuid::nil(),
                organization_id: Uuid::nil(),
                name: "ci".into(),
                key_suffix: "abcd".into(),
                active: true,
                is_agent_key: false,
                scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
                last_usage_at: None,
                expiration: None,
                created_at: OffsetDateTime::UNIX_EPOCH,
            },
            owner: (Uuid::nil(), "Ada".into(), "Lovelace".into()),
            creator: None,
        }
    }

    #[test]
    fn known_scopes_decode_in_order() {
        let key = ApiKey::try_from(key_row(&["tasks:read", "tasks:admin"])).unwrap();
        assert_eq!(key.scopes, vec![Scope::TasksRead, Scope::TasksAdmin]);
        assert_eq!(key.owner.full_name, "Ada Lovelace");
    }

    #[test]
    fn an_unknown_scope_is_an_error_not_dropped() {
        // Dropping it would silently narrow (or, for a deny-list, widen) what the key may do.
        let err = ApiKey::try_from(key_row(&["tasks:read", "tasks:delete"])).unwrap_err();
        assert!(
            matches!(err, RepoError::Other(m) if m.contains("api_keys.scopes") && m.contains("tasks:delete"))
        );
    }
}
