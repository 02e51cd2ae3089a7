//! The pure rules of rounds: which are due at an instant, when each closes, when reminders and
//! the day's report are due, and the ids of what the engine sends.
//!
//! Days and trigger instants are the check-in's own ([`Checkin::today_for`],
//! [`Checkin::is_due_on`], [`Checkin::trigger_at`]: the participant's zone with
//! `use_participant_timezone`, else the schedule's, from the real zone database).
//!
//! **Catch-up window.** A round is due from its trigger instant until it closes: a server that
//! was down at the trigger opens it when it comes back, if the round has not closed yet; a
//! round whose day ended while the server was down is never opened (nobody is asked about a
//! day that is over).
//!
//! **Closing.** A round closes at the check-in's report time (`time_for_report`, the schedule's
//! zone) on its day when that comes after the person's trigger, but never after the end of the
//! person's local day; without a report time (or one before the trigger), at the end of the
//! person's local day. The day's report is due once every round of the day can have closed:
//! the latest closing instant of the people asked that day.

use teamcomm_forms::checkins::Checkin;
use teamcomm_kernel::{OrgId, UserId, zone};
use teamcomm_messaging::message::MessageId;
use teamcomm_org::User;
use time::{Date, Duration, OffsetDateTime, Time};
use uuid::Uuid;

/// One participant's round of a check-in on one of their local days.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    pub id: Uuid,
    pub org_id: OrgId,
    pub checkin_id: Uuid,
    pub user_id: UserId,
    /// The person's local day the round is for (the day their response counts for).
    pub day: Date,
    pub opened_at: OffsetDateTime,
    /// When it stops asking and reminding (see the module's rules).
    pub closes_at: OffsetDateTime,
    /// Questions sent so far.
    pub asked: u16,
    /// Questions answered on the chat platform so far.
    pub answered: u16,
    pub reminders_sent: u8,
    /// When the last question or reminder was queued; the next reminder counts from here.
    pub last_sent_at: Option<OffsetDateTime>,
    /// Nothing more is asked: the person answered every question on the chat platform, or
    /// answered the day through the API or CLI before the chat conversation started.
    pub completed: bool,
    /// The platform's id of the last reply taken, so a reply reported twice counts once.
    pub last_reply: Option<String>,
    /// Set when the day is finished.
    pub closed_at: Option<OffsetDateTime>,
    /// Bumped by every write: two servers advancing one round never both win.
    pub revision: i64,
}

/// A round due at an instant: the day it is for, when it was due, when it closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueRound {
    pub day: Date,
    pub trigger_at: OffsetDateTime,
    pub closes_at: OffsetDateTime,
}

impl Round {
    /// A new round of `due` for `person`, opened at `now`; `completed` when the person already
    /// answered the day.
    pub fn open(
        checkin: &Checkin,
        person: &User,
        due: DueRound,
        now: OffsetDateTime,
        completed: bool,
    ) -> Round {
        Round {
            id: Uuid::now_v7(),
            org_id: checkin.org_id,
            checkin_id: checkin.id,
            user_id: person.id,
            day: due.day,
            opened_at: now,
            closes_at: due.closes_at,
            asked: 0,
            answered: 0,
            reminders_sent: 0,
            last_sent_at: None,
            completed,
            last_reply: None,
            closed_at: None,
            revision: 1,
        }
    }

    /// Waiting for the person to answer the last question sent.
    pub fn awaits_answer(&self) -> bool {
        !self.completed && self.asked > self.answered
    }

    /// Still asking at `now`.
    pub fn is_running(&self, now: OffsetDateTime) -> bool {
        self.closed_at.is_none() && now < self.closes_at
    }
}

/// The instant `person`'s `day` ends in the zone the check-in reads their days in.
fn end_of_day(checkin: &Checkin, person: &User, day: Date) -> OffsetDateTime {
    let next = day.next_day().unwrap_or(day);
    zone::instant_at(next, Time::MIDNIGHT, checkin.zone_for(person))
}

/// When `person`'s round of `day` closes (see the module's rules).
pub fn closes_at(checkin: &Checkin, person: &User, day: Date) -> OffsetDateTime {
    let trigger = checkin.trigger_at(day, person);
    let end = end_of_day(checkin, person, day);
    match checkin.options.time_for_report {
        Some(t) => {
            let report = zone::instant_at(day, t, &checkin.schedule.timezone);
            if report > trigger {
                report.min(end)
            } else {
                end
            }
        }
        None => end,
    }
}

/// `person`'s round of `checkin` due at `now`, if any: today (as the check-in counts the
/// person's days) is one of its days, the trigger has passed and the round has not closed.
pub fn due_round(checkin: &Checkin, person: &User, now: OffsetDateTime) -> Option<DueRound> {
    let day = checkin.today_for(person, now);
    if !checkin.is_due_on(day) {
        return None;
    }
    let trigger_at = checkin.trigger_at(day, person);
    let closes_at = closes_at(checkin, person, day);
    (trigger_at <= now && now < closes_at).then_some(DueRound {
        day,
        trigger_at,
        closes_at,
    })
}

/// When the report of `day` is due: the latest closing of the rounds opened that day and of
/// the participants' rounds of that day (those not opened yet included).
pub fn report_due_at<'a>(
    checkin: Option<&Checkin>,
    participants: &[User],
    rounds: impl IntoIterator<Item = &'a Round>,
    day: Date,
) -> Option<OffsetDateTime> {
    let asked = checkin
        .filter(|c| c.is_due_on(day))
        .into_iter()
        .flat_map(|c| participants.iter().map(move |p| closes_at(c, p, day)));
    rounds.into_iter().map(|r| r.closes_at).chain(asked).max()
}

/// The reminder due for `round` at `now`, if any (its number in the round, from 1): the round
/// waits for an answer, it has reminders left (`reminders_max_count` per round), and
/// `reminders_frequency_time` minutes have passed since the last question or reminder. A
/// frequency of 0 sends none (reminders all at once would only be noise).
pub fn reminder_due(checkin: &Checkin, round: &Round, now: OffsetDateTime) -> Option<u8> {
    let options = &checkin.options;
    let last_sent = round.last_sent_at?;
    let next = round.reminders_sent + 1;
    let every = Duration::minutes(i64::from(options.reminders_frequency_time));
    (round.awaits_answer()
        && round.is_running(now)
        && options.reminders_frequency_time > 0
        && next <= options.reminders_max_count
        && now >= last_sent + every)
        .then_some(next)
}

/// The message asking question `index` (from 0) of a round: one id per round and question.
pub fn question_message_id(round: &Round, index: u16) -> MessageId {
    MessageId(Uuid::new_v5(
        &round.id,
        format!("question:{index}").as_bytes(),
    ))
}

/// The message of reminder `number` of a round.
pub fn reminder_message_id(round: &Round, number: u8) -> MessageId {
    MessageId(Uuid::new_v5(
        &round.id,
        format!("reminder:{number}").as_bytes(),
    ))
}

/// Message `index` of the report of a check-in's day.
pub fn report_message_id(checkin: Uuid, day: Date, index: usize) -> MessageId {
    MessageId(Uuid::new_v5(
        &checkin,
        format!("report:{day}:{index}").as_bytes(),
    ))
}
