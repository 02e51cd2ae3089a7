//! The login ports in memory (re-exported by `testing`): [`InMemoryLoginCodes`] and
//! [`RecordingLoginMailer`].

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, RepoError};
use teamcomm_org::{Organization, User};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::login::{
    AddressKey, ClaimedTry, LoginAccount, LoginCode, LoginCodeMailer, LoginCodeRepository,
    NewLoginCode, normalize_address,
};

#[derive(Debug, Clone)]
struct StoredCode {
    code: NewLoginCode,
    tries: u32,
    used_at: Option<OffsetDateTime>,
}

#[derive(Default)]
struct State {
    /// Organization numbers, in the order organizations were first seen.
    numbers: HashMap<OrgId, i64>,
    accounts: Vec<(Organization, User)>,
    codes: HashMap<AddressKey, StoredCode>,
}

/// [`LoginCodeRepository`] in memory; the people a login finds are added with
/// [`InMemoryLoginCodes::add_account`].
#[derive(Default)]
pub struct InMemoryLoginCodes {
    state: Mutex<State>,
}

impl InMemoryLoginCodes {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `user` of `organization` can log in (when active).
    pub fn add_account(&self, organization: &Organization, user: &User) {
        let mut state = self.state();
        let next = state.numbers.len() as i64 + 1;
        state.numbers.entry(organization.id).or_insert(next);
        state.accounts.push((organization.clone(), user.clone()));
    }

    /// Forgets every account of `user` (as if deactivated).
    pub fn remove_account(&self, user: &User) {
        self.state().accounts.retain(|(_, u)| u.id != user.id);
    }

    /// The stored code row of an address: what a test may look at (hashes, tries).
    pub fn stored(&self, email: &str) -> Option<(NewLoginCode, u32, Option<OffsetDateTime>)> {
        let key = address_key(email);
        self.state()
            .codes
            .get(&key)
            .map(|s| (s.code.clone(), s.tries, s.used_at))
    }

    /// How many code rows are stored.
    pub fn code_count(&self) -> usize {
        self.state().codes.len()
    }
}

/// The stored key of an address, as the service computes it.
fn address_key(email: &str) -> AddressKey {
    AddressKey::of(&normalize_address(email))
}

#[async_trait]
impl LoginCodeRepository for InMemoryLoginCodes {
    async fn accounts(&self, address: &str) -> Result<Vec<LoginAccount>, RepoError> {
        let state = self.state();
        let mut found: Vec<LoginAccount> = state
            .accounts
            .iter()
            .filter(|(_, u)| u.is_active && u.email.to_lowercase() == address)
            .map(|(o, u)| LoginAccount {
                number: state.numbers[&o.id],
                organization: o.clone(),
                user: u.clone(),
            })
            .collect();
        found.sort_by(|a, b| {
            (&a.organization.name, a.number).cmp(&(&b.organization.name, b.number))
        });
        Ok(found)
    }

    async fn replace_code(
        &self,
        code: &NewLoginCode,
        purge_before: OffsetDateTime,
    ) -> Result<(), RepoError> {
        let mut state = self.state();
        state.codes.retain(|_, s| s.code.expires_at >= purge_before);
        state.codes.insert(
            code.address,
            StoredCode {
                code: code.clone(),
                tries: 0,
                used_at: None,
            },
        );
        Ok(())
    }

    async fn claim_try(
        &self,
        address: &AddressKey,
        now: OffsetDateTime,
        max_tries: u32,
    ) -> Result<Option<ClaimedTry>, RepoError> {
        let mut state = self.state();
        let Some(stored) = state.codes.get_mut(address) else {
            return Ok(None);
        };
        if stored.used_at.is_some() || stored.code.expires_at <= now || stored.tries >= max_tries {
            return Ok(None);
        }
        stored.tries += 1;
        Ok(Some(ClaimedTry {
            id: stored.code.id,
            salt: stored.code.salt,
            hash: stored.code.hash,
            tries: stored.tries,
        }))
    }

    async fn release_try(&self, id: Uuid) -> Result<(), RepoError> {
        if let Some(s) = self.state().codes.values_mut().find(|s| s.code.id == id) {
            s.tries = s.tries.saturating_sub(1);
        }
        Ok(())
    }

    async fn consume(&self, id: Uuid, now: OffsetDateTime) -> Result<bool, RepoError> {
        match self
            .state()
            .codes
            .values_mut()
            .find(|s| s.code.id == id && s.used_at.is_none())
        {
            Some(s) => {
                s.used_at = Some(now);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// [`LoginCodeMailer`] that keeps what it was asked to send: `(to, code, valid_minutes)`.
#[derive(Default)]
pub struct RecordingLoginMailer {
    sent: Mutex<Vec<(String, String, u32)>>,
}

impl RecordingLoginMailer {
    pub fn sent(&self) -> Vec<(String, String, u32)> {
        self.sent.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The code last sent to `to`.
    pub fn last_code_to(&self, to: &str) -> Option<String> {
        self.sent()
            .into_iter()
            .rev()
            .find(|(t, _, _)| t.eq_ignore_ascii_case(to))
            .map(|(_, c, _)| c)
    }
}

#[async_trait]
impl LoginCodeMailer for RecordingLoginMailer {
    async fn send_login_code(&self, to: &str, code: &LoginCode, valid_minutes: u32) {
        self.sent.lock().unwrap_or_else(|p| p.into_inner()).push((
            to.to_owned(),
            code.expose().to_owned(),
            valid_minutes,
        ));
    }
}
