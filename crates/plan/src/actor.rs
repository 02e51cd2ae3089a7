//! Who acts in the Plan area, and the door rules that follow from it (spec "Plan (Beta) area
//! authentication", wire contract §4.0).
//!
//! A person (login session, CLI token or personal API key) reads and writes as themselves. An
//! organization or agent key acts for its organization and no person: it needs the Tasks
//! scopes for reads and writes, never holds `tasks:admin`, and is refused where a person is
//! needed. Guests are refused everywhere in Plan.

use std::sync::Arc;

use teamcomm_kernel::{Error, ErrorCode, OrgId, UserId};
use teamcomm_org::{Organization, Role, User};

/// The Plan scopes a credential holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlanScopes {
    pub read: bool,
    pub write: bool,
    pub admin: bool,
}

impl PlanScopes {
    pub const ALL: PlanScopes = PlanScopes {
        read: true,
        write: true,
        admin: true,
    };
}

/// What a Plan door needs of its caller (the route table states it per route).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoorNeed {
    /// `tasks:read`.
    Read,
    /// `tasks:write`.
    Write,
    /// `tasks:admin`: structure (boards, columns, projects); a person who is not a guest.
    Admin,
}

impl DoorNeed {
    pub const fn scope(self) -> &'static str {
        match self {
            DoorNeed::Read => "tasks:read",
            DoorNeed::Write => "tasks:write",
            DoorNeed::Admin => "tasks:admin",
        }
    }
}

/// The caller of a Plan door, established before the handler runs.
#[derive(Debug, Clone)]
pub struct PlanActor {
    pub org: Arc<Organization>,
    /// The person behind the credential; `None` for organization and agent keys.
    pub person: Option<User>,
    pub scopes: PlanScopes,
    /// The agent named on the request (`agent_name` or `X-Dailybot-Agent-Name`), or the
    /// registered agent whose key this is: recorded as executor next to the person.
    pub agent_name: Option<AgentName>,
}

impl PlanActor {
    pub fn org_id(&self) -> OrgId {
        self.org.id
    }

    /// The person, or 400 `actor_required` (a door that needs one, e.g. `owner=me`).
    pub fn person(&self) -> Result<&User, Error> {
        self.person.as_ref().ok_or_else(actor_required)
    }

    pub fn person_id(&self) -> Option<UserId> {
        self.person.as_ref().map(|u| u.id)
    }

    /// An organization admin (org-admin doors: reorders, routes, reports).
    pub fn is_org_admin(&self) -> bool {
        self.person.as_ref().is_some_and(|u| u.role.is_admin())
    }

    /// The rule of a door, applied before anything is read: guests never; a person holds
    /// every scope their credential carries (a session or CLI token all three; a personal key
    /// its own, where `tasks:write` carries the person's structure rights too); a key without a
    /// person needs the scope and never holds `tasks:admin`; person-only doors refuse keys
    /// without a person.
    pub fn check_door(&self, need: DoorNeed, person_only: bool) -> Result<(), Error> {
        match &self.person {
            Some(user) => {
                if user.role == Role::Guest {
                    return Err(Error::new(
                        ErrorCode::GuestNotAllowed,
                        "Guests cannot use Plan.",
                    ));
                }
                let held = match need {
                    DoorNeed::Read => self.scopes.read,
                    DoorNeed::Write => self.scopes.write,
                    DoorNeed::Admin => self.scopes.admin || self.scopes.write,
                };
                if held {
                    Ok(())
                } else {
                    Err(insufficient_scope(need.scope()))
                }
            }
            None if person_only => Err(Error::new(
                ErrorCode::InsufficientScope,
                "This endpoint needs a person's credential; organization and agent keys act for no person.",
            )
            .with_extra("required_scope", need.scope())),
            None => {
                let held = match need {
                    DoorNeed::Read => self.scopes.read,
                    DoorNeed::Write => self.scopes.write,
                    DoorNeed::Admin => false,
                };
                if held {
                    Ok(())
                } else {
                    Err(insufficient_scope(need.scope()))
                }
            }
        }
    }

    /// Who did it, as recorded next to a change.
    pub fn executor(&self) -> Executor {
        Executor {
            user: self.person_id(),
            agent: self.agent_name.as_ref().map(|a| a.as_str().to_owned()),
        }
    }
}

/// The person and/or agent recorded on a change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Executor {
    pub user: Option<UserId>,
    pub agent: Option<String>,
}

pub fn actor_required() -> Error {
    Error::new(
        ErrorCode::ActorRequired,
        "This call needs a person; organization and agent keys act for no person.",
    )
}

pub fn insufficient_scope(scope: &'static str) -> Error {
    Error::new(
        ErrorCode::InsufficientScope,
        format!("This credential lacks the {scope} scope."),
    )
    .with_extra("required_scope", scope)
}

/// An agent's name as a request states it: at most 128 characters of letters, numbers, spaces
/// and `. - _ ( ) ' # + / & , :`; never truncated (`invalid_agent_attribution`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentName(String);

pub const MAX_AGENT_NAME: usize = 128;

impl AgentName {
    pub fn parse(raw: &str) -> Result<AgentName, Error> {
        let name = raw.trim();
        let refuse = |why: &str| {
            Error::new(
                ErrorCode::InvalidAgentAttribution,
                format!("Invalid agent name: {why}."),
            )
            .with_extra("parameter", "agent_name")
        };
        if name.is_empty() {
            return Err(refuse("it is empty"));
        }
        if name.chars().count() > MAX_AGENT_NAME {
            return Err(refuse("it is longer than 128 characters"));
        }
        let allowed = |c: char| c.is_alphanumeric() || c == ' ' || ".-_()'#+/&,:".contains(c);
        if !name.chars().all(allowed) {
            return Err(refuse(
                "use letters, numbers, spaces and . - _ ( ) ' # + / & , : only",
            ));
        }
        Ok(AgentName(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names_are_checked_not_truncated() {
        assert_eq!(
            AgentName::parse(" Claude (code) #2 ").unwrap().as_str(),
            "Claude (code) #2"
        );
        assert!(AgentName::parse("Zoë & co: v1.2/x+y, 'q'").is_ok());
        for bad in ["", "   ", "a<b", "semi;colon", &"x".repeat(129)] {
            let e = AgentName::parse(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidAgentAttribution, "{bad:?}");
        }
        assert!(AgentName::parse(&"x".repeat(128)).is_ok());
    }
}
