//! SQL of webhook endpoints (`webhook_endpoints`). The signing secret and bearer token are
//! sealed with the platform secret key, bound to the organization, the endpoint and the field,
//! and opened only by `endpoint_secrets`.

use std::sync::Arc;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use teamcomm_kernel::{EventType, OrgId, Page, PageRequest, RepoError, UserId, WireEnum};
use teamcomm_webhooks::{
    EndpointSecrets, NewWebhookEndpoint, SecretText, WebhookEndpoint, WebhookId, WebhookRepository,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::paging::load_page;
use crate::error::{db_error, unknown_organization};
use crate::schema::webhooks::webhook_endpoints;
use crate::{Database, PlatformSecretKey};

/// A row as [`endpoint_columns`] selects it.
#[derive(Debug, Queryable)]
struct EndpointRow {
    id: Uuid,
    organization_id: Uuid,
    url: String,
    events: Vec<String>,
    name: String,
    object_ids: Vec<Uuid>,
    has_bearer_token: bool,
    enabled: bool,
    disabled_reason: Option<String>,
    created_by_id: Option<Uuid>,
    created_at: OffsetDateTime,
}

/// The columns of an [`EndpointRow`]: the secrets stay in the table, only whether there is a
/// bearer token is read.
macro_rules! endpoint_columns {
    () => {
        (
            webhook_endpoints::id,
            webhook_endpoints::organization_id,
            webhook_endpoints::url,
            webhook_endpoints::events,
            webhook_endpoints::name,
            webhook_endpoints::object_ids,
            webhook_endpoints::bearer_token.is_not_null(),
            webhook_endpoints::enabled,
            webhook_endpoints::disabled_reason,
            webhook_endpoints::created_by_id,
            webhook_endpoints::created_at,
        )
    };
}

impl TryFrom<EndpointRow> for WebhookEndpoint {
    type Error = RepoError;

    fn try_from(r: EndpointRow) -> Result<Self, RepoError> {
        let events = r
            .events
            .iter()
            .map(|e| {
                EventType::from_name(e)
                    .ok_or_else(|| RepoError::Other(format!("unknown stored event type {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(WebhookEndpoint {
            id: WebhookId(r.id),
            org_id: OrgId(r.organization_id),
            url: r.url,
            events,
            name: r.name,
            object_ids: r.object_ids,
            has_bearer_token: r.has_bearer_token,
            enabled: r.enabled,
            disabled_reason: r.disabled_reason,
            created_by: r.created_by_id.map(UserId),
            created_at: r.created_at,
        })
    }
}

/// Which secret of an endpoint a sealed value is.
#[derive(Debug, Clone, Copy)]
enum Field {
    SigningSecret,
    BearerToken,
}

impl Field {
    const fn as_str(self) -> &'static str {
        match self {
            Field::SigningSecret => "signing_secret",
            Field::BearerToken => "bearer_token",
        }
    }
}

/// A sealed value copied to another organization's or endpoint's row, or to the other field,
/// does not open.
fn associated_data(org: OrgId, id: WebhookId, field: Field) -> Vec<u8> {
    let mut aad = b"webhook_endpoints:".to_vec();
    aad.extend_from_slice(org.0.as_bytes());
    aad.extend_from_slice(id.0.as_bytes());
    aad.extend_from_slice(field.as_str().as_bytes());
    aad
}

/// Postgres implementation of [`WebhookRepository`].
#[derive(Clone)]
pub struct PgWebhookRepository {
    db: Database,
    key: Arc<PlatformSecretKey>,
}

impl PgWebhookRepository {
    pub fn new(db: Database, key: PlatformSecretKey) -> Self {
        PgWebhookRepository {
            db,
            key: Arc::new(key),
        }
    }

    fn seal(
        &self,
        org: OrgId,
        id: WebhookId,
        field: Field,
        value: &SecretText,
    ) -> Result<Vec<u8>, RepoError> {
        self.key
            .seal_bytes(&associated_data(org, id, field), value.expose().as_bytes())
            .map_err(|_| RepoError::Other("a webhook secret could not be sealed".into()))
    }

    fn open(
        &self,
        org: OrgId,
        id: WebhookId,
        field: Field,
        stored: &[u8],
    ) -> Result<SecretText, RepoError> {
        self.key
            .open_bytes(&associated_data(org, id, field), stored)
            .and_then(|opened| String::from_utf8(opened).ok())
            .map(SecretText::new)
            .ok_or_else(|| {
                RepoError::Other(format!(
                    "the {} of webhook endpoint {id} does not open with the configured key",
                    field.as_str()
                ))
            })
    }
}

#[async_trait]
impl WebhookRepository for PgWebhookRepository {
    async fn create_endpoint(
        &self,
        org: OrgId,
        new: &NewWebhookEndpoint,
    ) -> Result<WebhookEndpoint, RepoError> {
        let signing_secret = self.seal(
            org,
            new.id,
            Field::SigningSecret,
            &new.secrets.signing_secret,
        )?;
        let bearer_token = new
            .secrets
            .bearer_token
            .as_ref()
            .map(|t| self.seal(org, new.id, Field::BearerToken, t))
            .transpose()?;
        let events: Vec<&str> = new.events.iter().map(|e| e.as_str()).collect();
        let mut conn = self.db.conn().await?;
        let row: EndpointRow = diesel::insert_into(webhook_endpoints::table)
            .values((
                webhook_endpoints::id.eq(new.id.0),
                webhook_endpoints::organization_id.eq(org.0),
                webhook_endpoints::url.eq(&new.url),
                webhook_endpoints::events.eq(events),
                webhook_endpoints::name.eq(&new.name),
                webhook_endpoints::object_ids.eq(&new.object_ids),
                webhook_endpoints::signing_secret.eq(signing_secret),
                webhook_endpoints::bearer_token.eq(bearer_token),
                webhook_endpoints::created_by_id.eq(new.created_by.0),
                webhook_endpoints::created_at.eq(new.created_at),
            ))
            .returning(endpoint_columns!())
            .get_result(&mut conn)
            .await
            .map_err(|e| unknown_organization(db_error(e)))?;
        row.try_into()
    }

    async fn get_endpoint(&self, org: OrgId, id: WebhookId) -> Result<WebhookEndpoint, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: EndpointRow = webhook_endpoints::table
            .filter(webhook_endpoints::organization_id.eq(org.0))
            .filter(webhook_endpoints::id.eq(id.0))
            .select(endpoint_columns!())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn list_endpoints(
        &self,
        org: OrgId,
        created_by: Option<UserId>,
        page: PageRequest,
    ) -> Result<Page<WebhookEndpoint>, RepoError> {
        let mut conn = self.db.conn().await?;
        let filtered = move || {
            let mut q = webhook_endpoints::table
                .filter(webhook_endpoints::organization_id.eq(org.0))
                .into_boxed();
            if let Some(user) = created_by {
                q = q.filter(webhook_endpoints::created_by_id.eq(user.0));
            }
            q
        };
        load_page::<EndpointRow, WebhookEndpoint, _, _>(&mut conn, page, filtered, |q| {
            q.order((
                webhook_endpoints::created_at.desc(),
                webhook_endpoints::id.desc(),
            ))
            .select(endpoint_columns!())
        })
        .await
    }

    async fn count_endpoints(&self, org: OrgId) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let n: i64 = webhook_endpoints::table
            .filter(webhook_endpoints::organization_id.eq(org.0))
            .count()
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn delete_endpoint(&self, org: OrgId, id: WebhookId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let deleted = diesel::delete(
            webhook_endpoints::table
                .filter(webhook_endpoints::organization_id.eq(org.0))
                .filter(webhook_endpoints::id.eq(id.0)),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if deleted == 0 {
            Err(RepoError::NotFound)
        } else {
            Ok(())
        }
    }

    async fn delete_endpoints_by_url(&self, org: OrgId, url: &str) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let deleted = diesel::delete(
            webhook_endpoints::table
                .filter(webhook_endpoints::organization_id.eq(org.0))
                .filter(webhook_endpoints::url.eq(url)),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(deleted as u64)
    }

    async fn endpoint_secrets(
        &self,
        org: OrgId,
        id: WebhookId,
    ) -> Result<EndpointSecrets, RepoError> {
        let mut conn = self.db.conn().await?;
        let (signing_secret, bearer_token): (Vec<u8>, Option<Vec<u8>>) = webhook_endpoints::table
            .filter(webhook_endpoints::organization_id.eq(org.0))
            .filter(webhook_endpoints::id.eq(id.0))
            .select((
                webhook_endpoints::signing_secret,
                webhook_endpoints::bearer_token,
            ))
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(EndpointSecrets {
            signing_secret: self.open(org, id, Field::SigningSecret, &signing_secret)?,
            bearer_token: bearer_token
                .map(|t| self.open(org, id, Field::BearerToken, &t))
                .transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_only_for_its_organization_endpoint_and_field() {
        let key = PlatformSecretKey::derive(&[3; 32]).unwrap();
        let (org, id) = (OrgId::new(), WebhookId::new());
        let secret = b"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let sealed = key
            .seal_bytes(&associated_data(org, id, Field::SigningSecret), secret)
            .unwrap();
        assert!(!sealed.windows(secret.len()).any(|w| w == secret));
        let opened = key.open_bytes(&associated_data(org, id, Field::SigningSecret), &sealed);
        assert_eq!(opened.as_deref(), Some(&secret[..]));
        for aad in [
            associated_data(org, id, Field::BearerToken),
            associated_data(org, WebhookId::new(), Field::SigningSecret),
            associated_data(OrgId::new(), id, Field::SigningSecret),
        ] {
            assert_eq!(key.open_bytes(&aad, &sealed), None);
        }
        let other_key = PlatformSecretKey::derive(&[4; 32]).unwrap();
        assert_eq!(
            other_key.open_bytes(&associated_data(org, id, Field::SigningSecret), &sealed),
            None
        );
    }
}
