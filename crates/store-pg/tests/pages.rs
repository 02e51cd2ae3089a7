//! The adapter's list pages against real PostgreSQL: the maintained people count, the deferred
//! join of deep pages, the shared pagination helper, and strict decoding. Each test gets a fresh
//! database (from `TEST_DATABASE_URL`, default the local server), migrated, dropped at the end.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{OrgId, PageRequest, RepoError, TeamId, UserId};
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, PlanTier, Role, TeamFilter, TeamRepository, UserFilter,
};
use teamcomm_store_pg::{
    Database, PgOrgRepository, PgTeamRepository, quote_ident, run_migrations, split_database,
};
use uuid::Uuid;

struct TestDb {
    url: String,
    maintenance: String,
    name: String,
    db: Database,
}

impl TestDb {
    async fn new() -> TestDb {
        let server = std::env::var("TEST_DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
        let (maintenance, _) = split_database(&server).expect("a database URL");
        let name = format!("teamcomm_storepg_{}", Uuid::new_v4().simple());
        let url = match maintenance.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{name}"),
            None => panic!("no database in {maintenance}"),
        };
        let mut admin = AsyncPgConnection::establish(&maintenance).await.unwrap();
        exec(
            &mut admin,
            &format!("CREATE DATABASE {}", quote_ident(&name)),
        )
        .await;
        run_migrations(&url).await.expect("migrations apply");
        let db = Database::connect(&url, 4).unwrap();
        TestDb {
            url,
            maintenance,
            name,
            db,
        }
    }

    async fn sql(&self) -> AsyncPgConnection {
        AsyncPgConnection::establish(&self.url).await.unwrap()
    }

    async fn drop(self) {
        drop(self.db);
        let mut admin = AsyncPgConnection::establish(&self.maintenance)
            .await
            .unwrap();
        exec(
            &mut admin,
            &format!("DROP DATABASE {} WITH (FORCE)", quote_ident(&self.name)),
        )
        .await;
    }
}

async fn exec(conn: &mut AsyncPgConnection, sql: &str) {
    diesel::sql_query(sql)
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn new_org(repo: &PgOrgRepository, name: &str) -> OrgId {
    repo.create_organization(&NewOrganization {
        name: name.into(),
        plan: PlanTier::Business,
        api_access: true,
        plan_beta: false,
        exchange_tokens: false,
        platform: None,
    })
    .await
    .unwrap()
    .id
}

/// `n` people in one statement; first names repeat (ties on the name are broken by id), every
/// seventh is inactive.
async fn seed_people(conn: &mut AsyncPgConnection, org: OrgId, n: u32) {
    exec(
        conn,
        &format!(
            "INSERT INTO users (id, organization_id, email, first_name, last_name, role, is_active) \
             SELECT gen_random_uuid(), '{}', format('p%s@example.com', g), \
                    (ARRAY['Ada','Alan','Grace'])[1 + g % 3], format('P%s', g % 40), 'member', g % 7 <> 0 \
             FROM generate_series(1, {n}) AS g",
            org.0
        ),
    )
    .await;
}

async fn user_count(conn: &mut AsyncPgConnection, org: OrgId) -> i64 {
    org_number(conn, org, "user_count").await
}

async fn active_user_count(conn: &mut AsyncPgConnection, org: OrgId) -> i64 {
    org_number(conn, org, "active_user_count").await
}

async fn org_number(conn: &mut AsyncPgConnection, org: OrgId, column: &str) -> i64 {
    diesel::sql_query(format!(
        "SELECT {column} AS n FROM organizations WHERE id = '{}'",
        org.0
    ))
    .get_result::<Count>(conn)
    .await
    .unwrap()
    .n
}

/// The ids of an organization's people in the directory's order, optionally only the (in)active.
async fn ids_in_order(conn: &mut AsyncPgConnection, org: OrgId, active: Option<bool>) -> Vec<Uuid> {
    let only = active.map_or(String::new(), |a| format!(" AND is_active = {a}"));
    diesel::sql_query(format!(
        "SELECT id FROM users WHERE organization_id = '{}'{only} ORDER BY first_name, last_name, id",
        org.0
    ))
    .load::<Id>(conn)
    .await
    .unwrap()
    .into_iter()
    .map(|r| r.id)
    .collect()
}

fn page(offset: u64, limit: u64) -> PageRequest {
    PageRequest { offset, limit }
}

#[tokio::test]
async fn unfiltered_pages_follow_the_name_order_at_every_depth() {
    let t = TestDb::new().await;
    let repo = PgOrgRepository::new(t.db.clone());
    let mut conn = t.sql().await;
    let org = new_org(&repo, "Big").await;
    let other = new_org(&repo, "Other").await;
    seed_people(&mut conn, org, 600).await;
    seed_people(&mut conn, other, 30).await;

    let expected = ids_in_order(&mut conn, org, None).await;
    assert_eq!(expected.len(), 600);

    // Below and above the offset where pages switch to the deferred join, the last page, and
    // past the end.
    for (offset, limit) in [
        (0, 25),
        (25, 25),
        (240, 25),
        (249, 3),
        (250, 25),
        (260, 100),
        (575, 25),
        (590, 25),
        (600, 25),
        (1000, 25),
    ] {
        let got = repo
            .list_users(org, &UserFilter::default(), page(offset, limit))
            .await
            .unwrap();
        assert_eq!(got.count, 600, "count at offset {offset}");
        let ids: Vec<Uuid> = got.results.iter().map(|u| u.id.0).collect();
        let from = (offset as usize).min(600);
        let to = (from + limit as usize).min(600);
        assert_eq!(ids, expected[from..to], "page at offset {offset}");
        assert!(got.results.iter().all(|u| u.org_id == org));
    }
    t.drop().await;
}

#[tokio::test]
async fn the_people_count_is_kept_per_statement() {
    let t = TestDb::new().await;
    let repo = PgOrgRepository::new(t.db.clone());
    let mut conn = t.sql().await;
    let a = new_org(&repo, "A").await;
    let b = new_org(&repo, "B").await;
    seed_people(&mut conn, a, 50).await;
    let admin = NewUser {
        email: "x@example.com".into(),
        first_name: "X".into(),
        last_name: "Y".into(),
        role: Role::Admin,
        is_active: true,
    };
    repo.create_user(b, &admin).await.unwrap();
    assert_eq!(user_count(&mut conn, a).await, 50);
    assert_eq!(active_user_count(&mut conn, a).await, 43); // every seventh is inactive
    assert_eq!(user_count(&mut conn, b).await, 1);
    assert_eq!(active_user_count(&mut conn, b).await, 1);

    // One statement touching two organizations.
    exec(
        &mut conn,
        &format!(
            "DELETE FROM users WHERE (organization_id = '{}' AND email LIKE 'p1%') OR organization_id = '{}'",
            a.0, b.0
        ),
    )
    .await;
    // p1, p10..p19: 11 people, p14 inactive.
    assert_eq!(user_count(&mut conn, a).await, 39);
    assert_eq!(active_user_count(&mut conn, a).await, 33);
    assert_eq!(user_count(&mut conn, b).await, 0);
    assert_eq!(active_user_count(&mut conn, b).await, 0);

    // (De)activation moves the active count, and only a change does.
    for sql in [
        "UPDATE users SET is_active = FALSE WHERE email IN ('p2@example.com', 'p3@example.com')",
        "UPDATE users SET is_active = FALSE WHERE email = 'p2@example.com'",
        "UPDATE users SET is_active = TRUE WHERE email = 'p7@example.com'",
        "UPDATE users SET first_name = 'Zed' WHERE email = 'p4@example.com'",
    ] {
        exec(&mut conn, sql).await;
    }
    assert_eq!(active_user_count(&mut conn, a).await, 32);
    assert_eq!(user_count(&mut conn, a).await, 39);
    let listed = repo
        .list_users(a, &UserFilter::default(), page(0, 100))
        .await
        .unwrap();
    assert_eq!((listed.count, listed.results.len()), (39, 39));

    // People never move between organizations: the counts could not follow them.
    let moved = diesel::sql_query(format!(
        "UPDATE users SET organization_id = '{}' WHERE organization_id = '{}'",
        b.0, a.0
    ))
    .execute(&mut conn)
    .await;
    assert!(moved.is_err());
    t.drop().await;
}

#[tokio::test]
async fn active_and_inactive_pages_follow_the_name_order_at_every_depth() {
    let t = TestDb::new().await;
    let repo = PgOrgRepository::new(t.db.clone());
    let mut conn = t.sql().await;
    let org = new_org(&repo, "Big").await;
    let other = new_org(&repo, "Other").await;
    seed_people(&mut conn, org, 700).await; // 100 inactive
    seed_people(&mut conn, other, 30).await;
    for active in [true, false] {
        let expected = ids_in_order(&mut conn, org, Some(active)).await;
        assert_eq!(expected.len(), if active { 600 } else { 100 });
        let filter = UserFilter {
            is_active: Some(active),
            ..UserFilter::default()
        };
        for (offset, limit) in [(0, 25), (90, 25), (249, 2), (250, 25), (590, 25), (700, 10)] {
            let got = repo
                .list_users(org, &filter, page(offset, limit))
                .await
                .unwrap();
            assert_eq!(
                got.count,
                expected.len() as u64,
                "count, active={active}, offset {offset}"
            );
            let ids: Vec<Uuid> = got.results.iter().map(|u| u.id.0).collect();
            let from = (offset as usize).min(expected.len());
            let to = (from + limit as usize).min(expected.len());
            assert_eq!(
                ids,
                expected[from..to],
                "page, active={active}, offset {offset}"
            );
            assert!(
                got.results
                    .iter()
                    .all(|u| u.is_active == active && u.org_id == org)
            );
        }
    }
    t.drop().await;
}

#[tokio::test]
async fn filtered_pages_count_what_matches() {
    let t = TestDb::new().await;
    let repo = PgOrgRepository::new(t.db.clone());
    let mut conn = t.sql().await;
    let org = new_org(&repo, "Org").await;
    let other = new_org(&repo, "Other").await;
    seed_people(&mut conn, org, 70).await; // 10 inactive: g = 7, 14, ..., 70
    seed_people(&mut conn, other, 70).await;

    let inactive = UserFilter {
        is_active: Some(false),
        ..UserFilter::default()
    };
    let first = repo.list_users(org, &inactive, page(0, 4)).await.unwrap();
    assert_eq!((first.count, first.results.len()), (10, 4));
    let last = repo.list_users(org, &inactive, page(8, 4)).await.unwrap();
    assert_eq!((last.count, last.results.len()), (10, 2));
    let past = repo.list_users(org, &inactive, page(12, 4)).await.unwrap();
    assert_eq!((past.count, past.results.len()), (10, 0));
    assert!(
        first
            .results
            .iter()
            .chain(&last.results)
            .all(|u| !u.is_active && u.org_id == org)
    );

    // Search: case-insensitive; LIKE wildcards are literal; the full name matches across the
    // space.
    let search = |s: &str| UserFilter {
        search: Some(s.into()),
        ..UserFilter::default()
    };
    let found = repo
        .list_users(org, &search("P7@"), page(0, 25))
        .await
        .unwrap();
    assert_eq!(found.count, 1);
    assert_eq!(found.results[0].email, "p7@example.com");
    let none = repo
        .list_users(org, &search("%"), page(0, 25))
        .await
        .unwrap();
    assert_eq!((none.count, none.results.len()), (0, 0));
    let full = repo
        .list_users(org, &search("ADA p3"), page(0, 100))
        .await
        .unwrap();
    assert!(full.count > 0);
    assert!(
        full.results
            .iter()
            .all(|u| u.first_name == "Ada" && u.last_name.starts_with("P3"))
    );
    t.drop().await;
}

#[tokio::test]
async fn team_pages_and_an_unknown_stored_role() {
    let t = TestDb::new().await;
    let orgs = PgOrgRepository::new(t.db.clone());
    let teams = PgTeamRepository::new(t.db.clone());
    let mut conn = t.sql().await;
    let org = new_org(&orgs, "Org").await;
    seed_people(&mut conn, org, 5).await;
    let people: Vec<UserId> = orgs
        .list_users(org, &UserFilter::default(), page(0, 10))
        .await
        .unwrap()
        .results
        .iter()
        .map(|u| u.id)
        .collect();
    for name in ["Core", "Design", "Ops"] {
        teams
            .create_team(org, TeamId::new(), name, &people[..3], &[])
            .await
            .unwrap();
    }
    let all = TeamFilter {
        member_of: None,
        include_archived: true,
        search: None,
    };
    let listed = teams.list_teams(org, &all, page(0, 2)).await.unwrap();
    assert_eq!(listed.count, 3);
    let names: Vec<&str> = listed.results.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Core", "Design"]);
    assert!(listed.results.iter().all(|t| t.members_count == 3));
    let core = listed.results[0].id;
    let members = teams.list_members(org, core, page(0, 2)).await.unwrap();
    assert_eq!((members.count, members.results.len()), (3, 2));

    // A role the domain does not know (written by hand or by a newer version) is an error, not
    // a plain member.
    exec(
        &mut conn,
        "ALTER TABLE team_members DROP CONSTRAINT team_members_role_check",
    )
    .await;
    exec(
        &mut conn,
        &format!(
            "UPDATE team_members SET role = 'owner' WHERE team_id = '{}' AND user_id = '{}'",
            core.0, people[0].0
        ),
    )
    .await;
    let err = teams
        .list_members(org, core, page(0, 10))
        .await
        .unwrap_err();
    assert!(matches!(err, RepoError::Other(m) if m.contains("team_members.role")));
    t.drop().await;
}
