//! Plan over HTTP: boards.
