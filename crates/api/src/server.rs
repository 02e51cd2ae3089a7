//! Process lifecycle: database preparation, the HTTP(S) server, background flushing, shutdown.

use std::path::Path;

use actix_web::{HttpServer, web};
use anyhow::Context;
use teamcomm_store_pg::{
    Database, StartupError, StartupFailure, create_database_if_missing, run_migrations,
};

use crate::config::{Settings, TlsFiles};
use crate::state::AppState;
use crate::{demo, localpg, openapi};

/// Hides the password of a connection URL for messages.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// Creates the database if missing and applies migrations. When nothing answers at the default
/// `DATABASE_URL` and `local_pg_dir` is given, starts a project-local cluster there instead.
pub async fn prepare_database(
    settings: &mut Settings,
    local_pg_dir: Option<&Path>,
) -> anyhow::Result<Database> {
    if let Err(first) = create_database_if_missing(&settings.database_url).await {
        // Only when nothing answers: a server that refused us is the one the operator meant.
        let fallback = local_pg_dir.filter(|_| {
            first.failure == StartupFailure::Unreachable
                && settings.database_url_is_default
                && localpg::server_binaries().is_some()
        });
        match fallback {
            Some(dir) => {
                tracing::warn!(
                    "no PostgreSQL answers at {}; starting a project-local cluster under {}",
                    redact_url(&settings.database_url),
                    dir.display()
                );
                settings.database_url = localpg::start(dir)?;
                create_database_if_missing(&settings.database_url)
                    .await
                    .context("the project-local PostgreSQL cluster started but does not accept connections")?;
            }
            None => anyhow::bail!(startup_message(&settings.database_url, &first)),
        }
    }
    let applied = run_migrations(&settings.database_url)
        .await
        .context("applying migrations")?;
    for m in &applied {
        tracing::info!(migration = %m, "applied migration");
    }
    Database::connect(&settings.database_url, settings.db_pool_size)
}

/// Runs the server until SIGTERM/SIGINT; in-flight requests drain before exit.
pub async fn serve(
    mut settings: Settings,
    demo_mode: bool,
    local_pg_dir: Option<&Path>,
) -> anyhow::Result<()> {
    let db = prepare_database(&mut settings, local_pg_dir).await?;
    let state = AppState::new(db, settings.clone());

    if demo_mode {
        if let Some(seed) = demo::seed_if_empty(&state).await? {
            println!("{}", demo::banner(&seed, &state.settings.base_url));
        } else {
            tracing::info!("--demo: the database already holds data; nothing seeded");
        }
    }

    let flusher = {
        let state = state.clone();
        let every = settings.usage_flush_interval;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                state.flush_key_usage().await;
                state.rate_limits.housekeeping();
                state.assistant_budget.housekeeping();
            }
        })
    };

    let (stop_delivery, delivery) = spawn_delivery(state.clone());
    let (stop_checkins, checkins) = spawn_checkins(state.clone());
    let (stop_replies, replies) = spawn_replies(state.clone(), REPLY_POLL_PAUSE);

    let doc = web::Data::new(openapi::document());
    let app_state = state.clone();
    let server = HttpServer::new(move || crate::app(app_state.clone(), doc.clone()))
        .workers(settings.workers)
        .shutdown_timeout(30);
    let server = match &settings.tls {
        Some(files) => server.bind_rustls_0_23(settings.listen, tls_config(files)?)?,
        None => server.bind(settings.listen)?,
    };
    let scheme = if settings.tls.is_some() {
        "https"
    } else {
        "http"
    };
    tracing::info!(listen = %settings.listen, base_url = %settings.base_url, "teamcomm listening on {scheme}://{}", settings.listen);
    server.run().await?;

    flusher.abort();
    // The pass under way finishes, so the outcomes it has are recorded; a job it had not
    // reached waits for its lease to expire and is claimed again.
    let _ = stop_delivery.send(true);
    let _ = stop_checkins.send(true);
    let _ = stop_replies.send(true);
    let _ = delivery.await;
    // Every step of a pass cut short is taken again by the next tick (of any server).
    let _ = checkins.await;
    let _ = replies.await;
    state.flush_key_usage().await;
    tracing::info!("stopped");
    Ok(())
}

/// How often the delivery loop forgets the jobs finished longer ago than
/// [`teamcomm_kernel::jobs::FINISHED_JOB_RETENTION`] (at start, then every hour).
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// The delivery worker's loop (messages and e-mails, then webhooks: the outbox relay and
/// the due deliveries): a pass every `TEAMCOMM_WORKER_TICK_MS` (plus up to a quarter of
/// it at random, so servers sharing the queue do not claim in step), at once again after a pass
/// that found work, until `true` is sent on the returned channel. It also prunes finished jobs
/// now and then ([`PRUNE_EVERY`]).
pub fn spawn_delivery(
    state: AppState,
) -> (
    tokio::sync::watch::Sender<bool>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let tick = state.settings.worker_tick;
    let task = tokio::spawn(async move {
        let mut next_prune = tokio::time::Instant::now();
        loop {
            if tokio::time::Instant::now() >= next_prune {
                next_prune += PRUNE_EVERY;
                let now = time::OffsetDateTime::now_utc();
                match state.delivery.prune_finished_jobs(now).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(pruned = n, "forgot finished jobs"),
                    Err(e) => {
                        tracing::warn!(error = %e, "pruning finished jobs failed; will retry")
                    }
                }
                if let Err(e) = state.plan.prune_idempotency().await {
                    tracing::warn!(error = %e, "pruning Plan idempotency slots failed; will retry")
                }
                match state.webhook_worker.prune(now).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(pruned = n, "forgot relayed events past retention"),
                    Err(e) => {
                        tracing::warn!(error = %e, "pruning relayed events failed; will retry")
                    }
                }
            }
            let messages = match state.deliver_due().await {
                Ok(summary) => summary.claimed > 0,
                Err(e) => {
                    tracing::warn!(error = %e, "delivery pass failed; will retry");
                    false
                }
            };
            // Webhooks on the same tick: the relay from the outbox, then the due deliveries.
            let webhooks = match state.deliver_webhooks().await {
                Ok(summary) => summary.claimed > 0,
                Err(e) => {
                    tracing::warn!(error = %e, "webhook pass failed; will retry");
                    false
                }
            };
            // Then the workflow runs due (an event's runs were queued by the relay above).
            let workflows = match state.run_workflows().await {
                Ok(summary) => summary.claimed > 0,
                Err(e) => {
                    tracing::warn!(error = %e, "workflow pass failed; will retry");
                    false
                }
            };
            // And the pushes of agent messages to their agents' webhooks.
            let pushes = match state.push_agent_messages().await {
                Ok(summary) => summary.claimed > 0,
                Err(e) => {
                    tracing::warn!(error = %e, "agent webhook pass failed; will retry");
                    false
                }
            };
            let worked = messages || webhooks || workflows || pushes;
            if *stopped.borrow() {
                break;
            }
            if worked {
                continue;
            }
            let pause = tick.mul_f64(1.0 + rand::random::<f64>() / 4.0);
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = stopped.changed() => break,
            }
        }
    });
    (stop, task)
}

/// The check-in engine's loop: a pass ([`AppState::tick_checkins`]) at once, then every
/// `TEAMCOMM_CHECKIN_TICK_SECS` (plus up to a quarter of it at random, so servers sharing the
/// database do not tick in step), until `true` is sent on the returned channel. A failed pass
/// is logged and the next tick tries again; a pass under way when told to stop finishes.
pub fn spawn_checkins(
    state: AppState,
) -> (
    tokio::sync::watch::Sender<bool>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let tick = state.settings.checkin_tick;
    let task = tokio::spawn(async move {
        loop {
            match state.tick_checkins().await {
                Ok(summary) => {
                    for failure in &summary.failures {
                        tracing::warn!(error = %failure, "check-in step failed; will retry");
                    }
                    if summary != Default::default() {
                        tracing::debug!(
                            opened = summary.opened,
                            questions = summary.questions,
                            reminders = summary.reminders,
                            reports = summary.reports,
                            lost = summary.lost,
                            failures = summary.failures.len(),
                            "check-in pass"
                        );
                    }
                }
                Err(e) => tracing::warn!(error = %e, "check-in pass failed; will retry"),
            }
            if *stopped.borrow() {
                break;
            }
            let pause = tick.mul_f64(1.0 + rand::random::<f64>() / 4.0);
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = stopped.changed() => break,
            }
        }
    });
    (stop, task)
}

/// How long the reply loop pauses between polls (plus up to a quarter of it at random).
pub const REPLY_POLL_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);

/// The reply loop: polls the platform of every organization connected to Matrix
/// ([`AppState::poll_replies`], without waiting on the homeserver) and hands each reply to the
/// check-in engine, then pauses `pause` (jittered), until `true` is sent on the returned
/// channel. Where each organization's poll ended is stored (`platform_poll_cursors`) once the
/// batch's replies were handed over: after a restart polling resumes there, so replies written
/// while no server polled are read then. Several servers may each poll: a reply is taken once
/// (the round's revision fences it).
pub fn spawn_replies(
    state: AppState,
    pause: std::time::Duration,
) -> (
    tokio::sync::watch::Sender<bool>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(async move {
        loop {
            match state.poll_replies(std::time::Duration::ZERO).await {
                Ok(summary) => {
                    for failure in &summary.failures {
                        tracing::warn!(error = %failure, "reply poll step failed; will retry");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "reply poll failed; will retry"),
            }
            if *stopped.borrow() {
                break;
            }
            let pause = pause.mul_f64(1.0 + rand::random::<f64>() / 4.0);
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = stopped.changed() => break,
            }
        }
    });
    (stop, task)
}

/// What the operator reads when the database cannot be prepared: which kind of failure, and
/// what to do about it.
fn startup_message(url: &str, error: &StartupError) -> String {
    let url = redact_url(url);
    let cause = &error.cause;
    match error.failure {
        StartupFailure::Unreachable => format!(
            "no PostgreSQL answers at {url} (connection refused, unknown host or timeout: {cause}); start it (e.g. `pg_ctlcluster --skip-systemctl-redirect 15 main start`) or set DATABASE_URL to a running server"
        ),
        StartupFailure::Authentication => format!(
            "PostgreSQL at {url} refused the login (authentication or role: {cause}); check the user and password in DATABASE_URL, that the role exists, and that pg_hba.conf lets it connect"
        ),
        StartupFailure::DatabaseMissing => format!(
            "PostgreSQL at {url} answers, but the database is missing and could not be created ({cause}); create it (`createdb`), or give the role CREATEDB; the `postgres` maintenance database must exist"
        ),
        StartupFailure::Tls => format!(
            "the TLS connection to PostgreSQL at {url} failed ({cause}); this build connects to PostgreSQL without TLS: use sslmode=disable or sslmode=prefer in DATABASE_URL, a Unix socket (?host=/run/postgresql), or a TLS-terminating proxy"
        ),
        StartupFailure::Other => {
            format!("could not prepare the database at {url}: {cause}")
        }
    }
}

fn tls_config(files: &TlsFiles) -> anyhow::Result<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .with_context(|| format!("reading TEAMCOMM_TLS_CERT {}", files.cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("parsing TEAMCOMM_TLS_CERT {}", files.cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .with_context(|| format!("reading TEAMCOMM_TLS_KEY {}", files.key.display()))?;
    rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("TEAMCOMM_TLS_CERT and TEAMCOMM_TLS_KEY do not form a usable certificate")
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(
            redact_url("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(
            redact_url("postgres://postgres@h/db"),
            "postgres://postgres@h/db"
        );
    }
}
