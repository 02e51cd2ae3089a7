//! Birthdays and work anniversaries, derived from people's profiles: each at its next
//! occurrence on the person's own calendar (their local day, not UTC's), with a stable id per
//! person and kind.

use teamcomm_kernel::{UserId, zone};
use time::{Date, Month, OffsetDateTime};
use uuid::Uuid;

use crate::User;

/// The kinds of important date derived from people's profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportantDateKind {
    Birthday,
    WorkAnniversary,
}

impl ImportantDateKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            ImportantDateKind::Birthday => "birthday",
            ImportantDateKind::WorkAnniversary => "work_anniversary",
        }
    }

    pub const fn label(self) -> &'static str {
        match self {
            ImportantDateKind::Birthday => "Birthday",
            ImportantDateKind::WorkAnniversary => "Work anniversary",
        }
    }
}

/// A birthday or work anniversary, at its next occurrence on or after the person's today.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportantDate {
    /// Stable per person and kind.
    pub id: Uuid,
    pub user: User,
    pub kind: ImportantDateKind,
    pub next: Date,
    /// Completed years at `next` (work anniversaries only).
    pub years: Option<i32>,
}

/// A stable id for a person's important date of a kind.
pub fn important_date_id(user: UserId, kind: ImportantDateKind) -> Uuid {
    Uuid::new_v5(&user.0, kind.as_str().as_bytes())
}

/// The next occurrence of (month, day) on or after `today`; 29 February falls on 28 February
/// in common years.
fn next_occurrence(today: Date, month: Month, day: u8) -> Date {
    let in_year = |y: i32| {
        Date::from_calendar_date(y, month, day)
            .or_else(|_| Date::from_calendar_date(y, month, day - 1))
            .unwrap_or(today)
    };
    let this_year = in_year(today.year());
    if this_year >= today {
        this_year
    } else {
        in_year(today.year() + 1)
    }
}

/// The important dates of `user` at the instant `now`, counted from the day it is then in the
/// person's time zone: in Kiritimati a birthday is over while it is still ahead in Pago Pago.
pub fn important_dates_of(user: &User, now: OffsetDateTime) -> Vec<ImportantDate> {
    let today = zone::local_date(now, &user.timezone);
    let mut out = Vec::new();
    if let Some(bd) = user.birth_date.as_deref()
        && let Some((m, d)) = bd.split_once('-')
        && let (Ok(m), Ok(d)) = (m.parse::<u8>(), d.parse::<u8>())
        && let Ok(month) = Month::try_from(m)
    {
        out.push(ImportantDate {
            id: important_date_id(user.id, ImportantDateKind::Birthday),
            user: user.clone(),
            kind: ImportantDateKind::Birthday,
            next: next_occurrence(today, month, d),
            years: None,
        });
    }
    if let Some(start) = user.work_anniversary {
        let mut next = next_occurrence(today, start.month(), start.day());
        if next <= start {
            // The first anniversary is a year after the start date.
            next = next_occurrence(
                start.next_day().unwrap_or(start),
                start.month(),
                start.day(),
            );
        }
        out.push(ImportantDate {
            id: important_date_id(user.id, ImportantDateKind::WorkAnniversary),
            user: user.clone(),
            kind: ImportantDateKind::WorkAnniversary,
            next,
            years: Some(next.year() - start.year()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;
    use teamcomm_kernel::OrgId;
    use time::macros::{date, datetime};

    fn user(birth: Option<&str>, start: Option<Date>) -> User {
        in_zone("UTC", birth, start)
    }

    fn in_zone(timezone: &str, birth: Option<&str>, start: Option<Date>) -> User {
        User {
            id: UserId::new(),
            org_id: OrgId::new(),
            email: "a@b.co".into(),
            first_name: "A".into(),
            last_name: "B".into(),
            role: Role::Member,
            is_active: true,
            timezone: timezone.into(),
            occupation: String::new(),
            image: None,
            birth_date: birth.map(str::to_owned),
            work_anniversary: start,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn next_birthday_and_anniversary() {
        let u = user(Some("03-10"), Some(date!(2020 - 06 - 01)));
        let dates = important_dates_of(&u, datetime!(2026-04-01 12:00 UTC));
        assert_eq!(dates[0].next, date!(2027 - 03 - 10));
        assert_eq!(dates[1].next, date!(2026 - 06 - 01));
        assert_eq!(dates[1].years, Some(6));
        assert_eq!(
            dates[0].id,
            important_date_id(u.id, ImportantDateKind::Birthday)
        );
    }

    #[test]
    fn leap_day_and_first_anniversary() {
        let u = user(Some("02-29"), Some(date!(2026 - 05 - 01)));
        let dates = important_dates_of(&u, datetime!(2026-03-01 12:00 UTC));
        assert_eq!(dates[0].next, date!(2027 - 02 - 28));
        assert_eq!(dates[1].next, date!(2027 - 05 - 01));
        assert_eq!(dates[1].years, Some(1));
    }

    #[test]
    fn the_next_occurrence_counts_from_the_persons_own_day() {
        // 2026-03-10 10:30 UTC is already 2026-03-11 00:30 in Kiritimati (UTC+14) and still
        // 2026-03-09 23:30 in Pago Pago (UTC-11).
        let now = datetime!(2026-03-10 10:30 UTC);
        let next = |zone: &str, birth: &str, start: Option<Date>| {
            important_dates_of(&in_zone(zone, Some(birth), start), now)
                .iter()
                .map(|d| (d.next, d.years))
                .collect::<Vec<_>>()
        };
        // A 10 March birthday: over in Kiritimati, tomorrow in Pago Pago, today in UTC.
        assert_eq!(
            next("Pacific/Kiritimati", "03-10", None),
            [(date!(2027 - 03 - 10), None)]
        );
        assert_eq!(
            next("Pacific/Pago_Pago", "03-10", None),
            [(date!(2026 - 03 - 10), None)]
        );
        assert_eq!(next("UTC", "03-10", None), [(date!(2026 - 03 - 10), None)]);
        // An 11 March birthday is today in Kiritimati.
        assert_eq!(
            next("Pacific/Kiritimati", "03-11", None),
            [(date!(2026 - 03 - 11), None)]
        );
        // Just past midnight UTC on 10 March, 9 March is over in UTC but not in Pago Pago; just
        // before it, 10 March has begun in Kiritimati only.
        let next_at = |now, zone: &str, birth: &str| {
            important_dates_of(&in_zone(zone, Some(birth), None), now)[0].next
        };
        let after = datetime!(2026-03-10 00:30 UTC);
        assert_eq!(next_at(after, "UTC", "03-09"), date!(2027 - 03 - 09));
        assert_eq!(
            next_at(after, "Pacific/Pago_Pago", "03-09"),
            date!(2026 - 03 - 09)
        );
        let before = datetime!(2026-03-09 23:30 UTC);
        assert_eq!(
            next_at(before, "Pacific/Kiritimati", "03-09"),
            date!(2027 - 03 - 09)
        );
        assert_eq!(next_at(before, "UTC", "03-09"), date!(2026 - 03 - 09));
        // A work start of 9 March 2020: its anniversary is today in Pago Pago only.
        let start = Some(date!(2020 - 03 - 09));
        assert_eq!(
            next("Pacific/Pago_Pago", "01-01", start)[1],
            (date!(2026 - 03 - 09), Some(6))
        );
        assert_eq!(
            next("Pacific/Kiritimati", "01-01", start)[1],
            (date!(2027 - 03 - 09), Some(7))
        );
    }
}
