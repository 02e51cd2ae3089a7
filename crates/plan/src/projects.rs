//! Projects: boards belong to one. Names are unique in the organization (live and archived
//! alike, ignoring case); the free plan has one live project.

use teamcomm_kernel::{Error, ErrorCode, Page, PageRequest, RepoError, UserId};
use teamcomm_org::PlanTier;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::access::{Anchor, DryRunOr, GrantView, Grantee, Holder, Viewer, anchor_invalid};
use crate::{Plan, PlanActor, Preview, Project, ProjectHealth, ProjectId, Restore, Visibility};

pub const MAX_PROJECT_NAME: usize = 255;
pub const MAX_PROJECT_DESCRIPTION: usize = 10_000;
/// Live projects of an organization on the free plan.
pub const FREE_PROJECTS: u64 = 1;

/// A project to create, as asked.
#[derive(Debug, Clone, PartialEq)]
pub struct NewProject {
    pub name: String,
    pub description: Option<String>,
    pub visibility: Option<Visibility>,
    pub lead: Option<UserId>,
    pub health: Option<ProjectHealth>,
    pub start_date: Option<Date>,
    pub target_date: Option<Date>,
}

impl NewProject {
    pub fn named(name: &str) -> NewProject {
        NewProject {
            name: name.to_owned(),
            description: None,
            visibility: None,
            lead: None,
            health: None,
            start_date: None,
            target_date: None,
        }
    }
}

/// A change to a project; `None` leaves a field as it is (`Some(None)` clears it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProjectPatch {
    pub name: Option<String>,
    pub description: Option<String>,
    pub visibility: Option<Visibility>,
    pub lead: Option<Option<UserId>>,
    pub health: Option<ProjectHealth>,
    pub start_date: Option<Option<Date>>,
    pub target_date: Option<Option<Date>>,
    /// Archive (`Some(true)`) or restore; the store stamps `archived_at`.
    pub is_archived: Option<bool>,
    pub updated_at: Option<OffsetDateTime>,
}

/// Which projects a list shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProjectFilter {
    pub viewer: Viewer,
    /// Part of the name, any case.
    pub search: Option<String>,
    /// Projects whose span (start to target date) reaches this day or later.
    pub start_date: Option<Date>,
    /// Projects whose span starts this day or earlier.
    pub end_date: Option<Date>,
    pub include_archived: bool,
}

/// Closed tasks over all live tasks of a project's live boards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectProgress {
    pub completed: u64,
    pub total: u64,
}

impl ProjectProgress {
    pub fn percent_complete(self) -> u64 {
        (self.completed * 100).checked_div(self.total).unwrap_or(0)
    }
}

pub(crate) fn name_conflict(e: RepoError) -> Error {
    match e {
        RepoError::Conflict { constraint } if constraint.contains("lower_name") => Error::new(
            ErrorCode::ProjectNameConflict,
            "A project (live or archived) already has this name.",
        ),
        other => other.into(),
    }
}

pub(crate) fn check_project_name(raw: &str) -> Result<String, Error> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_PROJECT_NAME {
        return Err(Error::invalid_field(
            "name",
            "A project name is 1 to 255 characters.",
        ));
    }
    Ok(name.to_owned())
}

pub(crate) fn check_description(raw: &str) -> Result<String, Error> {
    if raw.chars().count() > MAX_PROJECT_DESCRIPTION {
        return Err(Error::invalid_field(
            "description",
            "A description is at most 10000 characters.",
        ));
    }
    Ok(raw.to_owned())
}

pub(crate) fn check_span(start: Option<Date>, end: Option<Date>) -> Result<(), Error> {
    match (start, end) {
        (Some(s), Some(e)) if s > e => Err(Error::new(
            ErrorCode::InvalidDateRange,
            "The start date is after the end date.",
        )),
        _ => Ok(()),
    }
}

impl Plan {
    /// Creates a project (`project_name_conflict`; free plan: `task_projects_limit_reached`).
    pub async fn create_project(
        &self,
        actor: &PlanActor,
        new: NewProject,
    ) -> Result<Project, Error> {
        let org = actor.org_id();
        let name = check_project_name(&new.name)?;
        let description = check_description(new.description.as_deref().unwrap_or(""))?;
        check_span(new.start_date, new.target_date)?;
        if let Some(lead) = new.lead {
            self.check_person(actor, lead, "lead").await?;
        }
        if actor.org.plan == PlanTier::Free
            && self.ports.projects.count_live_projects(org).await? >= FREE_PROJECTS
        {
            return Err(projects_limit());
        }
        let now = self.ports.clock.now();
        let project = Project {
            id: ProjectId::new(),
            org_id: org,
            name,
            description,
            visibility: new.visibility.unwrap_or(Visibility::Org),
            lead: new.lead,
            health: new.health.unwrap_or(ProjectHealth::NotSet),
            start_date: new.start_date,
            target_date: new.target_date,
            rank: 0,
            is_archived: false,
            archived_at: None,
            created_by: actor.person_id(),
            created_at: now,
            updated_at: now,
        };
        let project = self
            .ports
            .projects
            .create_project(&project)
            .await
            .map_err(name_conflict)?;
        if project.visibility == Visibility::Members {
            self.keep_a_member(actor, Holder::Project(project.id))
                .await?;
        }
        Ok(project)
    }

    /// An active person of the organization named in a body field (`invalid_field`
    /// otherwise).
    pub(crate) async fn check_person(
        &self,
        actor: &PlanActor,
        user: UserId,
        field: &str,
    ) -> Result<(), Error> {
        match self.ports.people.get_user(actor.org_id(), user).await {
            Ok(u) if u.is_active => Ok(()),
            Ok(_) | Err(RepoError::NotFound) => Err(Error::invalid_field(
                field,
                "No such active person in this organization.",
            )),
            Err(e) => Err(e.into()),
        }
    }
}

/// A project as its doors show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectView {
    pub project: Project,
    /// The lead's display name, when there is a lead.
    pub lead_name: Option<String>,
    /// Live boards.
    pub board_count: u64,
    /// `None`: not asked; `Some(None)`: asked, nothing to measure.
    pub progress: Option<Option<ProjectProgress>>,
}

/// What a list or detail adds to projects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProjectIncludes {
    pub progress: bool,
}

/// Checks a list's `search` text: 2 to 256 characters.
pub fn check_search(raw: Option<&str>) -> Result<Option<String>, Error> {
    let Some(q) = raw.map(str::trim) else {
        return Ok(None);
    };
    // Postgres text cannot hold NUL: refused here rather than failing the query.
    if q.contains('\0') {
        return Err(Error::new(
            ErrorCode::InvalidFilterValue,
            "Search text holds a NUL character.",
        )
        .with_extra("parameter", "search"));
    }
    let n = q.chars().count();
    if n < 2 {
        return Err(Error::new(
            ErrorCode::SearchQueryTooShort,
            "Search text is at least 2 characters.",
        ));
    }
    if n > 256 {
        return Err(Error::new(
            ErrorCode::SearchQueryTooLong,
            "Search text is at most 256 characters.",
        ));
    }
    Ok(Some(q.to_owned()))
}

impl Plan {
    /// Adds what the doors show to projects (lead names, board counts, progress if asked).
    pub async fn project_views(
        &self,
        actor: &PlanActor,
        projects: Vec<Project>,
        includes: ProjectIncludes,
    ) -> Result<Vec<ProjectView>, Error> {
        let org = actor.org_id();
        let ids: Vec<ProjectId> = projects.iter().map(|p| p.id).collect();
        let counts = self.ports.projects.board_counts(org, &ids).await?;
        let progress = if includes.progress {
            self.ports.projects.progress(org, &ids).await?
        } else {
            Vec::new()
        };
        let mut views = Vec::with_capacity(projects.len());
        for project in projects {
            let lead_name = match project.lead {
                Some(lead) => match self.ports.people.get_user(org, lead).await {
                    Ok(u) => Some(u.full_name()),
                    Err(RepoError::NotFound) => None,
                    Err(e) => return Err(e.into()),
                },
                None => None,
            };
            let board_count = counts
                .iter()
                .find(|(id, _)| *id == project.id)
                .map_or(0, |(_, n)| *n);
            let progress = includes.progress.then(|| {
                progress
                    .iter()
                    .find(|(id, _)| *id == project.id)
                    .map(|(_, p)| *p)
            });
            views.push(ProjectView {
                project,
                lead_name,
                board_count,
                progress,
            });
        }
        Ok(views)
    }

    /// The projects the caller sees, in the organization's order.
    pub async fn list_projects(
        &self,
        actor: &PlanActor,
        mut filter: ProjectFilter,
        includes: ProjectIncludes,
        page: PageRequest,
    ) -> Result<Page<ProjectView>, Error> {
        check_span(filter.start_date, filter.end_date)?;
        filter.viewer = self.viewer(actor).await?;
        let found = self
            .ports
            .projects
            .list_projects(actor.org_id(), &filter, page)
            .await?;
        Ok(Page {
            count: found.count,
            results: self.project_views(actor, found.results, includes).await?,
        })
    }

    pub async fn project_detail(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        includes: ProjectIncludes,
    ) -> Result<ProjectView, Error> {
        let project = self.visible_project(actor, id).await?;
        let mut views = self.project_views(actor, vec![project], includes).await?;
        views.pop().ok_or_else(Error::not_found)
    }

    /// Changes a project (`project_name_conflict`).
    pub async fn update_project(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        mut patch: ProjectPatch,
    ) -> Result<Project, Error> {
        let project = self.visible_project(actor, id).await?;
        patch.name = patch.name.as_deref().map(check_project_name).transpose()?;
        patch.description = patch
            .description
            .as_deref()
            .map(check_description)
            .transpose()?;
        check_span(
            patch.start_date.unwrap_or(project.start_date),
            patch.target_date.unwrap_or(project.target_date),
        )?;
        if let Some(Some(lead)) = patch.lead {
            self.check_person(actor, lead, "lead").await?;
        }
        patch.is_archived = None;
        patch.updated_at = Some(self.ports.clock.now());
        if patch.visibility == Some(Visibility::Members) {
            self.keep_a_member(actor, Holder::Project(id)).await?;
        }
        self.ports
            .projects
            .update_project(actor.org_id(), id, &patch)
            .await
            .map_err(name_conflict)
    }

    /// Archives a project (its boards stay as they are); a dry run answers what it would do.
    pub async fn archive_project(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        dry_run: bool,
    ) -> Result<DryRunOr<Project>, Error> {
        let project = self.visible_project(actor, id).await?;
        if dry_run {
            let boards = self
                .ports
                .projects
                .board_counts(actor.org_id(), &[id])
                .await?
                .first()
                .map_or(0, |(_, n)| *n);
            let consequence = if project.is_archived {
                format!("Project \"{}\" is already archived.", project.name)
            } else {
                format!(
                    "Project \"{}\" would be archived; its {boards} live board(s) stay as they are.",
                    project.name
                )
            };
            return Ok(DryRunOr::Preview(
                Preview::new("project.archive", consequence)
                    .affects("projects", u64::from(!project.is_archived))
                    .affects("boards", 0)
                    .restorable(Restore::Project(id)),
            ));
        }
        if project.is_archived {
            return Ok(DryRunOr::Done(project));
        }
        self.set_project_archived(actor, id, true)
            .await
            .map(DryRunOr::Done)
    }

    /// Makes an archived project live again (free plan: within its one project).
    pub async fn restore_project(
        &self,
        actor: &PlanActor,
        id: ProjectId,
    ) -> Result<Project, Error> {
        let project = self.visible_project(actor, id).await?;
        if !project.is_archived {
            return Ok(project);
        }
        if actor.org.plan == PlanTier::Free
            && self
                .ports
                .projects
                .count_live_projects(actor.org_id())
                .await?
                >= FREE_PROJECTS
        {
            return Err(projects_limit());
        }
        self.set_project_archived(actor, id, false).await
    }

    async fn set_project_archived(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        archived: bool,
    ) -> Result<Project, Error> {
        let patch = ProjectPatch {
            is_archived: Some(archived),
            updated_at: Some(self.ports.clock.now()),
            ..ProjectPatch::default()
        };
        Ok(self
            .ports
            .projects
            .update_project(actor.org_id(), id, &patch)
            .await?)
    }

    /// Moves a project before or after another one, or last.
    pub async fn reorder_project(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        anchor: Anchor<ProjectId>,
    ) -> Result<Project, Error> {
        self.visible_project(actor, id).await?;
        match anchor {
            Anchor::Before(a) | Anchor::After(a) => {
                if a == id {
                    return Err(anchor_invalid("The anchor is the project itself."));
                }
                self.visible_project(actor, a)
                    .await
                    .map_err(|_| anchor_invalid("No such project to place it next to."))?;
            }
            Anchor::Last => {}
        }
        self.ports
            .projects
            .move_project(actor.org_id(), id, anchor)
            .await?;
        Ok(self.ports.projects.get_project(actor.org_id(), id).await?)
    }

    /// The project's member grants, with who they name.
    pub async fn project_members(
        &self,
        actor: &PlanActor,
        id: ProjectId,
    ) -> Result<Vec<GrantView>, Error> {
        self.visible_project(actor, id).await?;
        self.members(actor, Holder::Project(id)).await
    }

    /// Grants the project to a person or team ([`Plan::add_member`]).
    pub async fn add_project_member(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        grantee: Grantee,
    ) -> Result<(GrantView, bool), Error> {
        self.visible_project(actor, id).await?;
        self.add_member(actor, Holder::Project(id), grantee).await
    }

    /// The grant a path names (by grant, person or team uuid).
    pub async fn project_member(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        who: Uuid,
    ) -> Result<GrantView, Error> {
        self.visible_project(actor, id).await?;
        self.member(actor, Holder::Project(id), who).await
    }

    /// Takes a grant away ([`Plan::remove_member`]: a members-only project keeps its last).
    pub async fn remove_project_member(
        &self,
        actor: &PlanActor,
        id: ProjectId,
        who: Uuid,
    ) -> Result<(), Error> {
        let project = self.visible_project(actor, id).await?;
        self.remove_member(actor, Holder::Project(id), project.visibility, who)
            .await
    }
}

pub(crate) fn projects_limit() -> Error {
    Error::new(
        ErrorCode::TaskProjectsLimitReached,
        "The free plan has one project. Upgrade to add more.",
    )
    .with_extra("limit", FREE_PROJECTS)
}
