//! In memory: the projects part of [`super::PlanState`] and [`ProjectRepository`].

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError};

use super::InMemoryPlan;
use crate::access::{Anchor, Grant, Grantee, spaced_rank};
use crate::ports::ProjectRepository;
use crate::projects::{ProjectFilter, ProjectPatch, ProjectProgress};
use crate::{GrantId, Project, ProjectId};

#[derive(Debug, Default)]
pub struct ProjectsMem {
    pub projects: Vec<Project>,
    pub grants: Grants<ProjectId>,
}

/// The member grants of projects or of boards, each with its holder, oldest first.
#[derive(Debug)]
pub struct Grants<Id>(pub Vec<(Id, Grant)>);

impl<Id> Default for Grants<Id> {
    fn default() -> Self {
        Grants(Vec::new())
    }
}

impl<Id: Copy + PartialEq> Grants<Id> {
    pub(super) fn of(&self, holder: Id) -> Vec<Grant> {
        self.0
            .iter()
            .filter(|(h, _)| *h == holder)
            .map(|(_, g)| g.clone())
            .collect()
    }

    /// Adds the grant, or answers the one the grantee already has (flag false).
    pub(super) fn add(&mut self, holder: Id, grantee: Grantee, grant: GrantId) -> (Grant, bool) {
        if let Some((_, g)) = self
            .0
            .iter()
            .find(|(h, g)| *h == holder && g.grantee == grantee)
        {
            return (g.clone(), false);
        }
        let g = Grant {
            id: grant,
            grantee,
            role: "member".into(),
            created_at: time::OffsetDateTime::now_utc(),
        };
        self.0.push((holder, g.clone()));
        (g, true)
    }

    pub(super) fn remove(&mut self, holder: Id, grant: GrantId) -> Result<(), RepoError> {
        let before = self.0.len();
        self.0.retain(|(h, g)| !(*h == holder && g.id == grant));
        if self.0.len() == before {
            return Err(RepoError::NotFound);
        }
        Ok(())
    }

    /// Who the grants of the holders that `held` keeps name.
    pub(super) fn grantees(&self, held: impl Fn(Id) -> bool) -> impl Iterator<Item = Grantee> {
        self.0
            .iter()
            .filter(move |(h, _)| held(*h))
            .map(|(_, g)| g.grantee)
    }
}

/// Moves `id` to `anchor` in an organization's order (`rows`: each one's id and rank; ranked,
/// then by id) and renumbers the order. `NotFound` when either is not in it.
pub(super) fn reorder<'a, Id: Copy + Ord + 'a>(
    rows: impl Iterator<Item = (Id, &'a mut i64)>,
    id: Id,
    anchor: Anchor<Id>,
) -> Result<(), RepoError> {
    let mut rows: Vec<_> = rows.collect();
    rows.sort_by_key(|(i, rank)| (**rank, *i));
    let mut ids: Vec<Id> = rows.iter().map(|(i, _)| *i).collect();
    if !ids.contains(&id) {
        return Err(RepoError::NotFound);
    }
    anchor.place(&mut ids, id).ok_or(RepoError::NotFound)?;
    for (i, rank) in rows {
        *rank = spaced_rank(ids.iter().position(|x| *x == i).unwrap_or(0));
    }
    Ok(())
}

impl ProjectsMem {
    fn get(&self, org: OrgId, id: ProjectId) -> Result<&Project, RepoError> {
        self.projects
            .iter()
            .find(|p| p.id == id && p.org_id == org)
            .ok_or(RepoError::NotFound)
    }

    fn name_taken(&self, org: OrgId, name: &str, except: Option<ProjectId>) -> bool {
        self.projects.iter().any(|p| {
            p.org_id == org && Some(p.id) != except && p.name.to_lowercase() == name.to_lowercase()
        })
    }
}

fn name_conflict() -> RepoError {
    RepoError::Conflict {
        constraint: "plan_projects_org_lower_name_key".into(),
    }
}

/// One page of rows already filtered and ordered.
pub(super) fn page_of<T>(rows: Vec<T>, page: PageRequest) -> Page<T> {
    let count = rows.len() as u64;
    let results = rows
        .into_iter()
        .skip(usize::try_from(page.offset).unwrap_or(usize::MAX))
        .take(usize::try_from(page.limit).unwrap_or(usize::MAX))
        .collect();
    Page { count, results }
}

#[async_trait]
impl ProjectRepository for InMemoryPlan {
    async fn create_project(&self, project: &Project) -> Result<Project, RepoError> {
        if !self.people.org_exists(project.org_id) {
            return Err(RepoError::NotFound);
        }
        let mut s = self.lock();
        let m = &mut s.projects;
        if m.name_taken(project.org_id, &project.name, None) {
            return Err(name_conflict());
        }
        let rank = m
            .projects
            .iter()
            .filter(|p| p.org_id == project.org_id)
            .map(|p| p.rank)
            .max()
            .unwrap_or(0)
            + 1024;
        let project = Project {
            rank,
            ..project.clone()
        };
        m.projects.push(project.clone());
        Ok(project)
    }

    async fn get_project(&self, org: OrgId, id: ProjectId) -> Result<Project, RepoError> {
        self.lock().projects.get(org, id).cloned()
    }

    async fn list_projects(
        &self,
        org: OrgId,
        filter: &ProjectFilter,
        page: PageRequest,
    ) -> Result<Page<Project>, RepoError> {
        let s = self.lock();
        let m = &s.projects;
        let mut found: Vec<Project> = m
            .projects
            .iter()
            .filter(|p| p.org_id == org && (filter.include_archived || !p.is_archived))
            .filter(|p| filter.viewer.sees(p.visibility, &m.grants.of(p.id)))
            .filter(|p| {
                filter
                    .search
                    .as_ref()
                    .is_none_or(|q| p.name.to_lowercase().contains(&q.to_lowercase()))
            })
            .filter(|p| {
                filter
                    .start_date
                    .is_none_or(|d| p.target_date.or(p.start_date).is_none_or(|t| t >= d))
            })
            .filter(|p| {
                filter
                    .end_date
                    .is_none_or(|d| p.start_date.or(p.target_date).is_none_or(|t| t <= d))
            })
            .cloned()
            .collect();
        found.sort_by_key(|p| (p.rank, p.id));
        Ok(page_of(found, page))
    }

    async fn count_live_projects(&self, org: OrgId) -> Result<u64, RepoError> {
        Ok(self
            .lock()
            .projects
            .projects
            .iter()
            .filter(|p| p.org_id == org && !p.is_archived)
            .count() as u64)
    }

    async fn update_project(
        &self,
        org: OrgId,
        id: ProjectId,
        patch: &ProjectPatch,
    ) -> Result<Project, RepoError> {
        let mut s = self.lock();
        let m = &mut s.projects;
        m.get(org, id)?;
        if let Some(name) = &patch.name
            && m.name_taken(org, name, Some(id))
        {
            return Err(name_conflict());
        }
        let p = m
            .projects
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or(RepoError::NotFound)?;
        let now = patch.updated_at.unwrap_or(p.updated_at);
        if let Some(v) = &patch.name {
            p.name = v.clone();
        }
        if let Some(v) = &patch.description {
            p.description = v.clone();
        }
        if let Some(v) = patch.visibility {
            p.visibility = v;
        }
        if let Some(v) = patch.lead {
            p.lead = v;
        }
        if let Some(v) = patch.health {
            p.health = v;
        }
        if let Some(v) = patch.start_date {
            p.start_date = v;
        }
        if let Some(v) = patch.target_date {
            p.target_date = v;
        }
        if let Some(v) = patch.is_archived {
            p.is_archived = v;
            p.archived_at = v.then_some(now);
        }
        p.updated_at = now;
        Ok(p.clone())
    }

    async fn board_counts(
        &self,
        org: OrgId,
        ids: &[ProjectId],
    ) -> Result<Vec<(ProjectId, u64)>, RepoError> {
        let s = self.lock();
        Ok(ids
            .iter()
            .map(|id| {
                let n = s
                    .boards
                    .boards
                    .iter()
                    .filter(|b| b.org_id == org && b.project_id == *id && !b.is_archived)
                    .count() as u64;
                (*id, n)
            })
            .filter(|(_, n)| *n > 0)
            .collect())
    }

    async fn progress(
        &self,
        org: OrgId,
        ids: &[ProjectId],
    ) -> Result<Vec<(ProjectId, ProjectProgress)>, RepoError> {
        let s = self.lock();
        Ok(ids
            .iter()
            .filter_map(|id| {
                let boards: Vec<_> = s
                    .boards
                    .boards
                    .iter()
                    .filter(|b| b.org_id == org && b.project_id == *id && !b.is_archived)
                    .map(|b| b.id)
                    .collect();
                let (completed, total) = super::boards::task_tally(&s, &boards);
                (total > 0).then_some((*id, ProjectProgress { completed, total }))
            })
            .collect())
    }

    async fn move_project(
        &self,
        org: OrgId,
        id: ProjectId,
        anchor: Anchor<ProjectId>,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        let rows = s.projects.projects.iter_mut().filter(|p| p.org_id == org);
        reorder(rows.map(|p| (p.id, &mut p.rank)), id, anchor)
    }

    async fn project_grants(&self, org: OrgId, id: ProjectId) -> Result<Vec<Grant>, RepoError> {
        let s = self.lock();
        s.projects.get(org, id)?;
        Ok(s.projects.grants.of(id))
    }

    async fn add_project_grant(
        &self,
        org: OrgId,
        id: ProjectId,
        grantee: Grantee,
        grant: GrantId,
    ) -> Result<(Grant, bool), RepoError> {
        let mut s = self.lock();
        s.projects.get(org, id)?;
        Ok(s.projects.grants.add(id, grantee, grant))
    }

    async fn remove_project_grant(
        &self,
        org: OrgId,
        id: ProjectId,
        grant: GrantId,
    ) -> Result<(), RepoError> {
        let mut s = self.lock();
        s.projects.get(org, id)?;
        s.projects.grants.remove(id, grant)
    }
}
