//! The CLI's one-time-code login over HTTP (`/v1/cli/auth/...`), with the codes read from the
//! mails a real SMTP server (aiosmtpd) received: request and verify for one and several
//! organizations, the answer for unknown addresses, wrong, replaced, used and expired codes, the
//! `auth` budgets per client and per address, status and logout.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Bool, Integer, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_tests::smtp::SmtpSink;
use teamcomm_tests::{Resp, TestApp};
use time::OffsetDateTime;

/// The app sending its mail to `sink`, with `vars` added.
async fn app_with_mail(sink: &SmtpSink, vars: &[(&str, &str)]) -> TestApp {
    let mut b = TestApp::builder()
        .var("TEAMCOMM_SMTP_URL", &sink.url())
        .var("TEAMCOMM_MAIL_FROM", "Teamcomm <noreply@teamcomm.test>");
    for (k, v) in vars {
        b = b.var(k, v);
    }
    b.spawn().await
}

/// An organization named `name` on `plan`; its uuid.
pub(crate) async fn org_named(app: &TestApp, name: &str, plan: &str) -> String {
    let r = app
        .operator(
            "POST",
            "/operator/v1/organizations/",
            Some(json!({"name": name, "plan": plan})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

/// A person with this address in `org`; their uuid.
pub(crate) async fn person_at(app: &TestApp, org: &str, email: &str) -> String {
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": email, "first_name": "Ada", "last_name": "Lovelace", "role": "member"})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

/// A fresh address.
pub(crate) fn address() -> String {
    format!("login-{}@example.com", uuid::Uuid::new_v4().simple())
}

async fn post(app: &TestApp, path: &str, body: Value) -> Resp {
    app.send("POST", path, &[], Some(body)).await
}

async fn request_code(app: &TestApp, email: &str) -> Resp {
    post(app, "/v1/cli/auth/request-code/", json!({"email": email})).await
}

async fn verify(app: &TestApp, body: Value) -> Resp {
    post(app, "/v1/cli/auth/verify-code/", body).await
}

/// The 6-digit code of a login mail (its subject and its text both carry it).
pub(crate) fn code_of(mail: &Value) -> String {
    let text = SmtpSink::text(mail);
    let code: String = text
        .split_whitespace()
        .find(|w| w.len() == 6 && w.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no code in {text:?}"))
        .to_owned();
    assert!(
        mail["headers"]["Subject"]
            .as_str()
            .is_some_and(|s| s.ends_with(&code)),
        "{mail}"
    );
    assert!(text.contains("valid for 10 minutes"), "{text}");
    code
}

/// Requests a code for `email` and reads it from the `nth` mail the address received (1-based).
async fn mailed_code(app: &TestApp, sink: &SmtpSink, email: &str, nth: usize) -> String {
    let r = request_code(app, email).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let mails = sink.wait_for(email, nth).await;
    code_of(&mails[nth - 1])
}

fn other_code(code: &str) -> String {
    let n: u32 = code.parse().unwrap();
    format!("{:06}", (n + 1) % 1_000_000)
}

#[derive(QueryableByName, Debug)]
struct CodeRow {
    #[diesel(sql_type = Integer)]
    tries: i32,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    used_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Text)]
    row: String,
}

/// The stored code rows (every one; each test has its own database).
async fn code_rows(app: &TestApp) -> Vec<CodeRow> {
    let mut conn = app.database.pool().get().await.unwrap();
    diesel::sql_query(
        "SELECT tries, used_at, c::text AS row FROM login_codes c ORDER BY created_at",
    )
    .load(&mut conn)
    .await
    .unwrap()
}

async fn expire_codes(app: &TestApp) {
    let mut conn = app.database.pool().get().await.unwrap();
    diesel::sql_query("UPDATE login_codes SET expires_at = now() - interval '1 second'")
        .execute(&mut conn)
        .await
        .unwrap();
}

#[derive(QueryableByName)]
struct TokenRow {
    #[diesel(sql_type = Bool)]
    revoked: bool,
    #[diesel(sql_type = BigInt)]
    lifetime_days: i64,
}

/// The CLI tokens of `user`: (revoked, whole days from creation to expiry).
async fn tokens_of(app: &TestApp, user: &str) -> Vec<(bool, i64)> {
    let mut conn = app.database.pool().get().await.unwrap();
    let rows: Vec<TokenRow> = diesel::sql_query(
        "SELECT revoked_at IS NOT NULL AS revoked, \
         round(extract(epoch FROM expires_at - created_at) / 86400)::int8 AS lifetime_days \
         FROM cli_tokens WHERE user_id = $1::uuid ORDER BY created_at",
    )
    .bind::<Text, _>(user)
    .load(&mut conn)
    .await
    .unwrap();
    rows.into_iter()
        .map(|r| (r.revoked, r.lifetime_days))
        .collect()
}

async fn status(app: &TestApp, headers: &[(&str, &str)]) -> Resp {
    app.send("GET", "/v1/cli/auth/status/", headers, None).await
}

#[actix_web::test]
async fn one_organization_logs_in_with_the_mailed_code() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink, &[]).await;
    let org = org_named(&app, "Acme", "business").await;
    let email = address();
    let ada = person_at(&app, &org, &email).await;

    let r = request_code(&app, &format!("  {}  ", email.to_uppercase())).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({
            "detail": "If this address has an account, a verification code was sent to it.",
            "is_multi_org": false,
            "organizations": [],
        })
    );
    let mails = sink.wait_for(&email, 1).await;
    let code = code_of(&mails[0]);

    // Stored hashed, under a hash of the address: neither appears in the row.
    let rows = code_rows(&app).await;
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].tries, rows[0].used_at), (0, None));
    assert!(!rows[0].row.contains(&code), "{:?}", rows[0]);
    assert!(!rows[0].row.contains("login-"), "{:?}", rows[0]);

    let r = verify(&app, json!({"email": email, "code": code})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let token = r.body["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("tcc_") && token.len() == 42, "{}", r.text);
    assert_eq!(
        r.body["organization"],
        json!({"uuid": org, "name": "Acme", "plan": "business"})
    );
    assert_eq!(r.body["organization_uuid"], org.as_str());
    assert_eq!(r.body["plan"], "business");
    assert!(r.body["expires_at"].is_string(), "{}", r.text);
    assert!(code_rows(&app).await[0].used_at.is_some());
    assert_eq!(tokens_of(&app, &ada).await, [(false, 30)]);

    // The token is a CLI session of Ada in Acme.
    let bearer = format!("Bearer {token}");
    let s = status(&app, &[("Authorization", &bearer)]).await;
    assert_eq!(s.status, 200, "{}", s.text);
    assert_eq!(
        s.body,
        json!({
            "authenticated": true,
            "user": {"uuid": ada, "email": email, "full_name": "Ada Lovelace"},
            "organization": {"uuid": org, "name": "Acme"},
            "via": "cli_token",
        })
    );

    // The code is used up.
    verify(&app, json!({"email": email, "code": code}))
        .await
        .assert_error(400, "login_code_expired");
}

#[actix_web::test]
async fn several_organizations_choose_one_with_the_same_code() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink, &[]).await;
    let acme = org_named(&app, "Acme", "business").await;
    let beta = org_named(&app, "Beta", "free").await;
    let email = address();
    person_at(&app, &acme, &email).await;
    let in_beta = person_at(&app, &beta, &email).await;

    let r = request_code(&app, &email).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["is_multi_org"], true, "{}", r.text);
    let organizations = r.body["organizations"].as_array().unwrap().clone();
    let listed: Vec<(&str, &str)> = organizations
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), o["uuid"].as_str().unwrap()))
        .collect();
    assert_eq!(listed, [("Acme", acme.as_str()), ("Beta", beta.as_str())]);
    let ids: Vec<i64> = organizations
        .iter()
        .map(|o| o["id"].as_i64().expect("an integer id"))
        .collect();
    assert_ne!(ids[0], ids[1]);
    let code = code_of(&sink.wait_for(&email, 1).await[0]);
    assert_eq!(sink.mails_to(&email).len(), 1, "one mail per request");

    // No organization chosen: the list again, and the code is still good (twice over).
    for _ in 0..2 {
        let r = verify(&app, json!({"email": email, "code": code})).await;
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(
            r.body,
            json!({"requires_organization_selection": true, "organizations": organizations})
        );
    }
    let rows = code_rows(&app).await;
    assert_eq!((rows[0].tries, rows[0].used_at), (0, None));

    // An id that is not one of the address's organizations.
    let stranger = org_named(&app, "Gamma", "business").await;
    let _ = stranger;
    let foreign = ids.iter().max().unwrap() + 1;
    verify(
        &app,
        json!({"email": email, "code": code, "organization_id": foreign}),
    )
    .await
    .assert_error(400, "login_organization_invalid");

    // Beta, on the free plan.
    let r = verify(
        &app,
        json!({"email": email, "code": code, "organization_id": ids[1]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body["organization"],
        json!({"uuid": beta, "name": "Beta", "plan": "free"})
    );
    assert_eq!(r.body["plan"], "free");
    let bearer = format!("Bearer {}", r.body["token"].as_str().unwrap());
    let me = app
        .send("GET", "/v1/me/", &[("Authorization", &bearer)], None)
        .await;
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(
        (
            me.body["uuid"].as_str(),
            me.body["organization_uuid"].as_str()
        ),
        (Some(in_beta.as_str()), Some(beta.as_str()))
    );
    // Used: not even for Acme.
    verify(
        &app,
        json!({"email": email, "code": code, "organization_id": ids[0]}),
    )
    .await
    .assert_error(400, "login_code_expired");
}

#[actix_web::test]
async fn an_unknown_address_gets_the_same_answer_and_no_mail() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink, &[]).await;
    let org = org_named(&app, "Acme", "business").await;
    let known = address();
    person_at(&app, &org, &known).await;
    let unknown = address();

    let a = request_code(&app, &known).await;
    let b = request_code(&app, &unknown).await;
    assert_eq!((a.status, b.status), (200, 200));
    assert_eq!(a.body, b.body);
    sink.wait_for(&known, 1).await;
    // The same work: a code row for each.
    assert_eq!(code_rows(&app).await.len(), 2);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(sink.mails_to(&unknown).is_empty());
    assert_eq!(sink.mails().len(), 1);
    // Its code answers like any wrong code.
    verify(&app, json!({"email": unknown, "code": "123456"}))
        .await
        .assert_error(400, "login_code_invalid");
    // A deactivated person is not found either.
    let gone = address();
    let user = person_at(&app, &org, &gone).await;
    app.deactivate(&user).await;
    assert_eq!(request_code(&app, &gone).await.body, a.body);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(sink.mails_to(&gone).is_empty());
}

#[actix_web::test]
async fn wrong_replaced_and_expired_codes() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink, &[]).await;
    let org = org_named(&app, "Acme", "business").await;
    let email = address();
    person_at(&app, &org, &email).await;

    // Five wrong tries kill the code.
    let code = mailed_code(&app, &sink, &email, 1).await;
    for left in (0..5).rev() {
        let r = verify(&app, json!({"email": email, "code": other_code(&code)})).await;
        r.assert_error(400, "login_code_invalid");
        if left > 0 {
            assert!(r.text.contains(&format!("{left} tries left")), "{}", r.text);
        }
    }
    assert_eq!(code_rows(&app).await[0].tries, 5);
    verify(&app, json!({"email": email, "code": code}))
        .await
        .assert_error(400, "login_code_expired");

    // A new request replaces the earlier code.
    let first = mailed_code(&app, &sink, &email, 2).await;
    let second = mailed_code(&app, &sink, &email, 3).await;
    if first != second {
        verify(&app, json!({"email": email, "code": first}))
            .await
            .assert_error(400, "login_code_invalid");
    }
    assert_eq!(code_rows(&app).await.len(), 1, "one code per address");

    // Past its ten minutes, a code is refused.
    expire_codes(&app).await;
    verify(&app, json!({"email": email, "code": second}))
        .await
        .assert_error(400, "login_code_expired");

    // Not an address, a missing code, an unknown field: the body's own refusals.
    for body in [
        json!({"email": "nobody"}),
        json!({"email": email, "code": "123456", "extra": 1}),
    ] {
        let r = post(&app, "/v1/cli/auth/request-code/", body).await;
        assert_eq!(r.status, 400, "{}", r.text);
    }
    verify(&app, json!({"email": email}))
        .await
        .assert_error(400, "params_validation_error");
}

#[actix_web::test]
async fn the_auth_budget_holds_per_client_and_per_address() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink, &[("TEAMCOMM_RATE_LIMIT_PER_HOUR_AUTH", "3")]).await;

    // One client, three addresses: the fourth request is throttled.
    for _ in 0..3 {
        let r = request_code(&app, &address()).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let r = request_code(&app, &address()).await;
    r.assert_error(429, "throttled");
    assert!(r.header("retry-after").is_some(), "{:?}", r.headers);
    assert_eq!(r.body["extra"]["scope"], "auth");
    // Verifications spend the same budget.
    verify(&app, json!({"email": address(), "code": "123456"}))
        .await
        .assert_error(429, "throttled");

    // One address from three other clients (X-Forwarded-For): its own budget runs out too.
    let email = address();
    for n in 1..=4 {
        let client = format!("198.51.100.{n}");
        let r = app
            .send(
                "POST",
                "/v1/cli/auth/request-code/",
                &[("X-Forwarded-For", &client)],
                Some(json!({"email": email})),
            )
            .await;
        if n <= 3 {
            assert_eq!(r.status, 200, "{}", r.text);
        } else {
            r.assert_error(429, "throttled");
        }
    }
}

#[actix_web::test]
async fn status_with_an_api_key_and_logout_of_a_cli_session() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink, &[]).await;
    let (org, admin, _, key) = app.org_with_admin_key("business").await;

    let s = status(&app, &[("X-API-KEY", &key)]).await;
    assert_eq!(s.status, 200, "{}", s.text);
    assert_eq!(s.body["via"], "api_key");
    assert_eq!(s.body["user"]["uuid"], admin.as_str());
    assert_eq!(s.body["organization"]["uuid"], org.as_str());
    status(&app, &[])
        .await
        .assert_error(401, "credential_absent");

    // A key has no session to end.
    app.send("POST", "/v1/cli/auth/logout/", &[("X-API-KEY", &key)], None)
        .await
        .assert_error(403, "insufficient_scope");

    // Log in through the mail, then out: the token is refused at once.
    let email = address();
    let user = person_at(&app, &org, &email).await;
    let code = mailed_code(&app, &sink, &email, 1).await;
    let r = verify(&app, json!({"email": email, "code": code})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let bearer = format!("Bearer {}", r.body["token"].as_str().unwrap());
    assert_eq!(
        status(&app, &[("Authorization", &bearer)]).await.status,
        200
    );
    let out = app
        .send(
            "POST",
            "/v1/cli/auth/logout/",
            &[("Authorization", &bearer)],
            None,
        )
        .await;
    assert_eq!(out.status, 200, "{}", out.text);
    assert_eq!(out.body, json!({"detail": "Logged out."}));
    assert_eq!(tokens_of(&app, &user).await, [(true, 30)]);
    status(&app, &[("Authorization", &bearer)])
        .await
        .assert_error(401, "invalid_credentials");
    app.send(
        "POST",
        "/v1/cli/auth/logout/",
        &[("Authorization", &bearer)],
        None,
    )
    .await
    .assert_error(401, "invalid_credentials");
}

#[actix_web::test]
async fn a_free_plan_session_may_ask_who_it_is_and_log_out() {
    let Some(sink) = SmtpSink::start() else {
        return;
    };
    let app = app_with_mail(&sink, &[]).await;
    let org = org_named(&app, "Free", "free").await;
    let email = address();
    person_at(&app, &org, &email).await;
    let code = mailed_code(&app, &sink, &email, 1).await;
    let r = verify(&app, json!({"email": email, "code": code})).await;
    assert_eq!(r.body["plan"], "free", "{}", r.text);
    let bearer = format!("Bearer {}", r.body["token"].as_str().unwrap());
    assert_eq!(
        status(&app, &[("Authorization", &bearer)]).await.status,
        200
    );
    let out = app
        .send(
            "POST",
            "/v1/cli/auth/logout/",
            &[("Authorization", &bearer)],
            None,
        )
        .await;
    assert_eq!(out.status, 200, "{}", out.text);
}

#[actix_web::test]
async fn the_answer_does_not_wait_for_the_mail() {
    // An SMTP server that takes the connection and never speaks: a send waits on it until its
    // own timeout, so an answer that waited for the mail would take that long.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (contacted, was_contacted) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if let Ok((held, _)) = listener.accept() {
            let _ = contacted.send(());
            std::thread::sleep(std::time::Duration::from_secs(5));
            drop(held);
        }
    });
    let app = TestApp::builder()
        .var("TEAMCOMM_SMTP_URL", &format!("smtp://127.0.0.1:{port}"))
        .var("TEAMCOMM_MAIL_FROM", "Teamcomm <noreply@teamcomm.test>")
        .spawn()
        .await;
    let org = org_named(&app, "Acme", "business").await;
    let known = address();
    person_at(&app, &org, &known).await;

    let started = std::time::Instant::now();
    let r = request_code(&app, &known).await;
    let took = started.elapsed();
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(took < std::time::Duration::from_secs(2), "{took:?}");
    // The mail was on its way meanwhile.
    let waited = tokio::task::spawn_blocking(move || {
        was_contacted.recv_timeout(std::time::Duration::from_secs(5))
    })
    .await
    .unwrap();
    assert!(waited.is_ok(), "the SMTP server was never contacted");
    // An unknown address answers alike.
    let u = request_code(&app, &address()).await;
    assert_eq!(u.body, r.body);
}
