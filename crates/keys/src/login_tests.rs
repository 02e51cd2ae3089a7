//! Every rule of the one-time-code login, through the in-memory ports.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use teamcomm_kernel::{Clock, ErrorCode, SharedClock};
use teamcomm_org::testing::{FixedClock, InMemoryOrgRepository};
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Organization, PlanTier, User};
use time::macros::datetime;

use super::*;
use crate::testing::{InMemoryKeyRepository, InMemoryLoginCodes, RecordingLoginMailer};
use crate::{KeyService, RateDecision, RateLimiter, RateQuotas, UsageTracker};

const T0: OffsetDateTime = datetime!(2026-11-26 09:00 UTC);

/// Counts requests per budget and refuses past the hourly quota (no refill: tests are quick).
#[derive(Default)]
struct CountingLimiter(Mutex<HashMap<(CredentialRef, RateScope), u32>>);

#[async_trait]
impl RateLimiter for CountingLimiter {
    async fn check(&self, who: CredentialRef, scope: RateScope, per_hour: u32) -> RateDecision {
        let mut spent = self.0.lock().unwrap();
        let n = spent.entry((who, scope)).or_default();
        *n += 1;
        RateDecision {
            scope,
            limit: per_hour,
            remaining: per_hour.saturating_sub(*n),
            reset_secs: 3600,
            retry_after_secs: (*n > per_hour).then_some(120),
        }
    }
}

struct World {
    clock: Arc<FixedClock>,
    limits: RateLimits,
    codes: Arc<InMemoryLoginCodes>,
    mailer: Arc<RecordingLoginMailer>,
    keys: KeyService,
    login: LoginService,
    /// Ada: one organization (Acme, business).
    ada: User,
    acme: Organization,
    /// Max: in Acme and in Beta (free).
    max_acme: User,
    max_beta: User,
    beta: Organization,
}

impl World {
    async fn new() -> World {
        World::with_auth_quota(1000).await
    }

    async fn with_auth_quota(per_hour: u32) -> World {
        let clock = Arc::new(FixedClock::new(T0));
        let shared: SharedClock = clock.clone();
        let people = Arc::new(InMemoryOrgRepository::with_clock(shared.clone()));
        let tokens = Arc::new(InMemoryKeyRepository::with_clock(
            people.clone(),
            shared.clone(),
        ));
        let keys = KeyService::new(
            tokens.clone(),
            people.clone(),
            Arc::new(crate::testing::UncachedOrgSnapshots::new(people.clone())),
            Arc::new(UsageTracker::default()),
            shared.clone(),
        );
        let mut quotas = RateQuotas::default();
        quotas.set(RateScope::Auth, per_hour);
        let limits = RateLimits::new(quotas, Arc::new(CountingLimiter::default()));
        let codes = Arc::new(InMemoryLoginCodes::default());
        let mailer = Arc::new(RecordingLoginMailer::default());
        let login = LoginService::new(codes.clone(), tokens, mailer.clone(), shared);
        let acme = organization(&people, "Acme", "business").await;
        let beta = organization(&people, "Beta", "free").await;
        let ada = person(&people, &acme, "ada@acme.test").await;
        let max_acme = person(&people, &acme, "Max@Example.test").await;
        let max_beta = person(&people, &beta, "max@example.test").await;
        for (org, user) in [(&acme, &ada), (&acme, &max_acme), (&beta, &max_beta)] {
            codes.add_account(org, user);
        }
        World {
            clock,
            limits,
            codes,
            mailer,
            keys,
            login,
            ada,
            acme,
            max_acme,
            max_beta,
            beta,
        }
    }

    /// Requests a code for `email` and returns the one mailed.
    async fn mailed_code(&self, email: &str) -> String {
        self.login.request_code(&self.limits, email).await.unwrap();
        self.mailer.last_code_to(email).expect("a code was mailed")
    }

    fn advance(&self, by: Duration) {
        self.clock.set(self.clock.now() + by);
    }

    fn number_of(&self, org: &Organization, offered: &[LoginOrganization]) -> i64 {
        offered
            .iter()
            .find(|o| o.organization.id == org.id)
            .expect("organization offered")
            .number
    }
}

async fn organization(people: &InMemoryOrgRepository, name: &str, plan: &str) -> Organization {
    let new = NewOrganization::new(name, plan, None, None, None).unwrap();
    people.create_organization(&new).await.unwrap()
}

async fn person(people: &InMemoryOrgRepository, org: &Organization, email: &str) -> User {
    let new = NewUser::new(email, "Pat", "Doe", "member", None).unwrap();
    people.create_user(org.id, &new).await.unwrap()
}

fn wrong(code: &str) -> String {
    let n: u32 = code.parse().unwrap();
    format!("{:06}", (n + 1) % 1_000_000)
}

#[track_caller]
fn assert_code<T: std::fmt::Debug>(r: Result<T, Error>, code: ErrorCode) {
    match r {
        Err(e) => assert_eq!(e.code(), code, "{e:?}"),
        Ok(v) => panic!("expected {code}, got {v:?}"),
    }
}

fn logged_in(v: Verified) -> (Secret, User, Organization, OffsetDateTime) {
    match v {
        Verified::LoggedIn(login) => {
            let Login {
                token,
                user,
                organization,
                expires_at,
            } = *login;
            (token, user, organization, expires_at)
        }
        other => panic!("expected a login, got {other:?}"),
    }
}

#[tokio::test]
async fn a_single_organization_logs_in_with_the_mailed_code() {
    let w = World::new().await;
    let requested = w
        .login
        .request_code(&w.limits, " ADA@acme.test ")
        .await
        .unwrap();
    assert!(!requested.is_multi_org());
    assert!(requested.organizations.is_empty());
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 1);
    let (to, code, minutes) = &sent[0];
    assert_eq!((to.as_str(), *minutes), ("ada@acme.test", 10));
    assert_eq!(code.len(), 6);
    assert!(code.bytes().all(|b| b.is_ascii_digit()), "{code}");

    let (token, user, org, expires_at) = logged_in(
        w.login
            .verify_code(&w.limits, "ada@ACME.test", code, None)
            .await
            .unwrap(),
    );
    assert_eq!((user.id, org.id), (w.ada.id, w.acme.id));
    assert_eq!(expires_at, T0 + CLI_TOKEN_LIFETIME);
    assert!(token.expose().starts_with("tcc_"));
    let principal = w.keys.authenticate_cli_token(token.expose()).await.unwrap();
    assert_eq!(principal.user.id, w.ada.id);

    // The code is used: the same code again is refused.
    assert_code(
        w.login
            .verify_code(&w.limits, "ada@acme.test", code, None)
            .await,
        ErrorCode::LoginCodeExpired,
    );
}

#[tokio::test]
async fn codes_are_stored_hashed_with_a_salt_never_in_plaintext() {
    let w = World::new().await;
    let code = w.mailed_code("ada@acme.test").await;
    let (stored, tries, used) = w.codes.stored("ada@acme.test").unwrap();
    assert_eq!((tries, used), (0, None));
    assert_eq!(stored.expires_at, T0 + LOGIN_CODE_TTL);
    assert_eq!(
        stored.hash,
        LoginCode::hash(&code, &stored.salt, "ada@acme.test")
    );
    let shown = format!("{stored:?} {:?}", LoginCode(code.clone()));
    assert!(!shown.contains(&code), "{shown}");
    assert!(!shown.contains("ada@acme.test"), "{shown}");
    // Two requests of one code value would not hash alike: the salt is new every time.
    let again = w.mailed_code("ada@acme.test").await;
    let (second, _, _) = w.codes.stored("ada@acme.test").unwrap();
    assert_ne!(second.salt, stored.salt);
    let _ = again;
}

#[tokio::test]
async fn a_code_expires_after_its_lifetime() {
    let w = World::new().await;
    let code = w.mailed_code("ada@acme.test").await;
    w.advance(LOGIN_CODE_TTL);
    assert_code(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &code, None)
            .await,
        ErrorCode::LoginCodeExpired,
    );
    // Just before its expiry a code still works.
    let code = w.mailed_code("ada@acme.test").await;
    w.advance(LOGIN_CODE_TTL - Duration::seconds(1));
    logged_in(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &code, None)
            .await
            .unwrap(),
    );
}

#[tokio::test]
async fn a_new_request_invalidates_the_previous_code() {
    let w = World::new().await;
    let first = w.mailed_code("ada@acme.test").await;
    let mut second = w.mailed_code("ada@acme.test").await;
    // The two codes may coincide (one in a million): draw again until they differ.
    while second == first {
        second = w.mailed_code("ada@acme.test").await;
    }
    assert_code(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &first, None)
            .await,
        ErrorCode::LoginCodeInvalid,
    );
    logged_in(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &second, None)
            .await
            .unwrap(),
    );
}

#[tokio::test]
async fn five_wrong_tries_kill_the_code() {
    let w = World::new().await;
    let code = w.mailed_code("ada@acme.test").await;
    for left in (0..LOGIN_CODE_MAX_TRIES).rev() {
        let e = w
            .login
            .verify_code(&w.limits, "ada@acme.test", &wrong(&code), None)
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::LoginCodeInvalid);
        if left > 0 {
            assert!(e.detail().contains(&format!("{left} tries left")), "{e:?}");
        } else {
            assert!(e.detail().contains("request a new code"), "{e:?}");
        }
    }
    // Dead: even the right code is refused now.
    assert_code(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &code, None)
            .await,
        ErrorCode::LoginCodeExpired,
    );
    // A new request starts over.
    let fresh = w.mailed_code("ada@acme.test").await;
    logged_in(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &fresh, None)
            .await
            .unwrap(),
    );
}

#[tokio::test]
async fn a_right_code_does_not_count_as_a_try() {
    let w = World::new().await;
    let code = w.mailed_code("max@example.test").await;
    for _ in 0..(LOGIN_CODE_MAX_TRIES - 1) {
        assert_code(
            w.login
                .verify_code(&w.limits, "max@example.test", &wrong(&code), None)
                .await,
            ErrorCode::LoginCodeInvalid,
        );
    }
    // One try left; asking for the organization list several times spends none.
    for _ in 0..3 {
        let offered = match w
            .login
            .verify_code(&w.limits, "max@example.test", &code, None)
            .await
            .unwrap()
        {
            Verified::ChooseOrganization(o) => o,
            other => panic!("{other:?}"),
        };
        assert_eq!(offered.len(), 2);
    }
    assert_eq!(w.codes.stored("max@example.test").unwrap().1, 4);
}

#[tokio::test]
async fn several_organizations_and_none_chosen_keeps_the_code() {
    let w = World::new().await;
    let requested = w
        .login
        .request_code(&w.limits, "max@example.test")
        .await
        .unwrap();
    assert!(requested.is_multi_org());
    let names: Vec<&str> = requested
        .organizations
        .iter()
        .map(|o| o.organization.name.as_str())
        .collect();
    assert_eq!(names, ["Acme", "Beta"]);
    let code = w.mailer.last_code_to("max@example.test").unwrap();

    let offered = match w
        .login
        .verify_code(&w.limits, "max@example.test", &code, None)
        .await
        .unwrap()
    {
        Verified::ChooseOrganization(o) => o,
        other => panic!("{other:?}"),
    };
    assert_eq!(offered, requested.organizations);
    let (_, _, used) = w.codes.stored("max@example.test").unwrap();
    assert_eq!(used, None, "choosing does not use the code");

    // An organization that is not one of the address's: refused, the code still good.
    let elsewhere = offered.iter().map(|o| o.number).max().unwrap() + 100;
    assert_code(
        w.login
            .verify_code(&w.limits, "max@example.test", &code, Some(elsewhere))
            .await,
        ErrorCode::LoginOrganizationInvalid,
    );

    // The same code with Beta's number logs Max in to Beta (free plan).
    let beta = w.number_of(&w.beta, &offered);
    let (token, user, org, _) = logged_in(
        w.login
            .verify_code(&w.limits, "max@example.test", &code, Some(beta))
            .await
            .unwrap(),
    );
    assert_eq!(
        (user.id, org.id, org.plan),
        (w.max_beta.id, w.beta.id, PlanTier::Free)
    );
    let principal = w.keys.authenticate_cli_token(token.expose()).await.unwrap();
    assert_eq!(principal.user.id, w.max_beta.id);
    // Used now, for Acme too.
    let acme = w.number_of(&w.acme, &offered);
    assert_code(
        w.login
            .verify_code(&w.limits, "max@example.test", &code, Some(acme))
            .await,
        ErrorCode::LoginCodeExpired,
    );
    let _ = &w.max_acme;
}

#[tokio::test]
async fn unknown_addresses_get_the_same_answer_and_no_mail() {
    let w = World::new().await;
    let known = w
        .login
        .request_code(&w.limits, "ada@acme.test")
        .await
        .unwrap();
    let unknown = w
        .login
        .request_code(&w.limits, "nobody@acme.test")
        .await
        .unwrap();
    assert_eq!(known, unknown);
    assert_eq!(w.mailer.sent().len(), 1, "no mail for an unknown address");
    // The same work was done: a code is stored for it too, and it answers like any code.
    assert!(w.codes.stored("nobody@acme.test").is_some());
    assert_code(
        w.login
            .verify_code(&w.limits, "nobody@acme.test", "123456", None)
            .await,
        ErrorCode::LoginCodeInvalid,
    );
    // Without any request, an address has no live code.
    assert_code(
        w.login
            .verify_code(&w.limits, "never@acme.test", "123456", None)
            .await,
        ErrorCode::LoginCodeExpired,
    );
}

#[tokio::test]
async fn a_deactivated_person_cannot_finish_a_login() {
    let w = World::new().await;
    let code = w.mailed_code("ada@acme.test").await;
    w.codes.remove_account(&w.ada);
    assert_code(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &code, None)
            .await,
        ErrorCode::LoginCodeInvalid,
    );
}

#[tokio::test]
async fn old_codes_are_purged_by_later_requests() {
    let w = World::new().await;
    w.mailed_code("ada@acme.test").await;
    w.login
        .request_code(&w.limits, "nobody@acme.test")
        .await
        .unwrap();
    assert_eq!(w.codes.code_count(), 2);
    w.advance(Duration::days(2));
    w.login
        .request_code(&w.limits, "other@acme.test")
        .await
        .unwrap();
    assert_eq!(w.codes.code_count(), 1);
}

#[tokio::test]
async fn the_address_budget_is_spent_by_requests_and_tries() {
    let w = World::with_auth_quota(3).await;
    let code = w.mailed_code("ada@acme.test").await;
    assert_code(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &wrong(&code), None)
            .await,
        ErrorCode::LoginCodeInvalid,
    );
    // Third request of the address passes, the fourth is throttled, whatever its case.
    w.login
        .request_code(&w.limits, "ada@acme.test")
        .await
        .unwrap();
    let e = w
        .login
        .request_code(&w.limits, "ADA@acme.test")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Throttled);
    assert_eq!(e.extra()["retry_after"], 120);
    assert_eq!(e.extra()["scope"], "auth");
    assert_code(
        w.login
            .verify_code(&w.limits, "ada@acme.test", "000000", None)
            .await,
        ErrorCode::Throttled,
    );
    // Another address has its own budget.
    w.login
        .request_code(&w.limits, "max@example.test")
        .await
        .unwrap();
}

#[tokio::test]
async fn logout_revokes_the_token_at_once_and_needs_a_cli_token() {
    let w = World::new().await;
    let code = w.mailed_code("ada@acme.test").await;
    let (token, ..) = logged_in(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &code, None)
            .await
            .unwrap(),
    );
    let principal = w.keys.authenticate_cli_token(token.expose()).await.unwrap();
    w.login.logout(&principal).await.unwrap();
    assert_code(
        w.keys.authenticate_cli_token(token.expose()).await,
        ErrorCode::InvalidCredentials,
    );

    let as_key = Principal {
        credential: CredentialKind::ApiKey {
            id: teamcomm_kernel::ApiKeyId::new(),
            is_agent_key: false,
            scopes: Vec::new(),
        },
        ..principal
    };
    assert_code(w.login.logout(&as_key).await, ErrorCode::InsufficientScope);
}

#[tokio::test]
async fn a_login_token_expires_after_its_lifetime_used_or_not() {
    let w = World::new().await;
    let code = w.mailed_code("ada@acme.test").await;
    let (token, ..) = logged_in(
        w.login
            .verify_code(&w.limits, "ada@acme.test", &code, None)
            .await
            .unwrap(),
    );
    w.advance(CLI_TOKEN_LIFETIME - Duration::minutes(1));
    w.keys.authenticate_cli_token(token.expose()).await.unwrap();
    w.advance(Duration::minutes(1));
    assert_code(
        w.keys.authenticate_cli_token(token.expose()).await,
        ErrorCode::CredentialExpired,
    );
}

#[test]
fn codes_are_six_digits_spread_over_the_range() {
    let codes: Vec<String> = (0..2000)
        .map(|_| LoginCode::generate().expose().to_owned())
        .collect();
    assert!(
        codes
            .iter()
            .all(|c| c.len() == 6 && c.bytes().all(|b| b.is_ascii_digit()))
    );
    // Leading digits cover 0..9 (zero-padded codes exist).
    let leading: std::collections::BTreeSet<u8> = codes.iter().map(|c| c.as_bytes()[0]).collect();
    assert_eq!(leading.len(), 10, "{leading:?}");
}
