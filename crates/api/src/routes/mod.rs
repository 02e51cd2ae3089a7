//! HTTP routes, one module per area, and the route table: [`declare`] registers every route
//! with its policy (credentials, rate scope, CLI access, admin only). A route registered here is
//! served, documented in `/v1/openapi.json`, and guarded by its policy.

pub mod agents;
pub mod api_keys;
pub mod bench;
pub mod catalog;
pub mod checkins;
pub mod cli;
pub mod cli_auth;
pub mod forms;
pub mod health;
pub mod integrations;
pub mod invitations;
pub mod kudos;
pub mod labels;
pub mod me;
pub mod messaging;
pub mod operator;
pub mod people;
pub mod plan;
pub mod questions;
pub mod session;
pub mod teams;
pub mod webhooks;
pub mod workflows;

use std::sync::OnceLock;

use teamcomm_keys::DailyLimit::{AgentReports, Emails};
use teamcomm_keys::RateScope::{Agent, Email, Invitations, Messaging, WorkflowTriggers};
use utoipa_actix_web::service_config::ServiceConfig;

use crate::policy::{Policy as P, Registry, Routes};

/// The route table. Fixed segments come before `{id}` ones: actix tries routes in order.
pub fn declare(r: &mut Routes<'_, '_>) {
    r.add(health::healthz, P::public())
        .add(health::readyz, P::public())
        .add(health::openapi_json, P::public())
        // Identity and key management.
        .add(me::get_me, P::read().cli_on_any_plan())
        .add(
            api_keys::create_api_key,
            P::session(teamcomm_keys::RateScope::Writes),
        )
        .add(
            api_keys::list_api_keys,
            P::session(teamcomm_keys::RateScope::Reads),
        )
        .add(
            api_keys::get_api_key,
            P::session(teamcomm_keys::RateScope::Reads),
        )
        .add(
            api_keys::update_api_key,
            P::session(teamcomm_keys::RateScope::Writes),
        )
        .add(
            api_keys::delete_api_key,
            P::session(teamcomm_keys::RateScope::Writes),
        )
        .add(session::refresh_token, P::public())
        // The CLI's one-time-code login: no credential, the `auth` budget per client address
        // (and per login address, spent by the service); who-am-I and logout on any plan.
        .add(
            cli_auth::request_code,
            P::anonymous(teamcomm_keys::RateScope::Auth),
        )
        .add(
            cli_auth::verify_code,
            P::anonymous(teamcomm_keys::RateScope::Auth),
        )
        .add(cli_auth::auth_status, P::read().cli_on_any_plan())
        .add(
            cli_auth::logout,
            P::api(teamcomm_keys::RateScope::Auth).cli_on_any_plan(),
        )
        // The directory: read-only to CLI sessions.
        .add(people::get_organization, P::read().cli_on_any_plan())
        .add(people::list_users, P::read())
        .add(people::get_user, P::read())
        .add(people::update_user, P::write().api_key_only())
        .add(people::list_important_dates, P::read())
        .add(people::get_important_date, P::read())
        .add(teams::list_teams, P::read())
        .add(teams::create_team, P::write().api_key_only().admin_only())
        .add(teams::get_team, P::read())
        .add(teams::update_team, P::write().api_key_only().admin_only())
        .add(teams::archive_team, P::write().api_key_only().admin_only())
        .add(teams::list_members, P::read())
        .add(teams::get_member, P::read().admin_only())
        .add(teams::put_member, P::write().api_key_only().admin_only())
        .add(teams::patch_member, P::write().api_key_only().admin_only())
        .add(teams::remove_member, P::write().api_key_only().admin_only())
        .add(
            teams::invite_to_team,
            P::api(Invitations).api_key_only().admin_only(),
        )
        // Invitations.
        .add(invitations::invite_user, P::api(Invitations))
        .add(invitations::list_member_invitations, P::read().admin_only())
        .add(invitations::list_all_invitations, P::read().admin_only())
        .add(invitations::list_guest_invitations, P::read().admin_only())
        .add(invitations::get_guest_invitation, P::read().admin_only())
        .add(
            invitations::delete_guest_invitation,
            P::write().admin_only(),
        )
        .add(invitations::get_invitation, P::read().admin_only())
        .add(invitations::delete_invitation, P::write().admin_only())
        // Templates, report channels, mood.
        .add(catalog::list_templates, P::read())
        .add(catalog::get_template, P::read())
        .add(catalog::list_report_channels, P::read())
        .add(catalog::get_mood, P::read())
        .add(catalog::track_mood, P::write())
        // Kudos: the organization's whole list is admin only and API keys only (the matrix).
        .add(kudos::give_kudos, P::write())
        .add(kudos::list_kudos, P::read())
        .add(
            kudos::list_organization_kudos,
            P::read().api_key_only().admin_only(),
        )
        .add(kudos::wall_of_fame, P::read())
        .add(kudos::list_company_values, P::read())
        .add(kudos::boost_kudos, P::write())
        // Organization labels, the labels entities carry (before other routes of those
        // collections: `labels` is a fixed segment), private featured stars.
        .add(labels::get_entitlement, P::read())
        .add(labels::list_labels, P::read())
        .add(labels::create_label, P::write())
        .add(labels::get_label, P::read())
        .add(labels::update_label, P::write())
        .add(labels::delete_label, P::write())
        .add(labels::archive_label, P::write())
        .add(labels::batch_label_forms, P::write())
        .add(labels::label_form, P::write())
        .add(labels::batch_label_checkins, P::write())
        .add(labels::label_checkin, P::write())
        .add(labels::batch_label_workflows, P::write())
        .add(labels::label_workflow, P::write())
        .add(labels::list_featured, P::read())
        .add(labels::set_featured, P::write())
        .add(labels::batch_featured, P::write())
        // Workflows (after their `labels` doors): reads for every credential; authoring with an
        // API key only (the matrix); a trigger spends its own budget.
        .add(workflows::list_workflows, P::read())
        .add(workflows::create_workflow, P::write().api_key_only())
        .add(workflows::get_workflow, P::read())
        .add(workflows::update_workflow, P::write().api_key_only())
        .add(workflows::delete_workflow, P::write().api_key_only())
        .add(workflows::trigger_workflow, P::api(WorkflowTriggers))
        .add(workflows::list_runs, P::read())
        // Webhook endpoints: API keys only; the legacy subscription form is admin only too.
        .add(webhooks::create_webhook, P::write().api_key_only())
        .add(webhooks::list_webhooks, P::read().api_key_only())
        .add(webhooks::get_webhook, P::read().api_key_only())
        .add(webhooks::delete_webhook, P::write().api_key_only())
        .add(webhooks::send_sample, P::write().api_key_only())
        .add(webhooks::list_deliveries, P::read().api_key_only())
        .add(webhooks::enable_webhook, P::write().api_key_only())
        .add(webhooks::replay_webhook, P::write().api_key_only())
        .add(
            webhooks::create_subscription,
            P::write().api_key_only().admin_only(),
        )
        .add(
            webhooks::send_subscription_sample,
            P::write().api_key_only().admin_only(),
        )
        .add(
            webhooks::delete_subscription,
            P::write().api_key_only().admin_only(),
        )
        // Check-ins: fixed segments (`create`, `reorder`) before `{uuid}` ones. Creating is
        // role-gated by the service; the spec's `/v1/followups/` door is admin only.
        .add(checkins::list_checkins, P::read())
        .add(checkins::create_checkin, P::write())
        .add(checkins::create_followup, P::write().admin_only())
        .add(checkins::get_checkin, P::read())
        .add(checkins::get_checkin_detail, P::read())
        .add(checkins::update_checkin_config, P::write())
        .add(checkins::archive_checkin, P::write())
        .add(checkins::add_question, P::write())
        .add(checkins::reorder_questions, P::write())
        .add(checkins::update_question, P::write())
        .add(checkins::delete_question, P::write())
        .add(checkins::submit_response, P::write())
        .add(checkins::edit_response, P::write())
        .add(checkins::reset_responses, P::write())
        .add(checkins::list_responses, P::read())
        // CLI helpers: the caller's check-ins pending today (on the free-plan allow-list) and
        // progress updates attached to them as today's responses.
        .add(cli::get_status, P::read().cli_on_any_plan())
        .add(cli::post_update, P::write())
        // The assistant: the writes budget, and 30 questions a minute per credential.
        .add(cli::chat_completion, P::write())
        // Forms: fixed segments (`form-owners`, `create`, `reorder`) before `{uuid}` ones.
        // Authoring and response rules are the service's.
        .add(forms::list_forms, P::read())
        .add(forms::list_form_owners, P::read())
        .add(forms::create_form, P::write())
        .add(forms::get_form, P::read())
        .add(forms::update_form_config, P::write())
        .add(forms::archive_form, P::write())
        .add(forms::add_question, P::write())
        .add(forms::reorder_questions, P::write())
        .add(forms::update_question, P::write())
        .add(forms::delete_question, P::write())
        .add(forms::list_responses, P::read())
        .add(forms::submit_response, P::write())
        .add(forms::get_response, P::read())
        .add(forms::edit_response, P::write())
        .add(forms::delete_response, P::write())
        .add(forms::transition_response, P::write())
        // Messaging: sends spend the messaging or e-mail budget; the status view is a read.
        // A member's CLI session is role-scoped by the service; e-mail is on the free-plan
        // allow-list.
        .add(messaging::send_message, P::api(Messaging))
        .add(messaging::get_message, P::read())
        .add(messaging::open_conversation, P::api(Messaging).admin_only())
        .add(
            messaging::send_email,
            P::api(Email).cli_on_any_plan().free_plan_daily(Emails),
        )
        // Like send-email, on any plan for a CLI session: who may send may read the outcome.
        .add(messaging::get_email, P::read().cli_on_any_plan())
        // Agent doors.
        .add(
            agents::send_agent_email,
            P::api(Agent).free_plan_daily(Emails).agent_keys(),
        )
        // The other agent doors take agent keys too, and CLI sessions on any plan (the spec's
        // free-plan allow-list; a free-plan session's reports count against the daily limit);
        // registration takes no credential but spends the agent budget per client address, the
        // claim preview takes none, the claim a person's web session.
        .add(
            agents::create_report,
            P::api(Agent)
                .cli_on_any_plan()
                .agent_keys()
                .free_plan_daily(AgentReports),
        )
        .add(
            agents::post_health,
            P::api(Agent).cli_on_any_plan().agent_keys(),
        )
        .add(
            agents::get_health,
            P::api(Agent).cli_on_any_plan().agent_keys(),
        )
        .add(
            agents::get_health_alias,
            P::api(Agent).cli_on_any_plan().agent_keys(),
        )
        .add(
            agents::send_message,
            P::api(Agent).cli_on_any_plan().agent_keys(),
        )
        .add(
            agents::list_messages,
            P::api(Agent).cli_on_any_plan().agent_keys(),
        )
        .add(
            agents::mark_read,
            P::api(Agent).cli_on_any_plan().agent_keys(),
        )
        .add(
            agents::mark_read_post,
            P::api(Agent).cli_on_any_plan().agent_keys(),
        )
        // An agent's webhook is not on the free-plan list: paid plans' CLI sessions and keys.
        .add(agents::set_webhook, P::api(Agent).agent_keys())
        .add(agents::delete_webhook, P::api(Agent).agent_keys())
        .add(agents::register_challenge, P::anonymous(Agent))
        .add(agents::register, P::anonymous(Agent))
        .add(
            agents::renew_claim,
            P::api(Agent).cli_on_any_plan().agent_keys(),
        )
        .add(agents::preview_claim, P::public())
        .add(agents::claim, P::session(Agent))
        // Operator provisioning.
        .add(operator::create_organization, P::operator())
        .add(operator::update_organization, P::operator())
        .add(operator::create_user, P::operator())
        .add(operator::update_user, P::operator())
        .add(operator::create_session, P::operator())
        .add(operator::create_cli_token, P::operator())
        .add(operator::register_channel, P::operator())
        .add(kudos::register_company_value, P::operator())
        .add(messaging::connect_platform, P::operator())
        .add(messaging::get_platform, P::operator())
        .add(messaging::disconnect_platform, P::operator())
        .add(messaging::set_platform_identity, P::operator())
        .add(messaging::remove_platform_identity, P::operator());
    // The Plan (Beta) area: each module's part of the table (`routes/plan/`).
    plan::declare(r);
}

/// Registers every route of the table.
pub fn configure(cfg: &mut ServiceConfig) {
    let mut routes = Routes::registering(cfg);
    declare(&mut routes);
    routes.finish();
}

/// The table's routes and policies, built once.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry::from_table(declare))
}
