//! SQL of agents: reports, health checks and messages (`agent_reports`,
//! `agent_health_checks`, `agent_messages`), registration riddles, registrations and agent keys
//! (`agent_register_challenges`, `agent_registrations`, `agent_keys`).

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde_json::{Map, Value, json};
use teamcomm_agents::{
    AgentHook, AgentHookRepository, AgentKeyCredential, AgentMessage, AgentReport, AgentRepository,
    Challenge, HealthCheck, MessageFilter, MessageType, NewRegistration, Registration,
    RegistrationRepository, SenderType,
};
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::{OrgId, RepoError, UserId};
use teamcomm_keys::SecretHash;
use teamcomm_webhooks::SecretText;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::Database;
use crate::error::db_error;
use crate::rows::unknown_value;
use crate::schema::agents::{
    agent_health_checks, agent_keys, agent_messages, agent_register_challenges,
    agent_registrations, agent_reports, agent_webhooks,
};
use crate::schema::organizations;

/// Postgres implementation of [`AgentRepository`] and [`RegistrationRepository`].
#[derive(Clone)]
pub struct PgAgentRepository {
    db: Database,
}

impl PgAgentRepository {
    pub fn new(db: Database) -> Self {
        PgAgentRepository { db }
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = agent_health_checks, check_for_backend(Pg))]
struct HealthRow {
    id: Uuid,
    organization_id: Uuid,
    agent_name: String,
    ok: bool,
    message: Option<String>,
    created_at: OffsetDateTime,
}

impl From<HealthRow> for HealthCheck {
    fn from(r: HealthRow) -> Self {
        HealthCheck {
            id: r.id,
            org_id: OrgId(r.organization_id),
            agent_name: r.agent_name,
            ok: r.ok,
            message: r.message,
            created_at: r.created_at,
        }
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = agent_messages, check_for_backend(Pg))]
struct MessageRow {
    id: Uuid,
    organization_id: Uuid,
    agent_name: String,
    content: String,
    message_type: String,
    metadata: Value,
    sender_type: String,
    sender_name: Option<String>,
    expires_at: Option<OffsetDateTime>,
    delivered_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
}

impl TryFrom<MessageRow> for AgentMessage {
    type Error = RepoError;

    fn try_from(r: MessageRow) -> Result<Self, RepoError> {
        Ok(AgentMessage {
            id: r.id,
            org_id: OrgId(r.organization_id),
            agent_name: r.agent_name,
            content: r.content,
            message_type: MessageType::parse(&r.message_type)
                .ok_or_else(|| unknown_value("agent_messages.message_type", &r.message_type))?,
            metadata: object(r.metadata),
            sender_type: SenderType::parse(&r.sender_type)
                .ok_or_else(|| unknown_value("agent_messages.sender_type", &r.sender_type))?,
            sender_name: r.sender_name,
            expires_at: r.expires_at,
            delivered_at: r.delivered_at,
            created_at: r.created_at,
        })
    }
}

fn messages(rows: Vec<MessageRow>) -> Result<Vec<AgentMessage>, RepoError> {
    rows.into_iter().map(AgentMessage::try_from).collect()
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = agent_registrations, check_for_backend(Pg))]
struct RegistrationRow {
    organization_id: Uuid,
    agent_name: String,
    agent_email: String,
    reason: String,
    timezone: String,
    contact_email: Option<String>,
    claim_expires_at: OffsetDateTime,
    claimed_by_id: Option<Uuid>,
    claimed_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
}

impl RegistrationRow {
    fn with_name(self, org_name: String) -> Registration {
        Registration {
            org_id: OrgId(self.organization_id),
            org_name,
            agent_name: self.agent_name,
            agent_email: self.agent_email,
            reason: self.reason,
            timezone: self.timezone,
            contact_email: self.contact_email,
            claim_expires_at: self.claim_expires_at,
            claimed_by: self.claimed_by_id.map(UserId),
            claimed_at: self.claimed_at,
            created_at: self.created_at,
        }
    }
}

/// The registration with its organization's current name.
async fn with_org_name(
    conn: &mut diesel_async::AsyncPgConnection,
    row: RegistrationRow,
) -> Result<Registration, RepoError> {
    let name: String = organizations::table
        .find(row.organization_id)
        .select(organizations::name)
        .first(conn)
        .await
        .map_err(db_error)?;
    Ok(row.with_name(name))
}

#[async_trait]
impl AgentRepository for PgAgentRepository {
    async fn insert_report(&self, r: &AgentReport) -> Result<(), RepoError> {
        let co_authors: Vec<Value> = r
            .co_authors
            .iter()
            .map(|c| json!({"uuid": c.id.0, "name": c.name}))
            .collect();
        let mut conn = self.db.conn().await?;
        diesel::insert_into(agent_reports::table)
            .values((
                agent_reports::id.eq(r.id),
                agent_reports::organization_id.eq(r.org_id.0),
                agent_reports::agent_name.eq(&r.agent_name),
                agent_reports::content.eq(&r.content),
                agent_reports::structured.eq(Value::Object(r.structured.clone())),
                agent_reports::metadata.eq(Value::Object(r.metadata.clone())),
                agent_reports::is_milestone.eq(r.is_milestone),
                agent_reports::co_authors.eq(Value::Array(co_authors)),
                agent_reports::created_by_id.eq(r.created_by.map(|u| u.0)),
                agent_reports::created_at.eq(r.created_at),
            ))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn insert_health(&self, c: &HealthCheck) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::insert_into(agent_health_checks::table)
            .values((
                agent_health_checks::id.eq(c.id),
                agent_health_checks::organization_id.eq(c.org_id.0),
                agent_health_checks::agent_name.eq(&c.agent_name),
                agent_health_checks::ok.eq(c.ok),
                agent_health_checks::message.eq(c.message.as_deref()),
                agent_health_checks::created_at.eq(c.created_at),
            ))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn health_history(
        &self,
        org: OrgId,
        agent_name: &str,
        limit: usize,
    ) -> Result<Vec<HealthCheck>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<HealthRow> = agent_health_checks::table
            .filter(agent_health_checks::organization_id.eq(org.0))
            .filter(agent_health_checks::agent_name.eq(agent_name))
            .order((
                agent_health_checks::created_at.desc(),
                agent_health_checks::id.desc(),
            ))
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .select(HealthRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(HealthCheck::from).collect())
    }

    async fn insert_message(
        &self,
        m: &AgentMessage,
        push: Option<&NewJob>,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let insert = diesel::insert_into(agent_messages::table).values((
            agent_messages::id.eq(m.id),
            agent_messages::organization_id.eq(m.org_id.0),
            agent_messages::agent_name.eq(&m.agent_name),
            agent_messages::content.eq(&m.content),
            agent_messages::message_type.eq(m.message_type.as_str()),
            agent_messages::metadata.eq(Value::Object(m.metadata.clone())),
            agent_messages::sender_type.eq(m.sender_type.as_str()),
            agent_messages::sender_name.eq(m.sender_name.as_deref()),
            agent_messages::expires_at.eq(m.expires_at),
            agent_messages::delivered_at.eq(m.delivered_at),
            agent_messages::created_at.eq(m.created_at),
        ));
        conn.transaction(async |conn| {
            insert.execute(conn).await?;
            if let Some(job) = push {
                super::jobs::enqueue(conn, std::slice::from_ref(job)).await?;
            }
            Ok::<_, diesel::result::Error>(())
        })
        .await
        .map_err(db_error)
    }

    async fn list_messages(
        &self,
        org: OrgId,
        filter: &MessageFilter,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<AgentMessage>, RepoError> {
        let mut query = agent_messages::table
            .filter(agent_messages::organization_id.eq(org.0))
            .filter(
                agent_messages::expires_at
                    .is_null()
                    .or(agent_messages::expires_at.gt(now)),
            )
            .into_boxed();
        if let Some(agent) = &filter.agent_name {
            query = query.filter(agent_messages::agent_name.eq(agent.clone()));
        }
        match filter.delivered {
            Some(true) => query = query.filter(agent_messages::delivered_at.is_not_null()),
            Some(false) => query = query.filter(agent_messages::delivered_at.is_null()),
            None => {}
        }
        let mut conn = self.db.conn().await?;
        // The newest `limit`, answered oldest first.
        let mut rows: Vec<MessageRow> = query
            .order((agent_messages::created_at.desc(), agent_messages::id.desc()))
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .select(MessageRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.reverse();
        messages(rows)
    }

    async fn mark_delivered(
        &self,
        org: OrgId,
        ids: &[Uuid],
        now: OffsetDateTime,
    ) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::update(
            agent_messages::table
                .filter(agent_messages::organization_id.eq(org.0))
                .filter(agent_messages::id.eq_any(ids))
                .filter(agent_messages::delivered_at.is_null()),
        )
        .set(agent_messages::delivered_at.eq(now))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(n as u64)
    }

    async fn deliver_pending(
        &self,
        org: OrgId,
        agent_name: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<AgentMessage>, RepoError> {
        let mut conn = self.db.conn().await?;
        let mut rows: Vec<MessageRow> = diesel::update(
            agent_messages::table
                .filter(agent_messages::organization_id.eq(org.0))
                .filter(agent_messages::agent_name.eq(agent_name))
                .filter(agent_messages::delivered_at.is_null())
                .filter(
                    agent_messages::expires_at
                        .is_null()
                        .or(agent_messages::expires_at.gt(now)),
                ),
        )
        .set(agent_messages::delivered_at.eq(now))
        .returning(MessageRow::as_returning())
        .get_results(&mut conn)
        .await
        .map_err(db_error)?;
        rows.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        messages(rows)
    }
}

#[async_trait]
impl RegistrationRepository for PgAgentRepository {
    async fn insert_challenge(&self, c: &Challenge) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        // Riddles nobody answered are swept as new ones are issued.
        diesel::delete(agent_register_challenges::table.filter(
            agent_register_challenges::expires_at.lt(c.expires_at - time::Duration::days(1)),
        ))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        diesel::insert_into(agent_register_challenges::table)
            .values((
                agent_register_challenges::id.eq(c.id),
                agent_register_challenges::answer.eq(c.answer),
                agent_register_challenges::expires_at.eq(c.expires_at),
            ))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn take_challenge(&self, id: Uuid) -> Result<Option<Challenge>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<(Uuid, i64, OffsetDateTime)> = diesel::delete(
            agent_register_challenges::table.filter(agent_register_challenges::id.eq(id)),
        )
        .returning((
            agent_register_challenges::id,
            agent_register_challenges::answer,
            agent_register_challenges::expires_at,
        ))
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
        Ok(row.map(|(id, answer, expires_at)| Challenge {
            id,
            answer,
            expires_at,
        }))
    }

    async fn insert_registration(&self, new: &NewRegistration) -> Result<(), RepoError> {
        let r = &new.registration;
        let k = &new.key;
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            diesel::insert_into(agent_registrations::table)
                .values((
                    agent_registrations::organization_id.eq(r.org_id.0),
                    agent_registrations::agent_name.eq(&r.agent_name),
                    agent_registrations::agent_email.eq(&r.agent_email),
                    agent_registrations::reason.eq(&r.reason),
                    agent_registrations::timezone.eq(&r.timezone),
                    agent_registrations::contact_email.eq(r.contact_email.as_deref()),
                    agent_registrations::claim_token_hash.eq(new.claim_hash.as_bytes()),
                    agent_registrations::claim_expires_at.eq(r.claim_expires_at),
                    agent_registrations::created_at.eq(r.created_at),
                ))
                .execute(conn)
                .await?;
            diesel::insert_into(agent_keys::table)
                .values((
                    agent_keys::id.eq(k.id),
                    agent_keys::organization_id.eq(k.org_id.0),
                    agent_keys::agent_name.eq(&k.agent_name),
                    agent_keys::key_hash.eq(k.hash.as_bytes()),
                    agent_keys::key_suffix.eq(&k.suffix),
                ))
                .execute(conn)
                .await?;
            Ok::<(), diesel::result::Error>(())
        })
        .await
        .map_err(db_error)
    }

    async fn find_agent_key(
        &self,
        hash: &SecretHash,
    ) -> Result<Option<AgentKeyCredential>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<(Uuid, Uuid, String, bool)> = agent_keys::table
            .filter(agent_keys::key_hash.eq(hash.as_bytes()))
            .select((
                agent_keys::id,
                agent_keys::organization_id,
                agent_keys::agent_name,
                agent_keys::active,
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(row.map(|(id, org, agent_name, active)| AgentKeyCredential {
            id,
            org_id: OrgId(org),
            agent_name,
            active,
        }))
    }

    async fn find_claimable(
        &self,
        claim: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<Registration>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<RegistrationRow> = agent_registrations::table
            .filter(agent_registrations::claim_token_hash.eq(claim.as_bytes()))
            .filter(agent_registrations::claimed_at.is_null())
            .filter(agent_registrations::claim_expires_at.gt(now))
            .select(RegistrationRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        match row {
            Some(row) => Ok(Some(with_org_name(&mut conn, row).await?)),
            None => Ok(None),
        }
    }

    async fn claim(
        &self,
        claim: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<Registration>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<RegistrationRow> = diesel::update(
            agent_registrations::table
                .filter(agent_registrations::claim_token_hash.eq(claim.as_bytes()))
                .filter(agent_registrations::claimed_at.is_null())
                .filter(agent_registrations::claim_expires_at.gt(now)),
        )
        .set(agent_registrations::claimed_at.eq(now))
        .returning(RegistrationRow::as_returning())
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
        let Some(row) = row else {
            return Ok(None);
        };
        Ok(Some(with_org_name(&mut conn, row).await?))
    }

    async fn renew_claim(
        &self,
        org: OrgId,
        claim: &SecretHash,
        expires_at: OffsetDateTime,
    ) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::update(
            agent_registrations::table
                .find(org.0)
                .filter(agent_registrations::claimed_at.is_null()),
        )
        .set((
            agent_registrations::claim_token_hash.eq(claim.as_bytes()),
            agent_registrations::claim_expires_at.eq(expires_at),
        ))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(n == 1)
    }

    async fn set_claimed_by(&self, org: OrgId, user: UserId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::update(agent_registrations::table.find(org.0))
            .set(agent_registrations::claimed_by_id.eq(user.0))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn unclaim(&self, org: OrgId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        diesel::update(agent_registrations::table.find(org.0))
            .set((
                agent_registrations::claimed_at.eq(None::<OffsetDateTime>),
                agent_registrations::claimed_by_id.eq(None::<Uuid>),
            ))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }
}

/// Postgres implementation of [`AgentHookRepository`]: `agent_webhooks`, the secret sealed with
/// the platform key (bound to its organization and agent name).
#[derive(Clone)]
pub struct PgAgentHooks {
    db: Database,
    key: std::sync::Arc<crate::PlatformSecretKey>,
}

impl PgAgentHooks {
    pub fn new(db: Database, key: crate::PlatformSecretKey) -> Self {
        PgAgentHooks {
            db,
            key: std::sync::Arc::new(key),
        }
    }

    fn aad(org: OrgId, agent_name: &str) -> Vec<u8> {
        let mut aad = b"agent_webhooks:".to_vec();
        aad.extend_from_slice(org.0.as_bytes());
        aad.extend_from_slice(agent_name.as_bytes());
        aad
    }

    fn hook_from(&self, row: HookRow) -> Result<AgentHook, RepoError> {
        let org = OrgId(row.organization_id);
        let secret = match row.secret_sealed {
            None => None,
            Some(sealed) => Some(
                self.key
                    .open_bytes(&Self::aad(org, &row.agent_name), &sealed)
                    .and_then(|b| String::from_utf8(b).ok())
                    .map(SecretText::new)
                    .ok_or_else(|| {
                        RepoError::Other(format!(
                            "the webhook secret of agent {} does not open with the configured key",
                            row.agent_name
                        ))
                    })?,
            ),
        };
        Ok(AgentHook {
            org_id: org,
            agent_name: row.agent_name,
            url: row.url,
            secret,
            updated_at: row.updated_at,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = agent_webhooks, check_for_backend(Pg))]
struct HookRow {
    organization_id: Uuid,
    agent_name: String,
    url: String,
    secret_sealed: Option<Vec<u8>>,
    updated_at: OffsetDateTime,
}

#[async_trait]
impl AgentHookRepository for PgAgentHooks {
    async fn set_hook(&self, hook: &AgentHook) -> Result<(), RepoError> {
        let sealed = match &hook.secret {
            None => None,
            Some(s) => Some(
                self.key
                    .seal_bytes(
                        &Self::aad(hook.org_id, &hook.agent_name),
                        s.expose().as_bytes(),
                    )
                    .map_err(|_| RepoError::Other("a webhook secret could not be sealed".into()))?,
            ),
        };
        let mut conn = self.db.conn().await?;
        diesel::insert_into(agent_webhooks::table)
            .values((
                agent_webhooks::organization_id.eq(hook.org_id.0),
                agent_webhooks::agent_name.eq(&hook.agent_name),
                agent_webhooks::url.eq(&hook.url),
                agent_webhooks::secret_sealed.eq(&sealed),
                agent_webhooks::updated_at.eq(hook.updated_at),
            ))
            .on_conflict((agent_webhooks::organization_id, agent_webhooks::agent_name))
            .do_update()
            .set((
                agent_webhooks::url.eq(&hook.url),
                agent_webhooks::secret_sealed.eq(&sealed),
                agent_webhooks::updated_at.eq(hook.updated_at),
            ))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn delete_hook(&self, org: OrgId, agent_name: &str) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::delete(
            agent_webhooks::table
                .filter(agent_webhooks::organization_id.eq(org.0))
                .filter(agent_webhooks::agent_name.eq(agent_name)),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(n > 0)
    }

    async fn hook(&self, org: OrgId, agent_name: &str) -> Result<Option<AgentHook>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<HookRow> = agent_webhooks::table
            .filter(agent_webhooks::organization_id.eq(org.0))
            .filter(agent_webhooks::agent_name.eq(agent_name))
            .select(HookRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        row.map(|r| self.hook_from(r)).transpose()
    }

    async fn push_work(
        &self,
        org: OrgId,
        message: Uuid,
    ) -> Result<Option<(AgentMessage, AgentHook)>, RepoError> {
        let mut conn = self.db.conn().await?;
        let found: Option<(MessageRow, HookRow)> = agent_messages::table
            .inner_join(
                agent_webhooks::table.on(agent_webhooks::organization_id
                    .eq(agent_messages::organization_id)
                    .and(agent_webhooks::agent_name.eq(agent_messages::agent_name))),
            )
            .filter(agent_messages::organization_id.eq(org.0))
            .filter(agent_messages::id.eq(message))
            .select((MessageRow::as_select(), HookRow::as_select()))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        match found {
            None => Ok(None),
            Some((m, h)) => Ok(Some((AgentMessage::try_from(m)?, self.hook_from(h)?))),
        }
    }
}
