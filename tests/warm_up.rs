//! `warm_up` (issue 47; opossum's `allowWarmUp`): for a while after a breaker's first call the
//! circuit does not open, whatever its window says; the outcomes are still recorded, and the
//! first judgement after the warm-up sees them. opossum's own scenarios, on tokio's paused clock:
//! failures during the warm-up leave it closed; the first failure after it opens; without a
//! warm-up the same failures open it at once.

use std::time::Duration;

use breaker_runtime::{Breaker, BreakerError, Config, Heeded, Order, State, circuit_breaker};

fn failing(breaker: &Breaker, times: usize) {
    for _ in 0..times {
        if let Ok(permit) = breaker.try_acquire() {
            permit.failure();
        }
    }
}

fn warmed(config: breaker_runtime::ConfigBuilder) -> Breaker {
    Breaker::new(config.warm_up(Duration::from_secs(30)).build().unwrap())
}

#[tokio::test(start_paused = true)]
async fn failures_in_the_warm_up_leave_it_closed_and_the_first_judgement_after_it_opens() {
    let breaker = warmed(Config::builder().count_window(4));
    failing(&breaker, 10);
    assert_eq!(breaker.state(), State::Closed, "warming up");
    assert_eq!(breaker.snapshot().failures, 4, "the window recorded them");

    tokio::time::advance(Duration::from_secs(30) - Duration::from_millis(1)).await;
    failing(&breaker, 1);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "a millisecond before its end"
    );
    tokio::time::advance(Duration::from_millis(1)).await;
    failing(&breaker, 1);
    assert_eq!(
        breaker.state(),
        State::Open,
        "a failure pushing out a failure is judged"
    );

    // opossum without allowWarmUp: the same failures open it at once.
    let cold = Breaker::new(Config::builder().count_window(4).build().unwrap());
    failing(&cold, 4);
    assert_eq!(cold.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn the_first_outcome_after_the_warm_up_is_judged_even_a_success() {
    let breaker = warmed(Config::builder().count_window(4).threshold(50.0));
    failing(&breaker, 4);
    tokio::time::advance(Duration::from_secs(30)).await;
    // Three failures and a success of the last four: 75%.
    breaker.try_acquire().unwrap().success();
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn a_time_window_keeps_what_the_warm_up_recorded() {
    let config = Config::builder()
        .time_window(Duration::from_secs(60))
        .min_calls(5);
    let breaker = warmed(config);
    failing(&breaker, 5);
    assert_eq!(breaker.state(), State::Closed);
    tokio::time::advance(Duration::from_secs(30)).await;
    failing(&breaker, 1);
    assert_eq!(
        breaker.state(),
        State::Open,
        "six failures in the last minute"
    );
}

/// The clock starts at the first call, not when the breaker is built: a dependency first
/// called an hour after the program started gets its warm-up then.
#[tokio::test(start_paused = true)]
async fn the_warm_up_counts_from_the_first_call_not_from_the_build() {
    let breaker = warmed(Config::builder().count_window(2));
    tokio::time::advance(Duration::from_secs(3_600)).await;
    assert_eq!(breaker.warm_up_ends(), None, "no call yet");
    let first = tokio::time::Instant::now();
    failing(&breaker, 2);
    assert_eq!(
        breaker.warm_up_ends(),
        Some(first + Duration::from_secs(30))
    );
    assert_eq!(breaker.state(), State::Closed);
}

/// A reset closes the circuit and leaves the warm-up where it was: it belongs to the process's
/// start, not to the circuit's last closing.
#[tokio::test(start_paused = true)]
async fn a_reset_does_not_start_the_warm_up_again() {
    let breaker = warmed(Config::builder().count_window(2));
    failing(&breaker, 1);
    tokio::time::advance(Duration::from_secs(40)).await;
    breaker.reset();
    failing(&breaker, 2);
    assert_eq!(breaker.state(), State::Open, "warm already");
}

/// A live change moves the warm-up's end (from the same first call); one set on a breaker that
/// had none starts at its next call; one taken away lets the next judgement open.
#[tokio::test(start_paused = true)]
async fn a_live_change_moves_the_end_counted_from_the_first_call() {
    let breaker = warmed(Config::builder().count_window(2));
    let first = tokio::time::Instant::now();
    failing(&breaker, 2);
    let change = breaker
        .update(Config::builder().warm_up(Duration::from_secs(90)))
        .unwrap();
    assert_eq!(
        change.changed(),
        ["warm_up"],
        "named in the change and its log line"
    );
    assert_eq!(
        breaker.warm_up_ends(),
        Some(first + Duration::from_secs(90))
    );
    assert_eq!(breaker.config().warm_up(), Some(Duration::from_secs(90)));
    tokio::time::advance(Duration::from_secs(60)).await;
    failing(&breaker, 1);
    assert_eq!(breaker.state(), State::Closed, "60 s in, of 90");

    // A change of another option keeps it.
    breaker.update(Config::builder().threshold(60.0)).unwrap();
    assert_eq!(breaker.config().warm_up(), Some(Duration::from_secs(90)));
    assert_eq!(
        breaker.built_config().warm_up(),
        Some(Duration::from_secs(30))
    );
    breaker.reset_config();
    assert_eq!(
        breaker.config().warm_up(),
        Some(Duration::from_secs(30)),
        "as built"
    );
    breaker
        .update(Config::builder().warm_up(Duration::from_secs(90)))
        .unwrap();

    let mut none = breaker.config().settings();
    none.warm_up = None;
    breaker.reconfigure(none).unwrap();
    failing(&breaker, 1);
    assert_eq!(breaker.state(), State::Open, "no warm-up: judged at once");

    let late = Breaker::new(Config::builder().count_window(2).build().unwrap());
    failing(&late, 1);
    tokio::time::advance(Duration::from_secs(10)).await;
    late.update(Config::builder().warm_up(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(late.warm_up_ends(), None, "waits for the next call");
    let next = tokio::time::Instant::now();
    failing(&late, 2);
    assert_eq!(late.warm_up_ends(), Some(next + Duration::from_secs(30)));
    assert_eq!(late.state(), State::Closed);
}

/// Only the window's judgement waits: a fleet's order (a member joining a fleet that is open),
/// an operator's command and a drill open it as ever.
#[tokio::test(start_paused = true)]
async fn a_fleet_order_and_an_operator_open_it_warm_up_or_not() {
    let breaker = std::sync::Arc::new(warmed(Config::builder().count_window(2)));
    failing(&breaker, 1);
    let open = Order::Open {
        remaining: Duration::from_secs(10),
    };
    assert_eq!(breaker.apply_order(1, open), Heeded::Applied);
    assert_eq!(breaker.state(), State::Open);
    breaker.reset();
    breaker.force_open();
    assert_eq!(breaker.state(), State::ForcedOpen);
    breaker.reset();
    breaker.drill(Duration::from_secs(5)).unwrap();
    assert_eq!(breaker.state(), State::ForcedOpen);
}

#[circuit_breaker(window = "2", warm_up = "30s")]
async fn warmed_by_the_attribute(fail: bool) -> Result<(), std::io::Error> {
    if fail {
        Err(std::io::ErrorKind::ConnectionReset.into())
    } else {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn the_attribute_takes_it() {
    for _ in 0..4 {
        let _ = warmed_by_the_attribute(true).await;
    }
    assert!(
        warmed_by_the_attribute(false).await.is_ok(),
        "closed while warming up"
    );
    tokio::time::advance(Duration::from_secs(30)).await;
    let _ = warmed_by_the_attribute(true).await;
    let _ = warmed_by_the_attribute(true).await;
    let rejected = warmed_by_the_attribute(false).await.unwrap_err();
    let rejection = rejected
        .get_ref()
        .and_then(|e| e.downcast_ref::<BreakerError>());
    assert!(
        rejection.is_some_and(BreakerError::is_rejection),
        "{rejected}"
    );
}
