use teamcomm_kernel::ErrorCode;
use time::macros::date;

use super::*;
use crate::ImportantDateKind;
use crate::important_dates::important_date_id;
use crate::test_world::{World, assert_field_error, code};

#[test]
fn profile_input_validates_every_field_and_keeps_clears() {
    let patch = ProfileInput {
        first_name: Some(" Ada ".into()),
        birth_date: Some(None),
        work_anniversary: Some(Some("2020-06-15".into())),
        role: Some("admin".into()),
        ..ProfileInput::default()
    }
    .validate()
    .unwrap();
    assert_eq!(patch.first_name.as_deref(), Some("Ada"));
    assert_eq!(patch.birth_date, Some(None));
    assert_eq!(patch.work_anniversary, Some(Some(date!(2020 - 06 - 15))));
    assert!(patch.needs_admin());
    for (bad, field) in [
        (
            ProfileInput {
                last_name: Some("x".repeat(151)),
                ..ProfileInput::default()
            },
            "last_name",
        ),
        (
            ProfileInput {
                first_name: Some("\u{200B}".into()),
                ..ProfileInput::default()
            },
            "first_name",
        ),
        (
            ProfileInput {
                occupation: Some("Eng\u{202E}reenig".into()),
                ..ProfileInput::default()
            },
            "occupation",
        ),
        (
            ProfileInput {
                timezone: Some("Not A Zone".into()),
                ..ProfileInput::default()
            },
            "timezone",
        ),
        (
            ProfileInput {
                work_anniversary: Some(Some("15/06/2020".into())),
                ..ProfileInput::default()
            },
            "work_anniversary",
        ),
        (
            ProfileInput {
                birth_date: Some(Some("02-30".into())),
                ..ProfileInput::default()
            },
            "birth_date",
        ),
        (
            ProfileInput {
                role: Some("owner".into()),
                ..ProfileInput::default()
            },
            "role",
        ),
    ] {
        assert_field_error(bad.validate(), field);
    }
}

#[test]
fn profile_input_names_every_bad_field_in_one_answer() {
    let e = ProfileInput {
        first_name: Some("a\nb".into()),
        timezone: Some("Mars".into()),
        role: Some("owner".into()),
        ..ProfileInput::default()
    }
    .validate()
    .unwrap_err();
    let fields: Vec<&str> = e.field_errors().keys().map(String::as_str).collect();
    assert_eq!(fields, ["first_name", "role", "timezone"]);
}

#[test]
fn names_may_be_cleared_to_empty() {
    let patch = ProfileInput {
        last_name: Some("   ".into()),
        ..ProfileInput::default()
    }
    .validate()
    .unwrap();
    assert_eq!(patch.last_name.as_deref(), Some(""));
    assert!(!patch.needs_admin());
}

#[test]
fn validators() {
    assert_eq!(validate_birth_date("02-29").unwrap(), "02-29");
    for bad in ["2-3", "13-01", "02-30", "aa-bb", "0101"] {
        assert!(validate_birth_date(bad).is_err(), "{bad}");
    }
    assert!(validate_timezone("America/Argentina/Buenos_Aires").is_ok());
    assert!(validate_timezone("UTC").is_ok());
    for bad in ["Mars", "Europe/", "a b/c", ""] {
        assert!(validate_timezone(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_date("2026-02-03"), Some(date!(2026 - 02 - 03)));
    assert_eq!(parse_date("2026-2-3"), None);
}

#[test]
fn a_work_start_lies_between_1900_and_today() {
    let today = date!(2026 - 11 - 23);
    for ok in [date!(1900 - 01 - 01), date!(2020 - 06 - 15), today] {
        assert_eq!(validate_work_start(ok, today).unwrap(), ok);
    }
    for bad in [
        date!(1899 - 12 - 31),
        date!(0202 - 05 - 01),
        date!(2026 - 11 - 24),
        date!(9999 - 12 - 31),
    ] {
        assert_field_error(validate_work_start(bad, today), "work_anniversary");
    }
}

#[tokio::test]
async fn people_see_their_own_organization_only() {
    let w = World::new().await;
    let people = w.people();
    assert_eq!(people.organization(&w.member).await.unwrap(), w.org);
    assert_eq!(people.organization(&w.outsider).await.unwrap(), w.other_org);

    let page = people
        .list_users(&w.guest, &UserFilter::default(), PageRequest::default())
        .await
        .unwrap();
    let names: Vec<&str> = page.results.iter().map(|u| u.first_name.as_str()).collect();
    assert_eq!((page.count, names), (3, vec!["Ada", "Gus", "Mia"]));

    let filter = UserFilter {
        search: Some("MIA@".into()),
        is_active: None,
    };
    let page = people
        .list_users(&w.admin, &filter, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(page.results, std::slice::from_ref(&w.member));

    assert_eq!(
        people.get_user(&w.member, w.admin.id).await.unwrap(),
        w.admin
    );
    assert_eq!(
        code(people.get_user(&w.admin, w.outsider.id).await),
        ErrorCode::NotFound
    );
}

fn rename(first_name: &str) -> ProfilePatch {
    ProfilePatch {
        first_name: Some(first_name.into()),
        ..ProfilePatch::default()
    }
}

#[tokio::test]
async fn people_change_their_own_profile_and_admins_anyones() {
    let w = World::new().await;
    let people = w.people();

    let me = people
        .update_user(&w.member, w.member.id, rename("Mila"))
        .await
        .unwrap();
    assert_eq!(me.first_name, "Mila");
    assert_eq!(w.stored(&w.member).await.first_name, "Mila");

    // A guest, too, keeps their own profile.
    people
        .update_user(&w.guest, w.guest.id, rename("Gustav"))
        .await
        .unwrap();
    assert_eq!(w.stored(&w.guest).await.first_name, "Gustav");

    people
        .update_user(&w.admin, w.member.id, rename("Mia"))
        .await
        .unwrap();
    assert_eq!(w.stored(&w.member).await.first_name, "Mia");
}

#[tokio::test]
async fn only_admins_change_other_people() {
    let w = World::new().await;
    let people = w.people();
    for actor in [&w.member, &w.guest] {
        assert_eq!(
            code(people.update_user(actor, w.admin.id, rename("X")).await),
            ErrorCode::OrgAdminRequired
        );
    }
    assert_eq!(w.stored(&w.admin).await.first_name, "Ada");
}

#[tokio::test]
async fn only_admins_change_roles_and_activation_even_their_own() {
    let w = World::new().await;
    let people = w.people();
    let promote = ProfilePatch {
        role: Some(Role::Admin),
        ..ProfilePatch::default()
    };
    assert_eq!(
        code(
            people
                .update_user(&w.member, w.member.id, promote.clone())
                .await
        ),
        ErrorCode::OrgAdminRequired
    );
    let deactivate = ProfilePatch {
        is_active: Some(false),
        ..ProfilePatch::default()
    };
    assert_eq!(
        code(
            people
                .update_user(&w.guest, w.guest.id, deactivate.clone())
                .await
        ),
        ErrorCode::OrgAdminRequired
    );
    assert_eq!(w.stored(&w.member).await.role, Role::Member);
    assert!(w.stored(&w.guest).await.is_active);

    people
        .update_user(&w.admin, w.member.id, promote)
        .await
        .unwrap();
    people
        .update_user(&w.admin, w.guest.id, deactivate)
        .await
        .unwrap();
    assert_eq!(w.stored(&w.member).await.role, Role::Admin);
    assert!(!w.stored(&w.guest).await.is_active);
}

#[tokio::test]
async fn admins_cannot_demote_or_deactivate_themselves() {
    let w = World::new().await;
    let people = w.people();
    for patch in [
        ProfilePatch {
            role: Some(Role::Member),
            ..ProfilePatch::default()
        },
        ProfilePatch {
            is_active: Some(false),
            ..ProfilePatch::default()
        },
    ] {
        assert_field_error(
            people.update_user(&w.admin, w.admin.id, patch).await,
            "role",
        );
    }
    let stored = w.stored(&w.admin).await;
    assert_eq!((stored.role, stored.is_active), (Role::Admin, true));

    // Re-stating their own role is harmless.
    let keep = ProfilePatch {
        role: Some(Role::Admin),
        is_active: Some(true),
        ..ProfilePatch::default()
    };
    people
        .update_user(&w.admin, w.admin.id, keep)
        .await
        .unwrap();
}

#[tokio::test]
async fn another_organizations_person_is_not_found_even_to_an_admin() {
    let w = World::new().await;
    assert_eq!(
        code(
            w.people()
                .update_user(&w.admin, w.outsider.id, rename("X"))
                .await
        ),
        ErrorCode::NotFound
    );
    assert_eq!(w.stored(&w.outsider).await.first_name, "Otto");
}

#[tokio::test]
async fn a_work_start_in_the_future_or_before_1900_is_refused_and_not_stored() {
    let w = World::new().await;
    let people = w.people();
    let start = |d: Date| ProfilePatch {
        work_anniversary: Some(Some(d)),
        ..ProfilePatch::default()
    };
    let tomorrow = w.today().next_day().unwrap();
    for bad in [tomorrow, date!(9999 - 01 - 01), date!(1899 - 12 - 31)] {
        assert_field_error(
            people.update_user(&w.member, w.member.id, start(bad)).await,
            "work_anniversary",
        );
    }
    assert_eq!(w.stored(&w.member).await.work_anniversary, None);

    let today = people
        .update_user(&w.member, w.member.id, start(w.today()))
        .await
        .unwrap();
    assert_eq!(today.work_anniversary, Some(w.today()));
    // Clearing needs no bound.
    let cleared = ProfilePatch {
        work_anniversary: Some(None),
        ..ProfilePatch::default()
    };
    let cleared = people
        .update_user(&w.member, w.member.id, cleared)
        .await
        .unwrap();
    assert_eq!(cleared.work_anniversary, None);
}

#[tokio::test]
async fn important_dates_are_the_organizations_soonest_first() {
    let w = World::new().await;
    let people = w.people();
    let set = |birth: Option<&str>, start: Option<Date>| ProfilePatch {
        birth_date: Some(birth.map(str::to_owned)),
        work_anniversary: Some(start),
        ..ProfilePatch::default()
    };
    // Today is 2026-11-23.
    people
        .update_user(&w.admin, w.member.id, set(Some("01-10"), None))
        .await
        .unwrap();
    people
        .update_user(&w.admin, w.admin.id, set(None, Some(date!(2020 - 12 - 01))))
        .await
        .unwrap();
    people
        .update_user(&w.outsider, w.outsider.id, set(Some("11-24"), None))
        .await
        .unwrap();

    let dates = people.important_dates(&w.guest, None).await.unwrap();
    let seen: Vec<(UserId, ImportantDateKind, Date, Option<i32>)> = dates
        .iter()
        .map(|d| (d.user.id, d.kind, d.next, d.years))
        .collect();
    assert_eq!(
        seen,
        [
            (
                w.admin.id,
                ImportantDateKind::WorkAnniversary,
                date!(2026 - 12 - 01),
                Some(6)
            ),
            (
                w.member.id,
                ImportantDateKind::Birthday,
                date!(2027 - 01 - 10),
                None
            ),
        ]
    );

    let mine = people
        .important_dates(&w.member, Some(w.member.id))
        .await
        .unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(
        code(people.important_dates(&w.member, Some(w.outsider.id)).await),
        ErrorCode::NotFound
    );

    let id = important_date_id(w.member.id, ImportantDateKind::Birthday);
    assert_eq!(people.important_date(&w.admin, id).await.unwrap().id, id);
    let theirs = important_date_id(w.outsider.id, ImportantDateKind::Birthday);
    assert_eq!(
        code(people.important_date(&w.admin, theirs).await),
        ErrorCode::NotFound
    );
}
