//! A check-in's settings as a client writes them (creation and `PATCH .../config/` send the
//! same keys), and the rules that turn them into a valid [`Checkin`]. Applying is pure: what
//! needs the directory (do the participants and channels exist?) is checked by the service.
//!
//! A schedule value the rules refuse (weekday, time, zone, cadence, dates) answers 400
//! `invalid_schedule` naming it in `extra.parameter`; any other bad value answers
//! `params_validation_error` naming every bad field.

use std::collections::BTreeSet;

use teamcomm_kernel::{
    Error, ErrorCode, FieldErrors, TeamId, UserId, WireEnum, filters, text, zone,
};
use time::Date;

use super::model::hh_mm;
use super::schedule::Cron;
use super::{
    Checkin, FrequencyAdvanced, FrequencyType, Participants, Privacy, ReminderCondition,
    ReminderTone,
};

/// The longest check-in name, in characters.
pub const MAX_CHECKIN_NAME: usize = 200;
/// Report channels a check-in posts to.
pub const MAX_REPORT_CHANNELS: usize = 3;
/// People and teams named as participants.
pub const MAX_PARTICIPANT_USERS: usize = 500;
pub const MAX_PARTICIPANT_TEAMS: usize = 100;
/// The largest `frequency` (every 52 days, weeks or months).
pub const MAX_FREQUENCY: i64 = 52;
/// Bounds of the behaviour options.
pub const MAX_REMINDERS: i64 = 5;
pub const MAX_REMINDER_MINUTES: i64 = 60;
pub const MAX_CLARIFYING_QUESTIONS: i64 = 5;
/// Custom intro and outro messages, in characters.
pub const MIN_MESSAGE_CHARS: usize = 3;
pub const MAX_MESSAGE_CHARS: usize = 1024;

/// The `schedule` object: each part optional (a change keeps the parts it leaves out).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScheduleInput {
    pub days: Option<Vec<i64>>,
    pub time: Option<String>,
    pub timezone: Option<String>,
}

/// The `participants` object: it replaces both lists (a list left out is empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParticipantsInput {
    pub user_uuids: Vec<UserId>,
    pub team_uuids: Vec<TeamId>,
}

/// Every setting a client may write; absent fields keep their value (on creation, the
/// default). `Some(None)` clears an optional value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckinInput {
    pub name: Option<String>,
    pub schedule: Option<ScheduleInput>,
    pub participants: Option<ParticipantsInput>,
    pub report_channels: Option<Vec<String>>,
    pub is_active: Option<bool>,
    pub frequency_type: Option<String>,
    pub frequency: Option<i64>,
    pub frequency_advanced: Option<String>,
    pub frequency_cron: Option<Option<String>>,
    pub start_on: Option<String>,
    pub end_on: Option<Option<String>>,
    pub is_trigger_based: Option<bool>,
    pub use_participant_timezone: Option<bool>,
    pub reminders_max_count: Option<i64>,
    pub reminders_frequency_time: Option<i64>,
    pub reminders_trigger_condition: Option<ReminderCondition>,
    pub reminder_tone: Option<ReminderTone>,
    pub use_user_defined_work_days: Option<bool>,
    pub allow_responses_before_trigger: Option<bool>,
    pub allow_past_responses: Option<bool>,
    pub allow_future_responses: Option<bool>,
    pub is_anonymous: Option<bool>,
    pub privacy: Option<Privacy>,
    pub send_reports_one_by_one: Option<bool>,
    pub custom_template_intro: Option<Option<String>>,
    pub custom_template_outro: Option<Option<String>>,
    pub time_for_report: Option<Option<String>>,
    pub is_smart_checkin: Option<bool>,
    pub is_intelligence_enabled: Option<bool>,
    pub max_clarifying_questions: Option<i64>,
}

/// 400 `invalid_schedule` naming `field`.
fn schedule_error(field: &str, message: impl Into<String>) -> Error {
    let message = message.into();
    Error::new(
        ErrorCode::InvalidSchedule,
        format!("Invalid schedule: {field}: {message}"),
    )
    .with_extra("parameter", field)
    .with_field_error(field, message)
}

fn day(field: &str, raw: &str) -> Result<Date, Error> {
    filters::parse_day(raw).ok_or_else(|| schedule_error(field, "Use a date as YYYY-MM-DD."))
}

fn in_range(field: &str, value: i64, max: i64) -> Result<u8, Error> {
    u8::try_from(value)
        .ok()
        .filter(|v| i64::from(*v) <= max)
        .ok_or_else(|| {
            Error::invalid_field(field, format!("Must be a whole number from 0 to {max}."))
        })
}

/// An intro or outro message: trimmed, 3 to 1,024 characters, lines allowed; blank clears it.
fn message(field: &str, raw: Option<&str>) -> Result<Option<String>, Error> {
    let Some(text) = raw.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let chars = text.chars().count();
    if !(MIN_MESSAGE_CHARS..=MAX_MESSAGE_CHARS).contains(&chars) {
        return Err(Error::invalid_field(
            field,
            format!("Use {MIN_MESSAGE_CHARS} to {MAX_MESSAGE_CHARS} characters."),
        ));
    }
    // Lines are fine in a chat message; other control characters are not.
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(Error::invalid_field(
            field,
            "This field may not contain control characters.",
        ));
    }
    Ok(Some(text.to_owned()))
}

/// Items listed once, first occurrence first.
fn distinct<T: Ord + Clone>(items: &[T]) -> Vec<T> {
    let mut seen = BTreeSet::new();
    items
        .iter()
        .filter(|i| seen.insert((*i).clone()))
        .cloned()
        .collect()
}

impl CheckinInput {
    /// `base` with this input applied and every rule checked. `base` is the stored check-in,
    /// or on creation the defaults (see `CheckinService::create_checkin`).
    pub fn apply(&self, base: &Checkin) -> Result<Checkin, Error> {
        let mut next = base.clone();
        self.apply_schedule(&mut next)?;
        let mut errors = FieldErrors::new();
        if let Some(name) = &self.name {
            let r = text::name("name", name, MAX_CHECKIN_NAME);
            errors.note(&r);
            if let Ok(name) = r {
                next.name = name;
            }
        }
        if let Some(active) = self.is_active {
            if active && base.archived {
                errors.note::<()>(&Err(Error::invalid_field(
                    "is_active",
                    "An archived check-in cannot be activated again.",
                )));
            }
            next.active = active && !base.archived;
        }
        errors.note(&self.apply_options(&mut next));
        errors.finish()?;
        if base.options.is_anonymous && !next.options.is_anonymous {
            return Err(Error::new(
                ErrorCode::AnonymousIrreversible,
                "An anonymous check-in stays anonymous: its answers were given on that promise.",
            ));
        }
        if let Some(p) = &self.participants {
            if p.user_uuids.len() > MAX_PARTICIPANT_USERS {
                return Err(Error::invalid_field(
                    "participants.user_uuids",
                    format!("Name at most {MAX_PARTICIPANT_USERS} people."),
                ));
            }
            if p.team_uuids.len() > MAX_PARTICIPANT_TEAMS {
                return Err(Error::invalid_field(
                    "participants.team_uuids",
                    format!("Name at most {MAX_PARTICIPANT_TEAMS} teams."),
                ));
            }
            next.participants = Participants {
                users: distinct(&p.user_uuids),
                teams: distinct(&p.team_uuids),
            };
        }
        if next.participants.is_empty() {
            return Err(Error::new(
                ErrorCode::CheckinRequiresParticipant,
                "A check-in needs at least one participant: a person or a team.",
            ));
        }
        if let Some(channels) = &self.report_channels {
            let channels: Vec<String> = distinct(
                &channels
                    .iter()
                    .map(|c| c.trim().to_owned())
                    .collect::<Vec<_>>(),
            );
            if channels.len() > MAX_REPORT_CHANNELS {
                return Err(Error::new(
                    ErrorCode::TooManyReportChannels,
                    format!("A check-in posts to at most {MAX_REPORT_CHANNELS} report channels."),
                )
                .with_extra("limit", MAX_REPORT_CHANNELS));
            }
            next.report_channels = channels;
        }
        Ok(next)
    }

    /// The schedule and its recurrence, every refusal `invalid_schedule`.
    fn apply_schedule(&self, next: &mut Checkin) -> Result<(), Error> {
        if let Some(s) = &self.schedule {
            if let Some(days) = &s.days {
                if days.is_empty() {
                    return Err(schedule_error(
                        "schedule.days",
                        "Name at least one weekday.",
                    ));
                }
                let mut set = BTreeSet::new();
                for d in days {
                    let d = u8::try_from(*d).ok().filter(|d| *d <= 6).ok_or_else(|| {
                        schedule_error(
                            "schedule.days",
                            "Weekdays are numbers from 0 (Sunday) to 6 (Saturday).",
                        )
                    })?;
                    set.insert(d);
                }
                next.schedule.days = set.into_iter().collect();
            }
            if let Some(time) = &s.time {
                next.schedule.time = hh_mm::parse(time.trim())
                    .ok_or_else(|| schedule_error("schedule.time", "Use a time as HH:MM."))?;
            }
            if let Some(tz) = &s.timezone {
                next.schedule.timezone = zone::validate("schedule.timezone", tz).map_err(|_| {
                    schedule_error(
                        "schedule.timezone",
                        "Enter a valid IANA time zone, e.g. Europe/Madrid.",
                    )
                })?;
            }
        }
        let r = &mut next.recurrence;
        if let Some(t) = &self.frequency_type {
            r.frequency_type = FrequencyType::from_name(t.trim()).ok_or_else(|| {
                schedule_error(
                    "frequency_type",
                    format!("Must be one of: {}.", FrequencyType::names()),
                )
            })?;
        }
        if let Some(f) = self.frequency {
            r.frequency = u16::try_from(f)
                .ok()
                .filter(|f| (1..=MAX_FREQUENCY).contains(&i64::from(*f)))
                .ok_or_else(|| {
                    schedule_error(
                        "frequency",
                        format!("Must be a whole number from 1 to {MAX_FREQUENCY}."),
                    )
                })?;
        }
        if let Some(a) = &self.frequency_advanced {
            r.advanced = FrequencyAdvanced::from_name(a.trim()).ok_or_else(|| {
                schedule_error(
                    "frequency_advanced",
                    format!("Must be one of: {}.", FrequencyAdvanced::names()),
                )
            })?;
        }
        if let Some(cron) = &self.frequency_cron {
            r.cron = cron
                .as_deref()
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| Cron::parse(c).map_err(|m| schedule_error("frequency_cron", m)))
                .transpose()?;
        }
        match (r.advanced, &r.cron) {
            (FrequencyAdvanced::Custom, None) => {
                return Err(schedule_error(
                    "frequency_cron",
                    "A custom cadence needs a cron expression.",
                ));
            }
            // The expression's time is the time people are asked.
            (FrequencyAdvanced::Custom, Some(c)) => next.schedule.time = c.time(),
            (_, Some(_)) if self.frequency_cron.is_some() => {
                return Err(schedule_error(
                    "frequency_cron",
                    "A cron expression needs `frequency_advanced: custom`.",
                ));
            }
            // Leaving the custom cadence forgets its expression.
            (_, Some(_)) => r.cron = None,
            (_, None) => {}
        }
        if let Some(start) = &self.start_on {
            r.start_on = day("start_on", start)?;
        }
        if let Some(end) = &self.end_on {
            r.end_on = end.as_deref().map(|e| day("end_on", e)).transpose()?;
        }
        if let Some(end) = r.end_on
            && end < r.start_on
        {
            return Err(schedule_error(
                "end_on",
                "The last day cannot come before `start_on`.",
            ));
        }
        Ok(())
    }

    /// The behaviour options, every bad field named.
    fn apply_options(&self, next: &mut Checkin) -> Result<(), Error> {
        let mut errors = FieldErrors::new();
        let o = &mut next.options;
        let flags = [
            (self.is_trigger_based, &mut o.is_trigger_based),
            (
                self.use_participant_timezone,
                &mut o.use_participant_timezone,
            ),
            (
                self.use_user_defined_work_days,
                &mut o.use_user_defined_work_days,
            ),
            (
                self.allow_responses_before_trigger,
                &mut o.allow_responses_before_trigger,
            ),
            (self.allow_past_responses, &mut o.allow_past_responses),
            (self.allow_future_responses, &mut o.allow_future_responses),
            (self.is_anonymous, &mut o.is_anonymous),
            (self.send_reports_one_by_one, &mut o.send_reports_one_by_one),
            (self.is_smart_checkin, &mut o.is_smart_checkin),
            (self.is_intelligence_enabled, &mut o.is_intelligence_enabled),
        ];
        for (given, slot) in flags {
            if let Some(v) = given {
                *slot = v;
            }
        }
        let counts = [
            (
                "reminders_max_count",
                self.reminders_max_count,
                MAX_REMINDERS,
                &mut o.reminders_max_count,
            ),
            (
                "reminders_frequency_time",
                self.reminders_frequency_time,
                MAX_REMINDER_MINUTES,
                &mut o.reminders_frequency_time,
            ),
            (
                "max_clarifying_questions",
                self.max_clarifying_questions,
                MAX_CLARIFYING_QUESTIONS,
                &mut o.max_clarifying_questions,
            ),
        ];
        for (field, given, max, slot) in counts {
            if let Some(v) = given {
                let r = in_range(field, v, max);
                errors.note(&r);
                if let Ok(v) = r {
                    *slot = v;
                }
            }
        }
        if let Some(c) = self.reminders_trigger_condition {
            o.reminders_trigger_condition = c;
        }
        if let Some(t) = self.reminder_tone {
            o.reminder_tone = t;
        }
        if let Some(p) = self.privacy {
            o.privacy = p;
        }
        for (field, given, slot) in [
            (
                "custom_template_intro",
                &self.custom_template_intro,
                &mut o.custom_template_intro,
            ),
            (
                "custom_template_outro",
                &self.custom_template_outro,
                &mut o.custom_template_outro,
            ),
        ] {
            if let Some(text) = given {
                let r = message(field, text.as_deref());
                errors.note(&r);
                if let Ok(v) = r {
                    *slot = v;
                }
            }
        }
        if let Some(t) = &self.time_for_report {
            let r = t
                .as_deref()
                .map(|t| {
                    hh_mm::parse(t.trim()).ok_or_else(|| {
                        Error::invalid_field("time_for_report", "Use a time as HH:MM.")
                    })
                })
                .transpose();
            errors.note(&r);
            if let Ok(v) = r {
                o.time_for_report = v;
            }
        }
        if o.is_intelligence_enabled && !o.is_smart_checkin {
            errors.note::<()>(&Err(Error::invalid_field(
                "is_intelligence_enabled",
                "AI insights need a smart check-in (`is_smart_checkin: true`).",
            )));
        }
        if o.max_clarifying_questions > 0 && !o.is_intelligence_enabled {
            errors.note::<()>(&Err(Error::invalid_field(
                "max_clarifying_questions",
                "Clarifying questions need AI insights (`is_intelligence_enabled: true`).",
            )));
        }
        errors.finish()
    }
}
