//! What the engine says: questions, reminders, the day's report, and the daily-finished event.

use serde_json::{Value, json};
use teamcomm_forms::checkins::{AuthoredResponse, Checkin};
use teamcomm_kernel::{Event, EventType};
use teamcomm_org::User;
use time::{Date, OffsetDateTime};

/// The text asking question `index`; the first carries the check-in's intro.
pub(crate) fn question_text(checkin: &Checkin, index: u16) -> Option<String> {
    let question = checkin.questions.questions.get(usize::from(index))?;
    let heading = if index == 0 {
        match checkin.options.custom_template_intro.as_deref() {
            Some(intro) => format!("{intro}\n\n"),
            None => format!("It's time for *{}*.\n\n", checkin.name),
        }
    } else {
        String::new()
    };
    Some(format!("{heading}{}", question.question))
}

/// The text of a reminder: the question still waiting.
pub(crate) fn reminder_text(checkin: &Checkin, waiting: u16) -> String {
    let question = checkin
        .questions
        .questions
        .get(usize::from(waiting))
        .map(|q| q.question.as_str())
        .unwrap_or_default();
    format!(
        "Reminder: *{}* is waiting for your answer.\n\n{question}",
        checkin.name
    )
}

/// Who wrote a response, as the report shows it.
fn author_name(checkin: &Checkin, r: &AuthoredResponse) -> String {
    if checkin.options.is_anonymous {
        "Someone".to_owned()
    } else {
        r.author.full_name()
    }
}

fn answer_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(answer_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

fn response_block(checkin: &Checkin, r: &AuthoredResponse) -> String {
    let mut block = format!("*{}*", author_name(checkin, r));
    if !r.response.completed {
        block.push_str(" (partial)");
    }
    for a in &r.response.answers {
        block.push_str(&format!("\n> {}\n{}", a.question, answer_text(&a.response)));
    }
    block
}

/// The report of a check-in's day: one message with every response (and who has not
/// answered, unless the check-in is anonymous), or with `send_reports_one_by_one` one message
/// per response (none when nobody answered).
pub(crate) fn report_texts(
    checkin: &Checkin,
    day: Date,
    responses: &[AuthoredResponse],
    silent: &[User],
) -> Vec<String> {
    let title = format!("*{}* report for {day}", checkin.name);
    if checkin.options.send_reports_one_by_one {
        return responses
            .iter()
            .map(|r| format!("{title}\n\n{}", response_block(checkin, r)))
            .collect();
    }
    let mut text = title;
    if responses.is_empty() {
        text.push_str("\n\nNobody answered.");
    }
    for r in responses {
        text.push_str("\n\n");
        text.push_str(&response_block(checkin, r));
    }
    if !silent.is_empty() && !checkin.options.is_anonymous {
        let names: Vec<String> = silent.iter().map(User::full_name).collect();
        text.push_str(&format!("\n\nNo answer from: {}", names.join(", ")));
    }
    vec![text]
}

/// `followups.daily.finished` (docs/events.md).
pub(crate) fn daily_finished_event(
    checkin: &Checkin,
    day: Date,
    expected: usize,
    responses: &[AuthoredResponse],
    at: OffsetDateTime,
) -> Event {
    let listed: Vec<Value> = responses
        .iter()
        .map(|r| {
            let user = if checkin.options.is_anonymous {
                Value::Null
            } else {
                json!({
                    "uuid": r.author.id.to_string(),
                    "full_name": r.author.full_name(),
                    "email": r.author.email,
                })
            };
            json!({
                "uuid": r.response.id.to_string(),
                "response_completed": r.response.completed,
                "user": user,
            })
        })
        .collect();
    Event::new(
        checkin.org_id,
        EventType::FollowupsDailyFinished,
        Some(checkin.id),
        at,
        json!({
            "checkin": {"uuid": checkin.id.to_string(), "name": checkin.name},
            "report_date": day.to_string(),
            "expected_responses": expected,
            "completed_responses": responses.iter().filter(|r| r.response.completed).count(),
            "responses": listed,
        }),
    )
}
