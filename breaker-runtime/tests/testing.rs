//! The `test-util` feature: tests that drive one guarded fn, each inside `testing::isolated`,
//! cannot fail each other; outside a scope the process-wide breakers stay as they are.

use std::time::Duration;

use breaker_runtime::{BreakerError, State, circuit_breaker, registry, testing};

fn outage() -> BreakerError {
    BreakerError::Timeout {
        breaker: "database".into(),
        limit: Duration::from_secs(1),
    }
}

#[circuit_breaker(name = "testing-shared", window = "2", break_duration = "1h")]
async fn shared(up: bool) -> Result<u32, BreakerError> {
    if up { Ok(1) } else { Err(outage()) }
}

// The two tests the issue describes: one drives the fn's circuit open, one expects it to
// answer. Run together (the harness runs them on parallel threads, many times over), each in
// its own scope, neither sees the other's breaker.
#[tokio::test]
async fn a_test_that_opens_the_circuit() {
    for _ in 0..50 {
        testing::isolated(async {
            for _ in 0..2 {
                shared(false).await.unwrap_err();
            }
            let mine = testing::breaker("testing-shared").expect("made by the calls above");
            assert_eq!(mine.state(), State::Open);
            assert!(shared(true).await.unwrap_err().is_rejection());
        })
        .await;
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_test_that_expects_the_fn_to_answer() {
    for _ in 0..50 {
        testing::isolated(async {
            for _ in 0..5 {
                assert_eq!(shared(true).await.unwrap(), 1);
            }
        })
        .await;
        tokio::task::yield_now().await;
    }
}

#[circuit_breaker(name = "testing-forced", window = "2")]
async fn forced() -> Result<u32, BreakerError> {
    Ok(7)
}

#[tokio::test]
async fn a_scope_starts_closed_whatever_the_process_wide_breaker_is_and_reset_all_closes_it() {
    let process_wide = registry().get("testing-forced").unwrap();
    process_wide.force_open();
    assert!(forced().await.unwrap_err().is_rejection());
    testing::isolated(async {
        assert_eq!(forced().await.unwrap(), 7);
        assert_eq!(
            testing::breaker("testing-forced").unwrap().snapshot().calls,
            1
        );
        // A task spawned inside the scope is not in it.
        let spawned = tokio::spawn(forced()).await.unwrap();
        assert!(spawned.unwrap_err().is_rejection());
    })
    .await;
    assert_eq!(
        process_wide.state(),
        State::ForcedOpen,
        "the scope changed nothing outside"
    );
    assert!(
        testing::breaker("testing-forced").is_none(),
        "no scope here"
    );
    process_wide.reset();
}

#[circuit_breaker(name = "testing-one-name", window = "4")]
async fn reads() -> Result<u32, BreakerError> {
    Err(outage())
}

#[circuit_breaker(name = "testing-one-name", window = "4")]
async fn writes() -> Result<u32, BreakerError> {
    Err(outage())
}

#[tokio::test]
async fn functions_sharing_a_name_share_one_breaker_in_a_scope_too() {
    testing::isolated(async {
        for _ in 0..2 {
            reads().await.unwrap_err();
            writes().await.unwrap_err();
        }
        let breaker = testing::breaker("testing-one-name").unwrap();
        assert_eq!(
            breaker.state(),
            State::Open,
            "four failures in one window of 4"
        );
    })
    .await;
    assert_eq!(
        registry().get("testing-one-name").unwrap().state(),
        State::Closed
    );
}
