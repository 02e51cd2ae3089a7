//! Which days a check-in's cadence falls on (pure calendar arithmetic on a person's local days;
//! the zone only decides the instant, see [`super::Checkin::trigger_at`]), and the cron
//! expressions of `custom` cadences.

use time::{Date, Time};

use super::{FrequencyAdvanced, FrequencyType, Recurrence, Schedule};

/// 0 = Sunday … 6 = Saturday, as schedules number weekdays.
pub fn weekday_number(day: Date) -> u8 {
    day.weekday().number_days_from_sunday()
}

/// The Sunday that starts `day`'s week.
fn week_start(day: Date) -> Date {
    day - time::Duration::days(i64::from(weekday_number(day)))
}

fn month_index(day: Date) -> i32 {
    day.year() * 12 + i32::from(u8::from(day.month()))
}

/// True when the cadence falls on `day` (the check-in's dates and state are checked by
/// [`super::Checkin::is_due_on`]):
/// - `daily`: on the schedule's weekdays, every `frequency` days counted from `start_on`;
/// - `weekly`: on the schedule's weekdays of every `frequency`-th week (weeks start on Sunday)
///   counted from `start_on`'s week;
/// - `monthly`: on the schedule's weekdays within the first seven days of every
///   `frequency`-th month counted from `start_on`'s month ("the first Monday");
/// - `custom`: on the days the cron expression names.
pub fn falls_on(schedule: &Schedule, recurrence: &Recurrence, day: Date) -> bool {
    let on_weekday = schedule.days.contains(&weekday_number(day));
    let every = i64::from(recurrence.frequency.max(1));
    let start = recurrence.start_on;
    match recurrence.advanced {
        FrequencyAdvanced::Custom => recurrence.cron.as_ref().is_some_and(|c| c.matches(day)),
        FrequencyAdvanced::Monthly => {
            let months = i64::from(month_index(day) - month_index(start));
            on_weekday && day.day() <= 7 && months >= 0 && months % every == 0
        }
        FrequencyAdvanced::Disabled => match recurrence.frequency_type {
            FrequencyType::Daily => {
                let days = (day - start).whole_days();
                on_weekday && days >= 0 && days % every == 0
            }
            FrequencyType::Weekly => {
                let weeks = (week_start(day) - week_start(start)).whole_weeks();
                on_weekday && weeks >= 0 && weeks % every == 0
            }
        },
    }
}

/// A five-field cron expression (minute hour day-of-month month day-of-week) naming the days
/// of a `custom` cadence. Minute and hour are single numbers: a check-in asks once a day, at
/// that time. Fields take `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`, and lists;
/// day-of-week counts 0 (or 7) = Sunday. As in cron, when both day fields are restricted a day
/// matching either is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    source: String,
    time: Time,
    days_of_month: u64,
    months: u64,
    weekdays: u64,
    any_day_of_month: bool,
    any_weekday: bool,
}

impl Cron {
    /// Reads an expression; the error says what is wrong, for the client.
    pub fn parse(source: &str) -> Result<Cron, String> {
        let fields: Vec<&str> = source.split_whitespace().collect();
        let [minute, hour, dom, month, dow] = fields[..] else {
            return Err(
                "Use five fields: minute hour day-of-month month day-of-week, e.g. `0 9 * * 1,3,5`."
                    .to_owned(),
            );
        };
        let single = |field: &str, max: u8, what: &str| -> Result<u8, String> {
            field
                .parse::<u8>()
                .ok()
                .filter(|n| *n <= max)
                .filter(|_| field.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| format!("The {what} must be one number from 0 to {max}."))
        };
        let minute = single(minute, 59, "minute")?;
        let hour = single(hour, 23, "hour")?;
        let weekdays = parse_field(dow, 0, 7, "day-of-week")?;
        // 7 is another name for Sunday.
        let weekdays = (weekdays & 0x7f) | u64::from(weekdays & (1 << 7) != 0);
        Ok(Cron {
            source: fields.join(" "),
            time: Time::from_hms(hour, minute, 0).map_err(|e| e.to_string())?,
            days_of_month: parse_field(dom, 1, 31, "day-of-month")?,
            months: parse_field(month, 1, 12, "month")?,
            weekdays,
            any_day_of_month: dom == "*",
            any_weekday: dow == "*",
        })
    }

    /// The expression, normalized to single spaces.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The time of day it names.
    pub fn time(&self) -> Time {
        self.time
    }

    pub fn matches(&self, day: Date) -> bool {
        let bit = |set: u64, n: u8| set & (1 << n) != 0;
        if !bit(self.months, u8::from(day.month())) {
            return false;
        }
        let dom = bit(self.days_of_month, day.day());
        let dow = bit(self.weekdays, weekday_number(day));
        match (self.any_day_of_month, self.any_weekday) {
            (true, true) => true,
            (false, true) => dom,
            (true, false) => dow,
            (false, false) => dom || dow,
        }
    }
}

/// One field as a bit set of the values it names.
fn parse_field(field: &str, min: u8, max: u8, what: &str) -> Result<u64, String> {
    let bad = || format!("The {what} field `{field}` is not valid (values {min} to {max}).");
    let number = |s: &str| -> Result<u8, String> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse::<u8>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(bad)
    };
    let mut set = 0u64;
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (r, number(s).ok().filter(|s| *s > 0).ok_or_else(bad)?),
            None => (part, 1),
        };
        let (from, to) = match range {
            "*" => (min, max),
            r => match r.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None if part.contains('/') => (number(r)?, max),
                None => {
                    let n = number(r)?;
                    (n, n)
                }
            },
        };
        if from > to {
            return Err(bad());
        }
        set |= (from..=to)
            .step_by(usize::from(step))
            .fold(0u64, |acc, n| acc | (1 << n));
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, time};

    fn schedule(days: &[u8]) -> Schedule {
        Schedule {
            days: days.to_vec(),
            time: time!(09:00),
            timezone: "UTC".into(),
        }
    }

    fn recurrence(kind: FrequencyType, every: u16, start: Date) -> Recurrence {
        Recurrence {
            frequency_type: kind,
            frequency: every,
            advanced: FrequencyAdvanced::Disabled,
            cron: None,
            start_on: start,
            end_on: None,
        }
    }

    fn days_in(s: &Schedule, r: &Recurrence, from: Date, n: i64) -> Vec<Date> {
        (0..n)
            .map(|i| from + time::Duration::days(i))
            .filter(|d| falls_on(s, r, *d))
            .collect()
    }

    #[test]
    fn weekdays_are_numbered_from_sunday() {
        assert_eq!(weekday_number(date!(2026 - 11 - 22)), 0, "a Sunday");
        assert_eq!(weekday_number(date!(2026 - 11 - 28)), 6, "a Saturday");
    }

    #[test]
    fn weekly_every_other_week_counts_from_the_start_week() {
        // Start on a Wednesday; the Monday of that week (before the start) is still week 0.
        let s = schedule(&[1, 3]);
        let r = recurrence(FrequencyType::Weekly, 2, date!(2026 - 11 - 04));
        assert_eq!(
            days_in(&s, &r, date!(2026 - 11 - 01), 28),
            [
                date!(2026 - 11 - 02),
                date!(2026 - 11 - 04),
                date!(2026 - 11 - 16),
                date!(2026 - 11 - 18),
            ]
        );
        // Before the start week: never.
        assert!(!falls_on(&s, &r, date!(2026 - 10 - 19)));
    }

    #[test]
    fn daily_is_every_nth_day_on_the_schedules_weekdays() {
        let r = recurrence(FrequencyType::Daily, 1, date!(2026 - 11 - 02));
        assert_eq!(
            days_in(&schedule(&[1, 2, 3, 4, 5]), &r, date!(2026 - 11 - 01), 8).len(),
            5
        );
        let r = recurrence(FrequencyType::Daily, 3, date!(2026 - 11 - 02));
        assert_eq!(
            days_in(
                &schedule(&[0, 1, 2, 3, 4, 5, 6]),
                &r,
                date!(2026 - 11 - 01),
                11
            ),
            [
                date!(2026 - 11 - 02),
                date!(2026 - 11 - 05),
                date!(2026 - 11 - 08),
                date!(2026 - 11 - 11)
            ]
        );
    }

    #[test]
    fn monthly_is_the_first_weekday_of_every_nth_month() {
        let mut r = recurrence(FrequencyType::Weekly, 2, date!(2026 - 01 - 15));
        r.advanced = FrequencyAdvanced::Monthly;
        let first_mondays: Vec<Date> = days_in(&schedule(&[1]), &r, date!(2026 - 01 - 01), 200);
        assert_eq!(
            first_mondays,
            [
                date!(2026 - 01 - 05),
                date!(2026 - 03 - 02),
                date!(2026 - 05 - 04),
                date!(2026 - 07 - 06),
            ]
        );
    }

    #[test]
    fn custom_cadences_follow_their_cron_days() {
        let mut r = recurrence(FrequencyType::Weekly, 1, date!(2026 - 01 - 01));
        r.advanced = FrequencyAdvanced::Custom;
        r.cron = Some(Cron::parse("30 8 1,15 * *").unwrap());
        assert_eq!(
            days_in(&schedule(&[]), &r, date!(2026 - 02 - 01), 28),
            [date!(2026 - 02 - 01), date!(2026 - 02 - 15)]
        );
        // Both day fields restricted: either matches (the 13th, or any Friday).
        let c = Cron::parse("0 9 13 * 5").unwrap();
        assert!(c.matches(date!(2026 - 02 - 13)));
        assert!(c.matches(date!(2026 - 02 - 20)), "a Friday");
        assert!(!c.matches(date!(2026 - 02 - 14)));
        // Weekdays with 7 as Sunday, steps and ranges, months.
        let c = Cron::parse("0  7 * 6-8  7").unwrap();
        assert_eq!(c.as_str(), "0 7 * 6-8 7");
        assert_eq!(c.time(), time!(07:00));
        assert!(c.matches(date!(2026 - 06 - 07)), "a Sunday in June");
        assert!(!c.matches(date!(2026 - 05 - 31)), "a Sunday in May");
        let c = Cron::parse("0 9 */10 * *").unwrap();
        assert!(c.matches(date!(2026 - 03 - 21)) && !c.matches(date!(2026 - 03 - 20)));
    }

    #[test]
    fn cron_expressions_are_refused_with_a_reason() {
        for bad in [
            "0 9 * *",
            "* 9 * * *",
            "0 9,17 * * *",
            "0 24 * * *",
            "0 9 0 * *",
            "0 9 * 13 *",
            "0 9 * * 8",
            "0 9 5-1 * *",
            "0 9 */0 * *",
            "0 9 a * *",
            "0 9 * * 1,",
        ] {
            assert!(Cron::parse(bad).is_err(), "{bad}");
        }
    }
}
