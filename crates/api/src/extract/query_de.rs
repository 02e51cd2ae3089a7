//! A small serde deserializer for query strings: every value is text, parsed by the type of the
//! field it fills. The one reader of every query: [`super::Query`], [`crate::paging::ListQuery`]
//! and the Plan doors.
//!
//! - A sequence field (`Vec<T>`) takes every value of its key, repeated (`?owner=a&owner=b`) or
//!   comma-separated (`?owner=a,b`), at most [`MAX_VALUES`] (`too_many_filter_values`).
//! - Any other field takes its key's last value, but every value given must be valid.
//! - A blank value (`?search=`) is absent.
//! - A struct that denies unknown fields (`#[serde(deny_unknown_fields)]`) is strict: any other
//!   parameter is 400 `invalid_filter_value` naming it, before any value is read. The
//!   parameters other extractors read from the same query ([`READ_ELSEWHERE`]) are always let
//!   through.
//!
//! A bad value becomes the kernel error its type declares (a parameter type calls [`reject`] or
//! parses with [`text`]), or 400 `invalid_filter_value`; either way naming the parameter.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};
use teamcomm_kernel::{Error, ErrorCode};

/// Values a sequence parameter takes at most.
pub const MAX_VALUES: usize = 50;

/// The code of a repeatable filter given more than [`MAX_VALUES`] values: the spec's own for
/// the label filter ("not a label UUID, or more than 50": `invalid_label_filter`), else
/// `too_many_filter_values`.
fn over_limit_code(key: &str) -> ErrorCode {
    match key {
        "label" => ErrorCode::InvalidLabelFilter,
        _ => ErrorCode::TooManyFilterValues,
    }
}

/// The paging parameters ([`crate::paging::PageParams`]).
pub const PAGING: [&str; 4] = ["page", "page_size", "limit", "offset"];

/// A Plan write's `?dry_run=` (`routes::plan::common::DryRun`).
const DRY_RUN: &str = "dry_run";

/// Whether other extractors of the request read this parameter: a strict query lets it through
/// unless it declares it itself.
pub fn read_elsewhere(key: &str) -> bool {
    PAGING.contains(&key) || key == DRY_RUN
}

thread_local! {
    /// The domain error of the value being decoded (serde errors carry only text).
    static REJECTION: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// Refuses the value being decoded with `e` (use from a parameter type's `Deserialize`).
pub fn reject<E: de::Error>(e: Error) -> E {
    let detail = e.detail().to_owned();
    REJECTION.with(|r| *r.borrow_mut() = Some(e));
    E::custom(detail)
}

/// A parameter type's `Deserialize`: its text through `parse`, whose error is answered as is
/// (naming the parameter unless it does).
pub fn text<'de, D, T>(d: D, parse: impl FnOnce(&str) -> Result<T, Error>) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct Text<F>(F);
    impl<T, F: FnOnce(&str) -> Result<T, Error>> Visitor<'_> for Text<F> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("text")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            (self.0)(v).map_err(reject)
        }
    }
    d.deserialize_str(Text(parse))
}

/// Decodes `a=1&b=x%20y` into `T` (see the module docs for the rules).
pub fn from_query_string<T: DeserializeOwned>(qs: &str) -> Result<T, Error> {
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in url_pairs(qs) {
        let given = values.entry(k).or_default();
        if !v.trim().is_empty() {
            given.push(v);
        }
    }
    let singles = RefCell::new(BTreeSet::new());
    let decoded = decode::<T>(&values, &singles)?;
    // A single-valued parameter kept its last value; the earlier ones must be valid too.
    for key in singles.into_inner() {
        let given = &values[&key];
        for earlier in given.iter().take(given.len().saturating_sub(1)) {
            let mut one = values.clone();
            one.insert(key.clone(), vec![earlier.clone()]);
            decode::<T>(&one, &RefCell::default())?;
        }
    }
    Ok(decoded)
}

/// One decoding of `T`; `singles` collects the keys read as one value.
fn decode<T: DeserializeOwned>(
    values: &BTreeMap<String, Vec<String>>,
    singles: &RefCell<BTreeSet<String>>,
) -> Result<T, Error> {
    REJECTION.with(|r| r.borrow_mut().take());
    T::deserialize(QueryMap {
        entries: values
            .iter()
            .map(|(k, vs)| (k.clone(), vs.clone()))
            .collect::<Vec<_>>()
            .into_iter(),
        current: None,
        singles,
    })
    .map_err(|e| match e {
        QueryError::Final(e) => *e,
        QueryError::Missing(field) => invalid(field, format!("`{field}` is required.")),
        QueryError::Message(m) => Error::new(
            ErrorCode::InvalidFilterValue,
            format!("Invalid query parameters: {m}."),
        ),
    })
}

/// 400 `invalid_filter_value` naming `parameter`.
fn invalid(parameter: &str, detail: String) -> Error {
    Error::new(ErrorCode::InvalidFilterValue, detail).with_extra("parameter", parameter)
}

#[derive(Debug)]
enum QueryError {
    Message(String),
    /// A required parameter not given.
    Missing(&'static str),
    Final(Box<Error>),
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::Message(m) => f.write_str(m),
            QueryError::Missing(field) => write!(f, "missing {field}"),
            QueryError::Final(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for QueryError {}

impl de::Error for QueryError {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        QueryError::Message(msg.to_string())
    }

    /// Only a strict struct asks: the refusal the strict lists answer.
    fn unknown_field(field: &str, _expected: &'static [&'static str]) -> Self {
        QueryError::Final(Box::new(invalid(
            field,
            format!("Unknown query parameter {field}."),
        )))
    }

    fn missing_field(field: &'static str) -> Self {
        QueryError::Missing(field)
    }
}

/// The parameters, by name, each with its non-blank values.
struct QueryMap<'a> {
    entries: std::vec::IntoIter<(String, Vec<String>)>,
    current: Option<(String, Vec<String>)>,
    singles: &'a RefCell<BTreeSet<String>>,
}

impl QueryMap<'_> {
    /// Leaves out what a struct with these `fields` never reads: blank parameters it declares,
    /// and those other extractors read. Unknown parameters go first, so a strict struct refuses
    /// them before reading any value (blank ones too).
    fn for_struct(mut self, fields: &[&str]) -> Self {
        let (known, unknown): (Vec<_>, Vec<_>) = self
            .entries
            .partition(|(k, _)| fields.contains(&k.as_str()));
        self.entries = unknown
            .into_iter()
            .filter(|(k, _)| !read_elsewhere(k))
            .chain(known.into_iter().filter(|(_, vs)| !vs.is_empty()))
            .collect::<Vec<_>>()
            .into_iter();
        self
    }

    fn without_blanks(mut self) -> Self {
        self.entries = self
            .entries
            .filter(|(_, vs)| !vs.is_empty())
            .collect::<Vec<_>>()
            .into_iter();
        self
    }
}

impl<'de> Deserializer<'de> for QueryMap<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_map(self.without_blanks())
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_map(self.for_struct(fields))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

impl<'de> MapAccess<'de> for QueryMap<'_> {
    type Error = QueryError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, QueryError> {
        match self.entries.next() {
            None => Ok(None),
            Some((k, vs)) => {
                let key = seed.deserialize(k.clone().into_deserializer())?;
                self.current = Some((k, vs));
                Ok(Some(key))
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, QueryError> {
        let (key, values) = self.current.take().unwrap_or_default();
        let value = Values {
            key: &key,
            values: &values,
            singles: self.singles,
        };
        seed.deserialize(value).map_err(|e| {
            let rejected = REJECTION.with(|r| r.borrow_mut().take());
            let e = match (rejected, e) {
                (_, QueryError::Final(e)) => *e,
                (Some(e), _) if e.extra().contains_key("parameter") => e,
                (Some(e), _) => e.with_extra("parameter", key.clone()),
                (None, e) => invalid(&key, format!("`{key}`: {e}.")),
            };
            QueryError::Final(Box::new(e))
        })
    }
}

/// Every value of one parameter: a sequence takes them all, anything else the last.
struct Values<'a> {
    key: &'a str,
    values: &'a [String],
    singles: &'a RefCell<BTreeSet<String>>,
}

impl<'a> Values<'a> {
    /// The last value, the key noted as read once (its earlier values are checked afterwards).
    fn last(&self) -> Single<'a> {
        self.singles.borrow_mut().insert(self.key.to_owned());
        Single(self.values.last().map_or("", String::as_str))
    }
}

/// A newtype (`struct Id(u64)`) reads as the value it wraps.
macro_rules! newtype_reads_its_inner {
    () => {
        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            visitor: V,
        ) -> Result<V::Value, QueryError> {
            visitor.visit_newtype_struct(self)
        }
    };
}

/// Deserializer methods answered by the last value: `method` or `method(arg: Type, …)`.
macro_rules! to_last {
    ($($method:ident $(($($arg:ident: $ty:ty),*))?)*) => {$(
        fn $method<V: Visitor<'de>>(
            self,
            $($($arg: $ty,)*)?
            visitor: V,
        ) -> Result<V::Value, QueryError> {
            self.last().$method($($($arg,)*)? visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for Values<'_> {
    type Error = QueryError;

    to_last! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_unit deserialize_map deserialize_identifier
        deserialize_unit_struct(name: &'static str)
        deserialize_struct(name: &'static str, fields: &'static [&'static str])
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        if self.values.is_empty() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        let parts: Vec<&str> = self
            .values
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.len() > MAX_VALUES {
            return Err(reject(
                Error::new(
                    over_limit_code(self.key),
                    format!("At most {MAX_VALUES} values of {}.", self.key),
                )
                .with_extra("limit", MAX_VALUES),
            ));
        }
        visitor.visit_seq(Parts(parts.into_iter()))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_unit()
    }

    newtype_reads_its_inner! {}

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        self.deserialize_seq(visitor)
    }
}

/// The values of a sequence parameter, one at a time.
struct Parts<'a>(std::vec::IntoIter<&'a str>);

impl<'de> SeqAccess<'de> for Parts<'_> {
    type Error = QueryError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, QueryError> {
        self.0
            .next()
            .map(|p| seed.deserialize(Single(p)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// One value: text that parses into what the field asks for.
struct Single<'a>(&'a str);

impl Single<'_> {
    fn parse<T: std::str::FromStr>(&self, what: &str) -> Result<T, QueryError> {
        self.0
            .trim()
            .parse()
            .map_err(|_| QueryError::Message(format!("must be {what}")))
    }
}

/// Number methods: the text parsed as the field's type, else refused saying what it must be.
macro_rules! parsed {
    ($($method:ident => $visit:ident, $what:literal;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
            visitor.$visit(self.parse($what)?)
        }
    )*};
}

impl<'de> Deserializer<'de> for Single<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_str(self.0)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_some(self)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        match teamcomm_kernel::filters::parse_flag(self.0) {
            Some(flag) => visitor.visit_bool(flag),
            None => Err(QueryError::Message("must be true or false".into())),
        }
    }

    parsed! {
        deserialize_u64 => visit_u64, "a whole number of at least 0";
        deserialize_u32 => visit_u32, "a whole number of at least 0";
        deserialize_i64 => visit_i64, "a whole number";
    }

    newtype_reads_its_inner! {}

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_enum(self.0.into_deserializer())
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u128 f32 f64 char str string bytes byte_buf unit unit_struct
        seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// Decodes `a=1&b=x%20y` into pairs (`+` is a space, as in forms).
pub fn url_pairs(qs: &str) -> Vec<(String, String)> {
    qs.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode_component(k), decode_component(v))
        })
        .collect()
}

fn decode_component(s: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).map(|d| d as u8)
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'+' {
            out.push(b' ');
        } else if b == b'%' && i + 2 < bytes.len() {
            match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi * 16 + lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            }
        } else {
            out.push(b);
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Q {
        flag: Option<bool>,
        n: Option<u64>,
        s: Option<String>,
    }

    #[test]
    fn values_parse_by_field_type() {
        let q: Q = from_query_string("flag=TRUE&n=3&s=a%20b&other=x").unwrap();
        assert_eq!(
            q,
            Q {
                flag: Some(true),
                n: Some(3),
                s: Some("a b".into())
            }
        );
        let q: Q = from_query_string("n=1&n=2&s=").unwrap();
        assert_eq!((q.n, q.s), (Some(2), None));
        let e = from_query_string::<Q>("n=x&n=2").unwrap_err();
        assert_eq!(
            e.extra()["parameter"],
            "n",
            "every value given must be valid"
        );
    }

    #[test]
    fn bad_values_name_their_parameter() {
        let e = from_query_string::<Q>("flag=maybe").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidFilterValue);
        assert_eq!(e.extra()["parameter"], "flag");
        let e = from_query_string::<Q>("n=-1").unwrap_err();
        assert_eq!(e.extra()["parameter"], "n");
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Id(u64);

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Add,
        Remove,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Typed {
        big: Option<u64>,
        small: Option<u32>,
        signed: Option<i64>,
        one: Option<Id>,
        #[serde(default)]
        ids: Vec<Id>,
        mode: Option<Mode>,
    }

    #[test]
    fn numbers_newtypes_and_enums_read_by_their_type() {
        let t: Typed = from_query_string(
            "big=18446744073709551615&small=%204%20&signed=-3&one=7&ids=1,2&mode=remove",
        )
        .unwrap();
        assert_eq!(
            t,
            Typed {
                big: Some(u64::MAX),
                small: Some(4),
                signed: Some(-3),
                one: Some(Id(7)),
                ids: vec![Id(1), Id(2)],
                mode: Some(Mode::Remove)
            }
        );
        let t: Typed = from_query_string("mode=add&mode=remove&signed=").unwrap();
        assert_eq!((t.mode, t.signed), (Some(Mode::Remove), None));
        for (qs, parameter, detail) in [
            (
                "big=-1",
                "big",
                "`big`: must be a whole number of at least 0.",
            ),
            (
                "small=4294967296",
                "small",
                "`small`: must be a whole number of at least 0.",
            ),
            ("signed=1.5", "signed", "`signed`: must be a whole number."),
            (
                "one=x",
                "one",
                "`one`: must be a whole number of at least 0.",
            ),
            (
                "ids=1,x",
                "ids",
                "`ids`: must be a whole number of at least 0.",
            ),
        ] {
            let e = from_query_string::<Typed>(qs).unwrap_err();
            assert_eq!(
                (e.code(), e.extra()["parameter"].clone(), e.detail()),
                (ErrorCode::InvalidFilterValue, parameter.into(), detail),
                "{qs}"
            );
        }
        let e = from_query_string::<Typed>("mode=swap").unwrap_err();
        assert_eq!(
            (e.code(), e.extra()["parameter"].clone()),
            (ErrorCode::InvalidFilterValue, "mode".into())
        );
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Many {
        #[serde(default)]
        id: Vec<u64>,
        tag: Option<Vec<String>>,
        one: Option<u64>,
    }

    #[test]
    fn sequences_take_repeated_and_comma_separated_values() {
        let m: Many = from_query_string("id=1&id=2,3&id=&tag=a,%20b,,&one=4").unwrap();
        assert_eq!(
            m,
            Many {
                id: vec![1, 2, 3],
                tag: Some(vec!["a".into(), "b".into()]),
                one: Some(4)
            }
        );
        let m: Many = from_query_string("").unwrap();
        assert_eq!((m.id, m.tag), (vec![], None));
        let e = from_query_string::<Many>("id=1&id=x").unwrap_err();
        assert_eq!(
            (e.code(), e.extra()["parameter"].clone()),
            (ErrorCode::InvalidFilterValue, "id".into())
        );
        let fifty = vec!["7"; MAX_VALUES].join(",");
        let m: Many = from_query_string(&format!("id={fifty}")).unwrap();
        assert_eq!(m.id.len(), MAX_VALUES);
        let e = from_query_string::<Many>(&format!("id={fifty}&id=8")).unwrap_err();
        assert_eq!(
            (
                e.code(),
                e.extra()["parameter"].clone(),
                e.extra()["limit"].clone()
            ),
            (ErrorCode::TooManyFilterValues, "id".into(), 50.into())
        );
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        n: Option<u64>,
        offset: Option<u64>,
        #[serde(default)]
        id: Vec<u64>,
    }

    #[test]
    fn strict_structs_refuse_other_parameters_first() {
        let e = from_query_string::<Strict>("n=x&zzz=").unwrap_err();
        assert_eq!(
            (e.code(), e.detail(), e.extra()["parameter"].clone()),
            (
                ErrorCode::InvalidFilterValue,
                "Unknown query parameter zzz.",
                "zzz".into()
            )
        );
        // Paging and dry runs are other extractors' (`offset` is this struct's own).
        let s: Strict =
            from_query_string("page=2&page_size=5&limit=1&dry_run=true&offset=3&id=1").unwrap();
        assert_eq!((s.n, s.offset, s.id), (None, Some(3), vec![1]));
        // Not strict: others ignored.
        assert!(from_query_string::<Q>("zzz=1").is_ok());
    }

    #[test]
    fn a_missing_required_parameter_is_named() {
        #[derive(Debug, Deserialize)]
        struct Required {
            since: String,
        }
        let given: Required = from_query_string("since=2026-11-01").unwrap();
        assert_eq!(given.since, "2026-11-01");
        for qs in ["", "since=", "since=%20"] {
            let e = from_query_string::<Required>(qs).unwrap_err();
            assert_eq!(
                (e.code(), e.extra()["parameter"].clone()),
                (ErrorCode::InvalidFilterValue, "since".into()),
                "{qs}"
            );
        }
    }
}
