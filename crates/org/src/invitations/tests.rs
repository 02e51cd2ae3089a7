use teamcomm_kernel::ErrorCode;

use super::*;
use crate::test_world::{World, assert_field_error, code};
use crate::{Team, TeamFilter, TeamRepository};

fn request(identifiers: &[&str]) -> InviteRequest {
    InviteRequest {
        identifiers: identifiers.iter().map(|s| (*s).to_owned()).collect(),
        ..InviteRequest::default()
    }
}

async fn team(w: &World, org_admin: &User, name: &str) -> Team {
    w.teams().create_team(org_admin, name, &[]).await.unwrap()
}

#[test]
fn identifiers_are_emails_or_chat_ids() {
    assert_eq!(
        classify_identifier(" Ada@X.io ").unwrap(),
        ("ada@x.io".to_owned(), true)
    );
    assert_eq!(
        classify_identifier("U123").unwrap(),
        ("U123".to_owned(), false)
    );
    assert_eq!(
        classify_identifier("29:1a-B_c").unwrap(),
        ("29:1a-B_c".to_owned(), false)
    );
    for bad in [
        "",
        "  ",
        "a@b",
        "@x.io",
        "a@.io",
        "a b@x.io",
        "U1 U2",
        "\u{200B}",
        "U1\u{0}",
        "U1\u{202E}",
        &"u".repeat(255),
    ] {
        assert_field_error(classify_identifier(bad), "users_identifiers");
    }
}

#[tokio::test]
async fn members_and_admins_invite_guests_do_not() {
    let w = World::new().await;
    assert_eq!(
        code(
            w.invitations()
                .invite(&w.guest, request(&["new@acme.test"]))
                .await
        ),
        ErrorCode::GuestNotAllowed
    );
    assert!(w.pending_invitations(InvitationKind::All).await.is_empty());

    let outcome = w
        .invitations()
        .invite(&w.member, request(&["New@Acme.test", "U0CHAT"]))
        .await
        .unwrap();
    let invited: Vec<(&str, bool, Option<UserId>)> = outcome
        .invited
        .iter()
        .map(|i| (i.identifier.as_str(), i.is_email, i.invited_by))
        .collect();
    assert_eq!(
        invited,
        [
            ("new@acme.test", true, Some(w.member.id)),
            ("U0CHAT", false, Some(w.member.id))
        ]
    );
    assert_eq!(
        w.pending_invitations(InvitationKind::Members).await.len(),
        2
    );
}

#[tokio::test]
async fn people_already_in_the_organization_are_reported_not_invited() {
    let w = World::new().await;
    let outcome = w
        .invitations()
        .invite(
            &w.admin,
            request(&[
                "MIA@acme.test",
                "new@acme.test",
                "NEW@acme.test",
                "otto@globex.test",
            ]),
        )
        .await
        .unwrap();
    assert_eq!(outcome.existing_members, std::slice::from_ref(&w.member));
    let invited: Vec<&str> = outcome
        .invited
        .iter()
        .map(|i| i.identifier.as_str())
        .collect();
    // Someone of another organization is invited like a stranger: nothing about them leaks.
    assert_eq!(invited, ["new@acme.test", "otto@globex.test"]);
    assert_eq!(w.pending_invitations(InvitationKind::All).await.len(), 2);
}

#[tokio::test]
async fn inviting_again_resends_and_gathers_teams() {
    let w = World::new().await;
    let (core, apps) = (
        team(&w, &w.admin, "Core").await,
        team(&w, &w.admin, "Apps").await,
    );
    let with_team = |team: TeamId| InviteRequest {
        team_ids: vec![team],
        ..request(&["new@acme.test"])
    };
    let first = w
        .invitations()
        .invite(&w.admin, with_team(core.id))
        .await
        .unwrap();
    let again = w
        .invitations()
        .invite(&w.member, with_team(apps.id))
        .await
        .unwrap();
    let (first, again) = (&first.invited[0], &again.invited[0]);
    assert_eq!(first.id, again.id);
    assert_eq!(again.resend_count, first.resend_count + 1);
    let mut teams = vec![core.id, apps.id];
    teams.sort();
    assert_eq!(again.team_ids, teams);
    assert_eq!(w.pending_invitations(InvitationKind::All).await.len(), 1);
}

#[tokio::test]
async fn invitations_name_teams_of_the_organization_only() {
    let w = World::new().await;
    let theirs = team(&w, &w.outsider, "Theirs").await;
    for unknown in [theirs.id, TeamId::new()] {
        let req = InviteRequest {
            team_ids: vec![unknown],
            ..request(&["new@acme.test"])
        };
        assert_field_error(
            w.invitations().invite(&w.admin, req).await,
            "joinable_team_uuids",
        );
    }
    assert!(w.pending_invitations(InvitationKind::All).await.is_empty());
    let untouched = w
        .ports
        .teams
        .list_teams(
            w.other_org.id,
            &TeamFilter::default(),
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(untouched.results[0].members_count, 0);
}

#[tokio::test]
async fn guests_are_invited_by_email_and_counted_apart() {
    let w = World::new().await;
    let guest = |ids: &[&str]| InviteRequest {
        is_guest: true,
        ..request(ids)
    };
    assert_field_error(
        w.invitations().invite(&w.admin, guest(&["U0CHAT"])).await,
        "users_identifiers",
    );
    let outcome = w
        .invitations()
        .invite(&w.admin, guest(&["visitor@else.test"]))
        .await
        .unwrap();
    let invitation = &outcome.invited[0];
    assert!(invitation.is_guest);
    w.invitations()
        .invite(&w.admin, request(&["colleague@acme.test"]))
        .await
        .unwrap();

    let service = w.invitations();
    let page = |kind| service.list_invitations(&w.admin, kind, PageRequest::default());
    assert_eq!(page(InvitationKind::Guests).await.unwrap().count, 1);
    assert_eq!(page(InvitationKind::Members).await.unwrap().count, 1);
    assert_eq!(page(InvitationKind::All).await.unwrap().count, 2);
    // A guest invitation is not found among the member invitations.
    assert_eq!(
        code(
            service
                .get_invitation(&w.admin, InvitationKind::Members, invitation.id)
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(
            service
                .revoke_invitation(&w.admin, InvitationKind::Members, invitation.id)
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(w.pending_invitations(InvitationKind::Guests).await.len(), 1);
}

#[tokio::test]
async fn invitation_requests_are_bounded() {
    let w = World::new().await;
    let too_many: Vec<String> = (0..=MAX_INVITES_PER_REQUEST)
        .map(|i| format!("p{i}@acme.test"))
        .collect();
    for identifiers in [vec![], too_many] {
        let req = InviteRequest {
            identifiers,
            ..InviteRequest::default()
        };
        assert_field_error(
            w.invitations().invite(&w.admin, req).await,
            "users_identifiers",
        );
    }
    // One bad identifier refuses the whole request.
    assert_field_error(
        w.invitations()
            .invite(&w.admin, request(&["ok@acme.test", "not-an-email@"]))
            .await,
        "users_identifiers",
    );
    assert!(w.pending_invitations(InvitationKind::All).await.is_empty());
}

#[tokio::test]
async fn only_admins_see_and_revoke_pending_invitations() {
    let w = World::new().await;
    let outcome = w
        .invitations()
        .invite(&w.member, request(&["new@acme.test"]))
        .await
        .unwrap();
    let id = outcome.invited[0].id;
    let service = w.invitations();
    for actor in [&w.member, &w.guest] {
        assert_eq!(
            code(
                service
                    .list_invitations(actor, InvitationKind::All, PageRequest::default())
                    .await
            ),
            ErrorCode::OrgAdminRequired
        );
        assert_eq!(
            code(service.get_invitation(actor, InvitationKind::All, id).await),
            ErrorCode::OrgAdminRequired
        );
        assert_eq!(
            code(
                service
                    .revoke_invitation(actor, InvitationKind::All, id)
                    .await
            ),
            ErrorCode::OrgAdminRequired
        );
    }
    assert_eq!(w.pending_invitations(InvitationKind::All).await.len(), 1);

    let shown = service
        .get_invitation(&w.admin, InvitationKind::Members, id)
        .await
        .unwrap();
    assert_eq!(shown.identifier, "new@acme.test");
    service
        .revoke_invitation(&w.admin, InvitationKind::All, id)
        .await
        .unwrap();
    assert!(w.pending_invitations(InvitationKind::All).await.is_empty());
    assert_eq!(
        code(
            service
                .revoke_invitation(&w.admin, InvitationKind::All, id)
                .await
        ),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn another_organizations_invitation_is_not_found() {
    let w = World::new().await;
    let theirs = w
        .invitations()
        .invite(&w.outsider, request(&["new@globex.test"]))
        .await
        .unwrap()
        .invited[0]
        .id;
    let service = w.invitations();
    assert_eq!(
        code(
            service
                .get_invitation(&w.admin, InvitationKind::All, theirs)
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(
            service
                .revoke_invitation(&w.admin, InvitationKind::All, theirs)
                .await
        ),
        ErrorCode::NotFound
    );
    let page = service
        .list_invitations(&w.admin, InvitationKind::All, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(page.count, 0);
    let still_there = service
        .get_invitation(&w.outsider, InvitationKind::All, theirs)
        .await
        .unwrap();
    assert_eq!(still_there.identifier, "new@globex.test");
}
