//! The CLI's one-time-code login (wire contract §2.3): `POST /v1/cli/auth/request-code/`,
//! `POST /v1/cli/auth/verify-code/` (no credential; the `auth` budget per client address and per
//! login address), `GET /v1/cli/auth/status/` (who the credential is) and
//! `POST /v1/cli/auth/logout/` (revokes the calling CLI token). Rules: `teamcomm_keys::LoginService`.

use actix_web::{HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use teamcomm_keys::{CredentialKind, LoginOrganization, Verified};
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::JsonBody;
use crate::state::AppState;

/// Body of `POST /v1/cli/auth/request-code/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestCodeBody {
    /// The address to mail the code to (case and surrounding blanks do not matter).
    #[schema(
        min_length = 3,
        max_length = 254,
        pattern = r"^\s*[^@\s]+@[^@\s]+\s*$",
        example = "ada@example.com"
    )]
    email: String,
}

/// An organization to log in to; `id` is what `verify-code` takes as `organization_id`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoginOrganizationView {
    /// The organization's integer id in the login flow (stable; the only integer id of the API).
    pub id: i64,
    pub uuid: String,
    pub name: String,
}

impl From<&LoginOrganization> for LoginOrganizationView {
    fn from(o: &LoginOrganization) -> Self {
        LoginOrganizationView {
            id: o.number,
            uuid: o.organization.id.to_string(),
            name: o.organization.name.clone(),
        }
    }
}

fn views(organizations: &[LoginOrganization]) -> Vec<LoginOrganizationView> {
    organizations.iter().map(Into::into).collect()
}

/// Answer of `POST /v1/cli/auth/request-code/`: the same for an unknown address as for an
/// address with one organization.
#[derive(Debug, Serialize, ToSchema)]
pub struct CodeRequestedView {
    pub detail: String,
    /// True when the address has several organizations (listed in `organizations`).
    pub is_multi_org: bool,
    /// The address's organizations when it has several; else empty.
    pub organizations: Vec<LoginOrganizationView>,
}

#[utoipa::path(
    tag = "cli",
    request_body = RequestCodeBody,
    responses(
        (status = 200, description = "A code was mailed if the address has an account (valid 10 minutes; a new request replaces the earlier code)", body = CodeRequestedView),
        (status = 400, description = "`params_validation_error`: not an address", body = ErrorBody),
        (status = 429, description = "`throttled`: the `auth` budget of the client or of the address is spent", body = ErrorBody),
    )
)]
#[post("/v1/cli/auth/request-code/")]
pub async fn request_code(
    state: web::Data<AppState>,
    body: JsonBody<RequestCodeBody>,
) -> ApiResult<HttpResponse> {
    let requested = state
        .login
        .request_code(&state.rate_limits, &body.0.email)
        .await?;
    Ok(HttpResponse::Ok().json(CodeRequestedView {
        detail: "If this address has an account, a verification code was sent to it.".into(),
        is_multi_org: requested.is_multi_org(),
        organizations: views(&requested.organizations),
    }))
}

/// Body of `POST /v1/cli/auth/verify-code/`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyCodeBody {
    #[schema(
        min_length = 3,
        max_length = 254,
        pattern = r"^\s*[^@\s]+@[^@\s]+\s*$",
        example = "ada@example.com"
    )]
    email: String,
    /// The 6-digit code of the mail.
    #[schema(min_length = 1, max_length = 32, example = "042917")]
    code: String,
    /// The chosen organization's `id` (from `organizations`), for an address with several.
    #[serde(default)]
    organization_id: Option<i64>,
}

/// The organization a login is for.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoggedInOrganization {
    pub uuid: String,
    pub name: String,
    /// `free`, `starter`, `business` or `enterprise` (the CLI refuses some commands locally on
    /// `free`).
    pub plan: String,
}

/// A finished login.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoggedInView {
    /// The CLI token (`Authorization: Bearer`), shown this once.
    pub token: String,
    pub organization: LoggedInOrganization,
    pub organization_uuid: String,
    pub plan: String,
    /// When the token stops working (30 days after the login; use does not extend it).
    #[schema(format = DateTime)]
    pub expires_at: String,
}

/// The code is right but the address has several organizations: choose one and post the same
/// code again with its `id` as `organization_id` (the code is not used up).
#[derive(Debug, Serialize, ToSchema)]
pub struct ChooseOrganizationView {
    pub requires_organization_selection: bool,
    pub organizations: Vec<LoginOrganizationView>,
}

/// Answer of `POST /v1/cli/auth/verify-code/`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum VerifyCodeView {
    LoggedIn(LoggedInView),
    ChooseOrganization(ChooseOrganizationView),
}

#[utoipa::path(
    tag = "cli",
    request_body = VerifyCodeBody,
    responses(
        (status = 200, description = "Logged in, or the organizations to choose from (the code stays good)", body = VerifyCodeView),
        (status = 400, description = "`login_code_invalid` (wrong code; 5 wrong tries kill it), `login_code_expired` (none live: expired, used, replaced or dead), `login_organization_invalid`, `params_validation_error`", body = ErrorBody),
        (status = 429, description = "`throttled`: the `auth` budget of the client or of the address is spent", body = ErrorBody),
    )
)]
#[post("/v1/cli/auth/verify-code/")]
pub async fn verify_code(
    state: web::Data<AppState>,
    body: JsonBody<VerifyCodeBody>,
) -> ApiResult<HttpResponse> {
    let VerifyCodeBody {
        email,
        code,
        organization_id,
    } = body.0;
    let view = match state
        .login
        .verify_code(&state.rate_limits, &email, &code, organization_id)
        .await?
    {
        Verified::ChooseOrganization(organizations) => {
            VerifyCodeView::ChooseOrganization(ChooseOrganizationView {
                requires_organization_selection: true,
                organizations: views(&organizations),
            })
        }
        Verified::LoggedIn(login) => {
            let org = &login.organization;
            VerifyCodeView::LoggedIn(LoggedInView {
                token: login.token.expose().to_owned(),
                organization: LoggedInOrganization {
                    uuid: org.id.to_string(),
                    name: org.name.clone(),
                    plan: org.plan.as_str().to_owned(),
                },
                organization_uuid: org.id.to_string(),
                plan: org.plan.as_str().to_owned(),
                expires_at: crate::views::iso(login.expires_at),
            })
        }
    };
    Ok(HttpResponse::Ok().json(view))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StatusUser {
    pub uuid: String,
    pub email: String,
    pub full_name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StatusOrganization {
    pub uuid: String,
    pub name: String,
}

/// Answer of `GET /v1/cli/auth/status/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuthStatusView {
    pub authenticated: bool,
    pub user: StatusUser,
    pub organization: StatusOrganization,
    /// The credential of the request: `cli_token` or `api_key`.
    pub via: String,
}

#[utoipa::path(
    tag = "cli",
    responses(
        (status = 200, description = "Who the credential is", body = AuthStatusView),
        (status = 401, description = "Missing, invalid, expired or revoked credential", body = ErrorBody),
    )
)]
#[get("/v1/cli/auth/status/")]
pub async fn auth_status(caller: Caller) -> HttpResponse {
    let Caller(principal) = caller;
    let via = match principal.credential {
        CredentialKind::CliToken { .. } => "cli_token",
        CredentialKind::ApiKey { .. } => "api_key",
        CredentialKind::Session => "session",
    };
    HttpResponse::Ok().json(AuthStatusView {
        authenticated: true,
        user: StatusUser {
            uuid: principal.user.id.to_string(),
            email: principal.user.email.clone(),
            full_name: principal.user.full_name(),
        },
        organization: StatusOrganization {
            uuid: principal.org.id.to_string(),
            name: principal.org.name.clone(),
        },
        via: via.to_owned(),
    })
}

/// Answer of `POST /v1/cli/auth/logout/`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoggedOutView {
    pub detail: String,
}

#[utoipa::path(
    tag = "cli",
    responses(
        (status = 200, description = "The calling CLI token is revoked: the next request with it is 401", body = LoggedOutView),
        (status = 401, description = "Missing, invalid, expired or revoked credential", body = ErrorBody),
        (status = 403, description = "`insufficient_scope`: an API key has no session to end", body = ErrorBody),
    )
)]
#[post("/v1/cli/auth/logout/")]
pub async fn logout(state: web::Data<AppState>, caller: Caller) -> ApiResult<HttpResponse> {
    state.login.logout(&caller.0).await?;
    Ok(HttpResponse::Ok().json(LoggedOutView {
        detail: "Logged out.".into(),
    }))
}
