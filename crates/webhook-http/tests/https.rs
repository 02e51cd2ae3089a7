//! `HttpWebhookSender` against an HTTPS receiver whose certificate a test certificate
//! authority issued, trusted only here ([`HttpWebhookSender::with_extra_roots`]): the delivery
//! goes over TLS, signed; without the authority the certificate is refused; and the
//! destination guard still decides (the loopback receiver is reached only allow-listed).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use teamcomm_webhook_http::{HttpWebhookSender, SenderSettings};
use teamcomm_webhooks::signing::verify;
use teamcomm_webhooks::testing::StaticResolver;
use teamcomm_webhooks::{
    AllowList, Delivery, DeliveryOutcome, Refusal, SecretText, WebhookSender,
    generate_signing_secret,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The head and body of each request a receiver got.
type Log = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A test authority's PEM and an HTTPS receiver on 127.0.0.1 (certificate for
/// `receiver.test`) answering 204, keeping the bodies and headers it got.
struct HttpsReceiver {
    port: u16,
    ca_pem: String,
    got: Log,
}

impl HttpsReceiver {
    async fn start() -> HttpsReceiver {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["receiver.test".into()])
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(cert.der().to_vec())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let got: Log = Arc::default();
        let log = got.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let log = log.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(socket).await else {
                        return;
                    };
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let n = tls.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                            continue;
                        };
                        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                        let len = header(&head, "content-length")
                            .and_then(|v| v.parse::<usize>().ok())
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            let body = buf[end + 4..end + 4 + len].to_vec();
                            log.lock().unwrap().push((head, body));
                            let answer = "HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n";
                            let _ = tls.write_all(answer.as_bytes()).await;
                            let _ = tls.shutdown().await;
                            return;
                        }
                    }
                });
            }
        });
        HttpsReceiver {
            port,
            ca_pem: ca.pem(),
            got,
        }
    }

    fn url(&self) -> String {
        format!("https://receiver.test:{}/in", self.port)
    }
}

/// A header's value in a request head, its name compared without case.
fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_owned())
    })
}

fn sender(allow: &[&str], roots: &[&[u8]]) -> HttpWebhookSender {
    HttpWebhookSender::with_extra_roots(
        Arc::new(StaticResolver::new().with("receiver.test", &["127.0.0.1"])),
        AllowList::new(allow),
        SenderSettings {
            connect_timeout: Duration::from_secs(2),
            timeout: Duration::from_secs(3),
            max_response_bytes: 1024,
        },
        roots,
    )
    .unwrap()
}

fn delivery(url: String, secret: SecretText) -> Delivery {
    Delivery {
        url,
        message_id: "0193f0c2-6a1e-7c3d-9a0b-1c2d3e4f5a6b".into(),
        timestamp: 1_764_115_200,
        body: br#"{"event":"kudos.posted","data":{}}"#.to_vec(),
        signing_secret: Some(secret),
        bearer_token: Some(SecretText::new("tok-https")),
        webhook_secret: None,
    }
}

#[tokio::test]
async fn a_delivery_reaches_an_https_receiver_of_a_trusted_test_authority() {
    let receiver = HttpsReceiver::start().await;
    let secret = generate_signing_secret();
    let d = delivery(receiver.url(), secret.clone());
    let s = sender(&["receiver.test"], &[receiver.ca_pem.as_bytes()]);
    assert_eq!(s.send(&d).await, DeliveryOutcome::Delivered { status: 204 });
    let got = receiver.got.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    let (head, body) = &got[0];
    assert_eq!(body, &d.body);
    assert_eq!(header(head, "x-bearer").as_deref(), Some("tok-https"));
    assert_eq!(
        header(head, "webhook-id").as_deref(),
        Some(d.message_id.as_str())
    );
    let sig = header(head, "webhook-signature").unwrap();
    assert!(verify(&secret, &d.message_id, d.timestamp, body, &sig));
}

#[tokio::test]
async fn an_untrusted_certificate_fails_and_the_guard_still_refuses_loopback() {
    let receiver = HttpsReceiver::start().await;
    let d = delivery(receiver.url(), generate_signing_secret());
    // Allow-listed but without the test authority: the TLS handshake fails, nothing is read.
    match sender(&["receiver.test"], &[]).send(&d).await {
        DeliveryOutcome::Failed { status: None, .. } => {}
        other => panic!("expected a failure without a status, got {other:?}"),
    }
    // Trusted but not allow-listed: the name resolves to loopback, refused before connecting.
    match sender(&[], &[receiver.ca_pem.as_bytes()]).send(&d).await {
        DeliveryOutcome::Refused(Refusal::Internal { .. }) => {}
        other => panic!("expected the guard's refusal, got {other:?}"),
    }
    assert!(receiver.got.lock().unwrap().is_empty());
}
