//! The labels domain: an organization's labels (a shared taxonomy for forms, check-ins and
//! workflows, and later the Plan area), the labels each of those entities carries, and each
//! person's private featured stars on them. Labels need a paid plan; stars do not.
//!
//! `LabelService` applies the rules (plan, role, text, colour, limits, archived labels) and
//! `FeaturedService` the stars' few; storage is behind the ports [`LabelRepository`],
//! [`FeaturedRepository`] and [`LabelledEntities`] (which of some uuids are entities of the
//! organization: the entities live in other areas' tables).

mod model;
mod ports;
mod rules;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use model::{
    BatchMode, Deletion, Entitlement, EntityKind, FeaturedKind, Label, LabelFilter, LabelId,
    LabelPatch, NewLabel,
};
pub use ports::{FeaturedRepository, LabelRepository, LabelledEntities};
pub use rules::{
    DEFAULT_COLOR, MAX_BATCH_ENTITIES, MAX_LABEL_DESCRIPTION, MAX_LABEL_NAME, MAX_LABELS_PER_CALL,
    validate_color,
};
pub use service::{FeaturedService, LabelChanges, LabelService};
