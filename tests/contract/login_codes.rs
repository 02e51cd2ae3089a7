//! `LoginCodeRepository`'s code rows: one live code per address (a new one replaces it, tries
//! start over), a try is claimed only while the code is live and under the limit, a right code
//! gives its try back, a code is used once, old rows are purged. Run against the in-memory
//! adapter and `PgLoginCodes` (the people a login finds are the adapters' own business: the
//! Postgres one is exercised by tests/api/cli_login.rs).

use std::sync::Arc;

use teamcomm_keys::testing::InMemoryLoginCodes;
use teamcomm_keys::{AddressKey, LoginCodeRepository, NewLoginCode};
use teamcomm_store_pg::{Database, PgLoginCodes};
use teamcomm_tests::TestDb;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

const T0: OffsetDateTime = datetime!(2026-11-26 09:00 UTC);

fn code(address: &str, salt: u8, at: OffsetDateTime) -> NewLoginCode {
    NewLoginCode {
        id: Uuid::now_v7(),
        address: AddressKey::of(address),
        salt: [salt; 16],
        hash: [salt.wrapping_add(1); 32],
        expires_at: at + Duration::minutes(10),
        created_at: at,
    }
}

async fn code_rows_behave(codes: Arc<dyn LoginCodeRepository>) {
    let ada = AddressKey::of("ada@acme.test");
    assert!(codes.claim_try(&ada, T0, 5).await.unwrap().is_none());

    let first = code("ada@acme.test", 1, T0);
    codes
        .replace_code(&first, T0 - Duration::days(1))
        .await
        .unwrap();
    let claimed = codes.claim_try(&ada, T0, 5).await.unwrap().unwrap();
    assert_eq!(
        (claimed.id, claimed.salt, claimed.hash, claimed.tries),
        (first.id, first.salt, first.hash, 1)
    );
    // A right code gives its try back.
    codes.release_try(first.id).await.unwrap();
    assert_eq!(
        codes.claim_try(&ada, T0, 5).await.unwrap().unwrap().tries,
        1
    );
    for n in 2..=3 {
        assert_eq!(
            codes.claim_try(&ada, T0, 3).await.unwrap().unwrap().tries,
            n
        );
    }
    assert!(
        codes.claim_try(&ada, T0, 3).await.unwrap().is_none(),
        "no try past the limit"
    );

    // A new code replaces the old one, tries start over; the old one cannot be used.
    let second = code("ada@acme.test", 2, T0);
    codes
        .replace_code(&second, T0 - Duration::days(1))
        .await
        .unwrap();
    assert!(!codes.consume(first.id, T0).await.unwrap());
    let claimed = codes.claim_try(&ada, T0, 5).await.unwrap().unwrap();
    assert_eq!((claimed.id, claimed.tries), (second.id, 1));
    // Used once.
    assert!(codes.consume(second.id, T0).await.unwrap());
    assert!(!codes.consume(second.id, T0).await.unwrap());
    assert!(codes.claim_try(&ada, T0, 5).await.unwrap().is_none());

    // Not live at or after its expiry.
    let third = code("ada@acme.test", 3, T0);
    codes
        .replace_code(&third, T0 - Duration::days(1))
        .await
        .unwrap();
    assert!(
        codes
            .claim_try(&ada, third.expires_at, 5)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        codes
            .claim_try(&ada, third.expires_at - Duration::seconds(1), 5)
            .await
            .unwrap()
            .is_some()
    );

    // Another address's row is its own; rows expired before the purge instant go.
    let max = AddressKey::of("max@acme.test");
    codes
        .replace_code(&code("max@acme.test", 4, T0), T0 - Duration::days(1))
        .await
        .unwrap();
    assert_eq!(
        codes.claim_try(&max, T0, 5).await.unwrap().unwrap().tries,
        1
    );
    let later = T0 + Duration::days(2);
    codes
        .replace_code(
            &code("other@acme.test", 5, later),
            later - Duration::days(1),
        )
        .await
        .unwrap();
    assert!(
        codes.claim_try(&max, T0, 5).await.unwrap().is_none(),
        "purged"
    );
}

#[tokio::test]
async fn in_memory_login_code_rows() {
    code_rows_behave(Arc::new(InMemoryLoginCodes::default())).await;
}

#[tokio::test]
async fn postgres_login_code_rows() {
    let db = TestDb::new().await;
    let database = Database::connect(&db.url, 2).expect("pool");
    code_rows_behave(Arc::new(PgLoginCodes::new(database))).await;
}
