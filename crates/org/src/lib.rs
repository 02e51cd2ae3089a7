//! The organization domain: tenants, people, roles and plan tiers, with the rules that depend on
//! them only. Storage is behind [`OrgRepository`].

mod commands;
mod model;
mod ports;

pub use commands::{NewOrganization, NewUser, OrganizationPatch, UserPatch};
pub use model::{Organization, PlanTier, Role, Team, User, full_name};
pub use ports::OrgRepository;
