//! Views that several route modules share, and the timestamp format of every view.

use serde::Serialize;
use teamcomm_kernel::UserId;
use teamcomm_messaging::Channel;
use teamcomm_org::{Invitation, User};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// Formats a timestamp as ISO 8601 (RFC 3339) in UTC.
pub fn iso(t: OffsetDateTime) -> String {
    Iso(t).to_string()
}

/// A timestamp shown as [`iso`] shows it, written without allocating (a page of tasks holds
/// a hundred of them). A timestamp RFC 3339 cannot write (a year before 0) shows as "".
#[derive(Debug, Clone, Copy)]
pub struct Iso(pub OffsetDateTime);

impl Iso {
    /// RFC 3339 in UTC, as `time`'s `Rfc3339` writes it (seconds, then the sub-second digits
    /// without their trailing zeros, none when there are none, then `Z`), by hand: `time`'s
    /// general formatter measured about 4% of a page of tasks' server CPU, for three
    /// timestamps a task.
    fn write<'b>(&self, buf: &'b mut [u8; 48]) -> &'b str {
        let t = self.0.to_offset(time::UtcOffset::UTC);
        // Each in one go: the date is kept as a year and a day of the year, so `month()` and
        // `day()` asked apart would each work out the calendar date.
        let (year, month, day) = t.to_calendar_date();
        let (hour, minute, second, mut nanos) = t.to_hms_nano();
        // RFC 3339 has four digits of year, no sign.
        let Ok(year @ 0..=9999) = u32::try_from(year) else {
            return "";
        };
        let mut width = 9;
        while nanos > 0 && nanos.is_multiple_of(10) {
            nanos /= 10;
            width -= 1;
        }
        let mut out = Out { buf, at: 0 };
        out.digits(year, 4);
        out.byte(b'-');
        out.digits(u32::from(u8::from(month)), 2);
        out.byte(b'-');
        out.digits(u32::from(day), 2);
        out.byte(b'T');
        out.digits(u32::from(hour), 2);
        out.byte(b':');
        out.digits(u32::from(minute), 2);
        out.byte(b':');
        out.digits(u32::from(second), 2);
        if nanos > 0 {
            out.byte(b'.');
            out.digits(nanos, width);
        }
        out.byte(b'Z');
        let n = out.at;
        // Only ASCII digits and separators were written.
        std::str::from_utf8(&buf[..n]).unwrap_or_default()
    }
}

/// What [`Iso::write`] has written so far.
struct Out<'b> {
    buf: &'b mut [u8; 48],
    at: usize,
}

impl Out<'_> {
    fn byte(&mut self, b: u8) {
        self.buf[self.at] = b;
        self.at += 1;
    }

    /// `n` in `width` decimal digits, zero-padded (written from the last).
    fn digits(&mut self, mut n: u32, width: u32) {
        let end = self.at + width as usize;
        for at in (self.at..end).rev() {
            // One decimal digit, below 10: the cast keeps it whole.
            self.buf[at] = b'0' + (n % 10) as u8;
            n /= 10;
        }
        self.at = end;
    }
}

impl std::fmt::Display for Iso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.write(&mut [0; 48]))
    }
}

impl Serialize for Iso {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.write(&mut [0; 48]))
    }
}

/// A person of the organization. `email` only with `include_email=true`. Borrows from the
/// [`User`] it shows: a directory page serialises without copying its strings.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserView<'a> {
    #[schema(value_type = String)]
    #[serde(serialize_with = "as_display")]
    pub id: UserId,
    #[schema(value_type = String)]
    #[serde(serialize_with = "as_display")]
    pub uuid: UserId,
    #[schema(value_type = String)]
    #[serde(serialize_with = "as_display")]
    pub full_name: FullName<'a>,
    pub first_name: &'a str,
    pub last_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<&'a str>,
    pub role: &'static str,
    pub is_active: bool,
    pub timezone: &'a str,
    pub occupation: &'a str,
    pub image: Option<&'a str>,
    /// `MM-DD`.
    pub birth_date: Option<&'a str>,
    /// `YYYY-MM-DD`: when the person joined; its yearly return is the work anniversary.
    #[schema(value_type = Option<String>)]
    #[serde(serialize_with = "as_display_opt")]
    pub work_anniversary: Option<time::Date>,
}

/// "First Last", written straight into the output.
#[derive(Debug, Clone, Copy)]
pub struct FullName<'a>(&'a User);

impl std::fmt::Display for FullName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (first, last) = (self.0.first_name.trim(), self.0.last_name.trim());
        match (first.is_empty(), last.is_empty()) {
            (false, false) => write!(f, "{first} {last}"),
            (false, true) => f.write_str(first),
            _ => f.write_str(last),
        }
    }
}

pub fn as_display<S: serde::Serializer>(
    v: &impl std::fmt::Display,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

pub fn as_display_opt<S: serde::Serializer>(
    v: &Option<impl std::fmt::Display>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

impl<'a> UserView<'a> {
    pub fn new(u: &'a User, include_email: bool) -> Self {
        UserView {
            id: u.id,
            uuid: u.id,
            full_name: FullName(u),
            first_name: &u.first_name,
            last_name: &u.last_name,
            email: include_email.then_some(u.email.as_str()),
            role: u.role.as_str(),
            is_active: u.is_active,
            timezone: &u.timezone,
            occupation: &u.occupation,
            image: u.image.as_deref(),
            birth_date: u.birth_date.as_deref(),
            work_anniversary: u.work_anniversary,
        }
    }
}

/// A pending invitation.
#[derive(Debug, Serialize, ToSchema)]
pub struct InvitationView {
    pub id: String,
    pub uuid: String,
    /// The e-mail or chat-platform id invited.
    pub identifier: String,
    pub email: Option<String>,
    pub is_guest: bool,
    pub joinable_team_uuids: Vec<String>,
    pub joinable_followup_uuids: Vec<String>,
    pub invited_by: Option<String>,
    pub resend_count: i32,
    pub created_at: String,
}

impl From<&Invitation> for InvitationView {
    fn from(i: &Invitation) -> Self {
        InvitationView {
            id: i.id.to_string(),
            uuid: i.id.to_string(),
            identifier: i.identifier.clone(),
            email: i.is_email.then(|| i.identifier.clone()),
            is_guest: i.is_guest,
            joinable_team_uuids: i.team_ids.iter().map(ToString::to_string).collect(),
            joinable_followup_uuids: i.followup_ids.iter().map(ToString::to_string).collect(),
            invited_by: i.invited_by.map(|u| u.to_string()),
            resend_count: i.resend_count,
            created_at: iso(i.created_at),
        }
    }
}

/// Invitations created or resent.
#[derive(Debug, Serialize, ToSchema)]
pub struct InvitedUsers {
    pub count: usize,
    pub members: Vec<InvitationView>,
}

/// A chat channel usable in `report_channels`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChannelView {
    pub id: String,
    pub name: String,
    pub platform: String,
    /// `channel`, `private_channel`, `group_chat` or `direct_message`.
    #[serde(rename = "type")]
    pub channel_type: String,
}

impl From<&Channel> for ChannelView {
    fn from(c: &Channel) -> Self {
        ChannelView {
            id: c.id.clone(),
            name: c.name.clone(),
            platform: c.platform.clone(),
            channel_type: c.channel_type.as_str().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn iso_writes_rfc3339_in_utc_with_the_subseconds_kept() {
        for (t, shown) in [
            (
                datetime!(2026-11-25 16:08:16.733993 UTC),
                "2026-11-25T16:08:16.733993Z",
            ),
            (datetime!(2026-11-25 16:08:16 UTC), "2026-11-25T16:08:16Z"),
            (
                datetime!(2026-11-25 18:08:16.5 +02:00),
                "2026-11-25T16:08:16.5Z",
            ),
            (
                datetime!(2026-01-02 03:04:05.123456789 UTC),
                "2026-01-02T03:04:05.123456789Z",
            ),
        ] {
            assert_eq!(iso(t), shown);
            assert_eq!(
                serde_json::to_string(&Iso(t)).unwrap(),
                format!("\"{shown}\"")
            );
        }
    }

    /// The hand-written formatter against `time`'s own, over the edges of every component:
    /// years 0 and 9999, every width of sub-seconds, offsets that change the day and year.
    #[test]
    fn iso_writes_what_times_rfc3339_writes() {
        use time::format_description::well_known::Rfc3339;
        let days = [
            datetime!(0000-01-01 00:00:00 UTC),
            datetime!(9999-12-31 23:59:59.999999999 UTC),
            datetime!(2024-02-29 12:34:56 UTC),
            datetime!(2026-12-31 23:30:00 -01:00),
            datetime!(2027-01-01 00:30:00 +01:00),
        ];
        let mut nanos: u32 = 1;
        for day in days {
            for width in 0..=9 {
                let t = day.replace_nanosecond(nanos).unwrap();
                nanos = (nanos % 100_000_000) * 10 + width;
                let reference = t.to_offset(time::UtcOffset::UTC).format(&Rfc3339).unwrap();
                assert_eq!(iso(t), reference, "{t}");
            }
        }
        assert_eq!(iso(datetime!(-0001-12-31 23:00:00 UTC)), "");
    }
}
