//! A real SMTP server for tests: aiosmtpd on loopback (the mail adapter's sink,
//! `crates/mail/tests/fixtures/smtp_sink.py`), whose received mails a test reads back.
//!
//! The Python with aiosmtpd is `TEAMCOMM_TEST_SMTP_PYTHON`, else
//! `$HOME/.cache/teamcomm-smtp-venv/bin/python` (`scripts/install-smtp.sh`). Without either,
//! [`SmtpSink::start`] answers `None` with a note (and fails on CI, where it must run).

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The running sink, stopped when dropped.
pub struct SmtpSink {
    child: Child,
    pub port: u16,
    maildir: PathBuf,
}

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TEAMCOMM_TEST_SMTP_PYTHON").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME")?;
    let p = PathBuf::from(home).join(".cache/teamcomm-smtp-venv/bin/python");
    p.is_file().then_some(p)
}

impl SmtpSink {
    pub fn start() -> Option<SmtpSink> {
        let Some(python) = python() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "TEAMCOMM_TEST_SMTP_PYTHON is required on CI"
            );
            println!(
                "note: real-SMTP test skipped: no Python with aiosmtpd (scripts/install-smtp.sh)"
            );
            return None;
        };
        let maildir =
            std::env::temp_dir().join(format!("teamcomm-test-mail-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&maildir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../crates/mail/tests/fixtures/smtp_sink.py");
        let mut child = Command::new(python)
            .arg(fixture)
            .args(["--port", &port.to_string()])
            .arg("--maildir")
            .arg(&maildir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the SMTP sink");
        let mut ready = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .unwrap();
        assert_eq!(ready.trim(), "ready", "the SMTP sink did not start");
        Some(SmtpSink {
            child,
            port,
            maildir,
        })
    }

    /// `smtp://127.0.0.1:<port>`, for `TEAMCOMM_SMTP_URL`.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every mail received so far, in order: the sink's JSON of each (`rcpt_tos`, `headers`,
    /// `parts` with `content_type` and `body`).
    pub fn mails(&self) -> Vec<Value> {
        let mut numbered: Vec<(u64, PathBuf)> = std::fs::read_dir(&self.maildir)
            .unwrap()
            .filter_map(|e| {
                let path = e.ok()?.path();
                if path.extension()? != "json" {
                    return None;
                }
                let n = path.file_stem()?.to_str()?.parse().ok()?;
                Some((n, path))
            })
            .collect();
        numbered.sort();
        numbered
            .into_iter()
            .map(|(_, p)| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
            .collect()
    }

    /// The mails sent to `address`.
    pub fn mails_to(&self, address: &str) -> Vec<Value> {
        self.mails()
            .into_iter()
            .filter(|m| {
                m["rcpt_tos"].as_array().is_some_and(|to| {
                    to.iter()
                        .any(|t| t.as_str().is_some_and(|t| t.eq_ignore_ascii_case(address)))
                })
            })
            .collect()
    }

    /// Waits (up to 10 s) until `address` has received `count` mails, and answers them.
    pub async fn wait_for(&self, address: &str, count: usize) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let mails = self.mails_to(address);
            if mails.len() >= count {
                return mails;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{address} received {} mails, not {count}",
                mails.len()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The plain-text body of a mail.
    pub fn text(mail: &Value) -> String {
        mail["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["content_type"] == "text/plain")
            .and_then(|p| p["body"].as_str())
            .unwrap_or_default()
            .to_owned()
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.maildir);
    }
}
