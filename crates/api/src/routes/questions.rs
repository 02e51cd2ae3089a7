//! The question bodies and views shared by check-ins and forms (the CLI sends both the same
//! shapes: wire contract #25–28 and #42–45). The rules are `teamcomm_forms::questions`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use teamcomm_forms::questions::{
    MAX_OPTION_CHARS, MAX_QUESTION_CHARS, MAX_SHORT_QUESTION_CHARS, NewQuestion, Question,
    QuestionPatch,
};
use teamcomm_kernel::WireEnum;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::extract::{Name, OptionalName, QuestionTypeName};

/// A question as written (creation, or `POST .../questions/`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionBody {
    /// The question text (at most 1,000 characters).
    question: Name<{ MAX_QUESTION_CHARS }>,
    /// `text` (default), `multiple_choice`, `boolean` or `numeric`.
    #[schema(inline)]
    question_type: Option<QuestionTypeName>,
    /// Default true.
    required: Option<bool>,
    /// A "yes" or any answer marks a blocker in reports.
    is_blocker: Option<bool>,
    /// Choices of a multiple-choice question (2 to 25).
    #[schema(max_items = 25)]
    options: Option<Vec<Name<{ MAX_OPTION_CHARS }>>>,
    /// The label reports use (at most 60 characters); required unless generated.
    short_question: Option<OptionalName<{ MAX_SHORT_QUESTION_CHARS }>>,
    /// Alternative phrasings (at most 10).
    #[schema(max_items = 10)]
    variations: Option<Vec<Name<{ MAX_QUESTION_CHARS }>>>,
    /// Branching: `{"rules": {"rules_if": [{"conditions": [{"operator", "comparison_value",
    /// "logic_connector"}], "then": {"action": "go_to|end|next", "target"}}], "rules_else": {...}}}`.
    #[schema(value_type = Option<Object>)]
    logic: Option<Value>,
    /// Derive `short_question` from the text when it is missing.
    pub generate_short_question: Option<bool>,
}

impl From<QuestionBody> for NewQuestion {
    fn from(b: QuestionBody) -> Self {
        NewQuestion {
            question: b.question.0,
            question_type: b.question_type.map(|t| t.0),
            required: b.required,
            is_blocker: b.is_blocker,
            options: texts(b.options),
            short_question: b.short_question.map(|s| s.0),
            variations: texts(b.variations),
            logic: b.logic,
        }
    }
}

/// Body of `PATCH .../questions/{uuid}/`: the fields to change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionPatchBody {
    question: Option<Name<{ MAX_QUESTION_CHARS }>>,
    #[schema(inline)]
    question_type: Option<QuestionTypeName>,
    required: Option<bool>,
    is_blocker: Option<bool>,
    #[schema(max_items = 25)]
    options: Option<Vec<Name<{ MAX_OPTION_CHARS }>>>,
    short_question: Option<OptionalName<{ MAX_SHORT_QUESTION_CHARS }>>,
    #[schema(max_items = 10)]
    variations: Option<Vec<Name<{ MAX_QUESTION_CHARS }>>>,
    /// `null` removes the logic.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Object>)]
    logic: Option<Value>,
    /// Derive a new `short_question` from the (new) text.
    pub generate_short_question: Option<bool>,
}

/// Keeps an explicit `null` (as `Some(Value::Null)`) apart from an absent field (`None`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl From<QuestionPatchBody> for QuestionPatch {
    fn from(b: QuestionPatchBody) -> Self {
        QuestionPatch {
            question: b.question.map(|q| q.0),
            question_type: b.question_type.map(|t| t.0),
            required: b.required,
            is_blocker: b.is_blocker,
            options: texts(b.options),
            short_question: b.short_question.map(|s| s.0),
            variations: texts(b.variations),
            logic: b.logic,
        }
    }
}

/// The texts of a list of names (options, variations), as the domain takes them.
fn texts<const MAX: usize>(names: Option<Vec<Name<MAX>>>) -> Option<Vec<String>> {
    names.map(|names| names.into_iter().map(|n| n.0).collect())
}

/// Body of `PUT .../questions/reorder/`: every question, in the new order.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReorderBody {
    #[schema(max_items = 50)]
    question_uuids: Option<Vec<Uuid>>,
    /// Alias of `question_uuids` (the vendor's older documentation).
    #[schema(max_items = 50)]
    order: Option<Vec<Uuid>>,
}

impl ReorderBody {
    pub fn uuids(self) -> Vec<Uuid> {
        self.question_uuids.or(self.order).unwrap_or_default()
    }
}

/// One choice of a multiple-choice question, as the CLI reads it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChoiceView {
    pub label: String,
    pub value: String,
}

/// A question as shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuestionView {
    pub uuid: String,
    pub id: String,
    /// Position, from 0.
    pub index: usize,
    pub question: String,
    pub question_type: String,
    pub required: bool,
    pub is_blocker: bool,
    pub options: Vec<String>,
    pub choices: Vec<ChoiceView>,
    pub short_question: String,
    pub variations: Vec<String>,
    #[schema(value_type = Option<Object>)]
    pub logic: Option<Value>,
}

impl QuestionView {
    pub fn new(index: usize, q: &Question) -> Self {
        QuestionView {
            uuid: q.uuid.to_string(),
            id: q.uuid.to_string(),
            index,
            question: q.question.clone(),
            question_type: q.question_type.as_str().to_owned(),
            required: q.required,
            is_blocker: q.is_blocker,
            options: q.options.clone(),
            choices: q
                .options
                .iter()
                .map(|o| ChoiceView {
                    label: o.clone(),
                    value: o.clone(),
                })
                .collect(),
            short_question: q.short_question.clone(),
            variations: q.variations.clone(),
            logic: q.logic.as_ref().map(|l| json!(l)),
        }
    }

    /// The views of an ordered set.
    pub fn list(questions: &[Question]) -> Vec<QuestionView> {
        questions
            .iter()
            .enumerate()
            .map(|(i, q)| QuestionView::new(i, q))
            .collect()
    }
}
