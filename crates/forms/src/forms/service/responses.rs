//! Responses to forms: submitting (members, anonymously, automations, guests), reading them as
//! each person may, editing, deleting, and moving them through the form's workflow. Each write
//! records its `forms.response.*` event with it.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use teamcomm_kernel::{
    Error, ErrorCode, Event, EventType, FieldErrors, Page, PageRequest, UserId, WireEnum, text,
};
use teamcomm_org::{Role, User};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::{ATTEMPTS, FormService, day_span, still_changing};
use crate::forms::access::{FormAccess, Viewer};
use crate::forms::model::{
    Form, FormResponse, GuestUser, MAX_GUEST_EMAIL, MAX_GUEST_NAME, MAX_NOTE, MAX_SUBMISSION_LABEL,
    Person, ResponseListFilter, ResponseOrder, ResponseSelection, StateChange, SubmissionSource,
    Written,
};
use crate::forms::workflow::{FlowStatus, WorkflowState};
use crate::questions::AnswerFields;

/// A response as sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Submission {
    /// Answers by question uuid (as text: a key that is not a question's uuid is refused).
    pub content: Vec<(String, Value)>,
    /// Sent by an integration: no submitter shown.
    pub automation: bool,
    /// Hide who sent it (forced on anonymous forms).
    pub anonymous: bool,
    /// Who the response is from, for automation and guest responses.
    pub guest: Option<GuestUser>,
    /// Free-text provenance (`workflow:release`), at most 512 characters.
    pub label: Option<String>,
}

/// One move through the workflow as one person sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisibleChange {
    pub from_state: String,
    pub to_state: String,
    pub at: OffsetDateTime,
    pub note: Option<String>,
    /// The viewer made this move.
    pub is_self: bool,
    /// Who made it, only for those who see the form's responses.
    pub actor_name: Option<String>,
}

/// A response as one person sees it: the submitter only when the response shows them, the
/// workflow as it applies to the viewer.
#[derive(Debug, Clone, PartialEq)]
pub struct VisibleResponse {
    pub id: Uuid,
    pub form_id: Uuid,
    /// The submitter of a member response.
    pub user: Option<Person>,
    /// The viewer sent it.
    pub is_own: bool,
    pub source: SubmissionSource,
    pub label: Option<String>,
    pub guest: Option<GuestUser>,
    pub content: BTreeMap<Uuid, Value>,
    pub current_state: Option<String>,
    pub flow_status: Option<FlowStatus>,
    /// Where the workflow lets it go from its state.
    pub allowed_transitions: Vec<WorkflowState>,
    /// The viewer may move it now.
    pub can_change_state: bool,
    pub history: Vec<VisibleChange>,
    pub edited: bool,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl VisibleResponse {
    fn of(form: &Form, access: FormAccess, viewer: &Viewer, r: FormResponse) -> Self {
        let workflow = form.settings.workflow.as_ref();
        let current_state = workflow.and(r.current_state.clone());
        let allowed_transitions: Vec<WorkflowState> = match (workflow, &current_state) {
            (Some(w), Some(current)) => w
                .allowed_from(current, form.settings.allow_reopen_from_final_state)
                .into_iter()
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        VisibleResponse {
            id: r.id,
            form_id: r.form_id,
            user: r.reveals_submitter().then(|| r.submitter.clone()),
            is_own: r.submitter.id == viewer.user.id,
            source: r.source,
            label: r.label,
            guest: r.guest,
            content: r.content,
            flow_status: workflow
                .zip(current_state.as_deref())
                .and_then(|(w, s)| w.flow_status(s)),
            current_state,
            can_change_state: access.can_change_states && !allowed_transitions.is_empty(),
            allowed_transitions,
            history: r
                .history
                .into_iter()
                .map(|c| VisibleChange {
                    is_self: c.actor.as_ref().is_some_and(|a| a.id == viewer.user.id),
                    actor_name: c
                        .actor
                        .filter(|_| access.can_see_responses)
                        .map(|a| a.full_name),
                    from_state: c.from_state,
                    to_state: c.to_state,
                    at: c.at,
                    note: c.note,
                })
                .collect(),
            edited: r.edited,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

fn iso(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_default()
}

/// `data` of the `forms.response.*` events (docs/events.md): the form, and the response as
/// someone who sees the form's responses sees it; the submitter only when it shows them.
fn event_data(form: &Form, r: &FormResponse) -> Value {
    json!({
        "form": {"uuid": form.id.to_string(), "name": form.name},
        "response": {
            "uuid": r.id.to_string(),
            "current_state": r.current_state,
            "content": content_json(&r.content),
            "submission_source": r.source.as_str(),
            "submission_label": r.label,
            "edited": r.edited,
            "created_at": iso(r.created_at),
            "updated_at": iso(r.updated_at),
            "user": r.reveals_submitter().then(|| json!({
                "uuid": r.submitter.id.to_string(),
                "full_name": r.submitter.full_name,
                "email": r.submitter.email,
            })),
            "guest_user": r.guest.as_ref().map(|g| json!({"full_name": g.full_name, "email": g.email})),
        },
    })
}

/// Answers as the JSON object clients send and read.
pub fn content_json(content: &BTreeMap<Uuid, Value>) -> Value {
    Value::Object(
        content
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn event(form: &Form, kind: EventType, at: OffsetDateTime, data: Value) -> Event {
    Event::new(form.org_id, kind, Some(form.id), at, data)
}

/// The guest's name and e-mail, trimmed; blanks are absent.
fn guest_user(g: &GuestUser) -> Result<GuestUser, Error> {
    let mut errors = FieldErrors::new();
    let name = g
        .full_name
        .as_deref()
        .map(|n| text::optional_name("guest_user.full_name", n, MAX_GUEST_NAME))
        .transpose();
    errors.note(&name);
    let email = g
        .email
        .as_deref()
        .map(|e| {
            let e = e.trim().to_lowercase();
            let shaped = e.len() <= MAX_GUEST_EMAIL
                && !e.chars().any(|c| c.is_whitespace() || c.is_control())
                && e.split_once('@').is_some_and(|(local, domain)| {
                    !local.is_empty() && domain.contains('.') && !domain.starts_with('.')
                });
            if e.is_empty() || shaped {
                Ok(e)
            } else {
                Err(Error::invalid_field(
                    "guest_user.email",
                    "Enter a valid e-mail address.",
                ))
            }
        })
        .transpose();
    errors.note(&email);
    errors.finish()?;
    let some = |s: Option<String>| s.filter(|s| !s.is_empty());
    Ok(GuestUser {
        full_name: some(name.unwrap_or_default()),
        email: some(email.unwrap_or_default()),
    })
}

/// A transition note: trimmed, blank is none, at most 1,000 characters, line breaks allowed
/// but no other control or bidirectional-override character.
fn note(raw: Option<&str>) -> Result<Option<String>, Error> {
    let Some(n) = raw.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let bad = n.chars().any(|c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    });
    if bad {
        return Err(Error::invalid_field(
            "note",
            "This field may not contain control or bidirectional override characters.",
        ));
    }
    if n.chars().count() > MAX_NOTE {
        return Err(Error::invalid_field(
            "note",
            format!("Ensure this field has no more than {MAX_NOTE} characters."),
        ));
    }
    Ok(Some(n.to_owned()))
}

/// The free-text provenance: trimmed, blank is none, at most 512 characters.
fn label(raw: Option<&str>) -> Result<Option<String>, Error> {
    let Some(l) = raw.map(str::trim).filter(|l| !l.is_empty()) else {
        return Ok(None);
    };
    if l.chars().any(char::is_control) || l.chars().count() > MAX_SUBMISSION_LABEL {
        return Err(Error::invalid_field(
            "submission_source",
            format!("Use at most {MAX_SUBMISSION_LABEL} characters on one line."),
        ));
    }
    Ok(Some(l.to_owned()))
}

/// Answers keyed by text, as uuids: a key that is not one is refused by name.
fn keyed(content: &[(String, Value)]) -> Result<Vec<(Uuid, Value)>, Error> {
    let mut errors = FieldErrors::new();
    let mut out = Vec::with_capacity(content.len());
    for (key, value) in content {
        match Uuid::parse_str(key.trim()) {
            Ok(id) => out.push((id, value.clone())),
            Err(_) => errors.note::<()>(&Err(Error::invalid_field(
                &format!("content.{key}"),
                "Not a question of this form.",
            ))),
        }
    }
    errors.finish()?;
    Ok(out)
}

fn response_not_found() -> Error {
    Error::not_found()
}

impl FormService {
    /// The form and one of its responses, with what the actor may do; 404 when the actor may
    /// not read that response (not theirs, and they do not see the form's responses).
    async fn readable(
        &self,
        actor: &User,
        form_id: Uuid,
        id: Uuid,
    ) -> Result<(Form, Viewer, FormAccess, FormResponse), Error> {
        let form = self.forms.get_form(actor.org_id, form_id).await?;
        let response = self.forms.get_response(actor.org_id, form_id, id).await?;
        let viewer = self.viewer(actor, std::iter::once(&form)).await?;
        let access = FormAccess::of(&form, &viewer);
        if !access.can_read(&response, &viewer) {
            return Err(response_not_found());
        }
        Ok((form, viewer, access, response))
    }

    /// Submits a response. The source follows who sends it: a guest's response is `public`
    /// (the form must allow public responses: 403 `guest_not_allowed`; with
    /// `require_email_and_name` a `guest_user` with both: 400 `guest_user_required`);
    /// `automation` is an integration's; `anonymous` (forced on anonymous forms) hides the
    /// member. Answers are checked against the form's questions, every required question on
    /// the path answered. An archived form is 404, a paused one 400
    /// `form_not_accepting_responses`. Writes `forms.response.created` with it.
    pub async fn submit_response(
        &self,
        actor: &User,
        form_id: Uuid,
        submission: Submission,
    ) -> Result<VisibleResponse, Error> {
        let label = label(submission.label.as_deref())?;
        let guest = submission.guest.as_ref().map(guest_user).transpose()?;
        let given = keyed(&submission.content)?;
        for _ in 0..ATTEMPTS {
            let form = self.forms.get_form(actor.org_id, form_id).await?;
            if form.is_archived {
                return Err(Error::not_found());
            }
            if !form.settings.is_active {
                return Err(Error::new(
                    ErrorCode::FormNotAcceptingResponses,
                    "This form is paused and takes no responses.",
                ));
            }
            let source = source_of(actor, &form, &submission, guest.as_ref())?;
            let answers =
                form.questions
                    .answers_named(AnswerFields::Map("content"), &given, true)?;
            let now = self.clock.now();
            let response = FormResponse {
                id: Uuid::now_v7(),
                org_id: actor.org_id,
                form_id,
                submitter: Person {
                    id: actor.id,
                    full_name: actor.full_name(),
                    email: actor.email.clone(),
                },
                source,
                label: label.clone(),
                guest: guest.clone(),
                content: answers.into_iter().map(|a| (a.uuid, a.response)).collect(),
                current_state: form
                    .settings
                    .workflow
                    .as_ref()
                    .map(|w| w.initial().key.clone()),
                history: Vec::new(),
                edited: false,
                version: 1,
                created_at: now,
                updated_at: now,
            };
            let created = event(
                &form,
                EventType::FormsResponseCreated,
                now,
                event_data(&form, &response),
            );
            match self
                .forms
                .insert_response(&response, form.version, &created)
                .await?
            {
                Written::Done => {
                    let viewer = self.viewer(actor, std::iter::once(&form)).await?;
                    let access = FormAccess::of(&form, &viewer);
                    return Ok(VisibleResponse::of(&form, access, &viewer, response));
                }
                _ => continue,
            }
        }
        Err(still_changing())
    }

    /// One response: the actor's own, or anyone's when they see the form's responses (404
    /// otherwise).
    pub async fn get_response(
        &self,
        actor: &User,
        form_id: Uuid,
        id: Uuid,
    ) -> Result<VisibleResponse, Error> {
        let (form, viewer, access, response) = self.readable(actor, form_id, id).await?;
        Ok(VisibleResponse::of(&form, access, &viewer, response))
    }

    /// A form's responses: the actor's own by default. Everyone's (`all`) and a person's
    /// (`user`, someone else) need to see the form's responses (403
    /// `form_response_view_all_forbidden`), and so do `submitters` naming others (403
    /// `user_can_not_see_form_responses`). `state` and `flow_status` need a workflow, and
    /// `state` one of its keys (400 `invalid_workflow_state`).
    pub async fn list_responses(
        &self,
        actor: &User,
        form_id: Uuid,
        filter: &ResponseListFilter,
        page: PageRequest,
    ) -> Result<Page<VisibleResponse>, Error> {
        let form = self.forms.get_form(actor.org_id, form_id).await?;
        let viewer = self.viewer(actor, std::iter::once(&form)).await?;
        let access = FormAccess::of(&form, &viewer);
        let others = |u: &UserId| *u != actor.id;
        if !access.can_see_responses {
            if filter.all || filter.user.as_ref().is_some_and(others) {
                return Err(Error::new(
                    ErrorCode::FormResponseViewAllForbidden,
                    "You may only list your own responses to this form.",
                ));
            }
            if filter.submitters.iter().any(others) {
                return Err(Error::new(
                    ErrorCode::UserCanNotSeeFormResponses,
                    "You may not see other people's responses to this form.",
                ));
            }
        }
        let submitters = match (filter.user, filter.submitters.is_empty()) {
            (None, true) => None,
            (None, false) => Some(filter.submitters.clone()),
            (Some(u), true) => Some(vec![u]),
            (Some(u), false) => Some(
                filter
                    .submitters
                    .iter()
                    .copied()
                    .filter(|s| *s == u)
                    .collect(),
            ),
        };
        let states = self.states_filter(&form, filter)?;
        let (from, until) = narrowest(
            day_span(
                filter.date_from,
                filter.date_to,
                &actor.timezone,
                "date_from",
            )?,
            day_span(
                filter.start_date,
                filter.end_date,
                &actor.timezone,
                "start_date",
            )?,
        );
        let selection = ResponseSelection {
            viewer: actor.id,
            own_only: !filter.all && submitters.is_none(),
            submitters,
            states,
            sources: filter.sources.clone(),
            search: filter.search.clone(),
            from,
            until,
            oldest_first: filter.order == ResponseOrder::Oldest || filter.ascending,
        };
        let page = self
            .forms
            .list_responses(actor.org_id, form_id, &selection, page)
            .await?;
        Ok(page.map(|r| VisibleResponse::of(&form, access, &viewer, r)))
    }

    /// The states `state` and `flow_status` allow, or `None` when neither is given.
    fn states_filter(
        &self,
        form: &Form,
        filter: &ResponseListFilter,
    ) -> Result<Option<Vec<String>>, Error> {
        if filter.state.is_none() && filter.flow_status.is_none() {
            return Ok(None);
        }
        let Some(workflow) = &form.settings.workflow else {
            return Err(Error::new(
                ErrorCode::InvalidWorkflowState,
                "This form has no workflow, so its responses have no state.",
            ));
        };
        let mut keys: Vec<String> = workflow.states().iter().map(|s| s.key.clone()).collect();
        if let Some(state) = &filter.state {
            if workflow.state(state).is_none() {
                return Err(Error::new(
                    ErrorCode::InvalidWorkflowState,
                    format!("`{state}` is not a state of this form's workflow."),
                )
                .with_extra("parameter", "state")
                .with_extra("allowed", keys));
            }
            keys.retain(|k| k == state);
        }
        if let Some(status) = filter.flow_status {
            let matching = workflow.keys_with(status);
            keys.retain(|k| matching.contains(k));
        }
        Ok(Some(keys))
    }

    /// Changes answers of a response: the given ones replace the stored ones (`null` clears
    /// one), and the result must be a complete response to the form's current questions
    /// (answers to removed questions are kept as they are). The submitter and the form's
    /// editors may (403 `form_response_edit_forbidden`). Marks it edited and writes
    /// `forms.response.updated` (`change: "content"`).
    pub async fn edit_response(
        &self,
        actor: &User,
        form_id: Uuid,
        id: Uuid,
        content: Vec<(String, Value)>,
    ) -> Result<VisibleResponse, Error> {
        let given = keyed(&content)?;
        for _ in 0..ATTEMPTS {
            let (form, viewer, access, response) = self.readable(actor, form_id, id).await?;
            if response.submitter.id != actor.id && !access.can_edit {
                return Err(Error::new(
                    ErrorCode::FormResponseEditForbidden,
                    "You may edit only your own responses to this form.",
                ));
            }
            let asked = |q: &Uuid| form.questions.questions.iter().any(|x| x.uuid == *q);
            let mut merged: BTreeMap<Uuid, Value> = response
                .content
                .iter()
                .filter(|(q, _)| asked(q))
                .map(|(q, v)| (*q, v.clone()))
                .collect();
            // Keys the set does not have stay in `given`, for `answers_named` to refuse.
            let mut unknown = Vec::new();
            for (q, v) in &given {
                if asked(q) {
                    merged.insert(*q, v.clone());
                } else {
                    unknown.push((*q, v.clone()));
                }
            }
            let pairs: Vec<(Uuid, Value)> = merged.into_iter().chain(unknown).collect();
            let answers =
                form.questions
                    .answers_named(AnswerFields::Map("content"), &pairs, true)?;
            let mut next = response.clone();
            next.content = response
                .content
                .iter()
                .filter(|(q, _)| !asked(q))
                .map(|(q, v)| (*q, v.clone()))
                .chain(answers.into_iter().map(|a| (a.uuid, a.response)))
                .collect();
            next.edited = true;
            next.updated_at = self.clock.now();
            let mut data = event_data(&form, &next);
            data["change"] = json!("content");
            let updated = event(
                &form,
                EventType::FormsResponseUpdated,
                next.updated_at,
                data,
            );
            match self
                .forms
                .update_response_content(&next, response.version, form.version, &updated)
                .await?
            {
                Written::Done => {
                    next.version = response.version + 1;
                    return Ok(VisibleResponse::of(&form, access, &viewer, next));
                }
                _ => continue,
            }
        }
        Err(still_changing())
    }

    /// Moves a response to the state `to`. The form needs a workflow (400
    /// `invalid_workflow_state`) and the actor must be one who changes its states (403
    /// `form_response_change_state_forbidden`; approvers on approval forms). The workflow
    /// decides (409 `final_state_locked`, `workflow_transition_not_allowed`); when someone
    /// moved the response since it was read, 409 `workflow_state_conflict`. The move is kept
    /// in the history with `note`; writes `forms.response.updated` (`change: "state"`).
    pub async fn transition_response(
        &self,
        actor: &User,
        form_id: Uuid,
        id: Uuid,
        to: &str,
        note_text: Option<&str>,
    ) -> Result<VisibleResponse, Error> {
        let note = note(note_text)?;
        let mut seen_state: Option<String> = None;
        for _ in 0..ATTEMPTS {
            let (form, viewer, access, response) = self.readable(actor, form_id, id).await?;
            let Some(workflow) = &form.settings.workflow else {
                return Err(Error::new(
                    ErrorCode::InvalidWorkflowState,
                    "This form has no workflow, so its responses have no state.",
                ));
            };
            if !access.can_change_states {
                return Err(Error::new(
                    ErrorCode::FormResponseChangeStateForbidden,
                    "You may not change the state of this form's responses.",
                ));
            }
            let current = response
                .current_state
                .clone()
                .unwrap_or_else(|| workflow.initial().key.clone());
            // A retry (the form changed) still moves from the state first seen.
            if seen_state.get_or_insert_with(|| current.clone()) != &current {
                return Err(moved_meanwhile());
            }
            let target = workflow.check_transition(
                &current,
                to.trim(),
                form.settings.allow_reopen_from_final_state,
            )?;
            let now = self.clock.now();
            let change = StateChange {
                from_state: current.clone(),
                to_state: target.key.clone(),
                actor: Some(Person {
                    id: actor.id,
                    full_name: actor.full_name(),
                    email: actor.email.clone(),
                }),
                note: note.clone(),
                at: now,
            };
            let mut next = response.clone();
            next.current_state = Some(target.key.clone());
            next.updated_at = now;
            next.history.push(change.clone());
            let mut data = event_data(&form, &next);
            data["change"] = json!("state");
            data["from_state"] = json!(current);
            data["to_state"] = json!(target.key);
            let updated = event(&form, EventType::FormsResponseUpdated, now, data);
            match self
                .forms
                .transition_response(actor.org_id, form_id, form.version, id, &change, &updated)
                .await?
            {
                Written::Done => {
                    next.version = response.version + 1;
                    return Ok(VisibleResponse::of(&form, access, &viewer, next));
                }
                Written::ResponseChanged => return Err(moved_meanwhile()),
                _ => continue,
            }
        }
        Err(still_changing())
    }

    /// Deletes a response: the submitter, the form's owner and admins may (403
    /// `form_response_delete_forbidden`). Writes `forms.response.deleted`.
    pub async fn delete_response(
        &self,
        actor: &User,
        form_id: Uuid,
        id: Uuid,
    ) -> Result<(), Error> {
        let (form, _, access, response) = self.readable(actor, form_id, id).await?;
        if response.submitter.id != actor.id && !access.is_manager {
            return Err(Error::new(
                ErrorCode::FormResponseDeleteForbidden,
                "Only the submitter, the form's owner and admins may delete a response.",
            ));
        }
        let data = json!({
            "form": {"uuid": form.id.to_string(), "name": form.name},
            "response": {"uuid": response.id.to_string()},
        });
        let deleted = event(
            &form,
            EventType::FormsResponseDeleted,
            self.clock.now(),
            data,
        );
        Ok(self
            .forms
            .delete_response(actor.org_id, form_id, id, &deleted)
            .await?)
    }
}

fn moved_meanwhile() -> Error {
    Error::new(
        ErrorCode::WorkflowStateConflict,
        "Someone else moved this response first; read it again.",
    )
}

/// The intersection of two spans.
fn narrowest(
    a: (Option<OffsetDateTime>, Option<OffsetDateTime>),
    b: (Option<OffsetDateTime>, Option<OffsetDateTime>),
) -> (Option<OffsetDateTime>, Option<OffsetDateTime>) {
    let later = |x: Option<OffsetDateTime>, y: Option<OffsetDateTime>| x.max(y);
    let earlier = |x: Option<OffsetDateTime>, y: Option<OffsetDateTime>| match (x, y) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    (later(a.0, b.0), earlier(a.1, b.1))
}

/// Where a submission comes from, with the rules each source has.
fn source_of(
    actor: &User,
    form: &Form,
    s: &Submission,
    guest: Option<&GuestUser>,
) -> Result<SubmissionSource, Error> {
    let settings = &form.settings;
    if actor.role == Role::Guest {
        if s.automation || s.anonymous {
            return Err(Error::invalid_field(
                if s.automation {
                    "automation"
                } else {
                    "anonymous"
                },
                "Guests respond in their own name (`guest_user`).",
            ));
        }
        if !settings.allow_public_responses {
            return Err(Error::new(
                ErrorCode::GuestNotAllowed,
                "This form does not take responses from guests.",
            ));
        }
        let complete = guest.is_some_and(|g| g.full_name.is_some() && g.email.is_some());
        if settings.require_email_and_name && !complete {
            return Err(Error::new(
                ErrorCode::GuestUserRequired,
                "This form needs the guest's name and e-mail: send `guest_user` with \
                 `full_name` and `email`.",
            ));
        }
        return Ok(SubmissionSource::Public);
    }
    if s.automation {
        if s.anonymous {
            return Err(Error::invalid_field(
                "anonymous",
                "An automation response cannot also be anonymous.",
            ));
        }
        return Ok(SubmissionSource::Automation);
    }
    if guest.is_some() {
        return Err(Error::invalid_field(
            "guest_user",
            "Only automation and guest responses carry a `guest_user`.",
        ));
    }
    Ok(if s.anonymous || settings.is_anonymous {
        SubmissionSource::Anonymous
    } else {
        SubmissionSource::Member
    })
}
