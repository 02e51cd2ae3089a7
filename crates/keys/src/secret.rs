//! Secret formats: how API keys and CLI tokens look, how they are checked before any database
//! access, and how they are hashed for storage.
//!
//! A secret is `<prefix><32 random base62 chars><6-char base62 CRC32 of the former>`, e.g.
//! `tck_…` for API keys. The prefix lets secret scanners find leaked keys (`tck_[0-9A-Za-z]{38}`);
//! the checksum lets us refuse typos and junk without a database round trip. 32 base62 chars carry
//! about 190 bits of entropy, so a fast, unsalted SHA-256 is the right storage hash: it keeps the
//! lookup a single unique-index probe, and brute force over 2^190 is not a concern.

use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

const RANDOM_LEN: usize = 32;
const CHECKSUM_LEN: usize = 6;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Which kind of secret, by prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretKind {
    /// `X-API-KEY` values.
    ApiKey,
    /// `Authorization: Bearer` values minted for the CLI.
    CliToken,
    /// `X-API-KEY` values of registered agents (credentials of an organization, no person).
    AgentKey,
    /// The token of an agent registration's claim link.
    ClaimToken,
}

impl SecretKind {
    pub const fn prefix(self) -> &'static str {
        match self {
            SecretKind::ApiKey => "tck_",
            SecretKind::CliToken => "tcc_",
            SecretKind::AgentKey => "tca_",
            SecretKind::ClaimToken => "tcx_",
        }
    }

    const fn len(self) -> usize {
        self.prefix().len() + RANDOM_LEN + CHECKSUM_LEN
    }
}

/// A plaintext secret. It exists only between generation and the one response that shows it,
/// and between reading a header and hashing it; `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A fresh random secret of `kind`.
    pub fn generate(kind: SecretKind) -> Self {
        let random: String = rand::rng()
            .sample_iter(&Alphanumeric)
            .take(RANDOM_LEN)
            .map(char::from)
            .collect();
        let checksum = checksum(random.as_bytes());
        Secret(format!("{}{random}{checksum}", kind.prefix()))
    }

    /// Accepts a presented secret only if it has the shape and checksum of `kind`.
    pub fn parse(kind: SecretKind, presented: &str) -> Option<Self> {
        if presented.len() != kind.len() || !presented.is_ascii() {
            return None;
        }
        let body = presented.strip_prefix(kind.prefix())?;
        let (random, check) = body.split_at(RANDOM_LEN);
        if !random.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        let expected = checksum(random.as_bytes());
        bool::from(expected.as_bytes().ct_eq(check.as_bytes()))
            .then(|| Secret(presented.to_owned()))
    }

    /// The plaintext, for the single response that reveals it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The last 4 characters, shown on every read.
    pub fn suffix(&self) -> String {
        self.0[self.0.len() - 4..].to_owned()
    }

    /// The storage hash.
    pub fn hash(&self) -> SecretHash {
        SecretHash(Sha256::digest(self.0.as_bytes()).into())
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret(…{})", &self.0[self.0.len() - 4..])
    }
}

/// SHA-256 of a secret: the only form that is stored.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SecretHash(pub [u8; 32]);

impl SecretHash {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Constant-time equality, for comparing a stored hash with a computed one.
    pub fn matches(&self, other: &[u8]) -> bool {
        bool::from(self.0.as_slice().ct_eq(other))
    }
}

impl std::fmt::Debug for SecretHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretHash(..)")
    }
}

/// How a key is shown where it must not be revealed: 8 dots and the last 4 characters.
pub fn masked(suffix: &str) -> String {
    format!("••••••••{suffix}")
}

fn checksum(data: &[u8]) -> String {
    let mut n = u64::from(crc32fast::hash(data));
    let mut out = [b'0'; CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8(out.to_vec()).expect("base62 is ascii")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_parse_and_differ() {
        let a = Secret::generate(SecretKind::ApiKey);
        let b = Secret::generate(SecretKind::ApiKey);
        assert_ne!(a, b);
        assert!(a.expose().starts_with("tck_"));
        assert_eq!(a.expose().len(), 42);
        assert_eq!(
            Secret::parse(SecretKind::ApiKey, a.expose()),
            Some(a.clone())
        );
        assert_eq!(a.suffix(), a.expose()[38..]);
        assert_ne!(a.hash(), b.hash());
    }

    #[test]
    fn refuses_wrong_kind_bad_checksum_and_junk() {
        let a = Secret::generate(SecretKind::ApiKey);
        assert!(Secret::parse(SecretKind::CliToken, a.expose()).is_none());
        let mut tampered = a.expose().to_owned().into_bytes();
        tampered[10] = if tampered[10] == b'a' { b'b' } else { b'a' };
        assert!(
            Secret::parse(SecretKind::ApiKey, std::str::from_utf8(&tampered).unwrap()).is_none()
        );
        for junk in [
            "",
            "tck_",
            "hello",
            &"x".repeat(42),
            &format!("tck_{}", "é".repeat(19)),
        ] {
            assert!(Secret::parse(SecretKind::ApiKey, junk).is_none(), "{junk}");
        }
    }

    #[test]
    fn debug_and_mask_never_reveal_the_secret() {
        let a = Secret::generate(SecretKind::CliToken);
        let shown = format!("{a:?} {:?}", a.hash());
        assert!(!shown.contains(&a.expose()[4..20]));
        assert_eq!(masked("abcd"), "••••••••abcd");
        assert_eq!(masked("abcd").chars().count(), 12);
    }
}
