//! `SmtpMailer`: the messaging domain's `Mailer` port over lettre's async SMTP transport.

use std::time::Duration;

use async_trait::async_trait;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{Address, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use teamcomm_messaging::mail::{MailError, Mailer, OutgoingMail};

use crate::settings::{SmtpSecurity, SmtpSettings, SmtpSettingsError};

/// Sends each mail over its own SMTP connection. (Mail is a trickle next to chat messages, and a
/// send cut off by the timeout must not leave a half-spoken connection behind for the next one,
/// as lettre's pool would.)
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    send_timeout: Duration,
}

impl SmtpMailer {
    pub fn new(settings: &SmtpSettings) -> Result<Self, SmtpSettingsError> {
        // "dangerous" only means lettre sets no TLS itself: `tls` below always sets it.
        let mut builder =
            AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(settings.host.clone())
                .port(settings.port)
                // lettre's async transport applies this to connecting only; `send` bounds the rest.
                .timeout(Some(settings.connect_timeout))
                .tls(tls(settings)?);
        if let Some(credentials) = &settings.credentials {
            builder = builder.credentials(Credentials::new(
                credentials.user.clone(),
                credentials.password.clone(),
            ));
        }
        Ok(Self {
            transport: builder.build(),
            from: settings.from.clone(),
            send_timeout: settings.send_timeout,
        })
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError> {
        let message = compose(&self.from, mail)?;
        match tokio::time::timeout(self.send_timeout, self.transport.send(message)).await {
            Ok(sent) => sent.map(drop).map_err(classify),
            Err(_) => Err(MailError::Temporary(format!(
                "the SMTP exchange took longer than {:?}",
                self.send_timeout
            ))),
        }
    }
}

fn tls(settings: &SmtpSettings) -> Result<Tls, SmtpSettingsError> {
    let parameters = || {
        let tls_error = |e: lettre::transport::smtp::Error| SmtpSettingsError::Tls(e.to_string());
        let mut parameters = TlsParameters::builder(settings.host.clone());
        if let Some(pem) = &settings.extra_root_pem {
            parameters =
                parameters.add_root_certificate(Certificate::from_pem(pem).map_err(tls_error)?);
        }
        parameters.build_rustls().map_err(tls_error)
    };
    Ok(match settings.security {
        SmtpSecurity::Plain => Tls::None,
        SmtpSecurity::OpportunisticStartTls => Tls::Opportunistic(parameters()?),
        SmtpSecurity::StartTls => Tls::Required(parameters()?),
        SmtpSecurity::ImplicitTls => Tls::Wrapper(parameters()?),
    })
}

/// The message as sent: text only, or multipart/alternative with the text first (the last
/// alternative a client can show wins, so HTML goes last).
fn compose(from: &Mailbox, mail: &OutgoingMail) -> Result<Message, MailError> {
    if mail.to.is_empty() {
        return Err(MailError::Permanent("the mail has no recipient".into()));
    }
    let mut builder = Message::builder()
        .from(from.clone())
        .subject(mail.subject.as_str())
        .message_id(Some(message_id_header(&mail.message_id, from)?));
    for recipient in &mail.to {
        let address = recipient.address.parse::<Address>().map_err(|e| {
            MailError::Permanent(format!(
                "invalid recipient address {:?}: {e}",
                recipient.address
            ))
        })?;
        builder = builder.to(Mailbox::new(recipient.name.clone(), address));
    }
    let built = match &mail.html {
        Some(html) => builder.multipart(MultiPart::alternative_plain_html(
            mail.text.clone(),
            html.clone(),
        )),
        None => builder.singlepart(SinglePart::plain(mail.text.clone())),
    };
    built.map_err(|e| MailError::Permanent(format!("the mail cannot be built: {e}")))
}

/// `Message-ID` from our id: kept when already `<left@right>`, else made one with the sender's
/// domain on the right (RFC 5322 wants an `@`).
fn message_id_header(message_id: &str, from: &Mailbox) -> Result<String, MailError> {
    let bare = message_id
        .strip_prefix('<')
        .and_then(|id| id.strip_suffix('>'))
        .unwrap_or(message_id);
    let well_formed = !bare.is_empty()
        && bare.chars().all(|c| {
            c.is_ascii_graphic() && !matches!(c, '<' | '>' | '"' | '\\' | '(' | ')' | ',')
        });
    if !well_formed || bare.matches('@').count() > 1 {
        return Err(MailError::Permanent(format!(
            "unusable Message-ID {message_id:?}"
        )));
    }
    Ok(if bare.contains('@') {
        format!("<{bare}>")
    } else {
        format!("<{bare}@{}>", from.email.domain())
    })
}

/// Only the server's 5xx verdict, or a mail that cannot even be written, is final. Everything
/// else (4xx, connection, timeout, TLS, protocol trouble) says nothing about this mail, so the
/// queue retries it and gives up after its attempts.
fn classify(error: lettre::transport::smtp::Error) -> MailError {
    if error.is_permanent() {
        MailError::Permanent(error.to_string())
    } else {
        MailError::Temporary(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use teamcomm_messaging::mail::Mailbox as Recipient;

    use super::*;

    fn from() -> Mailbox {
        "Teamcomm <noreply@teamcomm.example>".parse().unwrap()
    }

    fn mail() -> OutgoingMail {
        OutgoingMail {
            message_id: "0193a1b2-c3d4".into(),
            to: vec![Recipient {
                name: Some("Ada Lovelace".into()),
                address: "ada@example.com".into(),
            }],
            subject: "Hello".into(),
            html: Some("<p>Hi</p>".into()),
            text: "Hi".into(),
        }
    }

    fn formatted(mail: &OutgoingMail) -> String {
        String::from_utf8(compose(&from(), mail).unwrap().formatted()).unwrap()
    }

    #[test]
    fn message_id_gets_the_sender_domain_when_it_has_none() {
        let id = |raw: &str| message_id_header(raw, &from());
        assert_eq!(id("abc-123").unwrap(), "<abc-123@teamcomm.example>");
        assert_eq!(id("abc@mail.example").unwrap(), "<abc@mail.example>");
        assert_eq!(id("<abc@mail.example>").unwrap(), "<abc@mail.example>");
        for unusable in ["", "<>", "a b", "a@b@c", "a>b", "a\r\nBcc: x@y"] {
            assert!(
                matches!(id(unusable), Err(MailError::Permanent(_))),
                "{unusable:?}"
            );
        }
    }

    #[test]
    fn html_mail_is_multipart_alternative_with_text_first() {
        let raw = formatted(&mail());
        assert!(
            raw.contains("Content-Type: multipart/alternative;"),
            "{raw}"
        );
        let text_at = raw.find("Content-Type: text/plain").unwrap();
        let html_at = raw.find("Content-Type: text/html").unwrap();
        assert!(text_at < html_at, "{raw}");
        assert!(
            raw.contains("Message-ID: <0193a1b2-c3d4@teamcomm.example>"),
            "{raw}"
        );
        assert!(
            raw.contains("To: \"Ada Lovelace\" <ada@example.com>"),
            "{raw}"
        );
    }

    #[test]
    fn text_only_mail_is_a_single_text_part() {
        let raw = formatted(&OutgoingMail {
            html: None,
            ..mail()
        });
        assert!(
            raw.contains("Content-Type: text/plain; charset=utf-8"),
            "{raw}"
        );
        assert!(
            !raw.contains("multipart") && !raw.contains("text/html"),
            "{raw}"
        );
    }

    #[test]
    fn a_line_break_in_the_subject_cannot_add_a_header() {
        let raw = formatted(&OutgoingMail {
            subject: "Hi\r\nBcc: eve@example.com".into(),
            ..mail()
        });
        let headers = raw.split("\r\n\r\n").next().unwrap();
        assert!(
            !headers.lines().any(|line| line.starts_with("Bcc:")),
            "{headers}"
        );
    }

    #[test]
    fn a_malformed_recipient_or_no_recipient_is_permanent() {
        let bad_address = OutgoingMail {
            to: vec![Recipient {
                name: None,
                address: "not-an-address".into(),
            }],
            ..mail()
        };
        let error = compose(&from(), &bad_address).unwrap_err();
        assert!(
            matches!(&error, MailError::Permanent(reason) if reason.contains("not-an-address")),
            "{error:?}"
        );
        let nobody = OutgoingMail {
            to: vec![],
            ..mail()
        };
        assert!(matches!(
            compose(&from(), &nobody),
            Err(MailError::Permanent(_))
        ));
    }
}
