//! People of an organization: who may see and change whom (`PeopleService`), profile changes and
//! their validation, and the important dates derived from profiles.

use std::sync::Arc;

use teamcomm_kernel::{Error, FieldErrors, Page, PageRequest, SharedClock, UserId, text, zone};
use time::{Date, Month, macros::date};
use uuid::Uuid;

use crate::access::require_admin;
use crate::events::activation_changed;
use crate::{
    ImportantDate, OrgRepository, Organization, Role, User, commands::parse_role,
    important_dates::important_dates_of,
};

#[cfg(test)]
mod tests;

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

/// The longest first name, last name or occupation, in characters.
pub const MAX_PERSON_TEXT: usize = 150;

/// A person's first or last name, or occupation: may be empty, otherwise the text rule.
pub(crate) fn validate_person_text(field: &str, value: &str) -> Result<String, Error> {
    text::optional_name(field, value, MAX_PERSON_TEXT)
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
    /// Validates every field and names every bad one: names and occupation follow the text rule
    /// (up to 150 characters, may be empty), a zone the IANA database knows, an `MM-DD` birthday, a
    /// `YYYY-MM-DD` work start (its bounds depend on today: [`PeopleService::update_user`]),
    /// a known role.
    pub fn validate(self) -> Result<ProfilePatch, Error> {
        let person =
            |field: &str, v: Option<String>| v.map(|v| validate_person_text(field, &v)).transpose();
        let first_name = person("first_name", self.first_name);
        let last_name = person("last_name", self.last_name);
        let occupation = person("occupation", self.occupation);
        let timezone = self
            .timezone
            .map(|t| zone::validate("timezone", &t))
            .transpose();
        let birth_date = self
            .birth_date
            .map(|d| d.map(|d| validate_birth_date(&d)).transpose())
            .transpose();
        let work_anniversary = self
            .work_anniversary
            .map(|d| {
                d.map(|d| {
                    parse_date(&d).ok_or_else(|| {
                        Error::invalid_field("work_anniversary", "Use the format YYYY-MM-DD.")
                    })
                })
                .transpose()
            })
            .transpose();
        let role = self.role.map(|r| parse_role(&r)).transpose();
        let mut errors = FieldErrors::new();
        errors.note(&first_name);
        errors.note(&last_name);
        errors.note(&occupation);
        errors.note(&timezone);
        errors.note(&birth_date);
        errors.note(&work_anniversary);
        errors.note(&role);
        errors.finish()?;
        Ok(ProfilePatch {
            first_name: first_name?,
            last_name: last_name?,
            timezone: timezone?,
            occupation: occupation?,
            birth_date: birth_date?,
            work_anniversary: work_anniversary?,
            role: role?,
            is_active: self.is_active,
        })
    }
}

impl ProfilePatch {
    /// True when the patch touches what only admins may change.
    pub fn needs_admin(&self) -> bool {
        self.role.is_some() || self.is_active.is_some()
    }

    /// Changes `user` as storing the patch does.
    pub(crate) fn apply_to(&self, user: &mut User) {
        if let Some(v) = &self.first_name {
            user.first_name.clone_from(v);
        }
        if let Some(v) = &self.last_name {
            user.last_name.clone_from(v);
        }
        if let Some(v) = &self.timezone {
            user.timezone.clone_from(v);
        }
        if let Some(v) = &self.occupation {
            user.occupation.clone_from(v);
        }
        if let Some(v) = &self.birth_date {
            user.birth_date.clone_from(v);
        }
        if let Some(v) = self.work_anniversary {
            user.work_anniversary = v;
        }
        if let Some(v) = self.role {
            user.role = v;
        }
        if let Some(v) = self.is_active {
            user.is_active = v;
        }
    }
}

/// Validates a birthday as `MM-DD` (no year: ages are nobody's business, so there is no year to
/// bound).
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

/// The earliest date a person's history may start: nobody working today started before it,
/// and it keeps typos such as `0202-05-01` out.
pub const EARLIEST_PERSONAL_DATE: Date = date!(1900 - 01 - 01);

/// A work start date (whose yearly return is the work anniversary) lies between
/// [`EARLIEST_PERSONAL_DATE`] and `today`: a start in the future has no anniversary to show yet,
/// and year 9999 would be shown as an important date for ever.
pub fn validate_work_start(start: Date, today: Date) -> Result<Date, Error> {
    if start > today {
        return Err(Error::invalid_field(
            "work_anniversary",
            "The work start date cannot be in the future.",
        ));
    }
    if start < EARLIEST_PERSONAL_DATE {
        return Err(Error::invalid_field(
            "work_anniversary",
            "The work start date cannot be before 1900-01-01.",
        ));
    }
    Ok(start)
}

/// The people of the actor's organization, their profiles and important dates.
#[derive(Clone)]
pub struct PeopleService {
    people: Arc<dyn OrgRepository>,
    clock: SharedClock,
}

impl PeopleService {
    pub fn new(people: Arc<dyn OrgRepository>, clock: SharedClock) -> Self {
        PeopleService { people, clock }
    }

    /// The actor's own organization.
    pub async fn organization(&self, actor: &User) -> Result<Organization, Error> {
        Ok(self.people.get_organization(actor.org_id).await?)
    }

    pub async fn list_users(
        &self,
        actor: &User,
        filter: &UserFilter,
        page: PageRequest,
    ) -> Result<Page<User>, Error> {
        Ok(self.people.list_users(actor.org_id, filter, page).await?)
    }

    /// A person of the actor's organization (anyone else is `not_found`).
    pub async fn get_user(&self, actor: &User, id: UserId) -> Result<User, Error> {
        Ok(self.people.get_user(actor.org_id, id).await?)
    }

    /// People change their own profile; admins anyone's, and only admins change roles or
    /// activation. Admins cannot demote or deactivate themselves, so an organization is never
    /// left without the admin who could undo it. Activating or deactivating someone is
    /// reported (`organization.user_activated` / `user_deactivated`) when it changes them.
    pub async fn update_user(
        &self,
        actor: &User,
        id: UserId,
        patch: ProfilePatch,
    ) -> Result<User, Error> {
        let target = self.people.get_user(actor.org_id, id).await?;
        let mut changed = target.clone();
        patch.apply_to(&mut changed);
        let now = self.clock.now();
        if let Some(Some(start)) = patch.work_anniversary {
            // Not after the person's today, in the zone they will have.
            validate_work_start(start, zone::local_date(now, &changed.timezone))?;
        }
        if target.id != actor.id {
            require_admin(actor, "change other people's profiles")?;
        }
        if patch.needs_admin() {
            require_admin(actor, "change roles or deactivate people")?;
            if target.id == actor.id
                && (patch.is_active == Some(false) || patch.role.is_some_and(|r| !r.is_admin()))
            {
                return Err(Error::invalid_field(
                    "role",
                    "Admins cannot demote or deactivate themselves.",
                ));
            }
        }
        // Built whenever the patch names `is_active`; the port records it only if that flips the
        // stored value (so a concurrent change cannot make it report what did not happen).
        let activation: Vec<_> = patch
            .is_active
            .map(|_| activation_changed(&changed, now))
            .into_iter()
            .collect();
        Ok(self
            .people
            .update_profile(actor.org_id, id, &patch, &activation)
            .await?)
    }

    /// Birthdays and work anniversaries, of one person or of everyone, soonest first; each
    /// person's next occurrence counts from their own local day.
    pub async fn important_dates(
        &self,
        actor: &User,
        of: Option<UserId>,
    ) -> Result<Vec<ImportantDate>, Error> {
        let people = match of {
            Some(id) => vec![self.people.get_user(actor.org_id, id).await?],
            None => self.people.users_with_important_dates(actor.org_id).await?,
        };
        let now = self.clock.now();
        let mut dates: Vec<ImportantDate> = people
            .iter()
            .flat_map(|u| important_dates_of(u, now))
            .collect();
        dates.sort_by(|a, b| a.next.cmp(&b.next).then_with(|| a.id.cmp(&b.id)));
        Ok(dates)
    }

    /// One important date of the actor's organization, by its id.
    pub async fn important_date(&self, actor: &User, id: Uuid) -> Result<ImportantDate, Error> {
        self.important_dates(actor, None)
            .await?
            .into_iter()
            .find(|d| d.id == id)
            .ok_or_else(Error::not_found)
    }
}
