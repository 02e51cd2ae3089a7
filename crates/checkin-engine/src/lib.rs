//! The check-in engine: it asks each participant of each scheduled check-in at their local
//! trigger time, collects their replies on the chat platform, reminds them, and at the day's
//! end closes the rounds and posts the team's report.
//!
//! - A **round** ([`Round`]) is one check-in, one participant, one local day. The pure rules of
//!   [`rules`] say which rounds are due at an instant, when each closes, when a reminder is due
//!   and when a day's report is.
//! - Storage is behind [`RoundRepository`] (a round is claimed by inserting it: the unique
//!   (check-in, person, day) decides which server opens it) and [`ScheduledCheckins`].
//! - Everything said to people goes through the messaging domain
//!   ([`teamcomm_messaging::MessagingService::queue_system_message`]) under message ids derived
//!   from the round ([`rules::question_message_id`]...), so a step repeated by another server or
//!   after a crash is queued once.
//! - Answers go through the check-in response rules ([`teamcomm_forms::checkins::CheckinService`]
//!   `submit_response`/`edit_response`), so chat and API answers count alike and the response
//!   events are written by the same code.
//!
//! [`Engine::tick`] is called periodically by the server; [`Engine::take_reply`] with each
//! inbound platform event.

mod engine;
mod ports;
mod report;
pub mod rules;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;

pub use engine::{Engine, EnginePorts, TickSummary};
pub use ports::{ROUNDS_REVISION, RoundRepository, ScheduledCheckins};
pub use rules::{DueRound, Round};
