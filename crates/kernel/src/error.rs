//! The error every domain rule and adapter reports: a frozen [`ErrorCode`] plus what the client
//! needs to act on it. The app crate turns it into the JSON envelope `{detail, code, errors?,
//! extra?, upgrade_url?}`; nothing here knows about HTTP beyond the status number.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::ErrorCode;

/// A refusal with a frozen `code` and a human `detail`. Boxed so `Result<T, Error>` stays small.
#[derive(Debug, Clone, PartialEq)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    code: ErrorCode,
    status: u16,
    detail: Cow<'static, str>,
    errors: BTreeMap<String, Vec<String>>,
    extra: Map<String, Value>,
    upgrade_url: Option<String>,
    /// Why an internal error happened; for the log only, never serialised.
    cause: Option<String>,
}

impl Error {
    /// An error with the code's default status.
    pub fn new(code: ErrorCode, detail: impl Into<Cow<'static, str>>) -> Self {
        Error(Box::new(Inner {
            code,
            status: code.default_status(),
            detail: detail.into(),
            errors: BTreeMap::new(),
            extra: Map::new(),
            upgrade_url: None,
            cause: None,
        }))
    }

    /// 404 `not_found`, the same body whether the object is absent or belongs to someone else.
    pub fn not_found() -> Self {
        Error::new(ErrorCode::NotFound, "Not found.")
    }

    /// 400 `params_validation_error` with one field message.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        Error::new(ErrorCode::ParamsValidationError, "Invalid input.")
            .with_field_error(field, message)
    }

    /// Overrides the HTTP status (the spec gives a few codes a different status per area).
    pub fn with_status(mut self, status: u16) -> Self {
        self.0.status = status;
        self
    }

    /// Adds a per-field message to `errors`.
    pub fn with_field_error(mut self, field: &str, message: impl Into<String>) -> Self {
        self.0
            .errors
            .entry(field.to_owned())
            .or_default()
            .push(message.into());
        self
    }

    /// Adds a member to `extra`.
    pub fn with_extra(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.extra.insert(key.to_owned(), value.into());
        self
    }

    /// Sets `upgrade_url` (used with `plan_upgrade_required`).
    pub fn with_upgrade_url(mut self, url: impl Into<String>) -> Self {
        self.0.upgrade_url = Some(url.into());
        self
    }

    pub fn code(&self) -> ErrorCode {
        self.0.code
    }

    pub fn status(&self) -> u16 {
        self.0.status
    }

    pub fn detail(&self) -> &str {
        &self.0.detail
    }

    pub fn field_errors(&self) -> &BTreeMap<String, Vec<String>> {
        &self.0.errors
    }

    pub fn extra(&self) -> &Map<String, Value> {
        &self.0.extra
    }

    pub fn upgrade_url(&self) -> Option<&str> {
        self.0.upgrade_url.as_deref()
    }

    /// The logged cause of an internal error.
    pub fn cause(&self) -> Option<&str> {
        self.0.cause.as_deref()
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.0.code, self.0.status, self.0.detail)
    }
}

impl std::error::Error for Error {}

/// What a repository port reports. Adapters map their driver errors into these words; the domain
/// decides what each means for the client.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RepoError {
    /// No row matched (within the caller's organization).
    #[error("not found")]
    NotFound,
    /// A uniqueness or foreign-key constraint refused the write.
    #[error("conflict on constraint {constraint}")]
    Conflict { constraint: String },
    /// The store does not answer (pool exhausted, connection refused, shutting down).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// Anything else: a bug or an unexpected driver error. Logged, never shown.
    #[error("store failure: {0}")]
    Other(String),
}

impl From<RepoError> for Error {
    fn from(e: RepoError) -> Self {
        match e {
            RepoError::NotFound => Error::not_found(),
            RepoError::Unavailable(_) => Error::new(
                ErrorCode::ServiceUnavailable,
                "The service is temporarily unavailable. Retry later.",
            ),
            RepoError::Conflict { .. } | RepoError::Other(_) => internal(e),
        }
    }
}

/// Fixed detail of every 500: the cause is logged once at the HTTP boundary, never sent.
pub const INTERNAL_DETAIL: &str = "A server error occurred.";

/// 500 `internal_error` carrying its cause for the log.
pub fn internal(cause: impl std::fmt::Display) -> Error {
    let mut e = Error::new(ErrorCode::InternalError, INTERNAL_DETAIL);
    e.0.cause = Some(cause.to_string());
    e
}
