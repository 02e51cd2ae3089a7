//! Hourly budgets shared through Redis (issue 10 §4): two real server processes on one database
//! and one Redis grant a credential one budget between them, not one each, with the usual
//! `RateLimit` headers; a Redis that does not answer lets requests through and counts it in the
//! metrics. Needs the Redis at 127.0.0.1:6379 (`.ci/run` starts it): without one the tests skip,
//! unless `CI` is set, when they fail.
//!
//! The server processes are `tests/api/process.rs`'s ([`Server`]).

use std::time::Duration;

use teamcomm_api::Settings;
use teamcomm_tests::TestApp;

use crate::process::Server;

const REDIS: &str = "redis://127.0.0.1:6379";

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
