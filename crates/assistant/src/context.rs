//! What the model is told about the person asking: who they are, their check-ins due today,
//! their responses of the last days, the kudos they received and gave. Read through the
//! services (so only what the person may see), bounded, and rendered as plain text.
//! Tasks do not exist yet; they are not part of it.

use async_trait::async_trait;
use teamcomm_forms::checkins::{CheckinListFilter, CheckinService, ResponseListFilter};
use teamcomm_kernel::{Error, PageRequest, SharedClock};
use teamcomm_kudos::{KudosDirection, KudosListFilter, KudosService};
use teamcomm_org::User;
use time::{Date, Duration};

use crate::OrgContext;

/// How many days back responses are read.
pub const RESPONSE_DAYS: i64 = 7;
/// At most this many of each list.
pub const MAX_ITEMS: usize = 20;
/// Answers and kudos texts are cut at this many characters.
const MAX_TEXT: usize = 500;

/// A check-in due today.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckinBrief {
    pub name: String,
    pub completed_today: bool,
    pub questions: Vec<String>,
}

/// One of the person's responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseBrief {
    pub checkin: String,
    pub date: Date,
    pub completed: bool,
    /// (question, answer as text).
    pub answers: Vec<(String, String)>,
}

/// Kudos the person received (`other`: the giver, `None` when anonymous) or gave (`other`:
/// the receivers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KudosBrief {
    pub other: Option<String>,
    pub content: String,
    pub company_value: Option<String>,
    pub date: Date,
}

/// Everything the model is told about the person.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssistantContext {
    pub person: String,
    pub organization: String,
    pub timezone: String,
    pub due_today: Vec<CheckinBrief>,
    pub recent_responses: Vec<ResponseBrief>,
    pub kudos_received: Vec<KudosBrief>,
    pub kudos_given: Vec<KudosBrief>,
}

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_TEXT {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(MAX_TEXT).collect();
        t.push('…');
        t
    }
}

impl AssistantContext {
    /// The context as the system prompt carries it.
    pub fn render(&self) -> String {
        let mut s = format!(
            "Person: {} (organization {}, time zone {})\n",
            self.person, self.organization, self.timezone
        );
        s.push_str("\nCheck-ins due today:\n");
        if self.due_today.is_empty() {
            s.push_str("- none\n");
        }
        for c in &self.due_today {
            let state = if c.completed_today {
                "answered"
            } else {
                "pending"
            };
            s.push_str(&format!("- {} ({state})\n", c.name));
            for q in &c.questions {
                s.push_str(&format!("  - {q}\n"));
            }
        }
        s.push_str(&format!(
            "\nTheir check-in responses of the last {RESPONSE_DAYS} days:\n"
        ));
        if self.recent_responses.is_empty() {
            s.push_str("- none\n");
        }
        for r in &self.recent_responses {
            let state = if r.completed { "" } else { ", partial" };
            s.push_str(&format!("- {} on {}{state}:\n", r.checkin, r.date));
            for (q, a) in &r.answers {
                s.push_str(&format!("  - {q} {a}\n"));
            }
        }
        for (title, list, who) in [
            ("Kudos they received", &self.kudos_received, "from"),
            ("Kudos they gave", &self.kudos_given, "to"),
        ] {
            s.push_str(&format!("\n{title}:\n"));
            if list.is_empty() {
                s.push_str("- none\n");
            }
            for k in list {
                let other = k.other.as_deref().unwrap_or("someone anonymous");
                let value = k
                    .company_value
                    .as_deref()
                    .map(|v| format!(" [{v}]"))
                    .unwrap_or_default();
                s.push_str(&format!(
                    "- {} {who} {other}{value}: {}\n",
                    k.date, k.content
                ));
            }
        }
        s
    }
}

/// The context read through the check-in and kudos services.
#[derive(Clone)]
pub struct ServicesContext {
    pub checkins: CheckinService,
    pub kudos: KudosService,
    pub clock: SharedClock,
}

fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => cut(s),
        serde_json::Value::Bool(true) => "yes".into(),
        serde_json::Value::Bool(false) => "no".into(),
        serde_json::Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

#[async_trait]
impl OrgContext for ServicesContext {
    async fn context(&self, person: &User, organization: &str) -> Result<AssistantContext, Error> {
        let now = self.clock.now();
        let due = self.checkins.due_today(person).await?;
        let pending: Vec<uuid::Uuid> = self
            .checkins
            .pending_today(person)
            .await?
            .into_iter()
            .map(|t| t.checkin.id)
            .collect();
        let due_today = due
            .iter()
            .take(MAX_ITEMS)
            .map(|t| CheckinBrief {
                name: t.checkin.name.clone(),
                completed_today: !pending.contains(&t.checkin.id),
                questions: t
                    .checkin
                    .questions
                    .questions
                    .iter()
                    .map(|q| q.question.clone())
                    .collect(),
            })
            .collect();

        // The person's own responses to the check-ins they see, newest first.
        let listed = self
            .checkins
            .list_checkins(
                person,
                &CheckinListFilter::default(),
                PageRequest {
                    offset: 0,
                    limit: MAX_ITEMS as u64,
                },
            )
            .await?;
        let mut recent_responses = Vec::new();
        for row in listed.results {
            let today = row.checkin.today_for(person, now);
            let filter = ResponseListFilter {
                user: Some(person.id),
                from: Some(today - Duration::days(RESPONSE_DAYS)),
                until: Some(today),
                ..ResponseListFilter::default()
            };
            let page = self
                .checkins
                .list_responses(
                    person,
                    row.checkin.id,
                    &filter,
                    PageRequest {
                        offset: 0,
                        limit: RESPONSE_DAYS as u64 + 1,
                    },
                )
                .await?;
            for listed in page.page.results {
                let r = listed.response;
                if r.user_id != person.id {
                    continue;
                }
                recent_responses.push(ResponseBrief {
                    checkin: row.checkin.name.clone(),
                    date: r.date,
                    completed: r.completed,
                    answers: r
                        .answers
                        .iter()
                        .map(|a| (a.question.clone(), text_of(&a.response)))
                        .collect(),
                });
            }
        }
        recent_responses.sort_by(|a, b| b.date.cmp(&a.date).then(a.checkin.cmp(&b.checkin)));
        recent_responses.truncate(MAX_ITEMS);

        let page = PageRequest {
            offset: 0,
            limit: MAX_ITEMS as u64,
        };
        let mut kudos_lists = Vec::with_capacity(2);
        for direction in [KudosDirection::Received, KudosDirection::Given] {
            let filter = KudosListFilter {
                direction: Some(direction),
                ..KudosListFilter::default()
            };
            let found = self.kudos.list_own(person, &filter, page).await?;
            kudos_lists.push(
                found
                    .results
                    .into_iter()
                    .map(|k| KudosBrief {
                        other: match direction {
                            KudosDirection::Received => k.giver.map(|g| g.full_name()),
                            KudosDirection::Given => Some(
                                k.receivers
                                    .iter()
                                    .map(User::full_name)
                                    .collect::<Vec<_>>()
                                    .join(", "),
                            ),
                        },
                        content: cut(&k.content),
                        company_value: k.company_value.map(|v| v.name),
                        date: k.created_at.date(),
                    })
                    .collect::<Vec<_>>(),
            );
        }
        let kudos_given = kudos_lists.pop().unwrap_or_default();
        let kudos_received = kudos_lists.pop().unwrap_or_default();
        Ok(AssistantContext {
            person: format!("{} <{}>", person.full_name(), person.email),
            organization: organization.to_owned(),
            timezone: person.timezone.clone(),
            due_today,
            recent_responses,
            kudos_received,
            kudos_given,
        })
    }
}
