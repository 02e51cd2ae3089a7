//! The one place where diesel and pool errors become the domain's `RepoError`.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use teamcomm_kernel::RepoError;

pub(crate) fn db_error(e: DieselError) -> RepoError {
    match e {
        DieselError::NotFound => RepoError::NotFound,
        DieselError::DatabaseError(
            DatabaseErrorKind::UniqueViolation | DatabaseErrorKind::ForeignKeyViolation,
            info,
        ) => RepoError::Conflict {
            constraint: info.constraint_name().unwrap_or("unknown").to_owned(),
        },
        DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, info) => {
            RepoError::Unavailable(info.message().to_owned())
        }
        other => RepoError::Other(other.to_string()),
    }
}

pub(crate) fn pool_error(e: impl std::fmt::Display) -> RepoError {
    RepoError::Unavailable(e.to_string())
}
