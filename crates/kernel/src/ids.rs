//! Identifiers as newtypes, so an organization id can never be passed where a user id is expected.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! id_type {
    ($($(#[$doc:meta])* $name:ident),+ $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A fresh, time-ordered id (UUIDv7 keeps b-tree inserts local).
            pub fn new() -> Self { $name(Uuid::now_v7()) }
            pub fn as_uuid(&self) -> Uuid { self.0 }
        }

        impl Default for $name {
            fn default() -> Self { Self::new() }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { self.0.fmt(f) }
        }

        impl std::str::FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> { Uuid::parse_str(s).map($name) }
        }

        impl From<Uuid> for $name {
            fn from(u: Uuid) -> Self { $name(u) }
        }
    )+};
}

id_type!(
    /// An organization (tenant).
    OrgId,
    /// A person in an organization.
    UserId,
    /// An API key record.
    ApiKeyId,
    /// A CLI bearer token record.
    CliTokenId,
    /// A team of an organization.
    TeamId,
);
