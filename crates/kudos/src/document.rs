//! The kudos object as JSON, for the `kudos.posted` event (docs/events.md). It is the object
//! the API answers (`crates/api/src/routes/kudos.rs`, `KudosView`); the black-box tests hold
//! the two equal.

use serde_json::{Value, json};
use teamcomm_org::User;
use time::format_description::well_known::Rfc3339;

use crate::{CompanyValue, Kudos};

/// The kudos as a reader sees them: pass kudos already [`seen_by`](Kudos::seen_by) that reader
/// (an anonymous giver is `user: null`).
pub fn kudos_document(k: &Kudos) -> Value {
    let person = |u: &User| json!({"uuid": u.id.to_string(), "full_name": u.full_name()});
    json!({
        "id": k.id.to_string(),
        "uuid": k.id.to_string(),
        "parent": Value::Null,
        "user": k.giver.as_ref().map(|g| json!({
            "uuid": g.id.to_string(),
            "full_name": g.full_name(),
            "image": g.image,
            "role": g.role.as_str(),
        })),
        "receivers": k.receivers.iter().map(person).collect::<Vec<_>>(),
        "company_value": k.company_value.as_ref().map(value_document),
        "content": k.content,
        "is_anonymous": k.is_anonymous,
        "by_dailybot": k.by_dailybot,
        "metadata": {},
        "boosts": k.boosted_by.len(),
        "boosted_by": k.boosted_by.iter().map(person).collect::<Vec<_>>(),
        "created_at": k
            .created_at
            .to_offset(time::UtcOffset::UTC)
            .format(&Rfc3339)
            .unwrap_or_default(),
    })
}

fn value_document(v: &CompanyValue) -> Value {
    json!({
        "id": v.id.to_string(),
        "name": v.name,
        "value": v.name,
        "emoji": v.emoji,
    })
}
