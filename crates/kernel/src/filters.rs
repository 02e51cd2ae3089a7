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
