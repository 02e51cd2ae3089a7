//! Forms, their settings and responses, and what the ports exchange.

use std::collections::BTreeMap;

use serde_json::Value;
use teamcomm_kernel::{OrgId, TeamId, UserId, WireEnum};
use time::OffsetDateTime;
use uuid::Uuid;

use super::workflow::{FlowStatus, StateInput, Workflow};
use crate::questions::{NewQuestion, QuestionSet};

/// Shortest and longest form name, in characters.
pub const MIN_FORM_NAME: usize = 3;
pub const MAX_FORM_NAME: usize = 200;
/// Most report channels a form reports to.
pub const MAX_REPORT_CHANNELS: usize = 3;
/// Most people, and most teams, one audience or approver list names.
pub const MAX_AUDIENCE: usize = 50;
/// Longest chat command (`[a-z0-9][a-z0-9_-]*`).
pub const MAX_COMMAND: usize = 31;
/// Longest free-text provenance of a submission (`submission_source` in the body).
pub const MAX_SUBMISSION_LABEL: usize = 512;
/// Longest guest name, in characters.
pub const MAX_GUEST_NAME: usize = 150;
/// Longest guest e-mail address.
pub const MAX_GUEST_EMAIL: usize = 254;
/// Longest transition note, in characters.
pub const MAX_NOTE: usize = 1000;
/// Most values of a list filter (`owner_user_ids`, `submitter_user_ids`, `labels`).
pub const MAX_FILTER_VALUES: usize = 50;

/// A person as forms show them: id, name and e-mail, read with the form or response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub id: UserId,
    pub full_name: String,
    pub email: String,
}

/// Who an audience admits besides the form's owner and the organization's admins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AudienceMode {
    /// Every member and admin of the organization (guests only when named elsewhere).
    Everyone,
    /// Nobody else.
    OwnerAndAdmins,
    /// The people and the members of the teams named.
    Restricted,
}

impl WireEnum for AudienceMode {
    const NAME: &'static str = "AudienceMode";
    const ALL: &'static [Self] = &[
        AudienceMode::Everyone,
        AudienceMode::OwnerAndAdmins,
        AudienceMode::Restricted,
    ];

    fn as_str(self) -> &'static str {
        match self {
            AudienceMode::Everyone => "everyone",
            AudienceMode::OwnerAndAdmins => "owner_and_admins",
            AudienceMode::Restricted => "restricted",
        }
    }
}

/// People and teams of the organization.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Members {
    pub users: Vec<UserId>,
    pub teams: Vec<TeamId>,
}

impl Members {
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.teams.is_empty()
    }
}

/// Who may do one thing with a form (`who_can_edit`, `who_can_see_responses`,
/// `who_can_change_states`). `members` is empty unless the mode is restricted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audience {
    pub mode: AudienceMode,
    pub members: Members,
}

impl Audience {
    pub fn owner_and_admins() -> Self {
        Audience {
            mode: AudienceMode::OwnerAndAdmins,
            members: Members::default(),
        }
    }
}

/// A form's configuration (the web app's Setup tab).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormSettings {
    /// An inactive form takes no responses.
    pub is_active: bool,
    /// Member responses hide who sent them.
    pub is_anonymous: bool,
    /// Guests (and public-link visitors) may respond.
    pub allow_public_responses: bool,
    /// Guest responses must give a name and an e-mail (`guest_user`).
    pub require_email_and_name: bool,
    pub brand_with_logo: bool,
    pub allow_reopen_from_final_state: bool,
    /// Responses are requests the approvers move through the (approval) workflow.
    pub use_for_approval: bool,
    /// `None`: responses have no state.
    pub workflow: Option<Workflow>,
    pub who_can_edit: Audience,
    pub who_can_see_responses: Audience,
    pub who_can_change_states: Audience,
    /// Who moves responses of an approval form (owner and admins when empty).
    pub approvers: Members,
    /// The chat shortcut (`@bot <command>`), unique among the organization's live forms while
    /// enabled.
    pub command: Option<String>,
    pub command_enabled: bool,
}

impl Default for FormSettings {
    fn default() -> Self {
        FormSettings {
            is_active: true,
            is_anonymous: false,
            allow_public_responses: false,
            require_email_and_name: false,
            brand_with_logo: false,
            allow_reopen_from_final_state: false,
            use_for_approval: false,
            workflow: None,
            who_can_edit: Audience::owner_and_admins(),
            who_can_see_responses: Audience::owner_and_admins(),
            who_can_change_states: Audience::owner_and_admins(),
            approvers: Members::default(),
            command: None,
            command_enabled: false,
        }
    }
}

/// A form of an organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub id: Uuid,
    pub org_id: OrgId,
    /// Its creator.
    pub owner: Person,
    pub name: String,
    pub questions: QuestionSet,
    /// Chat channel ids of the organization (see `ChannelRepository`).
    pub report_channels: Vec<String>,
    pub settings: FormSettings,
    /// Archived forms are kept with their responses but take no more.
    pub is_archived: bool,
    /// Bumped by every write; response writes check it so none lands on a form that changed
    /// under them.
    pub version: i32,
    /// Responses stored for the form (read with it).
    pub response_count: u64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// A change of workflow as a client writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkflowInput {
    Disabled,
    Enabled(Vec<StateInput>),
}

/// An audience as a client writes it (unvalidated uuids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AudienceInput {
    pub mode: AudienceMode,
    pub user_uuids: Vec<Uuid>,
    pub team_uuids: Vec<Uuid>,
}

/// People and teams as a client writes them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MembersInput {
    pub user_uuids: Vec<Uuid>,
    pub team_uuids: Vec<Uuid>,
}

/// The settings a create or config request sends; absent fields stay (or take their
/// defaults on creation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormConfig {
    pub name: Option<String>,
    pub report_channels: Option<Vec<String>>,
    pub is_active: Option<bool>,
    pub is_anonymous: Option<bool>,
    pub allow_public_responses: Option<bool>,
    pub require_email_and_name: Option<bool>,
    pub brand_with_logo: Option<bool>,
    pub allow_reopen_from_final_state: Option<bool>,
    pub use_for_approval: Option<bool>,
    pub workflow: Option<WorkflowInput>,
    pub who_can_edit: Option<AudienceInput>,
    pub who_can_see_responses: Option<AudienceInput>,
    pub who_can_change_states: Option<AudienceInput>,
    pub approvers: Option<MembersInput>,
    /// `Some(None)` removes the command.
    pub command: Option<Option<String>>,
    pub command_enabled: Option<bool>,
}

/// A form to create: its settings (with a name) and first questions.
#[derive(Debug, Clone, Default)]
pub struct NewForm {
    pub config: FormConfig,
    pub questions: Vec<NewQuestion>,
    /// Derive missing short questions from the question text.
    pub generate_short_question: bool,
}

/// Where a response came from (the `submission_sources` filter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubmissionSource {
    /// A member or admin, shown by name.
    Member,
    /// A member or admin whose name is hidden from everyone.
    Anonymous,
    /// An integration (`automation: true`): no submitter shown, maybe a `guest_user`.
    Automation,
    /// A guest of the organization, identified by `guest_user` only.
    Public,
}

impl WireEnum for SubmissionSource {
    const NAME: &'static str = "SubmissionSource";
    const ALL: &'static [Self] = &[
        SubmissionSource::Member,
        SubmissionSource::Anonymous,
        SubmissionSource::Automation,
        SubmissionSource::Public,
    ];

    fn as_str(self) -> &'static str {
        match self {
            SubmissionSource::Member => "member",
            SubmissionSource::Anonymous => "anonymous",
            SubmissionSource::Automation => "automation",
            SubmissionSource::Public => "public",
        }
    }
}

/// The name and e-mail a guest or an integration gives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuestUser {
    pub full_name: Option<String>,
    pub email: Option<String>,
}

/// One move of a response through the workflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateChange {
    pub from_state: String,
    pub to_state: String,
    /// Who moved it (`None` once that person is gone from the store).
    pub actor: Option<Person>,
    pub note: Option<String>,
    pub at: OffsetDateTime,
}

/// A response to a form.
#[derive(Debug, Clone, PartialEq)]
pub struct FormResponse {
    pub id: Uuid,
    pub org_id: OrgId,
    pub form_id: Uuid,
    /// Whoever sent it, whatever its source: they may read, edit and delete it. Shown only for
    /// [`SubmissionSource::Member`] responses.
    pub submitter: Person,
    pub source: SubmissionSource,
    /// Free-text provenance the client gave (`workflow:release`).
    pub label: Option<String>,
    pub guest: Option<GuestUser>,
    /// Answers by question uuid, normalized for their question's type.
    pub content: BTreeMap<Uuid, Value>,
    /// The workflow state; `None` when the form has no workflow.
    pub current_state: Option<String>,
    /// Moves through the workflow, oldest first.
    pub history: Vec<StateChange>,
    pub edited: bool,
    /// Bumped by every write (content edits check it).
    pub version: i32,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl FormResponse {
    /// Shows who sent it: only member responses do.
    pub fn reveals_submitter(&self) -> bool {
        self.source == SubmissionSource::Member
    }

    /// What `search` matches besides the submitter's name: the answers as text and the guest's
    /// name and e-mail, lower-cased, one per line.
    pub fn search_text(&self) -> String {
        fn text(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::String(s) => out.push(s.to_lowercase()),
                Value::Array(items) => items.iter().for_each(|i| text(i, out)),
                Value::Null => {}
                other => out.push(other.to_string().to_lowercase()),
            }
        }
        let mut parts = Vec::new();
        self.content.values().for_each(|v| text(v, &mut parts));
        if let Some(g) = &self.guest {
            parts.extend(
                g.full_name
                    .iter()
                    .chain(g.email.iter())
                    .map(|s| s.to_lowercase()),
            );
        }
        parts.join("\n")
    }
}

/// Which archived forms a listing covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Archived {
    #[default]
    Exclude,
    Include,
    Only,
}

/// How forms are sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormOrder {
    Alphabetical,
    #[default]
    Recent,
    /// By number of responses.
    Total,
}

impl WireEnum for FormOrder {
    const NAME: &'static str = "FormOrder";
    const ALL: &'static [Self] = &[FormOrder::Alphabetical, FormOrder::Recent, FormOrder::Total];

    fn as_str(self) -> &'static str {
        match self {
            FormOrder::Alphabetical => "alphabetical",
            FormOrder::Recent => "recent",
            FormOrder::Total => "total",
        }
    }
}

/// The scopes of `GET /v1/forms/?filter=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormScope {
    #[default]
    All,
    /// Owned by the caller (deprecated by the CLI in favour of `owner_user_ids`).
    Me,
    Public,
    Approval,
    Workflow,
    Archived,
}

impl WireEnum for FormScope {
    const NAME: &'static str = "FormScope";
    const ALL: &'static [Self] = &[
        FormScope::All,
        FormScope::Me,
        FormScope::Public,
        FormScope::Approval,
        FormScope::Workflow,
        FormScope::Archived,
    ];

    fn as_str(self) -> &'static str {
        match self {
            FormScope::All => "all",
            FormScope::Me => "me",
            FormScope::Public => "public",
            FormScope::Approval => "approval",
            FormScope::Workflow => "workflow",
            FormScope::Archived => "archived",
        }
    }
}

/// The filters of a form listing, as the caller sends them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormListFilter {
    pub include_archived: bool,
    pub owners: Vec<UserId>,
    pub scope: FormScope,
    pub order: FormOrder,
    pub ascending: bool,
    pub search: Option<String>,
    /// Created on or after this day, on the caller's wall clock.
    pub start_date: Option<time::Date>,
    pub end_date: Option<time::Date>,
    /// Forms carrying any of these labels.
    pub labels: Vec<Uuid>,
    /// Only forms the caller starred (true) or did not (false).
    pub featured: Option<bool>,
    /// The caller's starred forms first.
    pub prioritize_featured: bool,
}

/// Which forms of an organization a listing covers, resolved for the port. Every condition
/// given must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormSelection {
    /// Whose stars `featured` and `featured_first` read.
    pub viewer: UserId,
    pub archived: Archived,
    /// Owned by any of these.
    pub owners: Option<Vec<UserId>>,
    pub public_only: bool,
    pub approval_only: bool,
    pub workflow_only: bool,
    /// Name fragment, any case.
    pub search: Option<String>,
    /// Created at or after `from`, before `until`.
    pub from: Option<OffsetDateTime>,
    pub until: Option<OffsetDateTime>,
    pub labels: Vec<Uuid>,
    pub featured: Option<bool>,
    pub featured_first: bool,
    pub order: FormOrder,
    pub ascending: bool,
}

/// How responses are sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseOrder {
    #[default]
    Recent,
    Oldest,
}

impl WireEnum for ResponseOrder {
    const NAME: &'static str = "ResponseOrder";
    const ALL: &'static [Self] = &[ResponseOrder::Recent, ResponseOrder::Oldest];

    fn as_str(self) -> &'static str {
        match self {
            ResponseOrder::Recent => "recent",
            ResponseOrder::Oldest => "oldest",
        }
    }
}

/// The filters of a response listing, as the caller sends them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseListFilter {
    /// Everyone's responses, not only the caller's.
    pub all: bool,
    /// One person's responses.
    pub user: Option<UserId>,
    pub submitters: Vec<UserId>,
    /// A state key of the form's workflow.
    pub state: Option<String>,
    pub flow_status: Option<FlowStatus>,
    pub sources: Vec<SubmissionSource>,
    pub order: ResponseOrder,
    pub ascending: bool,
    /// Days on the caller's wall clock, both included. The two pairs of the wire
    /// (`date_from`/`date_to` and `start_date`/`end_date`) are checked each and narrow together.
    pub date_from: Option<time::Date>,
    pub date_to: Option<time::Date>,
    pub start_date: Option<time::Date>,
    pub end_date: Option<time::Date>,
    pub search: Option<String>,
}

/// Which responses of a form a listing covers, resolved for the port. Every condition given
/// must hold. A condition on who sent a response matches anonymous, automation and guest
/// responses only when that person is the viewer: their identity is never revealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseSelection {
    pub viewer: UserId,
    /// Only responses the viewer sent (any source).
    pub own_only: bool,
    /// Only responses sent by any of these.
    pub submitters: Option<Vec<UserId>>,
    /// Only responses in any of these states.
    pub states: Option<Vec<String>>,
    /// Only responses of any of these sources (none: any).
    pub sources: Vec<SubmissionSource>,
    /// Fragment of the answers, the guest's name or e-mail, or a member submitter's name or
    /// e-mail, any case.
    pub search: Option<String>,
    pub from: Option<OffsetDateTime>,
    pub until: Option<OffsetDateTime>,
    pub oldest_first: bool,
}

/// What a form update does to the states of the form's responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateMigration {
    /// The workflow's states are unchanged, or only added to.
    Keep,
    /// The workflow was turned off: no response has a state any more.
    Clear,
    /// A workflow was turned on: responses without a state start in this one.
    Start(String),
    /// These states were removed: refused while a response is in one of them.
    Remove(Vec<String>),
}

/// What a versioned write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    Done,
    /// The form's version moved since it was read: nothing was written.
    FormChanged,
    /// The response moved since it was read (another state, another version): nothing was
    /// written.
    ResponseChanged,
    /// A form update removing states that still hold responses (their keys): nothing written.
    StatesInUse(Vec<String>),
}
