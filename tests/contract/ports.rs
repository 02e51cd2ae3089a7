//! The ports under contract, built over one store: in memory, or a fresh Postgres database.

use std::sync::Arc;
use std::time::Duration;

use diesel::sql_types::{Bool, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_cache::{OrgSnapshotCache, PeoplePageCache};
use teamcomm_forms::testing::InMemoryTemplateRepository;
use teamcomm_forms::{Template, TemplateRepository};
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::{Event, EventType, OrgId, RepoError};
use teamcomm_keys::testing::{InMemoryKeyRepository, UncachedOrgSnapshots};
use teamcomm_keys::{KeyRepository, OrgSnapshots};
use teamcomm_kudos::KudosRepository;
use teamcomm_kudos::testing::InMemoryKudosRepository;
use teamcomm_labels::testing::InMemoryLabelPorts;
use teamcomm_labels::{FeaturedRepository, LabelRepository, LabelledEntities};
use teamcomm_messaging::ChannelRepository;
use teamcomm_messaging::testing::InMemoryChannelRepository;
use teamcomm_org::testing::InMemoryOrgPorts;
use teamcomm_org::{
    InvitationRepository, MoodRepository, NewOrganization, NewUser, OrgRepository, Organization,
    TeamRepository, User,
};
use teamcomm_store_pg::PgKudosRepository;
use teamcomm_store_pg::{
    Database, PgChannelRepository, PgInvitationRepository, PgKeyRepository, PgMoodRepository,
    PgOrgRepository, PgTeamRepository, PgTemplateRepository,
};
use teamcomm_store_pg::{PgFeaturedRepository, PgLabelRepository, PgLabelledEntities};
use teamcomm_tests::TestDb;
use teamcomm_webhooks::WebhookRepository;
use teamcomm_webhooks::testing::InMemoryWebhookRepository;

/// Every port, over one store.
pub struct Ports {
    pub orgs: Arc<dyn OrgRepository>,
    pub teams: Arc<dyn TeamRepository>,
    pub invitations: Arc<dyn InvitationRepository>,
    pub moods: Arc<dyn MoodRepository>,
    pub templates: Arc<dyn TemplateRepository>,
    pub channels: Arc<dyn ChannelRepository>,
    pub keys: Arc<dyn KeyRepository>,
    pub labels: Arc<dyn LabelRepository>,
    pub featured: Arc<dyn FeaturedRepository>,
    pub labelled_entities: Arc<dyn LabelledEntities>,
    pub kudos: Arc<dyn KudosRepository>,
    pub forms: crate::forms::FormPorts,
    pub checkins: crate::checkins::CheckinPorts,
    pub jobs: crate::jobs::JobPorts,
    pub rounds: crate::rounds::RoundPorts,
    pub messaging: crate::messaging::MessagingPorts,
    pub webhooks: Arc<dyn WebhookRepository>,
    /// Deliveries over the same store as `webhooks`.
    pub webhook_deliveries: crate::webhooks::deliveries::DeliveryPorts,
    pub workflows: crate::workflows::WorkflowPorts,
    /// Organization snapshots as the plan gate reads them.
    pub snapshots: Arc<dyn OrgSnapshots>,
    /// The Plan area's ports, over the same organizations and people.
    pub plan: crate::plan::PlanStores,
    store: Store,
}

/// What the ports cannot do themselves: write templates (no port writes them yet), and read
/// back the events they recorded (the outbox).
enum Store {
    Memory(Arc<InMemoryTemplateRepository>, RecordedEvents),
    /// Dropped after the pool's users: the database goes last.
    Postgres(TestDb),
}

impl Ports {
    pub fn in_memory() -> Ports {
        let org = InMemoryOrgPorts::new(Arc::new(teamcomm_kernel::SystemClock));
        let templates = Arc::new(InMemoryTemplateRepository::new());
        let labels = InMemoryLabelPorts::new(org.people.clone());
        let events = org.events.clone();
        let people = org.people.clone();
        let channels = Arc::new(
            InMemoryChannelRepository::new().with_organizations(move |id| people.org_exists(id)),
        );
        let webhooks = Arc::new(InMemoryWebhookRepository::new());
        let checkins = crate::checkins::CheckinPorts::in_memory(
            org.people.clone(),
            org.teams.clone(),
            channels.clone(),
            events.clone(),
        );
        Ports {
            keys: Arc::new(InMemoryKeyRepository::new(org.people.clone())),
            rounds: crate::rounds::RoundPorts::in_memory(
                &checkins,
                org.people.clone(),
                events.clone(),
            ),
            checkins,
            forms: crate::forms::FormPorts::in_memory(org.people.clone()),
            jobs: crate::jobs::JobPorts::in_memory(),
            messaging: crate::messaging::MessagingPorts::in_memory(org.people.clone()),
            webhook_deliveries: crate::webhooks::deliveries::DeliveryPorts::in_memory(
                webhooks.clone(),
            ),
            webhooks,
            workflows: crate::workflows::WorkflowPorts::in_memory(),
            labels: labels.labels,
            featured: labels.featured,
            labelled_entities: labels.entities,
            kudos: Arc::new(InMemoryKudosRepository::new(org.people.clone())),
            snapshots: Arc::new(UncachedOrgSnapshots::new(org.people.clone())),
            plan: crate::plan::PlanStores::in_memory(org.people.clone()),
            orgs: org.people,
            teams: org.teams,
            invitations: org.invitations,
            moods: org.moods,
            templates: templates.clone(),
            channels,
            store: Store::Memory(templates, events),
        }
    }

    pub async fn postgres() -> Ports {
        Ports::over_postgres(|orgs| {
            let snapshots: Arc<dyn OrgSnapshots> =
                Arc::new(UncachedOrgSnapshots::new(orgs.clone()));
            (orgs, snapshots)
        })
        .await
    }

    /// Postgres behind the cache decorators, composed as the app composes them
    /// (`crates/api/src/state.rs`), with time-to-lives far longer than a test.
    pub async fn postgres_cached() -> Ports {
        Ports::over_postgres(|orgs| {
            let ttl = Duration::from_secs(600);
            let pages: Arc<dyn OrgRepository> = Arc::new(PeoplePageCache::new(orgs, ttl));
            let cached = Arc::new(OrgSnapshotCache::new(pages, ttl));
            (
                cached.clone() as Arc<dyn OrgRepository>,
                cached as Arc<dyn OrgSnapshots>,
            )
        })
        .await
    }

    /// The Postgres adapters on a fresh database; `wrap` decorates the organization repository.
    async fn over_postgres(
        wrap: impl FnOnce(Arc<dyn OrgRepository>) -> (Arc<dyn OrgRepository>, Arc<dyn OrgSnapshots>),
    ) -> Ports {
        let db = TestDb::new().await;
        let database = Database::connect(&db.url, 4).expect("pool");
        let (orgs, snapshots) = wrap(Arc::new(PgOrgRepository::new(database.clone())));
        let webhook_endpoints = teamcomm_store_pg::PgWebhookRepository::new(
            database.clone(),
            teamcomm_store_pg::PlatformSecretKey::derive(&[7; 32]).expect("a long key"),
        );
        Ports {
            orgs,
            snapshots,
            teams: Arc::new(PgTeamRepository::new(database.clone())),
            invitations: Arc::new(PgInvitationRepository::new(database.clone())),
            moods: Arc::new(PgMoodRepository::new(database.clone())),
            templates: Arc::new(PgTemplateRepository::new(database.clone())),
            channels: Arc::new(PgChannelRepository::new(database.clone())),
            labels: Arc::new(PgLabelRepository::new(database.clone())),
            featured: Arc::new(PgFeaturedRepository::new(database.clone())),
            labelled_entities: Arc::new(PgLabelledEntities::new(database.clone())),
            kudos: Arc::new(PgKudosRepository::new(database.clone())),
            forms: crate::forms::FormPorts::postgres(database.clone(), &db.url),
            checkins: crate::checkins::CheckinPorts::postgres(database.clone(), &db.url),
            jobs: crate::jobs::JobPorts::postgres(database.clone(), &db.url),
            rounds: crate::rounds::RoundPorts::postgres(database.clone(), &db.url),
            messaging: crate::messaging::MessagingPorts::postgres(database.clone(), &db.url),
            workflows: crate::workflows::WorkflowPorts::postgres(database.clone()),
            webhooks: Arc::new(webhook_endpoints.clone()),
            webhook_deliveries: crate::webhooks::deliveries::DeliveryPorts::postgres(
                database.clone(),
                webhook_endpoints,
                &db.url,
            ),
            plan: crate::plan::PlanStores::postgres(database.clone()),
            keys: Arc::new(PgKeyRepository::new(database)),
            store: Store::Postgres(db),
        }
    }

    /// Stores a template as the store would hold it (Postgres: a row, as the migration seeds).
    pub async fn insert_template(&self, t: &Template) {
        match &self.store {
            Store::Memory(repo, _) => repo.insert(t.clone()),
            Store::Postgres(db) => {
                let mut conn = AsyncPgConnection::establish(&db.url)
                    .await
                    .expect("connect");
                diesel::sql_query(
                    "INSERT INTO templates (id, organization_id, name, template_type, system_default, \
                     description, intro_message, outro_message, questions, created_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind::<SqlUuid, _>(t.id)
                .bind::<Nullable<SqlUuid>, _>(t.org_id.map(|o| o.0))
                .bind::<Text, _>(&t.name)
                .bind::<Text, _>(t.template_type.as_str())
                .bind::<Bool, _>(t.system_default)
                .bind::<Text, _>(&t.description)
                .bind::<Text, _>(&t.intro_message)
                .bind::<Text, _>(&t.outro_message)
                .bind::<Jsonb, _>(serde_json::Value::Array(t.questions.clone()))
                .bind::<Timestamptz, _>(t.created_at)
                .execute(&mut conn)
                .await
                .expect("insert a template");
            }
        }
    }

    /// The payloads of every event the ports recorded, oldest first (Postgres: the outbox).
    pub async fn recorded_events(&self) -> Vec<serde_json::Value> {
        match &self.store {
            Store::Memory(_, events) => events.all().iter().map(Event::payload).collect(),
            Store::Postgres(db) => {
                #[derive(diesel::QueryableByName)]
                struct Row {
                    #[diesel(sql_type = Jsonb)]
                    payload: serde_json::Value,
                }
                let mut conn = AsyncPgConnection::establish(&db.url)
                    .await
                    .expect("connect");
                let rows: Vec<Row> =
                    diesel::sql_query("SELECT payload FROM outbox_events ORDER BY id")
                        .load(&mut conn)
                        .await
                        .expect("read the outbox");
                rows.into_iter().map(|r| r.payload).collect()
            }
        }
    }

    // ---------------------------------------------------------------- shared fixtures

    /// A new organization on a paid plan.
    pub async fn org(&self, name: &str) -> Organization {
        let new = NewOrganization::new(name, "business", None, None, None).expect("valid");
        self.orgs
            .create_organization(&new)
            .await
            .expect("create org")
    }

    /// A new active member of `org`.
    pub async fn user(&self, org: &Organization, email: &str, first: &str, last: &str) -> User {
        let new = NewUser::new(email, first, last, "member", None).expect("valid");
        self.orgs
            .create_user(org.id, &new)
            .await
            .expect("create user")
    }
}

/// An event of `org` to hand a port; `mark` tells it from others in assertions.
pub fn event(org: OrgId, event_type: EventType, mark: &str) -> Event {
    Event::new(
        org,
        event_type,
        None,
        micros(time::OffsetDateTime::now_utc()),
        serde_json::json!({ "mark": mark }),
    )
}

/// Asserts a conflict on the named constraint (the in-memory adapters name Postgres's).
#[track_caller]
pub fn assert_conflict<T: std::fmt::Debug>(result: Result<T, RepoError>, constraint: &str) {
    match result {
        Err(RepoError::Conflict { constraint: c }) => assert_eq!(c, constraint),
        other => panic!("expected a conflict on {constraint}, got {other:?}"),
    }
}

#[track_caller]
pub fn assert_not_found<T: std::fmt::Debug>(result: Result<T, RepoError>) {
    assert!(
        matches!(result, Err(RepoError::NotFound)),
        "expected NotFound, got {result:?}"
    );
}

/// Asserts a refusal by one of the table's CHECK constraints (Postgres reports it as an
/// unexpected error: the domain validates first).
#[track_caller]
pub fn assert_refused_by_check<T: std::fmt::Debug>(result: Result<T, RepoError>) {
    assert!(
        matches!(result, Err(RepoError::Other(_))),
        "expected the table's CHECK to refuse, got {result:?}"
    );
}

/// Microsecond precision, what Postgres keeps.
pub fn micros(at: time::OffsetDateTime) -> time::OffsetDateTime {
    at.replace_nanosecond(at.nanosecond() / 1_000 * 1_000)
        .expect("valid")
}
