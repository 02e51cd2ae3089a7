//! `teamcomm admin …`: the operator API's operations straight against the database, printing
//! the same JSON the HTTP operator API answers with.
//!
//! The platform commands seal and unseal chat-platform secrets: they run only when
//! `TEAMCOMM_PLATFORM_SECRET_KEY` is set, so that what they seal is what the server unseals
//! (without it the key would be the JWT secret, which `admin` makes up when it is unset too).
//! A platform secret is never an argument (arguments are visible to every user in `ps`): it
//! is read from a named environment variable or from standard input.

use std::io::Read;

use clap::{ArgGroup, Subcommand};
use serde::Serialize;
use teamcomm_kernel::{Error, ErrorCode, OrgId, UserId};
use teamcomm_keys::CreateKey;
use teamcomm_messaging::connections::NewPlatformConnection;
use teamcomm_org::{NewOrganization, NewUser, OrganizationPatch, UserPatch};

use crate::provision;
use crate::routes::messaging::PlatformConnectionView;
use crate::state::AppState;

/// What the platform commands require to be set explicitly.
pub const PLATFORM_SECRET_KEY_VAR: &str = "TEAMCOMM_PLATFORM_SECRET_KEY";

/// Where a command reads what must not be an argument: the environment and standard input
/// (tests hand their own).
pub struct AdminInputs<'a> {
    /// An environment variable's value, if set.
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// Standard input, read to its end by `--secret-stdin`.
    pub stdin: &'a mut dyn Read,
}

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
    /// Connect an organization to its chat platform, replacing its connection (needs
    /// TEAMCOMM_PLATFORM_SECRET_KEY of the server). The bot token is never an argument (`ps`
    /// shows arguments): name the environment variable holding it with --secret-env, or pipe
    /// it in with --secret-stdin.
    #[command(group(ArgGroup::new("secret").required(true).args(["secret_env", "secret_stdin"])))]
    ConnectPlatform {
        org: OrgId,
        /// matrix or slack
        #[arg(long)]
        kind: String,
        /// The Matrix homeserver URL (required for Matrix); for Slack, another Web API base.
        #[arg(long)]
        base_url: Option<String>,
        /// Read the bot token from this environment variable, e.g. --secret-env SLACK_BOT_TOKEN.
        #[arg(long, value_name = "VAR")]
        secret_env: Option<String>,
        /// Read the bot token from standard input (surrounding whitespace ignored).
        #[arg(long)]
        secret_stdin: bool,
        /// Slack only: read the app's signing secret (which lets the organization's Slack
        /// events and clicks in) from this environment variable.
        #[arg(long, value_name = "VAR")]
        signing_secret_env: Option<String>,
    },
    /// Show an organization's platform connection (never its secret; needs
    /// TEAMCOMM_PLATFORM_SECRET_KEY of the server).
    ShowPlatform { org: OrgId },
    /// Disconnect an organization from its chat platform; its people's platform identities are
    /// kept (needs TEAMCOMM_PLATFORM_SECRET_KEY of the server).
    DisconnectPlatform { org: OrgId },
    /// Record who a person is on the organization's connected platform, or forget it with
    /// --forget (needs TEAMCOMM_PLATFORM_SECRET_KEY of the server).
    #[command(group(ArgGroup::new("identity").required(true).args(["platform_user_id", "forget"])))]
    MapPlatformIdentity {
        org: OrgId,
        user: UserId,
        /// A Matrix user id (@ada:example.org) or a Slack user id (U…).
        #[arg(long)]
        platform_user_id: Option<String>,
        #[arg(long)]
        forget: bool,
    },
}

impl AdminCommand {
    /// Whether the command signs tokens the running server must accept.
    pub fn needs_jwt_secret(&self) -> bool {
        matches!(self, AdminCommand::CreateSession { .. })
    }

    /// Whether the command seals or unseals platform secrets: it needs
    /// [`PLATFORM_SECRET_KEY_VAR`] set.
    pub fn needs_platform_secret_key(&self) -> bool {
        matches!(
            self,
            AdminCommand::ConnectPlatform { .. }
                | AdminCommand::ShowPlatform { .. }
                | AdminCommand::DisconnectPlatform { .. }
                | AdminCommand::MapPlatformIdentity { .. }
        )
    }

    /// Runs the command with this process's environment and standard input.
    pub async fn run(self, state: &AppState) -> Result<String, Error> {
        let var = |name: &str| std::env::var(name).ok();
        let mut stdin = std::io::stdin();
        self.run_with(
            state,
            AdminInputs {
                var: &var,
                stdin: &mut stdin,
            },
        )
        .await
    }

    /// Runs the command, reading secrets and the environment from `inputs`.
    pub async fn run_with(
        self,
        state: &AppState,
        inputs: AdminInputs<'_>,
    ) -> Result<String, Error> {
        fn json(v: impl Serialize) -> String {
            serde_json::to_string_pretty(&v).unwrap_or_default()
        }
        if self.needs_platform_secret_key()
            && (inputs.var)(PLATFORM_SECRET_KEY_VAR).is_none_or(|k| k.is_empty())
        {
            return Err(Error::new(
                ErrorCode::ParamsValidationError,
                "TEAMCOMM_PLATFORM_SECRET_KEY is not set: platform commands seal and read \
                 platform secrets with the server's key, so set it as the server has it",
            ));
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
            AdminCommand::ConnectPlatform {
                org,
                kind,
                base_url,
                secret_env,
                secret_stdin,
                signing_secret_env,
            } => {
                let signing_secret = match signing_secret_env {
                    Some(name) => Some((inputs.var)(&name).ok_or_else(|| {
                        Error::new(
                            ErrorCode::ParamsValidationError,
                            format!("The environment variable {name} is not set."),
                        )
                    })?),
                    None => None,
                };
                let secret = read_secret(secret_env.as_deref(), secret_stdin, inputs)?;
                let summary = state
                    .platforms
                    .connect(
                        org,
                        &NewPlatformConnection {
                            kind,
                            base_url,
                            secret,
                            signing_secret,
                        },
                    )
                    .await?;
                json(PlatformConnectionView::from(&summary))
            }
            AdminCommand::ShowPlatform { org } => {
                let summary = state
                    .platforms
                    .connection(org)
                    .await?
                    .ok_or_else(Error::not_found)?;
                json(PlatformConnectionView::from(&summary))
            }
            AdminCommand::DisconnectPlatform { org } => {
                state.platforms.disconnect(org).await?;
                json(serde_json::json!({"uuid": org.to_string(), "platform": null}))
            }
            AdminCommand::MapPlatformIdentity {
                org,
                user,
                platform_user_id,
                forget,
            } => {
                let id = match (platform_user_id, forget) {
                    (Some(id), false) => Some(id),
                    (None, true) => None,
                    _ => {
                        return Err(Error::invalid_field(
                            "platform_user_id",
                            "Give either --platform-user-id or --forget.",
                        ));
                    }
                };
                state.platforms.map_person(org, user, id.as_deref()).await?;
                json(serde_json::json!({
                    "uuid": user.to_string(),
                    "platform_user_id": id.map(|id| id.trim().to_owned()),
                }))
            }
        })
    }
}

/// The platform secret from the named environment variable or standard input (exactly one).
fn read_secret(env: Option<&str>, stdin: bool, inputs: AdminInputs<'_>) -> Result<String, Error> {
    let refuse = |detail: String| Err(Error::new(ErrorCode::ParamsValidationError, detail));
    match (env, stdin) {
        (Some(name), false) => match (inputs.var)(name) {
            Some(secret) => Ok(secret),
            None => refuse(format!("The environment variable {name} is not set.")),
        },
        (None, true) => {
            let mut secret = String::new();
            if let Err(e) = inputs.stdin.read_to_string(&mut secret) {
                return refuse(format!("Standard input could not be read: {e}"));
            }
            Ok(secret)
        }
        _ => refuse("Give either --secret-env VAR or --secret-stdin.".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        command: AdminCommand,
    }

    const ORG: &str = "6f1c1e52-8a8e-4c1e-9a43-0d9c5e1b2f01";

    #[test]
    fn a_platform_secret_is_never_an_argument_and_its_source_is_required() {
        let parse = |args: &[&str]| Cli::try_parse_from([&["teamcomm"], args].concat());
        assert!(
            parse(&[
                "connect-platform",
                ORG,
                "--kind",
                "slack",
                "--secret",
                "xoxb"
            ])
            .is_err()
        );
        assert!(parse(&["connect-platform", ORG, "--kind", "slack"]).is_err());
        assert!(
            parse(&[
                "connect-platform",
                ORG,
                "--kind",
                "slack",
                "--secret-env",
                "T",
                "--secret-stdin"
            ])
            .is_err()
        );
        let cli = parse(&[
            "connect-platform",
            ORG,
            "--kind",
            "slack",
            "--secret-env",
            "T",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            AdminCommand::ConnectPlatform { secret_env: Some(v), secret_stdin: false, .. } if v == "T"
        ));
        assert!(parse(&["map-platform-identity", ORG, ORG]).is_err());

        let mut cmd = Cli::command();
        let help = cmd
            .find_subcommand_mut("connect-platform")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(
            help.contains("--secret-env") && help.contains("--secret-stdin") && help.contains("ps"),
            "{help}"
        );
        assert!(help.contains("TEAMCOMM_PLATFORM_SECRET_KEY"), "{help}");
    }
}
