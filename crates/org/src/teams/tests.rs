use teamcomm_kernel::{ErrorCode, EventType};

use super::*;
use crate::invitations::MAX_INVITES_PER_REQUEST;
use crate::test_world::{NOW, World, assert_field_error, code};
use crate::{InvitationKind, TeamRepository};

fn names(page: &Page<Team>) -> Vec<&str> {
    page.results.iter().map(|t| t.name.as_str()).collect()
}

async fn team(w: &World, name: &str, members: &[UserId]) -> Team {
    w.teams()
        .create_team(&w.admin, name, members)
        .await
        .unwrap()
}

#[tokio::test]
async fn only_admins_create_teams() {
    let w = World::new().await;
    for actor in [&w.member, &w.guest] {
        assert_eq!(
            code(w.teams().create_team(actor, "Core", &[]).await),
            ErrorCode::OrgAdminRequired
        );
    }
    let all = TeamFilter {
        include_archived: true,
        ..TeamFilter::default()
    };
    let stored = w
        .ports
        .teams
        .list_teams(w.org.id, &all, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(stored.count, 0);

    let created = team(&w, "  Core ", &[w.admin.id, w.member.id, w.member.id]).await;
    assert_eq!((created.name.as_str(), created.members_count), ("Core", 2));
    assert_eq!(created.org_id, w.org.id);
    assert!(created.active);
}

#[tokio::test]
async fn team_names_follow_the_text_rule() {
    let w = World::new().await;
    let too_long = "x".repeat(MAX_TEAM_NAME + 1);
    for bad in [
        "",
        "   ",
        "\u{200B}",
        "\u{FEFF}\u{2060}",
        "Core\u{202E}",
        "a\tb",
        &too_long,
    ] {
        assert_field_error(w.teams().create_team(&w.admin, bad, &[]).await, "name");
    }
    let longest = "x".repeat(MAX_TEAM_NAME);
    assert_eq!(team(&w, &longest, &[]).await.name, longest);

    let core = team(&w, "Core", &[]).await;
    assert_field_error(
        w.teams()
            .update_team(&w.admin, core.id, Some("\u{200B}"), None)
            .await,
        "name",
    );
    assert_eq!(
        w.ports
            .teams
            .get_team(w.org.id, core.id)
            .await
            .unwrap()
            .name,
        "Core"
    );
}

#[tokio::test]
async fn a_team_cannot_start_with_another_organizations_person() {
    let w = World::new().await;
    assert_eq!(
        code(
            w.teams()
                .create_team(&w.admin, "Core", &[w.member.id, w.outsider.id])
                .await
        ),
        ErrorCode::MemberInScopeRequired
    );
    let page = w
        .teams()
        .list_teams(&w.admin, TeamFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(page.count, 0, "nothing was created");
}

#[tokio::test]
async fn admins_see_every_team_and_others_their_own() {
    let w = World::new().await;
    let core = team(&w, "Core", &[w.member.id]).await;
    team(&w, "Apps", &[w.guest.id]).await;
    let archived = team(&w, "Zeta", &[w.member.id]).await;
    w.teams().archive_team(&w.admin, archived.id).await.unwrap();
    w.teams()
        .create_team(&w.outsider, "Theirs", &[])
        .await
        .unwrap();

    let teams = w.teams();
    let list = |actor: &User, include_archived: bool| {
        let filter = TeamFilter {
            include_archived,
            ..TeamFilter::default()
        };
        let actor = actor.clone();
        let teams = teams.clone();
        async move {
            teams
                .list_teams(&actor, filter, PageRequest::default())
                .await
                .unwrap()
        }
    };
    assert_eq!(names(&list(&w.admin, false).await), ["Apps", "Core"]);
    assert_eq!(names(&list(&w.admin, true).await), ["Apps", "Core", "Zeta"]);
    assert_eq!(names(&list(&w.member, true).await), ["Core", "Zeta"]);
    assert_eq!(names(&list(&w.guest, false).await), ["Apps"]);
    // A non-admin cannot widen the listing to someone else's teams.
    let widened = TeamFilter {
        member_of: Some(w.guest.id),
        ..TeamFilter::default()
    };
    let page = teams
        .list_teams(&w.member, widened, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(names(&page), ["Core"]);

    assert_eq!(
        teams.get_team(&w.member, core.id).await.unwrap().id,
        core.id
    );
    assert_eq!(
        code(teams.get_team(&w.guest, core.id).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(
            teams
                .list_members(&w.guest, core.id, PageRequest::default())
                .await
        ),
        ErrorCode::NotFound
    );
    let members = teams
        .list_members(&w.member, core.id, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(members.count, 1);
    assert_eq!(members.results[0].user.id, w.member.id);
}

#[tokio::test]
async fn another_organizations_team_is_not_found_even_to_an_admin() {
    let w = World::new().await;
    let theirs = w
        .teams()
        .create_team(&w.outsider, "Theirs", &[w.outsider.id])
        .await
        .unwrap();
    let teams = w.teams();
    assert_eq!(
        code(teams.get_team(&w.admin, theirs.id).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(
            teams
                .update_team(&w.admin, theirs.id, Some("Mine"), None)
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(teams.archive_team(&w.admin, theirs.id).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(
            teams
                .list_members(&w.admin, theirs.id, PageRequest::default())
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(
            teams
                .put_member(&w.admin, theirs.id, w.member.id, None)
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(teams.get_member(&w.admin, theirs.id, w.outsider.id).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(
            teams
                .invite_to_team(&w.admin, theirs.id, &["new@acme.test".into()])
                .await
        ),
        ErrorCode::NotFound
    );
    let stored = w
        .ports
        .teams
        .get_team(w.other_org.id, theirs.id)
        .await
        .unwrap();
    assert_eq!((stored.name.as_str(), stored.active), ("Theirs", true));
    assert!(
        !w.ports
            .teams
            .is_member(theirs.id, w.member.id)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn only_admins_change_teams() {
    let w = World::new().await;
    let core = team(&w, "Core", &[w.member.id]).await;
    let teams = w.teams();
    for actor in [&w.member, &w.guest] {
        assert_eq!(
            code(teams.update_team(actor, core.id, Some("Mine"), None).await),
            ErrorCode::OrgAdminRequired
        );
        assert_eq!(
            code(teams.archive_team(actor, core.id).await),
            ErrorCode::OrgAdminRequired
        );
    }
    let renamed = teams
        .update_team(&w.admin, core.id, Some(" Platform "), None)
        .await
        .unwrap();
    assert_eq!(renamed.name, "Platform");
    let archived = teams.archive_team(&w.admin, core.id).await.unwrap();
    assert!(!archived.active);
    let stored = w.ports.teams.get_team(w.org.id, core.id).await.unwrap();
    assert_eq!((stored.name.as_str(), stored.active), ("Platform", false));
}

#[tokio::test]
async fn only_admins_manage_memberships() {
    let w = World::new().await;
    let core = team(&w, "Core", &[w.member.id]).await;
    let teams = w.teams();
    for actor in [&w.member, &w.guest] {
        assert_eq!(
            code(teams.get_member(actor, core.id, w.member.id).await),
            ErrorCode::OrgAdminRequired
        );
        assert_eq!(
            code(teams.put_member(actor, core.id, w.guest.id, None).await),
            ErrorCode::OrgAdminRequired
        );
        assert_eq!(
            code(
                teams
                    .patch_member(actor, core.id, w.member.id, Some(TeamRole::Manager))
                    .await
            ),
            ErrorCode::OrgAdminRequired
        );
        assert_eq!(
            code(teams.remove_member(actor, core.id, w.member.id).await),
            ErrorCode::OrgAdminRequired
        );
        assert_eq!(
            code(
                teams
                    .invite_to_team(actor, core.id, &[w.guest.id.to_string()])
                    .await
            ),
            ErrorCode::OrgAdminRequired
        );
    }
    let members = w
        .ports
        .teams
        .list_members(w.org.id, core.id, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(members.count, 1);
    assert_eq!(members.results[0].role, TeamRole::Member);
}

#[tokio::test]
async fn memberships_are_added_changed_and_removed() {
    let w = World::new().await;
    let core = team(&w, "Core", &[]).await;
    let teams = w.teams();

    let (added, is_new) = teams
        .put_member(&w.admin, core.id, w.guest.id, None)
        .await
        .unwrap();
    assert!(is_new);
    assert_eq!((added.user.id, added.role), (w.guest.id, TeamRole::Member));
    let (again, is_new) = teams
        .put_member(&w.admin, core.id, w.guest.id, Some(TeamRole::Manager))
        .await
        .unwrap();
    assert!(!is_new);
    assert_eq!(again.role, TeamRole::Manager);

    let unchanged = teams
        .patch_member(&w.admin, core.id, w.guest.id, None)
        .await
        .unwrap();
    assert_eq!(unchanged.role, TeamRole::Manager);
    let demoted = teams
        .patch_member(&w.admin, core.id, w.guest.id, Some(TeamRole::Member))
        .await
        .unwrap();
    assert_eq!(demoted.role, TeamRole::Member);
    assert_eq!(
        teams
            .get_member(&w.admin, core.id, w.guest.id)
            .await
            .unwrap()
            .role,
        TeamRole::Member
    );

    // Changing a membership that does not exist does not create it.
    assert_eq!(
        code(
            teams
                .patch_member(&w.admin, core.id, w.member.id, Some(TeamRole::Manager))
                .await
        ),
        ErrorCode::NotFound
    );
    assert!(!w.ports.teams.is_member(core.id, w.member.id).await.unwrap());

    teams
        .remove_member(&w.admin, core.id, w.guest.id)
        .await
        .unwrap();
    assert!(!w.ports.teams.is_member(core.id, w.guest.id).await.unwrap());
    assert_eq!(
        code(teams.remove_member(&w.admin, core.id, w.guest.id).await),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn another_organizations_person_is_out_of_scope_for_memberships() {
    let w = World::new().await;
    let core = team(&w, "Core", &[]).await;
    let teams = w.teams();
    assert_eq!(
        code(
            teams
                .put_member(&w.admin, core.id, w.outsider.id, None)
                .await
        ),
        ErrorCode::MemberInScopeRequired
    );
    assert_eq!(
        code(teams.get_member(&w.admin, core.id, w.outsider.id).await),
        ErrorCode::MemberInScopeRequired
    );
    assert_eq!(
        code(teams.remove_member(&w.admin, core.id, w.outsider.id).await),
        ErrorCode::MemberInScopeRequired
    );
    assert_eq!(
        code(
            teams
                .put_member(&w.admin, core.id, UserId::new(), None)
                .await
        ),
        ErrorCode::MemberInScopeRequired
    );
    assert!(
        !w.ports
            .teams
            .is_member(core.id, w.outsider.id)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn team_invitations_add_known_people_and_invite_the_rest() {
    let w = World::new().await;
    let core = team(&w, "Core", &[]).await;
    let identifiers = [
        w.member.id.to_string(),
        " GUS@acme.test ".to_owned(),
        "New@Acme.test".to_owned(),
        "U0CHAT".to_owned(),
        // Named twice: joins once.
        format!(" {} ", w.member.id),
    ];
    let outcome = w
        .teams()
        .invite_to_team(&w.admin, core.id, &identifiers)
        .await
        .unwrap();
    let added: Vec<UserId> = outcome.added.iter().map(|m| m.user.id).collect();
    assert_eq!(added, [w.member.id, w.guest.id]);
    let invited: Vec<(&str, bool)> = outcome
        .invited
        .iter()
        .map(|i| (i.identifier.as_str(), i.is_email))
        .collect();
    assert_eq!(invited, [("new@acme.test", true), ("U0CHAT", false)]);
    for i in &outcome.invited {
        assert_eq!(i.team_ids, [core.id]);
        assert_eq!(i.invited_by, Some(w.admin.id));
        assert!(!i.is_guest);
    }

    assert!(w.ports.teams.is_member(core.id, w.member.id).await.unwrap());
    assert!(w.ports.teams.is_member(core.id, w.guest.id).await.unwrap());
    assert_eq!(w.pending_invitations(InvitationKind::All).await.len(), 2);
}

#[tokio::test]
async fn a_team_invitation_naming_an_outsider_changes_nothing() {
    let w = World::new().await;
    let core = team(&w, "Core", &[]).await;
    let identifiers = [
        "new@acme.test".to_owned(),
        w.member.id.to_string(),
        w.outsider.id.to_string(),
    ];
    assert_eq!(
        code(
            w.teams()
                .invite_to_team(&w.admin, core.id, &identifiers)
                .await
        ),
        ErrorCode::MemberInScopeRequired
    );
    assert!(!w.ports.teams.is_member(core.id, w.member.id).await.unwrap());
    assert_eq!(w.pending_invitations(InvitationKind::All).await.len(), 0);
}

#[tokio::test]
async fn team_invitations_refuse_bad_identifiers_and_counts() {
    let w = World::new().await;
    let core = team(&w, "Core", &[]).await;
    let teams = w.teams();
    let too_many: Vec<String> = (0..=MAX_INVITES_PER_REQUEST)
        .map(|i| format!("p{i}@acme.test"))
        .collect();
    for bad in [
        vec![],
        too_many,
        vec!["not-an-email@".to_owned()],
        vec!["  ".to_owned()],
        vec!["\u{200B}".to_owned()],
        vec!["U1\nU2".to_owned()],
        vec!["two words".to_owned()],
    ] {
        assert_field_error(
            teams.invite_to_team(&w.admin, core.id, &bad).await,
            "users_identifiers",
        );
    }
    assert_eq!(w.pending_invitations(InvitationKind::All).await.len(), 0);
}

/// (team, person, role) of the recorded events of `event_type`.
fn reported(w: &World, event_type: EventType) -> Vec<(TeamId, UserId, String)> {
    w.events(event_type)
        .iter()
        .map(|e| {
            let d = &e.data;
            (
                d["team"]["uuid"].as_str().unwrap().parse().unwrap(),
                d["user"]["uuid"].as_str().unwrap().parse().unwrap(),
                d["role"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn added(w: &World) -> Vec<(TeamId, UserId, String)> {
    reported(w, EventType::OrganizationTeamUserAdded)
}

fn removed(w: &World) -> Vec<(TeamId, UserId, String)> {
    reported(w, EventType::OrganizationTeamUserRemoved)
}

#[tokio::test]
async fn a_new_team_reports_each_first_member_once() {
    let w = World::new().await;
    let core = team(&w, "Core", &[w.member.id, w.guest.id, w.member.id]).await;
    let member = || "member".to_owned();
    assert_eq!(
        added(&w),
        [
            (core.id, w.member.id, member()),
            (core.id, w.guest.id, member())
        ]
    );
    let event = &w.events(EventType::OrganizationTeamUserAdded)[0];
    assert_eq!(
        (event.org_id, event.object_id, event.occurred_at),
        (w.org.id, None, NOW)
    );
    assert_eq!(
        event.data,
        serde_json::json!({
            "team": {"uuid": core.id.to_string(), "name": "Core"},
            "user": {
                "uuid": w.member.id.to_string(),
                "full_name": "Mia Test",
                "email": "mia@acme.test",
            },
            "role": "member",
        })
    );

    // No members, no events; a refused team, none either.
    team(&w, "Empty", &[]).await;
    assert_eq!(
        code(
            w.teams()
                .create_team(&w.admin, "Mixed", &[w.admin.id, w.outsider.id])
                .await
        ),
        ErrorCode::MemberInScopeRequired
    );
    assert_eq!(w.ports.events.all().len(), 2);
}

#[tokio::test]
async fn a_member_put_reports_a_new_membership_only() {
    let w = World::new().await;
    let core = team(&w, "Core", &[]).await;
    let teams = w.teams();
    teams
        .put_member(&w.admin, core.id, w.guest.id, None)
        .await
        .unwrap();
    assert_eq!(added(&w), [(core.id, w.guest.id, "member".to_owned())]);

    // Role changes of an existing membership, by PUT or PATCH, report nothing.
    teams
        .put_member(&w.admin, core.id, w.guest.id, Some(TeamRole::Manager))
        .await
        .unwrap();
    teams
        .put_member(&w.admin, core.id, w.guest.id, None)
        .await
        .unwrap();
    teams
        .patch_member(&w.admin, core.id, w.guest.id, Some(TeamRole::Member))
        .await
        .unwrap();
    assert_eq!(added(&w).len(), 1);

    // A newcomer with a role is reported with it; refusals report nothing.
    teams
        .put_member(&w.admin, core.id, w.member.id, Some(TeamRole::Manager))
        .await
        .unwrap();
    assert_eq!(
        code(
            teams
                .put_member(&w.admin, core.id, w.outsider.id, None)
                .await
        ),
        ErrorCode::MemberInScopeRequired
    );
    assert_eq!(
        code(teams.put_member(&w.member, core.id, w.admin.id, None).await),
        ErrorCode::OrgAdminRequired
    );
    assert_eq!(
        added(&w),
        [
            (core.id, w.guest.id, "member".to_owned()),
            (core.id, w.member.id, "manager".to_owned())
        ]
    );
    assert!(removed(&w).is_empty());
}

#[tokio::test]
async fn a_removal_reports_the_role_the_person_had() {
    let w = World::new().await;
    let core = team(&w, "Core", &[w.member.id]).await;
    let teams = w.teams();
    teams
        .put_member(&w.admin, core.id, w.guest.id, Some(TeamRole::Manager))
        .await
        .unwrap();
    teams
        .remove_member(&w.admin, core.id, w.guest.id)
        .await
        .unwrap();
    assert_eq!(removed(&w), [(core.id, w.guest.id, "manager".to_owned())]);
    let event = &w.events(EventType::OrganizationTeamUserRemoved)[0];
    assert_eq!(
        (event.org_id, event.object_id, event.occurred_at),
        (w.org.id, None, NOW)
    );
    assert_eq!(event.data["user"]["email"], "gus@acme.test");
    assert_eq!(event.data["team"]["name"], "Core");

    // Gone already, or not allowed: nothing more is reported.
    assert_eq!(
        code(teams.remove_member(&w.admin, core.id, w.guest.id).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(teams.remove_member(&w.member, core.id, w.member.id).await),
        ErrorCode::OrgAdminRequired
    );
    assert_eq!(removed(&w).len(), 1);
    assert!(w.ports.teams.is_member(core.id, w.member.id).await.unwrap());
}

#[tokio::test]
async fn a_team_invitation_reports_the_people_who_join() {
    let w = World::new().await;
    let core = team(&w, "Core", &[w.member.id]).await;
    let identifiers = [
        // Already a member: not reported again.
        w.member.id.to_string(),
        "GUS@acme.test".to_owned(),
        // The same person by id: joins once.
        w.guest.id.to_string(),
        "new@acme.test".to_owned(),
    ];
    w.teams()
        .invite_to_team(&w.admin, core.id, &identifiers)
        .await
        .unwrap();
    let member = || "member".to_owned();
    assert_eq!(
        added(&w),
        [
            (core.id, w.member.id, member()),
            (core.id, w.guest.id, member())
        ]
    );

    // A refused invitation adds and reports no one.
    let other = team(&w, "Other", &[]).await;
    let refused = [w.admin.id.to_string(), w.outsider.id.to_string()];
    assert_eq!(
        code(w.teams().invite_to_team(&w.admin, other.id, &refused).await),
        ErrorCode::MemberInScopeRequired
    );
    assert!(!w.ports.teams.is_member(other.id, w.admin.id).await.unwrap());
    assert_eq!(added(&w).len(), 2);
}
