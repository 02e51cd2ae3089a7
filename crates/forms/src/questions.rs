//! Questions, shared by check-ins and forms: their types, options, blockers, variations and
//! branching logic; the rules of a question set (add, update, delete, reorder) and of answers.
//!
//! A question set carries a `version` that every change to it bumps: answers given against an
//! older version are refused (`template_questions_version_conflict`), so nobody's answers land
//! on questions they were not asked.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use teamcomm_kernel::{Error, ErrorCode, FieldErrors, WireEnum, text};
use uuid::Uuid;

/// The most questions a check-in or form holds (the CLI refuses more before sending).
pub const MAX_QUESTIONS: usize = 50;
/// The longest question text, in characters.
pub const MAX_QUESTION_CHARS: usize = 1000;
/// The longest short question (the label reports use), in characters.
pub const MAX_SHORT_QUESTION_CHARS: usize = 60;
/// Options of a multiple-choice question.
pub const MIN_OPTIONS: usize = 2;
pub const MAX_OPTIONS: usize = 25;
pub const MAX_OPTION_CHARS: usize = 200;
/// Alternative phrasings a question may rotate through.
pub const MAX_VARIATIONS: usize = 10;
/// Branching rules per question.
pub const MAX_RULES: usize = 20;
/// The longest text answer, in characters.
pub const MAX_TEXT_ANSWER_CHARS: usize = 10_000;

/// What kind of answer a question takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionType {
    Text,
    MultipleChoice,
    Boolean,
    Numeric,
}

impl WireEnum for QuestionType {
    const NAME: &'static str = "QuestionType";
    const ALL: &'static [Self] = &[
        QuestionType::Text,
        QuestionType::MultipleChoice,
        QuestionType::Boolean,
        QuestionType::Numeric,
    ];

    fn as_str(self) -> &'static str {
        match self {
            QuestionType::Text => "text",
            QuestionType::MultipleChoice => "multiple_choice",
            QuestionType::Boolean => "boolean",
            QuestionType::Numeric => "numeric",
        }
    }
}

/// How a condition compares an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    Equals,
    NotEquals,
    Contains,
    NotContains,
    GreaterThan,
    LessThan,
    GreaterThanOrEqual,
    LessThanOrEqual,
    IsEmpty,
    IsNotEmpty,
}

impl Operator {
    /// The operators that make sense for answers of `t`.
    fn fits(self, t: QuestionType) -> bool {
        use Operator::*;
        match t {
            QuestionType::Text => matches!(
                self,
                Equals | NotEquals | Contains | NotContains | IsEmpty | IsNotEmpty
            ),
            QuestionType::MultipleChoice => {
                matches!(self, Equals | NotEquals | Contains | NotContains)
            }
            QuestionType::Boolean => matches!(self, Equals | NotEquals),
            QuestionType::Numeric => matches!(
                self,
                Equals | NotEquals | GreaterThan | LessThan | GreaterThanOrEqual | LessThanOrEqual
            ),
        }
    }

    fn needs_value(self) -> bool {
        !matches!(self, Operator::IsEmpty | Operator::IsNotEmpty)
    }
}

/// How a condition joins the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Connector {
    #[default]
    And,
    Or,
}

/// One comparison of the question's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub operator: Operator,
    #[serde(default)]
    pub comparison_value: Value,
    #[serde(default)]
    pub logic_connector: Connector,
}

/// Where the conversation goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// Jump to a later question (`target`).
    GoTo,
    /// Finish: no more questions.
    End,
    /// Go on with the next question.
    Next,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    pub action: ActionKind,
    /// The question jumped to (`go_to` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Uuid>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub conditions: Vec<Condition>,
    pub then: Action,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    #[serde(default)]
    pub rules_if: Vec<Rule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_else: Option<Action>,
}

/// Branching logic of a question: the first rule whose conditions hold decides where to go
/// after it is answered; otherwise `rules_else`; otherwise the next question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Logic {
    pub rules: Rules,
}

impl Logic {
    /// Reads the logic document clients send (`{"rules": {"rules_if": [...], "rules_else": ...}}`).
    pub fn parse(field: &str, value: &Value) -> Result<Logic, Error> {
        serde_json::from_value(value.clone())
            .map_err(|e| Error::invalid_field(field, format!("Invalid branching logic: {e}.")))
    }

    fn actions(&self) -> impl Iterator<Item = &Action> {
        self.rules
            .rules_if
            .iter()
            .map(|r| &r.then)
            .chain(self.rules.rules_else.iter())
    }

    /// Where to go after `answer`, by the first rule that holds.
    fn next(&self, answer: &Value) -> Option<&Action> {
        self.rules
            .rules_if
            .iter()
            .find(|r| conditions_hold(&r.conditions, answer))
            .map(|r| &r.then)
            .or(self.rules.rules_else.as_ref())
    }
}

fn conditions_hold(conditions: &[Condition], answer: &Value) -> bool {
    let mut result = true;
    for (i, c) in conditions.iter().enumerate() {
        let holds = condition_holds(c, answer);
        result = if i == 0 {
            holds
        } else {
            match c.logic_connector {
                Connector::And => result && holds,
                Connector::Or => result || holds,
            }
        };
    }
    result
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_lowercase(),
        Value::Array(items) => items.iter().map(as_text).collect::<Vec<_>>().join("\n"),
        Value::Null => String::new(),
        other => other.to_string().to_lowercase(),
    }
}

fn condition_holds(c: &Condition, answer: &Value) -> bool {
    use Operator::*;
    let (a, b) = (answer, &c.comparison_value);
    match c.operator {
        IsEmpty => as_text(a).trim().is_empty(),
        IsNotEmpty => !as_text(a).trim().is_empty(),
        Equals | NotEquals => {
            let eq = match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x == y,
                _ => match (a, b) {
                    (Value::Bool(x), Value::Bool(y)) => x == y,
                    _ => as_text(a) == as_text(b),
                },
            };
            eq == (c.operator == Equals)
        }
        Contains | NotContains => {
            let needle = as_text(b);
            let found = match a {
                Value::Array(items) => items.iter().any(|i| as_text(i) == needle),
                _ => as_text(a).contains(&needle),
            };
            found == (c.operator == Contains)
        }
        GreaterThan | LessThan | GreaterThanOrEqual | LessThanOrEqual => {
            match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => match c.operator {
                    GreaterThan => x > y,
                    LessThan => x < y,
                    GreaterThanOrEqual => x >= y,
                    _ => x <= y,
                },
                _ => false,
            }
        }
    }
}

/// A question as stored and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub uuid: Uuid,
    pub question: String,
    pub question_type: QuestionType,
    pub required: bool,
    pub is_blocker: bool,
    /// Choices of a multiple-choice question; empty otherwise.
    #[serde(default)]
    pub options: Vec<String>,
    pub short_question: String,
    #[serde(default)]
    pub variations: Vec<String>,
    #[serde(default)]
    pub logic: Option<Logic>,
}

/// A question as a client writes it.
#[derive(Debug, Clone, Default)]
pub struct NewQuestion {
    pub question: String,
    pub question_type: Option<QuestionType>,
    pub required: Option<bool>,
    pub is_blocker: Option<bool>,
    pub options: Option<Vec<String>>,
    pub short_question: Option<String>,
    pub variations: Option<Vec<String>>,
    pub logic: Option<Value>,
}

/// A change to one question; absent fields stay. `logic: Some(Value::Null)` removes the logic.
#[derive(Debug, Clone, Default)]
pub struct QuestionPatch {
    pub question: Option<String>,
    pub question_type: Option<QuestionType>,
    pub required: Option<bool>,
    pub is_blocker: Option<bool>,
    pub options: Option<Vec<String>>,
    pub short_question: Option<String>,
    pub variations: Option<Vec<String>>,
    pub logic: Option<Value>,
}

/// Words a question opens with that say nothing about its subject.
const FILLER: &[&str] = &[
    "what", "which", "how", "who", "whom", "when", "where", "why", "do", "does", "did", "are",
    "is", "was", "were", "have", "has", "had", "will", "would", "can", "could", "should", "any",
    "anything", "you", "your", "yours", "today", "the", "a", "an", "there", "please", "tell", "us",
    "me", "about", "to", "of", "on", "in", "for", "with",
];

/// A short question derived from the question text, deterministically: the first words that
/// carry meaning (fillers such as "What did you" dropped), at most four, capitalized, within
/// [`MAX_SHORT_QUESTION_CHARS`]. "What did you complete yesterday?" gives "Complete yesterday".
pub fn generate_short_question(question: &str) -> String {
    let words: Vec<&str> = question
        .split(|c: char| c.is_whitespace())
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let meaningful: Vec<&str> = words
        .iter()
        .copied()
        .skip_while(|w| FILLER.contains(&w.to_lowercase().as_str()))
        .take(4)
        .collect();
    let chosen = if meaningful.is_empty() {
        words.iter().copied().take(4).collect::<Vec<_>>()
    } else {
        meaningful
    };
    let mut short = chosen.join(" ");
    if let Some(first) = short.chars().next() {
        short = first.to_uppercase().chain(short.chars().skip(1)).collect();
    }
    let mut short: String = short.chars().take(MAX_SHORT_QUESTION_CHARS).collect();
    if short.is_empty() {
        short = "Question".to_owned();
    }
    short
}

fn list_of_names(
    field: &str,
    values: &[String],
    max: usize,
    max_chars: usize,
) -> Result<Vec<String>, Error> {
    if values.len() > max {
        return Err(Error::invalid_field(
            field,
            format!("Give at most {max} entries."),
        ));
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(values.len());
    for v in values {
        let v = text::name(field, v, max_chars)?;
        if !seen.insert(v.to_lowercase()) {
            return Err(Error::invalid_field(
                field,
                format!("`{v}` is listed twice."),
            ));
        }
        out.push(v);
    }
    Ok(out)
}

/// Field names of question `index` in a body (`questions[2].options`) or of a single question.
#[derive(Clone, Copy)]
pub struct FieldPrefix<'a>(pub Option<(&'a str, usize)>);

impl FieldPrefix<'_> {
    fn name(&self, field: &str) -> String {
        match self.0 {
            Some((list, i)) => format!("{list}[{i}].{field}"),
            None => field.to_owned(),
        }
    }
}

impl Question {
    /// Validates a new question; `generate_short` fills a missing short question from the text
    /// (without it a missing one is `short_question_required`).
    pub fn build(
        uuid: Uuid,
        new: NewQuestion,
        generate_short: bool,
        at: FieldPrefix<'_>,
    ) -> Result<Question, Error> {
        let draft = Question {
            uuid,
            question: String::new(),
            question_type: new.question_type.unwrap_or(QuestionType::Text),
            required: new.required.unwrap_or(true),
            is_blocker: new.is_blocker.unwrap_or(false),
            options: Vec::new(),
            short_question: String::new(),
            variations: Vec::new(),
            logic: None,
        };
        let patch = QuestionPatch {
            question: Some(new.question),
            question_type: None,
            required: None,
            is_blocker: None,
            options: new.options,
            short_question: new.short_question,
            variations: new.variations,
            logic: new.logic,
        };
        draft.patched(patch, generate_short, true, at)
    }

    /// This question with `patch` applied and validated (the logic's targets are checked by the
    /// question set). A question whose text changes keeps its short question unless
    /// `generate_short` asks for a new one.
    pub fn patched(
        &self,
        patch: QuestionPatch,
        generate_short: bool,
        is_new: bool,
        at: FieldPrefix<'_>,
    ) -> Result<Question, Error> {
        let mut errors = FieldErrors::new();
        let question = patch
            .question
            .as_deref()
            .map(|q| text::name(&at.name("question"), q, MAX_QUESTION_CHARS))
            .transpose();
        errors.note(&question);
        let question_type = patch.question_type.unwrap_or(self.question_type);
        let options = patch
            .options
            .as_deref()
            .map(|o| list_of_names(&at.name("options"), o, MAX_OPTIONS, MAX_OPTION_CHARS))
            .transpose();
        errors.note(&options);
        let variations = patch
            .variations
            .as_deref()
            .map(|v| {
                list_of_names(
                    &at.name("variations"),
                    v,
                    MAX_VARIATIONS,
                    MAX_QUESTION_CHARS,
                )
            })
            .transpose();
        errors.note(&variations);
        let short = patch
            .short_question
            .as_deref()
            .map(|s| text::optional_name(&at.name("short_question"), s, MAX_SHORT_QUESTION_CHARS))
            .transpose();
        errors.note(&short);
        let logic = match &patch.logic {
            None => Ok(self.logic.clone()),
            Some(Value::Null) => Ok(None),
            Some(v) => Logic::parse(&at.name("logic"), v).map(Some),
        };
        errors.note(&logic);
        errors.finish()?;

        let mut q = self.clone();
        if let Some(text) = question.ok().flatten() {
            q.question = text;
        }
        q.question_type = question_type;
        if let Some(r) = patch.required {
            q.required = r;
        }
        if let Some(b) = patch.is_blocker {
            q.is_blocker = b;
        }
        if let Some(o) = options.ok().flatten() {
            q.options = o;
        }
        if let Some(v) = variations.ok().flatten() {
            q.variations = v;
        }
        q.logic = logic.ok().flatten();
        match short.ok().flatten().filter(|s| !s.is_empty()) {
            Some(s) => q.short_question = s,
            None if generate_short => q.short_question = generate_short_question(&q.question),
            None if is_new || patch.short_question.is_some() => {
                return Err(Error::new(
                    ErrorCode::ShortQuestionRequired,
                    "Each question needs a `short_question`, or send `generate_short_question: true`.",
                )
                .with_field_error(&at.name("short_question"), "This field is required."));
            }
            None => {}
        }
        q.check_type_rules(at)?;
        Ok(q)
    }

    /// What the question's type asks of its options and logic.
    fn check_type_rules(&mut self, at: FieldPrefix<'_>) -> Result<(), Error> {
        match self.question_type {
            QuestionType::MultipleChoice => {
                if self.options.len() < MIN_OPTIONS {
                    return Err(Error::invalid_field(
                        &at.name("options"),
                        format!("A multiple-choice question needs at least {MIN_OPTIONS} options."),
                    ));
                }
            }
            // Options mean nothing to other types; a type change drops them.
            _ => self.options.clear(),
        }
        if let Some(logic) = &self.logic {
            let field = at.name("logic");
            if logic.rules.rules_if.len() > MAX_RULES {
                return Err(Error::invalid_field(
                    &field,
                    format!("Give at most {MAX_RULES} rules."),
                ));
            }
            for rule in &logic.rules.rules_if {
                if rule.conditions.is_empty() {
                    return Err(Error::invalid_field(
                        &field,
                        "Every rule needs a condition.",
                    ));
                }
                for c in &rule.conditions {
                    self.check_condition(c, &field)?;
                }
            }
            for a in logic.actions() {
                match (a.action, a.target) {
                    (ActionKind::GoTo, None) => {
                        return Err(Error::invalid_field(
                            &field,
                            "`go_to` needs a `target` question.",
                        ));
                    }
                    (ActionKind::End | ActionKind::Next, Some(_)) => {
                        return Err(Error::invalid_field(
                            &field,
                            "Only `go_to` takes a `target`.",
                        ));
                    }
                    (ActionKind::GoTo, Some(t)) if t == self.uuid => {
                        return Err(Error::invalid_field(
                            &field,
                            "A question cannot jump to itself.",
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn check_condition(&self, c: &Condition, field: &str) -> Result<(), Error> {
        let t = self.question_type;
        if !c.operator.fits(t) {
            return Err(Error::invalid_field(
                field,
                format!("This operator does not apply to {} questions.", t.as_str()),
            ));
        }
        if !c.operator.needs_value() {
            return Ok(());
        }
        let v = &c.comparison_value;
        let ok = match t {
            QuestionType::Text => v.is_string(),
            QuestionType::Boolean => v.is_boolean(),
            QuestionType::Numeric => v.is_number(),
            QuestionType::MultipleChoice => v
                .as_str()
                .is_some_and(|s| self.options.iter().any(|o| o.eq_ignore_ascii_case(s))),
        };
        if ok {
            Ok(())
        } else {
            Err(Error::invalid_field(
                field,
                format!(
                    "`comparison_value` must be a {} answer to this question.",
                    t.as_str()
                ),
            ))
        }
    }

    /// The answer, validated and normalized for this question's type: booleans and numbers
    /// may come as their JSON values or as text ("yes", "3.5"); a choice must be one of the
    /// options (several as a list). `null` or blank is "no answer".
    pub fn answer(&self, field: &str, value: &Value) -> Result<Option<Value>, Error> {
        let blank = match value {
            Value::Null => true,
            Value::String(s) => s.trim().is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => false,
        };
        if blank {
            return Ok(None);
        }
        let bad = |what: &str| Error::invalid_field(field, format!("Expected {what}."));
        let v = match self.question_type {
            QuestionType::Text => match value {
                Value::String(s) => {
                    if s.chars().count() > MAX_TEXT_ANSWER_CHARS {
                        return Err(Error::invalid_field(
                            field,
                            format!("Answers are at most {MAX_TEXT_ANSWER_CHARS} characters."),
                        ));
                    }
                    Value::String(s.trim().to_owned())
                }
                Value::Number(n) => Value::String(n.to_string()),
                Value::Bool(b) => Value::String(b.to_string()),
                _ => return Err(bad("text")),
            },
            QuestionType::Boolean => match value {
                Value::Bool(b) => Value::Bool(*b),
                Value::String(s) => match s.trim().to_lowercase().as_str() {
                    "true" | "yes" | "y" | "1" => Value::Bool(true),
                    "false" | "no" | "n" | "0" => Value::Bool(false),
                    _ => return Err(bad("yes or no (true or false)")),
                },
                _ => return Err(bad("yes or no (true or false)")),
            },
            QuestionType::Numeric => {
                let n = match value {
                    Value::Number(n) => n.as_f64(),
                    Value::String(s) => s.trim().parse::<f64>().ok(),
                    _ => None,
                }
                .filter(|n| n.is_finite())
                .ok_or_else(|| bad("a number"))?;
                serde_json::Number::from_f64(n)
                    .map(|num| {
                        if n.fract() == 0.0 && n.abs() < 9.0e15 {
                            Value::from(n as i64)
                        } else {
                            Value::Number(num)
                        }
                    })
                    .ok_or_else(|| bad("a number"))?
            }
            QuestionType::MultipleChoice => {
                let pick = |s: &str| {
                    self.options
                        .iter()
                        .find(|o| o.eq_ignore_ascii_case(s.trim()))
                        .cloned()
                        .ok_or_else(|| {
                            Error::invalid_field(
                                field,
                                format!("Choose one of: {}.", self.options.join(", ")),
                            )
                        })
                };
                match value {
                    Value::String(s) => Value::String(pick(s)?),
                    Value::Array(items) => {
                        let mut picked = Vec::with_capacity(items.len());
                        for i in items {
                            let s = i.as_str().ok_or_else(|| bad("options as text"))?;
                            let o = pick(s)?;
                            if !picked.contains(&o) {
                                picked.push(o);
                            }
                        }
                        Value::from(picked)
                    }
                    _ => return Err(bad("one of the options")),
                }
            }
        };
        Ok(Some(v))
    }
}

/// How errors name the answers of a response: items of a list (check-ins send
/// `responses: [{uuid, response}]`) or members of a map keyed by question uuid (forms send
/// `content: {uuid: answer}`).
#[derive(Debug, Clone, Copy)]
pub enum AnswerFields<'a> {
    /// `name[i]`.
    List(&'a str),
    /// `name.<question uuid>`.
    Map(&'a str),
}

impl AnswerFields<'_> {
    fn item(&self, index: usize, question: Uuid) -> String {
        match self {
            AnswerFields::List(name) => format!("{name}[{index}]"),
            AnswerFields::Map(name) => format!("{name}.{question}"),
        }
    }

    fn whole(&self) -> &str {
        match self {
            AnswerFields::List(name) | AnswerFields::Map(name) => name,
        }
    }
}

/// The ordered questions of a check-in or form, with the version answers are checked against.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QuestionSet {
    pub questions: Vec<Question>,
    pub version: i32,
}

/// One answer of a response: the question and its (normalized) value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub uuid: Uuid,
    pub question: String,
    pub response: Value,
}

impl QuestionSet {
    /// A first set of questions (creation): at least one, at most [`MAX_QUESTIONS`].
    pub fn create(new: Vec<NewQuestion>, generate_short: bool) -> Result<QuestionSet, Error> {
        if new.is_empty() {
            return Err(Error::new(
                ErrorCode::QuestionsRequired,
                "Give at least one question.",
            ));
        }
        if new.len() > MAX_QUESTIONS {
            return Err(Error::invalid_field(
                "questions",
                format!("Give at most {MAX_QUESTIONS} questions."),
            ));
        }
        // Every question's problems at once, short questions first (their own code).
        let mut built = Vec::with_capacity(new.len());
        let mut errors = FieldErrors::new();
        for (i, q) in new.into_iter().enumerate() {
            let r = Question::build(
                Uuid::now_v7(),
                q,
                generate_short,
                FieldPrefix(Some(("questions", i))),
            );
            errors.note(&r);
            if let Ok(q) = r {
                built.push(q);
            }
        }
        errors.finish()?;
        let set = QuestionSet {
            questions: built,
            version: 1,
        };
        set.check_logic_targets()?;
        Ok(set)
    }

    pub fn get(&self, id: Uuid) -> Result<&Question, Error> {
        self.questions
            .iter()
            .find(|q| q.uuid == id)
            .ok_or_else(Error::not_found)
    }

    /// Adds a question at the end.
    pub fn add(
        &self,
        new: NewQuestion,
        generate_short: bool,
    ) -> Result<(QuestionSet, Question), Error> {
        if self.questions.len() >= MAX_QUESTIONS {
            return Err(Error::invalid_field(
                "questions",
                format!("A set holds at most {MAX_QUESTIONS} questions."),
            ));
        }
        let q = Question::build(Uuid::now_v7(), new, generate_short, FieldPrefix(None))?;
        let mut next = self.bumped();
        next.questions.push(q.clone());
        next.check_logic_targets()?;
        Ok((next, q))
    }

    /// Changes one question.
    pub fn update(
        &self,
        id: Uuid,
        patch: QuestionPatch,
        generate_short: bool,
    ) -> Result<(QuestionSet, Question), Error> {
        let q = self
            .get(id)?
            .patched(patch, generate_short, false, FieldPrefix(None))?;
        let mut next = self.bumped();
        for slot in &mut next.questions {
            if slot.uuid == id {
                *slot = q.clone();
            }
        }
        next.check_logic_targets()?;
        Ok((next, q))
    }

    /// Removes one question; the last one cannot go (`questions_required`), nor one another
    /// question's logic jumps to.
    pub fn remove(&self, id: Uuid) -> Result<QuestionSet, Error> {
        self.get(id)?;
        if self.questions.len() == 1 {
            return Err(Error::new(
                ErrorCode::QuestionsRequired,
                "The last question cannot be removed.",
            ));
        }
        if let Some(source) = self.questions.iter().find(|q| {
            q.logic
                .as_ref()
                .is_some_and(|l| l.actions().any(|a| a.target == Some(id)))
        }) {
            return Err(Error::invalid_field(
                "question",
                format!(
                    "Question `{}` jumps to this one; change its logic first.",
                    source.short_question
                ),
            ));
        }
        let mut next = self.bumped();
        next.questions.retain(|q| q.uuid != id);
        Ok(next)
    }

    /// Puts the questions in the order given, which must name every question exactly once.
    pub fn reorder(&self, ids: &[Uuid]) -> Result<QuestionSet, Error> {
        if ids.is_empty() {
            return Err(Error::new(
                ErrorCode::QuestionUuidsRequired,
                "Send `question_uuids`: every question, in the new order.",
            ));
        }
        let mut seen = HashSet::new();
        let dupes: Vec<String> = ids
            .iter()
            .filter(|id| !seen.insert(**id))
            .map(Uuid::to_string)
            .collect();
        if !dupes.is_empty() {
            return Err(Error::new(
                ErrorCode::QuestionUuidsDuplicate,
                "`question_uuids` names a question more than once.",
            )
            .with_extra("uuids", dupes));
        }
        let unknown: Vec<String> = ids
            .iter()
            .filter(|id| !self.questions.iter().any(|q| q.uuid == **id))
            .map(Uuid::to_string)
            .collect();
        if !unknown.is_empty() {
            return Err(Error::invalid_field(
                "question_uuids",
                "Some uuids are not questions of this set.",
            )
            .with_extra("uuids", unknown));
        }
        let missing: Vec<String> = self
            .questions
            .iter()
            .filter(|q| !seen.contains(&q.uuid))
            .map(|q| q.uuid.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(Error::new(
                ErrorCode::QuestionUuidsIncomplete,
                "`question_uuids` must name every question of the set.",
            )
            .with_extra("uuids", missing));
        }
        let mut next = self.bumped();
        next.questions = ids
            .iter()
            .filter_map(|id| self.questions.iter().find(|q| q.uuid == *id).cloned())
            .collect();
        next.check_logic_targets()?;
        Ok(next)
    }

    fn bumped(&self) -> QuestionSet {
        QuestionSet {
            questions: self.questions.clone(),
            version: self.version + 1,
        }
    }

    /// Logic only jumps forward, to a question of this set: a conversation always ends.
    fn check_logic_targets(&self) -> Result<(), Error> {
        for (i, q) in self.questions.iter().enumerate() {
            let Some(logic) = &q.logic else { continue };
            for target in logic.actions().filter_map(|a| a.target) {
                let pos = self.questions.iter().position(|o| o.uuid == target);
                match pos {
                    Some(p) if p > i => {}
                    Some(_) => {
                        return Err(Error::invalid_field(
                            "logic",
                            format!(
                                "Question `{}` may only jump to a later question.",
                                q.short_question
                            ),
                        ));
                    }
                    None => {
                        return Err(Error::invalid_field(
                            "logic",
                            format!(
                                "Question `{}` jumps to an unknown question.",
                                q.short_question
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The questions a person is asked given `answers`, in order: branching logic may skip some.
    pub fn path<'a>(&'a self, answer_of: impl Fn(Uuid) -> Option<&'a Value>) -> Vec<&'a Question> {
        let mut path = Vec::new();
        let mut i = 0;
        while let Some(q) = self.questions.get(i) {
            path.push(q);
            let next = q
                .logic
                .as_ref()
                .zip(answer_of(q.uuid))
                .and_then(|(l, a)| l.next(a));
            i = match next {
                Some(Action {
                    action: ActionKind::End,
                    ..
                }) => break,
                Some(Action {
                    action: ActionKind::GoTo,
                    target: Some(t),
                }) => self
                    .questions
                    .iter()
                    .position(|o| o.uuid == *t)
                    .unwrap_or(i + 1),
                _ => i + 1,
            };
        }
        path
    }

    /// Validates answers given as `(question uuid, value)` against this set: every uuid a
    /// question of the set, values fit their types, and — when `complete` — every required
    /// question on the person's path answered. Returns the answers in question order. Errors
    /// name the answers as a list (`responses[2]`).
    pub fn answers(&self, given: &[(Uuid, Value)], complete: bool) -> Result<Vec<Answer>, Error> {
        self.answers_named(AnswerFields::List("responses"), given, complete)
    }

    /// [`QuestionSet::answers`], with errors naming the answers as `fields` says.
    pub fn answers_named(
        &self,
        fields: AnswerFields<'_>,
        given: &[(Uuid, Value)],
        complete: bool,
    ) -> Result<Vec<Answer>, Error> {
        let mut errors = FieldErrors::new();
        let mut normalized: Vec<(Uuid, Value)> = Vec::with_capacity(given.len());
        for (i, (id, value)) in given.iter().enumerate() {
            let field = fields.item(i, *id);
            let Some(q) = self.questions.iter().find(|q| q.uuid == *id) else {
                errors.note::<()>(&Err(Error::invalid_field(
                    &field,
                    "Not a question of this set.",
                )));
                continue;
            };
            if normalized.iter().any(|(n, _)| n == id) {
                errors.note::<()>(&Err(Error::invalid_field(
                    &field,
                    "Question answered twice.",
                )));
                continue;
            }
            let r = q.answer(&field, value);
            errors.note(&r);
            if let Ok(Some(v)) = r {
                normalized.push((*id, v));
            }
        }
        errors.finish()?;
        let lookup = |id: Uuid| normalized.iter().find(|(n, _)| *n == id).map(|(_, v)| v);
        if complete {
            let missing: Vec<String> = self
                .path(lookup)
                .into_iter()
                .filter(|q| q.required && lookup(q.uuid).is_none())
                .map(|q| q.uuid.to_string())
                .collect();
            if !missing.is_empty() {
                return Err(Error::invalid_field(
                    fields.whole(),
                    "Answer every required question.",
                )
                .with_extra("uuids", missing));
            }
        }
        Ok(self
            .questions
            .iter()
            .filter_map(|q| {
                lookup(q.uuid).map(|v| Answer {
                    uuid: q.uuid,
                    question: q.question.clone(),
                    response: v.clone(),
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests;
