mod agents;
mod channels;
mod checkins;
mod cursors;
mod daily_counters;
mod forms;
mod invitations;
mod jobs;
mod keys;
mod kudos;
mod labels;
mod login_codes;
mod messaging;
mod mood;
mod org;
// The CLI assistant's sessions.
mod assistant;
mod outbox;
mod paging;
mod prepared;
// The Plan (Beta) area, one module per port.
mod plan;
mod rounds;
mod teams;
mod templates;
mod webhook_deliveries;
mod webhooks;
mod workflows;

pub use agents::{PgAgentHooks, PgAgentRepository};
pub use channels::PgChannelRepository;
pub use checkins::PgCheckinRepository;
pub use cursors::PgPollCursors;
pub use daily_counters::PgDailyCounters;
pub use forms::PgFormRepository;
pub use invitations::PgInvitationRepository;
pub use jobs::{Backlog, PgJobQueue};
pub use keys::PgKeyRepository;
pub use kudos::PgKudosRepository;
pub use labels::{PgFeaturedRepository, PgLabelRepository, PgLabelledEntities};
pub use login_codes::PgLoginCodes;
pub use messaging::{PgEmailRepository, PgMessageRepository, PgPlatformDirectory};
pub use mood::PgMoodRepository;
pub use org::PgOrgRepository;
pub use plan::{PgBoards, PgIdempotency, PgProjects, PgTaskSocial, PgTasks};
pub use rounds::PgRoundRepository;
pub use teams::PgTeamRepository;
pub use templates::PgTemplateRepository;
pub use webhook_deliveries::PgWebhookDeliveries;
pub use webhooks::PgWebhookRepository;
pub use workflows::PgWorkflowRepository;

pub(crate) use paging::count_from;

// The CLI assistant's sessions.
pub use assistant::PgConversationRepository;
