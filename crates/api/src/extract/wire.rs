//! A body field or query parameter holding one of a domain enum's wire names: it parses with
//! the enum's own list and documents it as the schema's `enum`, so the names are declared once,
//! by the domain ([`WireEnum`]).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use teamcomm_kernel::WireEnum;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// The wire-name fields the routes use (aliases, so the document derive sees a plain type).
pub type RoleName = Wire<teamcomm_org::Role>;
pub type PlanName = Wire<teamcomm_org::PlanTier>;
pub type TeamRoleName = Wire<teamcomm_org::TeamRole>;
pub type TemplateTypeName = Wire<teamcomm_forms::TemplateType>;
pub type QuestionTypeName = Wire<teamcomm_forms::questions::QuestionType>;
/// Plan: a project's or board's `visibility`.
pub type VisibilityName = Wire<teamcomm_plan::Visibility>;
/// Plan: a project's `health`.
pub type HealthName = Wire<teamcomm_plan::ProjectHealth>;
/// Plan: a board's `estimate_scale`.
pub type EstimateScaleName = Wire<teamcomm_plan::EstimateScale>;
/// Plan: a column's `category`.
pub type CategoryName = Wire<teamcomm_plan::StateCategory>;

/// One of `T`'s wire names, read as `T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire<T>(pub T);

impl<'de, T: WireEnum> Deserialize<'de> for Wire<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name<T>(std::marker::PhantomData<T>);
        impl<T: WireEnum> Visitor<'_> for Name<T> {
            type Value = Wire<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "one of: {}", T::names())
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Wire<T>, E> {
                T::from_name(v)
                    .map(Wire)
                    .ok_or_else(|| E::custom(format!("must be one of: {}", T::names())))
            }
        }
        d.deserialize_str(Name(std::marker::PhantomData))
    }
}

impl<T: WireEnum> PartialSchema for Wire<T> {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(T::ALL.iter().map(|v| v.as_str())))
                .build(),
        ))
    }
}

impl<T: WireEnum> ToSchema for Wire<T> {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed(T::NAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamcomm_org::Role;

    #[test]
    fn names_parse_and_document_from_the_domain_enum() {
        let w: Wire<Role> = serde_json::from_value(serde_json::json!("guest")).unwrap();
        assert_eq!(w.0, Role::Guest);
        assert!(serde_json::from_value::<Wire<Role>>(serde_json::json!("owner")).is_err());
        let schema = serde_json::to_value(Wire::<Role>::schema()).unwrap();
        assert_eq!(
            schema["enum"],
            serde_json::json!(["admin", "member", "guest"])
        );
    }
}
