//! Who sees what: boards and projects are seen by the whole organization (`org`) or by their
//! members (`members`: people granted directly or through a team, and organization admins).
//! Organization and agent keys act for no person: they see `org` boards and projects only.
//! Anything the caller cannot see is 404 `not_found`, never 403.

use teamcomm_kernel::TeamId;
use teamcomm_kernel::{Error, ErrorCode, OrgId, RepoError, UserId};
use teamcomm_org::User;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{
    Board, BoardId, BoardRef, GrantId, Plan, PlanActor, Preview, Project, ProjectId, State, StateId,
};
use crate::{StateCategory, Visibility};

/// Who a member grant names: one person or one team.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grantee {
    User(UserId),
    Team(TeamId),
}

/// A member grant of a members-only board or project.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub id: GrantId,
    pub grantee: Grantee,
    /// Always `member` for now (the wire shows it, nobody may change it).
    pub role: String,
    pub created_at: OffsetDateTime,
}

impl Grant {
    /// Whether a path segment names this grant: its own uuid, or the person's or team's.
    pub fn names(&self, who: uuid::Uuid) -> bool {
        self.id.0 == who
            || match self.grantee {
                Grantee::User(u) => u.0 == who,
                Grantee::Team(t) => t.0 == who,
            }
    }
}

/// A grant with the name of who it names.
#[derive(Debug, Clone, PartialEq)]
pub struct GrantView {
    pub grant: Grant,
    pub name: String,
}

/// A write that may be a dry run: the preview, or what it did.
#[derive(Debug, Clone, PartialEq)]
pub enum DryRunOr<T> {
    Preview(Preview),
    Done(T),
}

/// A reorder whose anchor is wrong (both given, itself, or unknown): 400
/// `reorder_anchor_invalid`, the code the real CLI knows.
pub fn anchor_invalid(why: &str) -> Error {
    Error::new(ErrorCode::ReorderAnchorInvalid, why.to_owned()).with_extra("parameter", "before")
}

pub fn last_grant() -> Error {
    Error::new(
        ErrorCode::LastGrantCannotBeRemoved,
        "This is the last member of a members-only board or project.",
    )
}

/// What holds member grants: a project or a board. Their member rules (who sees a
/// members-only one, an existing grant answered as it is, the last grant kept, the person who
/// makes one members-only kept as a member) are written once, over this; as the store's
/// (`repo/plan/holders`) and the API's (`routes/plan/members`) are on their sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    Project(ProjectId),
    Board(BoardId),
}

impl Holder {
    /// Its grants, oldest first.
    async fn grants(self, plan: &Plan, org: OrgId) -> Result<Vec<Grant>, RepoError> {
        match self {
            Holder::Project(id) => plan.ports.projects.project_grants(org, id).await,
            Holder::Board(id) => plan.ports.boards.board_grants(org, id).await,
        }
    }

    /// Adds a grant, or answers the existing one (flag false).
    async fn add_grant(
        self,
        plan: &Plan,
        org: OrgId,
        grantee: Grantee,
    ) -> Result<(Grant, bool), RepoError> {
        let grant = GrantId::new();
        match self {
            Holder::Project(id) => {
                (plan.ports.projects)
                    .add_project_grant(org, id, grantee, grant)
                    .await
            }
            Holder::Board(id) => {
                (plan.ports.boards)
                    .add_board_grant(org, id, grantee, grant)
                    .await
            }
        }
    }

    async fn remove_grant(self, plan: &Plan, org: OrgId, grant: GrantId) -> Result<(), RepoError> {
        match self {
            Holder::Project(id) => {
                plan.ports
                    .projects
                    .remove_project_grant(org, id, grant)
                    .await
            }
            Holder::Board(id) => plan.ports.boards.remove_board_grant(org, id, grant).await,
        }
    }
}

impl Plan {
    /// Whether the caller sees a holder of this visibility: a members-only one is seen by its
    /// members (people granted, directly or through a team) and organization admins; 404
    /// otherwise.
    async fn check_sees(
        &self,
        actor: &PlanActor,
        holder: Holder,
        visibility: Visibility,
    ) -> Result<(), Error> {
        if visibility == Visibility::Members {
            let grants = holder.grants(self, actor.org_id()).await?;
            if !self.viewer(actor).await?.sees(visibility, &grants) {
                return Err(Error::not_found());
            }
        }
        Ok(())
    }

    /// The grants of a holder the caller sees, with who they name.
    pub(crate) async fn members(
        &self,
        actor: &PlanActor,
        holder: Holder,
    ) -> Result<Vec<GrantView>, Error> {
        let grants = holder.grants(self, actor.org_id()).await?;
        self.grant_views(actor, grants).await
    }

    /// The grant a path names (by grant, person or team uuid).
    pub(crate) async fn member(
        &self,
        actor: &PlanActor,
        holder: Holder,
        who: Uuid,
    ) -> Result<GrantView, Error> {
        self.members(actor, holder)
            .await?
            .into_iter()
            .find(|g| g.grant.names(who))
            .ok_or_else(Error::not_found)
    }

    /// Grants a holder the caller sees to a person or team of the organization; an existing
    /// grant is answered as it is (flag false).
    pub(crate) async fn add_member(
        &self,
        actor: &PlanActor,
        holder: Holder,
        grantee: Grantee,
    ) -> Result<(GrantView, bool), Error> {
        self.check_grantee(actor, grantee).await?;
        let (grant, created) = holder.add_grant(self, actor.org_id(), grantee).await?;
        let view = self.grant_views(actor, vec![grant]).await?.remove(0);
        Ok((view, created))
    }

    /// Takes a grant away; the last one of a members-only holder stays
    /// (`last_grant_cannot_be_removed`).
    pub(crate) async fn remove_member(
        &self,
        actor: &PlanActor,
        holder: Holder,
        visibility: Visibility,
        who: Uuid,
    ) -> Result<(), Error> {
        let org = actor.org_id();
        let grants = holder.grants(self, org).await?;
        let grant = grants
            .iter()
            .find(|g| g.names(who))
            .ok_or_else(Error::not_found)?;
        if visibility == Visibility::Members && grants.len() == 1 {
            return Err(last_grant());
        }
        Ok(holder.remove_grant(self, org, grant.id).await?)
    }

    /// A holder becoming members-only keeps the person who makes it so as a member (an
    /// organization admin sees it anyway; a key acts for no person and adds nobody).
    pub(crate) async fn keep_a_member(
        &self,
        actor: &PlanActor,
        holder: Holder,
    ) -> Result<(), Error> {
        let org = actor.org_id();
        if let Some(me) = actor.person_id()
            && holder.grants(self, org).await?.is_empty()
        {
            holder.add_grant(self, org, Grantee::User(me)).await?;
        }
        Ok(())
    }
}

/// Where a reorder puts a project or board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor<Id> {
    Before(Id),
    After(Id),
    Last,
}

impl<Id: PartialEq + Copy> Anchor<Id> {
    /// Moves `id` within `ids` (an order) to this place; `None` when the anchor is not in it.
    pub fn place(self, ids: &mut Vec<Id>, id: Id) -> Option<()> {
        ids.retain(|i| *i != id);
        let at = match self {
            Anchor::Last => ids.len(),
            Anchor::Before(a) => ids.iter().position(|i| *i == a)?,
            Anchor::After(a) => ids.iter().position(|i| *i == a)? + 1,
        };
        ids.insert(at, id);
        Some(())
    }
}

/// The rank of the `i`-th (0-based) of a renumbered order: gaps of 1024.
pub fn spaced_rank(i: usize) -> i64 {
    (i as i64 + 1) * 1024
}

/// What a caller sees, as lists filter it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Viewer {
    /// Organization admins see everything.
    pub all: bool,
    /// The person, if any (keys without a person see `org` objects only).
    pub user: Option<UserId>,
    /// The teams of the person that some grant of the organization names.
    pub teams: Vec<TeamId>,
}

/// What decides who sees one holder: its visibility and, when it is members-only, its grants.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Audience {
    visibility: Visibility,
    grants: Vec<Grant>,
}

impl Viewer {
    /// Whether an object of this visibility and these grants is seen.
    pub fn sees(&self, visibility: Visibility, grants: &[Grant]) -> bool {
        visibility == Visibility::Org || self.all || grants.iter().any(|g| self.granted(g.grantee))
    }

    pub fn granted(&self, grantee: Grantee) -> bool {
        match grantee {
            Grantee::User(u) => self.user == Some(u),
            Grantee::Team(t) => self.teams.contains(&t),
        }
    }
}

impl Plan {
    /// What the caller sees: everything for an organization admin; for a person, their
    /// grants and those of their teams; for a key without a person, `org` objects only.
    pub async fn viewer(&self, actor: &PlanActor) -> Result<Viewer, Error> {
        let Some(person) = &actor.person else {
            return Ok(Viewer::default());
        };
        let granted = async { Ok(self.ports.boards.granted_teams(actor.org_id()).await?) };
        self.person_viewer(person, granted).await
    }

    /// What `person` sees: everything for an organization admin; else their grants and those
    /// of their teams among `teams` (teams some grant names: no other team can make them see
    /// anything), which is awaited, so read, only for a person who is not an admin.
    async fn person_viewer(
        &self,
        person: &User,
        teams: impl Future<Output = Result<Vec<TeamId>, Error>>,
    ) -> Result<Viewer, Error> {
        if person.role.is_admin() {
            return Ok(Viewer {
                all: true,
                user: Some(person.id),
                teams: Vec::new(),
            });
        }
        let mut theirs = Vec::new();
        for team in teams.await? {
            if self.ports.teams.is_member(team, person.id).await? {
                theirs.push(team);
            }
        }
        Ok(Viewer {
            all: false,
            user: Some(person.id),
            teams: theirs,
        })
    }

    /// Who sees the board, read once to decide it for any number of people
    /// ([`Self::person_sees`]): its grants, when it is members-only.
    pub(crate) async fn board_audience(&self, board: &Board) -> Result<Audience, Error> {
        let visibility = board.visibility;
        let grants = match visibility {
            Visibility::Members => Holder::Board(board.id).grants(self, board.org_id).await?,
            Visibility::Org => Vec::new(),
        };
        Ok(Audience { visibility, grants })
    }

    /// Whether `person` sees the audience's holder. Their teams are looked up among the teams
    /// its grants name only, one read per team: the team port has no lookup for many people
    /// or teams at once.
    pub(crate) async fn person_sees(
        &self,
        audience: &Audience,
        person: &User,
    ) -> Result<bool, Error> {
        let named = audience
            .grants
            .iter()
            .filter_map(|g| match g.grantee {
                Grantee::Team(team) => Some(team),
                Grantee::User(_) => None,
            })
            .collect();
        let viewer = self.person_viewer(person, async { Ok(named) }).await?;
        Ok(viewer.sees(audience.visibility, &audience.grants))
    }

    /// Names the grantees of these grants (a person's full name, a team's name).
    pub async fn grant_views(
        &self,
        actor: &PlanActor,
        grants: Vec<Grant>,
    ) -> Result<Vec<GrantView>, Error> {
        let org = actor.org_id();
        let mut views = Vec::with_capacity(grants.len());
        for grant in grants {
            let name = match grant.grantee {
                Grantee::User(u) => match self.ports.people.get_user(org, u).await {
                    Ok(u) => u.full_name(),
                    Err(RepoError::NotFound) => String::new(),
                    Err(e) => return Err(e.into()),
                },
                Grantee::Team(t) => match self.ports.teams.get_team(org, t).await {
                    Ok(t) => t.name,
                    Err(RepoError::NotFound) => String::new(),
                    Err(e) => return Err(e.into()),
                },
            };
            views.push(GrantView { grant, name });
        }
        Ok(views)
    }

    /// A person (active) or team of the organization (`invalid_field` otherwise).
    pub(crate) async fn check_grantee(
        &self,
        actor: &PlanActor,
        grantee: Grantee,
    ) -> Result<(), Error> {
        match grantee {
            Grantee::User(u) => self.check_person(actor, u, "user_uuid").await,
            Grantee::Team(t) => match self.ports.teams.get_team(actor.org_id(), t).await {
                Ok(_) => Ok(()),
                Err(RepoError::NotFound) => Err(Error::invalid_field(
                    "team_uuid",
                    "No such team in this organization.",
                )),
                Err(e) => Err(e.into()),
            },
        }
    }

    /// The board named by uuid or by any key it ever had, if the caller sees it (404
    /// otherwise). Archived boards are returned too.
    pub async fn visible_board(&self, actor: &PlanActor, board: &BoardRef) -> Result<Board, Error> {
        let org = actor.org_id();
        let board = match board {
            BoardRef::Id(id) => self.ports.boards.get_board(org, *id).await?,
            BoardRef::Key(key) => self.ports.boards.board_by_key(org, key).await?,
        };
        self.check_sees(actor, Holder::Board(board.id), board.visibility)
            .await?;
        Ok(board)
    }

    /// The project, if the caller sees it (404 otherwise). Archived projects are returned too.
    pub async fn visible_project(
        &self,
        actor: &PlanActor,
        id: ProjectId,
    ) -> Result<Project, Error> {
        let project = self.ports.projects.get_project(actor.org_id(), id).await?;
        self.check_sees(actor, Holder::Project(id), project.visibility)
            .await?;
        Ok(project)
    }

    /// The board's live columns, by position.
    pub async fn live_states(&self, board: &Board) -> Result<Vec<State>, Error> {
        let mut states = self
            .ports
            .boards
            .board_states(board.org_id, board.id)
            .await?;
        states.retain(|s| !s.is_archived);
        states.sort_by_key(|s| s.position);
        Ok(states)
    }

    /// A column of the board (archived ones too); 404 when it is not the board's.
    pub async fn board_state(&self, board: &Board, id: StateId) -> Result<State, Error> {
        self.ports
            .boards
            .board_states(board.org_id, board.id)
            .await?
            .into_iter()
            .find(|s| s.id == id)
            .ok_or_else(Error::not_found)
    }

    /// The board's default column for new tasks ([`default_column`]).
    pub async fn default_state(&self, board: &Board) -> Result<State, Error> {
        let states = self
            .ports
            .boards
            .board_states(board.org_id, board.id)
            .await?;
        default_column(&states)
    }
}

/// The default column for new tasks among a board's columns: the live one marked default,
/// else the first live `todo`, else the first live column (by position);
/// `board_not_initialized` when it has none.
pub(crate) fn default_column(columns: &[State]) -> Result<State, Error> {
    let mut live: Vec<&State> = columns.iter().filter(|s| !s.is_archived).collect();
    live.sort_by_key(|s| s.position);
    live.iter()
        .find(|s| s.is_default)
        .or_else(|| live.iter().find(|s| s.category == StateCategory::Todo))
        .or_else(|| live.first())
        .map(|s| (*s).clone())
        .ok_or_else(crate::states::board_not_initialized)
}

#[cfg(test)]
mod tests {
    use teamcomm_kernel::ErrorCode;
    use teamcomm_org::Role;

    use crate::boards::{BoardPatch, NewBoard};
    use crate::projects::NewProject;
    use crate::{BoardRef, PlanScopes, StateCategory, Visibility};

    #[tokio::test]
    async fn a_new_board_has_the_default_columns() {
        let w = crate::testing::World::new().await;
        let p = w
            .plan
            .create_project(&w.admin, NewProject::named("Core"))
            .await
            .unwrap();
        let b = w
            .plan
            .create_board(
                &w.admin,
                NewBoard {
                    name: "Engineering".into(),
                    project: p.id,
                    key: "eng".into(),
                },
            )
            .await
            .unwrap();
        assert_eq!(b.key, "ENG");
        let states = w.plan.live_states(&b).await.unwrap();
        let names: Vec<_> = states
            .iter()
            .map(|s| (s.name.as_str(), s.position))
            .collect();
        assert_eq!(
            names,
            [
                ("Backlog", 1),
                ("Todo", 2),
                ("In Progress", 3),
                ("Done", 4),
                ("Canceled", 5)
            ]
        );
        let default = w.plan.default_state(&b).await.unwrap();
        assert_eq!(default.category, StateCategory::Todo);
        assert_eq!(
            w.plan.board_state(&b, states[3].id).await.unwrap().category,
            StateCategory::Done
        );
        assert_eq!(
            w.plan
                .board_state(&b, crate::StateId::new())
                .await
                .unwrap_err()
                .code(),
            ErrorCode::NotFound
        );
    }

    #[tokio::test]
    async fn members_only_boards_are_hidden_from_others() {
        let w = crate::testing::World::new().await;
        let p = w
            .plan
            .create_project(&w.admin, NewProject::named("Core"))
            .await
            .unwrap();
        let b = w
            .plan
            .create_board(
                &w.admin,
                NewBoard {
                    name: "Secret".into(),
                    project: p.id,
                    key: "SEC".into(),
                },
            )
            .await
            .unwrap();
        let by_key = BoardRef::Key("SEC".into());
        let key = w.key(PlanScopes::ALL);
        assert_eq!(
            w.plan.visible_board(&w.member, &by_key).await.unwrap().id,
            b.id
        );
        assert!(
            w.plan
                .visible_board(&key, &BoardRef::Id(b.id))
                .await
                .is_ok()
        );
        w.mem
            .lock()
            .boards
            .boards
            .iter_mut()
            .for_each(|x| x.visibility = Visibility::Members);
        for who in [&w.member, &key] {
            let e = w.plan.visible_board(who, &by_key).await.unwrap_err();
            assert_eq!(e.code(), ErrorCode::NotFound);
        }
        assert!(w.plan.visible_board(&w.admin, &by_key).await.is_ok());
        let other = w.person(Role::Member, "x@example.com").await;
        assert!(w.plan.visible_board(&other, &by_key).await.is_err());
        let _ = BoardPatch::default();
    }

    #[tokio::test]
    async fn unknown_boards_and_projects_are_not_found() {
        let w = crate::testing::World::new().await;
        let e = w
            .plan
            .visible_board(&w.member, &BoardRef::Key("NOPE".into()))
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        let e = w
            .plan
            .visible_project(&w.member, crate::ProjectId::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
    }
}
