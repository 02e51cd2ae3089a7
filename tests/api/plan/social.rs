//! Plan over HTTP: social.
