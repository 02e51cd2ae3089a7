//! `TestDb`: `CREATE DATABASE … TEMPLATE <migrated template>` per test, dropped afterwards.
//!
//! The template's name carries a hash of `migrations/` and of the migrations the binary embeds,
//! so a changed migration, or a binary built before one was added, builds its own template.
//! Template creation is serialised across test processes with an advisory lock. Databases left by
//! crashed runs (their creating process is gone) are swept on the next run.

use std::sync::atomic::{AtomicU32, Ordering};

use diesel::QueryableByName;
use diesel::sql_types::{Bool, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_store_pg::{quote_ident, run_migrations, split_database};

const PREFIX: &str = "teamcomm_t_";

/// The server tests run against; `TEST_DATABASE_URL` overrides it (its database part is ignored).
pub fn server_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

fn url_for(db: &str) -> String {
    let (maintenance, _) =
        split_database(&server_url()).expect("TEST_DATABASE_URL names a database");
    match maintenance.split_once('?') {
        Some((base, q)) => format!("{}/{db}?{q}", base.trim_end_matches("/postgres")),
        None => format!("{}/{db}", maintenance.trim_end_matches("/postgres")),
    }
}

fn maintenance_url() -> String {
    url_for("postgres")
}

fn migrations_hash() -> String {
    // FNV-1a over every migration file's path and bytes, in sorted order.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("migrations dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p)
            } else {
                files.push(p)
            }
        }
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        let rel = f.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
        for b in rel.bytes().chain(std::fs::read(&f).unwrap()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    // The migrations this binary embeds, too: a binary built before a migration was added must
    // not fill a template named for the newer set.
    use diesel::migration::MigrationSource;
    let embedded = MigrationSource::<diesel::pg::Pg>::migrations(&teamcomm_store_pg::MIGRATIONS)
        .expect("embedded migrations");
    for m in embedded {
        for b in m.name().to_string().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    datname: String,
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = Bool)]
    exists: bool,
}

async fn exec(conn: &mut AsyncPgConnection, sql: &str) {
    diesel::sql_query(sql)
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Creates the migrated template once (per migrations hash) and returns its name.
async fn ensure_template(conn: &mut AsyncPgConnection) -> String {
    let name = format!("teamcomm_tpl_{}", migrations_hash());
    exec(conn, "SELECT pg_advisory_lock(727274)").await;
    let found: Exists =
        diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS exists")
            .bind::<Text, _>(&name)
            .get_result(conn)
            .await
            .expect("query pg_database");
    if !found.exists {
        let building = format!("{name}_building");
        exec(
            conn,
            &format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                quote_ident(&building)
            ),
        )
        .await;
        exec(conn, &format!("CREATE DATABASE {}", quote_ident(&building))).await;
        run_migrations(&url_for(&building))
            .await
            .expect("migrate the template");
        exec(
            conn,
            &format!(
                "ALTER DATABASE {} RENAME TO {}",
                quote_ident(&building),
                quote_ident(&name)
            ),
        )
        .await;
        // Older templates are useless now.
        let old: Vec<Name> = diesel::sql_query(
            "SELECT datname FROM pg_database WHERE datname LIKE 'teamcomm\\_tpl\\_%' AND datname <> $1",
        )
        .bind::<Text, _>(&name)
        .load(conn)
        .await
        .unwrap_or_default();
        for o in old {
            exec(
                conn,
                &format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    quote_ident(&o.datname)
                ),
            )
            .await;
        }
    }
    exec(conn, "SELECT pg_advisory_unlock(727274)").await;
    name
}

/// Drops databases whose creating test process no longer exists.
async fn sweep_leftovers(conn: &mut AsyncPgConnection) {
    let names: Vec<Name> =
        diesel::sql_query("SELECT datname FROM pg_database WHERE datname LIKE 'teamcomm\\_t\\_%'")
            .load(conn)
            .await
            .unwrap_or_default();
    for n in names {
        let pid = n
            .datname
            .trim_start_matches(PREFIX)
            .split('_')
            .next()
            .and_then(|p| p.parse::<u32>().ok());
        let alive = pid.is_some_and(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        if !alive {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                quote_ident(&n.datname)
            ))
            .execute(conn)
            .await;
        }
    }
}

/// A private database for one test.
pub struct TestDb {
    pub url: String,
    name: String,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl TestDb {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Ends every server session on this database, as a Postgres restart would.
    pub async fn terminate_connections(&self) {
        let mut conn = AsyncPgConnection::establish(&maintenance_url())
            .await
            .expect("maintenance connection");
        diesel::sql_query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
        )
        .bind::<Text, _>(&self.name)
        .execute(&mut conn)
        .await
        .expect("terminate backends");
    }

    pub async fn new() -> TestDb {
        let mut conn = AsyncPgConnection::establish(&maintenance_url())
            .await
            .unwrap_or_else(|e| panic!("tests need PostgreSQL at {}: {e}", maintenance_url()));
        let template = ensure_template(&mut conn).await;
        sweep_leftovers(&mut conn).await;
        let name = format!(
            "{PREFIX}{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            uuid::Uuid::new_v4()
                .simple()
                .to_string()
                .get(..8)
                .unwrap_or("x")
        );
        exec(
            &mut conn,
            &format!(
                "CREATE DATABASE {} TEMPLATE {}",
                quote_ident(&name),
                quote_ident(&template)
            ),
        )
        .await;
        TestDb {
            url: url_for(&name),
            name,
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if std::env::var_os("TEAMCOMM_TEST_KEEP_DB").is_some() {
            eprintln!("kept test database {}", self.name);
            return;
        }
        let name = self.name.clone();
        // Drop runs inside the test's runtime; do the async work on a thread of its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let mut conn = AsyncPgConnection::establish(&maintenance_url())
                    .await
                    .ok()?;
                diesel::sql_query(format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    quote_ident(&name)
                ))
                .execute(&mut conn)
                .await
                .ok()
            })
        })
        .join();
    }
}
