//! A small world for the messaging rules' tests: two organizations on in-memory ports, people
//! with platform identities, two teams, a registered channel, a recording chat platform and
//! mailer, one job queue, and a clock that stands still.

use std::sync::Arc;

use teamcomm_kernel::jobs::JobRecord;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::{Error, ErrorCode, OrgId, SharedClock, TeamId};
use teamcomm_org::testing::{FixedClock, InMemoryOrgPorts};
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, Organization, Team, TeamRepository, User,
};
use time::{OffsetDateTime, macros::datetime};

use crate::message::{Message, MessageId};
use crate::platform::PlatformKind;
use crate::ports::MessageRepository;
use crate::testing::{
    FixedConnector, InMemoryChannelRepository, InMemoryEmailRepository, InMemoryMessageRepository,
    InMemoryPlatformDirectory, RecordingChatPlatform, RecordingMailer,
};
use crate::{
    ChannelRepository, DeliveryWorker, EmailService, MessagingPorts, MessagingService, NewChannel,
    RunSummary, WorkerPorts, WorkerSettings,
};

pub(crate) const NOW: OffsetDateTime = datetime!(2026-11-25 09:00 UTC);

pub(crate) struct World {
    pub org_ports: InMemoryOrgPorts,
    pub clock: SharedClock,
    pub org: Organization,
    pub admin: User,
    /// In `team` with `teammate`.
    pub member: User,
    pub teammate: User,
    /// In `other_team` only.
    pub stranger: User,
    pub inactive: User,
    /// An admin of the other organization.
    pub outsider: User,
    pub team: Team,
    pub other_team: Team,
    pub queue: InMemoryJobQueue,
    pub messages: InMemoryMessageRepository,
    pub emails: InMemoryEmailRepository,
    pub channels: Arc<InMemoryChannelRepository>,
    pub directory: InMemoryPlatformDirectory,
    pub platform: Arc<RecordingChatPlatform>,
    pub connector: Arc<FixedConnector>,
    pub mailer: Arc<RecordingMailer>,
}

impl World {
    /// The world with its organization on Slack, everyone but `stranger` mapped to a Slack id
    /// (`U-<first name>`), and channel `C-general` registered.
    pub async fn new() -> Self {
        let clock: SharedClock = Arc::new(FixedClock::new(NOW));
        let org_ports = InMemoryOrgPorts::new(clock.clone());
        let org = organization(&org_ports, "Acme").await;
        let other_org = organization(&org_ports, "Globex").await;
        let admin = person(&org_ports, org.id, "ada@acme.test", "Ada", "admin", true).await;
        let member = person(&org_ports, org.id, "mia@acme.test", "Mia", "member", true).await;
        let teammate = person(&org_ports, org.id, "tom@acme.test", "Tom", "member", true).await;
        let stranger = person(&org_ports, org.id, "sam@acme.test", "Sam", "member", true).await;
        let inactive = person(&org_ports, org.id, "ivy@acme.test", "Ivy", "member", false).await;
        let outsider = person(
            &org_ports,
            other_org.id,
            "otto@globex.test",
            "Otto",
            "admin",
            true,
        )
        .await;
        let team = org_ports
            .teams
            .create_team(
                org.id,
                TeamId::new(),
                "Core",
                &[member.id, teammate.id, inactive.id],
                &[],
            )
            .await
            .unwrap();
        let other_team = org_ports
            .teams
            .create_team(org.id, TeamId::new(), "Sales", &[stranger.id], &[])
            .await
            .unwrap();

        let queue = InMemoryJobQueue::default();
        let channels = Arc::new(InMemoryChannelRepository::with_clock(clock.clone()));
        channels
            .upsert_channel(
                org.id,
                &NewChannel::new("C-general", "general", "slack", "channel").unwrap(),
            )
            .await
            .unwrap();
        let directory = InMemoryPlatformDirectory::new();
        directory.connect(org.id, PlatformKind::Slack);
        for u in [&admin, &member, &teammate, &inactive] {
            directory.map_person(
                org.id,
                PlatformKind::Slack,
                u.id,
                &format!("U-{}", u.first_name),
            );
        }
        let platform = Arc::new(RecordingChatPlatform::new(PlatformKind::Slack));
        World {
            connector: Arc::new(FixedConnector::new(platform.clone())),
            platform,
            directory,
            channels,
            messages: InMemoryMessageRepository::new(queue.clone()),
            emails: InMemoryEmailRepository::new(queue.clone()),
            mailer: Arc::new(RecordingMailer::new()),
            queue,
            org_ports,
            clock,
            org,
            admin,
            member,
            teammate,
            stranger,
            inactive,
            outsider,
            team,
            other_team,
        }
    }

    pub fn messaging(&self) -> MessagingService {
        MessagingService::new(MessagingPorts {
            messages: Arc::new(self.messages.clone()),
            people: self.org_ports.people.clone(),
            teams: self.org_ports.teams.clone(),
            channels: self.channels.clone(),
            directory: Arc::new(self.directory.clone()),
            connector: self.connector.clone(),
            clock: self.clock.clone(),
        })
    }

    pub fn email(&self) -> EmailService {
        EmailService::new(
            Arc::new(self.emails.clone()),
            self.org_ports.people.clone(),
            self.clock.clone(),
        )
    }

    pub fn worker(&self) -> DeliveryWorker {
        DeliveryWorker::new(
            WorkerPorts {
                queue: Arc::new(self.queue.clone()),
                messages: Arc::new(self.messages.clone()),
                emails: Arc::new(self.emails.clone()),
                directory: Arc::new(self.directory.clone()),
                connector: self.connector.clone(),
                mailer: self.mailer.clone(),
            },
            WorkerSettings::default(),
        )
    }

    /// One worker pass at `at`, with the jitter at its top (the longest delay).
    pub async fn run_worker(&self, at: OffsetDateTime) -> RunSummary {
        self.worker().run_once(at, &mut || 0.999).await.unwrap()
    }

    /// The message as stored now.
    pub async fn stored(&self, org: OrgId, id: MessageId) -> Message {
        self.messages.get_message(org, id).await.unwrap()
    }

    /// Every job, in the order enqueued.
    pub fn jobs(&self) -> Vec<JobRecord> {
        self.queue.all()
    }
}

async fn organization(ports: &InMemoryOrgPorts, name: &str) -> Organization {
    let new = NewOrganization::new(name, "business", None, None, None).unwrap();
    ports.people.create_organization(&new).await.unwrap()
}

async fn person(
    ports: &InMemoryOrgPorts,
    org: OrgId,
    email: &str,
    first_name: &str,
    role: &str,
    active: bool,
) -> User {
    let new = NewUser::new(email, first_name, "Test", role, Some(active)).unwrap();
    ports.people.create_user(org, &new).await.unwrap()
}

/// The error's code, failing the test on success.
#[track_caller]
pub(crate) fn code<T: std::fmt::Debug>(result: Result<T, Error>) -> ErrorCode {
    result.unwrap_err().code()
}
