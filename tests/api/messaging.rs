//! Messaging over HTTP: send-message (202, its status view, the delivery worker's outcome),
//! open-conversation, send-email, the operator's platform connection and identities; codes,
//! policies and tenants; the server's delivery loop.

use diesel::QueryableByName;
use diesel::sql_types::{Nullable, Text};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use teamcomm_api::messaging::NO_MAIL_RELAY;
use teamcomm_kernel::OrgId;
use teamcomm_messaging::email::EmailStatus;
use teamcomm_messaging::message::FailureReason;
use teamcomm_messaging::ports::EmailRepository;
use teamcomm_store_pg::PgEmailRepository;
use teamcomm_tests::{FakeSlack, Resp, TestApp};

struct World {
    app: TestApp,
    org: String,
    admin: String,
    admin_key: String,
}

async fn world_with(app: TestApp) -> World {
    let (org, admin, _, admin_key) = app.org_with_admin_key("business").await;
    World {
        app,
        org,
        admin,
        admin_key,
    }
}

async fn world() -> World {
    world_with(TestApp::spawn().await).await
}

#[derive(QueryableByName, Debug)]
struct JobRow {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Nullable<Text>)]
    last_error: Option<String>,
}

impl World {
    /// The organization's queue jobs, oldest first.
    async fn jobs(&self) -> Vec<JobRow> {
        let mut conn = self.app.database.pool().get().await.expect("connection");
        diesel::sql_query(
            "SELECT kind, state, last_error FROM jobs \
             WHERE organization_id::text = $1 ORDER BY created_at, id",
        )
        .bind::<Text, _>(&self.org)
        .load(&mut conn)
        .await
        .expect("read jobs")
    }

    async fn post(&self, path: &str, key: &str, body: Value) -> Resp {
        self.app
            .send("POST", path, &[("X-API-KEY", key)], Some(body))
            .await
    }

    async fn send_message(&self, body: Value) -> Resp {
        self.post("/v1/send-message/", &self.admin_key, body).await
    }

    async fn message(&self, id: &str) -> Resp {
        self.app
            .get_with_key(&format!("/v1/messages/{id}/"), &self.admin_key)
            .await
    }

    /// A CLI session of a new person of the organization: (person, `Authorization` value).
    async fn cli_session(&self, role: &str) -> (String, String) {
        let user = self.app.create_user(&self.org, role).await;
        let r = self
            .app
            .operator(
                "POST",
                &format!("/operator/v1/users/{user}/cli-tokens/"),
                None,
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        let bearer = format!("Bearer {}", r.body["token"].as_str().unwrap());
        (user, bearer)
    }
}

#[actix_web::test]
async fn a_send_is_accepted_and_without_a_platform_ends_failed_platform_not_connected() {
    let w = world().await;
    let member = w.app.create_user(&w.org, "member").await;
    let r = w
        .send_message(json!({
            "message": "Deploy done",
            "target_users": [member],
            "target_channels": ["C024BE91L", {"id": "C999", "thread": "1700000000.000100"}],
            "thread_responses": [{"message": "first"}, {"message": "second"}],
            "buttons": [{"label": "Open", "url": "https://example.org/run/1", "callback_auth": {"type": "bearer", "token": "t"}}],
            "platform_settings": {"bot_username": "Deploy bot"},
            "metadata": {"run": 1},
        }))
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.body["bot_message_id"].as_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{}", r.text);
    let replies = r.body["thread_responses"].as_array().unwrap();
    assert_eq!(replies.len(), 2, "{}", r.text);

    let queued = w.message(&id).await;
    assert_eq!(queued.status, 200, "{}", queued.text);
    let m = &queued.body;
    assert_eq!(
        (&m["id"], &m["kind"], &m["status"], &m["message"]),
        (
            &json!(id),
            &json!("post"),
            &json!("queued"),
            &json!("Deploy done")
        )
    );
    assert_eq!(m["sender_uuid"], json!(w.admin));
    let deliveries = m["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 3, "{}", queued.text);
    assert_eq!(deliveries[0]["target_type"], "user");
    assert_eq!(deliveries[0]["user_uuid"], json!(member));
    assert_eq!(deliveries[2]["target_type"], "channel");
    assert_eq!(deliveries[2]["channel_id"], "C999");
    assert_eq!(deliveries[2]["thread"], "1700000000.000100");
    assert!(deliveries.iter().all(|d| d["status"] == "queued"));
    let thread = m["thread_responses"].as_array().unwrap();
    assert_eq!(thread.len(), 2);
    assert_eq!(thread[0]["id"], replies[0]);
    assert_eq!(thread[0]["kind"], "thread_response");
    assert_eq!(thread[0]["parent"], json!(id));
    assert_eq!(thread[1]["message"], "second");

    let pass = w.app.state.deliver_due().await.unwrap();
    assert_eq!(pass.claimed, 1, "one job for the send and its thread");
    let settled = w.message(&id).await.body;
    assert_eq!(settled["status"], "failed");
    for d in settled["deliveries"].as_array().unwrap() {
        assert_eq!(
            (&d["status"], &d["reason"]),
            (&json!("failed"), &json!("platform_not_connected"))
        );
    }
    for reply in settled["thread_responses"].as_array().unwrap() {
        assert_eq!(reply["status"], "failed");
        assert_eq!(reply["deliveries"][0]["reason"], "platform_not_connected");
    }
    let jobs = w.jobs().await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(
        (jobs[0].kind.as_str(), jobs[0].state.as_str()),
        ("chat_message", "done"),
        "settled, not retried: {jobs:?}"
    );
}

#[actix_web::test]
async fn validation_codes_reach_the_wire() {
    let w = world().await;
    let member = w.app.create_user(&w.org, "member").await;
    let to = |extra: Value| {
        let mut body = json!({"message": "hi", "target_users": [member]});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };

    let r = w.send_message(json!({"message": "nobody"})).await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["targets"].is_array(), "{}", r.text);
    let r = w.send_message(json!({"target_users": [member]})).await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["message"].is_array(), "{}", r.text);

    for (buttons, code) in [
        (
            json!([{"url": "https://example.org"}]),
            "button_label_required",
        ),
        (
            json!([{"label": "x".repeat(76), "value": "1"}]),
            "button_label_too_long",
        ),
        (
            json!([{"label": "Go", "button_type": "fancy"}]),
            "button_type_invalid",
        ),
        (
            json!([{"label": "Go", "button_type": "link"}]),
            "button_url_required",
        ),
        (
            json!([{"label": "Go", "url": "ftp://example.org"}]),
            "button_url_invalid",
        ),
        (
            json!([{"label": "Go", "button_type": "interactive"}]),
            "button_value_required",
        ),
        (
            json!(vec![json!({"label": "Go", "value": "1"}); 26]),
            "button_limit_exceeded",
        ),
    ] {
        let r = w.send_message(to(json!({ "buttons": buttons }))).await;
        r.assert_error(400, code);
    }

    for (extra, code) in [
        (
            json!({"send_as_user": "not-a-uuid"}),
            "send_as_user_invalid_uuid",
        ),
        (
            json!({"send_as_user": member, "bot_username": "Bot"}),
            "send_as_user_conflict",
        ),
        (
            json!({"send_as_user": member, "platform_settings": {"bot_icon_emoji": ":x:"}}),
            "send_as_user_conflict",
        ),
        (
            json!({"send_as_user": uuid::Uuid::new_v4()}),
            "send_as_user_not_found",
        ),
        (
            json!({"thread_responses": vec![json!({"message": "r"}); 11]}),
            "invalid_thread_responses",
        ),
        (
            json!({"thread_responses": [{"message": "  "}]}),
            "invalid_thread_responses",
        ),
        (json!({"messages": []}), "unknown_field"),
        (
            json!({"buttons": [{"label": "Go", "colour": "red"}]}),
            "unknown_field",
        ),
    ] {
        let r = w.send_message(to(extra.clone())).await;
        r.assert_error(400, code);
    }

    let ghost = "ghost@example.com";
    let r = w
        .send_message(json!({"message": "hi", "target_users": [member, ghost]}))
        .await;
    r.assert_error(400, "one_or_more_users_not_found");
    assert_eq!(r.body["extra"]["users"], json!([ghost]));
    let team = uuid::Uuid::new_v4().to_string();
    let r = w
        .send_message(json!({"message": "hi", "target_teams": [team]}))
        .await;
    r.assert_error(400, "no_valid_team");
    assert_eq!(r.body["extra"]["uuids"], json!([team]));

    // An admin sends as an active person of the organization.
    let r = w.send_message(to(json!({"send_as_user": member}))).await;
    assert_eq!(r.status, 202, "{}", r.text);
    let sent = w.message(r.body["bot_message_id"].as_str().unwrap()).await;
    assert_eq!(sent.body["send_as_user"], json!(member));
}

#[actix_web::test]
async fn policies_credentials_roles_and_the_cli_reach() {
    let w = world().await;
    let member = w.app.create_user(&w.org, "member").await;
    let body = json!({"message": "hi", "target_users": [member]});
    for path in [
        "/v1/send-message/",
        "/v1/open-conversation/",
        "/v1/send-email/",
    ] {
        w.app
            .send("POST", path, &[], Some(body.clone()))
            .await
            .assert_error(401, "credential_absent");
    }
    w.app
        .send(
            "GET",
            &format!("/v1/messages/{}/", uuid::Uuid::new_v4()),
            &[],
            None,
        )
        .await
        .assert_error(401, "credential_absent");

    // A member's key: no conversations, no sending as someone else.
    let session = w.app.session(&member).await;
    let (_, member_key) = w
        .app
        .create_key(&session, json!({"name": "member key"}))
        .await;
    w.post(
        "/v1/open-conversation/",
        &member_key,
        json!({"users_uuids": [w.admin]}),
    )
    .await
    .assert_error(403, "org_admin_required");
    w.post(
        "/v1/send-message/",
        &member_key,
        json!({"message": "hi", "target_users": [w.admin], "send_as_user": w.admin}),
    )
    .await
    .assert_error(403, "org_admin_required");
    // An API key reaches the whole organization.
    let r = w
        .post(
            "/v1/send-message/",
            &member_key,
            json!({"message": "hi", "target_users": [w.admin]}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);

    // A member's CLI session reaches themself, not someone they share no team with, nor an
    // unregistered channel.
    let (cli_user, cli) = w.cli_session("member").await;
    let send_cli = |body: Value| {
        let cli = cli.clone();
        let app = &w.app;
        async move {
            app.send(
                "POST",
                "/v1/send-message/",
                &[("Authorization", &cli)],
                Some(body),
            )
            .await
        }
    };
    let r = send_cli(json!({"message": "note to self", "target_users": [cli_user]})).await;
    assert_eq!(r.status, 202, "{}", r.text);
    let r = send_cli(json!({"message": "hi", "target_users": [member]})).await;
    r.assert_error(403, "cli_send_message_target_not_allowed");
    assert_eq!(r.body["extra"]["targets"], json!([member]));
    let r = send_cli(json!({"message": "hi", "target_channels": ["C-UNREGISTERED"]})).await;
    r.assert_error(403, "cli_send_message_target_not_allowed");
    // An admin's CLI session is not role-scoped.
    let (_, admin_cli) = w.cli_session("admin").await;
    let r = w
        .app
        .send(
            "POST",
            "/v1/send-message/",
            &[("Authorization", &admin_cli)],
            Some(json!({"message": "hi", "target_users": [member]})),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
}

#[actix_web::test]
async fn a_message_is_seen_by_its_sender_and_admins_of_its_organization_only() {
    let w = world().await;
    let member = w.app.create_user(&w.org, "member").await;
    let r = w
        .send_message(json!({"message": "hi", "target_users": [member]}))
        .await;
    let id = r.body["bot_message_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/messages/{id}/");

    let (_, _, _, other_key) = w.app.org_with_admin_key("business").await;
    w.app
        .get_with_key(&path, &other_key)
        .await
        .assert_error(404, "not_found");
    let session = w.app.session(&member).await;
    let (_, member_key) = w.app.create_key(&session, json!({"name": "k"})).await;
    w.app
        .get_with_key(&path, &member_key)
        .await
        .assert_error(404, "not_found");
    w.message("not-an-id").await.assert_error(404, "not_found");
    // Editing another organization's message is editing nothing.
    w.post(
        "/v1/send-message/",
        &other_key,
        json!({"message": "changed", "bot_message_id": id}),
    )
    .await
    .assert_error(404, "not_found");

    // The sender edits it: a new id, the original's targets.
    let r = w
        .send_message(json!({"message": "edited", "bot_message_id": id}))
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let edit = w
        .message(r.body["bot_message_id"].as_str().unwrap())
        .await
        .body;
    assert_eq!(
        (&edit["kind"], &edit["parent"]),
        (&json!("edit"), &json!(id))
    );
    assert_eq!(edit["deliveries"][0]["user_uuid"], json!(member));
}

#[actix_web::test]
async fn open_conversation_codes() {
    let w = world().await;
    let member = w.app.create_user(&w.org, "member").await;
    let open = |users: Value| w.send_message_to("/v1/open-conversation/", users);
    open(json!([])).await.assert_error(400, "no_valid_users");
    let eight: Vec<String> = (0..8).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    let r = open(json!(eight)).await;
    r.assert_error(400, "conversation_too_many_participants");
    assert_eq!(r.body["extra"]["limit"], 7);
    let r = open(json!([member, "nobody"])).await;
    r.assert_error(400, "one_or_more_users_not_found");
    assert_eq!(r.body["extra"]["users"], json!(["nobody"]));
    open(json!([member]))
        .await
        .assert_error(400, "platform_not_connected");
    w.post("/v1/open-conversation/", &w.admin_key, json!({}))
        .await
        .assert_error(400, "params_validation_error");
}

impl World {
    async fn send_message_to(&self, path: &str, users: Value) -> Resp {
        self.post(path, &self.admin_key, json!({ "users_uuids": users }))
            .await
    }
}

#[actix_web::test]
async fn send_email_is_accepted_and_without_a_relay_each_e_mail_fails_saying_why() {
    let w = world().await;
    let (a, b) = (
        w.app.create_user(&w.org, "member").await,
        w.app.create_user(&w.org, "member").await,
    );
    let r = w
        .post(
            "/v1/send-email/",
            &w.admin_key,
            json!({"users_uuids": [a, b, a], "email_subject": "Release", "email_content": "<p>Out <b>now</b></p>"}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let ids = r.body["email_ids"].as_array().unwrap();
    assert_eq!(ids.len(), 2, "one per person: {}", r.text);

    let pass = w.app.state.deliver_due().await.unwrap();
    assert_eq!((pass.claimed, pass.failed), (2, 2));
    let jobs = w.jobs().await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    for job in jobs {
        assert_eq!((job.kind.as_str(), job.state.as_str()), ("email", "failed"));
        let error = job.last_error.unwrap();
        assert!(
            error.starts_with("mail_refused") && error.contains(NO_MAIL_RELAY),
            "{error}"
        );
    }
    let stored = PgEmailRepository::new(w.app.database.clone());
    let org = OrgId(w.org.parse().unwrap());
    for id in ids {
        let email = stored
            .get_email(org, id.as_str().unwrap().parse().unwrap())
            .await
            .unwrap();
        assert_eq!(
            email.status,
            EmailStatus::Failed(FailureReason::MailRefused)
        );
        assert_eq!(email.subject, "Release");
        assert_eq!(email.html.as_deref(), Some("<p>Out <b>now</b></p>"));
        assert_eq!(email.text, "Out now");
    }

    for (body, code) in [
        (
            json!({"users_uuids": [], "email_subject": "s", "email_content": "c"}),
            "params_validation_error",
        ),
        (
            json!({"users_uuids": [a], "email_subject": "s"}),
            "params_validation_error",
        ),
        (
            json!({"users_uuids": [uuid::Uuid::new_v4()], "email_subject": "s", "email_content": "c"}),
            "one_or_more_users_not_found",
        ),
        (
            json!({"users_uuids": [a], "email_subject": "s", "email_content": "c", "cc": []}),
            "unknown_field",
        ),
    ] {
        w.post("/v1/send-email/", &w.admin_key, body)
            .await
            .assert_error(400, code);
    }
}

#[actix_web::test]
async fn the_operator_connects_a_platform_and_names_people_on_it() {
    let w = world().await;
    let member = w.app.create_user(&w.org, "member").await;
    let platform = format!("/operator/v1/organizations/{}/platform/", w.org);
    let identity = format!(
        "/operator/v1/organizations/{}/users/{member}/platform-identity/",
        w.org
    );

    w.app
        .operator("GET", &platform, None)
        .await
        .assert_error(404, "not_found");
    w.app
        .operator("PUT", &identity, Some(json!({"platform_user_id": "U1"})))
        .await
        .assert_error(400, "platform_not_connected");
    let r = w
        .app
        .operator(
            "PUT",
            &platform,
            Some(json!({"kind": "matrix", "secret": "has spaces in it"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["base_url"].is_array() && r.body["errors"]["secret"].is_array());
    assert!(
        !r.text.contains("has spaces"),
        "the secret is never repeated"
    );

    let secret = "xoxb-secret-token-1234";
    let r = w
        .app
        .operator(
            "PUT",
            &platform,
            Some(json!({"kind": "slack", "secret": secret})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"kind": "slack", "base_url": null, "has_signing_secret": false})
    );
    let org = w.app.get_with_key("/v1/organization/", &w.admin_key).await;
    assert_eq!(org.body["platform"], "slack", "{}", org.text);
    let shown = w.app.operator("GET", &platform, None).await;
    assert_eq!(shown.body["kind"], "slack");
    assert!(!shown.text.contains(secret) && !org.text.contains(secret));

    let r = w
        .app
        .operator("PUT", &identity, Some(json!({"platform_user_id": "U1"})))
        .await;
    assert_eq!(r.status, 204, "{}", r.text);
    let outsider_org = w.app.create_org("business").await;
    let outsider = w.app.create_user(&outsider_org, "member").await;
    w.app
        .operator(
            "PUT",
            &format!(
                "/operator/v1/organizations/{}/users/{outsider}/platform-identity/",
                w.org
            ),
            Some(json!({"platform_user_id": "U2"})),
        )
        .await
        .assert_error(404, "not_found");
    let r = w.app.operator("DELETE", &identity, None).await;
    assert_eq!(r.status, 204, "{}", r.text);

    assert_eq!(w.app.operator("DELETE", &platform, None).await.status, 204);
    let org = w.app.get_with_key("/v1/organization/", &w.admin_key).await;
    assert_eq!(org.body["platform"], Value::Null, "{}", org.text);
    w.app
        .operator("DELETE", &platform, None)
        .await
        .assert_error(404, "not_found");
    w.app
        .operator(
            "PUT",
            &format!(
                "/operator/v1/organizations/{}/platform/",
                uuid::Uuid::new_v4()
            ),
            Some(json!({"kind": "slack", "secret": secret})),
        )
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn the_servers_delivery_loop_delivers_on_its_tick_and_stops_when_told() {
    let app = TestApp::builder()
        .var("TEAMCOMM_WORKER_TICK_MS", "20")
        .spawn()
        .await;
    let w = world_with(app).await;
    let (stop, running) = teamcomm_api::server::spawn_delivery(w.app.state.clone());
    let r = w
        .send_message(json!({"message": "hi", "target_users": [w.admin]}))
        .await;
    let id = r.body["bot_message_id"].as_str().unwrap().to_owned();
    let mut status = Value::Null;
    for _ in 0..200 {
        status = w.message(&id).await.body["status"].clone();
        if status != "queued" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(status, "failed", "delivered by the loop, not by the test");
    stop.send(true).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(10), running)
        .await
        .expect("the loop stops when told")
        .unwrap();
}

#[actix_web::test]
async fn sends_reach_a_slack_like_server_and_each_delivery_says_where_it_landed() {
    let w = world().await;
    let slack = FakeSlack::start();
    let (ada, bob, cy) = (
        w.app.create_user(&w.org, "member").await,
        w.app.create_user(&w.org, "member").await,
        w.app.create_user(&w.org, "member").await,
    );
    let r = w
        .app
        .operator(
            "PUT",
            &format!("/operator/v1/organizations/{}/platform/", w.org),
            Some(json!({"kind": "slack", "secret": "xoxb-test", "base_url": slack.base_url})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    for (person, slack_id) in [(&ada, "U-ADA"), (&bob, "U-BOB")] {
        let r = w
            .app
            .operator(
                "PUT",
                &format!(
                    "/operator/v1/organizations/{}/users/{person}/platform-identity/",
                    w.org
                ),
                Some(json!({ "platform_user_id": slack_id })),
            )
            .await;
        assert_eq!(r.status, 204, "{}", r.text);
    }

    let r = w
        .send_message(json!({
            "message": "Deploy done",
            "target_users": [ada, cy],
            "target_channels": ["C-GENERAL", "C-GONE"],
            "thread_responses": [{"message": "details"}],
            "bot_username": "Deploy bot",
        }))
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.body["bot_message_id"].as_str().unwrap().to_owned();
    w.app.state.deliver_due().await.unwrap();

    let m = w.message(&id).await.body;
    assert_eq!(m["status"], "failed", "{m:#}");
    let d = m["deliveries"].as_array().unwrap();
    assert_eq!(
        (&d[0]["status"], &d[0]["platform_channel_id"]),
        (&json!("delivered"), &json!("D-U-ADA"))
    );
    assert!(d[0]["platform_message_id"].is_string(), "{m:#}");
    assert_eq!(d[1]["reason"], "platform_identity_missing");
    assert_eq!(
        (&d[2]["status"], &d[2]["platform_channel_id"]),
        (&json!("delivered"), &json!("C-GENERAL"))
    );
    assert_eq!(d[3]["reason"], "destination_not_found");
    let replies = m["thread_responses"][0]["deliveries"].as_array().unwrap();
    assert_eq!(replies[0]["status"], "delivered");
    assert_eq!(replies[1]["reason"], "parent_not_delivered");

    let posts = slack.calls("chat.postMessage");
    let to = |channel: &str| {
        posts
            .iter()
            .filter(|p| p["channel"] == channel)
            .cloned()
            .collect::<Vec<_>>()
    };
    let dm = to("D-U-ADA");
    assert_eq!(dm.len(), 2, "the message and its thread reply: {posts:#?}");
    assert_eq!(dm[0]["username"], "Deploy bot");
    assert_eq!(dm[1]["thread_ts"], d[0]["platform_message_id"]);
    assert_eq!(dm[1]["text"], "details");
    assert_eq!(to("C-GENERAL").len(), 2);

    // An edit rewrites every delivery that landed, where it landed.
    let r = w
        .send_message(json!({"message": "Deploy rolled back", "bot_message_id": id}))
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    w.app.state.deliver_due().await.unwrap();
    let updates = slack.calls("chat.update");
    assert_eq!(updates.len(), 2, "{updates:#?}");
    assert_eq!(updates[0]["ts"], d[0]["platform_message_id"]);
    assert_eq!(updates[0]["text"], "Deploy rolled back");

    // A group conversation of people with Slack identities.
    let r = w
        .post(
            "/v1/open-conversation/",
            &w.admin_key,
            json!({"users_uuids": [ada, bob]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body, json!({"channel": "D-U-ADA,U-BOB"}));
    let r = w
        .post(
            "/v1/open-conversation/",
            &w.admin_key,
            json!({"users_uuids": [ada, cy]}),
        )
        .await;
    r.assert_error(400, "one_or_more_users_not_found");
    assert_eq!(r.body["extra"]["users"], json!([cy]));
}

/// A check-in of `person` that reports to `channel`: the answer to its creation.
async fn checkin_reporting_to(w: &World, person: &str, channel: &str) -> Resp {
    w.post(
        "/v1/checkins/create/",
        &w.admin_key,
        json!({
            "name": "Standup",
            "schedule": {"days": [1, 2, 3, 4, 5], "time": "09:00", "timezone": "UTC"},
            "participants": {"user_uuids": [person]},
            "report_channels": [channel],
            "questions": [{"question": "What did you do?", "question_type": "text", "short_question": "Done"}],
        }),
    )
    .await
}

#[actix_web::test]
async fn report_channels_list_the_connected_slack_workspaces_channels_even_when_it_is_down() {
    let w = world().await;
    let slack = FakeSlack::start();
    slack.add_channel("C-GEN", "general", false);
    slack.add_channel("G-HR", "hr", true);
    let member = w.app.create_user(&w.org, "member").await;
    checkin_reporting_to(&w, &member, "G-HR")
        .await
        .assert_error(400, "report_channel_not_found");

    let platform = format!("/operator/v1/organizations/{}/platform/", w.org);
    let r = w
        .app
        .operator(
            "PUT",
            &platform,
            Some(json!({"kind": "slack", "secret": "xoxb-test", "base_url": slack.base_url})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let listed = w
        .app
        .get_with_key("/v1/report-channels/", &w.admin_key)
        .await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(
        listed.body,
        json!({"channels": [
            {"id": "C-GEN", "name": "general", "platform": "slack", "type": "channel"},
            {"id": "G-HR", "name": "hr", "platform": "slack", "type": "private_channel"},
        ], "total": 2})
    );
    // Within the refresh interval the stored channels answer: Slack is asked once.
    let r = w
        .app
        .get_with_key("/v1/report-channels/?name=HR", &w.admin_key)
        .await;
    assert_eq!(r.body["total"], 1, "{}", r.text);
    assert_eq!(slack.calls("conversations.list").len(), 1);

    // A platform channel is a report channel like any other.
    let r = checkin_reporting_to(&w, &member, "G-HR").await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["report_channels"][0]["name"], "hr", "{}", r.text);

    // A platform that cannot be reached leaves the stored channels.
    let r = w
        .app
        .operator(
            "PUT",
            &platform,
            Some(json!({"kind": "slack", "secret": "xoxb-test", "base_url": "http://127.0.0.1:9/api"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = w
        .app
        .get_with_key("/v1/report-channels/", &w.admin_key)
        .await;
    assert_eq!((r.status, &r.body), (200, &listed.body), "{}", r.text);
}

#[actix_web::test]
async fn report_channels_list_the_rooms_the_matrix_bot_is_in() {
    let Some(synapse) = teamcomm_chat::testing::synapse::Synapse::shared() else {
        return;
    };
    let (bot, _) = synapse.bot("teamcomm-channels-bot").await;
    let room = bot.create_room(Some("Release reports"), true, &[]).await;
    // Rooms without a name are conversations, not channels.
    bot.create_room(None, false, &[]).await;
    let w = world().await;
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
    assert_eq!(r.status, 200, "{}", r.text);
    let r = w
        .app
        .get_with_key("/v1/report-channels/", &w.admin_key)
        .await;
    assert_eq!(
        r.body,
        json!({"channels": [
            {"id": room, "name": "Release reports", "platform": "matrix", "type": "channel"},
        ], "total": 1}),
        "{}",
        r.text
    );
    let member = w.app.create_user(&w.org, "member").await;
    let r = checkin_reporting_to(&w, &member, &room).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

impl World {
    async fn email(&self, id: &str, key: &str) -> Resp {
        self.app
            .get_with_key(&format!("/v1/emails/{id}/"), key)
            .await
    }

    /// A new API key of this person.
    async fn key_of(&self, user: &str) -> String {
        let session = self.app.session(user).await;
        self.app.create_key(&session, json!({"name": "k"})).await.1
    }

    /// A person of the organization with this e-mail address.
    async fn person_at(&self, email: &str) -> String {
        let r = self
            .app
            .operator(
                "POST",
                &format!("/operator/v1/organizations/{}/users/", self.org),
                Some(json!({"email": email, "first_name": "Mail", "last_name": "Test", "role": "member"})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }
}

#[actix_web::test]
async fn an_emails_status_is_shown_to_its_sender_and_admins_of_its_organization_only() {
    let w = world().await;
    let (member, other) = (
        w.app.create_user(&w.org, "member").await,
        w.app.create_user(&w.org, "member").await,
    );
    let member_key = w.key_of(&member).await;
    let r = w
        .post(
            "/v1/send-email/",
            &member_key,
            json!({"users_uuids": [other], "email_subject": "Lunch", "email_content": "At noon"}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.body["email_ids"][0].as_str().unwrap().to_owned();

    let shown = w.email(&id, &member_key).await;
    assert_eq!(shown.status, 200, "{}", shown.text);
    assert!(shown.body["created_at"].is_string(), "{}", shown.text);
    let mut expected = json!({
        "id": id, "status": "queued", "reason": null, "sender_uuid": member,
        "recipient_uuid": other, "subject": "Lunch", "created_at": shown.body["created_at"],
    });
    assert_eq!(shown.body, expected);
    assert_eq!(w.email(&id, &w.admin_key).await.body, expected);

    // Without a relay it fails for good, saying why.
    w.app.state.deliver_due().await.unwrap();
    expected["status"] = json!("failed");
    expected["reason"] = json!("mail_refused");
    assert_eq!(w.email(&id, &member_key).await.body, expected);

    // Its recipient, another organization's admin, an id that is none: not found.
    let other_key = w.key_of(&other).await;
    let (_, _, _, outsider_key) = w.app.org_with_admin_key("business").await;
    for (id, key) in [
        (id.as_str(), other_key.as_str()),
        (id.as_str(), outsider_key.as_str()),
        ("not-an-id", w.admin_key.as_str()),
        (&uuid::Uuid::new_v4().to_string(), w.admin_key.as_str()),
    ] {
        w.email(id, key).await.assert_error(404, "not_found");
    }
}

#[actix_web::test]
async fn through_a_real_relay_an_email_ends_sent_or_failed_with_the_reason() {
    let Some(sink) = teamcomm_tests::smtp::SmtpSink::start() else {
        return;
    };
    let app = TestApp::builder()
        .var("TEAMCOMM_SMTP_URL", &sink.url())
        .var("TEAMCOMM_MAIL_FROM", "Teamcomm <noreply@teamcomm.test>")
        .spawn()
        .await;
    let w = world_with(app).await;
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let (ok, refused) = (
        w.person_at(&format!("ok-{tag}@example.com")).await,
        w.person_at(&format!("reject-{tag}@example.com")).await,
    );
    let r = w
        .post(
            "/v1/send-email/",
            &w.admin_key,
            json!({"users_uuids": [ok, refused], "email_subject": "Hi", "email_content": "<p>Hello</p>"}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let ids: Vec<String> = serde_json::from_value(r.body["email_ids"].clone()).unwrap();
    w.app.state.deliver_due().await.unwrap();

    let sent = w.email(&ids[0], &w.admin_key).await;
    assert_eq!(
        (
            &sent.body["status"],
            &sent.body["reason"],
            &sent.body["recipient_uuid"]
        ),
        (&json!("sent"), &Value::Null, &json!(ok)),
        "{}",
        sent.text
    );
    let failed = w.email(&ids[1], &w.admin_key).await;
    assert_eq!(
        (&failed.body["status"], &failed.body["reason"]),
        (&json!("failed"), &json!("mail_refused")),
        "{}",
        failed.text
    );
    assert_eq!(sink.mails().len(), 1);
}
