//! `SmtpMailer` against a real SMTP server on loopback: aiosmtpd, run by
//! `tests/fixtures/smtp_sink.py` with the interpreter `scripts/install-smtp.sh` prints
//! (`TEAMCOMM_TEST_SMTP_PYTHON`). Each test starts its own server on a free port and reads what
//! arrived as Python's e-mail parser sees it.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use serde_json::Value;
use teamcomm_mail::{SmtpMailer, SmtpSettings};
use teamcomm_messaging::mail::{MailError, Mailbox, Mailer, OutgoingMail};

const PYTHON_VAR: &str = "TEAMCOMM_TEST_SMTP_PYTHON";
const MAIL_FROM: &str = "Teamcomm Bot <noreply@teamcomm.test>";
const SMTP_USER: &str = "mailer@teamcomm.test";
const SMTP_PASSWORD: &str = "p@ss:w/rd 1";

/// The interpreter with aiosmtpd, or `None` (with a note) to skip; on CI its absence fails.
fn sink_python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os(PYTHON_VAR).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(python));
    }
    let note = format!(
        "{PYTHON_VAR} is not set: run `export {PYTHON_VAR}=\"$(scripts/install-smtp.sh | tail -n1)\"`"
    );
    assert!(std::env::var_os("CI").is_none(), "{note} (required on CI)");
    println!("skipping the real-SMTP test: {note}");
    None
}

/// A scratch directory removed when the test ends.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "teamcomm-mail-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A test certificate authority and a server certificate it signed for 127.0.0.1.
struct TestPki {
    ca_pem: String,
    cert_path: PathBuf,
    key_path: PathBuf,
}

impl TestPki {
    fn write_to(dir: &Path) -> Self {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        let server_key = KeyPair::generate().unwrap();
        let server_cert = CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .unwrap()
            .signed_by(&server_key, &ca)
            .unwrap();
        let pki = Self {
            ca_pem: ca.pem(),
            cert_path: dir.join("server.pem"),
            key_path: dir.join("server.key"),
        };
        std::fs::write(&pki.cert_path, server_cert.pem()).unwrap();
        std::fs::write(&pki.key_path, server_key.serialize_pem()).unwrap();
        pki
    }
}

enum SinkTls {
    Plain,
    Implicit,
    StartTls,
}

/// aiosmtpd on 127.0.0.1, stopped when dropped (it also stops if this process dies: its stdin
/// closes).
struct Sink {
    child: Child,
    port: u16,
    maildir: ScratchDir,
    pki: Option<TestPki>,
}

impl Sink {
    fn start(python: &Path, tls: SinkTls, auth: bool) -> Self {
        let maildir = ScratchDir::new();
        let port = free_port();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/smtp_sink.py");
        let mut command = Command::new(python);
        command
            .arg(fixture)
            .args(["--port", &port.to_string()])
            .arg("--maildir")
            .arg(&maildir.0);
        if auth {
            command.args(["--auth", &format!("{SMTP_USER}:{SMTP_PASSWORD}")]);
        }
        let pki = match tls {
            SinkTls::Plain => None,
            SinkTls::Implicit | SinkTls::StartTls => {
                let pki = TestPki::write_to(&maildir.0);
                command
                    .arg("--cert")
                    .arg(&pki.cert_path)
                    .arg("--key")
                    .arg(&pki.key_path);
                if matches!(tls, SinkTls::StartTls) {
                    command.arg("--starttls");
                }
                Some(pki)
            }
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let mut first_line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first_line)
            .unwrap();
        assert_eq!(
            first_line.trim(),
            "ready",
            "the SMTP sink did not start (see its stderr)"
        );
        Self {
            child,
            port,
            maildir,
            pki,
        }
    }

    /// The settings of a mailer that trusts this sink's test CA (if it has one).
    fn settings(&self, smtp_url: &str) -> SmtpSettings {
        let settings = SmtpSettings::parse(smtp_url, MAIL_FROM).unwrap();
        match &self.pki {
            Some(pki) => settings
                .trust_root_certificate(pki.ca_pem.as_bytes())
                .unwrap(),
            None => settings,
        }
    }

    /// The `number`th message received (1-based): (Python's reading of it, the raw bytes). The
    /// sink writes both before it answers 250, so a send that returned has its files.
    fn received(&self, number: u32) -> (Value, String) {
        let read = |extension: &str| {
            let path = self.maildir.0.join(format!("{number}.{extension}"));
            std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("message {number} not received ({e})"))
        };
        (serde_json::from_str(&read("json")).unwrap(), read("eml"))
    }

    fn received_count(&self) -> usize {
        std::fs::read_dir(&self.maildir.0)
            .unwrap()
            .filter(|entry| entry.as_ref().unwrap().path().extension() == Some("eml".as_ref()))
            .count()
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        // Closing its stdin asks the sink to stop; one that does not within a second is killed.
        drop(self.child.stdin.take());
        for _ in 0..20 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn recipient(name: Option<&str>, address: &str) -> Mailbox {
    Mailbox {
        name: name.map(str::to_owned),
        address: address.to_owned(),
    }
}

fn mail_to(to: Vec<Mailbox>) -> OutgoingMail {
    OutgoingMail {
        message_id: "0193f6d2-7c1e-7b3a-9a41-5c2d8e9f0a1b".into(),
        to,
        subject: "Your check-in — résumé ✓".into(),
        html: Some("<p>Hello <b>Zoë</b>, here is your résumé ✓</p>".into()),
        text: "Hello Zoë, here is your résumé ✓".into(),
    }
}

fn header<'a>(received: &'a Value, name: &str) -> &'a str {
    received["headers"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no {name} header in {received:#}"))
}

/// (content type, body without the line-ending differences) of each text part, in order.
fn text_parts(received: &Value) -> Vec<(String, String)> {
    received["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| {
            let body = part["body"].as_str().unwrap().replace("\r\n", "\n");
            (
                part["content_type"].as_str().unwrap().to_owned(),
                body.trim_end().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn html_mail_arrives_with_its_headers_and_both_bodies() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::Plain, false);
    let mailer =
        SmtpMailer::new(&sink.settings(&format!("smtp://127.0.0.1:{}", sink.port))).unwrap();
    let mail = mail_to(vec![
        recipient(Some("Zoë Müller"), "zoe@example.com"),
        recipient(None, "team@example.com"),
    ]);

    mailer.send(&mail).await.unwrap();

    let (received, raw) = sink.received(1);
    assert_eq!(header(&received, "From"), MAIL_FROM);
    assert_eq!(
        header(&received, "To"),
        "Zoë Müller <zoe@example.com>, team@example.com"
    );
    assert_eq!(header(&received, "Subject"), mail.subject);
    assert_eq!(
        header(&received, "Message-ID"),
        "<0193f6d2-7c1e-7b3a-9a41-5c2d8e9f0a1b@teamcomm.test>"
    );
    assert_eq!(received["content_type"], "multipart/alternative");
    assert_eq!(
        text_parts(&received),
        [
            ("text/plain".to_owned(), mail.text.clone()),
            ("text/html".to_owned(), mail.html.clone().unwrap()),
        ]
    );
    assert_eq!(received["mail_from"], "noreply@teamcomm.test");
    assert_eq!(
        received["rcpt_tos"],
        serde_json::json!(["zoe@example.com", "team@example.com"])
    );
    // On the wire the headers are 7-bit: the UTF-8 subject travels encoded (RFC 2047).
    let raw_headers = raw.split("\r\n\r\n").next().unwrap();
    assert!(raw_headers.is_ascii(), "{raw_headers}");
    assert_eq!(received["tls"], false);
}

#[tokio::test]
async fn text_only_mail_arrives_as_one_text_part() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::Plain, false);
    let mailer =
        SmtpMailer::new(&sink.settings(&format!("smtp://127.0.0.1:{}", sink.port))).unwrap();
    let mail = OutgoingMail {
        html: None,
        ..mail_to(vec![recipient(None, "zoe@example.com")])
    };

    mailer.send(&mail).await.unwrap();

    let (received, _) = sink.received(1);
    assert_eq!(received["content_type"], "text/plain");
    assert_eq!(
        text_parts(&received),
        [("text/plain".to_owned(), mail.text.clone())]
    );
    assert_eq!(header(&received, "Subject"), mail.subject);
}

#[tokio::test]
async fn a_451_is_temporary_and_a_550_permanent() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::Plain, false);
    let mailer =
        SmtpMailer::new(&sink.settings(&format!("smtp://127.0.0.1:{}", sink.port))).unwrap();

    let busy = mailer
        .send(&mail_to(vec![recipient(None, "tempfail@example.com")]))
        .await;
    assert!(
        matches!(&busy, Err(MailError::Temporary(reason)) if reason.contains("451")),
        "{busy:?}"
    );
    let unknown = mailer
        .send(&mail_to(vec![recipient(None, "reject@example.com")]))
        .await;
    assert!(
        matches!(&unknown, Err(MailError::Permanent(reason)) if reason.contains("550")),
        "{unknown:?}"
    );
    // One refused recipient stops the whole mail: nobody gets a copy the retry would repeat.
    let mixed = mailer
        .send(&mail_to(vec![
            recipient(None, "zoe@example.com"),
            recipient(None, "tempfail@example.com"),
        ]))
        .await;
    assert!(matches!(mixed, Err(MailError::Temporary(_))), "{mixed:?}");
    assert_eq!(sink.received_count(), 0);

    // The refusals leave the mailer usable.
    mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await
        .unwrap();
    assert_eq!(sink.received_count(), 1);
}

#[tokio::test]
async fn smtps_authenticates_over_implicit_tls() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::Implicit, true);
    let credentials = "mailer%40teamcomm.test:p%40ss%3Aw%2Frd%201";
    let mailer =
        SmtpMailer::new(&sink.settings(&format!("smtps://{credentials}@127.0.0.1:{}", sink.port)))
            .unwrap();

    mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await
        .unwrap();

    let (received, _) = sink.received(1);
    assert_eq!(received["tls"], true);
    assert_eq!(received["auth_login"], SMTP_USER);
}

#[tokio::test]
async fn smtp_with_tls_required_authenticates_after_starttls() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::StartTls, true);
    let credentials = "mailer%40teamcomm.test:p%40ss%3Aw%2Frd%201";
    let mailer = SmtpMailer::new(&sink.settings(&format!(
        "smtp://{credentials}@127.0.0.1:{}?tls=required",
        sink.port
    )))
    .unwrap();

    mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await
        .unwrap();

    let (received, _) = sink.received(1);
    assert_eq!(received["tls"], true);
    assert_eq!(received["auth_login"], SMTP_USER);
}

#[tokio::test]
async fn opportunistic_tls_upgrades_when_the_server_offers_starttls() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::StartTls, false);
    let mailer = SmtpMailer::new(
        &sink.settings(&format!("smtp://127.0.0.1:{}?tls=opportunistic", sink.port)),
    )
    .unwrap();

    mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await
        .unwrap();

    let (received, _) = sink.received(1);
    assert_eq!(received["tls"], true);
    assert_eq!(received["auth_login"], Value::Null);
}

#[tokio::test]
async fn wrong_credentials_are_refused_without_showing_the_password() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::Implicit, true);
    let mailer = SmtpMailer::new(&sink.settings(&format!(
        "smtps://{}:wrong-secret@127.0.0.1:{}",
        "mailer%40teamcomm.test", sink.port
    )))
    .unwrap();

    let refused = mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await;

    // 535 is a 5xx: permanent by the SMTP code (see the crate's classification).
    let Err(MailError::Permanent(reason)) = &refused else {
        panic!("{refused:?}")
    };
    assert!(reason.contains("535"), "{reason}");
    assert!(!reason.contains("wrong-secret"), "{reason}");
    assert_eq!(sink.received_count(), 0);
}

#[tokio::test]
async fn a_server_certificate_from_an_untrusted_authority_is_refused() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::Implicit, false);
    let untrusting =
        SmtpSettings::parse(&format!("smtps://127.0.0.1:{}", sink.port), MAIL_FROM).unwrap();
    let mailer = SmtpMailer::new(&untrusting).unwrap();

    let refused = mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await;

    assert!(
        matches!(refused, Err(MailError::Temporary(_))),
        "{refused:?}"
    );
    assert_eq!(sink.received_count(), 0);
}

#[tokio::test]
async fn a_server_without_starttls_is_refused_when_tls_is_required() {
    let Some(python) = sink_python() else { return };
    let sink = Sink::start(&python, SinkTls::Plain, false);
    let mailer =
        SmtpMailer::new(&sink.settings(&format!("smtp://127.0.0.1:{}?tls=required", sink.port)))
            .unwrap();

    let refused = mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await;

    assert!(
        matches!(refused, Err(MailError::Temporary(_))),
        "{refused:?}"
    );
    assert_eq!(sink.received_count(), 0);
}

// The next two need no SMTP server.

#[tokio::test]
async fn a_refused_connection_is_temporary() {
    let port = free_port(); // nothing listens there any more
    let settings = SmtpSettings::parse(&format!("smtp://127.0.0.1:{port}"), MAIL_FROM).unwrap();
    let mailer = SmtpMailer::new(&settings).unwrap();

    let refused = mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await;

    assert!(
        matches!(refused, Err(MailError::Temporary(_))),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_server_that_accepts_but_never_greets_times_out_as_temporary() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let settings = SmtpSettings::parse(&format!("smtp://127.0.0.1:{port}"), MAIL_FROM)
        .unwrap()
        .with_timeouts(Duration::from_millis(300), Duration::from_millis(500));
    let mailer = SmtpMailer::new(&settings).unwrap();

    let started = std::time::Instant::now();
    let timed_out = mailer
        .send(&mail_to(vec![recipient(None, "zoe@example.com")]))
        .await;

    assert!(
        matches!(timed_out, Err(MailError::Temporary(_))),
        "{timed_out:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
