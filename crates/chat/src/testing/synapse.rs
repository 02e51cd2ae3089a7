//! A real Synapse homeserver for the Matrix adapter's tests.
//!
//! The interpreter comes from `TEAMCOMM_TEST_SYNAPSE_PYTHON` (`scripts/install-synapse.sh` prints it).
//! Unset, a test is skipped with a note, except under CI (`CI` set), where it fails: the tests
//! must never pass there without having run.
//!
//! [`Synapse::shared`] gives the tests one server: SQLite in a fresh directory, a free loopback
//! port, no federation listener, relaxed `rc_*` limits and `bcrypt_rounds: 4` (accounts in
//! milliseconds). Tests keep apart by registering their own accounts (names carry the process id).
//!
//! Who ends the server, since a static is never dropped: under `cargo test` (one process for the
//! binary) the server watches its standard input, a pipe from this process, and when the process
//! ends for any reason the pipe closes and the server deletes its directory and exits; dropping a
//! [`Synapse`] closes the pipe the same way. Under nextest, which runs every test in a process of
//! its own, the first test process of the run (`NEXTEST_RUN_ID`) starts the server for the whole
//! run and the others wait for its port; that server watches the nextest process instead, and
//! ends with it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::{MatrixConfig, MatrixPlatform};
use hmac::{Hmac, KeyInit, Mac};
use reqwest::Method;
use serde_json::{Value, json};
use sha1::Sha1;

pub const SERVER_NAME: &str = "localhost";
const SHARED_SECRET: &str = "teamcomm-test-registration-secret";
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// The device every test bot logs in with, as a deployment pins it.
pub const BOT_DEVICE: &str = "TEAMCOMMBOT";

/// Runs the homeserver until its owner is gone (standard input closes, or the owner pid, when
/// not 0, stops existing), then removes its directory and exits at once.
const WATCHED_HOMESERVER: &str = r#"
import os, runpy, shutil, sys, threading, time
config, data_dir, owner_pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
def end_with_owner():
    if owner_pid:
        while True:
            try:
                os.kill(owner_pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.5)
    else:
        sys.stdin.buffer.read()
    shutil.rmtree(data_dir, ignore_errors=True)
    os._exit(0)
threading.Thread(target=end_with_owner, daemon=True).start()
sys.argv = ["synapse.app.homeserver", "-c", config]
runpy.run_module("synapse.app.homeserver", run_name="__main__")
"#;

/// What ends a server.
#[derive(Clone, Copy)]
enum Owner {
    /// This process: the server reads a pipe from it and ends when the pipe closes.
    ThisProcess,
    /// Another process (the nextest runner), watched by pid.
    Runner(u32),
}

pub struct Synapse {
    pub base_url: String,
    dir: PathBuf,
    /// The server process when this process owns it (its standard input is the lifeline).
    child: Option<Child>,
}

/// An account on the server, with a token.
#[derive(Clone, Debug)]
pub struct Account {
    pub user_id: String,
    pub access_token: String,
    pub device_id: String,
    base_url: String,
    http: reqwest::Client,
}

/// The Synapse interpreter, or `None` (with a printed note) when the tests are to be skipped.
pub fn python() -> Option<PathBuf> {
    match std::env::var_os("TEAMCOMM_TEST_SYNAPSE_PYTHON").filter(|p| !p.is_empty()) {
        Some(path) => {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "TEAMCOMM_TEST_SYNAPSE_PYTHON={} does not exist: run scripts/install-synapse.sh",
                path.display()
            );
            Some(path)
        }
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "TEAMCOMM_TEST_SYNAPSE_PYTHON is not set: under CI the Matrix tests must run \
                 (TEAMCOMM_TEST_SYNAPSE_PYTHON=\"$(scripts/install-synapse.sh | tail -n1)\")"
            );
            println!(
                "note: Matrix test skipped: TEAMCOMM_TEST_SYNAPSE_PYTHON is not set \
                 (run scripts/install-synapse.sh and export the path it prints)"
            );
            None
        }
    }
}

/// A name no other test uses, in this process or another one sharing the server.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let next = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}{}-{next}", std::process::id())
}

impl Synapse {
    /// The tests' server, started on first use; `None` when the tests are skipped.
    pub fn shared() -> Option<&'static Synapse> {
        static SHARED: OnceLock<Synapse> = OnceLock::new();
        let python = python()?;
        Some(
            SHARED.get_or_init(|| match std::env::var("NEXTEST_RUN_ID") {
                Ok(run_id) => Synapse::for_run(&python, &run_id),
                Err(_) => Synapse::start(&python),
            }),
        )
    }

    /// A server of this process's own, in a fresh directory.
    pub fn start(python: &Path) -> Synapse {
        let dir = std::env::temp_dir().join(unique("teamcomm-synapse-"));
        std::fs::create_dir_all(&dir).expect("create the Synapse directory");
        let (port, child) = launch(python, &dir, Owner::ThisProcess);
        Synapse {
            base_url: format!("http://127.0.0.1:{port}"),
            dir,
            child: Some(child),
        }
    }

    /// The nextest run's server: the process that creates the run's directory starts it, owned
    /// by the runner (this process's parent, which outlives every test), and publishes its port;
    /// the others wait for the port.
    fn for_run(python: &Path, run_id: &str) -> Synapse {
        let dir = std::env::temp_dir().join(format!("teamcomm-synapse-run-{run_id}"));
        let port_file = dir.join("port");
        let port = if std::fs::create_dir(&dir).is_ok() {
            let (port, _detached) = launch(
                python,
                &dir,
                Owner::Runner(std::os::unix::process::parent_id()),
            );
            // Written whole, then renamed: a reader never sees half a port.
            let partial = dir.join("port.partial");
            std::fs::write(&partial, port.to_string()).expect("write the port");
            std::fs::rename(&partial, &port_file).expect("publish the port");
            port
        } else {
            let started = Instant::now();
            loop {
                if let Some(port) = std::fs::read_to_string(&port_file)
                    .ok()
                    .and_then(|text| text.parse().ok())
                {
                    break port;
                }
                if started.elapsed() > STARTUP_TIMEOUT {
                    panic!(
                        "the run's Synapse published no port in {STARTUP_TIMEOUT:?}:\n{}",
                        logs(&dir)
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        Synapse {
            base_url: format!("http://127.0.0.1:{port}"),
            dir,
            child: None,
        }
    }

    /// Registers an account with the shared secret (admins may use the admin API).
    pub async fn register(&self, localpart: &str, admin: bool) -> Account {
        let url = format!("{}/_synapse/admin/v1/register", self.base_url);
        let http = test_client();
        let nonce: Value = http.get(&url).send().await.unwrap().json().await.unwrap();
        let nonce = nonce["nonce"].as_str().expect("a registration nonce");
        let password = password_of(localpart);
        let role = if admin { "admin" } else { "notadmin" };
        let mut mac = Hmac::<Sha1>::new_from_slice(SHARED_SECRET.as_bytes()).unwrap();
        mac.update(format!("{nonce}\0{localpart}\0{password}\0{role}").as_bytes());
        let mac: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let answer = http
            .post(&url)
            .json(&json!({
                "nonce": nonce, "username": localpart, "password": password,
                "admin": admin, "mac": mac,
            }))
            .send()
            .await
            .unwrap();
        let status = answer.status();
        let body: Value = answer.json().await.unwrap();
        assert!(status.is_success(), "register {localpart}: {status} {body}");
        self.account(&body)
    }

    /// Logs an account in on a given device (a new token for that device).
    pub async fn login(&self, localpart: &str, device_id: &str) -> Account {
        let answer = test_client()
            .post(format!("{}/_matrix/client/v3/login", self.base_url))
            .json(&json!({
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": localpart},
                "password": password_of(localpart),
                "device_id": device_id,
            }))
            .send()
            .await
            .unwrap();
        let status = answer.status();
        let body: Value = answer.json().await.unwrap();
        assert!(status.is_success(), "login {localpart}: {status} {body}");
        self.account(&body)
    }

    /// A fresh bot: an admin account logged in on [`BOT_DEVICE`], and the adapter over it.
    pub async fn bot(&self, name: &str) -> (Account, MatrixPlatform) {
        let localpart = unique(name);
        self.register(&localpart, true).await;
        let bot = self.login(&localpart, BOT_DEVICE).await;
        let platform = self.platform(&bot, &bot.access_token);
        (bot, platform)
    }

    /// The adapter as `bot`, with this token.
    pub fn platform(&self, bot: &Account, access_token: &str) -> MatrixPlatform {
        MatrixPlatform::new(
            MatrixConfig {
                homeserver_url: self.base_url.clone(),
                access_token: access_token.to_owned(),
                bot_user_id: bot.user_id.clone(),
                device_id: bot.device_id.clone(),
            },
            crate::http_client().unwrap(),
        )
    }

    /// A fresh person.
    pub async fn person(&self, name: &str) -> Account {
        self.register(&unique(name), false).await
    }

    fn account(&self, answer: &Value) -> Account {
        let field = |name: &str| answer[name].as_str().expect(name).to_owned();
        Account {
            user_id: field("user_id"),
            access_token: field("access_token"),
            device_id: field("device_id"),
            base_url: self.base_url.clone(),
            http: test_client(),
        }
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        let Some(child) = self.child.as_mut() else {
            return;
        };
        drop(child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Account {
    /// A client-API call as this account; answers the status and the JSON body.
    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self
            .http
            .request(
                method,
                format!("{}/_matrix/client/v3/{path}", self.base_url),
            )
            .bearer_auth(&self.access_token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer = request.send().await.unwrap();
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap_or(Value::Null))
    }

    /// Like [`Account::call`], failing the test unless it succeeds.
    pub async fn ok(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let (status, answer) = self.call(method.clone(), path, body).await;
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {answer}"
        );
        answer
    }

    /// Creates a room with this account in it: named if `name` is given, `public` joinable by
    /// anyone, else invite-only.
    pub async fn create_room(&self, name: Option<&str>, public: bool, invite: &[&str]) -> String {
        let mut body = json!({
            "preset": if public { "public_chat" } else { "private_chat" },
            "invite": invite,
        });
        if let Some(name) = name {
            body["name"] = json!(name);
        }
        let answer = self.ok(Method::POST, "createRoom", Some(body)).await;
        answer["room_id"].as_str().unwrap().to_owned()
    }

    pub async fn join(&self, room_id: &str) {
        self.ok(
            Method::POST,
            &format!("join/{}", enc(room_id)),
            Some(json!({})),
        )
        .await;
    }

    /// Sends an `m.room.message` with this content; answers its event id.
    pub async fn send(&self, room_id: &str, content: Value) -> String {
        let path = format!(
            "rooms/{}/send/m.room.message/{}",
            enc(room_id),
            unique("txn")
        );
        let answer = self.ok(Method::PUT, &path, Some(content)).await;
        answer["event_id"].as_str().unwrap().to_owned()
    }

    /// The room's `m.room.message` events, oldest first (up to 100).
    pub async fn messages(&self, room_id: &str) -> Vec<Value> {
        let filter = json!({"types": ["m.room.message"]}).to_string();
        let path = format!(
            "rooms/{}/messages?dir=b&limit=100&filter={}",
            enc(room_id),
            enc(&filter)
        );
        let answer = self.ok(Method::GET, &path, None).await;
        let mut events = answer["chunk"].as_array().cloned().unwrap_or_default();
        events.reverse();
        events
    }

    /// Members of a room and their membership (`join`, `invite`, …).
    pub async fn memberships(&self, room_id: &str) -> Vec<(String, String)> {
        let answer = self
            .ok(
                Method::GET,
                &format!("rooms/{}/members", enc(room_id)),
                None,
            )
            .await;
        let mut members: Vec<(String, String)> = answer["chunk"]
            .as_array()
            .unwrap()
            .iter()
            .map(|event| {
                (
                    event["state_key"].as_str().unwrap().to_owned(),
                    event["content"]["membership"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        members.sort();
        members
    }
}

/// A client for the calling test: a client's pooled connections belong to the runtime that
/// opened them, and each test has its own runtime while the server is shared.
fn test_client() -> reqwest::Client {
    reqwest::Client::new()
}

/// A path segment or query value, percent-encoded.
pub fn enc(raw: &str) -> String {
    raw.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

fn password_of(localpart: &str) -> String {
    format!("pw-{localpart}")
}

/// Writes a fresh configuration into `dir` and starts a server ending with `owner`; answers its
/// port once `/health` is OK, and the process.
fn launch(python: &Path, dir: &Path, owner: Owner) -> (u16, Child) {
    let port = free_port();
    // YAML is a superset of JSON: the configuration is written as JSON.
    let write = |name: &str, value: &Value| {
        std::fs::write(dir.join(name), value.to_string()).expect("write Synapse config")
    };
    write("homeserver.yaml", &homeserver_config(dir, port));
    write("log.yaml", &log_config(dir));
    // Any 32-byte seed is a valid ed25519 key; writing it skips `--generate-keys` (2 s).
    std::fs::write(
        dir.join("signing.key"),
        "ed25519 a_test AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
    )
    .expect("write the signing key");
    let stderr = std::fs::File::create(dir.join("stderr.log")).expect("create stderr.log");
    let mut command = Command::new(python);
    command
        .arg("-c")
        .arg(WATCHED_HOMESERVER)
        .arg(dir.join("homeserver.yaml"))
        .arg(dir)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(stderr);
    match owner {
        Owner::ThisProcess => command.arg("0").stdin(Stdio::piped()),
        // Its own process group: what the runner does to this test's group spares it.
        Owner::Runner(pid) => command
            .arg(pid.to_string())
            .stdin(Stdio::null())
            .process_group(0),
    };
    let mut child = command.spawn().expect("start Synapse");
    let started = Instant::now();
    while !healthy(port) {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "Synapse exited ({status}) before it was healthy:\n{}",
                logs(dir)
            );
        }
        if started.elapsed() > STARTUP_TIMEOUT {
            let _ = child.kill();
            panic!(
                "Synapse not healthy after {STARTUP_TIMEOUT:?}:\n{}",
                logs(dir)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (port, child)
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().unwrap().port()
}

fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200")
}

fn logs(dir: &Path) -> String {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    format!(
        "--- stderr ---\n{}\n--- homeserver.log ---\n{}",
        read("stderr.log"),
        read("homeserver.log")
    )
}

/// Every `rc_*` limit this Synapse knows, relaxed: tests send in bursts. The 429 test sets a
/// strict per-user override instead.
fn relaxed_limits() -> Value {
    let relaxed = json!({"per_second": 10000, "burst_count": 10000});
    json!({
        "rc_message": relaxed,
        "rc_registration": relaxed,
        "rc_room_creation": relaxed,
        "rc_joins_per_room": relaxed,
        "rc_login": {"address": relaxed, "account": relaxed, "failed_attempts": relaxed},
        "rc_joins": {"local": relaxed, "remote": relaxed},
        "rc_invites": {"per_room": relaxed, "per_user": relaxed, "per_issuer": relaxed},
        "rc_admin_redaction": relaxed,
        "rc_3pid_validation": relaxed,
        "rc_presence": {"per_user": relaxed},
        "rc_delayed_event_mgmt": relaxed,
        "rc_reports": relaxed,
        "rc_profile": relaxed,
        "rc_user_directory": relaxed,
        "rc_media_create": relaxed,
    })
}

fn homeserver_config(dir: &Path, port: u16) -> Value {
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let mut config = json!({
        "server_name": SERVER_NAME,
        "public_baseurl": format!("http://127.0.0.1:{port}/"),
        "pid_file": path("homeserver.pid"),
        // Client API only (the admin API is mounted under it); no federation listener.
        "listeners": [{
            "port": port, "bind_addresses": ["127.0.0.1"], "type": "http", "tls": false,
            "x_forwarded": false, "resources": [{"names": ["client"], "compress": false}],
        }],
        "database": {"name": "sqlite3", "args": {"database": path("homeserver.db")}},
        "log_config": path("log.yaml"),
        "media_store_path": path("media"),
        "signing_key_path": path("signing.key"),
        "registration_shared_secret": SHARED_SECRET,
        "macaroon_secret_key": "teamcomm-test-macaroon-secret",
        "form_secret": "teamcomm-test-form-secret",
        "enable_registration": false,
        // Nothing leaves the machine.
        "report_stats": false,
        "enable_metrics": false,
        "federation_domain_whitelist": [],
        "trusted_key_servers": [],
        "suppress_key_server_warning": true,
        "url_preview_enabled": false,
        "presence": {"enabled": false},
        "bcrypt_rounds": 4,
    });
    for (key, value) in relaxed_limits().as_object().unwrap() {
        config[key] = value.clone();
    }
    config
}

fn log_config(dir: &Path) -> Value {
    json!({
        "version": 1,
        "formatters": {"precise": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
        "handlers": {"file": {
            "class": "logging.FileHandler", "formatter": "precise",
            "filename": dir.join("homeserver.log").to_string_lossy(),
        }},
        "root": {"level": "WARNING", "handlers": ["file"]},
        "disable_existing_loggers": false,
    })
}
