//! What both adapters share of HTTP: one client with short timeouts, answers read up to a bound,
//! path segments percent-encoded.

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderMap, RETRY_AFTER};
use teamcomm_messaging::platform::PlatformError;

/// A platform that does not accept the connection this fast is down for our purposes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Every call but a long poll (which sets its own, above its wait).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Largest answer read: a sync batch of 100 events per room fits many times over, and a broken or
/// hostile server cannot make us buffer without end.
const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// Everything but RFC 3986's unreserved characters is escaped, so ids such as `!room:server`,
/// `#alias:server` and `@user:server` stay one path segment.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// An HTTP client for the adapters: short connect and request timeouts, no redirects (an API
/// that redirects a bot call is misconfigured, and following it would resend the token).
pub fn http_client() -> Result<reqwest::Client, PlatformError> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| PlatformError::Permanent(format!("cannot build the HTTP client: {e}")))
}

/// One path segment, percent-encoded.
pub(crate) fn segment(raw: &str) -> String {
    utf8_percent_encode(raw, PATH_SEGMENT).to_string()
}

/// A transport failure (connect, timeout, reset): worth retrying.
pub(crate) fn transport(error: reqwest::Error) -> PlatformError {
    PlatformError::Temporary(format!("platform unreachable: {error}"))
}

/// `Retry-After` in seconds, as both platforms send it.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The answer's body, refused past [`MAX_ANSWER_BYTES`].
pub(crate) async fn read_answer(mut answer: reqwest::Response) -> Result<Vec<u8>, PlatformError> {
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(PlatformError::Permanent(format!(
                "the platform's answer exceeds {MAX_ANSWER_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most `max` characters of a platform's message, for error texts.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_ids_stay_one_segment() {
        assert_eq!(segment("!abc:example.org"), "%21abc%3Aexample.org");
        assert_eq!(segment("#room:ex"), "%23room%3Aex");
        assert_eq!(segment("@ada:ex"), "%40ada%3Aex");
        assert_eq!(segment("a/b?c"), "a%2Fb%3Fc");
        assert_eq!(segment("key-1.2_3~"), "key-1.2_3~");
    }

    #[test]
    fn excerpt_cuts_on_characters() {
        assert_eq!(excerpt("héllo", 2), "hé…");
        assert_eq!(excerpt("hi", 2), "hi");
    }
}
