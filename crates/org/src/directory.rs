//! Directory inputs and read models: filters, profile changes, invitations, mood entries and
//! important dates. Validation lives here so every entry point applies the same rules.

use teamcomm_kernel::{Error, ErrorCode, OrgId, TeamId, UserId};
use time::{Date, Month, OffsetDateTime};
use uuid::Uuid;

use crate::{Role, User};

/// Which people a listing covers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct UserFilter {
    /// Case-insensitive match on name or e-mail.
    pub search: Option<String>,
    pub is_active: Option<bool>,
}

impl UserFilter {
    pub fn is_unfiltered(&self) -> bool {
        self.search.is_none() && self.is_active.is_none()
    }
}

/// Which teams a listing covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamFilter {
    /// Only teams this person belongs to (members see their own teams).
    pub member_of: Option<UserId>,
    pub include_archived: bool,
    pub search: Option<String>,
}

/// A change to a person's profile. `Some(None)` clears a nullable field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfilePatch {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub timezone: Option<String>,
    pub occupation: Option<String>,
    pub birth_date: Option<Option<String>>,
    pub work_anniversary: Option<Option<Date>>,
    /// Admin only.
    pub role: Option<Role>,
    /// Admin only.
    pub is_active: Option<bool>,
}

/// A profile change as sent: `Some(None)` on a nullable field means "clear it".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileInput {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub timezone: Option<String>,
    pub occupation: Option<String>,
    pub birth_date: Option<Option<String>>,
    pub work_anniversary: Option<Option<String>>,
    pub role: Option<String>,
    pub is_active: Option<bool>,
}

impl ProfileInput {
    /// Validates every field (names and occupation up to 150 characters, IANA-style zone,
    /// `MM-DD` birthday, `YYYY-MM-DD` anniversary, a known role).
    pub fn validate(self) -> Result<ProfilePatch, Error> {
        let person = |field: &str, v: Option<String>| {
            v.map(|v| crate::commands::validate_person_name(field, &v))
                .transpose()
        };
        Ok(ProfilePatch {
            first_name: person("first_name", self.first_name)?,
            last_name: person("last_name", self.last_name)?,
            timezone: self.timezone.map(|t| validate_timezone(&t)).transpose()?,
            occupation: person("occupation", self.occupation)?,
            birth_date: self
                .birth_date
                .map(|d| d.map(|d| validate_birth_date(&d)).transpose())
                .transpose()?,
            work_anniversary: self
                .work_anniversary
                .map(|d| {
                    d.map(|d| {
                        parse_date(&d).ok_or_else(|| {
                            Error::invalid_field("work_anniversary", "Use the format YYYY-MM-DD.")
                        })
                    })
                    .transpose()
                })
                .transpose()?,
            role: self
                .role
                .map(|r| crate::commands::parse_role(&r))
                .transpose()?,
            is_active: self.is_active,
        })
    }
}

impl ProfilePatch {
    /// True when the patch touches what only admins may change.
    pub fn needs_admin(&self) -> bool {
        self.role.is_some() || self.is_active.is_some()
    }
}

/// Validates an IANA-style zone name (`UTC`, `America/New_York`, `Etc/GMT+3`). The zone
/// database itself is not consulted: the name is stored for clients to interpret.
pub fn validate_timezone(tz: &str) -> Result<String, Error> {
    let tz = tz.trim();
    let ok = tz == "UTC"
        || (tz.len() <= 64
            && tz.contains('/')
            && tz.split('/').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_+-".contains(c))
            }));
    if ok {
        Ok(tz.to_owned())
    } else {
        Err(Error::invalid_field(
            "timezone",
            "Enter a valid IANA time zone, e.g. Europe/Madrid.",
        ))
    }
}

/// Validates a birthday as `MM-DD`.
pub fn validate_birth_date(s: &str) -> Result<String, Error> {
    let bad = || Error::invalid_field("birth_date", "Use the format MM-DD, e.g. 04-23.");
    let (m, d) = s.split_once('-').ok_or_else(bad)?;
    if m.len() != 2 || d.len() != 2 {
        return Err(bad());
    }
    let (m, d): (u8, u8) = (m.parse().map_err(|_| bad())?, d.parse().map_err(|_| bad())?);
    let month = Month::try_from(m).map_err(|_| bad())?;
    // 2024 is a leap year, so 02-29 is a valid birthday.
    Date::from_calendar_date(2024, month, d).map_err(|_| bad())?;
    Ok(format!("{m:02}-{d:02}"))
}

/// Parses `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> Option<Date> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(s.trim(), &fmt)
        .ok()
        .filter(|_| s.trim().len() == 10)
}

/// A pending invitation to join the organization (and possibly some of its teams).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub id: Uuid,
    pub org_id: OrgId,
    /// An e-mail address, or a chat-platform user id.
    pub identifier: String,
    pub is_email: bool,
    pub is_guest: bool,
    pub team_ids: Vec<TeamId>,
    pub followup_ids: Vec<Uuid>,
    pub invited_by: Option<UserId>,
    pub resend_count: i32,
    pub created_at: OffsetDateTime,
}

/// A validated invitation to create (or to resend when one is pending).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInvitation {
    pub identifier: String,
    pub is_email: bool,
    pub is_guest: bool,
    pub team_ids: Vec<TeamId>,
    pub followup_ids: Vec<Uuid>,
    pub invited_by: Option<UserId>,
}

/// The most identifiers one invitation request may carry.
pub const MAX_INVITES_PER_REQUEST: usize = 100;

/// Splits identifiers into e-mails (normalised) and platform ids, refusing blanks.
pub fn classify_identifier(raw: &str) -> Result<(String, bool), Error> {
    let id = raw.trim();
    if id.is_empty() || id.len() > 254 {
        return Err(Error::invalid_field(
            "users_identifiers",
            "Identifiers must be 1 to 254 characters.",
        ));
    }
    if id.contains('@') {
        let email = id.to_lowercase();
        let valid = email
            .split_once('@')
            .is_some_and(|(l, d)| !l.is_empty() && d.contains('.'))
            && !email.contains(char::is_whitespace);
        if !valid {
            return Err(Error::invalid_field(
                "users_identifiers",
                format!("\"{id}\" is not a valid e-mail address."),
            ));
        }
        Ok((email, true))
    } else {
        Ok((id.to_owned(), false))
    }
}

/// One mood score of a person for a day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoodEntry {
    pub user_id: UserId,
    pub date: Date,
    pub score: i16,
    pub created_at: OffsetDateTime,
}

/// Validates a mood score (1 to 5).
pub fn validate_score(score: i64) -> Result<i16, Error> {
    if (1..=5).contains(&score) {
        Ok(score as i16)
    } else {
        Err(Error::new(
            ErrorCode::InvalidScore,
            "The score must be a whole number from 1 to 5.",
        ))
    }
}

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

/// A birthday or work anniversary, at its next occurrence on or after `today`.
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

/// The important dates of `user`, as of `today`.
pub fn important_dates_of(user: &User, today: Date) -> Vec<ImportantDate> {
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
    use time::macros::date;

    fn user(birth: Option<&str>, start: Option<Date>) -> User {
        User {
            id: UserId::new(),
            org_id: OrgId::new(),
            email: "a@b.co".into(),
            first_name: "A".into(),
            last_name: "B".into(),
            role: Role::Member,
            is_active: true,
            timezone: "UTC".into(),
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
        let dates = important_dates_of(&u, date!(2026 - 04 - 01));
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
        let dates = important_dates_of(&u, date!(2026 - 03 - 01));
        assert_eq!(dates[0].next, date!(2027 - 02 - 28));
        assert_eq!(dates[1].next, date!(2027 - 05 - 01));
        assert_eq!(dates[1].years, Some(1));
    }

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
        for bad in [
            ProfileInput {
                last_name: Some("x".repeat(151)),
                ..ProfileInput::default()
            },
            ProfileInput {
                timezone: Some("Not A Zone".into()),
                ..ProfileInput::default()
            },
            ProfileInput {
                work_anniversary: Some(Some("15/06/2020".into())),
                ..ProfileInput::default()
            },
            ProfileInput {
                role: Some("owner".into()),
                ..ProfileInput::default()
            },
        ] {
            assert_eq!(
                bad.validate().unwrap_err().code(),
                ErrorCode::ParamsValidationError
            );
        }
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
        assert_eq!(
            validate_score(0).unwrap_err().code(),
            ErrorCode::InvalidScore
        );
        assert_eq!(
            classify_identifier(" Ada@X.io ").unwrap(),
            ("ada@x.io".to_owned(), true)
        );
        assert_eq!(
            classify_identifier("U123").unwrap(),
            ("U123".to_owned(), false)
        );
        assert!(classify_identifier("a@b").is_err());
        assert_eq!(parse_date("2026-02-03"), Some(date!(2026 - 02 - 03)));
        assert_eq!(parse_date("2026-2-3"), None);
    }
}
