//! In-memory implementations of the Plan ports, for unit tests and the contract suite: one
//! [`InMemoryPlan`] over one shared state implements every Plan port; each area keeps its part
//! of the state and its impl in its own module.

mod boards;
mod idempotency;
mod projects;
mod social;
mod tasks;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub use boards::BoardsMem;
pub use idempotency::IdempotencyMem;
pub use projects::ProjectsMem;
pub use social::SocialMem;
pub use tasks::TasksMem;

/// What the in-memory store holds, by area (an area may read another's part under the same
/// lock, as a transaction would).
#[derive(Debug, Default)]
pub struct PlanState {
    pub projects: ProjectsMem,
    pub boards: BoardsMem,
    pub tasks: TasksMem,
    pub social: SocialMem,
    pub idempotency: IdempotencyMem,
}

/// Every Plan port over one shared in-memory state.
#[derive(Clone)]
pub struct InMemoryPlan {
    pub state: Arc<Mutex<PlanState>>,
    /// The organizations and people rows refer to (a write naming an unknown one fails, as
    /// the foreign keys make it fail in Postgres).
    pub people: Arc<teamcomm_org::testing::InMemoryOrgRepository>,
    /// How many times the state was locked ([`Self::visits`]).
    visits: Arc<AtomicUsize>,
}

impl InMemoryPlan {
    pub fn new(people: Arc<teamcomm_org::testing::InMemoryOrgRepository>) -> InMemoryPlan {
        InMemoryPlan {
            state: Arc::default(),
            people,
            visits: Arc::default(),
        }
    }

    /// The state, locked (a poisoned lock is taken over: a test that panicked holding it
    /// already failed).
    pub fn lock(&self) -> std::sync::MutexGuard<'_, PlanState> {
        self.visits.fetch_add(1, Ordering::Relaxed);
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many times the state was locked: once per read of a port (a write may lock it
    /// more), as a statement or a transaction of the Postgres store. What a test counts to
    /// show that a page's reads do not grow with the page.
    pub fn visits(&self) -> usize {
        self.visits.load(Ordering::Relaxed)
    }
}

/// A `Plan` service over in-memory ports, with an organization that has the beta, for unit
/// tests: `let w = World::new().await; w.plan.create_board(&w.admin, …)`.
pub struct World {
    pub plan: crate::Plan,
    pub mem: InMemoryPlan,
    pub org_ports: teamcomm_org::testing::InMemoryOrgPorts,
    pub labels: Arc<teamcomm_labels::testing::InMemoryLabelRepository>,
    pub clock: Arc<teamcomm_org::testing::FixedClock>,
    pub org: Arc<teamcomm_org::Organization>,
    /// An organization admin acting as themselves.
    pub admin: crate::PlanActor,
    /// A member acting as themselves.
    pub member: crate::PlanActor,
}

impl World {
    /// A paid (`business`) organization.
    pub async fn new() -> World {
        World::on_tier("business").await
    }

    /// An organization on the given plan tier (`free`, `business`…), for the rules that
    /// depend on it.
    pub async fn on_tier(tier: &str) -> World {
        use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Role};
        let clock = Arc::new(teamcomm_org::testing::FixedClock::new(
            time::macros::datetime!(2026-11-26 10:00 UTC),
        ));
        let org_ports = teamcomm_org::testing::InMemoryOrgPorts::new(clock.clone());
        let org = org_ports
            .people
            .create_organization(
                &NewOrganization::new("Org", tier, Some(true), Some(true), None)
                    .expect("valid organization"),
            )
            .await
            .expect("organization");
        let org = Arc::new(org);
        let person = |role: Role, email: &str| NewUser {
            email: email.to_owned(),
            first_name: "Test".to_owned(),
            last_name: role.as_str().to_owned(),
            role,
            is_active: true,
        };
        let admin = org_ports
            .people
            .create_user(org.id, &person(Role::Admin, "admin@example.com"))
            .await
            .expect("admin");
        let member = org_ports
            .people
            .create_user(org.id, &person(Role::Member, "member@example.com"))
            .await
            .expect("member");
        let labels = Arc::new(teamcomm_labels::testing::InMemoryLabelRepository::new(
            org_ports.people.clone(),
        ));
        let mem = InMemoryPlan::new(org_ports.people.clone());
        let plan = plan_over(&mem, &org_ports, &labels, &clock, Arc::new(mem.clone()));
        let actor = |user| crate::PlanActor {
            org: org.clone(),
            person: Some(user),
            scopes: crate::PlanScopes::ALL,
            agent_name: None,
        };
        World {
            admin: actor(admin),
            member: actor(member),
            plan,
            mem,
            org_ports,
            labels,
            clock,
            org,
        }
    }

    /// Another `Plan` service over this world's store whose boards port is `boards` (a
    /// decorator of [`Self::mem`], say).
    pub fn plan_with_boards(&self, boards: Arc<dyn crate::ports::BoardRepository>) -> crate::Plan {
        plan_over(
            &self.mem,
            &self.org_ports,
            &self.labels,
            &self.clock,
            boards,
        )
    }

    /// A team of the organization ("Team") with these members.
    pub async fn team(&self, members: &[teamcomm_kernel::UserId]) -> teamcomm_org::Team {
        use teamcomm_org::TeamRepository;
        self.org_ports
            .teams
            .create_team(
                self.org.id,
                teamcomm_kernel::TeamId::new(),
                "Team",
                members,
                &[],
            )
            .await
            .expect("team")
    }

    /// Another person of the organization acting as themselves.
    pub async fn person(&self, role: teamcomm_org::Role, email: &str) -> crate::PlanActor {
        use teamcomm_org::{NewUser, OrgRepository};
        let user = self
            .org_ports
            .people
            .create_user(
                self.org.id,
                &NewUser {
                    email: email.to_owned(),
                    first_name: "Test".to_owned(),
                    last_name: role.as_str().to_owned(),
                    role,
                    is_active: true,
                },
            )
            .await
            .expect("person");
        crate::PlanActor {
            org: self.org.clone(),
            person: Some(user),
            scopes: crate::PlanScopes::ALL,
            agent_name: None,
        }
    }

    /// A board keyed `key` ("Board KEY") on a project of its own ("Project KEY"), both made
    /// by the admin.
    pub async fn board(&self, key: &str) -> crate::Board {
        let project = self
            .plan
            .create_project(
                &self.admin,
                crate::projects::NewProject::named(&format!("Project {key}")),
            )
            .await
            .expect("project");
        self.plan
            .create_board(
                &self.admin,
                crate::boards::NewBoard {
                    name: format!("Board {key}"),
                    project: project.id,
                    key: key.to_owned(),
                },
            )
            .await
            .expect("board")
    }

    /// An organization or agent key: no person, with these scopes.
    pub fn key(&self, scopes: crate::PlanScopes) -> crate::PlanActor {
        crate::PlanActor {
            org: self.org.clone(),
            person: None,
            scopes,
            agent_name: None,
        }
    }
}

/// A `Plan` service over the in-memory store, with `boards` as its boards port.
fn plan_over(
    mem: &InMemoryPlan,
    org_ports: &teamcomm_org::testing::InMemoryOrgPorts,
    labels: &Arc<teamcomm_labels::testing::InMemoryLabelRepository>,
    clock: &Arc<teamcomm_org::testing::FixedClock>,
    boards: Arc<dyn crate::ports::BoardRepository>,
) -> crate::Plan {
    crate::Plan::new(crate::PlanPorts {
        projects: Arc::new(mem.clone()),
        boards,
        tasks: Arc::new(mem.clone()),
        social: Arc::new(mem.clone()),
        idempotency: Arc::new(mem.clone()),
        people: org_ports.people.clone(),
        teams: org_ports.teams.clone(),
        labels: labels.clone(),
        clock: clock.clone(),
    })
}
