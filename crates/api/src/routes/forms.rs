//! `/v1/forms/`: forms (authoring, settings, permissions, workflow, questions), their owners,
//! and responses (submitting, reading, editing, deleting, moving them through the workflow).
//! Rules in `teamcomm_forms::forms::FormService`.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, delete, get, patch, post, put, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use teamcomm_forms::forms::workflow::MAX_STATE_LABEL;
use teamcomm_forms::forms::{
    AttachedChannel, Audience, AudienceInput, AudienceMode, FlowStatus, FormConfig, FormListFilter,
    FormOrder, FormScope, GuestUser, MAX_FORM_NAME, MAX_GUEST_NAME, MAX_NOTE, MAX_SUBMISSION_LABEL,
    Members, MembersInput, NewForm, Person, ResponseListFilter, ResponseOrder, StateInput,
    Submission, SubmissionSource, VisibleForm, VisibleResponse, WorkflowInput, WorkflowState,
    content_json,
};
use teamcomm_kernel::{Error, WireEnum};
use teamcomm_org::User;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{
    ChatCommand, JsonBody, LongText, Name, OneLine, OptionalName, Wire, nullable,
};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::{Day, Names, Search, UserIds, UserRef, UuidList, search};
use crate::routes::questions::{QuestionBody, QuestionPatchBody, QuestionView, ReorderBody};
use crate::state::AppState;
use crate::views::iso;

/// The wire-name fields of these routes (aliases, so the document derive sees plain types).
type AudienceModeName = Wire<AudienceMode>;
type FormScopeName = Wire<FormScope>;
type FormOrderName = Wire<FormOrder>;
type FlowStatusName = Wire<FlowStatus>;
type ResponseOrderName = Wire<ResponseOrder>;
type SourceNames = Names<SubmissionSource>;
type IncludeNames = Names<FormInclude>;

// ----------------------------------------------------------------------------------- views

/// A person a form or response names.
#[derive(Debug, Serialize, ToSchema)]
pub struct FormPersonView {
    pub uuid: String,
    pub full_name: String,
}

impl From<&Person> for FormPersonView {
    fn from(p: &Person) -> Self {
        FormPersonView {
            uuid: p.id.to_string(),
            full_name: p.full_name.clone(),
        }
    }
}

/// A workflow state.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkflowStateView {
    /// What `POST …/transition/` and `?state=` take.
    pub key: String,
    pub label: String,
    pub color: String,
    /// Position, from 0; responses start in the first state.
    pub order: u32,
    /// A response in a final state stays unless the form allows reopening.
    pub is_final: bool,
}

impl From<&WorkflowState> for WorkflowStateView {
    fn from(s: &WorkflowState) -> Self {
        WorkflowStateView {
            key: s.key.clone(),
            label: s.label.clone(),
            color: s.color.clone(),
            order: s.order,
            is_final: s.is_final,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WorkflowView {
    pub enabled: bool,
    pub states: Vec<WorkflowStateView>,
}

/// The workflow's states again (the vendor's older name).
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkflowConfigView {
    pub states: Vec<WorkflowStateView>,
}

/// Who may do one thing with the form besides its owner and the admins.
#[derive(Debug, Serialize, ToSchema)]
pub struct AudienceView {
    /// `everyone`, `owner_and_admins` or `restricted`.
    pub mode: &'static str,
    pub user_uuids: Vec<String>,
    pub team_uuids: Vec<String>,
}

impl From<&Audience> for AudienceView {
    fn from(a: &Audience) -> Self {
        let m = MembersView::from(&a.members);
        AudienceView {
            mode: a.mode.as_str(),
            user_uuids: m.user_uuids,
            team_uuids: m.team_uuids,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MembersView {
    pub user_uuids: Vec<String>,
    pub team_uuids: Vec<String>,
}

impl From<&Members> for MembersView {
    fn from(m: &Members) -> Self {
        MembersView {
            user_uuids: m.users.iter().map(ToString::to_string).collect(),
            team_uuids: m.teams.iter().map(ToString::to_string).collect(),
        }
    }
}

/// A report channel of the form; `name`, `platform` and `type` are empty when the organization
/// no longer has the channel.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttachedChannelView {
    pub id: String,
    pub name: String,
    pub platform: String,
    #[serde(rename = "type")]
    pub channel_type: String,
    pub reporting_enabled: bool,
}

impl From<&AttachedChannel> for AttachedChannelView {
    fn from(a: &AttachedChannel) -> Self {
        let c = a.channel.as_ref();
        AttachedChannelView {
            id: a.id.clone(),
            name: c.map(|c| c.name.clone()).unwrap_or_default(),
            platform: c.map(|c| c.platform.clone()).unwrap_or_default(),
            channel_type: c
                .map(|c| c.channel_type.as_str().to_owned())
                .unwrap_or_default(),
            reporting_enabled: true,
        }
    }
}

/// What the caller may do with the form.
#[derive(Debug, Serialize, ToSchema)]
pub struct FormPermissionsView {
    pub can_edit: bool,
    pub can_see_responses: bool,
    pub can_change_states: bool,
}

/// A form. `id` repeats `uuid`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FormView {
    pub id: String,
    pub uuid: String,
    pub name: String,
    /// Its creator.
    pub owner: FormPersonView,
    pub is_active: bool,
    pub is_archived: bool,
    pub is_anonymous: bool,
    pub allow_public_responses: bool,
    pub require_email_and_name: bool,
    pub brand_with_logo: bool,
    pub allow_reopen_from_final_state: bool,
    pub use_for_approval: bool,
    pub workflow_enabled: bool,
    pub workflow: WorkflowView,
    pub workflow_config: WorkflowConfigView,
    pub who_can_edit: AudienceView,
    pub who_can_see_responses: AudienceView,
    pub who_can_change_states: AudienceView,
    /// Who moves responses of an approval form (owner and admins when empty).
    pub approvers: MembersView,
    pub command: Option<String>,
    pub command_enabled: bool,
    /// `{TEAMCOMM_APP_URL}/forms/{uuid}/`.
    pub public_url: String,
    pub report_channels: Vec<AttachedChannelView>,
    /// The questions, in order (lists show them with `include=questions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub questions: Option<Vec<QuestionView>>,
    /// Bumped by every change of the questions.
    pub questions_version: i32,
    pub response_count: u64,
    pub permissions: FormPermissionsView,
    pub created_at: String,
    pub updated_at: String,
}

impl FormView {
    fn new(seen: &VisibleForm, with_questions: bool, app_url: &str) -> Self {
        let f = &seen.form;
        let s = &f.settings;
        let states = || -> Vec<WorkflowStateView> {
            s.workflow
                .iter()
                .flat_map(|w| w.states())
                .map(WorkflowStateView::from)
                .collect()
        };
        FormView {
            id: f.id.to_string(),
            uuid: f.id.to_string(),
            name: f.name.clone(),
            owner: FormPersonView::from(&f.owner),
            is_active: s.is_active,
            is_archived: f.is_archived,
            is_anonymous: s.is_anonymous,
            allow_public_responses: s.allow_public_responses,
            require_email_and_name: s.require_email_and_name,
            brand_with_logo: s.brand_with_logo,
            allow_reopen_from_final_state: s.allow_reopen_from_final_state,
            use_for_approval: s.use_for_approval,
            workflow_enabled: s.workflow.is_some(),
            workflow: WorkflowView {
                enabled: s.workflow.is_some(),
                states: states(),
            },
            workflow_config: WorkflowConfigView { states: states() },
            who_can_edit: AudienceView::from(&s.who_can_edit),
            who_can_see_responses: AudienceView::from(&s.who_can_see_responses),
            who_can_change_states: AudienceView::from(&s.who_can_change_states),
            approvers: MembersView::from(&s.approvers),
            command: s.command.clone(),
            command_enabled: s.command_enabled,
            public_url: format!("{}/forms/{}/", app_url.trim_end_matches('/'), f.id),
            report_channels: seen
                .channels
                .iter()
                .map(AttachedChannelView::from)
                .collect(),
            questions: with_questions.then(|| QuestionView::list(&f.questions.questions)),
            questions_version: f.questions.version,
            response_count: f.response_count,
            permissions: FormPermissionsView {
                can_edit: seen.access.can_edit,
                can_see_responses: seen.access.can_see_responses,
                can_change_states: seen.access.can_change_states,
            },
            created_at: iso(f.created_at),
            updated_at: iso(f.updated_at),
        }
    }
}

/// Where a response may go next.
#[derive(Debug, Serialize, ToSchema)]
pub struct TransitionView {
    pub to_state: String,
    pub label: String,
    pub color: String,
    pub is_final: bool,
}

/// One move through the workflow. Who made it is never given by id: `is_self` tells the
/// caller their own moves, `actor_name` names the mover to those who see the form's
/// responses (null for others).
#[derive(Debug, Serialize, ToSchema)]
pub struct StateChangeView {
    pub from_state: String,
    pub to_state: String,
    pub at: String,
    pub note: Option<String>,
    pub is_self: bool,
    pub actor_name: Option<String>,
}

/// The name and e-mail a guest or an integration gave.
#[derive(Debug, Serialize, ToSchema)]
pub struct GuestUserView {
    pub full_name: Option<String>,
    pub email: Option<String>,
}

/// A response to a form. `id` repeats `uuid`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FormResponseView {
    pub id: String,
    pub uuid: String,
    pub form_uuid: String,
    /// The workflow state key; null when the form has no workflow.
    pub current_state: Option<String>,
    /// `pending`, `approved` or `denied`, when the state has one.
    pub flow_status: Option<&'static str>,
    pub allowed_transitions: Vec<TransitionView>,
    /// The caller may move it now.
    pub can_change_state: bool,
    /// Moves, oldest first.
    pub state_history: Vec<StateChangeView>,
    /// Answers by question uuid.
    #[schema(value_type = Object)]
    pub content: Value,
    pub edited: bool,
    /// `member`, `anonymous`, `automation` or `public`.
    pub submission_source: &'static str,
    /// The free-text provenance sent as `submission_source` (`workflow:release`).
    pub submission_label: Option<String>,
    /// Who sent it: member responses only (anonymous, automation and guest responses never
    /// show their sender).
    pub user: Option<FormPersonView>,
    pub guest_user: Option<GuestUserView>,
    /// The caller sent it.
    pub is_own: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&VisibleResponse> for FormResponseView {
    fn from(r: &VisibleResponse) -> Self {
        FormResponseView {
            id: r.id.to_string(),
            uuid: r.id.to_string(),
            form_uuid: r.form_id.to_string(),
            current_state: r.current_state.clone(),
            flow_status: r.flow_status.map(FlowStatus::as_str),
            allowed_transitions: r
                .allowed_transitions
                .iter()
                .map(|s| TransitionView {
                    to_state: s.key.clone(),
                    label: s.label.clone(),
                    color: s.color.clone(),
                    is_final: s.is_final,
                })
                .collect(),
            can_change_state: r.can_change_state,
            state_history: r
                .history
                .iter()
                .map(|c| StateChangeView {
                    from_state: c.from_state.clone(),
                    to_state: c.to_state.clone(),
                    at: iso(c.at),
                    note: c.note.clone(),
                    is_self: c.is_self,
                    actor_name: c.actor_name.clone(),
                })
                .collect(),
            content: content_json(&r.content),
            edited: r.edited,
            submission_source: r.source.as_str(),
            submission_label: r.label.clone(),
            user: r.user.as_ref().map(FormPersonView::from),
            guest_user: r.guest.as_ref().map(|g| GuestUserView {
                full_name: g.full_name.clone(),
                email: g.email.clone(),
            }),
            is_own: r.is_own,
            created_at: iso(r.created_at),
            updated_at: iso(r.updated_at),
        }
    }
}

/// A person who owns at least one live form. `email` for admins only.
#[derive(Debug, Serialize, ToSchema)]
pub struct FormOwnerView {
    pub uuid: String,
    pub full_name: String,
    /// `admin`, `member` or `guest`.
    pub role: &'static str,
    pub image: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

impl FormOwnerView {
    fn new(u: &User, with_email: bool) -> Self {
        FormOwnerView {
            uuid: u.id.to_string(),
            full_name: u.full_name(),
            role: u.role.as_str(),
            image: u.image.clone(),
            email: with_email.then(|| u.email.clone()),
        }
    }
}

/// The questions of a form, in order.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuestionsView {
    pub questions: Vec<QuestionView>,
}

// ----------------------------------------------------------------------------------- bodies

/// A workflow state as written (the server derives `key` and `order`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StateBody {
    #[schema(inline)]
    label: Name<{ MAX_STATE_LABEL }>,
    /// `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`.
    #[schema(
        pattern = "^#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$",
        example = "#3498db"
    )]
    color: String,
    /// When no state says, the last one is final.
    is_final: Option<bool>,
}

/// `{"enabled": false}` turns the workflow off; `{"enabled": true, "states": [...]}` sets its
/// states, in order.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowBody {
    enabled: bool,
    #[schema(max_items = 20)]
    states: Option<Vec<StateBody>>,
}

impl WorkflowBody {
    fn input(self) -> Result<WorkflowInput, Error> {
        match (self.enabled, self.states) {
            (false, None) => Ok(WorkflowInput::Disabled),
            (false, Some(_)) => Err(Error::invalid_field(
                "workflow.states",
                "Send states only with `enabled: true`.",
            )),
            (true, None) => Err(Error::invalid_field(
                "workflow.states",
                "An enabled workflow needs its states.",
            )),
            (true, Some(states)) => Ok(WorkflowInput::Enabled(
                states
                    .into_iter()
                    .map(|s| StateInput {
                        label: s.label.0,
                        color: s.color,
                        is_final: s.is_final,
                    })
                    .collect(),
            )),
        }
    }
}

/// Who may do one thing with the form besides its owner and the admins: `everyone`,
/// `owner_and_admins`, or `restricted` to the people and teams named (at least one).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AudienceBody {
    #[schema(inline)]
    mode: AudienceModeName,
    #[schema(max_items = 50)]
    user_uuids: Option<Vec<Uuid>>,
    #[schema(max_items = 50)]
    team_uuids: Option<Vec<Uuid>>,
}

impl From<AudienceBody> for AudienceInput {
    fn from(b: AudienceBody) -> Self {
        AudienceInput {
            mode: b.mode.0,
            user_uuids: b.user_uuids.unwrap_or_default(),
            team_uuids: b.team_uuids.unwrap_or_default(),
        }
    }
}

/// People and teams of the organization (the whole list: it replaces the one stored).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MembersBody {
    #[schema(max_items = 50)]
    user_uuids: Option<Vec<Uuid>>,
    #[schema(max_items = 50)]
    team_uuids: Option<Vec<Uuid>>,
}

impl From<MembersBody> for MembersInput {
    fn from(b: MembersBody) -> Self {
        MembersInput {
            user_uuids: b.user_uuids.unwrap_or_default(),
            team_uuids: b.team_uuids.unwrap_or_default(),
        }
    }
}

/// Declares a body struct with the form settings both `POST /v1/forms/create/` and
/// `PATCH /v1/forms/{uuid}/config/` take, after the struct's own fields, and `parts`: its own
/// fields, and the settings as the domain's [`FormConfig`] (without a name).
macro_rules! form_settings_body {
    (
        $(#[$($meta:tt)*])*
        pub struct $body:ident { $( $(#[$($fm:tt)*])* $f:ident: [$($t:tt)*], )* }
    ) => {
        $(#[$($meta)*])*
        #[derive(Debug, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $body {
            // Types as tokens, not `ty` fragments: the schema derive must see their names.
            $( $(#[$($fm)*])* $f: $($t)*, )*
            /// Chat channel ids of the organization (see `GET /v1/report-channels/`), at most
            /// 3 once repeats are dropped: `too_many_report_channels`,
            /// `report_channel_not_found` (`extra.ids`).
            #[schema(max_items = 50)]
            report_channels: Option<Vec<String>>,
            /// An inactive form takes no responses (`form_not_accepting_responses`).
            is_active: Option<bool>,
            /// Member responses hide who sent them.
            is_anonymous: Option<bool>,
            /// Guests (and public-link visitors) may respond.
            allow_public_responses: Option<bool>,
            /// Guest responses must carry `guest_user` with a name and an e-mail.
            require_email_and_name: Option<bool>,
            brand_with_logo: Option<bool>,
            allow_reopen_from_final_state: Option<bool>,
            /// Responses are requests the approvers move through the workflow (the approval
            /// workflow, Pending then Approved or Denied, unless the form has its own).
            use_for_approval: Option<bool>,
            workflow: Option<WorkflowBody>,
            who_can_edit: Option<AudienceBody>,
            who_can_see_responses: Option<AudienceBody>,
            who_can_change_states: Option<AudienceBody>,
            approvers: Option<MembersBody>,
            /// The chat shortcut: 1 to 31 of `[a-z0-9_-]`, starting with a letter or digit;
            /// unique among the organization's live forms while enabled
            /// (`form_command_taken`); null removes it.
            #[serde(default, deserialize_with = "nullable")]
            #[schema(value_type = Option<ChatCommand>)]
            command: Option<Option<ChatCommand>>,
            /// Defaults to true when a command is set.
            command_enabled: Option<bool>,
        }

        impl $body {
            fn parts(self) -> Result<(($($($t)*,)*), FormConfig), Error> {
                let workflow = self.workflow.map(WorkflowBody::input).transpose()?;
                let config = FormConfig {
                    name: None,
                    report_channels: self.report_channels,
                    is_active: self.is_active,
                    is_anonymous: self.is_anonymous,
                    allow_public_responses: self.allow_public_responses,
                    require_email_and_name: self.require_email_and_name,
                    brand_with_logo: self.brand_with_logo,
                    allow_reopen_from_final_state: self.allow_reopen_from_final_state,
                    use_for_approval: self.use_for_approval,
                    workflow,
                    who_can_edit: self.who_can_edit.map(Into::into),
                    who_can_see_responses: self.who_can_see_responses.map(Into::into),
                    who_can_change_states: self.who_can_change_states.map(Into::into),
                    approvers: self.approvers.map(Into::into),
                    command: self.command.map(|c| c.map(|c| c.0)),
                    command_enabled: self.command_enabled,
                };
                Ok((($(self.$f,)*), config))
            }
        }
    };
}

form_settings_body! {
    /// Body of `POST /v1/forms/create/`: a name (3 to 200 characters), the first questions
    /// and any settings.
    pub struct CreateFormBody {
        // (No doc comment: on a required inline field the document derive would wrap it.)
        #[schema(inline)]
        name: [Name<{ MAX_FORM_NAME }>],
        /// At least one (`questions_required`), at most 50.
        #[schema(max_items = 50)]
        questions: [Option<Vec<QuestionBody>>],
        /// Derive each missing `short_question` from its question.
        generate_short_question: [Option<bool>],
    }
}

impl CreateFormBody {
    fn new_form(self) -> Result<NewForm, Error> {
        let ((name, questions, generate), mut config) = self.parts()?;
        config.name = Some(name.0);
        Ok(NewForm {
            config,
            questions: questions.into_iter().flatten().map(Into::into).collect(),
            generate_short_question: generate.unwrap_or(false),
        })
    }
}

form_settings_body! {
    /// Body of `PATCH /v1/forms/{uuid}/config/`: the settings to change.
    pub struct FormConfigBody {
        /// 3 to 200 characters.
        #[schema(inline)]
        name: [Option<Name<{ MAX_FORM_NAME }>>],
    }
}

impl FormConfigBody {
    fn config(self) -> Result<FormConfig, Error> {
        let ((name,), mut config) = self.parts()?;
        config.name = name.map(|n| n.0);
        Ok(config)
    }
}

/// The name and e-mail of the guest or integration a response is from.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GuestUserBody {
    full_name: Option<OptionalName<{ MAX_GUEST_NAME }>>,
    #[schema(max_length = 254)]
    email: Option<String>,
}

/// Body of `POST /v1/forms/{uuid}/responses/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitResponseBody {
    /// Answers by question uuid; every required question on the path must be answered.
    #[schema(value_type = Object)]
    content: BTreeMap<String, Value>,
    /// Sent by an integration: no submitter shown.
    automation: Option<bool>,
    /// Hide who sent it (always so on anonymous forms).
    anonymous: Option<bool>,
    /// Who the response is from (automation and guest responses).
    guest_user: Option<GuestUserBody>,
    /// Free-text provenance (`workflow:release`), one line of at most 512 characters; shown as
    /// `submission_label`.
    submission_source: Option<OneLine<{ MAX_SUBMISSION_LABEL }>>,
}

impl From<SubmitResponseBody> for Submission {
    fn from(b: SubmitResponseBody) -> Self {
        Submission {
            content: b.content.into_iter().collect(),
            automation: b.automation.unwrap_or(false),
            anonymous: b.anonymous.unwrap_or(false),
            guest: b.guest_user.map(|g| GuestUser {
                full_name: g.full_name.map(|n| n.0),
                email: g.email,
            }),
            label: b.submission_source.map(|l| l.0),
        }
    }
}

/// Body of `PATCH /v1/forms/{uuid}/responses/{response}/`: answers to change (`null` clears
/// one); the others stay.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditResponseBody {
    #[schema(value_type = Object)]
    content: BTreeMap<String, Value>,
}

/// Body of `POST /v1/forms/{uuid}/responses/{response}/transition/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TransitionBody {
    /// A state key of the form's workflow.
    to_state: String,
    /// For the history, at most 1,000 characters.
    note: Option<LongText<{ MAX_NOTE }>>,
}

// ----------------------------------------------------------------------------------- queries

/// What `include=` may add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormInclude {
    Questions,
}

impl WireEnum for FormInclude {
    const NAME: &'static str = "FormInclude";
    const ALL: &'static [Self] = &[FormInclude::Questions];

    fn as_str(self) -> &'static str {
        match self {
            FormInclude::Questions => "questions",
        }
    }
}

/// Filters of `GET /v1/forms/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormListQuery {
    /// `questions` adds each form's questions.
    #[param(inline)]
    include: Option<IncludeNames>,
    /// Archived forms too.
    include_archived: Option<bool>,
    /// One owner (the same as `owner_user_ids` with one uuid).
    #[param(inline)]
    owner: Option<UserRef>,
    /// Forms owned by any of these people.
    #[param(inline)]
    owner_user_ids: Option<UserIds>,
    /// `all`, `me` (owned by the caller), `public`, `approval`, `workflow` or `archived`.
    #[param(inline)]
    filter: Option<FormScopeName>,
    /// `alphabetical`, `recent` (default) or `total` (responses).
    #[param(inline)]
    order: Option<FormOrderName>,
    /// Ascending; descending by default.
    is_ascend: Option<bool>,
    /// Name fragment, at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
    /// Created on or after this day (the caller's wall clock).
    #[param(inline)]
    start_date: Option<Day>,
    /// Created on or before this day (`invalid_date_range` before `start_date`).
    #[param(inline)]
    end_date: Option<Day>,
    /// Forms carrying any of these labels.
    #[param(inline)]
    labels: Option<UuidList>,
    /// Only the forms the caller starred (true) or did not (false).
    featured: Option<bool>,
    /// The caller's starred forms first.
    prioritize_featured: Option<bool>,
}

impl FormListQuery {
    fn filter(&self) -> FormListFilter {
        let mut owners: Vec<_> = self
            .owner_user_ids
            .as_ref()
            .map(|o| o.0.clone())
            .unwrap_or_default();
        owners.extend(self.owner.map(|o| teamcomm_kernel::UserId(o.0)));
        FormListFilter {
            include_archived: self.include_archived.unwrap_or(false),
            owners,
            scope: self.filter.map_or(FormScope::All, |f| f.0),
            order: self.order.map_or(FormOrder::Recent, |o| o.0),
            ascending: self.is_ascend.unwrap_or(false),
            search: search(self.search.clone()),
            start_date: self.start_date.map(|d| d.0),
            end_date: self.end_date.map(|d| d.0),
            labels: self
                .labels
                .as_ref()
                .map(|l| l.0.clone())
                .unwrap_or_default(),
            featured: self.featured,
            prioritize_featured: self.prioritize_featured.unwrap_or(false),
        }
    }

    fn questions(&self) -> bool {
        self.include
            .as_ref()
            .is_some_and(|i| i.0.contains(&FormInclude::Questions))
    }
}

/// Filters of `GET /v1/forms/form-owners/` (paged with `limit`/`offset`).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormOwnersQuery {
    /// Fragment of the name or e-mail, at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
}

/// Filters of `GET /v1/forms/{uuid}/responses/`. Without `all`, `user` or
/// `submitter_user_ids`, the caller's own responses.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResponseListQuery {
    /// Everyone's responses (403 `form_response_view_all_forbidden` unless the caller sees
    /// the form's responses).
    all: Option<bool>,
    /// One person's responses (others': as `all`).
    #[param(inline)]
    user: Option<UserRef>,
    /// Responses of any of these people (others': 403 `user_can_not_see_form_responses`).
    #[param(inline)]
    submitter_user_ids: Option<UserIds>,
    /// A state key of the form's workflow (`invalid_workflow_state` otherwise, or without a
    /// workflow).
    #[param(max_length = 100)]
    state: Option<String>,
    /// `pending` (not final), `approved` or `denied`.
    #[param(inline)]
    flow_status: Option<FlowStatusName>,
    /// Any of `member`, `anonymous`, `automation`, `public`.
    #[param(inline)]
    submission_sources: Option<SourceNames>,
    /// `recent` (default) or `oldest`.
    #[param(inline)]
    order: Option<ResponseOrderName>,
    /// Oldest first (as `order=oldest`).
    is_ascend: Option<bool>,
    /// Sent on or after this day (the caller's wall clock).
    #[param(inline)]
    date_from: Option<Day>,
    /// Sent on or before this day.
    #[param(inline)]
    date_to: Option<Day>,
    /// As `date_from`.
    #[param(inline)]
    start_date: Option<Day>,
    /// As `date_to`.
    #[param(inline)]
    end_date: Option<Day>,
    /// Fragment of the answers, of a guest's name or e-mail, or of a member submitter's name
    /// or e-mail; at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
}

impl From<&ResponseListQuery> for ResponseListFilter {
    fn from(q: &ResponseListQuery) -> Self {
        let day = |d: Option<Day>| d.map(|d| d.0);
        ResponseListFilter {
            all: q.all.unwrap_or(false),
            user: q.user.map(|u| teamcomm_kernel::UserId(u.0)),
            submitters: q
                .submitter_user_ids
                .as_ref()
                .map(|s| s.0.clone())
                .unwrap_or_default(),
            state: q.state.as_ref().map(|s| s.trim().to_owned()),
            flow_status: q.flow_status.map(|f| f.0),
            sources: q
                .submission_sources
                .as_ref()
                .map(|s| s.0.clone())
                .unwrap_or_default(),
            order: q.order.map_or(ResponseOrder::Recent, |o| o.0),
            ascending: q.is_ascend.unwrap_or(false),
            date_from: day(q.date_from),
            date_to: day(q.date_to),
            start_date: day(q.start_date),
            end_date: day(q.end_date),
            search: search(q.search.clone()),
        }
    }
}

// ----------------------------------------------------------------------------------- handlers

fn form_view(state: &AppState, seen: &VisibleForm) -> FormView {
    FormView::new(seen, true, &state.settings.app_url)
}

#[utoipa::path(
    tag = "forms",
    params(FormListQuery, PageParams),
    responses((status = 200, description = "Every form of the organization (live ones unless asked)", body = ListEnvelope<FormView>), (status = 400, body = ErrorBody))
)]
#[get("/v1/forms/")]
pub async fn list_forms(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<FormListQuery>,
) -> ApiResult<HttpResponse> {
    let page = state
        .forms
        .list_forms(caller.user(), &q.filters.filter(), q.paging.request())
        .await?;
    let with_questions = q.filters.questions();
    let app_url = &state.settings.app_url;
    Ok(HttpResponse::Ok()
        .json(q.envelope(page.map(|f| FormView::new(&f, with_questions, app_url)))))
}

#[utoipa::path(
    tag = "forms",
    params(FormOwnersQuery, PageParams),
    responses((status = 200, description = "People who own at least one live form, by name", body = ListEnvelope<FormOwnerView>), (status = 400, body = ErrorBody))
)]
#[get("/v1/forms/form-owners/")]
pub async fn list_form_owners(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<FormOwnersQuery>,
) -> ApiResult<HttpResponse> {
    let page = state
        .forms
        .list_form_owners(
            caller.user(),
            search(q.filters.search.clone()).as_deref(),
            q.paging.request(),
        )
        .await?;
    let with_email = caller.user().role.is_admin();
    Ok(HttpResponse::Ok().json(q.envelope(page.map(|u| FormOwnerView::new(&u, with_email)))))
}

#[utoipa::path(
    tag = "forms",
    request_body = CreateFormBody,
    responses(
        (status = 201, body = FormView),
        (status = 400, description = "`questions_required`, `short_question_required`, `report_channel_not_found`, `too_many_report_channels`, `params_validation_error`", body = ErrorBody),
        (status = 403, description = "`guest_not_allowed`", body = ErrorBody),
        (status = 409, description = "`form_command_taken`", body = ErrorBody),
    )
)]
#[post("/v1/forms/create/")]
pub async fn create_form(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<CreateFormBody>,
) -> ApiResult<HttpResponse> {
    let seen = state
        .forms
        .create_form(caller.user(), body.0.new_form()?)
        .await?;
    Ok(HttpResponse::Created().json(form_view(&state, &seen)))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path)),
    responses((status = 200, body = FormView), (status = 404, body = ErrorBody))
)]
#[get("/v1/forms/{uuid}/")]
pub async fn get_form(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let seen = state.forms.get_form(caller.user(), *id).await?;
    Ok(HttpResponse::Ok().json(form_view(&state, &seen)))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path)),
    request_body = FormConfigBody,
    responses(
        (status = 200, body = FormView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`form_edit_forbidden`", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`form_command_taken`, `state_in_use` (a removed state still holds responses)", body = ErrorBody),
    )
)]
#[patch("/v1/forms/{uuid}/config/")]
pub async fn update_form_config(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<FormConfigBody>,
) -> ApiResult<HttpResponse> {
    let seen = state
        .forms
        .update_config(caller.user(), *id, body.0.config()?)
        .await?;
    Ok(HttpResponse::Ok().json(form_view(&state, &seen)))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path)),
    responses((status = 204, description = "Archived"), (status = 403, description = "`form_edit_forbidden`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/v1/forms/{uuid}/archive/")]
pub async fn archive_form(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    state.forms.archive_form(caller.user(), *id).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path)),
    request_body = QuestionBody,
    responses((status = 201, body = QuestionView), (status = 400, body = ErrorBody), (status = 403, description = "`form_edit_forbidden`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[post("/v1/forms/{uuid}/questions/")]
pub async fn add_question(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<QuestionBody>,
) -> ApiResult<HttpResponse> {
    let generate = body.0.generate_short_question.unwrap_or(false);
    let (index, q) = state
        .forms
        .add_question(caller.user(), *id, body.0.into(), generate)
        .await?;
    Ok(HttpResponse::Created().json(QuestionView::new(index, &q)))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path)),
    request_body = ReorderBody,
    responses((status = 200, body = QuestionsView), (status = 400, description = "`question_uuids_required`, `question_uuids_duplicate`, `question_uuids_incomplete`", body = ErrorBody), (status = 403, description = "`form_edit_forbidden`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[put("/v1/forms/{uuid}/questions/reorder/")]
pub async fn reorder_questions(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<ReorderBody>,
) -> ApiResult<HttpResponse> {
    let questions = state
        .forms
        .reorder_questions(caller.user(), *id, &body.0.uuids())
        .await?;
    Ok(HttpResponse::Ok().json(QuestionsView {
        questions: QuestionView::list(&questions),
    }))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path), ("question" = String, Path)),
    request_body = QuestionPatchBody,
    responses((status = 200, body = QuestionView), (status = 400, body = ErrorBody), (status = 403, description = "`form_edit_forbidden`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[patch("/v1/forms/{uuid}/questions/{question}/")]
pub async fn update_question(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(Uuid, Uuid)>,
    body: JsonBody<QuestionPatchBody>,
) -> ApiResult<HttpResponse> {
    let (id, question) = path.into_inner();
    let generate = body.0.generate_short_question.unwrap_or(false);
    let (index, q) = state
        .forms
        .update_question(caller.user(), id, question, body.0.into(), generate)
        .await?;
    Ok(HttpResponse::Ok().json(QuestionView::new(index, &q)))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path), ("question" = String, Path)),
    responses((status = 204, description = "Removed"), (status = 400, description = "`questions_required` (the last question)", body = ErrorBody), (status = 403, description = "`form_edit_forbidden`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/v1/forms/{uuid}/questions/{question}/delete/")]
pub async fn delete_question(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(Uuid, Uuid)>,
) -> ApiResult<HttpResponse> {
    let (id, question) = path.into_inner();
    state
        .forms
        .remove_question(caller.user(), id, question)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path), ResponseListQuery, PageParams),
    responses(
        (status = 200, description = "The caller's own responses unless asked otherwise, newest first", body = ListEnvelope<FormResponseView>),
        (status = 400, description = "`invalid_workflow_state`, `invalid_user_identifier`, `invalid_date_range`, `search_query_too_long`, `invalid_filter_value`", body = ErrorBody),
        (status = 403, description = "`form_response_view_all_forbidden`, `user_can_not_see_form_responses`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/v1/forms/{uuid}/responses/")]
pub async fn list_responses(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    q: ListQuery<ResponseListQuery>,
) -> ApiResult<HttpResponse> {
    let page = state
        .forms
        .list_responses(
            caller.user(),
            *id,
            &ResponseListFilter::from(&q.filters),
            q.paging.request(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(q.envelope(page.map(|r| FormResponseView::from(&r)))))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path)),
    request_body = SubmitResponseBody,
    responses(
        (status = 201, body = FormResponseView),
        (status = 400, description = "`params_validation_error` (answers), `guest_user_required`, `form_not_accepting_responses`", body = ErrorBody),
        (status = 403, description = "`guest_not_allowed`", body = ErrorBody),
        (status = 404, description = "No such form, or archived", body = ErrorBody),
    )
)]
#[post("/v1/forms/{uuid}/responses/")]
pub async fn submit_response(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<SubmitResponseBody>,
) -> ApiResult<HttpResponse> {
    let r = state
        .forms
        .submit_response(caller.user(), *id, body.0.into())
        .await?;
    Ok(HttpResponse::Created().json(FormResponseView::from(&r)))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path), ("response" = String, Path)),
    responses((status = 200, body = FormResponseView), (status = 404, description = "No such response, or not the caller's and they do not see the form's responses", body = ErrorBody))
)]
#[get("/v1/forms/{uuid}/responses/{response}/")]
pub async fn get_response(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(Uuid, Uuid)>,
) -> ApiResult<HttpResponse> {
    let (id, response) = path.into_inner();
    let r = state
        .forms
        .get_response(caller.user(), id, response)
        .await?;
    Ok(HttpResponse::Ok().json(FormResponseView::from(&r)))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path), ("response" = String, Path)),
    request_body = EditResponseBody,
    responses((status = 200, body = FormResponseView), (status = 400, body = ErrorBody), (status = 403, description = "`form_response_edit_forbidden`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[patch("/v1/forms/{uuid}/responses/{response}/")]
pub async fn edit_response(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(Uuid, Uuid)>,
    body: JsonBody<EditResponseBody>,
) -> ApiResult<HttpResponse> {
    let (id, response) = path.into_inner();
    let r = state
        .forms
        .edit_response(
            caller.user(),
            id,
            response,
            body.0.content.into_iter().collect(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(FormResponseView::from(&r)))
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path), ("response" = String, Path)),
    responses((status = 204, description = "Deleted"), (status = 403, description = "`form_response_delete_forbidden`", body = ErrorBody), (status = 404, body = ErrorBody))
)]
#[delete("/v1/forms/{uuid}/responses/{response}/")]
pub async fn delete_response(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(Uuid, Uuid)>,
) -> ApiResult<HttpResponse> {
    let (id, response) = path.into_inner();
    state
        .forms
        .delete_response(caller.user(), id, response)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "forms",
    params(("uuid" = String, Path), ("response" = String, Path)),
    request_body = TransitionBody,
    responses(
        (status = 200, body = FormResponseView),
        (status = 400, description = "`invalid_workflow_state` (the form has no workflow)", body = ErrorBody),
        (status = 403, description = "`form_response_change_state_forbidden`", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`workflow_transition_not_allowed` (`extra.allowed`), `final_state_locked`, `workflow_state_conflict` (someone moved it first)", body = ErrorBody),
    )
)]
#[post("/v1/forms/{uuid}/responses/{response}/transition/")]
pub async fn transition_response(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(Uuid, Uuid)>,
    body: JsonBody<TransitionBody>,
) -> ApiResult<HttpResponse> {
    let (id, response) = path.into_inner();
    let TransitionBody { to_state, note } = body.0;
    let r = state
        .forms
        .transition_response(
            caller.user(),
            id,
            response,
            &to_state,
            note.as_ref().map(|n| n.0.as_str()),
        )
        .await?;
    Ok(HttpResponse::Ok().json(FormResponseView::from(&r)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use teamcomm_forms::forms::workflow::MAX_STATES;
    use teamcomm_forms::forms::{MAX_AUDIENCE, MAX_GUEST_EMAIL};
    use teamcomm_forms::questions::MAX_QUESTIONS;
    use utoipa::PartialSchema;

    use super::*;

    /// (`command`, `submission_source`, the guest's `full_name` and `note` have types built from
    /// the domain's limits.)
    #[test]
    fn the_document_states_the_domains_limits() {
        let audience = serde_json::to_value(AudienceBody::schema()).unwrap();
        for list in ["user_uuids", "team_uuids"] {
            assert_eq!(
                audience["properties"][list]["maxItems"],
                json!(MAX_AUDIENCE),
                "{list}"
            );
        }
        let workflow = serde_json::to_value(WorkflowBody::schema()).unwrap();
        assert_eq!(
            workflow["properties"]["states"]["maxItems"],
            json!(MAX_STATES)
        );
        let state = serde_json::to_value(StateBody::schema()).unwrap();
        assert_eq!(
            state["properties"]["label"]["maxLength"],
            json!(MAX_STATE_LABEL)
        );
        let guest = serde_json::to_value(GuestUserBody::schema()).unwrap();
        assert_eq!(
            guest["properties"]["email"]["maxLength"],
            json!(MAX_GUEST_EMAIL)
        );
        let create = serde_json::to_value(CreateFormBody::schema()).unwrap();
        assert_eq!(create["required"], json!(["name"]));
        assert_eq!(
            create["properties"]["questions"]["maxItems"],
            json!(MAX_QUESTIONS)
        );
    }
}
