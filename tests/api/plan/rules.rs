//! Plan over HTTP: rules.
