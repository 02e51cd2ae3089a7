//! The interactive API documentation at `/docs/`: Swagger UI over `/v1/openapi.json`, with its
//! assets served from the binary, opened in a real headless browser.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use teamcomm_tests::TestApp;

const CHROMIUM: &str = "/usr/bin/chromium";

#[actix_web::test]
async fn docs_redirects_to_a_self_contained_page() {
    let app = TestApp::spawn().await;

    let r = app.send("GET", "/docs", &[], None).await;
    assert_eq!(r.status, 308);
    assert_eq!(r.header("location"), Some("/docs/"));

    let page = app.send("GET", "/docs/", &[], None).await;
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert!(page.text.contains("swagger-ui"), "{}", page.text);
    // Nothing is fetched from elsewhere: every asset is a relative path of this server.
    for reference in ["src=\"http", "href=\"http", "//cdn", "unpkg"] {
        assert!(
            !page.text.contains(reference),
            "{reference} in {}",
            page.text
        );
    }
    let init = app
        .send("GET", "/docs/swagger-initializer.js", &[], None)
        .await;
    assert_eq!(init.status, 200);
    assert!(
        init.text.contains("\"url\": \"/v1/openapi.json\""),
        "{}",
        init.text
    );
    assert!(
        init.text.contains("\"validatorUrl\": \"none\""),
        "{}",
        init.text
    );
    let bundle = app
        .send("GET", "/docs/swagger-ui-bundle.js", &[], None)
        .await;
    assert_eq!(bundle.status, 200);
    assert!(bundle.text.len() > 100_000, "the bundle is served whole");
}

#[actix_web::test]
async fn a_real_browser_lists_every_operation() {
    if !Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{CHROMIUM} is missing; .ci/run installs Debian's `chromium`"
        );
        eprintln!(
            "\n!!! SKIPPED a_real_browser_lists_every_operation: {CHROMIUM} is missing (apt-get install chromium) !!!\n"
        );
        return;
    }
    let app = TestApp::spawn().await;
    let doc = app.send("GET", "/v1/openapi.json", &[], None).await.body;
    let operations: Vec<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .filter(|k| {
                    ["get", "put", "post", "delete", "patch", "head", "options"]
                        .contains(&k.as_str())
                })
                .map(move |method| (method.clone(), path.clone()))
        })
        .collect();
    assert!(operations.len() > 20, "{} operations", operations.len());

    let url = app.url("/docs/");
    let dom = tokio::task::spawn_blocking(move || chromium(&url, &["--dump-dom"]))
        .await
        .unwrap();
    for path in ["/v1/me/", "/v1/users/", "/api/org/api-keys/", "/healthz"] {
        assert!(
            dom.contains(&format!("data-path=\"{path}\"")),
            "{path} is not listed in the rendered page"
        );
    }
    for (method, path) in &operations {
        let block = format!("opblock-summary-{method}");
        assert!(dom.contains(&block), "no {method} operation rendered");
        assert!(
            dom.contains(&format!("data-path=\"{path}\"")),
            "{method} {path} is not listed in the rendered page"
        );
    }
    let rendered = dom.matches("class=\"opblock opblock-").count();
    assert_eq!(
        rendered,
        operations.len(),
        "one block per documented operation"
    );

    let shot = artifacts_dir().join("docs-ui.png");
    let _ = std::fs::remove_file(&shot);
    let url = app.url("/docs/");
    let arg = format!("--screenshot={}", shot.display());
    tokio::task::spawn_blocking(move || chromium(&url, &[&arg, "--window-size=1280,2000"]))
        .await
        .unwrap();
    let png = std::fs::read(&shot).expect("the screenshot is written");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
    println!("screenshot of /docs/: {}", shot.display());
}

/// Where tests keep files for people to look at: `$CARGO_TARGET_DIR/test-artifacts/`.
fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            // target/debug/deps/<test binary>
            let exe = std::env::current_exe().unwrap();
            exe.ancestors().nth(3).unwrap().to_path_buf()
        });
    let dir = target.join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs headless Chromium on `url` with a fresh profile and no network of its own (no sync,
/// updates or background requests); returns its stdout. Gives up after 90 seconds.
fn chromium(url: &str, extra: &[&str]) -> String {
    let profile = artifacts_dir().join(format!("chromium-profile-{}", uuid::Uuid::new_v4()));
    let out_file = profile.with_extension("out");
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = std::fs::read_to_string(&out_file).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&profile);
    let _ = std::fs::remove_file(&out_file);
    assert!(status.success(), "chromium failed: {status}");
    out
}
