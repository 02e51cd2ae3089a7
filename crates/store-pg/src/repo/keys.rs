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

use crate::Database;
use crate::error::db_error;
use crate::rows::UserRow;
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

fn scopes_from(names: &[String]) -> Vec<Scope> {
    // Unknown names (none are written by this code) are dropped rather than failing a read.
    names.iter().filter_map(|n| Scope::parse(n)).collect()
}

fn scope_names(scopes: &[Scope]) -> Vec<String> {
    scopes.iter().map(|s| s.as_str().to_owned()).collect()
}

fn to_key((row, owner, creator): (KeyRow, PersonCols, Option<PersonCols>)) -> ApiKey {
    ApiKey {
        id: ApiKeyId(row.id),
        org_id: OrgId(row.organization_id),
        name: row.name,
        key_suffix: row.key_suffix,
        active: row.active,
        owner: person(owner),
        created_by: creator.map(person),
        is_agent_key: row.is_agent_key,
        scopes: scopes_from(&row.scopes),
        last_usage_at: row.last_usage_at,
        expiration: row.expiration,
        created_at: row.created_at,
    }
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

impl PgKeyRepository {
    /// Keys of `org` with their owner and creator names, newest first.
    async fn load_keys(
        &self,
        org: OrgId,
        only: Option<ApiKeyId>,
        owner: Option<UserId>,
        page: PageRequest,
    ) -> Result<Vec<ApiKey>, RepoError> {
        let mut conn = self.db.conn().await?;
        let mut query = api_keys::table
            .inner_join(key_owner.on(key_owner.field(users::id).eq(api_keys::owner_id)))
            .left_join(
                key_creator.on(api_keys::created_by_id.eq(key_creator.field(users::id).nullable())),
            )
            .filter(api_keys::organization_id.eq(org.0))
            .select((
                KeyRow::as_select(),
                key_owner.fields((users::id, users::first_name, users::last_name)),
                key_creator
                    .fields((users::id, users::first_name, users::last_name))
                    .nullable(),
            ))
            .order_by((api_keys::created_at.desc(), api_keys::id.desc()))
            .into_boxed();
        if let Some(id) = only {
            query = query.filter(api_keys::id.eq(id.0));
        }
        if let Some(owner) = owner {
            query = query.filter(api_keys::owner_id.eq(owner.0));
        }
        let limit = i64::try_from(page.limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
        let rows: Vec<(KeyRow, PersonCols, Option<PersonCols>)> = query
            .limit(limit)
            .offset(offset)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(to_key).collect())
    }
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
        let found: Option<(
            (
                Uuid,
                Uuid,
                bool,
                bool,
                Vec<String>,
                Option<OffsetDateTime>,
                Vec<u8>,
            ),
            UserRow,
        )> = api_keys::table
            .inner_join(users::table.on(users::id.eq(api_keys::owner_id)))
            .filter(api_keys::key_hash.eq(hash.as_bytes()))
            .select((
                (
                    api_keys::id,
                    api_keys::organization_id,
                    api_keys::active,
                    api_keys::is_agent_key,
                    api_keys::scopes,
                    api_keys::expiration,
                    api_keys::key_hash,
                ),
                UserRow::as_select(),
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        let Some(((id, org, active, is_agent_key, scopes, expiration, stored), owner)) = found
        else {
            return Ok(None);
        };
        // The index lookup already matched; this constant-time check guards against collation or
        // driver surprises ever turning the lookup into a prefix match.
        if !hash.matches(&stored) {
            return Ok(None);
        }
        Ok(Some(KeyCredential {
            id: ApiKeyId(id),
            org_id: OrgId(org),
            active,
            is_agent_key,
            scopes: scopes_from(&scopes),
            expiration,
            owner: owner.try_into()?,
        }))
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
        let count: i64 = {
            let mut conn = self.db.conn().await?;
            let mut q = api_keys::table
                .filter(api_keys::organization_id.eq(org.0))
                .count()
                .into_boxed();
            if let Some(owner) = owner {
                q = q.filter(api_keys::owner_id.eq(owner.0));
            }
            q.get_result(&mut conn).await.map_err(db_error)?
        };
        let results = self.load_keys(org, None, owner, page).await?;
        Ok(Page {
            count: u64::try_from(count).unwrap_or(0),
            results,
        })
    }

    async fn get_key(&self, org: OrgId, id: ApiKeyId) -> Result<ApiKey, RepoError> {
        self.load_keys(
            org,
            Some(id),
            None,
            PageRequest {
                offset: 0,
                limit: 1,
            },
        )
        .await?
        .into_iter()
        .next()
        .ok_or(RepoError::NotFound)
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
             FROM unnest($1, $2) AS u(id, at) WHERE api_keys.id = u.id",
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
        let found: Option<(
            (Uuid, Uuid, Option<OffsetDateTime>, Option<OffsetDateTime>),
            UserRow,
        )> = cli_tokens::table
            .inner_join(users::table)
            .filter(cli_tokens::token_hash.eq(hash.as_bytes()))
            .select((
                (
                    cli_tokens::id,
                    cli_tokens::organization_id,
                    cli_tokens::expires_at,
                    cli_tokens::revoked_at,
                ),
                UserRow::as_select(),
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        let Some(((id, org, expires_at, revoked_at), user)) = found else {
            return Ok(None);
        };
        Ok(Some(CliTokenCredential {
            id: CliTokenId(id),
            org_id: OrgId(org),
            expires_at,
            revoked: revoked_at.is_some(),
            user: user.try_into()?,
        }))
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
