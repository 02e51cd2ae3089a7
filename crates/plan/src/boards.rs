//! Boards: each belongs to a project and has a key (`ENG`) its tasks are numbered under. Every
//! key a board ever had stays reserved in the organization and keeps resolving. The free plan
//! has three live boards.

use teamcomm_kernel::{Error, ErrorCode, Page, PageRequest, RepoError};
use teamcomm_org::{PlanTier, Role, UserFilter};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::access::{Anchor, DryRunOr, GrantView, Grantee, Holder, Viewer, anchor_invalid};
use crate::states::default_columns;
use crate::{
    Board, BoardId, BoardKey, BoardRef, EstimateScale, Plan, PlanActor, Preview, ProjectId,
    Restore, Visibility,
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
        if let Some(Some(days)) = patch.archive_after_days
            && !(1..=MAX_ARCHIVE_AFTER_DAYS).contains(&days)
        {
            return Err(Error::invalid_field(
                "archive_after_days",
                "Automatic archiving is after 1 to 3650 days.",
            ));
        }
        if let Some(project) = patch.project {
            self.target_project(actor, project, "project").await?;
        }
        patch.is_archived = None;
        patch.updated_at = Some(self.ports.clock.now());
        if patch.visibility == Some(Visibility::Members) {
            self.keep_a_member(actor, Holder::Board(board.id)).await?;
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
                    .restorable(Restore::Board(board.id)),
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

    /// Makes an archived board live again (free plan: within three live boards); its tasks
    /// stay archived, so no column gains any (`column_too_large`).
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

    /// The board's member grants, with who they name.
    pub async fn board_members(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
    ) -> Result<Vec<GrantView>, Error> {
        let board = self.visible_board(actor, board).await?;
        self.members(actor, Holder::Board(board.id)).await
    }

    /// Grants the board to a person or team ([`Plan::add_member`]).
    pub async fn add_board_member(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        grantee: Grantee,
    ) -> Result<(GrantView, bool), Error> {
        let board = self.visible_board(actor, board).await?;
        self.add_member(actor, Holder::Board(board.id), grantee)
            .await
    }

    /// The grant a path names (by grant, person or team uuid).
    pub async fn board_member(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        who: Uuid,
    ) -> Result<GrantView, Error> {
        let board = self.visible_board(actor, board).await?;
        self.member(actor, Holder::Board(board.id), who).await
    }

    /// Takes a grant away ([`Plan::remove_member`]: a members-only board keeps its last).
    pub async fn remove_board_member(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        who: Uuid,
    ) -> Result<(), Error> {
        let board = self.visible_board(actor, board).await?;
        self.remove_member(actor, Holder::Board(board.id), board.visibility, who)
            .await
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
        // Read once: whether each person sees the board is then decided from it.
        let audience = self.board_audience(&board).await?;
        let mut found = Vec::new();
        for user in people {
            if user.role != Role::Guest && self.person_sees(&audience, &user).await? {
                found.push(Mentionable {
                    id: user.id,
                    name: user.full_name(),
                });
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use teamcomm_kernel::ErrorCode;
    use teamcomm_org::Role;

    use super::*;
    use crate::access::Grantee;
    use crate::projects::{NewProject, ProjectIncludes, ProjectPatch};
    use crate::states::{NewState, StatePatch};
    use crate::testing::World;
    use crate::{PlanScopes, StateCategory, StateId, Task, TaskId};

    async fn setup(tier: &str) -> (World, crate::Project, Board) {
        let w = World::on_tier(tier).await;
        let p = w
            .plan
            .create_project(&w.admin, NewProject::named("Core"))
            .await
            .unwrap();
        let b = w
            .plan
            .create_board(&w.admin, new_board(p.id, "ENG"))
            .await
            .unwrap();
        (w, p, b)
    }

    fn new_board(project: ProjectId, key: &str) -> NewBoard {
        NewBoard {
            name: format!("Board {key}"),
            project,
            key: key.to_owned(),
        }
    }

    fn code<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorCode {
        r.unwrap_err().code()
    }

    /// A live task put straight into the in-memory store.
    fn put_task(w: &World, b: &Board, state: StateId, number: i64) -> TaskId {
        let now = teamcomm_kernel::Clock::now(&*w.clock);
        let t = Task {
            id: TaskId::new(),
            org_id: b.org_id,
            board_id: b.id,
            board_key: b.key.clone(),
            number,
            state_id: state,
            parent_id: None,
            title: "Task".into(),
            description: String::new(),
            owner: None,
            priority: None,
            estimate: None,
            start_date: None,
            due_date: None,
            milestone_id: None,
            rank: number * 1024,
            version: 1,
            is_archived: false,
            archived_at: None,
            archived_with_board: false,
            completed_at: None,
            created_by: None,
            created_by_agent: None,
            created_at: now,
            updated_at: now,
        };
        let id = t.id;
        w.mem.lock().tasks.tasks.push(t);
        id
    }

    fn task(w: &World, id: TaskId) -> Task {
        w.mem
            .lock()
            .tasks
            .tasks
            .iter()
            .find(|t| t.id == id)
            .unwrap()
            .clone()
    }

    async fn column(w: &World, b: &Board, category: StateCategory) -> crate::State {
        w.plan
            .live_states(b)
            .await
            .unwrap()
            .into_iter()
            .find(|s| s.category == category)
            .unwrap()
    }

    #[tokio::test]
    async fn the_free_plan_has_one_project_and_three_boards() {
        let (w, p, _) = setup("free").await;
        let e = w
            .plan
            .create_project(&w.admin, NewProject::named("Second"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::TaskProjectsLimitReached);
        for key in ["BB", "CC"] {
            w.plan
                .create_board(&w.admin, new_board(p.id, key))
                .await
                .unwrap();
        }
        let r = w.plan.create_board(&w.admin, new_board(p.id, "DD")).await;
        assert_eq!(code(r), ErrorCode::TaskBoardsLimitReached);
        let e = w.plan.entitlements(&w.member).await.unwrap();
        assert_eq!((e.boards_used, e.boards_limit), (3, Some(3)));
        // An archived board frees a place; restoring it past the limit is refused.
        let cc = BoardRef::Key("CC".into());
        w.plan.archive_board(&w.admin, &cc, false).await.unwrap();
        w.plan
            .create_board(&w.admin, new_board(p.id, "DD"))
            .await
            .unwrap();
        let r = w.plan.restore_board(&w.admin, &cc).await;
        assert_eq!(code(r), ErrorCode::TaskBoardsLimitReached);
        // Paid plans have no board limit.
        let (w, _, _) = setup("business").await;
        assert_eq!(
            w.plan.entitlements(&w.admin).await.unwrap().boards_limit,
            None
        );
    }

    #[tokio::test]
    async fn project_names_and_fields_are_checked() {
        let (w, p, _) = setup("business").await;
        let r = w
            .plan
            .create_project(&w.admin, NewProject::named("  core "))
            .await;
        assert_eq!(code(r), ErrorCode::ProjectNameConflict);
        let r = w
            .plan
            .create_project(&w.admin, NewProject::named(" "))
            .await;
        assert_eq!(code(r), ErrorCode::ParamsValidationError);
        let mut lead = NewProject::named("Led");
        lead.lead = Some(teamcomm_kernel::UserId::new());
        assert_eq!(
            code(w.plan.create_project(&w.admin, lead).await),
            ErrorCode::ParamsValidationError
        );
        let mut span = NewProject::named("Span");
        span.start_date = Some(time::macros::date!(2026 - 05 - 01));
        span.target_date = Some(time::macros::date!(2026 - 04 - 01));
        assert_eq!(
            code(w.plan.create_project(&w.admin, span).await),
            ErrorCode::InvalidDateRange
        );
        // A dry run changes nothing; archiving keeps the name taken.
        let preview = w.plan.archive_project(&w.admin, p.id, true).await.unwrap();
        assert!(matches!(preview, DryRunOr::Preview(_)));
        assert!(
            !w.plan
                .visible_project(&w.admin, p.id)
                .await
                .unwrap()
                .is_archived
        );
        w.plan.archive_project(&w.admin, p.id, false).await.unwrap();
        let r = w
            .plan
            .create_project(&w.admin, NewProject::named("CORE"))
            .await;
        assert_eq!(code(r), ErrorCode::ProjectNameConflict);
        // No new board in an archived project.
        let r = w.plan.create_board(&w.admin, new_board(p.id, "NEW")).await;
        assert_eq!(code(r), ErrorCode::ParamsValidationError);
        w.plan.restore_project(&w.admin, p.id).await.unwrap();
        let view = w
            .plan
            .project_detail(&w.member, p.id, ProjectIncludes { progress: true })
            .await
            .unwrap();
        assert_eq!(view.board_count, 1);
        assert_eq!(view.progress, Some(None));
        let patch = ProjectPatch {
            name: Some("Renamed".into()),
            ..ProjectPatch::default()
        };
        assert_eq!(
            w.plan
                .update_project(&w.admin, p.id, patch)
                .await
                .unwrap()
                .name,
            "Renamed"
        );
    }

    #[tokio::test]
    async fn progress_counts_done_over_all_but_canceled() {
        let (w, p, b) = setup("business").await;
        let done = column(&w, &b, StateCategory::Done).await;
        let todo = column(&w, &b, StateCategory::Todo).await;
        let canceled = column(&w, &b, StateCategory::Canceled).await;
        put_task(&w, &b, done.id, 1);
        put_task(&w, &b, todo.id, 2);
        put_task(&w, &b, todo.id, 3);
        put_task(&w, &b, canceled.id, 4);
        let view = w
            .plan
            .project_detail(&w.member, p.id, ProjectIncludes { progress: true })
            .await
            .unwrap();
        let progress = view.progress.unwrap().unwrap();
        assert_eq!((progress.completed, progress.total), (1, 3));
        assert_eq!(progress.percent_complete(), 33);
    }

    #[tokio::test]
    async fn board_keys_are_reserved_forever() {
        let (w, p, b) = setup("business").await;
        let r = w.plan.create_board(&w.admin, new_board(p.id, "eng")).await;
        assert_eq!(code(r), ErrorCode::DuplicateBoardKey);
        let r = w.plan.create_board(&w.admin, new_board(p.id, "E")).await;
        assert_eq!(code(r), ErrorCode::ParamsValidationError);
        let rekey = BoardPatch {
            key: Some("core".into()),
            ..BoardPatch::default()
        };
        let eng = BoardRef::Key("ENG".into());
        let b2 = w.plan.update_board(&w.admin, &eng, rekey).await.unwrap();
        assert_eq!(b2.key, "CORE");
        assert_eq!(
            w.plan.visible_board(&w.member, &eng).await.unwrap().id,
            b.id
        );
        let r = w.plan.create_board(&w.admin, new_board(p.id, "ENG")).await;
        assert_eq!(code(r), ErrorCode::DuplicateBoardKey);
        let bad = BoardPatch {
            archive_after_days: Some(Some(0)),
            ..BoardPatch::default()
        };
        assert_eq!(
            code(w.plan.update_board(&w.admin, &eng, bad).await),
            ErrorCode::ParamsValidationError
        );
    }

    #[tokio::test]
    async fn archiving_a_board_archives_its_live_tasks_once() {
        let (w, p, b) = setup("business").await;
        let todo = column(&w, &b, StateCategory::Todo).await;
        let t1 = put_task(&w, &b, todo.id, 1);
        let t2 = put_task(&w, &b, todo.id, 2);
        let eng = BoardRef::Id(b.id);
        let DryRunOr::Preview(preview) = w.plan.archive_board(&w.admin, &eng, true).await.unwrap()
        else {
            panic!("a dry run previews");
        };
        assert_eq!(preview.affects["tasks"], 2);
        assert_eq!(preview.restore, Some(Restore::Board(b.id)));
        assert!(!task(&w, t1).is_archived, "a dry run writes nothing");
        assert!(w.mem.lock().tasks.events.is_empty());
        w.plan.archive_board(&w.admin, &eng, false).await.unwrap();
        for t in [t1, t2] {
            let t = task(&w, t);
            assert!(t.is_archived && t.archived_with_board);
            assert_eq!(t.version, 2);
        }
        assert_eq!(w.mem.lock().tasks.events.len(), 2);
        // Again: nothing more.
        w.plan.archive_board(&w.admin, &eng, false).await.unwrap();
        assert_eq!(w.mem.lock().tasks.events.len(), 2);
        let restored = w.plan.restore_board(&w.admin, &eng).await.unwrap();
        assert!(!restored.is_archived);
        assert!(task(&w, t1).is_archived, "its tasks stay archived");
        // Move preview counts live tasks only.
        let q = w
            .plan
            .create_project(&w.admin, NewProject::named("Other"))
            .await
            .unwrap();
        let m = w
            .plan
            .board_move_preview(&w.member, &eng, q.id)
            .await
            .unwrap();
        assert_eq!((m.from, m.to, m.tasks), (p.id, q.id, 0));
    }

    #[tokio::test]
    async fn members_only_boards_need_a_grant_or_a_team() {
        let (w, _, b) = setup("business").await;
        let stranger = w.person(Role::Member, "stranger@example.com").await;
        let eng = BoardRef::Id(b.id);
        let private = BoardPatch {
            visibility: Some(Visibility::Members),
            ..BoardPatch::default()
        };
        w.plan.update_board(&w.member, &eng, private).await.unwrap();
        // Who made it private is its member.
        let members = w.plan.board_members(&w.member, &eng).await.unwrap();
        assert_eq!(members.len(), 1);
        assert_eq!(
            code(w.plan.visible_board(&stranger, &eng).await),
            ErrorCode::NotFound
        );
        let key = w.key(PlanScopes::ALL);
        assert_eq!(
            code(w.plan.visible_board(&key, &eng).await),
            ErrorCode::NotFound
        );
        let page = PageRequest {
            offset: 0,
            limit: 10,
        };
        let seen = w
            .plan
            .list_boards(&stranger, BoardFilter::default(), page)
            .await
            .unwrap();
        assert_eq!(seen.count, 0);
        // Through a team.
        let team = w.team(&[stranger.person_id().unwrap()]).await;
        let (_, created) = w
            .plan
            .add_board_member(&w.member, &eng, Grantee::Team(team.id))
            .await
            .unwrap();
        assert!(created);
        let (_, created) = w
            .plan
            .add_board_member(&w.member, &eng, Grantee::Team(team.id))
            .await
            .unwrap();
        assert!(!created);
        assert!(w.plan.visible_board(&stranger, &eng).await.is_ok());
        let mentionable = w.plan.mentionables(&w.member, &eng).await.unwrap();
        assert!(
            mentionable
                .iter()
                .any(|m| Some(m.id) == stranger.person_id())
        );
        // The last grant stays; a missing one is 404.
        w.plan
            .remove_board_member(&w.member, &eng, team.id.0)
            .await
            .unwrap();
        let me = w.member.person_id().unwrap().0;
        assert_eq!(
            code(w.plan.remove_board_member(&w.member, &eng, me).await),
            ErrorCode::LastGrantCannotBeRemoved
        );
        assert_eq!(
            code(w.plan.remove_board_member(&w.member, &eng, team.id.0).await),
            ErrorCode::NotFound
        );
        // Recents skip boards no longer seen.
        w.plan.visit_board(&w.member, &eng).await.unwrap();
        assert_eq!(w.plan.recent_boards(&w.member).await.unwrap().len(), 1);
        assert_eq!(
            code(w.plan.visit_board(&key, &eng).await),
            ErrorCode::ActorRequired
        );
    }

    #[tokio::test]
    async fn mentionables_are_the_active_people_who_see_the_board_but_guests() {
        use teamcomm_org::{OrgRepository, UserPatch};
        let (w, _, b) = setup("business").await;
        let eng = BoardRef::Id(b.id);
        let mut people = Vec::new();
        for (role, email) in [
            (Role::Member, "granted@example.com"),
            (Role::Member, "teammate@example.com"),
            (Role::Admin, "admin2@example.com"),
            (Role::Member, "outsider@example.com"),
            (Role::Guest, "guest@example.com"),
            (Role::Member, "gone@example.com"),
        ] {
            people.push(w.person(role, email).await.person_id().unwrap());
        }
        let [granted, teammate, admin2, outsider, guest, gone] = people[..] else {
            unreachable!()
        };
        let deactivate = UserPatch {
            is_active: Some(false),
            role: None,
        };
        w.org_ports
            .people
            .update_user(gone, &deactivate, &[])
            .await
            .unwrap();
        let admin = w.admin.person_id().unwrap();
        let member = w.member.person_id().unwrap();
        let sorted = |mut ids: Vec<teamcomm_kernel::UserId>| {
            ids.sort_unstable();
            ids
        };
        let mentionable = async || {
            let found = w.plan.mentionables(&w.member, &eng).await.unwrap();
            sorted(found.into_iter().map(|m| m.id).collect())
        };
        // Organization-wide: every active person but guests.
        let everyone = vec![admin, member, granted, teammate, admin2, outsider];
        assert_eq!(mentionable().await, sorted(everyone));
        // Members-only: its members, directly or through a team, and admins; a granted guest
        // is still left out.
        let private = BoardPatch {
            visibility: Some(Visibility::Members),
            ..BoardPatch::default()
        };
        w.plan.update_board(&w.member, &eng, private).await.unwrap();
        let team = w.team(&[teammate]).await;
        for grantee in [
            Grantee::User(granted),
            Grantee::User(guest),
            Grantee::Team(team.id),
        ] {
            w.plan
                .add_board_member(&w.member, &eng, grantee)
                .await
                .unwrap();
        }
        let before = w.mem.visits();
        let seers = vec![admin, member, granted, teammate, admin2];
        assert_eq!(mentionable().await, sorted(seers));
        let visits = w.mem.visits() - before;
        // The board's grants are read once for the whole list, not once per person.
        for i in 0..3 {
            w.person(Role::Member, &format!("out{i}@example.com")).await;
        }
        let before = w.mem.visits();
        mentionable().await;
        assert_eq!(w.mem.visits() - before, visits, "store visits per listing");
    }

    #[tokio::test]
    async fn reorders_refuse_bad_anchors() {
        let (w, p, b) = setup("business").await;
        let other = w
            .plan
            .create_board(&w.admin, new_board(p.id, "OPS"))
            .await
            .unwrap();
        let eng = BoardRef::Id(b.id);
        let r = w
            .plan
            .reorder_board(&w.admin, &eng, Anchor::Before(b.id), None)
            .await;
        assert_eq!(code(r), ErrorCode::ReorderAnchorInvalid);
        let r = w
            .plan
            .reorder_board(&w.admin, &eng, Anchor::After(BoardId::new()), None)
            .await;
        assert_eq!(code(r), ErrorCode::ReorderAnchorInvalid);
        w.plan
            .reorder_board(&w.admin, &eng, Anchor::After(other.id), None)
            .await
            .unwrap();
        let all = w
            .plan
            .list_boards(
                &w.admin,
                BoardFilter::default(),
                PageRequest {
                    offset: 0,
                    limit: 10,
                },
            )
            .await
            .unwrap();
        let keys: Vec<_> = all.results.iter().map(|v| v.board.key.as_str()).collect();
        assert_eq!(keys, ["OPS", "ENG"]);
        let q = w
            .plan
            .create_project(&w.admin, NewProject::named("Q"))
            .await
            .unwrap();
        let r = w
            .plan
            .reorder_project(&w.admin, q.id, Anchor::Before(q.id))
            .await;
        assert_eq!(code(r), ErrorCode::ReorderAnchorInvalid);
        w.plan
            .reorder_project(&w.admin, q.id, Anchor::Before(p.id))
            .await
            .unwrap();
    }

    /// Everything an archive of a column writes: columns, tasks, task events.
    fn column_snapshot(w: &World) -> (Vec<crate::State>, Vec<Task>, usize) {
        let s = w.mem.lock();
        (
            s.boards.states.clone(),
            s.tasks.tasks.clone(),
            s.tasks.events.len(),
        )
    }

    #[tokio::test]
    async fn archiving_a_column_moves_its_tasks_only_where_they_fit() {
        let (w, _, b) = setup("business").await;
        let eng = BoardRef::Id(b.id);
        let todo = column(&w, &b, StateCategory::Todo).await;
        let doing = column(&w, &b, StateCategory::InProgress).await;
        let limit = crate::tasks::MAX_COLUMN_TASKS as i64;
        // 3,000 and 2,001: one more than a column holds, together.
        for n in 1..=3000 {
            put_task(&w, &b, todo.id, n);
        }
        let extra: Vec<TaskId> = (3001..=limit + 1)
            .map(|n| put_task(&w, &b, doing.id, n))
            .collect();
        let before = column_snapshot(&w);
        for dry_run in [true, false] {
            let e = w
                .plan
                .archive_state(&w.admin, &eng, todo.id, Some(doing.id), dry_run)
                .await
                .unwrap_err();
            assert_eq!(e.code(), ErrorCode::ColumnTooLarge, "{e:?}");
            assert_eq!(e.extra()["limit"], limit);
            assert_eq!(
                column_snapshot(&w),
                before,
                "a refused archive stores nothing"
            );
        }
        // The other way round too: 2,001 into 3,000.
        let r = w
            .plan
            .archive_state(&w.admin, &eng, doing.id, Some(todo.id), false)
            .await;
        assert_eq!(code(r), ErrorCode::ColumnTooLarge);
        // An archived task frees its place: exactly 5,000 fit.
        w.mem
            .lock()
            .tasks
            .tasks
            .iter_mut()
            .find(|t| t.id == extra[0])
            .unwrap()
            .is_archived = true;
        w.plan
            .archive_state(&w.admin, &eng, todo.id, Some(doing.id), false)
            .await
            .unwrap();
        let s = w.mem.lock();
        let live_in = |state: StateId| {
            s.tasks
                .tasks
                .iter()
                .filter(|t| t.state_id == state && !t.is_archived)
                .count() as i64
        };
        assert_eq!((live_in(todo.id), live_in(doing.id)), (0, limit));
        assert!(
            s.boards
                .states
                .iter()
                .any(|st| st.id == todo.id && st.is_archived)
        );
    }

    #[tokio::test]
    async fn the_store_refuses_a_column_past_its_limit_whatever_was_read_before() {
        use crate::ports::{BoardRepository, COLUMN_FULL, MigrateTo};
        let (w, _, b) = setup("business").await;
        let todo = column(&w, &b, StateCategory::Todo).await;
        let doing = column(&w, &b, StateCategory::InProgress).await;
        put_task(&w, &b, todo.id, 1);
        put_task(&w, &b, todo.id, 2);
        put_task(&w, &b, doing.id, 3);
        let mut states = w.plan.live_states(&b).await.unwrap();
        states.retain(|s| s.id != todo.id);
        states.push(crate::State {
            is_archived: true,
            ..todo.clone()
        });
        let before = column_snapshot(&w);
        let to = |limit| {
            Some(MigrateTo {
                state: doing.id,
                limit,
            })
        };
        let by = crate::actor::Executor::default();
        let at = teamcomm_kernel::Clock::now(&*w.clock);
        let e = w
            .mem
            .archive_state(b.org_id, &states, todo.id, to(2), &by, at)
            .await
            .unwrap_err();
        assert!(
            matches!(&e, RepoError::Conflict { constraint } if constraint == COLUMN_FULL),
            "{e:?}"
        );
        assert_eq!(column_snapshot(&w), before, "nothing stored");
        let moved = w
            .mem
            .archive_state(b.org_id, &states, todo.id, to(3), &by, at)
            .await
            .unwrap();
        assert_eq!(moved, 2);
    }

    #[tokio::test]
    async fn columns_keep_a_done_column_and_their_tasks() {
        let (w, _, b) = setup("business").await;
        let eng = BoardRef::Id(b.id);
        let todo = column(&w, &b, StateCategory::Todo).await;
        let done = column(&w, &b, StateCategory::Done).await;
        let backlog = column(&w, &b, StateCategory::Backlog).await;
        let t = put_task(&w, &b, todo.id, 1);
        let r = w
            .plan
            .archive_state(&w.admin, &eng, todo.id, None, false)
            .await;
        assert_eq!(code(r), ErrorCode::StateInUse);
        let r = w
            .plan
            .archive_state(&w.admin, &eng, todo.id, Some(todo.id), false)
            .await;
        assert_eq!(code(r), ErrorCode::ParamsValidationError);
        let r = w
            .plan
            .archive_state(&w.admin, &eng, done.id, Some(backlog.id), false)
            .await;
        assert_eq!(code(r), ErrorCode::LastDoneState);
        let preview = w
            .plan
            .archive_state(&w.admin, &eng, todo.id, Some(done.id), true)
            .await
            .unwrap();
        assert!(matches!(preview, DryRunOr::Preview(_)));
        assert_eq!(task(&w, t).state_id, todo.id, "a dry run writes nothing");
        w.plan
            .archive_state(&w.admin, &eng, todo.id, Some(done.id), false)
            .await
            .unwrap();
        let moved = task(&w, t);
        assert_eq!(moved.state_id, done.id);
        assert!(moved.completed_at.is_some());
        // The default passed on; positions close up.
        let live = w.plan.live_states(&b).await.unwrap();
        assert_eq!(live.iter().filter(|s| s.is_default).count(), 1);
        let positions: Vec<_> = live.iter().map(|s| s.position).collect();
        assert_eq!(positions, [1, 2, 3, 4]);
        assert_eq!(w.plan.default_state(&b).await.unwrap().id, live[0].id);
        // Restore appends; a live column is a no-op.
        let back = w.plan.restore_state(&w.admin, &eng, todo.id).await.unwrap();
        assert_eq!((back.is_archived, back.position), (false, 5));
        assert_eq!(
            w.plan
                .restore_state(&w.admin, &eng, todo.id)
                .await
                .unwrap()
                .position,
            5
        );
        // Reorder needs every live column once.
        let mut order: Vec<StateId> = w
            .plan
            .live_states(&b)
            .await
            .unwrap()
            .iter()
            .map(|s| s.id)
            .collect();
        order.reverse();
        let r = w.plan.reorder_states(&w.admin, &eng, &order[1..]).await;
        assert_eq!(code(r), ErrorCode::StatesReorderInvalid);
        let mut twice = order.clone();
        twice[0] = twice[1];
        let r = w.plan.reorder_states(&w.admin, &eng, &twice).await;
        assert_eq!(code(r), ErrorCode::StatesReorderInvalid);
        let listed = w.plan.reorder_states(&w.admin, &eng, &order).await.unwrap();
        assert_eq!(listed.iter().map(|s| s.id).collect::<Vec<_>>(), order);
        // Insert, move, rename.
        let new = NewState {
            name: "Review".into(),
            category: StateCategory::InProgress,
            position: Some(1),
            color: Some("#ABC".into()),
            is_default: true,
        };
        let review = w.plan.create_state(&w.admin, &eng, new).await.unwrap();
        assert_eq!(
            (review.position, review.color.as_deref()),
            (1, Some("#abc"))
        );
        assert_eq!(w.plan.default_state(&b).await.unwrap().id, review.id);
        let bad = NewState {
            name: "x".repeat(49),
            category: StateCategory::Todo,
            position: None,
            color: None,
            is_default: false,
        };
        assert_eq!(
            code(w.plan.create_state(&w.admin, &eng, bad).await),
            ErrorCode::ParamsValidationError
        );
        let patch = StatePatch {
            name: Some("QA".into()),
            position: Some(99),
            ..StatePatch::default()
        };
        let qa = w
            .plan
            .update_state(&w.admin, &eng, review.id, patch)
            .await
            .unwrap();
        assert_eq!((qa.name.as_str(), qa.position), ("QA", 6));
    }
}
