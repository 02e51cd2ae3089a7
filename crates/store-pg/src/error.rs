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
        // A rule the store checks again inside the write (a trigger, a create's column room),
        // refused by name.
        DieselError::DatabaseError(DatabaseErrorKind::CheckViolation, info)
            if info.constraint_name().is_some_and(|c| {
                [
                    teamcomm_plan::ports::SUBTASK_ONE_LEVEL,
                    teamcomm_plan::ports::COLUMN_FULL,
                    teamcomm_plan::ports::COLUMN_GONE,
                ]
                .contains(&c)
            }) =>
        {
            RepoError::Conflict {
                constraint: info.constraint_name().unwrap_or_default().to_owned(),
            }
        }
        // The server went away (closed socket, restart, `pg_terminate_backend`): retryable.
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            info,
        ) => RepoError::Unavailable(info.message().to_owned()),
        DieselError::DatabaseError(_, info) if is_shutdown(info.message()) => {
            RepoError::Unavailable(info.message().to_owned())
        }
        other => RepoError::Other(other.to_string()),
    }
}

/// Messages of SQLSTATE class 57 (operator intervention: admin shutdown, crash shutdown, cannot
/// connect now) and of a socket closed under a query. diesel does not expose the SQLSTATE.
fn is_shutdown(message: &str) -> bool {
    [
        "terminating connection",
        "the database system is shutting down",
        "the database system is starting up",
        "connection closed",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// A foreign key to an organization that does not exist is an unknown organization.
pub(crate) fn unknown_organization(e: RepoError) -> RepoError {
    match e {
        RepoError::Conflict { constraint } if constraint.ends_with("organization_id_fkey") => {
            RepoError::NotFound
        }
        other => other,
    }
}

pub(crate) fn pool_error(e: impl std::fmt::Display) -> RepoError {
    RepoError::Unavailable(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shutdown_messages_are_unavailable() {
        assert!(is_shutdown(
            "terminating connection due to administrator command"
        ));
        assert!(is_shutdown("connection closed"));
        assert!(!is_shutdown(
            "duplicate key value violates unique constraint"
        ));
        assert!(matches!(
            db_error(DieselError::NotFound),
            RepoError::NotFound
        ));
    }
}
