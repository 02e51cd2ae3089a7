//! Responses to check-ins: one per participant per check-in per day, the day being the
//! participant's local day as the check-in counts days (their own zone when the check-in uses
//! participants' zones, else the schedule's), from the real zone database.
//!
//! - Submitting (`POST`) answers for today or, when the check-in allows it, a past or coming
//!   day; editing (`PUT`) changes that day's (default today's); resetting (`DELETE`) removes the person's own for a
//!   span of days. Each writes its `followups.response.*` event with the change.
//! - Answers name their question by `uuid`, in the order of `index`; they must fit the current
//!   questions (`template_questions_version_conflict` otherwise).
//! - Reading: admins see every response, team managers theirs and their teams' members',
//!   anyone else only their own; anonymous check-ins never say who answered, except to the
//!   person who did.

use serde_json::{Value, json};
use teamcomm_kernel::{
    Error, ErrorCode, Event, EventType, Page, PageRequest, RepoError, UserId, filters,
};
use teamcomm_org::User;
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use super::ports::{ResponseScope, ResponseSelection};
use super::{Checkin, CheckinResponse, CheckinService};
use crate::questions::QuestionSet;

/// How far ahead a check-in that allows future responses takes them, in days.
pub const MAX_DAYS_AHEAD: i64 = 30;
/// How far back a check-in that allows past responses takes them, in days.
pub const MAX_DAYS_BACK: i64 = 365;
/// How many times an edit or a reset is re-applied when the same responses changed under it.
const WRITE_ATTEMPTS: usize = 5;

/// One answer as sent: the question's `uuid`, its `index` (position) when the person was
/// asked, and the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerInput {
    pub uuid: Uuid,
    pub index: Option<u16>,
    pub response: Value,
}

/// A response as sent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResponseInput {
    pub answers: Vec<AnswerInput>,
    /// The position of the last question the person reached; below the last question the
    /// response may stop short of the required questions (a partial response).
    pub last_question_index: Option<u16>,
    /// The version of the questions the person read, when the client knows it.
    pub questions_version: Option<i32>,
}

/// The filters of a response listing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResponseListFilter {
    pub user: Option<UserId>,
    pub search: Option<String>,
    /// Days, both included; each bound optional.
    pub from: Option<Date>,
    pub until: Option<Date>,
}

/// A response as its reader sees it: who answered, unless the check-in is anonymous (then
/// only the responder sees themself).
#[derive(Debug, Clone, PartialEq)]
pub struct ListedResponse {
    pub response: CheckinResponse,
    pub author: Option<User>,
}

/// A page of responses and the check-in they answer (for the questions' positions).
#[derive(Debug, Clone, PartialEq)]
pub struct ResponsePage {
    pub checkin: Checkin,
    pub page: Page<ListedResponse>,
}

/// Answers fit the current questions: each names a question of the set, their `index`es put
/// them in the set's present order (positions may be skipped: branching, optional questions),
/// and `questions_version`, when sent, is the set's. Otherwise the person answered questions
/// that have changed since they read them: 409 `template_questions_version_conflict` with
/// `extra.current_version`.
pub fn check_current(set: &QuestionSet, input: &ResponseInput) -> Result<(), Error> {
    let conflict = |detail: &'static str| {
        Error::new(ErrorCode::TemplateQuestionsVersionConflict, detail)
            .with_extra("current_version", set.version)
    };
    if input.questions_version.is_some_and(|v| v != set.version) {
        return Err(conflict(
            "The questions changed since they were read; read them again.",
        ));
    }
    let mut placed: Vec<(u16, usize)> = Vec::with_capacity(input.answers.len());
    let mut unknown = Vec::new();
    for a in &input.answers {
        match set.questions.iter().position(|q| q.uuid == a.uuid) {
            Some(p) => placed.extend(a.index.map(|i| (i, p))),
            None => unknown.push(a.uuid.to_string()),
        }
    }
    if !unknown.is_empty() {
        return Err(conflict(
            "Some answers are for questions this check-in no longer asks; read them again.",
        )
        .with_extra("uuids", unknown));
    }
    placed.sort();
    if placed
        .windows(2)
        .any(|w| w[0].0 == w[1].0 || w[0].1 >= w[1].1)
    {
        return Err(conflict(
            "The answers' order is not the questions' present order; read them again.",
        ));
    }
    Ok(())
}

/// Why a day cannot be answered, or `Ok`. The check-in's `start_on`..`end_on` bound the days
/// people are asked, not the days they may answer for.
fn check_day(checkin: &Checkin, day: Date, today: Date) -> Result<(), Error> {
    let o = &checkin.options;
    if day < today {
        if !o.allow_past_responses {
            return Err(Error::new(
                ErrorCode::PreviousResponsesAreNotAllowed,
                "This check-in does not take responses for past days.",
            ));
        }
        if day < today - Duration::days(MAX_DAYS_BACK) {
            return Err(Error::new(
                ErrorCode::PreviousResponsesAreNotAllowed,
                format!("Responses go back at most {MAX_DAYS_BACK} days."),
            )
            .with_extra("max_days", MAX_DAYS_BACK));
        }
    }
    if day > today {
        if !o.allow_future_responses {
            return Err(Error::new(
                ErrorCode::FutureResponsesAreNotAllowed,
                "This check-in does not take responses for coming days.",
            ));
        }
        if day > today + Duration::days(MAX_DAYS_AHEAD) {
            return Err(Error::new(
                ErrorCode::FutureResponsesAreNotAllowed,
                format!("Responses go at most {MAX_DAYS_AHEAD} days ahead."),
            )
            .with_extra("max_days", MAX_DAYS_AHEAD));
        }
    }
    Ok(())
}

/// `response_date` as sent: `YYYY-MM-DD` or `response_date_format_is_invalid`.
fn parse_response_date(raw: Option<&str>) -> Result<Option<Date>, Error> {
    raw.map(|raw| {
        filters::parse_day(raw).ok_or_else(|| {
            Error::new(
                ErrorCode::ResponseDateFormatIsInvalid,
                "`response_date` must be a date as YYYY-MM-DD.",
            )
        })
    })
    .transpose()
}

fn not_a_participant() -> Error {
    Error::new(
        ErrorCode::UserIsNotAFollowupMember,
        "You are not a participant of this check-in.",
    )
}

fn not_running() -> Error {
    Error::new(
        ErrorCode::ResponsesNotAllowedOnInactiveFollowup,
        "This check-in is paused or archived; it takes no responses.",
    )
}

/// The event of a response change: `data` is documented in docs/events.md.
fn response_event(
    kind: EventType,
    checkin: &Checkin,
    response: &CheckinResponse,
    author: &User,
    at: OffsetDateTime,
) -> Event {
    let user = if checkin.options.is_anonymous {
        Value::Null
    } else {
        json!({
            "uuid": author.id.to_string(),
            "full_name": author.full_name(),
            "email": author.email,
        })
    };
    let answers: Vec<Value> = response
        .answers
        .iter()
        .map(
            |a| json!({"uuid": a.uuid.to_string(), "question": a.question, "response": a.response}),
        )
        .collect();
    Event::new(
        checkin.org_id,
        kind,
        Some(checkin.id),
        at,
        json!({
            "checkin": {"uuid": checkin.id.to_string(), "name": checkin.name},
            "response": {
                "uuid": response.id.to_string(),
                "response_date": response.date.to_string(),
                "response_completed": response.completed,
                "answers": answers,
                "user": user,
            },
        }),
    )
}

/// The answers of `input` against the check-in's questions, and whether they complete it.
fn answers_of(
    checkin: &Checkin,
    input: &ResponseInput,
) -> Result<(Vec<crate::questions::Answer>, bool), Error> {
    let set = &checkin.questions;
    check_current(set, input)?;
    let given: Vec<(Uuid, Value)> = input
        .answers
        .iter()
        .map(|a| (a.uuid, a.response.clone()))
        .collect();
    // Up to the last question the person claims to be done: every required question on their
    // path must be answered. Stopping earlier leaves a partial response, complete only if
    // nothing required is missing anyway.
    let claims_done = input
        .last_question_index
        .is_none_or(|i| usize::from(i) + 1 >= set.questions.len());
    let answers = set.answers(&given, claims_done)?;
    let completed = claims_done || set.answers(&given, true).is_ok();
    Ok((answers, completed))
}

impl CheckinService {
    /// A check-in the actor takes part in, still running: `not_found` when it is not of their
    /// organization, `user_is_not_a_followup_member` (403) when they are not asked by it,
    /// `responses_not_allowed_on_inactive_followup` when it is paused or archived.
    async fn answerable(&self, actor: &User, id: Uuid) -> Result<Checkin, Error> {
        let checkin = self.checkins.get_checkin(actor.org_id, id).await?;
        self.require_participant(actor, id).await?;
        if !checkin.active || checkin.archived {
            return Err(not_running());
        }
        Ok(checkin)
    }

    /// 403 `user_is_not_a_followup_member` unless the check-in asks the actor.
    async fn require_participant(&self, actor: &User, id: Uuid) -> Result<(), Error> {
        if self
            .checkins
            .is_participant(actor.org_id, id, actor.id)
            .await?
        {
            Ok(())
        } else {
            Err(not_a_participant())
        }
    }

    /// Records the actor's response for `response_date` (`YYYY-MM-DD`, default their today);
    /// one per day (409 `response_already_exists`). A completed response writes
    /// `followups.response.completed` with it. Answers the check-in with the response (its
    /// questions place the answers).
    ///
    /// The write itself checks that the check-in asks the actor and is still the one the rules
    /// were checked against (one statement, no read of participants first); a refusal of the
    /// rules checks participation first, so a non-participant always hears that.
    pub async fn submit_response(
        &self,
        actor: &User,
        id: Uuid,
        input: &ResponseInput,
        response_date: Option<&str>,
    ) -> Result<(Checkin, CheckinResponse), Error> {
        let day = parse_response_date(response_date)?;
        for _ in 0..WRITE_ATTEMPTS {
            let checkin = self.checkins.get_checkin(actor.org_id, id).await?;
            let (response, events) = match self.new_response(actor, &checkin, input, day) {
                Ok(new) => new,
                Err(refusal) => {
                    self.require_participant(actor, id).await?;
                    return Err(refusal);
                }
            };
            match self
                .checkins
                .insert_response(&response, checkin.revision, &events)
                .await
            {
                Ok(()) => return Ok((checkin, response)),
                Err(RepoError::Conflict { constraint }) => match constraint.as_str() {
                    "checkin_responses_checkin_user_day_key" => {
                        return Err(Error::new(
                            ErrorCode::ResponseAlreadyExists,
                            "You already answered this check-in for that day; edit it with PUT or reset it with DELETE.",
                        )
                        .with_extra("response_date", response.date.to_string()));
                    }
                    "checkin_participants" => return Err(not_a_participant()),
                    // The check-in changed since it was read: check again against the new one.
                    "checkins_revision" => {}
                    _ => return Err(RepoError::Conflict { constraint }.into()),
                },
                Err(e) => return Err(e.into()),
            }
        }
        Err(teamcomm_kernel::internal(format!(
            "check-in {id} kept changing under {WRITE_ATTEMPTS} attempts"
        )))
    }

    /// The actor's new response to a running check-in for `day` (default their today), with
    /// its event, under the check-in's day and trigger-time rules.
    fn new_response(
        &self,
        actor: &User,
        checkin: &Checkin,
        input: &ResponseInput,
        day: Option<Date>,
    ) -> Result<(CheckinResponse, Vec<Event>), Error> {
        if !checkin.active || checkin.archived {
            return Err(not_running());
        }
        let now = self.clock.now();
        let today = checkin.today_for(actor, now);
        let day = day.unwrap_or(today);
        check_day(checkin, day, today)?;
        if day == today
            && !checkin.options.is_trigger_based
            && !checkin.options.allow_responses_before_trigger
        {
            let trigger = checkin.trigger_at(today, actor);
            if now < trigger {
                return Err(Error::new(
                    ErrorCode::FollowupNotAllowResponsesBeforeTriggerTime,
                    "Today's check-in has not started yet; answer after its time.",
                )
                .with_extra(
                    "trigger_at",
                    trigger
                        .format(&time::format_description::well_known::Rfc3339)
                        .unwrap_or_default(),
                ));
            }
        }
        let (answers, completed) = answers_of(checkin, input)?;
        let response = CheckinResponse {
            id: Uuid::now_v7(),
            org_id: actor.org_id,
            checkin_id: checkin.id,
            user_id: actor.id,
            date: day,
            answers,
            last_question_index: input.last_question_index,
            completed,
            questions_version: checkin.questions.version,
            created_at: now,
            updated_at: now,
        };
        let events: Vec<Event> = completed
            .then(|| {
                response_event(
                    EventType::FollowupsResponseCompleted,
                    checkin,
                    &response,
                    actor,
                    now,
                )
            })
            .into_iter()
            .collect();
        Ok((response, events))
    }

    /// Replaces the answers of the actor's response for `response_date` (`YYYY-MM-DD`, default
    /// their today; past and coming days as the check-in allows them), `not_found` when there
    /// is none. Completing it writes `followups.response.completed`; editing a completed one
    /// writes `followups.response.updated`.
    pub async fn edit_response(
        &self,
        actor: &User,
        id: Uuid,
        input: &ResponseInput,
        response_date: Option<&str>,
    ) -> Result<(Checkin, CheckinResponse), Error> {
        let day = parse_response_date(response_date)?;
        for _ in 0..WRITE_ATTEMPTS {
            let checkin = self.answerable(actor, id).await?;
            let now = self.clock.now();
            let today = checkin.today_for(actor, now);
            let day = day.unwrap_or(today);
            check_day(&checkin, day, today)?;
            let Some(before) = self
                .checkins
                .responses_between(actor.org_id, id, actor.id, day, day)
                .await?
                .pop()
            else {
                return Err(Error::new(
                    ErrorCode::NotFound,
                    "You have no response for that day to edit; submit one with POST.",
                ));
            };
            let (answers, completed) = answers_of(&checkin, input)?;
            let after = CheckinResponse {
                answers,
                completed,
                last_question_index: input.last_question_index,
                questions_version: checkin.questions.version,
                updated_at: now,
                ..before.clone()
            };
            let kind = if before.completed {
                Some(EventType::FollowupsResponseUpdated)
            } else {
                completed.then_some(EventType::FollowupsResponseCompleted)
            };
            let events: Vec<Event> = kind
                .map(|k| response_event(k, &checkin, &after, actor, now))
                .into_iter()
                .collect();
            match self
                .checkins
                .update_response(&after, before.updated_at, &events)
                .await
            {
                Ok(()) => return Ok((checkin, after)),
                Err(RepoError::Conflict { constraint })
                    if constraint == "checkin_responses_updated_at" => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(teamcomm_kernel::internal(format!(
            "response to check-in {id} kept changing under {WRITE_ATTEMPTS} attempts"
        )))
    }

    /// Deletes the actor's own responses for the days `from` to `until` (each defaulting to
    /// their today), each with its `followups.response.deleted`; answers how many went.
    pub async fn reset_responses(
        &self,
        actor: &User,
        id: Uuid,
        from: Option<Date>,
        until: Option<Date>,
    ) -> Result<u64, Error> {
        for _ in 0..WRITE_ATTEMPTS {
            let checkin = self.answerable(actor, id).await?;
            let now = self.clock.now();
            let today = checkin.today_for(actor, now);
            let (from, until) = (from.unwrap_or(today), until.unwrap_or(today));
            filters::day_range(Some(from), Some(until))?;
            let gone = self
                .checkins
                .responses_between(actor.org_id, id, actor.id, from, until)
                .await?;
            if gone.is_empty() {
                return Ok(0);
            }
            let ids: Vec<Uuid> = gone.iter().map(|r| r.id).collect();
            let events: Vec<Event> = gone
                .iter()
                .map(|r| {
                    response_event(EventType::FollowupsResponseDeleted, &checkin, r, actor, now)
                })
                .collect();
            match self
                .checkins
                .delete_responses(actor.org_id, &ids, &events)
                .await
            {
                Ok(()) => return Ok(ids.len() as u64),
                Err(RepoError::Conflict { constraint })
                    if constraint == "checkin_responses_deleted" => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(teamcomm_kernel::internal(format!(
            "responses to check-in {id} kept changing under {WRITE_ATTEMPTS} attempts"
        )))
    }

    /// Responses to a check-in the actor may see, of the days asked (every day by default):
    /// admins every one, team managers their own and their teams' members', anyone else their
    /// own (`user` is then ignored, no refusal).
    pub async fn list_responses(
        &self,
        actor: &User,
        id: Uuid,
        filter: &ResponseListFilter,
        page: PageRequest,
    ) -> Result<ResponsePage, Error> {
        let checkin = self.visible(actor, id).await?;
        if let (Some(from), Some(until)) = (filter.from, filter.until) {
            filters::day_range(Some(from), Some(until))?;
        }
        let scope = if actor.role.is_admin() {
            ResponseScope::All
        } else if self
            .checkins
            .managed_scope(actor.org_id, actor.id)
            .await?
            .teams
            .is_empty()
        {
            ResponseScope::Own(actor.id)
        } else {
            ResponseScope::ManagedBy(actor.id)
        };
        let user = match scope {
            ResponseScope::Own(_) => None,
            _ => filter.user,
        };
        // Narrowing an anonymous check-in to someone else would say who wrote what.
        let anonymous = checkin.options.is_anonymous;
        if anonymous && user.is_some_and(|u| u != actor.id) {
            return Ok(ResponsePage {
                checkin,
                page: Page {
                    count: 0,
                    results: Vec::new(),
                },
            });
        }
        let selection = ResponseSelection {
            checkin: id,
            scope,
            user,
            search: filter.search.clone(),
            from: filter.from,
            until: filter.until,
        };
        let page = self
            .checkins
            .list_responses(actor.org_id, &selection, page)
            .await?
            .map(|r| ListedResponse {
                author: (!anonymous || r.author.id == actor.id).then_some(r.author),
                response: r.response,
            });
        Ok(ResponsePage { checkin, page })
    }
}
