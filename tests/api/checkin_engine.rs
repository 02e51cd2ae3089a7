//! The check-in engine as the server runs it: the app's engine (Postgres rounds, the check-in
//! cache, the messaging service) opens the round of a check-in whose trigger has passed and
//! queues its first question to the participant, once; the server's loop ticks it and stops
//! when told. On a real Synapse (skipped with a note when `TEAMCOMM_TEST_SYNAPSE_PYTHON` is
//! unset): the question reaches the person's DM, and the reply poll hands their answers to the
//! engine, from the first poll's start on; where the polls ended is stored, so replies written
//! while no server polled are read after a restart.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use serde_json::json;
use teamcomm_api::state::AppState;
use teamcomm_chat::testing::synapse::Synapse;
use teamcomm_checkin_engine::{Round, RoundRepository, rules};
use teamcomm_kernel::OrgId;
use teamcomm_messaging::cursors::PollCursors;
use teamcomm_messaging::platform::PlatformKind;
use teamcomm_store_pg::{PgPollCursors, PgRoundRepository};
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
    let checkin = app.create_daily_checkin(&admin_key, &member).await;
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

impl World {
    /// The room the message `id` was delivered to (after a delivery pass).
    async fn delivered_room(&self, id: uuid::Uuid) -> String {
        let r = self
            .app
            .get_with_key(&format!("/v1/messages/{id}/"), &self.admin_key)
            .await;
        assert_eq!(r.body["status"], "delivered", "{}", r.text);
        r.body["deliveries"][0]["platform_channel_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Where the organization's last reply poll ended, as stored.
    async fn cursor(&self) -> Option<String> {
        PgPollCursors::new(self.app.database.clone())
            .poll_cursor(OrgId(self.org.parse().unwrap()), PlatformKind::Matrix)
            .await
            .expect("read the cursor")
    }

    /// Stores `cursor` as where the organization's last reply poll ended.
    async fn set_cursor(&self, cursor: &str) {
        PgPollCursors::new(self.app.database.clone())
            .save_poll_cursor(
                OrgId(self.org.parse().unwrap()),
                PlatformKind::Matrix,
                cursor,
                time::OffsetDateTime::now_utc(),
            )
            .await
            .expect("save the cursor")
    }

    /// The member's round.
    async fn round(&self) -> Round {
        let mut rounds = self.rounds().await;
        assert_eq!(rounds.len(), 1, "{rounds:?}");
        rounds.pop().unwrap()
    }
}

#[actix_web::test]
async fn on_matrix_the_engine_takes_the_replies_the_poll_reads() {
    let Some(synapse) = Synapse::shared() else {
        return;
    };
    let (bot, _) = synapse.bot("teamcomm-engine-bot").await;
    let ada = synapse.person("ada").await;
    let w = world_with(TestApp::spawn().await).await;
    let r = w
        .app
        .operator(
            "PUT",
            &format!("/operator/v1/organizations/{}/platform/", w.org),
            Some(
                json!({"kind": "matrix", "base_url": synapse.base_url, "secret": bot.access_token}),
            ),
        )
        .await;
    assert!(r.status == 200 || r.status == 201, "{}", r.text);
    let r = w
        .app
        .operator(
            "PUT",
            &format!(
                "/operator/v1/organizations/{}/users/{}/platform-identity/",
                w.org, w.member
            ),
            Some(json!({"platform_user_id": ada.user_id})),
        )
        .await;
    assert_eq!(r.status, 204, "{}", r.text);

    // The first poll starts from now: nothing before it is read.
    let first = w
        .app
        .state
        .poll_replies(Duration::ZERO)
        .await
        .expect("poll");
    assert_eq!((first.polled, first.failures.len()), (1, 0), "{first:?}");
    let before_reply = w.cursor().await.expect("the first poll's cursor is stored");

    assert_eq!(w.app.state.tick_checkins().await.unwrap().questions, 1);
    w.app.state.deliver_due().await.unwrap();
    let round = w.round().await;
    let dm = w
        .delivered_room(rules::question_message_id(&round, 0).0)
        .await;
    ada.join(&dm).await;
    // Ada answers while no server polls; a server started afterwards (a state of its own,
    // nothing in memory) resumes from the stored cursor and reads the reply.
    ada.send(
        &dm,
        json!({"msgtype": "m.text", "body": "Shipped the release"}),
    )
    .await;
    let restarted = AppState::new(w.app.database.clone(), (*w.app.state.settings).clone());
    let mut taken = 0;
    for _ in 0..10 {
        let pass = restarted
            .poll_replies(Duration::from_secs(3))
            .await
            .expect("poll");
        assert!(pass.failures.is_empty(), "{pass:?}");
        taken += pass.taken;
        if taken > 0 {
            break;
        }
    }
    assert_eq!(taken, 1, "the reply written before the restart was taken");
    let round = w.round().await;
    assert_eq!((round.asked, round.answered), (2, 1), "{round:?}");
    let after_reply = w.cursor().await.expect("stored");
    assert_ne!(after_reply, before_reply, "the cursor moved past the reply");
    // Read again (as after a crash before the cursor was saved), it is not taken twice.
    w.set_cursor(&before_reply).await;
    let reread = restarted
        .poll_replies(Duration::from_secs(3))
        .await
        .expect("poll");
    assert!(reread.events >= 1, "the reply was read again: {reread:?}");
    assert_eq!((reread.taken, reread.failures.len()), (0, 0), "{reread:?}");
    assert_eq!(w.round().await.answered, 1);

    // The server's reply loop takes the answer to the second question, written before the
    // loop starts: it too resumes from the stored cursor.
    w.app.state.deliver_due().await.unwrap();
    assert_eq!(
        w.delivered_room(rules::question_message_id(&round, 1).0)
            .await,
        dm
    );
    ada.send(&dm, json!({"msgtype": "m.text", "body": "Nothing"}))
        .await;
    let (stop, running) =
        teamcomm_api::server::spawn_replies(w.app.state.clone(), Duration::from_millis(50));
    let mut round = w.round().await;
    for _ in 0..200 {
        round = w.round().await;
        if round.completed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(round.completed, "{round:?}");
    assert_eq!(round.answered, 2);
    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the loop stops when told")
        .unwrap();

    // The day's response holds both answers, as the API reads it.
    let r = w
        .app
        .get_with_key(
            &format!("/v1/checkins/{}/responses/", w.checkin),
            &w.admin_key,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("Shipped the release"), "{}", r.text);
    assert!(r.text.contains("Nothing"), "{}", r.text);
}
