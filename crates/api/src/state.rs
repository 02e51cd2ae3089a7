//! The composition root: builds the adapters (Postgres, caches, the in-process rate limiter) and
//! hands them to the domain services. Handlers see only services and settings.

use std::sync::Arc;
use std::time::Duration;

use teamcomm_agents::{
    AgentHookWorker, AgentPorts, AgentService, AgentSettings, HookPorts, HookRunSummary,
};
use teamcomm_cache::{
    CheckinCache, KeyCredentialCache, OrgSnapshotCache, PeoplePageCache, PlanBoardCache, WriteEpoch,
};
use teamcomm_checkin_engine::{Engine, EnginePorts, TickSummary};
use teamcomm_forms::TemplateService;
use teamcomm_forms::checkins::{CheckinRepository, CheckinService};
use teamcomm_forms::forms::FormService;
use teamcomm_kernel::{Error, OrgId, Readiness, RepoError, SharedClock, SystemClock};
use teamcomm_keys::{DailyThrottle, KeyService, RateLimiter, RateLimits, UsageTracker};
use teamcomm_kudos::KudosService;
use teamcomm_labels::{FeaturedService, LabelService};
use teamcomm_mail::SmtpMailer;
use teamcomm_messaging::cursors::PollCursors;
use teamcomm_messaging::mail::Mailer;
use teamcomm_messaging::platform::{InboundEvent, PlatformKind};
use teamcomm_messaging::ports::{PlatformConnector, PlatformDirectory};
use teamcomm_messaging::{
    ChannelService, DeliveryWorker, EmailService, MessagingPorts, MessagingService,
    PlatformConnectionService, RunSummary, WorkerPorts, WorkerSettings,
};
use teamcomm_org::{
    InvitationService, MoodService, OrgRepository, OrganizationService, PeopleService, TeamService,
};
use teamcomm_ratelimit_redis::RedisRateLimiter;
use teamcomm_store_pg::PgWorkflowRepository;
use teamcomm_store_pg::PlatformSecretKey;
use teamcomm_store_pg::{
    Database, PgChannelRepository, PgInvitationRepository, PgKeyRepository, PgMoodRepository,
    PgOrgRepository, PgPollCursors, PgRoundRepository, PgTeamRepository, PgTemplateRepository,
};
use teamcomm_store_pg::{PgAgentHooks, PgAgentRepository};
use teamcomm_store_pg::{PgCheckinRepository, PgFormRepository, PgKudosRepository};
use teamcomm_store_pg::{PgFeaturedRepository, PgLabelRepository, PgLabelledEntities};
use teamcomm_store_pg::{PgWebhookDeliveries, PgWebhookRepository};
use teamcomm_webhook_http::{HttpWebhookSender, SenderSettings};
use teamcomm_webhooks::{
    AllowList, DeliverySettings, WebhookPorts, WebhookRunSummary, WebhookSender, WebhookService,
    WebhookWorker, WebhookWorkerPorts,
};
use teamcomm_workflows::{
    RunnerPorts, RunnerSettings, RunnerSummary, WorkflowPorts, WorkflowRunner, WorkflowService,
};

use crate::config::Settings;
use crate::dns::DnsResolver;
use crate::jwt::JwtKeys;
use crate::messaging::{ChatConnector, MessagingStores, NoMailRelay};
use crate::ratelimit::InProcessRateLimiter;

/// Everything a handler may need, cheap to clone (all `Arc`s inside).
#[derive(Clone)]
pub struct AppState {
    pub keys: KeyService,
    /// The CLI's one-time-code login.
    pub login: teamcomm_keys::LoginService,
    pub organizations: OrganizationService,
    pub people: PeopleService,
    pub teams: TeamService,
    pub invitations: InvitationService,
    pub moods: MoodService,
    pub kudos: KudosService,
    pub checkins: CheckinService,
    pub forms: FormService,
    pub templates: TemplateService,
    pub channels: ChannelService,
    pub labels: LabelService,
    /// The Plan (Beta) area.
    pub plan: teamcomm_plan::Plan,
    pub featured: FeaturedService,
    /// Workflows (`/v1/workflows/`): authoring, triggers, runs.
    pub workflows: WorkflowService,
    /// Executes queued workflow runs, one pass per [`AppState::run_workflows`].
    pub workflow_runner: WorkflowRunner,
    /// The agent doors: reports, health, messages, registration and claims.
    pub agents: AgentService,
    /// Pushes agent messages to their agents' webhooks, one pass per
    /// [`AppState::push_agent_messages_at`].
    pub agent_hook_worker: AgentHookWorker,
    /// Webhook endpoints (`/v1/webhooks/`, `/v1/webhook-subscription/`).
    pub webhooks: WebhookService,
    /// Relays outbox events to webhook deliveries and delivers them, one pass per
    /// [`AppState::deliver_webhooks`].
    pub webhook_worker: WebhookWorker,
    /// Bot messages: send-message, their status, open-conversation.
    pub messages: MessagingService,
    pub emails: EmailService,
    /// The operator's platform connections and people's platform identities.
    pub platforms: PlatformConnectionService,
    /// The CLI assistant (`POST /v1/cli/chat/completions/`) and its per-credential budget.
    pub assistant: teamcomm_assistant::AssistantService,
    pub assistant_budget: Arc<crate::routes::cli::AssistantBudget>,
    /// Delivers queued messages and e-mails, one pass per [`AppState::deliver_due`].
    pub delivery: DeliveryWorker,
    /// Runs check-in rounds: one pass per [`AppState::tick_checkins`]; takes platform replies.
    pub checkin_engine: Engine,
    /// Web-session tokens.
    pub jwt: JwtKeys,
    /// Hourly budgets per credential and scope.
    pub rate_limits: RateLimits,
    /// Free-plan daily limits per organization (counted in Postgres).
    pub daily: DailyThrottle,
    /// What `GET /metrics` shows.
    pub metrics: crate::metrics::Metrics,
    /// What the readiness probe asks.
    pub readiness: Arc<dyn Readiness>,
    pub settings: Arc<Settings>,
    clock: SharedClock,
    /// Where replies are polled from: the connections, and their platform clients.
    directory: Arc<dyn PlatformDirectory>,
    connector: Arc<dyn PlatformConnector>,
    /// Where each organization's last reply poll ended.
    cursors: Arc<dyn PollCursors>,
}

/// The hourly budgets' store: Redis when `TEAMCOMM_REDIS_URL` is set (shared by every server
/// process; a check Redis cannot answer is let through and counted in the metrics), else this
/// process's memory.
fn rate_limiter(settings: &Settings, metrics: &crate::metrics::Metrics) -> Arc<dyn RateLimiter> {
    let Some(url) = &settings.redis_url else {
        return Arc::new(InProcessRateLimiter::default());
    };
    let metrics = metrics.clone();
    match RedisRateLimiter::new(url.expose(), &settings.redis_key_prefix) {
        Ok(limiter) => {
            Arc::new(limiter.on_unavailable(move || metrics.rate_limit_store_unavailable()))
        }
        // The URL was checked with the settings; this is not expected.
        Err(e) => {
            tracing::error!(error = %e, "TEAMCOMM_REDIS_URL unusable: rate limits are per process");
            Arc::new(InProcessRateLimiter::default())
        }
    }
}

/// What one reply poll did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PollSummary {
    /// Organizations polled.
    pub polled: usize,
    /// Inbound events read.
    pub events: usize,
    /// Replies the check-in engine took as answers.
    pub taken: usize,
    /// What failed (an organization's poll, a reply); the next poll goes on.
    pub failures: Vec<String>,
}

impl AppState {
    /// Wires the Postgres adapters, behind their caches, into the domain services.
    pub fn new(db: Database, settings: Settings) -> Self {
        // Both candidate secrets are at least MIN_CONFIGURED_SECRET_LEN long (config.rs).
        let key = PlatformSecretKey::derive(settings.platform_secret_key.expose().as_bytes())
            .expect("the configured platform secret key is long enough");
        let stores = MessagingStores::in_database(&db, key);
        let clock: SharedClock = Arc::new(SystemClock);
        // Organizations and people: Postgres, under the people-page cache, under the plan
        // snapshot cache. Every reader and writer gets the outer one, so each cache sees the
        // writes it must forget; people writes also advance the epoch that ends cached API-key
        // credentials (their owners).
        let credentials_epoch = WriteEpoch::default();
        let people_pages: Arc<dyn OrgRepository> = Arc::new(
            PeoplePageCache::new(
                Arc::new(PgOrgRepository::new(db.clone())),
                settings.directory_cache_ttl,
            )
            .with_people_epoch(credentials_epoch.clone()),
        );
        let orgs = Arc::new(OrgSnapshotCache::new(people_pages, settings.plan_cache_ttl));
        let teams = Arc::new(PgTeamRepository::new(db.clone()));
        let keys = KeyService::new(
            Arc::new(KeyCredentialCache::new(
                Arc::new(PgKeyRepository::new(db.clone())),
                settings.key_cache_ttl,
                credentials_epoch,
            )),
            orgs.clone(),
            orgs.clone(),
            Arc::new(UsageTracker::default()),
            clock.clone(),
        );
        let channels = Arc::new(PgChannelRepository::new(db.clone()));
        let connector: Arc<dyn PlatformConnector> = Arc::new(ChatConnector::default());
        let mailer: Arc<dyn Mailer> = match settings.smtp.as_ref().map(SmtpMailer::new) {
            Some(Ok(smtp)) => Arc::new(smtp),
            // Settings::from_vars built the same mailer once already: this is not reached.
            Some(Err(e)) => {
                tracing::error!(error = %e, "the SMTP relay cannot be used; e-mails will fail");
                Arc::new(NoMailRelay)
            }
            None => Arc::new(NoMailRelay),
        };
        let login = teamcomm_keys::LoginService::new(
            Arc::new(teamcomm_store_pg::PgLoginCodes::new(db.clone())),
            Arc::new(PgKeyRepository::new(db.clone())),
            Arc::new(crate::login_mail::BackgroundLoginMailer::new(
                mailer.clone(),
            )),
            clock.clone(),
        );
        let messages = MessagingService::new(MessagingPorts {
            messages: stores.messages.clone(),
            people: orgs.clone(),
            teams: teams.clone(),
            channels: channels.clone(),
            directory: stores.directory.clone(),
            connector: connector.clone(),
            clock: clock.clone(),
        });
        let delivery = DeliveryWorker::new(
            WorkerPorts {
                queue: stores.queue.clone(),
                messages: stores.messages.clone(),
                emails: stores.emails.clone(),
                directory: stores.directory.clone(),
                connector: connector.clone(),
                mailer,
            },
            WorkerSettings {
                lease: time::Duration::try_from(settings.worker_lease)
                    .expect("TEAMCOMM_WORKER_LEASE_SECS is at most a day"),
                concurrency: settings.worker_concurrency,
                ..WorkerSettings::default()
            },
        );
        // Check-ins: one store (Postgres under the check-in cache) for the service and the
        // engine, so what the engine reads is what the service wrote.
        let checkin_store: Arc<dyn CheckinRepository> = Arc::new(CheckinCache::new(
            Arc::new(PgCheckinRepository::new(db.clone())),
            settings.checkin_cache_ttl,
        ));
        let checkins = CheckinService::new(
            checkin_store.clone(),
            orgs.clone(),
            teams.clone(),
            channels.clone(),
            Arc::new(PgTemplateRepository::new(db.clone())),
            clock.clone(),
        );
        // PgRoundRepository is both the rounds and the schedule the engine reads.
        let rounds = Arc::new(PgRoundRepository::new(db.clone()));
        let checkin_engine = Engine::new(EnginePorts {
            rounds: rounds.clone(),
            scheduled: rounds,
            checkin_store,
            checkins: checkins.clone(),
            people: orgs.clone(),
            messaging: messages.clone(),
            messages: stores.messages.clone(),
            directory: stores.directory.clone(),
        });
        // The CLI assistant: the configured model (none: every question is 503), sessions in
        // Postgres, the caller's own data read through the check-in and kudos services.
        let assistant = teamcomm_assistant::AssistantService::new(
            settings.llm.clone().map(|llm| {
                Arc::new(
                    teamcomm_llm_http::HttpLanguageModel::new(llm)
                        .expect("the language-model HTTP client builds (rustls, no system config)"),
                ) as Arc<dyn teamcomm_assistant::LanguageModel>
            }),
            Arc::new(teamcomm_store_pg::PgConversationRepository::new(db.clone())),
            Arc::new(teamcomm_assistant::context::ServicesContext {
                checkins: checkins.clone(),
                kudos: KudosService::new(
                    Arc::new(PgKudosRepository::new(db.clone())),
                    orgs.clone(),
                    teams.clone(),
                    clock.clone(),
                ),
                clock: clock.clone(),
            }),
            clock.clone(),
        );
        // Webhooks: one endpoint store and one sender for the service (samples) and the worker.
        let webhook_endpoints = Arc::new(PgWebhookRepository::new(
            db.clone(),
            PlatformSecretKey::derive(settings.platform_secret_key.expose().as_bytes())
                .expect("the configured platform secret key is long enough"),
        ));
        let webhook_deliveries = Arc::new(PgWebhookDeliveries::new(
            db.clone(),
            (*webhook_endpoints).clone(),
        ));
        let webhook_sender: Arc<dyn WebhookSender> = Arc::new(
            HttpWebhookSender::new(
                Arc::new(DnsResolver),
                AllowList::new(&settings.webhook_allow_insecure_hosts),
                SenderSettings::default(),
            )
            .expect("the webhook HTTP client builds (rustls, no system config)"),
        );
        let webhook_worker = WebhookWorker::new(
            WebhookWorkerPorts {
                queue: stores.queue.clone(),
                deliveries: webhook_deliveries.clone(),
                endpoints: webhook_endpoints.clone(),
                sender: webhook_sender.clone(),
            },
            DeliverySettings::default(),
        );
        let workflow_store = Arc::new(PgWorkflowRepository::new(db.clone()));
        let workflow_runner = WorkflowRunner::new(
            RunnerPorts {
                queue: stores.queue.clone(),
                workflows: workflow_store.clone(),
                messages: messages.clone(),
                emails: EmailService::new(stores.emails.clone(), orgs.clone(), clock.clone()),
                sender: webhook_sender.clone(),
            },
            AllowList::new(&settings.webhook_allow_insecure_hosts),
            RunnerSettings::default(),
        );
        let metrics = crate::metrics::Metrics::new(db.clone());
        let agent_store = Arc::new(PgAgentRepository::new(db.clone()));
        let agent_hooks = Arc::new(PgAgentHooks::new(
            db.clone(),
            PlatformSecretKey::derive(settings.platform_secret_key.expose().as_bytes())
                .expect("the configured platform secret key is long enough"),
        ));
        let agents = AgentService::new(
            AgentPorts {
                agents: agent_store.clone(),
                registrations: agent_store,
                people: orgs.clone(),
                orgs: orgs.clone(),
                hooks: agent_hooks.clone(),
                clock: clock.clone(),
            },
            AgentSettings {
                app_url: settings.app_url.clone(),
                email_domain: agent_email_domain(&settings.app_url),
                webhook_allow: AllowList::new(&settings.webhook_allow_insecure_hosts),
            },
        );
        let agent_hook_worker = AgentHookWorker::new(HookPorts {
            queue: stores.queue.clone(),
            hooks: agent_hooks,
            sender: webhook_sender.clone(),
        });
        AppState {
            agents,
            agent_hook_worker,
            checkin_engine,
            messages,
            emails: EmailService::new(stores.emails.clone(), orgs.clone(), clock.clone()),
            platforms: PlatformConnectionService::new(stores.directory.clone(), orgs.clone()),
            delivery,
            keys,
            login,
            organizations: OrganizationService::new(orgs.clone(), clock.clone()),
            people: PeopleService::new(orgs.clone(), clock.clone()),
            teams: TeamService::new(
                orgs.clone(),
                teams.clone(),
                Arc::new(PgInvitationRepository::new(db.clone())),
                clock.clone(),
            ),
            kudos: KudosService::new(
                Arc::new(PgKudosRepository::new(db.clone())),
                orgs.clone(),
                teams.clone(),
                clock.clone(),
            ),
            checkins,
            forms: FormService::new(
                Arc::new(PgFormRepository::new(db.clone())),
                orgs.clone(),
                teams.clone(),
                Arc::new(PgChannelRepository::new(db.clone())),
                clock.clone(),
            ),
            invitations: InvitationService::new(
                orgs.clone(),
                teams.clone(),
                Arc::new(PgInvitationRepository::new(db.clone())),
            ),
            moods: MoodService::new(Arc::new(PgMoodRepository::new(db.clone())), clock.clone()),
            templates: TemplateService::new(Arc::new(PgTemplateRepository::new(db.clone()))),
            channels: ChannelService::new(channels).with_platforms(
                stores.directory.clone(),
                connector.clone(),
                clock.clone(),
                teamcomm_messaging::PLATFORM_CHANNELS_REFRESH,
            ),
            labels: LabelService::new(
                Arc::new(PgLabelRepository::new(db.clone())),
                Arc::new(PgLabelledEntities::new(db.clone())),
            ),
            plan: teamcomm_plan::Plan::new(teamcomm_plan::PlanPorts {
                projects: Arc::new(teamcomm_store_pg::PgProjects::new(db.clone())),
                // Boards and their columns, which every task request resolves, under their
                // cache; task writes check both again in PostgreSQL (`PlanBoardCache`).
                boards: Arc::new(PlanBoardCache::new(
                    Arc::new(teamcomm_store_pg::PgBoards::new(db.clone())),
                    settings.plan_board_cache_ttl,
                )),
                tasks: Arc::new(teamcomm_store_pg::PgTasks::new(db.clone())),
                social: Arc::new(teamcomm_store_pg::PgTaskSocial::new(db.clone())),
                idempotency: Arc::new(teamcomm_store_pg::PgIdempotency::new(db.clone())),
                people: orgs.clone(),
                teams: teams.clone(),
                labels: Arc::new(PgLabelRepository::new(db.clone())),
                clock: clock.clone(),
            }),
            assistant,
            assistant_budget: Arc::new(crate::routes::cli::AssistantBudget::default()),
            webhooks: WebhookService::new(
                WebhookPorts {
                    endpoints: webhook_endpoints.clone(),
                    resolver: Arc::new(DnsResolver),
                    sender: webhook_sender.clone(),
                    deliveries: webhook_deliveries.clone(),
                    objects: Arc::new(PgLabelledEntities::new(db.clone())),
                    clock: clock.clone(),
                },
                AllowList::new(&settings.webhook_allow_insecure_hosts),
            ),
            webhook_worker,
            workflow_runner,
            featured: FeaturedService::new(
                Arc::new(PgFeaturedRepository::new(db.clone())),
                Arc::new(PgLabelledEntities::new(db.clone())),
            ),
            workflows: WorkflowService::new(
                WorkflowPorts {
                    workflows: workflow_store,
                    clock: clock.clone(),
                },
                AllowList::new(&settings.webhook_allow_insecure_hosts),
            ),
            jwt: JwtKeys::new(
                settings.jwt_secret.expose(),
                settings.jwt_access_ttl,
                settings.jwt_refresh_ttl,
            ),
            rate_limits: RateLimits::new(
                settings.rate_quotas.clone(),
                rate_limiter(&settings, &metrics),
            ),
            daily: DailyThrottle::new(
                Arc::new(teamcomm_store_pg::PgDailyCounters::new(db.clone())),
                clock.clone(),
            ),
            metrics,
            readiness: Arc::new(db.clone()),
            settings: Arc::new(settings),
            clock,
            directory: stores.directory.clone(),
            connector,
            cursors: Arc::new(PgPollCursors::new(db.clone())),
        }
    }

    /// One delivery pass: claims the due message and e-mail jobs and runs each once (the
    /// server calls it on every tick; several servers share the queue).
    pub async fn deliver_due(&self) -> Result<RunSummary, RepoError> {
        // The backoff's full jitter spreads the retries of jobs that failed together.
        let mut jitter = || rand::random::<f64>();
        let summary = self
            .delivery
            .run_once(self.clock.now(), &mut jitter)
            .await?;
        self.metrics.delivery_pass(&summary);
        Ok(summary)
    }

    /// One webhook pass at the clock's instant ([`AppState::deliver_webhooks_at`]).
    pub async fn deliver_webhooks(&self) -> Result<WebhookRunSummary, RepoError> {
        self.deliver_webhooks_at(self.clock.now()).await
    }

    /// One webhook pass at `now`: fans the new outbox events out to deliveries, then claims
    /// the due webhook jobs and sends each once (the server calls it on every delivery tick;
    /// tests pass a later `now` to reach the retries).
    pub async fn deliver_webhooks_at(
        &self,
        now: time::OffsetDateTime,
    ) -> Result<WebhookRunSummary, RepoError> {
        self.webhook_worker.relay(now).await?;
        let mut jitter = || rand::random::<f64>();
        self.webhook_worker.run_once(now, &mut jitter).await
    }

    /// One pass of agent-webhook pushes at the clock's instant.
    pub async fn push_agent_messages(&self) -> Result<HookRunSummary, RepoError> {
        self.push_agent_messages_at(self.clock.now()).await
    }

    /// One pass of agent-webhook pushes at `now` (the server calls it on every delivery tick;
    /// tests pass a later `now` to reach the retries).
    pub async fn push_agent_messages_at(
        &self,
        now: time::OffsetDateTime,
    ) -> Result<HookRunSummary, RepoError> {
        let mut jitter = || rand::random::<f64>();
        self.agent_hook_worker.run_once(now, &mut jitter).await
    }

    /// One workflow pass at the clock's instant ([`AppState::run_workflows_at`]).
    pub async fn run_workflows(&self) -> Result<RunnerSummary, RepoError> {
        self.run_workflows_at(self.clock.now()).await
    }

    /// One workflow pass at `now`: claims the due runs (queued by triggers, and by the relay
    /// of [`AppState::deliver_webhooks_at`] for events) and executes their actions (the server
    /// calls it on every delivery tick; tests pass a later `now` to reach the retries).
    pub async fn run_workflows_at(
        &self,
        now: time::OffsetDateTime,
    ) -> Result<RunnerSummary, RepoError> {
        let mut jitter = || rand::random::<f64>();
        self.workflow_runner.run_once(now, &mut jitter).await
    }

    /// One pass of the check-in engine at the clock's instant: opens the rounds due and asks
    /// their questions, sends reminders, finishes the days whose report is due (the server
    /// calls it every `TEAMCOMM_CHECKIN_TICK_SECS`; several servers may tick at once).
    pub async fn tick_checkins(&self) -> Result<TickSummary, Error> {
        self.checkin_engine.tick(self.clock.now()).await
    }

    /// Hands one inbound platform event of `org` (connected as `kind`) to what listens for
    /// them: the check-in engine ([`Engine::take_reply`]). Both intakes go through it: the
    /// Matrix reply loop ([`AppState::poll_replies`]) and Slack's events
    /// (`routes::integrations`). Answers whether the event was taken as an answer; taking the
    /// same reply again (a re-read batch, a retried push) takes nothing.
    pub async fn take_inbound(
        &self,
        org: OrgId,
        kind: PlatformKind,
        event: &InboundEvent,
    ) -> Result<bool, Error> {
        Ok(self
            .checkin_engine
            .take_reply(org, kind, event, self.clock.now())
            .await?
            .is_some())
    }

    /// One poll of the replies on the platform of every organization connected to Matrix
    /// (Slack pushes its events instead): each inbound event goes to [`AppState::take_inbound`].
    /// Each organization's poll starts where its last one ended ([`PollCursors`], stored, so a
    /// restart resumes there; an organization never polled starts from now). The batch's
    /// cursor is saved only once all its events were handed over: when one fails on the
    /// server's side, the cursor stays and the next poll reads the batch again (the engine
    /// takes a reply once). A poll waits at most `wait` for the first event.
    pub async fn poll_replies(&self, wait: Duration) -> Result<PollSummary, Error> {
        let kind = PlatformKind::Matrix;
        let orgs = self.directory.connected_orgs(kind).await?;
        let mut summary = PollSummary::default();
        for org in orgs {
            let connection = match self.directory.connection(org).await {
                Ok(Some(c)) if c.kind == kind => c,
                Ok(_) => continue,
                Err(e) => {
                    summary.failures.push(format!("connection of {org}: {e}"));
                    continue;
                }
            };
            let cursor = match self.cursors.poll_cursor(org, kind).await {
                Ok(cursor) => cursor,
                Err(e) => {
                    summary.failures.push(format!("poll cursor of {org}: {e}"));
                    continue;
                }
            };
            let batch = match self.connector.connect(&connection) {
                Ok(platform) => platform.poll(cursor.as_deref(), wait).await,
                Err(e) => Err(e),
            };
            let batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    summary.failures.push(format!("polling {org}: {e}"));
                    continue;
                }
            };
            summary.polled += 1;
            summary.events += batch.events.len();
            let mut handed_over = true;
            for event in &batch.events {
                match self.take_inbound(org, kind, event).await {
                    Ok(true) => summary.taken += 1,
                    Ok(false) => {}
                    Err(e) => {
                        // A server-side failure (the database, a fenced write lost) may pass:
                        // the batch is read again. A refusal would be refused again: moving on
                        // keeps one bad event from holding the organization's replies back.
                        handed_over &= e.status() < 500;
                        summary.failures.push(format!("a reply in {org}: {e}"));
                    }
                }
            }
            if !handed_over || cursor.as_deref() == Some(batch.next_cursor.as_str()) {
                continue;
            }
            if let Err(e) = self
                .cursors
                .save_poll_cursor(org, kind, &batch.next_cursor, self.clock.now())
                .await
            {
                summary
                    .failures
                    .push(format!("saving the cursor of {org}: {e}"));
            }
        }
        Ok(summary)
    }

    /// Writes pending last-usage instants to the database (called periodically and on shutdown).
    pub async fn flush_key_usage(&self) {
        if let Err(e) = self.keys.flush_usage().await {
            tracing::warn!(error = %e, "could not record key usage; will retry");
        }
    }
}

/// The domain of agents' addresses: `agents.<host of the application address>`.
fn agent_email_domain(app_url: &str) -> String {
    let rest = app_url.split_once("://").map_or(app_url, |(_, r)| r);
    let host = rest.split(['/', ':', '?', '#']).next().unwrap_or_default();
    let host = if host.is_empty() { "localhost" } else { host };
    format!("agents.{host}")
}
