//! Standard Webhooks signatures (v1, HMAC-SHA256): what a delivery puts in `webhook-signature`
//! and how a receiver checks it. The signed content is `{webhook-id}.{webhook-timestamp}.{body}`
//! with the exact bytes sent; the key is the base64 after the secret's `whsec_` prefix.

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::{SIGNING_SECRET_PREFIX, SecretText};

/// The header carrying the message id (stable across retries: receivers deduplicate on it).
pub const HEADER_ID: &str = "webhook-id";
/// The header carrying the attempt's time, unix seconds.
pub const HEADER_TIMESTAMP: &str = "webhook-timestamp";
/// The header carrying the space-separated signatures, `v1,<base64>` each.
pub const HEADER_SIGNATURE: &str = "webhook-signature";

/// A signing secret that is not `whsec_` and base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSecret;

impl std::fmt::Display for InvalidSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the webhook signing secret is not whsec_ followed by base64")
    }
}

impl std::error::Error for InvalidSecret {}

fn key(secret: &SecretText) -> Result<hmac::Key, InvalidSecret> {
    let encoded = secret
        .expose()
        .strip_prefix(SIGNING_SECRET_PREFIX)
        .ok_or(InvalidSecret)?;
    let bytes = STANDARD.decode(encoded).map_err(|_| InvalidSecret)?;
    if bytes.is_empty() {
        return Err(InvalidSecret);
    }
    Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes))
}

fn signed_content(msg_id: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    let mut content = format!("{msg_id}.{timestamp}.").into_bytes();
    content.extend_from_slice(body);
    content
}

/// The `webhook-signature` value of one message: `v1,<base64 of the HMAC>`. The id must not
/// contain `.` (Standard Webhooks: it would make the signed content ambiguous).
pub fn signature(
    secret: &SecretText,
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, InvalidSecret> {
    debug_assert!(!msg_id.contains('.'), "a webhook id never contains '.'");
    let tag = hmac::sign(&key(secret)?, &signed_content(msg_id, timestamp, body));
    Ok(format!("v1,{}", STANDARD.encode(tag.as_ref())))
}

/// Whether one of the `v1` signatures of a `webhook-signature` value is the message's
/// (compared in constant time). Timestamp tolerance is the receiver's own rule.
pub fn verify(
    secret: &SecretText,
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
    header: &str,
) -> bool {
    let Ok(key) = key(secret) else {
        return false;
    };
    let content = signed_content(msg_id, timestamp, body);
    header
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|b64| STANDARD.decode(b64).ok())
        .any(|tag| hmac::verify(&key, &content, &tag).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate_signing_secret;

    /// The example of the Standard Webhooks reference libraries.
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TS: i64 = 1_614_265_330;
    const BODY: &[u8] = br#"{"test": 2432232314}"#;

    #[test]
    fn the_reference_example_signs_as_the_spec_libraries_do() {
        let s = signature(&SecretText::new(SECRET), ID, TS, BODY).unwrap();
        assert_eq!(s, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(verify(&SecretText::new(SECRET), ID, TS, BODY, &s));
    }

    #[test]
    fn any_change_of_id_time_body_or_secret_fails_verification() {
        let secret = SecretText::new(SECRET);
        let s = signature(&secret, ID, TS, BODY).unwrap();
        assert!(!verify(&secret, "msg_other", TS, BODY, &s));
        assert!(!verify(&secret, ID, TS + 1, BODY, &s));
        assert!(!verify(&secret, ID, TS, br#"{"test": 2432232315}"#, &s));
        assert!(!verify(&generate_signing_secret(), ID, TS, BODY, &s));
        assert!(!verify(&secret, ID, TS, BODY, "v1,bm90IGl0"));
        assert!(!verify(&secret, ID, TS, BODY, ""));
        // One good signature among several (a rotated secret) is enough.
        assert!(verify(&secret, ID, TS, BODY, &format!("v1,bm90IGl0 {s}")));
    }

    #[test]
    fn generated_secrets_sign_and_malformed_ones_are_refused() {
        let fresh = generate_signing_secret();
        let s = signature(&fresh, ID, TS, BODY).unwrap();
        assert!(verify(&fresh, ID, TS, BODY, &s));
        for bad in ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_!!!"] {
            assert_eq!(
                signature(&SecretText::new(bad), ID, TS, BODY),
                Err(InvalidSecret),
                "{bad}"
            );
        }
    }
}
