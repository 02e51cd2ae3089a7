//! Query-filter validation shared by every list (spec "Filter and query codes").

use time::Date;
use uuid::Uuid;

use crate::{Error, ErrorCode};

/// Longest `?search=` accepted anywhere.
pub const MAX_SEARCH_CHARS: usize = 256;

/// `?search=`: trimmed; empty means no search; over 256 characters is
/// `search_query_too_long`.
pub fn search(raw: Option<&str>) -> Result<Option<String>, Error> {
    let Some(raw) = raw else { return Ok(None) };
    if raw.contains('\0') {
        return Err(Error::new(
            ErrorCode::InvalidFilterValue,
            "The search query contains a NUL character.",
        )
        .with_extra("parameter", "search"));
    }
    if raw.chars().count() > MAX_SEARCH_CHARS {
        return Err(Error::new(
            ErrorCode::SearchQueryTooLong,
            format!("The search query is longer than {MAX_SEARCH_CHARS} characters."),
        )
        .with_extra("max_length", MAX_SEARCH_CHARS)
        .with_extra("parameter", "search"));
    }
    let trimmed = raw.trim();
    Ok((!trimmed.is_empty()).then(|| trimmed.to_owned()))
}

/// An inclusive range of days from `start_date`/`end_date` (either may be open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DateRange {
    pub start: Option<Date>,
    pub end: Option<Date>,
}

impl DateRange {
    /// Parses `YYYY-MM-DD` bounds; a malformed date or `start > end` is `invalid_date_range`.
    pub fn parse(start: Option<&str>, end: Option<&str>) -> Result<DateRange, Error> {
        let range = DateRange {
            start: start.map(|s| day(s, "start_date")).transpose()?,
            end: end.map(|s| day(s, "end_date")).transpose()?,
        };
        if let (Some(s), Some(e)) = (range.start, range.end)
            && s > e
        {
            return Err(Error::new(
                ErrorCode::InvalidDateRange,
                "start_date must not be after end_date.",
            ));
        }
        Ok(range)
    }
}

/// A day written `YYYY-MM-DD` (exactly; `2026-1-1` is not one).
pub fn parse_day(raw: &str) -> Option<Date> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    let raw = raw.trim();
    Date::parse(raw, &fmt).ok().filter(|_| raw.len() == 10)
}

fn day(raw: &str, parameter: &str) -> Result<Date, Error> {
    parse_day(raw).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidDateRange,
            format!("{parameter} must be a date in the format YYYY-MM-DD."),
        )
        .with_extra("parameter", parameter)
    })
}

/// `?user=`: must be a UUID (`invalid_user_identifier`).
pub fn user_identifier(raw: Option<&str>) -> Result<Option<Uuid>, Error> {
    raw.map(|s| {
        Uuid::parse_str(s.trim()).map_err(|_| {
            Error::new(
                ErrorCode::InvalidUserIdentifier,
                "`user` must be a user UUID.",
            )
            .with_extra("parameter", "user")
        })
    })
    .transpose()
}

/// A boolean query flag: `true`/`false`/`1`/`0` (case-insensitive), else `invalid_filter_value`.
pub fn flag(raw: Option<&str>, parameter: &str) -> Result<Option<bool>, Error> {
    raw.map(|s| match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(Error::new(
            ErrorCode::InvalidFilterValue,
            format!("`{parameter}` must be true or false."),
        )
        .with_extra("parameter", parameter)),
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_limits() {
        assert_eq!(search(None).unwrap(), None);
        assert_eq!(search(Some("  ")).unwrap(), None);
        assert_eq!(search(Some(" ada ")).unwrap().as_deref(), Some("ada"));
        assert!(search(Some(&"é".repeat(256))).is_ok());
        let e = search(Some(&"a".repeat(257))).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SearchQueryTooLong);
        assert_eq!(
            search(Some("a\0b")).unwrap_err().code(),
            ErrorCode::InvalidFilterValue
        );
    }

    #[test]
    fn date_ranges() {
        assert_eq!(DateRange::parse(None, None).unwrap(), DateRange::default());
        assert!(DateRange::parse(Some("2026-01-01"), Some("2026-01-01")).is_ok());
        for (s, e) in [
            (Some("2026-1-1"), None),
            (None, Some("01/02/2026")),
            (Some("2026-02-02"), Some("2026-02-01")),
        ] {
            assert_eq!(
                DateRange::parse(s, e).unwrap_err().code(),
                ErrorCode::InvalidDateRange
            );
        }
    }

    #[test]
    fn user_ids_and_flags() {
        assert!(user_identifier(Some("not-a-uuid")).is_err());
        assert!(
            user_identifier(Some("01a20072-0d11-70e6-85aa-3b7d8f66493c"))
                .unwrap()
                .is_some()
        );
        assert_eq!(flag(Some("TRUE"), "x").unwrap(), Some(true));
        assert_eq!(
            flag(Some("maybe"), "x").unwrap_err().code(),
            ErrorCode::InvalidFilterValue
        );
    }
}
