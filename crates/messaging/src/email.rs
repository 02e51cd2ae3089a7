//! E-mail to people of the organization (`POST /v1/send-email/`), and the one-time login codes
//! of the CLI.
//!
//! A send stores one [`Email`] per recipient, each with its own queue job, so one refused
//! address fails only its own e-mail and no recipient sees the others' addresses. The worker
//! sends each through the [`Mailer`] port with an HTML body and its plain-text alternative.

use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::jobs::{JobKind, NewJob};
use teamcomm_kernel::{Error, ErrorCode, OrgId, RepoError, SharedClock, UserId, text};
use teamcomm_org::{OrgRepository, User};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::html_text::html_to_text;
use crate::mail::{MailError, Mailbox, Mailer, OutgoingMail};
use crate::message::FailureReason;
use crate::ports::EmailRepository;

/// At most this many recipients per send.
pub const MAX_EMAIL_RECIPIENTS: usize = 100;
/// The longest subject, in characters.
pub const MAX_EMAIL_SUBJECT_CHARS: usize = 255;
/// The largest content, in bytes.
pub const MAX_EMAIL_CONTENT_BYTES: usize = 256 * 1024;
/// Attempts before an e-mail ends `failed` (with the default backoff, about an hour and a half).
pub const EMAIL_MAX_ATTEMPTS: u32 = 10;

/// The body of `POST /v1/send-email/`, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendEmailRequest {
    pub users_uuids: Vec<Uuid>,
    pub email_subject: String,
    /// HTML, or plain text when it holds no tag.
    pub email_content: String,
}

/// Where an e-mail stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmailStatus {
    Queued,
    /// The mail server accepted it.
    Sent,
    Failed(FailureReason),
}

impl EmailStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            EmailStatus::Queued => "queued",
            EmailStatus::Sent => "sent",
            EmailStatus::Failed(_) => "failed",
        }
    }
}

/// One e-mail to one person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    /// Also the `Message-ID`'s left part.
    pub id: Uuid,
    pub org_id: OrgId,
    pub sender: UserId,
    pub recipient: UserId,
    pub to: Mailbox,
    pub subject: String,
    pub html: Option<String>,
    pub text: String,
    pub status: EmailStatus,
    pub created_at: OffsetDateTime,
}

impl Email {
    /// The e-mail as the mailer sends it.
    pub fn outgoing(&self) -> OutgoingMail {
        OutgoingMail {
            message_id: self.id.to_string(),
            to: vec![self.to.clone()],
            subject: self.subject.clone(),
            html: self.html.clone(),
            text: self.text.clone(),
        }
    }
}

/// The HTML part and the plain-text part of `content`: HTML gets its text generated; content
/// with no tag is plain text and is sent as written, alone.
pub fn mail_bodies(content: &str) -> (Option<String>, String) {
    let is_html = content.match_indices('<').any(|(at, _)| {
        content[at + 1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '!')
    });
    if is_html {
        (Some(content.to_owned()), html_to_text(content))
    } else {
        (None, content.to_owned())
    }
}

/// What `send_email` queued: one e-mail per recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailsQueued {
    pub email_ids: Vec<Uuid>,
}

/// The body of `POST /v1/agent-email/send/` (the vendor CLI's `agent email send`), as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentEmailRequest {
    /// The agent the e-mail is sent for.
    pub agent_name: String,
    /// Addresses as typed.
    pub to: Vec<String>,
    pub subject: String,
    pub body_html: String,
}

/// What `send_agent_email` did: e-mails queued to the addresses that are people of the
/// organization, out of the distinct addresses given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentEmailQueued {
    pub sent_count: usize,
    pub total_recipients: usize,
    /// Where replies go: nowhere yet (the service reads no mail), so `None`.
    pub reply_to: Option<String>,
    pub email_ids: Vec<Uuid>,
}

/// The longest agent name, in characters.
pub const MAX_AGENT_NAME_CHARS: usize = 100;

/// The address list of an agent's or an automation's mail: 1 to [`MAX_EMAIL_RECIPIENTS`]
/// well-formed addresses, normalized, duplicates collapsed, in the order given.
fn checked_addresses(field: &str, to: &[String]) -> Result<Vec<String>, Error> {
    if to.is_empty() {
        return Err(Error::invalid_field(field, "Name at least one address."));
    }
    if to.len() > MAX_EMAIL_RECIPIENTS {
        return Err(Error::invalid_field(
            field,
            format!("Send to at most {MAX_EMAIL_RECIPIENTS} addresses at once."),
        ));
    }
    let mut addresses: Vec<String> = Vec::new();
    for raw in to {
        let address = teamcomm_org::normalize_email(raw).ok_or_else(|| {
            Error::invalid_field(field, format!("'{raw}' is not an e-mail address."))
        })?;
        if !addresses.contains(&address) {
            addresses.push(address);
        }
    }
    Ok(addresses)
}

/// The subject rule of every send: one line of text.
fn checked_subject(field: &str, subject: &str) -> Result<String, Error> {
    text::name(field, subject, MAX_EMAIL_SUBJECT_CHARS)
}

/// The content rule of every send: not blank, at most [`MAX_EMAIL_CONTENT_BYTES`].
fn checked_content(field: &str, content: &str) -> Result<(), Error> {
    if content.trim().is_empty() {
        Err(Error::invalid_field(field, "This field may not be blank."))
    } else if content.len() > MAX_EMAIL_CONTENT_BYTES {
        Err(Error::invalid_field(
            field,
            format!("The content holds at most {MAX_EMAIL_CONTENT_BYTES} bytes."),
        ))
    } else {
        Ok(())
    }
}

/// E-mail to people of the actor's organization.
#[derive(Clone)]
pub struct EmailService {
    emails: Arc<dyn EmailRepository>,
    people: Arc<dyn OrgRepository>,
    clock: SharedClock,
}

impl EmailService {
    pub fn new(
        emails: Arc<dyn EmailRepository>,
        people: Arc<dyn OrgRepository>,
        clock: SharedClock,
    ) -> Self {
        EmailService {
            emails,
            people,
            clock,
        }
    }

    /// Queues one e-mail per person named (duplicates collapse). Every person must be an
    /// active person of the organization (`one_or_more_users_not_found` names those who are
    /// not, in `extra.users`); the subject is one line of text; the content is not blank.
    pub async fn send_email(
        &self,
        actor: &User,
        request: SendEmailRequest,
    ) -> Result<EmailsQueued, Error> {
        let mut errors = teamcomm_kernel::FieldErrors::new();
        let recipients_given = if request.users_uuids.is_empty() {
            Err(Error::invalid_field(
                "users_uuids",
                "Name at least one person.",
            ))
        } else if request.users_uuids.len() > MAX_EMAIL_RECIPIENTS {
            Err(Error::invalid_field(
                "users_uuids",
                format!("Send to at most {MAX_EMAIL_RECIPIENTS} people at once."),
            ))
        } else {
            Ok(())
        };
        errors.note(&recipients_given);
        let subject = checked_subject("email_subject", &request.email_subject);
        errors.note(&subject);
        let content = checked_content("email_content", &request.email_content);
        errors.note(&content);
        errors.finish()?;
        let subject = subject?;

        let org = actor.org_id;
        let mut recipients: Vec<User> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        for id in &request.users_uuids {
            if recipients.iter().any(|u| u.id.0 == *id) {
                continue;
            }
            match self.people.get_user(org, UserId(*id)).await {
                Ok(u) if u.is_active => recipients.push(u),
                Ok(_) | Err(RepoError::NotFound) => unknown.push(id.to_string()),
                Err(e) => return Err(e.into()),
            }
        }
        if !unknown.is_empty() {
            unknown.dedup();
            return Err(Error::new(
                ErrorCode::OneOrMoreUsersNotFound,
                "Some of the people named are not active people of your organization.",
            )
            .with_extra("users", unknown));
        }

        self.queue(
            actor.org_id,
            actor.id,
            recipients,
            subject,
            &request.email_content,
        )
        .await
    }

    /// Queues an e-mail an agent sends: to each distinct address given that is an active
    /// person of the actor's organization; other addresses are counted and skipped (the service
    /// is no open relay), which the answer shows as `sent_count` below `total_recipients`.
    /// `agent_name` is one line of text; at least one and at most [`MAX_EMAIL_RECIPIENTS`]
    /// addresses, each a well-formed one; the subject and body follow `send_email`'s rules.
    pub async fn send_agent_email(
        &self,
        actor: &User,
        request: AgentEmailRequest,
    ) -> Result<AgentEmailQueued, Error> {
        let mut errors = teamcomm_kernel::FieldErrors::new();
        let agent = text::name("agent_name", &request.agent_name, MAX_AGENT_NAME_CHARS);
        errors.note(&agent);
        let to = checked_addresses("to", &request.to);
        errors.note(&to);
        let subject = checked_subject("subject", &request.subject);
        errors.note(&subject);
        let content = checked_content("body_html", &request.body_html);
        errors.note(&content);
        errors.finish()?;
        self.to_people_at(actor.org_id, actor.id, to?, subject?, &request.body_html)
            .await
    }

    /// Queues an e-mail an automation sends (a workflow's `send_email` step) on behalf of
    /// `sender`: the rules of [`EmailService::send_agent_email`] (only addresses of active
    /// people of the organization get mail; `to`, `subject` and `body` checked alike).
    pub async fn queue_automated(
        &self,
        org: OrgId,
        sender: UserId,
        to: &[String],
        subject: &str,
        body: &str,
    ) -> Result<AgentEmailQueued, Error> {
        let mut errors = teamcomm_kernel::FieldErrors::new();
        let addresses = checked_addresses("to", to);
        errors.note(&addresses);
        let checked = checked_subject("subject", subject);
        errors.note(&checked);
        errors.note(&checked_content("body", body));
        errors.finish()?;
        self.to_people_at(org, sender, addresses?, checked?, body)
            .await
    }

    /// One e-mail to each address that is an active person of `org`, in the order addressed.
    async fn to_people_at(
        &self,
        org: OrgId,
        sender: UserId,
        addresses: Vec<String>,
        subject: String,
        content: &str,
    ) -> Result<AgentEmailQueued, Error> {
        let mut recipients = self.people.find_users_by_email(org, &addresses).await?;
        recipients.retain(|u| u.is_active);
        // In the order addressed (the store answers in its own order).
        recipients.sort_by_key(|u| {
            addresses
                .iter()
                .position(|a| a.eq_ignore_ascii_case(&u.email))
        });
        let total_recipients = addresses.len();
        let queued = self
            .queue(org, sender, recipients, subject, content)
            .await?;
        Ok(AgentEmailQueued {
            sent_count: queued.email_ids.len(),
            total_recipients,
            reply_to: None,
            email_ids: queued.email_ids,
        })
    }

    /// One e-mail per recipient, each with its job, written together.
    async fn queue(
        &self,
        org: OrgId,
        sender: UserId,
        recipients: Vec<User>,
        subject: String,
        content: &str,
    ) -> Result<EmailsQueued, Error> {
        if recipients.is_empty() {
            return Ok(EmailsQueued {
                email_ids: Vec::new(),
            });
        }
        let (html, text) = mail_bodies(content);
        let now = self.clock.now();
        let emails: Vec<Email> = recipients
            .into_iter()
            .map(|u| Email {
                id: Uuid::now_v7(),
                org_id: org,
                sender,
                recipient: u.id,
                to: Mailbox {
                    name: Some(u.full_name()).filter(|n| !n.is_empty()),
                    address: u.email.clone(),
                },
                subject: subject.clone(),
                html: html.clone(),
                text: text.clone(),
                status: EmailStatus::Queued,
                created_at: now,
            })
            .collect();
        let jobs: Vec<NewJob> = emails
            .iter()
            .map(|e| NewJob {
                id: Uuid::now_v7(),
                org_id: org,
                kind: JobKind::Email,
                payload: json!({ "email_id": e.id }),
                run_at: now,
                max_attempts: EMAIL_MAX_ATTEMPTS,
            })
            .collect();
        self.emails.queue_emails(&emails, &jobs).await?;
        Ok(EmailsQueued {
            email_ids: emails.iter().map(|e| e.id).collect(),
        })
    }

    /// An e-mail of the actor's organization and where it stands. Its sender and admins see
    /// it; for anyone else, as for another organization's or an id that is not one, 404 (the
    /// rule of bot messages).
    pub async fn get_email(&self, actor: &User, id: &str) -> Result<Email, Error> {
        let id = Uuid::parse_str(id).map_err(|_| Error::not_found())?;
        let email = self.emails.get_email(actor.org_id, id).await?;
        if !crate::may_see_send(actor, email.sender) {
            return Err(Error::not_found());
        }
        Ok(email)
    }
}

/// The e-mail carrying a one-time login code (the CLI login's `POST /v1/cli/auth/...`).
pub fn login_code_mail(to: &str, code: &str, valid_minutes: u32) -> OutgoingMail {
    let text = format!(
        "Your teamcomm login code is {code}\n\nIt is valid for {valid_minutes} minutes and can be \
         used once. If you did not ask to log in, ignore this e-mail."
    );
    let html = format!(
        "<p>Your teamcomm login code is <strong>{code}</strong></p>\
         <p>It is valid for {valid_minutes} minutes and can be used once. If you did not ask to \
         log in, ignore this e-mail.</p>"
    );
    OutgoingMail {
        message_id: Uuid::now_v7().to_string(),
        to: vec![Mailbox {
            name: None,
            address: to.to_owned(),
        }],
        subject: format!("Your login code: {code}"),
        html: Some(html),
        text,
    }
}

/// Sends a login code now, bypassing the queue: the person is waiting for it, and a failure
/// is better answered at once (the caller maps `MailError::Temporary` to a 503) than retried
/// after the code expired.
pub async fn send_login_code(
    mailer: &dyn Mailer,
    to: &str,
    code: &str,
    valid_minutes: u32,
) -> Result<(), MailError> {
    mailer.send(&login_code_mail(to, code, valid_minutes)).await
}

#[cfg(test)]
mod tests {
    use teamcomm_kernel::jobs::{JobKind, JobState};

    use super::*;
    use crate::test_world::{NOW, World, code};
    use crate::testing::RecordingMailer;

    fn request(users: &[&User]) -> SendEmailRequest {
        SendEmailRequest {
            users_uuids: users.iter().map(|u| u.id.0).collect(),
            email_subject: "Quarterly update".into(),
            email_content: "<h1>Q4</h1><p>See <a href=\"https://acme.test/q4\">the plan</a>.</p>"
                .into(),
        }
    }

    #[tokio::test]
    async fn one_email_per_person_each_with_its_job() {
        let w = World::new().await;
        let queued = w
            .email()
            .send_email(&w.admin, request(&[&w.member, &w.teammate, &w.member]))
            .await
            .unwrap();
        assert_eq!(queued.email_ids.len(), 2);
        let emails = w.emails.all();
        assert_eq!(
            emails
                .iter()
                .map(|e| e.to.address.as_str())
                .collect::<Vec<_>>(),
            ["mia@acme.test", "tom@acme.test"]
        );
        let first = &emails[0];
        assert_eq!(
            (
                first.sender,
                first.recipient,
                first.status,
                first.created_at
            ),
            (w.admin.id, w.member.id, EmailStatus::Queued, NOW)
        );
        assert_eq!(first.text, "Q4\n\nSee the plan (https://acme.test/q4).");
        assert!(first.html.as_deref().unwrap().starts_with("<h1>"));
        let jobs = w.jobs();
        assert_eq!(jobs.len(), 2);
        for (job, email) in jobs.iter().zip(&emails) {
            assert_eq!((job.kind, job.state), (JobKind::Email, JobState::Queued));
            assert_eq!(job.payload, json!({"email_id": email.id}));
            assert_eq!(job.max_attempts, EMAIL_MAX_ATTEMPTS);
        }
    }

    #[tokio::test]
    async fn recipients_subject_and_content_are_checked() {
        let w = World::new().await;
        let service = w.email();
        for person in [&w.outsider, &w.inactive] {
            let e = service
                .send_email(&w.admin, request(&[&w.member, person]))
                .await
                .unwrap_err();
            assert_eq!(e.code(), ErrorCode::OneOrMoreUsersNotFound);
            assert_eq!(e.extra()["users"], json!([person.id.to_string()]));
        }
        let e = service
            .send_email(
                &w.admin,
                SendEmailRequest {
                    users_uuids: vec![],
                    email_subject: "Line\r\nBcc: everyone@evil.test".into(),
                    email_content: "  ".into(),
                },
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        assert_eq!(
            e.field_errors().keys().collect::<Vec<_>>(),
            ["email_content", "email_subject", "users_uuids"]
        );
        let too_many = SendEmailRequest {
            users_uuids: (0..=MAX_EMAIL_RECIPIENTS).map(|_| Uuid::now_v7()).collect(),
            ..request(&[])
        };
        assert_eq!(
            code(service.send_email(&w.admin, too_many).await),
            ErrorCode::ParamsValidationError
        );
        assert!(w.emails.all().is_empty() && w.jobs().is_empty());
    }

    #[test]
    fn content_without_tags_is_sent_as_plain_text_alone() {
        assert_eq!(
            mail_bodies("Hi,\n\n1 < 2 and that's it."),
            (None, "Hi,\n\n1 < 2 and that's it.".to_owned())
        );
        let (html, text) = mail_bodies("Hi<br/>there");
        assert_eq!(
            (html.as_deref(), text.as_str()),
            (Some("Hi<br/>there"), "Hi\nthere")
        );
    }

    #[tokio::test]
    async fn login_codes_are_sent_at_once_through_the_mailer() {
        let mailer = RecordingMailer::new();
        send_login_code(&mailer, "ada@acme.test", "482913", 10)
            .await
            .unwrap();
        let mail = &mailer.sent()[0];
        assert_eq!(mail.to[0].address, "ada@acme.test");
        assert!(mail.subject.contains("482913"));
        assert!(mail.text.contains("482913") && mail.text.contains("10 minutes"));
        assert!(
            mail.html
                .as_deref()
                .unwrap()
                .contains("<strong>482913</strong>")
        );
        mailer.fail_next([MailError::Temporary("421".into())]);
        assert_eq!(
            send_login_code(&mailer, "ada@acme.test", "1", 10).await,
            Err(MailError::Temporary("421".into()))
        );
    }

    #[tokio::test]
    async fn an_email_is_seen_by_its_sender_and_admins_of_its_organization_only() {
        let w = World::new().await;
        let service = w.email();
        let queued = service
            .send_email(&w.member, request(&[&w.teammate]))
            .await
            .unwrap();
        let id = queued.email_ids[0].to_string();
        for reader in [&w.member, &w.admin] {
            let email = service.get_email(reader, &id).await.unwrap();
            assert_eq!(
                (email.id, email.status, email.recipient),
                (queued.email_ids[0], EmailStatus::Queued, w.teammate.id)
            );
        }
        for (reader, id) in [
            (&w.teammate, id.as_str()),
            (&w.outsider, id.as_str()),
            (&w.admin, "not-an-id"),
            (&w.admin, "0190a6b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"),
        ] {
            assert_eq!(
                code(service.get_email(reader, id).await),
                ErrorCode::NotFound,
                "{id}"
            );
        }
    }

    fn agent_request(to: &[&str]) -> AgentEmailRequest {
        AgentEmailRequest {
            agent_name: "Claude Code".into(),
            to: to.iter().map(|a| (*a).to_owned()).collect(),
            subject: "Build passed".into(),
            body_html: "<p>All green.</p>".into(),
        }
    }

    #[tokio::test]
    async fn an_agent_mails_people_of_the_organization_and_counts_the_others() {
        let w = World::new().await;
        let queued = w
            .email()
            .send_agent_email(
                &w.member,
                agent_request(&[
                    " MIA@acme.test",
                    "tom@acme.test",
                    "mia@acme.test",
                    "ivy@acme.test",
                    "otto@globex.test",
                    "someone@example.com",
                ]),
            )
            .await
            .unwrap();
        // Mia once, Tom; not the inactive Ivy, another organization's Otto, or a stranger.
        assert_eq!(
            (queued.sent_count, queued.total_recipients, queued.reply_to),
            (2, 5, None)
        );
        let emails = w.emails.all();
        assert_eq!(
            emails
                .iter()
                .map(|e| (e.to.address.as_str(), e.sender, e.subject.as_str()))
                .collect::<Vec<_>>(),
            [
                ("mia@acme.test", w.member.id, "Build passed"),
                ("tom@acme.test", w.member.id, "Build passed")
            ]
        );
        assert_eq!(
            emails.iter().map(|e| e.id).collect::<Vec<_>>(),
            queued.email_ids
        );
        assert_eq!(emails[0].text, "All green.");
        assert_eq!(w.jobs().len(), 2);

        // Nobody of the organization: nothing queued, and that is not an error.
        let none = w
            .email()
            .send_agent_email(&w.member, agent_request(&["someone@example.com"]))
            .await
            .unwrap();
        assert_eq!((none.sent_count, none.total_recipients), (0, 1));
        assert_eq!(w.jobs().len(), 2);
    }

    #[tokio::test]
    async fn an_agent_email_names_every_bad_field() {
        let w = World::new().await;
        let service = w.email();
        let bad = AgentEmailRequest {
            agent_name: " ".into(),
            to: vec!["not an address".into()],
            subject: "two\nlines".into(),
            body_html: "   ".into(),
        };
        let e = service.send_agent_email(&w.admin, bad).await.unwrap_err();
        let fields = e.field_errors();
        for field in ["agent_name", "to", "subject", "body_html"] {
            assert!(fields.contains_key(field), "{field}: {fields:?}");
        }
        let e = service
            .send_agent_email(&w.admin, agent_request(&[]))
            .await
            .unwrap_err();
        assert!(e.field_errors().contains_key("to"));
        let many: Vec<String> = (0..=MAX_EMAIL_RECIPIENTS)
            .map(|n| format!("p{n}@acme.test"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let e = service
            .send_agent_email(&w.admin, agent_request(&many))
            .await
            .unwrap_err();
        assert!(e.field_errors().contains_key("to"));
        assert!(w.jobs().is_empty(), "nothing queued on a refusal");
    }
}
