use serde_json::json;
use teamcomm_kernel::{ErrorCode, EventType, PageRequest};

use super::*;
use crate::test_world::{NOW, World, assert_field_error, code};
use crate::{PlanTier, Role, UserFilter};

fn new_user(email: &str) -> NewUser {
    NewUser::new(email, "New", "Person", "member", None).unwrap()
}

#[tokio::test]
async fn organizations_are_created_and_changed() {
    let w = World::new().await;
    let service = w.organizations();
    assert!(!service.is_empty().await.unwrap());

    let new = NewOrganization::new(" Initech ", "free", None, None, None)
        .unwrap()
        .with_platform(Some("MSTeams"))
        .unwrap();
    let org = service.create_organization(&new).await.unwrap();
    assert_eq!(
        (org.name.as_str(), org.plan, org.api_access),
        ("Initech", PlanTier::Free, false)
    );
    assert_eq!(service.get_organization(org.id).await.unwrap(), org);
    assert_eq!(service.chat_platform(org.id).await.unwrap(), "msteams");
    assert_eq!(
        service.chat_platform(w.org.id).await.unwrap(),
        DEFAULT_CHAT_PLATFORM
    );

    let patch =
        OrganizationPatch::new(Some("Initrode"), Some("business"), None, None, None).unwrap();
    let changed = service.update_organization(org.id, &patch).await.unwrap();
    assert_eq!(
        (changed.name.as_str(), changed.plan),
        ("Initrode", PlanTier::Business)
    );
    assert_eq!(service.get_organization(org.id).await.unwrap(), changed);

    let unknown = teamcomm_kernel::OrgId::new();
    assert_eq!(
        code(service.get_organization(unknown).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(service.update_organization(unknown, &patch).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(service.chat_platform(unknown).await),
        ErrorCode::NotFound
    );
}

#[test]
fn organization_and_person_names_follow_the_text_rule() {
    for bad in ["\u{200B}", "Acme\u{202E}", "Acme\nInc", &"x".repeat(201)] {
        assert_field_error(NewOrganization::new(bad, "free", None, None, None), "name");
        assert_field_error(
            OrganizationPatch::new(Some(bad), None, None, None, None),
            "name",
        );
    }
    for bad in ["\u{200B}", "Ada\u{2066}", "A\u{7}", &"x".repeat(151)] {
        assert_field_error(
            NewUser::new("a@b.co", bad, "", "member", None),
            "first_name",
        );
        assert_field_error(NewUser::new("a@b.co", "", bad, "member", None), "last_name");
    }
    // Names of people may be left empty.
    let anonymous = NewUser::new("a@b.co", " ", "", "member", None).unwrap();
    assert_eq!(
        (anonymous.first_name.as_str(), anonymous.last_name.as_str()),
        ("", "")
    );
}

#[test]
fn a_new_person_names_every_bad_field_in_one_answer() {
    let e = NewUser::new("nope", "\u{200B}", "ok", "owner", None).unwrap_err();
    let fields: Vec<&str> = e.field_errors().keys().map(String::as_str).collect();
    assert_eq!(fields, ["email", "first_name", "role"]);
}

#[tokio::test]
async fn people_join_existing_organizations_with_unique_emails() {
    let w = World::new().await;
    let service = w.organizations();
    let user = service
        .create_user(w.org.id, &new_user("New@Acme.test"))
        .await
        .unwrap();
    assert_eq!(
        (user.email.as_str(), user.org_id, user.role),
        ("new@acme.test", w.org.id, Role::Member)
    );
    assert_eq!(service.find_user(user.id).await.unwrap(), user);
    assert_eq!(service.get_user(w.org.id, user.id).await.unwrap(), user);
    assert_eq!(
        code(service.get_user(w.other_org.id, user.id).await),
        ErrorCode::NotFound
    );

    // The same address in the same organization is a validation error, not a server error.
    assert_field_error(
        service
            .create_user(w.org.id, &new_user("mia@acme.test"))
            .await,
        "email",
    );
    // Another organization may have a person with the same address.
    service
        .create_user(w.other_org.id, &new_user("mia@acme.test"))
        .await
        .unwrap();
    assert_eq!(
        code(
            service
                .create_user(teamcomm_kernel::OrgId::new(), &new_user("x@y.test"))
                .await
        ),
        ErrorCode::NotFound
    );
    let people = w
        .ports
        .people
        .list_users(w.org.id, &UserFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(people.count, 4, "three people plus the one added");
}

#[tokio::test]
async fn only_active_people_receive_credentials() {
    let w = World::new().await;
    let service = w.organizations();
    assert_eq!(service.active_user(w.member.id).await.unwrap(), w.member);

    let patch = UserPatch::new(Some(false), Some("guest")).unwrap();
    let changed = service.update_user(w.member.id, &patch).await.unwrap();
    assert_eq!((changed.is_active, changed.role), (false, Role::Guest));
    assert_field_error(service.active_user(w.member.id).await, "user");

    let unknown = teamcomm_kernel::UserId::new();
    assert_eq!(
        code(service.active_user(unknown).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(service.update_user(unknown, &patch).await),
        ErrorCode::NotFound
    );
}

#[tokio::test]
async fn an_installation_starts_empty() {
    let ports =
        crate::testing::InMemoryOrgPorts::new(std::sync::Arc::new(teamcomm_kernel::SystemClock));
    let service = OrganizationService::new(
        ports.people.clone(),
        std::sync::Arc::new(teamcomm_kernel::SystemClock),
    );
    assert!(service.is_empty().await.unwrap());
    let new = NewOrganization::new("Demo", "business", None, None, None).unwrap();
    service.create_organization(&new).await.unwrap();
    assert!(!service.is_empty().await.unwrap());
}

#[tokio::test]
async fn the_operator_activating_or_deactivating_someone_is_reported_when_it_changes_them() {
    let w = World::new().await;
    let service = w.organizations();
    let set =
        |is_active: Option<bool>, role: Option<&str>| UserPatch::new(is_active, role).unwrap();
    service
        .update_user(w.member.id, &set(Some(false), None))
        .await
        .unwrap();
    // Again, a role change alone, someone already active: nothing more.
    service
        .update_user(w.member.id, &set(Some(false), None))
        .await
        .unwrap();
    service
        .update_user(w.member.id, &set(None, Some("guest")))
        .await
        .unwrap();
    service
        .update_user(w.outsider.id, &set(Some(true), None))
        .await
        .unwrap();
    service
        .update_user(w.member.id, &set(Some(true), Some("admin")))
        .await
        .unwrap();
    assert_eq!(
        code(
            service
                .update_user(teamcomm_kernel::UserId::new(), &set(Some(false), None))
                .await
        ),
        ErrorCode::NotFound
    );
    let events = w.ports.events.all();
    let seen: Vec<_> = events
        .iter()
        .map(|e| (e.event_type, e.org_id, e.data["user"]["role"].clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                EventType::OrganizationUserDeactivated,
                w.org.id,
                json!("member")
            ),
            (
                EventType::OrganizationUserActivated,
                w.org.id,
                json!("admin")
            ),
        ]
    );
    assert_eq!(
        events[1].data,
        json!({"user": {
            "uuid": w.member.id.to_string(),
            "full_name": "Mia Test",
            "email": "mia@acme.test",
            "role": "admin",
            "is_active": true,
        }})
    );
    assert_eq!((events[1].object_id, events[1].occurred_at), (None, NOW));
}
