//! `window_kind = "fixed"` (issue 47; gobreaker's `Interval`, Polly's short sampling duration):
//! a time window whose counts all clear at each edge of its span, the edges on the process's
//! clock as the sliding window's buckets are. The peers' own scenarios, on tokio's paused clock,
//! each beside what a sliding window of the same span does with the same calls.

use std::time::Duration;

use breaker_runtime::trace::bucket_start_of;
use breaker_runtime::{Breaker, Config, ConfigBuilder, State, Window, WindowKind, circuit_breaker};
use tokio::time::{Instant, advance};

fn succeed(breaker: &Breaker, times: usize) {
    for _ in 0..times {
        breaker.try_acquire().expect("closed").success();
    }
}

fn fail(breaker: &Breaker, times: usize) {
    for _ in 0..times {
        breaker.try_acquire().expect("closed").failure();
    }
}

/// Moves the paused clock to the next edge of a fixed window of `span`, so a test starts at the
/// beginning of an interval as gobreaker's and Polly's start at the beginning of theirs.
async fn to_next_edge(span: Duration) {
    let now = Instant::now();
    let edge = bucket_start_of(Window::Time(span), WindowKind::Fixed, now + span);
    advance(edge - now).await;
}

fn counts(breaker: &Breaker) -> (u32, u32) {
    let snapshot = breaker.snapshot();
    (snapshot.calls, snapshot.failures)
}

/// gobreaker's `TestCustomCircuitBreaker`: `Interval` 30 s, and `ReadyToTrip` at 3 requests
/// with a failure ratio of 60%. Ten calls, half failed; 29 s later a success; past the
/// interval's end, a failure finds the counts cleared.
#[tokio::test(start_paused = true)]
async fn gobreaker_interval_clears_every_count_at_the_intervals_end() {
    let span = Duration::from_secs(30);
    let options = || Config::builder().threshold(60.0).min_calls(3);
    to_next_edge(span).await;
    let fixed = Breaker::new(options().fixed_window(span).build().unwrap());
    let sliding = Breaker::new(options().time_window(span).build().unwrap());
    for breaker in [&fixed, &sliding] {
        for _ in 0..5 {
            succeed(breaker, 1);
            fail(breaker, 1);
        }
        assert_eq!(breaker.state(), State::Closed);
        assert_eq!(counts(breaker), (10, 5));
    }

    advance(Duration::from_secs(29)).await;
    for breaker in [&fixed, &sliding] {
        succeed(breaker, 1);
        assert_eq!(counts(breaker), (11, 5));
    }

    advance(Duration::from_millis(1_811)).await;
    fail(&fixed, 1);
    assert_eq!(
        counts(&fixed),
        (1, 1),
        "the interval ended: every count cleared at once"
    );
    fail(&sliding, 1);
    assert_eq!(
        counts(&sliding),
        (12, 6),
        "a sliding window lets its oldest tenth go only later"
    );

    // gobreaker: two more failures in the new interval trip it (3 requests, 100%).
    fail(&fixed, 2);
    assert_eq!(fixed.state(), State::Open);
    fail(&sliding, 2);
    assert_eq!(sliding.state(), State::Closed, "8 of 14 is under 60%");
}

/// Polly's test breaker: a failure threshold of 50% and a minimum throughput of 4 over a
/// sampling duration of 199 ms, under its 200 ms resolution.
fn polly() -> (Duration, Breaker) {
    let span = Duration::from_millis(199);
    let config = Config::builder()
        .threshold(50.0)
        .fixed_window(span)
        .min_calls(4);
    (span, Breaker::new(config.build().unwrap()))
}

/// Polly's advanced circuit breaker with a sampling duration under its 200 ms resolution keeps
/// one bucket that resets when the duration passes:
/// `Should_not_open_circuit_if_failures_at_end_of_last_timeslice_below_failure_threshold_and_failures_in_beginning_of_new_timeslice_where_total_equals_failure_threshold_low_sampling_duration`.
#[tokio::test(start_paused = true)]
async fn polly_failures_either_side_of_an_edge_do_not_add_up() {
    let (span, breaker) = polly();
    to_next_edge(span).await;
    succeed(&breaker, 1);
    advance(span - Duration::from_millis(1)).await;
    // The rest of the first interval's calls, just before its end: one failure of three,
    // under `min_calls`.
    succeed(&breaker, 1);
    fail(&breaker, 1);
    assert_eq!(counts(&breaker), (3, 1));
    advance(Duration::from_millis(1)).await;
    // Together with the last interval's, 2 of 4: a sliding window would open here.
    fail(&breaker, 1);
    assert_eq!(breaker.state(), State::Closed, "a new interval: one call");
    assert_eq!(counts(&breaker), (1, 1));
}

/// Polly: `Should_open_circuit_if_failure_threshold_exceeded_and_throughput_threshold_equalled_within_timeslice_low_sampling_duration`.
#[tokio::test(start_paused = true)]
async fn polly_the_threshold_met_within_one_interval_opens_it() {
    let (span, breaker) = polly();
    to_next_edge(span).await;
    succeed(&breaker, 1);
    advance(span - Duration::from_millis(1)).await;
    succeed(&breaker, 1);
    fail(&breaker, 1);
    assert_eq!(breaker.state(), State::Closed, "3 calls: under min_calls");
    fail(&breaker, 1);
    assert_eq!(breaker.state(), State::Open, "2 of 4 in the interval");
}

async fn slow(breaker: &Breaker) {
    let permit = breaker.try_acquire().expect("closed");
    advance(Duration::from_millis(150)).await;
    permit.success();
}

#[tokio::test(start_paused = true)]
async fn the_slow_call_rate_is_judged_over_the_interval_and_cleared_with_it() {
    let span = Duration::from_secs(10);
    let breaker = Breaker::new(
        Config::builder()
            .fixed_window(span)
            .min_calls(4)
            .slow_call(Duration::from_millis(100))
            .slow_threshold(50.0)
            .build()
            .unwrap(),
    );
    to_next_edge(span).await;
    slow(&breaker).await;
    succeed(&breaker, 2);
    advance(span).await;
    // The slow call's interval is over: one slow call of four in this one is 25%.
    slow(&breaker).await;
    succeed(&breaker, 3);
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.snapshot().slow, 1);
    slow(&breaker).await;
    slow(&breaker).await;
    assert_eq!(breaker.state(), State::Open, "3 slow of 6 in the interval");
}

#[tokio::test(start_paused = true)]
async fn a_change_of_kind_starts_empty_and_a_change_of_span_keeps_the_kind() {
    let span = Duration::from_secs(60);
    let breaker = Breaker::new(
        Config::builder()
            .time_window(span)
            .min_calls(10)
            .build()
            .unwrap(),
    );
    fail(&breaker, 3);
    assert_eq!(counts(&breaker), (3, 3));

    let changed = breaker
        .update(Config::builder().window_kind(WindowKind::Fixed))
        .unwrap();
    assert_eq!(changed.changed(), ["window_kind"]);
    assert_eq!(breaker.config().window_kind(), WindowKind::Fixed);
    assert_eq!(
        counts(&breaker),
        (0, 0),
        "a sliding window's counts fit no interval"
    );
    fail(&breaker, 2);

    breaker
        .update(Config::builder().time_window(Duration::from_secs(120)))
        .unwrap();
    assert_eq!(
        breaker.config().window_kind(),
        WindowKind::Fixed,
        "a new span, the same kind"
    );
    assert_eq!(
        counts(&breaker),
        (2, 2),
        "the interval's counts carried over"
    );

    breaker.update(Config::builder().count_window(20)).unwrap();
    assert_eq!(
        breaker.config().window_kind(),
        WindowKind::Sliding,
        "a count window only slides"
    );
}

#[test]
fn a_fixed_count_window_is_refused_with_the_fix() {
    let refused = Config::builder()
        .window_kind(WindowKind::Fixed)
        .count_window(20)
        .window_kind(WindowKind::Fixed)
        .build()
        .unwrap_err();
    assert_eq!(refused.field(), "window_kind");
    assert!(refused.to_string().contains("\"60s\""), "{refused}");
}

#[circuit_breaker(
    window = "1s",
    window_kind = "fixed",
    min_calls = 2,
    threshold = "100%"
)]
async fn flaky(fail: bool) -> Result<(), std::io::Error> {
    breaker_tests::answer(fail)
}

#[tokio::test(start_paused = true)]
async fn the_attribute_takes_a_fixed_window() {
    to_next_edge(Duration::from_secs(1)).await;
    let _ = flaky(true).await;
    advance(Duration::from_millis(1_001)).await;
    let _ = flaky(true).await;
    let breaker = breaker_runtime::registry()
        .get(concat!(module_path!(), "::flaky"))
        .expect("registered");
    assert_eq!(breaker.config().window_kind(), WindowKind::Fixed);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "one failure in each interval"
    );
    let _ = flaky(true).await;
    assert_eq!(breaker.state(), State::Open);
}

/// The builder's fixed window is the attribute's `window = "60s", window_kind = "fixed"`.
#[test]
fn the_builder_and_the_kind_setter_agree() {
    let by_kind: ConfigBuilder = Config::builder()
        .time_window(Duration::from_secs(60))
        .window_kind(WindowKind::Fixed);
    let fixed = Config::builder().fixed_window(Duration::from_secs(60));
    assert_eq!(by_kind.build().unwrap(), fixed.build().unwrap());
}
