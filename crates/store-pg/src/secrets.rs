//! Platform secrets at rest: sealed with AES-256-GCM (a fresh random nonce each time) under a
//! key derived (HKDF-SHA256) from a secret the server is configured with. The organization and
//! platform kind are the sealed value's associated data, so a sealed secret copied to another
//! organization's row, or relabelled as another platform, does not open.

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use aws_lc_rs::hkdf::{HKDF_SHA256, Salt};
use teamcomm_kernel::{OrgId, RepoError};
use teamcomm_messaging::platform::PlatformKind;
use teamcomm_messaging::ports::PlatformSecret;

/// The shortest configured secret accepted, in bytes (as the JWT secret's rule).
pub const MIN_CONFIGURED_SECRET_LEN: usize = 32;

/// Domain separation: the same configured secret used for something else derives another key.
const KEY_INFO: &[u8] = b"teamcomm platform secrets v1";

/// The key platform secrets are sealed with. `Debug` shows nothing of it.
pub struct PlatformSecretKey(RandomizedNonceKey);

/// A configured secret shorter than [`MIN_CONFIGURED_SECRET_LEN`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretKeyTooShort;

impl std::fmt::Display for SecretKeyTooShort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the platform secret key needs at least {MIN_CONFIGURED_SECRET_LEN} bytes"
        )
    }
}

impl std::error::Error for SecretKeyTooShort {}

impl PlatformSecretKey {
    /// Derives the key from `configured` (at least 32 bytes; random, e.g. `openssl rand -hex
    /// 32`). The same configured secret must be given to every server of one database, and kept:
    /// with another, the stored secrets no longer open.
    pub fn derive(configured: &[u8]) -> Result<Self, SecretKeyTooShort> {
        if configured.len() < MIN_CONFIGURED_SECRET_LEN {
            return Err(SecretKeyTooShort);
        }
        let mut key = [0u8; 32];
        Salt::new(HKDF_SHA256, &[])
            .extract(configured)
            .expand(&[KEY_INFO], &AES_256_GCM)
            .and_then(|okm| okm.fill(&mut key))
            .expect("HKDF-SHA256 yields a 32-byte key");
        let key =
            RandomizedNonceKey::new(&AES_256_GCM, &key).expect("AES-256-GCM takes a 32-byte key");
        Ok(PlatformSecretKey(key))
    }

    /// `nonce || ciphertext || tag`, a fresh random nonce each time.
    pub(crate) fn seal(
        &self,
        org: OrgId,
        kind: PlatformKind,
        secret: &PlatformSecret,
    ) -> Result<Vec<u8>, RepoError> {
        self.seal_bytes(&associated_data(org, kind), secret.expose().as_bytes())
            .map_err(|_| RepoError::Other("the platform secret could not be sealed".into()))
    }

    /// The secret sealed for this organization and kind; an error (never the bytes) when it
    /// was sealed under another key or for another organization or kind.
    pub(crate) fn open(
        &self,
        org: OrgId,
        kind: PlatformKind,
        stored: &[u8],
    ) -> Result<PlatformSecret, RepoError> {
        self.open_bytes(&associated_data(org, kind), stored)
            .and_then(|opened| String::from_utf8(opened).ok())
            .map(PlatformSecret::new)
            .ok_or_else(|| {
                RepoError::Other(format!(
                    "the platform secret of organization {org} does not open with the configured key"
                ))
            })
    }

    /// `plaintext` sealed with `aad` as associated data: `nonce || ciphertext || tag`, a fresh
    /// random nonce each time. Every use binds its own `aad` (webhook secrets: see
    /// `repo/webhooks.rs`), so a value sealed for one use does not open as another.
    pub(crate) fn seal_bytes(&self, aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, ()> {
        let mut sealed = plaintext.to_vec();
        let nonce = self
            .0
            .seal_in_place_append_tag(Aad::from(aad), &mut sealed)
            .map_err(|_| ())?;
        let mut stored = nonce.as_ref().to_vec();
        stored.append(&mut sealed);
        Ok(stored)
    }

    /// What [`PlatformSecretKey::seal_bytes`] sealed with the same key and `aad`; `None`
    /// otherwise.
    pub(crate) fn open_bytes(&self, aad: &[u8], stored: &[u8]) -> Option<Vec<u8>> {
        if stored.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = stored.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut sealed = sealed.to_vec();
        let opened = self
            .0
            .open_in_place(nonce, Aad::from(aad), &mut sealed)
            .ok()?;
        Some(opened.to_vec())
    }
}

impl std::fmt::Debug for PlatformSecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlatformSecretKey(..)")
    }
}

fn associated_data(org: OrgId, kind: PlatformKind) -> Vec<u8> {
    let mut aad = org.0.as_bytes().to_vec();
    aad.extend_from_slice(kind.as_str().as_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> PlatformSecretKey {
        PlatformSecretKey::derive(&[byte; MIN_CONFIGURED_SECRET_LEN]).unwrap()
    }

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_organization_and_kind() {
        let org = OrgId::new();
        let secret = PlatformSecret::new("xoxb-123-secret");
        let sealed = key(1).seal(org, PlatformKind::Slack, &secret).unwrap();
        assert!(!sealed.windows(6).any(|w| w == b"secret"));
        assert_eq!(
            key(1).open(org, PlatformKind::Slack, &sealed).unwrap(),
            secret
        );
        assert_ne!(
            key(1).seal(org, PlatformKind::Slack, &secret).unwrap(),
            sealed,
            "a fresh nonce each time"
        );
        for opened in [
            key(2).open(org, PlatformKind::Slack, &sealed),
            key(1).open(OrgId::new(), PlatformKind::Slack, &sealed),
            key(1).open(org, PlatformKind::Matrix, &sealed),
            key(1).open(org, PlatformKind::Slack, &sealed[..8]),
        ] {
            let e = opened.unwrap_err();
            assert!(!format!("{e:?}").contains("xoxb"), "{e:?}");
        }
    }

    #[test]
    fn a_short_configured_secret_is_refused() {
        assert_eq!(
            PlatformSecretKey::derive(&[7; MIN_CONFIGURED_SECRET_LEN - 1]).unwrap_err(),
            SecretKeyTooShort
        );
    }
}
