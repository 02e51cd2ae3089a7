//! The agent doors' rules: reports, health checks, messages, registration and claims.

use std::sync::Arc;

use rand::Rng;
use serde_json::{Map, Value};
use teamcomm_kernel::jobs::{JobKind, NewJob};
use teamcomm_kernel::{Error, ErrorCode, OrgId, RepoError, SharedClock, UserId};
use teamcomm_keys::{OrgSnapshots, Secret, SecretKind, invalid_credentials};
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Organization, User, normalize_email};
use teamcomm_webhooks::guard::parse_destination;
use teamcomm_webhooks::{AllowList, SecretText};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::{
    Actor, AgentCaller, AgentHealth, AgentHook, AgentHookRepository, AgentKeyCredential,
    AgentMessage, AgentReport, AgentRepository, Challenge, Claimed, CoAuthor, HOOK_ATTEMPTS,
    HealthCheck, HookInput, IssuedChallenge, MessageFilter, MessageInput, MessageType, NewAgentKey,
    NewRegistration, RegisterInput, Registered, Registration, RegistrationRepository, ReportInput,
    SenderType,
};

/// The longest agent name, in characters (spec "Limits").
pub const MAX_AGENT_NAME: usize = 128;
/// The longest report or message content, in characters.
pub const MAX_CONTENT: usize = 10_000;
/// The largest `structured` or `metadata` object, serialized.
pub const MAX_OBJECT_BYTES: usize = 16 * 1024;
/// The most co-authors of one report.
pub const MAX_CO_AUTHORS: usize = 20;
/// The longest health message, in characters.
pub const MAX_HEALTH_MESSAGE: usize = 1_000;
/// How many past checks a health answer shows.
pub const HEALTH_HISTORY: usize = 20;
/// The most messages a listing answers (newest kept).
pub const MAX_LISTED_MESSAGES: usize = 200;
/// The most ids one read mark takes.
pub const MAX_READ_IDS: usize = 100;
/// How long a registration riddle may be answered.
pub const CHALLENGE_TTL: Duration = Duration::minutes(10);
/// The multiplier of the riddle (`session is <N>.` → `N × 52`, as the vendor's CLI computes).
pub const CHALLENGE_FACTOR: i64 = 52;
/// How long a claim link works.
pub const CLAIM_TTL: Duration = Duration::days(30);
/// The longest organization name and registration reason, in characters.
pub const MAX_ORG_NAME: usize = 100;
pub const MAX_REASON: usize = 500;

/// What the service is wired to.
#[derive(Clone)]
pub struct AgentPorts {
    pub agents: Arc<dyn AgentRepository>,
    pub registrations: Arc<dyn RegistrationRepository>,
    /// Co-authors, and the organization and first admin that registration and claims create.
    pub people: Arc<dyn OrgRepository>,
    /// The organization of an agent key, as authentication reads it.
    pub orgs: Arc<dyn OrgSnapshots>,
    /// Agents' webhooks.
    pub hooks: Arc<dyn AgentHookRepository>,
    pub clock: SharedClock,
}

/// Where links and agent addresses point.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// The web application's address (claim links are `{app_url}/agent/claim/{token}`).
    pub app_url: String,
    /// The domain of the agents' addresses (`agent_email`).
    pub email_domain: String,
    /// Hosts an agent's webhook may reach over plain HTTP or on an internal address (the
    /// webhook setting, for local testing).
    pub webhook_allow: AllowList,
}

/// An authenticated agent key: its organization and its agent.
#[derive(Debug, Clone)]
pub struct AgentPrincipal {
    pub key_id: Uuid,
    pub agent_name: String,
    pub org: Arc<Organization>,
}

#[derive(Clone)]
pub struct AgentService {
    ports: AgentPorts,
    settings: Arc<AgentSettings>,
}

fn repo(e: RepoError) -> Error {
    e.into()
}

/// Trims and checks an agent name (`field` names it in the error).
pub fn agent_name(field: &str, raw: &str) -> Result<String, Error> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(Error::invalid_field(field, "This field may not be blank."));
    }
    if name.chars().count() > MAX_AGENT_NAME {
        return Err(Error::invalid_field(
            field,
            format!("Ensure this field has no more than {MAX_AGENT_NAME} characters."),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::invalid_field(
            field,
            "Agent names are one line without control characters.",
        ));
    }
    Ok(name.to_owned())
}

/// The longest webhook secret, in characters.
pub const MAX_HOOK_SECRET: usize = 1024;

/// A secret sent as a header value: printable ASCII, at most [`MAX_HOOK_SECRET`] characters;
/// blank means none.
fn hook_secret(raw: Option<&str>) -> Result<Option<SecretText>, Error> {
    let Some(secret) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    if secret.len() > MAX_HOOK_SECRET || !secret.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return Err(Error::invalid_field(
            "webhook_secret",
            format!(
                "Use at most {MAX_HOOK_SECRET} printable ASCII characters (it is sent as a header)."
            ),
        ));
    }
    Ok(Some(SecretText::new(secret)))
}

fn text(field: &str, raw: &str, max: usize) -> Result<String, Error> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(Error::invalid_field(field, "This field may not be blank."));
    }
    if t.chars().count() > max {
        return Err(Error::invalid_field(
            field,
            format!("Ensure this field has no more than {max} characters."),
        ));
    }
    Ok(t.to_owned())
}

fn object(field: &str, value: Option<Map<String, Value>>) -> Result<Map<String, Value>, Error> {
    let value = value.unwrap_or_default();
    let size = serde_json::to_vec(&value).map_or(usize::MAX, |v| v.len());
    if size > MAX_OBJECT_BYTES {
        return Err(Error::invalid_field(
            field,
            format!("Ensure this object is at most {MAX_OBJECT_BYTES} bytes of JSON."),
        ));
    }
    Ok(value)
}

impl AgentService {
    pub fn new(ports: AgentPorts, settings: AgentSettings) -> Self {
        AgentService {
            ports,
            settings: Arc::new(settings),
        }
    }

    fn now(&self) -> OffsetDateTime {
        self.ports.clock.now()
    }

    // ------------------------------------------------------------------ reports

    /// Records a report; answers it with the messages waiting for its agent (not marked
    /// delivered: the agent claims them).
    pub async fn report(
        &self,
        caller: &AgentCaller,
        input: ReportInput,
    ) -> Result<(AgentReport, Vec<AgentMessage>), Error> {
        let agent = agent_name("agent_name", &input.agent_name)?;
        let content = text("content", &input.content, MAX_CONTENT)?;
        let structured = object("structured", input.structured)?;
        let metadata = object("metadata", input.metadata)?;
        let co_authors = self.co_authors(caller.org_id, &input.co_authors).await?;
        let report = AgentReport {
            id: Uuid::now_v7(),
            org_id: caller.org_id,
            agent_name: agent,
            content,
            structured,
            metadata,
            is_milestone: input.is_milestone,
            co_authors,
            created_by: caller.user().map(|u| u.id),
            created_at: self.now(),
        };
        self.ports
            .agents
            .insert_report(&report)
            .await
            .map_err(repo)?;
        let pending = self.pending(caller.org_id, &report.agent_name).await?;
        Ok((report, pending))
    }

    /// Resolves co-authors (e-mails or uuids) to active people of the organization.
    async fn co_authors(&self, org: OrgId, raw: &[String]) -> Result<Vec<CoAuthor>, Error> {
        if raw.len() > MAX_CO_AUTHORS {
            return Err(Error::invalid_field(
                "co_authors",
                format!("Ensure this list has at most {MAX_CO_AUTHORS} people."),
            ));
        }
        let mut out: Vec<CoAuthor> = Vec::new();
        for entry in raw {
            let entry = entry.trim();
            let found = if let Ok(id) = Uuid::parse_str(entry) {
                match self.ports.people.get_user(org, UserId(id)).await {
                    Ok(u) => Some(u),
                    Err(RepoError::NotFound) => None,
                    Err(e) => return Err(e.into()),
                }
            } else if let Some(email) = normalize_email(entry) {
                self.ports
                    .people
                    .find_users_by_email(org, &[email])
                    .await
                    .map_err(repo)?
                    .into_iter()
                    .next()
            } else {
                None
            };
            let Some(user) = found.filter(|u| u.is_active) else {
                return Err(Error::invalid_field(
                    "co_authors",
                    format!("\"{entry}\" is not an active person of this organization."),
                ));
            };
            if !out.iter().any(|c| c.id == user.id) {
                out.push(CoAuthor {
                    id: user.id,
                    name: user.full_name(),
                });
            }
        }
        Ok(out)
    }

    // ------------------------------------------------------------------ health

    /// Records a check and marks the agent's pending messages delivered (the vendor CLI's
    /// `agent message claim-all` is a health check); answers the health with those messages.
    pub async fn post_health(
        &self,
        caller: &AgentCaller,
        agent_name_raw: &str,
        ok: bool,
        message: Option<&str>,
    ) -> Result<AgentHealth, Error> {
        let agent = agent_name("agent_name", agent_name_raw)?;
        let message = match message.map(str::trim).filter(|m| !m.is_empty()) {
            Some(m) => Some(text("message", m, MAX_HEALTH_MESSAGE)?),
            None => None,
        };
        let now = self.now();
        let check = HealthCheck {
            id: Uuid::now_v7(),
            org_id: caller.org_id,
            agent_name: agent.clone(),
            ok,
            message,
            created_at: now,
        };
        self.ports
            .agents
            .insert_health(&check)
            .await
            .map_err(repo)?;
        let delivered = self
            .ports
            .agents
            .deliver_pending(caller.org_id, &agent, now)
            .await
            .map_err(repo)?;
        let history = self.history(caller.org_id, &agent).await?;
        Ok(AgentHealth {
            agent_name: agent,
            last: history.first().cloned(),
            history,
            pending_messages: delivered,
        })
    }

    /// The agent's health and the messages waiting for it (nothing is marked).
    pub async fn health(
        &self,
        caller: &AgentCaller,
        agent_name_raw: &str,
    ) -> Result<AgentHealth, Error> {
        let agent = agent_name("agent_name", agent_name_raw)?;
        let history = self.history(caller.org_id, &agent).await?;
        let pending = self.pending(caller.org_id, &agent).await?;
        Ok(AgentHealth {
            agent_name: agent,
            last: history.first().cloned(),
            history,
            pending_messages: pending,
        })
    }

    async fn history(&self, org: OrgId, agent: &str) -> Result<Vec<HealthCheck>, Error> {
        self.ports
            .agents
            .health_history(org, agent, HEALTH_HISTORY)
            .await
            .map_err(repo)
    }

    async fn pending(&self, org: OrgId, agent: &str) -> Result<Vec<AgentMessage>, Error> {
        let filter = MessageFilter {
            agent_name: Some(agent.to_owned()),
            delivered: Some(false),
        };
        self.ports
            .agents
            .list_messages(org, &filter, self.now(), MAX_LISTED_MESSAGES)
            .await
            .map_err(repo)
    }

    // ------------------------------------------------------------------ messages

    /// Leaves a message for an agent. The sender defaults to the caller: a person's name
    /// (`user`) or the agent key's agent (`agent`).
    pub async fn send_message(
        &self,
        caller: &AgentCaller,
        input: MessageInput,
    ) -> Result<AgentMessage, Error> {
        let agent = agent_name("agent_name", &input.agent_name)?;
        let content = text("content", &input.content, MAX_CONTENT)?;
        let message_type = match input.message_type.as_deref().map(str::trim) {
            None | Some("") => MessageType::Text,
            Some(t) => MessageType::parse(t).ok_or_else(|| {
                Error::invalid_field(
                    "message_type",
                    format!("\"{t}\" is not a valid choice; use text, command or system."),
                )
            })?,
        };
        let metadata = object("metadata", input.metadata)?;
        let now = self.now();
        if input.expires_at.is_some_and(|at| at <= now) {
            return Err(Error::invalid_field(
                "expires_at",
                "The expiry must be in the future.",
            ));
        }
        let sender_name = match input.sender_name.as_deref().map(str::trim) {
            Some(n) if !n.is_empty() => Some(agent_name("sender_name", n)?),
            _ => None,
        };
        let sender_type = match input.sender_type.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(t) => Some(SenderType::parse(t).ok_or_else(|| {
                Error::invalid_field(
                    "sender_type",
                    format!("\"{t}\" is not a valid choice; use agent, user or system."),
                )
            })?),
        };
        let (sender_type, sender_name) = match (&caller.actor, sender_type, sender_name) {
            (_, Some(t), name) => (t, name),
            (_, None, Some(name)) => (SenderType::Agent, Some(name)),
            (Actor::Person(u), None, None) => (SenderType::User, Some(u.full_name())),
            (Actor::Agent { agent_name, .. }, None, None) => {
                (SenderType::Agent, Some(agent_name.clone()))
            }
        };
        let message = AgentMessage {
            id: Uuid::now_v7(),
            org_id: caller.org_id,
            agent_name: agent,
            content,
            message_type,
            metadata,
            sender_type,
            sender_name,
            expires_at: input.expires_at,
            delivered_at: None,
            created_at: now,
        };
        let hook = self
            .ports
            .hooks
            .hook(caller.org_id, &message.agent_name)
            .await
            .map_err(repo)?;
        let push = hook.map(|_| NewJob {
            id: Uuid::now_v7(),
            org_id: caller.org_id,
            kind: JobKind::AgentWebhook,
            payload: serde_json::json!({ "message_id": message.id }),
            run_at: now,
            max_attempts: HOOK_ATTEMPTS,
        });
        self.ports
            .agents
            .insert_message(&message, push.as_ref())
            .await
            .map_err(repo)?;
        Ok(message)
    }

    // ------------------------------------------------------------------ webhooks

    /// `POST /v1/agent-webhook/`: sets (or replaces) the agent's webhook; messages left for the
    /// agent from now on are pushed there. The URL passes the webhook destination guard (https,
    /// no internal address); the secret, sent back as `X-Webhook-Secret`, is printable ASCII.
    pub async fn set_webhook(
        &self,
        caller: &AgentCaller,
        input: HookInput,
    ) -> Result<AgentHook, Error> {
        let mut errors = teamcomm_kernel::FieldErrors::new();
        let name = agent_name("agent_name", &input.agent_name);
        errors.note(&name);
        let url = parse_destination(input.webhook_url.trim(), &self.settings.webhook_allow)
            .map(|d| d.url)
            .map_err(|r| Error::invalid_field("webhook_url", r.message()));
        errors.note(&url);
        let secret = hook_secret(input.webhook_secret.as_deref());
        errors.note(&secret);
        errors.finish()?;
        let hook = AgentHook {
            org_id: caller.org_id,
            agent_name: name?,
            url: url?,
            secret: secret?,
            updated_at: self.now(),
        };
        self.ports.hooks.set_hook(&hook).await.map_err(repo)?;
        Ok(hook)
    }

    /// `DELETE /v1/agent-webhook/`: messages are no longer pushed (`not_found` without one).
    pub async fn delete_webhook(&self, caller: &AgentCaller, name: &str) -> Result<String, Error> {
        let name = agent_name("agent_name", name)?;
        if self
            .ports
            .hooks
            .delete_hook(caller.org_id, &name)
            .await
            .map_err(repo)?
        {
            Ok(name)
        } else {
            Err(Error::not_found())
        }
    }

    /// The organization's unexpired messages, oldest first.
    pub async fn list_messages(
        &self,
        caller: &AgentCaller,
        mut filter: MessageFilter,
    ) -> Result<Vec<AgentMessage>, Error> {
        filter.agent_name = match filter.agent_name.as_deref().map(str::trim) {
            Some(n) if !n.is_empty() => Some(agent_name("agent_name", n)?),
            _ => None,
        };
        self.ports
            .agents
            .list_messages(caller.org_id, &filter, self.now(), MAX_LISTED_MESSAGES)
            .await
            .map_err(repo)
    }

    /// Marks messages of the organization delivered; answers how many were pending. Ids of
    /// other organizations' messages, or unknown ones, change nothing.
    pub async fn mark_read(&self, caller: &AgentCaller, ids: &[String]) -> Result<u64, Error> {
        if ids.is_empty() || ids.len() > MAX_READ_IDS {
            return Err(Error::invalid_field(
                "message_ids",
                format!("Send between 1 and {MAX_READ_IDS} message ids."),
            ));
        }
        let mut parsed = Vec::with_capacity(ids.len());
        for id in ids {
            let id = Uuid::parse_str(id.trim()).map_err(|_| {
                Error::invalid_field("message_ids", format!("\"{id}\" is not a valid id."))
            })?;
            if !parsed.contains(&id) {
                parsed.push(id);
            }
        }
        self.ports
            .agents
            .mark_delivered(caller.org_id, &parsed, self.now())
            .await
            .map_err(repo)
    }

    // ------------------------------------------------------------------ agent keys

    /// Resolves an agent key (`tca_…`) to its agent and organization. Agent keys are not
    /// subject to the API-key plan gate: a registered agent's organization is on the free plan.
    pub async fn authenticate(&self, presented: &str) -> Result<AgentPrincipal, Error> {
        let secret = Secret::parse(SecretKind::AgentKey, presented.trim())
            .ok_or_else(invalid_credentials)?;
        let cred: AgentKeyCredential = self
            .ports
            .registrations
            .find_agent_key(&secret.hash())
            .await
            .map_err(repo)?
            .filter(|c| c.active)
            .ok_or_else(invalid_credentials)?;
        let org = self.ports.orgs.organization(cred.org_id).await?;
        Ok(AgentPrincipal {
            key_id: cred.id,
            agent_name: cred.agent_name,
            org,
        })
    }

    // ------------------------------------------------------------------ registration

    /// Issues a riddle: `session is <N>.`, answered `N × 52`, within [`CHALLENGE_TTL`], once.
    pub async fn challenge(&self) -> Result<IssuedChallenge, Error> {
        let n: i64 = rand::rng().random_range(10_000..=99_999);
        let challenge = Challenge {
            id: Uuid::new_v4(),
            answer: n * CHALLENGE_FACTOR,
            expires_at: self.now() + CHALLENGE_TTL,
        };
        self.ports
            .registrations
            .insert_challenge(&challenge)
            .await
            .map_err(repo)?;
        Ok(IssuedChallenge {
            id: challenge.id,
            instruction: format!(
                "Multiply the number of this registration session by the number of weeks in a \
                 year ({CHALLENGE_FACTOR}) and send the product as `answer` within {} minutes. \
                 The number of this session is {n}.",
                CHALLENGE_TTL.whole_minutes()
            ),
            expires_at: challenge.expires_at,
        })
    }

    /// Registers an agent: checks the body, then spends the challenge (single use, right or
    /// wrong), creates a free organization pending a claim, and an agent key for it.
    pub async fn register(&self, input: RegisterInput) -> Result<Registered, Error> {
        let org_name = text("org_name", &input.org_name, MAX_ORG_NAME)?;
        let agent = agent_name("agent_name", &input.agent_name)?;
        let reason = text("reason", &input.reason, MAX_REASON)?;
        let timezone = match input.timezone.as_deref().map(str::trim) {
            None | Some("") => "UTC".to_owned(),
            Some(tz)
                if tz.len() <= 64
                    && tz
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "/_+-".contains(c)) =>
            {
                tz.to_owned()
            }
            Some(_) => {
                return Err(Error::invalid_field(
                    "timezone",
                    "Send an IANA time zone name such as Europe/Madrid.",
                ));
            }
        };
        let contact_email = match input.contact_email.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(raw) => Some(normalize_email(raw).ok_or_else(|| {
                Error::invalid_field("contact_email", "Enter a valid email address.")
            })?),
        };
        let Ok(challenge_id) = Uuid::parse_str(input.challenge_id.trim()) else {
            return Err(challenge_failed());
        };
        let now = self.now();
        let challenge = self
            .ports
            .registrations
            .take_challenge(challenge_id)
            .await
            .map_err(repo)?
            .ok_or_else(challenge_failed)?;
        if challenge.expires_at <= now {
            return Err(Error::new(
                ErrorCode::AgentChallengeExpired,
                "The registration challenge expired; fetch a new one.",
            ));
        }
        if challenge.answer != input.answer {
            return Err(challenge_failed());
        }
        let new_org =
            NewOrganization::new(&org_name, "free", Some(false), Some(false), Some(false))?;
        let org = self
            .ports
            .people
            .create_organization(&new_org)
            .await
            .map_err(repo)?;
        let key = Secret::generate(SecretKind::AgentKey);
        let claim = Secret::generate(SecretKind::ClaimToken);
        let registration = Registration {
            org_id: org.id,
            org_name: org.name.clone(),
            agent_email: self.agent_email(&agent),
            agent_name: agent.clone(),
            reason,
            timezone,
            contact_email,
            claim_expires_at: now + CLAIM_TTL,
            claimed_by: None,
            claimed_at: None,
            created_at: now,
        };
        self.ports
            .registrations
            .insert_registration(&NewRegistration {
                registration: registration.clone(),
                claim_hash: claim.hash(),
                key: NewAgentKey {
                    id: Uuid::now_v7(),
                    org_id: org.id,
                    agent_name: agent,
                    hash: key.hash(),
                    suffix: key.suffix(),
                },
            })
            .await
            .map_err(repo)?;
        Ok(Registered {
            registration,
            api_key: key.expose().to_owned(),
            claim_url: self.claim_url(&claim),
        })
    }

    /// `<slug of the name>-<8 hex>@<domain>`: an identifier of the agent (the service reads
    /// no mail at it).
    fn agent_email(&self, agent: &str) -> String {
        let mut slug = String::new();
        for c in agent.chars() {
            if c.is_ascii_alphanumeric() {
                slug.push(c.to_ascii_lowercase());
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
        }
        let slug = slug.trim_end_matches('-');
        let slug = if slug.is_empty() { "agent" } else { slug };
        let tag = &Uuid::new_v4().simple().to_string()[..8];
        format!(
            "{}-{tag}@{}",
            &slug[..slug.len().min(40)],
            self.settings.email_domain
        )
    }

    /// A fresh claim link for the caller's organization (the agent lost its link): only a
    /// registered agent's key asks, while the organization is unclaimed; the old link dies.
    pub async fn renew_claim(
        &self,
        caller: &AgentCaller,
    ) -> Result<(String, OffsetDateTime), Error> {
        if !matches!(caller.actor, Actor::Agent { .. }) {
            return Err(Error::new(
                ErrorCode::PermissionDenied,
                "Only a registered agent's key asks for a new claim link.",
            ));
        }
        let claim = Secret::generate(SecretKind::ClaimToken);
        let expires_at = self.now() + CLAIM_TTL;
        let renewed = self
            .ports
            .registrations
            .renew_claim(caller.org_id, &claim.hash(), expires_at)
            .await
            .map_err(repo)?;
        if !renewed {
            return Err(Error::new(
                ErrorCode::AgentOrganizationClaimed,
                "This organization is already claimed.",
            ));
        }
        Ok((self.claim_url(&claim), expires_at))
    }

    fn claim_url(&self, claim: &Secret) -> String {
        format!(
            "{}/agent/claim/{}",
            self.settings.app_url.trim_end_matches('/'),
            claim.expose()
        )
    }

    /// What a claim link opens, while it can be claimed (else 404).
    pub async fn preview_claim(&self, token: &str) -> Result<Registration, Error> {
        let secret =
            Secret::parse(SecretKind::ClaimToken, token.trim()).ok_or_else(claim_link_invalid)?;
        self.ports
            .registrations
            .find_claimable(&secret.hash(), self.now())
            .await
            .map_err(repo)?
            .ok_or_else(claim_link_invalid)
    }

    /// A signed-in person takes ownership of a pending organization: they become its first
    /// admin (a person of that organization with their e-mail and name). The link works once.
    pub async fn claim(&self, token: &str, person: &User) -> Result<Claimed, Error> {
        let secret =
            Secret::parse(SecretKind::ClaimToken, token.trim()).ok_or_else(claim_link_invalid)?;
        let registrations = &self.ports.registrations;
        let registration = registrations
            .claim(&secret.hash(), self.now())
            .await
            .map_err(repo)?
            .ok_or_else(claim_link_invalid)?;
        let new_admin = NewUser::new(
            &person.email,
            &person.first_name,
            &person.last_name,
            "admin",
            Some(true),
        );
        let created = match new_admin {
            Ok(new) => self
                .ports
                .people
                .create_user(registration.org_id, &new)
                .await
                .map_err(repo),
            Err(e) => Err(e),
        };
        let admin = match created {
            Ok(admin) => admin,
            Err(e) => {
                registrations
                    .unclaim(registration.org_id)
                    .await
                    .map_err(repo)?;
                return Err(e);
            }
        };
        registrations
            .set_claimed_by(registration.org_id, admin.id)
            .await
            .map_err(repo)?;
        Ok(Claimed {
            registration: Registration {
                claimed_by: Some(admin.id),
                ..registration
            },
            admin,
        })
    }
}

fn challenge_failed() -> Error {
    Error::new(
        ErrorCode::AgentChallengeFailed,
        "The answer to the registration challenge is wrong or the challenge is unknown or used.",
    )
}

fn claim_link_invalid() -> Error {
    Error::new(
        ErrorCode::AgentClaimLinkInvalid,
        "This claim link is unknown, already used or expired.",
    )
}
