//! IANA time zones, from the real zone database (jiff reads the system's `/usr/share/zoneinfo`,
//! falling back to a bundled copy). A person's "day" — the day a check-in response counts for,
//! the day a birthday falls on — is their local day, not UTC's.

use jiff::Timestamp;
use jiff::civil;
use jiff::tz::TimeZone;
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};

use crate::Error;

/// The zone named `name`, if the zone database knows it.
fn zone(name: &str) -> Option<TimeZone> {
    if name.eq_ignore_ascii_case("UTC") {
        return Some(TimeZone::UTC);
    }
    TimeZone::get(name).ok()
}

/// True when the zone database knows `name` (`UTC`, `Europe/Madrid`, `Etc/GMT+3`...).
pub fn is_known(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && zone(name).is_some()
}

/// Validates a zone name for the body field `field`.
pub fn validate(field: &str, name: &str) -> Result<String, Error> {
    let name = name.trim();
    if is_known(name) {
        Ok(name.to_owned())
    } else {
        Err(Error::invalid_field(
            field,
            "Enter a valid IANA time zone, e.g. Europe/Madrid.",
        ))
    }
}

/// `name`, or UTC when the database does not know it (stored names were validated; this only
/// guards against a zone removed from a later database).
fn zone_or_utc(name: &str) -> TimeZone {
    zone(name).unwrap_or(TimeZone::UTC)
}

fn to_timestamp(instant: OffsetDateTime) -> Timestamp {
    Timestamp::new(instant.unix_timestamp(), instant.nanosecond() as i32)
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

fn to_date(d: civil::Date) -> Date {
    Month::try_from(d.month() as u8)
        .ok()
        .and_then(|m| Date::from_calendar_date(i32::from(d.year()), m, d.day() as u8).ok())
        .unwrap_or(Date::MIN)
}

fn to_civil(d: Date) -> civil::Date {
    civil::date(d.year() as i16, d.month() as i8, d.day() as i8)
}

/// The wall-clock date and time at `instant` in the zone `name`.
pub fn local_datetime(instant: OffsetDateTime, name: &str) -> PrimitiveDateTime {
    let local = to_timestamp(instant).to_zoned(zone_or_utc(name));
    let t = local.time();
    PrimitiveDateTime::new(
        to_date(local.date()),
        Time::from_hms(t.hour() as u8, t.minute() as u8, t.second() as u8)
            .unwrap_or(Time::MIDNIGHT),
    )
}

/// The calendar day at `instant` in the zone `name`.
pub fn local_date(instant: OffsetDateTime, name: &str) -> Date {
    local_datetime(instant, name).date()
}

/// The instant the wall clock of zone `name` shows `time` on `date`. A time skipped by a
/// daylight-saving jump resolves to the instant after the jump (02:30 on a spring-forward day
/// is 03:30); a repeated time resolves to its first occurrence (RFC 5545's rule).
pub fn instant_at(date: Date, time: Time, name: &str) -> OffsetDateTime {
    let civil = to_civil(date).at(
        time.hour() as i8,
        time.minute() as i8,
        time.second() as i8,
        0,
    );
    let ts = zone_or_utc(name)
        .to_ambiguous_zoned(civil)
        .compatible()
        .map(|z| z.timestamp())
        .unwrap_or(Timestamp::UNIX_EPOCH);
    OffsetDateTime::from_unix_timestamp(ts.as_second()).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// The instants a span of days covers on the wall clock of zone `name`: from the first day's
/// midnight to the midnight after the last (a daylight-saving day has 23 or 25 hours).
pub fn day_span(
    from: Option<Date>,
    until: Option<Date>,
    name: &str,
) -> (Option<OffsetDateTime>, Option<OffsetDateTime>) {
    let midnight = |d: Date| instant_at(d, Time::MIDNIGHT, name);
    (
        from.map(midnight),
        // `Date::MAX` has no next day: no upper bound.
        until.and_then(Date::next_day).map(midnight),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime, time};

    #[test]
    fn a_span_of_days_runs_from_midnight_to_midnight_in_the_zone() {
        // 1 November 2026 ends daylight saving in New York: that day has 25 hours.
        let (from, until) = day_span(
            Some(date!(2026 - 11 - 01)),
            Some(date!(2026 - 11 - 01)),
            "America/New_York",
        );
        assert_eq!(from, Some(datetime!(2026-11-01 04:00 UTC)));
        assert_eq!(until, Some(datetime!(2026-11-02 05:00 UTC)));
        assert_eq!(day_span(None, Some(Date::MAX), "UTC"), (None, None));
    }

    #[test]
    fn knows_real_zones_only() {
        assert!(is_known("UTC"));
        assert!(is_known("Europe/Madrid"));
        assert!(is_known("America/Argentina/Buenos_Aires"));
        assert!(!is_known("Mars/Olympus_Mons"));
        assert!(!is_known(""));
        assert_eq!(validate("timezone", " Asia/Tokyo ").unwrap(), "Asia/Tokyo");
        let e = validate("timezone", "Europe/Atlantis").unwrap_err();
        assert!(e.field_errors().contains_key("timezone"));
    }

    #[test]
    fn the_local_day_is_not_utcs() {
        // 23:30 UTC on 1 March is already 2 March in Tokyo and still 1 March in New York.
        let at = datetime!(2026-03-01 23:30 UTC);
        assert_eq!(local_date(at, "Asia/Tokyo"), date!(2026 - 03 - 02));
        assert_eq!(local_date(at, "America/New_York"), date!(2026 - 03 - 01));
        // 03:00 UTC on 2 March is still 1 March in Los Angeles.
        let at = datetime!(2026-03-02 03:00 UTC);
        assert_eq!(local_date(at, "America/Los_Angeles"), date!(2026 - 03 - 01));
        assert_eq!(local_date(at, "UTC"), date!(2026 - 03 - 02));
    }

    #[test]
    fn wall_clock_times_follow_daylight_saving() {
        // Madrid is UTC+1 in winter, UTC+2 in summer.
        assert_eq!(
            instant_at(date!(2026 - 01 - 15), time!(09:00), "Europe/Madrid"),
            datetime!(2026-01-15 08:00 UTC)
        );
        assert_eq!(
            instant_at(date!(2026 - 07 - 15), time!(09:00), "Europe/Madrid"),
            datetime!(2026-07-15 07:00 UTC)
        );
        // 29 March 2026: 02:00 -> 03:00 in Madrid; 02:30 does not exist and means 03:30 CEST.
        assert_eq!(
            instant_at(date!(2026 - 03 - 29), time!(02:30), "Europe/Madrid"),
            datetime!(2026-03-29 01:30 UTC)
        );
        // 25 October 2026: 03:00 -> 02:00; 02:30 happens twice, the first (CEST) is chosen.
        assert_eq!(
            instant_at(date!(2026 - 10 - 25), time!(02:30), "Europe/Madrid"),
            datetime!(2026-10-25 00:30 UTC)
        );
        assert_eq!(
            local_datetime(datetime!(2026-10-25 01:30 UTC), "Europe/Madrid"),
            datetime!(2026-10-25 02:30)
        );
    }
}
