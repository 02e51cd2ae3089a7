//! `GET /metrics`: requests by route template, status and duration; delivery outcomes; the
//! queue's backlog and the database pool read at scrape time; loopback only by default.

use serde_json::json;
use teamcomm_tests::TestApp;

/// The value of the sample line `name{labels}` (labels as the exposition writes them), if any.
fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.trim().parse().expect("a number"))
}

#[actix_web::test]
async fn metrics_show_requests_deliveries_the_queue_and_the_pool() {
    let app = TestApp::spawn().await;
    let (_, admin, _, key) = app.org_with_admin_key("business").await;
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);
    assert_eq!(app.get_with_key("/v1/me/", &key).await.status, 200);
    let person = app.get_with_key(&format!("/v1/users/{admin}/"), &key).await;
    assert_eq!(person.status, 200, "{}", person.text);
    assert_eq!(app.get_with_key("/v1/nowhere/", &key).await.status, 404);
    let sent = app
        .send(
            "POST",
            "/v1/send-message/",
            &[("X-API-KEY", &key)],
            Some(json!({"message": "hi", "target_users": [admin]})),
        )
        .await;
    assert_eq!(sent.status, 202, "{}", sent.text);

    let r = app.send("GET", "/metrics", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let content_type = r.headers["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let body = r.text;
    assert_eq!(
        sample(
            &body,
            r#"teamcomm_http_requests_total{method="GET",route="/v1/me/",status="200"}"#
        ),
        Some(2.0),
        "{body}"
    );
    // Route templates, never raw paths (ids or junk would make a series each).
    assert_eq!(
        sample(
            &body,
            r#"teamcomm_http_requests_total{method="GET",route="/v1/users/{uuid}/",status="200"}"#
        ),
        Some(1.0),
        "{body}"
    );
    assert!(!body.contains(&admin), "no raw path in {body}");
    assert_eq!(
        sample(
            &body,
            r#"teamcomm_http_requests_total{method="GET",route="-",status="404"}"#
        ),
        Some(1.0),
        "{body}"
    );
    assert_eq!(
        sample(
            &body,
            r#"teamcomm_http_request_duration_seconds_count{method="GET",route="/v1/me/"}"#
        ),
        Some(2.0),
        "{body}"
    );
    assert!(
        body.contains(r#"teamcomm_http_request_duration_seconds_bucket{le="0.001",method="GET",route="/v1/me/"}"#)
            || body.contains(r#"teamcomm_http_request_duration_seconds_bucket{method="GET",route="/v1/me/",le="0.001"}"#),
        "{body}"
    );
    assert_eq!(
        sample(&body, r#"teamcomm_queue_depth{kind="chat_message"}"#),
        Some(1.0),
        "{body}"
    );
    assert!(
        sample(
            &body,
            r#"teamcomm_queue_oldest_due_seconds{kind="chat_message"}"#
        )
        .is_some_and(|s| s >= 0.0),
        "{body}"
    );
    assert!(
        sample(&body, "teamcomm_db_pool_max_connections").is_some_and(|n| n >= 1.0),
        "{body}"
    );
    assert!(sample(&body, "teamcomm_db_pool_connections").is_some_and(|n| n >= 1.0));
    assert!(
        body.trim_end().ends_with("# EOF"),
        "OpenMetrics ends with # EOF"
    );

    // A delivery pass (no platform: the job is done, the delivery failed) is counted, and the
    // backlog is read again at the next scrape.
    let summary = app.state.deliver_due().await.unwrap();
    assert_eq!(summary.completed, 1);
    let body = app.send("GET", "/metrics", &[], None).await.text;
    assert_eq!(
        sample(
            &body,
            r#"teamcomm_delivery_jobs_total{outcome="completed"}"#
        ),
        Some(1.0),
        "{body}"
    );
    assert_eq!(
        sample(&body, r#"teamcomm_queue_depth{kind="chat_message"}"#),
        None,
        "nothing left of that kind: {body}"
    );
}

#[actix_web::test]
async fn metrics_are_not_found_outside_the_allowed_networks() {
    for allow in ["10.0.0.0/8, 192.168.0.1", ""] {
        let app = TestApp::builder()
            .var("TEAMCOMM_METRICS_ALLOW", allow)
            .spawn()
            .await;
        let r = app.send("GET", "/metrics", &[], None).await;
        r.assert_error(404, "not_found");
    }
    let app = TestApp::builder()
        .var("TEAMCOMM_METRICS_ALLOW", "127.0.0.1")
        .spawn()
        .await;
    assert_eq!(app.send("GET", "/metrics", &[], None).await.status, 200);
}
