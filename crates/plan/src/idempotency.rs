//! `Idempotency-Key` on the marked Plan writes (wire contract §4.0 [IK], issue 11 §1): a slot per
//! (organization, route template, key) kept 24 hours. The first request takes the slot and
//! runs; its answer is kept (2xx and 4xx: a 5xx gives the slot back so a retry runs again). The
//! same key with the same request gets that answer again (a replay); with another request it is
//! refused (`idempotency_key_payload_mismatch`); while the first still runs (at most 120
//! seconds) a duplicate is refused (`idempotency_in_progress`), after which the slot can be
//! taken over. A dry run is never subject to idempotency (the caller decides that).

use sha2::{Digest, Sha256};
use teamcomm_kernel::{Error, ErrorCode, OrgId};
use time::{Duration, OffsetDateTime};

use crate::Plan;
use crate::ports::{SlotKey, StoredAnswer};

/// Shortest and longest key accepted (characters).
pub const MIN_KEY_CHARS: usize = 8;
pub const MAX_KEY_CHARS: usize = 128;
/// How long a request holds its slot before a duplicate may take it over.
pub const LOCK_WINDOW: Duration = Duration::seconds(120);
/// How long a slot (and its answer) is kept.
pub const SLOT_LIFETIME: Duration = Duration::hours(24);

/// An `Idempotency-Key` as a request sends it: 8 to 128 visible ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    pub fn parse(raw: &str) -> Result<IdempotencyKey, Error> {
        let n = raw.chars().count();
        if !(MIN_KEY_CHARS..=MAX_KEY_CHARS).contains(&n) {
            return Err(invalid_key(format!(
                "Idempotency-Key must be {MIN_KEY_CHARS} to {MAX_KEY_CHARS} characters long."
            )));
        }
        if !raw.chars().all(|c| c.is_ascii_graphic()) {
            return Err(invalid_key(
                "Idempotency-Key must be visible ASCII characters without spaces.".to_owned(),
            ));
        }
        Ok(IdempotencyKey(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn invalid_key(detail: String) -> Error {
    Error::new(ErrorCode::InvalidIdempotencyKey, detail).with_extra("parameter", "Idempotency-Key")
}

/// 400 `idempotency_key_required` (`tasks/bulk/` without the header).
pub fn key_required() -> Error {
    Error::new(
        ErrorCode::IdempotencyKeyRequired,
        "This endpoint requires an Idempotency-Key header.",
    )
}

/// What makes two requests "the same": method, route template and the body's bytes.
pub fn request_hash(method: &str, route: &str, body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(method.as_bytes());
    h.update([0]);
    h.update(route.as_bytes());
    h.update([0]);
    h.update(body);
    h.finalize().into()
}

/// True when an answer is kept for replays: anything but a server failure.
pub fn keeps_answer(status: u16) -> bool {
    !(500..600).contains(&status)
}

/// What a request with a key does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Run the request, then [`Plan::finish_idempotent`] with this lease.
    Run(Lease),
    /// Answer this again, marked as a replay.
    Replay(StoredAnswer),
}

/// A slot held by the running request (its lock end is the lease).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub slot: SlotKey,
    pub locked_until: OffsetDateTime,
}

impl Plan {
    /// Takes the slot of `key` on `route` for a request hashing to `hash` (see the module docs).
    pub async fn claim_idempotent(
        &self,
        org: OrgId,
        route: &str,
        key: &IdempotencyKey,
        hash: &[u8; 32],
    ) -> Result<Claim, Error> {
        let repo = &self.ports.idempotency;
        let slot = SlotKey {
            org,
            route: route.to_owned(),
            key: key.as_str().to_owned(),
        };
        // Microseconds, as the store keeps them: the lease compares equal when read back.
        let now = self.ports.clock.now();
        let now = now
            .replace_nanosecond(now.microsecond() * 1000)
            .unwrap_or(now);
        let locked_until = now + LOCK_WINDOW;
        let run = |slot: SlotKey| Claim::Run(Lease { slot, locked_until });
        // Twice: a slot pruned or given back between the insert and the read is inserted again.
        for _ in 0..2 {
            if repo.insert_slot(&slot, hash, now, locked_until).await? {
                return Ok(run(slot));
            }
            let Some(found) = repo.find_slot(&slot).await? else {
                continue;
            };
            let stale_before = now - SLOT_LIFETIME;
            if found.created_at <= stale_before {
                return if repo
                    .take_over_slot(&slot, hash, now, locked_until, stale_before)
                    .await?
                {
                    Ok(run(slot))
                } else {
                    Err(in_progress())
                };
            }
            if found.request_hash != hash {
                return Err(Error::new(
                    ErrorCode::IdempotencyKeyPayloadMismatch,
                    "This Idempotency-Key was already used with a different request.",
                ));
            }
            if let Some(answer) = found.answer {
                return Ok(Claim::Replay(answer));
            }
            if found.locked_until > now {
                return Err(in_progress());
            }
            // The first request gave no answer within its window: this one runs instead.
            return if repo
                .take_over_slot(&slot, hash, now, locked_until, stale_before)
                .await?
            {
                Ok(run(slot))
            } else {
                Err(in_progress())
            };
        }
        Err(in_progress())
    }

    /// Keeps the answer of the request that ran under `lease`, or gives the slot back when it
    /// failed on the server's side (a retry runs again).
    pub async fn finish_idempotent(
        &self,
        lease: &Lease,
        status: u16,
        body: &[u8],
    ) -> Result<(), Error> {
        let repo = &self.ports.idempotency;
        if keeps_answer(status) {
            let answer = StoredAnswer {
                status,
                body: body.to_vec(),
            };
            repo.complete_slot(&lease.slot, lease.locked_until, &answer)
                .await?;
        } else {
            repo.release_slot(&lease.slot, lease.locked_until).await?;
        }
        Ok(())
    }

    /// Deletes slots older than their lifetime; how many (called periodically).
    pub async fn prune_idempotency(&self) -> Result<u64, Error> {
        let before = self.ports.clock.now() - SLOT_LIFETIME;
        Ok(self.ports.idempotency.prune_slots(before).await?)
    }
}

fn in_progress() -> Error {
    Error::new(
        ErrorCode::IdempotencyInProgress,
        "A request with this Idempotency-Key is still in progress; retry later.",
    )
    .with_extra("retry_after", LOCK_WINDOW.whole_seconds())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::World;

    fn key(s: &str) -> IdempotencyKey {
        IdempotencyKey::parse(s).unwrap()
    }

    #[test]
    fn keys_are_8_to_128_visible_characters() {
        assert!(IdempotencyKey::parse("12345678").is_ok());
        assert!(IdempotencyKey::parse(&"k".repeat(128)).is_ok());
        for bad in ["1234567", &"k".repeat(129), "with space", "tab\tkey12", ""] {
            let e = IdempotencyKey::parse(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidIdempotencyKey, "{bad:?}");
        }
    }

    #[test]
    fn the_hash_covers_method_route_and_body() {
        let h = request_hash("POST", "task.create", b"{}");
        assert_eq!(h, request_hash("POST", "task.create", b"{}"));
        assert_ne!(h, request_hash("PATCH", "task.create", b"{}"));
        assert_ne!(h, request_hash("POST", "board.create", b"{}"));
        assert_ne!(h, request_hash("POST", "task.create", b"{ }"));
    }

    const ROUTE: &str = "task.create";

    fn advance(w: &World, by: Duration) {
        use teamcomm_kernel::Clock;
        w.clock.set(w.clock.now() + by);
    }

    fn lease(c: Claim) -> Lease {
        match c {
            Claim::Run(l) => l,
            Claim::Replay(a) => panic!("replayed {a:?}"),
        }
    }

    #[tokio::test]
    async fn a_kept_answer_is_replayed_for_the_same_request_only() {
        let w = World::new().await;
        let (k, h) = (key("retry-0001"), request_hash("POST", ROUTE, b"{\"a\":1}"));
        let first = lease(
            w.plan
                .claim_idempotent(w.org.id, ROUTE, &k, &h)
                .await
                .unwrap(),
        );
        w.plan
            .finish_idempotent(&first, 201, b"{\"uuid\":\"x\"}")
            .await
            .unwrap();
        let again = w.plan.claim_idempotent(w.org.id, ROUTE, &k, &h).await;
        assert_eq!(
            again.unwrap(),
            Claim::Replay(StoredAnswer {
                status: 201,
                body: b"{\"uuid\":\"x\"}".to_vec()
            })
        );
        let other = request_hash("POST", ROUTE, b"{\"a\":2}");
        let e = w
            .plan
            .claim_idempotent(w.org.id, ROUTE, &k, &other)
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::IdempotencyKeyPayloadMismatch);
        // Another route or another organization: another slot.
        assert!(matches!(
            w.plan
                .claim_idempotent(w.org.id, "board.create", &k, &other)
                .await
                .unwrap(),
            Claim::Run(_)
        ));
        let elsewhere = teamcomm_kernel::OrgId(uuid::Uuid::new_v4());
        assert!(matches!(
            w.plan
                .claim_idempotent(elsewhere, ROUTE, &k, &other)
                .await
                .unwrap(),
            Claim::Run(_)
        ));
    }

    #[tokio::test]
    async fn a_running_request_holds_its_slot_for_120_seconds() {
        let w = World::new().await;
        let (k, h) = (key("retry-0002"), request_hash("POST", ROUTE, b"{}"));
        let first = lease(
            w.plan
                .claim_idempotent(w.org.id, ROUTE, &k, &h)
                .await
                .unwrap(),
        );
        let e = w
            .plan
            .claim_idempotent(w.org.id, ROUTE, &k, &h)
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::IdempotencyInProgress);
        assert_eq!(e.status(), 409);
        advance(&w, Duration::seconds(121));
        let second = lease(
            w.plan
                .claim_idempotent(w.org.id, ROUTE, &k, &h)
                .await
                .unwrap(),
        );
        // The first one finishing late keeps nothing: the slot is the second's now.
        w.plan
            .finish_idempotent(&first, 200, b"late")
            .await
            .unwrap();
        w.plan
            .finish_idempotent(&second, 200, b"second")
            .await
            .unwrap();
        let replay = w.plan.claim_idempotent(w.org.id, ROUTE, &k, &h).await;
        assert!(matches!(replay.unwrap(), Claim::Replay(a) if a.body == b"second"));
    }

    #[tokio::test]
    async fn a_server_failure_gives_the_slot_back_and_4xx_are_kept() {
        let w = World::new().await;
        let (k, h) = (key("retry-0003"), request_hash("POST", ROUTE, b"{}"));
        let first = lease(
            w.plan
                .claim_idempotent(w.org.id, ROUTE, &k, &h)
                .await
                .unwrap(),
        );
        w.plan
            .finish_idempotent(&first, 503, b"down")
            .await
            .unwrap();
        let retry = lease(
            w.plan
                .claim_idempotent(w.org.id, ROUTE, &k, &h)
                .await
                .unwrap(),
        );
        w.plan.finish_idempotent(&retry, 404, b"nf").await.unwrap();
        let replay = w.plan.claim_idempotent(w.org.id, ROUTE, &k, &h).await;
        assert!(matches!(replay.unwrap(), Claim::Replay(a) if a.status == 404));
    }

    #[tokio::test]
    async fn slots_live_24_hours() {
        let w = World::new().await;
        let (k, h) = (key("retry-0004"), request_hash("POST", ROUTE, b"{}"));
        let first = lease(
            w.plan
                .claim_idempotent(w.org.id, ROUTE, &k, &h)
                .await
                .unwrap(),
        );
        w.plan.finish_idempotent(&first, 200, b"one").await.unwrap();
        advance(&w, Duration::hours(23));
        assert_eq!(w.plan.prune_idempotency().await.unwrap(), 0);
        advance(&w, Duration::hours(1));
        // Past its lifetime the key is new again, even with another body.
        let other = request_hash("POST", ROUTE, b"{\"x\":1}");
        lease(
            w.plan
                .claim_idempotent(w.org.id, ROUTE, &k, &other)
                .await
                .unwrap(),
        );
        let k2 = key("retry-0005");
        let l2 = lease(
            w.plan
                .claim_idempotent(w.org.id, ROUTE, &k2, &h)
                .await
                .unwrap(),
        );
        w.plan.finish_idempotent(&l2, 200, b"two").await.unwrap();
        advance(&w, Duration::hours(24));
        assert_eq!(w.plan.prune_idempotency().await.unwrap(), 2);
    }
}
