//! Hourly budgets shared through Redis (issue 10 §4): two real server processes on one database
//! and one Redis grant a credential one budget between them, not one each, with the usual
//! `RateLimit` headers; a Redis that does not answer lets requests through and counts it in the
//! metrics. Needs the Redis at 127.0.0.1:6379 (`.ci/run` starts it): without one the tests skip,
//! unless `CI` is set, when they fail.
//!
//! A server process is this test binary run again with [`CHILD_FLAG`] set, running only
//! [`server_process`] (as `tests/api/process.rs` does, for the same reasons).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use teamcomm_api::Settings;
use teamcomm_tests::{OPERATOR_TOKEN, Resp, TestApp};

const REDIS: &str = "redis://127.0.0.1:6379";
const CHILD_FLAG: &str = "TEAMCOMM_TEST_RATELIMIT_SERVER";
const CHILD_ENTRY: &str = "ratelimit_redis::server_process";

/// True when Redis answers; false (skip) without one outside CI; a panic in CI.
fn redis_answers() -> bool {
    let up = std::net::TcpStream::connect_timeout(
        &"127.0.0.1:6379".parse().unwrap(),
        Duration::from_secs(2),
    )
    .and_then(|mut s| {
        use std::io::{Read, Write};
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        s.write_all(b"PING\r\n")?;
        let mut buf = [0u8; 7];
        s.read_exact(&mut buf)?;
        Ok(&buf == b"+PONG\r\n")
    });
    match up {
        Ok(true) => true,
        other if std::env::var_os("CI").is_some() => {
            panic!("CI is set and Redis does not answer on 127.0.0.1:6379: {other:?}")
        }
        other => {
            eprintln!("skipped: Redis does not answer on 127.0.0.1:6379 ({other:?})");
            false
        }
    }
}

/// The body of a server process: does nothing unless [`CHILD_FLAG`] is set.
#[actix_web::test]
#[ignore = "the server process the tests below start, not a test"]
async fn server_process() {
    if std::env::var_os(CHILD_FLAG).is_none() {
        return;
    }
    let settings = Settings::from_env(false).expect("server process settings");
    teamcomm_api::telemetry::init(settings.log_format);
    teamcomm_api::server::serve(settings, false, None)
        .await
        .expect("serve");
}

/// A server process on `app`'s database; `SIGKILL`ed when dropped.
struct Server {
    child: Child,
    base: String,
    log: PathBuf,
    client: reqwest::Client,
}

impl Server {
    async fn start(app: &TestApp, vars: &[(&str, &str)]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = std::env::temp_dir().join(format!(
            "teamcomm-ratelimit-test-{}.log",
            uuid::Uuid::new_v4().simple()
        ));
        let out = std::fs::File::create(&log).expect("server log file");
        let child = Command::new(std::env::current_exe().expect("the test binary"))
            .args([CHILD_ENTRY, "--exact", "--ignored", "--nocapture"])
            .env(CHILD_FLAG, "1")
            .env("DATABASE_URL", &app.db().url)
            .env("TEAMCOMM_LISTEN", format!("127.0.0.1:{port}"))
            .env("TEAMCOMM_JWT_SECRET", "j".repeat(32))
            .env("TEAMCOMM_PLATFORM_SECRET_KEY", "p".repeat(32))
            .env("TEAMCOMM_OPERATOR_TOKEN", OPERATOR_TOKEN)
            .env("TEAMCOMM_CHECKIN_TICK_SECS", "3600")
            .env("TEAMCOMM_WORKERS", "1")
            .env("TEAMCOMM_DB_POOL_SIZE", "2")
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start a server process");
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
            client: reqwest::Client::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut server = server;
        loop {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("the server process exited ({status}):\n{}", server.output());
            }
            let health = server.client.get(server.url("/healthz")).send().await;
            if health.is_ok_and(|r| r.status() == 200) {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "the server process did not answer within 30 s:\n{}",
                server.output()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn get(&self, path: &str, key: &str) -> Resp {
        let r = self
            .client
            .get(self.url(path))
            .header("X-API-KEY", key)
            .send()
            .await
            .expect("request");
        TestApp::read(r).await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("server process log kept at {}", self.log.display());
        } else {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

fn prefix() -> String {
    format!("teamcomm-test:{}", uuid::Uuid::new_v4().simple())
}

#[actix_web::test]
async fn two_server_processes_sharing_redis_grant_one_budget_not_two() {
    if !redis_answers() {
        return;
    }
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let prefix = prefix();
    let vars = [
        ("TEAMCOMM_REDIS_URL", REDIS),
        ("TEAMCOMM_REDIS_KEY_PREFIX", prefix.as_str()),
        ("TEAMCOMM_RATE_LIMIT_PER_HOUR_READS", "4"),
    ];
    let (one, two) = (
        Server::start(&app, &vars).await,
        Server::start(&app, &vars).await,
    );
    // Alternating between the processes: 4 in all, then both refuse.
    for (n, server) in [&one, &two, &one, &two].into_iter().enumerate() {
        let r = server.get("/v1/me/", &key).await;
        assert_eq!(r.status, 200, "request {n}: {}", r.text);
        assert_eq!(r.header("ratelimit-policy"), Some("\"reads\";q=4;w=3600"));
        let remaining = 3 - n;
        let state = r.header("ratelimit").unwrap();
        assert!(
            state.starts_with(&format!("\"reads\";r={remaining};t=")),
            "{state}"
        );
    }
    for server in [&one, &two] {
        let r = server.get("/v1/users/", &key).await;
        r.assert_error(429, "throttled");
        // One request every 900 s.
        let retry: u64 = r.header("retry-after").unwrap().parse().unwrap();
        assert!((890..=900).contains(&retry), "{retry}");
        assert_eq!(r.body["extra"]["retry_after"], retry);
        assert_eq!(r.body["extra"]["scope"], "reads");
    }
    // Redis answered every check: no process failed open.
    for server in [&one, &two] {
        assert!(
            !server.output().contains("NOT rate limited"),
            "{}",
            server.output()
        );
    }
}

#[actix_web::test]
async fn without_redis_each_process_has_its_own_budget() {
    // The contrast: the same two processes without TEAMCOMM_REDIS_URL grant one budget each.
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let vars = [("TEAMCOMM_RATE_LIMIT_PER_HOUR_READS", "2")];
    let (one, two) = (
        Server::start(&app, &vars).await,
        Server::start(&app, &vars).await,
    );
    for server in [&one, &two] {
        for _ in 0..2 {
            assert_eq!(server.get("/v1/me/", &key).await.status, 200);
        }
        server
            .get("/v1/me/", &key)
            .await
            .assert_error(429, "throttled");
    }
}

#[actix_web::test]
async fn an_unreachable_redis_fails_open_loudly_and_is_counted() {
    // Nothing listens on port 1.
    let app = TestApp::builder()
        .var("TEAMCOMM_REDIS_URL", "redis://127.0.0.1:1")
        .var("TEAMCOMM_RATE_LIMIT_PER_HOUR_READS", "1")
        .spawn()
        .await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    for _ in 0..3 {
        let r = app.get_with_key("/v1/me/", &key).await;
        assert_eq!(r.status, 200, "{}", r.text);
        // The headers still say which budget applies.
        assert_eq!(r.header("ratelimit-policy"), Some("\"reads\";q=1;w=3600"));
    }
    let metrics = app.send("GET", "/metrics", &[], None).await;
    assert_eq!(metrics.status, 200);
    let line = metrics
        .text
        .lines()
        .find(|l| l.starts_with("teamcomm_rate_limit_store_unavailable_total "))
        .unwrap_or_else(|| panic!("no counter in {}", metrics.text));
    let n: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(n >= 3.0, "{line}");
}

#[test]
fn a_redis_url_that_is_not_one_stops_the_start() {
    let mut vars = std::collections::HashMap::new();
    vars.insert("TEAMCOMM_JWT_SECRET".to_owned(), "j".repeat(32));
    vars.insert("TEAMCOMM_PLATFORM_SECRET_KEY".to_owned(), "p".repeat(32));
    vars.insert(
        "TEAMCOMM_REDIS_URL".to_owned(),
        "http://127.0.0.1:6379".to_owned(),
    );
    let e = Settings::from_vars(&vars, false).expect_err("not a Redis URL");
    assert!(e.to_string().contains("TEAMCOMM_REDIS_URL"), "{e}");
    vars.insert("TEAMCOMM_REDIS_URL".to_owned(), REDIS.to_owned());
    let s = Settings::from_vars(&vars, false).unwrap();
    assert!(s.redis_url.is_some());
    assert_eq!(s.redis_key_prefix, "teamcomm:ratelimit");
    // The URL (it may carry a password) is not printed with the settings.
    assert!(!format!("{s:?}").contains("6379"));
}
