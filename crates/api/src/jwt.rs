//! Web-session JWTs (`Authorization: JWT <access>`): HS256 with the configured secret.
//! Access tokens are short-lived; a refresh token (a JWT of its own type) mints new ones.

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, encode};
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, ErrorCode, OrgId, UserId};
use time::OffsetDateTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenType {
    Access,
    Refresh,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    pub sub: UserId,
    pub org: OrgId,
    pub typ: TokenType,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
}

#[derive(Clone)]
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    access_ttl: time::Duration,
    refresh_ttl: time::Duration,
}

/// A freshly issued pair.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TokenPair {
    pub access: String,
    pub refresh: String,
}

impl JwtKeys {
    pub fn new(
        secret: &str,
        access_ttl: std::time::Duration,
        refresh_ttl: std::time::Duration,
    ) -> Self {
        JwtKeys {
            encoding: EncodingKey::from_secret(secret.as_bytes()),
            decoding: DecodingKey::from_secret(secret.as_bytes()),
            access_ttl: time::Duration::try_from(access_ttl).unwrap_or(time::Duration::minutes(15)),
            refresh_ttl: time::Duration::try_from(refresh_ttl).unwrap_or(time::Duration::days(14)),
        }
    }

    pub fn issue(&self, user: UserId, org: OrgId, typ: TokenType) -> Result<String, Error> {
        let now = OffsetDateTime::now_utc();
        let ttl = match typ {
            TokenType::Access => self.access_ttl,
            TokenType::Refresh => self.refresh_ttl,
        };
        let claims = Claims {
            sub: user,
            org,
            typ,
            iat: now.unix_timestamp(),
            exp: (now + ttl).unix_timestamp(),
            jti: uuid::Uuid::new_v4().simple().to_string(),
        };
        encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(teamcomm_kernel::internal)
    }

    pub fn issue_pair(&self, user: UserId, org: OrgId) -> Result<TokenPair, Error> {
        Ok(TokenPair {
            access: self.issue(user, org, TokenType::Access)?,
            refresh: self.issue(user, org, TokenType::Refresh)?,
        })
    }

    /// Verifies signature, expiry and type.
    pub fn verify(&self, token: &str, expected: TokenType) -> Result<Claims, Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let data = decode::<Claims>(token, &self.decoding, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            match e.kind() {
                ErrorKind::ExpiredSignature => Error::new(
                    ErrorCode::CredentialExpired,
                    "Token has expired; refresh it or log in again.",
                ),
                ErrorKind::InvalidToken
                | ErrorKind::Base64(_)
                | ErrorKind::Json(_)
                | ErrorKind::Utf8(_) => {
                    Error::new(ErrorCode::CredentialMalformed, "Token is malformed.")
                }
                _ => teamcomm_keys::invalid_credentials(),
            }
        })?;
        if data.claims.typ != expected {
            return Err(teamcomm_keys::invalid_credentials());
        }
        Ok(data.claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn keys() -> JwtKeys {
        JwtKeys::new(
            &"k".repeat(32),
            Duration::from_secs(60),
            Duration::from_secs(600),
        )
    }

    #[test]
    fn round_trip_and_type_check() {
        let k = keys();
        let (u, o) = (UserId::new(), OrgId::new());
        let pair = k.issue_pair(u, o).unwrap();
        let c = k.verify(&pair.access, TokenType::Access).unwrap();
        assert_eq!((c.sub, c.org), (u, o));
        assert_eq!(
            k.verify(&pair.refresh, TokenType::Access)
                .unwrap_err()
                .code(),
            ErrorCode::InvalidCredentials
        );
        assert!(k.verify(&pair.refresh, TokenType::Refresh).is_ok());
    }

    #[test]
    fn refuses_other_secret_garbage_and_expired() {
        let other = JwtKeys::new(
            &"x".repeat(32),
            Duration::from_secs(60),
            Duration::from_secs(60),
        );
        let t = other
            .issue(UserId::new(), OrgId::new(), TokenType::Access)
            .unwrap();
        assert_eq!(
            keys().verify(&t, TokenType::Access).unwrap_err().code(),
            ErrorCode::InvalidCredentials
        );
        assert_eq!(
            keys().verify("abc", TokenType::Access).unwrap_err().code(),
            ErrorCode::CredentialMalformed
        );
        let claims = Claims {
            sub: UserId::new(),
            org: OrgId::new(),
            typ: TokenType::Access,
            iat: 0,
            exp: 1,
            jti: "x".into(),
        };
        let expired = encode(&Header::new(Algorithm::HS256), &claims, &keys().encoding).unwrap();
        assert_eq!(
            keys()
                .verify(&expired, TokenType::Access)
                .unwrap_err()
                .code(),
            ErrorCode::CredentialExpired
        );
    }
}
