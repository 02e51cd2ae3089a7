//! Port contract tests: every behaviour below is one `async fn` over [`Ports`], run once against
//! the in-memory adapters (the `testing` modules of the domain crates) and once against the
//! Postgres adapters (store-pg, on a fresh migrated database), so the two cannot disagree.
//! The rule tests of the services trust the in-memory adapters because of this suite.

/// Runs each named behaviour against both adapters: `in_memory::<name>` and `postgres::<name>`.
/// With `with caches:` also against Postgres behind the app's cache decorators
/// (`postgres_cached::<name>`), which must answer exactly like what they wrap.
macro_rules! contract {
    (@module $module:ident, $ports:expr, $($behaviour:ident),+) => {
        mod $module {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    super::$behaviour($ports).await;
                }
            )+
        }
    };
    (with caches: $($behaviour:ident),+ $(,)?) => {
        contract!($($behaviour),+);
        contract!(@module postgres_cached, crate::ports::Ports::postgres_cached().await, $($behaviour),+);
    };
    ($($behaviour:ident),+ $(,)?) => {
        contract!(@module in_memory, crate::ports::Ports::in_memory(), $($behaviour),+);
        contract!(@module postgres, crate::ports::Ports::postgres().await, $($behaviour),+);
    };
}

/// Behaviours an adapter does not meet yet (see `gaps.rs`): run on the adapters that do, and
/// ignored with the reason on those that do not, so `--run-ignored all` shows each gap.
macro_rules! contract_gap {
    (@test in_memory, $behaviour:ident, $($ignore:tt)*) => {
        #[tokio::test]
        $($ignore)*
        async fn $behaviour() {
            super::$behaviour(crate::ports::Ports::in_memory()).await;
        }
    };
    (@test postgres, $behaviour:ident, $($ignore:tt)*) => {
        #[tokio::test]
        $($ignore)*
        async fn $behaviour() {
            super::$behaviour(crate::ports::Ports::postgres().await).await;
        }
    };
    (in_memory lags: $reason:literal, $behaviour:ident) => {
        mod in_memory {
            contract_gap!(@test in_memory, $behaviour, #[ignore = $reason]);
        }
        mod postgres {
            contract_gap!(@test postgres, $behaviour,);
        }
    };
    (postgres lags: $reason:literal, $behaviour:ident) => {
        mod in_memory {
            contract_gap!(@test in_memory, $behaviour,);
        }
        mod postgres {
            contract_gap!(@test postgres, $behaviour, #[ignore = $reason]);
        }
    };
    (both lag: $reason:literal, $behaviour:ident) => {
        mod in_memory {
            contract_gap!(@test in_memory, $behaviour, #[ignore = $reason]);
        }
        mod postgres {
            contract_gap!(@test postgres, $behaviour, #[ignore = $reason]);
        }
    };
}

mod ports;

mod agents;
mod assistant;
mod channels;
mod checkins;
mod cursors;
mod daily_counters;
mod forms;
mod gaps;
mod invitations;
mod jobs;
mod keys;
mod kudos;
mod labels;
mod login_codes;
mod messaging;
mod moods;
mod orgs;
mod plan;
mod rounds;
mod teams;
mod templates;
mod webhooks;
mod workflows;
