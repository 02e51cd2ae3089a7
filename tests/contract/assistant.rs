//! `ConversationRepository`: a session's turns read back oldest first, the newest `limit` of
//! them; a session is one person's (the same id of another person, or of another organization's
//! person, is another thread); forgetting a session forgets only it. Run against the in-memory
//! adapter and `PgConversationRepository` (people and organizations made through the
//! organization repository, as the table's keys want).

use std::sync::Arc;

use teamcomm_assistant::testing::InMemoryConversations;
use teamcomm_assistant::{ConversationRepository, Role, SessionId, Turn};
use teamcomm_kernel::{OrgId, UserId};
use teamcomm_org::testing::InMemoryOrgPorts;
use teamcomm_org::{NewOrganization, NewUser, OrgRepository};
use teamcomm_store_pg::{Database, PgConversationRepository, PgOrgRepository};
use teamcomm_tests::TestDb;
use time::OffsetDateTime;
use time::macros::datetime;

const T0: OffsetDateTime = datetime!(2026-11-26 09:00 UTC);

/// Two people of one organization and one of another: (org, ada, max), (other org, otto).
async fn people(orgs: &dyn OrgRepository) -> ((OrgId, UserId, UserId), (OrgId, UserId)) {
    let mut made = Vec::new();
    for (org_name, emails) in [
        ("Acme", &["ada@acme.test", "max@acme.test"][..]),
        ("Globex", &["otto@globex.test"][..]),
    ] {
        let org = orgs
            .create_organization(
                &NewOrganization::new(org_name, "business", None, None, None).unwrap(),
            )
            .await
            .unwrap();
        for email in emails {
            let user = orgs
                .create_user(
                    org.id,
                    &NewUser::new(email, "Test", "Person", "member", None).unwrap(),
                )
                .await
                .unwrap();
            made.push((org.id, user.id));
        }
    }
    ((made[0].0, made[0].1, made[1].1), (made[2].0, made[2].1))
}

fn turn(role: Role, content: &str, minute: i64) -> Turn {
    Turn {
        role,
        content: content.to_owned(),
        at: T0 + time::Duration::minutes(minute),
    }
}

async fn sessions_behave(c: Arc<dyn ConversationRepository>, orgs: &dyn OrgRepository) {
    let ((acme, ada, max), (globex, otto)) = people(orgs).await;
    let s1 = SessionId::parse("6f1d0c3e-1b2a-4c5d-9e8f-0a1b2c3d4e5f").unwrap();
    let s2 = SessionId::parse("other_session").unwrap();
    assert!(c.recent_turns(acme, ada, &s1, 20).await.unwrap().is_empty());

    let first = [
        turn(Role::User, "What did I do?", 0),
        turn(Role::Assistant, "You shipped it.", 1),
    ];
    c.append_turns(acme, ada, &s1, &first).await.unwrap();
    let second = [
        turn(Role::User, "And then?", 2),
        turn(Role::Assistant, "Reviews.", 3),
    ];
    c.append_turns(acme, ada, &s1, &second).await.unwrap();
    c.append_turns(acme, ada, &s2, &[turn(Role::User, "elsewhere", 4)])
        .await
        .unwrap();

    let all = c.recent_turns(acme, ada, &s1, 20).await.unwrap();
    assert_eq!(
        all,
        [first.to_vec(), second.to_vec()].concat(),
        "oldest first"
    );
    let newest = c.recent_turns(acme, ada, &s1, 3).await.unwrap();
    assert_eq!(newest, all[1..].to_vec(), "the newest 3, oldest first");

    // The same id is another person's own thread, in this organization or another.
    assert!(c.recent_turns(acme, max, &s1, 20).await.unwrap().is_empty());
    assert!(
        c.recent_turns(globex, otto, &s1, 20)
            .await
            .unwrap()
            .is_empty()
    );
    c.append_turns(acme, max, &s1, &[turn(Role::User, "max's", 5)])
        .await
        .unwrap();
    assert_eq!(c.recent_turns(acme, ada, &s1, 20).await.unwrap(), all);

    // Forgetting a session forgets it alone.
    c.forget(acme, ada, &s1).await.unwrap();
    assert!(c.recent_turns(acme, ada, &s1, 20).await.unwrap().is_empty());
    assert_eq!(c.recent_turns(acme, ada, &s2, 20).await.unwrap().len(), 1);
    assert_eq!(c.recent_turns(acme, max, &s1, 20).await.unwrap().len(), 1);
    // Forgetting nothing is fine; appending nothing too.
    c.forget(globex, otto, &s1).await.unwrap();
    c.append_turns(acme, ada, &s1, &[]).await.unwrap();
}

#[tokio::test]
async fn in_memory_assistant_sessions() {
    let org = InMemoryOrgPorts::new(Arc::new(teamcomm_kernel::SystemClock));
    sessions_behave(
        Arc::new(InMemoryConversations::default()),
        org.people.as_ref(),
    )
    .await;
}

#[tokio::test]
async fn postgres_assistant_sessions() {
    let db = TestDb::new().await;
    let database = Database::connect(&db.url, 2).expect("pool");
    sessions_behave(
        Arc::new(PgConversationRepository::new(database.clone())),
        &PgOrgRepository::new(database),
    )
    .await;
}
