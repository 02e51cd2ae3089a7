//! `AgentRepository` and `RegistrationRepository`: messages list per organization and agent,
//! oldest first, the newest kept, without expired ones, filtered on delivery; read marks and a
//! health check's delivery change only pending messages of the organization; health history is
//! newest first per agent; a challenge is taken once; a registration's agent key is found by its
//! hash; a claim link opens its registration while unclaimed and unexpired, is claimed once,
//! records its claimant and can be undone. Run against the in-memory ports
//! (`teamcomm_agents::testing`) and the Postgres ones (`PgAgentRepository`) on a migrated
//! database; organizations and people are made through the organization repository of the
//! same store (the Postgres rows refer to them). `AgentHookRepository`: one webhook per
//! organization and agent, replaced by a second set, its secret read back as set, removed once;
//! a push finds its message with the agent's current webhook, in the organization only; a
//! message stored with its push job enqueues it.

use std::sync::Arc;

use serde_json::json;
use teamcomm_agents::testing::{InMemoryAgents, InMemoryRegistrations};
use teamcomm_agents::{
    AgentHook, AgentHookRepository, AgentMessage, AgentRepository, Challenge, HealthCheck,
    MessageFilter, MessageType, NewAgentKey, NewRegistration, Registration, RegistrationRepository,
    SenderType,
};
use teamcomm_kernel::OrgId;
use teamcomm_kernel::jobs::{JobKind, JobQueue, NewJob};
use teamcomm_keys::{Secret, SecretKind};
use teamcomm_org::testing::InMemoryOrgRepository;
use teamcomm_org::{NewOrganization, NewUser, OrgRepository};
use teamcomm_store_pg::{
    Database, PgAgentHooks, PgAgentRepository, PgJobQueue, PgOrgRepository, PlatformSecretKey,
};
use teamcomm_tests::TestDb;
use teamcomm_webhooks::SecretText;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

const T0: OffsetDateTime = datetime!(2026-11-26 10:00 UTC);

struct World {
    agents: Arc<dyn AgentRepository>,
    hooks: Arc<dyn AgentHookRepository>,
    queue: Arc<dyn JobQueue>,
    registrations: Arc<dyn RegistrationRepository>,
    orgs: Arc<dyn OrgRepository>,
    _db: Option<TestDb>,
}

fn in_memory() -> World {
    let agents = Arc::new(InMemoryAgents::default());
    World {
        queue: Arc::new(agents.queue.clone()),
        hooks: agents.clone(),
        agents,
        registrations: Arc::new(InMemoryRegistrations::default()),
        orgs: Arc::new(InMemoryOrgRepository::new()),
        _db: None,
    }
}

async fn postgres() -> World {
    let db = TestDb::new().await;
    let database = Database::connect(&db.url, 8).expect("pool");
    let store = Arc::new(PgAgentRepository::new(database.clone()));
    let key = PlatformSecretKey::derive(b"contract-test-platform-secret-key-0123456789").unwrap();
    World {
        hooks: Arc::new(PgAgentHooks::new(database.clone(), key)),
        queue: Arc::new(PgJobQueue::new(database.clone())),
        agents: store.clone(),
        registrations: store,
        orgs: Arc::new(PgOrgRepository::new(database)),
        _db: Some(db),
    }
}

macro_rules! both {
    ($($behaviour:ident),+ $(,)?) => {
        mod in_memory {
            $(#[tokio::test]
            async fn $behaviour() { super::$behaviour(super::in_memory()).await; })+
        }
        mod postgres {
            $(#[tokio::test]
            async fn $behaviour() { super::$behaviour(super::postgres().await).await; })+
        }
    };
}

both!(
    messages_list_per_organization_and_agent_oldest_first_without_expired_ones,
    read_marks_and_deliveries_change_only_pending_messages_of_the_organization,
    health_history_is_newest_first_per_agent,
    a_challenge_is_taken_once,
    a_registration_is_found_by_its_key_and_claimed_once,
    a_hook_per_agent_is_replaced_removed_and_found_with_its_messages,
);

impl World {
    async fn org(&self) -> OrgId {
        let new = NewOrganization::new("Acme", "free", None, None, None).expect("valid");
        self.orgs.create_organization(&new).await.expect("org").id
    }
}

fn message(org: OrgId, agent: &str, content: &str, at: OffsetDateTime) -> AgentMessage {
    let mut metadata = serde_json::Map::new();
    metadata.insert("pr".into(), json!(42));
    AgentMessage {
        id: Uuid::now_v7(),
        org_id: org,
        agent_name: agent.into(),
        content: content.into(),
        message_type: MessageType::Command,
        metadata,
        sender_type: SenderType::Agent,
        sender_name: Some("CI Bot".into()),
        expires_at: None,
        delivered_at: None,
        created_at: at,
    }
}

fn filter(agent: Option<&str>, delivered: Option<bool>) -> MessageFilter {
    MessageFilter {
        agent_name: agent.map(str::to_owned),
        delivered,
    }
}

async fn messages_list_per_organization_and_agent_oldest_first_without_expired_ones(w: World) {
    let (acme, globex) = (w.org().await, w.org().await);
    let a = message(acme, "Claude", "a", T0);
    let b = message(acme, "Claude", "b", T0 + Duration::minutes(1));
    let other_agent = message(acme, "Other", "c", T0 + Duration::minutes(2));
    let expiring = AgentMessage {
        expires_at: Some(T0 + Duration::hours(1)),
        ..message(acme, "Claude", "d", T0 + Duration::minutes(3))
    };
    let theirs = message(globex, "Claude", "e", T0);
    for m in [&b, &a, &other_agent, &expiring, &theirs] {
        w.agents.insert_message(m, None).await.expect("insert");
    }
    let list = |f: MessageFilter, now: OffsetDateTime, limit: usize| {
        let agents = w.agents.clone();
        async move {
            agents
                .list_messages(acme, &f, now, limit)
                .await
                .expect("list")
        }
    };
    assert_eq!(
        list(filter(Some("Claude"), None), T0, 10).await,
        vec![a.clone(), b.clone(), expiring.clone()]
    );
    assert_eq!(
        list(filter(None, None), T0 + Duration::hours(1), 10).await,
        vec![a.clone(), b.clone(), other_agent.clone()],
        "expired at their instant"
    );
    assert_eq!(
        list(filter(Some("Claude"), None), T0, 2).await,
        vec![b.clone(), expiring.clone()],
        "the newest are kept"
    );
    assert_eq!(
        list(filter(Some("Claude"), Some(true)), T0, 10).await,
        vec![]
    );
    assert_eq!(
        w.agents
            .list_messages(globex, &filter(None, Some(false)), T0, 10)
            .await
            .expect("list"),
        vec![theirs]
    );
}

async fn read_marks_and_deliveries_change_only_pending_messages_of_the_organization(w: World) {
    let (acme, globex) = (w.org().await, w.org().await);
    let a = message(acme, "Claude", "a", T0);
    let b = message(acme, "Claude", "b", T0 + Duration::minutes(1));
    let other_agent = message(acme, "Other", "c", T0);
    let expired = AgentMessage {
        expires_at: Some(T0 + Duration::minutes(5)),
        ..message(acme, "Claude", "d", T0 + Duration::seconds(30))
    };
    let theirs = message(globex, "Claude", "e", T0);
    for m in [&a, &b, &other_agent, &expired, &theirs] {
        w.agents.insert_message(m, None).await.expect("insert");
    }
    let at = T0 + Duration::minutes(10);
    assert_eq!(
        w.agents
            .mark_delivered(acme, &[a.id, theirs.id, Uuid::new_v4()], at)
            .await
            .expect("mark"),
        1
    );
    assert_eq!(
        w.agents
            .mark_delivered(acme, &[a.id], at)
            .await
            .expect("mark"),
        0,
        "already delivered"
    );
    let delivered = w
        .agents
        .deliver_pending(acme, "Claude", at)
        .await
        .expect("deliver");
    assert_eq!(
        delivered,
        vec![AgentMessage {
            delivered_at: Some(at),
            ..b.clone()
        }],
        "the expired one and other agents' are left"
    );
    assert!(
        w.agents
            .deliver_pending(acme, "Claude", at)
            .await
            .expect("deliver")
            .is_empty()
    );
    let pending = w
        .agents
        .list_messages(acme, &filter(None, Some(false)), T0, 10)
        .await
        .expect("list");
    assert_eq!(pending, vec![other_agent, expired]);
    let theirs_now = w
        .agents
        .list_messages(globex, &filter(None, Some(false)), T0, 10)
        .await
        .expect("list");
    assert_eq!(theirs_now, vec![theirs]);
}

async fn health_history_is_newest_first_per_agent(w: World) {
    let (acme, globex) = (w.org().await, w.org().await);
    let check = |org: OrgId, agent: &str, ok: bool, at: OffsetDateTime| HealthCheck {
        id: Uuid::now_v7(),
        org_id: org,
        agent_name: agent.into(),
        ok,
        message: (!ok).then(|| "down".to_owned()),
        created_at: at,
    };
    let first = check(acme, "Claude", true, T0);
    let second = check(acme, "Claude", false, T0 + Duration::minutes(1));
    let third = check(acme, "Claude", true, T0 + Duration::minutes(2));
    for c in [
        &second,
        &first,
        &third,
        &check(acme, "Other", true, T0),
        &check(globex, "Claude", true, T0),
    ] {
        w.agents.insert_health(c).await.expect("insert");
    }
    assert_eq!(
        w.agents
            .health_history(acme, "Claude", 10)
            .await
            .expect("history"),
        vec![third.clone(), second.clone(), first]
    );
    assert_eq!(
        w.agents
            .health_history(acme, "Claude", 2)
            .await
            .expect("history"),
        vec![third, second]
    );
    assert!(
        w.agents
            .health_history(acme, "Nobody", 10)
            .await
            .expect("history")
            .is_empty()
    );
}

async fn a_challenge_is_taken_once(w: World) {
    let c = Challenge {
        id: Uuid::new_v4(),
        answer: 12_345 * 52,
        expires_at: T0,
    };
    w.registrations.insert_challenge(&c).await.expect("insert");
    assert_eq!(
        w.registrations.take_challenge(c.id).await.expect("take"),
        Some(c.clone())
    );
    assert_eq!(
        w.registrations.take_challenge(c.id).await.expect("take"),
        None
    );
    assert_eq!(
        w.registrations
            .take_challenge(Uuid::new_v4())
            .await
            .expect("take"),
        None
    );
}

async fn a_registration_is_found_by_its_key_and_claimed_once(w: World) {
    let org = w.org().await;
    let key = Secret::generate(SecretKind::AgentKey);
    let claim = Secret::generate(SecretKind::ClaimToken);
    let registration = Registration {
        org_id: org,
        org_name: "Acme".into(),
        agent_name: "Claude Code".into(),
        agent_email: format!("claude-{}@agents.example.com", Uuid::new_v4().simple()),
        reason: "testing".into(),
        timezone: "UTC".into(),
        contact_email: Some("me@example.com".into()),
        claim_expires_at: T0 + Duration::days(30),
        claimed_by: None,
        claimed_at: None,
        created_at: T0,
    };
    let key_id = Uuid::now_v7();
    w.registrations
        .insert_registration(&NewRegistration {
            registration: registration.clone(),
            claim_hash: claim.hash(),
            key: NewAgentKey {
                id: key_id,
                org_id: org,
                agent_name: "Claude Code".into(),
                hash: key.hash(),
                suffix: key.suffix(),
            },
        })
        .await
        .expect("register");

    let found = w
        .registrations
        .find_agent_key(&key.hash())
        .await
        .expect("find")
        .expect("the key");
    assert_eq!(
        (
            found.id,
            found.org_id,
            found.agent_name.as_str(),
            found.active
        ),
        (key_id, org, "Claude Code", true)
    );
    let unknown = Secret::generate(SecretKind::AgentKey).hash();
    assert_eq!(
        w.registrations
            .find_agent_key(&unknown)
            .await
            .expect("find"),
        None
    );

    let regs = &w.registrations;
    assert_eq!(
        regs.find_claimable(&claim.hash(), T0).await.expect("find"),
        Some(registration.clone())
    );
    assert_eq!(
        regs.find_claimable(&claim.hash(), T0 + Duration::days(30))
            .await
            .expect("find"),
        None,
        "expired at its instant"
    );
    // A renewed link replaces the old one.
    let renewed = Secret::generate(SecretKind::ClaimToken);
    assert!(
        regs.renew_claim(org, &renewed.hash(), T0 + Duration::days(30))
            .await
            .expect("renew")
    );
    assert_eq!(
        regs.find_claimable(&claim.hash(), T0).await.expect("find"),
        None
    );
    assert!(
        regs.find_claimable(&renewed.hash(), T0)
            .await
            .expect("find")
            .is_some()
    );
    let claim = renewed;
    let at = T0 + Duration::days(1);
    let claimed = regs.claim(&claim.hash(), at).await.expect("claim");
    assert_eq!(
        claimed,
        Some(Registration {
            claimed_at: Some(at),
            ..registration.clone()
        })
    );
    assert_eq!(regs.claim(&claim.hash(), at).await.expect("claim"), None);
    assert!(
        !regs
            .renew_claim(org, &claim.hash(), T0 + Duration::days(30))
            .await
            .expect("renew"),
        "a claimed organization keeps its claim"
    );
    assert_eq!(
        regs.find_claimable(&claim.hash(), at).await.expect("find"),
        None
    );
    // Undone, it can be claimed again; the claimant is recorded.
    regs.unclaim(org).await.expect("unclaim");
    assert!(
        regs.claim(&claim.hash(), at)
            .await
            .expect("claim")
            .is_some()
    );
    let owner =
        NewUser::new("owner@example.com", "Pat", "Doe", "admin", Some(true)).expect("valid");
    let owner = w.orgs.create_user(org, &owner).await.expect("user");
    regs.set_claimed_by(org, owner.id).await.expect("record");
    regs.unclaim(org).await.expect("unclaim");
    assert_eq!(
        regs.find_claimable(&claim.hash(), at).await.expect("find"),
        Some(registration)
    );
}

async fn a_hook_per_agent_is_replaced_removed_and_found_with_its_messages(w: World) {
    let (acme, globex) = (w.org().await, w.org().await);
    let hook = |org: OrgId, url: &str, secret: Option<&str>| AgentHook {
        org_id: org,
        agent_name: "Claude".into(),
        url: url.into(),
        secret: secret.map(SecretText::new),
        updated_at: T0,
    };
    assert_eq!(w.hooks.hook(acme, "Claude").await.unwrap(), None);
    w.hooks
        .set_hook(&hook(acme, "https://a.example.com/1", Some("s1")))
        .await
        .unwrap();
    let second = hook(acme, "https://a.example.com/2", Some("s2"));
    w.hooks.set_hook(&second).await.unwrap();
    assert_eq!(
        w.hooks.hook(acme, "Claude").await.unwrap(),
        Some(second.clone())
    );
    assert_eq!(w.hooks.hook(globex, "Claude").await.unwrap(), None);
    assert_eq!(
        w.hooks.hook(acme, "claude").await.unwrap(),
        None,
        "names are exact"
    );

    // A message stored with its push: the job is enqueued, and the push finds both.
    let m = message(acme, "Claude", "ship it", T0);
    let job = NewJob {
        id: Uuid::now_v7(),
        org_id: acme,
        kind: JobKind::AgentWebhook,
        payload: json!({"message_id": m.id}),
        run_at: T0,
        max_attempts: 8,
    };
    w.agents.insert_message(&m, Some(&job)).await.unwrap();
    let claimed = w
        .queue
        .claim(&[JobKind::AgentWebhook], 10, T0, Duration::minutes(1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].payload["message_id"], m.id.to_string());
    let (found, with) = w.hooks.push_work(acme, m.id).await.unwrap().expect("work");
    assert_eq!(found, m);
    assert_eq!(with, second);
    assert_eq!(w.hooks.push_work(globex, m.id).await.unwrap(), None);
    let other = message(acme, "Other", "no hook", T0);
    w.agents.insert_message(&other, None).await.unwrap();
    assert_eq!(w.hooks.push_work(acme, other.id).await.unwrap(), None);

    // Another organization cannot remove it; removed once, the push finds nothing.
    assert!(!w.hooks.delete_hook(globex, "Claude").await.unwrap());
    assert!(w.hooks.delete_hook(acme, "Claude").await.unwrap());
    assert!(!w.hooks.delete_hook(acme, "Claude").await.unwrap());
    assert_eq!(w.hooks.push_work(acme, m.id).await.unwrap(), None);
    // Without a secret.
    w.hooks
        .set_hook(&hook(acme, "https://a.example.com/3", None))
        .await
        .unwrap();
    assert_eq!(
        w.hooks.hook(acme, "Claude").await.unwrap().unwrap().secret,
        None
    );
}
