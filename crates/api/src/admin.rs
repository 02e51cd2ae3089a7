//! `teamcomm admin …`: the operator API's operations straight against the database, printing
//! the same JSON the HTTP operator API answers with.

use clap::Subcommand;
use serde::Serialize;
use teamcomm_kernel::{Error, OrgId, UserId};
use teamcomm_keys::CreateKey;
use teamcomm_org::{NewOrganization, NewUser, OrganizationPatch, UserPatch};

use crate::provision;
use crate::state::AppState;

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create an organization.
    CreateOrg {
        #[arg(long)]
        name: String,
        /// free, starter, business or enterprise
        #[arg(long)]
        plan: String,
        #[arg(long)]
        api_access: Option<bool>,
        #[arg(long)]
        plan_beta: Option<bool>,
        #[arg(long)]
        exchange_tokens: Option<bool>,
    },
    /// Change an organization's name, plan or switches.
    UpdateOrg {
        uuid: OrgId,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        plan: Option<String>,
        #[arg(long)]
        api_access: Option<bool>,
        #[arg(long)]
        plan_beta: Option<bool>,
        #[arg(long)]
        exchange_tokens: Option<bool>,
    },
    /// Add a person to an organization.
    CreateUser {
        org: OrgId,
        #[arg(long)]
        email: String,
        #[arg(long, default_value = "")]
        first_name: String,
        #[arg(long, default_value = "")]
        last_name: String,
        /// admin, member or guest
        #[arg(long)]
        role: String,
        #[arg(long)]
        is_active: Option<bool>,
    },
    /// Activate, deactivate or change the role of a person.
    UpdateUser {
        uuid: UserId,
        #[arg(long)]
        is_active: Option<bool>,
        #[arg(long)]
        role: Option<String>,
    },
    /// Issue a web-session JWT pair for a person (needs TEAMCOMM_JWT_SECRET of the server).
    CreateSession { uuid: UserId },
    /// Issue a CLI bearer token for a person.
    CreateCliToken {
        uuid: UserId,
        #[arg(long)]
        ttl_days: Option<u32>,
    },
    /// Create an API key owned by (and created by) a person; prints the key once.
    CreateApiKey {
        uuid: UserId,
        #[arg(long)]
        name: String,
        #[arg(long)]
        agent: bool,
    },
}

impl AdminCommand {
    /// Whether the command signs tokens the running server must accept.
    pub fn needs_jwt_secret(&self) -> bool {
        matches!(self, AdminCommand::CreateSession { .. })
    }

    pub async fn run(self, state: &AppState) -> Result<String, Error> {
        fn json(v: impl Serialize) -> String {
            serde_json::to_string_pretty(&v).unwrap_or_default()
        }
        Ok(match self {
            AdminCommand::CreateOrg {
                name,
                plan,
                api_access,
                plan_beta,
                exchange_tokens,
            } => {
                let new =
                    NewOrganization::new(&name, &plan, api_access, plan_beta, exchange_tokens)?;
                json(provision::create_organization(state, new).await?)
            }
            AdminCommand::UpdateOrg {
                uuid,
                name,
                plan,
                api_access,
                plan_beta,
                exchange_tokens,
            } => {
                let patch = OrganizationPatch::new(
                    name.as_deref(),
                    plan.as_deref(),
                    api_access,
                    plan_beta,
                    exchange_tokens,
                )?;
                json(provision::update_organization(state, uuid, patch).await?)
            }
            AdminCommand::CreateUser {
                org,
                email,
                first_name,
                last_name,
                role,
                is_active,
            } => {
                let new = NewUser::new(&email, &first_name, &last_name, &role, is_active)?;
                json(provision::create_user(state, org, new).await?)
            }
            AdminCommand::UpdateUser {
                uuid,
                is_active,
                role,
            } => json(
                provision::update_user(state, uuid, UserPatch::new(is_active, role.as_deref())?)
                    .await?,
            ),
            AdminCommand::CreateSession { uuid } => {
                json(provision::create_session(state, uuid).await?)
            }
            AdminCommand::CreateCliToken { uuid, ttl_days } => {
                json(provision::create_cli_token(state, uuid, ttl_days).await?)
            }
            AdminCommand::CreateApiKey { uuid, name, agent } => {
                let user = state.organizations.find_user(uuid).await?;
                let input = CreateKey {
                    name,
                    is_agent_key: agent,
                    ..CreateKey::default()
                };
                let (key, secret) = state.keys.create_key(&user, input).await?;
                json(
                    serde_json::json!({"id": key.id.to_string(), "name": key.name, "key": secret.expose()}),
                )
            }
        })
    }
}
