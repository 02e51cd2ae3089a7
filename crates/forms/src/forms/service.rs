//! `FormService`: authoring forms (settings, permissions, workflow, questions), reading them as
//! each person may, and their responses (`responses.rs`).
//!
//! Every write of a form or response is checked against the version it was read at, in the
//! same statement or transaction that writes it: a concurrent change makes the service read
//! again and re-apply the request (a few times), so no partial update is lost and no response
//! lands on questions or states that were removed meanwhile.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use teamcomm_kernel::{
    Error, ErrorCode, FieldErrors, OrgId, Page, PageRequest, RepoError, SharedClock, TeamId,
    UserId, filters, text, zone,
};
use teamcomm_messaging::{Channel, ChannelRepository};
use teamcomm_org::{OrgRepository, Role, TeamFilter, TeamRepository, User};
use time::OffsetDateTime;
use uuid::Uuid;

use super::access::{FormAccess, Viewer};
use super::model::{
    Archived, Audience, AudienceInput, AudienceMode, Form, FormConfig, FormListFilter, FormScope,
    FormSelection, FormSettings, MAX_AUDIENCE, MAX_COMMAND, MAX_FORM_NAME, MAX_REPORT_CHANNELS,
    MIN_FORM_NAME, Members, MembersInput, NewForm, Person, StateMigration, WorkflowInput, Written,
};
use super::ports::FormRepository;
use super::workflow::Workflow;
use crate::questions::{NewQuestion, Question, QuestionPatch, QuestionSet};

mod responses;
#[cfg(test)]
mod tests;

pub use responses::{Submission, VisibleChange, VisibleResponse, content_json};

/// How many times a write re-reads and re-applies itself when the form or response changed
/// under it before giving up with 409 `version_conflict`.
const ATTEMPTS: usize = 3;

/// The constraint that keeps enabled commands unique among an organization's live forms.
pub const COMMAND_CONSTRAINT: &str = "forms_live_command_key";

/// What a change makes of a form.
enum Edit<T> {
    /// Write this form (and apply this to its responses' states); answer `T`.
    Write(Box<Form>, T, StateMigration),
    /// Nothing to write; answer `T`.
    Unchanged(T),
}

/// A report channel a form names, with the channel when the organization still has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachedChannel {
    pub id: String,
    pub channel: Option<Channel>,
}

/// A form as one person sees it: the form, its channels, and what they may do with it.
#[derive(Debug, Clone, PartialEq)]
pub struct VisibleForm {
    pub form: Form,
    pub channels: Vec<AttachedChannel>,
    pub access: FormAccess,
}

/// Forms of the actor's organization and their responses.
#[derive(Clone)]
pub struct FormService {
    forms: Arc<dyn FormRepository>,
    people: Arc<dyn OrgRepository>,
    teams: Arc<dyn TeamRepository>,
    channels: Arc<dyn ChannelRepository>,
    clock: SharedClock,
}

/// A config request checked against the directory: every value valid, every person, team
/// and channel one of the organization's. What it does to a form depends on the form
/// ([`Resolved::apply`]).
#[derive(Debug, Clone, Default)]
struct Resolved {
    name: Option<String>,
    report_channels: Option<Vec<String>>,
    is_active: Option<bool>,
    is_anonymous: Option<bool>,
    allow_public_responses: Option<bool>,
    require_email_and_name: Option<bool>,
    brand_with_logo: Option<bool>,
    allow_reopen_from_final_state: Option<bool>,
    use_for_approval: Option<bool>,
    workflow: Option<Option<Workflow>>,
    who_can_edit: Option<Audience>,
    who_can_see_responses: Option<Audience>,
    who_can_change_states: Option<Audience>,
    approvers: Option<Members>,
    command: Option<Option<String>>,
    command_enabled: Option<bool>,
}

impl Resolved {
    /// The form's name, channels and settings once this request applies, with what happens to
    /// its responses' states. An approval form always has a workflow (the approval one unless
    /// it has its own); an enabled command needs a command.
    fn apply(&self, form: &Form) -> Result<(Form, StateMigration), Error> {
        let mut next = form.clone();
        if let Some(name) = &self.name {
            next.name = name.clone();
        }
        if let Some(channels) = &self.report_channels {
            next.report_channels = channels.clone();
        }
        let s = &mut next.settings;
        for (value, slot) in [
            (self.is_active, &mut s.is_active),
            (self.is_anonymous, &mut s.is_anonymous),
            (self.allow_public_responses, &mut s.allow_public_responses),
            (self.require_email_and_name, &mut s.require_email_and_name),
            (self.brand_with_logo, &mut s.brand_with_logo),
            (
                self.allow_reopen_from_final_state,
                &mut s.allow_reopen_from_final_state,
            ),
            (self.use_for_approval, &mut s.use_for_approval),
        ] {
            if let Some(v) = value {
                *slot = v;
            }
        }
        if let Some(workflow) = &self.workflow {
            s.workflow = workflow.clone();
        }
        if s.use_for_approval && s.workflow.is_none() {
            if matches!(self.workflow, Some(None)) {
                return Err(Error::invalid_field(
                    "workflow",
                    "An approval form moves its responses through a workflow; turn \
                     `use_for_approval` off to turn the workflow off.",
                ));
            }
            s.workflow = Some(Workflow::approval());
        }
        for (value, slot) in [
            (&self.who_can_edit, &mut s.who_can_edit),
            (&self.who_can_see_responses, &mut s.who_can_see_responses),
            (&self.who_can_change_states, &mut s.who_can_change_states),
        ] {
            if let Some(v) = value {
                *slot = v.clone();
            }
        }
        if let Some(approvers) = &self.approvers {
            s.approvers = approvers.clone();
        }
        match &self.command {
            Some(Some(command)) => {
                s.command = Some(command.clone());
                s.command_enabled = self.command_enabled.unwrap_or(true);
            }
            Some(None) => {
                s.command = None;
                s.command_enabled = false;
            }
            None => {
                if let Some(enabled) = self.command_enabled {
                    s.command_enabled = enabled;
                }
            }
        }
        if s.command_enabled && s.command.is_none() {
            return Err(Error::invalid_field(
                "command_enabled",
                "Set a `command` to enable it.",
            ));
        }
        let migration = match (&form.settings.workflow, &next.settings.workflow) {
            (None, None) => StateMigration::Keep,
            (None, Some(w)) => StateMigration::Start(w.initial().key.clone()),
            (Some(_), None) => StateMigration::Clear,
            (Some(before), Some(after)) => {
                let removed = before.removed_in(after);
                if removed.is_empty() {
                    StateMigration::Keep
                } else {
                    StateMigration::Remove(removed)
                }
            }
        };
        Ok((next, migration))
    }
}

/// A form's name: the text rule, 3 to 200 characters.
fn form_name(raw: &str) -> Result<String, Error> {
    let name = text::name("name", raw, MAX_FORM_NAME)?;
    if name.chars().count() < MIN_FORM_NAME {
        return Err(Error::invalid_field(
            "name",
            format!("Ensure this field has at least {MIN_FORM_NAME} characters."),
        ));
    }
    Ok(name)
}

/// A chat command: 1 to 31 of `[a-z0-9_-]`, starting with a letter or digit (kept lower-case).
fn command(raw: &str) -> Result<String, Error> {
    let c = raw.trim().to_lowercase();
    let well_formed = (1..=MAX_COMMAND).contains(&c.len())
        && c.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && c.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if well_formed {
        Ok(c)
    } else {
        Err(Error::invalid_field(
            "command",
            "Use 1 to 31 lower-case letters, digits, `-` or `_`, starting with a letter or digit.",
        ))
    }
}

/// The uuids in order, each once.
fn distinct(ids: &[Uuid]) -> Vec<Uuid> {
    let mut seen = HashSet::new();
    ids.iter().copied().filter(|id| seen.insert(*id)).collect()
}

/// Maps the store's refusal of a duplicate command to its code.
fn command_taken(e: RepoError) -> Error {
    match e {
        RepoError::Conflict { constraint } if constraint == COMMAND_CONSTRAINT => Error::new(
            ErrorCode::FormCommandTaken,
            "Another live form of your organization already uses this command.",
        ),
        other => other.into(),
    }
}

/// The refusal when retries run out.
fn still_changing() -> Error {
    Error::new(
        ErrorCode::VersionConflict,
        "The form kept changing while this request was applied; read it again and retry.",
    )
}

/// The instants of a range of days on the wall clock of `tz` (`invalid_date_range`, naming
/// `parameter`, when the first is after the last).
pub(crate) fn day_span(
    from: Option<time::Date>,
    to: Option<time::Date>,
    tz: &str,
    parameter: &str,
) -> Result<(Option<OffsetDateTime>, Option<OffsetDateTime>), Error> {
    let (from, to) =
        filters::day_range(from, to).map_err(|e| e.with_extra("parameter", parameter))?;
    Ok(zone::day_span(from, to, tz))
}

impl FormService {
    pub fn new(
        forms: Arc<dyn FormRepository>,
        people: Arc<dyn OrgRepository>,
        teams: Arc<dyn TeamRepository>,
        channels: Arc<dyn ChannelRepository>,
        clock: SharedClock,
    ) -> Self {
        FormService {
            forms,
            people,
            teams,
            channels,
            clock,
        }
    }

    /// The actor with the teams they belong to, read only when one of `forms` names teams.
    async fn viewer<'a>(
        &self,
        actor: &User,
        mut forms: impl Iterator<Item = &'a Form>,
    ) -> Result<Viewer, Error> {
        let names_teams = forms.any(|f| {
            let s = &f.settings;
            [
                &s.who_can_edit,
                &s.who_can_see_responses,
                &s.who_can_change_states,
            ]
            .iter()
            .any(|a| !a.members.teams.is_empty())
                || !s.approvers.teams.is_empty()
        });
        let teams = if names_teams {
            let filter = TeamFilter {
                member_of: Some(actor.id),
                include_archived: true,
                search: None,
            };
            self.teams
                .list_teams(actor.org_id, &filter, PageRequest::all())
                .await?
                .results
                .into_iter()
                .map(|t| t.id)
                .collect()
        } else {
            HashSet::new()
        };
        Ok(Viewer {
            user: actor.clone(),
            teams,
        })
    }

    /// The forms as `viewer` sees them, their channels looked up once.
    async fn visible(&self, viewer: &Viewer, forms: Vec<Form>) -> Result<Vec<VisibleForm>, Error> {
        let needs_channels = forms.iter().any(|f| !f.report_channels.is_empty());
        let known: HashMap<String, Channel> = if needs_channels {
            self.channels
                .list_channels(viewer.user.org_id, None)
                .await?
                .into_iter()
                .map(|c| (c.id.clone(), c))
                .collect()
        } else {
            HashMap::new()
        };
        Ok(forms
            .into_iter()
            .map(|form| VisibleForm {
                channels: form
                    .report_channels
                    .iter()
                    .map(|id| AttachedChannel {
                        id: id.clone(),
                        channel: known.get(id).cloned(),
                    })
                    .collect(),
                access: FormAccess::of(&form, viewer),
                form,
            })
            .collect())
    }

    async fn visible_one(&self, actor: &User, form: Form) -> Result<VisibleForm, Error> {
        let viewer = self.viewer(actor, std::iter::once(&form)).await?;
        let mut seen = self.visible(&viewer, vec![form]).await?;
        seen.pop().ok_or_else(Error::not_found)
    }

    /// Checks a config request against the directory, naming every bad field at once.
    /// `report_channels` has its own codes: `too_many_report_channels` (more than 3),
    /// `report_channel_not_found` (`extra.ids`).
    async fn resolve(&self, org: OrgId, config: &FormConfig) -> Result<Resolved, Error> {
        let mut errors = FieldErrors::new();
        let name = config.name.as_deref().map(form_name).transpose();
        errors.note(&name);
        let report_channels = match &config.report_channels {
            Some(ids) => Some(self.report_channels(org, ids).await?),
            None => None,
        };
        let workflow = match &config.workflow {
            None => Ok(None),
            Some(WorkflowInput::Disabled) => Ok(Some(None)),
            Some(WorkflowInput::Enabled(states)) => Workflow::build(states).map(|w| Some(Some(w))),
        };
        errors.note(&workflow);
        let who_can_edit = self
            .optional_audience(org, "who_can_edit", &config.who_can_edit)
            .await;
        errors.note(&who_can_edit);
        let who_can_see_responses = self
            .optional_audience(org, "who_can_see_responses", &config.who_can_see_responses)
            .await;
        errors.note(&who_can_see_responses);
        let who_can_change_states = self
            .optional_audience(org, "who_can_change_states", &config.who_can_change_states)
            .await;
        errors.note(&who_can_change_states);
        let approvers = match &config.approvers {
            None => Ok(None),
            Some(m) => self.members(org, "approvers", m).await.map(Some),
        };
        errors.note(&approvers);
        let command = match &config.command {
            None => Ok(None),
            Some(None) => Ok(Some(None)),
            Some(Some(raw)) => command(raw).map(|c| Some(Some(c))),
        };
        errors.note(&command);
        errors.finish()?;
        // Every result is `Ok` once `finish` passed.
        Ok(Resolved {
            name: name.unwrap_or_default(),
            report_channels,
            is_active: config.is_active,
            is_anonymous: config.is_anonymous,
            allow_public_responses: config.allow_public_responses,
            require_email_and_name: config.require_email_and_name,
            brand_with_logo: config.brand_with_logo,
            allow_reopen_from_final_state: config.allow_reopen_from_final_state,
            use_for_approval: config.use_for_approval,
            workflow: workflow.unwrap_or_default(),
            who_can_edit: who_can_edit.unwrap_or_default(),
            who_can_see_responses: who_can_see_responses.unwrap_or_default(),
            who_can_change_states: who_can_change_states.unwrap_or_default(),
            approvers: approvers.unwrap_or_default(),
            command: command.unwrap_or_default(),
            command_enabled: config.command_enabled,
        })
    }

    /// Channel ids of the organization, each once, at most three.
    async fn report_channels(&self, org: OrgId, ids: &[String]) -> Result<Vec<String>, Error> {
        let mut seen = HashSet::new();
        let ids: Vec<String> = ids
            .iter()
            .map(|id| id.trim().to_owned())
            .filter(|id| seen.insert(id.clone()))
            .collect();
        if ids.len() > MAX_REPORT_CHANNELS {
            return Err(Error::new(
                ErrorCode::TooManyReportChannels,
                format!("A form reports to at most {MAX_REPORT_CHANNELS} channels."),
            )
            .with_extra("limit", MAX_REPORT_CHANNELS));
        }
        if ids.is_empty() {
            return Ok(ids);
        }
        let known: HashSet<String> = self
            .channels
            .list_channels(org, None)
            .await?
            .into_iter()
            .map(|c| c.id)
            .collect();
        let unknown: Vec<&String> = ids.iter().filter(|id| !known.contains(*id)).collect();
        if !unknown.is_empty() {
            return Err(Error::new(
                ErrorCode::ReportChannelNotFound,
                "Some report channels are not channels of your organization (see \
                 GET /v1/report-channels/).",
            )
            .with_extra(
                "ids",
                unknown.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            ));
        }
        Ok(ids)
    }

    async fn optional_audience(
        &self,
        org: OrgId,
        field: &str,
        input: &Option<AudienceInput>,
    ) -> Result<Option<Audience>, Error> {
        match input {
            None => Ok(None),
            Some(a) => self.audience(org, field, a).await.map(Some),
        }
    }

    /// An audience: people and teams only when restricted, and then at least one.
    async fn audience(
        &self,
        org: OrgId,
        field: &str,
        input: &AudienceInput,
    ) -> Result<Audience, Error> {
        let named = !input.user_uuids.is_empty() || !input.team_uuids.is_empty();
        match (input.mode, named) {
            (AudienceMode::Restricted, false) => Err(Error::invalid_field(
                field,
                "A restricted audience names at least one person or team.",
            )),
            (AudienceMode::Restricted, true) => {
                let members = MembersInput {
                    user_uuids: input.user_uuids.clone(),
                    team_uuids: input.team_uuids.clone(),
                };
                Ok(Audience {
                    mode: input.mode,
                    members: self.members(org, field, &members).await?,
                })
            }
            (_, true) => Err(Error::invalid_field(
                field,
                "Only a restricted audience names people and teams.",
            )),
            (mode, false) => Ok(Audience {
                mode,
                members: Members::default(),
            }),
        }
    }

    /// People and teams of the organization, each once (`field.user_uuids` and
    /// `field.team_uuids` name the others).
    async fn members(
        &self,
        org: OrgId,
        field: &str,
        input: &MembersInput,
    ) -> Result<Members, Error> {
        let (users, teams) = (distinct(&input.user_uuids), distinct(&input.team_uuids));
        let mut errors = FieldErrors::new();
        for (list, len) in [("user_uuids", users.len()), ("team_uuids", teams.len())] {
            if len > MAX_AUDIENCE {
                errors.note::<()>(&Err(Error::invalid_field(
                    &format!("{field}.{list}"),
                    format!("Name at most {MAX_AUDIENCE}."),
                )));
            }
        }
        errors.finish()?;
        let mut unknown_users = Vec::new();
        for id in &users {
            match self.people.get_user(org, UserId(*id)).await {
                Ok(_) => {}
                Err(RepoError::NotFound) => unknown_users.push(id.to_string()),
                Err(e) => return Err(e.into()),
            }
        }
        let mut unknown_teams = Vec::new();
        for id in &teams {
            match self.teams.get_team(org, TeamId(*id)).await {
                Ok(_) => {}
                Err(RepoError::NotFound) => unknown_teams.push(id.to_string()),
                Err(e) => return Err(e.into()),
            }
        }
        let mut errors = FieldErrors::new();
        for (list, unknown, what) in [
            ("user_uuids", unknown_users, "people"),
            ("team_uuids", unknown_teams, "teams"),
        ] {
            if !unknown.is_empty() {
                errors.note::<()>(&Err(Error::invalid_field(
                    &format!("{field}.{list}"),
                    format!("Not {what} of your organization: {}.", unknown.join(", ")),
                )));
            }
        }
        errors.finish()?;
        Ok(Members {
            users: users.into_iter().map(UserId).collect(),
            teams: teams.into_iter().map(TeamId).collect(),
        })
    }

    /// Creates a form owned by the actor. Admins and members author forms; guests get 403
    /// `guest_not_allowed`. At least one question (`questions_required`), each with a short
    /// question unless generated (`short_question_required`); the settings as for
    /// [`FormService::update_config`].
    pub async fn create_form(&self, actor: &User, new: NewForm) -> Result<VisibleForm, Error> {
        if actor.role == Role::Guest {
            return Err(Error::new(
                ErrorCode::GuestNotAllowed,
                "Guests cannot create forms.",
            ));
        }
        let mut errors = FieldErrors::new();
        let questions = QuestionSet::create(new.questions, new.generate_short_question);
        errors.note(&questions);
        let name = match new.config.name.as_deref() {
            Some(_) => Ok(()),
            None => Err(Error::invalid_field("name", "This field is required.")),
        };
        errors.note(&name);
        let resolved = self.resolve(actor.org_id, &new.config).await;
        errors.note(&resolved);
        errors.finish()?;
        let (questions, resolved) = (questions?, resolved?);
        let now = self.clock.now();
        let draft = Form {
            id: Uuid::now_v7(),
            org_id: actor.org_id,
            owner: Person {
                id: actor.id,
                full_name: actor.full_name(),
                email: actor.email.clone(),
            },
            name: String::new(),
            questions,
            report_channels: Vec::new(),
            settings: FormSettings::default(),
            is_archived: false,
            version: 1,
            response_count: 0,
            created_at: now,
            updated_at: now,
        };
        let (form, _) = resolved.apply(&draft)?;
        self.forms.insert_form(&form).await.map_err(command_taken)?;
        self.visible_one(actor, form).await
    }

    /// A form of the actor's organization; everyone in it may read every form (to respond).
    pub async fn get_form(&self, actor: &User, id: Uuid) -> Result<VisibleForm, Error> {
        let form = self.forms.get_form(actor.org_id, id).await?;
        self.visible_one(actor, form).await
    }

    /// Reads the form, checks the actor may edit it (403 `form_edit_forbidden`), lets `change`
    /// build the new form, and writes it if the form did not change meanwhile; otherwise reads
    /// it again and re-applies `change`. A removed workflow state that still holds responses
    /// is 409 `state_in_use` (`extra.states`).
    async fn edit<T>(
        &self,
        actor: &User,
        id: Uuid,
        change: impl Fn(&Form) -> Result<Edit<T>, Error>,
    ) -> Result<(Form, T), Error> {
        for _ in 0..ATTEMPTS {
            let form = self.forms.get_form(actor.org_id, id).await?;
            let viewer = self.viewer(actor, std::iter::once(&form)).await?;
            if !FormAccess::of(&form, &viewer).can_edit {
                return Err(Error::new(
                    ErrorCode::FormEditForbidden,
                    "You may not edit this form.",
                ));
            }
            let (mut next, out, migration) = match change(&form)? {
                Edit::Write(next, out, migration) => (*next, out, migration),
                Edit::Unchanged(out) => return Ok((form, out)),
            };
            next.updated_at = self.clock.now();
            match self
                .forms
                .update_form(&next, form.version, &migration)
                .await
                .map_err(command_taken)?
            {
                Written::Done => {
                    next.version = form.version + 1;
                    return Ok((next, out));
                }
                Written::StatesInUse(states) => {
                    return Err(Error::new(
                        ErrorCode::StateInUse,
                        format!(
                            "Responses are still in the states {}: move them first.",
                            states.join(", ")
                        ),
                    )
                    .with_extra("states", states));
                }
                Written::FormChanged | Written::ResponseChanged => continue,
            }
        }
        Err(still_changing())
    }

    /// Changes a form's name, channels and settings (only the fields given). Editing needs
    /// `who_can_edit` (owner and admins always): 403 `form_edit_forbidden`. A command already
    /// enabled on another live form is 409 `form_command_taken`.
    pub async fn update_config(
        &self,
        actor: &User,
        id: Uuid,
        config: FormConfig,
    ) -> Result<VisibleForm, Error> {
        let resolved = self.resolve(actor.org_id, &config).await?;
        let (form, ()) = self
            .edit(actor, id, |form| {
                resolved
                    .apply(form)
                    .map(|(next, m)| Edit::Write(Box::new(next), (), m))
            })
            .await?;
        self.visible_one(actor, form).await
    }

    /// Archives a form (kept with its responses, out of lists unless asked, closed to new
    /// responses, its command free again). Archiving an archived form changes nothing.
    pub async fn archive_form(&self, actor: &User, id: Uuid) -> Result<(), Error> {
        self.edit(actor, id, |form| {
            if form.is_archived {
                return Ok(Edit::Unchanged(()));
            }
            let mut next = form.clone();
            next.is_archived = true;
            Ok(Edit::Write(Box::new(next), (), StateMigration::Keep))
        })
        .await?;
        Ok(())
    }

    /// Applies a change of the question set (it bumps the set's version).
    async fn edit_questions<T>(
        &self,
        actor: &User,
        id: Uuid,
        change: impl Fn(&QuestionSet) -> Result<(QuestionSet, T), Error>,
    ) -> Result<T, Error> {
        let (_, out) = self
            .edit(actor, id, |form| {
                let (questions, out) = change(&form.questions)?;
                let mut next = form.clone();
                next.questions = questions;
                Ok(Edit::Write(Box::new(next), out, StateMigration::Keep))
            })
            .await?;
        Ok(out)
    }

    /// Adds a question at the end of the form; answers it with its position (from 0).
    pub async fn add_question(
        &self,
        actor: &User,
        id: Uuid,
        question: NewQuestion,
        generate_short: bool,
    ) -> Result<(usize, Question), Error> {
        self.edit_questions(actor, id, |set| {
            let (next, q) = set.add(question.clone(), generate_short)?;
            let index = next.questions.len() - 1;
            Ok((next, (index, q)))
        })
        .await
    }

    /// Changes one question of the form (404 when it has no such question); answers it with
    /// its position (from 0).
    pub async fn update_question(
        &self,
        actor: &User,
        id: Uuid,
        question: Uuid,
        patch: QuestionPatch,
        generate_short: bool,
    ) -> Result<(usize, Question), Error> {
        self.edit_questions(actor, id, |set| {
            let (next, q) = set.update(question, patch.clone(), generate_short)?;
            let index = next
                .questions
                .iter()
                .position(|x| x.uuid == question)
                .unwrap_or_default();
            Ok((next, (index, q)))
        })
        .await
    }

    /// Removes one question (not the last one: `questions_required`). Stored answers to it
    /// stay in the responses that have them.
    pub async fn remove_question(
        &self,
        actor: &User,
        id: Uuid,
        question: Uuid,
    ) -> Result<(), Error> {
        self.edit_questions(actor, id, |set| set.remove(question).map(|s| (s, ())))
            .await
    }

    /// Puts the questions in the order given (every question exactly once).
    pub async fn reorder_questions(
        &self,
        actor: &User,
        id: Uuid,
        order: &[Uuid],
    ) -> Result<Vec<Question>, Error> {
        self.edit_questions(actor, id, |set| {
            set.reorder(order).map(|s| {
                let questions = s.questions.clone();
                (s, questions)
            })
        })
        .await
    }

    /// The forms of the actor's organization: live ones unless archived ones are asked for,
    /// filtered, sorted and paged.
    pub async fn list_forms(
        &self,
        actor: &User,
        filter: &FormListFilter,
        page: PageRequest,
    ) -> Result<Page<VisibleForm>, Error> {
        let (from, until) = day_span(
            filter.start_date,
            filter.end_date,
            &actor.timezone,
            "start_date",
        )?;
        let mut owners: Option<Vec<UserId>> =
            (!filter.owners.is_empty()).then(|| filter.owners.clone());
        if filter.scope == FormScope::Me {
            owners = Some(match owners {
                None => vec![actor.id],
                Some(list) => list.into_iter().filter(|o| *o == actor.id).collect(),
            });
        }
        let archived = match (filter.scope, filter.include_archived) {
            (FormScope::Archived, _) => Archived::Only,
            (_, true) => Archived::Include,
            (_, false) => Archived::Exclude,
        };
        let selection = FormSelection {
            viewer: actor.id,
            archived,
            owners,
            public_only: filter.scope == FormScope::Public,
            approval_only: filter.scope == FormScope::Approval,
            workflow_only: filter.scope == FormScope::Workflow,
            search: filter.search.clone(),
            from,
            until,
            labels: distinct(&filter.labels),
            featured: filter.featured,
            featured_first: filter.prioritize_featured,
            order: filter.order,
            ascending: filter.ascending,
        };
        let page = self
            .forms
            .list_forms(actor.org_id, &selection, page)
            .await?;
        let viewer = self.viewer(actor, page.results.iter()).await?;
        let count = page.count;
        Ok(Page {
            count,
            results: self.visible(&viewer, page.results).await?,
        })
    }

    /// People of the actor's organization who own at least one live form.
    pub async fn list_form_owners(
        &self,
        actor: &User,
        search: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<User>, Error> {
        Ok(self
            .forms
            .list_form_owners(actor.org_id, search, page)
            .await?)
    }
}
