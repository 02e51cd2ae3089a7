//! `TestApp`: the real actix app on `127.0.0.1:0` against a `TestDb`, driven over HTTP.

use std::collections::HashMap;
use std::net::TcpListener;

use actix_web::{HttpServer, web};
use serde_json::{Value, json};
use teamcomm_api::{AppState, Settings, openapi};
use teamcomm_store_pg::Database;

use crate::TestDb;

pub const OPERATOR_TOKEN: &str = "operator-token-for-tests-0123456789";
pub const JWT_SECRET: &str = "jwt-secret-for-tests-0123456789abcdef0123456789";

/// A response: status, headers and the parsed JSON body (`Value::Null` when empty).
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Resp {
    /// The `code` of an error body.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts an error answer: status, `code`, a string `detail`, and a JSON content type.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "status of {}", self.text);
        assert_eq!(self.code(), code, "code of {}", self.text);
        assert!(self.body["detail"].is_string(), "detail in {}", self.text);
        assert!(
            self.header("content-type")
                .is_some_and(|c| c.starts_with("application/json")),
            "content type of {}",
            self.text
        );
    }
}

async fn panics() -> actix_web::HttpResponse {
    panic!("secret internal detail")
}

pub struct TestAppBuilder {
    vars: HashMap<String, String>,
    extra_routes: bool,
}

impl TestAppBuilder {
    /// Sets an environment-style variable for the app's settings.
    pub fn var(mut self, k: &str, v: &str) -> Self {
        self.vars.insert(k.to_owned(), v.to_owned());
        self
    }

    /// Adds test-only routes (`/v1/__test/panic/`).
    pub fn with_test_routes(mut self) -> Self {
        self.extra_routes = true;
        self
    }

    pub async fn spawn(self) -> TestApp {
        let db = TestDb::new().await;
        let mut vars = self.vars;
        vars.insert("DATABASE_URL".into(), db.url.clone());
        let settings = Settings::from_vars(&vars, false).expect("test settings");
        let database = Database::connect(&db.url, 4).expect("pool");
        let database_handle = database.clone();
        let state = AppState::new(database, settings);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().unwrap();
        let doc = web::Data::new(openapi::document());
        let app_state = state.clone();
        let extra = self.extra_routes;
        let server = HttpServer::new(move || {
            let app = teamcomm_api::app(app_state.clone(), doc.clone());
            app.configure(|cfg| {
                if extra {
                    cfg.route("/v1/__test/panic/", web::get().to(panics));
                }
            })
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .expect("listen")
        .run();
        actix_web::rt::spawn(server);
        TestApp {
            base: format!("http://{addr}"),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            state,
            database: database_handle,
            _db: db,
        }
    }
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub state: AppState,
    /// The app's database, for reading stored effects behind the app's back.
    pub database: Database,
    _db: TestDb,
}

impl TestApp {
    /// The organization repository straight on the database, bypassing the app's caches (a
    /// write through it is a write "made elsewhere").
    pub fn orgs(&self) -> std::sync::Arc<dyn teamcomm_org::OrgRepository> {
        std::sync::Arc::new(teamcomm_store_pg::PgOrgRepository::new(
            self.database.clone(),
        ))
    }

    /// The team repository straight on the database.
    pub fn team_repo(&self) -> std::sync::Arc<dyn teamcomm_org::TeamRepository> {
        std::sync::Arc::new(teamcomm_store_pg::PgTeamRepository::new(
            self.database.clone(),
        ))
    }

    /// The key repository straight on the database.
    pub fn key_repo(&self) -> std::sync::Arc<dyn teamcomm_keys::KeyRepository> {
        std::sync::Arc::new(teamcomm_store_pg::PgKeyRepository::new(
            self.database.clone(),
        ))
    }

    pub fn builder() -> TestAppBuilder {
        let vars = [
            ("TEAMCOMM_OPERATOR_TOKEN", OPERATOR_TOKEN),
            ("TEAMCOMM_JWT_SECRET", JWT_SECRET),
            ("TEAMCOMM_BASE_URL", "https://api.teamcomm.test"),
            ("TEAMCOMM_APP_URL", "https://app.teamcomm.test"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        TestAppBuilder {
            vars,
            extra_routes: false,
        }
    }

    pub async fn spawn() -> TestApp {
        Self::builder().spawn().await
    }

    pub fn db(&self) -> &TestDb {
        &self._db
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a request with optional JSON body and headers.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Resp {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self
            .client
            .request(method, self.url(path))
            .header("Accept", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.expect("request");
        Self::read(res).await
    }

    pub async fn read(res: reqwest::Response) -> Resp {
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let text = res.text().await.unwrap_or_default();
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::Null)
        };
        Resp {
            status,
            headers,
            body,
            text,
        }
    }

    /// `GET` with an API key.
    pub async fn get_with_key(&self, path: &str, key: &str) -> Resp {
        self.send("GET", path, &[("X-API-KEY", key)], None).await
    }

    pub async fn operator(&self, method: &str, path: &str, body: Option<Value>) -> Resp {
        let auth = format!("Bearer {OPERATOR_TOKEN}");
        self.send(method, path, &[("Authorization", &auth)], body)
            .await
    }

    /// Creates an organization on `plan`; returns its uuid.
    pub async fn create_org(&self, plan: &str) -> String {
        let r = self
            .operator(
                "POST",
                "/operator/v1/organizations/",
                Some(json!({"name": "Org", "plan": plan})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }

    /// Adds a person with `role`; returns their uuid.
    pub async fn create_user(&self, org: &str, role: &str) -> String {
        let email = format!("{}@example.com", uuid::Uuid::new_v4().simple());
        let r = self
            .operator(
                "POST",
                &format!("/operator/v1/organizations/{org}/users/"),
                Some(
                    json!({"email": email, "first_name": "Test", "last_name": role, "role": role}),
                ),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }

    /// Deactivates person `user` through the operator door.
    pub async fn deactivate(&self, user: &str) {
        let r = self
            .operator(
                "PATCH",
                &format!("/operator/v1/users/{user}/"),
                Some(json!({"is_active": false})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }

    /// A web-session access token for a user, as `Authorization` header value.
    pub async fn session(&self, user: &str) -> String {
        let r = self
            .operator(
                "POST",
                &format!("/operator/v1/users/{user}/sessions/"),
                None,
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        format!("JWT {}", r.body["access"].as_str().unwrap())
    }

    /// Key management call with a session header.
    pub async fn keys(&self, method: &str, path: &str, session: &str, body: Option<Value>) -> Resp {
        self.send(method, path, &[("Authorization", session)], body)
            .await
    }

    /// Creates a key through the API; returns (record, plaintext key).
    pub async fn create_key(&self, session: &str, body: Value) -> (Value, String) {
        let r = self
            .keys("POST", "/api/org/api-keys/", session, Some(body))
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        let key = r.body["key"].as_str().unwrap().to_owned();
        (r.body, key)
    }

    /// An organization on `plan` with an admin and a key of theirs: (org, admin, session, key).
    /// A check-in ("Standup", two text questions, the second optional) asking `participant`
    /// every day at 00:00 UTC: its trigger has passed whenever the test runs, and the round
    /// stays open until the end of the day. Answers its uuid.
    pub async fn create_daily_checkin(&self, admin_key: &str, participant: &str) -> String {
        let r = self
            .send(
                "POST",
                "/v1/checkins/create/",
                &[("X-API-KEY", admin_key)],
                Some(json!({
                    "name": "Standup",
                    "schedule": {"days": [0, 1, 2, 3, 4, 5, 6], "time": "00:00", "timezone": "UTC"},
                    "participants": {"user_uuids": [participant]},
                    "questions": [
                        {"question": "What did you do?", "question_type": "text", "short_question": "Done"},
                        {"question": "Anything blocking you?", "question_type": "text", "required": false, "short_question": "Blockers"},
                    ],
                })),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }

    pub async fn org_with_admin_key(&self, plan: &str) -> (String, String, String, String) {
        let org = self.create_org(plan).await;
        let admin = self.create_user(&org, "admin").await;
        let session = self.session(&admin).await;
        let (_, key) = self
            .create_key(&session, json!({"name": "admin key"}))
            .await;
        (org, admin, session, key)
    }
}
