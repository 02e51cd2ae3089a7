//! SQL of the CLI one-time-code login (`login_codes`, `organization_login_numbers`): the rules are
//! `teamcomm_keys::LoginService`'s; here a try is claimed and a code used each in one statement,
//! so concurrent verifications cannot pass the limits.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use teamcomm_kernel::RepoError;
use teamcomm_keys::{AddressKey, ClaimedTry, LoginAccount, LoginCodeRepository, NewLoginCode};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::Database;
use crate::error::db_error;
use crate::rows::{OrgRow, UserRow};
use crate::schema::login_codes::{login_codes, organization_login_numbers};
use crate::schema::{organizations, users};

/// Postgres implementation of [`LoginCodeRepository`].
#[derive(Clone)]
pub struct PgLoginCodes {
    db: Database,
}

impl PgLoginCodes {
    pub fn new(db: Database) -> Self {
        PgLoginCodes { db }
    }
}

fn fixed<const N: usize>(column: &str, bytes: Vec<u8>) -> Result<[u8; N], RepoError> {
    bytes
        .try_into()
        .map_err(|b: Vec<u8>| RepoError::Other(format!("{column} has {} bytes", b.len())))
}

#[async_trait]
impl LoginCodeRepository for PgLoginCodes {
    async fn accounts(&self, address: &str) -> Result<Vec<LoginAccount>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<(i64, OrgRow, UserRow)> = users::table
            .inner_join(organizations::table.inner_join(organization_login_numbers::table))
            .filter(users::search_email.eq(address))
            .filter(users::is_active.eq(true))
            .order((
                organizations::name.asc(),
                organization_login_numbers::number.asc(),
            ))
            .select((
                organization_login_numbers::number,
                OrgRow::as_select(),
                UserRow::as_select(),
            ))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter()
            .map(|(number, org, user)| {
                Ok(LoginAccount {
                    number,
                    organization: org.try_into()?,
                    user: user.try_into()?,
                })
            })
            .collect()
    }

    async fn replace_code(
        &self,
        code: &NewLoginCode,
        purge_before: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(login_codes::table.filter(login_codes::expires_at.lt(purge_before)))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        diesel::insert_into(login_codes::table)
            .values((
                login_codes::address_hash.eq(code.address.0.as_slice()),
                login_codes::id.eq(code.id),
                login_codes::salt.eq(code.salt.as_slice()),
                login_codes::code_hash.eq(code.hash.as_slice()),
                login_codes::tries.eq(0),
                login_codes::expires_at.eq(code.expires_at),
                login_codes::used_at.eq(None::<OffsetDateTime>),
                login_codes::created_at.eq(code.created_at),
            ))
            .on_conflict(login_codes::address_hash)
            .do_update()
            .set((
                login_codes::id.eq(excluded(login_codes::id)),
                login_codes::salt.eq(excluded(login_codes::salt)),
                login_codes::code_hash.eq(excluded(login_codes::code_hash)),
                login_codes::tries.eq(0),
                login_codes::expires_at.eq(excluded(login_codes::expires_at)),
                login_codes::used_at.eq(None::<OffsetDateTime>),
                login_codes::created_at.eq(excluded(login_codes::created_at)),
            ))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn claim_try(
        &self,
        address: &AddressKey,
        now: OffsetDateTime,
        max_tries: u32,
    ) -> Result<Option<ClaimedTry>, RepoError> {
        let mut conn = self.db.conn().await?;
        let max = i32::try_from(max_tries).unwrap_or(i32::MAX);
        let claimed: Option<(Uuid, Vec<u8>, Vec<u8>, i32)> = diesel::update(
            login_codes::table
                .filter(login_codes::address_hash.eq(address.0.as_slice()))
                .filter(login_codes::used_at.is_null())
                .filter(login_codes::expires_at.gt(now))
                .filter(login_codes::tries.lt(max)),
        )
        .set(login_codes::tries.eq(login_codes::tries + 1))
        .returning((
            login_codes::id,
            login_codes::salt,
            login_codes::code_hash,
            login_codes::tries,
        ))
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
        claimed
            .map(|(id, salt, hash, tries)| {
                Ok(ClaimedTry {
                    id,
                    salt: fixed("login_codes.salt", salt)?,
                    hash: fixed("login_codes.code_hash", hash)?,
                    tries: u32::try_from(tries).unwrap_or(0),
                })
            })
            .transpose()
    }

    async fn release_try(&self, id: Uuid) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::update(
            login_codes::table
                .filter(login_codes::id.eq(id))
                .filter(login_codes::tries.gt(0)),
        )
        .set(login_codes::tries.eq(login_codes::tries - 1))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn consume(&self, id: Uuid, now: OffsetDateTime) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::update(
            login_codes::table
                .filter(login_codes::id.eq(id))
                .filter(login_codes::used_at.is_null()),
        )
        .set(login_codes::used_at.eq(now))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(n == 1)
    }
}
