//! `probe_threshold` (issue 47; Resilience4j's `permittedNumberOfCallsInHalfOpenState`, Polly
//! #2381): a half-open period admits at most `probes` probes and judges their answers together
//! once all are in, against the threshold, instead of wanting every probe to succeed.
//! Resilience4j's half-open state-machine scenarios (`CircuitBreakerStateMachineTest`: four
//! permitted calls, a failure-rate and a slow-call-rate threshold of 50%), on tokio's paused
//! clock, each beside what the default rule does with the same calls.

use std::time::Duration;

use breaker_runtime::{
    Breaker, BreakerError, Config, ConfigBuilder, OwnedPermit, State, circuit_breaker,
};
use tokio::time::advance;

const BREAK: Duration = Duration::from_secs(5);

/// Resilience4j's test breaker: a window of 5 calls at 50%, a 5 s break, slow calls over 5 s
/// at 50%, and four calls permitted in half-open judged at 50%.
fn resilience4j() -> ConfigBuilder {
    Config::builder()
        .count_window(5)
        .threshold(50.0)
        .break_duration(BREAK)
        .no_timeout()
        .slow_call(Duration::from_secs(5))
        .slow_threshold(50.0)
        .probes(4)
        .probe_threshold(50.0)
}

/// Opens the circuit with five failures and waits out the break: the next call is a probe.
async fn to_half_open(breaker: &Breaker) {
    for _ in 0..5 {
        breaker.try_acquire().expect("closed").failure();
    }
    assert_eq!(breaker.state(), State::Open);
    advance(BREAK).await;
}

fn probes(breaker: &std::sync::Arc<Breaker>, n: usize) -> Vec<OwnedPermit> {
    (0..n)
        .map(|i| {
            breaker
                .clone()
                .try_acquire_owned()
                .unwrap_or_else(|e| panic!("probe {i}: {e}"))
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn four_probes_are_admitted_and_no_fifth_even_after_some_answered() {
    let breaker = std::sync::Arc::new(Breaker::new(resilience4j().build().unwrap()));
    to_half_open(&breaker).await;
    let mut permits = probes(&breaker, 4);
    assert_eq!(breaker.state(), State::HalfOpen);
    assert!(matches!(
        breaker.try_acquire(),
        Err(BreakerError::HalfOpenFull { probes: 4, .. })
    ));
    permits.pop().unwrap().success();
    assert!(
        breaker.try_acquire().is_err(),
        "an answered probe's slot is spent: four answers a period"
    );
    assert_eq!(breaker.snapshot().probes_in_flight, 3);
}

#[tokio::test(start_paused = true)]
async fn a_failure_rate_below_the_threshold_closes_it_once_all_have_answered() {
    let breaker = std::sync::Arc::new(Breaker::new(resilience4j().build().unwrap()));
    to_half_open(&breaker).await;
    let mut permits = probes(&breaker, 4).into_iter();
    permits.next().unwrap().failure();
    assert_eq!(
        breaker.state(),
        State::HalfOpen,
        "the default rule would open on it; the rate rule waits for all four"
    );
    permits.next().unwrap().success();
    permits.next().unwrap().success();
    assert_eq!(breaker.state(), State::HalfOpen, "three of four in");
    permits.next().unwrap().success();
    assert_eq!(breaker.state(), State::Closed, "1 of 4 failed: 25% < 50%");
}

#[tokio::test(start_paused = true)]
async fn a_failure_rate_at_the_threshold_opens_it_again() {
    let breaker = std::sync::Arc::new(Breaker::new(resilience4j().build().unwrap()));
    to_half_open(&breaker).await;
    let mut permits = probes(&breaker, 4).into_iter();
    permits.next().unwrap().success();
    permits.next().unwrap().failure();
    permits.next().unwrap().success();
    assert_eq!(breaker.state(), State::HalfOpen);
    permits.next().unwrap().failure();
    assert_eq!(breaker.state(), State::Open, "2 of 4 failed: 50% ≥ 50%");
}

#[tokio::test(start_paused = true)]
async fn a_slow_call_rate_at_its_threshold_opens_it_again() {
    let breaker = std::sync::Arc::new(Breaker::new(resilience4j().build().unwrap()));
    to_half_open(&breaker).await;
    let permits = probes(&breaker, 4);
    advance(Duration::from_secs(6)).await;
    let mut permits = permits.into_iter();
    // Two slow successes, then two answered at once (the clock no longer moves).
    permits.next().unwrap().success();
    permits.next().unwrap().success();
    assert_eq!(breaker.state(), State::HalfOpen);
    permits.next().unwrap().success();
    permits.next().unwrap().success();
    assert_eq!(
        breaker.state(),
        State::Open,
        "4 of 4 slow: the slow-call rate reached 50%"
    );
}

#[tokio::test(start_paused = true)]
async fn slow_probes_under_the_slow_threshold_close_it() {
    let breaker = std::sync::Arc::new(Breaker::new(resilience4j().build().unwrap()));
    to_half_open(&breaker).await;
    let mut slow = probes(&breaker, 1);
    advance(Duration::from_secs(6)).await;
    slow.pop().unwrap().success();
    for permit in probes(&breaker, 3) {
        permit.success();
    }
    assert_eq!(breaker.state(), State::Closed, "1 slow of 4: 25% < 50%");
}

/// Resilience4j's `releasePermission` for an ignored error: the slot is given back, and the
/// call counts in no rate.
#[tokio::test(start_paused = true)]
async fn ignored_and_cancelled_probes_free_their_slot() {
    let breaker = std::sync::Arc::new(Breaker::new(resilience4j().build().unwrap()));
    to_half_open(&breaker).await;
    let mut permits = probes(&breaker, 4);
    permits.pop().unwrap().ignore();
    drop(permits.pop().unwrap());
    assert_eq!(breaker.snapshot().probes_in_flight, 2);
    permits.extend(probes(&breaker, 2));
    assert!(breaker.try_acquire().is_err());
    for permit in permits {
        permit.success();
    }
    assert_eq!(breaker.state(), State::Closed, "four answers, none failed");
}

#[tokio::test(start_paused = true)]
async fn a_probe_that_never_answers_gives_up_its_slot_after_the_break() {
    let breaker = std::sync::Arc::new(Breaker::new(resilience4j().build().unwrap()));
    to_half_open(&breaker).await;
    let mut permits = probes(&breaker, 4);
    let hung = permits.pop().unwrap();
    for permit in permits {
        permit.success();
    }
    assert_eq!(breaker.state(), State::HalfOpen, "one is still out");
    advance(BREAK).await;
    let stand_in = breaker
        .try_acquire()
        .expect("the hung probe gave up its slot");
    hung.failure();
    assert_eq!(
        breaker.state(),
        State::HalfOpen,
        "the hung probe's late answer counts nowhere"
    );
    stand_in.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn the_default_rule_is_unchanged_without_a_threshold() {
    let config = Config::builder()
        .count_window(5)
        .break_duration(BREAK)
        .probes(4);
    let breaker = std::sync::Arc::new(Breaker::new(config.build().unwrap()));
    assert_eq!(breaker.config().probe_threshold(), None);
    to_half_open(&breaker).await;
    let mut permits = probes(&breaker, 4).into_iter();
    permits.next().unwrap().success();
    assert!(
        breaker.try_acquire().is_ok(),
        "a success frees its slot for the run"
    );
    permits.next().unwrap().failure();
    assert_eq!(breaker.state(), State::Open, "the first failure opens it");
}

/// A change of `probe_threshold`, like one of `probes`, made while the circuit is open or
/// half-open applies from the circuit's next closing: a half-open period begins without the
/// lock, with the probe slots (and their rule) it finds.
#[tokio::test(start_paused = true)]
async fn a_live_change_of_rule_waits_for_the_circuit_to_close() {
    let config = Config::builder()
        .count_window(5)
        .break_duration(BREAK)
        .probes(2);
    let breaker = std::sync::Arc::new(Breaker::new(config.build().unwrap()));
    to_half_open(&breaker).await;
    let mut permits = probes(&breaker, 2).into_iter();
    let changed = breaker
        .update(Config::builder().probe_threshold(60.0))
        .unwrap();
    assert_eq!(changed.changed(), ["probe_threshold"]);
    assert_eq!(
        breaker.config().probe_threshold().map(|r| r.percent()),
        Some(60.0),
        "as set"
    );
    permits.next().unwrap().failure();
    assert_eq!(
        breaker.state(),
        State::Open,
        "this period began by the default rule"
    );

    advance(BREAK).await;
    for permit in probes(&breaker, 2) {
        permit.success();
    }
    assert_eq!(breaker.state(), State::Closed);

    to_half_open(&breaker).await;
    let mut permits = probes(&breaker, 2).into_iter();
    permits.next().unwrap().failure();
    assert_eq!(
        breaker.state(),
        State::HalfOpen,
        "now it judges by the rate"
    );
    permits.next().unwrap().success();
    assert_eq!(breaker.state(), State::Closed, "1 of 2 failed: 50% < 60%");
}

#[circuit_breaker(
    window = "2",
    break_duration = "1s",
    probes = 2,
    probe_threshold = "50%"
)]
async fn flaky(fail: bool) -> Result<(), std::io::Error> {
    breaker_tests::answer(fail)
}

#[tokio::test(start_paused = true)]
async fn the_attribute_takes_a_probe_threshold() {
    let _ = flaky(true).await;
    let _ = flaky(true).await;
    let breaker = breaker_runtime::registry()
        .get(concat!(module_path!(), "::flaky"))
        .expect("registered");
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(
        breaker.config().probe_threshold().map(|r| r.percent()),
        Some(50.0)
    );
    advance(Duration::from_secs(1)).await;
    let _ = flaky(false).await;
    assert_eq!(breaker.state(), State::HalfOpen, "one of two probes in");
    let _ = flaky(true).await;
    assert_eq!(breaker.state(), State::Open, "1 of 2 failed: 50%");
}
