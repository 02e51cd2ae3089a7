//! In-memory implementations of the labels ports, for rule tests and the port contract suite.
//! They answer like the Postgres adapter (`crates/store-pg/src/repo/labels.rs`): organization
//! scoping (`NotFound`), the same unique and foreign-key refusals (`Conflict` with the
//! constraint's name), ordering by lower-cased name then id (byte-wise, as the database's C
//! collation), and labels of other organizations ignored by the entity writes.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_org::OrgRepository;
use teamcomm_org::testing::{InMemoryOrgRepository, ilike_contains};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{
    BatchMode, Deletion, EntityKind, FeaturedRepository, Label, LabelFilter, LabelId, LabelPatch,
    LabelRepository, LabelledEntities, NewLabel,
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

/// One row of `entity_labels`.
type Assignment = (EntityKind, Uuid, LabelId);

#[derive(Default)]
struct LabelState {
    labels: HashMap<LabelId, Label>,
    /// `(kind, entity, label)` with the organization it was written for.
    assignments: HashMap<Assignment, OrgId>,
}

impl LabelState {
    fn usage(&self, id: LabelId) -> u64 {
        self.assignments.keys().filter(|(_, _, l)| *l == id).count() as u64
    }

    /// The stored label with its usage, if it is of `org`.
    fn label(&self, org: OrgId, id: LabelId) -> Option<Label> {
        let label = self.labels.get(&id).filter(|l| l.org_id == org)?;
        Some(Label {
            usage: self.usage(id),
            ..label.clone()
        })
    }

    fn name_taken(&self, org: OrgId, name: &str, except: Option<LabelId>) -> bool {
        let lower = name.to_lowercase();
        self.labels
            .values()
            .any(|l| l.org_id == org && Some(l.id) != except && l.name.to_lowercase() == lower)
    }

    /// The ids of `labels` that are labels of `org` (the adapter writes only those).
    fn of_org(&self, org: OrgId, labels: &[LabelId]) -> Vec<LabelId> {
        labels
            .iter()
            .copied()
            .filter(|id| self.labels.get(id).is_some_and(|l| l.org_id == org))
            .collect()
    }

    fn carried(&self, kind: EntityKind, entity: Uuid) -> BTreeSet<LabelId> {
        self.assignments
            .keys()
            .filter(|(k, e, _)| *k == kind && *e == entity)
            .map(|(_, _, l)| *l)
            .collect()
    }

    /// Makes `labels` the entity's set; true when it changed.
    fn replace(&mut self, org: OrgId, kind: EntityKind, entity: Uuid, labels: &[LabelId]) -> bool {
        let wanted: BTreeSet<LabelId> = labels.iter().copied().collect();
        let before = self.carried(kind, entity);
        self.assignments
            .retain(|(k, e, l), _| !(*k == kind && *e == entity && !wanted.contains(l)));
        for l in &wanted {
            self.assignments.entry((kind, entity, *l)).or_insert(org);
        }
        before != wanted
    }
}

/// Sorts as the adapter's `ORDER BY lower(name), id`.
fn sort_labels(labels: &mut [Label]) {
    labels.sort_by_key(|l| (l.name.to_lowercase(), l.id));
}

/// Labels of the organizations of an [`InMemoryOrgRepository`] and the labels entities carry.
pub struct InMemoryLabelRepository {
    people: Arc<InMemoryOrgRepository>,
    state: Mutex<LabelState>,
}

impl InMemoryLabelRepository {
    pub fn new(people: Arc<InMemoryOrgRepository>) -> Self {
        InMemoryLabelRepository {
            people,
            state: Mutex::new(LabelState::default()),
        }
    }
}

#[async_trait]
impl LabelRepository for InMemoryLabelRepository {
    async fn create_label(&self, org: OrgId, new: &NewLabel) -> Result<Label, RepoError> {
        if !self.people.org_exists(org) {
            return Err(conflict("labels_organization_id_fkey"));
        }
        if self.people.find_user(new.created_by).await.is_err() {
            return Err(conflict("labels_created_by_id_fkey"));
        }
        let mut state = lock(&self.state);
        if state.labels.contains_key(&new.id) {
            return Err(conflict("labels_pkey"));
        }
        if state.name_taken(org, &new.name, None) {
            return Err(conflict("labels_org_lower_name_key"));
        }
        let now = OffsetDateTime::now_utc();
        let label = Label {
            id: new.id,
            org_id: org,
            name: new.name.clone(),
            color: new.color.clone(),
            description: new.description.clone(),
            is_archived: false,
            created_by: Some(new.created_by),
            usage: 0,
            created_at: now,
            updated_at: now,
        };
        state.labels.insert(label.id, label.clone());
        Ok(label)
    }

    async fn get_label(&self, org: OrgId, id: LabelId) -> Result<Label, RepoError> {
        lock(&self.state).label(org, id).ok_or(RepoError::NotFound)
    }

    async fn list_labels(
        &self,
        org: OrgId,
        filter: &LabelFilter,
        page: PageRequest,
    ) -> Result<Page<Label>, RepoError> {
        let state = lock(&self.state);
        let mut rows: Vec<Label> = state
            .labels
            .keys()
            .filter_map(|id| state.label(org, *id))
            .filter(|l| filter.include_archived || !l.is_archived)
            .filter(|l| {
                filter
                    .search
                    .as_deref()
                    .is_none_or(|s| ilike_contains(&l.name, s))
            })
            .collect();
        sort_labels(&mut rows);
        let count = rows.len() as u64;
        let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
        Ok(Page {
            count,
            results: rows.into_iter().skip(offset).take(limit).collect(),
        })
    }

    async fn update_label(
        &self,
        org: OrgId,
        id: LabelId,
        patch: &LabelPatch,
    ) -> Result<Label, RepoError> {
        let mut state = lock(&self.state);
        state.label(org, id).ok_or(RepoError::NotFound)?;
        if let Some(name) = &patch.name
            && state.name_taken(org, name, Some(id))
        {
            return Err(conflict("labels_org_lower_name_key"));
        }
        let stored = state.labels.get_mut(&id).ok_or(RepoError::NotFound)?;
        if let Some(name) = &patch.name {
            stored.name = name.clone();
        }
        if let Some(color) = &patch.color {
            stored.color = color.clone();
        }
        if let Some(description) = &patch.description {
            stored.description = description.clone();
        }
        if let Some(archived) = patch.is_archived {
            stored.is_archived = archived;
        }
        stored.updated_at = OffsetDateTime::now_utc();
        state.label(org, id).ok_or(RepoError::NotFound)
    }

    async fn delete_unused_label(&self, org: OrgId, id: LabelId) -> Result<Deletion, RepoError> {
        let mut state = lock(&self.state);
        let label = state.label(org, id).ok_or(RepoError::NotFound)?;
        if label.usage > 0 {
            return Ok(Deletion::InUse(label.usage));
        }
        state.labels.remove(&id);
        Ok(Deletion::Deleted)
    }

    async fn find_labels(&self, org: OrgId, ids: &[LabelId]) -> Result<Vec<Label>, RepoError> {
        let state = lock(&self.state);
        let ids: HashSet<LabelId> = ids.iter().copied().collect();
        Ok(ids.iter().filter_map(|id| state.label(org, *id)).collect())
    }

    async fn assignments(
        &self,
        org: OrgId,
        kind: EntityKind,
        entities: &[Uuid],
        labels: &[LabelId],
    ) -> Result<Vec<(Uuid, LabelId)>, RepoError> {
        let state = lock(&self.state);
        Ok(state
            .assignments
            .iter()
            .filter(|((k, e, l), o)| {
                **o == org && *k == kind && entities.contains(e) && labels.contains(l)
            })
            .map(|((_, e, l), _)| (*e, *l))
            .collect())
    }

    async fn replace_entity_labels(
        &self,
        org: OrgId,
        kind: EntityKind,
        entity: Uuid,
        labels: &[LabelId],
    ) -> Result<Vec<Label>, RepoError> {
        let mut state = lock(&self.state);
        let labels = state.of_org(org, labels);
        state.replace(org, kind, entity, &labels);
        let mut now: Vec<Label> = state
            .carried(kind, entity)
            .into_iter()
            .filter_map(|l| state.label(org, l))
            .collect();
        sort_labels(&mut now);
        Ok(now)
    }

    async fn batch_entity_labels(
        &self,
        org: OrgId,
        kind: EntityKind,
        entities: &[Uuid],
        labels: &[LabelId],
        mode: BatchMode,
    ) -> Result<u64, RepoError> {
        let mut state = lock(&self.state);
        let labels = state.of_org(org, labels);
        let mut changed = 0;
        for entity in entities.iter().copied().collect::<BTreeSet<_>>() {
            let current = state.carried(kind, entity);
            let wanted: Vec<LabelId> = match mode {
                BatchMode::Add => current.iter().chain(&labels).copied().collect(),
                BatchMode::Remove => current
                    .iter()
                    .filter(|l| !labels.contains(l))
                    .copied()
                    .collect(),
                BatchMode::Replace => labels.clone(),
            };
            if state.replace(org, kind, entity, &wanted) {
                changed += 1;
            }
        }
        Ok(changed)
    }
}

/// People's stars, for the people of an [`InMemoryOrgRepository`].
pub struct InMemoryFeaturedRepository {
    people: Arc<InMemoryOrgRepository>,
    stars: Mutex<Stars>,
}

/// `(user, kind, entity)` with the number of the call that starred it: Postgres orders by the
/// star's transaction time, then entity id.
#[derive(Default)]
struct Stars {
    calls: u64,
    starred: Vec<((UserId, EntityKind, Uuid), u64)>,
}

impl InMemoryFeaturedRepository {
    pub fn new(people: Arc<InMemoryOrgRepository>) -> Self {
        InMemoryFeaturedRepository {
            people,
            stars: Mutex::new(Stars::default()),
        }
    }
}

#[async_trait]
impl FeaturedRepository for InMemoryFeaturedRepository {
    async fn featured(&self, user: UserId, kind: EntityKind) -> Result<Vec<Uuid>, RepoError> {
        let stars = lock(&self.stars);
        let mut mine: Vec<(u64, Uuid)> = stars
            .starred
            .iter()
            .filter(|((u, k, _), _)| *u == user && *k == kind)
            .map(|((_, _, e), call)| (*call, *e))
            .collect();
        mine.sort();
        Ok(mine.into_iter().map(|(_, e)| e).collect())
    }

    async fn set_featured(
        &self,
        _org: OrgId,
        user: UserId,
        kind: EntityKind,
        entities: &[Uuid],
        featured: bool,
    ) -> Result<Vec<Uuid>, RepoError> {
        if self.people.find_user(user).await.is_err() {
            return Err(conflict("featured_entities_user_id_fkey"));
        }
        let mut stars = lock(&self.stars);
        stars.calls += 1;
        let call = stars.calls;
        let mut changed = Vec::new();
        for entity in entities {
            let star = (user, kind, *entity);
            let present = stars.starred.iter().any(|(s, _)| *s == star);
            if featured && !present {
                stars.starred.push((star, call));
                changed.push(*entity);
            } else if !featured && present {
                stars.starred.retain(|(s, _)| *s != star);
                changed.push(*entity);
            }
        }
        Ok(changed)
    }
}

/// The entities other areas keep, as a set tests fill with [`InMemoryLabelledEntities::insert`].
#[derive(Default)]
pub struct InMemoryLabelledEntities {
    entities: Mutex<HashSet<(OrgId, EntityKind, Uuid)>>,
}

impl InMemoryLabelledEntities {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `id` an entity of `kind` in `org`.
    pub fn insert(&self, org: OrgId, kind: EntityKind, id: Uuid) {
        lock(&self.entities).insert((org, kind, id));
    }
}

#[async_trait]
impl LabelledEntities for InMemoryLabelledEntities {
    async fn existing(
        &self,
        org: OrgId,
        kind: EntityKind,
        ids: &[Uuid],
    ) -> Result<Vec<Uuid>, RepoError> {
        let entities = lock(&self.entities);
        Ok(ids
            .iter()
            .copied()
            .collect::<HashSet<_>>()
            .into_iter()
            .filter(|id| entities.contains(&(org, kind, *id)))
            .collect())
    }
}

/// Every labels port in memory, over one set of organizations and people.
#[derive(Clone)]
pub struct InMemoryLabelPorts {
    pub labels: Arc<InMemoryLabelRepository>,
    pub featured: Arc<InMemoryFeaturedRepository>,
    pub entities: Arc<InMemoryLabelledEntities>,
}

impl InMemoryLabelPorts {
    pub fn new(people: Arc<InMemoryOrgRepository>) -> Self {
        InMemoryLabelPorts {
            labels: Arc::new(InMemoryLabelRepository::new(people.clone())),
            featured: Arc::new(InMemoryFeaturedRepository::new(people)),
            entities: Arc::new(InMemoryLabelledEntities::new()),
        }
    }
}
