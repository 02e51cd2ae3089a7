//! Provisioning operations shared by the operator HTTP API and the `teamcomm admin` command,
//! so both apply the same validation and print the same JSON shapes.

use serde::Serialize;
use teamcomm_kernel::{Error, OrgId, UserId};
use teamcomm_messaging::{Channel, NewChannel};
use teamcomm_org::{NewOrganization, NewUser, Organization, OrganizationPatch, User, UserPatch};
use utoipa::ToSchema;

use crate::jwt::TokenPair;
use crate::state::AppState;
use crate::views::iso;

#[derive(Debug, Serialize, ToSchema)]
pub struct OperatorOrganizationView {
    pub uuid: String,
    pub name: String,
    pub plan: String,
    pub api_access: bool,
    pub plan_beta: bool,
    pub exchange_tokens: bool,
    pub platform: Option<String>,
    pub created_at: String,
}

impl From<&Organization> for OperatorOrganizationView {
    fn from(o: &Organization) -> Self {
        OperatorOrganizationView {
            uuid: o.id.to_string(),
            name: o.name.clone(),
            plan: o.plan.as_str().to_owned(),
            api_access: o.api_access,
            plan_beta: o.plan_beta,
            exchange_tokens: o.exchange_tokens,
            platform: o.platform.clone(),
            created_at: iso(o.created_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OperatorUserView {
    pub uuid: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub role: String,
    pub is_active: bool,
}

impl From<&User> for OperatorUserView {
    fn from(u: &User) -> Self {
        OperatorUserView {
            uuid: u.id.to_string(),
            email: u.email.clone(),
            first_name: u.first_name.clone(),
            last_name: u.last_name.clone(),
            role: u.role.as_str().to_owned(),
            is_active: u.is_active,
        }
    }
}

/// A CLI token, shown once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CliTokenView {
    pub token: String,
    pub expires_at: Option<String>,
}

pub async fn create_organization(
    state: &AppState,
    new: NewOrganization,
) -> Result<OperatorOrganizationView, Error> {
    let org = state.organizations.create_organization(&new).await?;
    Ok((&org).into())
}

pub async fn update_organization(
    state: &AppState,
    id: OrgId,
    patch: OrganizationPatch,
) -> Result<OperatorOrganizationView, Error> {
    let org = state.organizations.update_organization(id, &patch).await?;
    Ok((&org).into())
}

pub async fn create_user(
    state: &AppState,
    org: OrgId,
    new: NewUser,
) -> Result<OperatorUserView, Error> {
    let user = state.organizations.create_user(org, &new).await?;
    Ok((&user).into())
}

pub async fn update_user(
    state: &AppState,
    id: UserId,
    patch: UserPatch,
) -> Result<OperatorUserView, Error> {
    let user = state.organizations.update_user(id, &patch).await?;
    Ok((&user).into())
}

pub async fn create_session(state: &AppState, id: UserId) -> Result<TokenPair, Error> {
    let user = state.organizations.active_user(id).await?;
    state.jwt.issue_pair(user.id, user.org_id)
}

pub async fn create_cli_token(
    state: &AppState,
    id: UserId,
    ttl_days: Option<u32>,
) -> Result<CliTokenView, Error> {
    let user = state.organizations.active_user(id).await?;
    let ttl = ttl_days.map(|d| time::Duration::days(i64::from(d)));
    let secret = state.keys.issue_cli_token(&user, ttl).await?;
    Ok(CliTokenView {
        token: secret.expose().to_owned(),
        expires_at: ttl.map(|ttl| iso(time::OffsetDateTime::now_utc() + ttl)),
    })
}

/// Registers (or renames) a chat channel of `org` (404 when there is no such organization). Its
/// platform defaults to the one the organization connected, its type to `channel`.
pub async fn register_channel(
    state: &AppState,
    org: OrgId,
    id: &str,
    name: &str,
    platform: Option<&str>,
    channel_type: Option<&str>,
) -> Result<Channel, Error> {
    let connected = state.organizations.chat_platform(org).await?;
    let new = NewChannel::new(
        id,
        name,
        platform.unwrap_or(&connected),
        channel_type.unwrap_or("channel"),
    )?;
    state.channels.register(org, &new).await
}
