//! Identifiers, the enums the wire names, board keys and task references.

use teamcomm_kernel::{Error, ErrorCode, WireEnum};
use uuid::Uuid;

macro_rules! plan_id {
    ($($(#[$doc:meta])* $name:ident),+ $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn new() -> Self { $name(Uuid::now_v7()) }
        }

        impl Default for $name {
            fn default() -> Self { Self::new() }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { self.0.fmt(f) }
        }
    )+};
}

plan_id!(
    ProjectId,
    BoardId,
    /// A board column.
    StateId,
    TaskId,
    CommentId,
    RelationId,
    /// A member grant of a board or project.
    GrantId,
);

macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident: $schema:literal { $($variant:ident => $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }

        impl WireEnum for $name {
            const NAME: &'static str = $schema;
            const ALL: &'static [Self] = &[$($name::$variant),+];
            fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }
        }

        impl $name {
            pub fn as_str(self) -> &'static str { <Self as WireEnum>::as_str(self) }
            /// The value stored under this column text (unknown text is a decoding error).
            pub fn parse(s: &str) -> Option<Self> { Self::from_name(s) }
        }
    };
}

wire_enum!(
    /// Who sees a project or board: everyone in the organization, or its members.
    Visibility: "PlanVisibility" { Org => "org", Members => "members" }
);
wire_enum!(
    ProjectHealth: "PlanProjectHealth" {
        NotSet => "not_set", OnTrack => "on_track", AtRisk => "at_risk", OffTrack => "off_track"
    }
);
wire_enum!(
    EstimateScale: "PlanEstimateScale" { None => "none", Fibonacci => "fibonacci", Linear => "linear" }
);
wire_enum!(
    /// A column's category; fixed when the column is created.
    StateCategory: "PlanStateCategory" {
        Backlog => "backlog", Todo => "todo", InProgress => "in_progress", Done => "done",
        Canceled => "canceled"
    }
);
wire_enum!(
    RelationType: "PlanRelationType" {
        Blocks => "blocks", RelatesTo => "relates_to", Duplicates => "duplicates"
    }
);
wire_enum!(
    ParticipantRole: "PlanParticipantRole" { Participant => "participant", Watcher => "watcher" }
);

impl StateCategory {
    /// Tasks in these columns are finished (`completed_at` set; not "open").
    pub fn is_closed(self) -> bool {
        matches!(self, StateCategory::Done | StateCategory::Canceled)
    }
}

/// A board key: 2 to 10 characters, an upper-case letter then upper-case letters or digits
/// (`ENG`, `DSN2`). Lower case is taken and upper-cased.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoardKey(String);

pub const MIN_BOARD_KEY: usize = 2;
pub const MAX_BOARD_KEY: usize = 10;

impl BoardKey {
    pub fn parse(raw: &str) -> Result<BoardKey, Error> {
        let key = raw.trim().to_ascii_uppercase();
        let ok = (MIN_BOARD_KEY..=MAX_BOARD_KEY).contains(&key.len())
            && key.starts_with(|c: char| c.is_ascii_uppercase())
            && key
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
        if ok {
            Ok(BoardKey(key))
        } else {
            Err(Error::invalid_field(
                "key",
                "A board key is 2 to 10 letters or digits and starts with a letter.",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A board as a path names it: its uuid or one of its keys (current or retired).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardRef {
    Id(BoardId),
    Key(String),
}

impl BoardRef {
    pub fn parse(raw: &str) -> Result<BoardRef, Error> {
        if let Ok(id) = Uuid::parse_str(raw) {
            return Ok(BoardRef::Id(BoardId(id)));
        }
        let key = raw.to_ascii_uppercase();
        if key.chars().all(|c| c.is_ascii_alphanumeric()) && !key.is_empty() {
            Ok(BoardRef::Key(key))
        } else {
            Err(Error::not_found())
        }
    }
}

/// A task as a path or body names it: `ENG-142` (any key its board ever had) or a uuid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskRef {
    Id(TaskId),
    Key { board_key: String, number: i64 },
}

impl TaskRef {
    /// Something that is neither a uuid nor a well-formed key names nothing: 404.
    pub fn parse(raw: &str) -> Result<TaskRef, Error> {
        Self::try_parse(raw).ok_or_else(Error::not_found)
    }

    pub fn try_parse(raw: &str) -> Option<TaskRef> {
        if let Ok(id) = Uuid::parse_str(raw) {
            return Some(TaskRef::Id(TaskId(id)));
        }
        let (key, number) = raw.rsplit_once('-')?;
        let key = key.to_ascii_uppercase();
        let number: i64 = number.parse().ok().filter(|n| *n >= 1)?;
        (!key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric())).then_some(
            TaskRef::Key {
                board_key: key,
                number,
            },
        )
    }
}

/// `KEY-n`.
pub fn task_key(board_key: &str, number: i64) -> String {
    TaskKey { board_key, number }.to_string()
}

/// `KEY-n`, written where it is shown (no String of its own).
#[derive(Debug, Clone, Copy)]
pub struct TaskKey<'a> {
    pub board_key: &'a str,
    pub number: i64,
}

impl std::fmt::Display for TaskKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.board_key, self.number)
    }
}

/// A priority, 1 (highest) to 5.
pub fn check_priority(p: i16) -> Result<i16, Error> {
    if (1..=5).contains(&p) {
        Ok(p)
    } else {
        Err(Error::invalid_field(
            "priority",
            "Priority is 1 (highest) to 5.",
        ))
    }
}

/// The refusal of a Plan list's `sort`, naming what is allowed.
pub fn invalid_sort(allowed: &[&str]) -> Error {
    Error::new(ErrorCode::InvalidSort, "Unsupported sort value.").with_extra(
        "allowed",
        allowed.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_keys() {
        assert_eq!(BoardKey::parse("eng").unwrap().as_str(), "ENG");
        assert_eq!(BoardKey::parse("DSN2").unwrap().as_str(), "DSN2");
        for bad in ["E", "2EN", "EN-G", "ABCDEFGHIJK", ""] {
            assert!(BoardKey::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn task_refs() {
        assert_eq!(
            TaskRef::parse("eng-12").unwrap(),
            TaskRef::Key {
                board_key: "ENG".into(),
                number: 12
            }
        );
        let id = Uuid::now_v7();
        assert_eq!(
            TaskRef::parse(&id.to_string()).unwrap(),
            TaskRef::Id(TaskId(id))
        );
        for bad in ["ENG", "ENG-0", "ENG-x", "-3", "E G-1"] {
            assert_eq!(
                TaskRef::parse(bad).unwrap_err().code(),
                ErrorCode::NotFound,
                "{bad}"
            );
        }
    }
}

/// A project (boards belong to one).
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    pub id: ProjectId,
    pub org_id: teamcomm_kernel::OrgId,
    pub name: String,
    pub description: String,
    pub visibility: Visibility,
    pub lead: Option<teamcomm_kernel::UserId>,
    pub health: ProjectHealth,
    pub start_date: Option<time::Date>,
    pub target_date: Option<time::Date>,
    pub rank: i64,
    pub is_archived: bool,
    pub archived_at: Option<time::OffsetDateTime>,
    pub created_by: Option<teamcomm_kernel::UserId>,
    pub created_at: time::OffsetDateTime,
    pub updated_at: time::OffsetDateTime,
}

/// A board: its columns hold its tasks, numbered `KEY-n`.
#[derive(Debug, Clone, PartialEq)]
pub struct Board {
    pub id: BoardId,
    pub org_id: teamcomm_kernel::OrgId,
    pub project_id: ProjectId,
    pub name: String,
    /// The current key (`ENG`); retired keys still resolve to the board.
    pub key: String,
    pub visibility: Visibility,
    pub estimate_scale: EstimateScale,
    pub archive_after_days: Option<i32>,
    pub rank: i64,
    pub is_archived: bool,
    pub archived_at: Option<time::OffsetDateTime>,
    pub created_by: Option<teamcomm_kernel::UserId>,
    pub created_at: time::OffsetDateTime,
    pub updated_at: time::OffsetDateTime,
}

/// A board column ("state").
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub id: StateId,
    pub board_id: BoardId,
    pub name: String,
    pub category: StateCategory,
    /// 1-based order among the board's live columns.
    pub position: i32,
    pub color: Option<String>,
    pub is_default: bool,
    pub is_archived: bool,
    pub created_at: time::OffsetDateTime,
    pub updated_at: time::OffsetDateTime,
}

/// A task.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: TaskId,
    pub org_id: teamcomm_kernel::OrgId,
    pub board_id: BoardId,
    /// The board's current key, read with the task.
    pub board_key: String,
    pub number: i64,
    pub state_id: StateId,
    pub parent_id: Option<TaskId>,
    pub title: String,
    pub description: String,
    pub owner: Option<teamcomm_kernel::UserId>,
    pub priority: Option<i16>,
    pub estimate: Option<i32>,
    pub start_date: Option<time::Date>,
    pub due_date: Option<time::Date>,
    pub milestone_id: Option<Uuid>,
    pub rank: i64,
    pub version: i64,
    pub is_archived: bool,
    pub archived_at: Option<time::OffsetDateTime>,
    /// Archived because its board was; restoring the board leaves it archived.
    pub archived_with_board: bool,
    pub completed_at: Option<time::OffsetDateTime>,
    pub created_by: Option<teamcomm_kernel::UserId>,
    pub created_by_agent: Option<String>,
    pub created_at: time::OffsetDateTime,
    pub updated_at: time::OffsetDateTime,
}

impl Task {
    /// `KEY-n` under the board's current key.
    pub fn key(&self) -> String {
        self.key_display().to_string()
    }

    /// [`Task::key`] without a String.
    pub fn key_display(&self) -> TaskKey<'_> {
        TaskKey {
            board_key: &self.board_key,
            number: self.number,
        }
    }
}
