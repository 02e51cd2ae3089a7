//! The frozen catalogue of machine-readable error `code`s.
//!
//! Clients dispatch on these strings, so an existing code never changes its string, its meaning or
//! its default HTTP status; new codes may be added. `tests/error_catalogue.snapshot` pins every
//! `(code, status)` pair and the kernel's unit test fails on any change to an existing line.
//!
//! The table is written out by hand (no serde renaming) so that a review of this one file shows
//! everything a client can receive.

macro_rules! catalogue {
    ($( $(#[$doc:meta])* $variant:ident => ($code:literal, $status:literal), )+) => {
        /// Every error code the service can answer with.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )+
        }

        impl ErrorCode {
            /// All codes, in catalogue order.
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )+ ];

            /// The wire string, exactly as clients see it in `code`.
            pub const fn as_str(self) -> &'static str {
                match self { $( ErrorCode::$variant => $code, )+ }
            }

            /// The HTTP status this code is answered with unless a caller states otherwise.
            pub const fn default_status(self) -> u16 {
                match self { $( ErrorCode::$variant => $status, )+ }
            }

            /// Looks a code up by its wire string.
            pub fn from_wire(s: &str) -> Option<ErrorCode> {
                match s { $( $code => Some(ErrorCode::$variant), )+ _ => None }
            }
        }
    };
}

catalogue! {
    // --- credentials (see docs/decisions.md "401 or 403 for credential codes") ---
    /// No credential was sent.
    CredentialAbsent => ("credential_absent", 401),
    /// The credential has the right transport but cannot be parsed (for example `Authorization: Bearer` with no token).
    CredentialMalformed => ("credential_malformed", 401),
    /// The credential was valid once but has expired.
    CredentialExpired => ("credential_expired", 401),
    /// The credential does not resolve to a live key or token.
    InvalidCredentials => ("invalid_credentials", 401),
    /// The API key's owner is deactivated.
    ApiKeyOwnerInactive => ("api_key_owner_inactive", 403),
    /// The organization is on the free plan, which has no API keys.
    PlanFreeApiKeysForbidden => ("plan_free_api_keys_forbidden", 403),
    /// The organization's plan lacks API access.
    PlanMissingCoreApiIntegrations => ("plan_missing_core_api_integrations", 403),
    /// Free-plan CLI token on a non-allow-listed endpoint (403), or Plan area not enabled (402).
    PlanUpgradeRequired => ("plan_upgrade_required", 403),
    /// A free-plan daily throttle was reached.
    FreePlanDailyLimitExceeded => ("free_plan_daily_limit_exceeded", 429),
    /// The action needs an organization admin.
    OrgAdminRequired => ("org_admin_required", 403),
    /// The target user is not in the caller's organization.
    MemberInScopeRequired => ("member_in_scope_required", 403),
    /// The credential lacks a needed scope.
    InsufficientScope => ("insufficient_scope", 403),
    /// Guest accounts may not call this endpoint.
    GuestNotAllowed => ("guest_not_allowed", 403),
    /// The call needs a person but the credential is an agent or organization key.
    ActorRequired => ("actor_required", 400),

    // --- key management ---
    /// Only admins create agent keys.
    AgentKeyAdminOnly => ("agent_key_admin_only", 400),
    /// `for_user_id` names a deactivated user.
    TargetUserInactive => ("target_user_inactive", 400),
    /// `for_user_id` names no user of the organization.
    TargetUserNotFound => ("target_user_not_found", 400),

    // --- CLI one-time-code login (issue 10 §1) ---
    /// A wrong login code (the code survives a few wrong tries).
    LoginCodeInvalid => ("login_code_invalid", 400),
    /// No live login code: expired, used, replaced by a newer one, or dead after too many wrong tries.
    LoginCodeExpired => ("login_code_expired", 400),
    /// `organization_id` is not one of the login address's organizations.
    LoginOrganizationInvalid => ("login_organization_invalid", 400),

    // --- messaging ---
    /// `send_as_user` combined with bot_* fields.
    SendAsUserConflict => ("send_as_user_conflict", 400),
    /// `send_as_user` is not a UUID.
    SendAsUserInvalidUuid => ("send_as_user_invalid_uuid", 400),
    /// `send_as_user` names a missing, inactive or foreign user.
    SendAsUserNotFound => ("send_as_user_not_found", 400),
    /// A CLI caller targets something out of its scope.
    CliSendMessageTargetNotAllowed => ("cli_send_message_target_not_allowed", 403),

    // --- filters and queries ---
    /// `?search=` over 256 characters.
    SearchQueryTooLong => ("search_query_too_long", 400),
    /// Plan: `?search=` under 2 characters.
    SearchQueryTooShort => ("search_query_too_short", 400),
    /// A date is not YYYY-MM-DD, or start is after end.
    InvalidDateRange => ("invalid_date_range", 400),
    /// `?user=` is not a UUID.
    InvalidUserIdentifier => ("invalid_user_identifier", 400),
    /// `?filter=` is not `kudos_received` or `kudos_given`.
    InvalidKudosFilter => ("invalid_kudos_filter", 400),
    /// Deprecated alias of `invalid_kudos_filter`; never emitted, kept so it is never reused.
    NotValidKudosFilter => ("not_valid_kudos_filter", 400),
    /// `?sender_uuid=` is not a UUID.
    InvalidSenderUuid => ("invalid_sender_uuid", 400),
    /// `?receiver_uuid=` is not a UUID.
    InvalidReceiverUuid => ("invalid_receiver_uuid", 400),
    /// `?state=` is not a workflow state of the form.
    InvalidWorkflowState => ("invalid_workflow_state", 400),
    /// A member used `?all=true` on form responses.
    FormResponseViewAllForbidden => ("form_response_view_all_forbidden", 403),
    /// An unparseable filter, include token or query value (`extra.parameter`).
    InvalidFilterValue => ("invalid_filter_value", 400),

    // --- authoring (forms and check-ins) ---
    /// A body key the endpoint does not accept.
    UnknownField => ("unknown_field", 400),
    /// Create without at least one question.
    QuestionsRequired => ("questions_required", 400),
    /// A question lacks `short_question` without `generate_short_question`.
    ShortQuestionRequired => ("short_question_required", 400),
    /// A check-in with zero participants.
    CheckinRequiresParticipant => ("checkin_requires_participant", 400),
    /// Disabling anonymity on an anonymous check-in.
    AnonymousIrreversible => ("anonymous_irreversible", 400),
    /// `report_channels` names an unknown channel.
    ReportChannelNotFound => ("report_channel_not_found", 400),
    /// More than 3 report channels.
    TooManyReportChannels => ("too_many_report_channels", 400),
    /// A reorder misses question UUIDs.
    QuestionUuidsIncomplete => ("question_uuids_incomplete", 400),

    // --- Plan area, 400 ---
    AttachmentInvalidType => ("attachment_invalid_type", 400),
    AttachmentLimitReached => ("attachment_limit_reached", 400),
    AttachmentTooLarge => ("attachment_too_large", 400),
    ChannelNotFound => ("channel_not_found", 400),
    CommentBodyTooLong => ("comment_body_too_long", 400),
    DeltaWindowExpired => ("delta_window_expired", 400),
    DescriptionTooLong => ("description_too_long", 400),
    FavoriteLimitReached => ("favorite_limit_reached", 400),
    IdempotencyKeyRequired => ("idempotency_key_required", 400),
    InvalidAgentAttribution => ("invalid_agent_attribution", 400),
    InvalidIdempotencyKey => ("invalid_idempotency_key", 400),
    InvalidLabelFilter => ("invalid_label_filter", 400),
    InvalidRelation => ("invalid_relation", 400),
    InvalidSchedule => ("invalid_schedule", 400),
    InvalidSort => ("invalid_sort", 400),
    LastDoneState => ("last_done_state", 400),
    MilestoneNotOnProject => ("milestone_not_on_project", 400),
    MoveBoardStateInvalid => ("move_board_state_invalid", 400),
    NotificationRoutesLimitReached => ("notification_routes_limit_reached", 400),
    ParticipantCannotAccessBoard => ("participant_cannot_access_board", 400),
    PlatformNotConnected => ("platform_not_connected", 400),
    ReactionInvalidEmoji => ("reaction_invalid_emoji", 400),
    ReactionLimitReached => ("reaction_limit_reached", 400),
    ReportSchedulesLimitReached => ("report_schedules_limit_reached", 400),
    RouteScopeNotOrgVisible => ("route_scope_not_org_visible", 400),
    StateNotOnBoard => ("state_not_on_board", 400),
    StatesReorderInvalid => ("states_reorder_invalid", 400),
    SubtaskCrossBoard => ("subtask_cross_board", 400),
    SubtaskDepthExceeded => ("subtask_depth_exceeded", 400),
    TooManyFilterValues => ("too_many_filter_values", 400),
    TooManyItems => ("too_many_items", 400),
    UnknownNotificationKind => ("unknown_notification_kind", 400),
    UpdateBodyTooLong => ("update_body_too_long", 400),
    VersionPreconditionAmbiguous => ("version_precondition_ambiguous", 400),
    ViewLimitReached => ("view_limit_reached", 400),

    // --- Plan area, 402 ---
    TaskBoardsLimitReached => ("task_boards_limit_reached", 402),
    TaskProjectsLimitReached => ("task_projects_limit_reached", 402),

    // --- Plan area, 403 ---
    AttachmentDeleteForbidden => ("attachment_delete_forbidden", 403),
    CommentNotAuthor => ("comment_not_author", 403),
    TaskArchived => ("task_archived", 403),
    UpdateNotAuthor => ("update_not_author", 403),
    ViewVisibilityForbidden => ("view_visibility_forbidden", 403),

    // --- 404 ---
    /// Absent, or not visible to the caller (another organization's object looks exactly the same).
    NotFound => ("not_found", 404),

    // --- Plan area, 409 ---
    AttachmentNotReady => ("attachment_not_ready", 409),
    BoardNotInitialized => ("board_not_initialized", 409),
    DuplicateBoardKey => ("duplicate_board_key", 409),
    GoalNameConflict => ("goal_name_conflict", 409),
    IdempotencyInProgress => ("idempotency_in_progress", 409),
    IdempotencyKeyPayloadMismatch => ("idempotency_key_payload_mismatch", 409),
    IdentifierAllocationFailed => ("identifier_allocation_failed", 409),
    LabelInUse => ("label_in_use", 409),
    LastGrantCannotBeRemoved => ("last_grant_cannot_be_removed", 409),
    ProjectNameConflict => ("project_name_conflict", 409),
    RankNeighborMissing => ("rank_neighbor_missing", 409),
    RelationCycle => ("relation_cycle", 409),
    RelationExists => ("relation_exists", 409),
    StateInUse => ("state_in_use", 409),
    VersionConflict => ("version_conflict", 409),

    // --- preconditions and others ---
    PreconditionFailed => ("precondition_failed", 412),
    PreconditionRequired => ("precondition_required", 428),
    ColumnTooLarge => ("column_too_large", 422),
    NotImplemented => ("not_implemented", 501),
    AttachmentStorageUnavailable => ("attachment_storage_unavailable", 503),
    FeatureTemporarilyReadOnly => ("feature_temporarily_read_only", 503),
    /// A rate-limit budget is exhausted (`extra.retry_after`, header `Retry-After`).
    Throttled => ("throttled", 429),

    // --- framework-level answers (every /v1/ response is JSON, including these) ---
    /// Body or parameter validation failed; `errors` maps fields to messages.
    ParamsValidationError => ("params_validation_error", 400),
    /// The body is not well-formed JSON.
    ParseError => ("parse_error", 400),
    /// The route exists but not for this method.
    MethodNotAllowed => ("method_not_allowed", 405),
    /// The body is larger than the endpoint accepts (`extra.max_size_bytes`).
    PayloadTooLarge => ("payload_too_large", 413),
    /// The request's Content-Type is not JSON.
    UnsupportedMediaType => ("unsupported_media_type", 415),
    /// Unexpected server error; the cause is logged, never sent.
    InternalError => ("internal_error", 500),
    /// A dependency (the database) does not answer; retry later.
    ServiceUnavailable => ("service_unavailable", 503),

    // --- the CLI assistant (issue 10 §2; kept with the framework's 5xx answers) ---
    /// `POST /v1/cli/chat/completions/` on a server with no language model configured
    /// (`TEAMCOMM_LLM_URL`, `TEAMCOMM_LLM_MODEL`); nothing was sent anywhere.
    AssistantNotConfigured => ("assistant_not_configured", 503),
    /// The language model answered with an error or with something that is not a completion.
    AssistantUpstreamError => ("assistant_upstream_error", 502),
    /// The language model did not answer in time.
    AssistantUpstreamTimeout => ("assistant_upstream_timeout", 504),

    // --- directory (added with the directory endpoints) ---
    /// A mood score outside 1..5.
    InvalidScore => ("invalid_score", 400),
    /// The person already recorded a mood score for that day.
    MotivationScoreAlreadyCompleted => ("motivation_score_already_completed", 409),

    // --- check-ins (issue 7) ---
    /// The caller's role may not author check-ins.
    CheckinPermissionDenied => ("checkin_permission_denied", 403),
    /// A reorder sent no `question_uuids`.
    QuestionUuidsRequired => ("question_uuids_required", 400),
    /// A reorder names a question twice.
    QuestionUuidsDuplicate => ("question_uuids_duplicate", 400),
    /// The caller is not a participant of the check-in.
    UserIsNotAFollowupMember => ("user_is_not_a_followup_member", 403),
    /// The check-in is paused or archived.
    ResponsesNotAllowedOnInactiveFollowup => ("responses_not_allowed_on_inactive_followup", 400),
    /// A response for a past day on a check-in that does not allow them.
    PreviousResponsesAreNotAllowed => ("previous_responses_are_not_allowed", 400),
    /// A response for a future day on a check-in that does not allow them.
    FutureResponsesAreNotAllowed => ("future_responses_are_not_allowed", 400),
    /// A response before today's trigger time on a check-in that does not allow it.
    FollowupNotAllowResponsesBeforeTriggerTime => ("followup_not_allow_responses_before_trigger_time", 400),
    /// The check-in id in the path is not a UUID.
    NotValidFollowupUuid => ("not_valid_followup_uuid", 400),
    /// Answers were given against an older set of questions (`extra.current_version`).
    TemplateQuestionsVersionConflict => ("template_questions_version_conflict", 409),
    /// `response_date` is not YYYY-MM-DD.
    ResponseDateFormatIsInvalid => ("response_date_format_is_invalid", 400),
    /// The person already answered the check-in for that day (edit with PUT, reset with DELETE).
    ResponseAlreadyExists => ("response_already_exists", 409),

    // --- forms (issue 7) ---
    /// The caller may not edit this form.
    FormEditForbidden => ("form_edit_forbidden", 403),
    /// A guest submission without `guest_user` on a form that requires name and e-mail.
    GuestUserRequired => ("guest_user_required", 400),
    /// The caller may not see this form's responses.
    UserCanNotSeeFormResponses => ("user_can_not_see_form_responses", 403),
    /// The caller may not edit this response.
    FormResponseEditForbidden => ("form_response_edit_forbidden", 403),
    /// The caller may not delete this response.
    FormResponseDeleteForbidden => ("form_response_delete_forbidden", 403),
    /// The caller may not move this response through the workflow.
    FormResponseChangeStateForbidden => ("form_response_change_state_forbidden", 403),
    /// The response is in a final state and the form does not allow reopening.
    FinalStateLocked => ("final_state_locked", 409),
    /// The workflow has no transition from the response's state to the one asked for.
    WorkflowTransitionNotAllowed => ("workflow_transition_not_allowed", 409),
    /// Someone else moved the response first; read it again.
    WorkflowStateConflict => ("workflow_state_conflict", 409),
    /// Another live form of the organization already uses this command.
    FormCommandTaken => ("form_command_taken", 409),
    /// The form is paused (`is_active: false`) and takes no responses.
    FormNotAcceptingResponses => ("form_not_accepting_responses", 400),

    // --- kudos (issue 7) ---
    /// None of the user receivers is an active person of the organization.
    NoValidUsers => ("no_valid_users", 400),
    /// A team receiver is not a team of the organization.
    NoValidTeam => ("no_valid_team", 400),
    /// The receivers resolve to nobody (no one but the giver, or empty teams).
    NoUsersFound => ("no_users_found", 400),
    /// Kudos to oneself.
    SelfKudosNotAllowed => ("self_kudos_not_allowed", 400),
    /// `company_value` names no company value of the organization.
    CompanyValueNotFound => ("company_value_not_found", 400),
    /// The giver reached the daily kudos limit (`extra.limit`, `extra.retry_after`).
    KudosDailyLimitReached => ("kudos_daily_limit_reached", 406),
    /// The caller already boosted this kudos.
    KudosAlreadyBoosted => ("kudos_already_boosted", 409),

    // --- labels and featured (issue 7) ---
    /// Another label of the organization has this name.
    DuplicateName => ("duplicate_name", 409),
    /// An archived label cannot be put on anything.
    ArchivedLabelNotAssignable => ("archived_label_not_assignable", 400),
    /// Labels need a paid plan.
    PaidPlanRequired => ("paid_plan_required", 403),
    /// The feature is not available to this organization.
    FeatureNotAvailable => ("feature_not_available", 403),
    /// The caller's role does not allow this action.
    PermissionDenied => ("permission_denied", 403),

    // --- messaging (issue 8): send-message buttons and threads, open-conversation ---
    /// A button without a `label`.
    ButtonLabelRequired => ("button_label_required", 400),
    /// A button `label` over 75 characters.
    ButtonLabelTooLong => ("button_label_too_long", 400),
    /// `button_type` is not `link` or `interactive`.
    ButtonTypeInvalid => ("button_type_invalid", 400),
    /// A `link` button without a `url`.
    ButtonUrlRequired => ("button_url_required", 400),
    /// A button `url` (or `callback_url`) that is not an absolute http(s) URL.
    ButtonUrlInvalid => ("button_url_invalid", 400),
    /// An `interactive` button without a `value`.
    ButtonValueRequired => ("button_value_required", 400),
    /// A button `value` over 2,000 characters.
    ButtonValueTooLong => ("button_value_too_long", 400),
    /// More than 25 buttons.
    ButtonLimitExceeded => ("button_limit_exceeded", 400),
    /// `thread_responses` over 10, or one without a `message`.
    InvalidThreadResponses => ("invalid_thread_responses", 400),
    /// People named are not active people of the organization (`extra.users`).
    OneOrMoreUsersNotFound => ("one_or_more_users_not_found", 400),
    /// More than 7 people in a conversation.
    ConversationTooManyParticipants => ("conversation_too_many_participants", 400),
    /// The chat platform refused to open the conversation.
    ConversationCanNotBeOpened => ("conversation_can_not_be_opened", 400),
    /// The organization's chat platform has no group conversations.
    OpenConversationNotSupported => ("open_conversation_not_supported", 406),

    // --- webhooks (issue 9) ---
    /// The organization has as many webhook endpoints as it may (`extra.limit`).
    WebhookEndpointsLimitReached => ("webhook_endpoints_limit_reached", 400),

    // --- workflows (issue 9) ---
    /// Only `api_trigger` workflows can be triggered through the API.
    WorkflowNotTriggerable => ("workflow_not_triggerable", 400),
    /// The trigger `payload` is not a JSON object of at most 8 KiB.
    WorkflowTriggerPayloadInvalid => ("workflow_trigger_payload_invalid", 400),
    /// The caller may not run this workflow.
    WorkflowExecuteNotAllowed => ("workflow_execute_not_allowed", 403),
    /// The workflow is frozen or inactive and cannot run.
    WorkflowFrozen => ("workflow_frozen", 409),

    // --- agents (issue 10 §3) ---
    /// The registration challenge expired (the vendor CLI fetches a new one on "expired").
    AgentChallengeExpired => ("agent_challenge_expired", 400),
    /// The registration challenge is unknown, already used, or its answer is wrong.
    AgentChallengeFailed => ("agent_challenge_failed", 400),
    /// The claim link is unknown, already used or expired.
    AgentClaimLinkInvalid => ("agent_claim_link_invalid", 404),
    /// The registered agent's organization is already claimed: no new claim link.
    AgentOrganizationClaimed => ("agent_organization_claimed", 409),

    // --- Plan (issue 11): codes the real CLI knows that the spec's table does not list ---
    /// An owner, lead or participant is a deactivated person (`extra.parameter`, `extra.uuids`).
    UserInactive => ("user_inactive", 400),
    /// A reorder names both `before` and `after`, itself, or an anchor that is not a sibling.
    ReorderAnchorInvalid => ("reorder_anchor_invalid", 400),
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;
    use std::collections::HashSet;

    /// Renders the catalogue the way the snapshot file stores it.
    fn render() -> String {
        ErrorCode::ALL
            .iter()
            .map(|c| format!("{} {}\n", c.as_str(), c.default_status()))
            .collect()
    }

    #[test]
    fn catalogue_matches_frozen_snapshot() {
        let snapshot = include_str!("../tests/error_catalogue.snapshot");
        let current = render();
        let current_lines: HashSet<&str> = current.lines().collect();
        // Frozen: every line ever published must still be present, unchanged.
        for line in snapshot.lines().filter(|l| !l.is_empty()) {
            assert!(
                current_lines.contains(line),
                "frozen code changed or removed: `{line}`; codes never change meaning or status"
            );
        }
        // And every current code is recorded, so additions are reviewed.
        assert_eq!(
            snapshot, current,
            "catalogue differs from tests/error_catalogue.snapshot; append new codes there"
        );
    }

    #[test]
    fn wire_strings_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "duplicate wire string {code}");
            assert_eq!(ErrorCode::from_wire(code.as_str()), Some(*code));
            assert!(
                code.as_str()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
            );
        }
    }
}
