//! SPEC section 4 as the runtime sees it: `BreakerError` says why the breaker answered, and a
//! rejection is never recorded.

use std::time::Duration;

use breaker_runtime::{BreakerError, State};
use breaker_tests::{breaker, call, count, down, ms, up};

#[tokio::test(start_paused = true)]
async fn a_rejection_is_never_recorded_and_is_told_apart_from_a_timeout() {
    let b = breaker(
        count(2)
            .break_duration(Duration::from_secs(30))
            .timeout(ms(10)),
    );
    call(&b, down()).await;
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open);
    for _ in 0..5 {
        let err = b.call(async { up() }).await.unwrap_err();
        assert!(err.is_rejection());
        assert!(!err.is_timeout());
    }
    tokio::time::advance(Duration::from_secs(30)).await;
    // The probe decides alone: the five rejections left nothing behind.
    call(&b, up()).await;
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.snapshot().calls, 0);
}

#[tokio::test(start_paused = true)]
async fn an_open_rejection_names_the_breaker_and_when_it_next_probes() {
    let b = breaker(
        count(2)
            .name("ledger")
            .break_duration(Duration::from_secs(30)),
    );
    call(&b, down()).await;
    call(&b, down()).await;
    tokio::time::advance(Duration::from_secs(10)).await;
    let err = b.call(async { up() }).await.unwrap_err();
    assert_eq!(err.breaker(), "ledger");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(20)));
    let BreakerError::Open {
        next_probe_at: Some(at),
        ..
    } = &err
    else {
        panic!("expected an open rejection, got {err:?}");
    };
    assert_eq!(
        at.instant() - tokio::time::Instant::now(),
        Duration::from_secs(20)
    );
    assert_eq!(
        err.to_string(),
        "circuit breaker `ledger` is open; next probe in 20 s"
    );
}

#[tokio::test(start_paused = true)]
async fn a_half_open_rejection_says_the_probe_slots_are_taken() {
    let b = breaker(count(2).name("ledger").probes(2).break_duration(ms(5)));
    call(&b, down()).await;
    call(&b, down()).await;
    tokio::time::advance(ms(5)).await;
    let _probes = (b.try_acquire().unwrap(), b.try_acquire().unwrap());
    let err = b.try_acquire().unwrap_err();
    assert!(err.is_rejection());
    // A probe gives its slot up after the break (5 ms), sooner than its 10 s timeout.
    assert_eq!(err.retry_after(), Some(ms(5)));
    assert_eq!(
        err.to_string(),
        "circuit breaker `ledger` is half-open and its 2 probe slot(s) are taken; a slot frees within 5 ms"
    );
}

#[tokio::test(start_paused = true)]
async fn a_half_open_rejection_waits_for_the_probes_timeout_when_it_is_shorter_than_the_break() {
    let b = breaker(
        count(1)
            .name("ledger-slow")
            .timeout(ms(300))
            .break_duration(ms(2_000)),
    );
    call(&b, down()).await;
    tokio::time::advance(ms(2_000)).await;
    let _probe = b.try_acquire().unwrap();
    tokio::time::advance(ms(100)).await;
    let err = b.try_acquire().unwrap_err();
    assert_eq!(err.retry_after(), Some(ms(300)), "{err}");
}

#[tokio::test(start_paused = true)]
async fn a_timeout_names_the_breaker_and_the_limit() {
    let b = breaker(count(2).name("ledger").timeout(ms(250)));
    let err = b
        .call(breaker_tests::after(Duration::from_secs(1), up()))
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    assert!(!err.is_rejection());
    assert_eq!(
        err.to_string(),
        "call through circuit breaker `ledger` timed out after 250 ms"
    );
}
