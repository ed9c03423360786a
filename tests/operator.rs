//! What an operator does to a live breaker beside force open, disable and reset: move an open
//! circuit to half-open now. On tokio's paused clock.

use std::sync::Arc;

use breaker_runtime::State;
use breaker_tests::{breaker, call, count, down, ms, record_transitions, up};

#[tokio::test(start_paused = true)]
async fn half_open_moves_an_open_circuit_to_its_probes_before_the_break_is_over() {
    let b = breaker(
        count(1)
            .break_duration(ms(1_000))
            .max_break_duration(ms(8_000)),
    );
    let seen = record_transitions(&b);
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(ms(10)).await;

    assert!(b.half_open());
    assert_eq!(b.state(), State::HalfOpen);
    assert!(
        !call(&b, down()).await,
        "the next call is admitted as a probe"
    );
    assert_eq!(b.state(), State::Open, "a failed probe opens it again");
    // As after any failed probe, the break doubled: 2 s from now.
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.retry_after(), Some(ms(2_000)));

    assert!(b.half_open());
    assert!(!call(&b, up()).await, "admitted as a probe");
    assert_eq!(b.state(), State::Closed);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::Open),
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Open),
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Closed),
        ],
        "each move announced"
    );
}

#[tokio::test(start_paused = true)]
async fn half_open_releases_a_circuit_an_operator_held_open() {
    let b = breaker(count(4));
    b.force_open();
    assert!(b.half_open());
    assert_eq!(b.state(), State::HalfOpen);
    assert!(!call(&b, up()).await, "admitted as a probe");
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn half_open_leaves_every_other_state_as_it_is() {
    let b = breaker(count(1).break_duration(ms(100)));
    assert!(!b.half_open());
    assert_eq!(b.state(), State::Closed);

    call(&b, down()).await;
    tokio::time::advance(ms(100)).await;
    let probe = b.try_acquire().unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    let seen = record_transitions(&b);
    assert!(
        !b.half_open(),
        "already half-open: the probe in flight keeps its slot"
    );
    assert!(b.try_acquire().unwrap_err().is_rejection());
    probe.success();

    b.disable();
    assert!(!b.half_open());
    assert_eq!(b.state(), State::Disabled);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::HalfOpen, State::Closed),
            (State::Closed, State::Disabled)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_task_waiting_for_admission_is_let_in_by_half_open() {
    let b = Arc::new(breaker(count(1).break_duration(ms(60_000))));
    call(&b, down()).await;
    let waiter = tokio::spawn({
        let b = Arc::clone(&b);
        async move { b.admitted_owned().await.success() }
    });
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished());
    assert!(b.half_open());
    tokio::time::timeout(ms(10), waiter)
        .await
        .expect("woken at once, not after the minute's break")
        .unwrap();
    assert_eq!(b.state(), State::Closed);
}
