//! Projects: boards belong to one. Names are unique in the organization (live and archived
//! alike, ignoring case); the free plan has one live project.

use teamcomm_kernel::{Error, ErrorCode, RepoError, UserId};
use teamcomm_org::PlanTier;
use time::{Date, OffsetDateTime};

use crate::access::Viewer;
use crate::{Plan, PlanActor, Project, ProjectHealth, ProjectId, Visibility};

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
            return Err(Error::new(
                ErrorCode::TaskProjectsLimitReached,
                "The free plan has one project. Upgrade to add more.",
            )
            .with_extra("limit", FREE_PROJECTS));
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
        self.ports
            .projects
            .create_project(&project)
            .await
            .map_err(name_conflict)
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
