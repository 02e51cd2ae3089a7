//! A local stand-in for the Slack Web API, shared by the test files that connect an
//! organization to Slack.

use serde_json::{Value, json};

/// A local stand-in for the Slack Web API: `conversations.open`, `chat.postMessage` (refusing
/// channel `C-GONE` as Slack does), `chat.update` and `conversations.list` (a GET answering the
/// channels added with [`FakeSlack::add_channel`], in one page), for the bot token `xoxb-test`
/// only; every call is recorded as (method, body), a GET's body as null.
pub struct FakeSlack {
    /// The Web API base URL to connect an organization with.
    pub base_url: String,
    calls: std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>,
    channels: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl FakeSlack {
    /// Starts the server on an ephemeral loopback port, on the current actix runtime.
    pub fn start() -> FakeSlack {
        use actix_web::{HttpRequest, HttpResponse, web};
        type Calls = std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>;
        type Channels = std::sync::Arc<std::sync::Mutex<Vec<Value>>>;
        fn authorized(req: &HttpRequest) -> bool {
            req.headers()
                .get("authorization")
                .is_some_and(|v| v.as_bytes() == b"Bearer xoxb-test")
        }
        async fn list(
            req: HttpRequest,
            method: web::Path<String>,
            calls: web::Data<Calls>,
            channels: web::Data<Channels>,
        ) -> HttpResponse {
            if !authorized(&req) {
                return HttpResponse::Ok().json(json!({"ok": false, "error": "invalid_auth"}));
            }
            calls.lock().unwrap().push((method.clone(), Value::Null));
            if method.as_str() != "conversations.list" {
                return HttpResponse::Ok().json(json!({"ok": false, "error": "unknown_method"}));
            }
            let channels = channels.lock().unwrap().clone();
            HttpResponse::Ok().json(
                json!({"ok": true, "channels": channels, "response_metadata": {"next_cursor": ""}}),
            )
        }
        async fn answer(
            req: HttpRequest,
            method: web::Path<String>,
            body: web::Json<Value>,
            calls: web::Data<Calls>,
        ) -> HttpResponse {
            if !authorized(&req) {
                return HttpResponse::Ok().json(json!({"ok": false, "error": "invalid_auth"}));
            }
            let mut held = calls.lock().unwrap();
            held.push((method.clone(), body.0.clone()));
            let n = held.len();
            HttpResponse::Ok().json(match method.as_str() {
                "conversations.open" => {
                    json!({"ok": true, "channel": {"id": format!("D-{}", body["users"].as_str().unwrap())}})
                }
                "chat.postMessage" if body["channel"] == "C-GONE" => {
                    json!({"ok": false, "error": "channel_not_found"})
                }
                "chat.postMessage" => {
                    json!({"ok": true, "channel": body["channel"], "ts": format!("1700000000.{n:06}")})
                }
                "chat.update" => json!({"ok": true, "channel": body["channel"], "ts": body["ts"]}),
                _ => json!({"ok": false, "error": "unknown_method"}),
            })
        }
        let calls: Calls = Default::default();
        let data = web::Data::new(calls.clone());
        let channels: Channels = Default::default();
        let channel_data = web::Data::new(channels.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .app_data(data.clone())
                .app_data(channel_data.clone())
                .route("/api/{method}", web::post().to(answer))
                .route("/api/{method}", web::get().to(list))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        actix_web::rt::spawn(server);
        FakeSlack {
            base_url: format!("http://{addr}/api"),
            calls,
            channels,
        }
    }

    /// A channel the bot can see, from now on listed by `conversations.list`.
    pub fn add_channel(&self, id: &str, name: &str, is_private: bool) {
        self.channels
            .lock()
            .unwrap()
            .push(json!({"id": id, "name": name, "is_private": is_private}));
    }

    /// The bodies of the calls of `method`, in arrival order.
    pub fn calls(&self, method: &str) -> Vec<Value> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, body)| body.clone())
            .collect()
    }
}
