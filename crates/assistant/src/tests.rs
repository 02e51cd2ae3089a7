//! The assistant's rules through the in-memory ports.

use std::sync::Arc;

use teamcomm_kernel::ErrorCode;
use teamcomm_kernel::{OrgId, UserId};
use teamcomm_org::User;
use teamcomm_org::testing::FixedClock;
use time::macros::{date, datetime};

use super::testing::{FixedContext, InMemoryConversations, ScriptedModel};
use super::*;

fn person(first: &str) -> User {
    User {
        id: UserId::new(),
        org_id: OrgId::new(),
        email: format!("{first}@acme.test"),
        first_name: first[..1].to_uppercase() + &first[1..],
        last_name: "Test".into(),
        role: teamcomm_org::Role::Member,
        is_active: true,
        timezone: "UTC".into(),
        occupation: String::new(),
        image: None,
        birth_date: None,
        work_anniversary: None,
        created_at: datetime!(2026-01-01 00:00 UTC),
    }
}

struct World {
    model: Arc<ScriptedModel>,
    conversations: Arc<InMemoryConversations>,
    service: AssistantService,
}

fn context() -> AssistantContext {
    AssistantContext {
        timezone: "UTC".into(),
        due_today: vec![CheckinBrief {
            name: "Standup".into(),
            completed_today: false,
            questions: vec!["What did you do?".into()],
        }],
        recent_responses: vec![ResponseBrief {
            checkin: "Standup".into(),
            date: date!(2026 - 11 - 25),
            completed: true,
            answers: vec![("What did you do?".into(), "Shipped the importer".into())],
        }],
        kudos_received: vec![KudosBrief {
            other: Some("Max Test".into()),
            content: "Great review".into(),
            company_value: Some("Kindness".into()),
            date: date!(2026 - 11 - 24),
        }],
        kudos_given: vec![],
        ..AssistantContext::default()
    }
}

fn world(configured: bool) -> World {
    let model = Arc::new(ScriptedModel::default());
    let conversations = Arc::new(InMemoryConversations::default());
    let service = AssistantService::new(
        configured.then(|| model.clone() as Arc<dyn LanguageModel>),
        conversations.clone(),
        Arc::new(FixedContext(context())),
        Arc::new(FixedClock::new(datetime!(2026-11-26 09:00 UTC))),
    );
    World {
        model,
        conversations,
        service,
    }
}

fn ask(message: &str, session: Option<&str>) -> Ask {
    Ask {
        message: Some(message.into()),
        session_id: session.map(|s| SessionId::parse(s).unwrap()),
        ..Ask::default()
    }
}

#[tokio::test]
async fn without_a_model_nothing_is_read_or_kept() {
    let w = world(false);
    let ada = person("ada");
    let e = w
        .service
        .ask(&ada, "Acme", ask("hi", Some("s1")))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::AssistantNotConfigured);
    assert_eq!(e.status(), 503);
    assert!(w.model.requests().is_empty());
    assert!(w.conversations.turns(ada.org_id, ada.id, "s1").is_empty());
}

#[tokio::test]
async fn the_model_is_told_the_persons_data_and_the_thread_is_kept() {
    let w = world(true);
    let ada = person("ada");
    w.model
        .then(Ok("You shipped the importer."))
        .then(Ok("Max."));
    let r = w
        .service
        .ask(&ada, "Acme", ask("What did I do?", Some("s1")))
        .await
        .unwrap();
    assert_eq!(r.content, "You shipped the importer.");
    assert_eq!(r.session_id.as_str(), "s1");
    let first = &w.model.requests()[0];
    assert_eq!(first.messages.len(), 2);
    assert_eq!(first.messages[0].role, Role::System);
    let system = &first.messages[0].content;
    for needle in [
        "Ada Test",
        "Acme",
        "Standup (pending)",
        "Shipped the importer",
        "from Max Test [Kindness]: Great review",
        "2026-11-26",
    ] {
        assert!(system.contains(needle), "{needle:?} in {system}");
    }
    assert_eq!(
        first.messages[1],
        ChatMessage::new(Role::User, "What did I do?")
    );

    // The next question carries the thread.
    w.service
        .ask(&ada, "Acme", ask("Who thanked me?", Some("s1")))
        .await
        .unwrap();
    let second = &w.model.requests()[1];
    let roles: Vec<_> = second.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    assert_eq!(second.messages[2].content, "You shipped the importer.");
    assert_eq!(w.conversations.turns(ada.org_id, ada.id, "s1").len(), 4);

    // Another person's session of the same id is theirs alone.
    let bob = User {
        org_id: ada.org_id,
        ..person("bob")
    };
    w.service
        .ask(&bob, "Acme", ask("Hello", Some("s1")))
        .await
        .unwrap();
    assert_eq!(w.model.requests()[2].messages.len(), 2);
}

#[tokio::test]
async fn reset_forgets_and_no_session_starts_a_new_one() {
    let w = world(true);
    let ada = person("ada");
    w.service
        .ask(&ada, "Acme", ask("one", Some("s1")))
        .await
        .unwrap();
    let reset = Ask {
        reset_thread: true,
        ..ask("two", Some("s1"))
    };
    w.service.ask(&ada, "Acme", reset).await.unwrap();
    assert_eq!(
        w.model.requests()[1].messages.len(),
        2,
        "the thread was reset"
    );
    // A reset alone asks nothing.
    let only_reset = Ask {
        message: None,
        reset_thread: true,
        session_id: Some(SessionId::parse("s1").unwrap()),
        ..Ask::default()
    };
    let r = w.service.ask(&ada, "Acme", only_reset).await.unwrap();
    assert_eq!(r.content, "");
    assert_eq!(w.model.requests().len(), 2);
    assert!(w.conversations.turns(ada.org_id, ada.id, "s1").is_empty());

    let r = w
        .service
        .ask(&ada, "Acme", ask("three", None))
        .await
        .unwrap();
    assert_eq!(r.session_id.as_str().len(), 36, "a new UUID");
    assert_eq!(
        w.conversations
            .turns(ada.org_id, ada.id, r.session_id.as_str())
            .len(),
        2
    );
}

#[tokio::test]
async fn the_clients_history_is_used_when_nothing_is_kept() {
    let w = world(true);
    let ada = person("ada");
    let a = Ask {
        history: vec![
            ChatMessage::new(Role::User, "earlier q"),
            ChatMessage::new(Role::Assistant, "earlier a"),
            ChatMessage::new(Role::System, "ignore me"),
        ],
        available_commands: vec![("/status".into(), "Show pending check-ins".into())],
        ..ask("now", Some("tui"))
    };
    w.service.ask(&ada, "Acme", a).await.unwrap();
    let req = &w.model.requests()[0];
    let contents: Vec<_> = req
        .messages
        .iter()
        .skip(1)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(contents, ["earlier q", "earlier a", "now"]);
    assert!(
        req.messages[0]
            .content
            .contains("/status: Show pending check-ins")
    );
}

#[tokio::test]
async fn model_failures_keep_nothing() {
    let w = world(true);
    let ada = person("ada");
    w.model
        .then(Err(ModelError::Status {
            status: 500,
            detail: "boom".into(),
        }))
        .then(Err(ModelError::Timeout))
        .then(Err(ModelError::Malformed("no choices".into())));
    let codes = [
        (ErrorCode::AssistantUpstreamError, 502),
        (ErrorCode::AssistantUpstreamTimeout, 504),
        (ErrorCode::AssistantUpstreamError, 502),
    ];
    for (code, status) in codes {
        let e = w
            .service
            .ask(&ada, "Acme", ask("hi", Some("s1")))
            .await
            .unwrap_err();
        assert_eq!((e.code(), e.status()), (code, status));
    }
    assert!(w.conversations.turns(ada.org_id, ada.id, "s1").is_empty());
}

#[tokio::test]
async fn questions_and_session_ids_are_checked() {
    let w = world(true);
    let ada = person("ada");
    for bad in [
        Ask::default(),
        ask("   ", None),
        ask(&"x".repeat(MAX_MESSAGE_CHARS + 1), None),
    ] {
        let e = w.service.ask(&ada, "Acme", bad).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
    }
    assert!(w.model.requests().is_empty());
    for bad in ["", "a b", "ü", &"a".repeat(101)] {
        assert!(SessionId::parse(bad).is_err(), "{bad:?}");
    }
    assert!(SessionId::parse("0b8e-Ab_9").is_ok());
}

#[test]
fn the_context_renders_what_is_empty_too() {
    let text = AssistantContext::default().render();
    assert_eq!(text.matches("- none").count(), 4, "{text}");
}
