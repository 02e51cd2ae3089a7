//! Chat-platform adapters: the messaging domain's [`ChatPlatform`] port over the real platforms.
//!
//! - [`MatrixPlatform`]: the Matrix Client-Server API (v3) as a bot account on a homeserver.
//! - [`SlackPlatform`]: the Slack Web API with a bot token; what Slack pushes (events, button
//!   clicks) is read by [`slack_events`].
//!
//! Both take a [`reqwest::Client`]; [`http_client`] builds one with the timeouts they expect, and
//! one client can serve every organization's adapter (it pools connections per host).
//!
//! [`ChatPlatform`]: teamcomm_messaging::platform::ChatPlatform

mod http;
mod matrix;
mod slack;
pub mod slack_events;
#[cfg(feature = "testing")]
pub mod testing;

pub use http::http_client;
pub use matrix::{MatrixConfig, MatrixPlatform};
pub use slack::{SlackConfig, SlackPlatform};
