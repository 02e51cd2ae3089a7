mod channels;
mod checkins;
mod forms;
mod invitations;
mod jobs;
mod keys;
mod kudos;
mod labels;
mod mood;
mod org;
mod outbox;
mod paging;
mod teams;
mod templates;

pub use channels::PgChannelRepository;
pub use checkins::PgCheckinRepository;
pub use forms::PgFormRepository;
pub use invitations::PgInvitationRepository;
pub use jobs::PgJobQueue;
pub use keys::PgKeyRepository;
pub use kudos::PgKudosRepository;
pub use labels::{PgFeaturedRepository, PgLabelRepository, PgLabelledEntities};
pub use mood::PgMoodRepository;
pub use org::PgOrgRepository;
pub use teams::PgTeamRepository;
pub use templates::PgTemplateRepository;

pub(crate) use paging::count_from;
