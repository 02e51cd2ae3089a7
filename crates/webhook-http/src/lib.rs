//! The HTTP adapter of the webhooks port `WebhookSender`: one signed POST per attempt.
//!
//! - **Where**: the URL is checked again by the destination guard at send time. A literal
//!   address is judged before sending; a host name is resolved by the client's own resolver,
//!   [`GuardedResolver`], which judges every address it found and hands the client only checked
//!   ones, so the connection goes to the address that was checked (resolved once: a DNS answer
//!   that changes between the check and the connection, "rebinding", cannot reach inside).
//!   Hosts of the operator's allow-list skip the guard, as at creation.
//! - **What**: the body as given, `content-type: application/json`, the Standard Webhooks
//!   headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) and `X-BEARER` when the
//!   endpoint has a bearer token.
//! - **How long**: a connection within [`SenderSettings::connect_timeout`], the whole attempt
//!   within [`SenderSettings::timeout`]; at most [`SenderSettings::max_response_bytes`] of the
//!   answer are read. No redirect is followed (a 3xx is a failure), no proxy is used.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use teamcomm_webhooks::guard::{check_addresses, parse_destination};
use teamcomm_webhooks::signing::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, signature};
use teamcomm_webhooks::{
    AllowList, Delivery, DeliveryOutcome, HostResolver, Refusal, WebhookSender,
};

/// Limits of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderSettings {
    pub connect_timeout: Duration,
    /// The whole attempt: connection, request, answer.
    pub timeout: Duration,
    /// How much of an answer is read (the rest is dropped with the connection).
    pub max_response_bytes: usize,
}

impl Default for SenderSettings {
    /// 5 s to connect, 15 s in all (Svix's success window), 64 KiB of answer.
    fn default() -> Self {
        SenderSettings {
            connect_timeout: Duration::from_secs(5),
            timeout: Duration::from_secs(15),
            max_response_bytes: 64 * 1024,
        }
    }
}

/// The refusal of the guard, carried through the HTTP client's error chain.
#[derive(Debug)]
struct GuardRefusal(Refusal);

impl std::fmt::Display for GuardRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message())
    }
}

impl std::error::Error for GuardRefusal {}

/// The client's resolver: resolves through the [`HostResolver`] port once and answers only
/// addresses the destination guard accepts (all of them, or an error naming the reason).
pub struct GuardedResolver {
    resolver: Arc<dyn HostResolver>,
    allow: Arc<AllowList>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = self.resolver.clone();
        let allow = self.allow.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let ips: Vec<IpAddr> = resolver
                .resolve(&host, 0)
                .await
                .map_err(|_| GuardRefusal(Refusal::Unresolvable(host.clone())))?;
            if !allow.allows(&host) {
                check_addresses(&host, &ips).map_err(GuardRefusal)?;
            } else if ips.is_empty() {
                return Err(Box::new(GuardRefusal(Refusal::Unresolvable(host))) as _);
            }
            // The client sets the URL's port on each address.
            let addrs: Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// [`WebhookSender`] over reqwest (rustls), one client for every endpoint.
#[derive(Clone)]
pub struct HttpWebhookSender {
    client: reqwest::Client,
    allow: Arc<AllowList>,
    settings: SenderSettings,
}

impl HttpWebhookSender {
    pub fn new(
        resolver: Arc<dyn HostResolver>,
        allow: AllowList,
        settings: SenderSettings,
    ) -> Result<Self, reqwest::Error> {
        Self::with_extra_roots(resolver, allow, settings, &[])
    }

    /// As [`HttpWebhookSender::new`], also trusting the certificate authorities of
    /// `extra_roots` (PEM): for tests with receivers whose certificates a test authority
    /// issued. The server builds its sender with [`HttpWebhookSender::new`] only.
    pub fn with_extra_roots(
        resolver: Arc<dyn HostResolver>,
        allow: AllowList,
        settings: SenderSettings,
        extra_roots: &[&[u8]],
    ) -> Result<Self, reqwest::Error> {
        let allow = Arc::new(allow);
        let mut builder = reqwest::Client::builder();
        for pem in extra_roots {
            builder = builder.add_root_certificate(reqwest::Certificate::from_pem(pem)?);
        }
        let client = builder
            .dns_resolver(GuardedResolver {
                resolver,
                allow: allow.clone(),
            })
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.timeout)
            .user_agent(concat!("teamcomm-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(HttpWebhookSender {
            client,
            allow,
            settings,
        })
    }

    async fn attempt(&self, d: &Delivery) -> Result<DeliveryOutcome, reqwest::Error> {
        let mut request = self
            .client
            .post(&d.url)
            .header("content-type", "application/json")
            .header(HEADER_ID, &d.message_id)
            .header(HEADER_TIMESTAMP, d.timestamp.to_string());
        if let Some(secret) = &d.signing_secret {
            match signature(secret, &d.message_id, d.timestamp, &d.body) {
                Ok(s) => request = request.header(HEADER_SIGNATURE, s),
                Err(e) => {
                    return Ok(DeliveryOutcome::Failed {
                        status: None,
                        retry_after: None,
                        error: e.to_string(),
                    });
                }
            }
        }
        if let Some(secret) = &d.webhook_secret {
            request = request.header("X-Webhook-Secret", secret.expose());
        }
        if let Some(token) = &d.bearer_token {
            request = request.header("X-BEARER", token.expose());
        }
        let mut response = request.body(d.body.clone()).send().await?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        // Read a bounded part of the answer, so the connection can be reused when it is short.
        let mut read = 0usize;
        while read < self.settings.max_response_bytes {
            match response.chunk().await? {
                Some(chunk) => read += chunk.len(),
                None => break,
            }
        }
        Ok(match status {
            200..=299 => DeliveryOutcome::Delivered { status },
            410 => DeliveryOutcome::Gone,
            _ => DeliveryOutcome::Failed {
                status: Some(status),
                retry_after,
                error: format!("HTTP {status}"),
            },
        })
    }
}

/// The guard's refusal somewhere in the error chain, if that is why the attempt failed.
fn refusal_in(e: &reqwest::Error) -> Option<Refusal> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(GuardRefusal(r)) = err.downcast_ref::<GuardRefusal>() {
            return Some(r.clone());
        }
        source = err.source();
    }
    None
}

/// What the client's error says, without the URL (it may carry a token in its query).
fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_body() || e.is_decode() {
        "the answer could not be read"
    } else {
        "the request failed"
    };
    let mut detail = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(err) = source {
        detail = err.to_string();
        source = err.source();
    }
    if detail.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}: {detail}")
    }
}

#[async_trait]
impl WebhookSender for HttpWebhookSender {
    async fn send(&self, delivery: &Delivery) -> DeliveryOutcome {
        // A literal address never reaches the resolver: judge it here.
        if let Err(refusal) = parse_destination(&delivery.url, &self.allow) {
            return DeliveryOutcome::Refused(refusal);
        }
        match self.attempt(delivery).await {
            Ok(outcome) => outcome,
            Err(e) => match refusal_in(&e) {
                Some(refusal) => DeliveryOutcome::Refused(refusal),
                None => DeliveryOutcome::Failed {
                    status: e.status().map(|s| s.as_u16()),
                    retry_after: None,
                    error: describe(&e),
                },
            },
        }
    }
}
