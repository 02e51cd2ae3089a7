//! `POST tasks/bulk/` (wire contract #169): one operation over at most 100 items. Each item is
//! its own write (one transaction each, through the same rules as the single-task doors), so
//! one refused item does not undo the others: the answer lists every item's outcome in order.
//! `delete` archives (reversible, as `task delete` does on the single door). The dry run
//! checks every item as far as it can without writing and lists the changes it would make and
//! the items it refuses.
//!
//! Items are JSON objects: `{"task": ref, …fields}` (`{"title": …}` for `create`, on the call's
//! `board`); an item's own refusal (a missing field, an unknown one, a bad value, a task the
//! caller cannot see) is that item's error, never the call's.

use serde_json::{Map, Value, json};
use teamcomm_kernel::{Error, ErrorCode};
use teamcomm_labels::{BatchMode, LabelId};
use time::Date;
use uuid::Uuid;

use crate::tasks::{Archived, CreateTask, MoveTask, PersonRef, TaskPatch, parse_date};
use crate::{BoardRef, Plan, PlanActor, StateId, Task, TaskRef};

/// Items a call takes at most (`too_many_items`).
pub const MAX_BULK_ITEMS: usize = 100;

/// What a bulk call does to each item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkOperation {
    Create,
    Move,
    Update,
    Archive,
    Restore,
    SetLabels,
    SetOwner,
    SetPriority,
    SetDueDate,
    SetParent,
    /// Archives (reversible).
    Delete,
}

impl BulkOperation {
    pub const ALL: [BulkOperation; 11] = [
        BulkOperation::Create,
        BulkOperation::Move,
        BulkOperation::Update,
        BulkOperation::Archive,
        BulkOperation::Restore,
        BulkOperation::SetLabels,
        BulkOperation::SetOwner,
        BulkOperation::SetPriority,
        BulkOperation::SetDueDate,
        BulkOperation::SetParent,
        BulkOperation::Delete,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            BulkOperation::Create => "create",
            BulkOperation::Move => "move",
            BulkOperation::Update => "update",
            BulkOperation::Archive => "archive",
            BulkOperation::Restore => "restore",
            BulkOperation::SetLabels => "set_labels",
            BulkOperation::SetOwner => "set_owner",
            BulkOperation::SetPriority => "set_priority",
            BulkOperation::SetDueDate => "set_due_date",
            BulkOperation::SetParent => "set_parent",
            BulkOperation::Delete => "delete",
        }
    }

    /// An operation by name; anything else is `invalid_relation` (the spec's code for it).
    pub fn parse(raw: &str) -> Result<BulkOperation, Error> {
        Self::ALL
            .into_iter()
            .find(|o| o.as_str() == raw)
            .ok_or_else(|| {
                let allowed: Vec<&str> = Self::ALL.iter().map(|o| o.as_str()).collect();
                Error::new(
                    ErrorCode::InvalidRelation,
                    format!("Unknown bulk operation {raw:?}."),
                )
                .with_extra("parameter", "operation")
                .with_extra("allowed", allowed)
            })
    }

    /// The fields an item of this operation may carry besides `task` and `version`.
    fn fields(self) -> &'static [&'static str] {
        match self {
            BulkOperation::Create => &[
                "title",
                "description",
                "state",
                "owner",
                "due_date",
                "start_date",
                "estimate",
                "priority",
                "parent",
            ],
            BulkOperation::Update => &[
                "title",
                "description",
                "state",
                "owner",
                "due_date",
                "start_date",
                "estimate",
                "priority",
                "milestone",
            ],
            BulkOperation::Move => &["state", "before", "after"],
            BulkOperation::SetLabels => &["labels", "label_uuids"],
            BulkOperation::SetOwner => &["owner"],
            BulkOperation::SetPriority => &["priority"],
            BulkOperation::SetDueDate => &["due_date"],
            BulkOperation::SetParent => &["parent"],
            BulkOperation::Archive | BulkOperation::Restore | BulkOperation::Delete => &[],
        }
    }
}

/// A bulk call as the request states it.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkCall {
    pub operation: BulkOperation,
    /// The board new tasks go on (required for `create`).
    pub board: Option<BoardRef>,
    pub items: Vec<Value>,
}

/// One item's outcome, in the call's order.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkOutcome {
    pub index: usize,
    /// The task reference the item gave, as given.
    pub named: Option<String>,
    pub result: Result<Task, Error>,
}

/// What a bulk dry run answers.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkPreview {
    pub operation: BulkOperation,
    pub consequence: String,
    pub items: Vec<PlannedItem>,
    pub refused: Vec<RefusedItem>,
}

/// An item the real call would change: its task (none yet for `create`) and each field's
/// `{from, to}`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedItem {
    pub index: usize,
    pub task: Option<Task>,
    pub changes: Map<String, Value>,
}

/// An item the real call would refuse.
#[derive(Debug, Clone, PartialEq)]
pub struct RefusedItem {
    pub index: usize,
    pub named: Option<String>,
    pub error: Error,
}

/// An item understood: what it names and what it asks.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    named: Option<String>,
    task: Option<TaskRef>,
    version: Option<i64>,
    intent: Intent,
}

#[derive(Debug, Clone, PartialEq)]
enum Intent {
    Create(CreateTask),
    Update(TaskPatch),
    Move(MoveTask),
    Archive,
    Restore,
    SetLabels(Vec<LabelId>),
    SetParent(Option<TaskRef>),
}

/// Checks the call as a whole: at most 100 items (`too_many_items`), a board for `create`.
fn check_call(call: &BulkCall) -> Result<(), Error> {
    if call.items.len() > MAX_BULK_ITEMS {
        return Err(Error::new(
            ErrorCode::TooManyItems,
            format!("A bulk call takes at most {MAX_BULK_ITEMS} items."),
        )
        .with_extra("parameter", "items")
        .with_extra("limit", MAX_BULK_ITEMS));
    }
    if call.operation == BulkOperation::Create && call.board.is_none() {
        return Err(Error::invalid_field(
            "board",
            "This field is required to create tasks.",
        ));
    }
    Ok(())
}

impl Plan {
    /// Runs `call`, item by item (see the module docs).
    pub async fn bulk(&self, actor: &PlanActor, call: BulkCall) -> Result<Vec<BulkOutcome>, Error> {
        check_call(&call)?;
        if let Some(board) = &call.board {
            self.visible_board(actor, board).await?;
        }
        let mut outcomes = Vec::with_capacity(call.items.len());
        for (index, raw) in call.items.iter().enumerate() {
            let (named, result) = match parse_item(call.operation, call.board.as_ref(), raw) {
                Ok(item) => {
                    let named = item.named.clone();
                    (named, self.run_item(actor, item).await)
                }
                Err((named, e)) => (named, Err(e)),
            };
            outcomes.push(BulkOutcome {
                index,
                named,
                result,
            });
        }
        Ok(outcomes)
    }

    async fn run_item(&self, actor: &PlanActor, item: Item) -> Result<Task, Error> {
        let task = || item.task.clone().ok_or_else(task_required);
        match item.intent {
            Intent::Create(new) => self.create_task(actor, new).await,
            Intent::Update(patch) => self.update_task(actor, &task()?, patch, item.version).await,
            Intent::Move(to) => self.move_task(actor, &task()?, to, item.version).await,
            Intent::Archive => match self
                .archive_task(actor, &task()?, false, item.version)
                .await?
            {
                Archived::Done(t) => Ok(*t),
                Archived::Preview(_) => Err(teamcomm_kernel::internal("archive previewed")),
            },
            Intent::Restore => self.restore_task(actor, &task()?, item.version).await,
            Intent::SetLabels(labels) => {
                let task = task()?;
                self.change_task_labels(actor, &task, BatchMode::Replace, &labels)
                    .await?;
                self.visible_task(actor, &task).await
            }
            Intent::SetParent(parent) => {
                self.set_task_parent(actor, &task()?, parent.as_ref(), item.version)
                    .await
            }
        }
    }

    /// The dry run of `call`: nothing written (see the module docs).
    pub async fn bulk_preview(
        &self,
        actor: &PlanActor,
        call: BulkCall,
    ) -> Result<BulkPreview, Error> {
        check_call(&call)?;
        let board = match &call.board {
            Some(b) => Some(self.visible_board(actor, b).await?),
            None => None,
        };
        let mut items = Vec::new();
        let mut refused = Vec::new();
        for (index, raw) in call.items.iter().enumerate() {
            let planned = match parse_item(call.operation, call.board.as_ref(), raw) {
                Ok(item) => {
                    let named = item.named.clone();
                    self.plan_item(actor, board.as_ref(), item)
                        .await
                        .map_err(|e| (named, e))
                }
                Err(refusal) => Err(refusal),
            };
            match planned {
                Ok((task, changes)) => items.push(PlannedItem {
                    index,
                    task,
                    changes,
                }),
                Err((named, error)) => refused.push(RefusedItem {
                    index,
                    named,
                    error,
                }),
            }
        }
        let op = call.operation.as_str();
        let consequence = format!(
            "Would {op} {} task(s){}.",
            items.len(),
            if refused.is_empty() {
                String::new()
            } else {
                format!("; {} item(s) refused", refused.len())
            }
        );
        Ok(BulkPreview {
            operation: call.operation,
            consequence,
            items,
            refused,
        })
    }

    /// What one item would change, checked as far as reading allows.
    async fn plan_item(
        &self,
        actor: &PlanActor,
        board: Option<&crate::Board>,
        item: Item,
    ) -> Result<(Option<Task>, Map<String, Value>), Error> {
        let mut changes = Map::new();
        let mut change = |field: &str, from: Value, to: Value| {
            if from != to {
                changes.insert(field.to_owned(), json!({"from": from, "to": to}));
            }
        };
        if let Intent::Create(new) = &item.intent {
            let board = board.ok_or_else(|| {
                Error::invalid_field("board", "This field is required to create tasks.")
            })?;
            check_title(&new.title)?;
            if let Some(state) = new.state {
                self.live_column(board, state).await?;
            }
            if let Some(p) = new.priority {
                crate::check_priority(p)?;
            }
            change("title", Value::Null, json!(new.title.trim()));
            change("board", Value::Null, json!(board.id.to_string()));
            for (field, value) in [
                ("description", new.description.as_ref().map(|d| json!(d))),
                ("state", new.state.map(|s| json!(s.to_string()))),
                ("owner", new.owner.map(person_json)),
                ("due_date", new.due_date.map(date_json)),
                ("start_date", new.start_date.map(date_json)),
                ("estimate", new.estimate.map(|e| json!(e))),
                ("priority", new.priority.map(|p| json!(p))),
                ("parent", new.parent.as_ref().map(task_ref_json)),
            ] {
                if let Some(v) = value {
                    change(field, Value::Null, v);
                }
            }
            return Ok((None, changes));
        }
        let task = self
            .visible_task(actor, item.task.as_ref().ok_or_else(task_required)?)
            .await?;
        if let Some(v) = item.version
            && v != task.version
        {
            return Err(Error::new(
                ErrorCode::VersionConflict,
                "The task changed since that version.",
            )
            .with_extra("current_version", task.version));
        }
        let live_only = !matches!(item.intent, Intent::Archive | Intent::Restore);
        if live_only && task.is_archived {
            return Err(crate::tasks::task_archived());
        }
        match &item.intent {
            Intent::Create(_) => {}
            Intent::Update(p) => {
                if let Some(t) = &p.title {
                    change("title", json!(task.title), json!(check_title(t)?));
                }
                if let Some(d) = &p.description {
                    change("description", json!(task.description), json!(d));
                }
                if let Some(s) = p.state {
                    let board = self
                        .ports
                        .boards
                        .get_board(task.org_id, task.board_id)
                        .await?;
                    self.live_column(&board, s).await?;
                    change(
                        "state",
                        json!(task.state_id.to_string()),
                        json!(s.to_string()),
                    );
                }
                if let Some(o) = p.owner {
                    let to = match o {
                        Some(o) => json!(resolve_person(actor, o)?.to_string()),
                        None => Value::Null,
                    };
                    change("owner", json!(task.owner.map(|u| u.0.to_string())), to);
                }
                if let Some(pr) = p.priority {
                    if let Some(pr) = pr {
                        crate::check_priority(pr)?;
                    }
                    change("priority", json!(task.priority), json!(pr));
                }
                if let Some(e) = p.estimate {
                    change("estimate", json!(task.estimate), json!(e));
                }
                if let Some(d) = p.due_date {
                    change(
                        "due_date",
                        json!(task.due_date.map(date_json)),
                        json!(d.map(date_json)),
                    );
                }
                if let Some(d) = p.start_date {
                    change(
                        "start_date",
                        json!(task.start_date.map(date_json)),
                        json!(d.map(date_json)),
                    );
                }
                if let Some(m) = p.milestone {
                    change(
                        "milestone",
                        json!(task.milestone_id.map(|m| m.to_string())),
                        json!(m.map(|m| m.to_string())),
                    );
                }
            }
            Intent::Move(to) => {
                if let Some(s) = to.state {
                    let board = self
                        .ports
                        .boards
                        .get_board(task.org_id, task.board_id)
                        .await?;
                    self.live_column(&board, s).await?;
                    change(
                        "state",
                        json!(task.state_id.to_string()),
                        json!(s.to_string()),
                    );
                }
            }
            Intent::Archive => change("is_archived", json!(task.is_archived), json!(true)),
            Intent::Restore => change("is_archived", json!(task.is_archived), json!(false)),
            Intent::SetLabels(labels) => {
                let mut now: Vec<String> = self
                    .ports
                    .social
                    .task_labels(task.org_id, task.id)
                    .await?
                    .into_iter()
                    .map(|l| l.0.to_string())
                    .collect();
                now.sort();
                let mut wanted: Vec<String> = labels.iter().map(|l| l.0.to_string()).collect();
                wanted.sort();
                wanted.dedup();
                change("labels", json!(now), json!(wanted));
            }
            Intent::SetParent(parent) => {
                let to = self.new_parent(actor, &task, parent.as_ref()).await?;
                let from = match task.parent_id {
                    Some(id) => json!(self.ports.tasks.get_task(task.org_id, id).await?.key()),
                    None => Value::Null,
                };
                change("parent", from, json!(to.map(|p| p.key())));
            }
        }
        Ok((Some(task), changes))
    }

    /// A live column of `board`, or `state_not_on_board`.
    async fn live_column(&self, board: &crate::Board, state: StateId) -> Result<(), Error> {
        match self.board_state(board, state).await {
            Ok(s) if !s.is_archived => Ok(()),
            Ok(_) => Err(state_not_on_board()),
            Err(e) if e.code() == ErrorCode::NotFound => Err(state_not_on_board()),
            Err(e) => Err(e),
        }
    }
}

fn state_not_on_board() -> Error {
    Error::new(
        ErrorCode::StateNotOnBoard,
        "That state is not a live column of the task's board.",
    )
    .with_extra("parameter", "state")
}

fn task_required() -> Error {
    Error::invalid_field("task", "This field is required.")
}

fn check_title(title: &str) -> Result<String, Error> {
    let t = title.trim();
    if t.is_empty() || t.chars().count() > crate::tasks::MAX_TITLE {
        return Err(Error::invalid_field(
            "title",
            "A title of 1 to 500 characters is required.",
        ));
    }
    Ok(t.to_owned())
}

fn resolve_person(actor: &PlanActor, p: PersonRef) -> Result<Uuid, Error> {
    match p {
        PersonRef::Me => Ok(actor.person()?.id.0),
        PersonRef::Id(id) => Ok(id.0),
    }
}

fn person_json(p: PersonRef) -> Value {
    match p {
        PersonRef::Me => json!("me"),
        PersonRef::Id(id) => json!(id.0.to_string()),
    }
}

fn date_json(d: Date) -> Value {
    json!(d.to_string())
}

fn task_ref_json(t: &TaskRef) -> Value {
    match t {
        TaskRef::Id(id) => json!(id.to_string()),
        TaskRef::Key { board_key, number } => json!(crate::task_key(board_key, *number)),
    }
}

/// Reads one item (see the module docs); a refusal keeps the task reference it gave.
fn parse_item(
    op: BulkOperation,
    board: Option<&BoardRef>,
    raw: &Value,
) -> Result<Item, (Option<String>, Error)> {
    let Value::Object(map) = raw else {
        return Err((
            None,
            Error::new(
                ErrorCode::ParamsValidationError,
                "Each item is a JSON object.",
            ),
        ));
    };
    let named = map.get("task").and_then(Value::as_str).map(str::to_owned);
    read_item(op, board, map).map_err(|e| (named, e))
}

fn read_item(
    op: BulkOperation,
    board: Option<&BoardRef>,
    map: &Map<String, Value>,
) -> Result<Item, Error> {
    for key in map.keys() {
        let allowed = op.fields().contains(&key.as_str())
            || (op != BulkOperation::Create && (key == "task" || key == "version"));
        if !allowed {
            return Err(Error::new(
                ErrorCode::UnknownField,
                format!("Unknown field {key:?} for a {} item.", op.as_str()),
            )
            .with_extra("parameter", key.as_str()));
        }
    }
    let fields = Fields(map);
    let (task, named) = if op == BulkOperation::Create {
        (None, None)
    } else {
        let raw = fields.text("task")?.ok_or_else(task_required)?;
        (Some(TaskRef::parse(raw)?), Some(raw.to_owned()))
    };
    let version = fields.int("version")?;
    let intent = match op {
        BulkOperation::Create => Intent::Create(CreateTask {
            title: fields
                .text("title")?
                .ok_or_else(|| Error::invalid_field("title", "This field is required."))?
                .to_owned(),
            board: board.cloned(),
            description: fields.text("description")?.map(str::to_owned),
            state: fields.uuid("state")?.map(StateId),
            owner: fields.person("owner")?.flatten(),
            due_date: fields.date("due_date")?.flatten(),
            start_date: fields.date("start_date")?.flatten(),
            estimate: fields.small("estimate")?.flatten(),
            parent: fields.task("parent")?.flatten(),
            priority: fields.small("priority")?.flatten(),
            milestone_given: false,
        }),
        BulkOperation::Update => Intent::Update(TaskPatch {
            title: fields.text("title")?.map(str::to_owned),
            description: fields.text("description")?.map(str::to_owned),
            state: fields.uuid("state")?.map(StateId),
            due_date: fields.date("due_date")?,
            start_date: fields.date("start_date")?,
            estimate: fields.small("estimate")?,
            milestone: fields.nullable_uuid("milestone")?,
            priority: fields.small("priority")?,
            owner: fields.person("owner")?,
        }),
        BulkOperation::SetOwner => Intent::Update(TaskPatch {
            owner: Some(fields.person("owner")?.ok_or_else(|| required("owner"))?),
            ..TaskPatch::default()
        }),
        BulkOperation::SetPriority => Intent::Update(TaskPatch {
            priority: Some(
                fields
                    .small("priority")?
                    .ok_or_else(|| required("priority"))?,
            ),
            ..TaskPatch::default()
        }),
        BulkOperation::SetDueDate => Intent::Update(TaskPatch {
            due_date: Some(
                fields
                    .date("due_date")?
                    .ok_or_else(|| required("due_date"))?,
            ),
            ..TaskPatch::default()
        }),
        BulkOperation::Move => Intent::Move(MoveTask {
            state: Some(StateId(
                fields.uuid("state")?.ok_or_else(|| required("state"))?,
            )),
            before: fields.task("before")?.flatten(),
            after: fields.task("after")?.flatten(),
        }),
        BulkOperation::Archive | BulkOperation::Delete => Intent::Archive,
        BulkOperation::Restore => Intent::Restore,
        BulkOperation::SetLabels => {
            let list = map
                .get("labels")
                .or_else(|| map.get("label_uuids"))
                .ok_or_else(|| required("labels"))?;
            let Value::Array(list) = list else {
                return Err(Error::invalid_field("labels", "A list of label uuids."));
            };
            let labels = list
                .iter()
                .map(|v| {
                    v.as_str()
                        .and_then(|s| Uuid::parse_str(s).ok())
                        .map(LabelId)
                        .ok_or_else(|| Error::invalid_field("labels", "A list of label uuids."))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Intent::SetLabels(labels)
        }
        BulkOperation::SetParent => {
            Intent::SetParent(fields.task("parent")?.ok_or_else(|| required("parent"))?)
        }
    };
    Ok(Item {
        named,
        task,
        version,
        intent,
    })
}

fn required(field: &str) -> Error {
    Error::invalid_field(field, "This field is required.")
}

/// An item's fields, read by type: absent → `None`; `null` → `Some(None)` where clearable.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn get(&self, field: &str) -> Option<&Value> {
        self.0.get(field)
    }

    fn text(&self, field: &str) -> Result<Option<&str>, Error> {
        match self.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(Error::invalid_field(field, "A string.")),
        }
    }

    fn int(&self, field: &str) -> Result<Option<i64>, Error> {
        match self.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| Error::invalid_field(field, "A whole number.")),
        }
    }

    fn small<T: TryFrom<i64>>(&self, field: &str) -> Result<Option<Option<T>>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(v) => v
                .as_i64()
                .and_then(|n| T::try_from(n).ok())
                .map(|n| Some(Some(n)))
                .ok_or_else(|| Error::invalid_field(field, "A whole number.")),
        }
    }

    fn uuid(&self, field: &str) -> Result<Option<Uuid>, Error> {
        match self.text(field)? {
            None => Ok(None),
            Some(s) => Uuid::parse_str(s)
                .map(Some)
                .map_err(|_| Error::invalid_field(field, "A uuid.")),
        }
    }

    fn nullable_uuid(&self, field: &str) -> Result<Option<Option<Uuid>>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(_) => Ok(Some(self.uuid(field)?)),
        }
    }

    fn person(&self, field: &str) -> Result<Option<Option<PersonRef>>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(s)) => Ok(Some(Some(PersonRef::parse(field, s)?))),
            Some(_) => Err(Error::invalid_field(field, "A person's uuid or \"me\".")),
        }
    }

    fn date(&self, field: &str) -> Result<Option<Option<Date>>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(s)) => Ok(Some(Some(parse_date(field, s)?))),
            Some(_) => Err(Error::invalid_field(field, "A date, YYYY-MM-DD.")),
        }
    }

    fn task(&self, field: &str) -> Result<Option<Option<TaskRef>>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(s)) => {
                Ok(Some(Some(TaskRef::try_parse(s).ok_or_else(|| {
                    Error::invalid_field(field, "A task key or uuid.")
                })?)))
            }
            Some(_) => Err(Error::invalid_field(field, "A task key or uuid.")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::World;
    use crate::{Board, PlanScopes};

    fn call(op: &str, board: Option<&Board>, items: Value) -> BulkCall {
        BulkCall {
            operation: BulkOperation::parse(op).unwrap(),
            board: board.map(|b| BoardRef::Id(b.id)),
            items: items.as_array().unwrap().clone(),
        }
    }

    async fn create(w: &World, b: &Board, titles: &[&str]) -> Vec<Task> {
        let items: Vec<Value> = titles.iter().map(|t| json!({"title": t})).collect();
        w.plan
            .bulk(&w.member, call("create", Some(b), Value::Array(items)))
            .await
            .unwrap()
            .into_iter()
            .map(|o| o.result.unwrap())
            .collect()
    }

    #[test]
    fn operations_are_named_and_others_refused() {
        for op in BulkOperation::ALL {
            assert_eq!(BulkOperation::parse(op.as_str()).unwrap(), op);
        }
        let e = BulkOperation::parse("explode").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRelation);
    }

    #[tokio::test]
    async fn at_most_100_items_and_create_needs_a_board() {
        let w = World::new().await;
        let items = Value::Array(vec![json!({"task": "X-1"}); 101]);
        let e = w
            .plan
            .bulk(&w.member, call("archive", None, items))
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::TooManyItems);
        let e = w
            .plan
            .bulk_preview(&w.member, call("create", None, json!([{"title": "a"}])))
            .await
            .unwrap_err();
        assert!(e.field_errors().contains_key("board"));
    }

    #[tokio::test]
    async fn each_item_is_its_own_write() {
        let w = World::new().await;
        let b = w.board("BLK").await;
        let tasks = create(&w, &b, &["one", "two"]).await;
        assert_eq!(tasks[0].key(), "BLK-1");
        let out = w
            .plan
            .bulk(
                &w.member,
                call(
                    "set_priority",
                    None,
                    json!([
                        {"task": "BLK-1", "priority": 2},
                        {"task": "BLK-99", "priority": 2},
                        {"task": "BLK-2", "priority": 9},
                        {"task": "BLK-2", "colour": "red"},
                    ]),
                ),
            )
            .await
            .unwrap();
        assert_eq!(out[0].result.as_ref().unwrap().priority, Some(2));
        let codes: Vec<ErrorCode> = out[1..]
            .iter()
            .map(|o| o.result.as_ref().unwrap_err().code())
            .collect();
        assert_eq!(
            codes,
            [
                ErrorCode::NotFound,
                ErrorCode::ParamsValidationError,
                ErrorCode::UnknownField
            ]
        );
        assert_eq!(out[1].named.as_deref(), Some("BLK-99"));
        // `delete` archives; restore brings it back.
        let out = w
            .plan
            .bulk(&w.member, call("delete", None, json!([{"task": "BLK-2"}])))
            .await
            .unwrap();
        assert!(out[0].result.as_ref().unwrap().is_archived);
        let out = w
            .plan
            .bulk(&w.member, call("restore", None, json!([{"task": "BLK-2"}])))
            .await
            .unwrap();
        assert!(!out[0].result.as_ref().unwrap().is_archived);
    }

    #[tokio::test]
    async fn a_dry_run_lists_changes_and_refusals_and_writes_nothing() {
        let w = World::new().await;
        let b = w.board("BLK").await;
        let tasks = create(&w, &b, &["one"]).await;
        let preview = w
            .plan
            .bulk_preview(
                &w.member,
                call(
                    "update",
                    None,
                    json!([
                        {"task": "BLK-1", "title": "renamed", "priority": 3},
                        {"task": "BLK-7", "title": "x"},
                        {"task": "BLK-1", "version": 99},
                    ]),
                ),
            )
            .await
            .unwrap();
        assert_eq!(preview.items.len(), 1);
        let changes = &preview.items[0].changes;
        assert_eq!(changes["title"], json!({"from": "one", "to": "renamed"}));
        assert_eq!(changes["priority"], json!({"from": null, "to": 3}));
        let refused: Vec<(usize, ErrorCode)> = preview
            .refused
            .iter()
            .map(|r| (r.index, r.error.code()))
            .collect();
        assert_eq!(
            refused,
            [(1, ErrorCode::NotFound), (2, ErrorCode::VersionConflict)]
        );
        let unchanged = w
            .plan
            .visible_task(&w.member, &TaskRef::parse("BLK-1").unwrap())
            .await
            .unwrap();
        assert_eq!(unchanged, tasks[0]);
        let created = w
            .plan
            .bulk_preview(
                &w.member,
                call("create", Some(&b), json!([{"title": "new"}, {}])),
            )
            .await
            .unwrap();
        assert_eq!(created.items[0].changes["title"]["to"], "new");
        assert_eq!(created.refused[0].index, 1);
        assert!(
            w.plan
                .visible_task(&w.member, &TaskRef::parse("BLK-2").unwrap())
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn set_parent_previews_then_sets_and_clears_parents() {
        let w = World::new().await;
        let b = w.board("BLK").await;
        let tasks = create(&w, &b, &["parent", "child", "other"]).await;
        let items = json!([
            {"task": "BLK-2", "parent": "BLK-1"},
            {"task": "BLK-3", "parent": "BLK-3"},
            {"task": "BLK-3"},
        ]);
        let preview = w
            .plan
            .bulk_preview(&w.member, call("set_parent", None, items.clone()))
            .await
            .unwrap();
        assert_eq!(preview.items.len(), 1);
        assert_eq!(
            preview.items[0].changes["parent"],
            json!({"from": null, "to": "BLK-1"})
        );
        let refused: Vec<(usize, ErrorCode)> = preview
            .refused
            .iter()
            .map(|r| (r.index, r.error.code()))
            .collect();
        assert_eq!(
            refused,
            [
                (1, ErrorCode::InvalidRelation),
                (2, ErrorCode::ParamsValidationError)
            ]
        );
        let child = TaskRef::parse("BLK-2").unwrap();
        assert_eq!(
            w.plan.visible_task(&w.member, &child).await.unwrap(),
            tasks[1]
        );

        let out = w
            .plan
            .bulk(&w.member, call("set_parent", None, items))
            .await
            .unwrap();
        let set = out[0].result.as_ref().unwrap();
        assert_eq!((set.parent_id, set.version), (Some(tasks[0].id), 2));
        assert!(out[1].result.is_err() && out[2].result.is_err());
        // A sub-task cannot take one; null makes the task top-level again.
        let items = json!([
            {"task": "BLK-3", "parent": "BLK-2"},
            {"task": "BLK-2", "parent": null},
        ]);
        let preview = w
            .plan
            .bulk_preview(&w.member, call("set_parent", None, items.clone()))
            .await
            .unwrap();
        assert_eq!(
            preview.refused[0].error.code(),
            ErrorCode::SubtaskDepthExceeded
        );
        assert_eq!(
            preview.items[0].changes["parent"],
            json!({"from": "BLK-1", "to": null})
        );
        let out = w
            .plan
            .bulk(&w.member, call("set_parent", None, items))
            .await
            .unwrap();
        assert_eq!(out[1].result.as_ref().unwrap().parent_id, None);
    }

    #[tokio::test]
    async fn set_labels_replaces_the_whole_set() {
        use teamcomm_labels::{LabelRepository, NewLabel};
        let w = World::new().await;
        let b = w.board("BLK").await;
        create(&w, &b, &["one"]).await;
        let label = w
            .labels
            .create_label(
                w.org.id,
                &NewLabel {
                    id: LabelId::new(),
                    name: "bug".to_owned(),
                    color: "#4A90E2".to_owned(),
                    description: String::new(),
                    created_by: w.admin.person_id().unwrap(),
                },
            )
            .await
            .unwrap();
        let items = json!([{"task": "BLK-1", "labels": [label.id.0.to_string()]}]);
        let preview = w
            .plan
            .bulk_preview(&w.member, call("set_labels", None, items.clone()))
            .await
            .unwrap();
        assert_eq!(
            preview.items[0].changes["labels"],
            json!({"from": [], "to": [label.id.0.to_string()]})
        );
        let out = w
            .plan
            .bulk(&w.member, call("set_labels", None, items))
            .await
            .unwrap();
        assert!(out[0].result.is_ok(), "{:?}", out[0].result);
    }

    #[tokio::test]
    async fn keys_without_a_person_act_on_tasks_they_see() {
        let w = World::new().await;
        let b = w.board("BLK").await;
        create(&w, &b, &["one"]).await;
        let key = w.key(PlanScopes {
            read: true,
            write: true,
            admin: false,
        });
        let out = w
            .plan
            .bulk(
                &key,
                call("set_owner", None, json!([{"task": "BLK-1", "owner": "me"}])),
            )
            .await
            .unwrap();
        assert_eq!(
            out[0].result.as_ref().unwrap_err().code(),
            ErrorCode::ActorRequired
        );
    }
}
