//! Boards: each belongs to a project and has a key (`ENG`) its tasks are numbered under. Every
//! key a board ever had stays reserved in the organization and keeps resolving. The free plan
//! has three live boards.

use teamcomm_kernel::{Error, ErrorCode, RepoError};
use teamcomm_org::PlanTier;
use time::{Date, OffsetDateTime};

use crate::access::Viewer;
use crate::states::default_columns;
use crate::{Board, BoardId, BoardKey, EstimateScale, Plan, PlanActor, ProjectId, Visibility};

pub const MAX_BOARD_NAME: usize = 255;
/// Live boards of an organization on the free plan.
pub const FREE_BOARDS: u64 = 3;

/// A board to create: all three are required.
#[derive(Debug, Clone, PartialEq)]
pub struct NewBoard {
    pub name: String,
    pub project: ProjectId,
    pub key: String,
}

/// A change to a board; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoardPatch {
    pub name: Option<String>,
    /// A new key (already checked); the current one is retired.
    pub key: Option<String>,
    pub visibility: Option<Visibility>,
    pub estimate_scale: Option<EstimateScale>,
    /// `Some(None)` turns automatic archiving off.
    pub archive_after_days: Option<Option<i32>>,
    pub project: Option<ProjectId>,
    /// Archive (`Some(true)`) or restore; the store stamps `archived_at`.
    pub is_archived: Option<bool>,
    pub updated_at: Option<OffsetDateTime>,
}

/// Which boards a list shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoardFilter {
    pub viewer: Viewer,
    /// Part of the name or key, any case.
    pub search: Option<String>,
    /// Boards created on this day or later.
    pub start_date: Option<Date>,
    /// Boards created on this day or earlier.
    pub end_date: Option<Date>,
    pub project: Option<ProjectId>,
    pub include_archived: bool,
}

pub(crate) fn check_board_name(raw: &str) -> Result<String, Error> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_BOARD_NAME {
        return Err(Error::invalid_field(
            "name",
            "A board name is 1 to 255 characters.",
        ));
    }
    Ok(name.to_owned())
}

pub(crate) fn key_conflict(e: RepoError) -> Error {
    match e {
        RepoError::Conflict { constraint } if constraint.contains("board_keys") => Error::new(
            ErrorCode::DuplicateBoardKey,
            "A board of this organization has or had this key.",
        ),
        other => other.into(),
    }
}

impl Plan {
    /// Creates a board in a project the caller sees, with the default columns (Backlog,
    /// Todo (default), In Progress, Done, Canceled).
    pub async fn create_board(&self, actor: &PlanActor, new: NewBoard) -> Result<Board, Error> {
        let org = actor.org_id();
        let name = check_board_name(&new.name);
        let key = BoardKey::parse(&new.key);
        let name = name?;
        let key = key?;
        let project = self
            .visible_project(actor, new.project)
            .await
            .map_err(|e| project_field(e, "project"))?;
        if project.is_archived {
            return Err(Error::invalid_field("project", "The project is archived."));
        }
        if actor.org.plan == PlanTier::Free
            && self.ports.boards.count_live_boards(org).await? >= FREE_BOARDS
        {
            return Err(Error::new(
                ErrorCode::TaskBoardsLimitReached,
                "The free plan has three boards. Upgrade to add more.",
            )
            .with_extra("limit", FREE_BOARDS));
        }
        let now = self.ports.clock.now();
        let board = Board {
            id: BoardId::new(),
            org_id: org,
            project_id: project.id,
            name,
            key: key.as_str().to_owned(),
            visibility: Visibility::Org,
            estimate_scale: EstimateScale::None,
            archive_after_days: None,
            rank: 0,
            is_archived: false,
            archived_at: None,
            created_by: actor.person_id(),
            created_at: now,
            updated_at: now,
        };
        let states = default_columns(&board);
        self.ports
            .boards
            .create_board(&board, &states)
            .await
            .map_err(key_conflict)
    }
}

/// A body field naming a project the caller cannot see: `invalid_field` on it.
pub(crate) fn project_field(e: Error, field: &str) -> Error {
    if e.code() == ErrorCode::NotFound {
        Error::invalid_field(field, "No such project.")
    } else {
        e
    }
}
