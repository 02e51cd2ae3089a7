//! The messaging domain: the organization's chat channels (the ids usable in
//! `report_channels` of check-ins and forms), the chat-platform port ([`platform`]) and the
//! e-mail port ([`mail`]); bot messages ([`request`] → [`MessagingService`] → [`message`],
//! delivered by the [`DeliveryWorker`]), e-mail ([`EmailService`], [`html_text`]), and the
//! organizations' platform connections ([`PlatformConnectionService`]); storage and the
//! outside world behind [`ports`].

pub mod connections;
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
pub use email::{EmailService, SendEmailRequest, send_login_code};
pub use service::{
    MAX_CONVERSATION_PARTICIPANTS, MESSAGE_MAX_ATTEMPTS, MessageQueued, MessageReport,
    MessagingPorts, MessagingService, SenderCredential,
};
pub use worker::{DeliveryWorker, RunSummary, WorkerPorts, WorkerSettings};

use async_trait::async_trait;
use std::sync::Arc;

use teamcomm_kernel::{Error, OrgId, RepoError, text};
use time::OffsetDateTime;

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
}

/// The organization's chat channels. No rules of its own yet: registering validates through
/// [`NewChannel`], and every read is scoped to the organization.
#[derive(Clone)]
pub struct ChannelService {
    channels: Arc<dyn ChannelRepository>,
}

impl ChannelService {
    pub fn new(channels: Arc<dyn ChannelRepository>) -> Self {
        ChannelService { channels }
    }

    /// Registers a channel of `org`, or renames it when its id is already registered.
    pub async fn register(&self, org: OrgId, new: &NewChannel) -> Result<Channel, Error> {
        Ok(self.channels.upsert_channel(org, new).await?)
    }

    /// Channels of `org` by name, optionally those whose name contains `name` (any case).
    pub async fn list(&self, org: OrgId, name: Option<&str>) -> Result<Vec<Channel>, Error> {
        Ok(self.channels.list_channels(org, name).await?)
    }
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
}
