//! The role rules every organization service applies before touching its ports (spec
//! "Admin-only endpoints"): admin-only actions answer `org_admin_required`, guest-refused ones
//! `guest_not_allowed`, and naming a person of another organization `member_in_scope_required`.

use teamcomm_kernel::{Error, ErrorCode, RepoError, UserId};

use crate::{OrgRepository, Role, User};

/// `org_admin_required` unless the actor is an admin; `what` completes "Only organization admins
/// can …".
pub(crate) fn require_admin(actor: &User, what: &str) -> Result<(), Error> {
    if actor.role.is_admin() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::OrgAdminRequired,
            format!("Only organization admins can {what}."),
        ))
    }
}

/// `guest_not_allowed` for guests.
pub(crate) fn refuse_guest(actor: &User) -> Result<(), Error> {
    if actor.role == Role::Guest {
        return Err(Error::new(
            ErrorCode::GuestNotAllowed,
            "Guest accounts cannot do this.",
        ));
    }
    Ok(())
}

/// The person `user` of the actor's organization; anyone else is `member_in_scope_required`
/// (not `not_found`: the caller named them on purpose, and the answer says why it was refused).
pub(crate) async fn person_in_scope(
    people: &dyn OrgRepository,
    actor: &User,
    user: UserId,
) -> Result<User, Error> {
    match people.get_user(actor.org_id, user).await {
        Ok(u) => Ok(u),
        Err(RepoError::NotFound) => Err(Error::new(
            ErrorCode::MemberInScopeRequired,
            "That user is not a member of your organization.",
        )),
        Err(e) => Err(e.into()),
    }
}
