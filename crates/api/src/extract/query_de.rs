//! A small serde deserializer for query strings: every value is text, parsed by the type of the
//! field it fills. A bad value becomes the kernel error its type declares (a parameter type
//! calls [`reject`]), or 400 `invalid_filter_value` naming the parameter.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use teamcomm_kernel::{Error, ErrorCode};

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

/// Decodes `a=1&b=x%20y` into `T`. Empty values are absent. A repeated key takes its last
/// value, but every value given must be valid.
pub fn from_query_string<T: DeserializeOwned>(qs: &str) -> Result<T, Error> {
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in url_pairs(qs) {
        if !v.trim().is_empty() {
            values.entry(k).or_default().push(v);
        }
    }
    let mut last: BTreeMap<String, String> = values
        .iter()
        .filter_map(|(k, vs)| Some((k.clone(), vs.last()?.clone())))
        .collect();
    let decoded = decode_pairs(last.clone())?;
    for (key, earlier) in values.iter().filter(|(_, vs)| vs.len() > 1) {
        let kept = last.get(key).cloned().unwrap_or_default();
        for value in &earlier[..earlier.len() - 1] {
            last.insert(key.clone(), value.clone());
            decode_pairs::<T>(last.clone())?;
        }
        last.insert(key.clone(), kept);
    }
    Ok(decoded)
}

fn decode_pairs<T: DeserializeOwned>(pairs: BTreeMap<String, String>) -> Result<T, Error> {
    REJECTION.with(|r| r.borrow_mut().take());
    T::deserialize(QueryMap {
        pairs: pairs.into_iter(),
        value: None,
    })
    .map_err(|e| match e {
        QueryError::Final(e) => *e,
        QueryError::Message(m) => Error::new(
            ErrorCode::InvalidFilterValue,
            format!("Invalid query parameters: {m}."),
        ),
    })
}

#[derive(Debug)]
enum QueryError {
    Message(String),
    Final(Box<Error>),
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::Message(m) => f.write_str(m),
            QueryError::Final(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for QueryError {}

impl de::Error for QueryError {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        QueryError::Message(msg.to_string())
    }
}

struct QueryMap {
    pairs: std::collections::btree_map::IntoIter<String, String>,
    value: Option<(String, String)>,
}

impl<'de> de::Deserializer<'de> for QueryMap {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

impl<'de> MapAccess<'de> for QueryMap {
    type Error = QueryError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, QueryError> {
        match self.pairs.next() {
            None => Ok(None),
            Some((k, v)) => {
                let key = seed.deserialize(k.clone().into_deserializer())?;
                self.value = Some((k, v));
                Ok(Some(key))
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, QueryError> {
        let (key, raw) = self.value.take().unwrap_or_default();
        seed.deserialize(QueryValue(&raw)).map_err(|e| {
            let rejected = REJECTION.with(|r| r.borrow_mut().take());
            let e = match (rejected, e) {
                (_, QueryError::Final(e)) => *e,
                (Some(e), _) if e.extra().contains_key("parameter") => e,
                (Some(e), _) => e.with_extra("parameter", key.clone()),
                (None, QueryError::Message(m)) => {
                    Error::new(ErrorCode::InvalidFilterValue, format!("`{key}`: {m}."))
                        .with_extra("parameter", key.clone())
                }
            };
            QueryError::Final(Box::new(e))
        })
    }
}

/// One value: text that parses into what the field asks for.
struct QueryValue<'a>(&'a str);

impl QueryValue<'_> {
    fn parse<T: std::str::FromStr>(&self, what: &str) -> Result<T, QueryError> {
        self.0
            .trim()
            .parse()
            .map_err(|_| QueryError::Message(format!("must be {what}")))
    }
}

impl<'de> de::Deserializer<'de> for QueryValue<'_> {
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

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_u64(self.parse("a whole number of at least 0")?)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_u32(self.parse("a whole number of at least 0")?)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_i64(self.parse("a whole number")?)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_newtype_struct(self)
    }

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
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
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
}
