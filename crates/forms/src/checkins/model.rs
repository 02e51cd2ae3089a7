//! What a check-in is: its schedule and recurrence, its behaviour options, who takes part, where
//! its reports go, its questions; and a person's response for one day.

use serde::{Deserialize, Serialize};
use teamcomm_kernel::{OrgId, TeamId, UserId, WireEnum, zone};
use teamcomm_org::User;
use time::{Date, OffsetDateTime, Time};
use uuid::Uuid;

use super::schedule::Cron;
use crate::questions::{Answer, QuestionSet};

/// Declares an enum whose wire names are its variants in snake case, once: serde (the stored
/// options) and [`WireEnum`] (bodies, documents) read the same list.
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl WireEnum for $name {
            const NAME: &'static str = stringify!($name);
            const ALL: &'static [Self] = &[$($name::$variant),+];

            fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }
        }
    };
}

wire_enum!(
    /// The base cadence: every `frequency` days or weeks.
    FrequencyType {
        Daily => "daily",
        Weekly => "weekly",
    }
);

wire_enum!(
    /// A cadence beyond the base one: `monthly` (the schedule's weekdays in the first week of
    /// every `frequency` months) or `custom` (a cron expression).
    FrequencyAdvanced {
        Disabled => "disabled",
        Monthly => "monthly",
        Custom => "custom",
    }
);

wire_enum!(
    /// Who may read the check-in's reports (the reports themselves come with messaging).
    Privacy {
        OnlyOwner => "only_owner",
        OwnerAndMembers => "owner_and_members",
        ManagersAndMembers => "managers_and_members",
        ManagersAndAdmins => "managers_and_admins",
        OrgAdmins => "org_admins",
        Everyone => "everyone",
    }
);

wire_enum!(
    /// When reminders go out to people who have not answered.
    ReminderCondition {
        SmartFrequency => "smart_frequency",
        FixedFrequency => "fixed_frequency",
    }
);

wire_enum!(
    /// The voice of reminders.
    ReminderTone {
        Standard => "standard",
        Persuasive => "persuasive",
    }
);

/// When people are asked: on these weekdays (0 = Sunday … 6 = Saturday), at this wall-clock
/// time, in this IANA zone (or each participant's own, see
/// [`CheckinOptions::use_participant_timezone`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Sorted, without repeats.
    pub days: Vec<u8>,
    pub time: Time,
    pub timezone: String,
}

/// Which days the schedule repeats on, and between which dates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recurrence {
    pub frequency_type: FrequencyType,
    /// Every `frequency` days, weeks or months (at least 1).
    pub frequency: u16,
    pub advanced: FrequencyAdvanced,
    /// The expression of a `custom` cadence (and only then).
    pub cron: Option<Cron>,
    /// The first day the check-in runs; counting starts here.
    pub start_on: Date,
    /// The last day it runs, if it ends.
    pub end_on: Option<Date>,
}

/// How the check-in behaves; stored as one document, read strictly (an unknown key is an
/// error, never dropped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckinOptions {
    /// Started by an event (a chat command, a workflow) rather than at the schedule's time.
    pub is_trigger_based: bool,
    /// Each participant is asked at the schedule's time in their own zone, and their day is
    /// their own.
    pub use_participant_timezone: bool,
    /// Reminders to people who have not answered (0 to 5).
    pub reminders_max_count: u8,
    /// Minutes between reminders (0 to 60).
    pub reminders_frequency_time: u8,
    pub reminders_trigger_condition: ReminderCondition,
    pub reminder_tone: ReminderTone,
    pub use_user_defined_work_days: bool,
    /// Today's answer may come before today's trigger time.
    pub allow_responses_before_trigger: bool,
    /// Answers for past days.
    pub allow_past_responses: bool,
    /// Answers for coming days (at most [`super::MAX_DAYS_AHEAD`] ahead).
    pub allow_future_responses: bool,
    /// Nobody but the responder sees who answered; cannot be turned off once on.
    pub is_anonymous: bool,
    pub privacy: Privacy,
    pub send_reports_one_by_one: bool,
    pub custom_template_intro: Option<String>,
    pub custom_template_outro: Option<String>,
    /// When the day's report is posted ("HH:MM", the schedule's zone).
    #[serde(with = "hh_mm::option")]
    pub time_for_report: Option<Time>,
    pub is_smart_checkin: bool,
    /// AI insights on responses; needs `is_smart_checkin`.
    pub is_intelligence_enabled: bool,
    /// Follow-up questions the AI may ask per response (0 to 5); needs
    /// `is_intelligence_enabled` when above 0.
    pub max_clarifying_questions: u8,
}

impl Default for CheckinOptions {
    fn default() -> Self {
        CheckinOptions {
            is_trigger_based: false,
            use_participant_timezone: false,
            reminders_max_count: 0,
            reminders_frequency_time: 30,
            reminders_trigger_condition: ReminderCondition::FixedFrequency,
            reminder_tone: ReminderTone::Standard,
            use_user_defined_work_days: false,
            allow_responses_before_trigger: true,
            allow_past_responses: false,
            allow_future_responses: false,
            is_anonymous: false,
            privacy: Privacy::ManagersAndMembers,
            send_reports_one_by_one: false,
            custom_template_intro: None,
            custom_template_outro: None,
            time_for_report: None,
            is_smart_checkin: false,
            is_intelligence_enabled: false,
            max_clarifying_questions: 0,
        }
    }
}

/// Who is asked: these people, and every active member of these teams.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Participants {
    pub users: Vec<UserId>,
    pub teams: Vec<TeamId>,
}

impl Participants {
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.teams.is_empty()
    }
}

/// A check-in of an organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkin {
    pub id: Uuid,
    pub org_id: OrgId,
    pub name: String,
    /// Who authored it (they may keep editing it); `None` once that person is gone.
    pub created_by: Option<UserId>,
    /// The template its questions were copied from.
    pub template: Option<Uuid>,
    /// False when paused (or archived): nobody is asked and no answers are taken.
    pub active: bool,
    pub archived: bool,
    pub schedule: Schedule,
    pub recurrence: Recurrence,
    pub options: CheckinOptions,
    pub participants: Participants,
    /// Chat channel ids (see `GET /v1/report-channels/`), at most [`super::MAX_REPORT_CHANNELS`].
    pub report_channels: Vec<String>,
    pub questions: QuestionSet,
    /// Bumped by every write: concurrent edits never overwrite each other.
    pub revision: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl Checkin {
    /// The zone `person`'s days and trigger time are read in.
    pub fn zone_for<'a>(&'a self, person: &'a User) -> &'a str {
        if self.options.use_participant_timezone {
            &person.timezone
        } else {
            &self.schedule.timezone
        }
    }

    /// The day it is for `person` at `now`, as this check-in counts days.
    pub fn today_for(&self, person: &User, now: OffsetDateTime) -> Date {
        zone::local_date(now, self.zone_for(person))
    }

    /// The instant `person` is asked on `day` (the schedule's wall-clock time in their zone).
    pub fn trigger_at(&self, day: Date, person: &User) -> OffsetDateTime {
        zone::instant_at(day, self.schedule.time, self.zone_for(person))
    }

    /// True while it runs on `day`: not paused, not archived, between its first and last day.
    pub fn runs_on(&self, day: Date) -> bool {
        self.active
            && !self.archived
            && day >= self.recurrence.start_on
            && self.recurrence.end_on.is_none_or(|end| day <= end)
    }

    /// True when people are asked on `day` (a day of their own calendar): it runs then, it
    /// is not started by events, and the cadence falls on that day.
    pub fn is_due_on(&self, day: Date) -> bool {
        self.runs_on(day)
            && !self.options.is_trigger_based
            && super::schedule::falls_on(&self.schedule, &self.recurrence, day)
    }
}

/// A person's answers to a check-in for one of their days.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckinResponse {
    pub id: Uuid,
    pub org_id: OrgId,
    pub checkin_id: Uuid,
    pub user_id: UserId,
    /// The responder's day, as the check-in counts days.
    pub date: Date,
    /// In question order.
    pub answers: Vec<Answer>,
    /// How far the person got, when they stopped before the last question.
    pub last_question_index: Option<u16>,
    /// Every required question on the person's path is answered.
    pub completed: bool,
    /// The version of the questions the answers were given against.
    pub questions_version: i32,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl CheckinResponse {
    /// The answers' text, lower-cased, one per line: what `search` matches (both adapters
    /// store and match this same text).
    pub fn search_text(&self) -> String {
        fn text(v: &serde_json::Value) -> String {
            match v {
                serde_json::Value::String(s) => s.to_lowercase(),
                serde_json::Value::Array(items) => {
                    items.iter().map(text).collect::<Vec<_>>().join("\n")
                }
                other => other.to_string().to_lowercase(),
            }
        }
        self.answers
            .iter()
            .map(|a| text(&a.response))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `"HH:MM"` for wall-clock times in stored documents.
pub(crate) mod hh_mm {
    use time::Time;

    /// `HH:MM` (two digits each), as clients write times of day.
    pub fn parse(s: &str) -> Option<Time> {
        let (h, m) = s.split_once(':')?;
        if h.len() != 2 || m.len() != 2 || !(h.bytes().chain(m.bytes())).all(|b| b.is_ascii_digit())
        {
            return None;
        }
        Time::from_hms(h.parse().ok()?, m.parse().ok()?, 0).ok()
    }

    pub fn format(t: Time) -> String {
        format!("{:02}:{:02}", t.hour(), t.minute())
    }

    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};
        use time::Time;

        pub fn serialize<S: Serializer>(t: &Option<Time>, s: S) -> Result<S::Ok, S::Error> {
            match t {
                Some(t) => s.serialize_str(&super::format(*t)),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Time>, D::Error> {
            Option::<String>::deserialize(d)?
                .map(|s| {
                    super::parse(&s)
                        .ok_or_else(|| serde::de::Error::custom(format!("not HH:MM: {s}")))
                })
                .transpose()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_round_trip_and_refuse_unknown_keys() {
        let options = CheckinOptions {
            time_for_report: hh_mm::parse("17:30"),
            privacy: Privacy::Everyone,
            ..CheckinOptions::default()
        };
        let stored = serde_json::to_value(&options).unwrap();
        assert_eq!(stored["time_for_report"], "17:30");
        assert_eq!(stored["privacy"], "everyone");
        assert_eq!(
            serde_json::from_value::<CheckinOptions>(stored.clone()).unwrap(),
            options
        );
        let mut unknown = stored;
        unknown["surprise"] = serde_json::json!(true);
        assert!(serde_json::from_value::<CheckinOptions>(unknown).is_err());
    }

    #[test]
    fn times_of_day_are_two_digits_each() {
        assert_eq!(hh_mm::parse("09:05"), Time::from_hms(9, 5, 0).ok());
        for bad in ["9:05", "24:00", "12:60", "12:5", "ab:cd", "12-30", ""] {
            assert_eq!(hh_mm::parse(bad), None, "{bad}");
        }
        assert_eq!(hh_mm::format(Time::from_hms(7, 0, 0).unwrap()), "07:00");
    }

    #[test]
    fn wire_names_match_serde_names() {
        for p in Privacy::ALL {
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_str());
        }
        assert_eq!(
            FrequencyType::from_name("weekly"),
            Some(FrequencyType::Weekly)
        );
        assert_eq!(FrequencyAdvanced::from_name("yearly"), None);
    }
}
