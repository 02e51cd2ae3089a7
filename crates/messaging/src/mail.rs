//! Outbound e-mail: the port the SMTP adapter implements (and the CLI's login codes use).

use async_trait::async_trait;

/// A mailbox: an address and an optional display name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mailbox {
    pub name: Option<String>,
    pub address: String,
}

/// One e-mail, ready to send: an HTML body and its plain-text alternative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMail {
    /// Our id, sent as the `Message-ID` (so a retried send is recognisable downstream).
    pub message_id: String,
    pub to: Vec<Mailbox>,
    pub subject: String,
    pub html: Option<String>,
    pub text: String,
}

/// Why a send failed, as far as retrying is concerned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    /// SMTP 4xx, a dropped connection, a timeout: worth retrying.
    #[error("temporary mail failure: {0}")]
    Temporary(String),
    /// SMTP 5xx or an address the server refuses: do not retry.
    #[error("permanent mail failure: {0}")]
    Permanent(String),
}

/// Sends e-mail.
#[async_trait]
pub trait Mailer: Send + Sync + 'static {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError>;
}
