//! Boards: each belongs to a project and has a key (`ENG`) its tasks are numbered under. Every
//! key a board ever had stays reserved in the organization and keeps resolving. The free plan
//! has three live boards.

use teamcomm_kernel::{Error, ErrorCode, Page, PageRequest, RepoError};
use teamcomm_org::{PlanTier, Role, UserFilter};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::access::{
    Anchor, DryRunOr, Grant, GrantView, Grantee, Viewer, anchor_invalid, last_grant,
};
use crate::states::default_columns;
use crate::{
    Board, BoardId, BoardKey, BoardRef, EstimateScale, GrantId, Plan, PlanActor, Preview,
    ProjectId, Visibility,
};

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
            return Err(boards_limit());
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

/// A board as its doors show it.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardView {
    pub board: Board,
    pub project_name: String,
}

/// What moving a board to another project would touch.
#[derive(Debug, Clone, PartialEq)]
pub struct MovePreview {
    pub from: ProjectId,
    pub to: ProjectId,
    pub tasks: u64,
    /// Milestones arrive with the next Plan issue: always 0 for now.
    pub tasks_with_foreign_milestone: u64,
    /// Goals arrive with the next Plan issue: always 0 for now.
    pub goals_affected: u64,
}

/// A board a person visited.
#[derive(Debug, Clone, PartialEq)]
pub struct Recent {
    pub board: Board,
    pub visited_at: OffsetDateTime,
}

/// Someone who can be mentioned on a board (sees it).
#[derive(Debug, Clone, PartialEq)]
pub struct Mentionable {
    pub id: teamcomm_kernel::UserId,
    pub name: String,
}

/// What the Plan area allows this organization (`GET entitlements/`).
#[derive(Debug, Clone, PartialEq)]
pub struct Entitlements {
    pub enabled: bool,
    pub boards_used: u64,
    /// `None`: no limit.
    pub boards_limit: Option<u64>,
    pub labels_enabled: bool,
    pub reason: Option<String>,
}

pub const MAX_ARCHIVE_AFTER_DAYS: i32 = 3650;
/// How many recent boards `me/recents/` answers.
pub const RECENTS: u64 = 20;

fn boards_limit() -> Error {
    Error::new(
        ErrorCode::TaskBoardsLimitReached,
        "The free plan has three boards. Upgrade to add more.",
    )
    .with_extra("limit", FREE_BOARDS)
}

impl Plan {
    /// What the Plan area allows the caller's organization; answers whatever the beta says.
    pub async fn entitlements(&self, actor: &PlanActor) -> Result<Entitlements, Error> {
        let enabled = actor.org.plan_beta;
        let boards_used = self.ports.boards.count_live_boards(actor.org_id()).await?;
        Ok(Entitlements {
            enabled,
            boards_used,
            boards_limit: (actor.org.plan == PlanTier::Free).then_some(FREE_BOARDS),
            labels_enabled: enabled,
            reason: (!enabled).then(|| "plan_beta_not_enabled".to_owned()),
        })
    }

    /// Adds the project names.
    pub async fn board_views(
        &self,
        actor: &PlanActor,
        boards: Vec<Board>,
    ) -> Result<Vec<BoardView>, Error> {
        let mut views = Vec::with_capacity(boards.len());
        for board in boards {
            let project_name = match self
                .ports
                .projects
                .get_project(actor.org_id(), board.project_id)
                .await
            {
                Ok(p) => p.name,
                Err(RepoError::NotFound) => String::new(),
                Err(e) => return Err(e.into()),
            };
            views.push(BoardView {
                board,
                project_name,
            });
        }
        Ok(views)
    }

    /// The boards the caller sees, in the organization's order.
    pub async fn list_boards(
        &self,
        actor: &PlanActor,
        mut filter: BoardFilter,
        page: PageRequest,
    ) -> Result<Page<BoardView>, Error> {
        crate::projects::check_span(filter.start_date, filter.end_date)?;
        filter.viewer = self.viewer(actor).await?;
        let found = self
            .ports
            .boards
            .list_boards(actor.org_id(), &filter, page)
            .await?;
        Ok(Page {
            count: found.count,
            results: self.board_views(actor, found.results).await?,
        })
    }

    pub async fn board_detail(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
    ) -> Result<BoardView, Error> {
        let board = self.visible_board(actor, board).await?;
        let mut views = self.board_views(actor, vec![board]).await?;
        views.pop().ok_or_else(Error::not_found)
    }

    /// Changes a board: a new key retires the old one (still resolving, still reserved,
    /// `duplicate_board_key`), a project moves it.
    pub async fn update_board(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        mut patch: BoardPatch,
    ) -> Result<Board, Error> {
        let board = self.visible_board(actor, board).await?;
        patch.name = patch.name.as_deref().map(check_board_name).transpose()?;
        patch.key = patch
            .key
            .as_deref()
            .map(|k| BoardKey::parse(k).map(|k| k.as_str().to_owned()))
            .transpose()?;
        if let Some(Some(days)) = patch.archive_after_days {
            if !(1..=MAX_ARCHIVE_AFTER_DAYS).contains(&days) {
                return Err(Error::invalid_field(
                    "archive_after_days",
                    "Automatic archiving is after 1 to 3650 days.",
                ));
            }
        }
        if let Some(project) = patch.project {
            self.target_project(actor, project, "project").await?;
        }
        patch.is_archived = None;
        patch.updated_at = Some(self.ports.clock.now());
        if patch.visibility == Some(Visibility::Members) {
            self.keep_a_board_member(actor, board.id).await?;
        }
        self.ports
            .boards
            .update_board(actor.org_id(), board.id, &patch)
            .await
            .map_err(key_conflict)
    }

    /// A live project the caller sees, named in a body field.
    async fn target_project(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        field: &str,
    ) -> Result<crate::Project, Error> {
        let project = self
            .visible_project(actor, id)
            .await
            .map_err(|e| project_field(e, field))?;
        if project.is_archived {
            return Err(Error::invalid_field(field, "The project is archived."));
        }
        Ok(project)
    }

    async fn keep_a_board_member(&self, actor: &PlanActor, id: BoardId) -> Result<(), Error> {
        let org = actor.org_id();
        if let Some(me) = actor.person_id() {
            if self.ports.boards.board_grants(org, id).await?.is_empty() {
                self.ports
                    .boards
                    .add_board_grant(org, id, Grantee::User(me), GrantId::new())
                    .await?;
            }
        }
        Ok(())
    }

    /// What moving the board to `project` would touch.
    pub async fn board_move_preview(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        project: ProjectId,
    ) -> Result<MovePreview, Error> {
        let board = self.visible_board(actor, board).await?;
        self.target_project(actor, project, "project").await?;
        let tasks = self
            .ports
            .boards
            .count_board_tasks(actor.org_id(), board.id)
            .await?;
        Ok(MovePreview {
            from: board.project_id,
            to: project,
            tasks,
            tasks_with_foreign_milestone: 0,
            goals_affected: 0,
        })
    }

    /// Archives the board and its live tasks (which stay archived when the board is
    /// restored); a dry run answers what it would do.
    pub async fn archive_board(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        dry_run: bool,
    ) -> Result<DryRunOr<Board>, Error> {
        let board = self.visible_board(actor, board).await?;
        let org = actor.org_id();
        if dry_run {
            let tasks = if board.is_archived {
                0
            } else {
                self.ports.boards.count_board_tasks(org, board.id).await?
            };
            let consequence = if board.is_archived {
                format!("Board {} is already archived.", board.key)
            } else {
                format!(
                    "Board {} and its {tasks} live task(s) would be archived; restoring the board leaves the tasks archived.",
                    board.key
                )
            };
            return Ok(DryRunOr::Preview(
                Preview::new("board.archive", consequence)
                    .affects("boards", u64::from(!board.is_archived))
                    .affects("tasks", tasks)
                    .restorable_at(format!("/v1/plan/boards/{}/restore/", board.id)),
            ));
        }
        if !board.is_archived {
            let now = self.ports.clock.now();
            self.ports
                .boards
                .archive_board(org, board.id, &actor.executor(), now)
                .await?;
        }
        Ok(DryRunOr::Done(
            self.ports.boards.get_board(org, board.id).await?,
        ))
    }

    /// Makes an archived board live again (free plan: within three live boards).
    pub async fn restore_board(&self, actor: &PlanActor, board: &BoardRef) -> Result<Board, Error> {
        let board = self.visible_board(actor, board).await?;
        let org = actor.org_id();
        if !board.is_archived {
            return Ok(board);
        }
        if actor.org.plan == PlanTier::Free
            && self.ports.boards.count_live_boards(org).await? >= FREE_BOARDS
        {
            return Err(boards_limit());
        }
        self.ports.boards.restore_board(org, board.id).await?;
        Ok(self.ports.boards.get_board(org, board.id).await?)
    }

    /// Moves a board before or after another, or last; `project` moves it there too.
    pub async fn reorder_board(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        anchor: Anchor<BoardId>,
        project: Option<ProjectId>,
    ) -> Result<Board, Error> {
        let board = self.visible_board(actor, board).await?;
        match anchor {
            Anchor::Before(a) | Anchor::After(a) => {
                if a == board.id {
                    return Err(anchor_invalid("The anchor is the board itself."));
                }
                self.visible_board(actor, &BoardRef::Id(a))
                    .await
                    .map_err(|_| anchor_invalid("No such board to place it next to."))?;
            }
            Anchor::Last => {}
        }
        if let Some(p) = project {
            self.target_project(actor, p, "project").await?;
        }
        let org = actor.org_id();
        self.ports
            .boards
            .move_board(
                org,
                board.id,
                anchor,
                project.filter(|p| *p != board.project_id),
            )
            .await?;
        Ok(self.ports.boards.get_board(org, board.id).await?)
    }

    pub async fn board_members(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
    ) -> Result<Vec<GrantView>, Error> {
        let board = self.visible_board(actor, board).await?;
        let grants = self
            .ports
            .boards
            .board_grants(actor.org_id(), board.id)
            .await?;
        self.grant_views(actor, grants).await
    }

    /// Grants the board to a person or team; an existing grant is answered as it is (flag
    /// false).
    pub async fn add_board_member(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        grantee: Grantee,
    ) -> Result<(GrantView, bool), Error> {
        let board = self.visible_board(actor, board).await?;
        self.check_grantee(actor, grantee).await?;
        let (grant, created) = self
            .ports
            .boards
            .add_board_grant(actor.org_id(), board.id, grantee, GrantId::new())
            .await?;
        let view = self.grant_views(actor, vec![grant]).await?.remove(0);
        Ok((view, created))
    }

    /// The grant a path names (by grant, person or team uuid).
    pub async fn board_member(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        who: Uuid,
    ) -> Result<GrantView, Error> {
        self.board_members(actor, board)
            .await?
            .into_iter()
            .find(|g| g.grant.names(who))
            .ok_or_else(Error::not_found)
    }

    /// Takes a grant away; the last one of a members-only board stays
    /// (`last_grant_cannot_be_removed`).
    pub async fn remove_board_member(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        who: Uuid,
    ) -> Result<(), Error> {
        let board = self.visible_board(actor, board).await?;
        let org = actor.org_id();
        let grants = self.ports.boards.board_grants(org, board.id).await?;
        let grant = grants
            .iter()
            .find(|g| g.names(who))
            .ok_or_else(Error::not_found)?;
        if board.visibility == Visibility::Members && grants.len() == 1 {
            return Err(last_grant());
        }
        Ok(self
            .ports
            .boards
            .remove_board_grant(org, board.id, grant.id)
            .await?)
    }

    /// Records that the person opened the board (feeds `me/recents/`).
    pub async fn visit_board(&self, actor: &PlanActor, board: &BoardRef) -> Result<(), Error> {
        let me = actor.person()?.id;
        let board = self.visible_board(actor, board).await?;
        let now = self.ports.clock.now();
        Ok(self
            .ports
            .boards
            .record_visit(actor.org_id(), me, board.id, now)
            .await?)
    }

    /// The person's recently visited boards they still see, latest first.
    pub async fn recent_boards(&self, actor: &PlanActor) -> Result<Vec<Recent>, Error> {
        let me = actor.person()?.id;
        let visits = self
            .ports
            .boards
            .visits(actor.org_id(), me, RECENTS)
            .await?;
        let mut recents = Vec::with_capacity(visits.len());
        for (id, visited_at) in visits {
            match self.visible_board(actor, &BoardRef::Id(id)).await {
                Ok(board) if !board.is_archived => recents.push(Recent { board, visited_at }),
                Ok(_) => {}
                Err(e) if e.code() == ErrorCode::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(recents)
    }

    /// The active people (guests aside) who see the board, by name.
    pub async fn mentionables(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
    ) -> Result<Vec<Mentionable>, Error> {
        let board = self.visible_board(actor, board).await?;
        let org = actor.org_id();
        let people = self
            .ports
            .people
            .list_users(
                org,
                &UserFilter {
                    search: None,
                    is_active: Some(true),
                },
                PageRequest {
                    offset: 0,
                    limit: 10_000,
                },
            )
            .await?
            .results;
        let grants = if board.visibility == Visibility::Members {
            self.ports.boards.board_grants(org, board.id).await?
        } else {
            Vec::new()
        };
        let mut found = Vec::new();
        for user in people {
            if user.role == Role::Guest {
                continue;
            }
            let sees = board.visibility == Visibility::Org
                || user.role.is_admin()
                || self.person_granted(user.id, &grants).await?;
            if sees {
                found.push(Mentionable {
                    id: user.id,
                    name: user.full_name(),
                });
            }
        }
        Ok(found)
    }

    async fn person_granted(
        &self,
        user: teamcomm_kernel::UserId,
        grants: &[Grant],
    ) -> Result<bool, Error> {
        for g in grants {
            let yes = match g.grantee {
                Grantee::User(u) => u == user,
                Grantee::Team(t) => self.ports.teams.is_member(t, user).await?,
            };
            if yes {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
