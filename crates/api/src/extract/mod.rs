//! Typed request extractors. A body or a query is one struct: it parses (serde), validates (the
//! schema it documents, see [`schema_check`]) and documents (`ToSchema` / `IntoParams`).
//!
//! - [`JsonBody<T>`]: a JSON object body. Absent → `params_validation_error`; malformed →
//!   `parse_error`; unknown key → `unknown_field` (with `extra.parameter`); anything else wrong →
//!   `params_validation_error` with an `errors` map naming every bad field.
//! - [`OptionalJsonBody<T>`]: the same, but an absent body reads as `T::default()`.
//! - [`Query<T>`]: query parameters, read by [`query_de`]. A `Vec` field takes every value of its
//!   key (repeated or comma-separated, at most 50); any other field the last one; an empty value
//!   (`?search=`) counts as absent. Unknown parameters are ignored, unless `T` denies unknown
//!   fields (`#[serde(deny_unknown_fields)]`): then they are refused, naming the first. A bad
//!   value answers the code its type declares (see [`crate::params`]), `invalid_filter_value`
//!   with `extra.parameter` by default.
//!
//! A list's query is [`crate::paging::ListQuery`]: its filters plus the shared paging parameters,
//! read by the same deserializer.

pub mod query_de;
pub mod schema_check;
pub mod text;
pub mod wire;

pub use text::{
    ChatCommand, ClockTime, EmailAddress, Identifier, LongText, Name, OneLine, OptionalName,
};
pub use wire::{PlanName, QuestionTypeName, RoleName, TeamRoleName, TemplateTypeName, Wire};

use std::future::{Ready, ready};
use std::pin::Pin;

use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use teamcomm_kernel::{Error, ErrorCode};
use utoipa::ToSchema;

use crate::error::ApiError;

pub(crate) type BoxFut<T> = Pin<Box<dyn Future<Output = Result<T, actix_web::Error>>>>;

/// Reads the body as JSON: `Null` when there is none. A missing `Content-Type` is read as JSON
/// (many clients omit it); a declared non-JSON type is 415 `unsupported_media_type`.
pub(crate) fn read_json(req: &HttpRequest, payload: &mut Payload) -> BoxFut<Value> {
    let declared_json = match req.mime_type() {
        Ok(None) => true,
        Ok(Some(mime)) => mime.subtype() == "json" || mime.suffix().is_some_and(|s| s == "json"),
        Err(_) => false,
    };
    let headers = req.headers();
    let chunked = headers.contains_key(actix_web::http::header::TRANSFER_ENCODING);
    let length = headers
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if !chunked && length.unwrap_or(0) == 0 {
        return Box::pin(ready(Ok(Value::Null)));
    }
    if !declared_json {
        let e = Error::new(
            ErrorCode::UnsupportedMediaType,
            "Unsupported media type; send Content-Type: application/json.",
        );
        return Box::pin(ready(Err(ApiError(e).into())));
    }
    let json = web::Json::<Value>::from_request(req, payload);
    Box::pin(async move { json.await.map(web::Json::into_inner) })
}

/// Turns a JSON value into `T` after checking it against `T`'s documented schema (which also
/// writes `1.0` as `1` where the schema says integer).
pub fn decode_body<T: DeserializeOwned + ToSchema + 'static>(value: Value) -> Result<T, Error> {
    let Value::Object(mut map) = value else {
        return Err(Error::new(
            ErrorCode::ParamsValidationError,
            "Expected a JSON object as the request body.",
        ));
    };
    schema_check::schema_of::<T>().check(&mut map)?;
    serde_json::from_value(Value::Object(map)).map_err(|e| {
        Error::new(
            ErrorCode::ParamsValidationError,
            format!("Invalid request body: {e}."),
        )
    })
}

/// A JSON object body decoded into `T` (see the module docs for the codes).
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned + ToSchema + 'static> FromRequest for JsonBody<T> {
    type Error = actix_web::Error;
    type Future = BoxFut<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = read_json(req, payload);
        Box::pin(async move {
            let value = json.await?;
            decode_body(value)
                .map(JsonBody)
                .map_err(|e| ApiError(e).into())
        })
    }
}

/// Like [`JsonBody`], for endpoints whose body may be left out entirely.
#[derive(Debug)]
pub struct OptionalJsonBody<T>(pub T);

impl<T: DeserializeOwned + ToSchema + Default + 'static> FromRequest for OptionalJsonBody<T> {
    type Error = actix_web::Error;
    type Future = BoxFut<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = read_json(req, payload);
        Box::pin(async move {
            match json.await? {
                Value::Null => Ok(OptionalJsonBody(T::default())),
                value => decode_body(value)
                    .map(OptionalJsonBody)
                    .map_err(|e| ApiError(e).into()),
            }
        })
    }
}

/// The request's query parameters decoded into `T`.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned> FromRequest for Query<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            query_de::from_query_string(req.query_string())
                .map(Query)
                .map_err(ApiError),
        )
    }
}

/// For `#[serde(default, deserialize_with = "nullable")]` on an `Option<Option<T>>` body field:
/// absent → `None` (keep), `null` → `Some(None)` (clear), a value → `Some(Some(v))`.
pub fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// [`nullable`] for an ISO 8601 (RFC 3339) timestamp.
pub fn nullable_datetime<'de, D>(d: D) -> Result<Option<Option<time::OffsetDateTime>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    time::serde::rfc3339::option::deserialize(d).map(Some)
}
