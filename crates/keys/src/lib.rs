//! The credentials domain: API keys (format, hashing, lifecycle, role rules), CLI tokens, and
//! the authenticated [`Principal`] every request carries. Storage and the organization cache are
//! ports ([`KeyRepository`], [`OrgSnapshots`]).

mod daily;
mod limits;
mod login;
#[cfg(any(test, feature = "testing"))]
mod login_memory;
mod model;
mod policy;
mod ports;
mod secret;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod usage;

pub use daily::{
    DailyCounters, DailyLimit, DailySpend, DailyThrottle, seconds_until_next_utc_midnight,
};
pub use limits::{RateDecision, RateLimiter, RateLimits, RateQuotas, RateScope};
pub use login::{
    AddressKey, CLI_TOKEN_LIFETIME, ClaimedTry, CodeRequested, LOGIN_CODE_MAX_TRIES,
    LOGIN_CODE_TTL, Login, LoginAccount, LoginCode, LoginCodeMailer, LoginCodeRepository,
    LoginOrganization, LoginService, MAX_LOGIN_EMAIL, NewLoginCode, Verified, normalize_address,
};
pub use model::{
    ApiKey, CliTokenCredential, CredentialKind, CredentialRef, KeyCredential, PersonRef, Principal,
    Scope,
};
pub use policy::{CliAccess, check_cli_access};
pub use ports::{KeyChanges, KeyListScope, KeyRepository, NewKeyRecord, OrgSnapshots};
pub use secret::{Secret, SecretHash, SecretKind, masked};
pub use service::{CreateKey, KeyService, MAX_KEY_NAME, UpdateKey, invalid_credentials};
pub use usage::UsageTracker;
