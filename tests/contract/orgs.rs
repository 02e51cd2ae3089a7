//! `OrgRepository`: organizations and their people.

use teamcomm_kernel::{EventType, OrgId, PageRequest, UserId};
use teamcomm_org::{
    NewOrganization, NewUser, OrganizationPatch, PlanTier, ProfilePatch, Role, User, UserFilter,
    UserPatch,
};
use time::macros::date;

use crate::ports::{Ports, assert_conflict, assert_not_found, assert_refused_by_check, event};

contract!(
    with caches:
    an_organization_reads_back_as_created_and_updated,
    a_person_reads_back_as_created,
    e_mails_are_unique_per_organization_whatever_their_case,
    people_are_scoped_by_organization,
    people_list_by_name_bytewise_with_counts_and_pages,
    people_filters_search_names_and_e_mails_literally,
    people_are_found_by_exact_e_mail,
    people_are_read_by_ids_of_their_organization_only,
    profile_updates_change_only_the_given_fields,
    operator_updates_reach_people_of_any_organization,
    important_dates_list_only_people_who_have_one,
    writes_are_seen_by_the_next_read,
    organization_names_outside_the_stored_bounds_are_refused,
    activation_events_are_recorded_only_when_is_active_flips,
);

fn emails(users: &[User]) -> Vec<&str> {
    users.iter().map(|u| u.email.as_str()).collect()
}

async fn an_organization_reads_back_as_created_and_updated(p: Ports) {
    assert!(p.orgs.is_empty().await.unwrap());
    let new = NewOrganization::new("Acme", "starter", None, Some(true), None)
        .unwrap()
        .with_platform(Some("slack"))
        .unwrap();
    let org = p.orgs.create_organization(&new).await.unwrap();
    assert!(!p.orgs.is_empty().await.unwrap());
    assert_eq!(
        (
            org.name.as_str(),
            org.plan,
            org.api_access,
            org.plan_beta,
            org.exchange_tokens
        ),
        ("Acme", PlanTier::Starter, true, true, false)
    );
    assert_eq!(
        (org.timezone.as_str(), org.platform.as_deref()),
        ("UTC", Some("slack"))
    );
    assert_eq!(p.orgs.get_organization(org.id).await.unwrap(), org);

    let patch = OrganizationPatch::new(Some("Acme 2"), Some("free"), Some(false), None, None)
        .unwrap()
        .with_platform(Some("msteams"))
        .unwrap();
    let updated = p.orgs.update_organization(org.id, &patch).await.unwrap();
    assert_eq!(
        (
            updated.name.as_str(),
            updated.plan,
            updated.api_access,
            updated.plan_beta
        ),
        ("Acme 2", PlanTier::Free, false, true)
    );
    assert_eq!(updated.platform.as_deref(), Some("msteams"));
    assert_eq!((updated.id, updated.created_at), (org.id, org.created_at));
    let untouched = p
        .orgs
        .update_organization(org.id, &OrganizationPatch::default())
        .await
        .unwrap();
    assert_eq!(untouched, updated);
    assert_eq!(p.orgs.get_organization(org.id).await.unwrap(), updated);

    assert_not_found(p.orgs.get_organization(OrgId::new()).await);
    assert_not_found(p.orgs.update_organization(OrgId::new(), &patch).await);
}

async fn a_person_reads_back_as_created(p: Ports) {
    let org = p.org("Acme").await;
    let new = NewUser::new(" Ada@Acme.test ", " Ada ", "Lovelace", "admin", Some(false)).unwrap();
    let user = p.orgs.create_user(org.id, &new).await.unwrap();
    assert_eq!(user.org_id, org.id);
    assert_eq!(
        (
            user.email.as_str(),
            user.first_name.as_str(),
            user.last_name.as_str()
        ),
        ("ada@acme.test", "Ada", "Lovelace")
    );
    assert_eq!((user.role, user.is_active), (Role::Admin, false));
    assert_eq!(
        (user.timezone.as_str(), user.occupation.as_str()),
        ("UTC", "")
    );
    assert_eq!(
        (&user.image, &user.birth_date, user.work_anniversary),
        (&None, &None, None)
    );
    assert_eq!(p.orgs.get_user(org.id, user.id).await.unwrap(), user);
    assert_eq!(p.orgs.find_user(user.id).await.unwrap(), user);
    assert_conflict(
        p.orgs.create_user(OrgId::new(), &new).await,
        "users_organization_id_fkey",
    );
}

async fn e_mails_are_unique_per_organization_whatever_their_case(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Other").await;
    p.user(&org, "max@acme.test", "Max", "").await;
    // The domain lower-cases e-mails; the store refuses case variants all the same.
    let shouting = NewUser {
        email: "MAX@ACME.TEST".to_owned(),
        ..NewUser::new("x@acme.test", "Max", "", "member", None).unwrap()
    };
    assert_conflict(
        p.orgs.create_user(org.id, &shouting).await,
        "users_org_email_key",
    );
    let same = NewUser::new("max@acme.test", "Max", "", "member", None).unwrap();
    assert_conflict(
        p.orgs.create_user(org.id, &same).await,
        "users_org_email_key",
    );
    p.orgs.create_user(other.id, &same).await.unwrap();
    let listed = p
        .orgs
        .list_users(org.id, &UserFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.count, 1);
}

async fn people_are_scoped_by_organization(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Other").await;
    let max = p.user(&org, "max@acme.test", "Max", "").await;
    let sam = p.user(&other, "sam@other.test", "Sam", "").await;
    assert_not_found(p.orgs.get_user(other.id, max.id).await);
    assert_not_found(p.orgs.get_user(org.id, UserId::new()).await);
    let rename = ProfilePatch {
        first_name: Some("Taken".to_owned()),
        ..ProfilePatch::default()
    };
    assert_not_found(p.orgs.update_profile(other.id, max.id, &rename, &[]).await);
    assert_eq!(p.orgs.get_user(org.id, max.id).await.unwrap(), max);
    let page = p
        .orgs
        .list_users(other.id, &UserFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(
        (page.count, emails(&page.results)),
        (1, vec![sam.email.as_str()])
    );
    let found = p
        .orgs
        .find_users_by_email(other.id, std::slice::from_ref(&max.email))
        .await
        .unwrap();
    assert!(found.is_empty());
}

async fn people_list_by_name_bytewise_with_counts_and_pages(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Other").await;
    p.user(&other, "aaron@other.test", "Aaron", "").await;
    // Byte order (the C collation): upper case before lower case, "Zoë" after "Zoe".
    for (email, first, last) in [
        ("zoe2@acme.test", "Zoë", ""),
        ("bob@acme.test", "bob", "Builder"),
        ("zoe@acme.test", "Zoe", "Zed"),
        ("ann2@acme.test", "Ann", "Brown"),
        ("ann@acme.test", "Ann", "Adams"),
        ("nameless@acme.test", "", ""),
    ] {
        p.user(&org, email, first, last).await;
    }
    let expected = [
        "nameless@acme.test",
        "ann@acme.test",
        "ann2@acme.test",
        "zoe@acme.test",
        "zoe2@acme.test",
        "bob@acme.test",
    ];
    let list = |filter: UserFilter, offset, limit| {
        let orgs = p.orgs.clone();
        async move {
            let page = orgs
                .list_users(org.id, &filter, PageRequest { offset, limit })
                .await
                .unwrap();
            (
                page.count,
                emails(&page.results)
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>(),
            )
        }
    };
    let all = UserFilter::default();
    let owned = |s: &[&str]| s.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>();
    assert_eq!(list(all.clone(), 0, 25).await, (6, owned(&expected)));
    assert_eq!(list(all.clone(), 2, 3).await, (6, owned(&expected[2..5])));
    assert_eq!(list(all.clone(), 6, 3).await, (6, vec![]));
    assert_eq!(list(all.clone(), 0, u64::MAX).await, (6, owned(&expected)));
    // The same order and count through the filtered path.
    let active = UserFilter {
        is_active: Some(true),
        ..UserFilter::default()
    };
    assert_eq!(
        list(active.clone(), 1, 2).await,
        (6, owned(&expected[1..3]))
    );
    let inactive = UserFilter {
        is_active: Some(false),
        ..UserFilter::default()
    };
    assert_eq!(list(inactive, 0, 25).await, (0, vec![]));
}

async fn people_filters_search_names_and_e_mails_literally(p: Ports) {
    let org = p.org("Acme").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "Lovelace").await;
    p.user(&org, "grace@navy.test", "Grace", "Hopper").await;
    p.user(&org, "percent@acme.test", "100%", "Sure").await;
    p.user(&org, "under_score@acme.test", "Émile", "Zola").await;
    let off = UserPatch::new(Some(false), None).unwrap();
    p.orgs.update_user(ada.id, &off, &[]).await.unwrap();
    let search = |s: &str, active: Option<bool>| {
        let orgs = p.orgs.clone();
        let filter = UserFilter {
            search: Some(s.to_owned()),
            is_active: active,
        };
        async move {
            let page = orgs
                .list_users(org.id, &filter, PageRequest::default())
                .await
                .unwrap();
            let found: Vec<String> = emails(&page.results)
                .into_iter()
                .map(str::to_owned)
                .collect();
            (page.count, found)
        }
    };
    let hit = |emails: &[&str]| {
        (
            emails.len() as u64,
            emails.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(search("LOVE", None).await, hit(&["ada@acme.test"]));
    assert_eq!(search("ada lovelace", None).await, hit(&["ada@acme.test"]));
    assert_eq!(search("a l", None).await, hit(&["ada@acme.test"]));
    assert_eq!(search("navy", None).await, hit(&["grace@navy.test"]));
    assert_eq!(
        search("acme", Some(true)).await,
        hit(&["percent@acme.test", "under_score@acme.test"])
    );
    assert_eq!(search("acme", Some(false)).await, hit(&["ada@acme.test"]));
    // LIKE's wildcards are plain characters in a search.
    assert_eq!(search("%", None).await, hit(&["percent@acme.test"]));
    assert_eq!(search("_", None).await, hit(&["under_score@acme.test"]));
    assert_eq!(search("nobody", None).await, hit(&[]));
}

/// One read of many people: by id, each once, another organization's people and unknown ids
/// left out, inactive people kept (the reader decides what they mean).
async fn people_are_read_by_ids_of_their_organization_only(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Other").await;
    let ada = p.user(&org, "ada@acme.test", "Ada", "").await;
    let max = p.user(&org, "max@acme.test", "Max", "").await;
    p.user(&org, "sam@acme.test", "Sam", "").await;
    let off = ProfilePatch {
        is_active: Some(false),
        ..ProfilePatch::default()
    };
    let max = p
        .orgs
        .update_profile(org.id, max.id, &off, &[])
        .await
        .unwrap();
    let stranger = p.user(&other, "zed@other.test", "Zed", "").await;
    let asked = [max.id, UserId::new(), stranger.id, ada.id, max.id];
    let mut expected = vec![ada.clone(), max.clone()];
    expected.sort_by_key(|u| u.id);
    assert_eq!(p.orgs.users_by_ids(org.id, &asked).await.unwrap(), expected);
    assert_eq!(
        p.orgs.users_by_ids(other.id, &asked).await.unwrap(),
        [stranger]
    );
    assert!(p.orgs.users_by_ids(org.id, &[]).await.unwrap().is_empty());
    assert!(
        p.orgs
            .users_by_ids(OrgId::new(), &[ada.id])
            .await
            .unwrap()
            .is_empty()
    );
}

async fn people_are_found_by_exact_e_mail(p: Ports) {
    let org = p.org("Acme").await;
    p.user(&org, "ada@acme.test", "Ada", "").await;
    p.user(&org, "max@acme.test", "Max", "").await;
    p.user(&org, "sam@acme.test", "Sam", "").await;
    let find = |list: &[&str]| {
        let orgs = p.orgs.clone();
        let list: Vec<String> = list.iter().map(|e| (*e).to_owned()).collect();
        async move {
            let mut found: Vec<String> = orgs
                .find_users_by_email(org.id, &list)
                .await
                .unwrap()
                .into_iter()
                .map(|u| u.email)
                .collect();
            found.sort();
            found
        }
    };
    assert_eq!(
        find(&["sam@acme.test", "ada@acme.test", "nobody@acme.test"]).await,
        ["ada@acme.test", "sam@acme.test"]
    );
    assert_eq!(
        find(&["ada@acme.test", "ada@acme.test"]).await,
        ["ada@acme.test"]
    );
    assert!(find(&["ada@acme"]).await.is_empty(), "no partial match");
    assert!(find(&[]).await.is_empty());
}

async fn profile_updates_change_only_the_given_fields(p: Ports) {
    let org = p.org("Acme").await;
    let max = p.user(&org, "max@acme.test", "Max", "Mustermann").await;
    let patch = ProfilePatch {
        first_name: Some("Maxi".to_owned()),
        timezone: Some("Europe/Berlin".to_owned()),
        occupation: Some("Engineer".to_owned()),
        birth_date: Some(Some("02-29".to_owned())),
        work_anniversary: Some(Some(date!(2020 - 03 - 01))),
        role: Some(Role::Guest),
        ..ProfilePatch::default()
    };
    let updated = p
        .orgs
        .update_profile(org.id, max.id, &patch, &[])
        .await
        .unwrap();
    let expected = User {
        first_name: "Maxi".to_owned(),
        timezone: "Europe/Berlin".to_owned(),
        occupation: "Engineer".to_owned(),
        birth_date: Some("02-29".to_owned()),
        work_anniversary: Some(date!(2020 - 03 - 01)),
        role: Role::Guest,
        ..max.clone()
    };
    assert_eq!(updated, expected);
    let cleared = ProfilePatch {
        birth_date: Some(None),
        work_anniversary: Some(None),
        is_active: Some(false),
        ..ProfilePatch::default()
    };
    let updated = p
        .orgs
        .update_profile(org.id, max.id, &cleared, &[])
        .await
        .unwrap();
    assert_eq!(
        updated,
        User {
            birth_date: None,
            work_anniversary: None,
            is_active: false,
            ..expected
        }
    );
    assert_eq!(p.orgs.get_user(org.id, max.id).await.unwrap(), updated);
    let unknown = p
        .orgs
        .update_profile(org.id, UserId::new(), &ProfilePatch::default(), &[])
        .await;
    assert_not_found(unknown);
}

async fn operator_updates_reach_people_of_any_organization(p: Ports) {
    let org = p.org("Acme").await;
    let max = p.user(&org, "max@acme.test", "Max", "").await;
    let patch = UserPatch::new(Some(false), Some("admin")).unwrap();
    let updated = p.orgs.update_user(max.id, &patch, &[]).await.unwrap();
    assert_eq!((updated.is_active, updated.role), (false, Role::Admin));
    assert_eq!(updated.first_name, max.first_name);
    assert_eq!(p.orgs.find_user(max.id).await.unwrap(), updated);
    let none = p
        .orgs
        .update_user(max.id, &UserPatch::default(), &[])
        .await
        .unwrap();
    assert_eq!(none, updated);
    assert_not_found(p.orgs.update_user(UserId::new(), &patch, &[]).await);
    assert_not_found(p.orgs.find_user(UserId::new()).await);
}

async fn important_dates_list_only_people_who_have_one(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Other").await;
    let with = |birth: Option<&str>, start| ProfilePatch {
        birth_date: Some(birth.map(str::to_owned)),
        work_anniversary: Some(start),
        ..ProfilePatch::default()
    };
    let zed = p.user(&org, "zed@acme.test", "Zed", "").await;
    let amy = p.user(&org, "amy@acme.test", "Amy", "").await;
    let bo = p.user(&org, "bo@acme.test", "Bo", "").await;
    p.user(&org, "none@acme.test", "Nobody", "").await;
    let sam = p.user(&other, "sam@other.test", "Sam", "").await;
    p.orgs
        .update_profile(org.id, zed.id, &with(Some("01-31"), None), &[])
        .await
        .unwrap();
    p.orgs
        .update_profile(
            org.id,
            amy.id,
            &with(None, Some(date!(2019 - 05 - 06))),
            &[],
        )
        .await
        .unwrap();
    p.orgs
        .update_profile(
            org.id,
            bo.id,
            &with(Some("12-24"), Some(date!(2021 - 01 - 01))),
            &[],
        )
        .await
        .unwrap();
    p.orgs
        .update_profile(other.id, sam.id, &with(Some("07-04"), None), &[])
        .await
        .unwrap();
    let listed = p.orgs.users_with_important_dates(org.id).await.unwrap();
    assert_eq!(
        emails(&listed),
        ["amy@acme.test", "bo@acme.test", "zed@acme.test"]
    );
    let e = p
        .orgs
        .users_with_important_dates(OrgId::new())
        .await
        .unwrap();
    assert!(e.is_empty());
}

async fn organization_names_outside_the_stored_bounds_are_refused(p: Ports) {
    let mut blank = NewOrganization::new("Acme", "free", None, None, None).unwrap();
    blank.name = String::new();
    assert_refused_by_check(p.orgs.create_organization(&blank).await);
    assert!(p.orgs.is_empty().await.unwrap());
    let org = p.org("Acme").await;
    let long = OrganizationPatch {
        name: Some("x".repeat(201)),
        ..OrganizationPatch::default()
    };
    assert_refused_by_check(p.orgs.update_organization(org.id, &long).await);
    let longest = OrganizationPatch {
        name: Some("é".repeat(200)),
        ..OrganizationPatch::default()
    };
    p.orgs.update_organization(org.id, &longest).await.unwrap();
}

async fn writes_are_seen_by_the_next_read(p: Ports) {
    let org = p.org("Acme").await;
    let page = PageRequest::default();
    let all = UserFilter::default();
    let active = UserFilter {
        is_active: Some(true),
        ..UserFilter::default()
    };
    let list = |filter: &UserFilter| {
        let orgs = p.orgs.clone();
        let filter = filter.clone();
        async move {
            let page = orgs.list_users(org.id, &filter, page).await.unwrap();
            let names: Vec<(String, Role)> = page
                .results
                .into_iter()
                .map(|u| (u.full_name(), u.role))
                .collect();
            (page.count, names)
        }
    };
    assert_eq!(list(&all).await, (0, vec![]));
    assert_eq!(list(&active).await, (0, vec![]));
    let ann = p.user(&org, "ann@acme.test", "Ann", "Adams").await;
    let joined = (1, vec![("Ann Adams".to_owned(), Role::Member)]);
    assert_eq!(list(&all).await, joined);
    assert_eq!(list(&active).await, joined);

    let rename = ProfilePatch {
        first_name: Some("Anna".to_owned()),
        role: Some(Role::Admin),
        ..ProfilePatch::default()
    };
    p.orgs
        .update_profile(org.id, ann.id, &rename, &[])
        .await
        .unwrap();
    let renamed = (1, vec![("Anna Adams".to_owned(), Role::Admin)]);
    assert_eq!(list(&all).await, renamed);
    assert_eq!(list(&active).await, renamed);

    let off = UserPatch::new(Some(false), None).unwrap();
    p.orgs.update_user(ann.id, &off, &[]).await.unwrap();
    assert_eq!(list(&active).await, (0, vec![]));
    assert!(!p.orgs.get_user(org.id, ann.id).await.unwrap().is_active);

    // The plan gate's snapshot follows a plan change made through the repository.
    assert_eq!(
        p.snapshots.organization(org.id).await.unwrap().plan,
        PlanTier::Business
    );
    let downgrade = OrganizationPatch::new(None, Some("free"), None, None, None).unwrap();
    p.orgs
        .update_organization(org.id, &downgrade)
        .await
        .unwrap();
    let snapshot = p.snapshots.organization(org.id).await.unwrap();
    assert_eq!(snapshot.plan, PlanTier::Free);
    assert!(snapshot.check_api_key_eligibility().is_err());
}

async fn activation_events_are_recorded_only_when_is_active_flips(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Other").await;
    let max = p.user(&org, "max@acme.test", "Max", "").await;
    let mark = |m: &str| event(org.id, EventType::OrganizationUserDeactivated, m);
    let (off, off_again, role_only) = (mark("off"), mark("off again"), mark("role only"));
    let deactivate = UserPatch::new(Some(false), None).unwrap();
    let changed = p
        .orgs
        .update_user(max.id, &deactivate, std::slice::from_ref(&off))
        .await
        .unwrap();
    assert!(!changed.is_active);
    // The stored value re-stated, or another field changed: nothing recorded.
    p.orgs
        .update_user(max.id, &deactivate, std::slice::from_ref(&off_again))
        .await
        .unwrap();
    p.orgs
        .update_user(
            max.id,
            &UserPatch::new(None, Some("admin")).unwrap(),
            std::slice::from_ref(&role_only),
        )
        .await
        .unwrap();
    assert_not_found(
        p.orgs
            .update_user(UserId::new(), &deactivate, std::slice::from_ref(&off_again))
            .await,
    );

    let on = event(org.id, EventType::OrganizationUserActivated, "on");
    let activate = ProfilePatch {
        is_active: Some(true),
        first_name: Some("Maxine".to_owned()),
        ..ProfilePatch::default()
    };
    let changed = p
        .orgs
        .update_profile(org.id, max.id, &activate, std::slice::from_ref(&on))
        .await
        .unwrap();
    assert!(changed.is_active);
    let stray = event(org.id, EventType::OrganizationUserActivated, "stray");
    for patch in [
        activate.clone(),
        ProfilePatch {
            last_name: Some("Again".to_owned()),
            ..ProfilePatch::default()
        },
    ] {
        p.orgs
            .update_profile(org.id, max.id, &patch, std::slice::from_ref(&stray))
            .await
            .unwrap();
    }
    let off_elsewhere = ProfilePatch {
        is_active: Some(false),
        ..ProfilePatch::default()
    };
    assert_not_found(
        p.orgs
            .update_profile(
                other.id,
                max.id,
                &off_elsewhere,
                std::slice::from_ref(&stray),
            )
            .await,
    );
    assert!(p.orgs.find_user(max.id).await.unwrap().is_active);
    assert_eq!(
        p.recorded_events().await,
        [off.payload(), on.payload()],
        "one event per flip, none otherwise"
    );
}
