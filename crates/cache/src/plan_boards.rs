//! A read-through cache of the Plan area's boards and their columns: every task read and write
//! starts by resolving its board (by uuid or key) and naming its column, and boards change
//! rarely. `get_board`, `board_by_key` and `board_states` are served from memory for at most
//! `TEAMCOMM_PLAN_BOARD_CACHE_TTL_SECS`.
//!
//! What keeps it honest:
//! - every board or column write through this decorator starts a new generation of the
//!   organization's boards (after the write, whatever its outcome), so this instance never reads
//!   a board older than its own writes; a load that raced the write is stored under the ended
//!   generation, where nobody looks;
//! - writes never trust it: a task is stored only on a live board (the create's numbering
//!   statement) in a live column of that board (the `plan_task_column_live` trigger), checked by
//!   PostgreSQL when the task is written, whatever the service read;
//! - a change made elsewhere (another instance, `teamcomm admin`) shows in reads within the
//!   time-to-live.
//!
//! Members, visits and counts are read through every time: they are not what a task request
//! reads, and counts change with every task write.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, TeamId, UserId};
use teamcomm_plan::access::{Anchor, Grant, Grantee};
use teamcomm_plan::actor::Executor;
use teamcomm_plan::boards::{BoardFilter, BoardPatch};
use teamcomm_plan::ports::{BoardRepository, MigrateTo};
use teamcomm_plan::{Board, BoardId, GrantId, ProjectId, State, StateId};
use time::OffsetDateTime;

use crate::generations::Generations;

/// A `BoardRepository` that answers boards (by uuid or key) and their columns from memory and
/// passes every other call through.
pub struct PlanBoardCache {
    inner: Arc<dyn BoardRepository>,
    /// `None` when the time-to-live is zero: everything is read from `inner`.
    kept: Option<Kept>,
    generations: Generations,
}

struct Kept {
    boards: Cache<(OrgId, u64, BoardId), Arc<Board>>,
    keys: Cache<(OrgId, u64, String), Arc<Board>>,
    columns: Cache<(OrgId, u64, BoardId), Arc<Vec<State>>>,
}

impl PlanBoardCache {
    pub fn new(inner: Arc<dyn BoardRepository>, ttl: Duration) -> Self {
        let kept = (!ttl.is_zero()).then(|| Kept {
            boards: Cache::builder()
                .max_capacity(10_000)
                .time_to_live(ttl)
                .build(),
            keys: Cache::builder()
                .max_capacity(10_000)
                .time_to_live(ttl)
                .build(),
            columns: Cache::builder()
                .max_capacity(10_000)
                .time_to_live(ttl)
                .build(),
        });
        PlanBoardCache {
            inner,
            kept,
            generations: Generations::default(),
        }
    }

    /// Passes a write's outcome on, having made every board of `org` this instance holds
    /// unreachable: even a refused write may have found the rows changed under it.
    fn written<T>(&self, org: OrgId, result: Result<T, RepoError>) -> Result<T, RepoError> {
        if self.kept.is_some() {
            self.generations.bump(org);
        }
        result
    }
}

/// The error of a shared load, for its caller (only found rows are kept).
fn unshared(e: Arc<RepoError>) -> RepoError {
    (*e).clone()
}

#[async_trait]
impl BoardRepository for PlanBoardCache {
    async fn create_board(&self, board: &Board, states: &[State]) -> Result<Board, RepoError> {
        let result = self.inner.create_board(board, states).await;
        self.written(board.org_id, result)
    }

    async fn get_board(&self, org: OrgId, id: BoardId) -> Result<Board, RepoError> {
        let Some(kept) = &self.kept else {
            return self.inner.get_board(org, id).await;
        };
        kept.boards
            .try_get_with((org, self.generations.current(org), id), async {
                self.inner.get_board(org, id).await.map(Arc::new)
            })
            .await
            .map(|b| (*b).clone())
            .map_err(unshared)
    }

    async fn board_by_key(&self, org: OrgId, key: &str) -> Result<Board, RepoError> {
        let Some(kept) = &self.kept else {
            return self.inner.board_by_key(org, key).await;
        };
        kept.keys
            .try_get_with(
                (org, self.generations.current(org), key.to_owned()),
                async { self.inner.board_by_key(org, key).await.map(Arc::new) },
            )
            .await
            .map(|b| (*b).clone())
            .map_err(unshared)
    }

    async fn list_boards(
        &self,
        org: OrgId,
        filter: &BoardFilter,
        page: PageRequest,
    ) -> Result<Page<Board>, RepoError> {
        self.inner.list_boards(org, filter, page).await
    }

    async fn count_live_boards(&self, org: OrgId) -> Result<u64, RepoError> {
        self.inner.count_live_boards(org).await
    }

    async fn update_board(
        &self,
        org: OrgId,
        id: BoardId,
        patch: &BoardPatch,
    ) -> Result<Board, RepoError> {
        let result = self.inner.update_board(org, id, patch).await;
        self.written(org, result)
    }

    async fn count_board_tasks(&self, org: OrgId, id: BoardId) -> Result<u64, RepoError> {
        self.inner.count_board_tasks(org, id).await
    }

    async fn archive_board(
        &self,
        org: OrgId,
        id: BoardId,
        by: &Executor,
        at: OffsetDateTime,
    ) -> Result<u64, RepoError> {
        let result = self.inner.archive_board(org, id, by, at).await;
        self.written(org, result)
    }

    async fn restore_board(&self, org: OrgId, id: BoardId) -> Result<(), RepoError> {
        let result = self.inner.restore_board(org, id).await;
        self.written(org, result)
    }

    async fn move_board(
        &self,
        org: OrgId,
        id: BoardId,
        anchor: Anchor<BoardId>,
        project: Option<ProjectId>,
    ) -> Result<(), RepoError> {
        let result = self.inner.move_board(org, id, anchor, project).await;
        self.written(org, result)
    }

    async fn board_grants(&self, org: OrgId, id: BoardId) -> Result<Vec<Grant>, RepoError> {
        self.inner.board_grants(org, id).await
    }

    async fn add_board_grant(
        &self,
        org: OrgId,
        id: BoardId,
        grantee: Grantee,
        grant: GrantId,
    ) -> Result<(Grant, bool), RepoError> {
        self.inner.add_board_grant(org, id, grantee, grant).await
    }

    async fn remove_board_grant(
        &self,
        org: OrgId,
        id: BoardId,
        grant: GrantId,
    ) -> Result<(), RepoError> {
        self.inner.remove_board_grant(org, id, grant).await
    }

    async fn granted_teams(&self, org: OrgId) -> Result<Vec<TeamId>, RepoError> {
        self.inner.granted_teams(org).await
    }

    async fn record_visit(
        &self,
        org: OrgId,
        user: UserId,
        board: BoardId,
        at: OffsetDateTime,
    ) -> Result<(), RepoError> {
        self.inner.record_visit(org, user, board, at).await
    }

    async fn visits(
        &self,
        org: OrgId,
        user: UserId,
        limit: u64,
    ) -> Result<Vec<(BoardId, OffsetDateTime)>, RepoError> {
        self.inner.visits(org, user, limit).await
    }

    async fn board_states(&self, org: OrgId, board: BoardId) -> Result<Vec<State>, RepoError> {
        let Some(kept) = &self.kept else {
            return self.inner.board_states(org, board).await;
        };
        kept.columns
            .try_get_with((org, self.generations.current(org), board), async {
                self.inner.board_states(org, board).await.map(Arc::new)
            })
            .await
            .map(|c| (*c).clone())
            .map_err(unshared)
    }

    async fn put_states(&self, org: OrgId, states: &[State]) -> Result<(), RepoError> {
        let result = self.inner.put_states(org, states).await;
        self.written(org, result)
    }

    async fn count_state_tasks(&self, org: OrgId, state: StateId) -> Result<u64, RepoError> {
        self.inner.count_state_tasks(org, state).await
    }

    async fn archive_state(
        &self,
        org: OrgId,
        states: &[State],
        from: StateId,
        to: Option<MigrateTo>,
        by: &Executor,
        at: OffsetDateTime,
    ) -> Result<u64, RepoError> {
        let result = self
            .inner
            .archive_state(org, states, from, to, by, at)
            .await;
        self.written(org, result)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use teamcomm_kernel::{Error, ErrorCode};
    use teamcomm_plan::boards::BoardPatch;
    use teamcomm_plan::ports::BoardRepository;
    use teamcomm_plan::tasks::CreateTask;
    use teamcomm_plan::testing::World;
    use teamcomm_plan::{Board, BoardRef, Plan, PlanActor};

    use super::PlanBoardCache;

    const LONG: Duration = Duration::from_secs(3600);

    /// A world whose `Plan` reads boards through the cache (`cached`), with the store under it.
    async fn cached_world(ttl: Duration) -> (World, Plan) {
        let w = World::new().await;
        let cache = PlanBoardCache::new(Arc::new(w.mem.clone()), ttl);
        let plan = w.plan_with_boards(Arc::new(cache));
        (w, plan)
    }

    /// The board `raw` (uuid or key) names, as `actor` sees it through `plan`.
    async fn seen(plan: &Plan, actor: &PlanActor, raw: &str) -> Result<Board, Error> {
        plan.visible_board(actor, &BoardRef::parse(raw)?).await
    }

    fn new_task(board: &str) -> CreateTask {
        CreateTask {
            title: "Card".into(),
            board: Some(BoardRef::parse(board).unwrap()),
            ..CreateTask::default()
        }
    }

    #[tokio::test]
    async fn a_board_and_its_columns_are_read_once_for_many_tasks() {
        let (w, plan) = cached_world(LONG).await;
        w.board("ENG").await;
        plan.create_task(&w.member, new_task("ENG")).await.unwrap();
        // What 5 creates cost the store, through the cache (`plan`) and past it (`w.plan`).
        let cost = async |plan: &Plan| {
            let before = w.mem.visits();
            for _ in 0..5 {
                plan.create_task(&w.member, new_task("ENG")).await.unwrap();
            }
            w.mem.visits() - before
        };
        let (cached, uncached) = (cost(&plan).await, cost(&w.plan).await);
        // The board (by key) and its columns: two reads fewer per create.
        assert_eq!(uncached - cached, 2 * 5);
        let page = plan
            .list_tasks(
                &w.member,
                &Default::default(),
                teamcomm_kernel::PageRequest::all(),
            )
            .await
            .unwrap();
        assert_eq!(page.count, 11);
    }

    #[tokio::test]
    async fn a_write_through_it_is_read_at_once() {
        let (w, plan) = cached_world(LONG).await;
        let board = w.board("ENG").await;
        assert_eq!(
            seen(&plan, &w.member, "ENG").await.unwrap().name,
            "Board ENG"
        );
        let patch = BoardPatch {
            name: Some("Renamed".into()),
            key: Some("OPS".into()),
            ..BoardPatch::default()
        };
        plan.update_board(&w.admin, &BoardRef::Id(board.id), patch)
            .await
            .unwrap();
        let id = board.id.0.to_string();
        assert_eq!(seen(&plan, &w.member, &id).await.unwrap().name, "Renamed");
        // The retired key resolves to the renamed board, the new one too.
        for key in ["ENG", "OPS"] {
            let b = seen(&plan, &w.member, key).await.unwrap();
            assert_eq!((b.name.as_str(), b.key.as_str()), ("Renamed", "OPS"));
        }
        // An archived column is gone from the cached columns at once.
        let columns = plan.live_states(&board).await.unwrap();
        let todo = columns.iter().find(|c| c.name == "Todo").unwrap().id;
        plan.archive_state(&w.admin, &BoardRef::Id(board.id), todo, None, false)
            .await
            .unwrap();
        let mut create = new_task("OPS");
        create.state = Some(todo);
        let e = plan.create_task(&w.member, create).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::StateNotOnBoard);
    }

    #[tokio::test]
    async fn a_write_elsewhere_shows_once_the_time_to_live_ends() {
        let ttl = Duration::from_millis(300);
        let (w, plan) = cached_world(ttl).await;
        let board = w.board("ENG").await;
        let id = board.id.0.to_string();
        let name = async || seen(&plan, &w.member, &id).await.unwrap().name;
        assert_eq!(name().await, "Board ENG");
        // Another instance renames it: straight into the store, past this cache.
        let patch = BoardPatch {
            name: Some("Elsewhere".into()),
            ..BoardPatch::default()
        };
        w.mem
            .update_board(w.org.id, board.id, &patch)
            .await
            .unwrap();
        assert_eq!(name().await, "Board ENG");
        tokio::time::sleep(ttl + Duration::from_millis(200)).await;
        assert_eq!(name().await, "Elsewhere");
    }

    #[tokio::test]
    async fn a_missing_board_is_asked_again_and_a_zero_ttl_keeps_nothing() {
        let (w, plan) = cached_world(LONG).await;
        let missing = seen(&plan, &w.member, "NEW").await.unwrap_err();
        assert_eq!(missing.code(), ErrorCode::NotFound);
        // Made behind the cache's back: a refusal is not kept.
        w.board("NEW").await;
        assert_eq!(seen(&plan, &w.member, "NEW").await.unwrap().key, "NEW");

        let (w, plan) = cached_world(Duration::ZERO).await;
        let board = w.board("ENG").await;
        let before = w.mem.visits();
        let id = board.id.0.to_string();
        for _ in 0..3 {
            seen(&plan, &w.member, &id).await.unwrap();
        }
        assert_eq!(w.mem.visits() - before, 3);
    }
}
