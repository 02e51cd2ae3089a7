//! What the server logs, read back from the real app with the production filter and format:
//! one access line per request, nothing at ERROR for a client's malformed request head, and
//! start-up messages that say why the database cannot be used.
//!
//! The subscriber is process-wide; `make test` (nextest) runs each test in its own process, so
//! a test sees only its own lines.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use teamcomm_api::Settings;
use teamcomm_api::config::LogFormat;
use teamcomm_api::telemetry::{self, ACCESS_TARGET};
use teamcomm_tests::{TestApp, TestDb};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Installs the production subscriber (default filter, JSON lines) writing here, once.
    fn install() -> &'static Captured {
        static CAPTURED: OnceLock<Captured> = OnceLock::new();
        CAPTURED.get_or_init(|| {
            let captured = Captured::default();
            let writer = captured.clone();
            telemetry::init_with_writer(LogFormat::Json, None, move || writer.clone())
                .expect("no other subscriber in this test process");
            captured
        })
    }

    fn lines(&self) -> Vec<Value> {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect()
    }

    fn access_lines(&self) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|l| l["target"] == ACCESS_TARGET)
            .collect()
    }
}

#[actix_web::test]
async fn one_access_line_per_request() {
    let logs = Captured::install();
    let app = TestApp::spawn().await;
    let (_, _, _, key) = app.org_with_admin_key("business").await;
    let team = uuid::Uuid::new_v4();
    let before = logs.access_lines().len();

    let requests = [
        ("GET", "/healthz".to_owned(), "/healthz", 200),
        ("GET", "/v1/me/".to_owned(), "/v1/me/", 401),
        // The trailing slash is added before routing: the template is the route's.
        ("POST", "/v1/teams".to_owned(), "/v1/teams/", 401),
        // The route template, never the id in the path.
        (
            "GET",
            format!("/v1/teams/{team}/"),
            "/v1/teams/{uuid}/",
            404,
        ),
        // No route: no template, and none of the path.
        ("GET", "/v1/no-such-thing/".to_owned(), "-", 404),
    ];
    for (method, path, _, status) in &requests {
        let headers: &[(&str, &str)] = if path.starts_with("/v1/teams/") && *method == "GET" {
            &[("X-API-KEY", &key)]
        } else {
            &[]
        };
        let r = app.send(method, path, headers, None).await;
        assert_eq!(r.status, *status, "{method} {path}: {}", r.text);
    }

    let lines = logs.access_lines().split_off(before);
    let mut request_ids = Vec::new();
    for (method, path, route, status) in &requests {
        let matching: Vec<&Value> = lines
            .iter()
            .filter(|l| l["method"] == *method && l["route"] == *route && l["status"] == *status)
            .collect();
        assert_eq!(matching.len(), 1, "{method} {path}: {lines:#?}");
        let line = matching[0];
        assert_eq!(line["level"], "INFO", "{line}");
        assert!(
            line["duration_ms"].as_f64().is_some_and(|d| d >= 0.0),
            "{line}"
        );
        request_ids.push(line["request_id"].as_str().expect("request id").to_owned());
        assert!(!line.to_string().contains(&team.to_string()), "{line}");
    }
    // Every line of the test is one of these requests, each with its own request id.
    assert_eq!(lines.len(), requests.len(), "{lines:#?}");
    request_ids.sort();
    request_ids.dedup();
    assert_eq!(request_ids.len(), requests.len());
}

/// Raw bytes on a new connection; returns the status line of the answer.
fn raw_request(addr: &str, head: &[u8], wait: Duration) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    let _ = stream.write_all(head);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    answer.lines().next().unwrap_or("").to_owned()
}

#[actix_web::test]
async fn malformed_request_heads_are_answered_but_not_logged_as_errors() {
    let logs = Captured::install();
    let app = TestApp::spawn().await;
    let addr = app.base.trim_start_matches("http://").to_owned();

    let long_url = format!(
        "GET /v1/{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(100_000)
    );
    let many_headers = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\n{}\r\n",
        (0..200)
            .map(|i| format!("X-H{i}: 1\r\n"))
            .collect::<String>()
    );
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "bad bytes in the request line",
            b"GET /v1/me\xff\xfe/ HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            "400",
        ),
        (
            "overlong UTF-8 in the request line",
            b"GET /v1/\xc0\xaf HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            "400",
        ),
        (
            "a control character in a header",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n".to_vec(),
            "400",
        ),
        (
            "no Host",
            b"GET /healthz HTTP/1.1\r\n\r\n".to_vec(),
            "400",
        ),
        (
            "conflicting Content-Length",
            b"POST /v1/teams/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
                .to_vec(),
            "400",
        ),
        (
            "negative Content-Length",
            b"POST /v1/teams/ HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n".to_vec(),
            "400",
        ),
        ("a 100 KB URL", long_url.into_bytes(), "400"),
        ("too many headers", many_headers.into_bytes(), "431"),
    ];
    let answers = tokio::task::spawn_blocking({
        let addr = addr.clone();
        move || {
            let mut answers: Vec<(String, String, String)> = cases
                .into_iter()
                .map(|(name, head, expected)| {
                    let got = raw_request(&addr, &head, Duration::from_secs(10));
                    (name.to_owned(), got, expected.to_owned())
                })
                .collect();
            // A connection that never finishes its head is closed with 408 (after actix's
            // 5-second client request timeout).
            let idle = raw_request(&addr, b"GET /healthz HTTP/1.1\r\n", Duration::from_secs(15));
            answers.push(("an idle connection".into(), idle, "408".into()));
            answers
        }
    })
    .await
    .unwrap();
    for (name, status_line, expected) in &answers {
        assert!(
            status_line.starts_with(&format!("HTTP/1.1 {expected}")),
            "{name}: {status_line:?}"
        );
    }

    // A well-formed request afterwards: the log is being written, and it is an access line.
    let r = app.send("GET", "/readyz", &[], None).await;
    assert_eq!(r.status, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;

    let lines = logs.lines();
    assert!(
        logs.access_lines().iter().any(|l| l["route"] == "/readyz"),
        "{lines:#?}"
    );
    let errors: Vec<&Value> = lines.iter().filter(|l| l["level"] == "ERROR").collect();
    assert!(
        errors.is_empty(),
        "client mistakes logged as errors: {errors:#?}"
    );
    let from_codec: Vec<&Value> = lines
        .iter()
        .filter(|l| {
            l["target"]
                .as_str()
                .is_some_and(|t| t.starts_with("actix_http"))
        })
        .collect();
    assert!(from_codec.is_empty(), "{from_codec:#?}");
}

/// The error `teamcomm serve` would stop with for this `DATABASE_URL`.
async fn startup_error(database_url: &str) -> String {
    let vars = [
        ("DATABASE_URL", database_url.to_owned()),
        ("TEAMCOMM_JWT_SECRET", "z".repeat(32)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let mut settings = Settings::from_vars(&vars, false).unwrap();
    match teamcomm_api::server::prepare_database(&mut settings, None).await {
        Ok(_) => panic!("{database_url} was usable"),
        Err(e) => format!("{e:#}"),
    }
}

#[actix_web::test]
async fn startup_messages_say_why_the_database_cannot_be_used() {
    let db = TestDb::new().await;
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();

    let refused = startup_error(&format!("postgres://postgres@127.0.0.1:{closed_port}/x")).await;
    assert!(refused.starts_with("no PostgreSQL answers at"), "{refused}");
    assert!(refused.contains("connection refused"), "{refused}");

    let role = startup_error(&with_user(&db.url, "no_such_role_for_teamcomm")).await;
    assert!(
        role.contains("refused the login (authentication or role"),
        "{role}"
    );
    assert!(!role.contains("no PostgreSQL answers"), "{role}");

    let tls = startup_error(&format!(
        "{}{}sslmode=require",
        db.url,
        if db.url.contains('?') { '&' } else { '?' }
    ))
    .await;
    assert!(tls.contains("TLS"), "{tls}");
    assert!(!tls.contains("no PostgreSQL answers"), "{tls}");
}

/// `url` (such as `postgres://postgres@127.0.0.1:5432/db`) with another user.
fn with_user(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    format!("{scheme}://{user}@{host}")
}
