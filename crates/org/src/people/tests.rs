use teamcomm_kernel::{ErrorCode, EventType};
use time::macros::{date, datetime};

use super::*;
use crate::ImportantDateKind;
use crate::important_dates::important_date_id;
use crate::test_world::{NOW, World, assert_field_error, code};

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
    assert_eq!(parse_date("2026-02-03"), Some(date!(2026 - 02 - 03)));
    assert_eq!(parse_date("2026-2-3"), None);
}

#[test]
fn time_zones_are_those_the_zone_database_knows() {
    let zone = |tz: &str| {
        ProfileInput {
            timezone: Some(tz.into()),
            ..ProfileInput::default()
        }
        .validate()
        .map(|p| p.timezone.unwrap())
    };
    for ok in [
        "America/Argentina/Buenos_Aires",
        "UTC",
        "Pacific/Kiritimati",
        "Etc/GMT+3",
    ] {
        assert_eq!(zone(ok).unwrap(), ok);
    }
    assert_eq!(zone(" Europe/Madrid ").unwrap(), "Europe/Madrid");
    // Well-formed names the database does not know are refused too.
    for bad in [
        "Mars",
        "Europe/",
        "a b/c",
        "",
        "Europe/Atlantis",
        "Mars/Olympus_Mons",
    ] {
        assert_field_error(zone(bad), "timezone");
    }
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

/// (event type, person, role, is_active) of the recorded activation events.
fn activations(w: &World) -> Vec<(EventType, UserId, String, bool)> {
    w.ports
        .events
        .all()
        .iter()
        .map(|e| {
            let u = &e.data["user"];
            (
                e.event_type,
                u["uuid"].as_str().unwrap().parse().unwrap(),
                u["role"].as_str().unwrap().to_owned(),
                u["is_active"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn active(is_active: bool) -> ProfilePatch {
    ProfilePatch {
        is_active: Some(is_active),
        ..ProfilePatch::default()
    }
}

#[tokio::test]
async fn deactivating_and_activating_someone_is_reported_when_it_changes_them() {
    let w = World::new().await;
    let people = w.people();
    people
        .update_user(&w.admin, w.member.id, active(false))
        .await
        .unwrap();
    let deactivated = (
        EventType::OrganizationUserDeactivated,
        w.member.id,
        "member".to_owned(),
        false,
    );
    assert_eq!(activations(&w), std::slice::from_ref(&deactivated));
    let event = &w.ports.events.all()[0];
    assert_eq!(
        (event.org_id, event.object_id, event.occurred_at),
        (w.org.id, None, NOW)
    );
    assert_eq!(
        event.data,
        serde_json::json!({"user": {
            "uuid": w.member.id.to_string(),
            "full_name": "Mia Test",
            "email": "mia@acme.test",
            "role": "member",
            "is_active": false,
        }})
    );

    // Re-stating the stored value, or changing anything else, reports nothing.
    people
        .update_user(&w.admin, w.member.id, active(false))
        .await
        .unwrap();
    people
        .update_user(&w.admin, w.member.id, rename("Mila"))
        .await
        .unwrap();
    people
        .update_user(&w.admin, w.guest.id, active(true))
        .await
        .unwrap();
    assert_eq!(activations(&w).len(), 1);

    // Activation shows the person as the same change leaves them.
    let back = ProfilePatch {
        is_active: Some(true),
        role: Some(Role::Admin),
        last_name: Some("Back".into()),
        ..ProfilePatch::default()
    };
    people
        .update_user(&w.admin, w.member.id, back)
        .await
        .unwrap();
    assert_eq!(
        activations(&w),
        [
            deactivated,
            (
                EventType::OrganizationUserActivated,
                w.member.id,
                "admin".to_owned(),
                true
            )
        ]
    );
    assert_eq!(
        w.ports.events.all()[1].data["user"]["full_name"],
        "Mila Back"
    );
}

#[tokio::test]
async fn a_refused_deactivation_reports_nothing() {
    let w = World::new().await;
    let people = w.people();
    assert_eq!(
        code(
            people
                .update_user(&w.member, w.guest.id, active(false))
                .await
        ),
        ErrorCode::OrgAdminRequired
    );
    assert_field_error(
        people
            .update_user(&w.admin, w.admin.id, active(false))
            .await,
        "role",
    );
    assert_eq!(
        code(
            people
                .update_user(&w.admin, w.outsider.id, active(false))
                .await
        ),
        ErrorCode::NotFound
    );
    assert!(w.ports.events.all().is_empty());
    assert!(w.stored(&w.guest).await.is_active);
}

/// Sets the person's zone and birthday; returns them as stored.
async fn living_in(w: &World, person: &User, zone: &str, birthday: &str) -> User {
    let patch = ProfilePatch {
        timezone: Some(zone.into()),
        birth_date: Some(Some(birthday.into())),
        ..ProfilePatch::default()
    };
    w.people()
        .update_user(&w.admin, person.id, patch)
        .await
        .unwrap()
}

#[tokio::test]
async fn important_dates_count_from_each_persons_local_day() {
    let w = World::new().await;
    // 10:30 UTC on 10 March: 00:30 on 11 March in Kiritimati (UTC+14), 23:30 on 9 March in
    // Pago Pago (UTC-11).
    w.set_now(datetime!(2026-03-10 10:30 UTC));
    let kiritimati = living_in(&w, &w.member, "Pacific/Kiritimati", "03-10").await;
    let pago_pago = living_in(&w, &w.guest, "Pacific/Pago_Pago", "03-10").await;
    let dates = w.people().important_dates(&w.admin, None).await.unwrap();
    let seen: Vec<(UserId, Date)> = dates.iter().map(|d| (d.user.id, d.next)).collect();
    assert_eq!(
        seen,
        [
            // Still ahead in Pago Pago, over in Kiritimati.
            (pago_pago.id, date!(2026 - 03 - 10)),
            (kiritimati.id, date!(2027 - 03 - 10)),
        ]
    );

    // At 11:30 UTC on 11 March, it is 11 March in Pago Pago too.
    w.set_now(datetime!(2026-03-11 11:30 UTC));
    let dates = w.people().important_dates(&w.admin, None).await.unwrap();
    assert!(dates.iter().all(|d| d.next == date!(2027 - 03 - 10)));
}

#[tokio::test]
async fn a_work_start_may_be_the_persons_today_in_their_zone() {
    let w = World::new().await;
    // 10:30 UTC on 23 November is already 24 November in Kiritimati.
    w.set_now(datetime!(2026-11-23 10:30 UTC));
    let kiritimati_today = date!(2026 - 11 - 24);
    let start = |zone: &str| ProfilePatch {
        timezone: Some(zone.into()),
        work_anniversary: Some(Some(kiritimati_today)),
        ..ProfilePatch::default()
    };
    assert_field_error(
        w.people()
            .update_user(&w.member, w.member.id, start("Pacific/Pago_Pago"))
            .await,
        "work_anniversary",
    );
    assert_eq!(w.stored(&w.member).await.work_anniversary, None);
    let stored = w
        .people()
        .update_user(&w.member, w.member.id, start("Pacific/Kiritimati"))
        .await
        .unwrap();
    assert_eq!(stored.work_anniversary, Some(kiritimati_today));
}
