//! The OpenAPI 3.1 document, generated from the route annotations (utoipa + utoipa-actix-web):
//! whatever `routes::configure` registers is documented, so the two cannot drift apart.

use std::collections::BTreeSet;

use actix_web::App;
use teamcomm_keys::CliAccess;
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::{
    AdditionalProperties, AnyOfBuilder, ArrayItems, ObjectBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Content, ContentBuilder, Ref, RefOr, Required, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use crate::error::ErrorBody;
use crate::extract::schema_check::NO_NUL_PATTERN;
use crate::policy::{Credentials, Policy};
use utoipa_actix_web::AppExt;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, doc: &mut OpenApiDoc) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-API-KEY"))),
        );
        components.add_security_scheme(
            "cli_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("CLI login token"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "jwt",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "Authorization",
                "`JWT <access token>` of a web session",
            ))),
        );
        components.add_security_scheme(
            "operator",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("TEAMCOMM_OPERATOR_TOKEN"))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "teamcomm",
        description = "Self-hostable team-communication API. Every error is JSON `{detail, code}`; `code` values are frozen.",
    ),
    components(schemas(ErrorBody, crate::plan_doors::PlanFieldErrors)),
    modifiers(&SecuritySchemes)
)]
struct ApiDoc;

/// Writes a route's policy into its operation: the credentials it takes (`security`) and, for
/// admin-only routes, a line of the description.
fn document_policy(operation: &mut Operation, policy: &Policy) {
    let schemes: &[&str] = match (policy.credentials, policy.cli) {
        (Credentials::ApiKeyOrCli, CliAccess::Refused) => &["api_key"],
        (Credentials::ApiKeyOrCli, _) => &["api_key", "cli_token"],
        (Credentials::Session, _) => &["jwt"],
        (Credentials::Operator, _) => &["operator"],
        (Credentials::Public, _) => &[],
    };
    operation.security = (!schemes.is_empty()).then(|| {
        schemes
            .iter()
            .map(|s| SecurityRequirement::new(*s, Vec::<String>::new()))
            .collect()
    });
    if let Some(door) = policy.plan {
        crate::plan_doors::document(operation, door);
    }
    if policy.admin_only {
        let note = "Organization admins only (others: 403 `org_admin_required`).";
        operation.description = Some(match operation.description.take() {
            Some(d) if !d.is_empty() => format!("{d}\n\n{note}"),
            _ => note.to_owned(),
        });
    }
}

/// Builds the document from the registered routes. Every operation also documents a `default`
/// response, the error envelope: any status a route does not list (405, 413, 415, 429, 5xx…)
/// still answers with it; every optional query parameter also admits a blank value, which counts
/// as not given.
pub fn document() -> OpenApiDoc {
    let (_, mut doc) = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .configure(crate::routes::configure)
        .split_for_parts();
    let envelope = ResponseBuilder::new()
        .description("Any other error: the JSON envelope `{detail, code}`")
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .build();
    let blank_is_absent = Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(format!("^[{}]*$", crate::extract::text::TRIMMED)))
            .build(),
    );
    let registry = crate::routes::registry();
    let mut body_components = BTreeSet::new();
    for (path, item) in doc.paths.paths.iter_mut() {
        let operations = [
            ("GET", &mut item.get),
            ("PUT", &mut item.put),
            ("POST", &mut item.post),
            ("DELETE", &mut item.delete),
            ("PATCH", &mut item.patch),
            ("HEAD", &mut item.head),
            ("OPTIONS", &mut item.options),
        ];
        for (method, operation) in operations {
            let Some(operation) = operation else {
                continue;
            };
            // Who may call it comes from the route's policy, the one place it is declared.
            if let Some(policy) = registry.policy_of_template(method, path) {
                document_policy(operation, &policy);
            }
            // A blank query value (`?date=`) counts as not given (`extract::query_de`): say so
            // where that is allowed. `anyOf`: a blank search fits both.
            for parameter in operation.parameters.iter_mut().flatten() {
                let RefOr::T(parameter) = parameter else {
                    continue;
                };
                if parameter.parameter_in == ParameterIn::Query
                    && parameter.required != Required::True
                    && let Some(schema) = parameter.schema.take()
                {
                    parameter.schema = Some(RefOr::T(Schema::AnyOf(
                        AnyOfBuilder::new()
                            .item(schema)
                            .item(blank_is_absent.clone())
                            .build(),
                    )));
                }
            }
            if let Some(RefOr::T(body)) = &mut operation.request_body {
                for content in body.content.values_mut() {
                    if let RefOr::T(Content {
                        schema: Some(schema),
                        ..
                    }) = content
                    {
                        refuse_nul(schema, &mut body_components);
                    }
                }
            }
            operation
                .responses
                .responses
                .entry("default".to_owned())
                .or_insert_with(|| envelope.clone().into());
        }
    }
    // The components request bodies use, and the ones those use in turn.
    if let Some(components) = doc.components.as_mut() {
        let mut done = BTreeSet::new();
        while let Some(name) = body_components.pop_first() {
            if done.insert(name.clone())
                && let Some(schema) = components.schemas.get_mut(&name)
            {
                refuse_nul(schema, &mut body_components);
            }
        }
    }
    doc
}

/// Gives each string `schema` holds (through properties, items and compositions) the
/// [`NO_NUL_PATTERN`] when no pattern, format or enumeration of its own excludes NUL (which the
/// body check refuses in every string), and collects the components it names.
fn refuse_nul(schema: &mut RefOr<Schema>, named: &mut BTreeSet<String>) {
    let schema = match schema {
        RefOr::Ref(r) => {
            if let Some(name) = r.ref_location.strip_prefix("#/components/schemas/") {
                named.insert(name.to_owned());
            }
            return;
        }
        RefOr::T(schema) => schema,
    };
    match schema {
        Schema::Object(object) => {
            let is_string = match &object.schema_type {
                SchemaType::Type(t) => *t == Type::String,
                SchemaType::Array(ts) => ts.contains(&Type::String),
                SchemaType::AnyValue => false,
            };
            if is_string
                && object.pattern.is_none()
                && object.format.is_none()
                && object.enum_values.is_none()
            {
                object.pattern = Some(NO_NUL_PATTERN.to_owned());
            }
            for property in object.properties.values_mut() {
                refuse_nul(property, named);
            }
            if let Some(extra) = object.additional_properties.as_deref_mut()
                && let AdditionalProperties::RefOr(values) = extra
            {
                refuse_nul(values, named);
            }
        }
        Schema::Array(array) => {
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                refuse_nul(items, named);
            }
        }
        Schema::OneOf(one_of) => one_of.items.iter_mut().for_each(|s| refuse_nul(s, named)),
        Schema::AllOf(all_of) => all_of.items.iter_mut().for_each(|s| refuse_nul(s, named)),
        Schema::AnyOf(any_of) => any_of.items.iter_mut().for_each(|s| refuse_nul(s, named)),
        _ => {}
    }
}
