//! Who sees which check-in, and what a listing tells about a day.

use serde_json::json;
use time::macros::date;

use super::*;

fn names(page: &teamcomm_kernel::Page<CheckinListing>) -> Vec<&str> {
    page.results
        .iter()
        .map(|l| l.checkin.name.as_str())
        .collect()
}

#[tokio::test]
async fn admins_see_every_check_in_others_those_they_take_part_in_or_authored() {
    let w = World::new().await;
    let s = w.service();
    let team = w
        .create(&w.admin, every_day("Team", &[], &[w.eng]))
        .await
        .checkin;
    let bobs = w
        .create(&w.admin, every_day("Bob's", &[&w.bob], &[]))
        .await
        .checkin;
    let maxs = w
        .create(&w.max, every_day("Max's", &[&w.ada], &[]))
        .await
        .checkin;
    let all = CheckinListFilter::default();
    let list = |who: &User| {
        let (s, who, all) = (s.clone(), who.clone(), all.clone());
        async move { s.list_checkins(&who, &all, PageRequest::all()).await }
    };
    assert_eq!(
        names(&list(&w.admin).await.unwrap()),
        ["Bob's", "Max's", "Team"]
    );
    assert_eq!(names(&list(&w.ada).await.unwrap()), ["Max's", "Team"]);
    assert_eq!(
        names(&list(&w.max).await.unwrap()),
        ["Max's", "Team"],
        "author and team member"
    );
    assert_eq!(names(&list(&w.bob).await.unwrap()), ["Bob's"]);
    assert!(list(&w.guest).await.unwrap().results.is_empty());
    assert!(list(&w.outsider).await.unwrap().results.is_empty());

    assert!(s.get_checkin(&w.ada, team.id).await.is_ok());
    assert!(!s.get_checkin(&w.ada, team.id).await.unwrap().can_be_edited);
    assert!(s.get_checkin(&w.max, maxs.id).await.unwrap().can_be_edited);
    assert_code(s.get_checkin(&w.ada, bobs.id).await, ErrorCode::NotFound);
    assert_code(
        s.get_checkin(&w.outsider, team.id).await,
        ErrorCode::NotFound,
    );
    assert_code(s.get_checkin(&w.admin, new_id()).await, ErrorCode::NotFound);

    // Leaving the team ends seeing its check-in; a deactivated person takes part in nothing.
    w.ports
        .teams
        .remove_member(w.org.id, w.eng, w.ada.id, &any_event(&w.org))
        .await
        .unwrap();
    assert_eq!(names(&list(&w.ada).await.unwrap()), ["Max's"]);
    let patch = teamcomm_org::UserPatch::new(Some(false), None).unwrap();
    w.ports
        .people
        .update_user(w.bob.id, &patch, &[])
        .await
        .unwrap();
    assert!(list(&w.bob).await.unwrap().results.is_empty());
}

#[tokio::test]
async fn a_listing_tells_the_readers_completion_the_summary_and_who_is_pending() {
    let w = World::new().await;
    let s = w.service();
    let c = w
        .create(&w.admin, every_day("Team", &[&w.bob], &[w.eng]))
        .await
        .checkin;
    let done = full(&c, &["Shipped", ""]);
    s.submit_response(&w.ada, c.id, &done, None).await.unwrap();
    let filter = CheckinListFilter {
        include_summary: true,
        include_pending_users: true,
        ..CheckinListFilter::default()
    };
    let row =
        |page: teamcomm_kernel::Page<CheckinListing>| page.results.into_iter().next().unwrap();
    let by_ada = row(s
        .list_checkins(&w.ada, &filter, PageRequest::all())
        .await
        .unwrap());
    assert!(by_ada.response_completed);
    assert_eq!(by_ada.date, date!(2026 - 11 - 23));
    let summary = by_ada.summary.unwrap();
    assert_eq!(
        (summary.expected_responses, summary.completed_responses),
        (3, 1)
    );
    assert_eq!(summary.completed_percentage, 33.33);
    let pending: Vec<UserId> = by_ada.pending_users.unwrap().iter().map(|u| u.id).collect();
    assert_eq!(pending, [w.bob.id, w.max.id], "by name");

    let by_bob = row(s
        .list_checkins(&w.bob, &filter, PageRequest::all())
        .await
        .unwrap());
    assert!(!by_bob.response_completed);
    // Another day: nobody answered yet.
    let yesterday = CheckinListFilter {
        date: Some(date!(2026 - 11 - 22)),
        ..filter.clone()
    };
    let other_day = row(s
        .list_checkins(&w.ada, &yesterday, PageRequest::all())
        .await
        .unwrap());
    assert!(!other_day.response_completed);
    assert_eq!(other_day.summary.unwrap().completed_responses, 0);
    // Without asking: neither.
    let plain = row(s
        .list_checkins(&w.ada, &CheckinListFilter::default(), PageRequest::all())
        .await
        .unwrap());
    assert!(plain.summary.is_none() && plain.pending_users.is_none());
    assert!(plain.response_completed);

    // Anonymous check-ins never list who is pending.
    let anon = CheckinInput {
        is_anonymous: Some(true),
        ..CheckinInput::default()
    };
    s.update_config(&w.admin, c.id, anon).await.unwrap();
    let anon_row = row(s
        .list_checkins(&w.admin, &filter, PageRequest::all())
        .await
        .unwrap());
    assert!(anon_row.pending_users.is_none());
    assert_eq!(anon_row.summary.unwrap().completed_responses, 1);
}

#[tokio::test]
async fn listings_filter_by_name_dates_archive_labels_and_stars() {
    let w = World::new().await;
    let s = w.service();
    let mk = |name: &'static str, start: &'static str, end: Option<&'static str>| CheckinInput {
        start_on: Some(start.into()),
        end_on: Some(end.map(str::to_owned)),
        ..every_day(name, &[&w.ada], &[])
    };
    let spring = w
        .create(
            &w.admin,
            mk("Spring retro", "2026-03-01", Some("2026-05-31")),
        )
        .await
        .checkin;
    let daily = w
        .create(&w.admin, mk("Daily", "2026-01-01", None))
        .await
        .checkin;
    let old = w
        .create(
            &w.admin,
            mk("Old standup", "2025-01-01", Some("2025-12-31")),
        )
        .await
        .checkin;
    s.archive_checkin(&w.admin, old.id).await.unwrap();
    let list = |f: CheckinListFilter| {
        let s = s.clone();
        let ada = w.ada.clone();
        async move { s.list_checkins(&ada, &f, PageRequest::all()).await.unwrap() }
    };
    assert_eq!(
        names(&list(CheckinListFilter::default()).await),
        ["Daily", "Spring retro"]
    );
    let archived_too = CheckinListFilter {
        include_archived: true,
        ..CheckinListFilter::default()
    };
    assert_eq!(
        names(&list(archived_too).await),
        ["Daily", "Old standup", "Spring retro"]
    );
    let search = CheckinListFilter {
        search: Some("RETRO".into()),
        ..CheckinListFilter::default()
    };
    assert_eq!(names(&list(search).await), ["Spring retro"]);
    let summer = CheckinListFilter {
        start_date: Some(date!(2026 - 06 - 01)),
        end_date: Some(date!(2026 - 08 - 31)),
        ..CheckinListFilter::default()
    };
    assert_eq!(names(&list(summer).await), ["Daily"]);
    let april = CheckinListFilter {
        start_date: Some(date!(2026 - 04 - 01)),
        end_date: Some(date!(2026 - 04 - 01)),
        ..CheckinListFilter::default()
    };
    assert_eq!(names(&list(april).await), ["Daily", "Spring retro"]);
    let reversed = CheckinListFilter {
        start_date: Some(date!(2026 - 04 - 02)),
        end_date: Some(date!(2026 - 04 - 01)),
        ..CheckinListFilter::default()
    };
    assert_code(
        s.list_checkins(&w.ada, &reversed, PageRequest::all()).await,
        ErrorCode::InvalidDateRange,
    );

    let (red, blue) = (new_id(), new_id());
    w.repo.label(spring.id, red);
    w.repo.label(daily.id, blue);
    let labelled = |labels: Vec<Uuid>| CheckinListFilter {
        labels,
        ..CheckinListFilter::default()
    };
    assert_eq!(names(&list(labelled(vec![red])).await), ["Spring retro"]);
    assert_eq!(
        names(&list(labelled(vec![red, blue])).await),
        ["Daily", "Spring retro"]
    );
    assert!(list(labelled(vec![new_id()])).await.results.is_empty());

    w.repo.star(w.ada.id, spring.id);
    w.repo.star(w.bob.id, daily.id);
    let starred = CheckinListFilter {
        featured: true,
        ..CheckinListFilter::default()
    };
    assert_eq!(names(&list(starred).await), ["Spring retro"]);
    let stars_first = CheckinListFilter {
        prioritize_featured: true,
        ..CheckinListFilter::default()
    };
    assert_eq!(names(&list(stars_first).await), ["Spring retro", "Daily"]);
    let page = s
        .list_checkins(
            &w.ada,
            &CheckinListFilter::default(),
            PageRequest {
                offset: 1,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!((page.count, names(&page)), (2, vec!["Spring retro"]));
}

#[tokio::test]
async fn the_detail_names_participants_and_channels_as_they_are_now() {
    let w = World::new().await;
    let s = w.service();
    let c = w
        .create(
            &w.admin,
            CheckinInput {
                report_channels: Some(vec!["C3".into()]),
                ..every_day("Team", &[&w.bob], &[w.eng])
            },
        )
        .await
        .checkin;
    let d = s.get_checkin(&w.bob, c.id).await.unwrap().directory;
    assert_eq!(d.users, [(w.bob.id, "Bob Test".to_owned())]);
    assert_eq!(d.teams, [(w.eng, "Eng".to_owned())]);
    assert_eq!(d.channels.len(), 1);
    assert_eq!(
        json!([d.channels[0].id, d.channels[0].name, d.channels[0].platform]),
        json!(["C3", "ops", "slack"])
    );
    w.ports
        .teams
        .update_team(w.org.id, w.eng, Some("Engineering"), None)
        .await
        .unwrap();
    let d = s.get_checkin(&w.admin, c.id).await.unwrap().directory;
    assert_eq!(d.teams, [(w.eng, "Engineering".to_owned())]);
}
