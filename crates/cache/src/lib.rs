//! Cache adapters: decorators around the domain ports, in memory (moka), that invalidate
//! themselves on the writes that pass through them, so no caller has to remember to.
//!
//! `CheckinCache` wraps the `CheckinRepository` port: check-ins, read by every response read
//! and write, kept until a check-in write of this process or the TTL ends (writes check the
//! revision they read, so they never trust it).
//!
//! `KeyCredentialCache` wraps the `KeyRepository` port: the API-key authentication read, kept
//! until a key or people write this process makes (a shared [`WriteEpoch`]) or the TTL ends.
//!
//! `PlanBoardCache` wraps the Plan area's `BoardRepository` port: boards (by uuid or key) and
//! their columns, which every task request resolves, kept until a board or column write of
//! this process or the TTL ends; the task writes check the board and column in PostgreSQL.
//!
//! The other two wrap the `OrgRepository` port and are themselves an `OrgRepository`; the composition root
//! stacks them (`OrgSnapshotCache` over `PeoplePageCache` over the Postgres adapter) and hands
//! the outer one to everything that reads or writes organizations and people. A write made
//! elsewhere (another instance, `teamcomm admin`) shows once the entry's time-to-live runs out.

mod checkins;
mod credentials;
mod generations;
mod org_snapshots;
mod people_pages;
mod plan_boards;

pub use checkins::CheckinCache;
pub use credentials::{KeyCredentialCache, WriteEpoch};
pub use org_snapshots::OrgSnapshotCache;
pub use people_pages::PeoplePageCache;
pub use plan_boards::PlanBoardCache;
