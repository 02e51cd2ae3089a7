//! Logging: the filter (`RUST_LOG` on top of our defaults), the output format
//! (`TEAMCOMM_LOG_FORMAT`), and the one access line written per request.

use std::time::Instant;

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use tracing_actix_web::RequestId;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::config::LogFormat;

/// The filter before `RUST_LOG` is applied; a `RUST_LOG` directive for the same target wins.
///
/// actix-http's HTTP/1 dispatcher answers a malformed request head itself (bad bytes in the
/// request line, a control character in a header, no `Host`, a conflicting `Content-Length`, a
/// 100 KB URL, too many headers, an idle connection: an empty 400/431/408) and then logs it at
/// ERROR. Those are client mistakes that anyone can send, not server errors, so that target is
/// off by default; `RUST_LOG=actix_http::h1::dispatcher=trace` shows them (and the parse
/// detail) when debugging a client.
pub const DEFAULT_DIRECTIVES: &str = "info,actix_http::h1::dispatcher=off";

/// The target of the access lines, so they can be filtered on their own
/// (`RUST_LOG=info,teamcomm_api::access=off`).
pub const ACCESS_TARGET: &str = "teamcomm_api::access";

/// The filter: [`DEFAULT_DIRECTIVES`], then the directives of `rust_log` (the value of
/// `RUST_LOG`), which override the defaults for the targets they name. Invalid directives are
/// ignored.
pub fn filter(rust_log: Option<&str>) -> EnvFilter {
    let directives = match rust_log.map(str::trim).filter(|d| !d.is_empty()) {
        Some(own) => format!("{DEFAULT_DIRECTIVES},{own}"),
        None => DEFAULT_DIRECTIVES.to_owned(),
    };
    EnvFilter::builder().parse_lossy(directives)
}

/// Installs the process's subscriber: stderr, filtered by `RUST_LOG`.
pub fn init(format: LogFormat) {
    let rust_log = std::env::var(EnvFilter::DEFAULT_ENV).ok();
    let _ = init_with_writer(format, rust_log.as_deref(), std::io::stderr);
}

/// Installs the process's subscriber writing to `writer` (tests capture the logs with it).
/// Fails when a subscriber is already installed.
pub fn init_with_writer<W>(
    format: LogFormat,
    rust_log: Option<&str>,
    writer: W,
) -> Result<(), tracing_subscriber::util::TryInitError>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    use tracing_subscriber::util::SubscriberInitExt;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter(rust_log))
        .with_writer(writer);
    match format {
        LogFormat::Json => builder.json().flatten_event(true).finish().try_init(),
        LogFormat::Text => builder.finish().try_init(),
    }
}

/// Counts every request in the metrics (`metrics.rs`) and writes one access line per request, at INFO: method, route template (the matched pattern such
/// as `/v1/teams/{uuid}/`, never the raw path, which may carry ids or 100 KB of junk; `-` when no
/// route matched), status, duration and the request id of the request's span. It wraps
/// everything, `TracingLogger` included, so it sees the final status of errors and panics, and
/// the line stands outside the request span instead of repeating its fields. The request id is
/// read from the request `TracingLogger` annotated; an answer that comes back as an error (a
/// panic) no longer carries the request, so its line has no request id; the span's own lines do.
pub async fn access_log(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = req.method().clone();
    let metrics = req
        .app_data::<actix_web::web::Data<crate::state::AppState>>()
        .map(|s| s.metrics.clone());
    let outcome = next.call(req).await;
    let (status, route, request_id) = match &outcome {
        Ok(res) => (
            res.status(),
            res.request().match_pattern(),
            res.request().extensions().get::<RequestId>().copied(),
        ),
        Err(err) => (err.as_response_error().status_code(), None, None),
    };
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(metrics) = metrics {
        metrics.request(
            method.as_str(),
            route.as_deref().unwrap_or("-"),
            status.as_u16(),
            elapsed,
        );
    }
    let duration_ms = (elapsed * 1e6).round() / 1e3;
    tracing::info!(
        target: ACCESS_TARGET,
        method = %method,
        route = %route.as_deref().unwrap_or("-"),
        status = status.as_u16(),
        duration_ms,
        request_id = request_id.map(tracing::field::display),
        "request"
    );
    outcome
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::filter;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What the filter built from `rust_log` lets through of a few representative events.
    fn logged(rust_log: Option<&str>) -> String {
        let out = Captured::default();
        let writer = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(filter(rust_log))
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "actix_http::h1::dispatcher", "stream error: request parse error");
            tracing::warn!(target: "actix_http::h1::encoder", "other actix-http warning");
            tracing::info!(target: "teamcomm_api::access", "access line");
            tracing::debug!(target: "teamcomm_api::server", "debug detail");
        });
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn malformed_heads_are_not_logged_by_default() {
        let text = logged(None);
        assert!(!text.contains("stream error"), "{text}");
        assert!(text.contains("other actix-http warning"), "{text}");
        assert!(text.contains("access line"), "{text}");
        assert!(!text.contains("debug detail"), "{text}");
    }

    #[test]
    fn rust_log_overrides_the_defaults() {
        let text = logged(Some("debug"));
        assert!(text.contains("debug detail"), "{text}");
        assert!(!text.contains("stream error"), "{text}");

        let text = logged(Some("warn,actix_http::h1::dispatcher=trace"));
        assert!(text.contains("stream error"), "{text}");
        assert!(!text.contains("access line"), "{text}");

        let text = logged(Some("info,teamcomm_api::access=off"));
        assert!(!text.contains("access line"), "{text}");
        assert!(text.contains("other actix-http warning"), "{text}");
    }
}
