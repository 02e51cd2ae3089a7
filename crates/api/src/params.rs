//! Query-parameter types. Each parses its text with the kernel's filter rules
//! (`teamcomm_kernel::filters`), refuses a bad value with the spec's code, and documents itself,
//! so a query struct built from them parses, validates and documents in one declaration.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use teamcomm_kernel::{Error, ErrorCode, UserId, filters};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::extract::query_de::reject;

/// Reads a parameter's text and hands it to `parse`.
fn text<'de, D, T>(d: D, parse: fn(&str) -> Result<T, Error>) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct Text<T>(fn(&str) -> Result<T, Error>);
    impl<T> Visitor<'_> for Text<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("text")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            (self.0)(v).map_err(reject)
        }
    }
    d.deserialize_str(Text(parse))
}

macro_rules! param_schema {
    ($ty:ty, $schema:expr) => {
        impl PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                let builder: ObjectBuilder = $schema;
                RefOr::T(Schema::Object(builder.build()))
            }
        }
        impl ToSchema for $ty {}
    };
}

/// A whole number of at least 1 (`page`, `page_size`, `limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtLeastOne(pub u64);

/// A run of decimal digits as a number; one too large for `u64` saturates (every use clamps).
fn whole_number(s: &str) -> Option<u64> {
    let digits = s.trim().strip_prefix('+').unwrap_or(s.trim());
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(u64::MAX))
}

impl<'de> Deserialize<'de> for AtLeastOne {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            whole_number(s)
                .filter(|n| *n >= 1)
                .map(AtLeastOne)
                .ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidFilterValue,
                        "Must be a whole number of at least 1.",
                    )
                })
        })
    }
}

param_schema!(
    AtLeastOne,
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(1))
);

/// A count of results to skip: 0 up to the largest offset the store can take (`i64::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offset(pub u64);

impl<'de> Deserialize<'de> for Offset {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            whole_number(s)
                .filter(|n| i64::try_from(*n).is_ok())
                .map(Offset)
                .ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidFilterValue,
                        "Must be a whole number from 0 to 9223372036854775807.",
                    )
                })
        })
    }
}

param_schema!(
    Offset,
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(0))
        .maximum(Some(i64::MAX))
);

/// `?search=`: trimmed, at most 256 characters (`search_query_too_long`); blank means none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search(pub Option<String>);

impl<'de> Deserialize<'de> for Search {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| filters::search(s).map(Search))
    }
}

param_schema!(
    Search,
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(filters::MAX_SEARCH_CHARS))
        .pattern(Some(crate::extract::schema_check::NO_NUL_PATTERN))
);

/// Flattens an optional [`Search`] into the domain's `Option<String>`.
pub fn search(s: Option<Search>) -> Option<String> {
    s.and_then(|s| s.0)
}

/// A day, `YYYY-MM-DD` (`invalid_date_range` otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Day(pub time::Date);

impl<'de> Deserialize<'de> for Day {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            filters::parse_day(s).map(Day).ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidDateRange,
                    "Must be a date in the format YYYY-MM-DD.",
                )
            })
        })
    }
}

param_schema!(
    Day,
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
);

/// `?user=`: a user UUID (`invalid_user_identifier` otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserRef(pub uuid::Uuid);

impl<'de> Deserialize<'de> for UserRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| filters::user_identifier(s).map(UserRef))
    }
}

param_schema!(
    UserRef,
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
);

/// `?filter=` of kudos lists: `kudos_received` or `kudos_given`, in any case
/// (`invalid_kudos_filter` otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KudosFilter(pub teamcomm_kudos::KudosDirection);

impl<'de> Deserialize<'de> for KudosFilter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            teamcomm_kudos::KudosDirection::parse(s).map(KudosFilter)
        })
    }
}

param_schema!(
    KudosFilter,
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(
            <teamcomm_kudos::KudosDirection as teamcomm_kernel::WireEnum>::ALL
                .iter()
                .map(|d| teamcomm_kernel::WireEnum::as_str(*d))
        ))
);

/// `?sender_uuid=`: a person's UUID (`invalid_sender_uuid` otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderRef(pub UserId);

impl<'de> Deserialize<'de> for SenderRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| teamcomm_kudos::parse_sender(s).map(SenderRef))
    }
}

param_schema!(
    SenderRef,
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
);

/// `?receiver_uuid=`: a person's UUID (`invalid_receiver_uuid` otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiverRef(pub UserId);

impl<'de> Deserialize<'de> for ReceiverRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| teamcomm_kudos::parse_receiver(s).map(ReceiverRef))
    }
}

param_schema!(
    ReceiverRef,
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
);

/// Most values of a comma-separated list filter (the CLI refuses more owners or submitters
/// before sending).
pub const MAX_LIST_VALUES: usize = 50;

/// The comma-separated values of a list filter, blanks dropped; more than
/// [`MAX_LIST_VALUES`] is `too_many_filter_values` (`extra.max`).
fn comma_list<T>(raw: &str, parse: impl Fn(&str) -> Result<T, Error>) -> Result<Vec<T>, Error> {
    let parts: Vec<&str> = raw
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() > MAX_LIST_VALUES {
        return Err(Error::new(
            ErrorCode::TooManyFilterValues,
            format!("Give at most {MAX_LIST_VALUES} values."),
        )
        .with_extra("max", MAX_LIST_VALUES));
    }
    parts.into_iter().map(parse).collect()
}

/// A UUID as clients write it (hyphenated, either case); the parser also takes other forms.
const UUID_PATTERN: &str =
    "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";

/// The schema of a comma-separated list: 1 to [`MAX_LIST_VALUES`] values matching
/// `item_pattern`, spaces around them allowed (blank values, which the parser drops, are left
/// out of the document).
fn comma_list_schema(item_pattern: &str, description: String) -> ObjectBuilder {
    let more = MAX_LIST_VALUES - 1;
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(
            "^ *(?:{item_pattern}) *(?:, *(?:{item_pattern}) *){{0,{more}}}$"
        )))
        .description(Some(description))
}

fn comma_uuids_schema() -> ObjectBuilder {
    comma_list_schema(
        UUID_PATTERN,
        format!("Comma-separated UUIDs, at most {MAX_LIST_VALUES}."),
    )
}

/// People by UUID, comma-separated (`owner_user_ids`, `submitter_user_ids`): each a UUID
/// (`invalid_user_identifier`), at most 50.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserIds(pub Vec<UserId>);

impl<'de> Deserialize<'de> for UserIds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            comma_list(s, |one| filters::user_identifier(one).map(UserId)).map(UserIds)
        })
    }
}

param_schema!(UserIds, comma_uuids_schema());

/// Objects by UUID, comma-separated (`labels`): each a UUID (`invalid_filter_value`), at
/// most 50.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UuidList(pub Vec<uuid::Uuid>);

impl<'de> Deserialize<'de> for UuidList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            comma_list(s, |one| {
                uuid::Uuid::parse_str(one)
                    .map_err(|_| Error::new(ErrorCode::InvalidFilterValue, "Must be UUIDs."))
            })
            .map(UuidList)
        })
    }
}

param_schema!(UuidList, comma_uuids_schema());

/// Names of a domain enum, comma-separated (`submission_sources=member,automation`): each
/// one of its names (`invalid_filter_value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names<T>(pub Vec<T>);

impl<'de, T: teamcomm_kernel::WireEnum> Deserialize<'de> for Names<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        text(d, |s| {
            comma_list(s, |one| {
                T::from_name(one).ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidFilterValue,
                        format!("Use any of: {}.", T::names()),
                    )
                })
            })
            .map(Names)
        })
    }
}

impl<T: teamcomm_kernel::WireEnum> PartialSchema for Names<T> {
    fn schema() -> RefOr<Schema> {
        let one_of: Vec<String> = T::ALL.iter().map(|v| regex::escape(v.as_str())).collect();
        let description = format!("Comma-separated, any of: {}.", T::names());
        RefOr::T(Schema::Object(
            comma_list_schema(&one_of.join("|"), description).build(),
        ))
    }
}

impl<T: teamcomm_kernel::WireEnum> ToSchema for Names<T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::query_de::from_query_string;

    #[derive(Debug, Deserialize)]
    struct Q {
        search: Option<Search>,
        day: Option<Day>,
        user: Option<UserRef>,
        n: Option<AtLeastOne>,
    }

    fn code(qs: &str) -> (ErrorCode, String) {
        let e = from_query_string::<Q>(qs).unwrap_err();
        (
            e.code(),
            e.extra()["parameter"].as_str().unwrap().to_owned(),
        )
    }

    #[test]
    fn lists_parse_each_value_and_count_them() {
        #[derive(Debug, Deserialize)]
        struct L {
            ids: Option<UserIds>,
            labels: Option<UuidList>,
        }
        let one = "01a20072-0d11-70e6-85aa-3b7d8f66493c";
        let l: L = from_query_string(&format!("ids={one},%20,{one}")).unwrap();
        assert_eq!(l.ids.unwrap().0.len(), 2);
        assert!(l.labels.is_none());
        let e = from_query_string::<L>(&format!("ids={one},bob")).unwrap_err();
        assert_eq!(
            (e.code(), e.extra()["parameter"].clone()),
            (ErrorCode::InvalidUserIdentifier, "ids".into())
        );
        let e = from_query_string::<L>("labels=x").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidFilterValue);
        let many = vec![one; 51].join(",");
        let e = from_query_string::<L>(&format!("ids={many}")).unwrap_err();
        assert_eq!(
            (e.code(), e.extra()["max"].clone()),
            (ErrorCode::TooManyFilterValues, 50.into())
        );
    }

    /// Whether `value` fits the pattern `T` documents.
    fn documented<T: PartialSchema>(value: &str) -> bool {
        let schema = serde_json::to_value(T::schema()).unwrap();
        regex::Regex::new(schema["pattern"].as_str().unwrap())
            .unwrap()
            .is_match(value)
    }

    #[test]
    fn list_patterns_admit_only_what_the_parsers_take() {
        #[derive(Debug, Deserialize)]
        struct L {
            ids: UserIds,
            labels: UuidList,
            sources: Names<teamcomm_forms::forms::SubmissionSource>,
        }
        let one = "01A20072-0d11-70e6-85aa-3b7d8f66493c";
        let fifty = vec![one; MAX_LIST_VALUES].join(",");
        for ids in [one.to_owned(), format!(" {one} , {one}"), fifty.clone()] {
            assert!(documented::<UuidList>(&ids), "{ids}");
            assert!(documented::<UserIds>(&ids), "{ids}");
            let l: L = from_query_string(&format!(
                "ids={ids}&labels={ids}&sources=member,%20automation"
            ))
            .unwrap();
            assert_eq!(l.ids.0.len(), l.labels.0.len());
            assert_eq!(l.sources.0.len(), 2);
        }
        for bad in ["x", "", &format!("{fifty},{one}"), &format!("{one};{one}")] {
            assert!(!documented::<UuidList>(bad), "{bad}");
        }
        type Sources = Names<teamcomm_forms::forms::SubmissionSource>;
        assert!(documented::<Sources>("member, automation"));
        assert!(!documented::<Sources>("members"));
    }

    #[test]
    fn each_type_answers_its_code() {
        let long = "a".repeat(257);
        assert_eq!(
            code(&format!("search={long}")),
            (ErrorCode::SearchQueryTooLong, "search".into())
        );
        assert_eq!(
            code("day=2026-1-1"),
            (ErrorCode::InvalidDateRange, "day".into())
        );
        assert_eq!(
            code("user=bob"),
            (ErrorCode::InvalidUserIdentifier, "user".into())
        );
        assert_eq!(code("n=0"), (ErrorCode::InvalidFilterValue, "n".into()));
        let q: Q = from_query_string("search=%20ada%20&day=2026-01-02&n=2").unwrap();
        assert_eq!(search(q.search).as_deref(), Some("ada"));
        assert_eq!(q.day.unwrap().0.to_string(), "2026-01-02");
        assert_eq!(q.n, Some(AtLeastOne(2)));
        assert!(q.user.is_none());
    }
}
