//! Webhook endpoints (`/v1/webhooks/`) and the legacy subscription form
//! (`/v1/webhook-subscription/`): what is stored and shown, who sees what, the destination guard.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Bytea, Nullable, Text};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::{ANY_ID, Resp, TestApp};

/// A business organization with an admin and two members, each with an API key.
struct Org {
    admin_key: String,
    member_key: String,
    other_member_key: String,
}

impl Org {
    async fn new(app: &TestApp) -> Org {
        let (id, _admin, session, admin_key) = app.org_with_admin_key("business").await;
        let member = app.create_user(&id, "member").await;
        let other = app.create_user(&id, "member").await;
        let member_key = app
            .create_key(&session, json!({"name": "k", "for_user_id": member}))
            .await
            .1;
        let other_member_key = app
            .create_key(&session, json!({"name": "k", "for_user_id": other}))
            .await
            .1;
        Org {
            admin_key,
            member_key,
            other_member_key,
        }
    }
}

async fn call(app: &TestApp, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
    app.send(method, path, &[("X-API-KEY", key)], body).await
}

/// A public address written literally: no name to resolve.
const PUBLIC: &str = "https://93.184.215.14/hooks/teamcomm";

#[derive(QueryableByName)]
struct StoredSecrets {
    #[diesel(sql_type = Bytea)]
    signing_secret: Vec<u8>,
    #[diesel(sql_type = Nullable<Bytea>)]
    bearer_token: Option<Vec<u8>>,
    #[diesel(sql_type = Text)]
    url: String,
}

async fn stored(app: &TestApp, id: &str) -> Option<StoredSecrets> {
    let mut conn = app.database.pool().get().await.expect("connection");
    diesel::sql_query(
        "SELECT signing_secret, bearer_token, url FROM webhook_endpoints WHERE id::text = $1",
    )
    .bind::<Text, _>(id)
    .get_results(&mut conn)
    .await
    .expect("read webhook_endpoints")
    .pop()
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn stored_count(app: &TestApp) -> i64 {
    let mut conn = app.database.pool().get().await.expect("connection");
    let c: Count = diesel::sql_query("SELECT count(*) AS n FROM webhook_endpoints")
        .get_result(&mut conn)
        .await
        .expect("count");
    c.n
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[actix_web::test]
async fn an_endpoint_is_created_shown_without_its_secrets_and_deleted() {
    let app = TestApp::spawn().await;
    let org = Org::new(&app).await;
    let r = call(
        &app,
        &org.member_key,
        "POST",
        "/v1/webhooks/",
        Some(json!({
            "url": PUBLIC,
            "events": ["kudos.posted", "forms.response.created"],
            "name": "CRM",
            "bearer_token": "receiver-token-123",
            "object_ids": [ANY_ID],
            "immediate_sample_event": false,
        })),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();
    assert_eq!(r.body["url"], PUBLIC);
    assert_eq!(
        r.body["events"],
        json!(["forms.response.created", "kudos.posted"])
    );
    assert_eq!(r.body["name"], "CRM");
    assert_eq!(r.body["object_ids"], json!([ANY_ID]));
    assert_eq!(r.body["has_bearer_token"], true);
    assert_eq!(r.body["enabled"], true);
    assert!(r.body["created_at"].as_str().unwrap().ends_with('Z'));
    assert!(r.body.get("bearer_token").is_none(), "{}", r.text);
    let secret = r.body["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("whsec_") && secret.len() >= 6 + 32,
        "{secret}"
    );

    // Stored sealed: neither the secret nor the bearer token is in the row.
    let row = stored(&app, &id).await.expect("stored");
    assert_eq!(row.url, PUBLIC);
    assert!(!contains(&row.signing_secret, &secret["whsec_".len()..]));
    let bearer = row.bearer_token.expect("a sealed bearer token");
    assert!(!contains(&bearer, "receiver-token-123"));

    // Never shown again.
    let one = call(
        &app,
        &org.member_key,
        "GET",
        &format!("/v1/webhooks/{id}/"),
        None,
    )
    .await;
    assert_eq!(one.status, 200, "{}", one.text);
    assert_eq!(one.body["id"], id.as_str());
    assert!(!one.text.contains("whsec_") && !one.text.contains("receiver-token"));
    assert!(one.body.get("secret").is_none());
    let list = call(&app, &org.member_key, "GET", "/v1/webhooks/", None).await;
    assert_eq!(list.status, 200, "{}", list.text);
    assert_eq!(list.body["count"], 1);
    assert_eq!(list.body["results"][0]["id"], id.as_str());
    assert!(!list.text.contains("whsec_"));

    let d = call(
        &app,
        &org.member_key,
        "DELETE",
        &format!("/v1/webhooks/{id}/"),
        None,
    )
    .await;
    assert_eq!(d.status, 204, "{}", d.text);
    assert!(stored(&app, &id).await.is_none());
    call(
        &app,
        &org.member_key,
        "GET",
        &format!("/v1/webhooks/{id}/"),
        None,
    )
    .await
    .assert_error(404, "not_found");
    call(
        &app,
        &org.member_key,
        "DELETE",
        &format!("/v1/webhooks/{id}/"),
        None,
    )
    .await
    .assert_error(404, "not_found");
}

#[actix_web::test]
async fn another_organizations_endpoint_is_not_found_and_members_see_their_own() {
    let app = TestApp::spawn().await;
    let acme = Org::new(&app).await;
    let globex = Org::new(&app).await;
    let create = |key: String| {
        let app = &app;
        async move {
            let r = call(
                app,
                &key,
                "POST",
                "/v1/webhooks/",
                Some(json!({"url": PUBLIC, "events": ["kudos.posted"]})),
            )
            .await;
            assert_eq!(r.status, 201, "{}", r.text);
            r.body["id"].as_str().unwrap().to_owned()
        }
    };
    let members = create(acme.member_key.clone()).await;
    let admins = create(acme.admin_key.clone()).await;

    for (method, key) in [("GET", &globex.admin_key), ("DELETE", &globex.admin_key)] {
        call(&app, key, method, &format!("/v1/webhooks/{members}/"), None)
            .await
            .assert_error(404, "not_found");
    }
    let theirs = call(&app, &globex.admin_key, "GET", "/v1/webhooks/", None).await;
    assert_eq!(theirs.body["count"], 0, "{}", theirs.text);

    // A member sees and deletes only their own; the admin sees all.
    call(
        &app,
        &acme.other_member_key,
        "GET",
        &format!("/v1/webhooks/{members}/"),
        None,
    )
    .await
    .assert_error(404, "not_found");
    call(
        &app,
        &acme.member_key,
        "DELETE",
        &format!("/v1/webhooks/{admins}/"),
        None,
    )
    .await
    .assert_error(404, "not_found");
    let own = call(&app, &acme.member_key, "GET", "/v1/webhooks/", None).await;
    assert_eq!(own.body["count"], 1, "{}", own.text);
    let all = call(&app, &acme.admin_key, "GET", "/v1/webhooks/?limit=1", None).await;
    assert_eq!(all.body["count"], 2, "{}", all.text);
    assert_eq!(
        all.body["results"][0]["id"],
        admins.as_str(),
        "newest first"
    );
    assert!(all.body["next"].is_string());
    assert!(stored(&app, &members).await.is_some());
    assert!(stored(&app, &admins).await.is_some());
}

#[actix_web::test]
async fn every_refusal_of_the_destination_guard_is_a_400_naming_its_reason() {
    let app = TestApp::spawn().await;
    let org = Org::new(&app).await;
    for (url, reason) in [
        ("http://93.184.215.14/", "https_required"),
        ("ftp://93.184.215.14/", "unsupported_scheme"),
        ("https://user:pw@93.184.215.14/", "credentials_in_url"),
        ("not a url", "invalid_url"),
        ("https://localhost/hook", "loopback"),
        ("https://localhost:8443/hook", "loopback"),
        ("https://127.0.0.1/", "loopback"),
        ("https://[::1]/", "loopback"),
        ("https://10.0.0.1/", "private"),
        ("https://172.16.5.4/", "private"),
        ("https://192.168.0.1/", "private"),
        ("https://100.64.0.1/", "shared_address_space"),
        (
            "https://169.254.169.254/latest/meta-data/",
            "cloud_metadata",
        ),
        ("https://169.254.1.1/", "link_local"),
        ("https://[fe80::1]/", "link_local"),
        ("https://[fc00::1]/", "unique_local"),
        ("https://[fd00::1]/", "unique_local"),
        ("https://[::ffff:127.0.0.1]/", "ipv4_mapped"),
        ("https://[::ffff:169.254.169.254]/", "ipv4_mapped"),
        ("https://0.0.0.0/", "unspecified"),
        ("https://[::]/", "unspecified"),
        ("https://224.0.0.1/", "multicast"),
        ("https://255.255.255.255/", "broadcast"),
        ("http://2130706433/", "odd_ipv4_encoding"),
        ("https://2130706433/", "odd_ipv4_encoding"),
        ("https://0x7f000001/", "odd_ipv4_encoding"),
        ("https://0177.0.0.1/", "odd_ipv4_encoding"),
        ("https://127.1/", "odd_ipv4_encoding"),
        ("https://unresolvable.invalid/", "unresolvable"),
    ] {
        let r = call(
            &app,
            &org.admin_key,
            "POST",
            "/v1/webhooks/",
            Some(json!({"url": url, "events": ["kudos.posted"]})),
        )
        .await;
        r.assert_error(400, "params_validation_error");
        assert_eq!(r.body["extra"]["reason"], reason, "{url}: {}", r.text);
        assert!(r.body["errors"]["url"][0].is_string(), "{url}: {}", r.text);
    }
    assert_eq!(stored_count(&app).await, 0);
}

#[actix_web::test]
async fn allow_listed_hosts_are_reached_over_http_at_internal_addresses() {
    let app = TestApp::builder()
        .var(
            "TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS",
            "localhost, 127.0.0.1",
        )
        .spawn()
        .await;
    let org = Org::new(&app).await;
    for url in ["http://localhost:9999/hook", "http://127.0.0.1:9999/hook"] {
        let r = call(
            &app,
            &org.admin_key,
            "POST",
            "/v1/webhooks/",
            Some(json!({"url": url, "events": ["kudos.posted"]})),
        )
        .await;
        assert_eq!(r.status, 201, "{url}: {}", r.text);
        assert_eq!(r.body["url"], url);
    }
    // Only those hosts.
    let r = call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhooks/",
        Some(json!({"url": "http://127.0.0.2:9999/", "events": ["kudos.posted"]})),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    assert_eq!(r.body["extra"]["reason"], "https_required");
    assert_eq!(stored_count(&app).await, 2);
}

#[actix_web::test]
async fn events_are_required_and_must_be_known_and_other_fields_checked() {
    let app = TestApp::spawn().await;
    let org = Org::new(&app).await;
    let post = |body: Value| call(&app, &org.admin_key, "POST", "/v1/webhooks/", Some(body));
    let r = post(json!({"url": PUBLIC})).await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["events"].is_array(), "{}", r.text);
    let r = post(json!({"url": PUBLIC, "events": []})).await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["events"].is_array(), "{}", r.text);
    let r = post(json!({"url": PUBLIC, "events": ["kudos.posted", "kudos.given"]})).await;
    r.assert_error(400, "params_validation_error");
    let msg = r.body["errors"]["events"][0].as_str().unwrap();
    assert!(
        msg.contains("kudos.given") && !msg.contains("kudos.posted"),
        "{msg}"
    );
    let r = post(json!({"url": PUBLIC, "events": ["KUDOS_POSTED"]})).await;
    r.assert_error(400, "params_validation_error");
    let r = post(json!({"url": PUBLIC, "events": ["kudos.posted"], "object_ids": ["x"]})).await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["object_ids"].is_array(), "{}", r.text);
    let r = post(json!({"url": PUBLIC, "events": ["kudos.posted"], "name": "a\u{202e}b"})).await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["name"].is_array(), "{}", r.text);
    let r =
        post(json!({"url": PUBLIC, "events": ["kudos.posted"], "immediate_sample_event": true}))
            .await;
    r.assert_error(400, "params_validation_error");
    assert!(
        r.body["errors"]["immediate_sample_event"].is_array(),
        "{}",
        r.text
    );
    assert_eq!(stored_count(&app).await, 0);
}

#[actix_web::test]
async fn the_legacy_subscription_form_is_admin_only_and_speaks_upper_case() {
    let app = TestApp::spawn().await;
    let org = Org::new(&app).await;
    let url = "https://93.184.215.14/legacy";
    let body = json!({
        "url": url,
        "subscriptions": ["FOLLOWUPS_DAILY_FINISHED", "FORMS_RESPONSE_CREATED"],
    });
    call(
        &app,
        &org.member_key,
        "POST",
        "/v1/webhook-subscription/",
        Some(body.clone()),
    )
    .await
    .assert_error(403, "org_admin_required");
    let r = call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhook-subscription/",
        Some(body),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        r.body["subscriptions"],
        json!(["FOLLOWUPS_DAILY_FINISHED", "FORMS_RESPONSE_CREATED"])
    );
    assert_eq!(
        r.body["events"],
        json!(["followups.daily.finished", "forms.response.created"])
    );
    assert!(r.body["secret"].as_str().unwrap().starts_with("whsec_"));
    // One name as a string; an upper-case name without an event of ours is named.
    let one = call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhook-subscription/",
        Some(json!({"url": url, "subscriptions": "KUDOS_POSTED"})),
    )
    .await;
    assert_eq!(one.status, 201, "{}", one.text);
    assert_eq!(one.body["events"], json!(["kudos.posted"]));
    let bad = call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhook-subscription/",
        Some(json!({"url": url, "subscriptions": ["WORKFLOW_FINISHED"]})),
    )
    .await;
    bad.assert_error(400, "params_validation_error");
    assert!(bad.text.contains("WORKFLOW_FINISHED"), "{}", bad.text);
    let guarded = call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhook-subscription/",
        Some(json!({"url": "https://10.1.1.1/", "subscriptions": ["KUDOS_POSTED"]})),
    )
    .await;
    guarded.assert_error(400, "params_validation_error");
    assert_eq!(guarded.body["extra"]["reason"], "private");
    assert_eq!(stored_count(&app).await, 2);

    let del = json!({"url": url});
    call(
        &app,
        &org.member_key,
        "DELETE",
        "/v1/webhook-subscription/",
        Some(del.clone()),
    )
    .await
    .assert_error(403, "org_admin_required");
    let d = call(
        &app,
        &org.admin_key,
        "DELETE",
        "/v1/webhook-subscription/",
        Some(del.clone()),
    )
    .await;
    assert_eq!(d.status, 204, "{}", d.text);
    assert_eq!(stored_count(&app).await, 0);
    call(
        &app,
        &org.admin_key,
        "DELETE",
        "/v1/webhook-subscription/",
        Some(del),
    )
    .await
    .assert_error(404, "not_found");
}
