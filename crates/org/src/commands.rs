//! Validated inputs for changing organizations and users. Validation lives here so that the HTTP
//! operator API and the `teamcomm admin` command apply exactly the same rules.

use teamcomm_kernel::{Error, FieldErrors, text};

use crate::people::validate_person_text;
use crate::{PlanTier, Role, User};

/// The longest organization name, in characters.
pub const MAX_ORGANIZATION_NAME: usize = 200;

/// A new organization, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOrganization {
    pub name: String,
    pub plan: PlanTier,
    pub api_access: bool,
    pub plan_beta: bool,
    pub exchange_tokens: bool,
    pub platform: Option<String>,
}

impl NewOrganization {
    pub fn new(
        name: &str,
        plan: &str,
        api_access: Option<bool>,
        plan_beta: Option<bool>,
        exchange_tokens: Option<bool>,
    ) -> Result<Self, Error> {
        let name = validate_organization_name(name);
        let plan = parse_plan(plan);
        let mut errors = FieldErrors::new();
        errors.note(&name);
        errors.note(&plan);
        errors.finish()?;
        let plan = plan?;
        Ok(NewOrganization {
            name: name?,
            plan,
            api_access: api_access.unwrap_or(plan.default_api_access()),
            plan_beta: plan_beta.unwrap_or(false),
            exchange_tokens: exchange_tokens.unwrap_or(false),
            platform: None,
        })
    }

    /// Names the connected chat platform (`slack`, `msteams`, `google_chat`, `discord`…).
    pub fn with_platform(mut self, platform: Option<&str>) -> Result<Self, Error> {
        self.platform = platform.map(validate_platform).transpose()?;
        Ok(self)
    }
}

/// A partial update of an organization; `None` keeps the stored value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrganizationPatch {
    pub name: Option<String>,
    pub plan: Option<PlanTier>,
    pub api_access: Option<bool>,
    pub plan_beta: Option<bool>,
    pub exchange_tokens: Option<bool>,
    /// `Some(None)` clears it (the platform was disconnected).
    pub platform: Option<Option<String>>,
}

impl OrganizationPatch {
    pub fn new(
        name: Option<&str>,
        plan: Option<&str>,
        api_access: Option<bool>,
        plan_beta: Option<bool>,
        exchange_tokens: Option<bool>,
    ) -> Result<Self, Error> {
        let name = name.map(validate_organization_name).transpose();
        let plan = plan.map(parse_plan).transpose();
        let mut errors = FieldErrors::new();
        errors.note(&name);
        errors.note(&plan);
        errors.finish()?;
        Ok(OrganizationPatch {
            name: name?,
            plan: plan?,
            api_access,
            plan_beta,
            exchange_tokens,
            platform: None,
        })
    }

    pub fn with_platform(mut self, platform: Option<&str>) -> Result<Self, Error> {
        self.platform = platform.map(validate_platform).transpose()?.map(Some);
        Ok(self)
    }

    /// Clears the organization's platform.
    pub fn without_platform(mut self) -> Self {
        self.platform = Some(None);
        self
    }
}

fn validate_platform(p: &str) -> Result<String, Error> {
    let p = p.trim().to_ascii_lowercase();
    if p.is_empty()
        || p.len() > 40
        || !p
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(Error::invalid_field(
            "platform",
            "Name the chat platform, e.g. slack, msteams, google_chat.",
        ));
    }
    Ok(p)
}

/// A new person, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUser {
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub role: Role,
    pub is_active: bool,
}

impl NewUser {
    pub fn new(
        email: &str,
        first_name: &str,
        last_name: &str,
        role: &str,
        is_active: Option<bool>,
    ) -> Result<Self, Error> {
        let email = normalize_email(email)
            .ok_or_else(|| Error::invalid_field("email", "Enter a valid email address."));
        let first_name = validate_person_text("first_name", first_name);
        let last_name = validate_person_text("last_name", last_name);
        let role = parse_role(role);
        let mut errors = FieldErrors::new();
        errors.note(&email);
        errors.note(&first_name);
        errors.note(&last_name);
        errors.note(&role);
        errors.finish()?;
        Ok(NewUser {
            email: email?,
            first_name: first_name?,
            last_name: last_name?,
            role: role?,
            is_active: is_active.unwrap_or(true),
        })
    }
}

/// A partial update of a person by an operator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserPatch {
    pub is_active: Option<bool>,
    pub role: Option<Role>,
}

impl UserPatch {
    pub fn new(is_active: Option<bool>, role: Option<&str>) -> Result<Self, Error> {
        Ok(UserPatch {
            is_active,
            role: role.map(parse_role).transpose()?,
        })
    }

    /// Changes `user` as storing the patch does.
    pub(crate) fn apply_to(&self, user: &mut User) {
        if let Some(v) = self.is_active {
            user.is_active = v;
        }
        if let Some(r) = self.role {
            user.role = r;
        }
    }
}

fn validate_organization_name(name: &str) -> Result<String, Error> {
    text::name("name", name, MAX_ORGANIZATION_NAME)
}

/// The longest e-mail address (RFC 5321's path limit), in bytes.
const MAX_EMAIL: usize = 254;

/// The lower-cased address when `raw` looks like one (`local@domain.tld`, no spaces); the one
/// e-mail rule for people and invitations.
pub fn normalize_email(raw: &str) -> Option<String> {
    let email = raw.trim().to_lowercase();
    let valid = email.len() <= MAX_EMAIL
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !domain.starts_with('.')
        })
        && !email.contains(char::is_whitespace)
        && !email.chars().any(char::is_control);
    valid.then_some(email)
}

fn parse_plan(plan: &str) -> Result<PlanTier, Error> {
    PlanTier::parse(plan).ok_or_else(|| {
        Error::invalid_field(
            "plan",
            "Must be one of: free, starter, business, enterprise.",
        )
    })
}

pub(crate) fn parse_role(role: &str) -> Result<Role, Error> {
    Role::parse(role)
        .ok_or_else(|| Error::invalid_field("role", "Must be one of: admin, member, guest."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamcomm_kernel::ErrorCode;

    #[test]
    fn api_access_defaults_to_paid() {
        let free = NewOrganization::new("Acme", "free", None, None, None).unwrap();
        assert!(!free.api_access);
        let paid = NewOrganization::new("Acme", "business", None, None, None).unwrap();
        assert!(paid.api_access);
        let off = NewOrganization::new("Acme", "business", Some(false), None, None).unwrap();
        assert!(!off.api_access);
    }

    #[test]
    fn refuses_unknown_plan_and_blank_name() {
        let e = NewOrganization::new("Acme", "gold", None, None, None).unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        assert!(e.field_errors().contains_key("plan"));
        let e = NewOrganization::new("  ", "free", None, None, None).unwrap_err();
        assert!(e.field_errors().contains_key("name"));
        // Both at once.
        for e in [
            NewOrganization::new("\u{200B}", "gold", None, None, None).unwrap_err(),
            OrganizationPatch::new(Some(""), Some("gold"), None, None, None).unwrap_err(),
        ] {
            let fields: Vec<&str> = e.field_errors().keys().map(String::as_str).collect();
            assert_eq!(fields, ["name", "plan"]);
        }
    }

    #[test]
    fn normalises_email_and_refuses_bad_ones() {
        let u = NewUser::new(" Ada@Example.COM ", "Ada", "Lovelace", "admin", None).unwrap();
        assert_eq!(u.email, "ada@example.com");
        assert!(u.is_active);
        for bad in [
            "",
            "ada",
            "@example.com",
            "ada@localhost",
            "a da@example.com",
        ] {
            assert!(
                NewUser::new(bad, "A", "B", "member", None).is_err(),
                "{bad}"
            );
        }
        assert!(NewUser::new("a@b.co", "A", "B", "owner", None).is_err());
    }
}
