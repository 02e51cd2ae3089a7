//! Plan port contract: social.
