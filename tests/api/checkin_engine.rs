//! The check-in engine as the server runs it: the app's engine (Postgres rounds, the check-in
//! cache, the messaging service) opens the round of a check-in whose trigger has passed and
//! queues its first question to the participant, once; the server's loop ticks it and stops
//! when told.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use serde_json::json;
use teamcomm_checkin_engine::{Round, RoundRepository, rules};
use teamcomm_kernel::OrgId;
use teamcomm_store_pg::PgRoundRepository;
use teamcomm_tests::TestApp;

struct World {
    app: TestApp,
    org: String,
    admin_key: String,
    member: String,
    checkin: String,
}

/// An organization with an admin (and their key), a member, and a check-in asking the member
/// every day at 00:00 UTC: its trigger has passed whenever the test runs, and the round stays
/// open until the end of the day.
async fn world_with(app: TestApp) -> World {
    let (org, _, _, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let r = app
        .send(
            "POST",
            "/v1/checkins/create/",
            &[("X-API-KEY", &admin_key)],
            Some(json!({
                "name": "Standup",
                "schedule": {"days": [0, 1, 2, 3, 4, 5, 6], "time": "00:00", "timezone": "UTC"},
                "participants": {"user_uuids": [member]},
                "questions": [
                    {"question": "What did you do?", "question_type": "text", "short_question": "Done"},
                    {"question": "Anything blocking you?", "question_type": "text", "required": false, "short_question": "Blockers"},
                ],
            })),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let checkin = r.body["uuid"].as_str().unwrap().to_owned();
    World {
        app,
        org,
        admin_key,
        member,
        checkin,
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl World {
    /// The organization's open rounds, read straight from the database.
    async fn rounds(&self) -> Vec<Round> {
        PgRoundRepository::new(self.app.database.clone())
            .open_rounds(Some(OrgId(self.org.parse().unwrap())))
            .await
            .expect("read rounds")
    }

    /// How many messages the organization holds.
    async fn messages(&self) -> i64 {
        let mut conn = self.app.database.pool().get().await.expect("connection");
        diesel::sql_query("SELECT count(*) AS n FROM messages WHERE organization_id::text = $1")
            .bind::<Text, _>(&self.org)
            .get_result::<Count>(&mut conn)
            .await
            .expect("count messages")
            .n
    }
}

#[actix_web::test]
async fn the_engine_opens_a_due_round_and_queues_its_first_question_once() {
    let w = world_with(TestApp::spawn().await).await;
    let today = time::OffsetDateTime::now_utc().date();

    let first = w.app.state.tick_checkins().await.expect("tick");
    assert!(first.failures.is_empty(), "{first:?}");
    assert_eq!((first.opened, first.questions), (1, 1), "{first:?}");

    let rounds = w.rounds().await;
    assert_eq!(rounds.len(), 1, "{rounds:?}");
    let round = &rounds[0];
    assert_eq!(round.checkin_id.to_string(), w.checkin);
    assert_eq!(round.user_id.to_string(), w.member);
    assert_eq!(round.day, today);
    assert_eq!((round.asked, round.answered), (1, 0), "{round:?}");
    assert!(!round.completed);

    // The first question, queued to the participant under the id derived from the round.
    let id = rules::question_message_id(round, 0).0;
    let r = w
        .app
        .get_with_key(&format!("/v1/messages/{id}/"), &w.admin_key)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["status"], "queued", "{}", r.text);
    let text = r.body["message"].as_str().unwrap();
    assert!(text.contains("What did you do?"), "{text}");
    assert!(
        !text.contains("Anything blocking you?"),
        "one question at a time: {text}"
    );
    let deliveries = r.body["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 1, "{}", r.text);
    assert_eq!(deliveries[0]["target_type"], "user");
    assert_eq!(deliveries[0]["user_uuid"], json!(w.member));
    assert_eq!(w.messages().await, 1);

    // Another tick: the round is open and waits for the answer; nothing is asked again.
    let second = w.app.state.tick_checkins().await.expect("tick");
    assert!(second.failures.is_empty(), "{second:?}");
    assert_eq!((second.opened, second.questions), (0, 0), "{second:?}");
    let again = w.rounds().await;
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!((again[0].id, again[0].asked), (round.id, 1));
    assert_eq!(w.messages().await, 1, "no second prompt");
}

#[actix_web::test]
async fn the_servers_engine_loop_ticks_and_stops_when_told() {
    let app = TestApp::builder()
        .var("TEAMCOMM_CHECKIN_TICK_SECS", "1")
        .spawn()
        .await;
    let w = world_with(app).await;
    let (stop, running) = teamcomm_api::server::spawn_checkins(w.app.state.clone());
    let mut rounds = Vec::new();
    for _ in 0..200 {
        rounds = w.rounds().await;
        if !rounds.is_empty() && w.messages().await == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(rounds.len(), 1, "opened by the loop, not by the test");
    // Further ticks (one a second) ask nothing more.
    tokio::time::sleep(Duration::from_millis(2600)).await;
    assert_eq!(w.messages().await, 1, "no second prompt");
    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the loop stops when told")
        .unwrap();
}
