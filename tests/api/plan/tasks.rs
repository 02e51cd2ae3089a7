//! Plan over HTTP: tasks.
