//! The rules through the in-memory ports.

use std::sync::Arc;

use async_trait::async_trait;
use teamcomm_kernel::{Error, ErrorCode, OrgId};
use teamcomm_keys::OrgSnapshots;
use teamcomm_org::testing::{FixedClock, InMemoryOrgRepository};
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Organization, User};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

use crate::testing::{InMemoryAgents, InMemoryRegistrations};
use crate::*;

struct Snapshots(Arc<InMemoryOrgRepository>);

#[async_trait]
impl OrgSnapshots for Snapshots {
    async fn organization(&self, id: OrgId) -> Result<Arc<Organization>, Error> {
        Ok(Arc::new(self.0.get_organization(id).await?))
    }
}

struct World {
    service: AgentService,
    agents: Arc<InMemoryAgents>,
    registrations: Arc<InMemoryRegistrations>,
    people: Arc<InMemoryOrgRepository>,
    clock: Arc<FixedClock>,
}

const T0: OffsetDateTime = datetime!(2026-11-26 10:00 UTC);

fn world() -> World {
    let agents = Arc::new(InMemoryAgents::default());
    let registrations = Arc::new(InMemoryRegistrations::default());
    let people = Arc::new(InMemoryOrgRepository::new());
    let clock = Arc::new(FixedClock::new(T0));
    let service = AgentService::new(
        AgentPorts {
            agents: agents.clone(),
            registrations: registrations.clone(),
            people: people.clone(),
            orgs: Arc::new(Snapshots(people.clone())),
            hooks: agents.clone(),
            clock: clock.clone(),
        },
        AgentSettings {
            app_url: "https://app.example.com/".into(),
            email_domain: "agents.example.com".into(),
            webhook_allow: teamcomm_webhooks::AllowList::new(["hooks.dev.test"]),
        },
    );
    World {
        service,
        agents,
        registrations,
        people,
        clock,
    }
}

impl World {
    async fn org(&self) -> OrgId {
        let new = NewOrganization::new("Acme", "business", None, None, None).unwrap();
        self.people.create_organization(&new).await.unwrap().id
    }

    async fn person(&self, org: OrgId, email: &str) -> User {
        let new = NewUser::new(email, "Mia", "Wong", "member", Some(true)).unwrap();
        self.people.create_user(org, &new).await.unwrap()
    }

    async fn caller(&self) -> AgentCaller {
        let org = self.org().await;
        AgentCaller::person(self.person(org, "admin@example.com").await)
    }
}

fn field_error(e: &Error, field: &str) {
    assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{e}");
    assert!(format!("{e:?}").contains(field), "{e:?}");
}

#[tokio::test]
async fn a_report_is_kept_with_its_co_authors_and_answers_pending_messages() {
    let w = world();
    let caller = w.caller().await;
    let mia = w.person(caller.org_id, "mia@example.com").await;
    let message = w
        .service
        .send_message(
            &caller,
            MessageInput {
                agent_name: "Build Bot".into(),
                content: "Review PR #42".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut structured = serde_json::Map::new();
    structured.insert("tests".into(), 42.into());
    let (report, pending) = w
        .service
        .report(
            &caller,
            ReportInput {
                agent_name: "  Build Bot ".into(),
                content: "Deployed v2".into(),
                structured: Some(structured.clone()),
                metadata: None,
                is_milestone: true,
                co_authors: vec!["MIA@example.com".into(), mia.id.0.to_string()],
            },
        )
        .await
        .unwrap();
    assert_eq!(report.agent_name, "Build Bot");
    assert_eq!(report.structured, structured);
    assert!(report.is_milestone);
    assert_eq!(
        report.co_authors,
        vec![CoAuthor {
            id: mia.id,
            name: "Mia Wong".into()
        }]
    );
    assert_eq!(pending, vec![message]);
    assert_eq!(w.agents.reports.lock().unwrap().len(), 1);
    // Reporting does not mark the messages delivered.
    assert!(w.agents.messages.lock().unwrap()[0].delivered_at.is_none());
}

#[tokio::test]
async fn report_refusals_name_their_field_and_store_nothing() {
    let w = world();
    let caller = w.caller().await;
    let other_org = w.org().await;
    let stranger = w.person(other_org, "x@example.com").await;
    let cases: Vec<(ReportInput, &str)> = vec![
        (
            ReportInput {
                agent_name: " ".into(),
                content: "c".into(),
                ..Default::default()
            },
            "agent_name",
        ),
        (
            ReportInput {
                agent_name: "a".repeat(129),
                content: "c".into(),
                ..Default::default()
            },
            "agent_name",
        ),
        (
            ReportInput {
                agent_name: "a".into(),
                content: "".into(),
                ..Default::default()
            },
            "content",
        ),
        (
            ReportInput {
                agent_name: "a".into(),
                content: "c".into(),
                co_authors: vec![stranger.id.0.to_string()],
                ..Default::default()
            },
            "co_authors",
        ),
        (
            ReportInput {
                agent_name: "a".into(),
                content: "c".into(),
                co_authors: vec!["nobody@example.com".into()],
                ..Default::default()
            },
            "co_authors",
        ),
    ];
    for (input, field) in cases {
        let e = w.service.report(&caller, input).await.unwrap_err();
        field_error(&e, field);
    }
    assert!(w.agents.reports.lock().unwrap().is_empty());
}

#[tokio::test]
async fn health_keeps_history_and_a_check_delivers_pending_messages() {
    let w = world();
    let caller = w.caller().await;
    let none = w.service.health(&caller, "Bot").await.unwrap();
    assert_eq!(none.status(), "unknown");
    assert!(none.history.is_empty());
    w.service
        .send_message(
            &caller,
            MessageInput {
                agent_name: "Bot".into(),
                content: "hi".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    w.service
        .post_health(&caller, "Bot", true, Some("fine"))
        .await
        .unwrap();
    w.clock.set(T0 + Duration::minutes(1));
    let h = w
        .service
        .post_health(&caller, "Bot", false, Some("db down"))
        .await
        .unwrap();
    assert_eq!(h.status(), "unhealthy");
    assert_eq!(h.history.len(), 2);
    assert_eq!(h.history[0].message.as_deref(), Some("db down"));
    assert!(
        h.pending_messages.is_empty(),
        "the first check took the message"
    );
    let got = w.service.health(&caller, "Bot").await.unwrap();
    assert_eq!(got.status(), "unhealthy");
    assert!(got.pending_messages.is_empty());
    assert!(w.agents.messages.lock().unwrap()[0].delivered_at == Some(T0));
}

#[tokio::test]
async fn messages_default_their_sender_expire_and_are_marked_read_in_their_org_only() {
    let w = world();
    let caller = w.caller().await;
    let other = w.caller().await;
    let send = |content: &str, expires: Option<OffsetDateTime>| MessageInput {
        agent_name: "Bot".into(),
        content: content.into(),
        expires_at: expires,
        ..Default::default()
    };
    let a = w
        .service
        .send_message(&caller, send("a", None))
        .await
        .unwrap();
    assert_eq!(a.sender_type, SenderType::User);
    assert_eq!(a.sender_name.as_deref(), Some("Mia Wong"));
    assert_eq!(a.message_type, MessageType::Text);
    let soon = w
        .service
        .send_message(&caller, send("b", Some(T0 + Duration::minutes(5))))
        .await
        .unwrap();
    let theirs = w
        .service
        .send_message(&other, send("c", None))
        .await
        .unwrap();
    let e = w
        .service
        .send_message(&caller, send("d", Some(T0 - Duration::minutes(1))))
        .await
        .unwrap_err();
    field_error(&e, "expires_at");
    let e = w
        .service
        .send_message(
            &caller,
            MessageInput {
                message_type: Some("shout".into()),
                ..send("e", None)
            },
        )
        .await
        .unwrap_err();
    field_error(&e, "message_type");

    let all = w
        .service
        .list_messages(&caller, MessageFilter::default())
        .await
        .unwrap();
    assert_eq!(all, vec![a.clone(), soon.clone()]);
    w.clock.set(T0 + Duration::minutes(10));
    let all = w
        .service
        .list_messages(&caller, MessageFilter::default())
        .await
        .unwrap();
    assert_eq!(all, vec![a.clone()], "expired messages are not listed");

    let ids = vec![a.id.to_string(), theirs.id.to_string(), a.id.to_string()];
    assert_eq!(w.service.mark_read(&caller, &ids).await.unwrap(), 1);
    assert_eq!(w.service.mark_read(&caller, &ids).await.unwrap(), 0);
    let pending = MessageFilter {
        agent_name: Some("Bot".into()),
        delivered: Some(false),
    };
    assert!(
        w.service
            .list_messages(&caller, pending.clone())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        w.service.list_messages(&other, pending).await.unwrap(),
        vec![theirs]
    );
    let e = w
        .service
        .mark_read(&caller, &["nope".into()])
        .await
        .unwrap_err();
    field_error(&e, "message_ids");
    let e = w.service.mark_read(&caller, &[]).await.unwrap_err();
    field_error(&e, "message_ids");
}

fn solve(instruction: &str) -> i64 {
    let n = instruction
        .split("session is ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap();
    n.parse::<i64>().unwrap() * 52
}

fn registration(challenge: &IssuedChallenge, answer: i64) -> RegisterInput {
    RegisterInput {
        challenge_id: challenge.id.to_string(),
        answer,
        reason: "testing".into(),
        org_name: "Bots Inc".into(),
        agent_name: "Claude Code".into(),
        timezone: None,
        contact_email: Some("Me@Example.com".into()),
    }
}

#[tokio::test]
async fn registration_answers_a_key_that_authenticates_as_the_agent_of_a_free_org() {
    let w = world();
    let c = w.service.challenge().await.unwrap();
    assert!(c.instruction.contains("session is "));
    let done = w
        .service
        .register(registration(&c, solve(&c.instruction)))
        .await
        .unwrap();
    assert!(done.api_key.starts_with("tca_"));
    assert!(
        done.claim_url
            .starts_with("https://app.example.com/agent/claim/tcx_")
    );
    assert!(done.registration.agent_email.starts_with("claude-code-"));
    assert!(
        done.registration
            .agent_email
            .ends_with("@agents.example.com")
    );
    assert_eq!(
        done.registration.contact_email.as_deref(),
        Some("me@example.com")
    );
    let p = w.service.authenticate(&done.api_key).await.unwrap();
    assert_eq!(p.agent_name, "Claude Code");
    assert_eq!(p.org.name, "Bots Inc");
    assert_eq!(p.org.plan, teamcomm_org::PlanTier::Free);
    // The key is stored hashed only.
    assert_eq!(w.registrations.keys.lock().unwrap().len(), 1);
    let e = w.service.authenticate("tca_nonsense").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidCredentials);
    // The challenge was single use.
    let e = w
        .service
        .register(registration(&c, solve(&c.instruction)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::AgentChallengeFailed);
}

#[tokio::test]
async fn wrong_or_expired_answers_are_refused_and_spend_the_challenge() {
    let w = world();
    let c = w.service.challenge().await.unwrap();
    let right = solve(&c.instruction);
    let e = w
        .service
        .register(registration(&c, right + 1))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::AgentChallengeFailed);
    let e = w
        .service
        .register(registration(&c, right))
        .await
        .unwrap_err();
    assert_eq!(
        e.code(),
        ErrorCode::AgentChallengeFailed,
        "a wrong answer spends it"
    );

    let c = w.service.challenge().await.unwrap();
    w.clock.set(T0 + CHALLENGE_TTL);
    let e = w
        .service
        .register(registration(&c, solve(&c.instruction)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::AgentChallengeExpired);
    assert!(e.to_string().contains("expired"));

    // A malformed body does not spend the challenge.
    let c = w.service.challenge().await.unwrap();
    let mut bad = registration(&c, solve(&c.instruction));
    bad.org_name = " ".into();
    field_error(&w.service.register(bad).await.unwrap_err(), "org_name");
    assert!(
        w.service
            .register(registration(&c, solve(&c.instruction)))
            .await
            .is_ok()
    );
    assert_eq!(w.registrations.registrations.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_claim_makes_the_person_the_first_admin_once() {
    let w = world();
    let c = w.service.challenge().await.unwrap();
    let done = w
        .service
        .register(registration(&c, solve(&c.instruction)))
        .await
        .unwrap();
    let token = done.claim_url.rsplit('/').next().unwrap().to_owned();
    let preview = w.service.preview_claim(&token).await.unwrap();
    assert_eq!(preview.org_name, "Bots Inc");
    let home = w.org().await;
    let person = w.person(home, "owner@example.com").await;
    let claimed = w.service.claim(&token, &person).await.unwrap();
    assert_eq!(claimed.admin.org_id, done.registration.org_id);
    assert_eq!(claimed.admin.email, "owner@example.com");
    assert!(claimed.admin.role.is_admin());
    assert_eq!(claimed.registration.claimed_by, Some(claimed.admin.id));
    assert_eq!(
        w.service.claim(&token, &person).await.unwrap_err().code(),
        ErrorCode::AgentClaimLinkInvalid
    );
    assert_eq!(
        w.service.preview_claim(&token).await.unwrap_err().code(),
        ErrorCode::AgentClaimLinkInvalid
    );
    // The agent key keeps working after the claim.
    assert!(w.service.authenticate(&done.api_key).await.is_ok());
}

#[tokio::test]
async fn an_agent_renews_its_claim_link_until_the_organization_is_claimed() {
    let w = world();
    let c = w.service.challenge().await.unwrap();
    let done = w
        .service
        .register(registration(&c, solve(&c.instruction)))
        .await
        .unwrap();
    let old = done.claim_url.rsplit('/').next().unwrap().to_owned();
    let agent = w.service.authenticate(&done.api_key).await.unwrap();
    let caller = AgentCaller::agent(agent.org.id, agent.key_id, agent.agent_name);
    w.clock.set(T0 + Duration::days(29));
    let (url, expires) = w.service.renew_claim(&caller).await.unwrap();
    assert_eq!(expires, T0 + Duration::days(29) + CLAIM_TTL);
    let new = url.rsplit('/').next().unwrap().to_owned();
    assert_eq!(
        w.service.preview_claim(&old).await.unwrap_err().code(),
        ErrorCode::AgentClaimLinkInvalid
    );
    w.clock.set(T0 + Duration::days(40));
    assert!(
        w.service.preview_claim(&new).await.is_ok(),
        "the new link's own 30 days"
    );
    let person_caller = w.caller().await;
    assert_eq!(
        w.service
            .renew_claim(&person_caller)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::PermissionDenied
    );
    let home = w.org().await;
    let person = w.person(home, "owner@example.com").await;
    w.service.claim(&new, &person).await.unwrap();
    assert_eq!(
        w.service.renew_claim(&caller).await.unwrap_err().code(),
        ErrorCode::AgentOrganizationClaimed
    );
}

#[tokio::test]
async fn claim_links_expire() {
    let w = world();
    let c = w.service.challenge().await.unwrap();
    let done = w
        .service
        .register(registration(&c, solve(&c.instruction)))
        .await
        .unwrap();
    let token = done.claim_url.rsplit('/').next().unwrap().to_owned();
    w.clock.set(T0 + CLAIM_TTL);
    let home = w.org().await;
    let person = w.person(home, "owner@example.com").await;
    assert_eq!(
        w.service.claim(&token, &person).await.unwrap_err().code(),
        ErrorCode::AgentClaimLinkInvalid
    );
    assert_eq!(
        w.service
            .claim("garbage", &person)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::AgentClaimLinkInvalid
    );
}

#[tokio::test]
async fn an_agent_key_sends_messages_as_its_agent() {
    let w = world();
    let org = w.org().await;
    let caller = AgentCaller::agent(org, uuid::Uuid::new_v4(), "Ci Bot".into());
    let m = w
        .service
        .send_message(
            &caller,
            MessageInput {
                agent_name: "Claude".into(),
                content: "go".into(),
                message_type: Some("command".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(m.sender_type, SenderType::Agent);
    assert_eq!(m.sender_name.as_deref(), Some("Ci Bot"));
    assert_eq!(m.message_type, MessageType::Command);
    let (report, _) = w
        .service
        .report(
            &caller,
            ReportInput {
                agent_name: "Ci Bot".into(),
                content: "built".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(report.created_by, None);
}

#[tokio::test]
async fn a_hooked_agents_messages_are_pushed_with_its_secret_and_retried() {
    use teamcomm_kernel::jobs::JobState;
    use teamcomm_webhooks::DeliveryOutcome;
    use teamcomm_webhooks::testing::RecordingSender;

    let w = world();
    let caller = w.caller().await;
    let hook = |url: &str, secret: Option<&str>| HookInput {
        agent_name: "Bot".into(),
        webhook_url: url.into(),
        webhook_secret: secret.map(str::to_owned),
    };
    // The destination guard and the secret's rule.
    let e = w
        .service
        .set_webhook(&caller, hook("http://10.0.0.8/in", Some("bad\nsecret")))
        .await
        .unwrap_err();
    field_error(&e, "webhook_url");
    field_error(&e, "webhook_secret");
    let set = w
        .service
        .set_webhook(
            &caller,
            hook("https://hooks.example.com/bot", Some("s3cret")),
        )
        .await
        .unwrap();
    assert_eq!(set.url, "https://hooks.example.com/bot");

    // A message to another agent is not pushed; one to Bot is, once delivered by the worker.
    let send = |agent: &str| MessageInput {
        agent_name: agent.into(),
        content: "Deploy when green".into(),
        ..Default::default()
    };
    w.service
        .send_message(&caller, send("Other"))
        .await
        .unwrap();
    let m = w.service.send_message(&caller, send("Bot")).await.unwrap();
    let jobs = w.agents.queue.all();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].payload["message_id"], m.id.to_string());

    let sender = Arc::new(RecordingSender::new());
    let worker = AgentHookWorker::new(HookPorts {
        queue: Arc::new(w.agents.queue.clone()),
        hooks: w.agents.clone(),
        sender: sender.clone(),
    });
    sender.answer(DeliveryOutcome::Failed {
        status: Some(503),
        retry_after: None,
        error: "HTTP 503".into(),
    });
    let first = worker.run_once(T0, &mut || 0.5).await.unwrap();
    assert_eq!(first.retried, 1, "{first:?}");
    sender.answer(DeliveryOutcome::Delivered { status: 200 });
    let second = worker
        .run_once(T0 + Duration::hours(1), &mut || 0.5)
        .await
        .unwrap();
    assert_eq!(second.pushed, 1, "{second:?}");
    let sent = sender.sent();
    assert_eq!(sent.len(), 2);
    let d = &sent[1];
    assert_eq!(d.url, "https://hooks.example.com/bot");
    assert_eq!(d.message_id, m.id.to_string());
    assert_eq!(
        d.webhook_secret.as_ref().map(|s| s.expose()),
        Some("s3cret")
    );
    assert_eq!(d.signing_secret, None);
    let body: serde_json::Value = serde_json::from_slice(&d.body).unwrap();
    assert_eq!(body["event"], "agent.message");
    assert_eq!(body["message"]["content"], "Deploy when green");
    assert_eq!(w.agents.queue.all()[0].state, JobState::Done);

    // Removed: later messages are not pushed; one queued before is settled without a call.
    let queued = w.service.send_message(&caller, send("Bot")).await.unwrap();
    assert_eq!(
        w.service.delete_webhook(&caller, "Bot").await.unwrap(),
        "Bot"
    );
    let again = worker
        .run_once(T0 + Duration::hours(2), &mut || 0.5)
        .await
        .unwrap();
    assert_eq!((again.claimed, again.skipped), (1, 1), "{queued:?}");
    assert_eq!(sender.sent().len(), 2);
    w.service.send_message(&caller, send("Bot")).await.unwrap();
    assert_eq!(w.agents.queue.all().len(), 2, "no push without a webhook");
    let e = w.service.delete_webhook(&caller, "Bot").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    // Another organization's caller cannot remove or see it.
    let other = w.caller().await;
    w.service
        .set_webhook(&caller, hook("https://hooks.example.com/bot", None))
        .await
        .unwrap();
    let e = w.service.delete_webhook(&other, "Bot").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}
