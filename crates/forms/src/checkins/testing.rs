//! An in-memory [`CheckinRepository`] over in-memory people, teams and channels, for rule tests
//! and the port contract suite (`tests/contract/checkins.rs`). It answers like the Postgres
//! adapter: organization scoping (`NotFound`), references checked in the write, the same
//! conflicts (named as the adapter names them), the schema's CHECKs (`Other`), the same
//! orders (byte-wise, as the database's C collation) and paging counts. Events go to the
//! shared outbox under the same lock as the change they report. Labels and stars, which
//! another domain writes, are set with [`InMemoryCheckinRepository::label`] and
//! [`InMemoryCheckinRepository::star`].

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, TeamId, UserId};
use teamcomm_messaging::ChannelRepository;
use teamcomm_org::{OrgRepository, TeamFilter, TeamRepository, TeamRole, User};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::ports::{
    AuthoredResponse, CheckinDirectory, CheckinScope, CheckinSelection, DayResponse, ManagedScope,
    ResponseScope, ResponseSelection,
};
use super::{Checkin, CheckinRepository, CheckinResponse, MAX_CHECKIN_NAME};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test must not poison the store for the assertions that report it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn conflict(constraint: &str) -> RepoError {
    RepoError::Conflict {
        constraint: constraint.to_owned(),
    }
}

fn page_of<T>(rows: Vec<T>, page: PageRequest) -> Page<T> {
    let count = rows.len() as u64;
    let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
    Page {
        count,
        results: rows.into_iter().skip(offset).take(limit).collect(),
    }
}

fn by_name(a: &User, b: &User) -> std::cmp::Ordering {
    (&a.first_name, &a.last_name, a.id).cmp(&(&b.first_name, &b.last_name, b.id))
}

#[derive(Default)]
struct State {
    checkins: Vec<Checkin>,
    responses: Vec<CheckinResponse>,
    /// (check-in, label)
    labels: Vec<(Uuid, Uuid)>,
    /// (person, check-in)
    stars: Vec<(UserId, Uuid)>,
}

/// Check-ins and responses held in memory.
pub struct InMemoryCheckinRepository {
    people: Arc<dyn OrgRepository>,
    teams: Arc<dyn TeamRepository>,
    channels: Arc<dyn ChannelRepository>,
    events: RecordedEvents,
    state: Mutex<State>,
}

impl InMemoryCheckinRepository {
    /// Over these people, teams and channels; events are recorded into `events`.
    pub fn new(
        people: Arc<dyn OrgRepository>,
        teams: Arc<dyn TeamRepository>,
        channels: Arc<dyn ChannelRepository>,
        events: RecordedEvents,
    ) -> Self {
        InMemoryCheckinRepository {
            people,
            teams,
            channels,
            events,
            state: Mutex::new(State::default()),
        }
    }

    /// Puts a label on a check-in (what `entity_labels` holds in Postgres).
    pub fn label(&self, checkin: Uuid, label: Uuid) {
        lock(&self.state).labels.push((checkin, label));
    }

    /// Stars a check-in for a person (what `featured_entities` holds in Postgres).
    pub fn star(&self, person: UserId, checkin: Uuid) {
        lock(&self.state).stars.push((person, checkin));
    }

    /// Every check-in held, of every organization (what a scan of the table reads).
    pub fn all_checkins(&self) -> Vec<Checkin> {
        lock(&self.state).checkins.clone()
    }

    /// What the schema's references and CHECKs refuse.
    async fn check_row(&self, c: &Checkin) -> Result<(), RepoError> {
        if !(1..=MAX_CHECKIN_NAME).contains(&c.name.chars().count()) {
            return Err(RepoError::Other(
                "violates check constraint checkins_name_check".into(),
            ));
        }
        self.people.get_organization(c.org_id).await?;
        for user in c.participants.users.iter().chain(c.created_by.iter()) {
            self.people.get_user(c.org_id, *user).await?;
        }
        for team in &c.participants.teams {
            self.teams.get_team(c.org_id, *team).await?;
        }
        if !c.report_channels.is_empty() {
            let known: HashSet<String> = self
                .channels
                .list_channels(c.org_id, None)
                .await?
                .into_iter()
                .map(|ch| ch.id)
                .collect();
            if c.report_channels.iter().any(|id| !known.contains(id)) {
                return Err(RepoError::NotFound);
            }
        }
        Ok(())
    }

    /// The active teams of `org` the person belongs to.
    async fn teams_of(&self, org: OrgId, user: UserId) -> Result<Vec<TeamId>, RepoError> {
        let filter = TeamFilter {
            member_of: Some(user),
            include_archived: false,
            search: None,
        };
        Ok(self
            .teams
            .list_teams(org, &filter, PageRequest::all())
            .await?
            .results
            .into_iter()
            .map(|t| t.id)
            .collect())
    }

    /// The active people a check-in asks, by name.
    async fn asked_by(&self, c: &Checkin) -> Result<Vec<User>, RepoError> {
        let mut people: Vec<User> = Vec::new();
        for id in &c.participants.users {
            match self.people.get_user(c.org_id, *id).await {
                Ok(u) => people.push(u),
                Err(RepoError::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        for team in &c.participants.teams {
            match self.teams.get_team(c.org_id, *team).await {
                Ok(t) if t.active => {}
                Ok(_) | Err(RepoError::NotFound) => continue,
                Err(e) => return Err(e),
            }
            let members = self
                .teams
                .list_members(c.org_id, *team, PageRequest::all())
                .await?;
            people.extend(members.results.into_iter().map(|m| m.user));
        }
        people.retain(|u| u.is_active);
        people.sort_by(by_name);
        people.dedup_by_key(|u| u.id);
        Ok(people)
    }

    async fn responder(&self, org: OrgId, id: UserId) -> Result<User, RepoError> {
        self.people.get_user(org, id).await
    }
}

#[async_trait]
impl CheckinRepository for InMemoryCheckinRepository {
    async fn insert_checkin(&self, checkin: &Checkin) -> Result<(), RepoError> {
        self.check_row(checkin).await?;
        let mut state = lock(&self.state);
        if state.checkins.iter().any(|c| c.id == checkin.id) {
            return Err(conflict("checkins_pkey"));
        }
        state.checkins.push(checkin.clone());
        Ok(())
    }

    async fn get_checkin(&self, org: OrgId, id: Uuid) -> Result<Checkin, RepoError> {
        lock(&self.state)
            .checkins
            .iter()
            .find(|c| c.org_id == org && c.id == id)
            .cloned()
            .ok_or(RepoError::NotFound)
    }

    async fn update_checkin(
        &self,
        checkin: &Checkin,
        expected_revision: i64,
    ) -> Result<(), RepoError> {
        self.check_row(checkin).await?;
        let mut state = lock(&self.state);
        let slot = state
            .checkins
            .iter_mut()
            .find(|c| c.org_id == checkin.org_id && c.id == checkin.id)
            .ok_or(RepoError::NotFound)?;
        if slot.revision != expected_revision {
            return Err(conflict("checkins_revision"));
        }
        *slot = Checkin {
            created_at: slot.created_at,
            ..checkin.clone()
        };
        Ok(())
    }

    async fn list_checkins(
        &self,
        org: OrgId,
        selection: &CheckinSelection,
        page: PageRequest,
    ) -> Result<Page<Checkin>, RepoError> {
        let person = match selection.scope {
            CheckinScope::All => None,
            CheckinScope::VisibleTo(u) | CheckinScope::TakenBy(u) => {
                let active = self
                    .people
                    .get_user(org, u)
                    .await
                    .is_ok_and(|p| p.is_active);
                Some((u, active, self.teams_of(org, u).await?))
            }
        };
        let state = lock(&self.state);
        let starred = |user: UserId, c: &Checkin| state.stars.contains(&(user, c.id));
        let mut rows: Vec<Checkin> = state
            .checkins
            .iter()
            .filter(|c| c.org_id == org)
            .filter(|c| selection.include_archived || !c.archived)
            .filter(|c| match (&person, selection.scope) {
                (Some((u, active, teams)), scope) => {
                    let takes_part = *active
                        && (c.participants.users.contains(u)
                            || c.participants.teams.iter().any(|t| teams.contains(t)));
                    takes_part
                        || (matches!(scope, CheckinScope::VisibleTo(_)) && c.created_by == Some(*u))
                }
                (None, _) => true,
            })
            .filter(|c| {
                selection
                    .search
                    .as_deref()
                    .is_none_or(|s| c.name.to_lowercase().contains(&s.to_lowercase()))
            })
            .filter(|c| {
                selection
                    .running_until
                    .is_none_or(|until| c.recurrence.start_on <= until)
                    && selection
                        .running_from
                        .is_none_or(|from| c.recurrence.end_on.is_none_or(|end| end >= from))
            })
            .filter(|c| {
                selection.labels.is_empty()
                    || state
                        .labels
                        .iter()
                        .any(|(e, l)| *e == c.id && selection.labels.contains(l))
            })
            .filter(|c| selection.featured_by.is_none_or(|u| starred(u, c)))
            .cloned()
            .collect();
        rows.sort_by(|a, b| {
            let first = |c: &Checkin| selection.featured_first_for.is_some_and(|u| starred(u, c));
            (!first(a), &a.name, a.id).cmp(&(!first(b), &b.name, b.id))
        });
        Ok(page_of(rows, page))
    }

    async fn directory(&self, checkin: &Checkin) -> Result<CheckinDirectory, RepoError> {
        let org = checkin.org_id;
        let mut directory = CheckinDirectory::default();
        for id in &checkin.participants.users {
            if let Ok(u) = self.people.get_user(org, *id).await {
                directory.users.push((u.id, u.full_name()));
            }
        }
        for id in &checkin.participants.teams {
            if let Ok(t) = self.teams.get_team(org, *id).await {
                directory.teams.push((t.id, t.name));
            }
        }
        let channels = self.channels.list_channels(org, None).await?;
        directory.channels = checkin
            .report_channels
            .iter()
            .filter_map(|id| channels.iter().find(|c| &c.id == id).cloned())
            .collect();
        Ok(directory)
    }

    async fn is_participant(&self, org: OrgId, id: Uuid, user: UserId) -> Result<bool, RepoError> {
        let Ok(checkin) = self.get_checkin(org, id).await else {
            return Ok(false);
        };
        Ok(self.asked_by(&checkin).await?.iter().any(|u| u.id == user))
    }

    async fn participants(
        &self,
        org: OrgId,
        checkins: &[Uuid],
    ) -> Result<Vec<(Uuid, User)>, RepoError> {
        let mut out = Vec::new();
        let mut ids = checkins.to_vec();
        ids.sort();
        ids.dedup();
        for id in ids {
            let Ok(checkin) = self.get_checkin(org, id).await else {
                continue;
            };
            out.extend(self.asked_by(&checkin).await?.into_iter().map(|u| (id, u)));
        }
        Ok(out)
    }

    async fn managed_scope(&self, org: OrgId, user: UserId) -> Result<ManagedScope, RepoError> {
        let mut scope = ManagedScope::default();
        for team in self.teams_of(org, user).await? {
            let manages = self
                .teams
                .get_member(org, team, user)
                .await
                .is_ok_and(|m| m.role == TeamRole::Manager);
            if !manages {
                continue;
            }
            scope.teams.push(team);
            let members = self
                .teams
                .list_members(org, team, PageRequest::all())
                .await?;
            scope
                .members
                .extend(members.results.into_iter().map(|m| m.user.id));
        }
        scope.teams.sort();
        scope.members.sort();
        scope.members.dedup();
        Ok(scope)
    }

    async fn insert_response(
        &self,
        response: &CheckinResponse,
        expected_revision: i64,
        events: &[Event],
    ) -> Result<(), RepoError> {
        let asked = self
            .is_participant(response.org_id, response.checkin_id, response.user_id)
            .await?;
        let mut state = lock(&self.state);
        let checkin = state
            .checkins
            .iter()
            .find(|c| c.org_id == response.org_id && c.id == response.checkin_id)
            .ok_or(RepoError::NotFound)?;
        // The Postgres adapter's order: the check-in, its revision, the person, then the row.
        if checkin.revision != expected_revision {
            return Err(conflict("checkins_revision"));
        }
        if !asked {
            return Err(conflict("checkin_participants"));
        }
        if state.responses.iter().any(|r| r.id == response.id) {
            return Err(conflict("checkin_responses_pkey"));
        }
        if state.responses.iter().any(|r| {
            r.checkin_id == response.checkin_id
                && r.user_id == response.user_id
                && r.date == response.date
        }) {
            return Err(conflict("checkin_responses_checkin_user_day_key"));
        }
        state.responses.push(response.clone());
        self.events.record(events.iter().cloned());
        Ok(())
    }

    async fn update_response(
        &self,
        response: &CheckinResponse,
        expected_updated_at: OffsetDateTime,
        events: &[Event],
    ) -> Result<(), RepoError> {
        let mut state = lock(&self.state);
        let slot = state
            .responses
            .iter_mut()
            .find(|r| r.org_id == response.org_id && r.id == response.id)
            .ok_or(RepoError::NotFound)?;
        if slot.updated_at != expected_updated_at {
            return Err(conflict("checkin_responses_updated_at"));
        }
        // Only the answers change: the day, the person and the check-in stay.
        slot.answers.clone_from(&response.answers);
        slot.last_question_index = response.last_question_index;
        slot.completed = response.completed;
        slot.questions_version = response.questions_version;
        slot.updated_at = response.updated_at;
        self.events.record(events.iter().cloned());
        Ok(())
    }

    async fn responses_between(
        &self,
        org: OrgId,
        checkin: Uuid,
        user: UserId,
        from: Date,
        until: Date,
    ) -> Result<Vec<CheckinResponse>, RepoError> {
        let mut rows: Vec<CheckinResponse> = lock(&self.state)
            .responses
            .iter()
            .filter(|r| r.org_id == org && r.checkin_id == checkin && r.user_id == user)
            .filter(|r| (from..=until).contains(&r.date))
            .cloned()
            .collect();
        rows.sort_by_key(|r| (r.date, r.id));
        Ok(rows)
    }

    async fn delete_responses(
        &self,
        org: OrgId,
        ids: &[Uuid],
        events: &[Event],
    ) -> Result<(), RepoError> {
        let mut state = lock(&self.state);
        let present = ids.iter().all(|id| {
            state
                .responses
                .iter()
                .any(|r| r.org_id == org && r.id == *id)
        });
        if !present {
            return Err(conflict("checkin_responses_deleted"));
        }
        state
            .responses
            .retain(|r| !(r.org_id == org && ids.contains(&r.id)));
        self.events.record(events.iter().cloned());
        Ok(())
    }

    async fn list_responses(
        &self,
        org: OrgId,
        selection: &ResponseSelection,
        page: PageRequest,
    ) -> Result<Page<AuthoredResponse>, RepoError> {
        let visible: Option<HashSet<UserId>> = match selection.scope {
            ResponseScope::All => None,
            ResponseScope::Own(u) => Some(HashSet::from([u])),
            ResponseScope::ManagedBy(u) => {
                let mut people: HashSet<UserId> = self
                    .managed_scope(org, u)
                    .await?
                    .members
                    .into_iter()
                    .collect();
                people.insert(u);
                Some(people)
            }
        };
        let matching: Vec<CheckinResponse> = lock(&self.state)
            .responses
            .iter()
            .filter(|r| r.org_id == org && r.checkin_id == selection.checkin)
            .filter(|r| visible.as_ref().is_none_or(|v| v.contains(&r.user_id)))
            .filter(|r| selection.user.is_none_or(|u| r.user_id == u))
            .filter(|r| selection.from.is_none_or(|f| r.date >= f))
            .filter(|r| selection.until.is_none_or(|u| r.date <= u))
            .filter(|r| {
                selection
                    .search
                    .as_deref()
                    .is_none_or(|s| r.search_text().contains(&s.to_lowercase()))
            })
            .cloned()
            .collect();
        let mut rows = Vec::with_capacity(matching.len());
        for response in matching {
            let author = self.responder(org, response.user_id).await?;
            rows.push(AuthoredResponse { response, author });
        }
        rows.sort_by(|a, b| {
            b.response
                .date
                .cmp(&a.response.date)
                .then_with(|| a.response.created_at.cmp(&b.response.created_at))
                .then_with(|| a.response.id.cmp(&b.response.id))
        });
        Ok(page_of(rows, page))
    }

    async fn day_responses(
        &self,
        org: OrgId,
        checkins: &[Uuid],
        days: &[Date],
    ) -> Result<Vec<DayResponse>, RepoError> {
        let mut rows: Vec<DayResponse> = lock(&self.state)
            .responses
            .iter()
            .filter(|r| r.org_id == org && checkins.contains(&r.checkin_id))
            .filter(|r| days.contains(&r.date))
            .map(|r| DayResponse {
                checkin_id: r.checkin_id,
                user_id: r.user_id,
                date: r.date,
                completed: r.completed,
            })
            .collect();
        rows.sort_by_key(|r| (r.checkin_id, r.date, r.user_id));
        Ok(rows)
    }
}
