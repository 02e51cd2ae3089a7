//! SQL of forms, their responses and the responses' workflow moves.
//!
//! Settings that lists filter on are columns; audiences, approvers, the workflow and the
//! questions are JSON documents decoded strictly (an unknown key or value is an error, never
//! a default). Every response write holds its form's row shared (`FOR SHARE`) and checks the
//! form's version in the same transaction, and every form write bumps it under the row lock,
//! so the two never interleave.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use diesel::dsl::exists;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use teamcomm_forms::forms::{
    Archived, Audience, AudienceMode, Form, FormOrder, FormRepository, FormResponse, FormSelection,
    FormSettings, GuestUser, Members, Person, ResponseSelection, StateChange, StateMigration,
    SubmissionSource, Workflow, WorkflowState, Written, content_json,
};
use teamcomm_forms::questions::{Question, QuestionSet};
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, TeamId, UserId, WireEnum};
use teamcomm_org::{User, full_name};
use time::OffsetDateTime;
use uuid::Uuid;

use super::outbox;
use super::paging::{like_pattern, load_page};
use crate::Database;
use crate::error::db_error;
use crate::rows::{UserRow, unknown_value};
use crate::schema::forms::{form_response_transitions, form_responses, forms};
use crate::schema::labels::{entity_labels, featured_entities};
use crate::schema::users;

/// The `entity_type` of forms in the labels area's tables.
const ENTITY_TYPE: &str = "forms";

/// Postgres implementation of [`FormRepository`].
#[derive(Clone)]
pub struct PgFormRepository {
    db: Database,
}

impl PgFormRepository {
    pub fn new(db: Database) -> Self {
        PgFormRepository { db }
    }
}

// ------------------------------------------------------------------------- JSON documents

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredAudience {
    mode: String,
    user_uuids: Vec<Uuid>,
    team_uuids: Vec<Uuid>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredMembers {
    user_uuids: Vec<Uuid>,
    team_uuids: Vec<Uuid>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredState {
    key: String,
    label: String,
    color: String,
    order: u32,
    is_final: bool,
}

fn to_json<T: Serialize>(column: &str, value: &T) -> Result<Value, RepoError> {
    serde_json::to_value(value).map_err(|e| RepoError::Other(format!("encoding {column}: {e}")))
}

fn from_json<T: for<'de> Deserialize<'de>>(column: &str, value: Value) -> Result<T, RepoError> {
    serde_json::from_value(value).map_err(|e| unknown_value(column, e))
}

fn members_json(m: &Members) -> Result<Value, RepoError> {
    to_json(
        "forms.approvers",
        &StoredMembers {
            user_uuids: m.users.iter().map(|u| u.0).collect(),
            team_uuids: m.teams.iter().map(|t| t.0).collect(),
        },
    )
}

fn members_of(user_uuids: Vec<Uuid>, team_uuids: Vec<Uuid>) -> Members {
    Members {
        users: user_uuids.into_iter().map(UserId).collect(),
        teams: team_uuids.into_iter().map(TeamId).collect(),
    }
}

fn audience_json(a: &Audience) -> Result<Value, RepoError> {
    to_json(
        "forms.who_can_*",
        &StoredAudience {
            mode: a.mode.as_str().to_owned(),
            user_uuids: a.members.users.iter().map(|u| u.0).collect(),
            team_uuids: a.members.teams.iter().map(|t| t.0).collect(),
        },
    )
}

fn audience(column: &str, value: Value) -> Result<Audience, RepoError> {
    let stored: StoredAudience = from_json(column, value)?;
    Ok(Audience {
        mode: AudienceMode::from_name(&stored.mode)
            .ok_or_else(|| unknown_value(column, &stored.mode))?,
        members: members_of(stored.user_uuids, stored.team_uuids),
    })
}

fn workflow_json(w: &Workflow) -> Result<Value, RepoError> {
    let states: Vec<StoredState> = w
        .states()
        .iter()
        .map(|s| StoredState {
            key: s.key.clone(),
            label: s.label.clone(),
            color: s.color.clone(),
            order: s.order,
            is_final: s.is_final,
        })
        .collect();
    to_json("forms.workflow", &states)
}

fn workflow(value: Value) -> Result<Workflow, RepoError> {
    let states: Vec<StoredState> = from_json("forms.workflow", value)?;
    if states.is_empty() {
        return Err(unknown_value("forms.workflow", "[]"));
    }
    Ok(Workflow::from_stored(
        states
            .into_iter()
            .map(|s| WorkflowState {
                key: s.key,
                label: s.label,
                color: s.color,
                order: s.order,
                is_final: s.is_final,
            })
            .collect(),
    ))
}

fn content(value: Value) -> Result<BTreeMap<Uuid, Value>, RepoError> {
    let Value::Object(map) = value else {
        return Err(unknown_value("form_responses.content", value));
    };
    map.into_iter()
        .map(|(k, v)| {
            Uuid::parse_str(&k)
                .map(|id| (id, v))
                .map_err(|_| unknown_value("form_responses.content", &k))
        })
        .collect()
}

// ------------------------------------------------------------------------------ rows

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = forms, check_for_backend(diesel::pg::Pg))]
struct FormRow {
    id: Uuid,
    organization_id: Uuid,
    owner_id: Uuid,
    name: String,
    questions: Value,
    questions_version: i32,
    report_channels: Vec<String>,
    is_active: bool,
    is_anonymous: bool,
    allow_public_responses: bool,
    require_email_and_name: bool,
    brand_with_logo: bool,
    allow_reopen_from_final_state: bool,
    use_for_approval: bool,
    workflow: Option<Value>,
    who_can_edit: Value,
    who_can_see_responses: Value,
    who_can_change_states: Value,
    approvers: Value,
    command: Option<String>,
    command_enabled: bool,
    is_archived: bool,
    version: i32,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

/// A form with its owner's name and e-mail and its number of responses.
#[derive(Debug, Queryable)]
struct ReadFormRow {
    form: FormRow,
    owner_first_name: String,
    owner_last_name: String,
    owner_email: String,
    responses: Option<i64>,
}

impl TryFrom<ReadFormRow> for Form {
    type Error = RepoError;
    fn try_from(r: ReadFormRow) -> Result<Self, RepoError> {
        let owner = Person {
            id: UserId(r.form.owner_id),
            full_name: full_name(&r.owner_first_name, &r.owner_last_name),
            email: r.owner_email,
        };
        decode_form(r.form, owner, r.responses)
    }
}

/// A form of a list page with its number of responses (owners are read for the page).
#[derive(Debug, Queryable)]
struct CountedFormRow {
    form: FormRow,
    responses: Option<i64>,
}

/// A page's form row, decoded once its owner is read.
struct PagedForm(CountedFormRow);

impl TryFrom<CountedFormRow> for PagedForm {
    type Error = RepoError;
    fn try_from(r: CountedFormRow) -> Result<Self, RepoError> {
        Ok(PagedForm(r))
    }
}

fn decode_form(f: FormRow, owner: Person, responses: Option<i64>) -> Result<Form, RepoError> {
    {
        let approvers: StoredMembers = from_json("forms.approvers", f.approvers)?;
        Ok(Form {
            id: f.id,
            org_id: OrgId(f.organization_id),
            owner,
            name: f.name,
            questions: QuestionSet {
                questions: from_json::<Vec<Question>>("forms.questions", f.questions)?,
                version: f.questions_version,
            },
            report_channels: f.report_channels,
            settings: FormSettings {
                is_active: f.is_active,
                is_anonymous: f.is_anonymous,
                allow_public_responses: f.allow_public_responses,
                require_email_and_name: f.require_email_and_name,
                brand_with_logo: f.brand_with_logo,
                allow_reopen_from_final_state: f.allow_reopen_from_final_state,
                use_for_approval: f.use_for_approval,
                workflow: f.workflow.map(workflow).transpose()?,
                who_can_edit: audience("forms.who_can_edit", f.who_can_edit)?,
                who_can_see_responses: audience(
                    "forms.who_can_see_responses",
                    f.who_can_see_responses,
                )?,
                who_can_change_states: audience(
                    "forms.who_can_change_states",
                    f.who_can_change_states,
                )?,
                approvers: members_of(approvers.user_uuids, approvers.team_uuids),
                command: f.command,
                command_enabled: f.command_enabled,
            },
            is_archived: f.is_archived,
            version: f.version,
            response_count: crate::repo::count_from(responses.unwrap_or(0))?,
            created_at: f.created_at,
            updated_at: f.updated_at,
        })
    }
}

/// What every form write sets.
#[derive(Debug, Insertable, AsChangeset)]
#[diesel(table_name = forms, treat_none_as_null = true)]
struct FormFields {
    name: String,
    questions: Value,
    questions_version: i32,
    report_channels: Vec<String>,
    is_active: bool,
    is_anonymous: bool,
    allow_public_responses: bool,
    require_email_and_name: bool,
    brand_with_logo: bool,
    allow_reopen_from_final_state: bool,
    use_for_approval: bool,
    workflow: Option<Value>,
    who_can_edit: Value,
    who_can_see_responses: Value,
    who_can_change_states: Value,
    approvers: Value,
    command: Option<String>,
    command_enabled: bool,
    is_archived: bool,
    updated_at: OffsetDateTime,
}

impl FormFields {
    fn of(f: &Form) -> Result<Self, RepoError> {
        let s = &f.settings;
        Ok(FormFields {
            name: f.name.clone(),
            questions: to_json("forms.questions", &f.questions.questions)?,
            questions_version: f.questions.version,
            report_channels: f.report_channels.clone(),
            is_active: s.is_active,
            is_anonymous: s.is_anonymous,
            allow_public_responses: s.allow_public_responses,
            require_email_and_name: s.require_email_and_name,
            brand_with_logo: s.brand_with_logo,
            allow_reopen_from_final_state: s.allow_reopen_from_final_state,
            use_for_approval: s.use_for_approval,
            workflow: s.workflow.as_ref().map(workflow_json).transpose()?,
            who_can_edit: audience_json(&s.who_can_edit)?,
            who_can_see_responses: audience_json(&s.who_can_see_responses)?,
            who_can_change_states: audience_json(&s.who_can_change_states)?,
            approvers: members_json(&s.approvers)?,
            command: s.command.clone(),
            command_enabled: s.command_enabled,
            is_archived: f.is_archived,
            updated_at: f.updated_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = form_responses, check_for_backend(diesel::pg::Pg))]
struct ResponseRow {
    id: Uuid,
    organization_id: Uuid,
    form_id: Uuid,
    submitted_by: Uuid,
    submission_source: String,
    submission_label: Option<String>,
    guest_name: Option<String>,
    guest_email: Option<String>,
    content: Value,
    current_state: Option<String>,
    edited: bool,
    version: i32,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

/// A response with its submitter's name and e-mail.
#[derive(Debug, Queryable)]
struct ReadResponseRow {
    response: ResponseRow,
    first_name: String,
    last_name: String,
    email: String,
}

impl ReadResponseRow {
    fn decode(self, history: Vec<StateChange>) -> Result<FormResponse, RepoError> {
        let r = self.response;
        let guest = (r.guest_name.is_some() || r.guest_email.is_some()).then_some(GuestUser {
            full_name: r.guest_name,
            email: r.guest_email,
        });
        Ok(FormResponse {
            id: r.id,
            org_id: OrgId(r.organization_id),
            form_id: r.form_id,
            submitter: Person {
                id: UserId(r.submitted_by),
                full_name: full_name(&self.first_name, &self.last_name),
                email: self.email,
            },
            source: SubmissionSource::from_name(&r.submission_source).ok_or_else(|| {
                unknown_value("form_responses.submission_source", &r.submission_source)
            })?,
            label: r.submission_label,
            guest,
            content: content(r.content)?,
            current_state: r.current_state,
            history,
            edited: r.edited,
            version: r.version,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

/// A page's response row, decoded once its history is read.
struct PagedResponse(ReadResponseRow);

impl TryFrom<ReadResponseRow> for PagedResponse {
    type Error = RepoError;
    fn try_from(r: ReadResponseRow) -> Result<Self, RepoError> {
        Ok(PagedResponse(r))
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = form_response_transitions, check_for_backend(diesel::pg::Pg))]
struct TransitionRow {
    response_id: Uuid,
    from_state: String,
    to_state: String,
    actor_id: Option<Uuid>,
    note: Option<String>,
    at: OffsetDateTime,
}

/// A move with its actor's name and e-mail (none once the actor is gone).
#[derive(Debug, Queryable)]
struct ReadTransitionRow {
    transition: TransitionRow,
    first_name: Option<String>,
    last_name: Option<String>,
    email: Option<String>,
}

/// The columns of a [`ReadFormRow`]: the form, its owner, its number of responses.
macro_rules! form_columns {
    () => {
        (
            FormRow::as_select(),
            users::first_name,
            users::last_name,
            users::email,
            response_count!(),
        )
    };
}

/// The number of responses of the form of the outer query.
macro_rules! response_count {
    () => {
        form_responses::table
            .filter(form_responses::form_id.eq(forms::id))
            .count()
            .single_value()
    };
}

fn response_columns() -> (
    diesel::helper_types::AsSelect<ResponseRow, diesel::pg::Pg>,
    users::first_name,
    users::last_name,
    users::email,
) {
    (
        ResponseRow::as_select(),
        users::first_name,
        users::last_name,
        users::email,
    )
}

/// The moves of these responses, oldest first, by response.
async fn histories(
    conn: &mut AsyncPgConnection,
    ids: &[Uuid],
) -> QueryResult<HashMap<Uuid, Vec<StateChange>>> {
    let rows: Vec<ReadTransitionRow> = form_response_transitions::table
        .left_join(users::table.on(users::id.nullable().eq(form_response_transitions::actor_id)))
        .filter(form_response_transitions::response_id.eq_any(ids))
        .order_by((form_response_transitions::at, form_response_transitions::id))
        .select((
            TransitionRow::as_select(),
            users::first_name.nullable(),
            users::last_name.nullable(),
            users::email.nullable(),
        ))
        .load(conn)
        .await?;
    let mut by_response: HashMap<Uuid, Vec<StateChange>> = HashMap::new();
    for r in rows {
        let t = r.transition;
        let actor = match (t.actor_id, r.first_name, r.last_name, r.email) {
            (Some(id), Some(first), Some(last), Some(email)) => Some(Person {
                id: UserId(id),
                full_name: full_name(&first, &last),
                email,
            }),
            _ => None,
        };
        by_response
            .entry(t.response_id)
            .or_default()
            .push(StateChange {
                from_state: t.from_state,
                to_state: t.to_state,
                actor,
                note: t.note,
                at: t.at,
            });
    }
    Ok(by_response)
}

/// Why a transaction rolled back.
enum Rollback {
    Db(diesel::result::Error),
    /// The write was refused as this outcome (nothing written).
    Refused(Written),
}

impl From<diesel::result::Error> for Rollback {
    fn from(e: diesel::result::Error) -> Self {
        Rollback::Db(e)
    }
}

fn settle(r: Result<Written, Rollback>) -> Result<Written, RepoError> {
    match r {
        Ok(w) | Err(Rollback::Refused(w)) => Ok(w),
        Err(Rollback::Db(e)) => Err(db_error(e)),
    }
}

/// Holds the form shared until the end of the transaction and answers its version
/// (`NotFound` for no such form in `org`).
async fn lock_form(conn: &mut AsyncPgConnection, org: OrgId, form: Uuid) -> QueryResult<i32> {
    forms::table
        .filter(forms::id.eq(form).and(forms::organization_id.eq(org.0)))
        .select(forms::version)
        .for_share()
        .first(conn)
        .await
}

/// `NotFound` unless the person belongs to `org`.
async fn person_of(conn: &mut AsyncPgConnection, org: OrgId, user: UserId) -> QueryResult<()> {
    let found: bool = diesel::select(exists(
        users::table.filter(users::id.eq(user.0).and(users::organization_id.eq(org.0))),
    ))
    .get_result(conn)
    .await?;
    if found {
        Ok(())
    } else {
        Err(diesel::result::Error::NotFound)
    }
}

/// Whether the response exists in the form of `org` (to tell a stale write from a missing one).
async fn response_exists(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    form: Uuid,
    id: Uuid,
) -> QueryResult<bool> {
    diesel::select(exists(
        form_responses::table.filter(
            form_responses::id
                .eq(id)
                .and(form_responses::form_id.eq(form))
                .and(form_responses::organization_id.eq(org.0)),
        ),
    ))
    .get_result(conn)
    .await
}

#[async_trait]
impl FormRepository for PgFormRepository {
    async fn insert_form(&self, form: &Form) -> Result<(), RepoError> {
        let fields = FormFields::of(form)?;
        let (id, org, owner, version, created_at) = (
            form.id,
            form.org_id,
            form.owner.id,
            form.version,
            form.created_at,
        );
        let mut conn = self.db.conn().await?;
        conn.transaction(async move |conn| {
            person_of(conn, org, owner).await?;
            diesel::insert_into(forms::table)
                .values((
                    forms::id.eq(id),
                    forms::organization_id.eq(org.0),
                    forms::owner_id.eq(owner.0),
                    forms::version.eq(version),
                    forms::created_at.eq(created_at),
                    fields,
                ))
                .execute(conn)
                .await?;
            Ok::<_, diesel::result::Error>(())
        })
        .await
        .map_err(db_error)
    }

    async fn update_form(
        &self,
        form: &Form,
        seen_version: i32,
        states: &StateMigration,
    ) -> Result<Written, RepoError> {
        let fields = FormFields::of(form)?;
        let (id, org) = (form.id, form.org_id);
        let states = states.clone();
        let mut conn = self.db.conn().await?;
        settle(
            conn.transaction(async move |conn| {
                let this =
                    || forms::table.filter(forms::id.eq(id).and(forms::organization_id.eq(org.0)));
                let updated = diesel::update(this().filter(forms::version.eq(seen_version)))
                    .set((&fields, forms::version.eq(seen_version + 1)))
                    .execute(conn)
                    .await?;
                if updated == 0 {
                    let found: bool = diesel::select(exists(this())).get_result(conn).await?;
                    return if found {
                        Ok(Written::FormChanged)
                    } else {
                        Err(diesel::result::Error::NotFound.into())
                    };
                }
                let of_form = form_responses::table.filter(form_responses::form_id.eq(id));
                match states {
                    StateMigration::Keep => {}
                    StateMigration::Clear => {
                        diesel::update(of_form)
                            .set(form_responses::current_state.eq(None::<String>))
                            .execute(conn)
                            .await?;
                    }
                    StateMigration::Start(initial) => {
                        diesel::update(of_form.filter(form_responses::current_state.is_null()))
                            .set(form_responses::current_state.eq(initial))
                            .execute(conn)
                            .await?;
                    }
                    StateMigration::Remove(keys) => {
                        // The form's row is locked by the update: no response can move into
                        // these states before the transaction ends.
                        let held: Vec<Option<String>> = of_form
                            .filter(form_responses::current_state.eq_any(keys))
                            .select(form_responses::current_state)
                            .distinct()
                            .order_by(form_responses::current_state)
                            .load(conn)
                            .await?;
                        if !held.is_empty() {
                            return Err(Rollback::Refused(Written::StatesInUse(
                                held.into_iter().flatten().collect(),
                            )));
                        }
                    }
                }
                Ok(Written::Done)
            })
            .await,
        )
    }

    async fn get_form(&self, org: OrgId, id: Uuid) -> Result<Form, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: ReadFormRow = forms::table
            .inner_join(users::table.on(users::id.eq(forms::owner_id)))
            .filter(forms::id.eq(id).and(forms::organization_id.eq(org.0)))
            .select(form_columns!())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn list_forms(
        &self,
        org: OrgId,
        s: &FormSelection,
        page: PageRequest,
    ) -> Result<Page<Form>, RepoError> {
        let mut conn = self.db.conn().await?;
        let viewer = s.viewer.0;
        let starred = || {
            exists(
                featured_entities::table.filter(
                    featured_entities::user_id
                        .eq(viewer)
                        .and(featured_entities::entity_type.eq(ENTITY_TYPE))
                        .and(featured_entities::entity_id.eq(forms::id)),
                ),
            )
        };
        let filtered = || {
            let mut q = forms::table
                .filter(forms::organization_id.eq(org.0))
                .into_boxed();
            q = match s.archived {
                Archived::Exclude => q.filter(forms::is_archived.eq(false)),
                Archived::Include => q,
                Archived::Only => q.filter(forms::is_archived.eq(true)),
            };
            if let Some(owners) = &s.owners {
                let ids: Vec<Uuid> = owners.iter().map(|o| o.0).collect();
                q = q.filter(forms::owner_id.eq_any(ids));
            }
            if s.public_only {
                q = q.filter(forms::allow_public_responses.eq(true));
            }
            if s.approval_only {
                q = q.filter(forms::use_for_approval.eq(true));
            }
            if s.workflow_only {
                q = q.filter(forms::workflow.is_not_null());
            }
            if let Some(search) = s.search.as_deref() {
                q = q.filter(forms::name.ilike(like_pattern(search)));
            }
            if let Some(from) = s.from {
                q = q.filter(forms::created_at.ge(from));
            }
            if let Some(until) = s.until {
                q = q.filter(forms::created_at.lt(until));
            }
            if !s.labels.is_empty() {
                q = q.filter(
                    forms::id.eq_any(
                        entity_labels::table
                            .filter(entity_labels::organization_id.eq(org.0))
                            .filter(entity_labels::entity_type.eq(ENTITY_TYPE))
                            .filter(entity_labels::label_id.eq_any(s.labels.clone()))
                            .select(entity_labels::entity_id),
                    ),
                );
            }
            if let Some(want) = s.featured {
                q = q.filter(starred().eq(want));
            }
            q
        };
        let rows = load_page::<CountedFormRow, PagedForm, _, _>(&mut conn, page, filtered, |q| {
            let mut q = q.select((FormRow::as_select(), response_count!()));
            if s.featured_first {
                q = q.then_order_by(starred().desc());
            }
            q = match (s.order, s.ascending) {
                (FormOrder::Alphabetical, true) => q.then_order_by(forms::name.asc()),
                (FormOrder::Alphabetical, false) => q.then_order_by(forms::name.desc()),
                (FormOrder::Recent, true) => q.then_order_by(forms::created_at.asc()),
                (FormOrder::Recent, false) => q.then_order_by(forms::created_at.desc()),
                (FormOrder::Total, true) => q.then_order_by(response_count!().asc()),
                (FormOrder::Total, false) => q.then_order_by(response_count!().desc()),
            };
            if s.ascending {
                q.then_order_by(forms::id.asc())
            } else {
                q.then_order_by(forms::id.desc())
            }
        })
        .await?;
        let owner_ids: Vec<Uuid> = rows.results.iter().map(|r| r.0.form.owner_id).collect();
        let owners: HashMap<Uuid, Person> = users::table
            .filter(users::id.eq_any(owner_ids))
            .select((users::id, users::first_name, users::last_name, users::email))
            .load::<(Uuid, String, String, String)>(&mut conn)
            .await
            .map_err(db_error)?
            .into_iter()
            .map(|(id, first, last, email)| {
                let person = Person {
                    id: UserId(id),
                    full_name: full_name(&first, &last),
                    email,
                };
                (id, person)
            })
            .collect();
        Ok(Page {
            count: rows.count,
            results: rows
                .results
                .into_iter()
                .map(|PagedForm(r)| {
                    let owner = owners
                        .get(&r.form.owner_id)
                        .cloned()
                        .ok_or_else(|| unknown_value("forms.owner_id", r.form.owner_id))?;
                    decode_form(r.form, owner, r.responses)
                })
                .collect::<Result<_, _>>()?,
        })
    }

    async fn list_form_owners(
        &self,
        org: OrgId,
        search: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<User>, RepoError> {
        let mut conn = self.db.conn().await?;
        let pattern = search.map(|s| like_pattern(&s.to_lowercase()));
        let filtered = || {
            let mut q = users::table
                .filter(users::organization_id.eq(org.0))
                .filter(exists(
                    forms::table.filter(
                        forms::owner_id
                            .eq(users::id)
                            .and(forms::organization_id.eq(org.0))
                            .and(forms::is_archived.eq(false)),
                    ),
                ))
                .into_boxed();
            if let Some(p) = &pattern {
                q = q.filter(
                    users::search_name
                        .like(p.clone())
                        .or(users::search_email.like(p.clone())),
                );
            }
            q
        };
        load_page::<UserRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((users::first_name, users::last_name, users::id))
                .select(UserRow::as_select())
        })
        .await
    }

    async fn insert_response(
        &self,
        response: &FormResponse,
        form_version: i32,
        event: &Event,
    ) -> Result<Written, RepoError> {
        let r = response;
        let row = (
            form_responses::id.eq(r.id),
            form_responses::organization_id.eq(r.org_id.0),
            form_responses::form_id.eq(r.form_id),
            form_responses::submitted_by.eq(r.submitter.id.0),
            form_responses::submission_source.eq(r.source.as_str()),
            form_responses::submission_label.eq(r.label.clone()),
            form_responses::guest_name.eq(r.guest.as_ref().and_then(|g| g.full_name.clone())),
            form_responses::guest_email.eq(r.guest.as_ref().and_then(|g| g.email.clone())),
            form_responses::content.eq(content_json(&r.content)),
            form_responses::search_text.eq(r.search_text()),
            form_responses::current_state.eq(r.current_state.clone()),
            form_responses::edited.eq(r.edited),
            form_responses::version.eq(r.version),
            form_responses::created_at.eq(r.created_at),
            form_responses::updated_at.eq(r.updated_at),
        );
        let (org, form, submitter) = (r.org_id, r.form_id, r.submitter.id);
        let event = event.clone();
        let mut conn = self.db.conn().await?;
        conn.transaction(async move |conn| {
            if lock_form(conn, org, form).await? != form_version {
                return Ok(Written::FormChanged);
            }
            person_of(conn, org, submitter).await?;
            diesel::insert_into(form_responses::table)
                .values(row)
                .execute(conn)
                .await?;
            outbox::record(conn, std::slice::from_ref(&event)).await?;
            Ok::<_, diesel::result::Error>(Written::Done)
        })
        .await
        .map_err(db_error)
    }

    async fn get_response(
        &self,
        org: OrgId,
        form: Uuid,
        id: Uuid,
    ) -> Result<FormResponse, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: ReadResponseRow = form_responses::table
            .inner_join(users::table.on(users::id.eq(form_responses::submitted_by)))
            .filter(form_responses::id.eq(id))
            .filter(form_responses::form_id.eq(form))
            .filter(form_responses::organization_id.eq(org.0))
            .select(response_columns())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        let mut history = histories(&mut conn, &[id]).await.map_err(db_error)?;
        row.decode(history.remove(&id).unwrap_or_default())
    }

    async fn list_responses(
        &self,
        org: OrgId,
        form: Uuid,
        s: &ResponseSelection,
        page: PageRequest,
    ) -> Result<Page<FormResponse>, RepoError> {
        let mut conn = self.db.conn().await?;
        let viewer = s.viewer.0;
        let member = SubmissionSource::Member.as_str();
        let pattern = s.search.as_deref().map(|q| like_pattern(&q.to_lowercase()));
        let sources: Vec<&'static str> = s.sources.iter().map(|x| x.as_str()).collect();
        let filtered = || {
            let mut q = form_responses::table
                .inner_join(users::table.on(users::id.eq(form_responses::submitted_by)))
                .filter(form_responses::form_id.eq(form))
                .filter(form_responses::organization_id.eq(org.0))
                .into_boxed();
            if s.own_only {
                q = q.filter(form_responses::submitted_by.eq(viewer));
            }
            if let Some(list) = &s.submitters {
                let ids: Vec<Uuid> = list.iter().map(|u| u.0).collect();
                // Who sent a response that does not show them is nobody's business but theirs.
                q = q.filter(
                    form_responses::submitted_by.eq_any(ids).and(
                        form_responses::submission_source
                            .eq(member)
                            .or(form_responses::submitted_by.eq(viewer)),
                    ),
                );
            }
            if let Some(states) = &s.states {
                q = q.filter(form_responses::current_state.eq_any(states.clone()));
            }
            if !sources.is_empty() {
                q = q.filter(form_responses::submission_source.eq_any(sources.clone()));
            }
            if let Some(p) = &pattern {
                q = q.filter(
                    form_responses::search_text.like(p.clone()).or(
                        form_responses::submission_source.eq(member).and(
                            users::search_name
                                .like(p.clone())
                                .or(users::search_email.like(p.clone())),
                        ),
                    ),
                );
            }
            if let Some(from) = s.from {
                q = q.filter(form_responses::created_at.ge(from));
            }
            if let Some(until) = s.until {
                q = q.filter(form_responses::created_at.lt(until));
            }
            q
        };
        let rows: Page<PagedResponse> =
            load_page::<ReadResponseRow, PagedResponse, _, _>(&mut conn, page, filtered, |q| {
                let q = q.select(response_columns());
                if s.oldest_first {
                    q.order_by((form_responses::created_at.asc(), form_responses::id.asc()))
                } else {
                    q.order_by((form_responses::created_at.desc(), form_responses::id.desc()))
                }
            })
            .await?;
        let ids: Vec<Uuid> = rows.results.iter().map(|r| r.0.response.id).collect();
        let mut history = histories(&mut conn, &ids).await.map_err(db_error)?;
        Ok(Page {
            count: rows.count,
            results: rows
                .results
                .into_iter()
                .map(|PagedResponse(r)| {
                    let h = history.remove(&r.response.id).unwrap_or_default();
                    r.decode(h)
                })
                .collect::<Result<_, _>>()?,
        })
    }

    async fn update_response_content(
        &self,
        response: &FormResponse,
        seen_version: i32,
        form_version: i32,
        event: &Event,
    ) -> Result<Written, RepoError> {
        let r = response;
        let (org, form, id) = (r.org_id, r.form_id, r.id);
        let changes = (
            form_responses::content.eq(content_json(&r.content)),
            form_responses::search_text.eq(r.search_text()),
            form_responses::edited.eq(r.edited),
            form_responses::updated_at.eq(r.updated_at),
            form_responses::version.eq(seen_version + 1),
        );
        let event = event.clone();
        let mut conn = self.db.conn().await?;
        conn.transaction(async move |conn| {
            if lock_form(conn, org, form).await? != form_version {
                return Ok(Written::FormChanged);
            }
            let updated = diesel::update(
                form_responses::table.filter(
                    form_responses::id
                        .eq(id)
                        .and(form_responses::form_id.eq(form))
                        .and(form_responses::organization_id.eq(org.0))
                        .and(form_responses::version.eq(seen_version)),
                ),
            )
            .set(changes)
            .execute(conn)
            .await?;
            if updated == 0 {
                return if response_exists(conn, org, form, id).await? {
                    Ok(Written::ResponseChanged)
                } else {
                    Err(diesel::result::Error::NotFound)
                };
            }
            outbox::record(conn, std::slice::from_ref(&event)).await?;
            Ok::<_, diesel::result::Error>(Written::Done)
        })
        .await
        .map_err(db_error)
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
        let change = change.clone();
        let event = event.clone();
        let mut conn = self.db.conn().await?;
        conn.transaction(async move |conn| {
            if lock_form(conn, org, form).await? != form_version {
                return Ok(Written::FormChanged);
            }
            // Of concurrent moves from the same state, the first to update the row wins; the
            // others wait for its lock, then find the state changed and update nothing.
            let moved = diesel::update(
                form_responses::table.filter(
                    form_responses::id
                        .eq(response)
                        .and(form_responses::form_id.eq(form))
                        .and(form_responses::organization_id.eq(org.0))
                        .and(form_responses::current_state.eq(&change.from_state)),
                ),
            )
            .set((
                form_responses::current_state.eq(&change.to_state),
                form_responses::updated_at.eq(change.at),
                form_responses::version.eq(form_responses::version + 1),
            ))
            .execute(conn)
            .await?;
            if moved == 0 {
                return if response_exists(conn, org, form, response).await? {
                    Ok(Written::ResponseChanged)
                } else {
                    Err(diesel::result::Error::NotFound)
                };
            }
            diesel::insert_into(form_response_transitions::table)
                .values((
                    form_response_transitions::id.eq(Uuid::now_v7()),
                    form_response_transitions::response_id.eq(response),
                    form_response_transitions::from_state.eq(&change.from_state),
                    form_response_transitions::to_state.eq(&change.to_state),
                    form_response_transitions::actor_id.eq(change.actor.as_ref().map(|a| a.id.0)),
                    form_response_transitions::note.eq(&change.note),
                    form_response_transitions::at.eq(change.at),
                ))
                .execute(conn)
                .await?;
            outbox::record(conn, std::slice::from_ref(&event)).await?;
            Ok::<_, diesel::result::Error>(Written::Done)
        })
        .await
        .map_err(db_error)
    }

    async fn delete_response(
        &self,
        org: OrgId,
        form: Uuid,
        id: Uuid,
        event: &Event,
    ) -> Result<(), RepoError> {
        let event = event.clone();
        let mut conn = self.db.conn().await?;
        conn.transaction(async move |conn| {
            let deleted = diesel::delete(
                form_responses::table.filter(
                    form_responses::id
                        .eq(id)
                        .and(form_responses::form_id.eq(form))
                        .and(form_responses::organization_id.eq(org.0)),
                ),
            )
            .execute(conn)
            .await?;
            if deleted == 0 {
                return Err(diesel::result::Error::NotFound);
            }
            outbox::record(conn, std::slice::from_ref(&event)).await
        })
        .await
        .map_err(db_error)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn stored_documents_decode_strictly() {
        let ok = json!({"mode": "restricted", "user_uuids": [Uuid::nil()], "team_uuids": []});
        let a = audience("forms.who_can_edit", ok).unwrap();
        assert_eq!(a.mode, AudienceMode::Restricted);
        assert_eq!(a.members.users, [UserId(Uuid::nil())]);
        let bad_mode = json!({"mode": "anyone", "user_uuids": [], "team_uuids": []});
        assert!(
            matches!(audience("c", bad_mode), Err(RepoError::Other(m)) if m.contains("anyone"))
        );
        let extra = json!({"mode": "everyone", "user_uuids": [], "team_uuids": [], "x": 1});
        assert!(audience("c", extra).is_err());
        assert!(workflow(json!([])).is_err());
        assert!(
            workflow(json!([{"key": "a", "label": "A", "color": "#000", "order": 0}])).is_err()
        );
        assert!(matches!(
            content(json!({"not-a-uuid": 1})),
            Err(RepoError::Other(_))
        ));
        assert!(content(json!([1])).is_err());
        let w = Workflow::approval();
        assert_eq!(workflow(workflow_json(&w).unwrap()).unwrap(), w);
    }
}
