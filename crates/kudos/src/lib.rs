//! The kudos domain: recognition one person gives others (people, or every active member of a
//! team), optionally celebrating one of the organization's company values; anonymous kudos;
//! the +1 others add (boosts); the daily limit per giver; the wall of fame. One application
//! service, [`KudosService`]; storage is behind the [`KudosRepository`] port, people and teams
//! behind the organization domain's ports.

mod document;
mod model;
mod ports;
mod rules;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use document::kudos_document;
pub use model::{
    Champion, CompanyValue, Kudos, KudosDirection, NewCompanyValue, PersonTally, Standing, Tallies,
    ValueShare, ValueTally, WallOfFame,
};
pub use ports::{DailyCap, KudosRepository, KudosSelection, Posting, Span};
pub use rules::{
    DAILY_KUDOS_LIMIT, DEFAULT_COMPANY_VALUES, MAX_COMPANY_VALUE_NAME, MAX_EMOJI,
    MAX_KUDOS_CONTENT, MAX_RECEIVERS, parse_receiver, parse_sender,
};
pub use service::{GiveKudos, KudosListFilter, KudosService};
