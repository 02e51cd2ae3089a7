//! `/v1/checkins/` (and `POST /v1/followups/`): check-ins, their questions and their
//! responses, on the vendor CLI's verb-shaped paths (wire contract §3.3, §3.4, §6). Rules in
//! `teamcomm_forms::checkins::CheckinService`.
//!
//! A malformed check-in id is `not_found` everywhere except on the response doors, where the
//! CLI expects 400 `not_valid_followup_uuid`.

use actix_web::{HttpResponse, delete, get, patch, post, put, web};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use teamcomm_forms::checkins::{
    AnswerInput, Checkin, CheckinDetail, CheckinInput, CheckinListFilter, CheckinListing,
    CheckinResponse, ListedResponse, MAX_CHECKIN_NAME, NewCheckin, ParticipantsInput, Privacy,
    ReminderCondition, ReminderTone, ResponseInput, ResponseListFilter, ScheduleInput, format_time,
};
use teamcomm_forms::questions::Question;
use teamcomm_kernel::{Error, ErrorCode, TeamId, UserId};
use teamcomm_org::User;
use time::Date;
use utoipa::openapi::RefOr;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{Object, Schema, SchemaType, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};
use uuid::Uuid;

use super::questions::{QuestionBody, QuestionPatchBody, QuestionView, ReorderBody};
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::schema_check::ERROR_CODE_EXTENSION;
use crate::extract::{ClockTime, JsonBody, Name, Query, Wire, nullable};
use crate::paging::{ListEnvelope, ListQuery, PageParams};
use crate::params::{Day, Search, UserRef, UuidList, search};
use crate::state::AppState;
use crate::views::iso;

// ---------------------------------------------------------------------------- views

/// A person or a team a check-in names.
#[derive(Debug, Serialize, ToSchema)]
pub struct NamedRef {
    pub uuid: String,
    pub name: String,
}

/// Who takes part: these people and every active member of these teams.
#[derive(Debug, Serialize, ToSchema)]
pub struct ParticipantsView {
    pub users: Vec<NamedRef>,
    pub teams: Vec<NamedRef>,
}

/// A channel the check-in's reports go to.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReportChannelView {
    pub id: String,
    pub uuid: String,
    pub name: String,
    pub platform: String,
    #[serde(rename = "type")]
    pub channel_type: &'static str,
    pub reporting_enabled: bool,
}

/// When people are asked.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScheduleView {
    /// 0 = Sunday … 6 = Saturday.
    pub days: Vec<u8>,
    /// `HH:MM`.
    pub time: String,
    /// IANA zone.
    pub timezone: String,
}

/// A check-in's settings, as every check-in view shows them.
#[derive(Debug, Serialize, ToSchema)]
pub struct CheckinView {
    pub id: String,
    pub uuid: String,
    pub name: String,
    pub active: bool,
    /// The same as `active`.
    pub is_active: bool,
    pub is_archived: bool,
    /// The reader may change it (admins and its author).
    pub can_be_edited: bool,
    /// The template its questions came from.
    pub template: Option<String>,
    pub created_by: Option<String>,
    pub schedule: ScheduleView,
    /// `daily` or `weekly`.
    pub frequency_type: &'static str,
    pub frequency: u16,
    /// The schedule's weekdays.
    pub frequency_on_days: Vec<u8>,
    /// `disabled`, `monthly` or `custom`.
    pub frequency_advanced: &'static str,
    pub frequency_cron: Option<String>,
    pub start_on: String,
    pub end_on: Option<String>,
    pub is_trigger_based: bool,
    pub use_participant_timezone: bool,
    pub reminders_max_count: u8,
    pub reminders_frequency_time: u8,
    pub reminders_trigger_condition: &'static str,
    pub reminder_tone: &'static str,
    pub use_user_defined_work_days: bool,
    pub allow_responses_before_trigger: bool,
    pub allow_past_responses: bool,
    pub allow_future_responses: bool,
    pub is_anonymous: bool,
    pub privacy: &'static str,
    pub send_reports_one_by_one: bool,
    pub custom_template_intro: Option<String>,
    pub custom_template_outro: Option<String>,
    pub time_for_report: Option<String>,
    pub is_smart_checkin: bool,
    pub is_intelligence_enabled: bool,
    pub max_clarifying_questions: u8,
    pub questions: Vec<QuestionView>,
    /// Bumped by every change to the questions; answers may name the version they read.
    pub questions_version: i32,
    pub created_at: String,
    pub updated_at: String,
}

impl CheckinView {
    fn new(c: &Checkin, can_be_edited: bool) -> Self {
        use teamcomm_kernel::WireEnum;
        let o = &c.options;
        let r = &c.recurrence;
        CheckinView {
            id: c.id.to_string(),
            uuid: c.id.to_string(),
            name: c.name.clone(),
            active: c.active,
            is_active: c.active,
            is_archived: c.archived,
            can_be_edited,
            template: c.template.map(|t| t.to_string()),
            created_by: c.created_by.map(|u| u.to_string()),
            schedule: ScheduleView {
                days: c.schedule.days.clone(),
                time: format_time(c.schedule.time),
                timezone: c.schedule.timezone.clone(),
            },
            frequency_type: r.frequency_type.as_str(),
            frequency: r.frequency,
            frequency_on_days: c.schedule.days.clone(),
            frequency_advanced: r.advanced.as_str(),
            frequency_cron: r.cron.as_ref().map(|c| c.as_str().to_owned()),
            start_on: r.start_on.to_string(),
            end_on: r.end_on.map(|d| d.to_string()),
            is_trigger_based: o.is_trigger_based,
            use_participant_timezone: o.use_participant_timezone,
            reminders_max_count: o.reminders_max_count,
            reminders_frequency_time: o.reminders_frequency_time,
            reminders_trigger_condition: o.reminders_trigger_condition.as_str(),
            reminder_tone: o.reminder_tone.as_str(),
            use_user_defined_work_days: o.use_user_defined_work_days,
            allow_responses_before_trigger: o.allow_responses_before_trigger,
            allow_past_responses: o.allow_past_responses,
            allow_future_responses: o.allow_future_responses,
            is_anonymous: o.is_anonymous,
            privacy: o.privacy.as_str(),
            send_reports_one_by_one: o.send_reports_one_by_one,
            custom_template_intro: o.custom_template_intro.clone(),
            custom_template_outro: o.custom_template_outro.clone(),
            time_for_report: o.time_for_report.map(format_time),
            is_smart_checkin: o.is_smart_checkin,
            is_intelligence_enabled: o.is_intelligence_enabled,
            max_clarifying_questions: o.max_clarifying_questions,
            questions: QuestionView::list(&c.questions.questions),
            questions_version: c.questions.version,
            created_at: iso(c.created_at),
            updated_at: iso(c.updated_at),
        }
    }
}

/// A check-in with its participants and report channels named (the authoring read, and what
/// every authoring write answers).
#[derive(Debug, Serialize, ToSchema)]
pub struct CheckinDetailView {
    #[serde(flatten)]
    pub checkin: CheckinView,
    pub participants: ParticipantsView,
    pub report_channels: Vec<ReportChannelView>,
}

impl From<&CheckinDetail> for CheckinDetailView {
    fn from(d: &CheckinDetail) -> Self {
        let named = |id: String, name: &String| NamedRef {
            uuid: id,
            name: name.clone(),
        };
        CheckinDetailView {
            checkin: CheckinView::new(&d.checkin, d.can_be_edited),
            participants: ParticipantsView {
                users: d
                    .directory
                    .users
                    .iter()
                    .map(|(id, n)| named(id.to_string(), n))
                    .collect(),
                teams: d
                    .directory
                    .teams
                    .iter()
                    .map(|(id, n)| named(id.to_string(), n))
                    .collect(),
            },
            report_channels: d
                .directory
                .channels
                .iter()
                .map(|c| ReportChannelView {
                    id: c.id.clone(),
                    uuid: c.id.clone(),
                    name: c.name.clone(),
                    platform: c.platform.clone(),
                    channel_type: c.channel_type.as_str(),
                    reporting_enabled: true,
                })
                .collect(),
        }
    }
}

/// How many participants answered on the listing's day; empty unless `include_summary`.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct SummaryView {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_responses: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_responses: Option<u64>,
    /// Percent, two decimals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_percentage: Option<f64>,
}

/// A participant who has not completed the day's response.
#[derive(Debug, Serialize, ToSchema)]
pub struct PendingUserView {
    pub uuid: String,
    pub full_name: String,
}

/// One row of `GET /v1/checkins/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CheckinListItem {
    #[serde(flatten)]
    pub checkin: CheckinView,
    /// The day the fields below describe (`date`, else the reader's today).
    pub date: String,
    /// The reader completed their response for that day.
    pub response_completed: bool,
    pub summary: SummaryView,
    /// With `include_pending_users`: who has not completed the day's response; null on
    /// anonymous check-ins.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<PendingUserView>>)]
    pub pending_users: Option<Option<Vec<PendingUserView>>>,
}

impl CheckinListItem {
    fn new(l: &CheckinListing, pending_asked: bool) -> Self {
        let summary = l
            .summary
            .map_or_else(SummaryView::default, |s| SummaryView {
                expected_responses: Some(s.expected_responses),
                completed_responses: Some(s.completed_responses),
                completed_percentage: Some(s.completed_percentage),
            });
        let pending = |people: &Vec<User>| {
            people
                .iter()
                .map(|u| PendingUserView {
                    uuid: u.id.to_string(),
                    full_name: u.full_name(),
                })
                .collect()
        };
        CheckinListItem {
            checkin: CheckinView::new(&l.checkin, l.can_be_edited),
            date: l.date.to_string(),
            response_completed: l.response_completed,
            summary,
            pending_users: pending_asked.then(|| l.pending_users.as_ref().map(pending)),
        }
    }
}

/// Who answered.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResponderView {
    pub uuid: String,
    pub full_name: String,
    pub email: String,
}

/// One answer of a response.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnswerView {
    /// The question's uuid.
    pub uuid: String,
    /// The question's position now; null when it is no longer asked.
    pub index: Option<usize>,
    /// The question as it was asked.
    pub question: String,
    #[schema(value_type = Object)]
    pub response: Value,
}

/// A response to a check-in.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResponseView {
    pub id: String,
    pub uuid: String,
    /// The check-in's uuid.
    pub followup_uuid: String,
    /// The responder's day, `YYYY-MM-DD`.
    pub response_date: String,
    pub response_completed: bool,
    pub last_question_index: Option<u16>,
    pub questions_version: i32,
    pub responses: Vec<AnswerView>,
    /// Null on anonymous check-ins, except to the person who answered.
    pub user: Option<ResponderView>,
    pub created_at: String,
    pub updated_at: String,
}

impl ResponseView {
    fn new(checkin: &Checkin, r: &CheckinResponse, author: Option<&User>) -> Self {
        let index = |q: Uuid| checkin.questions.questions.iter().position(|o| o.uuid == q);
        ResponseView {
            id: r.id.to_string(),
            uuid: r.id.to_string(),
            followup_uuid: r.checkin_id.to_string(),
            response_date: r.date.to_string(),
            response_completed: r.completed,
            last_question_index: r.last_question_index,
            questions_version: r.questions_version,
            responses: r
                .answers
                .iter()
                .map(|a| AnswerView {
                    uuid: a.uuid.to_string(),
                    index: index(a.uuid),
                    question: a.question.clone(),
                    response: a.response.clone(),
                })
                .collect(),
            user: author.map(|u| ResponderView {
                uuid: u.id.to_string(),
                full_name: u.full_name(),
                email: u.email.clone(),
            }),
            created_at: iso(r.created_at),
            updated_at: iso(r.updated_at),
        }
    }

    fn listed(checkin: &Checkin, l: &ListedResponse) -> Self {
        Self::new(checkin, &l.response, l.author.as_ref())
    }
}

/// What a reset removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResetView {
    pub deleted_count: u64,
}

/// What a reorder left.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReorderedView {
    pub reordered: bool,
    pub questions: Vec<QuestionView>,
}

// ---------------------------------------------------------------------------- bodies

/// Wire-name fields of the settings (aliases, so the document derive sees plain types).
pub type ReminderConditionName = Wire<ReminderCondition>;
pub type ReminderToneName = Wire<ReminderTone>;
pub type PrivacyName = Wire<Privacy>;

/// `schedule.time`: a [`ClockTime`] (or null) whose errors answer `invalid_schedule`, as the
/// domain's other schedule errors do (utoipa drops a field's extensions on an `Option`).
fn schedule_time() -> Object {
    ClockTime::builder()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .description(Some("`HH:MM`, the wall-clock time people are asked."))
        .extensions(Some(
            ExtensionsBuilder::new()
                .add(ERROR_CODE_EXTENSION, "invalid_schedule")
                .build(),
        ))
        .build()
}

/// The `schedule` object; each part may be left out (a change keeps it).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleBody {
    /// Weekdays, 0 (Sunday) to 6 (Saturday); at least one.
    days: Option<Vec<i64>>,
    #[schema(schema_with = schedule_time)]
    time: Option<ClockTime>,
    /// IANA zone, e.g. `Europe/Madrid`.
    timezone: Option<String>,
}

/// The `participants` object: it replaces both lists (a list left out is empty).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ParticipantsBody {
    #[schema(max_items = 500)]
    user_uuids: Option<Vec<Uuid>>,
    #[schema(max_items = 100)]
    team_uuids: Option<Vec<Uuid>>,
}

/// Every setting of a check-in: the body of `PATCH .../config/` (a partial update: absent
/// keys keep their value) and, with the questions, of creation. A schedule value the service
/// refuses answers 400 `invalid_schedule` naming it in `extra.parameter`; other bad values
/// `params_validation_error`; unknown keys `unknown_field`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckinSettingsBody {
    #[schema(inline)]
    name: Option<Name<{ MAX_CHECKIN_NAME }>>,
    schedule: Option<ScheduleBody>,
    participants: Option<ParticipantsBody>,
    /// Channel ids of `GET /v1/report-channels/`, at most 3 (`too_many_report_channels`,
    /// `report_channel_not_found`); replaces the list.
    report_channels: Option<Vec<String>>,
    /// False pauses the check-in.
    is_active: Option<bool>,
    /// `daily` or `weekly` (default).
    frequency_type: Option<String>,
    /// Every N days or weeks (or months), 1 to 52.
    #[schema(minimum = 1, maximum = 52, extensions(("x-error-code" = json!("invalid_schedule"))))]
    frequency: Option<i64>,
    /// `disabled` (default), `monthly` (the schedule's weekdays in each month's first week) or
    /// `custom` (with `frequency_cron`).
    frequency_advanced: Option<String>,
    /// Five-field cron of a `custom` cadence; its minute and hour set the time.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    frequency_cron: Option<Option<String>>,
    /// `YYYY-MM-DD`, the first day (default today).
    #[schema(format = Date, extensions(("x-error-code" = json!("invalid_schedule"))))]
    start_on: Option<String>,
    /// `YYYY-MM-DD`, the last day; null for none.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, format = Date, extensions(("x-error-code" = json!("invalid_schedule"))))]
    end_on: Option<Option<String>>,
    /// Started by an event rather than at the schedule's time.
    is_trigger_based: Option<bool>,
    /// Each participant is asked at the schedule's time in their own zone, and answers for
    /// their own day.
    use_participant_timezone: Option<bool>,
    #[schema(minimum = 0, maximum = 5)]
    reminders_max_count: Option<i64>,
    /// Minutes between reminders.
    #[schema(minimum = 0, maximum = 60)]
    reminders_frequency_time: Option<i64>,
    #[schema(inline)]
    reminders_trigger_condition: Option<ReminderConditionName>,
    #[schema(inline)]
    reminder_tone: Option<ReminderToneName>,
    use_user_defined_work_days: Option<bool>,
    /// Today's answer may come before today's time (default true).
    allow_responses_before_trigger: Option<bool>,
    /// Answers for past days, up to 365 days back.
    allow_past_responses: Option<bool>,
    /// Answers for coming days, up to 30 days ahead.
    allow_future_responses: Option<bool>,
    /// Cannot be turned off once on (`anonymous_irreversible`).
    is_anonymous: Option<bool>,
    #[schema(inline)]
    privacy: Option<PrivacyName>,
    send_reports_one_by_one: Option<bool>,
    /// 3 to 1,024 characters; null or blank clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 1024)]
    custom_template_intro: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 1024)]
    custom_template_outro: Option<Option<String>>,
    /// `HH:MM`; null clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<ClockTime>)]
    time_for_report: Option<Option<ClockTime>>,
    is_smart_checkin: Option<bool>,
    /// Needs `is_smart_checkin`.
    is_intelligence_enabled: Option<bool>,
    /// Needs `is_intelligence_enabled` when above 0.
    #[schema(minimum = 0, maximum = 5)]
    max_clarifying_questions: Option<i64>,
}

impl From<CheckinSettingsBody> for CheckinInput {
    fn from(b: CheckinSettingsBody) -> Self {
        CheckinInput {
            name: b.name.map(|n| n.0),
            schedule: b.schedule.map(|s| ScheduleInput {
                days: s.days,
                time: s.time.map(|t| t.0),
                timezone: s.timezone,
            }),
            participants: b.participants.map(|p| ParticipantsInput {
                user_uuids: p
                    .user_uuids
                    .unwrap_or_default()
                    .into_iter()
                    .map(UserId)
                    .collect(),
                team_uuids: p
                    .team_uuids
                    .unwrap_or_default()
                    .into_iter()
                    .map(TeamId)
                    .collect(),
            }),
            report_channels: b.report_channels,
            is_active: b.is_active,
            frequency_type: b.frequency_type,
            frequency: b.frequency,
            frequency_advanced: b.frequency_advanced,
            frequency_cron: b.frequency_cron,
            start_on: b.start_on,
            end_on: b.end_on,
            is_trigger_based: b.is_trigger_based,
            use_participant_timezone: b.use_participant_timezone,
            reminders_max_count: b.reminders_max_count,
            reminders_frequency_time: b.reminders_frequency_time,
            reminders_trigger_condition: b.reminders_trigger_condition.map(|w| w.0),
            reminder_tone: b.reminder_tone.map(|w| w.0),
            use_user_defined_work_days: b.use_user_defined_work_days,
            allow_responses_before_trigger: b.allow_responses_before_trigger,
            allow_past_responses: b.allow_past_responses,
            allow_future_responses: b.allow_future_responses,
            is_anonymous: b.is_anonymous,
            privacy: b.privacy.map(|w| w.0),
            send_reports_one_by_one: b.send_reports_one_by_one,
            custom_template_intro: b.custom_template_intro,
            custom_template_outro: b.custom_template_outro,
            time_for_report: b.time_for_report.map(|t| t.map(|t| t.0)),
            is_smart_checkin: b.is_smart_checkin,
            is_intelligence_enabled: b.is_intelligence_enabled,
            max_clarifying_questions: b.max_clarifying_questions,
        }
    }
}

/// What creation adds to the settings.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreationExtras {
    /// At least one (`questions_required`) unless `template` is given, at most 50.
    #[schema(max_items = 50)]
    questions: Option<Vec<QuestionBody>>,
    /// Derive a missing `short_question` from the question's text (deterministically);
    /// without it a missing one is `short_question_required`.
    generate_short_question: Option<bool>,
    /// A check-ins template whose questions (and intro and outro) are copied when
    /// `questions` is left out.
    template: Option<Uuid>,
}

/// Body of `POST /v1/checkins/create/` and `POST /v1/followups/`: every key of
/// [`CheckinSettingsBody`] (`name` required) plus those of [`CreationExtras`], in one flat
/// object. It is read as the two structs, so each setting is declared once for both doors.
#[derive(Debug)]
pub struct CreateCheckinBody {
    settings: CheckinSettingsBody,
    extras: CreationExtras,
}

/// The object schema of `T`.
fn object_of<T: PartialSchema>() -> Option<utoipa::openapi::schema::Object> {
    match T::schema() {
        RefOr::T(Schema::Object(o)) => Some(o),
        _ => None,
    }
}

impl PartialSchema for CreateCheckinBody {
    fn schema() -> RefOr<Schema> {
        let (Some(mut merged), Some(extras)) = (
            object_of::<CheckinSettingsBody>(),
            object_of::<CreationExtras>(),
        ) else {
            return CheckinSettingsBody::schema();
        };
        merged.properties.extend(extras.properties);
        // Required on creation, so not null either (a change may leave it out or send null).
        merged
            .properties
            .insert("name".to_owned(), Name::<{ MAX_CHECKIN_NAME }>::schema());
        merged.required.push("name".to_owned());
        merged.description =
            Some("A new check-in: its settings (`name` required) and its questions.".to_owned());
        RefOr::T(Schema::Object(merged))
    }
}

impl ToSchema for CreateCheckinBody {
    fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
        CheckinSettingsBody::schemas(out);
        CreationExtras::schemas(out);
    }
}

impl<'de> Deserialize<'de> for CreateCheckinBody {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut settings = Map::<String, Value>::deserialize(d)?;
        // The extras' keys are the properties their schema declares.
        let mut extras = Map::new();
        for key in object_of::<CreationExtras>()
            .map(|o| o.properties.into_keys().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            if let Some(v) = settings.remove(&key) {
                extras.insert(key, v);
            }
        }
        Ok(CreateCheckinBody {
            settings: CheckinSettingsBody::deserialize(Value::Object(settings))
                .map_err(de::Error::custom)?,
            extras: CreationExtras::deserialize(Value::Object(extras))
                .map_err(de::Error::custom)?,
        })
    }
}

impl From<CreateCheckinBody> for NewCheckin {
    fn from(b: CreateCheckinBody) -> Self {
        NewCheckin {
            settings: b.settings.into(),
            questions: b
                .extras
                .questions
                .map(|qs| qs.into_iter().map(Into::into).collect()),
            generate_short_question: b.extras.generate_short_question.unwrap_or(false),
            template: b.extras.template,
        }
    }
}

/// One answer: the question's `uuid`, its `index` (position) when it was asked, the answer
/// (text, true/false, a number, or one or several of a multiple-choice question's options).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerBody {
    uuid: Uuid,
    // The document would otherwise say only int32 (utoipa's type for u16).
    #[schema(maximum = 65535)]
    index: Option<u16>,
    #[schema(value_type = Value)]
    response: Value,
}

/// Body of `POST` and `PUT .../responses/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponseBody {
    /// Answers against the check-in's current questions
    /// (`template_questions_version_conflict` otherwise).
    #[schema(max_items = 50)]
    responses: Vec<AnswerBody>,
    /// The position of the last question reached; below the last question the response may
    /// stop short of the required ones (`response_completed: false`).
    #[schema(maximum = 65535)]
    last_question_index: Option<u16>,
    /// `YYYY-MM-DD`, the day answered (default the responder's today;
    /// `response_date_format_is_invalid` when malformed).
    response_date: Option<String>,
    /// The `questions_version` the answers were given against, when known.
    questions_version: Option<i32>,
}

impl ResponseBody {
    fn input(self) -> (ResponseInput, Option<String>) {
        let input = ResponseInput {
            answers: self
                .responses
                .into_iter()
                .map(|a| AnswerInput {
                    uuid: a.uuid,
                    index: a.index,
                    response: a.response,
                })
                .collect(),
            last_question_index: self.last_question_index,
            questions_version: self.questions_version,
        };
        (input, self.response_date)
    }
}

// ---------------------------------------------------------------------------- queries

/// Filters and extras of `GET /v1/checkins/`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CheckinListQuery {
    /// The day `response_completed`, `summary` and `pending_users` describe (default each
    /// check-in's today for the caller).
    #[param(inline)]
    date: Option<Day>,
    /// Adds `summary` (`{}` otherwise).
    include_summary: Option<bool>,
    /// Adds `pending_users` (null on anonymous check-ins).
    include_pending_users: Option<bool>,
    include_archived: Option<bool>,
    /// Name fragment, at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
    /// Check-ins running on some day from `start_date` to `end_date`.
    #[param(inline)]
    start_date: Option<Day>,
    #[param(inline)]
    end_date: Option<Day>,
    /// Label uuids, comma-separated: check-ins carrying any of them.
    #[param(inline)]
    labels: Option<UuidList>,
    /// Only those the caller starred.
    featured: Option<bool>,
    /// The caller's starred ones first.
    prioritize_featured: Option<bool>,
}

impl From<&CheckinListQuery> for CheckinListFilter {
    fn from(q: &CheckinListQuery) -> Self {
        CheckinListFilter {
            date: q.date.map(|d| d.0),
            include_summary: q.include_summary.unwrap_or(false),
            include_pending_users: q.include_pending_users.unwrap_or(false),
            include_archived: q.include_archived.unwrap_or(false),
            search: search(q.search.clone()),
            start_date: q.start_date.map(|d| d.0),
            end_date: q.end_date.map(|d| d.0),
            labels: q.labels.clone().map(|l| l.0).unwrap_or_default(),
            featured: q.featured.unwrap_or(false),
            prioritize_featured: q.prioritize_featured.unwrap_or(false),
        }
    }
}

/// The days of a response listing (default every day) or reset (default the caller's today):
/// `date_start`/`date_end`, or their aliases `start_date`/`end_date` (both of a pair given and
/// different is `invalid_date_range`).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResponseDaysQuery {
    /// `YYYY-MM-DD`, the first day.
    #[param(inline)]
    date_start: Option<Day>,
    /// `YYYY-MM-DD`, the last day.
    #[param(inline)]
    date_end: Option<Day>,
    #[param(inline)]
    start_date: Option<Day>,
    #[param(inline)]
    end_date: Option<Day>,
}

impl ResponseDaysQuery {
    fn span(&self) -> Result<(Option<Date>, Option<Date>), Error> {
        let pick = |a: Option<Day>, b: Option<Day>, names: &str| match (a, b) {
            (Some(a), Some(b)) if a != b => Err(Error::new(
                ErrorCode::InvalidDateRange,
                format!("{names} name different days."),
            )
            .with_extra("parameter", names.split(' ').next().unwrap_or_default())),
            (a, b) => Ok(a.or(b).map(|d| d.0)),
        };
        Ok((
            pick(
                self.date_start,
                self.start_date,
                "date_start and start_date",
            )?,
            pick(self.date_end, self.end_date, "date_end and end_date")?,
        ))
    }
}

/// Filters of `GET .../responses/` besides the days.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResponseListQuery {
    /// One person's responses (admins and team managers; others always get their own).
    #[param(inline)]
    user: Option<UserRef>,
    /// Text of the answers, at most 256 characters.
    #[param(inline)]
    search: Option<Search>,
    /// Accepted for compatibility; the list already holds everything the caller may see.
    all: Option<bool>,
}

/// The check-in id of a response door: `not_valid_followup_uuid` when malformed.
fn followup_id(raw: &str) -> Result<Uuid, Error> {
    Uuid::parse_str(raw.trim()).map_err(|_| {
        Error::new(
            ErrorCode::NotValidFollowupUuid,
            "The check-in id is not a valid UUID.",
        )
    })
}

// ---------------------------------------------------------------------------- handlers

#[utoipa::path(
    tag = "checkins",
    params(CheckinListQuery, PageParams),
    responses(
        (status = 200, description = "Admins see every check-in, others those they take part in or authored; by name", body = ListEnvelope<CheckinListItem>),
        (status = 400, description = "`invalid_date_range`, `search_query_too_long`, `invalid_filter_value`, `too_many_filter_values`", body = ErrorBody),
    )
)]
#[get("/v1/checkins/")]
pub async fn list_checkins(
    state: web::Data<AppState>,
    caller: Caller,
    q: ListQuery<CheckinListQuery>,
) -> ApiResult<HttpResponse> {
    let filter = CheckinListFilter::from(&q.filters);
    let page = state
        .checkins
        .list_checkins(caller.user(), &filter, q.paging.request())
        .await?;
    let pending = filter.include_pending_users;
    Ok(HttpResponse::Ok().json(q.envelope(page.map_ref(|l| CheckinListItem::new(l, pending)))))
}

#[utoipa::path(
    tag = "checkins",
    request_body = CreateCheckinBody,
    responses(
        (status = 201, body = CheckinDetailView),
        (status = 400, description = "`questions_required`, `short_question_required`, `checkin_requires_participant`, `invalid_schedule`, `report_channel_not_found`, `too_many_report_channels`, `unknown_field`, `params_validation_error`", body = ErrorBody),
        (status = 403, description = "`checkin_permission_denied`: only admins and team managers (for the teams they manage) create check-ins", body = ErrorBody),
    )
)]
#[post("/v1/checkins/create/")]
pub async fn create_checkin(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<CreateCheckinBody>,
) -> ApiResult<HttpResponse> {
    let detail = state
        .checkins
        .create_checkin(caller.user(), body.0.into())
        .await?;
    Ok(HttpResponse::Created().json(CheckinDetailView::from(&detail)))
}

#[utoipa::path(
    tag = "checkins",
    request_body = CreateCheckinBody,
    responses(
        (status = 201, description = "The spec's admin-only door to create a check-in; the same rules as `POST /v1/checkins/create/`", body = CheckinDetailView),
        (status = 400, body = ErrorBody),
    )
)]
#[post("/v1/followups/")]
pub async fn create_followup(
    state: web::Data<AppState>,
    caller: Caller,
    body: JsonBody<CreateCheckinBody>,
) -> ApiResult<HttpResponse> {
    let detail = state
        .checkins
        .create_checkin(caller.user(), body.0.into())
        .await?;
    Ok(HttpResponse::Created().json(CheckinDetailView::from(&detail)))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path)),
    responses((status = 200, body = CheckinDetailView), (status = 404, body = ErrorBody))
)]
#[get("/v1/checkins/{uuid}/")]
pub async fn get_checkin(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let detail = state.checkins.get_checkin(caller.user(), *id).await?;
    Ok(HttpResponse::Ok().json(CheckinDetailView::from(&detail)))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path)),
    responses((status = 200, description = "Schedule, participants, report channels, questions and every setting", body = CheckinDetailView), (status = 404, body = ErrorBody))
)]
#[get("/v1/checkins/{uuid}/detail/")]
pub async fn get_checkin_detail(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    let detail = state.checkins.get_checkin(caller.user(), *id).await?;
    Ok(HttpResponse::Ok().json(CheckinDetailView::from(&detail)))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path)),
    request_body = CheckinSettingsBody,
    responses(
        (status = 200, body = CheckinDetailView),
        (status = 400, description = "`invalid_schedule`, `anonymous_irreversible`, `checkin_requires_participant`, `report_channel_not_found`, `too_many_report_channels`, `unknown_field`", body = ErrorBody),
        (status = 403, description = "`checkin_permission_denied`: admins and the check-in's author only", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[patch("/v1/checkins/{uuid}/config/")]
pub async fn update_checkin_config(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<CheckinSettingsBody>,
) -> ApiResult<HttpResponse> {
    let detail = state
        .checkins
        .update_config(caller.user(), *id, body.0.into())
        .await?;
    Ok(HttpResponse::Ok().json(CheckinDetailView::from(&detail)))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path)),
    responses(
        (status = 204, description = "Archived (a soft delete; its responses stay)"),
        (status = 403, description = "`checkin_permission_denied`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/v1/checkins/{uuid}/archive/")]
pub async fn archive_checkin(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
) -> ApiResult<HttpResponse> {
    state.checkins.archive_checkin(caller.user(), *id).await?;
    Ok(HttpResponse::NoContent().finish())
}

fn question_view(at: (usize, Question)) -> QuestionView {
    QuestionView::new(at.0, &at.1)
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path)),
    request_body = QuestionBody,
    responses(
        (status = 201, body = QuestionView),
        (status = 400, description = "`short_question_required`, `params_validation_error`", body = ErrorBody),
        (status = 403, description = "`checkin_permission_denied`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[post("/v1/checkins/{uuid}/questions/")]
pub async fn add_question(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<QuestionBody>,
) -> ApiResult<HttpResponse> {
    let generate = body.0.generate_short_question.unwrap_or(false);
    let added = state
        .checkins
        .add_question(caller.user(), *id, body.0.into(), generate)
        .await?;
    Ok(HttpResponse::Created().json(question_view(added)))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path)),
    request_body = ReorderBody,
    responses(
        (status = 200, body = ReorderedView),
        (status = 400, description = "`question_uuids_required`, `question_uuids_incomplete`, `question_uuids_duplicate`", body = ErrorBody),
        (status = 403, description = "`checkin_permission_denied`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/v1/checkins/{uuid}/questions/reorder/")]
pub async fn reorder_questions(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<Uuid>,
    body: JsonBody<ReorderBody>,
) -> ApiResult<HttpResponse> {
    let set = state
        .checkins
        .reorder_questions(caller.user(), *id, &body.0.uuids())
        .await?;
    Ok(HttpResponse::Ok().json(ReorderedView {
        reordered: true,
        questions: QuestionView::list(&set.questions),
    }))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path), ("question" = String, Path)),
    request_body = QuestionPatchBody,
    responses(
        (status = 200, body = QuestionView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`checkin_permission_denied`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[patch("/v1/checkins/{uuid}/questions/{question}/")]
pub async fn update_question(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(Uuid, Uuid)>,
    body: JsonBody<QuestionPatchBody>,
) -> ApiResult<HttpResponse> {
    let (id, question) = path.into_inner();
    let generate = body.0.generate_short_question.unwrap_or(false);
    let updated = state
        .checkins
        .update_question(caller.user(), id, question, body.0.into(), generate)
        .await?;
    Ok(HttpResponse::Ok().json(question_view(updated)))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path), ("question" = String, Path)),
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "`questions_required`: the last question stays", body = ErrorBody),
        (status = 403, description = "`checkin_permission_denied`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/v1/checkins/{uuid}/questions/{question}/delete/")]
pub async fn delete_question(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(Uuid, Uuid)>,
) -> ApiResult<HttpResponse> {
    let (id, question) = path.into_inner();
    state
        .checkins
        .remove_question(caller.user(), id, question)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path)),
    request_body = ResponseBody,
    responses(
        (status = 201, body = ResponseView),
        (status = 400, description = "`not_valid_followup_uuid`, `response_date_format_is_invalid`, `previous_responses_are_not_allowed`, `future_responses_are_not_allowed`, `followup_not_allow_responses_before_trigger_time`, `responses_not_allowed_on_inactive_followup`, `params_validation_error`", body = ErrorBody),
        (status = 403, description = "`user_is_not_a_followup_member`", body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, description = "`template_questions_version_conflict` (`extra.current_version`), `response_already_exists`", body = ErrorBody),
    )
)]
#[post("/v1/checkins/{uuid}/responses/")]
pub async fn submit_response(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    body: JsonBody<ResponseBody>,
) -> ApiResult<HttpResponse> {
    let id = followup_id(&id)?;
    let (input, date) = body.0.input();
    let (checkin, response) = state
        .checkins
        .submit_response(caller.user(), id, &input, date.as_deref())
        .await?;
    Ok(HttpResponse::Created().json(ResponseView::new(&checkin, &response, Some(caller.user()))))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path)),
    request_body = ResponseBody,
    responses(
        (status = 200, description = "The answers of the caller's response for `response_date` (default today) replaced", body = ResponseView),
        (status = 400, body = ErrorBody),
        (status = 403, description = "`user_is_not_a_followup_member`", body = ErrorBody),
        (status = 404, description = "No response for that day", body = ErrorBody),
        (status = 409, description = "`template_questions_version_conflict`", body = ErrorBody),
    )
)]
#[put("/v1/checkins/{uuid}/responses/")]
pub async fn edit_response(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    body: JsonBody<ResponseBody>,
) -> ApiResult<HttpResponse> {
    let id = followup_id(&id)?;
    let (input, date) = body.0.input();
    let (checkin, response) = state
        .checkins
        .edit_response(caller.user(), id, &input, date.as_deref())
        .await?;
    Ok(HttpResponse::Ok().json(ResponseView::new(&checkin, &response, Some(caller.user()))))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path), ResponseDaysQuery),
    responses(
        (status = 200, description = "The caller's own responses of those days removed", body = ResetView),
        (status = 400, description = "`not_valid_followup_uuid`, `invalid_date_range`", body = ErrorBody),
        (status = 403, description = "`user_is_not_a_followup_member`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/v1/checkins/{uuid}/responses/")]
pub async fn reset_responses(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    days: Query<ResponseDaysQuery>,
) -> ApiResult<HttpResponse> {
    let id = followup_id(&id)?;
    let (from, until) = days.0.span()?;
    let deleted_count = state
        .checkins
        .reset_responses(caller.user(), id, from, until)
        .await?;
    Ok(HttpResponse::Ok().json(ResetView { deleted_count }))
}

#[utoipa::path(
    tag = "checkins",
    params(("uuid" = String, Path), ResponseDaysQuery, ResponseListQuery, PageParams),
    responses(
        (status = 200, description = "Admins see every response, team managers theirs and their teams' members', others their own; newest day first, then in the order they came in", body = ListEnvelope<ResponseView>),
        (status = 400, description = "`not_valid_followup_uuid`, `invalid_date_range`, `invalid_user_identifier`, `search_query_too_long`", body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/v1/checkins/{uuid}/responses/")]
pub async fn list_responses(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    days: Query<ResponseDaysQuery>,
    q: ListQuery<ResponseListQuery>,
) -> ApiResult<HttpResponse> {
    let id = followup_id(&id)?;
    let (from, until) = days.0.span()?;
    // `all=true` asked the vendor's older API for every visible response: the list already is.
    let _legacy_all = q.filters.all;
    let filter = ResponseListFilter {
        user: q.filters.user.map(|u| UserId(u.0)),
        search: search(q.filters.search.clone()),
        from,
        until,
    };
    let found = state
        .checkins
        .list_responses(caller.user(), id, &filter, q.paging.request())
        .await?;
    let checkin = &found.checkin;
    Ok(HttpResponse::Ok()
        .json(q.envelope(found.page.map_ref(|r| ResponseView::listed(checkin, r)))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::decode_body;
    use serde_json::json;

    #[test]
    fn creation_reads_one_flat_object_as_settings_and_extras() {
        let body: CreateCheckinBody = decode_body(json!({
            "name": "Standup",
            "frequency": 2,
            "questions": [{"question": "What shipped?", "short_question": "Shipped"}],
            "generate_short_question": true,
            "end_on": null,
        }))
        .unwrap();
        let new = NewCheckin::from(body);
        assert_eq!(new.settings.name.as_deref(), Some("Standup"));
        assert_eq!(new.settings.frequency, Some(2));
        assert_eq!(new.settings.end_on, Some(None));
        assert_eq!(new.questions.unwrap().len(), 1);
        assert!(new.generate_short_question);
        let e = decode_body::<CreateCheckinBody>(json!({"name": "x", "surprise": 1})).unwrap_err();
        assert_eq!(
            (e.code(), e.extra()["parameter"].clone()),
            (ErrorCode::UnknownField, json!("surprise"))
        );
        for nameless in [json!({"questions": []}), json!({"name": null})] {
            let e = decode_body::<CreateCheckinBody>(nameless).unwrap_err();
            assert!(e.field_errors().contains_key("name"));
        }
        // The config door takes the settings only.
        let e = decode_body::<CheckinSettingsBody>(json!({"questions": []})).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownField);
    }

    #[test]
    fn schedule_values_answer_invalid_schedule_naming_the_field() {
        for (body, field) in [
            (json!({"frequency": 53}), "frequency"),
            (json!({"start_on": "2026-02-30"}), "start_on"),
            (json!({"end_on": "soon"}), "end_on"),
            (json!({"schedule": {"time": "9am"}}), "schedule.time"),
        ] {
            let e = decode_body::<CheckinSettingsBody>(body.clone()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidSchedule, "{body}");
            assert_eq!(e.extra()["parameter"], field, "{body}");
        }
        let e =
            decode_body::<CheckinSettingsBody>(json!({"time_for_report": "24:00"})).unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        assert!(e.field_errors().contains_key("time_for_report"));
        let ok: CheckinSettingsBody = decode_body(json!({
            "frequency": 52.0, "start_on": "2026-03-01", "end_on": null,
            "schedule": {"time": " 09:30 "}, "time_for_report": "23:59",
        }))
        .unwrap();
        let settings = CheckinInput::from(ok);
        assert_eq!(settings.frequency, Some(52));
        assert_eq!(settings.schedule.unwrap().time.as_deref(), Some(" 09:30 "));
    }

    #[test]
    fn answer_positions_are_bounded_in_the_document() {
        let answer = |index: Value| json!({"uuid": Uuid::nil(), "index": index, "response": "x"});
        let body = json!({"responses": [answer(json!(65535.0))], "last_question_index": 3});
        let ok: ResponseBody = decode_body(body).unwrap();
        assert_eq!(ok.responses[0].index, Some(u16::MAX));
        let body = json!({"responses": [answer(json!(65536))], "last_question_index": 70000});
        let e = decode_body::<ResponseBody>(body).unwrap_err();
        let fields: Vec<&str> = e.field_errors().keys().map(String::as_str).collect();
        assert_eq!(fields, ["last_question_index", "responses.0.index"]);
    }
}
