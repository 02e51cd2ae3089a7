//! The adapter against a raw local HTTP server: what it sends (path, model, messages, key) and
//! how it reads each kind of answer, a slow one and a closed port.

use std::time::Duration;

use teamcomm_assistant::{ChatMessage, CompletionRequest, LanguageModel, ModelError, Role};
use teamcomm_llm_http::{HttpLanguageModel, LlmSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves one request with `status` and `body` after `delay`; hands back the request's text.
async fn serve_once(
    status: &'static str,
    body: &'static str,
    delay: Duration,
) -> (String, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1/", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = socket.read(&mut buf).await.unwrap();
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request);
            if let Some(head_end) = text.find("\r\n\r\n") {
                let length: usize = text[..head_end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= head_end + 4 + length {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        tokio::time::sleep(delay).await;
        let answer = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(answer.as_bytes()).await;
        String::from_utf8_lossy(&request).into_owned()
    });
    (base, task)
}

fn model(base: &str, key: Option<&str>, timeout: Duration) -> HttpLanguageModel {
    HttpLanguageModel::new(LlmSettings {
        base_url: base.to_owned(),
        model: "m-1".into(),
        api_key: key.map(str::to_owned),
        timeout,
        connect_timeout: Duration::from_secs(2),
    })
    .unwrap()
}

fn question() -> CompletionRequest {
    CompletionRequest {
        messages: vec![
            ChatMessage::new(Role::System, "context"),
            ChatMessage::new(Role::User, "hi"),
        ],
    }
}

#[tokio::test]
async fn a_completion_is_read_and_the_request_is_the_openai_one() {
    let (base, server) = serve_once(
        "200 OK",
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hello"}}]}"#,
        Duration::ZERO,
    )
    .await;
    let m = model(&base, Some("sk-1"), Duration::from_secs(5));
    let answer = m.complete(&question()).await.unwrap();
    assert_eq!(answer.content, "hello");
    let request = server.await.unwrap();
    assert!(
        request.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-1"),
        "{request}"
    );
    let body: serde_json::Value =
        serde_json::from_str(&request[request.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"model": "m-1", "messages": [
            {"role": "system", "content": "context"},
            {"role": "user", "content": "hi"},
        ]})
    );
}

#[tokio::test]
async fn without_a_key_no_authorization_is_sent() {
    let (base, server) = serve_once(
        "200 OK",
        r#"{"choices":[{"message":{"content":"x"}}]}"#,
        Duration::ZERO,
    )
    .await;
    model(&base, None, Duration::from_secs(5))
        .complete(&question())
        .await
        .unwrap();
    assert!(
        !server
            .await
            .unwrap()
            .to_ascii_lowercase()
            .contains("authorization:")
    );
}

#[tokio::test]
async fn error_statuses_and_other_answers_are_told_apart() {
    let (base, _s) = serve_once(
        "500 Internal Server Error",
        r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
        Duration::ZERO,
    )
    .await;
    assert_eq!(
        model(&base, None, Duration::from_secs(5))
            .complete(&question())
            .await
            .unwrap_err(),
        ModelError::Status {
            status: 500,
            detail: "overloaded".into()
        }
    );
    for body in [
        r#"{"choices":[]}"#,
        "<html>proxy</html>",
        r#"{"choices":[{"message":{}}]}"#,
    ] {
        let (base, _s) = serve_once("200 OK", body, Duration::ZERO).await;
        let e = model(&base, None, Duration::from_secs(5))
            .complete(&question())
            .await
            .unwrap_err();
        assert!(matches!(e, ModelError::Malformed(_)), "{body}: {e:?}");
    }
}

#[tokio::test]
async fn a_slow_model_times_out_and_a_closed_port_is_unreachable() {
    let (base, _s) = serve_once("200 OK", "{}", Duration::from_secs(3)).await;
    let started = std::time::Instant::now();
    let e = model(&base, None, Duration::from_millis(300))
        .complete(&question())
        .await
        .unwrap_err();
    assert_eq!(e, ModelError::Timeout);
    assert!(started.elapsed() < Duration::from_secs(2));

    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let e = model(&format!("http://{closed}/v1"), None, Duration::from_secs(2))
        .complete(&question())
        .await
        .unwrap_err();
    assert!(matches!(e, ModelError::Unreachable(_)), "{e:?}");
}
