//! The organization domain: tenants, people, roles, plan tiers, teams, invitations, mood and
//! important dates, with the rules that depend on them only. Storage is behind the ports in
//! [`ports`](crate::OrgRepository).

mod commands;
mod directory;
mod model;
mod ports;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use commands::{NewOrganization, NewUser, OrganizationPatch, UserPatch};
pub use directory::{
    ImportantDate, ImportantDateKind, Invitation, MAX_INVITES_PER_REQUEST, MoodEntry,
    NewInvitation, ProfileInput, ProfilePatch, TeamFilter, UserFilter, classify_identifier,
    important_date_id, important_dates_of, parse_date, validate_birth_date, validate_score,
    validate_timezone,
};
pub use model::{Organization, PlanTier, Role, Team, TeamMember, TeamRole, User, full_name};
pub use ports::{
    InvitationKind, InvitationRepository, MoodRepository, OrgRepository, TeamRepository,
};
pub use service::{Directory, InviteOutcome, InviteRequest, TeamInviteOutcome};
