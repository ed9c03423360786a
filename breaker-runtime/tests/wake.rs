//! A task waiting for admission is woken by the change that admits it, however the two race:
//! a probe giving its slot back (a `SeqCst` read-modify-write, no fence), or an order moving
//! an open circuit to half-open (under the lock, a fence). Both skip tokio's `Notify` while
//! nobody waits, so a waiter that counted itself must never be missed. Real threads race here
//! (the one test of this crate that must): a missed wake-up would leave the waiter asleep until
//! its own timer (a minute), far past the wait each round allows.

use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::{Breaker, Config, State};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_is_woken_by_every_slot_given_back() {
    for round in 0..500 {
        let breaker = Arc::new(Breaker::new(
            Config::builder()
                .count_window(1)
                .probes(3)
                .break_duration(Duration::from_secs(60))
                .no_timeout()
                .build()
                .unwrap(),
        ));
        breaker.try_acquire().unwrap().failure();
        assert!(breaker.half_open());
        let first = breaker.clone().try_acquire_owned().unwrap();
        let second = breaker.clone().try_acquire_owned().unwrap();
        let third = breaker.clone().try_acquire_owned().unwrap();
        assert!(breaker.try_acquire().is_err(), "every slot is taken");

        let waiting = Arc::clone(&breaker);
        let waiter = tokio::spawn(async move { waiting.admitted_owned().await });
        // The give-back races the waiter counting itself and reading the slots.
        let giver = std::thread::spawn(move || first.success());
        giver.join().unwrap();
        let admitted = tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap_or_else(|_| panic!("round {round}: the waiter was never woken"))
            .unwrap();
        assert_eq!(breaker.state(), State::HalfOpen);
        admitted.success();
        second.success();
        assert_eq!(breaker.state(), State::Closed, "three successes in a row");
        drop(third);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_on_an_open_circuit_is_woken_when_an_order_moves_it_to_half_open() {
    for round in 0..500 {
        let breaker = Arc::new(Breaker::new(
            Config::builder()
                .count_window(1)
                .break_duration(Duration::from_secs(60))
                .no_timeout()
                .build()
                .unwrap(),
        ));
        breaker.try_acquire().unwrap().failure();
        assert_eq!(breaker.state(), State::Open);

        let waiting = Arc::clone(&breaker);
        let waiter = tokio::spawn(async move { waiting.admitted_owned().await });
        // The swap from open races the waiter counting itself and reading the state.
        let ordering = Arc::clone(&breaker);
        std::thread::spawn(move || assert!(ordering.half_open()))
            .join()
            .unwrap();
        let probe = tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap_or_else(|_| panic!("round {round}: the waiter was never woken"))
            .unwrap();
        assert!(probe.is_probe());
        probe.success();
        assert_eq!(breaker.state(), State::Closed);
    }
}
