//! SQL of the Plan area's boards, their keys, visits and columns (their member grants and order:
//! `holders`), and the task cascades of board and column archiving (the only task writes here).
//!
//! The column limit (5,000 live tasks, `column_too_large`): of the writes here, only a column's
//! archive puts live tasks into a column (its migration), and it checks the limit under the
//! board row's lock, which creates take to check theirs, and the target's count lock
//! (`archive_state`). The others cannot overfill one: a board's archive
//! only archives tasks, a board's restore leaves them archived, a board's move to another
//! project keeps every task in its column (the counts are per board and column), and writing
//! columns (add, change, reorder, archive without tasks, restore) moves no task.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, TeamId, UserId};
use teamcomm_plan::access::{Anchor, Grant, Grantee};
use teamcomm_plan::actor::Executor;
use teamcomm_plan::boards::{BoardFilter, BoardPatch};
use teamcomm_plan::ports::{BoardRepository, COLUMN_FULL, MigrateTo};
use teamcomm_plan::{
    Board, BoardId, EstimateScale, GrantId, ProjectId, State, StateCategory, StateId, Visibility,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::holders::BOARDS;
use super::projects::{Tx, decoding, team_uuids};
use crate::Database;
use crate::error::{db_error, unknown_organization};
use crate::repo::count_from;
use crate::repo::paging::{like_pattern, load_page};
use crate::schema::plan::{
    plan_board_keys, plan_board_members, plan_board_task_counts, plan_board_visits, plan_boards,
    plan_column_task_counts, plan_project_members, plan_projects, plan_states, plan_task_events,
    plan_tasks,
};

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = plan_boards, check_for_backend(diesel::pg::Pg))]
struct BoardRow {
    id: Uuid,
    organization_id: Uuid,
    project_id: Uuid,
    name: String,
    key: String,
    visibility: String,
    estimate_scale: String,
    archive_after_days: Option<i32>,
    rank: i64,
    is_archived: bool,
    archived_at: Option<OffsetDateTime>,
    created_by_id: Option<Uuid>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl TryFrom<BoardRow> for Board {
    type Error = RepoError;
    fn try_from(r: BoardRow) -> Result<Self, RepoError> {
        Ok(Board {
            id: BoardId(r.id),
            org_id: OrgId(r.organization_id),
            project_id: ProjectId(r.project_id),
            visibility: Visibility::parse(&r.visibility)
                .ok_or_else(|| decoding("visibility", &r.visibility))?,
            estimate_scale: EstimateScale::parse(&r.estimate_scale)
                .ok_or_else(|| decoding("estimate scale", &r.estimate_scale))?,
            name: r.name,
            key: r.key,
            archive_after_days: r.archive_after_days,
            rank: r.rank,
            is_archived: r.is_archived,
            archived_at: r.archived_at,
            created_by: r.created_by_id.map(UserId),
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = plan_states, check_for_backend(diesel::pg::Pg))]
#[diesel(treat_none_as_null = true)]
struct StateRow {
    id: Uuid,
    organization_id: Uuid,
    board_id: Uuid,
    name: String,
    category: String,
    position: i32,
    color: Option<String>,
    is_default: bool,
    is_archived: bool,
    archived_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl TryFrom<StateRow> for State {
    type Error = RepoError;
    fn try_from(r: StateRow) -> Result<Self, RepoError> {
        Ok(State {
            id: StateId(r.id),
            board_id: BoardId(r.board_id),
            category: StateCategory::parse(&r.category)
                .ok_or_else(|| decoding("category", &r.category))?,
            name: r.name,
            position: r.position,
            color: r.color,
            is_default: r.is_default,
            is_archived: r.is_archived,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

fn state_row(org: OrgId, s: &State) -> StateRow {
    StateRow {
        id: s.id.0,
        organization_id: org.0,
        board_id: s.board_id.0,
        name: s.name.clone(),
        category: s.category.as_str().to_owned(),
        position: s.position,
        color: s.color.clone(),
        is_default: s.is_default,
        is_archived: s.is_archived,
        archived_at: s.is_archived.then_some(s.updated_at),
        created_at: s.created_at,
        updated_at: s.updated_at,
    }
}

async fn load_board(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    id: BoardId,
) -> Result<Board, RepoError> {
    plan_boards::table
        .filter(plan_boards::id.eq(id.0))
        .filter(plan_boards::organization_id.eq(org.0))
        .select(BoardRow::as_select())
        .first(conn)
        .await
        .map_err(db_error)?
        .try_into()
}

async fn project_exists(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    id: ProjectId,
) -> Result<(), RepoError> {
    plan_projects::table
        .filter(plan_projects::id.eq(id.0))
        .filter(plan_projects::organization_id.eq(org.0))
        .select(plan_projects::id)
        .first::<Uuid>(conn)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// Upserts the columns one by one, locking their rows in key order (board, then id), never
/// in the order given (a reorder gives them by position): two writers of the same columns
/// (two reorders, a reorder and an archive) then lock them in the same order and cannot wait
/// on each other in a cycle. The same order as the column counts' triggers
/// (`plan_column_task_counts`, by board then column).
async fn put_state_rows(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    states: &[State],
) -> Result<(), RepoError> {
    let mut in_key_order: Vec<&State> = states.iter().collect();
    in_key_order.sort_by_key(|s| (s.board_id.0, s.id.0));
    for s in in_key_order {
        let row = state_row(org, s);
        let n = diesel::insert_into(plan_states::table)
            .values(&row)
            .on_conflict(plan_states::id)
            .do_update()
            .set(&row)
            .execute(conn)
            .await
            .map_err(db_error)?;
        if n == 0 {
            return Err(RepoError::NotFound);
        }
    }
    Ok(())
}

/// One event row per changed task, in the change's transaction.
async fn task_events(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    tasks: &[(Uuid, Uuid)],
    kind: &str,
    data: serde_json::Value,
    by: &Executor,
    at: OffsetDateTime,
) -> Result<(), RepoError> {
    if tasks.is_empty() {
        return Ok(());
    }
    let rows: Vec<_> = tasks
        .iter()
        .map(|(task, board)| {
            (
                plan_task_events::id.eq(Uuid::now_v7()),
                plan_task_events::organization_id.eq(org.0),
                plan_task_events::board_id.eq(*board),
                plan_task_events::task_id.eq(*task),
                plan_task_events::event_type.eq(kind),
                plan_task_events::actor_id.eq(by.user.map(|u| u.0)),
                plan_task_events::agent_name.eq(by.agent.clone()),
                plan_task_events::data.eq(data.clone()),
                plan_task_events::created_at.eq(at),
            )
        })
        .collect();
    diesel::insert_into(plan_task_events::table)
        .values(rows)
        .execute(conn)
        .await
        .map_err(db_error)?;
    Ok(())
}

diesel::define_sql_function!(fn clock_timestamp() -> diesel::sql_types::Timestamptz);

pub struct PgBoards {
    db: Database,
}

impl PgBoards {
    pub fn new(db: Database) -> Self {
        PgBoards { db }
    }
}

#[async_trait]
impl BoardRepository for PgBoards {
    async fn create_board(&self, board: &Board, states: &[State]) -> Result<Board, RepoError> {
        let mut conn = self.db.conn().await?;
        let org = board.org_id;
        let row: BoardRow = conn
            .transaction::<_, Tx, _>(async |conn| {
                project_exists(conn, org, board.project_id).await?;
                let last: Option<i64> = plan_boards::table
                    .filter(plan_boards::organization_id.eq(org.0))
                    .select(diesel::dsl::max(plan_boards::rank))
                    .first(conn)
                    .await
                    .map_err(db_error)?;
                let row: BoardRow = diesel::insert_into(plan_boards::table)
                    .values((
                        plan_boards::id.eq(board.id.0),
                        plan_boards::organization_id.eq(org.0),
                        plan_boards::project_id.eq(board.project_id.0),
                        plan_boards::name.eq(&board.name),
                        plan_boards::key.eq(&board.key),
                        plan_boards::visibility.eq(board.visibility.as_str()),
                        plan_boards::estimate_scale.eq(board.estimate_scale.as_str()),
                        plan_boards::archive_after_days.eq(board.archive_after_days),
                        plan_boards::rank.eq(last.unwrap_or(0) + 1024),
                        plan_boards::created_by_id.eq(board.created_by.map(|u| u.0)),
                        plan_boards::created_at.eq(board.created_at),
                        plan_boards::updated_at.eq(board.updated_at),
                    ))
                    .returning(BoardRow::as_returning())
                    .get_result(conn)
                    .await
                    .map_err(db_error)?;
                diesel::insert_into(plan_board_keys::table)
                    .values((
                        plan_board_keys::organization_id.eq(org.0),
                        plan_board_keys::key.eq(&board.key),
                        plan_board_keys::board_id.eq(board.id.0),
                    ))
                    .execute(conn)
                    .await
                    .map_err(db_error)?;
                put_state_rows(conn, org, states).await?;
                Ok::<_, Tx>(row)
            })
            .await
            .map_err(|e| unknown_organization(e.into()))?;
        row.try_into()
    }

    async fn get_board(&self, org: OrgId, id: BoardId) -> Result<Board, RepoError> {
        let mut conn = self.db.conn().await?;
        load_board(&mut conn, org, id).await
    }

    async fn board_by_key(&self, org: OrgId, key: &str) -> Result<Board, RepoError> {
        let mut conn = self.db.conn().await?;
        plan_boards::table
            .inner_join(plan_board_keys::table.on(plan_board_keys::board_id.eq(plan_boards::id)))
            .filter(plan_board_keys::organization_id.eq(org.0))
            .filter(plan_board_keys::key.eq(key))
            .select(BoardRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?
            .try_into()
    }

    async fn list_boards(
        &self,
        org: OrgId,
        filter: &BoardFilter,
        page: PageRequest,
    ) -> Result<Page<Board>, RepoError> {
        let mut conn = self.db.conn().await?;
        let teams = team_uuids(&filter.viewer);
        let filtered = || {
            let mut q = plan_boards::table
                .filter(plan_boards::organization_id.eq(org.0))
                .into_boxed();
            if !filter.include_archived {
                q = q.filter(plan_boards::is_archived.eq(false));
            }
            if let Some(p) = filter.project {
                q = q.filter(plan_boards::project_id.eq(p.0));
            }
            if !filter.viewer.all {
                let granted = plan_board_members::table
                    .filter(plan_board_members::board_id.eq(plan_boards::id))
                    .filter(
                        plan_board_members::user_id
                            .eq(filter.viewer.user.map(|u| u.0))
                            .or(plan_board_members::team_id.eq_any(teams.clone())),
                    );
                q = q.filter(
                    plan_boards::visibility
                        .eq("org")
                        .or(diesel::dsl::exists(granted)),
                );
            }
            if let Some(search) = filter.search.as_deref() {
                let pattern = like_pattern(search);
                q = q.filter(
                    plan_boards::name
                        .ilike(pattern.clone())
                        .or(plan_boards::key.ilike(pattern)),
                );
            }
            if let Some(d) = filter.start_date {
                q = q.filter(plan_boards::created_at.ge(d.midnight().assume_utc()));
            }
            if let Some(next) = filter.end_date.and_then(|d| d.next_day()) {
                q = q.filter(plan_boards::created_at.lt(next.midnight().assume_utc()));
            }
            q
        };
        load_page::<BoardRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((plan_boards::rank, plan_boards::id))
                .select(BoardRow::as_select())
        })
        .await
    }

    async fn count_live_boards(&self, org: OrgId) -> Result<u64, RepoError> {
        BOARDS.count_live(&self.db, org).await
    }

    async fn update_board(
        &self,
        org: OrgId,
        id: BoardId,
        patch: &BoardPatch,
    ) -> Result<Board, RepoError> {
        #[derive(AsChangeset)]
        #[diesel(table_name = plan_boards)]
        struct Changes<'a> {
            name: Option<&'a str>,
            key: Option<&'a str>,
            visibility: Option<&'static str>,
            estimate_scale: Option<&'static str>,
            archive_after_days: Option<Option<i32>>,
            project_id: Option<Uuid>,
            is_archived: Option<bool>,
            archived_at: Option<Option<OffsetDateTime>>,
            updated_at: OffsetDateTime,
        }
        let now = patch.updated_at.unwrap_or_else(OffsetDateTime::now_utc);
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, Tx, _>(async |conn| {
            let current = plan_boards::table
                .filter(plan_boards::id.eq(id.0))
                .filter(plan_boards::organization_id.eq(org.0))
                .select(BoardRow::as_select())
                .for_update()
                .first(conn)
                .await
                .map_err(db_error)?;
            if let Some(p) = patch.project {
                project_exists(conn, org, p).await?;
            }
            if let Some(key) = patch.key.as_ref().filter(|k| **k != current.key) {
                let owner: Option<Uuid> = plan_board_keys::table
                    .filter(plan_board_keys::organization_id.eq(org.0))
                    .filter(plan_board_keys::key.eq(key))
                    .select(plan_board_keys::board_id)
                    .first(conn)
                    .await
                    .optional()
                    .map_err(db_error)?;
                match owner {
                    // One of its own retired keys: it becomes current again.
                    Some(b) if b == id.0 => {}
                    Some(_) => {
                        return Err(RepoError::Conflict {
                            constraint: "plan_board_keys_pkey".into(),
                        }
                        .into());
                    }
                    None => {
                        diesel::insert_into(plan_board_keys::table)
                            .values((
                                plan_board_keys::organization_id.eq(org.0),
                                plan_board_keys::key.eq(key),
                                plan_board_keys::board_id.eq(id.0),
                            ))
                            .execute(conn)
                            .await
                            .map_err(db_error)?;
                    }
                }
                diesel::update(
                    plan_board_keys::table
                        .filter(plan_board_keys::board_id.eq(id.0))
                        .filter(plan_board_keys::key.ne(key))
                        .filter(plan_board_keys::retired_at.is_null()),
                )
                .set(plan_board_keys::retired_at.eq(Some(now)))
                .execute(conn)
                .await
                .map_err(db_error)?;
                diesel::update(
                    plan_board_keys::table
                        .filter(plan_board_keys::board_id.eq(id.0))
                        .filter(plan_board_keys::key.eq(key)),
                )
                .set(plan_board_keys::retired_at.eq(None::<OffsetDateTime>))
                .execute(conn)
                .await
                .map_err(db_error)?;
            }
            diesel::update(plan_boards::table.filter(plan_boards::id.eq(id.0)))
                .set(Changes {
                    name: patch.name.as_deref(),
                    key: patch.key.as_deref(),
                    visibility: patch.visibility.map(|v| v.as_str()),
                    estimate_scale: patch.estimate_scale.map(|v| v.as_str()),
                    archive_after_days: patch.archive_after_days,
                    project_id: patch.project.map(|p| p.0),
                    is_archived: patch.is_archived,
                    archived_at: patch.is_archived.map(|a| a.then_some(now)),
                    updated_at: now,
                })
                .execute(conn)
                .await
                .map_err(db_error)?;
            Ok(load_board(conn, org, id).await?)
        })
        .await
        .map_err(RepoError::from)
    }

    async fn count_board_tasks(&self, org: OrgId, id: BoardId) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        // No row until the board's first task.
        let kept: Option<i64> = plan_board_task_counts::table
            .filter(plan_board_task_counts::board_id.eq(id.0))
            .filter(plan_board_task_counts::organization_id.eq(org.0))
            .select(plan_board_task_counts::live_tasks)
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        count_from(kept.unwrap_or(0))
    }

    async fn archive_board(
        &self,
        org: OrgId,
        id: BoardId,
        by: &Executor,
        at: OffsetDateTime,
    ) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, Tx, _>(async |conn| {
            let n = diesel::update(
                plan_boards::table
                    .filter(plan_boards::id.eq(id.0))
                    .filter(plan_boards::organization_id.eq(org.0)),
            )
            .set((
                plan_boards::is_archived.eq(true),
                plan_boards::archived_at.eq(Some(at)),
                plan_boards::updated_at.eq(at),
            ))
            .execute(conn)
            .await
            .map_err(db_error)?;
            if n == 0 {
                return Err(RepoError::NotFound.into());
            }
            let archived: Vec<(Uuid, Uuid)> = diesel::update(
                plan_tasks::table
                    .filter(plan_tasks::board_id.eq(id.0))
                    .filter(plan_tasks::is_archived.eq(false)),
            )
            .set((
                plan_tasks::is_archived.eq(true),
                plan_tasks::archived_at.eq(Some(at)),
                plan_tasks::archived_with_board.eq(true),
                plan_tasks::version.eq(plan_tasks::version + 1),
                plan_tasks::updated_at.eq(clock_timestamp()),
            ))
            .returning((plan_tasks::id, plan_tasks::board_id))
            .get_results(conn)
            .await
            .map_err(db_error)?;
            task_events(
                conn,
                org,
                &archived,
                "archived",
                serde_json::json!({"with_board": true}),
                by,
                at,
            )
            .await?;
            Ok(archived.len() as u64)
        })
        .await
        .map_err(RepoError::from)
    }

    async fn restore_board(&self, org: OrgId, id: BoardId) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::update(
            plan_boards::table
                .filter(plan_boards::id.eq(id.0))
                .filter(plan_boards::organization_id.eq(org.0)),
        )
        .set((
            plan_boards::is_archived.eq(false),
            plan_boards::archived_at.eq(None::<OffsetDateTime>),
            plan_boards::updated_at.eq(OffsetDateTime::now_utc()),
        ))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if n == 0 {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    async fn move_board(
        &self,
        org: OrgId,
        id: BoardId,
        anchor: Anchor<BoardId>,
        project: Option<ProjectId>,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, Tx, _>(async |conn| {
            if let Some(p) = project {
                project_exists(conn, org, p).await?;
            }
            BOARDS.reorder(conn, org, id, anchor, |b| b.0).await?;
            if let Some(p) = project {
                diesel::update(plan_boards::table.filter(plan_boards::id.eq(id.0)))
                    .set((
                        plan_boards::project_id.eq(p.0),
                        plan_boards::updated_at.eq(OffsetDateTime::now_utc()),
                    ))
                    .execute(conn)
                    .await
                    .map_err(db_error)?;
            }
            Ok(())
        })
        .await
        .map_err(RepoError::from)
    }

    async fn board_grants(&self, org: OrgId, id: BoardId) -> Result<Vec<Grant>, RepoError> {
        BOARDS.grants(&self.db, org, id.0).await
    }

    async fn add_board_grant(
        &self,
        org: OrgId,
        id: BoardId,
        grantee: Grantee,
        grant: GrantId,
    ) -> Result<(Grant, bool), RepoError> {
        BOARDS.add_grant(&self.db, org, id.0, grantee, grant).await
    }

    async fn remove_board_grant(
        &self,
        org: OrgId,
        id: BoardId,
        grant: GrantId,
    ) -> Result<(), RepoError> {
        BOARDS.remove_grant(&self.db, org, id.0, grant).await
    }

    async fn granted_teams(&self, org: OrgId) -> Result<Vec<TeamId>, RepoError> {
        let mut conn = self.db.conn().await?;
        let mut teams: Vec<Option<Uuid>> = plan_board_members::table
            .filter(plan_board_members::organization_id.eq(org.0))
            .filter(plan_board_members::team_id.is_not_null())
            .select(plan_board_members::team_id)
            .distinct()
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let projects: Vec<Option<Uuid>> = plan_project_members::table
            .filter(plan_project_members::organization_id.eq(org.0))
            .filter(plan_project_members::team_id.is_not_null())
            .select(plan_project_members::team_id)
            .distinct()
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        teams.extend(projects);
        let mut teams: Vec<TeamId> = teams.into_iter().flatten().map(TeamId).collect();
        teams.sort_by_key(|t| t.0);
        teams.dedup();
        Ok(teams)
    }

    async fn record_visit(
        &self,
        org: OrgId,
        user: UserId,
        board: BoardId,
        at: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        load_board(&mut conn, org, board).await?;
        diesel::insert_into(plan_board_visits::table)
            .values((
                plan_board_visits::user_id.eq(user.0),
                plan_board_visits::board_id.eq(board.0),
                plan_board_visits::organization_id.eq(org.0),
                plan_board_visits::visited_at.eq(at),
            ))
            .on_conflict((plan_board_visits::user_id, plan_board_visits::board_id))
            .do_update()
            .set(plan_board_visits::visited_at.eq(at))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn visits(
        &self,
        org: OrgId,
        user: UserId,
        limit: u64,
    ) -> Result<Vec<(BoardId, OffsetDateTime)>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<(Uuid, OffsetDateTime)> = plan_board_visits::table
            .filter(plan_board_visits::organization_id.eq(org.0))
            .filter(plan_board_visits::user_id.eq(user.0))
            .order_by((
                plan_board_visits::visited_at.desc(),
                plan_board_visits::board_id.desc(),
            ))
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .select((plan_board_visits::board_id, plan_board_visits::visited_at))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(|(b, at)| (BoardId(b), at)).collect())
    }

    async fn board_states(&self, org: OrgId, board: BoardId) -> Result<Vec<State>, RepoError> {
        let mut conn = self.db.conn().await?;
        // The columns are the organization's (the filter): one read; a board without columns
        // is read to tell it from one of another organization or none (404).
        let rows: Vec<StateRow> = plan_states::table
            .filter(plan_states::board_id.eq(board.0))
            .filter(plan_states::organization_id.eq(org.0))
            .order_by((
                plan_states::position,
                plan_states::created_at,
                plan_states::id,
            ))
            .select(StateRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        if rows.is_empty() {
            load_board(&mut conn, org, board).await?;
        }
        rows.into_iter().map(State::try_from).collect()
    }

    async fn put_states(&self, org: OrgId, states: &[State]) -> Result<(), RepoError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, Tx, _>(async |conn| {
            for b in states.iter().map(|s| s.board_id) {
                load_board(conn, org, b).await?;
            }
            Ok(put_state_rows(conn, org, states).await?)
        })
        .await
        .map_err(RepoError::from)
    }

    async fn count_state_tasks(&self, org: OrgId, state: StateId) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let board = plan_states::table
            .filter(plan_states::id.eq(state.0))
            .filter(plan_states::organization_id.eq(org.0))
            .select(plan_states::board_id)
            .single_value();
        let n: Option<i64> = plan_column_task_counts::table
            .filter(plan_column_task_counts::board_id.nullable().eq(board))
            .filter(plan_column_task_counts::state_id.eq(state.0))
            .select(plan_column_task_counts::live_tasks)
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        count_from(n.unwrap_or(0))
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
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, Tx, _>(async |conn| {
            let target = match &to {
                Some(MigrateTo { state: to, .. }) => Some(
                    plan_states::table
                        .filter(plan_states::id.eq(to.0))
                        .filter(plan_states::organization_id.eq(org.0))
                        .select((plan_states::board_id, plan_states::category))
                        .first::<(Uuid, String)>(conn)
                        .await
                        .map_err(db_error)?,
                ),
                None => None,
            };
            // A create checks a column's room under the board row's lock (`plan_column_place`),
            // reading committed counts: a move into the column takes that lock too, first, as a
            // create does, so a create never passes its check against a count this move has
            // raised but not yet committed.
            if let Some((board, _)) = &target {
                plan_boards::table
                    .filter(plan_boards::id.eq(board))
                    .select(plan_boards::id)
                    .for_update()
                    .first::<Uuid>(conn)
                    .await
                    .map_err(db_error)?;
            }
            put_state_rows(conn, org, states).await?;
            let (Some(MigrateTo { state: to, limit }), Some((board, to_category))) = (to, target)
            else {
                return Ok(0);
            };
            let closes = StateCategory::parse(&to_category).is_some_and(StateCategory::is_closed);
            let completed_at = closes.then_some(at);
            let moved: Vec<(Uuid, Uuid)> = diesel::update(
                plan_tasks::table
                    .filter(plan_tasks::organization_id.eq(org.0))
                    .filter(plan_tasks::state_id.eq(from.0))
                    .filter(plan_tasks::is_archived.eq(false)),
            )
            .set((
                plan_tasks::state_id.eq(to.0),
                plan_tasks::completed_at.eq(completed_at),
                plan_tasks::version.eq(plan_tasks::version + 1),
                plan_tasks::updated_at.eq(clock_timestamp()),
            ))
            .returning((plan_tasks::id, plan_tasks::board_id))
            .get_results(conn)
            .await
            .map_err(db_error)?;
            // The statement's trigger added them to the target's count and holds its row lock
            // until the transaction ends: the count read now is every committed write into the
            // column and this one, and none can join it before this one is done.
            if !moved.is_empty() {
                let there: i64 = plan_column_task_counts::table
                    .filter(plan_column_task_counts::board_id.eq(board))
                    .filter(plan_column_task_counts::state_id.eq(to.0))
                    .select(plan_column_task_counts::live_tasks)
                    .first(conn)
                    .await
                    .map_err(db_error)?;
                if count_from(there)? > limit {
                    return Err(RepoError::Conflict {
                        constraint: COLUMN_FULL.into(),
                    }
                    .into());
                }
            }
            task_events(
                conn,
                org,
                &moved,
                "moved",
                serde_json::json!({"from_state": from.0, "to_state": to.0}),
                by,
                at,
            )
            .await?;
            Ok(moved.len() as u64)
        })
        .await
        .map_err(RepoError::from)
    }
}
