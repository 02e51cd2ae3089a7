//! In memory: the boards part of [`super::PlanState`] and [`BoardRepository`].

use async_trait::async_trait;
use teamcomm_kernel::TeamId;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use time::OffsetDateTime;

use super::projects::{Grants, page_of, reorder};
use super::{InMemoryPlan, PlanState};
use crate::access::{Anchor, Grant, Grantee};
use crate::actor::Executor;
use crate::boards::{BoardFilter, BoardPatch};
use crate::ports::{BoardRepository, COLUMN_FULL, MigrateTo, TaskEvent};
use crate::{Board, BoardId, GrantId, ProjectId, State, StateCategory, StateId};

/// A key a board has or had.
#[derive(Debug, Clone)]
pub struct KeyRow {
    pub org: OrgId,
    pub key: String,
    pub board: BoardId,
    pub retired_at: Option<OffsetDateTime>,
}

#[derive(Debug, Default)]
pub struct BoardsMem {
    pub boards: Vec<Board>,
    pub keys: Vec<KeyRow>,
    pub grants: Grants<BoardId>,
    pub visits: Vec<(OrgId, UserId, BoardId, OffsetDateTime)>,
    pub states: Vec<State>,
}

impl BoardsMem {
    fn get(&self, org: OrgId, id: BoardId) -> Result<&Board, RepoError> {
        self.boards
            .iter()
            .find(|b| b.id == id && b.org_id == org)
            .ok_or(RepoError::NotFound)
    }

    fn get_mut(&mut self, org: OrgId, id: BoardId) -> Result<&mut Board, RepoError> {
        self.boards
            .iter_mut()
            .find(|b| b.id == id && b.org_id == org)
            .ok_or(RepoError::NotFound)
    }

    fn key_owner(&self, org: OrgId, key: &str) -> Option<BoardId> {
        self.keys
            .iter()
            .find(|k| k.org == org && k.key == key)
            .map(|k| k.board)
    }
}

fn key_conflict() -> RepoError {
    RepoError::Conflict {
        constraint: "plan_board_keys_pkey".into(),
    }
}

/// Done and all (but canceled) live tasks of these boards.
pub(super) fn task_tally(s: &PlanState, boards: &[BoardId]) -> (u64, u64) {
    let category = |t: &crate::Task| {
        s.boards
            .states
            .iter()
            .find(|st| st.id == t.state_id)
            .map(|st| st.category)
    };
    let live = || {
        s.tasks
            .tasks
            .iter()
            .filter(|t| boards.contains(&t.board_id) && !t.is_archived)
    };
    let done = live()
        .filter(|t| category(t) == Some(StateCategory::Done))
        .count();
    let total = live()
        .filter(|t| category(t) != Some(StateCategory::Canceled))
        .count();
    (done as u64, total as u64)
}

/// A task write's stamp: strictly increasing, as `clock_timestamp()` is.
fn stamp(s: &mut PlanState) -> OffsetDateTime {
    let now = match s.tasks.last_stamp {
        Some(last) => OffsetDateTime::now_utc().max(last + time::Duration::microseconds(1)),
        None => OffsetDateTime::now_utc(),
    };
    s.tasks.last_stamp = Some(now);
    now
}

/// One event of a cascade.
fn cascade_event(
    org: OrgId,
    task: &crate::Task,
    kind: &str,
    data: serde_json::Value,
    by: &Executor,
    at: OffsetDateTime,
) -> (OrgId, TaskEvent) {
    (
        org,
        TaskEvent {
            id: uuid::Uuid::now_v7(),
            task_id: task.id,
            board_id: task.board_id,
            kind: kind.to_owned(),
            actor: by.user,
            agent_name: by.agent.clone(),
            data,
            created_at: at,
        },
    )
}

#[async_trait]
impl BoardRepository for InMemoryPlan {
    async fn create_board(&self, board: &Board, states: &[State]) -> Result<Board, RepoError> {
        let mut s = self.lock();
        s.projects
            .projects
            .iter()
            .find(|p| p.id == board.project_id && p.org_id == board.org_id)
            .ok_or(RepoError::NotFound)?;
        let m = &mut s.boards;
        if m.key_owner(board.org_id, &board.key).is_some() {
            return Err(key_conflict());
        }
        let rank = m
            .boards
            .iter()
            .filter(|b| b.org_id == board.org_id)
            .map(|b| b.rank)
            .max()
            .unwrap_or(0)
            + 1024;
        let board = Board {
            rank,
            ..board.clone()
        };
        m.keys.push(KeyRow {
            org: board.org_id,
            key: board.key.clone(),
            board: board.id,
            retired_at: None,
        });
        m.boards.push(board.clone());
        m.states.extend(states.iter().cloned());
        Ok(board)
    }

    async fn get_board(&self, org: OrgId, id: BoardId) -> Result<Board, RepoError> {
        self.lock().boards.get(org, id).cloned()
    }

    async fn board_by_key(&self, org: OrgId, key: &str) -> Result<Board, RepoError> {
        let s = self.lock();
        let id = s.boards.key_owner(org, key).ok_or(RepoError::NotFound)?;
        s.boards.get(org, id).cloned()
    }

    async fn list_boards(
        &self,
        org: OrgId,
        filter: &BoardFilter,
        page: PageRequest,
    ) -> Result<Page<Board>, RepoError> {
        let s = self.lock();
        let m = &s.boards;
        let mut found: Vec<Board> = m
            .boards
            .iter()
            .filter(|b| b.org_id == org && (filter.include_archived || !b.is_archived))
            .filter(|b| filter.project.is_none_or(|p| b.project_id == p))
            .filter(|b| filter.viewer.sees(b.visibility, &m.grants.of(b.id)))
            .filter(|b| {
                filter.search.as_ref().is_none_or(|q| {
                    let q = q.to_lowercase();
                    b.name.to_lowercase().contains(&q) || b.key.to_lowercase().contains(&q)
                })
            })
            .filter(|b| filter.start_date.is_none_or(|d| b.created_at.date() >= d))
            .filter(|b| filter.end_date.is_none_or(|d| b.created_at.date() <= d))
            .cloned()
            .collect();
        found.sort_by_key(|b| (b.rank, b.id));
        Ok(page_of(found, page))
    }

    async fn count_live_boards(&self, org: OrgId) -> Result<u64, RepoError> {
        Ok(self
            .lock()
            .boards
            .boards
            .iter()
            .filter(|b| b.org_id == org && !b.is_archived)
            .count() as u64)
    }

    async fn update_board(
        &self,
        org: OrgId,
        id: BoardId,
        patch: &BoardPatch,
    ) -> Result<Board, RepoError> {
        let mut s = self.lock();
        if let Some(project) = patch.project {
            s.projects
                .projects
                .iter()
                .find(|p| p.id == project && p.org_id == org)
                .ok_or(RepoError::NotFound)?;
        }
        let m = &mut s.boards;
        let current = m.get(org, id)?.clone();
        let now = patch.updated_at.unwrap_or(current.updated_at);
        if let Some(key) = patch.key.as_ref().filter(|k| **k != current.key) {
            match m.key_owner(org, key) {
                Some(owner) if owner != id => return Err(key_conflict()),
                Some(_) => {}
                None => m.keys.push(KeyRow {
                    org,
                    key: key.clone(),
                    board: id,
                    retired_at: None,
                }),
            }
            for k in m.keys.iter_mut().filter(|k| k.org == org && k.board == id) {
                k.retired_at = if k.key == *key {
                    None
                } else {
                    k.retired_at.or(Some(now))
                };
            }
        }
        let b = m.get_mut(org, id)?;
        if let Some(v) = &patch.name {
            b.name = v.clone();
        }
        if let Some(v) = &patch.key {
            b.key = v.clone();
        }
        if let Some(v) = patch.visibility {
            b.visibility = v;
        }
        if let Some(v) = patch.estimate_scale {
            b.estimate_scale = v;
        }
        if let Some(v) = patch.archive_after_days {
            b.archive_after_days = v;
        }
        if let Some(v) = patch.project {
            b.project_id = v;
        }
        if let Some(v) = patch.is_archived {
            b.is_archived = v;
            b.archived_at = v.then_some(now);
        }
        b.updated_at = now;
        Ok(b.clone())
    }

    async fn count_board_tasks(&self, org: OrgId, id: BoardId) -> Result<u64, RepoError> {
        let s = self.lock();
        s.boards.get(org, id)?;
        Ok(s.tasks
            .tasks
            .iter()
            .filter(|t| t.board_id == id && !t.is_archived)
            .count() as u64)
    }

    async fn archive_board(
        &self,
        org: OrgId,
        id: BoardId,
        by: &Executor,
        at: OffsetDateTime,
    ) -> Result<u64, RepoError> {
        let mut s = self.lock();
        let b = s.boards.get_mut(org, id)?;
        b.is_archived = true;
        b.archived_at = Some(at);
        b.updated_at = at;
        let live: Vec<usize> = (0..s.tasks.tasks.len())
            .filter(|i| s.tasks.tasks[*i].board_id == id && !s.tasks.tasks[*i].is_archived)
            .collect();
        for i in &live {
            let now = stamp(&mut s);
            let t = &mut s.tasks.tasks[*i];
            t.is_archived = true;
            t.archived_at = Some(at);
            t.archived_with_board = true;
            t.version += 1;
            t.updated_at = now;
            let event = cascade_event(
                org,
                t,
                "archived",
                serde_json::json!({"with_board": true}),
                by,
                at,
            );
            s.tasks.events.push(event);
        }
        Ok(live.len() as u64)
    }

    async fn restore_board(&self, org: OrgId, id: BoardId) -> Result<(), RepoError> {
        let mut s = self.lock();
        let b = s.boards.get_mut(org, id)?;
        b.is_archived = false;
        b.archived_at = None;
        Ok(())
    }

    async fn move_board(
        &self,
        org: OrgId,
        id: BoardId,
        anchor: Anchor<BoardId>,
        project: Option<ProjectId>,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        if let Some(project) = project {
            s.projects
                .projects
                .iter()
                .find(|p| p.id == project && p.org_id == org)
                .ok_or(RepoError::NotFound)?;
        }
        let rows = s.boards.boards.iter_mut().filter(|b| b.org_id == org);
        reorder(rows.map(|b| (b.id, &mut b.rank)), id, anchor)?;
        if let Some(p) = project {
            s.boards.get_mut(org, id)?.project_id = p;
        }
        Ok(())
    }

    async fn board_grants(&self, org: OrgId, id: BoardId) -> Result<Vec<Grant>, RepoError> {
        let s = self.lock();
        s.boards.get(org, id)?;
        Ok(s.boards.grants.of(id))
    }

    async fn add_board_grant(
        &self,
        org: OrgId,
        id: BoardId,
        grantee: Grantee,
        grant: GrantId,
    ) -> Result<(Grant, bool), RepoError> {
        let mut s = self.lock();
        s.boards.get(org, id)?;
        Ok(s.boards.grants.add(id, grantee, grant))
    }

    async fn remove_board_grant(
        &self,
        org: OrgId,
        id: BoardId,
        grant: GrantId,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        s.boards.get(org, id)?;
        s.boards.grants.remove(id, grant)
    }

    async fn granted_teams(&self, org: OrgId) -> Result<Vec<TeamId>, RepoError> {
        let s = self.lock();
        let boards = s.boards.grants.grantees(|b| s.boards.get(org, b).is_ok());
        let projects = s.projects.grants.grantees(|p| {
            s.projects
                .projects
                .iter()
                .any(|x| x.id == p && x.org_id == org)
        });
        let mut teams: Vec<TeamId> = boards
            .chain(projects)
            .filter_map(|g| match g {
                Grantee::Team(t) => Some(t),
                Grantee::User(_) => None,
            })
            .collect();
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
        let mut s = self.lock();
        s.boards.get(org, board)?;
        s.boards
            .visits
            .retain(|(_, u, b, _)| !(*u == user && *b == board));
        s.boards.visits.push((org, user, board, at));
        Ok(())
    }

    async fn visits(
        &self,
        org: OrgId,
        user: UserId,
        limit: u64,
    ) -> Result<Vec<(BoardId, OffsetDateTime)>, RepoError> {
        let s = self.lock();
        let mut v: Vec<_> = s
            .boards
            .visits
            .iter()
            .filter(|(o, u, _, _)| *o == org && *u == user)
            .map(|(_, _, b, at)| (*b, *at))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
        v.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(v)
    }

    async fn board_states(&self, org: OrgId, board: BoardId) -> Result<Vec<State>, RepoError> {
        let s = self.lock();
        s.boards.get(org, board)?;
        let mut v: Vec<State> = s
            .boards
            .states
            .iter()
            .filter(|st| st.board_id == board)
            .cloned()
            .collect();
        v.sort_by_key(|st| (st.position, st.created_at, st.id));
        Ok(v)
    }

    async fn put_states(&self, org: OrgId, states: &[State]) -> Result<(), RepoError> {
        let mut s = self.lock();
        for st in states {
            s.boards.get(org, st.board_id)?;
        }
        for st in states {
            match s.boards.states.iter_mut().find(|x| x.id == st.id) {
                Some(x) => *x = st.clone(),
                None => s.boards.states.push(st.clone()),
            }
        }
        Ok(())
    }

    async fn count_state_tasks(&self, org: OrgId, state: StateId) -> Result<u64, RepoError> {
        Ok(self
            .lock()
            .tasks
            .tasks
            .iter()
            .filter(|t| t.org_id == org && t.state_id == state && !t.is_archived)
            .count() as u64)
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
        let moving: Vec<usize> = {
            let s = self.lock();
            let tasks = &s.tasks.tasks;
            let live_in = |state: StateId| {
                (0..tasks.len()).filter(move |i| {
                    let t = &tasks[*i];
                    t.org_id == org && t.state_id == state && !t.is_archived
                })
            };
            let moving: Vec<usize> = live_in(from).collect();
            if let Some(to) = to
                && !moving.is_empty()
                && (live_in(to.state).count() + moving.len()) as u64 > to.limit
            {
                return Err(RepoError::Conflict {
                    constraint: COLUMN_FULL.into(),
                });
            }
            moving
        };
        self.put_states(org, states).await?;
        let Some(MigrateTo { state: to, .. }) = to else {
            return Ok(0);
        };
        let mut s = self.lock();
        let closes = s
            .boards
            .states
            .iter()
            .find(|st| st.id == to)
            .ok_or(RepoError::NotFound)?
            .category
            .is_closed();
        for i in &moving {
            let now = stamp(&mut s);
            let t = &mut s.tasks.tasks[*i];
            t.state_id = to;
            t.completed_at = closes.then_some(at);
            t.version += 1;
            t.updated_at = now;
            let data = serde_json::json!({"from_state": from.0, "to_state": to.0});
            let event = cascade_event(org, t, "moved", data, by, at);
            s.tasks.events.push(event);
        }
        Ok(moving.len() as u64)
    }
}
