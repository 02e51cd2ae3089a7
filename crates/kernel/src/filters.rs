//! Query-filter rules shared by every list (spec "Filter and query codes"): how one parameter's
//! text reads, and the code a bad one answers. The app's query decoder names the parameter
//! (`extra.parameter`).

use time::Date;
use uuid::Uuid;

use crate::{Error, ErrorCode};

/// Longest `?search=` accepted anywhere.
pub const MAX_SEARCH_CHARS: usize = 256;

/// A search text: trimmed; blank means no search; over 256 characters is
/// `search_query_too_long`; a NUL character (which PostgreSQL text cannot hold) is
/// `invalid_filter_value`.
pub fn search(raw: &str) -> Result<Option<String>, Error> {
    if raw.contains('\0') {
        return Err(Error::new(
            ErrorCode::InvalidFilterValue,
            "The search query contains a NUL character.",
        ));
    }
    if raw.chars().count() > MAX_SEARCH_CHARS {
        return Err(Error::new(
            ErrorCode::SearchQueryTooLong,
            format!("The search query is longer than {MAX_SEARCH_CHARS} characters."),
        )
        .with_extra("max_length", MAX_SEARCH_CHARS));
    }
    let trimmed = raw.trim();
    Ok((!trimmed.is_empty()).then(|| trimmed.to_owned()))
}

/// A day written `YYYY-MM-DD` (exactly; `2026-1-1` is not one).
pub fn parse_day(raw: &str) -> Option<Date> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    let raw = raw.trim();
    Date::parse(raw, &fmt).ok().filter(|_| raw.len() == 10)
}

/// A span of days, `(from, until)`; `invalid_date_range` when both are given and the first
/// comes after the last.
pub fn day_range(
    from: Option<Date>,
    until: Option<Date>,
) -> Result<(Option<Date>, Option<Date>), Error> {
    match (from, until) {
        (Some(f), Some(u)) if f > u => Err(Error::new(
            ErrorCode::InvalidDateRange,
            "The first day comes after the last.",
        )),
        _ => Ok((from, until)),
    }
}

/// A person named by UUID in the query parameter `parameter`; anything else answers `code`
/// (`invalid_user_identifier`, `invalid_sender_uuid`, ...).
pub fn person_uuid(raw: &str, code: ErrorCode, parameter: &str) -> Result<crate::UserId, Error> {
    Uuid::parse_str(raw.trim())
        .map(crate::UserId)
        .map_err(|_| Error::new(code, format!("`{parameter}` must be a user UUID.")))
}

/// A person named by UUID (`invalid_user_identifier` otherwise).
pub fn user_identifier(raw: &str) -> Result<Uuid, Error> {
    Uuid::parse_str(raw.trim())
        .map_err(|_| Error::new(ErrorCode::InvalidUserIdentifier, "Must be a user UUID."))
}

/// A boolean flag: `true`/`false`, `1`/`0` or `yes`/`no`, in any case.
pub fn parse_flag(raw: &str) -> Option<bool> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_range_is_in_order() {
        let (a, b) = (parse_day("2026-03-01"), parse_day("2026-03-02"));
        assert_eq!(day_range(a, b).unwrap(), (a, b));
        assert_eq!(day_range(a, a).unwrap(), (a, a));
        assert_eq!(day_range(None, a).unwrap(), (None, a));
        assert_eq!(
            day_range(b, a).unwrap_err().code(),
            ErrorCode::InvalidDateRange
        );
    }

    #[test]
    fn a_person_uuid_answers_the_parameters_code() {
        let id = Uuid::now_v7();
        assert_eq!(
            person_uuid(
                &format!(" {id} "),
                ErrorCode::InvalidSenderUuid,
                "sender_uuid"
            )
            .unwrap(),
            crate::UserId(id)
        );
        let e = person_uuid("bob", ErrorCode::InvalidReceiverUuid, "receiver_uuid").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidReceiverUuid);
        assert!(e.detail().contains("receiver_uuid"));
    }

    #[test]
    fn search_limits() {
        assert_eq!(search("  ").unwrap(), None);
        assert_eq!(search(" ada ").unwrap().as_deref(), Some("ada"));
        assert!(search(&"é".repeat(256)).is_ok());
        let e = search(&"a".repeat(257)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SearchQueryTooLong);
        assert_eq!(e.extra()["max_length"], 256);
        assert_eq!(
            search("a\0b").unwrap_err().code(),
            ErrorCode::InvalidFilterValue
        );
    }

    #[test]
    fn days() {
        assert_eq!(
            parse_day(" 2026-01-02 "),
            Some(time::macros::date!(2026 - 01 - 02))
        );
        for bad in ["2026-1-1", "01/02/2026", "2026-02-30", ""] {
            assert_eq!(parse_day(bad), None, "{bad}");
        }
    }

    #[test]
    fn user_ids_and_flags() {
        assert_eq!(
            user_identifier("not-a-uuid").unwrap_err().code(),
            ErrorCode::InvalidUserIdentifier
        );
        assert!(user_identifier("01a20072-0d11-70e6-85aa-3b7d8f66493c").is_ok());
        assert_eq!(parse_flag("TRUE"), Some(true));
        assert_eq!(parse_flag(" no "), Some(false));
        assert_eq!(parse_flag("maybe"), None);
    }
}
