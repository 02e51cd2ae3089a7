//! Plan port contract: boards.
