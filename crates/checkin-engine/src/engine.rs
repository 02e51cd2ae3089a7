//! [`Engine`]: one pass over every scheduled check-in ([`Engine::tick`]) and the replies people
//! write on the chat platform ([`Engine::take_reply`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;
use teamcomm_forms::checkins::{
    AnswerInput, Checkin, CheckinRepository, CheckinService, ResponseInput, ResponseScope,
    ResponseSelection,
};
use teamcomm_kernel::{Error, OrgId, PageRequest, RepoError, UserId};
use teamcomm_messaging::MessagingService;
use teamcomm_messaging::message::{DeliveryStatus, DeliveryTarget, MessageId};
use teamcomm_messaging::platform::{InboundEvent, PlatformKind};
use teamcomm_messaging::ports::{MessageRepository, PlatformDirectory};
use teamcomm_org::{OrgRepository, User};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::ports::{ROUNDS_REVISION, RoundRepository, ScheduledCheckins};
use crate::report::{daily_finished_event, question_text, reminder_text, report_texts};
use crate::rules::{
    self, question_message_id, reminder_due, reminder_message_id, report_message_id,
};
use crate::{DueRound, Round};

/// The ports and services the engine works through.
#[derive(Clone)]
pub struct EnginePorts {
    pub rounds: Arc<dyn RoundRepository>,
    pub scheduled: Arc<dyn ScheduledCheckins>,
    /// Participants, the day's responses (the report, who answered through the API).
    pub checkin_store: Arc<dyn CheckinRepository>,
    /// Answers are stored under the response rules.
    pub checkins: CheckinService,
    pub people: Arc<dyn OrgRepository>,
    pub messaging: MessagingService,
    /// Where a question landed: a reply counts only in that conversation.
    pub messages: Arc<dyn MessageRepository>,
    /// Who a reply's author is.
    pub directory: Arc<dyn PlatformDirectory>,
}

/// What one tick did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TickSummary {
    pub opened: usize,
    /// Questions queued (first questions and the next after a reply).
    pub questions: usize,
    pub reminders: usize,
    /// Days finished (reported).
    pub reports: usize,
    /// Steps another server took first (they are its to do).
    pub lost: usize,
    /// Steps that failed; the next tick tries them again.
    pub failures: Vec<String>,
}

/// Runs check-in rounds.
#[derive(Clone)]
pub struct Engine {
    ports: EnginePorts,
}

/// What a step of a round did.
enum Step {
    Nothing,
    Question,
    Reminder,
    /// Another writer changed the round first.
    Lost,
}

/// The key of a round: one per (check-in, person, day).
type RoundKey = (Uuid, UserId, Date);

fn key(r: &Round) -> RoundKey {
    (r.checkin_id, r.user_id, r.day)
}

impl Engine {
    pub fn new(ports: EnginePorts) -> Self {
        Engine { ports }
    }

    /// One pass at `now`: opens the rounds due (and prompts them), sends the next questions
    /// and the reminders due, and finishes the days whose report is due. A failing step is
    /// noted in the summary and the pass goes on; only a failure to read the schedule or the
    /// rounds fails the pass.
    pub async fn tick(&self, now: OffsetDateTime) -> Result<TickSummary, Error> {
        let mut summary = TickSummary::default();
        let scheduled = self.ports.scheduled.scheduled_checkins().await?;
        let mut by_org: BTreeMap<OrgId, Vec<Checkin>> = BTreeMap::new();
        for c in scheduled {
            by_org.entry(c.org_id).or_default().push(c);
        }
        let mut open = self.ports.rounds.open_rounds(None).await?;
        let existing: HashSet<RoundKey> = open.iter().map(key).collect();
        let checkins: HashMap<Uuid, Checkin> = by_org
            .values()
            .flatten()
            .map(|c| (c.id, c.clone()))
            .collect();
        let mut participants: HashMap<Uuid, Vec<User>> = HashMap::new();

        for (org, org_checkins) in &by_org {
            let ids: Vec<Uuid> = org_checkins.iter().map(|c| c.id).collect();
            match self.ports.checkin_store.participants(*org, &ids).await {
                Ok(rows) => {
                    for (checkin, person) in rows {
                        participants.entry(checkin).or_default().push(person);
                    }
                }
                Err(e) => {
                    summary.failures.push(format!("participants of {org}: {e}"));
                    continue;
                }
            }
            let mut due: Vec<(&Checkin, &User, DueRound)> = Vec::new();
            for c in org_checkins {
                for person in participants.get(&c.id).into_iter().flatten() {
                    if let Some(d) = rules::due_round(c, person, now)
                        && !existing.contains(&(c.id, person.id, d.day))
                    {
                        due.push((c, person, d));
                    }
                }
            }
            if due.is_empty() {
                continue;
            }
            let answered = match self.completed_days(*org, &due_keys(&due)).await {
                Ok(a) => a,
                Err(e) => {
                    summary.failures.push(format!("responses of {org}: {e}"));
                    continue;
                }
            };
            for (c, person, d) in due {
                let done = answered.contains(&(c.id, person.id, d.day));
                let round = Round::open(c, person, d, now, done);
                match self.ports.rounds.open_round(&round).await {
                    Ok(true) => {
                        summary.opened += 1;
                        open.push(round);
                    }
                    Ok(false) => summary.lost += 1,
                    Err(e) => summary
                        .failures
                        .push(format!("opening {:?}: {e}", key(&round))),
                }
            }
        }

        self.advance_all(&mut open, &checkins, now, &mut summary)
            .await;
        self.finish_days(&open, &checkins, &participants, now, &mut summary)
            .await;
        Ok(summary)
    }

    /// Sends what each running round needs: the first question, the next one, a reminder.
    /// A round whose person answered the day through the API or CLI before the chat
    /// conversation started is completed instead.
    async fn advance_all(
        &self,
        open: &mut [Round],
        checkins: &HashMap<Uuid, Checkin>,
        now: OffsetDateTime,
        summary: &mut TickSummary,
    ) {
        let mut by_org: BTreeMap<OrgId, Vec<&mut Round>> = BTreeMap::new();
        for r in open.iter_mut() {
            // A paused or archived check-in asks nothing more; its day is still reported.
            if r.is_running(now) && !r.completed && checkins.contains_key(&r.checkin_id) {
                by_org.entry(r.org_id).or_default().push(r);
            }
        }
        for (org, rounds) in by_org {
            let unstarted: Vec<RoundKey> = rounds
                .iter()
                .filter(|r| r.answered == 0)
                .map(|r| key(r))
                .collect();
            let answered = match self.completed_days(org, &unstarted).await {
                Ok(a) => a,
                Err(e) => {
                    summary.failures.push(format!("responses of {org}: {e}"));
                    continue;
                }
            };
            for round in rounds {
                let checkin = &checkins[&round.checkin_id];
                let step = if round.answered == 0 && answered.contains(&key(round)) {
                    let mut next = round.clone();
                    next.completed = true;
                    self.save(round, next).await
                } else {
                    self.advance(checkin, round, now).await
                };
                match step {
                    Ok(Step::Question) => summary.questions += 1,
                    Ok(Step::Reminder) => summary.reminders += 1,
                    Ok(Step::Lost) => summary.lost += 1,
                    Ok(Step::Nothing) => {}
                    Err(e) => summary
                        .failures
                        .push(format!("advancing {:?}: {e}", key(round))),
                }
            }
        }
    }

    /// The next question when the last one is answered, else a reminder when one is due.
    async fn advance(
        &self,
        checkin: &Checkin,
        round: &mut Round,
        now: OffsetDateTime,
    ) -> Result<Step, Error> {
        if round.completed || !round.is_running(now) {
            return Ok(Step::Nothing);
        }
        if round.asked == round.answered {
            let Some(text) = question_text(checkin, round.asked) else {
                return Ok(Step::Nothing);
            };
            self.say(round, question_message_id(round, round.asked), text)
                .await?;
            let mut next = round.clone();
            next.asked += 1;
            next.last_sent_at = Some(now);
            return Ok(match self.save(round, next).await? {
                Step::Lost => Step::Lost,
                _ => Step::Question,
            });
        }
        if let Some(number) = reminder_due(checkin, round, now) {
            let text = reminder_text(checkin, round.answered);
            self.say(round, reminder_message_id(round, number), text)
                .await?;
            let mut next = round.clone();
            next.reminders_sent = number;
            next.last_sent_at = Some(now);
            return Ok(match self.save(round, next).await? {
                Step::Lost => Step::Lost,
                _ => Step::Reminder,
            });
        }
        Ok(Step::Nothing)
    }

    /// Queues a direct message to the round's person (once per id, whoever sends it).
    async fn say(&self, round: &Round, id: MessageId, text: String) -> Result<(), Error> {
        self.ports
            .messaging
            .queue_system_message(
                round.org_id,
                id,
                round.user_id,
                vec![DeliveryTarget::Person(round.user_id)],
                text,
            )
            .await?;
        Ok(())
    }

    /// Writes `next` over `round` (fenced by its revision); on success `round` becomes it.
    async fn save(&self, round: &mut Round, mut next: Round) -> Result<Step, Error> {
        next.revision = round.revision + 1;
        match self.ports.rounds.update_round(&next, round.revision).await {
            Ok(()) => {
                *round = next;
                Ok(Step::Nothing)
            }
            Err(RepoError::Conflict { constraint }) if constraint == ROUNDS_REVISION => {
                Ok(Step::Lost)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The (check-in, person, day)s among `keys` whose response is complete.
    async fn completed_days(
        &self,
        org: OrgId,
        keys: &[RoundKey],
    ) -> Result<HashSet<RoundKey>, Error> {
        if keys.is_empty() {
            return Ok(HashSet::new());
        }
        let mut checkins: Vec<Uuid> = keys.iter().map(|k| k.0).collect();
        let mut days: Vec<Date> = keys.iter().map(|k| k.2).collect();
        checkins.sort();
        checkins.dedup();
        days.sort();
        days.dedup();
        Ok(self
            .ports
            .checkin_store
            .day_responses(org, &checkins, &days)
            .await?
            .into_iter()
            .filter(|r| r.completed)
            .map(|r| (r.checkin_id, r.user_id, r.date))
            .collect())
    }

    /// Finishes every day whose report is due: posts the report to the check-in's report
    /// channels and finishes the day with its `followups.daily.finished`.
    async fn finish_days(
        &self,
        open: &[Round],
        checkins: &HashMap<Uuid, Checkin>,
        participants: &HashMap<Uuid, Vec<User>>,
        now: OffsetDateTime,
        summary: &mut TickSummary,
    ) {
        let mut days: BTreeMap<(OrgId, Uuid, Date), Vec<&Round>> = BTreeMap::new();
        for r in open {
            days.entry((r.org_id, r.checkin_id, r.day))
                .or_default()
                .push(r);
        }
        for ((org, id, day), rounds) in days {
            let checkin = checkins.get(&id);
            let people = participants.get(&id).map(Vec::as_slice).unwrap_or(&[]);
            let due = rules::report_due_at(checkin, people, rounds.iter().copied(), day);
            if due.is_none_or(|at| now < at) {
                continue;
            }
            match self.finish_day(org, id, day, &rounds, people, now).await {
                Ok(true) => summary.reports += 1,
                Ok(false) => summary.lost += 1,
                Err(e) => summary
                    .failures
                    .push(format!("finishing {id} on {day}: {e}")),
            }
        }
    }

    async fn finish_day(
        &self,
        org: OrgId,
        id: Uuid,
        day: Date,
        rounds: &[&Round],
        people: &[User],
        now: OffsetDateTime,
    ) -> Result<bool, Error> {
        // Read again: a paused check-in is not in the schedule but still reports its day.
        let checkin = self.ports.checkin_store.get_checkin(org, id).await?;
        let selection = ResponseSelection {
            checkin: id,
            scope: ResponseScope::All,
            user: None,
            search: None,
            from: Some(day),
            until: Some(day),
        };
        let responses = self
            .ports
            .checkin_store
            .list_responses(org, &selection, PageRequest::all())
            .await?
            .results;
        let answered: HashSet<UserId> = responses.iter().map(|r| r.author.id).collect();
        let silent: Vec<User> = rounds
            .iter()
            .filter(|r| !answered.contains(&r.user_id))
            .filter_map(|r| people.iter().find(|p| p.id == r.user_id).cloned())
            .collect();
        let texts = report_texts(&checkin, day, &responses, &silent);
        let targets: Vec<DeliveryTarget> = checkin
            .report_channels
            .iter()
            .map(|c| DeliveryTarget::Channel {
                channel_id: c.clone(),
                thread: None,
            })
            .collect();
        // A report is sent on behalf of the check-in's author, or of someone it asked that day
        // when the author is gone (a message names a person as its sender).
        let sender = checkin
            .created_by
            .or_else(|| rounds.first().map(|r| r.user_id));
        if let Some(sender) = sender
            && !targets.is_empty()
        {
            for (i, text) in texts.into_iter().enumerate() {
                self.ports
                    .messaging
                    .queue_system_message(
                        org,
                        report_message_id(id, day, i),
                        sender,
                        targets.clone(),
                        text,
                    )
                    .await?;
            }
        }
        let event = daily_finished_event(&checkin, day, rounds.len(), &responses, now);
        Ok(self
            .ports
            .rounds
            .finish_day(org, id, day, now, &[event])
            .await?)
    }

    /// Takes a person's reply on the chat platform of `org` (connected as `kind`) as the answer
    /// to the question their round is waiting on, and sends the next question; answers the
    /// round as it stands then. Counts only a reply in the conversation the question landed in,
    /// from the person asked, while the round runs; anything else is not for the engine
    /// (`None`). When several rounds of the person wait, the one opened last takes it (the
    /// question they read last). An answer the response rules refuse is not taken: the person
    /// is told why, and the question still waits.
    pub async fn take_reply(
        &self,
        org: OrgId,
        kind: PlatformKind,
        event: &InboundEvent,
        now: OffsetDateTime,
    ) -> Result<Option<Round>, Error> {
        let InboundEvent::Reply {
            platform_user_id,
            channel_id,
            message_id,
            text,
            ..
        } = event
        else {
            return Ok(None);
        };
        let waiting: Vec<Round> = self
            .ports
            .rounds
            .open_rounds(Some(org))
            .await?
            .into_iter()
            .filter(|r| r.is_running(now) && r.awaits_answer())
            .filter(|r| r.last_reply.as_deref() != Some(message_id.as_str()))
            .collect();
        if waiting.is_empty() {
            return Ok(None);
        }
        let mut people: Vec<UserId> = waiting.iter().map(|r| r.user_id).collect();
        people.sort();
        people.dedup();
        let identities = self
            .ports
            .directory
            .platform_user_ids(org, kind, &people)
            .await?;
        let mut chosen: Option<Round> = None;
        for r in waiting {
            if identities.get(&r.user_id) != Some(platform_user_id) {
                continue;
            }
            let asked = question_message_id(&r, r.asked - 1);
            let landed = match self.ports.messages.get_message(org, asked).await {
                Ok(m) => m.deliveries.iter().any(|d| {
                    matches!(&d.status, DeliveryStatus::Delivered(s) if &s.channel_id == channel_id)
                }),
                Err(RepoError::NotFound) => false,
                Err(e) => return Err(e.into()),
            };
            if landed && chosen.as_ref().is_none_or(|c| c.opened_at <= r.opened_at) {
                chosen = Some(r);
            }
        }
        let Some(mut round) = chosen else {
            return Ok(None);
        };
        let checkin = self
            .ports
            .checkin_store
            .get_checkin(org, round.checkin_id)
            .await?;
        let person = self.ports.people.get_user(org, round.user_id).await?;
        let index = round.answered;
        let Some(question) = checkin.questions.questions.get(usize::from(index)) else {
            return Ok(None);
        };
        let before = self
            .ports
            .checkin_store
            .responses_between(org, checkin.id, person.id, round.day, round.day)
            .await?
            .pop();
        let position = |uuid: Uuid| {
            checkin
                .questions
                .questions
                .iter()
                .position(|q| q.uuid == uuid)
                .and_then(|p| u16::try_from(p).ok())
        };
        let mut answers: Vec<AnswerInput> = before
            .iter()
            .flat_map(|r| &r.answers)
            .filter(|a| a.uuid != question.uuid)
            .filter_map(|a| {
                position(a.uuid).map(|p| AnswerInput {
                    uuid: a.uuid,
                    index: Some(p),
                    response: a.response.clone(),
                })
            })
            .collect();
        answers.push(AnswerInput {
            uuid: question.uuid,
            index: Some(index),
            // The text as written: the response rules read numbers, yes/no and choices from it.
            response: Value::from(text.as_str()),
        });
        answers.sort_by_key(|a| a.index);
        let input = ResponseInput {
            answers,
            last_question_index: Some(index),
            questions_version: None,
        };
        let day = round.day.to_string();
        let stored = match before {
            Some(_) => {
                self.ports
                    .checkins
                    .edit_response(&person, checkin.id, &input, Some(&day))
                    .await
            }
            None => {
                self.ports
                    .checkins
                    .submit_response(&person, checkin.id, &input, Some(&day))
                    .await
            }
        };
        match stored {
            Ok(_) => {}
            // The rules refused the answer (not a number, not an option...): the person is
            // told why and the question still waits.
            Err(refusal) if refusal.status() < 500 => {
                let id = MessageId(Uuid::new_v5(
                    &round.id,
                    format!("refused:{message_id}").as_bytes(),
                ));
                self.say(&round, id, refusal_text(&refusal)).await?;
                return Ok(Some(round));
            }
            Err(e) => return Err(e),
        }
        let mut next = round.clone();
        next.answered += 1;
        next.last_reply = Some(message_id.clone());
        next.completed = usize::from(next.answered) >= checkin.questions.questions.len();
        if let Step::Lost = self.save(&mut round, next).await? {
            // Another server took this reply (it was reported twice).
            return Ok(None);
        }
        self.advance(&checkin, &mut round, now).await?;
        Ok(Some(round))
    }
}

fn due_keys(due: &[(&Checkin, &User, DueRound)]) -> Vec<RoundKey> {
    due.iter().map(|(c, p, d)| (c.id, p.id, d.day)).collect()
}

/// What the person is told when the response rules refuse their answer: the rules' own words.
fn refusal_text(refusal: &Error) -> String {
    let reasons: Vec<&str> = refusal
        .field_errors()
        .values()
        .flatten()
        .map(String::as_str)
        .collect();
    let reason = if reasons.is_empty() {
        refusal.detail().to_owned()
    } else {
        reasons.join(" ")
    };
    format!("I could not take that answer: {reason} Please answer again.")
}
