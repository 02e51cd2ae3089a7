//! The destination guard: where webhook deliveries may go. A URL must be `https://` and its host
//! must not be, or resolve to, an address inside a network (loopback, private, shared, link-local
//! and cloud metadata, unique-local, unspecified, multicast, broadcast, reserved), whichever way
//! it is written (IPv4-mapped, -compatible and NAT64 IPv6 forms, or IPv4 in decimal, octal or
//! hex). Hosts of the operator's allow-list (`TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS`, for local
//! testing) skip both rules. Each refusal names its reason ([`Refusal::reason`]).
//!
//! Pure: resolving a name is the caller's (the [`crate::HostResolver`] port); [`check_addresses`]
//! judges what it answered.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// The longest URL accepted, in bytes.
pub const MAX_URL_LEN: usize = 2048;

/// Hosts deliveries may reach over plain `http://` and at internal addresses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList(HashSet<String>);

impl AllowList {
    /// `hosts` as written in the setting: names (any case) or IP addresses (IPv6 with or
    /// without brackets); blank entries are ignored.
    pub fn new<S: AsRef<str>>(hosts: impl IntoIterator<Item = S>) -> Self {
        AllowList(
            hosts
                .into_iter()
                .map(|h| normalize_host(h.as_ref()))
                .filter(|h| !h.is_empty())
                .collect(),
        )
    }

    pub fn allows(&self, host: &str) -> bool {
        self.0.contains(&normalize_host(host))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn normalize_host(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// What kind of internal address a destination is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressKind {
    Unspecified,
    Loopback,
    /// RFC 1918.
    Private,
    /// Carrier-grade NAT, 100.64.0.0/10 (RFC 6598).
    SharedAddressSpace,
    /// 169.254.0.0/16 and fe80::/10.
    LinkLocal,
    /// 169.254.169.254 and fd00:ec2::254, the cloud instance metadata services.
    CloudMetadata,
    /// fc00::/7.
    UniqueLocal,
    Multicast,
    Broadcast,
    /// 240.0.0.0/4, 192.0.0.0/24, 198.18.0.0/15, fec0::/10 (site-local).
    Reserved,
}

impl AddressKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            AddressKind::Unspecified => "unspecified",
            AddressKind::Loopback => "loopback",
            AddressKind::Private => "private",
            AddressKind::SharedAddressSpace => "shared_address_space",
            AddressKind::LinkLocal => "link_local",
            AddressKind::CloudMetadata => "cloud_metadata",
            AddressKind::UniqueLocal => "unique_local",
            AddressKind::Multicast => "multicast",
            AddressKind::Broadcast => "broadcast",
            AddressKind::Reserved => "reserved",
        }
    }

    const fn describe(self) -> &'static str {
        match self {
            AddressKind::Unspecified => "the unspecified address",
            AddressKind::Loopback => "a loopback address",
            AddressKind::Private => "a private (RFC 1918) address",
            AddressKind::SharedAddressSpace => "a carrier-grade NAT (100.64.0.0/10) address",
            AddressKind::LinkLocal => "a link-local address",
            AddressKind::CloudMetadata => "a cloud metadata service address",
            AddressKind::UniqueLocal => "a unique-local IPv6 address",
            AddressKind::Multicast => "a multicast address",
            AddressKind::Broadcast => "the broadcast address",
            AddressKind::Reserved => "a reserved address",
        }
    }
}

/// How an IPv6 address carries an IPv4 one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Ipv4Mapped,
    /// `::a.b.c.d` (deprecated).
    Ipv4Compatible,
    /// `64:ff9b::a.b.c.d`.
    Nat64,
}

/// An internal address, possibly inside an IPv6 form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocked {
    pub kind: AddressKind,
    pub via: Option<Embedding>,
}

/// Why a destination is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not a URL, or no host.
    Invalid,
    TooLong,
    /// A scheme other than `https` (or `http` for allow-listed hosts).
    Scheme(String),
    /// Plain `http://` to a host that is not allow-listed.
    NotHttps,
    /// `user:password@` in the URL (it would end up in logs).
    Credentials,
    /// An IPv4 host not written as four decimal numbers (`2130706433`, `0x7f.1`, `0177.0.0.1`).
    OddIpv4Encoding(String),
    /// The host is, or resolves to, an internal address.
    Internal {
        ip: IpAddr,
        blocked: Blocked,
    },
    /// The name did not resolve to any address.
    Unresolvable(String),
}

impl Refusal {
    /// A short machine name of the reason (`extra.reason` of the 400).
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Invalid => "invalid_url",
            Refusal::TooLong => "url_too_long",
            Refusal::Scheme(_) => "unsupported_scheme",
            Refusal::NotHttps => "https_required",
            Refusal::Credentials => "credentials_in_url",
            Refusal::OddIpv4Encoding(_) => "odd_ipv4_encoding",
            Refusal::Internal { blocked, .. } => match blocked.via {
                Some(Embedding::Ipv4Mapped) => "ipv4_mapped",
                Some(Embedding::Ipv4Compatible) => "ipv4_compatible",
                Some(Embedding::Nat64) => "nat64",
                None => blocked.kind.as_str(),
            },
            Refusal::Unresolvable(_) => "unresolvable",
        }
    }

    /// What the client reads.
    pub fn message(&self) -> String {
        match self {
            Refusal::Invalid => "Enter a valid URL.".into(),
            Refusal::TooLong => {
                format!("Ensure this URL has no more than {MAX_URL_LEN} characters.")
            }
            Refusal::Scheme(s) => format!("The URL scheme must be https, not {s}."),
            Refusal::NotHttps => "The URL must use https.".into(),
            Refusal::Credentials => "The URL may not contain a user name or password.".into(),
            Refusal::OddIpv4Encoding(host) => format!(
                "The host {host} is an IPv4 address not written as four decimal numbers; write it as a.b.c.d."
            ),
            Refusal::Internal { ip, blocked } => {
                let via = match blocked.via {
                    Some(Embedding::Ipv4Mapped) => " inside an IPv4-mapped IPv6 address",
                    Some(Embedding::Ipv4Compatible) => " inside an IPv4-compatible IPv6 address",
                    Some(Embedding::Nat64) => " inside a NAT64 IPv6 address",
                    None => "",
                };
                format!(
                    "The destination {ip} is {}{via}; webhooks are not delivered to internal addresses.",
                    blocked.kind.describe()
                )
            }
            Refusal::Unresolvable(host) => {
                format!("The host {host} does not resolve to any address.")
            }
        }
    }
}

/// Where a checked URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An allow-listed host: no further check.
    Allowed,
    /// A literal public address: no resolution needed.
    Address(IpAddr),
    /// A name to resolve, then judge with [`check_addresses`].
    Name { host: String, port: u16 },
}

/// A URL that passed the static checks: its normalized form and what to check next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The URL as it will be stored and called (normalized by the WHATWG URL rules).
    pub url: String,
    pub target: Target,
}

/// The static checks of a destination URL: syntax, scheme, credentials, and a literal address.
pub fn parse_destination(raw: &str, allow: &AllowList) -> Result<Destination, Refusal> {
    let raw = raw.trim();
    if raw.len() > MAX_URL_LEN {
        return Err(Refusal::TooLong);
    }
    let url = Url::parse(raw).map_err(|_| Refusal::Invalid)?;
    let scheme = url.scheme().to_owned();
    if scheme != "https" && scheme != "http" {
        return Err(Refusal::Scheme(scheme));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refusal::Credentials);
    }
    let host = url.host().ok_or(Refusal::Invalid)?.to_owned();
    if let Host::Ipv4(ip) = host {
        let written = written_host(raw);
        if written != ip.to_string() {
            return Err(Refusal::OddIpv4Encoding(written));
        }
    }
    let host_str = url.host_str().ok_or(Refusal::Invalid)?;
    let stored = url.to_string();
    if allow.allows(host_str) {
        return Ok(Destination {
            url: stored,
            target: Target::Allowed,
        });
    }
    if scheme != "https" {
        return Err(Refusal::NotHttps);
    }
    let target = match host {
        Host::Ipv4(ip) => Target::Address(IpAddr::V4(ip)),
        Host::Ipv6(ip) => Target::Address(IpAddr::V6(ip)),
        Host::Domain(name) => Target::Name {
            port: url.port_or_known_default().unwrap_or(443),
            host: name,
        },
    };
    if let Target::Address(ip) = target {
        check_addresses(host_str, &[ip])?;
    }
    Ok(Destination {
        url: stored,
        target,
    })
}

/// The host as written in `raw` (lower case), before the URL parser normalized it.
fn written_host(raw: &str) -> String {
    let rest = raw.split_once("://").map_or(raw, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = match host_port.rsplit_once(':') {
        Some((host, _port)) if !host_port.starts_with('[') => host,
        _ => host_port,
    };
    host.to_ascii_lowercase()
}

/// Judges the addresses a host resolved to: refused when there are none, or when any is
/// internal (a name with one public and one internal address could be steered to the latter).
pub fn check_addresses(host: &str, ips: &[IpAddr]) -> Result<(), Refusal> {
    if ips.is_empty() {
        return Err(Refusal::Unresolvable(host.to_owned()));
    }
    for &ip in ips {
        if let Some(blocked) = classify(ip) {
            return Err(Refusal::Internal { ip, blocked });
        }
    }
    Ok(())
}

/// What kind of internal address `ip` is; `None` for a public one.
pub fn classify(ip: IpAddr) -> Option<Blocked> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4).map(|kind| Blocked { kind, via: None }),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressKind> {
    let [a, b, c, _] = ip.octets();
    let kind = if ip == Ipv4Addr::new(169, 254, 169, 254) {
        AddressKind::CloudMetadata
    } else if a == 0 {
        // 0.0.0.0/8, "this network": 0.0.0.0 reaches the local host on most systems.
        AddressKind::Unspecified
    } else if ip.is_loopback() {
        AddressKind::Loopback
    } else if ip.is_private() {
        AddressKind::Private
    } else if a == 100 && (64..128).contains(&b) {
        AddressKind::SharedAddressSpace
    } else if ip.is_link_local() {
        AddressKind::LinkLocal
    } else if ip.is_broadcast() {
        AddressKind::Broadcast
    } else if ip.is_multicast() {
        AddressKind::Multicast
    } else if a >= 240 || (a == 192 && b == 0 && c == 0) || (a == 198 && (b & 0xfe) == 18) {
        AddressKind::Reserved
    } else {
        return None;
    };
    Some(kind)
}

fn classify_v6(ip: Ipv6Addr) -> Option<Blocked> {
    let segments = ip.segments();
    let direct = |kind| Some(Blocked { kind, via: None });
    if ip.is_unspecified() {
        return direct(AddressKind::Unspecified);
    }
    if ip.is_loopback() {
        return direct(AddressKind::Loopback);
    }
    let embedded = |v4: Ipv4Addr, via: Embedding| {
        // An embedded public address is as reachable as the address itself.
        classify_v4(v4).map(|kind| Blocked {
            kind,
            via: Some(via),
        })
    };
    if let Some(v4) = ip.to_ipv4_mapped() {
        return embedded(v4, Embedding::Ipv4Mapped);
    }
    if segments[..6] == [0; 6] {
        // ::a.b.c.d (:: and ::1 were judged above).
        let [.., hi, lo] = segments;
        let v4 = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
        return embedded(v4, Embedding::Ipv4Compatible);
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [.., hi, lo] = segments;
        let v4 = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
        return embedded(v4, Embedding::Nat64);
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return direct(AddressKind::CloudMetadata);
    }
    let first = segments[0];
    if first & 0xfe00 == 0xfc00 {
        direct(AddressKind::UniqueLocal)
    } else if first & 0xffc0 == 0xfe80 {
        direct(AddressKind::LinkLocal)
    } else if first & 0xffc0 == 0xfec0 {
        direct(AddressKind::Reserved)
    } else if first & 0xff00 == 0xff00 {
        direct(AddressKind::Multicast)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> AllowList {
        AllowList::default()
    }

    fn refusal(url: &str) -> Refusal {
        parse_destination(url, &none()).expect_err(url)
    }

    #[test]
    fn public_https_urls_pass() {
        let d = parse_destination("https://hooks.example.com/in?x=1", &none()).unwrap();
        assert_eq!(d.url, "https://hooks.example.com/in?x=1");
        assert_eq!(
            d.target,
            Target::Name {
                host: "hooks.example.com".into(),
                port: 443
            }
        );
        let d = parse_destination("https://93.184.215.14:8443/", &none()).unwrap();
        assert_eq!(d.target, Target::Address("93.184.215.14".parse().unwrap()));
        let d = parse_destination("https://[2606:4700::1111]/", &none()).unwrap();
        assert_eq!(
            d.target,
            Target::Address("2606:4700::1111".parse().unwrap())
        );
    }

    #[test]
    fn plain_http_and_other_schemes_are_refused() {
        assert_eq!(refusal("http://hooks.example.com/"), Refusal::NotHttps);
        assert_eq!(
            refusal("ftp://hooks.example.com/"),
            Refusal::Scheme("ftp".into())
        );
        assert_eq!(
            refusal("file:///etc/passwd"),
            Refusal::Scheme("file".into())
        );
        assert_eq!(refusal("hooks.example.com/in"), Refusal::Invalid);
        assert_eq!(
            refusal("https://u:p@hooks.example.com/"),
            Refusal::Credentials
        );
        assert_eq!(
            refusal(&format!("https://a.example/{}", "x".repeat(MAX_URL_LEN))),
            Refusal::TooLong
        );
    }

    #[test]
    fn each_kind_of_internal_literal_is_refused_with_its_reason() {
        let cases = [
            ("https://127.0.0.1/", "loopback"),
            ("https://127.8.9.10/", "loopback"),
            ("https://[::1]/", "loopback"),
            ("https://10.1.2.3/", "private"),
            ("https://172.16.0.1/", "private"),
            ("https://172.31.255.255/", "private"),
            ("https://192.168.1.1/", "private"),
            ("https://100.64.0.1/", "shared_address_space"),
            ("https://100.127.255.254/", "shared_address_space"),
            ("https://169.254.10.1/", "link_local"),
            (
                "https://169.254.169.254/latest/meta-data/",
                "cloud_metadata",
            ),
            ("https://[fd00:ec2::254]/", "cloud_metadata"),
            ("https://[fe80::1]/", "link_local"),
            ("https://[fc00::1]/", "unique_local"),
            ("https://[fd12:3456::1]/", "unique_local"),
            ("https://0.0.0.0/", "unspecified"),
            ("https://[::]/", "unspecified"),
            ("https://224.0.0.1/", "multicast"),
            ("https://[ff02::1]/", "multicast"),
            ("https://255.255.255.255/", "broadcast"),
            ("https://240.0.0.1/", "reserved"),
            ("https://[::ffff:127.0.0.1]/", "ipv4_mapped"),
            ("https://[::ffff:169.254.169.254]/", "ipv4_mapped"),
            ("https://[::ffff:a00:1]/", "ipv4_mapped"),
            ("https://[::10.0.0.1]/", "ipv4_compatible"),
            ("https://[64:ff9b::192.168.0.1]/", "nat64"),
        ];
        for (url, reason) in cases {
            let r = refusal(url);
            assert_eq!(r.reason(), reason, "{url}: {r:?}");
            assert!(r.message().contains("internal addresses"), "{url}");
        }
    }

    #[test]
    fn neighbours_of_the_internal_ranges_are_public() {
        for url in [
            "https://172.32.0.1/",
            "https://172.15.255.255/",
            "https://100.63.255.255/",
            "https://100.128.0.1/",
            "https://169.253.0.1/",
            "https://11.0.0.1/",
            "https://[::ffff:8.8.8.8]/",
            "https://[2001:db9::1]/",
        ] {
            assert!(parse_destination(url, &none()).is_ok(), "{url}");
        }
    }

    #[test]
    fn ipv4_written_in_decimal_octal_or_hex_is_refused_as_such() {
        for (url, written) in [
            ("http://2130706433/", "2130706433"),
            ("https://2130706433/", "2130706433"),
            ("https://0x7f000001/", "0x7f000001"),
            ("https://0177.0.0.1/", "0177.0.0.1"),
            ("https://0x7f.0.0.1:8443/", "0x7f.0.0.1"),
            ("https://127.1/", "127.1"),
            ("https://134744072:443/", "134744072"),
        ] {
            let r = refusal(url);
            assert_eq!(r, Refusal::OddIpv4Encoding(written.into()), "{url}");
            assert_eq!(r.reason(), "odd_ipv4_encoding");
        }
    }

    #[test]
    fn allow_listed_hosts_pass_over_http_and_at_internal_addresses() {
        let allow = AllowList::new(["LocalHost", "127.0.0.1", "[::1]", ""]);
        for url in [
            "http://localhost:8080/hook",
            "https://localhost/hook",
            "http://127.0.0.1:9000/",
            "http://[::1]:9000/",
        ] {
            let d = parse_destination(url, &allow).unwrap();
            assert_eq!(d.target, Target::Allowed, "{url}");
        }
        assert_eq!(
            parse_destination("http://127.0.0.2/", &allow).unwrap_err(),
            Refusal::NotHttps
        );
        assert!(allow.allows("localhost") && !allow.allows("example.com"));
    }

    #[test]
    fn resolved_addresses_are_judged_all_of_them() {
        let public: IpAddr = "93.184.215.14".parse().unwrap();
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(check_addresses("a.example", &[public]).is_ok());
        assert_eq!(
            check_addresses("a.example", &[public, loopback])
                .unwrap_err()
                .reason(),
            "loopback"
        );
        assert_eq!(
            check_addresses("a.example", &[]).unwrap_err(),
            Refusal::Unresolvable("a.example".into())
        );
    }
}
