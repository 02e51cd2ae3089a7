//! The messaging domain. For now: the organization's chat channels, the ids usable in
//! `report_channels` of check-ins and forms.

#[cfg(any(test, feature = "testing"))]
pub mod testing;

use async_trait::async_trait;
use teamcomm_kernel::{Error, OrgId, RepoError};
use time::OffsetDateTime;

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
        let name = name.trim().trim_start_matches('#');
        if name.is_empty() || name.chars().count() > 200 {
            return Err(Error::invalid_field(
                "name",
                "A channel name has 1 to 200 characters.",
            ));
        }
        let platform = platform.trim().to_ascii_lowercase();
        if platform.is_empty() || platform.len() > 40 {
            return Err(Error::invalid_field(
                "platform",
                "Name the chat platform, e.g. slack.",
            ));
        }
        Ok(NewChannel {
            id: id.to_owned(),
            name: name.to_owned(),
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
}
