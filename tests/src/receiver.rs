//! A webhook receiver for tests: a real HTTP server on a loopback port that records what it gets
//! and answers from a script (statuses, `Retry-After`, a redirect, a hang), then 200.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// How a [`Receiver`] answers one request.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    Status(u16),
    /// 429 with `Retry-After: <seconds>`.
    RetryAfter(u64),
    /// 302 to another path of the same receiver.
    Redirect,
    /// Answers nothing for this long.
    Hang(u64),
}

#[derive(Debug, Clone)]
pub struct Got {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Got {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn payload(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON payload")
    }
}

#[derive(Default)]
struct Script {
    answers: Mutex<VecDeque<Answer>>,
    got: Mutex<Vec<Got>>,
}

/// A receiver on a loopback port: answers from its script, then 200.
pub struct Receiver {
    pub port: u16,
    script: Arc<Script>,
}

impl Receiver {
    pub fn start(answers: &[Answer]) -> Receiver {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        Self::on(listener, answers)
    }

    pub fn on(listener: std::net::TcpListener, answers: &[Answer]) -> Receiver {
        use actix_web::{HttpRequest, HttpResponse, web};
        async fn take(req: HttpRequest, body: web::Bytes, s: web::Data<Script>) -> HttpResponse {
            let headers = req
                .headers()
                .iter()
                .map(|(k, v)| {
                    let v = v.to_str().unwrap_or_default().to_owned();
                    (k.as_str().to_owned(), v)
                })
                .collect();
            s.got.lock().unwrap().push(Got {
                path: req.path().to_owned(),
                headers,
                body: body.to_vec(),
            });
            let answer = s.answers.lock().unwrap().pop_front();
            match answer.unwrap_or(Answer::Status(200)) {
                Answer::Status(code) => {
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap())
                        .finish()
                }
                Answer::RetryAfter(secs) => HttpResponse::TooManyRequests()
                    .insert_header(("Retry-After", secs.to_string()))
                    .finish(),
                Answer::Redirect => HttpResponse::Found()
                    .insert_header(("Location", "/elsewhere"))
                    .finish(),
                Answer::Hang(secs) => {
                    actix_web::rt::time::sleep(std::time::Duration::from_secs(secs)).await;
                    HttpResponse::Ok().finish()
                }
            }
        }
        let port = listener.local_addr().unwrap().port();
        let script = Arc::new(Script {
            answers: Mutex::new(answers.iter().copied().collect()),
            got: Mutex::default(),
        });
        let data = web::Data::from(script.clone());
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .app_data(data.clone())
                .default_service(web::to(take))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        actix_web::rt::spawn(server);
        Receiver { port, script }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/in", self.port)
    }

    pub fn got(&self) -> Vec<Got> {
        self.script.got.lock().unwrap().clone()
    }
}
