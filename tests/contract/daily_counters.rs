//! `DailyCounters` (the free-plan daily throttles): a spend adds one unless the day's count is
//! at the limit, per organization, limit and day; a spend given back is spent again, never below
//! zero; concurrent spends never pass the limit. Run against the in-memory counters
//! (`teamcomm_keys::testing`) and the Postgres ones (`PgDailyCounters`) on a migrated database.
//! (Not through `Ports`: the counters take organizations by id only, and the Postgres ones need
//! the organization's row, made here through the organization repository of the same store.)

use std::sync::Arc;

use teamcomm_kernel::OrgId;
use teamcomm_keys::testing::InMemoryDailyCounters;
use teamcomm_keys::{DailyCounters, DailyLimit};
use teamcomm_org::{NewOrganization, OrgRepository};
use teamcomm_store_pg::{Database, PgDailyCounters, PgOrgRepository};
use teamcomm_tests::TestDb;
use time::macros::date;

/// The counters under test and two organizations they count for.
struct World {
    counters: Arc<dyn DailyCounters>,
    acme: OrgId,
    globex: OrgId,
    _db: Option<TestDb>,
}

async fn orgs(repo: &dyn OrgRepository) -> (OrgId, OrgId) {
    let mut ids = Vec::new();
    for name in ["Acme", "Globex"] {
        let new = NewOrganization::new(name, "free", None, None, None).expect("valid");
        ids.push(repo.create_organization(&new).await.expect("org").id);
    }
    (ids[0], ids[1])
}

fn in_memory() -> World {
    World {
        counters: Arc::new(InMemoryDailyCounters::default()),
        acme: OrgId(uuid::Uuid::new_v4()),
        globex: OrgId(uuid::Uuid::new_v4()),
        _db: None,
    }
}

async fn postgres() -> World {
    let db = TestDb::new().await;
    let database = Database::connect(&db.url, 8).expect("pool");
    let (acme, globex) = orgs(&PgOrgRepository::new(database.clone())).await;
    World {
        counters: Arc::new(PgDailyCounters::new(database)),
        acme,
        globex,
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
    a_day_is_counted_up_to_its_limit_per_organization_limit_and_day,
    a_spend_given_back_is_spent_again_never_below_zero,
    concurrent_spends_never_pass_the_limit,
);

async fn a_day_is_counted_up_to_its_limit_per_organization_limit_and_day(w: World) {
    let (c, day) = (&w.counters, date!(2026 - 11 - 26));
    assert_eq!(c.used(w.acme, DailyLimit::Emails, day).await.unwrap(), 0);
    for n in 1..=3 {
        let spent = c.spend(w.acme, DailyLimit::Emails, day, 3).await.unwrap();
        assert_eq!(spent, Some(n));
    }
    assert_eq!(
        c.spend(w.acme, DailyLimit::Emails, day, 3).await.unwrap(),
        None
    );
    assert_eq!(c.used(w.acme, DailyLimit::Emails, day).await.unwrap(), 3);
    // Another limit, another organization, another day: counted apart.
    for (org, limit, d) in [
        (w.acme, DailyLimit::AgentReports, day),
        (w.globex, DailyLimit::Emails, day),
        (w.acme, DailyLimit::Emails, date!(2026 - 11 - 27)),
    ] {
        assert_eq!(c.spend(org, limit, d, 3).await.unwrap(), Some(1));
    }
    // A larger limit the same day lets the count go on.
    assert_eq!(
        c.spend(w.acme, DailyLimit::Emails, day, 5).await.unwrap(),
        Some(4)
    );
}

async fn a_spend_given_back_is_spent_again_never_below_zero(w: World) {
    let (c, day) = (&w.counters, date!(2026 - 11 - 26));
    c.give_back(w.acme, DailyLimit::AgentReports, day)
        .await
        .unwrap();
    assert_eq!(
        c.used(w.acme, DailyLimit::AgentReports, day).await.unwrap(),
        0
    );
    for _ in 0..2 {
        c.spend(w.acme, DailyLimit::AgentReports, day, 2)
            .await
            .unwrap();
    }
    c.give_back(w.acme, DailyLimit::AgentReports, day)
        .await
        .unwrap();
    assert_eq!(
        c.spend(w.acme, DailyLimit::AgentReports, day, 2)
            .await
            .unwrap(),
        Some(2)
    );
    for _ in 0..3 {
        c.give_back(w.acme, DailyLimit::AgentReports, day)
            .await
            .unwrap();
    }
    assert_eq!(
        c.used(w.acme, DailyLimit::AgentReports, day).await.unwrap(),
        0
    );
}

async fn concurrent_spends_never_pass_the_limit(w: World) {
    let day = date!(2026 - 11 - 26);
    let spends: Vec<_> = (0..30)
        .map(|_| {
            let c = w.counters.clone();
            let org = w.acme;
            tokio::spawn(async move { c.spend(org, DailyLimit::Emails, day, 20).await })
        })
        .collect();
    let mut granted = Vec::new();
    for s in spends {
        if let Some(n) = s.await.unwrap().unwrap() {
            granted.push(n);
        }
    }
    granted.sort_unstable();
    assert_eq!(granted, (1..=20).collect::<Vec<u32>>());
}
