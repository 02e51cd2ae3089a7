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
