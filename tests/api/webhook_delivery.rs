//! Webhook delivery of real events (issue 9 §2): from the outbox through the queue to local
//! receivers, signed, retried, disabled on 410, replayed. Time is driven by passing a later
//! `now` to the state's webhook pass (`deliver_webhooks_at`), so retries due hours later run at
//! once.

use serde_json::{Value, json};
use teamcomm_tests::receiver::{Answer, Got, Receiver};
use teamcomm_tests::{Resp, TestApp, check_documented};
use teamcomm_webhooks::SecretText;
use teamcomm_webhooks::signing::verify;
use time::{Duration, OffsetDateTime};

/// An organization with an admin (key) and a member to give kudos to.
struct Org {
    key: String,
    member: String,
}

struct World {
    app: TestApp,
    acme: Org,
    globex: Org,
    t0: OffsetDateTime,
}

async fn org(app: &TestApp) -> Org {
    let (id, _admin, _session, key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&id, "member").await;
    Org { key, member }
}

async fn world() -> World {
    let app = TestApp::builder()
        .var("TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS", "127.0.0.1")
        .spawn()
        .await;
    let acme = org(&app).await;
    let globex = org(&app).await;
    World {
        app,
        acme,
        globex,
        t0: OffsetDateTime::now_utc(),
    }
}

/// A created endpoint: its id and signing secret.
struct Endpoint {
    id: String,
    secret: SecretText,
}

impl World {
    async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
        self.app
            .send(method, path, &[("X-API-KEY", key)], body)
            .await
    }

    async fn endpoint(&self, org: &Org, url: &str) -> Endpoint {
        let body = json!({"url": url, "events": ["kudos.posted"], "bearer_token": "tok-7"});
        let r = self
            .call(&org.key, "POST", "/v1/webhooks/", Some(body))
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        Endpoint {
            id: r.body["id"].as_str().unwrap().to_owned(),
            secret: SecretText::new(r.body["secret"].as_str().unwrap()),
        }
    }

    /// Gives kudos in `org`; answers their id.
    async fn kudos(&self, org: &Org) -> String {
        let body = json!({"content": "Thanks!", "users_receivers": [org.member]});
        let r = self.call(&org.key, "POST", "/v1/kudos/", Some(body)).await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }

    /// One webhook pass `hours` after the start.
    async fn pass(&self, hours: i64) {
        self.app
            .state
            .deliver_webhooks_at(self.t0 + Duration::hours(hours))
            .await
            .expect("a webhook pass");
    }

    async fn deliveries(&self, org: &Org, ep: &Endpoint) -> Vec<Value> {
        let path = format!("/v1/webhooks/{}/deliveries/", ep.id);
        let r = self.call(&org.key, "GET", &path, None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["results"].as_array().unwrap().clone()
    }

    async fn endpoint_view(&self, org: &Org, ep: &Endpoint) -> Value {
        let r = self
            .call(&org.key, "GET", &format!("/v1/webhooks/{}/", ep.id), None)
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body
    }
}

fn assert_signed(got: &Got, secret: &SecretText) {
    let id = got.header("webhook-id").expect("webhook-id");
    let ts: i64 = got.header("webhook-timestamp").unwrap().parse().unwrap();
    let sig = got.header("webhook-signature").unwrap();
    assert!(verify(secret, id, ts, &got.body, sig), "signature of {id}");
    assert_eq!(got.header("x-bearer"), Some("tok-7"));
    assert_eq!(got.payload()["event_id"], id, "webhook-id is the event id");
}

#[actix_web::test]
async fn a_kudos_reaches_its_organizations_receiver_signed_and_no_other() {
    let w = world().await;
    let mine = Receiver::start(&[]);
    let theirs = Receiver::start(&[]);
    let ep = w.endpoint(&w.acme, &mine.url()).await;
    w.endpoint(&w.globex, &theirs.url()).await;

    let kudos = w.kudos(&w.acme).await;
    w.pass(0).await;
    let got = mine.got();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].path, "/in");
    assert_signed(&got[0], &ep.secret);
    let payload = got[0].payload();
    assert_eq!(payload["event"], "kudos.posted");
    assert_eq!(payload["data"]["kudos"]["uuid"], kudos.as_str());
    assert!(payload["event_timestamp"].as_str().is_some());
    check_documented(&payload);
    assert!(theirs.got().is_empty(), "another organization's endpoint");

    let d = w.deliveries(&w.acme, &ep).await;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["status"], "delivered");
    assert_eq!(d[0]["attempts"], 1);
    assert_eq!(d[0]["last_status_code"], 200);
    assert_eq!(d[0]["event"], "kudos.posted");
    assert_eq!(d[0]["event_id"], payload["event_id"]);
    // Another organization's endpoint's deliveries are not found.
    let path = format!("/v1/webhooks/{}/deliveries/", ep.id);
    w.call(&w.globex.key, "GET", &path, None)
        .await
        .assert_error(404, "not_found");

    w.pass(1).await;
    assert_eq!(mine.got().len(), 1, "delivered once");
}

#[actix_web::test]
async fn a_failing_receiver_gets_the_event_again_until_it_takes_it() {
    let w = world().await;
    let receiver = Receiver::start(&[
        Answer::Status(500),
        Answer::RetryAfter(7_200),
        Answer::Status(400),
    ]);
    let ep = w.endpoint(&w.acme, &receiver.url()).await;
    w.kudos(&w.acme).await;

    w.pass(0).await;
    let d = &w.deliveries(&w.acme, &ep).await[0];
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_u64()),
        (Some("pending"), Some(1))
    );
    assert_eq!(d["last_status_code"], 500);
    // Not due yet a minute before the backoff's floor.
    w.pass(0).await;
    assert_eq!(receiver.got().len(), 1);

    w.pass(9).await;
    let d = &w.deliveries(&w.acme, &ep).await[0];
    assert_eq!(d["last_status_code"], 429);
    let next = OffsetDateTime::parse(
        d["next_attempt_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert!(
        next >= w.t0 + Duration::hours(11) - Duration::seconds(1),
        "Retry-After honoured: {next}"
    );
    w.pass(18).await;
    w.pass(27).await;
    let got = receiver.got();
    assert_eq!(got.len(), 4);
    for g in &got {
        assert_signed(g, &ep.secret);
    }
    let ids: Vec<_> = got.iter().map(|g| g.header("webhook-id")).collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "one webhook-id: {ids:?}"
    );
    let d = &w.deliveries(&w.acme, &ep).await[0];
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_u64()),
        (Some("delivered"), Some(4))
    );
    assert!(d["delivered_at"].as_str().is_some());
}

#[actix_web::test]
async fn a_410_disables_the_endpoint_and_a_replay_after_re_enabling_delivers() {
    let w = world().await;
    let receiver = Receiver::start(&[Answer::Status(410)]);
    let ep = w.endpoint(&w.acme, &receiver.url()).await;
    w.kudos(&w.acme).await;
    w.pass(0).await;
    let view = w.endpoint_view(&w.acme, &ep).await;
    assert_eq!(view["enabled"], false);
    assert!(
        view["disabled_reason"].as_str().unwrap().contains("410"),
        "{view}"
    );
    // A disabled endpoint's new events are not queued.
    w.kudos(&w.acme).await;
    w.pass(1).await;
    assert_eq!(receiver.got().len(), 1);
    let d = w.deliveries(&w.acme, &ep).await;
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0]["status"].as_str(), d[0]["last_status_code"].as_u64()),
        (Some("failed"), Some(410))
    );

    let replay = format!("/v1/webhooks/{}/replay/", ep.id);
    let r = w.call(&w.acme.key, "POST", &replay, None).await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["code"], "params_validation_error");

    let enable = format!("/v1/webhooks/{}/enable/", ep.id);
    w.call(&w.globex.key, "POST", &enable, None)
        .await
        .assert_error(404, "not_found");
    let r = w.call(&w.acme.key, "POST", &enable, None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["enabled"], true);
    assert_eq!(r.body["disabled_reason"], Value::Null);

    let r = w.call(&w.acme.key, "POST", &replay, None).await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body, json!({"replayed": 1}));
    w.pass(2).await;
    let got = receiver.got();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].header("webhook-id"), got[0].header("webhook-id"));
    assert_signed(&got[1], &ep.secret);
    let d = w.deliveries(&w.acme, &ep).await;
    assert_eq!(d[0]["status"], "delivered");
    let r = w.call(&w.acme.key, "POST", &replay, None).await;
    assert_eq!(r.body, json!({"replayed": 0}));
}

#[actix_web::test]
async fn a_redirect_is_not_followed_and_counts_as_a_failure() {
    let w = world().await;
    let receiver = Receiver::start(&[Answer::Redirect]);
    let ep = w.endpoint(&w.acme, &receiver.url()).await;
    w.kudos(&w.acme).await;
    w.pass(0).await;
    let got = receiver.got();
    assert_eq!(got.len(), 1, "not followed: {got:?}");
    let d = &w.deliveries(&w.acme, &ep).await[0];
    assert_eq!(
        (d["status"].as_str(), d["last_status_code"].as_u64()),
        (Some("pending"), Some(302))
    );
    w.pass(9).await;
    let got = receiver.got();
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(|g| g.path == "/in"));
    assert_eq!(w.deliveries(&w.acme, &ep).await[0]["status"], "delivered");
}

#[actix_web::test]
async fn a_hanging_receiver_times_out_and_is_retried() {
    let w = world().await;
    let receiver = Receiver::start(&[Answer::Hang(40)]);
    let ep = w.endpoint(&w.acme, &receiver.url()).await;
    w.kudos(&w.acme).await;
    let started = std::time::Instant::now();
    w.pass(0).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let d = &w.deliveries(&w.acme, &ep).await[0];
    assert_eq!(d["status"], "pending");
    assert_eq!(d["last_status_code"], Value::Null);
    assert!(!d["last_error"].as_str().unwrap().is_empty(), "{d}");
    w.pass(9).await;
    assert_eq!(w.deliveries(&w.acme, &ep).await[0]["status"], "delivered");
    assert_eq!(receiver.got().len(), 2);
}

#[actix_web::test]
async fn a_receiver_down_for_a_while_loses_no_event() {
    let w = world().await;
    // A port nobody listens on, until the receiver comes up.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let ep = w
        .endpoint(&w.acme, &format!("http://127.0.0.1:{port}/in"))
        .await;
    let mut kudos = Vec::new();
    for _ in 0..3 {
        kudos.push(w.kudos(&w.acme).await);
    }
    w.pass(0).await;
    w.pass(9).await;
    let d = w.deliveries(&w.acme, &ep).await;
    assert_eq!(d.len(), 3);
    assert!(
        d.iter()
            .all(|d| d["status"] == "pending" && d["attempts"] == 2),
        "{d:?}"
    );

    let receiver = Receiver::on(
        std::net::TcpListener::bind(("127.0.0.1", port)).unwrap(),
        &[],
    );
    w.pass(18).await;
    let mut got: Vec<String> = receiver
        .got()
        .iter()
        .map(|g| {
            g.payload()["data"]["kudos"]["uuid"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    got.sort();
    kudos.sort();
    assert_eq!(got, kudos);
    let d = w.deliveries(&w.acme, &ep).await;
    assert!(d.iter().all(|d| d["status"] == "delivered"), "{d:?}");
}

#[actix_web::test]
async fn relays_racing_fan_each_event_out_once() {
    let w = world().await;
    let receiver = Receiver::start(&[]);
    let ep = w.endpoint(&w.acme, &receiver.url()).await;
    let second = w.endpoint(&w.acme, &receiver.url()).await;
    // Within the daily kudos limit (10).
    for _ in 0..9 {
        w.kudos(&w.acme).await;
    }
    let worker = &w.app.state.webhook_worker;
    let (a, b, c) = tokio::join!(worker.relay(w.t0), worker.relay(w.t0), worker.relay(w.t0));
    assert_eq!(
        a.unwrap() + b.unwrap() + c.unwrap(),
        9,
        "each event relayed by one"
    );
    for e in [&ep, &second] {
        let path = format!("/v1/webhooks/{}/deliveries/?page_size=100", e.id);
        let r = w.call(&w.acme.key, "GET", &path, None).await;
        assert_eq!(r.body["count"], 9, "{}", r.text);
    }
    w.pass(0).await;
    let got = receiver.got();
    assert_eq!(got.len(), 18);
    let mut per_event = std::collections::HashMap::<String, usize>::new();
    for g in &got {
        *per_event
            .entry(g.header("webhook-id").unwrap().to_owned())
            .or_default() += 1;
    }
    assert_eq!(per_event.len(), 9);
    assert!(
        per_event.values().all(|&n| n == 2),
        "each event once to each endpoint: {per_event:?}"
    );
}
