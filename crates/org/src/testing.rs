//! In-memory implementations of the organization ports, for rule tests and the port contract
//! suite. They follow the Postgres adapter (`crates/store-pg/src/repo/`) observably: the same
//! ordering (byte-wise, as the database's C collation), organization scoping (`NotFound`), the
//! same unique and foreign-key refusals (`Conflict` with the constraint's name), the schema's
//! CHECK constraints (`Other`) and the same paging counts. The team, invitation and mood repositories hold the organization repository
//! because their rows refer to its organizations and people. Events go to the organization
//! repository's [`RecordedEvents`] (the outbox), under the same lock as the change they report.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::{
    Clock, Event, OrgId, Page, PageRequest, RepoError, SharedClock, SystemClock, TeamId, UserId,
};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::{
    Invitation, InvitationKind, InvitationRepository, MoodEntry, MoodRepository, NewInvitation,
    NewOrganization, NewUser, OrgRepository, Organization, OrganizationPatch, ProfilePatch, Team,
    TeamFilter, TeamMember, TeamRepository, TeamRole, User, UserFilter, UserPatch,
};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test must not poison the store for the assertions that report it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn conflict(constraint: &str) -> RepoError {
    RepoError::Conflict {
        constraint: constraint.to_owned(),
    }
}

/// A CHECK constraint of the schema refusing the row (the adapter reports it as `Other`).
fn check_violation(constraint: &str) -> RepoError {
    RepoError::Other(format!("violates check constraint {constraint}"))
}

/// The schema's `CHECK (length(column) BETWEEN 1 AND max)`, counted in characters.
fn check_length(constraint: &str, value: &str, max: usize) -> Result<(), RepoError> {
    if (1..=max).contains(&value.chars().count()) {
        Ok(())
    } else {
        Err(check_violation(constraint))
    }
}

/// The schema's `CHECK (birth_date ~ '^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$')`.
fn check_birth_date(birth_date: &str) -> Result<(), RepoError> {
    let well_formed = birth_date.split_once('-').is_some_and(|(m, d)| {
        let in_range = |part: &str, max: u8| {
            part.len() == 2
                && part.bytes().all(|b| b.is_ascii_digit())
                && part.parse::<u8>().is_ok_and(|n| (1..=max).contains(&n))
        };
        in_range(m, 12) && in_range(d, 31)
    });
    if well_formed {
        Ok(())
    } else {
        Err(check_violation("users_birth_date_check"))
    }
}

/// One page of an already filtered and ordered list, counted before slicing.
fn page_of<T>(rows: Vec<T>, page: PageRequest) -> Page<T> {
    let count = rows.len() as u64;
    let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
    Page {
        count,
        results: rows.into_iter().skip(offset).take(limit).collect(),
    }
}

/// What SQL `ILIKE '%fragment%'` answers (wildcards in the fragment are escaped there).
pub fn ilike_contains(haystack: &str, fragment: &str) -> bool {
    haystack.to_lowercase().contains(&fragment.to_lowercase())
}

fn by_name(a: &User, b: &User) -> std::cmp::Ordering {
    (&a.first_name, &a.last_name, a.id).cmp(&(&b.first_name, &b.last_name, b.id))
}

/// Organizations and their people.
pub struct InMemoryOrgRepository {
    clock: SharedClock,
    orgs: Mutex<HashMap<OrgId, Organization>>,
    users: Mutex<HashMap<UserId, User>>,
    /// The outbox of this repository and of those built on it.
    events: RecordedEvents,
    /// Reads of people by id through the port ([`Self::reads_by_id`]).
    reads_by_id: AtomicUsize,
}

impl Default for InMemoryOrgRepository {
    fn default() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }
}

impl InMemoryOrgRepository {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stamps `created_at` from `clock` (this repository's and those built on it).
    pub fn with_clock(clock: SharedClock) -> Self {
        InMemoryOrgRepository {
            clock,
            orgs: Mutex::new(HashMap::new()),
            users: Mutex::new(HashMap::new()),
            events: RecordedEvents::default(),
            reads_by_id: AtomicUsize::new(0),
        }
    }

    /// How many times people were read by id through the port (`get_user`, `find_user`,
    /// `users_by_ids`): what a test counts to show a page reads its people at once.
    pub fn reads_by_id(&self) -> usize {
        self.reads_by_id.load(Ordering::Relaxed)
    }

    /// Records events into `events` (an outbox shared with other in-memory ports).
    pub fn with_events(mut self, events: RecordedEvents) -> Self {
        self.events = events;
        self
    }

    /// The events recorded by this repository and those built on it.
    pub fn events(&self) -> &RecordedEvents {
        &self.events
    }

    fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    /// True when the organization exists (for in-memory adapters of other domains, whose rows
    /// reference organizations the way foreign keys do in Postgres).
    pub fn org_exists(&self, id: OrgId) -> bool {
        lock(&self.orgs).contains_key(&id)
    }

    /// The person, in any organization.
    fn user(&self, id: UserId) -> Option<User> {
        lock(&self.users).get(&id).cloned()
    }
}

#[async_trait]
impl OrgRepository for InMemoryOrgRepository {
    async fn create_organization(&self, new: &NewOrganization) -> Result<Organization, RepoError> {
        check_length("organizations_name_check", &new.name, 200)?;
        let org = Organization {
            id: OrgId::new(),
            name: new.name.clone(),
            plan: new.plan,
            api_access: new.api_access,
            plan_beta: new.plan_beta,
            exchange_tokens: new.exchange_tokens,
            timezone: "UTC".to_owned(),
            platform: new.platform.clone(),
            created_at: self.now(),
        };
        lock(&self.orgs).insert(org.id, org.clone());
        Ok(org)
    }

    async fn update_organization(
        &self,
        id: OrgId,
        patch: &OrganizationPatch,
    ) -> Result<Organization, RepoError> {
        if let Some(name) = &patch.name {
            check_length("organizations_name_check", name, 200)?;
        }
        let mut orgs = lock(&self.orgs);
        let org = orgs.get_mut(&id).ok_or(RepoError::NotFound)?;
        if let Some(name) = &patch.name {
            org.name.clone_from(name);
        }
        if let Some(plan) = patch.plan {
            org.plan = plan;
        }
        if let Some(v) = patch.api_access {
            org.api_access = v;
        }
        if let Some(v) = patch.plan_beta {
            org.plan_beta = v;
        }
        if let Some(v) = patch.exchange_tokens {
            org.exchange_tokens = v;
        }
        if let Some(p) = &patch.platform {
            org.platform = p.clone();
        }
        Ok(org.clone())
    }

    async fn get_organization(&self, id: OrgId) -> Result<Organization, RepoError> {
        lock(&self.orgs)
            .get(&id)
            .cloned()
            .ok_or(RepoError::NotFound)
    }

    async fn is_empty(&self) -> Result<bool, RepoError> {
        Ok(lock(&self.orgs).is_empty())
    }

    async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, RepoError> {
        if !self.org_exists(org) {
            return Err(conflict("users_organization_id_fkey"));
        }
        let mut users = lock(&self.users);
        if users
            .values()
            .any(|u| u.org_id == org && u.email.to_lowercase() == new.email.to_lowercase())
        {
            return Err(conflict("users_org_email_key"));
        }
        let user = User {
            id: UserId::new(),
            org_id: org,
            email: new.email.clone(),
            first_name: new.first_name.clone(),
            last_name: new.last_name.clone(),
            role: new.role,
            is_active: new.is_active,
            timezone: "UTC".to_owned(),
            occupation: String::new(),
            image: None,
            birth_date: None,
            work_anniversary: None,
            created_at: self.now(),
        };
        users.insert(user.id, user.clone());
        Ok(user)
    }

    async fn update_user(
        &self,
        id: UserId,
        patch: &UserPatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError> {
        let mut users = lock(&self.users);
        let user = users.get_mut(&id).ok_or(RepoError::NotFound)?;
        let was_active = user.is_active;
        patch.apply_to(user);
        if user.is_active != was_active {
            self.events.record(activation_events.iter().cloned());
        }
        Ok(user.clone())
    }

    async fn find_user(&self, id: UserId) -> Result<User, RepoError> {
        self.reads_by_id.fetch_add(1, Ordering::Relaxed);
        self.user(id).ok_or(RepoError::NotFound)
    }

    async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, RepoError> {
        self.reads_by_id.fetch_add(1, Ordering::Relaxed);
        self.user(id)
            .filter(|u| u.org_id == org)
            .ok_or(RepoError::NotFound)
    }

    async fn users_by_ids(&self, org: OrgId, ids: &[UserId]) -> Result<Vec<User>, RepoError> {
        self.reads_by_id.fetch_add(1, Ordering::Relaxed);
        let users = lock(&self.users);
        let mut found: Vec<User> = users
            .values()
            .filter(|u| u.org_id == org && ids.contains(&u.id))
            .cloned()
            .collect();
        found.sort_by_key(|u| u.id);
        Ok(found)
    }

    async fn list_users(
        &self,
        org: OrgId,
        filter: &UserFilter,
        page: PageRequest,
    ) -> Result<Page<User>, RepoError> {
        let mut rows: Vec<User> = lock(&self.users)
            .values()
            .filter(|u| u.org_id == org)
            .filter(|u| filter.is_active.is_none_or(|a| u.is_active == a))
            .filter(|u| {
                filter.search.as_deref().is_none_or(|s| {
                    ilike_contains(&u.first_name, s)
                        || ilike_contains(&u.last_name, s)
                        || ilike_contains(&u.email, s)
                        || ilike_contains(&format!("{} {}", u.first_name, u.last_name), s)
                })
            })
            .cloned()
            .collect();
        rows.sort_by(by_name);
        Ok(page_of(rows, page))
    }

    async fn find_users_by_email(
        &self,
        org: OrgId,
        emails: &[String],
    ) -> Result<Vec<User>, RepoError> {
        Ok(lock(&self.users)
            .values()
            .filter(|u| u.org_id == org && emails.contains(&u.email))
            .cloned()
            .collect())
    }

    async fn update_profile(
        &self,
        org: OrgId,
        id: UserId,
        patch: &ProfilePatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError> {
        if let Some(Some(birth_date)) = &patch.birth_date {
            check_birth_date(birth_date)?;
        }
        let mut users = lock(&self.users);
        let user = users
            .get_mut(&id)
            .filter(|u| u.org_id == org)
            .ok_or(RepoError::NotFound)?;
        let was_active = user.is_active;
        patch.apply_to(user);
        if user.is_active != was_active {
            self.events.record(activation_events.iter().cloned());
        }
        Ok(user.clone())
    }

    async fn users_with_important_dates(&self, org: OrgId) -> Result<Vec<User>, RepoError> {
        let mut rows: Vec<User> = lock(&self.users)
            .values()
            .filter(|u| u.org_id == org)
            .filter(|u| u.birth_date.is_some() || u.work_anniversary.is_some())
            .cloned()
            .collect();
        rows.sort_by(by_name);
        Ok(rows)
    }
}

struct StoredTeam {
    id: TeamId,
    org_id: OrgId,
    name: String,
    active: bool,
    created_at: OffsetDateTime,
}

struct Membership {
    team: TeamId,
    user: UserId,
    role: TeamRole,
    joined_at: OffsetDateTime,
}

#[derive(Default)]
struct TeamState {
    teams: HashMap<TeamId, StoredTeam>,
    /// In insertion order; (team, user) is unique.
    members: Vec<Membership>,
}

impl TeamState {
    fn view(&self, t: &StoredTeam) -> Team {
        Team {
            id: t.id,
            org_id: t.org_id,
            name: t.name.clone(),
            active: t.active,
            is_default: false,
            members_count: self.members.iter().filter(|m| m.team == t.id).count() as u64,
            created_at: t.created_at,
        }
    }
}

/// Teams and memberships, over the people of an [`InMemoryOrgRepository`].
pub struct InMemoryTeamRepository {
    people: Arc<InMemoryOrgRepository>,
    state: Mutex<TeamState>,
}

impl InMemoryTeamRepository {
    pub fn new(people: Arc<InMemoryOrgRepository>) -> Self {
        InMemoryTeamRepository {
            people,
            state: Mutex::new(TeamState::default()),
        }
    }

    /// The membership with its person, when that person belongs to `org`.
    fn member(&self, org: OrgId, team: TeamId, user: UserId) -> Result<TeamMember, RepoError> {
        let state = lock(&self.state);
        let m = state
            .members
            .iter()
            .find(|m| m.team == team && m.user == user)
            .ok_or(RepoError::NotFound)?;
        let person = self
            .people
            .user(user)
            .filter(|u| u.org_id == org)
            .ok_or(RepoError::NotFound)?;
        Ok(TeamMember {
            team_id: team,
            user: person,
            role: m.role,
            joined_at: m.joined_at,
        })
    }
}

#[async_trait]
impl TeamRepository for InMemoryTeamRepository {
    async fn create_team(
        &self,
        org: OrgId,
        id: TeamId,
        name: &str,
        members: &[UserId],
        joined: &[Event],
    ) -> Result<Team, RepoError> {
        check_length("teams_name_check", name, 200)?;
        if !self.people.org_exists(org) {
            return Err(conflict("teams_organization_id_fkey"));
        }
        let now = self.people.now();
        let mut state = lock(&self.state);
        if state.teams.contains_key(&id) {
            return Err(conflict("teams_pkey"));
        }
        let team = StoredTeam {
            id,
            org_id: org,
            name: name.to_owned(),
            active: true,
            created_at: now,
        };
        let mut joining: Vec<UserId> = Vec::new();
        for m in members {
            if !joining.contains(m) && self.people.user(*m).is_some_and(|u| u.org_id == org) {
                joining.push(*m);
            }
        }
        state
            .members
            .extend(joining.into_iter().map(|user| Membership {
                team: team.id,
                user,
                role: TeamRole::Member,
                joined_at: now,
            }));
        let view = state.view(&team);
        state.teams.insert(team.id, team);
        self.people.events.record(joined.iter().cloned());
        Ok(view)
    }

    async fn update_team(
        &self,
        org: OrgId,
        id: TeamId,
        name: Option<&str>,
        active: Option<bool>,
    ) -> Result<Team, RepoError> {
        if let Some(name) = name {
            check_length("teams_name_check", name, 200)?;
        }
        let mut state = lock(&self.state);
        let team = state
            .teams
            .get_mut(&id)
            .filter(|t| t.org_id == org)
            .ok_or(RepoError::NotFound)?;
        if let Some(name) = name {
            name.clone_into(&mut team.name);
        }
        if let Some(active) = active {
            team.active = active;
        }
        let team = &state.teams[&id];
        Ok(state.view(team))
    }

    async fn get_team(&self, org: OrgId, id: TeamId) -> Result<Team, RepoError> {
        let state = lock(&self.state);
        let team = state
            .teams
            .get(&id)
            .filter(|t| t.org_id == org)
            .ok_or(RepoError::NotFound)?;
        Ok(state.view(team))
    }

    async fn list_teams(
        &self,
        org: OrgId,
        filter: &TeamFilter,
        page: PageRequest,
    ) -> Result<Page<Team>, RepoError> {
        let state = lock(&self.state);
        let mut rows: Vec<Team> = state
            .teams
            .values()
            .filter(|t| t.org_id == org)
            .filter(|t| filter.include_archived || t.active)
            .filter(|t| {
                filter.member_of.is_none_or(|user| {
                    state
                        .members
                        .iter()
                        .any(|m| m.team == t.id && m.user == user)
                })
            })
            .filter(|t| {
                filter
                    .search
                    .as_deref()
                    .is_none_or(|s| ilike_contains(&t.name, s))
            })
            .map(|t| state.view(t))
            .collect();
        rows.sort_by(|a, b| (&a.name, a.id).cmp(&(&b.name, b.id)));
        Ok(page_of(rows, page))
    }

    async fn is_member(&self, team: TeamId, user: UserId) -> Result<bool, RepoError> {
        Ok(lock(&self.state)
            .members
            .iter()
            .any(|m| m.team == team && m.user == user))
    }

    async fn list_members(
        &self,
        org: OrgId,
        team: TeamId,
        page: PageRequest,
    ) -> Result<Page<TeamMember>, RepoError> {
        let mut rows: Vec<TeamMember> = lock(&self.state)
            .members
            .iter()
            .filter(|m| m.team == team)
            .filter_map(|m| {
                let user = self.people.user(m.user).filter(|u| u.org_id == org)?;
                Some(TeamMember {
                    team_id: team,
                    user,
                    role: m.role,
                    joined_at: m.joined_at,
                })
            })
            .collect();
        rows.sort_by(|a, b| by_name(&a.user, &b.user));
        Ok(page_of(rows, page))
    }

    async fn get_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
    ) -> Result<TeamMember, RepoError> {
        self.member(org, team, user)
    }

    /// Like the adapter: the row is written whenever team and person exist (in any
    /// organization); reading it back is what is scoped to `org`.
    async fn put_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
        role: Option<TeamRole>,
        added: &Event,
    ) -> Result<(TeamMember, bool), RepoError> {
        let added = {
            let mut state = lock(&self.state);
            // Like the adapter: the team and the person must both be of `org`, else nothing is
            // written and the answer is `NotFound`.
            if state.teams.get(&team).is_none_or(|t| t.org_id != org)
                || self.people.user(user).is_none_or(|u| u.org_id != org)
            {
                return Err(RepoError::NotFound);
            }
            match state
                .members
                .iter_mut()
                .find(|m| m.team == team && m.user == user)
            {
                Some(existing) => {
                    if let Some(role) = role {
                        existing.role = role;
                    }
                    false
                }
                None => {
                    state.members.push(Membership {
                        team,
                        user,
                        role: role.unwrap_or(TeamRole::Member),
                        joined_at: self.people.now(),
                    });
                    self.people.events.record([added.clone()]);
                    true
                }
            }
        };
        Ok((self.member(org, team, user)?, added))
    }

    async fn remove_member(
        &self,
        org: OrgId,
        team: TeamId,
        user: UserId,
        removed: &Event,
    ) -> Result<(), RepoError> {
        let mut state = lock(&self.state);
        if state.teams.get(&team).is_none_or(|t| t.org_id != org) {
            return Err(RepoError::NotFound);
        }
        let before = state.members.len();
        state
            .members
            .retain(|m| !(m.team == team && m.user == user));
        if state.members.len() == before {
            Err(RepoError::NotFound)
        } else {
            self.people.events.record([removed.clone()]);
            Ok(())
        }
    }
}

/// Pending invitations of the organizations of an [`InMemoryOrgRepository`].
pub struct InMemoryInvitationRepository {
    people: Arc<InMemoryOrgRepository>,
    invitations: Mutex<Vec<Invitation>>,
}

impl InMemoryInvitationRepository {
    pub fn new(people: Arc<InMemoryOrgRepository>) -> Self {
        InMemoryInvitationRepository {
            people,
            invitations: Mutex::new(Vec::new()),
        }
    }
}

fn of_kind(kind: InvitationKind, i: &Invitation) -> bool {
    match kind {
        InvitationKind::Members => !i.is_guest,
        InvitationKind::Guests => i.is_guest,
        InvitationKind::All => true,
    }
}

/// `ARRAY(SELECT DISTINCT … unnest(a || b))`: the union, each once (the adapter's order is
/// unspecified; sorted here).
fn union<T: Ord + Clone>(a: &[T], b: &[T]) -> Vec<T> {
    let mut all: Vec<T> = a.iter().chain(b).cloned().collect();
    all.sort();
    all.dedup();
    all
}

#[async_trait]
impl InvitationRepository for InMemoryInvitationRepository {
    async fn upsert_invitation(
        &self,
        org: OrgId,
        new: &NewInvitation,
    ) -> Result<(Invitation, bool), RepoError> {
        check_length("invitations_identifier_check", &new.identifier, 254)?;
        if !self.people.org_exists(org) {
            return Err(conflict("invitations_organization_id_fkey"));
        }
        if let Some(by) = new.invited_by
            && self.people.user(by).is_none()
        {
            return Err(conflict("invitations_invited_by_id_fkey"));
        }
        let mut invitations = lock(&self.invitations);
        let key = new.identifier.to_lowercase();
        if let Some(pending) = invitations
            .iter_mut()
            .find(|i| i.org_id == org && i.identifier.to_lowercase() == key)
        {
            pending.team_ids = union(&pending.team_ids, &new.team_ids);
            pending.followup_ids = union(&pending.followup_ids, &new.followup_ids);
            pending.resend_count += 1;
            return Ok((pending.clone(), false));
        }
        let created = Invitation {
            id: Uuid::now_v7(),
            org_id: org,
            identifier: new.identifier.clone(),
            is_email: new.is_email,
            is_guest: new.is_guest,
            team_ids: new.team_ids.clone(),
            followup_ids: new.followup_ids.clone(),
            invited_by: new.invited_by,
            resend_count: 0,
            created_at: self.people.now(),
        };
        invitations.push(created.clone());
        Ok((created, true))
    }

    async fn list_invitations(
        &self,
        org: OrgId,
        kind: InvitationKind,
        page: PageRequest,
    ) -> Result<Page<Invitation>, RepoError> {
        let mut rows: Vec<Invitation> = lock(&self.invitations)
            .iter()
            .filter(|i| i.org_id == org && of_kind(kind, i))
            .cloned()
            .collect();
        // Newest first, as the adapter's `ORDER BY created_at DESC, id DESC`.
        rows.sort_by_key(|i| std::cmp::Reverse((i.created_at, i.id)));
        Ok(page_of(rows, page))
    }

    async fn get_invitation(
        &self,
        org: OrgId,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<Invitation, RepoError> {
        lock(&self.invitations)
            .iter()
            .find(|i| i.id == id && i.org_id == org && of_kind(kind, i))
            .cloned()
            .ok_or(RepoError::NotFound)
    }

    async fn delete_invitation(
        &self,
        org: OrgId,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<(), RepoError> {
        self.get_invitation(org, kind, id).await?;
        lock(&self.invitations).retain(|i| i.id != id);
        Ok(())
    }
}

/// Mood scores of the people of an [`InMemoryOrgRepository`].
pub struct InMemoryMoodRepository {
    people: Arc<InMemoryOrgRepository>,
    entries: Mutex<HashMap<(UserId, Date), MoodEntry>>,
}

impl InMemoryMoodRepository {
    pub fn new(people: Arc<InMemoryOrgRepository>) -> Self {
        InMemoryMoodRepository {
            people,
            entries: Mutex::new(HashMap::new()),
        }
    }
}

#[async_trait]
impl MoodRepository for InMemoryMoodRepository {
    async fn insert_mood(
        &self,
        org: OrgId,
        user: UserId,
        date: Date,
        score: i16,
    ) -> Result<MoodEntry, RepoError> {
        if !(1..=5).contains(&score) {
            return Err(check_violation("mood_entries_score_check"));
        }
        if self.people.user(user).is_none() {
            return Err(conflict("mood_entries_user_id_fkey"));
        }
        if !self.people.org_exists(org) {
            return Err(conflict("mood_entries_organization_id_fkey"));
        }
        let mut entries = lock(&self.entries);
        if entries.contains_key(&(user, date)) {
            return Err(conflict("mood_entries_pkey"));
        }
        let entry = MoodEntry {
            user_id: user,
            date,
            score,
            created_at: self.people.now(),
        };
        entries.insert((user, date), entry.clone());
        Ok(entry)
    }

    async fn get_mood(&self, user: UserId, date: Date) -> Result<Option<MoodEntry>, RepoError> {
        Ok(lock(&self.entries).get(&(user, date)).cloned())
    }
}

/// Every organization port in memory, wired to one set of organizations and people.
#[derive(Clone)]
pub struct InMemoryOrgPorts {
    pub people: Arc<InMemoryOrgRepository>,
    pub teams: Arc<InMemoryTeamRepository>,
    pub invitations: Arc<InMemoryInvitationRepository>,
    pub moods: Arc<InMemoryMoodRepository>,
    /// What the ports recorded (the outbox).
    pub events: RecordedEvents,
}

impl InMemoryOrgPorts {
    pub fn new(clock: SharedClock) -> Self {
        let people = Arc::new(InMemoryOrgRepository::with_clock(clock));
        InMemoryOrgPorts {
            events: people.events.clone(),
            teams: Arc::new(InMemoryTeamRepository::new(people.clone())),
            invitations: Arc::new(InMemoryInvitationRepository::new(people.clone())),
            moods: Arc::new(InMemoryMoodRepository::new(people.clone())),
            people,
        }
    }
}

/// A clock that stands still until moved, for rules that depend on "now".
pub struct FixedClock(Mutex<OffsetDateTime>);

impl FixedClock {
    pub fn new(now: OffsetDateTime) -> Self {
        FixedClock(Mutex::new(now))
    }

    pub fn set(&self, now: OffsetDateTime) {
        *lock(&self.0) = now;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> OffsetDateTime {
        *lock(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;

    /// An event to hand a port where the test is not about events.
    fn any_event(org: OrgId) -> Event {
        Event::new(
            org,
            teamcomm_kernel::EventType::OrganizationTeamUserRemoved,
            None,
            OffsetDateTime::UNIX_EPOCH,
            serde_json::json!({}),
        )
    }

    async fn world() -> (InMemoryOrgPorts, Organization) {
        let ports = InMemoryOrgPorts::new(Arc::new(SystemClock));
        let new = NewOrganization::new("Acme", "business", None, None, None).unwrap();
        let org = ports.people.create_organization(&new).await.unwrap();
        (ports, org)
    }

    async fn person(ports: &InMemoryOrgPorts, org: OrgId, email: &str, first: &str) -> User {
        let new = NewUser::new(email, first, "Test", "member", None).unwrap();
        ports.people.create_user(org, &new).await.unwrap()
    }

    #[tokio::test]
    async fn people_are_paged_by_name_and_counted_before_paging() {
        let (ports, org) = world().await;
        for (email, first) in [("c@x.io", "Cy"), ("a@x.io", "Al"), ("b@x.io", "Bo")] {
            person(&ports, org.id, email, first).await;
        }
        let page = PageRequest {
            offset: 1,
            limit: 1,
        };
        let users = ports
            .people
            .list_users(org.id, &UserFilter::default(), page)
            .await
            .unwrap();
        assert_eq!(users.count, 3);
        assert_eq!(users.results[0].first_name, "Bo");

        // Search matches a fragment of "first last" or the e-mail, in any case.
        for (fragment, expected) in [("O TE", vec!["Bo"]), ("@X.IO", vec!["Al", "Bo", "Cy"])] {
            let filter = UserFilter {
                search: Some(fragment.into()),
                is_active: None,
            };
            let found = ports
                .people
                .list_users(org.id, &filter, PageRequest::all())
                .await
                .unwrap();
            let names: Vec<&str> = found
                .results
                .iter()
                .map(|u| u.first_name.as_str())
                .collect();
            assert_eq!(names, expected, "{fragment}");
        }
    }

    #[tokio::test]
    async fn refusals_are_the_adapters() {
        let (ports, org) = world().await;
        let ada = person(&ports, org.id, "ada@x.io", "Ada").await;
        let twice = NewUser::new("ADA@x.io", "Ada", "", "member", None).unwrap();
        let conflict = |r: Result<_, RepoError>| match r {
            Err(RepoError::Conflict { constraint }) => constraint,
            other => panic!("expected a conflict, got {other:?}"),
        };
        assert_eq!(
            conflict(ports.people.create_user(org.id, &twice).await.map(|_| ())),
            "users_org_email_key"
        );
        assert_eq!(
            conflict(
                ports
                    .people
                    .create_user(OrgId::new(), &twice)
                    .await
                    .map(|_| ())
            ),
            "users_organization_id_fkey"
        );
        let today = time::macros::date!(2026 - 11 - 23);
        ports
            .moods
            .insert_mood(org.id, ada.id, today, 3)
            .await
            .unwrap();
        assert_eq!(
            conflict(
                ports
                    .moods
                    .insert_mood(org.id, ada.id, today, 4)
                    .await
                    .map(|_| ())
            ),
            "mood_entries_pkey"
        );
        assert!(matches!(
            ports.people.get_user(OrgId::new(), ada.id).await,
            Err(RepoError::NotFound)
        ));
        let patch = UserPatch {
            role: Some(Role::Admin),
            is_active: None,
        };
        assert!(matches!(
            ports.people.update_user(UserId::new(), &patch, &[]).await,
            Err(RepoError::NotFound)
        ));
    }

    #[tokio::test]
    async fn the_schemas_checks_refuse_what_the_domain_would_not_send() {
        let (ports, org) = world().await;
        let ada = person(&ports, org.id, "ada@x.io", "Ada").await;
        let refused = |r: Result<(), RepoError>| matches!(r, Err(RepoError::Other(_)));
        assert!(refused(
            ports
                .teams
                .create_team(org.id, TeamId::new(), "", &[], &[])
                .await
                .map(|_| ())
        ));
        assert!(refused(
            ports
                .teams
                .create_team(org.id, TeamId::new(), &"x".repeat(201), &[], &[])
                .await
                .map(|_| ())
        ));
        let today = time::macros::date!(2026 - 11 - 23);
        assert!(refused(
            ports
                .moods
                .insert_mood(org.id, ada.id, today, 6)
                .await
                .map(|_| ())
        ));
        let birthday = |b: &str| ProfilePatch {
            birth_date: Some(Some(b.to_owned())),
            ..ProfilePatch::default()
        };
        for bad in ["13-01", "1-01", "00-10", "02-32"] {
            let r = ports
                .people
                .update_profile(org.id, ada.id, &birthday(bad), &[])
                .await;
            assert!(refused(r.map(|_| ())), "{bad}");
        }
        // The schema does not know February has fewer days; the domain does.
        ports
            .people
            .update_profile(org.id, ada.id, &birthday("02-31"), &[])
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn team_members_of_another_organization_are_not_seen() {
        let (ports, org) = world().await;
        let other = ports
            .people
            .create_organization(&NewOrganization::new("Other", "free", None, None, None).unwrap())
            .await
            .unwrap();
        let ada = person(&ports, org.id, "ada@x.io", "Ada").await;
        let otto = person(&ports, other.id, "otto@x.io", "Otto").await;
        // Like the adapter, people outside the organization are ignored at creation.
        let team = ports
            .teams
            .create_team(
                org.id,
                TeamId::new(),
                "Core",
                &[ada.id, otto.id, ada.id],
                &[],
            )
            .await
            .unwrap();
        assert_eq!(team.members_count, 1);
        assert!(matches!(
            ports.teams.get_team(other.id, team.id).await,
            Err(RepoError::NotFound)
        ));
        assert!(matches!(
            ports
                .teams
                .remove_member(other.id, team.id, ada.id, &any_event(other.id))
                .await,
            Err(RepoError::NotFound)
        ));
        assert!(
            ports.events.all().is_empty(),
            "a refused removal records nothing"
        );
        let members = ports
            .teams
            .list_members(org.id, team.id, PageRequest::default())
            .await
            .unwrap();
        assert_eq!(members.count, 1);
        assert_eq!(members.results[0].user.id, ada.id);
    }

    #[tokio::test]
    async fn invitations_are_newest_first_and_resent_by_identifier_in_any_case() {
        let (ports, org) = world().await;
        let invite = |identifier: &str| NewInvitation {
            identifier: identifier.to_owned(),
            is_email: true,
            is_guest: false,
            team_ids: Vec::new(),
            followup_ids: Vec::new(),
            invited_by: None,
        };
        let (first, created) = ports
            .invitations
            .upsert_invitation(org.id, &invite("a@x.io"))
            .await
            .unwrap();
        assert!(created);
        ports
            .invitations
            .upsert_invitation(org.id, &invite("b@x.io"))
            .await
            .unwrap();
        let (again, created) = ports
            .invitations
            .upsert_invitation(org.id, &invite("A@X.IO"))
            .await
            .unwrap();
        assert!(!created);
        assert_eq!((again.id, again.resend_count), (first.id, 1));
        let page = ports
            .invitations
            .list_invitations(org.id, InvitationKind::All, PageRequest::default())
            .await
            .unwrap();
        let order: Vec<&str> = page.results.iter().map(|i| i.identifier.as_str()).collect();
        assert_eq!(order, ["b@x.io", "a@x.io"]);
    }
}
