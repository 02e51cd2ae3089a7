//! Plan: the labels a task carries (organization labels, stored as forms' and check-ins' are)
//! and the Plan label doors over the organization's labels. The labels' own rules (names,
//! colours, who may edit or delete, `label_in_use`) are `teamcomm_labels::LabelService`'s:
//! called here, never restated.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use teamcomm_kernel::{Error, ErrorCode, OrgId, Page, PageRequest, RepoError};
use teamcomm_labels::{
    BatchMode, DEFAULT_COLOR, EntityKind, Label, LabelChanges, LabelFilter, LabelId, LabelService,
    LabelledEntities, MAX_LABELS_PER_CALL,
};
use uuid::Uuid;

use crate::actor::PlanActor;
use crate::model::{BoardRef, TaskRef};
use crate::relations::{refuse_archived, social_event};
use crate::service::Plan;

/// The Plan's label doors never label entities through [`LabelService`] (task labels go
/// through [`Plan::change_task_labels`], in the task's transaction), so its entity check is
/// never asked; it knows none.
struct NoEntities;

#[async_trait]
impl LabelledEntities for NoEntities {
    async fn existing(
        &self,
        _org: OrgId,
        _kind: EntityKind,
        _ids: &[Uuid],
    ) -> Result<Vec<Uuid>, RepoError> {
        Ok(Vec::new())
    }
}

/// Labels ordered as every label list is: name without case, then id.
fn sorted(mut labels: Vec<Label>) -> Vec<Label> {
    labels.sort_by_key(|l| (l.name.to_lowercase(), l.id));
    labels
}

impl Plan {
    fn label_rules(&self) -> LabelService {
        LabelService::new(self.ports.labels.clone(), Arc::new(NoEntities))
    }

    /// Adds, removes or replaces labels of the organization on a live task the caller sees:
    /// at most 50 (`too_many_items`), all of the organization (404 naming the others in
    /// `extra.uuids`), archived ones only where the task carries them already
    /// (`archived_label_not_assignable`). A change bumps the task (version, `updated_at`) and
    /// records `label_changed`. Answers the task's labels.
    pub async fn change_task_labels(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        mode: BatchMode,
        labels: &[LabelId],
    ) -> Result<Vec<Label>, Error> {
        let task = self.visible_task(actor, task).await?;
        refuse_archived(&task)?;
        let mut seen = HashSet::new();
        let named: Vec<LabelId> = labels.iter().copied().filter(|l| seen.insert(*l)).collect();
        if named.len() > MAX_LABELS_PER_CALL {
            return Err(Error::new(
                ErrorCode::TooManyItems,
                format!("`label_uuids` may name at most {MAX_LABELS_PER_CALL} items."),
            )
            .with_extra("limit", MAX_LABELS_PER_CALL as u64)
            .with_extra("parameter", "label_uuids"));
        }
        let org = actor.org_id();
        let found = self.ports.labels.find_labels(org, &named).await?;
        let missing: Vec<String> = named
            .iter()
            .filter(|id| !found.iter().any(|l| l.id == **id))
            .map(|id| id.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(
                Error::new(ErrorCode::NotFound, "Not found: labels.").with_extra("uuids", missing)
            );
        }
        let current: BTreeSet<LabelId> = self
            .ports
            .social
            .task_labels(org, task.id)
            .await?
            .into_iter()
            .collect();
        let named_set: BTreeSet<LabelId> = named.iter().copied().collect();
        let wanted: BTreeSet<LabelId> = match mode {
            BatchMode::Add => current.union(&named_set).copied().collect(),
            BatchMode::Remove => current.difference(&named_set).copied().collect(),
            BatchMode::Replace => named_set,
        };
        let refused: Vec<String> = found
            .iter()
            .filter(|l| l.is_archived && wanted.contains(&l.id) && !current.contains(&l.id))
            .map(|l| l.id.to_string())
            .collect();
        if !refused.is_empty() {
            return Err(Error::new(
                ErrorCode::ArchivedLabelNotAssignable,
                "An archived label cannot be put on anything; restore it first.",
            )
            .with_extra("uuids", refused));
        }
        if wanted != current {
            let ids = |set: &BTreeSet<LabelId>| set.iter().map(|l| l.0).collect::<Vec<_>>();
            let event = social_event(
                actor,
                &task,
                "label_changed",
                json!({
                    "added": ids(&wanted.difference(&current).copied().collect()),
                    "removed": ids(&current.difference(&wanted).copied().collect()),
                }),
                true,
            );
            let wanted: Vec<LabelId> = wanted.iter().copied().collect();
            self.ports
                .social
                .set_task_labels(org, task.id, &wanted, &event)
                .await?;
        }
        let wanted: Vec<LabelId> = wanted.into_iter().collect();
        Ok(sorted(self.ports.labels.find_labels(org, &wanted).await?))
    }

    /// The labels a task carries.
    pub async fn task_label_list(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
    ) -> Result<Vec<Label>, Error> {
        let task = self.visible_task(actor, task).await?;
        let org = actor.org_id();
        let ids = self.ports.social.task_labels(org, task.id).await?;
        Ok(sorted(self.ports.labels.find_labels(org, &ids).await?))
    }

    /// The organization's labels (live ones unless `include_archived`), by name.
    pub async fn list_plan_labels(
        &self,
        actor: &PlanActor,
        filter: &LabelFilter,
        page: PageRequest,
    ) -> Result<Page<Label>, Error> {
        Ok(self
            .ports
            .labels
            .list_labels(actor.org_id(), filter, page)
            .await?)
    }

    /// Creates an organization label, as `POST /v1/labels/` does.
    pub async fn create_plan_label(
        &self,
        actor: &PlanActor,
        name: &str,
        color: Option<&str>,
        description: Option<&str>,
    ) -> Result<Label, Error> {
        let person = actor.person()?;
        let color = color.filter(|c| !c.is_empty());
        self.label_rules()
            .create_label(person, actor.org.plan, name, color, description)
            .await
    }

    /// Changes an organization label: its creator or an admin. `color: ""` puts the default
    /// colour back (a label always has one).
    pub async fn update_plan_label(
        &self,
        actor: &PlanActor,
        id: LabelId,
        mut changes: LabelChanges,
    ) -> Result<Label, Error> {
        let person = actor.person()?;
        if changes.color.as_deref() == Some("") {
            changes.color = Some(DEFAULT_COLOR.to_owned());
        }
        self.label_rules()
            .update_label(person, actor.org.plan, id, &changes)
            .await
    }

    /// Deletes an organization label no task (nor anything else) carries: admins only;
    /// `label_in_use` otherwise (archive it instead).
    pub async fn delete_plan_label(&self, actor: &PlanActor, id: LabelId) -> Result<(), Error> {
        let person = actor.person()?;
        let org = actor.org_id();
        let rules = self.label_rules();
        self.ports.labels.get_label(org, id).await?;
        if rules.entitlement(person, actor.org.plan).can_hard_delete {
            let on_tasks = self.ports.social.tasks_with_label(org, id).await?;
            if on_tasks > 0 {
                return Err(Error::new(
                    ErrorCode::LabelInUse,
                    format!(
                        "This label is still on {on_tasks} task(s), so it cannot be deleted. Archive it instead."
                    ),
                )
                .with_extra("usage_count", on_tasks));
            }
        }
        rules.delete_label(person, actor.org.plan, id).await
    }

    /// The labels offered on a board the caller sees: the organization's live labels.
    pub async fn board_labels(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
    ) -> Result<Vec<Label>, Error> {
        self.visible_board(actor, board).await?;
        let page = self
            .ports
            .labels
            .list_labels(actor.org_id(), &LabelFilter::default(), PageRequest::all())
            .await?;
        Ok(page.results)
    }

    /// Creates an organization label from a board the caller sees.
    pub async fn create_board_label(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        name: &str,
        color: Option<&str>,
        description: Option<&str>,
    ) -> Result<Label, Error> {
        self.visible_board(actor, board).await?;
        self.create_plan_label(actor, name, color, description)
            .await
    }
}
