//! One-time-code login for the CLI (`/v1/cli/auth/request-code/`, `/v1/cli/auth/verify-code/`,
//! `/v1/cli/auth/logout/`): a person proves they read the mailbox of an address, and gets a CLI
//! token (`tcc_…`) for one of their organizations.
//!
//! The rules (docs/decisions.md, "One-time-code login"):
//! - a code is 6 random digits, valid [`LOGIN_CODE_TTL`], stored only as a salted SHA-256 bound
//!   to the address, under a hash of the address (neither the code nor the address is stored);
//! - a new request replaces the address's code, so the earlier one stops working;
//! - [`LOGIN_CODE_MAX_TRIES`] wrong tries kill the code; each try is claimed before the code is
//!   compared, so parallel guesses cannot exceed the limit; a right code never counts;
//! - a right code with several organizations and none chosen answers the list without using the
//!   code (the CLI posts the same code again with the organization's `id`);
//! - the answer to a request is the same for an unknown address as for an address with one
//!   organization, after the same work (a code is made, hashed and stored either way); only the
//!   mail differs, and the mail port never makes the answer wait for the mail;
//! - every request and verification spends the address's `auth` budget (the client address's is
//!   spent by the route policy);
//! - a login's token lives [`CLI_TOKEN_LIFETIME`] from the login, whether used or not.

use std::sync::Arc;

use async_trait::async_trait;
use rand::Rng;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use teamcomm_kernel::{Error, ErrorCode, RepoError, SharedClock};
use teamcomm_org::{Organization, User};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::{
    CredentialKind, CredentialRef, KeyRepository, Principal, RateLimits, RateScope, Secret,
    SecretKind,
};

/// How long a mailed code can be used.
pub const LOGIN_CODE_TTL: Duration = Duration::minutes(10);
/// Wrong tries a code survives; the next one finds it dead.
pub const LOGIN_CODE_MAX_TRIES: u32 = 5;
/// How long a CLI token from a login lives. Use does not extend it.
pub const CLI_TOKEN_LIFETIME: Duration = Duration::days(30);
/// Codes that expired longer ago than this are deleted by the next request of any address.
const PURGE_AFTER: Duration = Duration::days(1);
/// The longest address accepted (RFC 5321's path limit).
pub const MAX_LOGIN_EMAIL: usize = 254;

/// A login address as stored and rate limited: the SHA-256 of the trimmed, lower-case address.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddressKey(pub [u8; 32]);

impl std::fmt::Debug for AddressKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AddressKey(..)")
    }
}

impl AddressKey {
    /// The key of a normalized address ([`normalize_address`]).
    pub fn of(address: &str) -> Self {
        let mut h = Sha256::new();
        h.update(b"teamcomm login address\0");
        h.update(address.as_bytes());
        AddressKey(h.finalize().into())
    }

    /// The budget this address spends from.
    fn rate_key(&self) -> CredentialRef {
        let mut first = [0u8; 16];
        first.copy_from_slice(&self.0[..16]);
        CredentialRef::LoginAddress(first)
    }
}

/// The address as people are found by it: trimmed, lower case.
pub fn normalize_address(email: &str) -> String {
    email.trim().to_lowercase()
}

/// A 6-digit code, in plaintext only between its making and the mail (or a verification's
/// comparison); `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct LoginCode(String);

impl LoginCode {
    /// Six uniformly random digits.
    pub fn generate() -> Self {
        LoginCode(format!("{:06}", rand::rng().random_range(0..1_000_000u32)))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// SHA-256 of the salt, the address and the code.
    fn hash(presented: &str, salt: &[u8; 16], address: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(salt);
        h.update(address.as_bytes());
        h.update(b"\0");
        h.update(presented.as_bytes());
        h.finalize().into()
    }
}

impl std::fmt::Debug for LoginCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoginCode(..)")
    }
}

/// A code to store: its hash and salt, never the code.
#[derive(Debug, Clone)]
pub struct NewLoginCode {
    pub id: Uuid,
    pub address: AddressKey,
    pub salt: [u8; 16],
    pub hash: [u8; 32],
    pub expires_at: OffsetDateTime,
    pub created_at: OffsetDateTime,
}

/// A live code whose try was just counted.
#[derive(Debug, Clone)]
pub struct ClaimedTry {
    pub id: Uuid,
    pub salt: [u8; 16],
    pub hash: [u8; 32],
    /// Tries counted so far, this one included.
    pub tries: u32,
}

/// A person's account in one organization, as a login finds it.
#[derive(Debug, Clone)]
pub struct LoginAccount {
    /// The organization's integer id in the login flow (`organizations[].id`): stable, unique.
    pub number: i64,
    pub organization: Organization,
    pub user: User,
}

/// What the login needs from storage.
#[async_trait]
pub trait LoginCodeRepository: Send + Sync + 'static {
    /// The active people with this (normalized) address, with their organizations, by
    /// organization name then number.
    async fn accounts(&self, address: &str) -> Result<Vec<LoginAccount>, RepoError>;
    /// Stores the address's code in place of any earlier one (which stops working), and deletes
    /// codes that expired before `purge_before`.
    async fn replace_code(
        &self,
        code: &NewLoginCode,
        purge_before: OffsetDateTime,
    ) -> Result<(), RepoError>;
    /// Counts one try of the address's live code (not used, expiring after `now`, fewer than
    /// `max_tries` tries counted) and returns it; `None` when there is no live code. Atomic:
    /// two callers never both get the last try.
    async fn claim_try(
        &self,
        address: &AddressKey,
        now: OffsetDateTime,
        max_tries: u32,
    ) -> Result<Option<ClaimedTry>, RepoError>;
    /// Takes back a try that presented the right code.
    async fn release_try(&self, id: Uuid) -> Result<(), RepoError>;
    /// Marks the code used; `false` when it was used already, or replaced meanwhile.
    async fn consume(&self, id: Uuid, now: OffsetDateTime) -> Result<bool, RepoError>;
}

/// Sends login codes. Implementations hand the mail over and return at once: the answer to a
/// request must take as long whether or not a mail was sent (it would tell an address exists),
/// so delivery failures are theirs to log, not the caller's to answer.
#[async_trait]
pub trait LoginCodeMailer: Send + Sync + 'static {
    async fn send_login_code(&self, to: &str, code: &LoginCode, valid_minutes: u32);
}

/// An organization offered to choose from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginOrganization {
    pub number: i64,
    pub organization: Organization,
}

/// The answer to a code request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRequested {
    /// The address's organizations when it has several (the CLI lets its user choose before
    /// typing the code), else empty: one organization and none look alike.
    pub organizations: Vec<LoginOrganization>,
}

impl CodeRequested {
    pub fn is_multi_org(&self) -> bool {
        self.organizations.len() > 1
    }
}

/// A finished login: the token (shown once) for `user` in `organization`.
#[derive(Debug)]
pub struct Login {
    pub token: Secret,
    pub user: User,
    pub organization: Organization,
    pub expires_at: OffsetDateTime,
}

/// The outcome of a right code.
#[derive(Debug)]
pub enum Verified {
    /// Several organizations and none chosen: the code is still good.
    ChooseOrganization(Vec<LoginOrganization>),
    LoggedIn(Box<Login>),
}

/// The login use cases.
#[derive(Clone)]
pub struct LoginService {
    codes: Arc<dyn LoginCodeRepository>,
    tokens: Arc<dyn KeyRepository>,
    mailer: Arc<dyn LoginCodeMailer>,
    clock: SharedClock,
}

impl LoginService {
    pub fn new(
        codes: Arc<dyn LoginCodeRepository>,
        tokens: Arc<dyn KeyRepository>,
        mailer: Arc<dyn LoginCodeMailer>,
        clock: SharedClock,
    ) -> Self {
        LoginService {
            codes,
            tokens,
            mailer,
            clock,
        }
    }

    /// Makes and stores a new code for `email`, replacing its earlier one, and mails it when the
    /// address belongs to someone. Unknown addresses get the same answer after the same work.
    /// The address spends one request of its `auth` budget in `limits` (the app's budgets).
    pub async fn request_code(
        &self,
        limits: &RateLimits,
        email: &str,
    ) -> Result<CodeRequested, Error> {
        let address = normalize_address(email);
        let key = AddressKey::of(&address);
        spend(limits, &key).await?;
        let accounts = self.codes.accounts(&address).await?;
        let now = self.clock.now();
        let code = LoginCode::generate();
        let salt: [u8; 16] = rand::rng().random();
        self.codes
            .replace_code(
                &NewLoginCode {
                    id: Uuid::now_v7(),
                    address: key,
                    salt,
                    hash: LoginCode::hash(code.expose(), &salt, &address),
                    expires_at: now + LOGIN_CODE_TTL,
                    created_at: now,
                },
                now - PURGE_AFTER,
            )
            .await?;
        if let Some(first) = accounts.first() {
            let minutes = LOGIN_CODE_TTL.whole_minutes() as u32;
            self.mailer
                .send_login_code(&first.user.email, &code, minutes)
                .await;
        }
        let organizations = if accounts.len() > 1 {
            offered(&accounts)
        } else {
            Vec::new()
        };
        Ok(CodeRequested { organizations })
    }

    /// Checks `code` for `email`. With one organization, or the chosen one (`organization`, the
    /// number from the list), the code is used and a token issued; with several and none
    /// chosen, the list is answered and the code stays good. The address spends one request of
    /// its `auth` budget in `limits`.
    pub async fn verify_code(
        &self,
        limits: &RateLimits,
        email: &str,
        code: &str,
        organization: Option<i64>,
    ) -> Result<Verified, Error> {
        let address = normalize_address(email);
        let key = AddressKey::of(&address);
        spend(limits, &key).await?;
        let now = self.clock.now();
        let Some(claimed) = self
            .codes
            .claim_try(&key, now, LOGIN_CODE_MAX_TRIES)
            .await?
        else {
            return Err(code_expired());
        };
        let presented = LoginCode::hash(code.trim(), &claimed.salt, &address);
        if !bool::from(presented.as_slice().ct_eq(&claimed.hash)) {
            return Err(code_invalid(
                LOGIN_CODE_MAX_TRIES.saturating_sub(claimed.tries),
            ));
        }
        let accounts = self.codes.accounts(&address).await?;
        // Nobody behind the address (it was never mailed: a lucky guess), or nobody any more.
        if accounts.is_empty() {
            return Err(code_invalid(
                LOGIN_CODE_MAX_TRIES.saturating_sub(claimed.tries),
            ));
        }
        let chosen = match organization {
            Some(number) => match accounts.iter().find(|a| a.number == number) {
                Some(account) => account,
                None => {
                    self.codes.release_try(claimed.id).await?;
                    return Err(organization_invalid());
                }
            },
            None if accounts.len() == 1 => &accounts[0],
            None => {
                self.codes.release_try(claimed.id).await?;
                return Ok(Verified::ChooseOrganization(offered(&accounts)));
            }
        };
        if !self.codes.consume(claimed.id, now).await? {
            return Err(code_expired());
        }
        let token = Secret::generate(SecretKind::CliToken);
        let expires_at = now + CLI_TOKEN_LIFETIME;
        self.tokens
            .insert_cli_token(
                chosen.user.org_id,
                chosen.user.id,
                &token.hash(),
                Some(expires_at),
            )
            .await?;
        Ok(Verified::LoggedIn(Box::new(Login {
            token,
            user: chosen.user.clone(),
            organization: chosen.organization.clone(),
            expires_at,
        })))
    }

    /// Revokes the CLI token that authenticated `caller`; it is refused from the next request
    /// on. Other credentials have no session to end.
    pub async fn logout(&self, caller: &Principal) -> Result<(), Error> {
        match caller.credential {
            CredentialKind::CliToken { id } => Ok(self.tokens.revoke_cli_token(id).await?),
            _ => Err(Error::new(
                ErrorCode::InsufficientScope,
                "Logout ends a CLI login session (Authorization: Bearer); this credential has \
                 no session to end.",
            )
            .with_extra("required_scope", "cli_token")),
        }
    }
}

/// Spends one request of the address's `auth` budget.
/// Spends one request of the address's `auth` budget.
async fn spend(limits: &RateLimits, key: &AddressKey) -> Result<(), Error> {
    let decision = limits.spend(key.rate_key(), RateScope::Auth, false).await;
    match decision.retry_after_secs {
        None => Ok(()),
        Some(after) => Err(Error::new(
            ErrorCode::Throttled,
            format!("Request was throttled. Expected available in {after} seconds."),
        )
        .with_extra("retry_after", after)
        .with_extra("scope", RateScope::Auth.as_str())),
    }
}

fn offered(accounts: &[LoginAccount]) -> Vec<LoginOrganization> {
    accounts
        .iter()
        .map(|a| LoginOrganization {
            number: a.number,
            organization: a.organization.clone(),
        })
        .collect()
}

fn code_invalid(tries_left: u32) -> Error {
    let detail = match tries_left {
        0 => "The code is not valid. Too many wrong tries: request a new code.".to_owned(),
        n => format!("The code is not valid. {n} tries left."),
    };
    Error::new(ErrorCode::LoginCodeInvalid, detail)
}

fn code_expired() -> Error {
    Error::new(
        ErrorCode::LoginCodeExpired,
        "The code has expired, was already used or replaced, or had too many wrong tries. \
         Request a new code.",
    )
}

fn organization_invalid() -> Error {
    Error::new(
        ErrorCode::LoginOrganizationInvalid,
        "organization_id is not one of this address's organizations.",
    )
    .with_extra("parameter", "organization_id")
}

#[cfg(test)]
#[path = "login_tests.rs"]
mod tests;
