//! `--demo`: on an empty database, provisions a demo organization (an admin, two members and a
//! team) and prints the admin's API key once, with a ready `curl` line.

use teamcomm_kernel::Error;
use teamcomm_keys::CreateKey;
use teamcomm_org::{NewOrganization, NewUser};

use crate::state::AppState;

/// What the demo created; `None` when the database already held data.
pub struct DemoSeed {
    pub org_name: String,
    pub admin_email: String,
    pub api_key: String,
}

pub async fn seed_if_empty(state: &AppState) -> Result<Option<DemoSeed>, Error> {
    if !state.organizations.is_empty().await? {
        return Ok(None);
    }
    let org = state
        .organizations
        .create_organization(&NewOrganization::new(
            "Demo Organization",
            "business",
            None,
            None,
            None,
        )?)
        .await?;
    let admin = state
        .organizations
        .create_user(
            org.id,
            &NewUser::new("ada@demo.teamcomm.dev", "Ada", "Lovelace", "admin", None)?,
        )
        .await?;
    let grace = state
        .organizations
        .create_user(
            org.id,
            &NewUser::new("grace@demo.teamcomm.dev", "Grace", "Hopper", "member", None)?,
        )
        .await?;
    let alan = state
        .organizations
        .create_user(
            org.id,
            &NewUser::new("alan@demo.teamcomm.dev", "Alan", "Turing", "member", None)?,
        )
        .await?;
    state
        .teams
        .create_team(&admin, "Core", &[admin.id, grace.id, alan.id])
        .await?;
    let (_, secret) = state
        .keys
        .create_key(
            &admin,
            CreateKey {
                name: "Demo key".into(),
                ..CreateKey::default()
            },
        )
        .await?;
    Ok(Some(DemoSeed {
        org_name: org.name,
        admin_email: admin.email,
        api_key: secret.expose().to_owned(),
    }))
}

/// The once-only banner.
pub fn banner(seed: &DemoSeed, base_url: &str) -> String {
    format!(
        "\n  Demo organization \"{org}\" created (admin {email}).\n  Admin API key (shown once, store it now):\n\n    {key}\n\n  Try it:\n\n    curl -s -H 'X-API-KEY: {key}' -H 'Accept: application/json' {base}/v1/me/\n",
        org = seed.org_name,
        email = seed.admin_email,
        key = seed.api_key,
        base = base_url
    )
}
