//! With `TEAMCOMM_TLS_CERT`/`TEAMCOMM_TLS_KEY` the server speaks HTTPS itself (rustls).

use std::time::Duration;

use teamcomm_api::Settings;
use teamcomm_tests::TestDb;

#[actix_web::test]
async fn serves_https_when_certificate_files_are_configured() {
    let db = TestDb::new().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/tls");
    let vars = [
        ("DATABASE_URL", db.url.clone()),
        ("TEAMCOMM_LISTEN", format!("127.0.0.1:{port}")),
        ("TEAMCOMM_JWT_SECRET", "x".repeat(32)),
        ("TEAMCOMM_TLS_CERT", format!("{fixtures}/cert.pem")),
        ("TEAMCOMM_TLS_KEY", format!("{fixtures}/key.pem")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let settings = Settings::from_vars(&vars, false).unwrap();
    assert_eq!(settings.base_url, format!("https://127.0.0.1:{port}"));
    actix_web::rt::spawn(async move { teamcomm_api::server::serve(settings, false, None).await });

    let client = reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let mut answer = None;
    for _ in 0..100 {
        if let Ok(res) = client
            .get(format!("https://127.0.0.1:{port}/v1/me/"))
            .send()
            .await
        {
            answer = Some(res);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let res = answer.expect("the HTTPS server answers");
    assert_eq!(res.status().as_u16(), 401);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["code"], "credential_absent");

    // Plain HTTP on the same port is not served.
    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/healthz"))
        .send()
        .await;
    assert!(plain.is_err() || !plain.unwrap().status().is_success());
}
