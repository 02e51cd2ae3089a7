//! Where mail goes (`TEAMCOMM_SMTP_URL`) and whom it is from (`TEAMCOMM_MAIL_FROM`).

use std::fmt;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::transport::smtp::client::Certificate;
use percent_encoding::percent_decode_str;
use url::{Host, Url};

pub const SMTP_URL_VAR: &str = "TEAMCOMM_SMTP_URL";
pub const MAIL_FROM_VAR: &str = "TEAMCOMM_MAIL_FROM";

/// Limits on a connection attempt and on a whole send (connect, TLS, AUTH, the mail, QUIT): a
/// send that hangs holds a queue worker, and a retry is cheap.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// How the connection to the server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpSecurity {
    /// `smtp://` or `?tls=none`: plain text, for a relay on the same host or a trusted network.
    Plain,
    /// `?tls=opportunistic`: STARTTLS when the server offers it, else plain text.
    OpportunisticStartTls,
    /// `?tls=required`: STARTTLS, and a server that does not offer it is refused.
    StartTls,
    /// `smtps://`: TLS from the first byte.
    ImplicitTls,
}

impl SmtpSecurity {
    /// The usual port of each mode (the same choice as lettre's own URLs).
    fn default_port(self) -> u16 {
        match self {
            Self::Plain => 25,
            Self::OpportunisticStartTls | Self::StartTls => 587,
            Self::ImplicitTls => 465,
        }
    }

    /// Whether nothing, credentials included, can travel in clear text (a stripped STARTTLS
    /// offer silently downgrades the opportunistic mode).
    fn always_encrypted(self) -> bool {
        matches!(self, Self::StartTls | Self::ImplicitTls)
    }
}

/// The AUTH user and password from the URL's userinfo, percent-decoded.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SmtpCredentials {
    pub(crate) user: String,
    pub(crate) password: String,
}

/// The SMTP server, its protection and credentials, and the sender of every mail.
#[derive(Clone)]
pub struct SmtpSettings {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) security: SmtpSecurity,
    pub(crate) credentials: Option<SmtpCredentials>,
    pub(crate) from: Mailbox,
    pub(crate) connect_timeout: Duration,
    pub(crate) send_timeout: Duration,
    /// PEM of a certificate authority trusted besides the system's (a private relay's CA, the
    /// tests' CA). Verification itself is never switched off.
    pub(crate) extra_root_pem: Option<Vec<u8>>,
}

/// A setting that cannot be used; the message names the variable and never holds a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmtpSettingsError {
    #[error("{var}: {0}", var = SMTP_URL_VAR)]
    SmtpUrl(String),
    #[error("{var}: {0}", var = MAIL_FROM_VAR)]
    MailFrom(String),
    #[error("SMTP TLS: {0}")]
    Tls(String),
}

impl SmtpSettings {
    /// Reads the two variables' values (already known to be set).
    ///
    /// `smtp_url`: `smtp://[user:password@]host[:port][?tls=none|opportunistic|required]` or
    /// `smtps://[user:password@]host[:port]`; `mail_from`: `address` or `Name <address>`.
    pub fn parse(smtp_url: &str, mail_from: &str) -> Result<Self, SmtpSettingsError> {
        let (host, port, security, credentials) = parse_smtp_url(smtp_url.trim())?;
        Ok(Self {
            host,
            port,
            security,
            credentials,
            from: parse_mail_from(mail_from.trim())?,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            send_timeout: DEFAULT_SEND_TIMEOUT,
            extra_root_pem: None,
        })
    }

    /// Also trusts the certificate authority in `pem` when verifying the server.
    pub fn trust_root_certificate(mut self, pem: &[u8]) -> Result<Self, SmtpSettingsError> {
        // lettre reads PEM leniently (no certificate at all is not an error), so check for one.
        let has_certificate =
            std::str::from_utf8(pem).is_ok_and(|text| text.contains("-----BEGIN CERTIFICATE-----"));
        if !has_certificate || Certificate::from_pem(pem).is_err() {
            return Err(SmtpSettingsError::Tls(
                "the extra root certificate is not a PEM certificate".into(),
            ));
        }
        self.extra_root_pem = Some(pem.to_vec());
        Ok(self)
    }

    /// Replaces [`DEFAULT_CONNECT_TIMEOUT`] and [`DEFAULT_SEND_TIMEOUT`].
    pub fn with_timeouts(mut self, connect_timeout: Duration, send_timeout: Duration) -> Self {
        self.connect_timeout = connect_timeout;
        self.send_timeout = send_timeout;
        self
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn security(&self) -> SmtpSecurity {
        self.security
    }

    pub fn has_credentials(&self) -> bool {
        self.credentials.is_some()
    }

    pub fn from(&self) -> &Mailbox {
        &self.from
    }
}

impl fmt::Debug for SmtpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("credentials", &self.credentials.as_ref().map(|_| "***"))
            .field("from", &self.from.to_string())
            .field("connect_timeout", &self.connect_timeout)
            .field("send_timeout", &self.send_timeout)
            .field("extra_root_certificate", &self.extra_root_pem.is_some())
            .finish()
    }
}

type ParsedUrl = (String, u16, SmtpSecurity, Option<SmtpCredentials>);

fn parse_smtp_url(smtp_url: &str) -> Result<ParsedUrl, SmtpSettingsError> {
    let fail = |reason: String| Err(SmtpSettingsError::SmtpUrl(reason));
    if smtp_url.is_empty() {
        return fail("is empty".into());
    }
    // url's messages describe the problem without repeating the input (which may hold a password).
    let url = match Url::parse(smtp_url) {
        Ok(url) => url,
        Err(e) => return fail(format!("not a URL ({e})")),
    };
    let tls_option = single_tls_option(&url)?;
    let security = match (url.scheme(), tls_option.as_deref()) {
        ("smtps", None) => SmtpSecurity::ImplicitTls,
        ("smtps", Some(_)) => {
            return fail("tls= applies to smtp:// only (smtps:// is always TLS)".into());
        }
        ("smtp", None | Some("none")) => SmtpSecurity::Plain,
        ("smtp", Some("opportunistic")) => SmtpSecurity::OpportunisticStartTls,
        ("smtp", Some("required")) => SmtpSecurity::StartTls,
        ("smtp", Some(other)) => {
            return fail(format!(
                "tls={other} is not one of none, opportunistic, required"
            ));
        }
        (scheme, _) => {
            return fail(format!(
                "must start with smtp:// or smtps://, not {scheme}://"
            ));
        }
    };
    let host = match url.host() {
        Some(Host::Domain(name)) if !name.is_empty() => name.to_owned(),
        Some(Host::Ipv4(ip)) => ip.to_string(),
        Some(Host::Ipv6(ip)) => ip.to_string(),
        _ => return fail("has no host".into()),
    };
    let port = match url.port() {
        Some(0) => return fail("port 0 is not a port".into()),
        Some(port) => port,
        None => security.default_port(),
    };
    if !matches!(url.path(), "" | "/") || url.fragment().is_some() {
        return fail("takes no path or fragment after the host and port".into());
    }
    let credentials = credentials(&url)?;
    if credentials.is_some() && !security.always_encrypted() {
        return fail(
            "credentials are only sent over TLS: use smtps:// or smtp://…?tls=required".into(),
        );
    }
    Ok((host, port, security, credentials))
}

/// The `tls` query option, the only one there is.
fn single_tls_option(url: &Url) -> Result<Option<String>, SmtpSettingsError> {
    let mut tls_option = None;
    for (key, value) in url.query_pairs() {
        match key.as_ref() {
            "tls" if tls_option.is_none() => tls_option = Some(value.into_owned()),
            "tls" => return Err(SmtpSettingsError::SmtpUrl("tls= is given twice".into())),
            other => {
                return Err(SmtpSettingsError::SmtpUrl(format!(
                    "unknown option {other}= (only tls= is read)"
                )));
            }
        }
    }
    Ok(tls_option)
}

fn credentials(url: &Url) -> Result<Option<SmtpCredentials>, SmtpSettingsError> {
    let (user, password) = (url.username(), url.password());
    if user.is_empty() && password.is_none() {
        return Ok(None);
    }
    let (Some(password), false) = (password, user.is_empty()) else {
        return Err(SmtpSettingsError::SmtpUrl(
            "credentials need both a user and a password (user:password@host)".into(),
        ));
    };
    let decode = |part: &str, what: &str| {
        percent_decode_str(part)
            .decode_utf8()
            .map(|decoded| decoded.into_owned())
            .map_err(|_| {
                SmtpSettingsError::SmtpUrl(format!("the {what} is not UTF-8 once percent-decoded"))
            })
    };
    Ok(Some(SmtpCredentials {
        user: decode(user, "user")?,
        password: decode(password, "password")?,
    }))
}

fn parse_mail_from(mail_from: &str) -> Result<Mailbox, SmtpSettingsError> {
    if mail_from.is_empty() {
        return Err(SmtpSettingsError::MailFrom("is empty".into()));
    }
    mail_from.parse::<Mailbox>().map_err(|e| {
        SmtpSettingsError::MailFrom(format!(
            "{mail_from:?} is not a mailbox (`address` or `Name <address>`): {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FROM: &str = "Teamcomm <noreply@example.com>";

    fn parse_url(smtp_url: &str) -> Result<SmtpSettings, SmtpSettingsError> {
        SmtpSettings::parse(smtp_url, FROM)
    }

    fn url_error(smtp_url: &str) -> String {
        parse_url(smtp_url).unwrap_err().to_string()
    }

    #[test]
    fn each_scheme_and_tls_option_has_its_security_and_default_port() {
        for (smtp_url, security, port) in [
            ("smtp://relay.example.com", SmtpSecurity::Plain, 25),
            (
                "smtp://relay.example.com/?tls=none",
                SmtpSecurity::Plain,
                25,
            ),
            (
                "smtp://relay.example.com?tls=opportunistic",
                SmtpSecurity::OpportunisticStartTls,
                587,
            ),
            (
                "smtp://relay.example.com?tls=required",
                SmtpSecurity::StartTls,
                587,
            ),
            ("smtps://relay.example.com", SmtpSecurity::ImplicitTls, 465),
            (
                "smtps://relay.example.com:2465",
                SmtpSecurity::ImplicitTls,
                2465,
            ),
            ("SMTP://relay.example.com:2525", SmtpSecurity::Plain, 2525),
        ] {
            let settings = parse_url(smtp_url).unwrap();
            assert_eq!(settings.host(), "relay.example.com", "{smtp_url}");
            assert_eq!(settings.security(), security, "{smtp_url}");
            assert_eq!(settings.port(), port, "{smtp_url}");
            assert!(!settings.has_credentials(), "{smtp_url}");
            assert_eq!(settings.connect_timeout, DEFAULT_CONNECT_TIMEOUT);
            assert_eq!(settings.send_timeout, DEFAULT_SEND_TIMEOUT);
        }
    }

    #[test]
    fn ip_hosts_are_kept_without_brackets() {
        assert_eq!(
            parse_url("smtp://127.0.0.1:2525").unwrap().host(),
            "127.0.0.1"
        );
        assert_eq!(parse_url("smtp://[::1]:2525").unwrap().host(), "::1");
    }

    #[test]
    fn credentials_are_percent_decoded() {
        let settings =
            parse_url("smtps://mailer%40example.com:p%3Ass%2Fw%40rd%20x@smtp.example.com").unwrap();
        let credentials = settings.credentials.unwrap();
        assert_eq!(credentials.user, "mailer@example.com");
        assert_eq!(credentials.password, "p:ss/w@rd x");
    }

    #[test]
    fn credentials_never_show_in_debug_output() {
        let settings =
            parse_url("smtp://someuser:s3cr3t-pass@smtp.example.com?tls=required").unwrap();
        let debug = format!("{settings:?}");
        assert!(debug.contains("credentials: Some(\"***\")"), "{debug}");
        assert!(
            !debug.contains("s3cr3t") && !debug.contains("someuser"),
            "{debug}"
        );
    }

    #[test]
    fn credentials_never_show_in_errors() {
        for smtp_url in [
            "smtp://someuser:s3cr3t-pass@smtp.example.com",
            "smtp://someuser:s3cr3t-pass@smtp.example.com?tls=opportunistic",
            "smtp://someuser:s3cr3t-pass@smtp.example.com:99999",
            "smtp://someuser:s3cr3t-pass@smtp.example.com/path",
            "smtp://someuser:s3cr3t-pass@smtp.example.com?tls=maybe",
            "http://someuser:s3cr3t-pass@smtp.example.com",
            "smtp://someuser:%FF@smtp.example.com?tls=required",
            "smtp://:s3cr3t-pass@smtp.example.com?tls=required",
        ] {
            let error = url_error(smtp_url);
            assert!(error.starts_with("TEAMCOMM_SMTP_URL: "), "{error}");
            assert!(
                !error.contains("s3cr3t") && !error.contains("someuser"),
                "{error}"
            );
        }
    }

    #[test]
    fn credentials_are_refused_where_they_could_travel_in_clear_text() {
        for smtp_url in [
            "smtp://u:p@smtp.example.com",
            "smtp://u:p@smtp.example.com?tls=none",
            "smtp://u:p@smtp.example.com?tls=opportunistic",
        ] {
            assert!(
                url_error(smtp_url).contains("only sent over TLS"),
                "{smtp_url}"
            );
        }
        assert!(
            parse_url("smtp://u:p@smtp.example.com?tls=required")
                .unwrap()
                .has_credentials()
        );
        assert!(
            parse_url("smtps://u:p@smtp.example.com")
                .unwrap()
                .has_credentials()
        );
    }

    #[test]
    fn a_user_without_a_password_is_refused() {
        assert!(url_error("smtps://user@smtp.example.com").contains("both a user and a password"));
    }

    #[test]
    fn malformed_urls_are_refused_with_the_reason() {
        for (smtp_url, reason) in [
            ("", "is empty"),
            ("   ", "is empty"),
            (
                "relay.example.com:25",
                "must start with smtp:// or smtps://",
            ),
            ("smtp:relay", "has no host"),
            ("smtp://", "has no host"),
            ("smtp://relay.example.com:0", "port 0"),
            (
                "smtp://relay.example.com:70000",
                "not a URL (invalid port number)",
            ),
            (
                "smtp://relay.example.com?tls=maybe",
                "tls=maybe is not one of",
            ),
            (
                "smtp://relay.example.com?tls=none&tls=required",
                "given twice",
            ),
            (
                "smtp://relay.example.com?timeout=5",
                "unknown option timeout=",
            ),
            ("smtps://relay.example.com?tls=required", "smtp:// only"),
            ("smtp://relay.example.com/helo.example.com", "no path"),
            ("smtp://relay.example.com#x", "no path or fragment"),
        ] {
            let error = url_error(smtp_url);
            assert!(error.contains(reason), "{smtp_url:?}: {error}");
            assert!(error.starts_with("TEAMCOMM_SMTP_URL: "), "{error}");
        }
    }

    #[test]
    fn mail_from_takes_an_address_or_a_named_mailbox() {
        let named =
            SmtpSettings::parse("smtp://localhost", " Teamcomm Bot <bot@example.com> ").unwrap();
        assert_eq!(named.from().name.as_deref(), Some("Teamcomm Bot"));
        assert_eq!(named.from().email.to_string(), "bot@example.com");
        let bare = SmtpSettings::parse("smtp://localhost", "bot@example.com").unwrap();
        assert_eq!(bare.from().name, None);
    }

    #[test]
    fn a_malformed_mail_from_is_refused_naming_the_variable() {
        for mail_from in ["", "not an address", "Bot <bot@>", "Bot <bot@example.com"] {
            let error = SmtpSettings::parse("smtp://localhost", mail_from).unwrap_err();
            assert!(
                matches!(error, SmtpSettingsError::MailFrom(_)),
                "{mail_from:?}"
            );
            assert!(
                error.to_string().starts_with("TEAMCOMM_MAIL_FROM: "),
                "{error}"
            );
        }
    }

    #[test]
    fn an_extra_root_must_be_a_pem_certificate() {
        let settings = parse_url("smtps://localhost").unwrap();
        for not_a_certificate in [&b""[..], b"hello", b"-----BEGIN CERTIFICATE-----\n!!\n"] {
            let error = settings
                .clone()
                .trust_root_certificate(not_a_certificate)
                .unwrap_err();
            assert!(matches!(error, SmtpSettingsError::Tls(_)));
        }
    }
}
