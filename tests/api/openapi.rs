//! The OpenAPI document is generated from the routes, committed as `docs/openapi.json`, and
//! every operation it lists is really served.

use teamcomm_tests::TestApp;

#[actix_web::test]
async fn openapi_document_is_served_and_matches_the_committed_copy() {
    let app = TestApp::spawn().await;
    let r = app.send("GET", "/v1/openapi.json", &[], None).await;
    assert_eq!(r.status, 200);
    assert!(r.body["openapi"].as_str().unwrap().starts_with("3.1"));

    let committed_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json");
    let generated = serde_json::to_string_pretty(&r.body).unwrap() + "\n";
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&committed_path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json is stale; run `make openapi` and commit it"
    );
}

#[actix_web::test]
async fn every_documented_operation_is_routed() {
    let app = TestApp::spawn().await;
    let doc = app.send("GET", "/v1/openapi.json", &[], None).await.body;
    let paths = doc["paths"].as_object().unwrap();
    let mut operations = 0;
    for (path, item) in paths {
        let concrete = path
            .replace("{id}", "00000000-0000-0000-0000-000000000000")
            .replace("{uuid}", "00000000-0000-0000-0000-000000000000");
        for method in item.as_object().unwrap().keys() {
            operations += 1;
            let r = app.send(&method.to_uppercase(), &concrete, &[], None).await;
            // Unrouted would be 404 `not_found` from the fallback with no credential check, or 405.
            let unrouted = r.status == 405
                || (r.status == 404 && r.code() == "not_found" && !path.starts_with("/operator/"));
            assert!(
                !unrouted,
                "{method} {path} is documented but not routed: {} {}",
                r.status, r.text
            );
        }
    }
    assert!(operations >= 15, "only {operations} operations documented");
    for required in [
        "/v1/me/",
        "/api/org/api-keys/",
        "/api/org/api-keys/{id}/",
        "/operator/v1/organizations/",
    ] {
        assert!(
            paths.contains_key(required),
            "{required} missing from the document"
        );
    }
}

/// utoipa keys components by type name: two `ToSchema` types of one name (in two route
/// modules) silently share one schema, and one route is documented with the other's body.
#[test]
fn schema_type_names_are_unique() {
    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/api/src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut clashes = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut schema_pending = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with("#[derive(") && line.contains("ToSchema") {
                schema_pending = true;
            } else if schema_pending && line.contains("#[schema(as") {
                schema_pending = false;
            } else if schema_pending
                && let Some(rest) = line
                    .strip_prefix("pub struct ")
                    .or_else(|| line.strip_prefix("pub enum "))
                    .or_else(|| line.strip_prefix("struct "))
                    .or_else(|| line.strip_prefix("enum "))
            {
                schema_pending = false;
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let here = file.display().to_string();
                if let Some(first) = seen.insert(name.clone(), here.clone()) {
                    clashes.push(format!("{name}: {first} and {here}"));
                }
            }
        }
    }
    assert!(clashes.is_empty(), "schema names used twice: {clashes:#?}");
}
