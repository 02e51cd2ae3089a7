//! The OpenAPI document and the parsers agree, for every operation with a JSON body: a body
//! built from the document's required fields alone is accepted by the parser, and leaving out any
//! one required field is refused with that field named. So a field is required in the document
//! exactly when the endpoint refuses its absence.

use serde_json::{Map, Value, json};
use teamcomm_tests::{ANY_ID, OPERATOR_TOKEN, TestApp, concrete_path};

fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.trim_start_matches("#/components/schemas/");
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// A value the schema documents as valid: its example, else its first enumerated value, else
/// one of its type and format.
fn sample(doc: &Value, schema: &Value) -> Value {
    let schema = resolve(doc, schema);
    if let Some(e) = schema
        .get("example")
        .or_else(|| schema.get("examples").and_then(|e| e.as_array()?.first()))
    {
        return e.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.as_array()?.first()) {
        return first.clone();
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let branch = branches
                .iter()
                .find(|b| b.get("type") != Some(&json!("null")))
                .unwrap_or(&branches[0]);
            return sample(doc, branch);
        }
    }
    let ty = match &schema["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null")
            .to_owned(),
        _ => "object".to_owned(),
    };
    match ty.as_str() {
        "string" => json!(match schema["format"].as_str() {
            Some("uuid") => ANY_ID,
            Some("date") => "2026-01-02",
            Some("date-time") => "2030-01-02T03:04:05Z",
            Some("email") => "someone@example.com",
            _ => "Sample",
        }),
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "boolean" => json!(false),
        "array" => json!([]),
        "null" => Value::Null,
        _ => Value::Object(required_sample(doc, schema)),
    }
}

/// A concrete path for `template`: a placeholder whose documented parameter is an enumeration
/// takes its first value, any other placeholder [`concrete_path`]'s id.
fn documented_path(template: &str, op: &Value) -> String {
    let mut path = template.to_owned();
    for p in op["parameters"].as_array().into_iter().flatten() {
        if let (Some(name), Some(first)) = (p["name"].as_str(), p["schema"]["enum"][0].as_str()) {
            path = path.replace(&format!("{{{name}}}"), first);
        }
    }
    concrete_path(&path)
}

fn required_fields(schema: &Value) -> Vec<String> {
    schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn required_sample(doc: &Value, schema: &Value) -> Map<String, Value> {
    required_fields(schema)
        .into_iter()
        .map(|f| {
            let v = sample(doc, &schema["properties"][&f]);
            (f, v)
        })
        .collect()
}

#[actix_web::test]
async fn required_fields_are_exactly_those_whose_absence_is_refused() {
    // The documented webhook URL's host resolves nowhere offline: allow-listed, it is taken as
    // it is (the destination guard has its own tests).
    let app = TestApp::builder()
        .var("TEAMCOMM_WEBHOOK_ALLOW_INSECURE_HOSTS", "hooks.example.com")
        .spawn()
        .await;
    let (_, _, session, key) = app.org_with_admin_key("business").await;
    let operator = format!("Bearer {OPERATOR_TOKEN}");
    let doc = app.send("GET", "/v1/openapi.json", &[], None).await.body;
    let mut bodies = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(schema) = op["requestBody"]["content"]["application/json"].get("schema")
            else {
                continue;
            };
            // Plan bodies answer the Plan's field map without a code, behind the beta gate:
            // tests/api/plan/rules.rs holds them to it.
            if path.starts_with("/v1/plan/") {
                continue;
            }
            bodies += 1;
            let schema = resolve(&doc, schema);
            let concrete = documented_path(path, op);
            let auth: (&str, &str) = if path.starts_with("/operator/") {
                ("Authorization", &operator)
            } else if path.starts_with("/api/org/") {
                ("Authorization", &session)
            } else {
                ("X-API-KEY", &key)
            };
            let method_name = method.to_uppercase();
            let headers = [auth];
            let send = |body: Value| app.send(&method_name, &concrete, &headers, Some(body));
            // A body whose rule asks for one of several optional fields (send-message's
            // targets) documents an example: its fields join the required ones.
            let mut minimal = required_sample(&doc, schema);
            if let Some(example) = schema.get("example").and_then(Value::as_object) {
                for (k, v) in example {
                    minimal.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            let r = send(Value::Object(minimal.clone())).await;
            assert!(
                !(r.status == 400
                    && ["params_validation_error", "unknown_field", "parse_error"]
                        .contains(&r.code())),
                "{method} {path}: the documented body {minimal:?} was refused: {}",
                r.text
            );
            for field in required_fields(schema) {
                let mut without = minimal.clone();
                without.remove(&field);
                let r = send(Value::Object(without)).await;
                let code = schema["properties"][&field]["x-error-code"]
                    .as_str()
                    .unwrap_or("params_validation_error");
                r.assert_error(400, code);
                assert!(
                    r.body["errors"][&field].is_array(),
                    "{method} {path} without {field} does not name it: {}",
                    r.text
                );
            }
        }
    }
    assert!(bodies >= 12, "only {bodies} bodies documented");
}
