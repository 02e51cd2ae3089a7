//! Settings, read once from the environment and validated before the server binds.
//! Secrets are held in [`SecretString`] so they never reach a log line.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use teamcomm_keys::{RateQuotas, RateScope};
use teamcomm_llm_http::LlmSettings;
use teamcomm_mail::{MAIL_FROM_VAR, SMTP_URL_VAR, SmtpMailer, SmtpSettings};
use teamcomm_store_pg::MIN_CONFIGURED_SECRET_LEN;

/// A configuration secret: printable only as `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(String);

impl SecretString {
    pub fn new(s: impl Into<String>) -> Self {
        SecretString(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretString(***)")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub database_url: String,
    /// True when `DATABASE_URL` was not set and the default is in use.
    pub database_url_is_default: bool,
    pub listen: SocketAddr,
    pub operator_token: Option<SecretString>,
    pub jwt_secret: SecretString,
    /// What chat-platform secrets are sealed under at rest: `TEAMCOMM_PLATFORM_SECRET_KEY`, else
    /// the JWT secret.
    pub platform_secret_key: SecretString,
    pub jwt_access_ttl: Duration,
    pub jwt_refresh_ttl: Duration,
    pub plan_cache_ttl: Duration,
    /// How long a directory page may be served from memory (0 disables the cache).
    pub directory_cache_ttl: Duration,
    /// How long an API key's credential may be served from memory (0 disables the cache).
    pub key_cache_ttl: Duration,
    /// How long a check-in may be served from memory (0 disables the cache).
    pub checkin_cache_ttl: Duration,
    /// How long a Plan board and its columns may be served from memory (0 disables the cache).
    pub plan_board_cache_ttl: Duration,
    pub app_url: String,
    pub base_url: String,
    pub log_format: LogFormat,
    pub tls: Option<TlsFiles>,
    pub db_pool_size: usize,
    pub workers: usize,
    pub usage_flush_interval: Duration,
    /// How often the delivery worker looks for due messages and e-mails.
    pub worker_tick: Duration,
    /// How long a claimed job is its worker's before another may claim it again (a worker that
    /// died mid-pass holds its jobs this long); longer than a pass of 20 jobs may take.
    pub worker_lease: Duration,
    /// How many jobs of a delivery pass run at once.
    pub worker_concurrency: usize,
    /// How often the check-in engine runs a pass (opens due rounds, reminds, reports).
    pub checkin_tick: Duration,
    /// Hosts webhooks may reach over plain `http://` and at internal addresses
    /// (`TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS`, comma-separated; local testing only).
    pub webhook_allow_insecure_hosts: Vec<String>,
    /// Clients (by address) that may read `GET /metrics` (`TEAMCOMM_METRICS_ALLOW`; loopback
    /// by default; empty: nobody).
    pub metrics_allow: Vec<ipnet::IpNet>,
    /// The SMTP relay e-mail goes through; without one, every e-mail fails (its job says why).
    pub smtp: Option<SmtpSettings>,
    /// The CLI assistant's language model (`TEAMCOMM_LLM_URL`, `TEAMCOMM_LLM_MODEL`,
    /// `TEAMCOMM_LLM_API_KEY`, `TEAMCOMM_LLM_TIMEOUT_SECS`); without one the assistant answers
    /// 503 `assistant_not_configured`.
    pub llm: Option<LlmSettings>,
    /// Serves `GET /bench/floor/?org=<uuid>` (one indexed single-row read) for `make bench`.
    pub bench_floor: bool,
    /// Hourly budgets per credential and scope.
    pub rate_quotas: RateQuotas,
    /// Where the hourly budgets live when several server processes share them
    /// (`TEAMCOMM_REDIS_URL`, `redis://[:password@]host[:port][/db]`); in-process without one.
    pub redis_url: Option<SecretString>,
    /// The prefix of this installation's keys in that Redis (`TEAMCOMM_REDIS_KEY_PREFIX`).
    pub redis_key_prefix: String,
    /// `TEAMCOMM_*` names this version does not read (a typo, or a setting of a newer version):
    /// ignored with a warning at start, so rolling back to an older binary still starts.
    pub unknown_variables: Vec<String>,
}

pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/teamcomm";
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Every variable the service reads; any other `TEAMCOMM_*` name is reported as a likely typo.
const KNOWN: &[&str] = &[
    "TEAMCOMM_LISTEN",
    "TEAMCOMM_OPERATOR_TOKEN",
    "TEAMCOMM_JWT_SECRET",
    "TEAMCOMM_PLATFORM_SECRET_KEY",
    "TEAMCOMM_JWT_ACCESS_TTL_SECS",
    "TEAMCOMM_JWT_REFRESH_TTL_SECS",
    "TEAMCOMM_PLAN_CACHE_TTL_SECS",
    "TEAMCOMM_APP_URL",
    "TEAMCOMM_BASE_URL",
    "TEAMCOMM_LOG_FORMAT",
    "TEAMCOMM_TLS_CERT",
    "TEAMCOMM_TLS_KEY",
    "TEAMCOMM_DB_POOL_SIZE",
    "TEAMCOMM_WORKERS",
    "TEAMCOMM_USAGE_FLUSH_SECS",
    "TEAMCOMM_BENCH_FLOOR",
    "TEAMCOMM_DIRECTORY_CACHE_TTL_SECS",
    "TEAMCOMM_KEY_CACHE_TTL_SECS",
    "TEAMCOMM_CHECKIN_CACHE_TTL_SECS",
    "TEAMCOMM_PLAN_BOARD_CACHE_TTL_SECS",
    "TEAMCOMM_WORKER_TICK_MS",
    "TEAMCOMM_WORKER_LEASE_SECS",
    "TEAMCOMM_WORKER_CONCURRENCY",
    "TEAMCOMM_CHECKIN_TICK_SECS",
    "TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS",
    "TEAMCOMM_SMTP_URL",
    "TEAMCOMM_MAIL_FROM",
    "TEAMCOMM_LLM_URL",
    "TEAMCOMM_LLM_MODEL",
    "TEAMCOMM_LLM_API_KEY",
    "TEAMCOMM_LLM_TIMEOUT_SECS",
    "TEAMCOMM_RATE_LIMIT_PER_HOUR_READS",
    "TEAMCOMM_RATE_LIMIT_PER_HOUR_WRITES",
    "TEAMCOMM_RATE_LIMIT_PER_HOUR_MESSAGING",
    "TEAMCOMM_RATE_LIMIT_PER_HOUR_EMAIL",
    "TEAMCOMM_RATE_LIMIT_PER_HOUR_INVITATIONS",
    "TEAMCOMM_RATE_LIMIT_PER_HOUR_WORKFLOW_TRIGGERS",
    "TEAMCOMM_RATE_LIMIT_PER_HOUR_AGENT",
    "TEAMCOMM_RATE_LIMIT_PER_HOUR_AUTH",
    "TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_READS",
    "TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_WRITES",
    "TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_BULK",
    "TEAMCOMM_RATE_LIMIT_PER_MINUTE_PLAN_DELTA",
    "TEAMCOMM_RATE_LIMIT_ENTERPRISE_MULTIPLIER",
    "TEAMCOMM_METRICS_ALLOW",
    "TEAMCOMM_REDIS_URL",
    "TEAMCOMM_REDIS_KEY_PREFIX",
];

/// The default prefix of the rate-limit keys in Redis.
pub const DEFAULT_REDIS_KEY_PREFIX: &str = "teamcomm:ratelimit";

/// The networks of `TEAMCOMM_METRICS_ALLOW` (comma-separated CIDRs or bare addresses; blank
/// entries ignored), or loopback when unset.
fn metrics_networks(value: Option<&str>) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    let Some(value) = value else {
        return Ok(crate::metrics::DEFAULT_ALLOW
            .iter()
            .map(|n| n.parse().expect("the default networks parse"))
            .collect());
    };
    value
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| {
            n.parse::<ipnet::IpNet>()
                .or_else(|_| n.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    ConfigError(format!(
                        "TEAMCOMM_METRICS_ALLOW: {n} is not an address or a CIDR network"
                    ))
                })
        })
        .collect()
}

/// The hosts of `TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS`: names or IP addresses, comma-separated
/// (blank entries ignored); anything with a scheme, path, port, user or space is refused.
fn webhook_hosts(value: Option<&str>) -> Result<Vec<String>, ConfigError> {
    let mut hosts = Vec::new();
    for host in value.unwrap_or_default().split(',').map(str::trim) {
        if host.is_empty() {
            continue;
        }
        let bracketed = host.starts_with('[') && host.ends_with(']');
        let ipv6 = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::Ipv6Addr>()
            .is_ok();
        let odd = host.contains(['/', '@', ' ', '\t'])
            || (host.contains(':') && !ipv6)
            || (bracketed && !ipv6);
        if odd {
            return Err(ConfigError(format!(
                "TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS: {host} is not a host name or IP address (no scheme, port or path)"
            )));
        }
        hosts.push(host.to_ascii_lowercase());
    }
    Ok(hosts)
}

/// A configuration problem, phrased for the operator.
#[derive(Debug, thiserror::Error)]
#[error("configuration error: {0}")]
pub struct ConfigError(pub String);

fn bad(msg: impl Into<String>) -> ConfigError {
    ConfigError(msg.into())
}

impl Settings {
    /// Reads the process environment.
    pub fn from_env(demo: bool) -> Result<Self, ConfigError> {
        Self::from_vars(&std::env::vars().collect(), demo)
    }

    /// Reads settings from a map of variables (the environment, or a test's own map).
    pub fn from_vars(vars: &HashMap<String, String>, demo: bool) -> Result<Self, ConfigError> {
        let mut unknown_variables: Vec<String> = vars
            .keys()
            .filter(|name| {
                name.starts_with("TEAMCOMM_")
                    && !KNOWN.contains(&name.as_str())
                    && !name.starts_with("TEAMCOMM_TEST_")
            })
            .cloned()
            .collect();
        unknown_variables.sort();
        let get = |k: &str| {
            vars.get(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };

        let database_url_is_default = get("DATABASE_URL").is_none();
        let database_url = get("DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        if !(database_url.starts_with("postgres://") || database_url.starts_with("postgresql://")) {
            return Err(bad(
                "DATABASE_URL must start with postgres:// or postgresql://",
            ));
        }
        let listen_raw = get("TEAMCOMM_LISTEN").unwrap_or_else(|| DEFAULT_LISTEN.to_owned());
        let listen: SocketAddr = listen_raw.parse().map_err(|_| {
            bad(format!(
                "TEAMCOMM_LISTEN={listen_raw} is not an address like 127.0.0.1:8080"
            ))
        })?;

        let operator_token = match get("TEAMCOMM_OPERATOR_TOKEN") {
            Some(t) if t.len() < 16 => {
                return Err(bad(
                    "TEAMCOMM_OPERATOR_TOKEN must be at least 16 characters",
                ));
            }
            Some(t) => Some(SecretString::new(t)),
            None => None,
        };
        let jwt_secret = match get("TEAMCOMM_JWT_SECRET") {
            Some(s) if s.len() < 32 => {
                return Err(bad("TEAMCOMM_JWT_SECRET must be at least 32 characters"));
            }
            Some(s) => SecretString::new(s),
            None if demo => SecretString::new(random_secret()),
            None => {
                return Err(bad(
                    "TEAMCOMM_JWT_SECRET is required (at least 32 characters), e.g. `export TEAMCOMM_JWT_SECRET=$(openssl rand -hex 32)`; only --demo generates one",
                ));
            }
        };

        let platform_secret_key = match get("TEAMCOMM_PLATFORM_SECRET_KEY") {
            Some(s) if s.len() < MIN_CONFIGURED_SECRET_LEN => {
                return Err(bad(format!(
                    "TEAMCOMM_PLATFORM_SECRET_KEY must be at least {MIN_CONFIGURED_SECRET_LEN} characters"
                )));
            }
            Some(s) => SecretString::new(s),
            None => jwt_secret.clone(),
        };

        let secs = |k: &str, default: u64, min: u64, max: u64| -> Result<Duration, ConfigError> {
            match get(k) {
                None => Ok(Duration::from_secs(default)),
                Some(v) => match v.parse::<u64>() {
                    Ok(n) if (min..=max).contains(&n) => Ok(Duration::from_secs(n)),
                    _ => Err(bad(format!(
                        "{k}={v} must be a whole number of seconds between {min} and {max}"
                    ))),
                },
            }
        };
        let count = |k: &str, default: usize, max: usize| -> Result<usize, ConfigError> {
            match get(k) {
                None => Ok(default),
                Some(v) => match v.parse::<usize>() {
                    Ok(n) if (1..=max).contains(&n) => Ok(n),
                    _ => Err(bad(format!(
                        "{k}={v} must be a whole number between 1 and {max}"
                    ))),
                },
            }
        };

        let tls = match (get("TEAMCOMM_TLS_CERT"), get("TEAMCOMM_TLS_KEY")) {
            (Some(cert), Some(key)) => Some(TlsFiles {
                cert: cert.into(),
                key: key.into(),
            }),
            (None, None) => None,
            _ => {
                return Err(bad(
                    "set both TEAMCOMM_TLS_CERT and TEAMCOMM_TLS_KEY, or neither",
                ));
            }
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let base_url = match get("TEAMCOMM_BASE_URL") {
            Some(u) => validate_url("TEAMCOMM_BASE_URL", &u)?,
            None => format!("{scheme}://{listen}"),
        };
        let app_url = match get("TEAMCOMM_APP_URL") {
            Some(u) => validate_url("TEAMCOMM_APP_URL", &u)?,
            None => base_url.clone(),
        };
        let log_format = match get("TEAMCOMM_LOG_FORMAT").as_deref() {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => {
                return Err(bad(format!(
                    "TEAMCOMM_LOG_FORMAT={other} must be text or json"
                )));
            }
        };
        let mut rate_quotas = RateQuotas::default();
        for scope in RateScope::ALL {
            let name = scope.setting();
            if let Some(v) = get(&name) {
                let n = v.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                    let per = scope.window().setting_word().to_lowercase();
                    bad(format!(
                        "{name}={v} must be a whole number of requests per {per}, at least 1"
                    ))
                })?;
                rate_quotas.set(scope, n);
            }
        }
        if let Some(v) = get("TEAMCOMM_RATE_LIMIT_ENTERPRISE_MULTIPLIER") {
            rate_quotas.enterprise_multiplier = v.parse::<u32>().ok().filter(|n| (1..=1000).contains(n)).ok_or_else(|| {
                bad(format!("TEAMCOMM_RATE_LIMIT_ENTERPRISE_MULTIPLIER={v} must be a whole number from 1 to 1000"))
            })?;
        }
        let redis_url = match get("TEAMCOMM_REDIS_URL") {
            None => None,
            Some(url) if url.starts_with("redis://") || url.starts_with("unix://") => {
                // Checked now (the connection is made later, when Redis is up).
                teamcomm_ratelimit_redis::RedisRateLimiter::new(&url, "check").map_err(|e| {
                    bad(format!("TEAMCOMM_REDIS_URL is not a usable Redis URL: {e}"))
                })?;
                Some(SecretString::new(url))
            }
            Some(_) => {
                return Err(bad(
                    "TEAMCOMM_REDIS_URL must start with redis:// (or unix:// for a socket)",
                ));
            }
        };
        let redis_key_prefix =
            get("TEAMCOMM_REDIS_KEY_PREFIX").unwrap_or_else(|| DEFAULT_REDIS_KEY_PREFIX.to_owned());
        let worker_tick = match get("TEAMCOMM_WORKER_TICK_MS") {
            None => Duration::from_millis(1000),
            Some(v) => match v.parse::<u64>() {
                Ok(ms) if (10..=60_000).contains(&ms) => Duration::from_millis(ms),
                _ => {
                    return Err(bad(format!(
                        "TEAMCOMM_WORKER_TICK_MS={v} must be a whole number of milliseconds between 10 and 60000"
                    )));
                }
            },
        };
        let smtp = match (get(SMTP_URL_VAR), get(MAIL_FROM_VAR)) {
            (None, None) => None,
            (Some(url), Some(from)) => {
                let smtp = SmtpSettings::parse(&url, &from).map_err(|e| bad(e.to_string()))?;
                // Builds the transport once, so a TLS setting it cannot use stops the start.
                SmtpMailer::new(&smtp).map_err(|e| bad(e.to_string()))?;
                Some(smtp)
            }
            _ => {
                return Err(bad(format!(
                    "set both {SMTP_URL_VAR} and {MAIL_FROM_VAR}, or neither"
                )));
            }
        };
        let llm = match (get("TEAMCOMM_LLM_URL"), get("TEAMCOMM_LLM_MODEL")) {
            (None, None) => {
                if get("TEAMCOMM_LLM_API_KEY").is_some() {
                    return Err(bad(
                        "TEAMCOMM_LLM_API_KEY is set without TEAMCOMM_LLM_URL and TEAMCOMM_LLM_MODEL",
                    ));
                }
                None
            }
            (Some(url), Some(model)) => Some(LlmSettings {
                base_url: validate_url("TEAMCOMM_LLM_URL", &url)?,
                model,
                api_key: get("TEAMCOMM_LLM_API_KEY"),
                timeout: secs("TEAMCOMM_LLM_TIMEOUT_SECS", 60, 1, 300)?,
                connect_timeout: Duration::from_secs(10),
            }),
            _ => {
                return Err(bad(
                    "set both TEAMCOMM_LLM_URL and TEAMCOMM_LLM_MODEL, or neither",
                ));
            }
        };
        let webhook_allow_insecure_hosts =
            webhook_hosts(get("TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS").as_deref())?;
        // Set but empty means nobody (not the default).
        let metrics_allow =
            metrics_networks(vars.get("TEAMCOMM_METRICS_ALLOW").map(String::as_str))?;
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);

        Ok(Settings {
            database_url,
            database_url_is_default,
            listen,
            operator_token,
            jwt_secret,
            platform_secret_key,
            jwt_access_ttl: secs("TEAMCOMM_JWT_ACCESS_TTL_SECS", 15 * 60, 30, 24 * 3600)?,
            jwt_refresh_ttl: secs(
                "TEAMCOMM_JWT_REFRESH_TTL_SECS",
                14 * 24 * 3600,
                60,
                90 * 24 * 3600,
            )?,
            plan_cache_ttl: secs("TEAMCOMM_PLAN_CACHE_TTL_SECS", 60, 0, 3600)?,
            directory_cache_ttl: secs("TEAMCOMM_DIRECTORY_CACHE_TTL_SECS", 5, 0, 300)?,
            key_cache_ttl: secs("TEAMCOMM_KEY_CACHE_TTL_SECS", 5, 0, 300)?,
            checkin_cache_ttl: secs("TEAMCOMM_CHECKIN_CACHE_TTL_SECS", 5, 0, 300)?,
            plan_board_cache_ttl: secs("TEAMCOMM_PLAN_BOARD_CACHE_TTL_SECS", 5, 0, 300)?,
            app_url,
            base_url,
            log_format,
            tls,
            db_pool_size: count("TEAMCOMM_DB_POOL_SIZE", 16, 1000)?,
            workers: count("TEAMCOMM_WORKERS", cores, 256)?,
            usage_flush_interval: secs("TEAMCOMM_USAGE_FLUSH_SECS", 10, 1, 3600)?,
            worker_tick,
            worker_lease: secs("TEAMCOMM_WORKER_LEASE_SECS", 300, 1, 24 * 3600)?,
            worker_concurrency: count("TEAMCOMM_WORKER_CONCURRENCY", 8, 64)?,
            checkin_tick: secs("TEAMCOMM_CHECKIN_TICK_SECS", 30, 1, 3600)?,
            webhook_allow_insecure_hosts,
            metrics_allow,
            smtp,
            llm,
            bench_floor: match get("TEAMCOMM_BENCH_FLOOR").as_deref() {
                None | Some("0") | Some("false") => false,
                Some("1") | Some("true") => true,
                Some(other) => {
                    return Err(bad(format!(
                        "TEAMCOMM_BENCH_FLOOR={other} must be true or false"
                    )));
                }
            },
            rate_quotas,
            redis_url,
            redis_key_prefix,
            unknown_variables,
        })
    }

    /// Logs one warning per ignored `TEAMCOMM_*` variable (call once logging is set up).
    pub fn warn_about_unknown_variables(&self) {
        for name in &self.unknown_variables {
            match closest_known(name) {
                Some(known) => tracing::warn!(
                    variable = %name,
                    "ignoring unknown variable {name}: this version does not read it (a typo of {known}?)"
                ),
                None => tracing::warn!(
                    variable = %name,
                    "ignoring unknown variable {name}: this version does not read it; see docs/configuration.md"
                ),
            }
        }
    }
}

/// The known name sharing the longest prefix with `name`, when that prefix goes at least three
/// characters past `TEAMCOMM_`.
fn closest_known(name: &str) -> Option<&'static str> {
    let shared = |known: &str| {
        name.bytes()
            .zip(known.bytes())
            .take_while(|(a, b)| a == b)
            .count()
    };
    KNOWN
        .iter()
        .copied()
        .max_by_key(|known| shared(known))
        // A letter or two in common past the prefix is chance, not a typo.
        .filter(|known| shared(known) >= "TEAMCOMM_".len() + 3)
}

fn validate_url(name: &str, value: &str) -> Result<String, ConfigError> {
    let trimmed = value.trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .ok_or_else(|| {
            bad(format!(
                "{name}={value} must start with http:// or https://"
            ))
        })?;
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return Err(bad(format!("{name}={value} is not a URL")));
    }
    Ok(trimmed.to_owned())
}

fn random_secret() -> String {
    use std::fmt::Write;
    let bytes: [u8; 32] = rand_bytes();
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn rand_bytes() -> [u8; 32] {
    // uuid v4 uses the OS random source; two of them make 244 random bits.
    let a = uuid::Uuid::new_v4();
    let b = uuid::Uuid::new_v4();
    let mut out = [0u8; 32];
    out[..16].copy_from_slice(a.as_bytes());
    out[16..].copy_from_slice(b.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn defaults_in_demo_mode() {
        let s = Settings::from_vars(&vars(&[]), true).unwrap();
        assert_eq!(s.database_url, DEFAULT_DATABASE_URL);
        assert!(s.database_url_is_default);
        assert_eq!(s.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(s.plan_cache_ttl, Duration::from_secs(60));
        assert_eq!(s.checkin_tick, Duration::from_secs(30));
        assert_eq!(s.base_url, "http://127.0.0.1:8080");
        assert!(s.operator_token.is_none());
        assert_eq!(s.jwt_secret.expose().len(), 64);
    }

    #[test]
    fn jwt_secret_required_outside_demo() {
        let e = Settings::from_vars(&vars(&[]), false).unwrap_err();
        assert!(e.to_string().contains("TEAMCOMM_JWT_SECRET"));
        let ok =
            Settings::from_vars(&vars(&[("TEAMCOMM_JWT_SECRET", &"s".repeat(32))]), false).unwrap();
        assert_eq!(format!("{:?}", ok.jwt_secret), "SecretString(***)");
    }

    #[test]
    fn unknown_names_are_kept_for_a_warning_not_refused() {
        let s = Settings::from_vars(
            &vars(&[
                ("TEAMCOMM_PLAN_CACHE_TTL", "5"),
                ("TEAMCOMM_SETTING_OF_A_NEWER_VERSION", "on"),
                ("TEAMCOMM_TEST_CLI_VENV", "/tmp/venv"),
                ("TEAMCOMM_LISTEN", "127.0.0.1:9000"),
            ]),
            true,
        )
        .expect("unknown names do not stop the process");
        assert_eq!(
            s.unknown_variables,
            [
                "TEAMCOMM_PLAN_CACHE_TTL",
                "TEAMCOMM_SETTING_OF_A_NEWER_VERSION"
            ]
        );
        assert_eq!(s.listen.to_string(), "127.0.0.1:9000");
        assert_eq!(
            closest_known("TEAMCOMM_PLAN_CACHE_TTL"),
            Some("TEAMCOMM_PLAN_CACHE_TTL_SECS")
        );
        assert_eq!(closest_known("TEAMCOMM_SETTING_OF_A_NEWER_VERSION"), None);
    }

    #[test]
    fn webhook_allow_list_takes_host_names_and_addresses() {
        let s = Settings::from_vars(
            &vars(&[(
                "TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS",
                " LocalHost, 127.0.0.1,, [::1] ",
            )]),
            true,
        )
        .unwrap();
        assert_eq!(
            s.webhook_allow_insecure_hosts,
            ["localhost", "127.0.0.1", "[::1]"]
        );
        let s = Settings::from_vars(&vars(&[]), true).unwrap();
        assert!(s.webhook_allow_insecure_hosts.is_empty());
    }

    #[test]
    fn metrics_are_for_loopback_unless_told_otherwise() {
        let nets = |s: &Settings| {
            s.metrics_allow
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        let s = Settings::from_vars(&vars(&[]), true).unwrap();
        assert_eq!(nets(&s), ["127.0.0.0/8", "::1/128"]);
        let s = Settings::from_vars(
            &vars(&[("TEAMCOMM_METRICS_ALLOW", " 10.0.0.0/8,, 192.168.1.7 ")]),
            true,
        )
        .unwrap();
        assert_eq!(nets(&s), ["10.0.0.0/8", "192.168.1.7/32"]);
        let s = Settings::from_vars(&vars(&[("TEAMCOMM_METRICS_ALLOW", "")]), true).unwrap();
        assert!(s.metrics_allow.is_empty(), "empty: nobody");
    }

    #[test]
    fn refuses_bad_values_of_known_names() {
        for (k, v) in [
            ("TEAMCOMM_PLAN_CACHE_TTL_SECS", "soon"),
            ("TEAMCOMM_LISTEN", "localhost"),
            ("TEAMCOMM_LOG_FORMAT", "xml"),
            ("TEAMCOMM_TLS_CERT", "/tmp/cert.pem"),
            ("TEAMCOMM_OPERATOR_TOKEN", "short"),
            ("TEAMCOMM_BASE_URL", "ftp://x"),
            ("DATABASE_URL", "mysql://x/y"),
            ("TEAMCOMM_RATE_LIMIT_PER_HOUR_READS", "0"),
            ("TEAMCOMM_RATE_LIMIT_PER_HOUR_WRITES", "lots"),
            ("TEAMCOMM_WORKER_TICK_MS", "0"),
            ("TEAMCOMM_WORKER_LEASE_SECS", "0"),
            ("TEAMCOMM_WORKER_CONCURRENCY", "0"),
            ("TEAMCOMM_METRICS_ALLOW", "10.0.0.0/33"),
            ("TEAMCOMM_METRICS_ALLOW", "localhost"),
            ("TEAMCOMM_CHECKIN_TICK_SECS", "0"),
            ("TEAMCOMM_CHECKIN_TICK_SECS", "3601"),
            ("TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS", "http://localhost"),
            ("TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS", "localhost:8080"),
            (
                "TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS",
                "dev.test, 10.0.0.1/8",
            ),
            ("TEAMCOMM_PLATFORM_SECRET_KEY", "short"),
            ("TEAMCOMM_SMTP_URL", "smtp://relay.example.org"),
            ("TEAMCOMM_MAIL_FROM", "teamcomm@example.org"),
        ] {
            let e = Settings::from_vars(&vars(&[(k, v)]), true);
            assert!(e.is_err(), "{k}={v} accepted");
            assert!(e.unwrap_err().to_string().contains(k), "message names {k}");
        }
    }
}
