//! `CheckinService`: authoring check-ins (who may, what they must hold), reading them as each
//! person may see them, and which are due for a person on a day. Responses are in
//! [`super::responses`].
//!
//! Role rules:
//! - creating: admins, and people who manage a team (their participants must be people and
//!   teams they manage, or themselves); anyone else `checkin_permission_denied`;
//! - changing (settings, questions, archive): admins and the check-in's author;
//! - seeing: admins every check-in of their organization, others those they take part in or
//!   authored; any other is `not_found`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;
use teamcomm_kernel::{
    Error, ErrorCode, OrgId, Page, PageRequest, RepoError, SharedClock, UserId, WireEnum, filters,
    zone,
};
use teamcomm_messaging::ChannelRepository;
use teamcomm_org::{OrgRepository, Team, TeamRepository, User};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::input::CheckinInput;
use super::ports::{CheckinDirectory, CheckinScope, CheckinSelection};
use super::{
    Checkin, CheckinOptions, CheckinRepository, FrequencyAdvanced, FrequencyType, Participants,
    Recurrence, Schedule,
};
use crate::questions::{NewQuestion, Question, QuestionPatch, QuestionSet, QuestionType};
use crate::{TemplateRepository, TemplateType};

/// How many times a change is re-applied when another write to the same check-in came first.
const CHANGE_ATTEMPTS: usize = 5;

/// A check-in to create: its settings, and its questions (or a template to copy them from).
#[derive(Debug, Clone, Default)]
pub struct NewCheckin {
    pub settings: CheckinInput,
    pub questions: Option<Vec<NewQuestion>>,
    pub generate_short_question: bool,
    /// A check-ins template whose questions (and intro and outro) are copied when `questions`
    /// is left out.
    pub template: Option<Uuid>,
}

/// A check-in with the names of its participants and channels, as its reader sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckinDetail {
    pub checkin: Checkin,
    pub directory: CheckinDirectory,
    /// The reader may change it.
    pub can_be_edited: bool,
}

/// The filters and extras of a check-in listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckinListFilter {
    /// The day the per-day fields describe; default each check-in's today for the reader.
    pub date: Option<Date>,
    pub include_summary: bool,
    pub include_pending_users: bool,
    pub include_archived: bool,
    pub search: Option<String>,
    /// Check-ins running on some day of this span.
    pub start_date: Option<Date>,
    pub end_date: Option<Date>,
    /// Any of these labels.
    pub labels: Vec<Uuid>,
    /// Only the reader's starred ones.
    pub featured: bool,
    /// The reader's starred ones first.
    pub prioritize_featured: bool,
}

/// How many of a check-in's participants answered on a day.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// The people the check-in asks.
    pub expected_responses: u64,
    /// Those of them with a completed response for the day.
    pub completed_responses: u64,
    /// `completed / expected`, in percent with two decimals (0 when nobody is asked).
    pub completed_percentage: f64,
}

/// One row of a check-in listing.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckinListing {
    pub checkin: Checkin,
    /// The day the fields below describe.
    pub date: Date,
    pub can_be_edited: bool,
    /// The reader completed their response for the day.
    pub response_completed: bool,
    /// With `include_summary`.
    pub summary: Option<Summary>,
    /// With `include_pending_users`: participants without a completed response for the
    /// day; `None` on anonymous check-ins (that would tell who answered).
    pub pending_users: Option<Vec<User>>,
}

/// A check-in a person is asked on a day, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct DueCheckin {
    pub checkin: Checkin,
    pub trigger_at: OffsetDateTime,
}

/// Check-ins of the actor's organization.
#[derive(Clone)]
pub struct CheckinService {
    pub(super) checkins: Arc<dyn CheckinRepository>,
    people: Arc<dyn OrgRepository>,
    teams: Arc<dyn TeamRepository>,
    channels: Arc<dyn ChannelRepository>,
    templates: Arc<dyn TemplateRepository>,
    pub(super) clock: SharedClock,
}

fn permission_denied(detail: &'static str) -> Error {
    Error::new(ErrorCode::CheckinPermissionDenied, detail)
}

impl CheckinService {
    pub fn new(
        checkins: Arc<dyn CheckinRepository>,
        people: Arc<dyn OrgRepository>,
        teams: Arc<dyn TeamRepository>,
        channels: Arc<dyn ChannelRepository>,
        templates: Arc<dyn TemplateRepository>,
        clock: SharedClock,
    ) -> Self {
        CheckinService {
            checkins,
            people,
            teams,
            channels,
            templates,
            clock,
        }
    }

    // ------------------------------------------------------------------ authoring

    /// Creates a check-in: `name`, at least one question (or a template's), at least one
    /// participant; defaults: Monday to Friday at 09:00 in the author's zone, weekly, from
    /// today.
    pub async fn create_checkin(
        &self,
        actor: &User,
        new: NewCheckin,
    ) -> Result<CheckinDetail, Error> {
        if !actor.role.is_admin()
            && self
                .checkins
                .managed_scope(actor.org_id, actor.id)
                .await?
                .teams
                .is_empty()
        {
            return Err(permission_denied(
                "Only admins and team managers can create check-ins.",
            ));
        }
        if new.settings.name.is_none() {
            return Err(Error::invalid_field("name", "This field is required."));
        }
        let mut base = self.defaults(actor, &new.settings);
        let questions = match (&new.questions, new.template) {
            (Some(questions), _) => {
                QuestionSet::create(questions.clone(), new.generate_short_question)?
            }
            (None, Some(template)) => self.template_questions(actor, template, &mut base).await?,
            (None, None) => {
                return Err(Error::new(
                    ErrorCode::QuestionsRequired,
                    "Give at least one question (or a `template` to copy them from).",
                ));
            }
        };
        base.template = new.template;
        let mut checkin = new.settings.apply(&base)?;
        checkin.questions = questions;
        self.check_references(actor, &base, &checkin).await?;
        self.checkins.insert_checkin(&checkin).await?;
        self.detail(actor, checkin).await
    }

    /// A new check-in of the actor's before any setting is applied.
    fn defaults(&self, actor: &User, settings: &CheckinInput) -> Checkin {
        let now = self.clock.now();
        let author_zone = if zone::is_known(&actor.timezone) {
            actor.timezone.clone()
        } else {
            "UTC".to_owned()
        };
        // The first day is today where the check-in will run.
        let zone_given = settings
            .schedule
            .as_ref()
            .and_then(|s| s.timezone.as_deref())
            .map(str::trim)
            .filter(|z| zone::is_known(z));
        let today = zone::local_date(now, zone_given.unwrap_or(&author_zone));
        Checkin {
            id: Uuid::now_v7(),
            org_id: actor.org_id,
            name: String::new(),
            created_by: Some(actor.id),
            template: None,
            active: true,
            archived: false,
            schedule: Schedule {
                days: vec![1, 2, 3, 4, 5],
                time: time::Time::from_hms(9, 0, 0).unwrap_or(time::Time::MIDNIGHT),
                timezone: author_zone,
            },
            recurrence: Recurrence {
                frequency_type: FrequencyType::Weekly,
                frequency: 1,
                advanced: FrequencyAdvanced::Disabled,
                cron: None,
                start_on: today,
                end_on: None,
            },
            options: CheckinOptions::default(),
            participants: Participants::default(),
            report_channels: Vec::new(),
            questions: QuestionSet::default(),
            revision: 1,
            created_at: now,
            updated_at: now,
        }
    }

    /// The questions of a check-ins template (short questions generated), and its intro and
    /// outro as the check-in's default messages.
    async fn template_questions(
        &self,
        actor: &User,
        id: Uuid,
        base: &mut Checkin,
    ) -> Result<QuestionSet, Error> {
        let template = match self.templates.get_template(actor.org_id, id).await {
            Ok(t) if t.template_type == TemplateType::Checkins => t,
            Ok(_) | Err(RepoError::NotFound) => {
                return Err(Error::invalid_field(
                    "template",
                    "Name a check-ins template of your organization or a built-in one.",
                ));
            }
            Err(e) => return Err(e.into()),
        };
        let questions = template.questions.iter().map(template_question).collect();
        let nonblank = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        base.options.custom_template_intro = nonblank(&template.intro_message);
        base.options.custom_template_outro = nonblank(&template.outro_message);
        QuestionSet::create(questions, true)
    }

    /// Checks what the changed parts of `next` (against `before`) name: people, teams and
    /// channels of the organization, and for a non-admin only what they manage.
    async fn check_references(
        &self,
        actor: &User,
        before: &Checkin,
        next: &Checkin,
    ) -> Result<(), Error> {
        let org = actor.org_id;
        if next.participants != before.participants {
            let p = &next.participants;
            let mut unknown_users = Vec::new();
            for id in &p.users {
                match self.people.get_user(org, *id).await {
                    Ok(_) => {}
                    Err(RepoError::NotFound) => unknown_users.push(id.to_string()),
                    Err(e) => return Err(e.into()),
                }
            }
            if !unknown_users.is_empty() {
                return Err(Error::invalid_field(
                    "participants.user_uuids",
                    "These are not people of your organization.",
                )
                .with_extra("uuids", unknown_users));
            }
            let mut unknown_teams = Vec::new();
            for id in &p.teams {
                match self.teams.get_team(org, *id).await {
                    Ok(Team { active: true, .. }) => {}
                    Ok(_) | Err(RepoError::NotFound) => unknown_teams.push(id.to_string()),
                    Err(e) => return Err(e.into()),
                }
            }
            if !unknown_teams.is_empty() {
                return Err(Error::invalid_field(
                    "participants.team_uuids",
                    "These are not active teams of your organization.",
                )
                .with_extra("uuids", unknown_teams));
            }
            if !actor.role.is_admin() {
                let scope = self.checkins.managed_scope(org, actor.id).await?;
                let outside: Vec<String> = p
                    .users
                    .iter()
                    .filter(|u| **u != actor.id && !scope.members.contains(u))
                    .map(ToString::to_string)
                    .chain(
                        p.teams
                            .iter()
                            .filter(|t| !scope.teams.contains(t))
                            .map(ToString::to_string),
                    )
                    .collect();
                if !outside.is_empty() {
                    return Err(permission_denied(
                        "Team managers can only ask the teams they manage and their members.",
                    )
                    .with_extra("uuids", outside));
                }
            }
        }
        if next.report_channels != before.report_channels && !next.report_channels.is_empty() {
            let known: HashSet<String> = self
                .channels
                .list_channels(org, None)
                .await?
                .into_iter()
                .map(|c| c.id)
                .collect();
            let unknown: Vec<&String> = next
                .report_channels
                .iter()
                .filter(|c| !known.contains(*c))
                .collect();
            if !unknown.is_empty() {
                return Err(Error::new(
                    ErrorCode::ReportChannelNotFound,
                    "Some report channels are not channels of your organization (see GET /v1/report-channels/).",
                )
                .with_extra("uuids", unknown.into_iter().cloned().collect::<Vec<_>>()));
            }
        }
        Ok(())
    }

    /// Changes the settings of a check-in (a partial update).
    pub async fn update_config(
        &self,
        actor: &User,
        id: Uuid,
        input: CheckinInput,
    ) -> Result<CheckinDetail, Error> {
        let (checkin, ()) = self
            .change(actor, id, |current| Ok((input.apply(current)?, ())))
            .await?;
        self.detail(actor, checkin).await
    }

    /// Archives a check-in (a soft delete: nobody is asked again; its responses stay).
    pub async fn archive_checkin(&self, actor: &User, id: Uuid) -> Result<(), Error> {
        self.change(actor, id, |current| {
            let mut next = current.clone();
            next.active = false;
            next.archived = true;
            Ok((next, ()))
        })
        .await?;
        Ok(())
    }

    /// Adds a question at the end; returns it with its position.
    pub async fn add_question(
        &self,
        actor: &User,
        id: Uuid,
        new: NewQuestion,
        generate_short: bool,
    ) -> Result<(usize, Question), Error> {
        let (checkin, q) = self
            .change(actor, id, |current| {
                let (set, q) = current.questions.add(new.clone(), generate_short)?;
                Ok((with_questions(current, set), q))
            })
            .await?;
        Ok((position(&checkin, q.uuid), q))
    }

    /// Changes one question; returns it with its position.
    pub async fn update_question(
        &self,
        actor: &User,
        id: Uuid,
        question: Uuid,
        patch: QuestionPatch,
        generate_short: bool,
    ) -> Result<(usize, Question), Error> {
        let (checkin, q) = self
            .change(actor, id, |current| {
                let (set, q) = current
                    .questions
                    .update(question, patch.clone(), generate_short)?;
                Ok((with_questions(current, set), q))
            })
            .await?;
        Ok((position(&checkin, q.uuid), q))
    }

    /// Removes one question (not the last one).
    pub async fn remove_question(
        &self,
        actor: &User,
        id: Uuid,
        question: Uuid,
    ) -> Result<(), Error> {
        self.change(actor, id, |current| {
            Ok((
                with_questions(current, current.questions.remove(question)?),
                (),
            ))
        })
        .await?;
        Ok(())
    }

    /// Puts the questions in a new order (every question named once).
    pub async fn reorder_questions(
        &self,
        actor: &User,
        id: Uuid,
        order: &[Uuid],
    ) -> Result<QuestionSet, Error> {
        let (checkin, ()) = self
            .change(actor, id, |current| {
                Ok((
                    with_questions(current, current.questions.reorder(order)?),
                    (),
                ))
            })
            .await?;
        Ok(checkin.questions)
    }

    /// Applies `f` to the stored check-in and writes the result, re-reading and re-applying
    /// when another write came first: two authors editing at once never lose a change.
    async fn change<T>(
        &self,
        actor: &User,
        id: Uuid,
        f: impl Fn(&Checkin) -> Result<(Checkin, T), Error>,
    ) -> Result<(Checkin, T), Error> {
        for _ in 0..CHANGE_ATTEMPTS {
            let current = self.editable(actor, id).await?;
            let (mut next, out) = f(&current)?;
            if next == current {
                return Ok((next, out));
            }
            self.check_references(actor, &current, &next).await?;
            next.revision = current.revision + 1;
            next.updated_at = self.clock.now();
            match self.checkins.update_checkin(&next, current.revision).await {
                Ok(()) => return Ok((next, out)),
                Err(RepoError::Conflict { constraint }) if constraint == "checkins_revision" => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(teamcomm_kernel::internal(format!(
            "check-in {id} kept changing under {CHANGE_ATTEMPTS} attempts"
        )))
    }

    // ------------------------------------------------------------------ reading

    /// A check-in the actor may see, else `not_found`.
    pub(super) async fn visible(&self, actor: &User, id: Uuid) -> Result<Checkin, Error> {
        let checkin = self.checkins.get_checkin(actor.org_id, id).await?;
        if actor.role.is_admin()
            || checkin.created_by == Some(actor.id)
            || self
                .checkins
                .is_participant(actor.org_id, id, actor.id)
                .await?
        {
            Ok(checkin)
        } else {
            Err(Error::not_found())
        }
    }

    /// A check-in the actor may change: `not_found` when they cannot see it,
    /// `checkin_permission_denied` when they see it but did not author it (and are no admin).
    async fn editable(&self, actor: &User, id: Uuid) -> Result<Checkin, Error> {
        let checkin = self.visible(actor, id).await?;
        if can_edit(actor, &checkin) {
            Ok(checkin)
        } else {
            Err(permission_denied(
                "Only admins and the check-in's author can change it.",
            ))
        }
    }

    async fn detail(&self, actor: &User, checkin: Checkin) -> Result<CheckinDetail, Error> {
        Ok(CheckinDetail {
            directory: self.checkins.directory(&checkin).await?,
            can_be_edited: can_edit(actor, &checkin),
            checkin,
        })
    }

    /// One check-in with its participants' and channels' names.
    pub async fn get_checkin(&self, actor: &User, id: Uuid) -> Result<CheckinDetail, Error> {
        let checkin = self.visible(actor, id).await?;
        self.detail(actor, checkin).await
    }

    /// The check-ins the actor may see, with the actor's completion for the day and, when
    /// asked, the day's summary and who is still pending.
    pub async fn list_checkins(
        &self,
        actor: &User,
        filter: &CheckinListFilter,
        page: PageRequest,
    ) -> Result<Page<CheckinListing>, Error> {
        filters::day_range(filter.start_date, filter.end_date)?;
        let scope = if actor.role.is_admin() {
            CheckinScope::All
        } else {
            CheckinScope::VisibleTo(actor.id)
        };
        let selection = CheckinSelection {
            include_archived: filter.include_archived,
            search: filter.search.clone(),
            running_from: filter.start_date,
            running_until: filter.end_date,
            labels: filter.labels.clone(),
            featured_by: filter.featured.then_some(actor.id),
            featured_first_for: filter.prioritize_featured.then_some(actor.id),
            ..CheckinSelection::new(scope)
        };
        let found = self
            .checkins
            .list_checkins(actor.org_id, &selection, page)
            .await?;
        let now = self.clock.now();
        let dated: Vec<(Checkin, Date)> = found
            .results
            .into_iter()
            .map(|c| {
                let day = filter.date.unwrap_or_else(|| c.today_for(actor, now));
                (c, day)
            })
            .collect();
        let ids: Vec<Uuid> = dated.iter().map(|(c, _)| c.id).collect();
        let mut days: Vec<Date> = dated.iter().map(|(_, d)| *d).collect();
        days.sort();
        days.dedup();
        let completed: HashSet<(Uuid, UserId, Date)> = if ids.is_empty() {
            HashSet::new()
        } else {
            self.checkins
                .day_responses(actor.org_id, &ids, &days)
                .await?
                .into_iter()
                .filter(|r| r.completed)
                .map(|r| (r.checkin_id, r.user_id, r.date))
                .collect()
        };
        let mut asked: HashMap<Uuid, Vec<User>> = HashMap::new();
        if (filter.include_summary || filter.include_pending_users) && !ids.is_empty() {
            for (checkin, person) in self.checkins.participants(actor.org_id, &ids).await? {
                asked.entry(checkin).or_default().push(person);
            }
        }
        let results = dated
            .into_iter()
            .map(|(checkin, date)| {
                let people = asked.remove(&checkin.id).unwrap_or_default();
                let done = |u: &User| completed.contains(&(checkin.id, u.id, date));
                let summary = filter.include_summary.then(|| {
                    let expected = people.len() as u64;
                    let completed_responses = people.iter().filter(|u| done(u)).count() as u64;
                    Summary {
                        expected_responses: expected,
                        completed_responses,
                        completed_percentage: percentage(completed_responses, expected),
                    }
                });
                let pending_users = (filter.include_pending_users && !checkin.options.is_anonymous)
                    .then(|| people.iter().filter(|u| !done(u)).cloned().collect());
                CheckinListing {
                    response_completed: completed.contains(&(checkin.id, actor.id, date)),
                    can_be_edited: can_edit(actor, &checkin),
                    date,
                    summary,
                    pending_users,
                    checkin,
                }
            })
            .collect();
        Ok(Page {
            count: found.count,
            results,
        })
    }

    /// The check-ins `person` is asked on `local_date`, each with the instant it asks them,
    /// soonest first. `local_date` is a day of the calendar each check-in counts in: the
    /// person's zone when it uses participants' zones, else its schedule's. The engine that
    /// prompts people (with messaging) asks this for each person's day.
    pub async fn due_checkins(
        &self,
        org: OrgId,
        person: &User,
        local_date: Date,
    ) -> Result<Vec<DueCheckin>, Error> {
        let selection = CheckinSelection::new(CheckinScope::TakenBy(person.id));
        let taken = self
            .checkins
            .list_checkins(org, &selection, PageRequest::all())
            .await?;
        let mut due: Vec<DueCheckin> = taken
            .results
            .into_iter()
            .filter(|c| c.is_due_on(local_date))
            .map(|checkin| DueCheckin {
                trigger_at: checkin.trigger_at(local_date, person),
                checkin,
            })
            .collect();
        due.sort_by(|a, b| {
            (a.trigger_at, &a.checkin.name, a.checkin.id).cmp(&(
                b.trigger_at,
                &b.checkin.name,
                b.checkin.id,
            ))
        });
        Ok(due)
    }
}

fn can_edit(actor: &User, checkin: &Checkin) -> bool {
    actor.role.is_admin() || checkin.created_by == Some(actor.id)
}

fn with_questions(current: &Checkin, questions: QuestionSet) -> Checkin {
    Checkin {
        questions,
        ..current.clone()
    }
}

/// A question's position in the check-in.
fn position(checkin: &Checkin, question: Uuid) -> usize {
    checkin
        .questions
        .questions
        .iter()
        .position(|q| q.uuid == question)
        .unwrap_or_default()
}

fn percentage(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 * 10_000.0 / whole as f64).round() / 100.0
}

/// A template's question document as a new question (its uuid and index are the template's,
/// not the check-in's).
fn template_question(doc: &Value) -> NewQuestion {
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
    let flag = |k: &str| doc.get(k).and_then(Value::as_bool);
    let list = |k: &str| {
        doc.get(k).and_then(Value::as_array).map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
    };
    NewQuestion {
        question: text("question").unwrap_or_default(),
        question_type: text("question_type").and_then(|t| QuestionType::from_name(&t)),
        required: flag("required"),
        is_blocker: flag("is_blocker"),
        options: list("options"),
        short_question: text("short_question"),
        variations: list("variations"),
        logic: None,
    }
}
