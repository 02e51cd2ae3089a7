//! Labels, the entities they go on, and what the ports exchange.

use teamcomm_kernel::{OrgId, UserId, WireEnum};
use time::OffsetDateTime;
use uuid::Uuid;

/// A label's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LabelId(pub Uuid);

impl LabelId {
    /// A fresh, time-ordered id.
    pub fn new() -> Self {
        LabelId(Uuid::now_v7())
    }
}

impl Default for LabelId {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for LabelId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What labels go on and people star. One enum with both of its wire names: the labelling
/// paths and the stored rows say `workflows`, the featured doors `automations` (see
/// [`FeaturedKind`]). Plan tasks carry labels too, through the Plan area's own doors only (no
/// labelling path or featured door names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    Checkins,
    Forms,
    Workflows,
    Tasks,
}

impl WireEnum for EntityKind {
    const NAME: &'static str = "LabelledEntityType";
    const ALL: &'static [Self] = &[
        EntityKind::Checkins,
        EntityKind::Forms,
        EntityKind::Workflows,
        EntityKind::Tasks,
    ];

    fn as_str(self) -> &'static str {
        EntityKind::as_str(self)
    }
}

impl EntityKind {
    /// The collection name of the labelling paths (`/v1/workflows/…/labels/`) and of the
    /// `entity_type` columns.
    pub const fn as_str(self) -> &'static str {
        match self {
            EntityKind::Checkins => "checkins",
            EntityKind::Forms => "forms",
            EntityKind::Workflows => "workflows",
            EntityKind::Tasks => "tasks",
        }
    }

    /// The name the featured doors use (`automations` for workflows, as the web app says).
    pub const fn featured_name(self) -> &'static str {
        match self {
            EntityKind::Workflows => "automations",
            other => other.as_str(),
        }
    }

    /// The kind stored under this `entity_type` column value.
    pub fn parse(s: &str) -> Option<Self> {
        Self::from_name(s)
    }
}

/// An [`EntityKind`] under its featured name: `forms`, `automations` or `checkins`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FeaturedKind(pub EntityKind);

impl WireEnum for FeaturedKind {
    const NAME: &'static str = "FeaturedEntityType";
    const ALL: &'static [Self] = &[
        FeaturedKind(EntityKind::Forms),
        FeaturedKind(EntityKind::Workflows),
        FeaturedKind(EntityKind::Checkins),
    ];

    fn as_str(self) -> &'static str {
        self.0.featured_name()
    }
}

/// How a batch changes the labels of its entities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BatchMode {
    /// Put the labels on every entity, keeping the others.
    Add,
    /// Take the labels off every entity.
    Remove,
    /// Make the labels every entity's whole set.
    Replace,
}

impl WireEnum for BatchMode {
    const NAME: &'static str = "LabelBatchMode";
    const ALL: &'static [Self] = &[BatchMode::Add, BatchMode::Remove, BatchMode::Replace];

    fn as_str(self) -> &'static str {
        match self {
            BatchMode::Add => "add",
            BatchMode::Remove => "remove",
            BatchMode::Replace => "replace",
        }
    }
}

/// An organization label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub id: LabelId,
    pub org_id: OrgId,
    pub name: String,
    /// `#RRGGBB`, upper-case.
    pub color: String,
    pub description: String,
    pub is_archived: bool,
    /// Who created it (members edit their own labels); `None` once that person is deleted.
    pub created_by: Option<UserId>,
    /// How many entities carry it.
    pub usage: u64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// A label to create, already validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLabel {
    pub id: LabelId,
    pub name: String,
    pub color: String,
    pub description: String,
    pub created_by: UserId,
}

/// Changes to a label, already validated; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelPatch {
    pub name: Option<String>,
    pub color: Option<String>,
    pub description: Option<String>,
    pub is_archived: Option<bool>,
}

/// Which labels a listing covers; ordered by name (case-insensitive), then id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelFilter {
    /// Archived labels too (otherwise only live ones).
    pub include_archived: bool,
    /// Case-insensitive fragment of the name.
    pub search: Option<String>,
}

/// What a hard delete did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    Deleted,
    /// Nothing deleted: this many entities still carry the label.
    InUse(u64),
}

/// What the caller may do with labels (`GET /v1/labels/entitlement/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entitlement {
    /// The organization's plan includes labels.
    pub entitled: bool,
    /// May create labels and put labels on things.
    pub can_create: bool,
    /// May edit and archive everyone's labels (others edit their own).
    pub can_manage_all: bool,
    /// May delete labels.
    pub can_hard_delete: bool,
    pub is_guest: bool,
}
