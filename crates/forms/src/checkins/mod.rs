//! Check-ins (the spec also calls them follow-ups): questions a group of people is asked on a
//! schedule, each answering for their own local day. Authoring, schedules and cadences,
//! participants, report channels, responses, and which check-ins are due for a person on a
//! day. One application service, [`CheckinService`]; storage is behind
//! [`CheckinRepository`], people and teams behind the organization domain's ports, channels
//! behind messaging's, templates behind [`crate::TemplateRepository`].

mod input;
mod model;
mod ports;
mod progress;
mod responses;
mod schedule;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;

pub use input::{
    CheckinInput, MAX_CHECKIN_NAME, MAX_CLARIFYING_QUESTIONS, MAX_FREQUENCY, MAX_MESSAGE_CHARS,
    MAX_PARTICIPANT_TEAMS, MAX_PARTICIPANT_USERS, MAX_REMINDER_MINUTES, MAX_REMINDERS,
    MAX_REPORT_CHANNELS, MIN_MESSAGE_CHARS, ParticipantsInput, ScheduleInput,
};
pub use model::{
    Checkin, CheckinOptions, CheckinResponse, FrequencyAdvanced, FrequencyType, Participants,
    Privacy, Recurrence, ReminderCondition, ReminderTone, Schedule,
};
pub use ports::{
    AuthoredResponse, CheckinDirectory, CheckinRepository, CheckinScope, CheckinSelection,
    DayResponse, ManagedScope, ResponseScope, ResponseSelection,
};
pub use progress::{
    AttachAction, AttachedCheckin, MAX_UPDATE_PART_CHARS, ProgressUpdate, TodayCheckin,
    progress_answers,
};
pub use responses::{
    AnswerInput, ListedResponse, MAX_DAYS_AHEAD, MAX_DAYS_BACK, ResponseInput, ResponseListFilter,
    ResponsePage, check_current,
};
pub use schedule::{Cron, falls_on, weekday_number};
pub use service::{
    CheckinDetail, CheckinListFilter, CheckinListing, CheckinService, DueCheckin, NewCheckin,
    Summary,
};

/// `HH:MM`, the wire form of times of day.
pub fn format_time(t: time::Time) -> String {
    model::hh_mm::format(t)
}
