//! The login's mail adapter: [`BackgroundLoginMailer`] implements the keys port
//! `LoginCodeMailer` with the messaging `Mailer` (SMTP), sending each code on a task of its own
//! so the answer to a code request never waits for the mail (its timing would tell whether the
//! address has an account). A failed send is logged; the person asks for a new code.

use std::sync::Arc;

use async_trait::async_trait;
use teamcomm_keys::{LoginCode, LoginCodeMailer};
use teamcomm_messaging::mail::Mailer;

pub struct BackgroundLoginMailer {
    mailer: Arc<dyn Mailer>,
}

impl BackgroundLoginMailer {
    pub fn new(mailer: Arc<dyn Mailer>) -> Self {
        BackgroundLoginMailer { mailer }
    }
}

#[async_trait]
impl LoginCodeMailer for BackgroundLoginMailer {
    async fn send_login_code(&self, to: &str, code: &LoginCode, valid_minutes: u32) {
        let mailer = self.mailer.clone();
        let (to, code) = (to.to_owned(), code.clone());
        tokio::spawn(async move {
            match teamcomm_messaging::send_login_code(&*mailer, &to, code.expose(), valid_minutes)
                .await
            {
                Ok(()) => tracing::info!("login code mailed"),
                Err(e) => tracing::warn!(error = %e, "a login code could not be mailed"),
            }
        });
    }
}
