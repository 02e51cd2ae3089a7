//! The directory's events in the outbox (docs/events.md, "Organization events"): written with
//! the membership or activation change in one transaction, only when the change happens; and
//! people's local days (important dates, mood) from the real zone database.

use serde_json::{Value, json};
use teamcomm_kernel::{UserId, zone};
use teamcomm_tests::{Resp, TestApp};
use time::{Date, OffsetDateTime};

const ADDED: &str = "organization.team_user_added";
const REMOVED: &str = "organization.team_user_removed";
const ACTIVATED: &str = "organization.user_activated";
const DEACTIVATED: &str = "organization.user_deactivated";

struct Org {
    app: TestApp,
    org: String,
    /// The admin's web session (to make keys for others).
    session: String,
    admin_key: String,
    member: String,
    guest: String,
}

async fn setup() -> Org {
    let app = TestApp::spawn().await;
    let (org, _, session, admin_key) = app.org_with_admin_key("business").await;
    let member = app.create_user(&org, "member").await;
    let guest = app.create_user(&org, "guest").await;
    Org {
        app,
        org,
        session,
        admin_key,
        member,
        guest,
    }
}

impl Org {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Resp {
        self.app
            .send(method, path, &[("X-API-KEY", &self.admin_key)], body)
            .await
    }

    /// Creates a team with these first members; returns its uuid.
    async fn team(&self, name: &str, members: &[&str]) -> String {
        let r = self
            .call(
                "POST",
                "/v1/teams/",
                Some(json!({"name": name, "member_uuids": members})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["uuid"].as_str().unwrap().to_owned()
    }

    async fn events(&self, event_type: &str) -> Vec<Value> {
        self.app.events(&self.org, Some(event_type)).await
    }

    /// The person as stored, for the fields events show.
    async fn stored(&self, user: &str) -> teamcomm_org::User {
        let id: UserId = user.parse().unwrap();
        self.app.orgs().find_user(id).await.unwrap()
    }

    /// What team events say of a person.
    async fn team_person(&self, user: &str) -> Value {
        let u = self.stored(user).await;
        json!({"uuid": user, "full_name": u.full_name(), "email": u.email})
    }

    async fn is_member(&self, team: &str, user: &str) -> bool {
        self.app
            .team_repo()
            .is_member(team.parse().unwrap(), user.parse().unwrap())
            .await
            .unwrap()
    }
}

/// Asserts the envelope of an organization event written at about `since`.
#[track_caller]
fn assert_envelope(payload: &Value, event_type: &str, org: &str, since: OffsetDateTime) {
    assert_eq!(payload["event"], event_type, "{payload}");
    assert_eq!(payload["organization_uuid"], org);
    assert_eq!(payload["object_uuid"], Value::Null);
    let id: uuid::Uuid = payload["event_id"].as_str().unwrap().parse().unwrap();
    assert_eq!(id.get_version_num(), 7);
    let at = OffsetDateTime::parse(
        payload["event_timestamp"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert!(
        at >= since - time::Duration::seconds(1) && at <= OffsetDateTime::now_utc(),
        "{at}"
    );
}

#[actix_web::test]
async fn people_joining_and_leaving_teams_are_in_the_outbox() {
    let o = setup().await;
    let since = OffsetDateTime::now_utc();
    // Named twice at creation: joins once, one event.
    let core = o.team("Core", &[&o.member, &o.member]).await;
    let events = o.events(ADDED).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_envelope(&events[0], ADDED, &o.org, since);
    let member = o.team_person(&o.member).await;
    assert_eq!(
        events[0]["data"],
        json!({"team": {"uuid": core, "name": "Core"}, "user": member, "role": "member"})
    );

    // A new member by PUT, with a role: reported with it.
    let path = format!("/v1/teams/{core}/members/{}/", o.guest);
    let r = o.call("PUT", &path, Some(json!({"role": "manager"}))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let guest = o.team_person(&o.guest).await;
    let events = o.events(ADDED).await;
    assert_eq!(events.len(), 2);
    assert_envelope(&events[1], ADDED, &o.org, since);
    assert_eq!(
        events[1]["data"],
        json!({"team": {"uuid": core, "name": "Core"}, "user": guest, "role": "manager"})
    );

    // A role-only PUT or PATCH of a member: no event.
    let r = o.call("PUT", &path, Some(json!({"role": "member"}))).await;
    assert_eq!(
        (r.status, r.body["team_role"].as_str()),
        (200, Some("member"))
    );
    let r = o
        .call("PATCH", &path, Some(json!({"role": "manager"})))
        .await;
    assert_eq!(
        (r.status, r.body["team_role"].as_str()),
        (200, Some("manager"))
    );
    assert_eq!(o.events(ADDED).await.len(), 2);

    // Leaving: reported with the role they had; a second DELETE finds nothing to report.
    let r = o.call("DELETE", &path, None).await;
    assert_eq!(r.status, 204, "{}", r.text);
    o.call("DELETE", &path, None)
        .await
        .assert_error(404, "not_found");
    let removed = o.events(REMOVED).await;
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_envelope(&removed[0], REMOVED, &o.org, since);
    assert_eq!(
        removed[0]["data"],
        json!({"team": {"uuid": core, "name": "Core"}, "user": guest, "role": "manager"})
    );
    assert!(!o.is_member(&core, &o.guest).await);

    // A team invitation: only who was not a member yet is reported.
    let r = o
        .call(
            "POST",
            &format!("/v1/teams/{core}/invite/"),
            Some(json!({"user_uuids": [o.member, o.guest]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["members_added"]["count"], 2);
    let events = o.events(ADDED).await;
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[2]["data"]["user"], guest);
    assert_eq!(events[2]["data"]["role"], "member");
    assert!(o.is_member(&core, &o.guest).await);
}

#[actix_web::test]
async fn activating_and_deactivating_people_is_in_the_outbox_once() {
    let o = setup().await;
    let since = OffsetDateTime::now_utc();
    let path = format!("/v1/users/{}/", o.member);
    let r = o
        .call("PATCH", &path, Some(json!({"is_active": false})))
        .await;
    assert_eq!(
        (r.status, r.body["is_active"].as_bool()),
        (200, Some(false))
    );
    let events = o.events(DEACTIVATED).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_envelope(&events[0], DEACTIVATED, &o.org, since);
    let stored = o.stored(&o.member).await;
    assert_eq!(
        events[0]["data"],
        json!({"user": {
            "uuid": o.member,
            "full_name": stored.full_name(),
            "email": stored.email,
            "role": "member",
            "is_active": false,
        }})
    );

    // Re-stating it, or changing something else: nothing more.
    for body in [json!({"is_active": false}), json!({"occupation": "Pilot"})] {
        let r = o.call("PATCH", &path, Some(body)).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    assert_eq!(o.events(DEACTIVATED).await.len(), 1);
    assert!(o.events(ACTIVATED).await.is_empty());

    // The operator activates them again, as a guest.
    let r = o
        .app
        .operator(
            "PATCH",
            &format!("/operator/v1/users/{}/", o.member),
            Some(json!({"is_active": true, "role": "guest"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let events = o.events(ACTIVATED).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_envelope(&events[0], ACTIVATED, &o.org, since);
    assert_eq!(
        events[0]["data"]["user"],
        json!({
            "uuid": o.member,
            "full_name": stored.full_name(),
            "email": stored.email,
            "role": "guest",
            "is_active": true,
        })
    );
    let r = o
        .app
        .operator(
            "PATCH",
            &format!("/operator/v1/users/{}/", o.member),
            Some(json!({"is_active": true})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(o.events(ACTIVATED).await.len(), 1);
}

#[actix_web::test]
async fn a_change_whose_event_cannot_be_written_is_not_stored() {
    let o = setup().await;
    let core = o.team("Core", &[]).await;
    let guest_path = format!("/v1/teams/{core}/members/{}/", o.guest);
    let r = o.call("PUT", &guest_path, None).await;
    assert_eq!(r.status, 201, "{}", r.text);
    o.app.break_outbox().await;

    // A new membership needs its event: refused, and not stored.
    let member_path = format!("/v1/teams/{core}/members/{}/", o.member);
    o.call("PUT", &member_path, None)
        .await
        .assert_error(500, "internal_error");
    assert!(!o.is_member(&core, &o.member).await);
    let r = o.call("GET", &format!("/v1/teams/{core}/"), None).await;
    assert_eq!(r.body["members_count"], 1);
    // Leaving too: the guest stays.
    o.call("DELETE", &guest_path, None)
        .await
        .assert_error(500, "internal_error");
    assert!(o.is_member(&core, &o.guest).await);
    // A role change writes no event, so it still works.
    let r = o
        .call("PUT", &guest_path, Some(json!({"role": "manager"})))
        .await;
    assert_eq!(
        (r.status, r.body["team_role"].as_str()),
        (200, Some("manager"))
    );

    // A deactivation: refused, the person still active; an edit without one still works.
    let user_path = format!("/v1/users/{}/", o.member);
    o.call("PATCH", &user_path, Some(json!({"is_active": false})))
        .await
        .assert_error(500, "internal_error");
    assert!(o.stored(&o.member).await.is_active);
    let r = o.call("GET", &user_path, None).await;
    assert_eq!((r.status, r.body["is_active"].as_bool()), (200, Some(true)));
    let r = o
        .call("PATCH", &user_path, Some(json!({"occupation": "Pilot"})))
        .await;
    assert_eq!(
        (r.status, r.body["occupation"].as_str()),
        (200, Some("Pilot"))
    );
    assert_eq!(
        o.app.events(&o.org, None).await.len(),
        1,
        "only the first join"
    );
}

/// The day it is in `zone` now, read before and after `during` runs (they differ only if a
/// midnight passes meanwhile): the answer must be one of them.
async fn local_days<T>(zone: &str, during: impl Future<Output = T>) -> (T, [Date; 2]) {
    let before = zone::local_date(OffsetDateTime::now_utc(), zone);
    let out = during.await;
    let after = zone::local_date(OffsetDateTime::now_utc(), zone);
    (out, [before, after])
}

/// The same month and day in `year` (29 February falls on the 28th in common years).
fn in_year(day: Date, year: i32) -> Date {
    Date::from_calendar_date(year, day.month(), day.day())
        .or_else(|_| Date::from_calendar_date(year, day.month(), day.day() - 1))
        .unwrap()
}

#[actix_web::test]
async fn important_dates_count_from_each_persons_local_day() {
    let o = setup().await;
    // Kiritimati (UTC+14) is always a day or two ahead of Pago Pago (UTC-11): a birthday on
    // Pago Pago's today is still ahead there and already over in Kiritimati.
    let pago_today = zone::local_date(OffsetDateTime::now_utc(), "Pacific/Pago_Pago");
    let birthday = format!("{:02}-{:02}", pago_today.month() as u8, pago_today.day());
    for (user, tz) in [
        (&o.member, "Pacific/Kiritimati"),
        (&o.guest, "Pacific/Pago_Pago"),
    ] {
        let r = o
            .call(
                "PATCH",
                &format!("/v1/users/{user}/"),
                Some(json!({"timezone": tz, "birth_date": birthday})),
            )
            .await;
        assert_eq!((r.status, r.body["timezone"].as_str()), (200, Some(tz)));
    }
    let (r, pago_days) = local_days(
        "Pacific/Pago_Pago",
        o.call("GET", "/v1/important-date/", None),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let dates: Vec<(&str, &str)> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["user"]["uuid"].as_str().unwrap(),
                d["start_date"].as_str().unwrap(),
            )
        })
        .collect();
    if pago_days[0] == pago_days[1] {
        let this_year = in_year(pago_today, pago_today.year()).to_string();
        let next_year = in_year(pago_today, pago_today.year() + 1).to_string();
        assert_eq!(
            dates,
            [
                (o.guest.as_str(), this_year.as_str()),
                (o.member.as_str(), next_year.as_str())
            ]
        );
    }

    // A zone the database does not know is refused, and nothing changes.
    let r = o
        .call(
            "PATCH",
            &format!("/v1/users/{}/", o.member),
            Some(json!({"timezone": "Europe/Atlantis"})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["timezone"].is_array(), "{}", r.text);
    assert_eq!(o.stored(&o.member).await.timezone, "Pacific/Kiritimati");
}

#[actix_web::test]
async fn a_mood_score_is_for_the_callers_own_day() {
    let o = setup().await;
    for (user, tz) in [
        (&o.member, "Pacific/Kiritimati"),
        (&o.guest, "Pacific/Pago_Pago"),
    ] {
        let r = o
            .call(
                "PATCH",
                &format!("/v1/users/{user}/"),
                Some(json!({"timezone": tz})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let (_, key) = o
            .app
            .create_key(&o.session, json!({"name": tz, "for_user_id": user}))
            .await;
        let headers = [("X-API-KEY", key.as_str())];
        let (r, days) = local_days(
            tz,
            o.app.send(
                "POST",
                "/v1/mood/track/",
                &headers,
                Some(json!({"score": 4})),
            ),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let day = r.body["motivation"]["date"].as_str().unwrap().to_owned();
        assert!(
            days.iter().any(|d| d.to_string() == day),
            "{tz}: {day} is not one of {days:?}"
        );
        let r = o
            .app
            .send(
                "GET",
                &format!("/v1/mood/track/?date={day}"),
                &headers,
                None,
            )
            .await;
        assert_eq!(
            (r.status, r.body["motivation"]["score"].as_i64()),
            (200, Some(4)),
            "{}",
            r.text
        );
    }
}
