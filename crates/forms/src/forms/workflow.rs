//! A form's response workflow: an ordered list of states every response of the form is in one
//! of. The machine is small and pure: a response starts in the first state; from any state it
//! may move to any other one, except out of a final state, which needs the form to allow
//! reopening. Keys are derived by the server from the labels (a slug, unique in the workflow).

use std::collections::HashSet;

use teamcomm_kernel::{Error, ErrorCode, FieldErrors, WireEnum, text};

/// Fewest and most states of a workflow (the CLI refuses more than 20 before sending).
pub const MIN_STATES: usize = 2;
pub const MAX_STATES: usize = 20;
/// The longest state label, in characters.
pub const MAX_STATE_LABEL: usize = 50;
/// The longest derived key, in characters.
const MAX_KEY: usize = 40;

/// One state of a workflow, as stored and shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowState {
    /// Derived from the label: lower-case ASCII letters, digits and `_`; unique in the workflow.
    pub key: String,
    pub label: String,
    /// `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`, lower-case.
    pub color: String,
    /// Position, from 0; the first state is where responses start.
    pub order: u32,
    /// A response in a final state stays there unless the form allows reopening.
    pub is_final: bool,
}

/// A state as a client writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateInput {
    pub label: String,
    pub color: String,
    /// When no state says, the last one is final.
    pub is_final: Option<bool>,
}

/// Where an approval stands, derived from the state of a response (the `flow_status` filter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlowStatus {
    /// In a state that is not final.
    Pending,
    /// In the state keyed `approved`.
    Approved,
    /// In the state keyed `denied`.
    Denied,
}

impl WireEnum for FlowStatus {
    const NAME: &'static str = "FlowStatus";
    const ALL: &'static [Self] = &[
        FlowStatus::Pending,
        FlowStatus::Approved,
        FlowStatus::Denied,
    ];

    fn as_str(self) -> &'static str {
        match self {
            FlowStatus::Pending => "pending",
            FlowStatus::Approved => "approved",
            FlowStatus::Denied => "denied",
        }
    }
}

/// The ordered states of a form's workflow (at least [`MIN_STATES`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workflow {
    states: Vec<WorkflowState>,
}

impl Workflow {
    /// Validates the states a client sent: every problem at once (`workflow.states[i].label`…),
    /// labels unique regardless of case, colours in hex; keys and order derived.
    pub fn build(input: &[StateInput]) -> Result<Workflow, Error> {
        if !(MIN_STATES..=MAX_STATES).contains(&input.len()) {
            return Err(Error::invalid_field(
                "workflow.states",
                format!("A workflow has {MIN_STATES} to {MAX_STATES} states."),
            ));
        }
        let mut errors = FieldErrors::new();
        let mut seen = HashSet::new();
        let mut states = Vec::with_capacity(input.len());
        for (i, s) in input.iter().enumerate() {
            let at = |f: &str| format!("workflow.states[{i}].{f}");
            let label = text::name(&at("label"), &s.label, MAX_STATE_LABEL).and_then(|l| {
                if seen.insert(l.to_lowercase()) {
                    Ok(l)
                } else {
                    Err(Error::invalid_field(
                        &at("label"),
                        format!("`{l}` is listed twice."),
                    ))
                }
            });
            errors.note(&label);
            let color = hex_color(&at("color"), &s.color);
            errors.note(&color);
            if let (Ok(label), Ok(color)) = (label, color) {
                states.push(WorkflowState {
                    key: String::new(),
                    label,
                    color,
                    order: i as u32,
                    is_final: s.is_final.unwrap_or(false),
                });
            }
        }
        errors.finish()?;
        if input.iter().all(|s| s.is_final.is_none())
            && let Some(last) = states.last_mut()
        {
            last.is_final = true;
        }
        let mut keys = HashSet::new();
        for s in &mut states {
            s.key = unique_key(&slug(&s.label), &keys);
            keys.insert(s.key.clone());
        }
        Ok(Workflow { states })
    }

    /// The workflow an approval form gets when it has none: Pending, then Approved or Denied
    /// (both final).
    pub fn approval() -> Workflow {
        let state =
            |key: &str, label: &str, color: &str, order: u32, is_final: bool| WorkflowState {
                key: key.to_owned(),
                label: label.to_owned(),
                color: color.to_owned(),
                order,
                is_final,
            };
        Workflow {
            states: vec![
                state("pending", "Pending", "#f1c40f", 0, false),
                state("approved", "Approved", "#2ecc71", 1, true),
                state("denied", "Denied", "#e74c3c", 2, true),
            ],
        }
    }

    /// A stored workflow, as it was validated when written (adapters decode with this).
    pub fn from_stored(states: Vec<WorkflowState>) -> Workflow {
        Workflow { states }
    }

    pub fn states(&self) -> &[WorkflowState] {
        &self.states
    }

    /// Where every response starts.
    pub fn initial(&self) -> &WorkflowState {
        &self.states[0]
    }

    pub fn state(&self, key: &str) -> Option<&WorkflowState> {
        self.states.iter().find(|s| s.key == key)
    }

    /// The states a response in `current` may move to: every other one, none out of a final
    /// state unless the form allows reopening.
    pub fn allowed_from(&self, current: &str, allow_reopen: bool) -> Vec<&WorkflowState> {
        let locked = self
            .state(current)
            .is_some_and(|s| s.is_final && !allow_reopen);
        if locked {
            return Vec::new();
        }
        self.states.iter().filter(|s| s.key != current).collect()
    }

    /// Checks a move from `current` to `to`: 409 `final_state_locked` out of a final state the
    /// form does not reopen, 409 `workflow_transition_not_allowed` to the same or an unknown
    /// state (`extra.allowed` lists the keys that are allowed).
    pub fn check_transition(
        &self,
        current: &str,
        to: &str,
        allow_reopen: bool,
    ) -> Result<&WorkflowState, Error> {
        if self
            .state(current)
            .is_some_and(|s| s.is_final && !allow_reopen)
        {
            return Err(Error::new(
                ErrorCode::FinalStateLocked,
                format!(
                    "The response is in the final state `{current}` and this form does not allow reopening it."
                ),
            ));
        }
        let allowed = self.allowed_from(current, allow_reopen);
        allowed
            .iter()
            .find(|s| s.key == to)
            .copied()
            .ok_or_else(|| {
                let keys: Vec<&str> = allowed.iter().map(|s| s.key.as_str()).collect();
                Error::new(
                    ErrorCode::WorkflowTransitionNotAllowed,
                    format!(
                        "The workflow does not move a response from `{current}` to `{to}`; allowed: {}.",
                        keys.join(", ")
                    ),
                )
                .with_extra("allowed", keys)
            })
    }

    /// Keys of this workflow that `next` no longer has.
    pub fn removed_in(&self, next: &Workflow) -> Vec<String> {
        self.states
            .iter()
            .filter(|s| next.state(&s.key).is_none())
            .map(|s| s.key.clone())
            .collect()
    }

    /// The keys of the states whose responses have this approval status.
    pub fn keys_with(&self, status: FlowStatus) -> Vec<String> {
        self.states
            .iter()
            .filter(|s| match status {
                FlowStatus::Pending => !s.is_final,
                FlowStatus::Approved => s.key == "approved",
                FlowStatus::Denied => s.key == "denied",
            })
            .map(|s| s.key.clone())
            .collect()
    }

    /// The approval status of a response in `key`, if the state has one.
    pub fn flow_status(&self, key: &str) -> Option<FlowStatus> {
        FlowStatus::ALL
            .iter()
            .copied()
            .find(|f| self.keys_with(*f).iter().any(|k| k == key))
    }
}

/// `#` and 3, 4, 6 or 8 hex digits, kept lower-case.
fn hex_color(field: &str, raw: &str) -> Result<String, Error> {
    let color = raw.trim().to_ascii_lowercase();
    let digits = color.strip_prefix('#').unwrap_or("");
    if matches!(digits.len(), 3 | 4 | 6 | 8) && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(color)
    } else {
        Err(Error::invalid_field(
            field,
            "Use a hex colour such as #3498db.",
        ))
    }
}

/// The key of a label: lower-case ASCII letters and digits, anything else one `_`, trimmed;
/// `state` when nothing is left.
pub fn slug(label: &str) -> String {
    let mut key = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            key.push(c.to_ascii_lowercase());
        } else if !key.ends_with('_') {
            key.push('_');
        }
    }
    let key: String = key.trim_matches('_').chars().take(MAX_KEY).collect();
    let key = key.trim_end_matches('_');
    if key.is_empty() {
        "state".to_owned()
    } else {
        key.to_owned()
    }
}

fn unique_key(base: &str, taken: &HashSet<String>) -> String {
    if !taken.contains(base) {
        return base.to_owned();
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|k| !taken.contains(k))
        .unwrap_or_else(|| base.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(states: &[(&str, &str)]) -> Vec<StateInput> {
        states
            .iter()
            .map(|(label, color)| StateInput {
                label: (*label).to_owned(),
                color: (*color).to_owned(),
                is_final: None,
            })
            .collect()
    }

    fn keys(w: &[&WorkflowState]) -> Vec<String> {
        w.iter().map(|s| s.key.clone()).collect()
    }

    #[test]
    fn keys_and_order_are_derived_and_the_last_state_is_final_by_default() {
        let w = Workflow::build(&input(&[
            ("Draft", "#CCC"),
            ("In QA!", "#3498db"),
            ("Ça va", "#aabbccdd"),
            ("???", "#123"),
        ]))
        .unwrap();
        let shown: Vec<(&str, &str, u32, bool)> = w
            .states()
            .iter()
            .map(|s| (s.key.as_str(), s.color.as_str(), s.order, s.is_final))
            .collect();
        assert_eq!(
            shown,
            [
                ("draft", "#ccc", 0, false),
                ("in_qa", "#3498db", 1, false),
                ("a_va", "#aabbccdd", 2, false),
                ("state", "#123", 3, true),
            ]
        );
        assert_eq!(w.initial().key, "draft");
    }

    #[test]
    fn keys_stay_unique() {
        let w = Workflow::build(&input(&[
            ("Done", "#000"),
            ("Done!", "#111"),
            ("done ", "#222"),
        ]));
        // "done " repeats "Done" (labels are unique regardless of case)…
        let e = w.unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        assert!(e.field_errors().contains_key("workflow.states[2].label"));
        // …while different labels with the same slug get numbered keys.
        let w = Workflow::build(&input(&[("Done", "#000"), ("Done!", "#111")])).unwrap();
        assert_eq!(
            keys(&w.states().iter().collect::<Vec<_>>()),
            ["done", "done_2"]
        );
    }

    #[test]
    fn explicit_final_states_replace_the_default() {
        let mut states = input(&[("Open", "#000"), ("Won", "#111"), ("Triage", "#222")]);
        states[1].is_final = Some(true);
        let w = Workflow::build(&states).unwrap();
        let finals: Vec<bool> = w.states().iter().map(|s| s.is_final).collect();
        assert_eq!(finals, [false, true, false]);
    }

    #[test]
    fn every_bad_state_is_named() {
        let e = Workflow::build(&input(&[("", "#000"), ("Ok", "blue"), ("Fine", "#12345")]))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        let fields: Vec<&String> = e.field_errors().keys().collect();
        assert_eq!(
            fields,
            [
                "workflow.states[0].label",
                "workflow.states[1].color",
                "workflow.states[2].color"
            ]
        );
        for count in [0, 1, 21] {
            let many: Vec<StateInput> = (0..count)
                .map(|i| StateInput {
                    label: format!("S{i}"),
                    color: "#000".into(),
                    is_final: None,
                })
                .collect();
            let e = Workflow::build(&many).unwrap_err();
            assert!(e.field_errors().contains_key("workflow.states"), "{count}");
        }
        let long = "x".repeat(MAX_STATE_LABEL + 1);
        assert!(Workflow::build(&input(&[(&long, "#000"), ("b", "#000")])).is_err());
    }

    #[test]
    fn a_response_moves_to_any_other_state() {
        let w = Workflow::build(&input(&[
            ("Draft", "#000"),
            ("QA", "#111"),
            ("Done", "#222"),
        ]))
        .unwrap();
        assert_eq!(keys(&w.allowed_from("draft", false)), ["qa", "done"]);
        assert_eq!(keys(&w.allowed_from("qa", false)), ["draft", "done"]);
        assert_eq!(
            w.check_transition("draft", "done", false).unwrap().key,
            "done"
        );
        assert_eq!(
            w.check_transition("qa", "draft", false).unwrap().key,
            "draft"
        );
    }

    #[test]
    fn the_same_or_an_unknown_state_is_not_a_transition() {
        let w = Workflow::build(&input(&[
            ("Draft", "#000"),
            ("QA", "#111"),
            ("Done", "#222"),
        ]))
        .unwrap();
        for to in ["draft", "nope", "Draft"] {
            let e = w.check_transition("draft", to, false).unwrap_err();
            assert_eq!(e.code(), ErrorCode::WorkflowTransitionNotAllowed, "{to}");
            assert_eq!(e.status(), 409);
            assert_eq!(e.extra()["allowed"], serde_json::json!(["qa", "done"]));
        }
    }

    #[test]
    fn a_final_state_is_left_only_when_reopening_is_allowed() {
        let w = Workflow::build(&input(&[("Draft", "#000"), ("Done", "#222")])).unwrap();
        assert!(w.allowed_from("done", false).is_empty());
        let e = w.check_transition("done", "draft", false).unwrap_err();
        assert_eq!(e.code(), ErrorCode::FinalStateLocked);
        assert_eq!(e.status(), 409);
        // Locked wins over an unknown target: the response cannot move at all.
        let e = w.check_transition("done", "nope", false).unwrap_err();
        assert_eq!(e.code(), ErrorCode::FinalStateLocked);
        assert_eq!(keys(&w.allowed_from("done", true)), ["draft"]);
        assert_eq!(
            w.check_transition("done", "draft", true).unwrap().key,
            "draft"
        );
    }

    #[test]
    fn approval_states_and_flow_status() {
        let w = Workflow::approval();
        assert_eq!(w.initial().key, "pending");
        assert_eq!(w.keys_with(FlowStatus::Pending), ["pending"]);
        assert_eq!(w.keys_with(FlowStatus::Approved), ["approved"]);
        assert_eq!(w.keys_with(FlowStatus::Denied), ["denied"]);
        assert_eq!(w.flow_status("denied"), Some(FlowStatus::Denied));
        assert!(w.allowed_from("approved", false).is_empty());
        // A custom workflow: pending means "not final"; other final states have no status.
        let custom = Workflow::build(&input(&[("Draft", "#000"), ("Shipped", "#111")])).unwrap();
        assert_eq!(custom.keys_with(FlowStatus::Pending), ["draft"]);
        assert!(custom.keys_with(FlowStatus::Approved).is_empty());
        assert_eq!(custom.flow_status("shipped"), None);
    }

    #[test]
    fn removed_keys_are_those_the_next_workflow_lacks() {
        let before =
            Workflow::build(&input(&[("A", "#000"), ("B", "#000"), ("C", "#000")])).unwrap();
        let after =
            Workflow::build(&input(&[("C", "#000"), ("A", "#111"), ("D", "#000")])).unwrap();
        assert_eq!(before.removed_in(&after), ["b"]);
        assert!(after.removed_in(&after).is_empty());
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("  In Review (2) "), "in_review_2");
        assert_eq!(slug("née"), "n_e");
        assert_eq!(slug("🚀"), "state");
        // Cut at the maximum, with no `_` left dangling.
        assert_eq!(slug(&"ab ".repeat(30)).len(), MAX_KEY);
        assert_eq!(slug(&"abc ".repeat(20)).len(), MAX_KEY - 1);
    }
}
