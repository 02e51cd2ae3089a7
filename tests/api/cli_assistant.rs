//! `POST /v1/cli/chat/completions/`: the assistant against a local OpenAI-compatible stub (the
//! real upstream is a paid third-party API). What the stub received (model, key, messages with
//! the organization's own data and the session's earlier turns), the threads kept per session
//! in Postgres, the upstream's errors and timeouts, no model configured, the per-credential
//! budget.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp, TestAppBuilder};

const MODEL: &str = "stub-model-1";
const KEY: &str = "sk-stub-0123456789";

/// How the stub answers the next requests.
#[derive(Clone)]
enum Mode {
    Answer,
    Status(u16),
    Hang(Duration),
    NotACompletion,
}

/// A local OpenAI-compatible chat-completions server: answers `POST /v1/chat/completions` by
/// its mode and records every request (its `Authorization` header and body).
pub(crate) struct Stub {
    base_url: String,
    mode: Arc<Mutex<Mode>>,
    seen: Seen,
}

/// Each request's `Authorization` header and body.
type Seen = Arc<Mutex<Vec<(Option<String>, Value)>>>;

async fn completions(
    req: HttpRequest,
    body: web::Json<Value>,
    mode: web::Data<Arc<Mutex<Mode>>>,
    seen: web::Data<Seen>,
) -> HttpResponse {
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let n = {
        let mut seen = seen.lock().unwrap();
        seen.push((auth, body.0.clone()));
        seen.len()
    };
    let mode = mode.lock().unwrap().clone();
    match mode {
        Mode::Answer => HttpResponse::Ok().json(json!({
            "id": format!("chatcmpl-{n}"),
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": format!("Answer {n}")}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })),
        Mode::Status(s) => HttpResponse::build(actix_web::http::StatusCode::from_u16(s).unwrap())
            .json(json!({"error": {"message": "the stub failed", "type": "server_error"}})),
        Mode::Hang(d) => {
            actix_web::rt::time::sleep(d).await;
            HttpResponse::Ok().json(json!({"choices": []}))
        }
        Mode::NotACompletion => HttpResponse::Ok().body("<html>gateway</html>"),
    }
}

impl Stub {
    pub(crate) fn start() -> Stub {
        let mode = Arc::new(Mutex::new(Mode::Answer));
        let seen: Seen = Arc::default();
        let (m, s) = (web::Data::new(mode.clone()), web::Data::new(seen.clone()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .app_data(m.clone())
                .app_data(s.clone())
                .route("/v1/chat/completions", web::post().to(completions))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        actix_web::rt::spawn(server);
        Stub {
            base_url: format!("http://{addr}/v1"),
            mode,
            seen,
        }
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    /// Every request: its `Authorization` header and body.
    pub(crate) fn seen(&self) -> Vec<(Option<String>, Value)> {
        self.seen.lock().unwrap().clone()
    }

    /// `builder` with the stub as the app's model (1 s to answer).
    pub(crate) fn configure(&self, builder: TestAppBuilder) -> TestAppBuilder {
        builder
            .var("TEAMCOMM_LLM_URL", &self.base_url)
            .var("TEAMCOMM_LLM_MODEL", MODEL)
            .var("TEAMCOMM_LLM_API_KEY", KEY)
            .var("TEAMCOMM_LLM_TIMEOUT_SECS", "1")
    }
}

/// The app with the stub as its model (1 s to answer).
pub(crate) async fn app_with(stub: &Stub) -> TestApp {
    stub.configure(TestApp::builder()).spawn().await
}

async fn cli_token(app: &TestApp, user: &str) -> String {
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/cli-tokens/"),
            None,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["token"].as_str().unwrap().to_owned()
}

async fn ask(app: &TestApp, token: &str, body: Value) -> Resp {
    app.send(
        "POST",
        "/v1/cli/chat/completions/",
        &[("Authorization", &format!("Bearer {token}"))],
        Some(body),
    )
    .await
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Turns kept for a session (any person).
async fn turns(app: &TestApp, session: &str) -> i64 {
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query("SELECT count(*) AS n FROM assistant_turns WHERE session_id = $1")
        .bind::<Text, _>(session)
        .get_result::<Count>(&mut conn)
        .await
        .expect("count turns")
        .n
}

/// An organization with an admin key and a member (token) asked "Standup" daily, who answered
/// today and received kudos; another member answered too. (admin key, member, member token).
async fn org_with_data(app: &TestApp) -> (String, String, String) {
    let (org, _, _, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let other = app.create_user(&org, "member").await;
    app.create_daily_checkin(&admin_key, &member).await;
    app.create_daily_checkin(&admin_key, &other).await;
    let token = cli_token(app, &member).await;
    let r = app
        .send(
            "POST",
            "/v1/cli/updates/",
            &[("Authorization", &format!("Bearer {token}"))],
            Some(json!({"done": "Migrated the billing tables"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["followups_count"], 1, "{}", r.text);
    let other_token = cli_token(app, &other).await;
    let r = app
        .send(
            "POST",
            "/v1/cli/updates/",
            &[("Authorization", &format!("Bearer {other_token}"))],
            Some(json!({"done": "Secret colleague work"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = app
        .send(
            "POST",
            "/v1/kudos/",
            &[("X-API-KEY", &admin_key)],
            Some(json!({"content": "Thanks for the flawless rollout", "receivers": [member]})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    (admin_key, member, token)
}

#[actix_web::test]
async fn the_assistant_answers_from_the_callers_data_through_the_upstream() {
    let stub = Stub::start();
    let app = app_with(&stub).await;
    let (_, _, token) = org_with_data(&app).await;

    let session = "6f1d0c3e-1b2a-4c5d-9e8f-0a1b2c3d4e5f";
    let r = ask(
        &app,
        &token,
        json!({"message": "What did I do today?", "session_id": session}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({
            "message": {"role": "assistant", "content": "Answer 1"},
            "actions": [],
            "classification": "answer",
            "session_id": session,
        })
    );

    let seen = stub.seen();
    assert_eq!(seen.len(), 1);
    let (auth, body) = &seen[0];
    assert_eq!(auth.as_deref(), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(body["model"], MODEL);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{body}");
    assert_eq!(messages[0]["role"], "system");
    let system = messages[0]["content"].as_str().unwrap();
    for needle in [
        "Test member",
        "Org",
        "Standup (answered)",
        "What did you do? Migrated the billing tables",
        "Thanks for the flawless rollout",
        "from Test admin",
    ] {
        assert!(system.contains(needle), "{needle:?} in {system}");
    }
    assert!(
        !system.contains("Secret colleague work"),
        "another person's answers are not the caller's context: {system}"
    );
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "What did I do today?"})
    );
    assert_eq!(turns(&app, session).await, 2);

    // The same session goes on: the earlier question and answer go with the next one.
    let r = ask(
        &app,
        &token,
        json!({"message": "And who thanked me?", "session_id": session}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["message"]["content"], "Answer 2");
    let messages = stub.seen()[1].1["messages"].as_array().unwrap().clone();
    let turns_sent: Vec<(&str, &str)> = messages[1..]
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        turns_sent,
        [
            ("user", "What did I do today?"),
            ("assistant", "Answer 1"),
            ("user", "And who thanked me?"),
        ]
    );
    assert_eq!(turns(&app, session).await, 4);

    // Without a session id, a new session; with reset_thread, the old turns are forgotten.
    let r = ask(&app, &token, json!({"message": "Hello"})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let fresh = r.body["session_id"].as_str().unwrap().to_owned();
    assert_ne!(fresh, session);
    assert_eq!(stub.seen()[2].1["messages"].as_array().unwrap().len(), 2);
    let r = ask(
        &app,
        &token,
        json!({"message": "Start over", "session_id": session, "reset_thread": true}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(stub.seen()[3].1["messages"].as_array().unwrap().len(), 2);
    assert_eq!(turns(&app, session).await, 2);
}

#[actix_web::test]
async fn another_persons_session_id_is_a_thread_of_ones_own() {
    let stub = Stub::start();
    let app = app_with(&stub).await;
    let (admin_key, _, token) = org_with_data(&app).await;
    let session = "shared-id";
    assert_eq!(
        ask(
            &app,
            &token,
            json!({"message": "mine", "session_id": session})
        )
        .await
        .status,
        200
    );
    // The admin, by API key, with the same id: none of the member's turns.
    let r = app
        .send(
            "POST",
            "/v1/cli/chat/completions/",
            &[("X-API-KEY", &admin_key)],
            Some(json!({"message": "theirs?", "session_id": session})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let messages = stub.seen()[1].1["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(!messages[0]["content"].as_str().unwrap().contains("mine"));
}

#[actix_web::test]
async fn upstream_errors_are_502_and_keep_nothing() {
    let stub = Stub::start();
    let app = app_with(&stub).await;
    let (_, _, token) = org_with_data(&app).await;
    for mode in [Mode::Status(500), Mode::Status(401), Mode::NotACompletion] {
        stub.set(mode);
        let r = ask(
            &app,
            &token,
            json!({"message": "hi", "session_id": "s-err"}),
        )
        .await;
        r.assert_error(502, "assistant_upstream_error");
    }
    assert_eq!(stub.seen().len(), 3);
    assert_eq!(turns(&app, "s-err").await, 0);
    // The upstream's status is told; its body is not.
    stub.set(Mode::Status(500));
    let r = ask(&app, &token, json!({"message": "hi"})).await;
    assert_eq!(r.body["extra"]["upstream_status"], 500, "{}", r.text);
    assert!(!r.text.contains("the stub failed"), "{}", r.text);
}

#[actix_web::test]
async fn an_upstream_that_does_not_answer_in_time_is_504() {
    let stub = Stub::start();
    let app = app_with(&stub).await;
    let (_, _, token) = org_with_data(&app).await;
    stub.set(Mode::Hang(Duration::from_secs(3)));
    let started = std::time::Instant::now();
    let r = ask(
        &app,
        &token,
        json!({"message": "hi", "session_id": "s-slow"}),
    )
    .await;
    r.assert_error(504, "assistant_upstream_timeout");
    assert!(
        started.elapsed() < Duration::from_millis(2800),
        "gave up after the 1 s limit, not the stub's 3 s: {:?}",
        started.elapsed()
    );
    assert_eq!(stub.seen().len(), 1);
    assert_eq!(turns(&app, "s-slow").await, 0);
}

#[actix_web::test]
async fn without_a_model_the_assistant_is_503_and_nothing_is_sent() {
    let stub = Stub::start();
    // The stub runs, but this app is not told about it.
    let app = TestApp::spawn().await;
    let (_, _, token) = org_with_data(&app).await;
    let r = ask(
        &app,
        &token,
        json!({"message": "hi", "session_id": "s-none"}),
    )
    .await;
    r.assert_error(503, "assistant_not_configured");
    assert!(stub.seen().is_empty());
    assert_eq!(turns(&app, "s-none").await, 0);
}

#[actix_web::test]
async fn questions_and_session_ids_are_validated_before_any_call() {
    let stub = Stub::start();
    let app = app_with(&stub).await;
    let (_, _, token) = org_with_data(&app).await;
    for body in [
        json!({}),
        json!({"message": "   "}),
        json!({"message": "hi", "session_id": "not a session"}),
        json!({"message": "x".repeat(8001)}),
    ] {
        ask(&app, &token, body)
            .await
            .assert_error(400, "params_validation_error");
    }
    ask(&app, &token, json!({"message": "hi", "temperature": 2}))
        .await
        .assert_error(400, "unknown_field");
    assert!(stub.seen().is_empty());
    // The question may come as OpenAI-style messages; a history is used for a new session.
    let r = ask(
        &app,
        &token,
        json!({
            "messages": [{"role": "user", "content": "from messages"}],
            "history": [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "sure"}],
            "available_commands": [{"name": "/status", "description": "Show pending check-ins."}],
            "session_id": "tui-1",
        }),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let messages = stub.seen()[0].1["messages"].as_array().unwrap().clone();
    let contents: Vec<&str> = messages[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["earlier", "sure", "from messages"]);
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("/status: Show pending check-ins.")
    );
}

#[actix_web::test]
async fn thirty_questions_a_minute_per_credential() {
    let stub = Stub::start();
    let app = app_with(&stub).await;
    let (admin_key, _, token) = org_with_data(&app).await;
    // A burst of 30, then one every 2 s: ask until refused; a slow machine may have earned a
    // question back per 2 s spent asking.
    let started = std::time::Instant::now();
    let mut answered = 0;
    let refused = loop {
        let r = ask(&app, &token, json!({"message": format!("q{answered}")})).await;
        if r.status != 200 {
            break r;
        }
        answered += 1;
        assert!(answered <= 60, "never refused");
    };
    let earned = started.elapsed().as_secs() / 2 + 1;
    assert!(
        (30..=30 + earned).contains(&answered),
        "{answered} answered in {:?}",
        started.elapsed()
    );
    refused.assert_error(429, "throttled");
    assert_eq!(
        refused.body["extra"]["scope"], "assistant",
        "{}",
        refused.text
    );
    let after: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=2).contains(&after), "{after}");
    assert_eq!(
        stub.seen().len() as u64,
        answered,
        "the refused question was not sent"
    );
    // Another credential has its own budget.
    let r = app
        .send(
            "POST",
            "/v1/cli/chat/completions/",
            &[("X-API-KEY", &admin_key)],
            Some(json!({"message": "hi"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
}
