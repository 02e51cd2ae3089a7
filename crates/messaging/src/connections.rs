//! Connecting an organization to its chat platform and naming its people there, as the
//! operator does it (the operator API and `teamcomm admin` both go through
//! [`PlatformConnectionService`]). The secret goes in and is never shown again.

use std::sync::Arc;

use teamcomm_kernel::{Error, OrgId, RepoError, UserId};
use teamcomm_org::{OrgRepository, OrganizationPatch};

use crate::platform::PlatformKind;
use crate::ports::{
    PLATFORM_IDENTITIES_UNIQUE, PlatformConnection, PlatformDirectory, PlatformSecret,
};
use crate::request::is_web_url;

/// The longest platform secret and platform user id, in bytes.
pub const MAX_PLATFORM_SECRET_LEN: usize = 4_096;
pub const MAX_PLATFORM_USER_ID_LEN: usize = 255;

/// A connection as the operator sends it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct NewPlatformConnection {
    /// `matrix` or `slack`.
    pub kind: String,
    /// The Matrix homeserver (required for Matrix); for Slack, another Web API base (tests).
    pub base_url: Option<String>,
    /// The bot's token.
    pub secret: String,
    /// Slack only: the app's signing secret (what Slack's pushes are verified with).
    pub signing_secret: Option<String>,
}

impl std::fmt::Debug for NewPlatformConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewPlatformConnection")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

/// A connection as it may be shown: never its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformSummary {
    pub kind: PlatformKind,
    pub base_url: Option<String>,
    /// Whether a signing secret is stored (Slack: its pushes are accepted).
    pub has_signing_secret: bool,
}

impl From<&PlatformConnection> for PlatformSummary {
    fn from(c: &PlatformConnection) -> Self {
        PlatformSummary {
            kind: c.kind,
            base_url: c.base_url.clone(),
            has_signing_secret: c.signing_secret.is_some(),
        }
    }
}

/// A platform secret's rule: 1 to [`MAX_PLATFORM_SECRET_LEN`] bytes without spaces. The
/// message never repeats the secret.
fn platform_secret(field: &str, secret: &str, message: &str) -> Result<PlatformSecret, Error> {
    let secret = secret.trim();
    if secret.is_empty()
        || secret.len() > MAX_PLATFORM_SECRET_LEN
        || secret.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        Err(Error::invalid_field(field, message.to_owned()))
    } else {
        Ok(PlatformSecret::new(secret))
    }
}

/// The operator's side of platform connections (no tenant scoping: the operator stands above
/// organizations).
#[derive(Clone)]
pub struct PlatformConnectionService {
    directory: Arc<dyn PlatformDirectory>,
    orgs: Arc<dyn OrgRepository>,
}

impl PlatformConnectionService {
    pub fn new(directory: Arc<dyn PlatformDirectory>, orgs: Arc<dyn OrgRepository>) -> Self {
        PlatformConnectionService { directory, orgs }
    }

    /// Connects an existing organization (`not_found` otherwise), replacing its connection,
    /// and names the platform as the organization's (what `GET /v1/organization/` shows).
    /// Refuses (`params_validation_error`) an unknown `kind`, a Matrix connection without a
    /// homeserver, a `base_url` that is not an http(s) URL, a blank secret or one with spaces,
    /// and a `signing_secret` on another platform than Slack (or blank, or with spaces).
    pub async fn connect(
        &self,
        org: OrgId,
        new: &NewPlatformConnection,
    ) -> Result<PlatformSummary, Error> {
        let mut errors = teamcomm_kernel::FieldErrors::new();
        let kind = PlatformKind::parse(new.kind.trim().to_ascii_lowercase().as_str())
            .ok_or_else(|| Error::invalid_field("kind", "Must be matrix or slack."));
        errors.note(&kind);
        let base_url = match new.base_url.as_deref().map(str::trim) {
            Some(url) if is_web_url(url, true) => Ok(Some(url.trim_end_matches('/').to_owned())),
            Some(_) => Err(Error::invalid_field(
                "base_url",
                "Enter an http:// or https:// URL.",
            )),
            None if kind == Ok(PlatformKind::Matrix) => Err(Error::invalid_field(
                "base_url",
                "A Matrix connection names its homeserver URL.",
            )),
            None => Ok(None),
        };
        errors.note(&base_url);
        let secret = platform_secret(
            "secret",
            &new.secret,
            "The platform token is 1 to 4096 characters without spaces.",
        );
        errors.note(&secret);
        let signing_secret = match new.signing_secret.as_deref() {
            None => Ok(None),
            Some(_) if kind.as_ref().is_ok_and(|k| *k != PlatformKind::Slack) => {
                Err(Error::invalid_field(
                    "signing_secret",
                    "Only a Slack connection has a signing secret.",
                ))
            }
            Some(s) => platform_secret(
                "signing_secret",
                s,
                "The signing secret is 1 to 4096 characters without spaces.",
            )
            .map(Some),
        };
        errors.note(&signing_secret);
        errors.finish()?;

        let kind = kind?;
        self.orgs.get_organization(org).await?;
        let connection = PlatformConnection {
            org_id: org,
            kind,
            base_url: base_url?,
            secret: secret?,
            signing_secret: signing_secret?,
        };
        self.directory.save_connection(&connection).await?;
        let named = OrganizationPatch::default().with_platform(Some(kind.as_str()))?;
        self.orgs.update_organization(org, &named).await?;
        Ok(PlatformSummary::from(&connection))
    }

    /// Disconnects the organization (`not_found` when it was not connected) and clears its
    /// platform's name. Its people's platform identities are kept.
    pub async fn disconnect(&self, org: OrgId) -> Result<(), Error> {
        self.directory.remove_connection(org).await?;
        let unnamed = OrganizationPatch::default().without_platform();
        self.orgs.update_organization(org, &unnamed).await?;
        Ok(())
    }

    /// The organization's connection, without its secret.
    pub async fn connection(&self, org: OrgId) -> Result<Option<PlatformSummary>, Error> {
        Ok(self
            .directory
            .connection(org)
            .await?
            .as_ref()
            .map(PlatformSummary::from))
    }

    /// The signing secret of the organization's Slack connection, which what Slack pushes for
    /// it is verified with; `None` when it is not connected to Slack or has no signing secret
    /// (then nothing Slack pushes for it is accepted).
    pub async fn slack_signing_secret(&self, org: OrgId) -> Result<Option<PlatformSecret>, Error> {
        Ok(self
            .directory
            .connection(org)
            .await?
            .filter(|c| c.kind == PlatformKind::Slack)
            .and_then(|c| c.signing_secret))
    }

    /// Names (or with `None` forgets) who a person of the organization is on its connected
    /// platform: `platform_not_connected` without a connection, `not_found` for a person of
    /// another organization, a field error on `platform_user_id` when it is malformed or
    /// another person's.
    pub async fn map_person(
        &self,
        org: OrgId,
        user: UserId,
        platform_user_id: Option<&str>,
    ) -> Result<(), Error> {
        let platform_user_id = platform_user_id.map(str::trim);
        if platform_user_id.is_some_and(|id| {
            id.is_empty()
                || id.len() > MAX_PLATFORM_USER_ID_LEN
                || id.chars().any(|c| c.is_whitespace() || c.is_control())
        }) {
            return Err(Error::invalid_field(
                "platform_user_id",
                "A platform user id has 1 to 255 characters without spaces.",
            ));
        }
        let connection = self.directory.connection(org).await?.ok_or_else(|| {
            Error::new(
                teamcomm_kernel::ErrorCode::PlatformNotConnected,
                "The organization has no chat platform connected.",
            )
        })?;
        self.orgs.get_user(org, user).await?;
        match self
            .directory
            .set_platform_user_id(org, connection.kind, user, platform_user_id)
            .await
        {
            Err(RepoError::Conflict { constraint }) if constraint == PLATFORM_IDENTITIES_UNIQUE => {
                Err(Error::invalid_field(
                    "platform_user_id",
                    "Another person of the organization has this platform identity.",
                ))
            }
            other => Ok(other?),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use teamcomm_kernel::ErrorCode;

    use super::*;
    use crate::test_world::{World, code};

    fn slack(secret: &str) -> NewPlatformConnection {
        NewPlatformConnection {
            kind: "Slack".into(),
            base_url: None,
            secret: secret.into(),
            signing_secret: None,
        }
    }

    fn service(w: &World) -> PlatformConnectionService {
        PlatformConnectionService::new(Arc::new(w.directory.clone()), w.org_ports.people.clone())
    }

    #[tokio::test]
    async fn connecting_replaces_the_connection_and_names_the_platform() {
        let w = World::new().await;
        let service = service(&w);
        let summary = service
            .connect(
                w.org.id,
                &NewPlatformConnection {
                    kind: "matrix".into(),
                    base_url: Some("http://127.0.0.1:8008/".into()),
                    secret: " syt_token ".into(),
                    signing_secret: None,
                },
            )
            .await
            .unwrap();
        assert_eq!(
            summary,
            PlatformSummary {
                kind: PlatformKind::Matrix,
                base_url: Some("http://127.0.0.1:8008".into()),
                has_signing_secret: false,
            }
        );
        let stored = w.directory.connection(w.org.id).await.unwrap().unwrap();
        assert_eq!(stored.secret.expose(), "syt_token");
        assert_eq!(format!("{stored:?}").matches("syt_token").count(), 0);
        let org = w.org_ports.people.get_organization(w.org.id).await.unwrap();
        assert_eq!(org.platform.as_deref(), Some("matrix"));
        assert_eq!(service.connection(w.org.id).await.unwrap(), Some(summary));

        service.disconnect(w.org.id).await.unwrap();
        assert_eq!(service.connection(w.org.id).await.unwrap(), None);
        let org = w.org_ports.people.get_organization(w.org.id).await.unwrap();
        assert_eq!(org.platform, None, "no platform is named once disconnected");
        assert_eq!(
            code(service.disconnect(w.org.id).await),
            ErrorCode::NotFound
        );
    }

    #[tokio::test]
    async fn a_slack_connection_keeps_its_signing_secret_for_the_pushes() {
        let w = World::new().await;
        let service = service(&w);
        let summary = service
            .connect(
                w.org.id,
                &NewPlatformConnection {
                    signing_secret: Some(" 8f742231b10e8888abcd99yyyzzz85a5 ".into()),
                    ..slack("xoxb-1")
                },
            )
            .await
            .unwrap();
        assert!(summary.has_signing_secret);
        let signing = service.slack_signing_secret(w.org.id).await.unwrap();
        assert_eq!(
            signing.as_ref().map(PlatformSecret::expose),
            Some("8f742231b10e8888abcd99yyyzzz85a5")
        );
        // Reconnecting without one forgets it: Slack's pushes are refused again.
        let summary = service.connect(w.org.id, &slack("xoxb-1")).await.unwrap();
        assert!(!summary.has_signing_secret);
        assert_eq!(service.slack_signing_secret(w.org.id).await.unwrap(), None);
        // Matrix has none.
        let e = service
            .connect(
                w.org.id,
                &NewPlatformConnection {
                    kind: "matrix".into(),
                    base_url: Some("http://127.0.0.1:8008".into()),
                    secret: "syt".into(),
                    signing_secret: Some("s3cret".into()),
                },
            )
            .await
            .unwrap_err();
        assert_eq!(
            e.field_errors().keys().collect::<Vec<_>>(),
            ["signing_secret"]
        );
        assert!(!format!("{e:?}").contains("s3cret"));
        assert_eq!(
            service.slack_signing_secret(OrgId::new()).await.unwrap(),
            None
        );
    }

    #[tokio::test]
    async fn connections_are_checked_and_the_secret_is_never_repeated() {
        let w = World::new().await;
        let service = service(&w);
        let e = service
            .connect(
                w.org.id,
                &NewPlatformConnection {
                    kind: "matrix".into(),
                    base_url: None,
                    secret: "xoxb secret with spaces".into(),
                    signing_secret: Some("s".into()),
                },
            )
            .await
            .unwrap_err();
        assert_eq!(
            e.field_errors().keys().collect::<Vec<_>>(),
            ["base_url", "secret", "signing_secret"]
        );
        assert!(!format!("{e:?}").contains("xoxb"));
        let e = service
            .connect(
                w.org.id,
                &NewPlatformConnection {
                    kind: "teams".into(),
                    base_url: Some("ftp://x".into()),
                    secret: "t".into(),
                    signing_secret: None,
                },
            )
            .await
            .unwrap_err();
        assert_eq!(
            e.field_errors().keys().collect::<Vec<_>>(),
            ["base_url", "kind"]
        );
        assert_eq!(
            code(
                service
                    .connect(teamcomm_kernel::OrgId::new(), &slack("xoxb-1"))
                    .await
            ),
            ErrorCode::NotFound
        );
        assert!(!format!("{:?}", slack("xoxb-1")).contains("xoxb"));
    }

    #[tokio::test]
    async fn people_are_named_on_the_connected_platform_once_each() {
        let w = World::new().await;
        let service = service(&w);
        service.connect(w.org.id, &slack("xoxb-1")).await.unwrap();
        service
            .map_person(w.org.id, w.stranger.id, Some(" U-Sam "))
            .await
            .unwrap();
        let ids = |w: &World| {
            let directory = w.directory.clone();
            let (org, sam) = (w.org.id, w.stranger.id);
            async move {
                directory
                    .platform_user_ids(org, PlatformKind::Slack, &[sam])
                    .await
                    .unwrap()
            }
        };
        assert_eq!(
            ids(&w).await,
            HashMap::from([(w.stranger.id, "U-Sam".to_owned())])
        );
        let e = service
            .map_person(w.org.id, w.stranger.id, Some("U-Mia"))
            .await
            .unwrap_err();
        assert!(e.field_errors().contains_key("platform_user_id"));
        assert!(
            service
                .map_person(w.org.id, w.stranger.id, Some("U 1"))
                .await
                .unwrap_err()
                .field_errors()
                .contains_key("platform_user_id")
        );
        assert_eq!(
            code(
                service
                    .map_person(w.org.id, w.outsider.id, Some("U-Otto"))
                    .await
            ),
            ErrorCode::NotFound
        );
        service
            .map_person(w.org.id, w.stranger.id, None)
            .await
            .unwrap();
        assert!(ids(&w).await.is_empty());

        w.directory.disconnect(w.org.id);
        assert_eq!(
            code(
                service
                    .map_person(w.org.id, w.stranger.id, Some("U-Sam"))
                    .await
            ),
            ErrorCode::PlatformNotConnected
        );
    }
}
