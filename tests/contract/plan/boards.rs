//! Plan port contract: projects and boards (keys current and retired, grants, visits,
//! columns, reorders). Every read and write is scoped by the organization. Grants meet one
//! contract whatever holds them.

use teamcomm_kernel::{OrgId, PageRequest, RepoError, TeamId, UserId};
use teamcomm_plan::access::{Anchor, Grant, Grantee, Viewer};
use teamcomm_plan::actor::Executor;
use teamcomm_plan::boards::{BoardFilter, BoardPatch};
use teamcomm_plan::ports::MigrateTo;
use teamcomm_plan::projects::{ProjectFilter, ProjectPatch};
use teamcomm_plan::states::default_columns;
use teamcomm_plan::{
    Board, BoardId, EstimateScale, GrantId, Project, ProjectHealth, ProjectId, Visibility,
};
use time::OffsetDateTime;
use time::macros::datetime;

use crate::ports::Ports;

contract!(
    project_names_are_unique_in_any_case,
    projects_are_listed_as_their_viewer_sees_them,
    projects_are_reordered,
    boards_keep_their_retired_keys,
    boards_are_listed_as_their_viewer_sees_them,
    columns_are_written_and_read_by_position,
    grants_of_projects_and_boards,
    visits_are_kept_latest_first,
    other_organizations_see_nothing,
);

const T0: OffsetDateTime = datetime!(2026-11-26 10:00 UTC);
const ALL: PageRequest = PageRequest {
    offset: 0,
    limit: 100,
};

fn project(org: OrgId, name: &str, visibility: Visibility) -> Project {
    Project {
        id: ProjectId::new(),
        org_id: org,
        name: name.to_owned(),
        description: String::new(),
        visibility,
        lead: None,
        health: ProjectHealth::NotSet,
        start_date: None,
        target_date: None,
        rank: 0,
        is_archived: false,
        archived_at: None,
        created_by: None,
        created_at: T0,
        updated_at: T0,
    }
}

fn board(project: &Project, key: &str) -> Board {
    Board {
        id: BoardId::new(),
        org_id: project.org_id,
        project_id: project.id,
        name: format!("Board {key}"),
        key: key.to_owned(),
        visibility: Visibility::Org,
        estimate_scale: EstimateScale::None,
        archive_after_days: None,
        rank: 0,
        is_archived: false,
        archived_at: None,
        created_by: None,
        created_at: T0,
        updated_at: T0,
    }
}

fn conflict(e: RepoError) -> String {
    match e {
        RepoError::Conflict { constraint } => constraint,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

fn viewer(user: Option<UserId>, teams: Vec<TeamId>) -> Viewer {
    Viewer {
        all: false,
        user,
        teams,
    }
}

async fn make_project(p: &Ports, org: OrgId, name: &str) -> Project {
    p.plan
        .projects
        .create_project(&project(org, name, Visibility::Org))
        .await
        .unwrap()
}

async fn make_board(p: &Ports, project: &Project, key: &str) -> Board {
    let b = board(project, key);
    p.plan
        .boards
        .create_board(&b, &default_columns(&b))
        .await
        .unwrap()
}

async fn project_names_are_unique_in_any_case(p: Ports) {
    let org = p.org("Projects").await;
    let repo = &p.plan.projects;
    let core = make_project(&p, org.id, "Core").await;
    let e = repo
        .create_project(&project(org.id, "cORE", Visibility::Org))
        .await
        .unwrap_err();
    assert!(conflict(e).contains("lower_name"));
    // Archived projects keep their names.
    let patch = ProjectPatch {
        is_archived: Some(true),
        updated_at: Some(T0),
        ..ProjectPatch::default()
    };
    let archived = repo.update_project(org.id, core.id, &patch).await.unwrap();
    assert!(archived.is_archived && archived.archived_at.is_some());
    assert!(
        repo.create_project(&project(org.id, "core", Visibility::Org))
            .await
            .is_err()
    );
    assert_eq!(repo.count_live_projects(org.id).await.unwrap(), 0);
    let other = make_project(&p, org.id, "Other").await;
    let rename = ProjectPatch {
        name: Some("CORE".into()),
        ..ProjectPatch::default()
    };
    assert!(
        conflict(
            repo.update_project(org.id, other.id, &rename)
                .await
                .unwrap_err()
        )
        .contains("lower_name")
    );
    // Another organization may use the name.
    let elsewhere = p.org("Elsewhere").await;
    assert!(
        repo.create_project(&project(elsewhere.id, "Core", Visibility::Org))
            .await
            .is_ok()
    );
}

async fn projects_are_listed_as_their_viewer_sees_them(p: Ports) {
    let org = p.org("Listing").await;
    let alice = p.user(&org, "alice@example.com", "Alice", "A").await;
    let bob = p.user(&org, "bob@example.com", "Bob", "B").await;
    let repo = &p.plan.projects;
    let open = make_project(&p, org.id, "Open roadmap").await;
    let secret = repo
        .create_project(&project(org.id, "Secret roadmap", Visibility::Members))
        .await
        .unwrap();
    repo.add_project_grant(org.id, secret.id, Grantee::User(alice.id), GrantId::new())
        .await
        .unwrap();
    let names = |page: teamcomm_kernel::Page<Project>| {
        page.results.into_iter().map(|p| p.name).collect::<Vec<_>>()
    };
    let as_of = |v: Viewer| ProjectFilter {
        viewer: v,
        ..ProjectFilter::default()
    };
    let seen = repo
        .list_projects(org.id, &as_of(viewer(Some(alice.id), vec![])), ALL)
        .await
        .unwrap();
    assert_eq!(names(seen), ["Open roadmap", "Secret roadmap"]);
    let seen = repo
        .list_projects(org.id, &as_of(viewer(Some(bob.id), vec![])), ALL)
        .await
        .unwrap();
    assert_eq!(seen.count, 1);
    assert_eq!(names(seen), ["Open roadmap"]);
    let key = repo
        .list_projects(org.id, &as_of(viewer(None, vec![])), ALL)
        .await
        .unwrap();
    assert_eq!(names(key), ["Open roadmap"]);
    let admin = Viewer {
        all: true,
        ..Viewer::default()
    };
    let mut filter = as_of(admin);
    filter.search = Some("SECRET".into());
    assert_eq!(
        names(repo.list_projects(org.id, &filter, ALL).await.unwrap()),
        ["Secret roadmap"]
    );
    // Dates: a project spanning March reaches a window starting in March.
    let span = ProjectPatch {
        start_date: Some(Some(time::macros::date!(2026 - 03 - 01))),
        target_date: Some(Some(time::macros::date!(2026 - 03 - 31))),
        ..ProjectPatch::default()
    };
    repo.update_project(org.id, open.id, &span).await.unwrap();
    let mut filter = as_of(viewer(None, vec![]));
    filter.start_date = Some(time::macros::date!(2026 - 04 - 01));
    assert_eq!(
        repo.list_projects(org.id, &filter, ALL)
            .await
            .unwrap()
            .count,
        0
    );
    filter.start_date = Some(time::macros::date!(2026 - 03 - 15));
    assert_eq!(
        repo.list_projects(org.id, &filter, ALL)
            .await
            .unwrap()
            .count,
        1
    );
}

async fn projects_are_reordered(p: Ports) {
    let org = p.org("Order").await;
    let repo = &p.plan.projects;
    let mut ids = Vec::new();
    for name in ["A", "B", "C"] {
        ids.push(
            repo.create_project(&project(org.id, name, Visibility::Org))
                .await
                .unwrap()
                .id,
        );
    }
    let order = || async {
        let all = Viewer {
            all: true,
            ..Viewer::default()
        };
        let filter = ProjectFilter {
            viewer: all,
            ..ProjectFilter::default()
        };
        repo.list_projects(org.id, &filter, ALL)
            .await
            .unwrap()
            .results
            .into_iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(order().await, ["A", "B", "C"]);
    repo.move_project(org.id, ids[2], Anchor::Before(ids[0]))
        .await
        .unwrap();
    assert_eq!(order().await, ["C", "A", "B"]);
    repo.move_project(org.id, ids[2], Anchor::After(ids[1]))
        .await
        .unwrap();
    assert_eq!(order().await, ["A", "B", "C"]);
    repo.move_project(org.id, ids[0], Anchor::Last)
        .await
        .unwrap();
    assert_eq!(order().await, ["B", "C", "A"]);
    assert!(matches!(
        repo.move_project(org.id, ids[0], Anchor::Before(ProjectId::new()))
            .await,
        Err(RepoError::NotFound)
    ));
}

async fn boards_keep_their_retired_keys(p: Ports) {
    let org = p.org("Keys").await;
    let proj = make_project(&p, org.id, "Core").await;
    let repo = &p.plan.boards;
    let eng = make_board(&p, &proj, "ENG").await;
    let e = repo
        .create_board(&board(&proj, "ENG"), &[])
        .await
        .unwrap_err();
    assert!(conflict(e).contains("board_keys"));
    let rekey = BoardPatch {
        key: Some("CORE".into()),
        updated_at: Some(T0),
        ..BoardPatch::default()
    };
    let rekeyed = repo.update_board(org.id, eng.id, &rekey).await.unwrap();
    assert_eq!(rekeyed.key, "CORE");
    for key in ["ENG", "CORE"] {
        assert_eq!(repo.board_by_key(org.id, key).await.unwrap().id, eng.id);
    }
    // The retired key stays reserved, for new boards and for re-keys.
    assert!(repo.create_board(&board(&proj, "ENG"), &[]).await.is_err());
    let other = make_board(&p, &proj, "OPS").await;
    let steal = BoardPatch {
        key: Some("ENG".into()),
        ..BoardPatch::default()
    };
    assert!(
        conflict(
            repo.update_board(org.id, other.id, &steal)
                .await
                .unwrap_err()
        )
        .contains("board_keys")
    );
    // Its own retired key comes back.
    let back = repo.update_board(org.id, eng.id, &steal).await.unwrap();
    assert_eq!(back.key, "ENG");
    assert_eq!(repo.board_by_key(org.id, "CORE").await.unwrap().id, eng.id);
    assert!(matches!(
        repo.board_by_key(org.id, "NOPE").await,
        Err(RepoError::NotFound)
    ));
    // Moving to another project of the organization.
    let elsewhere = make_project(&p, org.id, "Elsewhere").await;
    let moved = BoardPatch {
        project: Some(elsewhere.id),
        ..BoardPatch::default()
    };
    assert_eq!(
        repo.update_board(org.id, eng.id, &moved)
            .await
            .unwrap()
            .project_id,
        elsewhere.id
    );
    let counts = p
        .plan
        .projects
        .board_counts(org.id, &[proj.id, elsewhere.id])
        .await
        .unwrap();
    let mut counts = counts;
    counts.sort_by_key(|(id, _)| *id == elsewhere.id);
    assert_eq!(counts, [(proj.id, 1), (elsewhere.id, 1)]);
}

async fn boards_are_listed_as_their_viewer_sees_them(p: Ports) {
    let org = p.org("Board list").await;
    let alice = p.user(&org, "alice@example.com", "Alice", "A").await;
    let team = p
        .teams
        .create_team(org.id, TeamId::new(), "Team", &[alice.id], &[])
        .await
        .unwrap();
    let proj = make_project(&p, org.id, "Core").await;
    let repo = &p.plan.boards;
    let open = make_board(&p, &proj, "OPEN").await;
    let secret = make_board(&p, &proj, "SEC").await;
    let private = BoardPatch {
        visibility: Some(Visibility::Members),
        ..BoardPatch::default()
    };
    repo.update_board(org.id, secret.id, &private)
        .await
        .unwrap();
    repo.add_board_grant(org.id, secret.id, Grantee::Team(team.id), GrantId::new())
        .await
        .unwrap();
    assert_eq!(repo.granted_teams(org.id).await.unwrap(), [team.id]);
    let keys = |page: teamcomm_kernel::Page<Board>| {
        page.results.into_iter().map(|b| b.key).collect::<Vec<_>>()
    };
    let as_of = |v: Viewer| BoardFilter {
        viewer: v,
        ..BoardFilter::default()
    };
    let via_team = as_of(viewer(Some(alice.id), vec![team.id]));
    assert_eq!(
        keys(repo.list_boards(org.id, &via_team, ALL).await.unwrap()),
        ["OPEN", "SEC"]
    );
    let without = as_of(viewer(Some(alice.id), vec![]));
    assert_eq!(
        keys(repo.list_boards(org.id, &without, ALL).await.unwrap()),
        ["OPEN"]
    );
    let mut search = via_team.clone();
    search.search = Some("sec".into());
    assert_eq!(
        keys(repo.list_boards(org.id, &search, ALL).await.unwrap()),
        ["SEC"]
    );
    // Archived boards are listed only when asked.
    let n = repo
        .archive_board(org.id, open.id, &Executor::default(), T0)
        .await
        .unwrap();
    assert_eq!(n, 0);
    assert_eq!(repo.count_live_boards(org.id).await.unwrap(), 1);
    assert_eq!(
        keys(repo.list_boards(org.id, &via_team, ALL).await.unwrap()),
        ["SEC"]
    );
    let mut archived_too = via_team.clone();
    archived_too.include_archived = true;
    assert_eq!(
        repo.list_boards(org.id, &archived_too, ALL)
            .await
            .unwrap()
            .count,
        2
    );
    repo.restore_board(org.id, open.id).await.unwrap();
    assert!(!repo.get_board(org.id, open.id).await.unwrap().is_archived);
    // Reorder, moving to another project.
    let other = make_project(&p, org.id, "Other").await;
    repo.move_board(org.id, secret.id, Anchor::Before(open.id), Some(other.id))
        .await
        .unwrap();
    let all = as_of(Viewer {
        all: true,
        ..Viewer::default()
    });
    assert_eq!(
        keys(repo.list_boards(org.id, &all, ALL).await.unwrap()),
        ["SEC", "OPEN"]
    );
    assert_eq!(
        repo.get_board(org.id, secret.id).await.unwrap().project_id,
        other.id
    );
}

async fn columns_are_written_and_read_by_position(p: Ports) {
    let org = p.org("Columns").await;
    let proj = make_project(&p, org.id, "Core").await;
    let b = make_board(&p, &proj, "ENG").await;
    let repo = &p.plan.boards;
    let states = repo.board_states(org.id, b.id).await.unwrap();
    let names: Vec<_> = states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["Backlog", "Todo", "In Progress", "Done", "Canceled"]
    );
    let read: Vec<_> = states
        .iter()
        .map(|s| (s.category, s.position, s.is_default, s.is_archived))
        .collect();
    let written: Vec<_> = default_columns(&b)
        .iter()
        .map(|s| (s.category, s.position, s.is_default, s.is_archived))
        .collect();
    assert_eq!(read, written);
    // Swap the first two, archive the last.
    let mut changed = states.clone();
    changed[0].position = 2;
    changed[1].position = 1;
    changed[1].color = Some("#ff0000".into());
    changed[4].is_archived = true;
    changed[4].position = 9;
    repo.put_states(org.id, &changed).await.unwrap();
    let back = repo.board_states(org.id, b.id).await.unwrap();
    let order: Vec<_> = back
        .iter()
        .map(|s| (s.name.as_str(), s.is_archived))
        .collect();
    assert_eq!(
        order,
        [
            ("Todo", false),
            ("Backlog", false),
            ("In Progress", false),
            ("Done", false),
            ("Canceled", true)
        ]
    );
    assert_eq!(back[0].color.as_deref(), Some("#ff0000"));
    assert_eq!(repo.count_state_tasks(org.id, back[0].id).await.unwrap(), 0);
    let moved = repo
        .archive_state(
            org.id,
            &back,
            back[1].id,
            Some(MigrateTo {
                state: back[0].id,
                limit: 5_000,
            }),
            &Executor::default(),
            T0,
        )
        .await
        .unwrap();
    assert_eq!(moved, 0);
}

async fn visits_are_kept_latest_first(p: Ports) {
    let org = p.org("Visits").await;
    let alice = p.user(&org, "alice@example.com", "Alice", "A").await;
    let proj = make_project(&p, org.id, "Core").await;
    let repo = &p.plan.boards;
    let a = make_board(&p, &proj, "AAA").await;
    let b = make_board(&p, &proj, "BBB").await;
    repo.record_visit(org.id, alice.id, a.id, T0).await.unwrap();
    repo.record_visit(org.id, alice.id, b.id, T0 + time::Duration::minutes(1))
        .await
        .unwrap();
    repo.record_visit(org.id, alice.id, a.id, T0 + time::Duration::minutes(2))
        .await
        .unwrap();
    let visits = repo.visits(org.id, alice.id, 10).await.unwrap();
    assert_eq!(
        visits,
        [
            (a.id, T0 + time::Duration::minutes(2)),
            (b.id, T0 + time::Duration::minutes(1))
        ]
    );
    assert_eq!(repo.visits(org.id, alice.id, 1).await.unwrap().len(), 1);
    assert_eq!(repo.count_board_tasks(org.id, a.id).await.unwrap(), 0);
}

async fn other_organizations_see_nothing(p: Ports) {
    let org = p.org("Mine").await;
    let other = p.org("Theirs").await;
    let proj = make_project(&p, org.id, "Core").await;
    let b = make_board(&p, &proj, "ENG").await;
    let not_found = |r: Result<_, RepoError>| matches!(r, Err(RepoError::NotFound));
    assert!(not_found(
        p.plan
            .projects
            .get_project(other.id, proj.id)
            .await
            .map(|_| ())
    ));
    assert!(not_found(
        p.plan.boards.get_board(other.id, b.id).await.map(|_| ())
    ));
    assert!(not_found(
        p.plan
            .boards
            .board_by_key(other.id, "ENG")
            .await
            .map(|_| ())
    ));
    assert!(not_found(
        p.plan.boards.board_states(other.id, b.id).await.map(|_| ())
    ));
    assert!(not_found(
        p.plan
            .boards
            .update_board(other.id, b.id, &BoardPatch::default())
            .await
            .map(|_| ())
    ));
    assert!(not_found(
        p.plan
            .projects
            .update_project(other.id, proj.id, &ProjectPatch::default())
            .await
            .map(|_| ())
    ));
    // A board of another organization's project is refused.
    let mut foreign = board(&proj, "THEIRS");
    foreign.org_id = other.id;
    assert!(not_found(
        p.plan.boards.create_board(&foreign, &[]).await.map(|_| ())
    ));
    // The key is free in the other organization.
    let theirs = make_project(&p, other.id, "Core").await;
    assert!(
        p.plan
            .boards
            .create_board(&board(&theirs, "ENG"), &[])
            .await
            .is_ok()
    );
}

/// A project or a board, for the grant doors both have.
#[derive(Debug, Clone, Copy)]
enum Holder {
    Project(ProjectId),
    Board(BoardId),
}

impl Holder {
    async fn grants(self, p: &Ports, org: OrgId) -> Result<Vec<Grant>, RepoError> {
        match self {
            Holder::Project(id) => p.plan.projects.project_grants(org, id).await,
            Holder::Board(id) => p.plan.boards.board_grants(org, id).await,
        }
    }

    async fn add(self, p: &Ports, org: OrgId, who: Grantee) -> Result<(Grant, bool), RepoError> {
        let grant = GrantId::new();
        match self {
            Holder::Project(id) => p.plan.projects.add_project_grant(org, id, who, grant).await,
            Holder::Board(id) => p.plan.boards.add_board_grant(org, id, who, grant).await,
        }
    }

    async fn remove(self, p: &Ports, org: OrgId, grant: GrantId) -> Result<(), RepoError> {
        match self {
            Holder::Project(id) => p.plan.projects.remove_project_grant(org, id, grant).await,
            Holder::Board(id) => p.plan.boards.remove_board_grant(org, id, grant).await,
        }
    }
}

async fn grants_of_projects_and_boards(p: Ports) {
    let org = p.org("Grants").await;
    let other = p.org("Not theirs").await;
    let alice = p.user(&org, "alice@example.com", "Alice", "A").await;
    let team = p
        .teams
        .create_team(org.id, TeamId::new(), "Team", &[alice.id], &[])
        .await
        .unwrap();
    let proj = make_project(&p, org.id, "Core").await;
    let board = make_board(&p, &proj, "ENG").await;
    let bystanders = [
        Holder::Project(make_project(&p, org.id, "Bystander").await.id),
        Holder::Board(make_board(&p, &proj, "OPS").await.id),
    ];
    let not_found = |r: Result<(), RepoError>| matches!(r, Err(RepoError::NotFound));
    for (holder, bystander) in [Holder::Project(proj.id), Holder::Board(board.id)]
        .into_iter()
        .zip(bystanders)
    {
        let (person, created) = holder
            .add(&p, org.id, Grantee::User(alice.id))
            .await
            .unwrap();
        assert!(created, "{holder:?}");
        assert_eq!(
            (person.grantee, person.role.as_str()),
            (Grantee::User(alice.id), "member")
        );
        // Again: the grant the person has.
        let (again, created) = holder
            .add(&p, org.id, Grantee::User(alice.id))
            .await
            .unwrap();
        assert!(!created, "{holder:?}");
        assert_eq!(again.id, person.id);
        let (by_team, created) = holder
            .add(&p, org.id, Grantee::Team(team.id))
            .await
            .unwrap();
        assert!(created, "{holder:?}");
        // Oldest first, and only this holder's.
        let ids = |grants: Vec<Grant>| grants.into_iter().map(|g| g.id).collect::<Vec<_>>();
        assert_eq!(
            ids(holder.grants(&p, org.id).await.unwrap()),
            [person.id, by_team.id]
        );
        assert!(bystander.grants(&p, org.id).await.unwrap().is_empty());
        // Another organization reaches none of it.
        assert!(not_found(holder.grants(&p, other.id).await.map(|_| ())));
        assert!(not_found(
            holder
                .add(&p, other.id, Grantee::User(alice.id))
                .await
                .map(|_| ())
        ));
        assert!(not_found(holder.remove(&p, other.id, person.id).await));
        holder.remove(&p, org.id, person.id).await.unwrap();
        assert!(not_found(holder.remove(&p, org.id, person.id).await));
        assert_eq!(ids(holder.grants(&p, org.id).await.unwrap()), [by_team.id]);
    }
    // An unknown holder has no grants to read or give.
    for holder in [
        Holder::Project(ProjectId::new()),
        Holder::Board(BoardId::new()),
    ] {
        assert!(not_found(holder.grants(&p, org.id).await.map(|_| ())));
        assert!(not_found(
            holder
                .add(&p, org.id, Grantee::User(alice.id))
                .await
                .map(|_| ())
        ));
    }
}
