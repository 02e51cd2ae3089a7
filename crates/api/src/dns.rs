//! Name resolution for the webhook destination guard: the system resolver, bounded in time.

use std::net::IpAddr;
use std::time::Duration;

use async_trait::async_trait;
use teamcomm_webhooks::HostResolver;

/// How long a lookup may take before the host counts as unresolvable.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// [`HostResolver`] over the system resolver (`getaddrinfo`, via tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct DnsResolver;

#[async_trait]
impl HostResolver for DnsResolver {
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, String> {
        let lookup = tokio::net::lookup_host((host, port));
        match tokio::time::timeout(LOOKUP_TIMEOUT, lookup).await {
            Ok(Ok(addrs)) => Ok(addrs.map(|a| a.ip()).collect()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {}s", LOOKUP_TIMEOUT.as_secs())),
        }
    }
}
