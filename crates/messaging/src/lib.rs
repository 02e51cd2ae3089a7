//! The messaging domain: the organization's chat channels (the ids usable in
//! `report_channels` of check-ins and forms), the chat-platform port ([`platform`]) and the
//! e-mail port ([`mail`]); bot messages ([`request`] → [`MessagingService`] → [`message`],
//! delivered by the [`DeliveryWorker`]), e-mail ([`EmailService`], [`html_text`]), and the
//! organizations' platform connections ([`PlatformConnectionService`]); storage and the
//! outside world behind [`ports`].

pub mod connections;
pub mod cursors;
pub mod email;
pub mod html_text;
pub mod mail;
pub mod message;
pub mod platform;
pub mod ports;
pub mod request;
mod service;
#[cfg(test)]
mod test_world;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod worker;

pub use connections::PlatformConnectionService;
pub use email::{AgentEmailRequest, EmailService, SendEmailRequest, send_login_code};
pub use service::{
    MAX_CONVERSATION_PARTICIPANTS, MESSAGE_MAX_ATTEMPTS, MessageQueued, MessageReport,
    MessagingPorts, MessagingService, SenderCredential,
};
pub use worker::{DeliveryWorker, RunSummary, WorkerPorts, WorkerSettings};

use async_trait::async_trait;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use teamcomm_kernel::{Error, OrgId, RepoError, SharedClock, text};
use time::{Duration, OffsetDateTime};

/// Who may read a send (a message's or an e-mail's status): whoever sent it, and the admins of
/// its organization; to anyone else it does not exist (`not_found`).
pub(crate) fn may_see_send(actor: &teamcomm_org::User, sender: teamcomm_kernel::UserId) -> bool {
    sender == actor.id || actor.role.is_admin()
}

/// The longest channel name, in characters.
pub const MAX_CHANNEL_NAME: usize = 200;

/// The kind of a chat destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelType {
    Channel,
    PrivateChannel,
    GroupChat,
    DirectMessage,
}

impl ChannelType {
    pub const fn as_str(self) -> &'static str {
        match self {
            ChannelType::Channel => "channel",
            ChannelType::PrivateChannel => "private_channel",
            ChannelType::GroupChat => "group_chat",
            ChannelType::DirectMessage => "direct_message",
        }
    }

    pub fn parse(s: &str) -> Result<Self, Error> {
        match s {
            "channel" => Ok(ChannelType::Channel),
            "private_channel" => Ok(ChannelType::PrivateChannel),
            "group_chat" => Ok(ChannelType::GroupChat),
            "direct_message" => Ok(ChannelType::DirectMessage),
            _ => Err(Error::invalid_field(
                "type",
                "Must be channel, private_channel, group_chat or direct_message.",
            )),
        }
    }
}

/// A chat channel of an organization, identified by the platform's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    pub org_id: OrgId,
    pub id: String,
    pub name: String,
    pub platform: String,
    pub channel_type: ChannelType,
    pub created_at: OffsetDateTime,
}

/// A channel to register, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewChannel {
    pub id: String,
    pub name: String,
    pub platform: String,
    pub channel_type: ChannelType,
}

impl NewChannel {
    pub fn new(id: &str, name: &str, platform: &str, channel_type: &str) -> Result<Self, Error> {
        let id = id.trim();
        if id.is_empty() || id.len() > 200 {
            return Err(Error::invalid_field(
                "id",
                "A channel id has 1 to 200 characters.",
            ));
        }
        // "#general" names the channel "general", as chat platforms show it.
        let name = text::name(
            "name",
            name.trim().trim_start_matches('#'),
            MAX_CHANNEL_NAME,
        )?;
        let platform = platform.trim().to_ascii_lowercase();
        if platform.is_empty() || platform.len() > 40 {
            return Err(Error::invalid_field(
                "platform",
                "Name the chat platform, e.g. slack.",
            ));
        }
        Ok(NewChannel {
            id: id.to_owned(),
            name,
            platform,
            channel_type: ChannelType::parse(channel_type)?,
        })
    }
}

/// The chat channels of organizations.
#[async_trait]
pub trait ChannelRepository: Send + Sync + 'static {
    /// Registers a channel, or renames it when the id is already registered.
    async fn upsert_channel(&self, org: OrgId, new: &NewChannel) -> Result<Channel, RepoError>;
    /// Channels of `org` by name, optionally filtered by a case-insensitive name fragment.
    async fn list_channels(
        &self,
        org: OrgId,
        name: Option<&str>,
    ) -> Result<Vec<Channel>, RepoError>;

    /// Registers or renames each of `new` (ids distinct). Adapters may do it in one statement.
    async fn upsert_channels(&self, org: OrgId, new: &[NewChannel]) -> Result<(), RepoError> {
        for channel in new {
            self.upsert_channel(org, channel).await?;
        }
        Ok(())
    }
}

/// How often an organization's channels are asked of its connected platform, at most (the
/// listings in between answer the stored channels).
pub const PLATFORM_CHANNELS_REFRESH: std::time::Duration = std::time::Duration::from_secs(60);

/// The organization's chat channels: those registered by the operator and, once a chat
/// platform is connected, the channels the bot can post to there.
///
/// The rule of [`ChannelService::list_current`]: the platform's channels are merged into the
/// stored ones (added, renamed, their type updated; none is ever removed, since check-ins and
/// forms may name it as a report channel), at most once per `refresh_every` per organization
/// and connection; the listing is always the stored rows, so a platform that cannot be reached
/// only makes it stale.
#[derive(Clone)]
pub struct ChannelService {
    channels: Arc<dyn ChannelRepository>,
    platforms: Option<Arc<PlatformChannels>>,
}

/// Where the platform channels come from, and when each organization's were last asked for.
struct PlatformChannels {
    directory: Arc<dyn ports::PlatformDirectory>,
    connector: Arc<dyn ports::PlatformConnector>,
    clock: SharedClock,
    refresh_every: Duration,
    /// The connection each organization's channels were last asked of, and when.
    asked: Mutex<HashMap<OrgId, (ports::PlatformConnection, OffsetDateTime)>>,
}

/// What [`ChannelService::list_current`] answers: the stored channels, and why the platform's
/// could not be merged into them this time, if they could not.
#[derive(Debug)]
pub struct ChannelListing {
    pub channels: Vec<Channel>,
    pub stale: Option<platform::PlatformError>,
}

impl ChannelService {
    pub fn new(channels: Arc<dyn ChannelRepository>) -> Self {
        ChannelService {
            channels,
            platforms: None,
        }
    }

    /// Merges the connected platform's channels into the listings of
    /// [`ChannelService::list_current`], asking the platform at most once per `refresh_every`
    /// per organization (zero: on every listing).
    pub fn with_platforms(
        mut self,
        directory: Arc<dyn ports::PlatformDirectory>,
        connector: Arc<dyn ports::PlatformConnector>,
        clock: SharedClock,
        refresh_every: std::time::Duration,
    ) -> Self {
        self.platforms = Some(Arc::new(PlatformChannels {
            directory,
            connector,
            clock,
            refresh_every: Duration::try_from(refresh_every).unwrap_or(Duration::MAX),
            asked: Mutex::new(HashMap::new()),
        }));
        self
    }

    /// Registers a channel of `org`, or renames it when its id is already registered.
    pub async fn register(&self, org: OrgId, new: &NewChannel) -> Result<Channel, Error> {
        Ok(self.channels.upsert_channel(org, new).await?)
    }

    /// Channels of `org` by name, optionally those whose name contains `name` (any case).
    pub async fn list(&self, org: OrgId, name: Option<&str>) -> Result<Vec<Channel>, Error> {
        Ok(self.channels.list_channels(org, name).await?)
    }

    /// Like [`ChannelService::list`], after merging in the channels of the organization's
    /// connected platform when they were not asked for within `refresh_every`. A platform
    /// that fails leaves the stored channels as they are, and says why in
    /// [`ChannelListing::stale`].
    pub async fn list_current(
        &self,
        org: OrgId,
        name: Option<&str>,
    ) -> Result<ChannelListing, Error> {
        let stale = match &self.platforms {
            Some(platforms) => platforms.refresh(org, self.channels.as_ref()).await?,
            None => None,
        };
        Ok(ChannelListing {
            channels: self.list(org, name).await?,
            stale,
        })
    }
}

impl PlatformChannels {
    /// Merges the platform's channels of `org` into `stored` when due. Answers the platform's
    /// failure; storage failures are errors.
    async fn refresh(
        &self,
        org: OrgId,
        stored: &dyn ChannelRepository,
    ) -> Result<Option<platform::PlatformError>, Error> {
        let Some(connection) = self.directory.connection(org).await? else {
            return Ok(None);
        };
        let now = self.clock.now();
        {
            // Claimed before asking, so concurrent listings do not all ask the platform.
            let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((held, at)) = asked.get(&org)
                && *held == connection
                && now - *at < self.refresh_every
                && now >= *at
            {
                return Ok(None);
            }
            asked.insert(org, (connection.clone(), now));
        }
        let found = match self.connector.connect(&connection) {
            Ok(platform) => platform.list_channels().await,
            Err(e) => Err(e),
        };
        let found = match found {
            Ok(found) => found,
            Err(e) => return Ok(Some(e)),
        };
        let kind = connection.kind.as_str();
        let known: HashMap<String, Channel> = stored
            .list_channels(org, None)
            .await?
            .into_iter()
            .map(|c| (c.id.clone(), c))
            .collect();
        let mut seen = HashSet::new();
        let changed: Vec<NewChannel> = found
            .iter()
            .filter_map(|c| platform_channel(kind, c))
            .filter(|c| seen.insert(c.id.clone()))
            .filter(|c| {
                known.get(&c.id).is_none_or(|k| {
                    (k.name.as_str(), k.platform.as_str(), k.channel_type)
                        != (c.name.as_str(), c.platform.as_str(), c.channel_type)
                })
            })
            .collect();
        if !changed.is_empty() {
            stored.upsert_channels(org, &changed).await?;
        }
        Ok(None)
    }
}

/// A platform channel as a stored channel: named by its id when its name is not a valid
/// channel name; `None` when its id is not a valid channel id either.
fn platform_channel(kind: &str, c: &platform::PlatformChannel) -> Option<NewChannel> {
    let channel_type = if c.is_private {
        ChannelType::PrivateChannel
    } else {
        ChannelType::Channel
    };
    NewChannel::new(&c.id, &c.name, kind, channel_type.as_str())
        .or_else(|_| NewChannel::new(&c.id, &c.id, kind, channel_type.as_str()))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_channel_validation() {
        let c = NewChannel::new(" C123 ", "#general", "Slack", "channel").unwrap();
        assert_eq!(
            (c.id.as_str(), c.name.as_str(), c.platform.as_str()),
            ("C123", "general", "slack")
        );
        assert!(NewChannel::new("", "x", "slack", "channel").is_err());
        assert!(NewChannel::new("C1", "x", "slack", "room").is_err());
    }

    #[test]
    fn channel_names_follow_the_text_rule() {
        for bad in [
            "#",
            " # ",
            "\u{200B}",
            "#\u{FEFF}",
            "gen\u{202E}eral",
            "a\nb",
        ] {
            let e = NewChannel::new("C1", bad, "slack", "channel").unwrap_err();
            assert!(e.field_errors().contains_key("name"), "{bad:?}");
        }
        let long = "x".repeat(MAX_CHANNEL_NAME + 1);
        assert!(NewChannel::new("C1", &long, "slack", "channel").is_err());
        let name = "x".repeat(MAX_CHANNEL_NAME);
        assert_eq!(
            NewChannel::new("C1", &format!("#{name}"), "slack", "channel")
                .unwrap()
                .name,
            name
        );
    }

    fn channel(id: &str, name: &str) -> NewChannel {
        NewChannel::new(id, name, "slack", "channel").unwrap()
    }

    #[tokio::test]
    async fn channels_are_per_organization_and_renamed_on_re_registration() {
        let service = ChannelService::new(Arc::new(testing::InMemoryChannelRepository::new()));
        let (org, other) = (OrgId::new(), OrgId::new());
        service
            .register(org, &channel("C2", "random"))
            .await
            .unwrap();
        service
            .register(org, &channel("C1", "General"))
            .await
            .unwrap();
        service
            .register(other, &channel("C9", "general"))
            .await
            .unwrap();
        let renamed = service
            .register(org, &channel("C2", "gossip"))
            .await
            .unwrap();
        assert_eq!(renamed.name, "gossip");

        let names = |cs: Vec<Channel>| cs.into_iter().map(|c| c.name).collect::<Vec<_>>();
        assert_eq!(
            names(service.list(org, None).await.unwrap()),
            ["General", "gossip"]
        );
        assert_eq!(
            names(service.list(org, Some("GEN")).await.unwrap()),
            ["General"]
        );
        assert_eq!(names(service.list(other, None).await.unwrap()), ["general"]);
    }

    mod platform_channels {
        use super::*;
        use crate::platform::{PlatformChannel, PlatformError, PlatformKind};
        use crate::testing::{FixedConnector, InMemoryPlatformDirectory, RecordingChatPlatform};
        use teamcomm_org::testing::FixedClock;

        struct World {
            service: ChannelService,
            directory: Arc<InMemoryPlatformDirectory>,
            platform: Arc<RecordingChatPlatform>,
            connector: Arc<FixedConnector>,
            clock: Arc<FixedClock>,
        }

        const EVERY: std::time::Duration = std::time::Duration::from_secs(60);

        fn world() -> World {
            let directory = Arc::new(InMemoryPlatformDirectory::new());
            let platform = Arc::new(RecordingChatPlatform::new(PlatformKind::Slack));
            let connector = Arc::new(FixedConnector::new(platform.clone()));
            let clock = Arc::new(FixedClock::new(OffsetDateTime::UNIX_EPOCH));
            let service = ChannelService::new(Arc::new(testing::InMemoryChannelRepository::new()))
                .with_platforms(directory.clone(), connector.clone(), clock.clone(), EVERY);
            World {
                service,
                directory,
                platform,
                connector,
                clock,
            }
        }

        fn on_platform(id: &str, name: &str, is_private: bool) -> PlatformChannel {
            PlatformChannel {
                id: id.into(),
                name: name.into(),
                is_private,
            }
        }

        fn listed(l: &ChannelListing) -> Vec<(&str, &str, &str, &str)> {
            l.channels
                .iter()
                .map(|c| {
                    (
                        c.id.as_str(),
                        c.name.as_str(),
                        c.platform.as_str(),
                        c.channel_type.as_str(),
                    )
                })
                .collect()
        }

        #[tokio::test]
        async fn a_connected_platforms_channels_are_merged_into_the_stored_ones() {
            let w = world();
            let (org, other) = (OrgId::new(), OrgId::new());
            w.service
                .register(org, &channel("C-OPS", "ops"))
                .await
                .unwrap();
            w.platform.set_channels(vec![
                on_platform("C-GEN", "general", false),
                on_platform("G-HR", "hr", true),
                on_platform("C-GEN", "general", false),
                on_platform("C-BLANK", " ", false),
                on_platform("", "no id", false),
            ]);
            // Not connected: the stored channels only.
            let l = w.service.list_current(org, None).await.unwrap();
            assert_eq!(listed(&l), [("C-OPS", "ops", "slack", "channel")]);

            w.directory.connect(org, PlatformKind::Slack);
            let l = w.service.list_current(org, None).await.unwrap();
            assert!(l.stale.is_none(), "{l:?}");
            assert_eq!(
                listed(&l),
                [
                    ("C-BLANK", "C-BLANK", "slack", "channel"),
                    ("C-GEN", "general", "slack", "channel"),
                    ("G-HR", "hr", "slack", "private_channel"),
                    ("C-OPS", "ops", "slack", "channel"),
                ]
            );
            let l = w.service.list_current(org, Some("GEN")).await.unwrap();
            assert_eq!(listed(&l), [("C-GEN", "general", "slack", "channel")]);
            let l = w.service.list_current(other, None).await.unwrap();
            assert!(l.channels.is_empty());
        }

        #[tokio::test]
        async fn the_platform_is_asked_again_once_the_refresh_interval_passed_or_it_changed() {
            let w = world();
            let org = OrgId::new();
            w.directory.connect(org, PlatformKind::Slack);
            w.platform
                .set_channels(vec![on_platform("C1", "general", false)]);
            w.service.list_current(org, None).await.unwrap();

            // Renamed and made private on the platform, gone there: not seen within the interval.
            w.platform
                .set_channels(vec![on_platform("C1", "town-hall", true)]);
            w.clock
                .set(OffsetDateTime::UNIX_EPOCH + Duration::seconds(59));
            let l = w.service.list_current(org, None).await.unwrap();
            assert_eq!(listed(&l), [("C1", "general", "slack", "channel")]);

            w.clock
                .set(OffsetDateTime::UNIX_EPOCH + Duration::seconds(60));
            let l = w.service.list_current(org, None).await.unwrap();
            assert_eq!(
                listed(&l),
                [("C1", "town-hall", "slack", "private_channel")]
            );

            // A channel gone from the platform stays: report channels may name it.
            w.platform
                .set_channels(vec![on_platform("C2", "random", false)]);
            w.directory.connect(org, PlatformKind::Matrix);
            let l = w.service.list_current(org, None).await.unwrap();
            assert_eq!(
                listed(&l),
                [
                    ("C2", "random", "matrix", "channel"),
                    ("C1", "town-hall", "slack", "private_channel"),
                ]
            );
        }

        #[tokio::test]
        async fn a_platform_that_fails_leaves_the_stored_channels_and_says_why() {
            let w = world();
            let org = OrgId::new();
            w.service
                .register(org, &channel("C-OPS", "ops"))
                .await
                .unwrap();
            w.directory.connect(org, PlatformKind::Slack);
            w.platform
                .set_channels(vec![on_platform("C1", "general", false)]);
            w.connector
                .refuse(PlatformError::Temporary("connection refused".into()));
            let l = w.service.list_current(org, None).await.unwrap();
            assert_eq!(
                l.stale,
                Some(PlatformError::Temporary("connection refused".into()))
            );
            assert_eq!(listed(&l), [("C-OPS", "ops", "slack", "channel")]);

            // Asked again after the interval only.
            w.connector.accept();
            let l = w.service.list_current(org, None).await.unwrap();
            assert_eq!((l.stale, l.channels.len()), (None, 1));
            w.clock
                .set(OffsetDateTime::UNIX_EPOCH + Duration::seconds(60));
            let l = w.service.list_current(org, None).await.unwrap();
            assert_eq!(l.channels.len(), 2, "{l:?}");
        }
    }
}
