//! SPEC section 3: states. One test per rule, on tokio's paused clock.

use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::{Breaker, BreakerError, State, Verdict};
use breaker_tests::{
    after, breaker, call, count, down, ms, panicking_call, record_transitions, up,
};

/// Fails calls until the circuit opens; a breaker that does not open within its window's worth
/// of failures (a broken trip rule) fails the test here instead of hanging it.
async fn trip(b: &Breaker) {
    let most = b.config().min_calls().max(match b.config().window() {
        breaker_runtime::Window::Count(n) => n,
        breaker_runtime::Window::Time(_) => 0,
    });
    for _ in 0..=most {
        if b.state() != State::Closed {
            break;
        }
        call(b, down()).await;
    }
    assert_eq!(
        b.state(),
        State::Open,
        "{} failures in a row did not open the circuit",
        most + 1
    );
}

// --- Closed -----------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn closed_judges_after_every_record_a_success_too() {
    let b = breaker(count(4).threshold(50.0));
    for result in [down(), down(), up()] {
        call(&b, result).await;
    }
    assert_eq!(
        b.state(),
        State::Closed,
        "3 outcomes are fewer than min_calls = 4"
    );
    call(&b, up()).await;
    assert_eq!(
        b.state(),
        State::Open,
        "the success made 4 outcomes with a 50% failure rate"
    );
}

#[tokio::test(start_paused = true)]
async fn closed_opens_when_the_failure_rate_equals_the_threshold() {
    let b = breaker(count(10).threshold(30.0));
    for _ in 0..7 {
        call(&b, up()).await;
    }
    for _ in 0..2 {
        call(&b, down()).await;
    }
    assert_eq!(b.state(), State::Closed);
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open, "3 of 10 is exactly 30%");
}

#[tokio::test(start_paused = true)]
async fn closed_stays_closed_below_the_threshold() {
    let b = breaker(count(10).threshold(30.01));
    for result in [
        up(),
        up(),
        up(),
        up(),
        up(),
        up(),
        up(),
        down(),
        down(),
        down(),
    ] {
        call(&b, result).await;
    }
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.snapshot().failures, 3);
}

#[tokio::test(start_paused = true)]
async fn closed_does_not_judge_before_min_calls() {
    let b = breaker(count(10).min_calls(5));
    for _ in 0..4 {
        call(&b, down()).await;
    }
    assert_eq!(
        b.state(),
        State::Closed,
        "4 failures, but fewer than min_calls"
    );
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn closed_count_window_holds_only_the_last_n_outcomes() {
    let b = breaker(count(4).threshold(50.0));
    call(&b, down()).await;
    for _ in 0..4 {
        call(&b, up()).await;
    }
    let s = b.snapshot();
    assert_eq!(
        (s.calls, s.failures),
        (4, 0),
        "the first failure left the window"
    );
    call(&b, down()).await;
    assert_eq!(b.state(), State::Closed, "1 failure in the last 4");
}

#[tokio::test(start_paused = true)]
async fn closed_opens_when_the_slow_rate_reaches_the_slow_threshold() {
    let b = breaker(count(4).slow_call(ms(100)).slow_threshold(50.0));
    call(&b, up()).await;
    call(&b, up()).await;
    b.call(after(ms(150), up())).await.unwrap().unwrap();
    assert_eq!(b.snapshot().slow, 1);
    assert_eq!(b.state(), State::Closed);
    b.call(after(ms(101), up())).await.unwrap().unwrap();
    assert_eq!(b.state(), State::Open, "2 slow successes of 4 reach 50%");
}

#[tokio::test(start_paused = true)]
async fn failures_and_slow_successes_are_counted_apart_in_one_window() {
    let b = breaker(count(4).slow_call(ms(100)).slow_threshold(50.0));
    call(&b, up()).await;
    call(&b, up()).await;
    call(&b, down()).await;
    b.call(after(ms(150), up())).await.unwrap().unwrap();
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.slow), (4, 1, 1));
    assert_eq!(
        b.state(),
        State::Closed,
        "1 failure (25% < 50%) and 1 slow success (25% < 50%): a failure is not slow"
    );
}

#[tokio::test(start_paused = true)]
async fn closed_a_call_at_exactly_slow_call_is_not_slow() {
    let b = breaker(count(2).slow_call(ms(100)));
    b.call(after(ms(100), up())).await.unwrap().unwrap();
    assert_eq!(b.snapshot().slow, 0);
}

#[tokio::test(start_paused = true)]
async fn closed_time_window_counts_what_was_recorded_in_the_last_d() {
    let b = breaker(
        count(1)
            .time_window(Duration::from_secs(10))
            .min_calls(4)
            .threshold(50.0),
    );
    call(&b, down()).await;
    call(&b, down()).await;
    tokio::time::advance(Duration::from_secs(12)).await;
    call(&b, up()).await;
    call(&b, down()).await;
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (2, 1), "the first two aged out");
    call(&b, up()).await;
    call(&b, down()).await;
    assert_eq!(
        b.state(),
        State::Open,
        "2 of the 4 recorded in the last 10 s failed"
    );
}

#[tokio::test(start_paused = true)]
async fn closed_time_window_min_calls_defaults_to_10() {
    let b = breaker(count(1).time_window(Duration::from_secs(10)));
    for _ in 0..9 {
        call(&b, down()).await;
    }
    assert_eq!(b.state(), State::Closed);
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open);
}

// --- Open ------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn open_rejects_without_running_the_body() {
    let b = breaker(count(2));
    trip(&b).await;
    let ran = std::sync::atomic::AtomicBool::new(false);
    let result = b
        .call(async {
            ran.store(true, std::sync::atomic::Ordering::SeqCst);
            up()
        })
        .await;
    assert!(matches!(result, Err(BreakerError::Open { .. })));
    assert!(!ran.into_inner());
}

#[tokio::test(start_paused = true)]
async fn open_admits_a_probe_from_the_instant_the_break_has_passed() {
    let b = breaker(count(2).break_duration(Duration::from_secs(30)));
    trip(&b).await;
    tokio::time::advance(Duration::from_secs(30) - Duration::from_nanos(1)).await;
    assert!(call(&b, up()).await, "a nanosecond early is still open");
    tokio::time::advance(Duration::from_nanos(1)).await;
    let permit = b
        .try_acquire()
        .expect("exactly at the break, a probe is admitted");
    assert!(permit.is_probe());
    assert_eq!(b.state(), State::HalfOpen);
    permit.success();
}

#[tokio::test(start_paused = true)]
async fn open_needs_no_background_task_to_half_open() {
    let b = breaker(count(2).break_duration(ms(50)));
    trip(&b).await;
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert_eq!(
        b.state(),
        State::Open,
        "nothing moves the state until a call arrives"
    );
    call(&b, up()).await;
    assert_eq!(b.state(), State::Closed);
}

// --- Half-open -------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn half_open_admits_at_most_probes_calls_at_once() {
    let b = breaker(count(2).probes(3).break_duration(ms(10)));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    let permits: Vec<_> = (0..3).map(|_| b.try_acquire().unwrap()).collect();
    assert!(matches!(
        b.try_acquire(),
        Err(BreakerError::HalfOpenFull { probes: 3, .. })
    ));
    assert_eq!(b.snapshot().probes_in_flight, 3);
    drop(permits);
}

#[tokio::test(start_paused = true)]
async fn half_open_closes_after_probes_consecutive_successes_with_an_empty_window() {
    let b = breaker(count(4).probes(2).break_duration(ms(10)));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    call(&b, up()).await;
    assert_eq!(b.state(), State::HalfOpen, "one success of two");
    call(&b, up()).await;
    assert_eq!(b.state(), State::Closed);
    assert_eq!(
        b.snapshot().calls,
        0,
        "the probes are not carried into the window"
    );
}

#[tokio::test(start_paused = true)]
async fn half_open_a_failed_probe_opens_the_circuit_again() {
    let b = breaker(count(2).probes(2).break_duration(ms(10)));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    call(&b, up()).await;
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open);
    assert!(call(&b, up()).await);
}

#[tokio::test(start_paused = true)]
async fn half_open_a_slow_probe_counts_as_failed_when_slow_call_is_set() {
    let b = breaker(count(2).break_duration(ms(10)).slow_call(ms(100)));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    b.call(after(ms(200), up())).await.unwrap().unwrap();
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn half_open_break_grows_after_each_failed_probe_up_to_max_break_duration() {
    let b = breaker(count(2).break_duration(ms(100)).max_break_duration(ms(500)));
    trip(&b).await;
    // Break k after the k-th failed probe in a row: 100 × 2^k, capped at 500.
    for expected in [100, 200, 400, 500, 500] {
        tokio::time::advance(ms(expected - 1)).await;
        assert!(
            call(&b, up()).await,
            "still open 1 ms before a {expected} ms break ends"
        );
        tokio::time::advance(ms(1)).await;
        call(&b, down()).await;
        assert_eq!(b.state(), State::Open);
    }
}

#[tokio::test(start_paused = true)]
async fn half_open_break_does_not_grow_without_max_break_duration() {
    let b = breaker(count(2).break_duration(ms(100)));
    trip(&b).await;
    for _ in 0..3 {
        tokio::time::advance(ms(100)).await;
        call(&b, down()).await;
        assert_eq!(b.state(), State::Open);
    }
}

#[tokio::test(start_paused = true)]
async fn half_open_break_resets_when_the_circuit_closes() {
    let b = breaker(
        count(2)
            .break_duration(ms(100))
            .max_break_duration(ms(1000)),
    );
    trip(&b).await;
    tokio::time::advance(ms(100)).await;
    call(&b, down()).await; // break now 200
    tokio::time::advance(ms(200)).await;
    call(&b, up()).await;
    assert_eq!(b.state(), State::Closed);
    trip(&b).await;
    tokio::time::advance(ms(100)).await;
    assert!(!call(&b, up()).await, "the break is back at 100 ms");
}

#[tokio::test(start_paused = true)]
async fn half_open_ignored_and_cancelled_probes_neither_count_nor_break_the_run() {
    let b = breaker(count(2).probes(2).break_duration(ms(10)));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    b.try_acquire().unwrap().success();
    b.try_acquire().unwrap().ignore();
    drop(b.try_acquire().unwrap()); // cancelled
    assert_eq!(b.state(), State::HalfOpen, "one success so far");
    assert_eq!(
        b.snapshot().probes_in_flight,
        0,
        "the ignored and cancelled probes freed their slots"
    );
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn half_open_a_probe_that_never_answers_gives_up_its_slot_after_break_duration() {
    let b = breaker(count(2).break_duration(ms(100)));
    trip(&b).await;
    tokio::time::advance(ms(100)).await;
    let hung = b.try_acquire().unwrap();
    tokio::time::advance(ms(99)).await;
    assert!(matches!(
        b.try_acquire(),
        Err(BreakerError::HalfOpenFull { .. })
    ));
    tokio::time::advance(ms(1)).await;
    let next = b.try_acquire().expect("the hung probe's slot is free");
    // The hung probe's late outcome still counts: the half-open period has not ended.
    hung.failure();
    assert_eq!(b.state(), State::Open);
    drop(next);
}

#[tokio::test(start_paused = true)]
async fn half_open_a_cancelled_probe_frees_its_slot() {
    let b = breaker(
        count(2)
            .break_duration(ms(10))
            .timeout(Duration::from_secs(60)),
    );
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    let probe = b.call(after(Duration::from_secs(10), up()));
    tokio::select! {
        _ = probe => unreachable!("the probe takes 10 s"),
        _ = tokio::time::sleep(ms(1)) => {}
    }
    assert_eq!(b.snapshot().probes_in_flight, 0);
    call(&b, up()).await;
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn half_open_a_panicking_probe_fails_and_frees_its_slot() {
    let b = Arc::new(breaker(count(2).break_duration(ms(10))));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    let panicked = panicking_call(&b).await;
    assert!(panicked, "the panic reached the caller");
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.snapshot().probes_in_flight, 0);
}

// --- Periods and transitions -----------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn an_outcome_counts_only_in_the_period_its_call_was_admitted_in() {
    let b = breaker(count(2).break_duration(ms(10)));
    let late = b.try_acquire().unwrap();
    trip(&b).await;
    late.failure();
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(ms(10)).await;
    call(&b, up()).await;
    assert_eq!(b.state(), State::Closed);

    let late = b.try_acquire().unwrap();
    b.reset();
    late.failure();
    assert_eq!(
        b.snapshot().calls,
        0,
        "a call admitted before the reset records nothing after it"
    );
}

#[tokio::test(start_paused = true)]
async fn a_late_probe_outcome_after_the_half_open_period_records_nothing() {
    let b = breaker(count(2).probes(2).break_duration(ms(10)));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    let first = b.try_acquire().unwrap();
    let second = b.try_acquire().unwrap();
    second.failure();
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(ms(10)).await;
    let new_probe = b.try_acquire().unwrap();
    first.success();
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "the stale success did not count toward closing"
    );
    new_probe.success();
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "one of two successes in the new period"
    );
}

#[tokio::test(start_paused = true)]
async fn a_late_probe_failure_from_an_earlier_half_open_period_does_not_reopen_the_next() {
    let b = breaker(count(2).probes(2).break_duration(ms(10)));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    let late = b.try_acquire().unwrap();
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(ms(20)).await;
    let probe = b.try_acquire().unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    late.failure();
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "a failure admitted in the earlier half-open period counts in none"
    );
    probe.success();
    b.try_acquire().unwrap().success();
    assert_eq!(
        b.state(),
        State::Closed,
        "the new period's own probes decide"
    );
}

#[tokio::test(start_paused = true)]
async fn with_one_probe_a_late_probe_success_from_an_earlier_period_does_not_close_the_next() {
    let b = breaker(count(2).probes(1).break_duration(ms(10)));
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    let late = b.try_acquire().unwrap();
    // The probe has run for a whole break: it gives its slot up to another probe.
    tokio::time::advance(ms(10)).await;
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(ms(20)).await;
    let probe = b.try_acquire().unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    late.success();
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "a success admitted in the earlier half-open period closes nothing"
    );
    probe.success();
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn every_transition_empties_the_window() {
    let b = breaker(
        count(10)
            .min_calls(2)
            .threshold(100.0)
            .break_duration(ms(10)),
    );
    call(&b, up()).await;
    assert_eq!(b.snapshot().calls, 1);
    b.force_open();
    b.reset();
    assert_eq!(b.snapshot().calls, 0);
    trip(&b).await;
    tokio::time::advance(ms(10)).await;
    call(&b, up()).await;
    assert_eq!(b.snapshot().calls, 0);
}

#[tokio::test(start_paused = true)]
async fn the_full_cycle_is_announced_once_per_transition() {
    let b = breaker(count(2).break_duration(ms(10)));
    let seen = record_transitions(&b);
    trip(&b).await;
    call(&b, up()).await;
    tokio::time::advance(ms(10)).await;
    call(&b, down()).await;
    tokio::time::advance(ms(10)).await;
    call(&b, up()).await;
    use State::*;
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            (Closed, Open),
            (Open, HalfOpen),
            (HalfOpen, Open),
            (Open, HalfOpen),
            (HalfOpen, Closed)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn ignored_outcomes_record_nothing_in_closed() {
    let b = breaker(count(2));
    b.try_acquire().unwrap().record(Verdict::Ignore);
    drop(b.try_acquire().unwrap());
    assert_eq!(b.snapshot().calls, 0);
}

#[tokio::test]
async fn open_a_test_may_pause_the_clock_after_the_circuit_opened() {
    // The circuit opens on a running clock; the test pauses it only then. The break is still
    // measured on tokio's clock, so advancing it lets the probe through.
    let b = breaker(count(2).break_duration(Duration::from_secs(30)));
    trip(&b).await;
    assert_eq!(b.state(), State::Open);
    tokio::time::pause();
    tokio::time::advance(Duration::from_secs(30) - Duration::from_millis(1)).await;
    assert!(b.try_acquire().unwrap_err().is_rejection());
    tokio::time::advance(Duration::from_millis(1)).await;
    assert!(b.try_acquire().unwrap().is_probe());
}
