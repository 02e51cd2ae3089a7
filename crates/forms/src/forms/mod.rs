//! Forms: authoring, permission settings, responses and their workflow (a state machine).
//!
//! - [`workflow`]: the response workflow, pure (states, keys, allowed moves, approval status).
//! - [`access`]: who may edit a form, see its responses and move them, pure.
//! - [`FormService`]: the rules of every form and response operation, over the
//!   [`FormRepository`] port and the directory's and channels' ports.

mod access;
mod model;
mod ports;
mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod workflow;

pub use access::{FormAccess, Viewer};
pub use model::{
    Archived, Audience, AudienceInput, AudienceMode, Form, FormConfig, FormListFilter, FormOrder,
    FormResponse, FormScope, FormSelection, FormSettings, GuestUser, MAX_AUDIENCE, MAX_COMMAND,
    MAX_FILTER_VALUES, MAX_FORM_NAME, MAX_GUEST_EMAIL, MAX_GUEST_NAME, MAX_NOTE,
    MAX_REPORT_CHANNELS, MAX_SUBMISSION_LABEL, MIN_FORM_NAME, Members, MembersInput, NewForm,
    Person, ResponseListFilter, ResponseOrder, ResponseSelection, StateChange, StateMigration,
    SubmissionSource, WorkflowInput, Written,
};
pub use ports::FormRepository;
pub use service::{
    AttachedChannel, COMMAND_CONSTRAINT, FormService, Submission, VisibleChange, VisibleForm,
    VisibleResponse, content_json,
};
pub use workflow::{FlowStatus, StateInput, Workflow, WorkflowState};
