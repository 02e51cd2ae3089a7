//! Boards, their keys (current and retired), member grants, visits and columns.

use async_trait::async_trait;
use teamcomm_kernel::TeamId;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use time::OffsetDateTime;

use crate::access::{Anchor, Grant, Grantee};
use crate::actor::Executor;
use crate::boards::{BoardFilter, BoardPatch};
use crate::{Board, BoardId, GrantId, ProjectId, State, StateId};

#[async_trait]
pub trait BoardRepository: Send + Sync + 'static {
    /// Inserts the board (last in the order), its key and its columns in one transaction.
    /// `Conflict` on `plan_board_keys_pkey` when any board of the organization has or had the
    /// key; `NotFound` when the project is not of the organization.
    async fn create_board(&self, board: &Board, states: &[State]) -> Result<Board, RepoError>;
    async fn get_board(&self, org: OrgId, id: BoardId) -> Result<Board, RepoError>;
    /// The board that has or had `key`.
    async fn board_by_key(&self, org: OrgId, key: &str) -> Result<Board, RepoError>;
    /// The boards the filter's viewer sees, in the organization's order.
    async fn list_boards(
        &self,
        org: OrgId,
        filter: &BoardFilter,
        page: PageRequest,
    ) -> Result<Page<Board>, RepoError>;
    async fn count_live_boards(&self, org: OrgId) -> Result<u64, RepoError>;
    /// Applies the patch and stamps `updated_at`. A new key retires the current one (it keeps
    /// resolving and stays reserved); `Conflict` on `plan_board_keys_pkey` when another board
    /// has or had it.
    async fn update_board(
        &self,
        org: OrgId,
        id: BoardId,
        patch: &BoardPatch,
    ) -> Result<Board, RepoError>;
    /// Live tasks of the board.
    async fn count_board_tasks(&self, org: OrgId, id: BoardId) -> Result<u64, RepoError>;
    /// Archives the board and, in the same transaction, its live tasks (`archived_with_board`,
    /// one `archived` event each); answers how many tasks it archived.
    async fn archive_board(
        &self,
        org: OrgId,
        id: BoardId,
        by: &Executor,
        at: OffsetDateTime,
    ) -> Result<u64, RepoError>;
    /// Makes the board live again (its tasks stay archived).
    async fn restore_board(&self, org: OrgId, id: BoardId) -> Result<(), RepoError>;
    /// Puts the board before or after another (or last), in `project` when given.
    async fn move_board(
        &self,
        org: OrgId,
        id: BoardId,
        anchor: Anchor<BoardId>,
        project: Option<ProjectId>,
    ) -> Result<(), RepoError>;
    async fn board_grants(&self, org: OrgId, id: BoardId) -> Result<Vec<Grant>, RepoError>;
    async fn add_board_grant(
        &self,
        org: OrgId,
        id: BoardId,
        grantee: Grantee,
        grant: GrantId,
    ) -> Result<(Grant, bool), RepoError>;
    async fn remove_board_grant(
        &self,
        org: OrgId,
        id: BoardId,
        grant: GrantId,
    ) -> Result<(), RepoError>;
    /// Every team named by a board or project grant of the organization.
    async fn granted_teams(&self, org: OrgId) -> Result<Vec<TeamId>, RepoError>;
    async fn record_visit(
        &self,
        org: OrgId,
        user: UserId,
        board: BoardId,
        at: OffsetDateTime,
    ) -> Result<(), RepoError>;
    /// The person's visits, latest first.
    async fn visits(
        &self,
        org: OrgId,
        user: UserId,
        limit: u64,
    ) -> Result<Vec<(BoardId, OffsetDateTime)>, RepoError>;
    /// Every column of the board (archived too), by position.
    async fn board_states(&self, org: OrgId, board: BoardId) -> Result<Vec<State>, RepoError>;
    /// Inserts or updates the columns (by id) in one transaction.
    async fn put_states(&self, org: OrgId, states: &[State]) -> Result<(), RepoError>;
    /// Live tasks in the column.
    async fn count_state_tasks(&self, org: OrgId, state: StateId) -> Result<u64, RepoError>;
    /// Writes the columns and moves the live tasks of `from` to `to` (one `moved` event each)
    /// in one transaction; answers how many it moved. A move that would leave more than
    /// `to.limit` live tasks in `to.state` (counting what other writers stored before it, as
    /// they stand once it holds the column's count) stores nothing: `Conflict` on
    /// [`crate::ports::COLUMN_FULL`], as a create into a full column.
    async fn archive_state(
        &self,
        org: OrgId,
        states: &[State],
        from: StateId,
        to: Option<MigrateTo>,
        by: &Executor,
        at: OffsetDateTime,
    ) -> Result<u64, RepoError>;
}

/// Where the live tasks of a column being archived go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigrateTo {
    pub state: StateId,
    /// The most live tasks `state` may hold once they are there.
    pub limit: u64,
}
