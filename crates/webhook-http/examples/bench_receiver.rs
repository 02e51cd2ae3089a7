//! The webhook receiver of `make bench` (scripts/bench_webhooks.py): counts deliveries, records
//! when each arrived by `webhook-id`, and checks the Standard Webhooks signature of a sample.
//!
//! Plain hyper (HTTP/1.1, keep-alive) on one thread: at the bench's rates it uses a few percent
//! of a core, so it is never what bounds the numbers (the bench reports its CPU time).
//!
//! Usage: `bench_receiver [ADDRESS]` (default `127.0.0.1:0`). The first line on stdout is
//! `listening <address>`. The receiver exits when its standard input closes (the bench holds a
//! pipe to it), however the bench ends.
//!
//! - `POST` to any other path: a delivery. Answers 204. Recorded: `webhook-id`, the arrival time
//!   (unix nanoseconds), and the `data.kudos.uuid` of the body when it has one. Every
//!   `SAMPLE_EVERY`-th delivery (the first included) has its signature checked against the
//!   secret last set; a bad or missing one is counted.
//! - `POST /_bench/reset` with the endpoint's signing secret as the body: forgets every arrival
//!   and checks signatures with that secret from now on.
//! - `GET /_bench/stats`: `{"count", "distinct", "first_ns", "last_ns", "verified",
//!   "bad_signatures"}`.
//! - `GET /_bench/arrivals`: one line per distinct `webhook-id`: `<webhook-id> <arrival ns>
//!   <kudos uuid or ->`, the first arrival of each.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use teamcomm_webhooks::SecretText;
use teamcomm_webhooks::signing::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, verify};

/// One delivery in this many has its signature checked.
const SAMPLE_EVERY: u64 = 16;

#[derive(Default)]
struct State {
    secret: Option<SecretText>,
    count: u64,
    first_ns: Option<u128>,
    last_ns: Option<u128>,
    verified: u64,
    bad_signatures: u64,
    /// The first arrival of each `webhook-id`, and the kudos it carried.
    arrivals: HashMap<String, (u128, Option<String>)>,
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

fn header<'a>(req: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

fn answer(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r
}

async fn handle(
    req: Request<Incoming>,
    state: Arc<Mutex<State>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let at = now_ns();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let id = header(&req, HEADER_ID).map(str::to_owned);
    let timestamp = header(&req, HEADER_TIMESTAMP).and_then(|t| t.parse::<i64>().ok());
    let signature = header(&req, HEADER_SIGNATURE).map(str::to_owned);
    let Ok(body) = req.into_body().collect().await.map(|b| b.to_bytes()) else {
        return Ok(answer(StatusCode::BAD_REQUEST, "unreadable body"));
    };
    match (method, path.as_str()) {
        (Method::POST, "/_bench/reset") => {
            let secret = String::from_utf8_lossy(&body).trim().to_owned();
            *state.lock().unwrap() = State {
                secret: (!secret.is_empty()).then(|| SecretText::new(secret)),
                ..State::default()
            };
            Ok(answer(StatusCode::NO_CONTENT, Bytes::new()))
        }
        (Method::GET, "/_bench/stats") => {
            let s = state.lock().unwrap();
            let json = serde_json::json!({
                "count": s.count,
                "distinct": s.arrivals.len(),
                "first_ns": s.first_ns.map(|n| n.to_string()),
                "last_ns": s.last_ns.map(|n| n.to_string()),
                "verified": s.verified,
                "bad_signatures": s.bad_signatures,
            });
            Ok(answer(StatusCode::OK, json.to_string()))
        }
        (Method::GET, "/_bench/arrivals") => {
            let s = state.lock().unwrap();
            let mut out = String::with_capacity(s.arrivals.len() * 96);
            for (id, (at, kudos)) in &s.arrivals {
                let kudos = kudos.as_deref().unwrap_or("-");
                out.push_str(&format!("{id} {at} {kudos}\n"));
            }
            Ok(answer(StatusCode::OK, out))
        }
        (Method::POST, _) => {
            let Some(id) = id else {
                return Ok(answer(StatusCode::BAD_REQUEST, "no webhook-id"));
            };
            let (sample, secret) = {
                let mut s = state.lock().unwrap();
                s.count += 1;
                s.first_ns.get_or_insert(at);
                s.last_ns = Some(at);
                ((s.count - 1).is_multiple_of(SAMPLE_EVERY), s.secret.clone())
            };
            // Checked outside the lock; the payload is parsed only for the kudos it names.
            let good = match (sample, secret, timestamp, signature.as_deref()) {
                (false, ..) => None,
                (true, Some(secret), Some(ts), Some(sig)) => {
                    Some(verify(&secret, &id, ts, &body, sig))
                }
                (true, ..) => Some(false),
            };
            let kudos = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["data"]["kudos"]["uuid"].as_str().map(str::to_owned));
            let mut s = state.lock().unwrap();
            match good {
                Some(true) => s.verified += 1,
                Some(false) => s.bad_signatures += 1,
                None => {}
            }
            s.arrivals.entry(id).or_insert((at, kudos));
            Ok(answer(StatusCode::NO_CONTENT, Bytes::new()))
        }
        _ => Ok(answer(StatusCode::NOT_FOUND, Bytes::new())),
    }
}

fn main() -> std::io::Result<()> {
    let address: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned())
        .parse()
        .map_err(|e| std::io::Error::other(format!("bad address: {e}")))?;
    // Ends with the bench: when standard input closes.
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
        std::process::exit(0);
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address).await?;
        println!("listening {}", listener.local_addr()?);
        let state = Arc::new(Mutex::new(State::default()));
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            let state = state.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| handle(req, state.clone()));
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}
