//! SMTP adapter: implements the messaging domain's `Mailer` port with lettre (rustls with
//! aws-lc-rs, no OpenSSL). `SmtpSettings` reads `TEAMCOMM_SMTP_URL` and `TEAMCOMM_MAIL_FROM`;
//! `SmtpMailer` sends.

mod mailer;
mod settings;

pub use mailer::SmtpMailer;
pub use settings::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_SEND_TIMEOUT, MAIL_FROM_VAR, SMTP_URL_VAR, SmtpSecurity,
    SmtpSettings, SmtpSettingsError,
};
