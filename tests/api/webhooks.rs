//! Webhook endpoints (`/v1/webhooks/`) and the legacy subscription form
//! (`/v1/webhook-subscription/`): what is stored and shown, who sees what, the destination guard.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Bytea, Nullable, Text};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::{ANY_ID, Resp, TestApp, check_documented};
use teamcomm_webhooks::SecretText;
use teamcomm_webhooks::signing::verify;

/// A business organization with an admin and two members, each with an API key, and a
/// check-in endpoints may filter on.
struct Org {
    admin_key: String,
    member_key: String,
    other_member_key: String,
    checkin: String,
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
        let checkin = app.create_daily_checkin(&admin_key, &member).await;
        Org {
            admin_key,
            member_key,
            other_member_key,
            checkin,
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
            "object_ids": [org.checkin],
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
    assert_eq!(r.body["object_ids"], json!([org.checkin]));
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
        Some(json!({"url": url, "subscriptions": ["FORMS_RESPONSE_DENIED"]})),
    )
    .await;
    bad.assert_error(400, "params_validation_error");
    assert!(bad.text.contains("FORMS_RESPONSE_DENIED"), "{}", bad.text);
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

/// One request a [`Receiver`] got: its headers (lower-case names) and body.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

type Log = std::sync::Arc<std::sync::Mutex<Vec<Got>>>;

/// A webhook receiver on a loopback port answering every POST with `status`.
struct Receiver {
    port: u16,
    got: Log,
}

impl Receiver {
    fn start(status: u16) -> Receiver {
        use actix_web::{HttpRequest, HttpResponse, web};
        async fn take(
            req: HttpRequest,
            body: web::Bytes,
            log: web::Data<Log>,
            status: web::Data<u16>,
        ) -> HttpResponse {
            let headers = req
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        v.to_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            log.lock().unwrap().push(Got {
                path: req.path().to_owned(),
                headers,
                body: body.to_vec(),
            });
            HttpResponse::build(actix_web::http::StatusCode::from_u16(**status).unwrap()).finish()
        }
        let got: Log = Default::default();
        let data = web::Data::new(got.clone());
        let status = web::Data::new(status);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .app_data(data.clone())
                .app_data(status.clone())
                .default_service(web::post().to(take))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        actix_web::rt::spawn(server);
        Receiver { port, got }
    }

    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }
}

/// An app whose webhooks may reach loopback receivers over plain HTTP.
async fn local_app() -> TestApp {
    TestApp::builder()
        .var("TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS", "127.0.0.1")
        .spawn()
        .await
}

#[actix_web::test]
async fn a_sample_of_every_event_type_reaches_the_receiver_signed_and_as_documented() {
    let app = local_app().await;
    let org = Org::new(&app).await;
    let receiver = Receiver::start(204);
    let url = format!("http://127.0.0.1:{}/in", receiver.port);
    let r = call(
        &app,
        &org.member_key,
        "POST",
        "/v1/webhooks/",
        Some(json!({"url": url, "events": ["kudos.posted"], "bearer_token": "tok-9"})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(r.body.get("sample").is_none(), "{}", r.text);
    assert!(receiver.got().is_empty(), "nothing is sent unasked");
    let id = r.body["id"].as_str().unwrap().to_owned();
    let secret = SecretText::new(r.body["secret"].as_str().unwrap());

    let types = teamcomm_tests::documented_event_types();
    assert_eq!(types.len(), 13);
    for (i, event) in types.iter().enumerate() {
        let s = call(
            &app,
            &org.member_key,
            "POST",
            &format!("/v1/webhooks/{id}/sample/"),
            Some(json!({"event": event})),
        )
        .await;
        assert_eq!(s.status, 200, "{}", s.text);
        assert_eq!(s.body["status"], "sent", "{}", s.text);
        assert_eq!(s.body["event"], event.as_str());
        assert!(s.body["message"].as_str().unwrap().contains("204"));

        let got = &receiver.got()[i];
        assert_eq!(got.path, "/in");
        let payload: Value = serde_json::from_slice(&got.body).unwrap();
        assert_eq!(payload["event"], event.as_str());
        check_documented(&payload);
        assert_eq!(got.header("x-bearer"), Some("tok-9"));
        assert_eq!(got.header("content-type"), Some("application/json"));
        let msg_id = got.header("webhook-id").unwrap();
        assert!(msg_id.starts_with("sample_"), "{msg_id}");
        let ts: i64 = got.header("webhook-timestamp").unwrap().parse().unwrap();
        let sig = got.header("webhook-signature").unwrap();
        assert!(verify(&secret, msg_id, ts, &got.body, sig), "{event}");
    }
}

#[actix_web::test]
async fn a_failed_sample_says_why_and_unknown_events_and_other_orgs_are_refused() {
    let app = local_app().await;
    let org = Org::new(&app).await;
    let other = Org::new(&app).await;
    let gone = Receiver::start(410);
    let busy = Receiver::start(503);
    let create = |url: String| {
        let app = &app;
        let key = org.admin_key.clone();
        async move {
            let r = call(
                app,
                &key,
                "POST",
                "/v1/webhooks/",
                Some(json!({"url": url, "events": ["kudos.posted"]})),
            )
            .await;
            assert_eq!(r.status, 201, "{}", r.text);
            r.body["id"].as_str().unwrap().to_owned()
        }
    };
    let gone_id = create(format!("http://127.0.0.1:{}/", gone.port)).await;
    let busy_id = create(format!("http://127.0.0.1:{}/", busy.port)).await;
    let sample = |id: String, key: String, body: Value| {
        let app = &app;
        async move {
            call(
                app,
                &key,
                "POST",
                &format!("/v1/webhooks/{id}/sample/"),
                Some(body),
            )
            .await
        }
    };
    let kudos = json!({"event": "kudos.posted"});
    let s = sample(gone_id.clone(), org.admin_key.clone(), kudos.clone()).await;
    assert_eq!(s.status, 200, "{}", s.text);
    assert_eq!(s.body["status"], "failed");
    assert!(
        s.body["message"].as_str().unwrap().contains("410"),
        "{}",
        s.text
    );
    let s = sample(busy_id, org.admin_key.clone(), kudos.clone()).await;
    assert_eq!(s.body["status"], "failed");
    assert!(
        s.body["message"].as_str().unwrap().contains("503"),
        "{}",
        s.text
    );

    let s = sample(
        gone_id.clone(),
        org.admin_key.clone(),
        json!({"event": "KUDOS_POSTED"}),
    )
    .await;
    s.assert_error(400, "params_validation_error");
    assert!(s.body["errors"]["event"].is_array(), "{}", s.text);
    sample(gone_id.clone(), org.admin_key.clone(), json!({}))
        .await
        .assert_error(400, "params_validation_error");
    sample(gone_id.clone(), other.admin_key.clone(), kudos.clone())
        .await
        .assert_error(404, "not_found");
    sample(gone_id, org.member_key.clone(), kudos)
        .await
        .assert_error(404, "not_found");
    assert_eq!(gone.got().len(), 1, "refused samples send nothing");
}

#[actix_web::test]
async fn immediate_sample_event_and_the_legacy_sample_deliver_at_once() {
    let app = local_app().await;
    let org = Org::new(&app).await;
    let receiver = Receiver::start(200);
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    let r = call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhooks/",
        Some(json!({
            "url": url,
            "events": ["organization.user_activated", "forms.response.created"],
            "immediate_sample_event": true,
        })),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["sample"]["status"], "sent", "{}", r.text);
    assert_eq!(r.body["sample"]["event"], "forms.response.created");
    assert_eq!(receiver.got().len(), 1);

    let legacy_url = format!("http://127.0.0.1:{}/legacy", receiver.port);
    let r = call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhook-subscription/",
        Some(json!({"url": legacy_url, "subscriptions": ["KUDOS_POSTED"], "immediate_sample_event": true})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["sample"]["event"], "kudos.posted");
    let body = json!({"event_type": "FOLLOWUPS_DAILY_FINISHED", "url": legacy_url});
    call(
        &app,
        &org.member_key,
        "POST",
        "/v1/webhook-subscription/sample/",
        Some(body.clone()),
    )
    .await
    .assert_error(403, "org_admin_required");
    let s = call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhook-subscription/sample/",
        Some(body),
    )
    .await;
    assert_eq!(s.status, 200, "{}", s.text);
    assert_eq!(s.body["status"], "sent");
    assert_eq!(s.body["event"], "followups.daily.finished");
    let got = receiver.got();
    assert_eq!(got.len(), 3);
    assert_eq!(got[2].path, "/legacy");
    let payload: Value = serde_json::from_slice(&got[2].body).unwrap();
    check_documented(&payload);
    call(
        &app,
        &org.admin_key,
        "POST",
        "/v1/webhook-subscription/sample/",
        Some(json!({"event_type": "KUDOS_POSTED", "url": "https://93.184.215.14/none"})),
    )
    .await
    .assert_error(404, "not_found");
}

#[actix_web::test]
async fn object_ids_name_the_organizations_own_checkins_forms_or_workflows() {
    let app = TestApp::spawn().await;
    let acme = Org::new(&app).await;
    let globex = Org::new(&app).await;
    let before = stored_count(&app).await;
    for (ids, unknown) in [
        (json!([ANY_ID]), ANY_ID.to_owned()),
        (
            json!([acme.checkin, globex.checkin]),
            globex.checkin.clone(),
        ),
    ] {
        let body =
            json!({"url": PUBLIC, "events": ["followups.response.completed"], "object_ids": ids});
        let r = call(&app, &acme.admin_key, "POST", "/v1/webhooks/", Some(body)).await;
        assert_eq!(r.status, 400, "{}", r.text);
        assert_eq!(r.body["code"], "params_validation_error");
        let message = r.body["errors"]["object_ids"][0].as_str().unwrap();
        assert!(message.contains(&unknown), "{message}");
    }
    let legacy = json!({"url": PUBLIC, "subscriptions": ["FOLLOWUPS_DAILY_FINISHED"],
                        "subscribed_objects": [globex.checkin]});
    let r = call(
        &app,
        &acme.admin_key,
        "POST",
        "/v1/webhook-subscription/",
        Some(legacy),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(
        r.body["errors"]["subscribed_objects"].is_array(),
        "{}",
        r.text
    );
    assert_eq!(stored_count(&app).await, before, "nothing stored");
}
