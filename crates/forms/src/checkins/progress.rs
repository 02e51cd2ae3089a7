//! Progress from the command line (`GET /v1/cli/status/`, `POST /v1/cli/updates/`): the
//! check-ins a person is asked today, and a free-form update attached to them as today's
//! responses, through the same response rules as any other answer.
//!
//! "Today" is each check-in's own: the person's day as the check-in counts days
//! ([`Checkin::today_for`]), and a check-in is due when [`Checkin::is_due_on`] that day (the rule
//! the check-in engine opens its rounds by).
//!
//! How an update's parts land on a check-in's questions ([`progress_answers`], decisions.md
//! "CLI progress updates"):
//! - `blocked` → the blocker question: the first question marked `is_blocker` that is text or
//!   yes/no, else the first text question whose wording mentions "block". A yes/no blocker is
//!   answered "no" when the text says there is nothing ("none", "no", "nothing", "n/a", "-",
//!   "no blockers"), "yes" otherwise;
//! - `done` → the first other text question, `doing` → the second (whether or not the other
//!   part came), `message` → the first of them still free (so a message alone lands on the
//!   first text question);
//! - a part with no question left (fewer text questions than parts, or a yes/no blocker's
//!   words) is added as a line `Done: …`/`Doing: …`/`Blocked: …`/the message to the answer of
//!   the first text question the update fills;
//! - multiple-choice and numeric questions are never filled.
//!
//! A check-in the update gives no answer to is left alone. With a response for today already
//! there, the update's answers replace those of the same questions and the others stay
//! (`updated`); otherwise a response is created (`created`). It is complete when every
//! required question on the person's path is answered, else it stays partial.

use serde_json::Value;
use teamcomm_kernel::{Error, ErrorCode, PageRequest};
use teamcomm_org::User;
use time::Date;
use uuid::Uuid;

use super::ports::{CheckinScope, CheckinSelection};
use super::{AnswerInput, Checkin, CheckinResponse, CheckinService, ResponseInput};
use crate::questions::{QuestionSet, QuestionType};

/// The longest part of an update, in characters (four parts folded into one answer stay under
/// the answer limit, [`crate::questions::MAX_TEXT_ANSWER_CHARS`]).
pub const MAX_UPDATE_PART_CHARS: usize = 2_000;

/// How many times an update of one check-in is tried again when its questions or today's
/// response changed under it.
const ATTACH_ATTEMPTS: usize = 3;

/// A progress update: a free-text message and/or the three standup parts. Blank parts are
/// absent; at least one is present.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProgressUpdate {
    message: Option<String>,
    done: Option<String>,
    doing: Option<String>,
    blocked: Option<String>,
}

impl ProgressUpdate {
    /// The parts as sent: trimmed, blank ones dropped, each at most
    /// [`MAX_UPDATE_PART_CHARS`]; nothing at all is `params_validation_error` on `message`.
    pub fn new(
        message: Option<&str>,
        done: Option<&str>,
        doing: Option<&str>,
        blocked: Option<&str>,
    ) -> Result<Self, Error> {
        let mut errors = teamcomm_kernel::FieldErrors::new();
        let mut part = |field: &str, raw: Option<&str>| -> Option<String> {
            let text = raw.map(str::trim).filter(|t| !t.is_empty())?;
            if text.chars().count() > MAX_UPDATE_PART_CHARS {
                errors.note::<()>(&Err(Error::invalid_field(
                    field,
                    format!("At most {MAX_UPDATE_PART_CHARS} characters."),
                )));
                return None;
            }
            Some(text.to_owned())
        };
        let update = ProgressUpdate {
            message: part("message", message),
            done: part("done", done),
            doing: part("doing", doing),
            blocked: part("blocked", blocked),
        };
        errors.finish()?;
        if update == ProgressUpdate::default() {
            return Err(Error::invalid_field(
                "message",
                "Send a message, or at least one of done, doing and blocked.",
            ));
        }
        Ok(update)
    }

    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
    pub fn done(&self) -> Option<&str> {
        self.done.as_deref()
    }
    pub fn doing(&self) -> Option<&str> {
        self.doing.as_deref()
    }
    pub fn blocked(&self) -> Option<&str> {
        self.blocked.as_deref()
    }
}

/// Whether an update created today's response or changed the one there was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachAction {
    Created,
    Updated,
}

impl AttachAction {
    pub const fn as_str(self) -> &'static str {
        match self {
            AttachAction::Created => "created",
            AttachAction::Updated => "updated",
        }
    }
}

/// A check-in an update was attached to, and the response it left.
#[derive(Debug, Clone, PartialEq)]
pub struct AttachedCheckin {
    pub checkin: Checkin,
    pub action: AttachAction,
    pub response: CheckinResponse,
}

/// A check-in due today for a person, and that day.
#[derive(Debug, Clone, PartialEq)]
pub struct TodayCheckin {
    pub checkin: Checkin,
    /// The person's day, as this check-in counts days.
    pub date: Date,
}

/// Words that say "nothing blocks me".
fn says_nothing(text: &str) -> bool {
    let t = text
        .trim()
        .trim_end_matches(['.', '!'])
        .trim()
        .to_lowercase();
    matches!(
        t.as_str(),
        "" | "none"
            | "no"
            | "nope"
            | "nothing"
            | "n/a"
            | "na"
            | "-"
            | "no blockers"
            | "no blocker"
            | "not blocked"
            | "nothing blocking"
            | "all good"
    )
}

/// The answers an update gives a set of questions, as `(question, value)` in question order
/// (the rule in the module's documentation); empty when it fills none.
pub fn progress_answers(set: &QuestionSet, update: &ProgressUpdate) -> Vec<(Uuid, Value)> {
    let questions = &set.questions;
    let fits_blocker = |t: QuestionType| matches!(t, QuestionType::Text | QuestionType::Boolean);
    let blocker = questions
        .iter()
        .position(|q| q.is_blocker && fits_blocker(q.question_type))
        .or_else(|| {
            questions.iter().position(|q| {
                q.question_type == QuestionType::Text && q.question.to_lowercase().contains("block")
            })
        });
    let texts: Vec<usize> = questions
        .iter()
        .enumerate()
        .filter(|(i, q)| q.question_type == QuestionType::Text && Some(*i) != blocker)
        .map(|(i, _)| i)
        .collect();
    let mut filled: Vec<(usize, Value)> = Vec::new();
    // Parts with no question of their own: (label, text).
    let mut left: Vec<(Option<&str>, &str)> = Vec::new();
    if let Some(text) = update.blocked() {
        match blocker.map(|i| (i, questions[i].question_type)) {
            Some((i, QuestionType::Boolean)) => {
                let blocked = !says_nothing(text);
                filled.push((i, Value::Bool(blocked)));
                if blocked {
                    left.push((Some("Blocked"), text));
                }
            }
            Some((i, _)) => filled.push((i, Value::from(text))),
            None => left.push((Some("Blocked"), text)),
        }
    }
    // `done` has the first text question, `doing` the second, whether or not the other came.
    for (slot, label, part) in [(0, "Done", update.done()), (1, "Doing", update.doing())] {
        let Some(text) = part else { continue };
        match texts.get(slot) {
            Some(&i) => filled.push((i, Value::from(text))),
            None => left.push((Some(label), text)),
        }
    }
    if let Some(text) = update.message() {
        let taken = |i: &usize| filled.iter().any(|(f, _)| f == i);
        match texts.iter().find(|i| !taken(i)) {
            Some(&i) => filled.push((i, Value::from(text))),
            None => left.push((None, text)),
        }
    }
    filled.sort_by_key(|(i, _)| *i);
    if !left.is_empty() {
        // Folded into the first text answer the update gives (a yes/no blocker holds no text).
        let host = filled
            .iter_mut()
            .find(|(i, _)| questions[*i].question_type == QuestionType::Text);
        if let Some((_, Value::String(answer))) = host {
            for (label, text) in left {
                answer.push_str("\n\n");
                if let Some(label) = label {
                    answer.push_str(label);
                    answer.push_str(": ");
                }
                answer.push_str(text);
            }
        }
    }
    filled
        .into_iter()
        .map(|(i, v)| (questions[i].uuid, v))
        .collect()
}

/// `before`'s answers with `update`'s replacing those of the same questions, as a response to
/// `set`: answers placed by their question's position; complete when nothing required on the
/// path is missing, else partial.
fn merged_input(
    set: &QuestionSet,
    before: &[(Uuid, Value)],
    update: &[(Uuid, Value)],
) -> ResponseInput {
    let answers: Vec<(usize, Uuid, Value)> = set
        .questions
        .iter()
        .enumerate()
        .filter_map(|(i, q)| {
            let new = update.iter().find(|(u, _)| *u == q.uuid);
            let old = before.iter().find(|(u, _)| *u == q.uuid);
            new.or(old).map(|(u, v)| (i, *u, v.clone()))
        })
        .collect();
    let given: Vec<(Uuid, Value)> = answers.iter().map(|(_, u, v)| (*u, v.clone())).collect();
    let complete = set.answers(&given, true).is_ok();
    let last_question_index = if complete {
        None
    } else {
        // Short of the last question: a partial response (the required ones come later).
        let last = answers.last().map_or(0, |(i, _, _)| *i);
        Some(last.min(set.questions.len().saturating_sub(2)) as u16)
    };
    ResponseInput {
        answers: answers
            .into_iter()
            .map(|(i, uuid, response)| AnswerInput {
                uuid,
                index: Some(i as u16),
                response,
            })
            .collect(),
        last_question_index,
        questions_version: Some(set.version),
    }
}

impl CheckinService {
    /// The check-ins `person` is asked today (each on its own day for them), soonest first.
    pub async fn due_today(&self, person: &User) -> Result<Vec<TodayCheckin>, Error> {
        let selection = CheckinSelection::new(CheckinScope::TakenBy(person.id));
        let taken = self
            .checkins
            .list_checkins(person.org_id, &selection, PageRequest::all())
            .await?;
        let now = self.clock.now();
        let mut due: Vec<TodayCheckin> = taken
            .results
            .into_iter()
            .filter_map(|checkin| {
                let date = checkin.today_for(person, now);
                checkin
                    .is_due_on(date)
                    .then_some(TodayCheckin { checkin, date })
            })
            .collect();
        due.sort_by(|a, b| {
            let key = |t: &TodayCheckin| (t.checkin.trigger_at(t.date, person), t.checkin.id);
            key(a)
                .cmp(&key(b))
                .then_with(|| a.checkin.name.cmp(&b.checkin.name))
        });
        Ok(due)
    }

    /// The check-ins due today that `person` has not completed today (`GET /v1/cli/status/`).
    pub async fn pending_today(&self, person: &User) -> Result<Vec<TodayCheckin>, Error> {
        let due = self.due_today(person).await?;
        if due.is_empty() {
            return Ok(due);
        }
        let ids: Vec<Uuid> = due.iter().map(|t| t.checkin.id).collect();
        let mut days: Vec<Date> = due.iter().map(|t| t.date).collect();
        days.sort();
        days.dedup();
        let done: Vec<(Uuid, Date)> = self
            .checkins
            .day_responses(person.org_id, &ids, &days)
            .await?
            .into_iter()
            .filter(|r| r.completed && r.user_id == person.id)
            .map(|r| (r.checkin_id, r.date))
            .collect();
        Ok(due
            .into_iter()
            .filter(|t| !done.contains(&(t.checkin.id, t.date)))
            .collect())
    }

    /// Attaches `update` to every check-in due today for `person` that it gives an answer to,
    /// creating or changing today's response through the response rules
    /// ([`CheckinService::submit_response`], [`CheckinService::edit_response`]). A check-in
    /// whose rules refuse the answer (not yet started today, say) is skipped; when every
    /// check-in it was meant for refused it, the first refusal is the answer.
    pub async fn attach_progress(
        &self,
        person: &User,
        update: &ProgressUpdate,
    ) -> Result<Vec<AttachedCheckin>, Error> {
        let mut attached = Vec::new();
        let mut refusal: Option<Error> = None;
        for today in self.due_today(person).await? {
            match self.attach_one(person, today.checkin, update).await {
                Ok(Some(a)) => attached.push(a),
                Ok(None) => {}
                Err(e) if e.status() < 500 => {
                    refusal.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        match refusal {
            Some(e) if attached.is_empty() => Err(e),
            _ => Ok(attached),
        }
    }

    /// One check-in: `None` when the update answers none of its questions.
    async fn attach_one(
        &self,
        person: &User,
        mut checkin: Checkin,
        update: &ProgressUpdate,
    ) -> Result<Option<AttachedCheckin>, Error> {
        for attempt in 1..=ATTACH_ATTEMPTS {
            let parts = progress_answers(&checkin.questions, update);
            if parts.is_empty() {
                return Ok(None);
            }
            let today = checkin.today_for(person, self.clock.now());
            let before = self
                .checkins
                .responses_between(person.org_id, checkin.id, person.id, today, today)
                .await?
                .pop();
            let old: Vec<(Uuid, Value)> = before
                .iter()
                .flat_map(|r| r.answers.iter().map(|a| (a.uuid, a.response.clone())))
                .collect();
            let input = merged_input(&checkin.questions, &old, &parts);
            let day = today.to_string();
            let (action, result) = match before {
                None => (
                    AttachAction::Created,
                    self.submit_response(person, checkin.id, &input, Some(&day))
                        .await,
                ),
                Some(_) => (
                    AttachAction::Updated,
                    self.edit_response(person, checkin.id, &input, Some(&day))
                        .await,
                ),
            };
            match result {
                Ok((checkin, response)) => {
                    return Ok(Some(AttachedCheckin {
                        checkin,
                        action,
                        response,
                    }));
                }
                // The questions changed, or a response for today came (or went) meanwhile:
                // map the update again onto what is there now.
                Err(e)
                    if attempt < ATTACH_ATTEMPTS
                        && matches!(
                            e.code(),
                            ErrorCode::TemplateQuestionsVersionConflict
                                | ErrorCode::ResponseAlreadyExists
                                | ErrorCode::NotFound
                        ) =>
                {
                    checkin = self.checkins.get_checkin(person.org_id, checkin.id).await?;
                }
                Err(e) => return Err(e),
            }
        }
        Err(teamcomm_kernel::internal(format!(
            "check-in {} kept changing under {ATTACH_ATTEMPTS} attempts",
            checkin.id
        )))
    }
}
