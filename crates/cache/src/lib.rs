//! Cache adapters: decorators around the domain ports, in memory (moka), that invalidate
//! themselves on the writes that pass through them, so no caller has to remember to.
//!
//! Both wrap the `OrgRepository` port and are themselves an `OrgRepository`; the composition root
//! stacks them (`OrgSnapshotCache` over `PeoplePageCache` over the Postgres adapter) and hands
//! the outer one to everything that reads or writes organizations and people. A write made
//! elsewhere (another instance, `teamcomm admin`) shows once the entry's time-to-live runs out.

mod generations;
mod org_snapshots;
mod people_pages;

pub use org_snapshots::OrgSnapshotCache;
pub use people_pages::PeoplePageCache;
