//! Reading JSON object bodies field by field, so every endpoint answers with the same codes:
//! `unknown_field` (with `extra.parameter`) for keys it does not accept, and
//! `params_validation_error` with a per-field `errors` map for wrong types or missing values.

use std::future::Future;
use std::pin::Pin;

use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};
use serde_json::{Map, Value};
use teamcomm_kernel::{Error, ErrorCode};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A JSON request body. A missing `Content-Type` is read as JSON (many clients omit it); a
/// declared non-JSON type is refused with 415 `unsupported_media_type`. A request without a
/// body reads as `null`, so endpoints whose body is optional can tell "absent" from "malformed".
pub struct JsonBody(pub Value);

impl FromRequest for JsonBody {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let declared_json = match req.mime_type() {
            Ok(None) => true,
            Ok(Some(mime)) => {
                mime.subtype() == "json" || mime.suffix().is_some_and(|s| s == "json")
            }
            Err(_) => false,
        };
        let chunked = req
            .headers()
            .contains_key(actix_web::http::header::TRANSFER_ENCODING);
        let length = req
            .headers()
            .get(actix_web::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if !chunked && length.unwrap_or(0) == 0 {
            return Box::pin(std::future::ready(Ok(JsonBody(Value::Null))));
        }
        if !declared_json {
            let e = Error::new(
                ErrorCode::UnsupportedMediaType,
                "Unsupported media type; send Content-Type: application/json.",
            );
            return Box::pin(std::future::ready(Err(crate::error::ApiError(e).into())));
        }
        let json = web::Json::<Value>::from_request(req, payload);
        Box::pin(async move { json.await.map(|j| JsonBody(j.into_inner())) })
    }
}

/// A JSON object body being read.
pub struct Body {
    map: Map<String, Value>,
    errors: Option<Error>,
}

impl Body {
    /// Accepts only a JSON object whose keys are all in `allowed`.
    pub fn object(value: Value, allowed: &[&str]) -> Result<Body, Error> {
        let Value::Object(map) = value else {
            return Err(Error::new(
                ErrorCode::ParamsValidationError,
                "Expected a JSON object as the request body.",
            ));
        };
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(Error::new(
                ErrorCode::UnknownField,
                format!("Unknown field \"{unknown}\"."),
            )
            .with_field_error(unknown, "This field is not accepted.")
            .with_extra("parameter", unknown.clone()));
        }
        Ok(Body { map, errors: None })
    }

    fn fail(&mut self, field: &str, message: &str) {
        let e = self
            .errors
            .take()
            .unwrap_or_else(|| Error::new(ErrorCode::ParamsValidationError, "Invalid input."));
        self.errors = Some(e.with_field_error(field, message));
    }

    /// True when the key is present (even as null).
    pub fn has(&self, field: &str) -> bool {
        self.map.contains_key(field)
    }

    pub fn string(&mut self, field: &str) -> Option<String> {
        match self.map.remove(field) {
            None | Some(Value::Null) => None,
            // Postgres text cannot hold NUL; refuse it here rather than fail at the database.
            Some(Value::String(s)) if s.contains('\0') => {
                self.fail(field, "Null characters are not allowed.");
                None
            }
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                self.fail(field, "Not a valid string.");
                None
            }
        }
    }

    pub fn required_string(&mut self, field: &str) -> String {
        let present = self.map.get(field).is_some_and(|v| !v.is_null());
        match self.string(field) {
            Some(s) => s,
            None => {
                if !present {
                    self.fail(field, "This field is required.");
                }
                String::new()
            }
        }
    }

    pub fn bool(&mut self, field: &str) -> Option<bool> {
        match self.map.remove(field) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(b),
            Some(_) => {
                self.fail(field, "Must be a valid boolean.");
                None
            }
        }
    }

    pub fn string_list(&mut self, field: &str) -> Option<Vec<String>> {
        match self.map.remove(field) {
            None | Some(Value::Null) => None,
            Some(Value::Array(items))
                if items
                    .iter()
                    .all(|v| v.as_str().is_some_and(|s| !s.contains('\0'))) =>
            {
                Some(
                    items
                        .into_iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect(),
                )
            }
            Some(_) => {
                self.fail(field, "Expected a list of strings without null characters.");
                None
            }
        }
    }

    /// A nullable ISO 8601 timestamp: absent → `None`, `null` → `Some(None)`.
    pub fn nullable_datetime(&mut self, field: &str) -> Option<Option<OffsetDateTime>> {
        match self.map.remove(field) {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(s)) => match OffsetDateTime::parse(&s, &Rfc3339) {
                Ok(t) => Some(Some(t)),
                Err(_) => {
                    self.fail(
                        field,
                        "Datetime has wrong format; use ISO 8601, e.g. 2026-12-31T23:59:59Z.",
                    );
                    None
                }
            },
            Some(_) => {
                self.fail(
                    field,
                    "Datetime has wrong format; use ISO 8601, e.g. 2026-12-31T23:59:59Z.",
                );
                None
            }
        }
    }

    /// Ends reading: the accumulated field errors, if any.
    pub fn finish(self) -> Result<(), Error> {
        match self.errors {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Formats a timestamp as ISO 8601 (RFC 3339) in UTC.
pub fn iso(t: OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC)
        .format(&Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_are_refused_with_their_name() {
        let e = Body::object(json!({"name": "a", "colour": 1}), &["name"])
            .err()
            .unwrap();
        assert_eq!(e.code(), ErrorCode::UnknownField);
        assert_eq!(e.extra()["parameter"], "colour");
    }

    #[test]
    fn collects_every_field_error() {
        let mut b = Body::object(
            json!({"active": "yes", "expiration": "tomorrow"}),
            &["name", "active", "expiration"],
        )
        .unwrap();
        b.required_string("name");
        b.bool("active");
        b.nullable_datetime("expiration");
        let e = b.finish().unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        assert_eq!(e.field_errors().len(), 3);
    }

    #[test]
    fn non_objects_are_refused() {
        assert!(Body::object(json!([1]), &[]).is_err());
    }
}
