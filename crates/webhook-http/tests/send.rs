//! `HttpWebhookSender` against real local receivers (plain TCP servers answering canned HTTP):
//! what is sent, how each answer is read, and that the guard decides at send time which
//! addresses are reached.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use teamcomm_webhook_http::{HttpWebhookSender, SenderSettings};
use teamcomm_webhooks::signing::verify;
use teamcomm_webhooks::testing::StaticResolver;
use teamcomm_webhooks::{
    AllowList, Delivery, DeliveryOutcome, SecretText, WebhookSender, generate_signing_secret,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One received request: its head (lower-cased header names) and body.
#[derive(Debug, Clone)]
struct Received {
    head: String,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim().eq_ignore_ascii_case(name)).then(|| v.trim().to_owned())
        })
    }
}

/// A receiver on 127.0.0.1 answering every request with `response` (or never, when `None`).
struct Receiver {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    async fn start(response: Option<&'static str>) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let log = log.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let (head, body) = loop {
                        let n = socket.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                            let len = head
                                .lines()
                                .find_map(|l| {
                                    let (k, v) = l.split_once(':')?;
                                    k.eq_ignore_ascii_case("content-length")
                                        .then(|| v.trim().parse::<usize>().ok())?
                                })
                                .unwrap_or(0);
                            let mut body = buf[end + 4..].to_vec();
                            while body.len() < len {
                                let n = socket.read(&mut chunk).await.unwrap_or(0);
                                if n == 0 {
                                    break;
                                }
                                body.extend_from_slice(&chunk[..n]);
                            }
                            break (head, body);
                        }
                    };
                    log.lock().unwrap().push(Received { head, body });
                    match response {
                        Some(r) => {
                            let _ = socket.write_all(r.as_bytes()).await;
                        }
                        None => tokio::time::sleep(Duration::from_secs(30)).await,
                    }
                });
            }
        });
        Receiver { port, received }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

const OK: &str = "HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n";

fn sender(resolver: StaticResolver, allow: &[&str]) -> HttpWebhookSender {
    HttpWebhookSender::new(
        Arc::new(resolver),
        AllowList::new(allow),
        SenderSettings {
            connect_timeout: Duration::from_secs(2),
            timeout: Duration::from_millis(1500),
            max_response_bytes: 1024,
        },
    )
    .unwrap()
}

fn delivery(url: String, bearer: Option<&str>) -> Delivery {
    Delivery {
        url,
        message_id: "0193f0c2-6a1e-7c3d-9a0b-1c2d3e4f5a6b".into(),
        timestamp: 1_764_115_200,
        body: br#"{"event":"kudos.posted","data":{}}"#.to_vec(),
        signing_secret: Some(generate_signing_secret()),
        bearer_token: bearer.map(SecretText::new),
        webhook_secret: None,
    }
}

#[tokio::test]
async fn a_delivery_is_signed_carries_the_bearer_token_and_2xx_is_delivered() {
    let receiver = Receiver::start(Some(OK)).await;
    let resolver = StaticResolver::new().with("receiver.test", &["127.0.0.1"]);
    let s = sender(resolver, &["receiver.test"]);
    let d = delivery(
        format!("http://receiver.test:{}/hook", receiver.port),
        Some("tok-1"),
    );
    assert_eq!(s.send(&d).await, DeliveryOutcome::Delivered { status: 204 });
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert!(r.head.starts_with("POST /hook HTTP/1.1"), "{}", r.head);
    assert_eq!(r.body, d.body);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(r.header("x-bearer").as_deref(), Some("tok-1"));
    assert_eq!(
        r.header("webhook-id").as_deref(),
        Some(d.message_id.as_str())
    );
    assert_eq!(r.header("webhook-timestamp").as_deref(), Some("1764115200"));
    let sig = r.header("webhook-signature").expect("signed");
    assert!(verify(
        d.signing_secret.as_ref().unwrap(),
        &d.message_id,
        d.timestamp,
        &r.body,
        &sig
    ));

    // Without a token, no X-BEARER.
    s.send(&delivery(
        format!("http://receiver.test:{}/hook", receiver.port),
        None,
    ))
    .await;
    assert_eq!(receiver.received()[1].header("x-bearer"), None);
}

#[tokio::test]
async fn gone_redirects_and_errors_are_read_as_such() {
    let gone = Receiver::start(Some("HTTP/1.1 410 Gone\r\ncontent-length: 0\r\n\r\n")).await;
    let target = Receiver::start(Some(OK)).await;
    let location: &'static str = Box::leak(
        format!(
            "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{}/elsewhere\r\ncontent-length: 0\r\n\r\n",
            target.port
        )
        .into_boxed_str(),
    );
    let redirect = Receiver::start(Some(location)).await;
    let busy = Receiver::start(Some(
        "HTTP/1.1 503 Service Unavailable\r\nretry-after: 7\r\ncontent-length: 4\r\n\r\nbusy",
    ))
    .await;
    let s = sender(StaticResolver::new(), &["127.0.0.1"]);
    let url = |port: u16| format!("http://127.0.0.1:{port}/hook");

    assert_eq!(
        s.send(&delivery(url(gone.port), None)).await,
        DeliveryOutcome::Gone
    );
    match s.send(&delivery(url(redirect.port), None)).await {
        DeliveryOutcome::Failed { status, .. } => assert_eq!(status, Some(302)),
        other => panic!("{other:?}"),
    }
    assert!(target.received().is_empty(), "the redirect is not followed");
    match s.send(&delivery(url(busy.port), None)).await {
        DeliveryOutcome::Failed {
            status,
            retry_after,
            ..
        } => {
            assert_eq!(status, Some(503));
            assert_eq!(retry_after, Some(7));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_receiver_that_hangs_or_is_down_fails_within_the_timeout() {
    let hangs = Receiver::start(None).await;
    let s = sender(StaticResolver::new(), &["127.0.0.1"]);
    let started = std::time::Instant::now();
    match s
        .send(&delivery(format!("http://127.0.0.1:{}/", hangs.port), None))
        .await
    {
        DeliveryOutcome::Failed { status, error, .. } => {
            assert_eq!(status, None);
            assert!(error.contains("timed out"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(hangs.received().len(), 1);

    // Nothing listens on a closed port.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    match s
        .send(&delivery(format!("http://127.0.0.1:{port}/"), None))
        .await
    {
        DeliveryOutcome::Failed { status: None, .. } => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_guard_decides_at_send_time_and_nothing_reaches_a_refused_address() {
    let receiver = Receiver::start(Some(OK)).await;
    // A name that resolves inside, or to one public and one inside address (rebinding).
    let resolver = StaticResolver::new()
        .with("inside.test", &["127.0.0.1"])
        .with("rebind.test", &["93.184.215.14", "127.0.0.1"]);
    let s = sender(resolver, &[]);
    for (host, reason) in [("inside.test", "loopback"), ("rebind.test", "loopback")] {
        let d = delivery(format!("https://{host}:{}/hook", receiver.port), None);
        match s.send(&d).await {
            DeliveryOutcome::Refused(r) => assert_eq!(r.reason(), reason, "{host}"),
            other => panic!("{host}: {other:?}"),
        }
    }
    // Literal addresses, plain http, and names that do not resolve.
    for (url, reason) in [
        (format!("https://127.0.0.1:{}/", receiver.port), "loopback"),
        (
            format!("http://127.0.0.1:{}/", receiver.port),
            "https_required",
        ),
        ("https://169.254.169.254/".to_owned(), "cloud_metadata"),
        ("https://2130706433/".to_owned(), "odd_ipv4_encoding"),
        ("https://nowhere.test/".to_owned(), "unresolvable"),
    ] {
        match s.send(&delivery(url.clone(), None)).await {
            DeliveryOutcome::Refused(r) => assert_eq!(r.reason(), reason, "{url}"),
            other => panic!("{url}: {other:?}"),
        }
    }
    assert!(receiver.received().is_empty());
}
