//! An in-memory [`KudosRepository`] over the organization domain's in-memory people, for rule
//! tests and the port contract suite (`tests/contract/kudos.rs`). It follows the Postgres
//! adapter observably: organization scoping (`NotFound`), the `kudos_boosts_pkey` conflict,
//! the schema's CHECK constraints (`Other`), the orders, and names read as they are now.
//! Events go to the people repository's outbox, under the same lock as the kudos they report.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_org::testing::InMemoryOrgRepository;
use teamcomm_org::{OrgRepository, User};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{
    CompanyValue, DailyCap, Kudos, KudosRepository, KudosSelection, MAX_COMPANY_VALUE_NAME,
    MAX_EMOJI, MAX_KUDOS_CONTENT, NewCompanyValue, PersonTally, Posting, Span, Tallies, ValueTally,
};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test must not poison the store for the assertions that report it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The schema's `CHECK (length(column) BETWEEN 1 AND max)`, as the adapter reports it.
fn check_length(constraint: &str, value: &str, max: usize) -> Result<(), RepoError> {
    if (1..=max).contains(&value.chars().count()) {
        Ok(())
    } else {
        Err(RepoError::Other(format!(
            "violates check constraint {constraint}"
        )))
    }
}

/// A kudos row: people by id, as the tables hold them.
#[derive(Debug, Clone)]
struct Row {
    id: Uuid,
    org: OrgId,
    giver: UserId,
    receivers: Vec<UserId>,
    value: Option<Uuid>,
    content: String,
    is_anonymous: bool,
    by_dailybot: bool,
    created_at: OffsetDateTime,
}

impl Row {
    fn within(&self, span: Span) -> bool {
        span.from.is_none_or(|f| self.created_at >= f)
            && span.until.is_none_or(|u| self.created_at < u)
    }
}

#[derive(Default)]
struct State {
    values: Vec<CompanyValue>,
    kudos: Vec<Row>,
    /// (kudos, person, when)
    boosts: Vec<(Uuid, UserId, OffsetDateTime)>,
}

/// Kudos and company values of the people of an [`InMemoryOrgRepository`].
pub struct InMemoryKudosRepository {
    people: Arc<InMemoryOrgRepository>,
    state: Mutex<State>,
}

impl InMemoryKudosRepository {
    pub fn new(people: Arc<InMemoryOrgRepository>) -> Self {
        InMemoryKudosRepository {
            people,
            state: Mutex::new(State::default()),
        }
    }

    /// The person if they are of `org`.
    async fn member(&self, org: OrgId, id: UserId) -> Result<User, RepoError> {
        self.people.get_user(org, id).await
    }

    /// The person as stored now, in any organization (rows keep only ids).
    async fn person(&self, id: UserId) -> Result<User, RepoError> {
        self.people.find_user(id).await
    }

    async fn people_by_name(&self, ids: &[UserId]) -> Result<Vec<User>, RepoError> {
        let mut people = Vec::with_capacity(ids.len());
        for id in ids {
            people.push(self.person(*id).await?);
        }
        people.sort_by(|a, b| {
            (&a.first_name, &a.last_name, a.id).cmp(&(&b.first_name, &b.last_name, b.id))
        });
        Ok(people)
    }

    /// A row as the domain's kudos, people and value read now.
    async fn kudos_of(&self, row: Row) -> Result<Kudos, RepoError> {
        let (value, mut boosts) = {
            let state = lock(&self.state);
            let value = row
                .value
                .and_then(|v| state.values.iter().find(|c| c.id == v).cloned());
            let boosts: Vec<(OffsetDateTime, UserId)> = state
                .boosts
                .iter()
                .filter(|(k, _, _)| *k == row.id)
                .map(|(_, u, at)| (*at, *u))
                .collect();
            (value, boosts)
        };
        boosts.sort();
        let mut boosted_by = Vec::with_capacity(boosts.len());
        for (_, u) in boosts {
            boosted_by.push(self.person(u).await?);
        }
        Ok(Kudos {
            id: row.id,
            org_id: row.org,
            giver: Some(self.person(row.giver).await?),
            receivers: self.people_by_name(&row.receivers).await?,
            company_value: value,
            content: row.content,
            is_anonymous: row.is_anonymous,
            by_dailybot: row.by_dailybot,
            boosted_by,
            created_at: row.created_at,
        })
    }

    /// What the adapter's WHERE clause keeps.
    async fn selected(&self, row: &Row, s: &KudosSelection) -> Result<bool, RepoError> {
        let giver_known = !row.is_anonymous || row.giver == s.viewer;
        if s.involving_viewer && !(row.receivers.contains(&s.viewer) || row.giver == s.viewer) {
            return Ok(false);
        }
        if s.given_by.iter().any(|g| *g != row.giver || !giver_known) {
            return Ok(false);
        }
        if s.received_by.iter().any(|r| !row.receivers.contains(r)) {
            return Ok(false);
        }
        if !row.within(s.span) {
            return Ok(false);
        }
        let Some(fragment) = s.search.as_deref().map(str::to_lowercase) else {
            return Ok(true);
        };
        // As the adapter: content, and the stored lower-case "first last" of the people.
        let name_matches = |u: &User| {
            format!("{} {}", u.first_name, u.last_name)
                .to_lowercase()
                .contains(&fragment)
        };
        if row.content.to_lowercase().contains(&fragment) {
            return Ok(true);
        }
        if giver_known && name_matches(&self.person(row.giver).await?) {
            return Ok(true);
        }
        for r in &row.receivers {
            if name_matches(&self.person(*r).await?) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

#[async_trait]
impl KudosRepository for InMemoryKudosRepository {
    async fn company_values(
        &self,
        org: OrgId,
        defaults: &[NewCompanyValue],
    ) -> Result<Vec<CompanyValue>, RepoError> {
        if !self.people.org_exists(org) {
            return Err(RepoError::NotFound);
        }
        let mut state = lock(&self.state);
        if !state.values.iter().any(|v| v.org_id == org) {
            for d in defaults {
                check_length("company_values_name_check", &d.name, MAX_COMPANY_VALUE_NAME)?;
                check_length("company_values_emoji_check", &d.emoji, MAX_EMOJI)?;
            }
            let now = OffsetDateTime::now_utc();
            for d in defaults {
                state.values.push(CompanyValue {
                    id: Uuid::now_v7(),
                    org_id: org,
                    name: d.name.clone(),
                    emoji: d.emoji.clone(),
                    created_at: now,
                });
            }
        }
        let mut values: Vec<CompanyValue> = state
            .values
            .iter()
            .filter(|v| v.org_id == org)
            .cloned()
            .collect();
        values.sort_by(|a, b| (&a.name, a.id).cmp(&(&b.name, b.id)));
        Ok(values)
    }

    async fn upsert_company_value(
        &self,
        org: OrgId,
        value: &NewCompanyValue,
    ) -> Result<CompanyValue, RepoError> {
        check_length(
            "company_values_name_check",
            &value.name,
            MAX_COMPANY_VALUE_NAME,
        )?;
        check_length("company_values_emoji_check", &value.emoji, MAX_EMOJI)?;
        if !self.people.org_exists(org) {
            return Err(RepoError::NotFound);
        }
        let mut state = lock(&self.state);
        let wanted = value.name.to_lowercase();
        if let Some(existing) = state
            .values
            .iter_mut()
            .find(|v| v.org_id == org && v.name.to_lowercase() == wanted)
        {
            existing.emoji = value.emoji.clone();
            return Ok(existing.clone());
        }
        let created = CompanyValue {
            id: Uuid::now_v7(),
            org_id: org,
            name: value.name.clone(),
            emoji: value.emoji.clone(),
            created_at: OffsetDateTime::now_utc(),
        };
        state.values.push(created.clone());
        Ok(created)
    }

    async fn insert_kudos(
        &self,
        kudos: &Kudos,
        cap: DailyCap,
        events: &[Event],
    ) -> Result<Posting, RepoError> {
        check_length("kudos_content_check", &kudos.content, MAX_KUDOS_CONTENT)?;
        let org = kudos.org_id;
        let giver = kudos
            .giver
            .as_ref()
            .ok_or_else(|| RepoError::Other("kudos without a giver".into()))?;
        self.member(org, giver.id).await?;
        for r in &kudos.receivers {
            self.member(org, r.id).await?;
        }
        let mut state = lock(&self.state);
        if let Some(v) = &kudos.company_value
            && !state.values.iter().any(|c| c.id == v.id && c.org_id == org)
        {
            return Err(RepoError::NotFound);
        }
        let given_today = state
            .kudos
            .iter()
            .filter(|k| k.giver == giver.id && k.created_at >= cap.since)
            .count();
        if given_today >= cap.limit as usize {
            return Ok(Posting::DailyLimitReached);
        }
        if state.kudos.iter().any(|k| k.id == kudos.id) {
            return Err(RepoError::Conflict {
                constraint: "kudos_pkey".into(),
            });
        }
        state.kudos.push(Row {
            id: kudos.id,
            org,
            giver: giver.id,
            receivers: kudos.receivers.iter().map(|r| r.id).collect(),
            value: kudos.company_value.as_ref().map(|v| v.id),
            content: kudos.content.clone(),
            is_anonymous: kudos.is_anonymous,
            by_dailybot: kudos.by_dailybot,
            created_at: kudos.created_at,
        });
        self.people.events().record(events.iter().cloned());
        Ok(Posting::Stored)
    }

    async fn get_kudos(&self, org: OrgId, id: Uuid) -> Result<Kudos, RepoError> {
        let row = lock(&self.state)
            .kudos
            .iter()
            .find(|k| k.id == id && k.org == org)
            .cloned()
            .ok_or(RepoError::NotFound)?;
        self.kudos_of(row).await
    }

    async fn boost_kudos(
        &self,
        org: OrgId,
        id: Uuid,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<Kudos, RepoError> {
        self.member(org, user).await?;
        let row = {
            let mut state = lock(&self.state);
            let row = state
                .kudos
                .iter()
                .find(|k| k.id == id && k.org == org)
                .cloned()
                .ok_or(RepoError::NotFound)?;
            if state.boosts.iter().any(|(k, u, _)| *k == id && *u == user) {
                return Err(RepoError::Conflict {
                    constraint: "kudos_boosts_pkey".into(),
                });
            }
            state.boosts.push((id, user, at));
            row
        };
        self.kudos_of(row).await
    }

    async fn list_kudos(
        &self,
        org: OrgId,
        selection: &KudosSelection,
        page: PageRequest,
    ) -> Result<Page<Kudos>, RepoError> {
        let rows: Vec<Row> = lock(&self.state)
            .kudos
            .iter()
            .filter(|k| k.org == org)
            .cloned()
            .collect();
        let mut kept = Vec::new();
        for row in rows {
            if self.selected(&row, selection).await? {
                kept.push(row);
            }
        }
        kept.sort_by_key(|k| std::cmp::Reverse((k.created_at, k.id)));
        let count = kept.len() as u64;
        let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
        let mut results = Vec::new();
        for row in kept.into_iter().skip(offset).take(limit) {
            results.push(self.kudos_of(row).await?);
        }
        Ok(Page { count, results })
    }

    async fn tallies(&self, org: OrgId, span: Span) -> Result<Tallies, RepoError> {
        let (rows, boosts, values) = {
            let state = lock(&self.state);
            let rows: Vec<Row> = state
                .kudos
                .iter()
                .filter(|k| k.org == org && k.within(span))
                .cloned()
                .collect();
            (rows, state.boosts.clone(), state.values.clone())
        };
        // (received, plus, given) per person.
        let mut counts: HashMap<UserId, (u64, u64, u64)> = HashMap::new();
        let mut per_value: HashMap<Uuid, u64> = HashMap::new();
        for row in &rows {
            let plus = boosts.iter().filter(|(k, _, _)| *k == row.id).count() as u64;
            for r in &row.receivers {
                let c = counts.entry(*r).or_default();
                c.0 += 1;
                c.1 += plus;
            }
            if !row.is_anonymous {
                counts.entry(row.giver).or_default().2 += 1;
            }
            if let Some(v) = row.value {
                *per_value.entry(v).or_default() += 1;
            }
        }
        let mut people = Vec::with_capacity(counts.len());
        for (id, (received, plus, given)) in counts {
            people.push(PersonTally {
                person: self.person(id).await?,
                received,
                plus,
                given,
            });
        }
        let values = values
            .into_iter()
            .filter_map(|v| {
                let count = *per_value.get(&v.id)?;
                Some(ValueTally { value: v, count })
            })
            .collect();
        Ok(Tallies { people, values })
    }
}
