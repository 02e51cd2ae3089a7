//! Rule tests of the engine through the in-memory ports: one organization with people in
//! Madrid and New York on Slack (a recording platform), a report channel, the delivery worker
//! to land messages, and a clock that stands still until moved.

mod prompting;
mod replies;
mod reports;
mod synapse;

use std::sync::Arc;

use teamcomm_forms::checkins::testing::InMemoryCheckinRepository;
use teamcomm_forms::checkins::{
    Checkin, CheckinInput, CheckinService, NewCheckin, ParticipantsInput, ScheduleInput,
};
use teamcomm_forms::questions::NewQuestion;
use teamcomm_forms::testing::InMemoryTemplateRepository;
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::{EventType, SharedClock};
use teamcomm_messaging::message::{DeliveryTarget, Message};
use teamcomm_messaging::platform::{ChatPlatform, InboundEvent, PlatformKind};
use teamcomm_messaging::testing::{
    FixedConnector, InMemoryChannelRepository, InMemoryEmailRepository, InMemoryMessageRepository,
    InMemoryPlatformDirectory, RecordingChatPlatform, RecordingMailer,
};
use teamcomm_messaging::{
    ChannelRepository, DeliveryWorker, MessagingPorts, MessagingService, NewChannel, WorkerPorts,
    WorkerSettings,
};
use teamcomm_org::testing::{FixedClock, InMemoryOrgPorts};
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Organization, ProfilePatch, User};
use time::OffsetDateTime;

use crate::testing::InMemoryRoundRepository;
use crate::{Engine, EnginePorts, Round};

struct World {
    clock: Arc<FixedClock>,
    org_ports: InMemoryOrgPorts,
    org: Organization,
    admin: User,
    /// In Europe/Madrid.
    ada: User,
    /// In America/New_York.
    ned: User,
    checkin_store: Arc<InMemoryCheckinRepository>,
    channels: Arc<InMemoryChannelRepository>,
    queue: InMemoryJobQueue,
    messages: InMemoryMessageRepository,
    directory: InMemoryPlatformDirectory,
    connector: Arc<FixedConnector>,
    rounds: Arc<InMemoryRoundRepository>,
    events: RecordedEvents,
}

impl World {
    /// The world on the recording Slack platform.
    async fn new(now: OffsetDateTime) -> Self {
        World::on(now, None).await
    }

    /// The world with its organization connected to `platform` (of `kind`) instead of the
    /// recording Slack platform.
    async fn on(
        now: OffsetDateTime,
        platform: Option<(Arc<dyn ChatPlatform>, PlatformKind)>,
    ) -> Self {
        let clock = Arc::new(FixedClock::new(now));
        let shared: SharedClock = clock.clone();
        let org_ports = InMemoryOrgPorts::new(shared);
        let new = NewOrganization::new("Acme", "business", None, None, None).unwrap();
        let org = org_ports.people.create_organization(&new).await.unwrap();
        let admin = person(&org_ports, &org, "Adele", "admin", "UTC").await;
        let ada = person(&org_ports, &org, "Ada", "member", "Europe/Madrid").await;
        let ned = person(&org_ports, &org, "Ned", "member", "America/New_York").await;
        let channels = Arc::new(InMemoryChannelRepository::new());
        channels
            .upsert_channel(
                org.id,
                &NewChannel::new("C-standup", "standup", "slack", "channel").unwrap(),
            )
            .await
            .unwrap();
        let events = RecordedEvents::default();
        let checkin_store = Arc::new(InMemoryCheckinRepository::new(
            org_ports.people.clone(),
            org_ports.teams.clone(),
            channels.clone(),
            events.clone(),
        ));
        let directory = InMemoryPlatformDirectory::new();
        let recording = Arc::new(RecordingChatPlatform::new(PlatformKind::Slack));
        let (connected, kind): (Arc<dyn ChatPlatform>, PlatformKind) =
            platform.unwrap_or((recording.clone(), PlatformKind::Slack));
        directory.connect(org.id, kind);
        for u in [&admin, &ada, &ned] {
            directory.map_person(org.id, PlatformKind::Slack, u.id, &slack_id(u));
        }
        let queue = InMemoryJobQueue::default();
        let rounds = Arc::new(InMemoryRoundRepository::new(
            checkin_store.clone(),
            org_ports.people.clone(),
            events.clone(),
        ));
        World {
            connector: Arc::new(FixedConnector::new(connected)),
            directory,
            messages: InMemoryMessageRepository::new(queue.clone()),
            queue,
            clock,
            org_ports,
            org,
            admin,
            ada,
            ned,
            checkin_store,
            channels,
            rounds,
            events,
        }
    }

    fn checkins(&self) -> CheckinService {
        CheckinService::new(
            self.checkin_store.clone(),
            self.org_ports.people.clone(),
            self.org_ports.teams.clone(),
            self.channels.clone(),
            Arc::new(InMemoryTemplateRepository::new()),
            self.clock.clone(),
        )
    }

    fn engine(&self) -> Engine {
        Engine::new(EnginePorts {
            rounds: self.rounds.clone(),
            scheduled: self.checkin_store.clone(),
            checkin_store: self.checkin_store.clone(),
            checkins: self.checkins(),
            people: self.org_ports.people.clone(),
            messaging: MessagingService::new(MessagingPorts {
                messages: Arc::new(self.messages.clone()),
                people: self.org_ports.people.clone(),
                teams: self.org_ports.teams.clone(),
                channels: self.channels.clone(),
                directory: Arc::new(self.directory.clone()),
                connector: self.connector.clone(),
                clock: self.clock.clone(),
            }),
            messages: Arc::new(self.messages.clone()),
            directory: Arc::new(self.directory.clone()),
        })
    }

    /// Moves the clock to `at` and ticks once.
    async fn tick(&self, at: OffsetDateTime) -> crate::TickSummary {
        self.clock.set(at);
        let summary = self.engine().tick(at).await.unwrap();
        assert!(summary.failures.is_empty(), "{:?}", summary.failures);
        summary
    }

    /// Delivers what is queued (the delivery worker's pass at the clock's time).
    async fn deliver(&self) {
        let worker = DeliveryWorker::new(
            WorkerPorts {
                queue: Arc::new(self.queue.clone()),
                messages: Arc::new(self.messages.clone()),
                emails: Arc::new(InMemoryEmailRepository::new(self.queue.clone())),
                directory: Arc::new(self.directory.clone()),
                connector: self.connector.clone(),
                mailer: Arc::new(RecordingMailer::new()),
            },
            WorkerSettings::default(),
        );
        let now = teamcomm_kernel::Clock::now(self.clock.as_ref());
        worker.run_once(now, &mut || 0.5).await.unwrap();
    }

    /// `person` writes `text` in their direct conversation with the bot.
    async fn reply(&self, person: &User, text: &str) -> Option<Round> {
        let now = teamcomm_kernel::Clock::now(self.clock.as_ref());
        let event = InboundEvent::Reply {
            platform_user_id: slack_id(person),
            channel_id: format!("D-{}", slack_id(person)),
            message_id: format!("reply-{}", uuid::Uuid::now_v7()),
            text: text.to_owned(),
            in_reply_to: None,
        };
        self.engine()
            .take_reply(self.org.id, PlatformKind::Slack, &event, now)
            .await
            .unwrap()
    }

    /// A check-in of Ada and Ned by the admin: every day at 09:00 in `zone` (or each one's
    /// own zone), two questions (the second optional), reporting to `C-standup`.
    async fn standup(
        &self,
        zone: &str,
        own_zones: bool,
        patch: impl FnOnce(&mut CheckinInput),
    ) -> Checkin {
        let mut settings = CheckinInput {
            name: Some("Standup".into()),
            participants: Some(ParticipantsInput {
                user_uuids: vec![self.ada.id, self.ned.id],
                team_uuids: vec![],
            }),
            schedule: Some(ScheduleInput {
                days: Some((0..=6).collect()),
                time: Some("09:00".into()),
                timezone: Some(zone.into()),
            }),
            use_participant_timezone: Some(own_zones),
            start_on: Some("2026-01-01".into()),
            report_channels: Some(vec!["C-standup".into()]),
            ..CheckinInput::default()
        };
        patch(&mut settings);
        let new = NewCheckin {
            settings,
            questions: Some(vec![
                question("What did you do?", true),
                question("Anything blocking you?", false),
            ]),
            ..NewCheckin::default()
        };
        self.checkins()
            .create_checkin(&self.admin, new)
            .await
            .unwrap()
            .checkin
    }

    /// Direct messages to `person`, in the order queued.
    fn messages_to(&self, person: &User) -> Vec<String> {
        self.messages
            .all()
            .into_iter()
            .filter(|m| {
                m.deliveries
                    .iter()
                    .any(|d| d.target == DeliveryTarget::Person(person.id))
            })
            .map(|m| m.content.text)
            .collect()
    }

    /// Messages to the report channel, in the order queued.
    fn reports(&self) -> Vec<Message> {
        self.messages
            .all()
            .into_iter()
            .filter(|m| {
                m.deliveries.iter().any(|d| {
                    matches!(&d.target, DeliveryTarget::Channel { channel_id, .. } if channel_id == "C-standup")
                })
            })
            .collect()
    }

    fn events(&self, kind: EventType) -> Vec<teamcomm_kernel::Event> {
        self.events.of_type(kind)
    }
}

fn slack_id(u: &User) -> String {
    format!("U-{}", u.first_name)
}

fn question(text: &str, required: bool) -> NewQuestion {
    NewQuestion {
        question: text.to_owned(),
        required: Some(required),
        short_question: Some(text.chars().take(20).collect()),
        ..NewQuestion::default()
    }
}

async fn person(
    ports: &InMemoryOrgPorts,
    org: &Organization,
    first: &str,
    role: &str,
    zone: &str,
) -> User {
    let email = format!("{}@acme.test", first.to_lowercase());
    let new = NewUser::new(&email, first, "Test", role, None).unwrap();
    let user = ports.people.create_user(org.id, &new).await.unwrap();
    let patch = ProfilePatch {
        timezone: Some(zone.to_owned()),
        ..ProfilePatch::default()
    };
    ports
        .people
        .update_profile(org.id, user.id, &patch, &[])
        .await
        .unwrap()
}
