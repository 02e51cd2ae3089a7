//! The Plan (Beta) area over HTTP: one module per area of `crates/api/src/routes/plan/`, and
//! `kit` for what they share.

mod kit;

mod boards;
mod bulk_parent;
mod limits;
mod races;
mod rules;
mod social;
mod tasks;
