//! The rules of kudos that need no storage: what a message and a company value may hold, the
//! daily limit and when it resets, periods, and how the wall of fame ranks people.

use std::cmp::Reverse;

use teamcomm_kernel::{Error, ErrorCode, Page, PageRequest, UserId, filters, text, zone};
use time::{Date, OffsetDateTime, Time};

use crate::{Champion, DailyCap, NewCompanyValue, Span, Standing, Tallies, ValueShare, WallOfFame};

/// How many kudos one person may give per day, the day being the giver's local calendar day
/// (their profile's time zone); the allowance resets at their local midnight. Boosts do not
/// count. Ten is generous for genuine recognition and stops a script from flooding a channel.
pub const DAILY_KUDOS_LIMIT: u32 = 10;

/// The longest kudos message, in characters.
pub const MAX_KUDOS_CONTENT: usize = 2000;

/// The most entries each receivers list of a request may name.
pub const MAX_RECEIVERS: usize = 100;

/// The longest company value name, in characters.
pub const MAX_COMPANY_VALUE_NAME: usize = 100;

/// The longest company value emoji, in characters (a flag or a family is several).
pub const MAX_EMOJI: usize = 32;

/// The emoji of a company value registered without one.
const DEFAULT_EMOJI: &str = "⭐";

/// The values every organization starts with (name, emoji); an operator adds more, or
/// re-registers one to change its emoji.
pub const DEFAULT_COMPANY_VALUES: &[(&str, &str)] = &[
    ("Customer focus", "💙"),
    ("Growth", "🌱"),
    ("Innovation", "💡"),
    ("Integrity", "🧭"),
    ("Ownership", "🎯"),
    ("Teamwork", "🤝"),
];

/// The default values as the port stores them.
pub(crate) fn default_company_values() -> Vec<NewCompanyValue> {
    DEFAULT_COMPANY_VALUES
        .iter()
        .map(|(name, emoji)| NewCompanyValue {
            name: (*name).to_owned(),
            emoji: (*emoji).to_owned(),
        })
        .collect()
}

/// A kudos message: trimmed, at most [`MAX_KUDOS_CONTENT`] characters. Line breaks and tabs
/// are fine (paragraphs, lists); otherwise a message follows the text rule of names: no other
/// control character, no bidirectional override, not blank or made of invisible characters.
pub(crate) fn validate_content(raw: &str) -> Result<String, Error> {
    let content = raw.trim();
    let flat: String = content
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    text::name("content", &flat, MAX_KUDOS_CONTENT)?;
    Ok(content.to_owned())
}

impl NewCompanyValue {
    /// A value's name follows the text rule; its emoji is one short run of visible
    /// characters without spaces (default ⭐).
    pub fn new(name: &str, emoji: Option<&str>) -> Result<Self, Error> {
        let name = text::name("name", name, MAX_COMPANY_VALUE_NAME)?;
        let emoji = match emoji.map(str::trim) {
            None | Some("") => DEFAULT_EMOJI.to_owned(),
            Some(e) => {
                let e = text::name("emoji", e, MAX_EMOJI)?;
                if e.chars().any(char::is_whitespace) {
                    return Err(Error::invalid_field(
                        "emoji",
                        "An emoji may not contain spaces.",
                    ));
                }
                e
            }
        };
        Ok(NewCompanyValue { name, emoji })
    }
}

/// `?sender_uuid=`: a person's UUID (`invalid_sender_uuid` otherwise).
pub fn parse_sender(raw: &str) -> Result<UserId, Error> {
    filters::person_uuid(raw, ErrorCode::InvalidSenderUuid, "sender_uuid")
}

/// `?receiver_uuid=`: a person's UUID (`invalid_receiver_uuid` otherwise).
pub fn parse_receiver(raw: &str) -> Result<UserId, Error> {
    filters::person_uuid(raw, ErrorCode::InvalidReceiverUuid, "receiver_uuid")
}

/// The instants between the start of `start` and the end of `end`, both days on the wall clock
/// of `zone` (the viewer's). A start after the end is `invalid_date_range`.
pub(crate) fn span_of_days(
    start: Option<Date>,
    end: Option<Date>,
    zone_name: &str,
) -> Result<Span, Error> {
    let (start, end) = filters::day_range(start, end)?;
    let (from, until) = zone::day_span(start, end, zone_name);
    Ok(Span { from, until })
}

/// The giver's allowance for the local day of `now`.
pub(crate) fn daily_cap(now: OffsetDateTime, zone_name: &str) -> DailyCap {
    DailyCap {
        since: zone::instant_at(zone::local_date(now, zone_name), Time::MIDNIGHT, zone_name),
        limit: DAILY_KUDOS_LIMIT,
    }
}

/// 406 `kudos_daily_limit_reached`, with the limit and the whole seconds until the giver's
/// next local midnight (`extra.limit`, `extra.retry_after`).
pub(crate) fn daily_limit_reached(now: OffsetDateTime, zone_name: &str) -> Error {
    let today = zone::local_date(now, zone_name);
    let retry_after = today
        .next_day()
        .map(|tomorrow| zone::instant_at(tomorrow, Time::MIDNIGHT, zone_name) - now)
        .map_or(1, |left| {
            // Rounded up: retrying after the rounded-down second would still be "today".
            let secs = left.whole_seconds() + i64::from(left.subsec_nanoseconds() > 0);
            secs.max(1)
        });
    Error::new(
        ErrorCode::KudosDailyLimitReached,
        format!(
            "Daily kudos limit reached: you can give {DAILY_KUDOS_LIMIT} kudos a day. \
             The limit resets at midnight in your time zone."
        ),
    )
    .with_extra("limit", DAILY_KUDOS_LIMIT)
    .with_extra("retry_after", retry_after)
}

/// Ranks the tallies: the leaderboard is everyone who received kudos, by score (received plus
/// +1s) then name; equal scores share a position. The top receiver and the top giver are the
/// highest counts (ties: by name); percentages are of the kudos that celebrated a value.
pub(crate) fn wall_of_fame(tallies: Tallies, viewer: UserId, page: PageRequest) -> WallOfFame {
    let Tallies { mut people, values } = tallies;
    people.sort_by(|a, b| {
        let key = |t: &crate::PersonTally| {
            (
                t.person.first_name.clone(),
                t.person.last_name.clone(),
                t.person.id,
            )
        };
        key(a).cmp(&key(b))
    });
    let champion = |count: fn(&crate::PersonTally) -> u64| {
        people
            .iter()
            .filter(|t| count(t) > 0)
            // The first of the highest in name order: max_by_key keeps the last maximum.
            .min_by_key(|t| Reverse(count(t)))
            .map(|t| Champion {
                person: t.person.clone(),
                count: count(t),
            })
    };
    let top_receiver = champion(|t| t.received);
    let top_giver = champion(|t| t.given);

    let mut ranked: Vec<_> = people.into_iter().filter(|t| t.received > 0).collect();
    // Stable: equal scores stay in name order.
    ranked.sort_by_key(|t| Reverse(t.received + t.plus));
    let mut standings: Vec<Standing> = Vec::with_capacity(ranked.len());
    for (i, t) in ranked.into_iter().enumerate() {
        let score = t.received + t.plus;
        let position = match standings.last() {
            Some(prev) if prev.score == score => prev.position,
            _ => i as u64 + 1,
        };
        standings.push(Standing {
            position,
            person: t.person,
            score,
            received: t.received,
            plus: t.plus,
        });
    }
    let viewer_position = standings
        .iter()
        .find(|s| s.person.id == viewer)
        .map(|s| s.position);
    let total = standings.len() as u64;

    let celebrated: u64 = values.iter().map(|v| v.count).sum();
    let mut dna: Vec<ValueShare> = values
        .into_iter()
        .filter(|v| v.count > 0)
        .map(|v| ValueShare {
            percentage: (v.count as f64 * 1000.0 / celebrated as f64).round() / 10.0,
            count: v.count,
            value: v.value,
        })
        .collect();
    dna.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.value.name.cmp(&b.value.name))
    });

    let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
    WallOfFame {
        top_receiver,
        top_giver,
        viewer_position,
        ranked: total,
        dna,
        leaderboard: Page {
            count: total,
            results: standings.into_iter().skip(offset).take(limit).collect(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn the_day_follows_daylight_saving() {
        // 25 October 2026 in Madrid lasts 25 hours (03:00 CEST -> 02:00 CET).
        let at = datetime!(2026-10-25 00:30 UTC);
        let cap = daily_cap(at, "Europe/Madrid");
        assert_eq!(cap.since, datetime!(2026-10-24 22:00 UTC));
        assert_eq!(cap.limit, DAILY_KUDOS_LIMIT);
        let e = daily_limit_reached(at, "Europe/Madrid");
        assert_eq!(e.extra()["retry_after"], 22 * 3600 + 1800);
    }

    #[test]
    fn periods_are_whole_local_days() {
        let span = span_of_days(
            Some(date!(2026 - 11 - 01)),
            Some(date!(2026 - 11 - 01)),
            "America/New_York",
        )
        .unwrap();
        assert_eq!(span.from, Some(datetime!(2026-11-01 04:00 UTC)));
        // 1 November 2026 ends daylight saving in New York: the day has 25 hours.
        assert_eq!(span.until, Some(datetime!(2026-11-02 05:00 UTC)));
        assert_eq!(span_of_days(None, None, "UTC").unwrap(), Span::default());
        assert_eq!(
            span_of_days(
                Some(date!(2026 - 11 - 02)),
                Some(date!(2026 - 11 - 01)),
                "UTC"
            )
            .unwrap_err()
            .code(),
            ErrorCode::InvalidDateRange
        );
    }
}
