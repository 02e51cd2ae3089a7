//! `InvitationRepository`: pending invitations, resent rather than duplicated.

use std::collections::BTreeSet;

use teamcomm_kernel::{OrgId, PageRequest, TeamId, UserId};
use teamcomm_org::{Invitation, InvitationKind, NewInvitation, Organization};
use uuid::Uuid;

use crate::ports::{Ports, assert_conflict, assert_not_found, assert_refused_by_check};

contract!(
    an_invitation_reads_back_as_created,
    inviting_again_resends_and_merges_teams,
    invitations_list_newest_first_by_kind_with_counts_and_pages,
    invitations_are_scoped_by_organization_and_kind,
    a_revoked_invitation_is_gone,
    invitations_refuse_unknown_organizations_and_inviters,
    identifiers_outside_the_stored_bounds_are_refused,
);

fn invite(identifier: &str, is_guest: bool) -> NewInvitation {
    NewInvitation {
        identifier: identifier.to_owned(),
        is_email: identifier.contains('@'),
        is_guest,
        team_ids: vec![],
        followup_ids: vec![],
        invited_by: None,
    }
}

async fn upsert(p: &Ports, org: &Organization, new: &NewInvitation) -> Invitation {
    let (inv, _) = p.invitations.upsert_invitation(org.id, new).await.unwrap();
    inv
}

async fn list(
    p: &Ports,
    org: OrgId,
    kind: InvitationKind,
    offset: u64,
    limit: u64,
) -> (u64, Vec<String>) {
    let page = p
        .invitations
        .list_invitations(org, kind, PageRequest { offset, limit })
        .await
        .unwrap();
    (
        page.count,
        page.results.into_iter().map(|i| i.identifier).collect(),
    )
}

fn owned(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|i| (*i).to_owned()).collect()
}

async fn an_invitation_reads_back_as_created(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let team = p
        .teams
        .create_team(org.id, TeamId::new(), "Core", &[], &[])
        .await
        .unwrap();
    let followup = Uuid::now_v7();
    let new = NewInvitation {
        team_ids: vec![team.id],
        followup_ids: vec![followup],
        invited_by: Some(ann.id),
        ..invite("new@acme.test", true)
    };
    let (inv, created) = p.invitations.upsert_invitation(org.id, &new).await.unwrap();
    assert!(created);
    assert_eq!(
        (inv.org_id, inv.identifier.as_str()),
        (org.id, "new@acme.test")
    );
    assert!(inv.is_email && inv.is_guest);
    assert_eq!(
        (inv.team_ids.clone(), inv.followup_ids.clone()),
        (vec![team.id], vec![followup])
    );
    assert_eq!((inv.invited_by, inv.resend_count), (Some(ann.id), 0));
    for kind in [InvitationKind::All, InvitationKind::Guests] {
        assert_eq!(
            p.invitations
                .get_invitation(org.id, kind, inv.id)
                .await
                .unwrap(),
            inv
        );
    }
    let chat = upsert(&p, &org, &invite("U123ABC", false)).await;
    assert!(!chat.is_email && !chat.is_guest);
    assert_eq!(chat.invited_by, None);
}

async fn inviting_again_resends_and_merges_teams(p: Ports) {
    let org = p.org("Acme").await;
    let [a, b, c] = [TeamId::new(), TeamId::new(), TeamId::new()];
    let first = NewInvitation {
        team_ids: vec![a, b],
        ..invite("Max@Acme.test", false)
    };
    let inv = upsert(&p, &org, &first).await;
    let again = NewInvitation {
        team_ids: vec![b, c],
        is_guest: true,
        ..invite("max@acme.TEST", false)
    };
    let (resent, created) = p
        .invitations
        .upsert_invitation(org.id, &again)
        .await
        .unwrap();
    assert!(!created);
    assert_eq!((resent.id, resent.created_at), (inv.id, inv.created_at));
    assert_eq!(
        resent.identifier, "Max@Acme.test",
        "the first spelling stays"
    );
    assert!(!resent.is_guest, "the kind stays");
    assert_eq!(resent.resend_count, 1);
    let teams: BTreeSet<TeamId> = resent.team_ids.iter().copied().collect();
    assert_eq!(teams, BTreeSet::from([a, b, c]));
    assert_eq!(resent.team_ids.len(), 3, "merged without repeats");
    let (third, created) = p
        .invitations
        .upsert_invitation(org.id, &first)
        .await
        .unwrap();
    assert!(!created);
    assert_eq!(third.resend_count, 2);
    assert_eq!(list(&p, org.id, InvitationKind::All, 0, 25).await.0, 1);
}

async fn invitations_list_newest_first_by_kind_with_counts_and_pages(p: Ports) {
    let org = p.org("Acme").await;
    for (identifier, guest) in [
        ("m1@acme.test", false),
        ("g1@acme.test", true),
        ("m2@acme.test", false),
        ("g2@acme.test", true),
        ("m3@acme.test", false),
    ] {
        upsert(&p, &org, &invite(identifier, guest)).await;
    }
    // A resend keeps the invitation's place.
    upsert(&p, &org, &invite("m1@acme.test", false)).await;
    let all = [
        "m3@acme.test",
        "g2@acme.test",
        "m2@acme.test",
        "g1@acme.test",
        "m1@acme.test",
    ];
    assert_eq!(
        list(&p, org.id, InvitationKind::All, 0, 25).await,
        (5, owned(&all))
    );
    assert_eq!(
        list(&p, org.id, InvitationKind::All, 1, 3).await,
        (5, owned(&all[1..4]))
    );
    assert_eq!(
        list(&p, org.id, InvitationKind::All, 5, 3).await,
        (5, vec![])
    );
    assert_eq!(
        list(&p, org.id, InvitationKind::Members, 0, 25).await,
        (3, owned(&["m3@acme.test", "m2@acme.test", "m1@acme.test"]))
    );
    assert_eq!(
        list(&p, org.id, InvitationKind::Members, 2, 25).await,
        (3, owned(&["m1@acme.test"]))
    );
    assert_eq!(
        list(&p, org.id, InvitationKind::Guests, 0, u64::MAX).await,
        (2, owned(&["g2@acme.test", "g1@acme.test"]))
    );
}

async fn invitations_are_scoped_by_organization_and_kind(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Other").await;
    let member = upsert(&p, &org, &invite("m@acme.test", false)).await;
    // The same identifier is a separate invitation elsewhere.
    let (theirs, created) = p
        .invitations
        .upsert_invitation(other.id, &invite("m@acme.test", false))
        .await
        .unwrap();
    assert!(created);
    assert_ne!(theirs.id, member.id);
    for kind in [InvitationKind::All, InvitationKind::Members] {
        assert_not_found(
            p.invitations
                .get_invitation(other.id, kind, member.id)
                .await,
        );
        assert_not_found(
            p.invitations
                .delete_invitation(other.id, kind, member.id)
                .await,
        );
    }
    assert_not_found(
        p.invitations
            .get_invitation(org.id, InvitationKind::Guests, member.id)
            .await,
    );
    assert_not_found(
        p.invitations
            .delete_invitation(org.id, InvitationKind::Guests, member.id)
            .await,
    );
    assert_not_found(
        p.invitations
            .get_invitation(org.id, InvitationKind::All, Uuid::now_v7())
            .await,
    );
    assert_eq!(
        p.invitations
            .get_invitation(org.id, InvitationKind::Members, member.id)
            .await
            .unwrap(),
        member
    );
    assert_eq!(list(&p, other.id, InvitationKind::All, 0, 25).await.0, 1);
}

async fn a_revoked_invitation_is_gone(p: Ports) {
    let org = p.org("Acme").await;
    let guest = upsert(&p, &org, &invite("g@acme.test", true)).await;
    let kept = upsert(&p, &org, &invite("m@acme.test", false)).await;
    p.invitations
        .delete_invitation(org.id, InvitationKind::Guests, guest.id)
        .await
        .unwrap();
    assert_not_found(
        p.invitations
            .get_invitation(org.id, InvitationKind::All, guest.id)
            .await,
    );
    assert_not_found(
        p.invitations
            .delete_invitation(org.id, InvitationKind::All, guest.id)
            .await,
    );
    p.invitations
        .delete_invitation(org.id, InvitationKind::All, kept.id)
        .await
        .unwrap();
    assert_eq!(
        list(&p, org.id, InvitationKind::All, 0, 25).await,
        (0, vec![])
    );
    let (fresh, created) = p
        .invitations
        .upsert_invitation(org.id, &invite("g@acme.test", true))
        .await
        .unwrap();
    assert!(created, "after a revocation, inviting again creates");
    assert_eq!(fresh.resend_count, 0);
}

async fn invitations_refuse_unknown_organizations_and_inviters(p: Ports) {
    let org = p.org("Acme").await;
    assert_conflict(
        p.invitations
            .upsert_invitation(OrgId::new(), &invite("x@acme.test", false))
            .await,
        "invitations_organization_id_fkey",
    );
    let ghost = NewInvitation {
        invited_by: Some(UserId::new()),
        ..invite("y@acme.test", false)
    };
    assert_conflict(
        p.invitations.upsert_invitation(org.id, &ghost).await,
        "invitations_invited_by_id_fkey",
    );
    assert_eq!(list(&p, org.id, InvitationKind::All, 0, 25).await.0, 0);
}

async fn identifiers_outside_the_stored_bounds_are_refused(p: Ports) {
    let org = p.org("Acme").await;
    for identifier in [String::new(), "x".repeat(255)] {
        assert_refused_by_check(
            p.invitations
                .upsert_invitation(org.id, &invite(&identifier, false))
                .await,
        );
    }
    assert_eq!(
        list(&p, org.id, InvitationKind::All, 0, 25).await,
        (0, vec![])
    );
    upsert(&p, &org, &invite(&"x".repeat(254), false)).await;
}
