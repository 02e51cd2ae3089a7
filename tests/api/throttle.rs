//! Free-plan daily throttles (issue 10 §4, spec "Free-plan daily throttles"): a free
//! organization's CLI sessions send 20 e-mails a UTC day between them, then 429
//! `free_plan_daily_limit_exceeded` with `Retry-After` up to 00:00 UTC; refused requests cost
//! nothing; paid plans and API keys are not counted; the count lives in Postgres (one atomic
//! statement, right under concurrency and across restarts).

use std::sync::Arc;

use diesel::QueryableByName;
use diesel::sql_types::{Int4, Text};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_kernel::OrgId;
use teamcomm_keys::{DailyCounters, DailyLimit};
use teamcomm_store_pg::PgDailyCounters;
use teamcomm_tests::{Resp, TestApp};
use time::OffsetDateTime;

/// A free organization with a CLI session of its admin and a person to mail.
struct Free {
    app: TestApp,
    org: String,
    cli: String,
    member: String,
}

/// An operator-issued CLI token of `user`, as an `Authorization` value.
async fn cli_token(app: &TestApp, user: &str) -> String {
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/users/{user}/cli-tokens/"),
            None,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    format!("Bearer {}", r.body["token"].as_str().unwrap())
}

async fn free_org(app: TestApp) -> Free {
    let org = app.create_org("free").await;
    let admin = app.create_user(&org, "admin").await;
    let member = app.create_user(&org, "member").await;
    let cli = cli_token(&app, &admin).await;
    Free {
        app,
        org,
        cli,
        member,
    }
}

fn email(to: &str) -> Value {
    json!({"users_uuids": [to], "email_subject": "Hello", "email_content": "<p>Hi</p>"})
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = Int4)]
    n: i32,
}

impl Free {
    async fn send_email(&self, auth: &str) -> Resp {
        self.app
            .send(
                "POST",
                "/v1/send-email/",
                &[("Authorization", auth)],
                Some(email(&self.member)),
            )
            .await
    }

    async fn report(&self, body: Value) -> Resp {
        self.app
            .send(
                "POST",
                "/v1/agent-reports/",
                &[("Authorization", &self.cli)],
                Some(body),
            )
            .await
    }

    /// Today's stored count of `counter` (0 without a row).
    async fn stored(&self, counter: &str) -> i32 {
        let mut conn = self.app.database.pool().get().await.unwrap();
        let rows: Vec<Count> = diesel::sql_query(
            "SELECT used AS n FROM daily_counters WHERE organization_id::text = $1 \
             AND counter = $2 AND day = (now() AT TIME ZONE 'UTC')::date",
        )
        .bind::<Text, _>(&self.org)
        .bind::<Text, _>(counter)
        .load(&mut conn)
        .await
        .unwrap();
        rows.into_iter().next().map_or(0, |c| c.n)
    }

    /// E-mails the organization queued.
    async fn emails(&self) -> i32 {
        let mut conn = self.app.database.pool().get().await.unwrap();
        let rows: Vec<Count> = diesel::sql_query(
            "SELECT count(*)::int4 AS n FROM emails WHERE organization_id::text = $1",
        )
        .bind::<Text, _>(&self.org)
        .load(&mut conn)
        .await
        .unwrap();
        rows[0].n
    }
}

/// Seconds from now to the next 00:00 UTC.
fn until_midnight() -> i64 {
    let now = OffsetDateTime::now_utc();
    let midnight = now.date().next_day().unwrap().midnight().assume_utc();
    (midnight - now).whole_seconds()
}

#[actix_web::test]
async fn a_free_cli_session_sends_twenty_emails_a_day_then_429_until_midnight() {
    let w = free_org(TestApp::spawn().await).await;
    // A refused request costs nothing.
    let r = w
        .app
        .send(
            "POST",
            "/v1/send-email/",
            &[("Authorization", &w.cli)],
            Some(json!({"users_uuids": [], "email_subject": "s", "email_content": "c"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert_eq!(w.stored("emails").await, 0);

    for n in 1..=20 {
        let r = w.send_email(&w.cli).await;
        assert_eq!(r.status, 202, "e-mail {n}: {}", r.text);
        assert_eq!(w.stored("emails").await, n);
    }
    let r = w.send_email(&w.cli).await;
    r.assert_error(429, "free_plan_daily_limit_exceeded");
    let retry: i64 = r.header("retry-after").unwrap().parse().unwrap();
    let expected = until_midnight();
    assert!(
        (expected - 5..=expected + 1).contains(&retry),
        "{retry} vs {expected}"
    );
    assert_eq!(r.body["extra"]["retry_after"], retry);
    assert_eq!(r.body["extra"]["limit"], 20);
    assert_eq!(r.body["extra"]["limit_name"], "emails");
    assert!(
        r.body["detail"].as_str().unwrap().contains("00:00 UTC"),
        "{}",
        r.text
    );
    // Nothing was queued by the refused request, and it did not count.
    assert_eq!(w.emails().await, 20);
    assert_eq!(w.stored("emails").await, 20);

    // The budget is the organization's: another person's session is refused too.
    let other = w.app.create_user(&w.org, "member").await;
    let other = cli_token(&w.app, &other).await;
    w.send_email(&other)
        .await
        .assert_error(429, "free_plan_daily_limit_exceeded");
    // The agent-report budget is untouched.
    assert_eq!(w.stored("agent_reports").await, 0);

    // Another free organization has its own.
    let second = free_org(w.app).await;
    assert_eq!(second.send_email(&second.cli).await.status, 202);
    assert_eq!(second.stored("emails").await, 1);
}

#[actix_web::test]
async fn paid_plans_and_api_keys_are_not_counted() {
    // The plan is read fresh on every request.
    let app = TestApp::builder()
        .var("TEAMCOMM_PLAN_CACHE_TTL_SECS", "0")
        .spawn()
        .await;
    let w = free_org(app).await;
    for _ in 0..20 {
        assert_eq!(w.send_email(&w.cli).await.status, 202);
    }
    w.send_email(&w.cli)
        .await
        .assert_error(429, "free_plan_daily_limit_exceeded");
    // Upgraded: the same session sends on.
    let r = w
        .app
        .operator(
            "PATCH",
            &format!("/operator/v1/organizations/{}/", w.org),
            Some(json!({"plan": "business"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    for _ in 0..3 {
        let r = w.send_email(&w.cli).await;
        assert_eq!(r.status, 202, "{}", r.text);
    }
    assert_eq!(w.stored("emails").await, 20);

    // A paid organization's API key and CLI session: never counted.
    let (org, admin, _, key) = w.app.org_with_admin_key("starter").await;
    let member = w.app.create_user(&org, "member").await;
    let cli = cli_token(&w.app, &admin).await;
    for auth in [("X-API-KEY", key.as_str()), ("Authorization", cli.as_str())] {
        for _ in 0..21 {
            let r = w
                .app
                .send("POST", "/v1/send-email/", &[auth], Some(email(&member)))
                .await;
            assert_eq!(r.status, 202, "{}", r.text);
        }
    }
    let counters = PgDailyCounters::new(w.app.database.clone());
    let today = OffsetDateTime::now_utc().date();
    let paid = OrgId(org.parse().unwrap());
    assert_eq!(
        counters
            .used(paid, DailyLimit::Emails, today)
            .await
            .unwrap(),
        0
    );
}

#[actix_web::test]
async fn the_count_is_read_from_postgres() {
    // As another server process (or this one before a restart) left it: 19 today.
    let w = free_org(TestApp::spawn().await).await;
    let mut conn = w.app.database.pool().get().await.unwrap();
    diesel::sql_query(
        "INSERT INTO daily_counters (organization_id, counter, day, used) \
         VALUES ($1::uuid, 'emails', (now() AT TIME ZONE 'UTC')::date, 19), \
                ($1::uuid, 'emails', (now() AT TIME ZONE 'UTC')::date - 1, 20)",
    )
    .bind::<Text, _>(&w.org)
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(w.send_email(&w.cli).await.status, 202);
    w.send_email(&w.cli)
        .await
        .assert_error(429, "free_plan_daily_limit_exceeded");
    assert_eq!(w.stored("emails").await, 20);
}

#[actix_web::test]
async fn concurrent_requests_never_pass_the_limit() {
    let w = Arc::new(free_org(TestApp::spawn().await).await);
    let calls: Vec<_> = (0..30)
        .map(|_| {
            let w = w.clone();
            actix_web::rt::spawn(async move { w.send_email(&w.cli).await.status })
        })
        .collect();
    let mut accepted = 0;
    for call in calls {
        match call.await.unwrap() {
            202 => accepted += 1,
            429 => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(accepted, 20);
    assert_eq!(w.stored("emails").await, 20);
    assert_eq!(w.emails().await, 20);
}

#[actix_web::test]
async fn the_postgres_counter_is_atomic_across_connections() {
    let w = free_org(TestApp::spawn().await).await;
    let org = OrgId(w.org.parse().unwrap());
    let day = OffsetDateTime::now_utc().date();
    // Separate counters, as separate processes have: each spend takes its own connection.
    let spends: Vec<_> = (0..40)
        .map(|_| {
            let counters = PgDailyCounters::new(w.app.database.clone());
            actix_web::rt::spawn(async move {
                counters.spend(org, DailyLimit::AgentReports, day, 25).await
            })
        })
        .collect();
    let mut granted = Vec::new();
    for s in spends {
        if let Some(n) = s.await.unwrap().unwrap() {
            granted.push(n);
        }
    }
    granted.sort_unstable();
    assert_eq!(granted, (1..=25).collect::<Vec<u32>>());
    let counters = PgDailyCounters::new(w.app.database.clone());
    counters
        .give_back(org, DailyLimit::AgentReports, day)
        .await
        .unwrap();
    assert_eq!(
        counters
            .used(org, DailyLimit::AgentReports, day)
            .await
            .unwrap(),
        24
    );
    // Another day, another count; an unknown organization is not found.
    let tomorrow = day.next_day().unwrap();
    assert_eq!(
        counters
            .spend(org, DailyLimit::AgentReports, tomorrow, 25)
            .await
            .unwrap(),
        Some(1)
    );
    let nobody = OrgId(uuid::Uuid::new_v4());
    assert!(
        counters
            .spend(nobody, DailyLimit::Emails, day, 20)
            .await
            .is_err()
    );
}

#[actix_web::test]
async fn a_free_cli_session_posts_fifty_agent_reports_a_day() {
    let w = free_org(TestApp::spawn().await).await;
    let report = |n: usize| json!({"agent_name": "builder", "content": format!("step {n}")});
    // Refused requests are not counted.
    w.report(json!({"agent_name": "builder"}))
        .await
        .assert_error(400, "params_validation_error");
    assert_eq!(w.stored("agent_reports").await, 0);
    for n in 1..=50 {
        let r = w.report(report(n)).await;
        assert_eq!(r.status, 201, "report {n}: {}", r.text);
    }
    let r = w.report(report(51)).await;
    r.assert_error(429, "free_plan_daily_limit_exceeded");
    assert_eq!(r.body["extra"]["limit"], 50);
    assert_eq!(r.body["extra"]["limit_name"], "agent_reports");
    let retry: i64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&retry), "{retry}");
    assert_eq!(w.stored("agent_reports").await, 50);
    // E-mails have their own budget.
    assert_eq!(w.send_email(&w.cli).await.status, 202);
}
