//! `TeamRepository`: teams and memberships.

use teamcomm_kernel::{Event, EventType, OrgId, PageRequest, TeamId, UserId};
use teamcomm_org::{Organization, Team, TeamFilter, TeamRole, User};

use crate::ports::{Ports, assert_not_found, assert_refused_by_check, event};

contract!(
    a_team_reads_back_with_its_in_organization_members,
    teams_are_scoped_by_organization,
    teams_list_by_name_bytewise_with_counts_and_pages,
    team_filters_hide_archived_and_match_members_and_names,
    team_updates_change_only_the_given_fields,
    memberships_are_added_once_and_re_roled,
    members_list_by_name_with_counts_and_pages,
    removing_a_member_takes_them_out,
    memberships_refuse_unknown_teams_and_people,
    memberships_never_cross_organizations,
    team_names_outside_the_stored_bounds_are_refused,
    a_new_team_records_its_members_events_with_it,
    a_membership_put_records_its_event_only_when_it_adds,
    a_removal_records_its_event_only_when_it_removes,
);

/// An event for a port call that may record that someone joined.
fn joined(org: OrgId) -> Event {
    event(org, EventType::OrganizationTeamUserAdded, "joined")
}

/// An event for a port call that may record that someone left.
fn left(org: OrgId) -> Event {
    event(org, EventType::OrganizationTeamUserRemoved, "left")
}

/// The payloads of `events`, as the outbox holds them.
fn payloads(events: &[&Event]) -> Vec<serde_json::Value> {
    events.iter().map(|e| e.payload()).collect()
}

struct Fixture {
    org: Organization,
    ann: User,
    bob: User,
    cy: User,
}

async fn fixture(p: &Ports) -> Fixture {
    let org = p.org("Acme").await;
    Fixture {
        ann: p.user(&org, "ann@acme.test", "Ann", "Adams").await,
        bob: p.user(&org, "bob@acme.test", "Bob", "Brown").await,
        cy: p.user(&org, "cy@acme.test", "Cy", "Clark").await,
        org,
    }
}

fn names(teams: &[Team]) -> Vec<&str> {
    teams.iter().map(|t| t.name.as_str()).collect()
}

async fn list(
    p: &Ports,
    org: &Organization,
    filter: TeamFilter,
    offset: u64,
    limit: u64,
) -> (u64, Vec<String>) {
    let page = p
        .teams
        .list_teams(org.id, &filter, PageRequest { offset, limit })
        .await
        .unwrap();
    (
        page.count,
        names(&page.results)
            .into_iter()
            .map(str::to_owned)
            .collect(),
    )
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

async fn a_team_reads_back_with_its_in_organization_members(p: Ports) {
    let f = fixture(&p).await;
    let other = p.org("Other").await;
    let stranger = p.user(&other, "sam@other.test", "Sam", "").await;
    let members = [f.ann.id, f.bob.id, f.ann.id, stranger.id, UserId::new()];
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &members, &[])
        .await
        .unwrap();
    assert_eq!((team.org_id, team.name.as_str()), (f.org.id, "Core"));
    assert!(team.active && !team.is_default);
    assert_eq!(
        team.members_count, 2,
        "outsiders and repeats are not members"
    );
    assert_eq!(p.teams.get_team(f.org.id, team.id).await.unwrap(), team);
    assert!(p.teams.is_member(team.id, f.ann.id).await.unwrap());
    assert!(!p.teams.is_member(team.id, f.cy.id).await.unwrap());
    assert!(!p.teams.is_member(team.id, stranger.id).await.unwrap());
    let empty = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Empty", &[], &[])
        .await
        .unwrap();
    assert_eq!(empty.members_count, 0);
}

async fn teams_are_scoped_by_organization(p: Ports) {
    let f = fixture(&p).await;
    let other = p.org("Other").await;
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &[f.ann.id], &[])
        .await
        .unwrap();
    p.teams
        .create_team(other.id, TeamId::new(), "Theirs", &[], &[])
        .await
        .unwrap();
    assert_not_found(p.teams.get_team(other.id, team.id).await);
    assert_not_found(p.teams.get_team(f.org.id, TeamId::new()).await);
    assert_not_found(
        p.teams
            .update_team(other.id, team.id, Some("Taken"), Some(false))
            .await,
    );
    assert_eq!(p.teams.get_team(f.org.id, team.id).await.unwrap(), team);
    assert_eq!(
        list(&p, &other, TeamFilter::default(), 0, 25).await,
        (1, owned(&["Theirs"]))
    );
    assert_not_found(p.teams.get_member(other.id, team.id, f.ann.id).await);
    let members = p
        .teams
        .list_members(other.id, team.id, PageRequest::default())
        .await
        .unwrap();
    assert_eq!((members.count, members.results.len()), (0, 0));
    assert_not_found(
        p.teams
            .remove_member(other.id, team.id, f.ann.id, &left(other.id))
            .await,
    );
    assert!(p.teams.is_member(team.id, f.ann.id).await.unwrap());
}

async fn teams_list_by_name_bytewise_with_counts_and_pages(p: Ports) {
    let f = fixture(&p).await;
    for name in ["ops", "Ops", "Design", "Backend", "Écrivains"] {
        p.teams
            .create_team(f.org.id, TeamId::new(), name, &[], &[])
            .await
            .unwrap();
    }
    let expected = ["Backend", "Design", "Ops", "ops", "Écrivains"];
    let all = TeamFilter::default();
    assert_eq!(
        list(&p, &f.org, all.clone(), 0, 25).await,
        (5, owned(&expected))
    );
    assert_eq!(
        list(&p, &f.org, all.clone(), 1, 2).await,
        (5, owned(&expected[1..3]))
    );
    assert_eq!(list(&p, &f.org, all.clone(), 5, 2).await, (5, vec![]));
    assert_eq!(
        list(&p, &f.org, all, 0, u64::MAX).await,
        (5, owned(&expected))
    );
}

async fn team_filters_hide_archived_and_match_members_and_names(p: Ports) {
    let f = fixture(&p).await;
    let core = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &[f.ann.id], &[])
        .await
        .unwrap();
    p.teams
        .create_team(
            f.org.id,
            TeamId::new(),
            "Platform",
            &[f.ann.id, f.bob.id],
            &[],
        )
        .await
        .unwrap();
    p.teams
        .create_team(f.org.id, TeamId::new(), "100% Fun", &[], &[])
        .await
        .unwrap();
    p.teams
        .create_team(f.org.id, TeamId::new(), "under_dogs", &[f.bob.id], &[])
        .await
        .unwrap();
    p.teams
        .update_team(f.org.id, core.id, None, Some(false))
        .await
        .unwrap();
    let filter = |member_of: Option<&User>, include_archived, search: Option<&str>| TeamFilter {
        member_of: member_of.map(|u| u.id),
        include_archived,
        search: search.map(str::to_owned),
    };
    assert_eq!(
        list(&p, &f.org, filter(None, false, None), 0, 25).await,
        (3, owned(&["100% Fun", "Platform", "under_dogs"]))
    );
    assert_eq!(
        list(&p, &f.org, filter(None, true, None), 0, 25).await,
        (4, owned(&["100% Fun", "Core", "Platform", "under_dogs"]))
    );
    assert_eq!(
        list(&p, &f.org, filter(Some(&f.ann), false, None), 0, 25).await,
        (1, owned(&["Platform"]))
    );
    assert_eq!(
        list(&p, &f.org, filter(Some(&f.ann), true, None), 0, 25).await,
        (2, owned(&["Core", "Platform"]))
    );
    assert_eq!(
        list(&p, &f.org, filter(Some(&f.cy), true, None), 0, 25).await,
        (0, vec![])
    );
    assert_eq!(
        list(&p, &f.org, filter(None, true, Some("PLAT")), 0, 25).await,
        (1, owned(&["Platform"]))
    );
    assert_eq!(
        list(&p, &f.org, filter(None, true, Some("%")), 0, 25).await,
        (1, owned(&["100% Fun"]))
    );
    assert_eq!(
        list(&p, &f.org, filter(None, true, Some("_")), 0, 25).await,
        (1, owned(&["under_dogs"]))
    );
    assert_eq!(
        list(&p, &f.org, filter(Some(&f.bob), false, Some("o")), 0, 1).await,
        (2, owned(&["Platform"]))
    );
}

async fn team_updates_change_only_the_given_fields(p: Ports) {
    let f = fixture(&p).await;
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &[f.ann.id], &[])
        .await
        .unwrap();
    let same = p
        .teams
        .update_team(f.org.id, team.id, None, None)
        .await
        .unwrap();
    assert_eq!(same, team);
    let renamed = p
        .teams
        .update_team(f.org.id, team.id, Some("Kernel"), None)
        .await
        .unwrap();
    assert_eq!(
        renamed,
        Team {
            name: "Kernel".to_owned(),
            ..team.clone()
        }
    );
    let archived = p
        .teams
        .update_team(f.org.id, team.id, None, Some(false))
        .await
        .unwrap();
    assert_eq!(
        archived,
        Team {
            active: false,
            ..renamed
        }
    );
    assert_eq!(p.teams.get_team(f.org.id, team.id).await.unwrap(), archived);
    assert_not_found(
        p.teams
            .update_team(f.org.id, TeamId::new(), Some("X"), None)
            .await,
    );
}

async fn memberships_are_added_once_and_re_roled(p: Ports) {
    let f = fixture(&p).await;
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &[f.ann.id], &[])
        .await
        .unwrap();
    let created = p
        .teams
        .get_member(f.org.id, team.id, f.ann.id)
        .await
        .unwrap();
    assert_eq!((created.team_id, created.role), (team.id, TeamRole::Member));
    assert_eq!(
        created.user,
        p.orgs.get_user(f.org.id, f.ann.id).await.unwrap()
    );

    let (bob, added) = p
        .teams
        .put_member(f.org.id, team.id, f.bob.id, None, &joined(f.org.id))
        .await
        .unwrap();
    assert!(added);
    assert_eq!((bob.user.id, bob.role), (f.bob.id, TeamRole::Member));
    let (again, added) = p
        .teams
        .put_member(f.org.id, team.id, f.bob.id, None, &joined(f.org.id))
        .await
        .unwrap();
    assert!(!added);
    assert_eq!(again, bob);
    let (manager, added) = p
        .teams
        .put_member(
            f.org.id,
            team.id,
            f.bob.id,
            Some(TeamRole::Manager),
            &joined(f.org.id),
        )
        .await
        .unwrap();
    assert!(!added);
    assert_eq!(
        (manager.role, manager.joined_at),
        (TeamRole::Manager, bob.joined_at)
    );
    let (kept, _) = p
        .teams
        .put_member(f.org.id, team.id, f.bob.id, None, &joined(f.org.id))
        .await
        .unwrap();
    assert_eq!(kept.role, TeamRole::Manager, "no role keeps the stored one");
    let (cy, added) = p
        .teams
        .put_member(
            f.org.id,
            team.id,
            f.cy.id,
            Some(TeamRole::Manager),
            &joined(f.org.id),
        )
        .await
        .unwrap();
    assert!(added);
    assert_eq!(cy.role, TeamRole::Manager);
    assert_eq!(
        p.teams
            .get_member(f.org.id, team.id, f.cy.id)
            .await
            .unwrap(),
        cy
    );
    assert_eq!(
        p.teams
            .get_team(f.org.id, team.id)
            .await
            .unwrap()
            .members_count,
        3
    );
}

async fn members_list_by_name_with_counts_and_pages(p: Ports) {
    let f = fixture(&p).await;
    let team = p
        .teams
        .create_team(
            f.org.id,
            TeamId::new(),
            "Core",
            &[f.cy.id, f.ann.id, f.bob.id],
            &[],
        )
        .await
        .unwrap();
    let page = |offset, limit| {
        let teams = p.teams.clone();
        let org = f.org.id;
        async move {
            let page = teams
                .list_members(org, team.id, PageRequest { offset, limit })
                .await
                .unwrap();
            let ids: Vec<UserId> = page.results.iter().map(|m| m.user.id).collect();
            (page.count, ids)
        }
    };
    assert_eq!(page(0, 25).await, (3, vec![f.ann.id, f.bob.id, f.cy.id]));
    assert_eq!(page(1, 1).await, (3, vec![f.bob.id]));
    assert_eq!(page(3, 1).await, (3, vec![]));
    assert_eq!(
        page(0, u64::MAX).await,
        (3, vec![f.ann.id, f.bob.id, f.cy.id])
    );
}

async fn removing_a_member_takes_them_out(p: Ports) {
    let f = fixture(&p).await;
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &[f.ann.id, f.bob.id], &[])
        .await
        .unwrap();
    p.teams
        .remove_member(f.org.id, team.id, f.ann.id, &left(f.org.id))
        .await
        .unwrap();
    assert!(!p.teams.is_member(team.id, f.ann.id).await.unwrap());
    assert_not_found(p.teams.get_member(f.org.id, team.id, f.ann.id).await);
    assert_not_found(
        p.teams
            .remove_member(f.org.id, team.id, f.ann.id, &left(f.org.id))
            .await,
    );
    assert_not_found(
        p.teams
            .remove_member(f.org.id, team.id, f.cy.id, &left(f.org.id))
            .await,
    );
    assert_eq!(
        p.teams
            .get_team(f.org.id, team.id)
            .await
            .unwrap()
            .members_count,
        1
    );
    let (_, added) = p
        .teams
        .put_member(f.org.id, team.id, f.ann.id, None, &joined(f.org.id))
        .await
        .unwrap();
    assert!(added, "a removed member can come back");
}

async fn memberships_refuse_unknown_teams_and_people(p: Ports) {
    let f = fixture(&p).await;
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &[], &[])
        .await
        .unwrap();
    assert_not_found(
        p.teams
            .put_member(f.org.id, TeamId::new(), f.ann.id, None, &joined(f.org.id))
            .await,
    );
    assert_not_found(
        p.teams
            .put_member(f.org.id, team.id, UserId::new(), None, &joined(f.org.id))
            .await,
    );
    assert_eq!(
        p.teams
            .get_team(f.org.id, team.id)
            .await
            .unwrap()
            .members_count,
        0
    );
}

async fn team_names_outside_the_stored_bounds_are_refused(p: Ports) {
    let f = fixture(&p).await;
    assert_refused_by_check(
        p.teams
            .create_team(f.org.id, TeamId::new(), "", &[], &[])
            .await,
    );
    assert_refused_by_check(
        p.teams
            .create_team(f.org.id, TeamId::new(), &"x".repeat(201), &[f.ann.id], &[])
            .await,
    );
    assert_eq!(
        list(&p, &f.org, TeamFilter::default(), 0, 25).await,
        (0, vec![])
    );
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), &"é".repeat(200), &[], &[])
        .await
        .unwrap();
    assert_refused_by_check(p.teams.update_team(f.org.id, team.id, Some(""), None).await);
    assert_eq!(p.teams.get_team(f.org.id, team.id).await.unwrap(), team);
}

async fn memberships_never_cross_organizations(p: Ports) {
    let f = fixture(&p).await;
    let (org, ann) = (&f.org, &f.ann);
    let other = p.org("Other").await;
    let sam = p.user(&other, "sam@other.test", "Sam", "").await;
    let ours = p
        .teams
        .create_team(org.id, TeamId::new(), "Ours", &[], &[])
        .await
        .unwrap();
    let theirs = p
        .teams
        .create_team(other.id, TeamId::new(), "Theirs", &[sam.id], &[])
        .await
        .unwrap();
    // Their person into our team: refused, and nothing is written.
    assert_not_found(
        p.teams
            .put_member(org.id, ours.id, sam.id, None, &joined(org.id))
            .await,
    );
    assert!(!p.teams.is_member(ours.id, sam.id).await.unwrap());
    // Our person into their team, or taking their member out, through our organization.
    assert_not_found(
        p.teams
            .put_member(org.id, theirs.id, ann.id, None, &joined(org.id))
            .await,
    );
    assert_not_found(
        p.teams
            .remove_member(org.id, theirs.id, sam.id, &left(org.id))
            .await,
    );
    assert_eq!(
        p.teams
            .get_team(other.id, theirs.id)
            .await
            .unwrap()
            .members_count,
        1
    );
    assert_not_found(
        p.teams
            .put_member(org.id, TeamId::new(), ann.id, None, &joined(org.id))
            .await,
    );
}

async fn a_new_team_records_its_members_events_with_it(p: Ports) {
    let f = fixture(&p).await;
    let id = TeamId::new();
    let (ann, bob) = (
        event(f.org.id, EventType::OrganizationTeamUserAdded, "ann"),
        event(f.org.id, EventType::OrganizationTeamUserAdded, "bob"),
    );
    let team = p
        .teams
        .create_team(
            f.org.id,
            id,
            "Core",
            &[f.ann.id, f.bob.id],
            &[ann.clone(), bob.clone()],
        )
        .await
        .unwrap();
    assert_eq!(
        (team.id, team.members_count),
        (id, 2),
        "the id is the caller's"
    );
    assert_eq!(p.teams.get_team(f.org.id, id).await.unwrap(), team);
    assert_eq!(p.recorded_events().await, payloads(&[&ann, &bob]));

    // A team the store refuses records nothing: not its events, not its members.
    let refused = event(f.org.id, EventType::OrganizationTeamUserAdded, "refused");
    assert_refused_by_check(
        p.teams
            .create_team(f.org.id, TeamId::new(), "", &[f.cy.id], &[refused])
            .await,
    );
    assert!(!p.teams.is_member(team.id, f.cy.id).await.unwrap());
    p.teams
        .create_team(f.org.id, TeamId::new(), "Empty", &[], &[])
        .await
        .unwrap();
    assert_eq!(p.recorded_events().await, payloads(&[&ann, &bob]));
}

async fn a_membership_put_records_its_event_only_when_it_adds(p: Ports) {
    let f = fixture(&p).await;
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &[f.ann.id], &[])
        .await
        .unwrap();
    let mark = |m: &str| event(f.org.id, EventType::OrganizationTeamUserAdded, m);
    let (bob, again, re_roled, ann, cy) = (
        mark("bob"),
        mark("again"),
        mark("re-roled"),
        mark("ann"),
        mark("cy"),
    );
    let (_, added) = p
        .teams
        .put_member(f.org.id, team.id, f.bob.id, None, &bob)
        .await
        .unwrap();
    assert!(added);
    // Already members, with or without a new role: nothing recorded.
    for (who, role, e) in [
        (f.bob.id, None, &again),
        (f.bob.id, Some(TeamRole::Manager), &re_roled),
        (f.ann.id, None, &ann),
    ] {
        let (_, added) = p
            .teams
            .put_member(f.org.id, team.id, who, role, e)
            .await
            .unwrap();
        assert!(!added);
    }
    let (manager, added) = p
        .teams
        .put_member(f.org.id, team.id, f.cy.id, Some(TeamRole::Manager), &cy)
        .await
        .unwrap();
    assert!(added && manager.role == TeamRole::Manager);
    // Refused: nothing written, nothing recorded.
    let stray = mark("stray");
    assert_not_found(
        p.teams
            .put_member(f.org.id, TeamId::new(), f.ann.id, None, &stray)
            .await,
    );
    assert_not_found(
        p.teams
            .put_member(f.org.id, team.id, UserId::new(), None, &stray)
            .await,
    );
    assert_eq!(p.recorded_events().await, payloads(&[&bob, &cy]));
}

async fn a_removal_records_its_event_only_when_it_removes(p: Ports) {
    let f = fixture(&p).await;
    let other = p.org("Other").await;
    let team = p
        .teams
        .create_team(f.org.id, TeamId::new(), "Core", &[f.ann.id, f.bob.id], &[])
        .await
        .unwrap();
    let mark = |m: &str| event(f.org.id, EventType::OrganizationTeamUserRemoved, m);
    let (ann, twice, never, theirs) = (mark("ann"), mark("twice"), mark("never"), mark("theirs"));
    p.teams
        .remove_member(f.org.id, team.id, f.ann.id, &ann)
        .await
        .unwrap();
    assert_not_found(
        p.teams
            .remove_member(f.org.id, team.id, f.ann.id, &twice)
            .await,
    );
    assert_not_found(
        p.teams
            .remove_member(f.org.id, team.id, f.cy.id, &never)
            .await,
    );
    assert_not_found(
        p.teams
            .remove_member(other.id, team.id, f.bob.id, &theirs)
            .await,
    );
    assert!(p.teams.is_member(team.id, f.bob.id).await.unwrap());
    assert_eq!(p.recorded_events().await, payloads(&[&ann]));
}
