//! The message queue across real server processes (issue 8 §4): `kill -9` of a server while
//! sends are in flight loses none of them, and two servers on one database share the queue
//! without sending a message twice.
//!
//! Each server is a separate OS process, so `kill -9` is real. The process is this test binary
//! run again with [`CHILD_FLAG`] set, running only [`server_process`], which serves the way
//! `teamcomm serve` does (settings from the environment, the logging, `server::serve`). We
//! re-run the test binary rather than start `target/debug/teamcomm`: `cargo nextest run -p
//! teamcomm-tests` does not build the app's binary, so it could be missing or older than the
//! code under test; the test binary always is the code under test.
//!
//! Posts go to a Slack-like fake ([`Slack`]) that records each `chat.postMessage` as Slack
//! would (posted when received, whether or not the sender lives to read the answer) and knows
//! which server process sent it (the owner of the connection's client socket, from `/proc`).

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Int4, Text};
use serde_json::{Value, json};
use teamcomm_api::Settings;
use teamcomm_tests::{OPERATOR_TOKEN, Resp, TestApp};

/// Set in a server process's environment: [`server_process`] serves only when it is.
const CHILD_FLAG: &str = "TEAMCOMM_TEST_SERVER_PROCESS";
/// The libtest name of [`server_process`], which a server process runs.
const CHILD_ENTRY: &str = "process::server_process";
/// Messages sent per test.
const SENT: usize = 40;
/// How long the whole delivery may take, on a loaded two-core machine.
const DELIVERY_DEADLINE: Duration = Duration::from_secs(40);

/// The body of a server process ([`Server::start`]): does nothing unless [`CHILD_FLAG`] is set.
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

/// A server process on the test's database; `SIGKILL`ed when dropped (other tests' too:
/// `ratelimit_redis.rs`).
pub(crate) struct Server {
    child: Child,
    base: String,
    log: PathBuf,
    client: reqwest::Client,
}

impl Server {
    /// Starts a server process on `app`'s database with a 50 ms delivery tick and `vars`, and
    /// waits until it answers `/healthz`.
    pub(crate) async fn start(app: &TestApp, vars: &[(&str, &str)]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = std::env::temp_dir().join(format!(
            "teamcomm-process-test-{}.log",
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
            .env("TEAMCOMM_WORKER_TICK_MS", "50")
            .env("TEAMCOMM_CHECKIN_TICK_SECS", "3600")
            .env("TEAMCOMM_WORKERS", "1")
            .env("TEAMCOMM_DB_POOL_SIZE", "4")
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start a server process");
        let mut server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
            client: reqwest::Client::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
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

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// What the process logged so far.
    pub(crate) fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `GET path` with an API key.
    pub(crate) async fn get(&self, path: &str, key: &str) -> Resp {
        self.call(reqwest::Method::GET, path, ("X-API-KEY", key), None)
            .await
    }

    /// `kill -9`, and waits until the process is gone.
    fn kill_9(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        auth: (&str, &str),
        body: Option<Value>,
    ) -> Resp {
        let mut request = self
            .client
            .request(method, self.url(path))
            .header(auth.0, auth.1);
        if let Some(body) = body {
            request = request.json(&body);
        }
        TestApp::read(request.send().await.expect("request")).await
    }

    /// Connects `org` to the fake Slack through the operator API.
    async fn connect_slack(&self, org: &str, slack: &Slack) {
        let r = self
            .call(
                reqwest::Method::PUT,
                &format!("/operator/v1/organizations/{org}/platform/"),
                ("Authorization", &format!("Bearer {OPERATOR_TOKEN}")),
                Some(json!({"kind": "slack", "secret": "xoxb-test", "base_url": slack.base_url})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }

    /// Sends message `n` (text `message n`) to channel `C-n`; answers its id.
    async fn send(&self, key: &str, n: usize) -> String {
        let r = self
            .call(
                reqwest::Method::POST,
                "/v1/send-message/",
                ("X-API-KEY", key),
                Some(json!({"message": text(n), "target_channels": [format!("C-{n}")]})),
            )
            .await;
        assert_eq!(r.status, 202, "{}", r.text);
        r.body["bot_message_id"].as_str().unwrap().to_owned()
    }

    async fn message(&self, key: &str, id: &str) -> Resp {
        self.call(
            reqwest::Method::GET,
            &format!("/v1/messages/{id}/"),
            ("X-API-KEY", key),
            None,
        )
        .await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        } else {
            eprintln!("server process log kept at {}", self.log.display());
        }
    }
}

fn text(n: usize) -> String {
    format!("message {n}")
}

/// What the fake Slack does besides answering each post after a pause.
#[derive(Clone, Copy)]
enum Gate {
    /// The post the test names ([`Slack::hold`]) is recorded and then not answered until the
    /// test releases it: a send in flight.
    Held,
    /// A post waits (10 s at most) until every server process has posted once: one server busy
    /// with its batch, the others must take the rest of the queue.
    EveryServerPosts,
}

/// One `chat.postMessage` the fake received: its text and the server process that sent it.
#[derive(Debug, Clone)]
struct Post {
    text: String,
    pid: Option<u32>,
}

struct SlackState {
    port: u16,
    pause: Duration,
    gate: Gate,
    posts: Mutex<Vec<Post>>,
    /// The server processes posts are attributed to.
    servers: Mutex<Vec<u32>>,
    /// The number (1-based) of the post to hold, and of the post held now.
    hold: AtomicUsize,
    holding: AtomicUsize,
    /// Posts up to this number are answered.
    released: tokio::sync::watch::Sender<usize>,
    barrier_until: Mutex<Option<Instant>>,
}

/// A Slack-like fake of `chat.postMessage` for the bot token `xoxb-test`, slow on purpose:
/// each post is answered after `pause`.
struct Slack {
    base_url: String,
    state: Arc<SlackState>,
}

impl Slack {
    fn start(gate: Gate, pause: Duration) -> Slack {
        use actix_web::{HttpRequest, HttpResponse, web};
        async fn post(
            req: HttpRequest,
            body: web::Json<Value>,
            state: web::Data<Arc<SlackState>>,
        ) -> HttpResponse {
            let authorized = req
                .headers()
                .get("authorization")
                .is_some_and(|v| v.as_bytes() == b"Bearer xoxb-test");
            if !authorized {
                return HttpResponse::Ok().json(json!({"ok": false, "error": "invalid_auth"}));
            }
            let servers = state.servers.lock().unwrap().clone();
            let pid = req
                .peer_addr()
                .and_then(|peer| connection_owner(peer, state.port, &servers));
            let n = {
                let mut posts = state.posts.lock().unwrap();
                posts.push(Post {
                    text: body["text"].as_str().unwrap_or_default().to_owned(),
                    pid,
                });
                posts.len()
            };
            match state.gate {
                Gate::Held if state.hold.load(Ordering::SeqCst) == n => {
                    state.holding.store(n, Ordering::SeqCst);
                    let mut released = state.released.subscribe();
                    let _ = released.wait_for(|r| *r >= n).await;
                }
                Gate::Held => {}
                Gate::EveryServerPosts => {
                    let until = *state
                        .barrier_until
                        .lock()
                        .unwrap()
                        .get_or_insert_with(|| Instant::now() + Duration::from_secs(10));
                    while Instant::now() < until && state.posting_servers().len() < servers.len() {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
            tokio::time::sleep(state.pause).await;
            HttpResponse::Ok().json(
                json!({"ok": true, "channel": body["channel"], "ts": format!("1700000000.{n:06}")}),
            )
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(SlackState {
            port: addr.port(),
            pause,
            gate,
            posts: Mutex::default(),
            servers: Mutex::default(),
            hold: AtomicUsize::new(0),
            holding: AtomicUsize::new(0),
            released: tokio::sync::watch::channel(0).0,
            barrier_until: Mutex::default(),
        });
        let data = web::Data::new(state.clone());
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .app_data(data.clone())
                .route("/api/chat.postMessage", web::post().to(post))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        actix_web::rt::spawn(server);
        Slack {
            base_url: format!("http://{addr}/api"),
            state,
        }
    }

    /// Attributes the posts that arrive from now on to `server` when it sent them.
    fn watch(&self, server: &Server) {
        self.state.servers.lock().unwrap().push(server.pid());
    }

    fn posts(&self) -> Vec<Post> {
        self.state.posts.lock().unwrap().clone()
    }

    /// How many times each text was posted.
    fn posted(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for post in self.posts() {
            *counts.entry(post.text).or_default() += 1;
        }
        counts
    }

    /// Holds post number `n` (1-based) when it arrives.
    fn hold(&self, n: usize) {
        self.state.hold.store(n, Ordering::SeqCst);
    }

    /// Waits until post number `n` has arrived and is held.
    async fn wait_holding(&self, n: usize) {
        let deadline = Instant::now() + DELIVERY_DEADLINE;
        while self.state.holding.load(Ordering::SeqCst) != n {
            assert!(
                Instant::now() < deadline,
                "post {n} never arrived: {:?}",
                self.posts()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Answers the posts held up to number `n` (to whoever still listens).
    fn release(&self, n: usize) {
        self.state.released.send_replace(n);
    }
}

impl SlackState {
    fn posting_servers(&self) -> BTreeSet<u32> {
        self.posts
            .lock()
            .unwrap()
            .iter()
            .filter_map(|p| p.pid)
            .collect()
    }
}

/// The process among `pids` holding the client end of the loopback connection from `peer` to
/// `port`: the socket's inode from `/proc/net/tcp`, then the process whose descriptors name it
/// (Linux only, like the servers this project runs on).
fn connection_owner(peer: SocketAddr, port: u16, pids: &[u32]) -> Option<u32> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let port_of = |address: &str| {
        address
            .rsplit(':')
            .next()
            .and_then(|p| u16::from_str_radix(p, 16).ok())
    };
    let inode = table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // A closed socket lingering in the table has inode 0.
        (fields.len() > 9
            && fields[9] != "0"
            && port_of(fields[1]) == Some(peer.port())
            && port_of(fields[2]) == Some(port))
        .then(|| format!("socket:[{}]", fields[9]))
    })?;
    pids.iter().copied().find(|pid| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|link| link.as_os_str() == inode.as_str())
            })
    })
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName, Debug)]
struct JobRow {
    #[diesel(sql_type = Text)]
    message_id: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Int4)]
    attempt: i32,
}

/// The chat-message jobs, as the database holds them now.
async fn jobs(app: &TestApp) -> Vec<JobRow> {
    use diesel_async::RunQueryDsl;
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query(
        "SELECT payload->>'message_id' AS message_id, state, attempt FROM jobs \
         WHERE kind = 'chat_message' ORDER BY created_at, id",
    )
    .load(&mut conn)
    .await
    .expect("read jobs")
}

/// Waits until `n` deliveries are `delivered`.
async fn wait_delivered(app: &TestApp, n: usize, slack: &Slack) {
    use diesel_async::RunQueryDsl;
    let deadline = Instant::now() + DELIVERY_DEADLINE;
    loop {
        let mut conn = app.database.pool().get().await.expect("connection");
        let delivered: Count = diesel::sql_query(
            "SELECT count(*) AS n FROM message_deliveries WHERE status = 'delivered'",
        )
        .get_result(&mut conn)
        .await
        .expect("count deliveries");
        drop(conn);
        if delivered.n == n as i64 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {n} delivered after {DELIVERY_DEADLINE:?}; jobs {:?}; posts {:?}",
            delivered.n,
            jobs(app).await,
            slack.posts()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_web::test]
async fn kill_9_while_sending_loses_no_message() {
    // The database, an organization and its key, provisioned in-process.
    let setup = TestApp::spawn().await;
    let (org, _, _, key) = setup.org_with_admin_key("business").await;
    let slack = Slack::start(Gate::Held, Duration::from_millis(20));
    // A 2-second lease: the jobs the killed server held are claimed again that soon. One job
    // at a time, so exactly one post is in flight when the server dies and the others of its
    // pass are claimed and not reached (with several at once, each would be in flight).
    let lease = [
        ("TEAMCOMM_WORKER_LEASE_SECS", "2"),
        ("TEAMCOMM_WORKER_CONCURRENCY", "1"),
    ];

    let mut a = Server::start(&setup, &lease).await;
    slack.watch(&a);
    a.connect_slack(&org, &slack).await;
    // The first post waits until every message is accepted, so the server's next pass claims a
    // full batch of them.
    slack.hold(1);
    let mut ids = Vec::new();
    for n in 0..SENT {
        ids.push(a.send(&key, n).await);
    }
    slack.wait_holding(1).await;
    let first_pass = jobs(&setup)
        .await
        .iter()
        .filter(|j| j.state == "running")
        .count();
    // The second post of the next pass is in flight when the server dies: one of its jobs is
    // done, the rest claimed and not reached.
    let in_flight = first_pass + 2;
    slack.hold(in_flight);
    slack.release(1);
    slack.wait_holding(in_flight).await;
    a.kill_9();
    let running: BTreeSet<String> = jobs(&setup)
        .await
        .into_iter()
        .filter(|j| j.state == "running")
        .map(|j| j.message_id)
        .collect();
    slack.release(in_flight);
    assert_eq!(
        slack.posts().len(),
        in_flight,
        "the killed server posts no more"
    );
    assert!(running.len() > 1, "claimed and not reached: {running:?}");
    let held = slack.posts()[in_flight - 1].text.clone();
    let held_id = &ids[(0..SENT).find(|n| text(*n) == held).unwrap()];
    assert!(running.contains(held_id), "{held_id} not in {running:?}");

    let b = Server::start(&setup, &lease).await;
    slack.watch(&b);
    wait_delivered(&setup, SENT, &slack).await;

    for id in &ids {
        let m = b.message(&key, id).await;
        assert_eq!(m.body["status"], "delivered", "{}", m.text);
    }
    // Every message was posted; the one whose answer the killed server never read was posted
    // again (Slack has no idempotency key to dedupe it), and no other.
    let posted = slack.posted();
    assert_eq!(posted.len(), SENT, "{posted:?}");
    for n in 0..SENT {
        let times = posted.get(&text(n)).copied().unwrap_or(0);
        let expected = if text(n) == held { 2 } else { 1 };
        assert_eq!(
            times,
            expected,
            "{} posted {times} times: {posted:?}",
            text(n)
        );
    }
    let held_posts: Vec<Option<u32>> = slack
        .posts()
        .into_iter()
        .filter(|p| p.text == held)
        .map(|p| p.pid)
        .collect();
    assert_eq!(held_posts, [Some(a.pid()), Some(b.pid())]);
    // The jobs the killed server held were claimed again once their lease expired; the others
    // once.
    let jobs = jobs(&setup).await;
    assert!(jobs.iter().all(|j| j.state == "done"), "{jobs:?}");
    for job in &jobs {
        let claims = if running.contains(&job.message_id) {
            2
        } else {
            1
        };
        assert_eq!(job.attempt, claims, "{jobs:?}");
    }
}

#[actix_web::test]
async fn two_servers_share_one_queue() {
    let setup = TestApp::spawn().await;
    let (org, _, _, key) = setup.org_with_admin_key("business").await;
    let slack = Slack::start(Gate::EveryServerPosts, Duration::from_millis(20));
    let a = Server::start(&setup, &[]).await;
    let b = Server::start(&setup, &[]).await;
    slack.watch(&a);
    slack.watch(&b);
    a.connect_slack(&org, &slack).await;

    let servers = [&a, &b];
    let mut ids = Vec::new();
    for n in 0..SENT {
        ids.push(servers[n % 2].send(&key, n).await);
    }
    wait_delivered(&setup, SENT, &slack).await;

    for (n, id) in ids.iter().enumerate() {
        let m = servers[(n + 1) % 2].message(&key, id).await;
        assert_eq!(m.body["status"], "delivered", "{}", m.text);
    }
    // Exactly once: the platform never failed, so no job was claimed twice.
    let posted = slack.posted();
    assert_eq!(posted.len(), SENT, "{posted:?}");
    assert!(posted.values().all(|times| *times == 1), "{posted:?}");
    let jobs = jobs(&setup).await;
    assert!(
        jobs.iter().all(|j| j.state == "done" && j.attempt == 1),
        "{jobs:?}"
    );
    // Both processes took work from the queue.
    let senders: BTreeMap<Option<u32>, usize> =
        slack.posts().into_iter().fold(BTreeMap::new(), |mut m, p| {
            *m.entry(p.pid).or_default() += 1;
            m
        });
    assert_eq!(
        senders.keys().copied().collect::<Vec<_>>(),
        {
            let mut pids = vec![Some(a.pid()), Some(b.pid())];
            pids.sort();
            pids
        },
        "posts per server process: {senders:?}"
    );
}
