//! The organization domain: tenants, people, roles, plan tiers, teams, invitations, mood and
//! important dates, with the rules that depend on them only. One application service per
//! aggregate (`PeopleService`, `TeamService`, `InvitationService`, `MoodService`, and
//! `OrganizationService` for the operator's provisioning); storage is behind the ports in
//! [`ports`](crate::OrgRepository).

mod access;
mod commands;
mod events;
mod important_dates;
mod invitations;
mod model;
mod mood;
mod organizations;
mod people;
mod ports;
mod teams;
#[cfg(test)]
mod test_world;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use commands::{
    MAX_ORGANIZATION_NAME, NewOrganization, NewUser, OrganizationPatch, UserPatch, normalize_email,
};
pub use important_dates::{ImportantDate, ImportantDateKind};
pub use invitations::{
    Invitation, InvitationService, InviteOutcome, InviteRequest, MAX_IDENTIFIER, NewInvitation,
};
pub use model::{Organization, PlanTier, Role, Team, TeamMember, TeamRole, User, full_name};
pub use mood::{MoodEntry, MoodService};
pub use organizations::{DEFAULT_CHAT_PLATFORM, OrganizationService};
pub use people::{MAX_PERSON_TEXT, PeopleService, ProfileInput, ProfilePatch, UserFilter};
pub use ports::{
    InvitationKind, InvitationRepository, MoodRepository, OrgRepository, TeamRepository,
};
pub use teams::{MAX_TEAM_NAME, TeamFilter, TeamInviteOutcome, TeamService};
