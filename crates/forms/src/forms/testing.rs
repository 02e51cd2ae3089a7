//! An in-memory [`FormRepository`], for rule tests and the port contract suite. It answers like
//! the Postgres adapter: forms and responses scoped by organization (`NotFound`), the owner and
//! submitter read from the directory as they are now, the enabled-command uniqueness among
//! live forms (`Conflict` on `forms_live_command_key`), the same versioned writes, orderings
//! (names byte-wise, ties by id) and counts. Labels and stars, which the labels area writes in
//! Postgres, are set with [`InMemoryFormRepository::label`] and [`InMemoryFormRepository::star`].

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_org::testing::InMemoryOrgRepository;
use teamcomm_org::{OrgRepository, User, UserFilter};
use uuid::Uuid;

use super::model::{
    Archived, Form, FormOrder, FormResponse, FormSelection, Person, ResponseSelection, StateChange,
    StateMigration, SubmissionSource, Written,
};
use super::ports::FormRepository;
use super::service::COMMAND_CONSTRAINT;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Default)]
struct Store {
    /// As written (`response_count` is computed on read).
    forms: HashMap<Uuid, Form>,
    responses: HashMap<Uuid, FormResponse>,
    /// (organization, form, label)
    labels: HashSet<(OrgId, Uuid, Uuid)>,
    /// (person, form)
    stars: HashSet<(UserId, Uuid)>,
}

impl Store {
    fn command_taken(&self, form: &Form) -> bool {
        fn live_command(f: &Form) -> Option<&str> {
            (!f.is_archived && f.settings.command_enabled)
                .then_some(f.settings.command.as_deref())
                .flatten()
        }
        live_command(form).is_some_and(|c| {
            self.forms.values().any(|other| {
                other.id != form.id && other.org_id == form.org_id && live_command(other) == Some(c)
            })
        })
    }

    fn form_version(&self, org: OrgId, form: Uuid) -> Result<i32, RepoError> {
        self.forms
            .get(&form)
            .filter(|f| f.org_id == org)
            .map(|f| f.version)
            .ok_or(RepoError::NotFound)
    }

    fn count(&self, form: Uuid) -> u64 {
        self.responses
            .values()
            .filter(|r| r.form_id == form)
            .count() as u64
    }
}

/// Forms and responses held in memory over the in-memory directory.
pub struct InMemoryFormRepository {
    people: Arc<InMemoryOrgRepository>,
    store: Mutex<Store>,
}

impl InMemoryFormRepository {
    /// Forms of the organizations and people of `people`; events go to its outbox.
    pub fn new(people: Arc<InMemoryOrgRepository>) -> Self {
        InMemoryFormRepository {
            people,
            store: Mutex::new(Store::default()),
        }
    }

    /// Puts a label on a form (a row of `entity_labels` in Postgres).
    pub fn label(&self, org: OrgId, form: Uuid, label: Uuid) {
        lock(&self.store).labels.insert((org, form, label));
    }

    /// Stars a form for a person (a row of `featured_entities` in Postgres).
    pub fn star(&self, user: UserId, form: Uuid) {
        lock(&self.store).stars.insert((user, form));
    }

    /// The person as the directory holds them now.
    async fn person(&self, org: OrgId, id: UserId) -> Result<Person, RepoError> {
        let u = self.people.get_user(org, id).await?;
        Ok(Person {
            id: u.id,
            full_name: u.full_name(),
            email: u.email,
        })
    }

    async fn read_form(&self, mut form: Form, count: u64) -> Result<Form, RepoError> {
        form.owner = self.person(form.org_id, form.owner.id).await?;
        form.response_count = count;
        Ok(form)
    }

    async fn read_response(&self, mut r: FormResponse) -> Result<FormResponse, RepoError> {
        r.submitter = self.person(r.org_id, r.submitter.id).await?;
        for change in &mut r.history {
            if let Some(actor) = &change.actor {
                change.actor = self.person(r.org_id, actor.id).await.ok();
            }
        }
        Ok(r)
    }

    /// Every person of `org`, for matching names and e-mails as they are now.
    async fn directory(&self, org: OrgId) -> Result<HashMap<UserId, User>, RepoError> {
        Ok(self
            .people
            .list_users(org, &UserFilter::default(), PageRequest::all())
            .await?
            .results
            .into_iter()
            .map(|u| (u.id, u))
            .collect())
    }
}

/// The table's `CHECK (char_length(name) BETWEEN 3 AND 200)` (an unexpected error there).
fn check_name(form: &Form) -> Result<(), RepoError> {
    if (3..=200).contains(&form.name.chars().count()) {
        Ok(())
    } else {
        Err(RepoError::Other(
            "violates check constraint forms_name_check".to_owned(),
        ))
    }
}

/// One page of an already ordered list, counted before slicing.
fn page_of<T>(rows: Vec<T>, page: PageRequest) -> Page<T> {
    let count = rows.len() as u64;
    let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
    Page {
        count,
        results: rows.into_iter().skip(offset).take(limit).collect(),
    }
}

/// What the adapter's `LIKE lower('%fragment%')` over a stored lower-case text answers.
fn matches(stored_lower: &str, fragment: &str) -> bool {
    stored_lower.contains(&fragment.to_lowercase())
}

fn person_matches(u: &User, fragment: &str) -> bool {
    matches(
        &format!("{} {}", u.first_name, u.last_name).to_lowercase(),
        fragment,
    ) || matches(&u.email.to_lowercase(), fragment)
}

#[async_trait]
impl FormRepository for InMemoryFormRepository {
    async fn insert_form(&self, form: &Form) -> Result<(), RepoError> {
        check_name(form)?;
        self.person(form.org_id, form.owner.id).await?;
        let mut store = lock(&self.store);
        if store.command_taken(form) {
            return Err(RepoError::Conflict {
                constraint: COMMAND_CONSTRAINT.to_owned(),
            });
        }
        let mut stored = form.clone();
        stored.response_count = 0;
        store.forms.insert(form.id, stored);
        Ok(())
    }

    async fn update_form(
        &self,
        form: &Form,
        seen_version: i32,
        states: &StateMigration,
    ) -> Result<Written, RepoError> {
        check_name(form)?;
        let mut store = lock(&self.store);
        if store.form_version(form.org_id, form.id)? != seen_version {
            return Ok(Written::FormChanged);
        }
        if store.command_taken(form) {
            return Err(RepoError::Conflict {
                constraint: COMMAND_CONSTRAINT.to_owned(),
            });
        }
        let responses = store
            .responses
            .values_mut()
            .filter(|r| r.form_id == form.id);
        match states {
            StateMigration::Keep => {}
            StateMigration::Clear => responses.for_each(|r| r.current_state = None),
            StateMigration::Start(initial) => responses
                .filter(|r| r.current_state.is_none())
                .for_each(|r| r.current_state = Some(initial.clone())),
            StateMigration::Remove(keys) => {
                let mut held: Vec<String> = responses
                    .filter_map(|r| r.current_state.clone())
                    .filter(|s| keys.contains(s))
                    .collect::<HashSet<_>>()
                    .into_iter()
                    .collect();
                if !held.is_empty() {
                    held.sort();
                    return Ok(Written::StatesInUse(held));
                }
            }
        }
        let mut stored = form.clone();
        stored.version = seen_version + 1;
        store.forms.insert(form.id, stored);
        Ok(Written::Done)
    }

    async fn get_form(&self, org: OrgId, id: Uuid) -> Result<Form, RepoError> {
        let (form, count) = {
            let store = lock(&self.store);
            let form = store
                .forms
                .get(&id)
                .filter(|f| f.org_id == org)
                .cloned()
                .ok_or(RepoError::NotFound)?;
            (form, store.count(id))
        };
        self.read_form(form, count).await
    }

    async fn list_forms(
        &self,
        org: OrgId,
        s: &FormSelection,
        page: PageRequest,
    ) -> Result<Page<Form>, RepoError> {
        let (rows, stars) = {
            let store = lock(&self.store);
            let labelled = |f: &Form| {
                s.labels
                    .iter()
                    .any(|l| store.labels.contains(&(org, f.id, *l)))
            };
            let starred = |f: &Form| store.stars.contains(&(s.viewer, f.id));
            let rows: Vec<(Form, u64)> = store
                .forms
                .values()
                .filter(|f| f.org_id == org)
                .filter(|f| match s.archived {
                    Archived::Exclude => !f.is_archived,
                    Archived::Include => true,
                    Archived::Only => f.is_archived,
                })
                .filter(|f| s.owners.as_ref().is_none_or(|o| o.contains(&f.owner.id)))
                .filter(|f| !s.public_only || f.settings.allow_public_responses)
                .filter(|f| !s.approval_only || f.settings.use_for_approval)
                .filter(|f| !s.workflow_only || f.settings.workflow.is_some())
                .filter(|f| {
                    s.search
                        .as_deref()
                        .is_none_or(|q| matches(&f.name.to_lowercase(), q))
                })
                .filter(|f| s.from.is_none_or(|t| f.created_at >= t))
                .filter(|f| s.until.is_none_or(|t| f.created_at < t))
                .filter(|f| s.labels.is_empty() || labelled(f))
                .filter(|f| s.featured.is_none_or(|want| starred(f) == want))
                .map(|f| (f.clone(), store.count(f.id)))
                .collect();
            let stars: HashSet<Uuid> = rows
                .iter()
                .filter(|(f, _)| starred(f))
                .map(|(f, _)| f.id)
                .collect();
            (rows, stars)
        };
        let mut rows = rows;
        rows.sort_by(|(a, ca), (b, cb)| {
            let featured = if s.featured_first {
                stars.contains(&b.id).cmp(&stars.contains(&a.id))
            } else {
                Ordering::Equal
            };
            let by = match s.order {
                FormOrder::Alphabetical => a.name.as_bytes().cmp(b.name.as_bytes()),
                FormOrder::Recent => a.created_at.cmp(&b.created_at),
                FormOrder::Total => ca.cmp(cb),
            }
            .then(a.id.cmp(&b.id));
            featured.then(if s.ascending { by } else { by.reverse() })
        });
        let page = page_of(rows, page);
        let mut results = Vec::with_capacity(page.results.len());
        for (form, count) in page.results {
            results.push(self.read_form(form, count).await?);
        }
        Ok(Page {
            count: page.count,
            results,
        })
    }

    async fn list_form_owners(
        &self,
        org: OrgId,
        search: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<User>, RepoError> {
        let owners: HashSet<UserId> = lock(&self.store)
            .forms
            .values()
            .filter(|f| f.org_id == org && !f.is_archived)
            .map(|f| f.owner.id)
            .collect();
        let mut people: Vec<User> = self
            .directory(org)
            .await?
            .into_values()
            .filter(|u| owners.contains(&u.id))
            .filter(|u| search.is_none_or(|q| person_matches(u, q)))
            .collect();
        people.sort_by(|a, b| {
            (&a.first_name, &a.last_name, a.id).cmp(&(&b.first_name, &b.last_name, b.id))
        });
        Ok(page_of(people, page))
    }

    async fn insert_response(
        &self,
        response: &FormResponse,
        form_version: i32,
        event: &Event,
    ) -> Result<Written, RepoError> {
        self.person(response.org_id, response.submitter.id).await?;
        let mut store = lock(&self.store);
        if store.form_version(response.org_id, response.form_id)? != form_version {
            return Ok(Written::FormChanged);
        }
        store.responses.insert(response.id, response.clone());
        self.people.events().record([event.clone()]);
        Ok(Written::Done)
    }

    async fn get_response(
        &self,
        org: OrgId,
        form: Uuid,
        id: Uuid,
    ) -> Result<FormResponse, RepoError> {
        let r = lock(&self.store)
            .responses
            .get(&id)
            .filter(|r| r.org_id == org && r.form_id == form)
            .cloned()
            .ok_or(RepoError::NotFound)?;
        self.read_response(r).await
    }

    async fn list_responses(
        &self,
        org: OrgId,
        form: Uuid,
        s: &ResponseSelection,
        page: PageRequest,
    ) -> Result<Page<FormResponse>, RepoError> {
        let people = self.directory(org).await?;
        let shows = |r: &FormResponse, who: UserId| {
            r.submitter.id == who && (r.source == SubmissionSource::Member || who == s.viewer)
        };
        let mut rows: Vec<FormResponse> = lock(&self.store)
            .responses
            .values()
            .filter(|r| r.org_id == org && r.form_id == form)
            .filter(|r| !s.own_only || r.submitter.id == s.viewer)
            .filter(|r| {
                s.submitters
                    .as_ref()
                    .is_none_or(|list| list.iter().any(|u| shows(r, *u)))
            })
            .filter(|r| {
                s.states
                    .as_ref()
                    .is_none_or(|keys| r.current_state.as_ref().is_some_and(|c| keys.contains(c)))
            })
            .filter(|r| s.sources.is_empty() || s.sources.contains(&r.source))
            .filter(|r| s.from.is_none_or(|t| r.created_at >= t))
            .filter(|r| s.until.is_none_or(|t| r.created_at < t))
            .filter(|r| {
                s.search.as_deref().is_none_or(|q| {
                    matches(&r.search_text(), q)
                        || (r.reveals_submitter()
                            && people
                                .get(&r.submitter.id)
                                .is_some_and(|u| person_matches(u, q)))
                })
            })
            .cloned()
            .collect();
        rows.sort_by(|a, b| {
            let by = (a.created_at, a.id).cmp(&(b.created_at, b.id));
            if s.oldest_first { by } else { by.reverse() }
        });
        let page = page_of(rows, page);
        let mut results = Vec::with_capacity(page.results.len());
        for r in page.results {
            results.push(self.read_response(r).await?);
        }
        Ok(Page {
            count: page.count,
            results,
        })
    }

    async fn update_response_content(
        &self,
        response: &FormResponse,
        seen_version: i32,
        form_version: i32,
        event: &Event,
    ) -> Result<Written, RepoError> {
        let mut store = lock(&self.store);
        if store.form_version(response.org_id, response.form_id)? != form_version {
            return Ok(Written::FormChanged);
        }
        let stored = store
            .responses
            .get_mut(&response.id)
            .filter(|r| r.org_id == response.org_id && r.form_id == response.form_id)
            .ok_or(RepoError::NotFound)?;
        if stored.version != seen_version {
            return Ok(Written::ResponseChanged);
        }
        stored.content = response.content.clone();
        stored.edited = response.edited;
        stored.updated_at = response.updated_at;
        stored.version += 1;
        self.people.events().record([event.clone()]);
        Ok(Written::Done)
    }

    async fn transition_response(
        &self,
        org: OrgId,
        form: Uuid,
        form_version: i32,
        response: Uuid,
        change: &StateChange,
        event: &Event,
    ) -> Result<Written, RepoError> {
        let mut store = lock(&self.store);
        if store.form_version(org, form)? != form_version {
            return Ok(Written::FormChanged);
        }
        let stored = store
            .responses
            .get_mut(&response)
            .filter(|r| r.org_id == org && r.form_id == form)
            .ok_or(RepoError::NotFound)?;
        if stored.current_state.as_deref() != Some(change.from_state.as_str()) {
            return Ok(Written::ResponseChanged);
        }
        stored.current_state = Some(change.to_state.clone());
        stored.history.push(change.clone());
        stored.updated_at = change.at;
        stored.version += 1;
        self.people.events().record([event.clone()]);
        Ok(Written::Done)
    }

    async fn delete_response(
        &self,
        org: OrgId,
        form: Uuid,
        id: Uuid,
        event: &Event,
    ) -> Result<(), RepoError> {
        let mut store = lock(&self.store);
        let found = store
            .responses
            .get(&id)
            .is_some_and(|r| r.org_id == org && r.form_id == form);
        if !found {
            return Err(RepoError::NotFound);
        }
        store.responses.remove(&id);
        self.people.events().record([event.clone()]);
        Ok(())
    }
}
