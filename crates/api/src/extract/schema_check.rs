//! Checks a JSON request body against the JSON Schema that its struct documents (`ToSchema`), so
//! the document *is* the parser's rulebook: required fields, unknown fields, types, formats,
//! lengths, ranges and enumerations are declared once, on the struct, and every bad field is
//! named in one answer. serde then builds the struct from a value already known to fit, with
//! each integer written with a zero fraction (`1.0`, which JSON Schema counts as an integer)
//! rewritten as one.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::{Map, Value};
use teamcomm_kernel::{Error, ErrorCode};
use utoipa::ToSchema;

/// The schema of a body type plus the component schemas it references, as JSON.
#[derive(Debug)]
pub struct BodySchema {
    root: Value,
    components: BTreeMap<String, Value>,
}

/// The schema of `T`, built once per type.
pub fn schema_of<T: ToSchema + 'static>() -> Arc<BodySchema> {
    static CACHE: OnceLock<RwLock<HashMap<TypeId, Arc<BodySchema>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(s) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return s.clone();
    }
    let mut refs = Vec::new();
    T::schemas(&mut refs);
    let built = Arc::new(BodySchema {
        root: serde_json::to_value(T::schema()).unwrap_or(Value::Null),
        components: refs
            .into_iter()
            .map(|(name, s)| (name, serde_json::to_value(s).unwrap_or(Value::Null)))
            .collect(),
    });
    cache
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, built.clone());
    built
}

impl BodySchema {
    /// A standalone JSON Schema (no `$ref`s), for documents that are not request bodies: the
    /// event payloads of docs/events.md are checked with the same rules.
    pub fn from_json(root: Value) -> Self {
        BodySchema {
            root,
            components: BTreeMap::new(),
        }
    }
}

/// What is wrong with a body.
#[derive(Debug, Default)]
struct Findings {
    unknown: Vec<String>,
    fields: BTreeMap<String, Vec<String>>,
    /// Fields whose schema names the code their errors answer with (`x-error-code`).
    codes: BTreeMap<String, String>,
}

/// The schema extension naming the code a field's errors answer with, instead of
/// `params_validation_error` (for example `invalid_score`).
pub const ERROR_CODE_EXTENSION: &str = "x-error-code";

impl Findings {
    fn add(&mut self, field: &str, message: impl Into<String>) {
        self.fields
            .entry(field.to_owned())
            .or_default()
            .push(message.into());
    }
}

impl BodySchema {
    /// Checks `body` (already known to be an object): `unknown_field` for keys the struct does not
    /// declare (first one in `extra.parameter`), else `params_validation_error` naming every bad
    /// field. Where the schema says integer, a number with no fractional part written as a float
    /// (`1.0`) is valid, and is rewritten as an integer so that serde can build the field.
    pub fn check(&self, body: &mut Map<String, Value>) -> Result<(), Error> {
        let mut findings = Findings::default();
        self.check_object(&self.root, body, "", &mut findings);
        if let Some(first) = findings.unknown.first() {
            let mut e = Error::new(
                ErrorCode::UnknownField,
                format!("Unknown field \"{first}\"."),
            )
            .with_extra("parameter", first.clone());
            for field in &findings.unknown {
                e = e.with_field_error(field, "This field is not accepted.");
            }
            return Err(e);
        }
        if findings.fields.is_empty() {
            return Ok(());
        }
        let special = findings.fields.keys().find_map(|f| {
            let code = ErrorCode::from_wire(findings.codes.get(f)?)?;
            Some((f.clone(), code))
        });
        let mut e = match special {
            Some((field, code)) => {
                let message = findings.fields[&field].join(" ");
                Error::new(code, format!("Invalid {field}: {message}"))
                    .with_extra("parameter", field)
            }
            None => Error::new(ErrorCode::ParamsValidationError, "Invalid input."),
        };
        for (field, messages) in findings.fields {
            for m in messages {
                e = e.with_field_error(&field, m);
            }
        }
        Err(e)
    }

    /// Follows `$ref`s into the components (a missing component accepts anything).
    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        let mut s = schema;
        for _ in 0..8 {
            match s.get("$ref").and_then(Value::as_str) {
                Some(r) => match r
                    .strip_prefix("#/components/schemas/")
                    .and_then(|name| self.components.get(name))
                {
                    Some(next) => s = next,
                    None => return &Value::Bool(true),
                },
                None => return s,
            }
        }
        s
    }

    fn check_object(
        &self,
        schema: &Value,
        body: &mut Map<String, Value>,
        prefix: &str,
        out: &mut Findings,
    ) {
        let schema = self.resolve(schema);
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false))
            || schema.get("properties").is_some();
        for key in body.keys() {
            if closed && !properties.contains_key(key) {
                out.unknown.push(format!("{prefix}{key}"));
            }
        }
        for required in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !body.contains_key(required) {
                out.add(&format!("{prefix}{required}"), "This field is required.");
            }
        }
        for (key, field_schema) in properties {
            if let Some(code) = field_schema
                .get(ERROR_CODE_EXTENSION)
                .and_then(Value::as_str)
            {
                out.codes.insert(format!("{prefix}{key}"), code.to_owned());
            }
        }
        for (key, value) in body.iter_mut() {
            if let Some(field_schema) = properties.get(key) {
                self.check_value(field_schema, value, &format!("{prefix}{key}"), out);
            }
        }
    }

    fn check_value(&self, schema: &Value, value: &mut Value, field: &str, out: &mut Findings) {
        let schema = self.resolve(schema);
        // Composition: `Option<Struct>` is `oneOf [null, $ref]`; accept when one branch fits
        // (with the value as that branch rewrites it).
        for key in ["oneOf", "anyOf"] {
            if let Some(branches) = schema.get(key).and_then(Value::as_array) {
                let mut best: Option<Findings> = None;
                for b in branches {
                    let mut f = Findings::default();
                    let mut candidate = value.clone();
                    self.check_value(b, &mut candidate, field, &mut f);
                    if f.fields.is_empty() && f.unknown.is_empty() {
                        *value = candidate;
                        return;
                    }
                    // Prefer the report of a non-null branch.
                    if best.is_none() || b.get("type") != Some(&Value::String("null".into())) {
                        best = Some(f);
                    }
                }
                if let Some(f) = best {
                    out.codes.extend(f.codes);
                    out.unknown.extend(f.unknown);
                    for (k, v) in f.fields {
                        out.fields.entry(k).or_default().extend(v);
                    }
                }
                return;
            }
        }
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            for p in parts {
                self.check_value(p, value, field, out);
            }
            return;
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if value.is_null() {
            if !types.is_empty() && !types.contains(&"null") {
                out.add(field, "This field may not be null.");
            }
            return;
        }
        if types.contains(&"integer") && value.is_f64() {
            match as_integer(value) {
                Some(whole) => *value = whole,
                None if value.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                    out.add(field, "This number is out of range.");
                    return;
                }
                None => {}
            }
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            let names: Vec<String> = allowed
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            out.add(field, format!("Must be one of: {}.", names.join(", ")));
            return;
        }
        let fits = |t: &str| match t {
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => false,
        };
        if !types.is_empty() && !types.iter().any(|t| fits(t)) {
            let wanted = types
                .iter()
                .filter(|t| **t != "null")
                .map(|t| match *t {
                    "string" => "a string",
                    "boolean" => "a boolean",
                    "integer" => "a whole number",
                    "number" => "a number",
                    "array" => "a list",
                    _ => "an object",
                })
                .collect::<Vec<_>>()
                .join(" or ");
            out.add(field, format!("Must be {wanted}."));
            return;
        }
        match value {
            Value::String(s) => check_string(schema, s, field, out),
            Value::Number(n) => {
                let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
                let v = n.as_f64().unwrap_or(0.0);
                if let Some(min) = bound("minimum")
                    && v < min
                {
                    out.add(field, format!("Ensure this value is at least {min}."));
                }
                if let Some(max) = bound("maximum")
                    && v > max
                {
                    out.add(field, format!("Ensure this value is at most {max}."));
                }
                let format = schema.get("format").and_then(Value::as_str);
                let in_range = match format {
                    Some("int32") => i32::try_from(n.as_i64().unwrap_or(i64::MAX)).is_ok(),
                    Some("int16") => i16::try_from(n.as_i64().unwrap_or(i64::MAX)).is_ok(),
                    Some("int64") => n.as_i64().is_some(),
                    _ => true,
                };
                if !in_range {
                    out.add(field, "This number is out of range.");
                }
            }
            Value::Array(items) => {
                let count = |k: &str| schema.get(k).and_then(Value::as_u64);
                if let Some(min) = count("minItems")
                    && (items.len() as u64) < min
                {
                    out.add(field, format!("Ensure this list has at least {min} items."));
                }
                if let Some(max) = count("maxItems")
                    && (items.len() as u64) > max
                {
                    out.add(field, format!("Ensure this list has at most {max} items."));
                }
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter_mut().enumerate() {
                        self.check_value(item_schema, item, &format!("{field}.{i}"), out);
                    }
                }
            }
            Value::Object(map) if schema.get("properties").is_some() => {
                self.check_object(schema, map, &format!("{field}."), out);
            }
            _ => {}
        }
    }
}

/// `value`, a float with no fractional part (`1.0`, `1e2`), as the integer it equals; `None`
/// for a fraction or a whole number beyond `i64`/`u64`.
fn as_integer(value: &Value) -> Option<Value> {
    // Powers of two, so the comparisons are exact: below them, the casts cannot saturate.
    const I64_END: f64 = 9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    let f = value.as_f64()?;
    if f.fract() != 0.0 {
        return None;
    }
    if (-I64_END..I64_END).contains(&f) {
        Some(Value::from(f as i64))
    } else if (0.0..U64_END).contains(&f) {
        Some(Value::from(f as u64))
    } else {
        None
    }
}

/// The compiled form of a schema's `pattern`, built once. A pattern this engine cannot compile
/// is not enforced here (the domain rule it documents still applies).
fn compiled(pattern: &str) -> Option<Arc<regex::Regex>> {
    static PATTERNS: OnceLock<RwLock<HashMap<String, Option<Arc<regex::Regex>>>>> = OnceLock::new();
    let cache = PATTERNS.get_or_init(Default::default);
    if let Some(found) = cache.read().unwrap_or_else(|e| e.into_inner()).get(pattern) {
        return found.clone();
    }
    let built = regex::Regex::new(pattern).ok().map(Arc::new);
    cache
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(pattern.to_owned(), built.clone());
    built
}

/// The pattern of text without NUL, which every string is held to here (PostgreSQL text cannot
/// hold it): the document states it where nothing else of a string's schema excludes NUL.
pub const NO_NUL_PATTERN: &str = "^[^\\u0000]*$";

fn check_string(schema: &Value, s: &str, field: &str, out: &mut Findings) {
    // PostgreSQL text cannot hold NUL: refuse it here rather than fail at the database.
    if s.contains('\0') {
        out.add(field, "Null characters are not allowed.");
        return;
    }
    let chars = s.chars().count() as u64;
    let length = |k: &str| schema.get(k).and_then(Value::as_u64);
    if let Some(min) = length("minLength")
        && chars < min
    {
        out.add(
            field,
            if min == 1 {
                "This field may not be blank.".to_owned()
            } else {
                format!("Ensure this field has at least {min} characters.")
            },
        );
    }
    if let Some(max) = length("maxLength")
        && chars > max
    {
        out.add(
            field,
            format!("Ensure this field has no more than {max} characters."),
        );
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
        && let Some(re) = compiled(pattern)
        && !re.is_match(s)
    {
        out.add(field, "This value has a form the service does not accept.");
        return;
    }
    let wrong = match schema.get("format").and_then(Value::as_str) {
        Some("uuid") if uuid::Uuid::parse_str(s).is_err() => Some("Must be a valid UUID."),
        Some("date") if teamcomm_kernel::filters::parse_day(s).is_none() => {
            Some("Date has wrong format; use YYYY-MM-DD.")
        }
        Some("date-time")
            if time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                .is_err() =>
        {
            Some("Datetime has wrong format; use ISO 8601, e.g. 2026-12-31T23:59:59Z.")
        }
        _ => None,
    };
    if let Some(message) = wrong {
        out.add(field, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::decode_body;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    struct Sample {
        #[schema(min_length = 1, max_length = 5)]
        name: String,
        active: Option<bool>,
        ids: Option<Vec<uuid::Uuid>>,
        #[schema(minimum = 1, maximum = 5)]
        score: Option<i64>,
        #[serde(default, with = "time::serde::rfc3339::option")]
        #[schema(value_type = Option<String>, format = DateTime)]
        when: Option<time::OffsetDateTime>,
    }

    fn check(v: Value) -> Result<Sample, Error> {
        decode_body::<Sample>(v)
    }

    #[test]
    fn a_body_that_fits_its_schema_decodes_into_the_struct() {
        let id = uuid::Uuid::nil();
        let s = check(json!({
            "name": "Ada", "active": true, "ids": [id], "score": 5, "when": "2030-01-02T03:04:05Z"
        }))
        .unwrap();
        assert_eq!(s.name, "Ada");
        assert_eq!(s.active, Some(true));
        assert_eq!(s.ids, Some(vec![id]));
        assert_eq!(s.score, Some(5));
        assert_eq!(s.when.map(|t| t.year()), Some(2030));
    }

    #[test]
    fn every_bad_field_is_named_at_once() {
        let e =
            check(json!({"active": "yes", "ids": ["x"], "score": 9, "when": "soon"})).unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        let fields: Vec<&str> = e.field_errors().keys().map(String::as_str).collect();
        assert_eq!(fields, ["active", "ids.0", "name", "score", "when"]);
    }

    #[test]
    fn unknown_fields_are_refused_with_their_name() {
        let e = check(json!({"name": "a", "colour": 1})).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownField);
        assert_eq!(e.extra()["parameter"], "colour");
    }

    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    struct Counts {
        #[schema(minimum = 1, maximum = 5)]
        score: i64,
        index: Option<u16>,
        days: Option<Vec<u8>>,
        ratio: Option<f64>,
    }

    #[test]
    fn integers_written_with_a_zero_fraction_are_integers() {
        let check = |v: Value| decode_body::<Counts>(v);
        let c = check(json!({"score": 1.0, "index": 3e2, "days": [0.0, 6], "ratio": 2.0})).unwrap();
        assert_eq!(
            (c.score, c.index, c.days, c.ratio),
            (1, Some(300), Some(vec![0, 6]), Some(2.0))
        );
        for (bad, field) in [
            (json!({"score": 1.5}), "score"),
            (json!({"score": 9.0}), "score"),
            (json!({"score": 1, "days": [0.5]}), "days.0"),
            (json!({"score": 1, "index": 1e30}), "index"),
            (json!({"score": -1e19}), "score"),
        ] {
            let e = check(bad.clone()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{bad}");
            assert!(e.field_errors().contains_key(field), "{bad}");
        }
    }

    #[derive(Debug, Deserialize, ToSchema)]
    struct Coded {
        #[schema(extensions(("x-error-code" = json!("invalid_score"))))]
        score: i64,
        name: Option<String>,
    }

    #[test]
    fn a_field_can_name_its_own_code() {
        let check = |v: Value| decode_body::<Coded>(v);
        let ok = check(json!({"score": 3, "name": "x"})).unwrap();
        assert_eq!((ok.score, ok.name.as_deref()), (3, Some("x")));
        for bad in [
            json!({}),
            json!({"score": "3"}),
            json!({"score": 2.5, "name": 1}),
        ] {
            let e = check(bad.clone()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidScore, "{bad}");
            assert!(e.field_errors().contains_key("score"));
        }
        let e = check(json!({"score": 3, "name": 1})).unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
    }

    #[test]
    fn lengths_nulls_and_nul_characters() {
        assert!(check(json!({"name": "abc", "active": null})).is_ok());
        for bad in [
            json!(""),
            json!("abcdef"),
            json!("a\u{0}"),
            json!(null),
            json!(3),
        ] {
            let e = check(json!({"name": bad})).unwrap_err();
            assert!(e.field_errors().contains_key("name"), "{bad}");
        }
    }
}
