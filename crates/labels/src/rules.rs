//! The value rules and the access rules of labels.

use teamcomm_kernel::{Error, ErrorCode, text};
use teamcomm_org::{PlanTier, Role, User};
use uuid::Uuid;

use crate::{Entitlement, Label};

/// The longest label name, in characters.
pub const MAX_LABEL_NAME: usize = 50;
/// The longest label description, in characters.
pub const MAX_LABEL_DESCRIPTION: usize = 500;
/// The colour of a label created without one.
pub const DEFAULT_COLOR: &str = "#4A90E2";
/// The most entities one batch (labels or stars) may name.
pub const MAX_BATCH_ENTITIES: usize = 100;
/// The most labels one call may name.
pub const MAX_LABELS_PER_CALL: usize = 50;

pub(crate) fn label_name(value: &str) -> Result<String, Error> {
    text::name("name", value, MAX_LABEL_NAME)
}

/// Descriptions follow the names' text rule (one visible line) but may be blank: `""` clears.
pub(crate) fn label_description(value: &str) -> Result<String, Error> {
    text::optional_name("description", value, MAX_LABEL_DESCRIPTION)
}

/// `#RRGGBB` (either case), stored upper-case so equal colours compare equal.
pub fn validate_color(value: &str) -> Result<String, Error> {
    let hex = value.strip_prefix('#').unwrap_or_default();
    if hex.len() == 6 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(format!("#{}", hex.to_ascii_uppercase()))
    } else {
        Err(Error::invalid_field(
            "color",
            "Must be a colour in the form #RRGGBB (for example #4A90E2).",
        ))
    }
}

/// What the actor may do with labels on the organization's plan.
pub(crate) fn entitlement(actor: &User, plan: PlanTier) -> Entitlement {
    let entitled = plan != PlanTier::Free;
    let is_guest = actor.role == Role::Guest;
    let admin = entitled && actor.role.is_admin();
    Entitlement {
        entitled,
        can_create: entitled && !is_guest,
        can_manage_all: admin,
        can_hard_delete: admin,
        is_guest,
    }
}

/// Every label write: a paid plan (`paid_plan_required`), then no guests (`guest_not_allowed`).
pub(crate) fn may_write(actor: &User, plan: PlanTier) -> Result<Entitlement, Error> {
    let e = entitlement(actor, plan);
    if !e.entitled {
        // 403, never 402: outside Plan the CLI renders any 402 as "form response quota".
        return Err(Error::new(
            ErrorCode::PaidPlanRequired,
            "Labels need a paid plan. Upgrade your plan to use them.",
        ));
    }
    if e.is_guest {
        return Err(Error::new(
            ErrorCode::GuestNotAllowed,
            "Guests cannot manage labels.",
        ));
    }
    Ok(e)
}

/// Editing or archiving: admins any label, others the labels they created.
pub(crate) fn may_edit(actor: &User, plan: PlanTier, label: &Label) -> Result<(), Error> {
    let e = may_write(actor, plan)?;
    if e.can_manage_all || label.created_by == Some(actor.id) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::PermissionDenied,
            "Only admins and the label's creator can change this label.",
        ))
    }
}

/// Deleting: admins only.
pub(crate) fn may_delete(actor: &User, plan: PlanTier) -> Result<(), Error> {
    if may_write(actor, plan)?.can_hard_delete {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::PermissionDenied,
            "Only organization admins can delete labels; archive it instead.",
        ))
    }
}

/// `too_many_items` (with `extra.limit`) when `n` is over `limit`.
pub(crate) fn check_count(field: &str, n: usize, limit: usize) -> Result<(), Error> {
    if n > limit {
        return Err(Error::new(
            ErrorCode::TooManyItems,
            format!("`{field}` may name at most {limit} items."),
        )
        .with_extra("limit", limit as u64)
        .with_extra("parameter", field));
    }
    Ok(())
}

/// The ids in their first-seen order, each once.
pub(crate) fn distinct<T: Copy + Eq + std::hash::Hash>(ids: &[T]) -> Vec<T> {
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    ids.iter().copied().filter(|id| seen.insert(*id)).collect()
}

/// 404 naming the uuids that were not found (`extra.uuids`, as given).
pub(crate) fn not_found(what: &str, missing: &[Uuid]) -> Error {
    Error::new(ErrorCode::NotFound, format!("Not found: {what}.")).with_extra(
        "uuids",
        missing.iter().map(Uuid::to_string).collect::<Vec<_>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_six_hex_digits_stored_upper_case() {
        assert_eq!(validate_color("#4a90e2").unwrap(), "#4A90E2");
        assert_eq!(validate_color("#ABCDEF").unwrap(), "#ABCDEF");
        for bad in [
            "4A90E2", "#4A90E", "#4A90E2F", "#GGGGGG", "", "#", " #4A90E2", "#4A90É2",
        ] {
            let e = validate_color(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{bad:?}");
            assert!(e.field_errors().contains_key("color"), "{bad:?}");
        }
    }

    #[test]
    fn names_and_descriptions_follow_the_text_rule() {
        assert_eq!(label_name("  Urgent ").unwrap(), "Urgent");
        assert!(label_name(&"a".repeat(50)).is_ok());
        for bad in [
            String::new(),
            "\u{200b}".into(),
            "a\nb".into(),
            "a".repeat(51),
        ] {
            let e = label_name(&bad).unwrap_err();
            assert!(e.field_errors().contains_key("name"), "{bad:?}");
        }
        assert_eq!(label_description("  ").unwrap(), "");
        assert!(label_description(&"é".repeat(500)).is_ok());
        let e = label_description(&"é".repeat(501)).unwrap_err();
        assert!(e.field_errors().contains_key("description"));
    }

    #[test]
    fn batches_are_bounded_and_deduplicated() {
        assert!(check_count("entity_uuids", 100, 100).is_ok());
        let e = check_count("entity_uuids", 101, 100).unwrap_err();
        assert_eq!(e.code(), ErrorCode::TooManyItems);
        assert_eq!(e.extra()["limit"], 100);
        assert_eq!(e.extra()["parameter"], "entity_uuids");
        assert_eq!(distinct(&[3, 1, 3, 2, 1]), [3, 1, 2]);
    }
}
