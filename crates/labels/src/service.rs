//! `LabelService` (labels, their entitlement, the labels entities carry) and `FeaturedService`
//! (people's private stars).

use std::collections::HashSet;
use std::sync::Arc;

use teamcomm_kernel::{Error, ErrorCode, OrgId, Page, PageRequest, RepoError};
use teamcomm_org::{PlanTier, User};
use uuid::Uuid;

use crate::rules::{
    check_count, distinct, entitlement, label_description, label_name, may_delete, may_edit,
    may_write, not_found,
};
use crate::{
    BatchMode, DEFAULT_COLOR, Deletion, Entitlement, EntityKind, FeaturedRepository, Label,
    LabelFilter, LabelId, LabelPatch, LabelRepository, LabelledEntities, MAX_BATCH_ENTITIES,
    MAX_LABELS_PER_CALL, NewLabel, validate_color,
};

#[cfg(test)]
mod tests;

/// The unique index that makes names unique per organization regardless of case.
const NAME_KEY: &str = "labels_org_lower_name_key";

/// Changes a caller asks for, as sent; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelChanges {
    pub name: Option<String>,
    pub color: Option<String>,
    /// `""` clears it.
    pub description: Option<String>,
    /// False restores an archived label.
    pub is_archived: Option<bool>,
}

/// A write refused by the name's unique index is `duplicate_name`.
fn name_taken(e: RepoError) -> Error {
    match e {
        RepoError::Conflict { constraint } if constraint == NAME_KEY => Error::new(
            ErrorCode::DuplicateName,
            "Another label of your organization has this name.",
        ),
        other => other.into(),
    }
}

/// `not_found` naming those of `ids` that are not entities of `kind` in `org`.
async fn require_entities(
    entities: &dyn LabelledEntities,
    org: OrgId,
    kind: EntityKind,
    ids: &[Uuid],
) -> Result<(), Error> {
    let found: HashSet<Uuid> = entities
        .existing(org, kind, ids)
        .await?
        .into_iter()
        .collect();
    let missing: Vec<Uuid> = ids
        .iter()
        .copied()
        .filter(|id| !found.contains(id))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(not_found(kind.as_str(), &missing))
    }
}

/// The organization's labels and the labels its forms, check-ins and workflows carry.
#[derive(Clone)]
pub struct LabelService {
    labels: Arc<dyn LabelRepository>,
    entities: Arc<dyn LabelledEntities>,
}

impl LabelService {
    pub fn new(labels: Arc<dyn LabelRepository>, entities: Arc<dyn LabelledEntities>) -> Self {
        LabelService { labels, entities }
    }

    /// What the actor may do with labels on the organization's `plan`.
    pub fn entitlement(&self, actor: &User, plan: PlanTier) -> Entitlement {
        entitlement(actor, plan)
    }

    /// Anyone may read labels, on any plan (labels made before a downgrade stay visible).
    pub async fn list_labels(
        &self,
        actor: &User,
        filter: &LabelFilter,
        page: PageRequest,
    ) -> Result<Page<Label>, Error> {
        Ok(self.labels.list_labels(actor.org_id, filter, page).await?)
    }

    pub async fn get_label(&self, actor: &User, id: LabelId) -> Result<Label, Error> {
        Ok(self.labels.get_label(actor.org_id, id).await?)
    }

    /// Creates a label (paid plans, not guests); the colour defaults to [`DEFAULT_COLOR`].
    pub async fn create_label(
        &self,
        actor: &User,
        plan: PlanTier,
        name: &str,
        color: Option<&str>,
        description: Option<&str>,
    ) -> Result<Label, Error> {
        may_write(actor, plan)?;
        let new = NewLabel {
            id: LabelId::new(),
            name: label_name(name)?,
            color: validate_color(color.unwrap_or(DEFAULT_COLOR))?,
            description: label_description(description.unwrap_or_default())?,
            created_by: actor.id,
        };
        self.labels
            .create_label(actor.org_id, &new)
            .await
            .map_err(name_taken)
    }

    /// Changes a label: admins any, others their own (`permission_denied`).
    pub async fn update_label(
        &self,
        actor: &User,
        plan: PlanTier,
        id: LabelId,
        changes: &LabelChanges,
    ) -> Result<Label, Error> {
        may_write(actor, plan)?;
        let patch = LabelPatch {
            name: changes.name.as_deref().map(label_name).transpose()?,
            color: changes.color.as_deref().map(validate_color).transpose()?,
            description: changes
                .description
                .as_deref()
                .map(label_description)
                .transpose()?,
            is_archived: changes.is_archived,
        };
        self.edit(actor, plan, id, &patch).await
    }

    /// Archives a label (idempotent); same permissions as an edit.
    pub async fn archive_label(
        &self,
        actor: &User,
        plan: PlanTier,
        id: LabelId,
    ) -> Result<Label, Error> {
        may_write(actor, plan)?;
        let patch = LabelPatch {
            is_archived: Some(true),
            ..LabelPatch::default()
        };
        self.edit(actor, plan, id, &patch).await
    }

    async fn edit(
        &self,
        actor: &User,
        plan: PlanTier,
        id: LabelId,
        patch: &LabelPatch,
    ) -> Result<Label, Error> {
        let label = self.labels.get_label(actor.org_id, id).await?;
        may_edit(actor, plan, &label)?;
        self.labels
            .update_label(actor.org_id, id, patch)
            .await
            .map_err(name_taken)
    }

    /// Deletes a label no entity carries (admins only); one still in use is `label_in_use`
    /// with `extra.usage_count`: archive it instead.
    pub async fn delete_label(
        &self,
        actor: &User,
        plan: PlanTier,
        id: LabelId,
    ) -> Result<(), Error> {
        may_delete(actor, plan)?;
        match self.labels.delete_unused_label(actor.org_id, id).await? {
            Deletion::Deleted => Ok(()),
            Deletion::InUse(usage) => Err(Error::new(
                ErrorCode::LabelInUse,
                format!(
                    "This label is still on {usage} item(s), so it cannot be deleted. Archive it instead."
                ),
            )
            .with_extra("usage_count", usage)),
        }
    }

    /// Makes `labels` the entity's whole set (`[]` clears it) and answers that set.
    pub async fn set_entity_labels(
        &self,
        actor: &User,
        plan: PlanTier,
        kind: EntityKind,
        entity: Uuid,
        labels: &[LabelId],
    ) -> Result<Vec<Label>, Error> {
        may_write(actor, plan)?;
        let labels = distinct(labels);
        check_count("label_uuids", labels.len(), MAX_LABELS_PER_CALL)?;
        let found = self.require_labels(actor.org_id, &labels).await?;
        require_entities(self.entities.as_ref(), actor.org_id, kind, &[entity]).await?;
        self.refuse_new_archived(actor.org_id, kind, &[entity], &found)
            .await?;
        Ok(self
            .labels
            .replace_entity_labels(actor.org_id, kind, entity, &labels)
            .await?)
    }

    /// Adds, removes or replaces `labels` on every entity, all or nothing; answers how many
    /// entities' sets changed.
    pub async fn batch_entity_labels(
        &self,
        actor: &User,
        plan: PlanTier,
        kind: EntityKind,
        entities: &[Uuid],
        labels: &[LabelId],
        mode: BatchMode,
    ) -> Result<u64, Error> {
        may_write(actor, plan)?;
        let entities = distinct(entities);
        let labels = distinct(labels);
        check_count("entity_uuids", entities.len(), MAX_BATCH_ENTITIES)?;
        check_count("label_uuids", labels.len(), MAX_LABELS_PER_CALL)?;
        let found = self.require_labels(actor.org_id, &labels).await?;
        require_entities(self.entities.as_ref(), actor.org_id, kind, &entities).await?;
        if mode != BatchMode::Remove {
            self.refuse_new_archived(actor.org_id, kind, &entities, &found)
                .await?;
        }
        if entities.is_empty() {
            return Ok(0);
        }
        Ok(self
            .labels
            .batch_entity_labels(actor.org_id, kind, &entities, &labels, mode)
            .await?)
    }

    /// The labels `ids` of `org`, or `not_found` naming those that are not.
    async fn require_labels(&self, org: OrgId, ids: &[LabelId]) -> Result<Vec<Label>, Error> {
        let found = self.labels.find_labels(org, ids).await?;
        let known: HashSet<LabelId> = found.iter().map(|l| l.id).collect();
        let missing: Vec<Uuid> = ids
            .iter()
            .filter(|id| !known.contains(id))
            .map(|id| id.0)
            .collect();
        if missing.is_empty() {
            Ok(found)
        } else {
            Err(not_found("labels", &missing))
        }
    }

    /// `archived_label_not_assignable` when an archived label would go on an entity that does
    /// not carry it yet (an entity keeps the archived labels it has: re-sending its current set
    /// with one more label must work).
    async fn refuse_new_archived(
        &self,
        org: OrgId,
        kind: EntityKind,
        entities: &[Uuid],
        labels: &[Label],
    ) -> Result<(), Error> {
        let archived: Vec<LabelId> = labels
            .iter()
            .filter(|l| l.is_archived)
            .map(|l| l.id)
            .collect();
        if archived.is_empty() || entities.is_empty() {
            return Ok(());
        }
        let carried: HashSet<(Uuid, LabelId)> = self
            .labels
            .assignments(org, kind, entities, &archived)
            .await?
            .into_iter()
            .collect();
        let refused: Vec<Uuid> = archived
            .iter()
            .filter(|label| entities.iter().any(|e| !carried.contains(&(*e, **label))))
            .map(|label| label.0)
            .collect();
        if refused.is_empty() {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::ArchivedLabelNotAssignable,
            "An archived label cannot be put on anything; restore it first.",
        )
        .with_extra(
            "uuids",
            refused.iter().map(Uuid::to_string).collect::<Vec<_>>(),
        ))
    }
}

/// People's private stars on forms, check-ins and workflows (no plan needed, guests too).
#[derive(Clone)]
pub struct FeaturedService {
    featured: Arc<dyn FeaturedRepository>,
    entities: Arc<dyn LabelledEntities>,
}

impl FeaturedService {
    pub fn new(featured: Arc<dyn FeaturedRepository>, entities: Arc<dyn LabelledEntities>) -> Self {
        FeaturedService { featured, entities }
    }

    /// The entities of `kind` the actor starred that still exist, oldest star first.
    pub async fn featured(&self, actor: &User, kind: EntityKind) -> Result<Vec<Uuid>, Error> {
        let starred = self.featured.featured(actor.id, kind).await?;
        if starred.is_empty() {
            return Ok(starred);
        }
        let existing: HashSet<Uuid> = self
            .entities
            .existing(actor.org_id, kind, &starred)
            .await?
            .into_iter()
            .collect();
        Ok(starred
            .into_iter()
            .filter(|id| existing.contains(id))
            .collect())
    }

    /// Stars or unstars entities of the actor's organization, all or nothing; answers those
    /// whose star changed.
    pub async fn set_featured(
        &self,
        actor: &User,
        kind: EntityKind,
        entities: &[Uuid],
        featured: bool,
    ) -> Result<Vec<Uuid>, Error> {
        let entities = distinct(entities);
        check_count("entity_uuids", entities.len(), MAX_BATCH_ENTITIES)?;
        if entities.is_empty() {
            return Ok(entities);
        }
        require_entities(self.entities.as_ref(), actor.org_id, kind, &entities).await?;
        Ok(self
            .featured
            .set_featured(actor.org_id, actor.id, kind, &entities, featured)
            .await?)
    }
}
