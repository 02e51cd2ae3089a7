//! Process lifecycle: SIGTERM stops the server gracefully and flushes what it holds in memory.

use std::time::Duration;

use serde_json::json;
use teamcomm_api::Settings;
use teamcomm_tests::TestApp;

#[actix_web::test]
async fn sigterm_stops_gracefully_and_flushes_key_usage() {
    // Provision through a throwaway app on the same database, then run the real `serve`.
    let setup = TestApp::spawn().await;
    let (_, _, session, _) = setup.org_with_admin_key("business").await;
    let (record, key) = setup
        .create_key(&session, json!({"name": "lifecycle"}))
        .await;

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let vars = [
        ("DATABASE_URL", setup.db().url.clone()),
        ("TEAMCOMM_LISTEN", format!("127.0.0.1:{port}")),
        ("TEAMCOMM_JWT_SECRET", "y".repeat(32)),
        // Longer than the test: only the shutdown flush can write the usage.
        ("TEAMCOMM_USAGE_FLUSH_SECS", "3600".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let settings = Settings::from_vars(&vars, false).unwrap();
    let server =
        actix_web::rt::spawn(
            async move { teamcomm_api::server::serve(settings, false, None).await },
        );

    let client = reqwest::Client::new();
    let mut status = None;
    for _ in 0..100 {
        if let Ok(r) = client
            .get(format!("http://127.0.0.1:{port}/v1/me/"))
            .header("X-API-KEY", &key)
            .send()
            .await
        {
            status = Some(r.status().as_u16());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, Some(200));

    let pid = std::process::id().to_string();
    let killed = tokio::task::spawn_blocking(move || {
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
    })
    .await
    .unwrap()
    .unwrap();
    assert!(killed.success());
    let outcome = tokio::time::timeout(Duration::from_secs(30), server)
        .await
        .expect("serve returns after SIGTERM");
    assert!(outcome.unwrap().is_ok());

    // The port is closed and the usage reached the database on the way out.
    assert!(
        client
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .send()
            .await
            .is_err()
    );
    let org = setup
        .orgs()
        .find_user(record["owner"]["uuid"].as_str().unwrap().parse().unwrap())
        .await
        .unwrap()
        .org_id;
    let stored = setup
        .key_repo()
        .get_key(org, record["id"].as_str().unwrap().parse().unwrap())
        .await
        .unwrap();
    assert!(stored.last_usage_at.is_some(), "usage flushed on shutdown");
}
