//! Plan port contract: tasks.
