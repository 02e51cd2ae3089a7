//! Connection pool, database creation and embedded migrations.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{Bool, Text};
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use teamcomm_kernel::RepoError;

use crate::error::{db_error, pool_error};

/// The SQL migrations of `migrations/`, compiled into the binary.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

pub type PgPool = Pool<AsyncPgConnection>;
pub(crate) type PgConn = Object<AsyncPgConnection>;

/// The Postgres store: one pool shared by every repository.
#[derive(Clone)]
pub struct Database {
    pool: PgPool,
}

impl Database {
    /// Builds a pool of at most `max_size` connections. Connections open lazily.
    ///
    /// Two settings keep a request to one round trip per query:
    /// - checkouts are not verified with a test query (`RecyclingMethod::Fast`): a connection
    ///   that died is noticed on first use (503 `service_unavailable`) and replaced;
    /// - `plan_cache_mode = force_generic_plan`: every statement is prepared once per connection
    ///   (diesel caches them) and then planned once, instead of re-planned on each execution
    ///   because of its bound `LIMIT`/`OFFSET`. Our statements are key lookups and index scans
    ///   whose best plan does not depend on the parameter values.
    pub fn connect(url: &str, max_size: usize) -> anyhow::Result<Self> {
        let mut config = ManagerConfig::<AsyncPgConnection>::default();
        config.recycling_method = RecyclingMethod::Fast;
        config.custom_setup = Box::new(|url| {
            let url = url.to_owned();
            Box::pin(async move {
                let mut conn = AsyncPgConnection::establish(&url).await?;
                diesel::sql_query("SET plan_cache_mode = force_generic_plan")
                    .execute(&mut conn)
                    .await
                    .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
                Ok(conn)
            })
        });
        let manager =
            AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, config);
        let pool = Pool::builder(manager)
            .max_size(max_size)
            .wait_timeout(Some(Duration::from_secs(5)))
            .create_timeout(Some(Duration::from_secs(5)))
            .runtime(deadpool::Runtime::Tokio1)
            .build()?;
        Ok(Database { pool })
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub(crate) async fn conn(&self) -> Result<PgConn, RepoError> {
        self.pool.get().await.map_err(pool_error)
    }

    /// True when the database answers a trivial query.
    pub async fn ping(&self) -> bool {
        match self.conn().await {
            Ok(mut conn) => diesel::sql_query("SELECT 1")
                .execute(&mut conn)
                .await
                .is_ok(),
            Err(_) => false,
        }
    }
}

/// Applies pending embedded migrations. Runs the synchronous harness on a blocking thread.
pub async fn run_migrations(url: &str) -> anyhow::Result<Vec<String>> {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<String>> {
        use diesel::Connection;
        use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
        let mut conn = <AsyncConnectionWrapper<AsyncPgConnection> as Connection>::establish(&url)?;
        let applied = conn
            .run_pending_migrations(MIGRATIONS)
            .map_err(|e| anyhow::anyhow!(e))?;
        Ok(applied.iter().map(ToString::to_string).collect())
    })
    .await?
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = Bool)]
    exists: bool,
}

/// Creates the database named in `url` when it does not exist, connecting to the `postgres`
/// maintenance database of the same server. Returns true when it created it.
pub async fn create_database_if_missing(url: &str) -> Result<bool, StartupError> {
    let (maintenance, name) = split_database(url).map_err(StartupError::new)?;
    let mut conn = AsyncPgConnection::establish(&maintenance)
        .await
        .map_err(StartupError::new)?;
    let found: Exists =
        diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS exists")
            .bind::<Text, _>(&name)
            .get_result(&mut conn)
            .await
            .map_err(StartupError::new)?;
    if found.exists {
        return Ok(false);
    }
    let sql = format!("CREATE DATABASE {}", quote_ident(&name));
    match diesel::sql_query(sql).execute(&mut conn).await {
        Ok(_) => Ok(true),
        Err(e) => match db_error(e) {
            // Another process created it between our check and our create.
            RepoError::Conflict { .. } => Ok(false),
            other => Err(StartupError::new(other)),
        },
    }
}

/// Why the database could not be reached or prepared at start-up; the operator's message and
/// the fallback to a project-local cluster depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartupFailure {
    /// Nothing accepts connections there: connection refused, unknown host, timeout, no socket.
    Unreachable,
    /// The server answered and refused the login: unknown role, wrong password, no
    /// `pg_hba.conf` entry.
    Authentication,
    /// The server answered, but the maintenance database `postgres` is missing or the
    /// database could not be created (the role lacks `CREATEDB`).
    DatabaseMissing,
    /// The TLS handshake failed, or the URL asks for TLS (`sslmode=require`), which this build's
    /// driver does not speak.
    Tls,
    /// Anything else; the driver's message says what.
    Other,
}

impl StartupFailure {
    /// diesel-async reports a failed connection as text only (no SQLSTATE, no I/O error kind),
    /// so the kind is read from the driver's (tokio-postgres's) message.
    pub fn of(message: &str) -> Self {
        let message = message.to_ascii_lowercase();
        let mentions = |needles: &[&str]| needles.iter().any(|n| message.contains(n));
        if mentions(&[
            "authentication failed",
            "no pg_hba.conf entry",
            "role \"",
            "password",
            "permission denied for database",
        ]) {
            StartupFailure::Authentication
        } else if mentions(&["database \"", "permission denied to create database"]) {
            StartupFailure::DatabaseMissing
        } else if mentions(&["tls", "ssl"]) {
            StartupFailure::Tls
        } else if mentions(&[
            "error connecting to server",
            "connection refused",
            "timed out",
            "failed to lookup address",
            "no such file or directory",
            "unreachable",
        ]) {
            StartupFailure::Unreachable
        } else {
            StartupFailure::Other
        }
    }
}

/// A failure of [`create_database_if_missing`]: its kind and the driver's message.
#[derive(Debug)]
pub struct StartupError {
    pub failure: StartupFailure,
    pub cause: String,
}

impl StartupError {
    fn new(cause: impl std::fmt::Display) -> Self {
        let cause = cause.to_string();
        StartupError {
            failure: StartupFailure::of(&cause),
            cause,
        }
    }
}

impl std::fmt::Display for StartupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.cause)
    }
}

impl std::error::Error for StartupError {}

/// Splits a URL into (same URL aimed at the `postgres` database, database name).
pub fn split_database(url: &str) -> anyhow::Result<(String, String)> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").ok_or_else(|| {
        anyhow::anyhow!("DATABASE_URL must look like postgres://user@host:port/database")
    })? + 3;
    let path_start = base[scheme_end..].find('/').map(|i| i + scheme_end);
    let (authority, name) = match path_start {
        Some(i) => (&base[..i], &base[i + 1..]),
        None => (base, ""),
    };
    if name.is_empty() {
        anyhow::bail!("DATABASE_URL names no database (expected …/database)");
    }
    let maintenance = match query {
        Some(q) => format!("{authority}/postgres?{q}"),
        None => format!("{authority}/postgres"),
    };
    Ok((maintenance, name.to_owned()))
}

/// Quotes a Postgres identifier.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::{StartupFailure, split_database};

    #[test]
    fn startup_failures_are_told_apart_by_the_drivers_message() {
        for (message, failure) in [
            ("error connecting to server", StartupFailure::Unreachable),
            (
                "error connecting to server: Connection refused (os error 111)",
                StartupFailure::Unreachable,
            ),
            (
                "role \"nobody\" does not exist",
                StartupFailure::Authentication,
            ),
            (
                "password authentication failed for user \"postgres\"",
                StartupFailure::Authentication,
            ),
            (
                "no pg_hba.conf entry for host \"10.0.0.1\", user \"app\", database \"postgres\", no encryption",
                StartupFailure::Authentication,
            ),
            (
                "database \"postgres\" does not exist",
                StartupFailure::DatabaseMissing,
            ),
            (
                "permission denied to create database",
                StartupFailure::DatabaseMissing,
            ),
            ("error performing TLS handshake", StartupFailure::Tls),
            ("server does not support TLS", StartupFailure::Tls),
            ("something else entirely", StartupFailure::Other),
        ] {
            assert_eq!(StartupFailure::of(message), failure, "{message}");
        }
    }

    #[test]
    fn splits_database_from_url_forms() {
        assert_eq!(
            split_database("postgres://postgres@127.0.0.1:5432/teamcomm").unwrap(),
            (
                "postgres://postgres@127.0.0.1:5432/postgres".into(),
                "teamcomm".into()
            )
        );
        assert_eq!(
            split_database("postgres://u@localhost/app?host=/tmp/sock").unwrap(),
            (
                "postgres://u@localhost/postgres?host=/tmp/sock".into(),
                "app".into()
            )
        );
        assert!(split_database("postgres://u@localhost").is_err());
        assert!(split_database("nonsense").is_err());
    }
}
