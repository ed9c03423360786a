//! The counts an operator asks a breaker for: calls turned away, in total and since the last
//! transition, and how long the window's calls took (mean and longest). On tokio's paused
//! clock, in a test binary of their own: no call observer is installed here, so a breaker that
//! does not detect slow calls times nothing.

use breaker_runtime::{Mode, State};
use breaker_tests::{after, breaker, call, count, down, ms, up};

#[tokio::test(start_paused = true)]
async fn rejections_are_counted_in_total_and_since_the_last_transition() {
    let b = breaker(count(2).break_duration(ms(1_000)));
    assert_eq!(
        (
            b.snapshot().rejected,
            b.snapshot().rejected_since_transition
        ),
        (0, 0)
    );
    call(&b, down()).await;
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open);
    for _ in 0..3 {
        assert!(call(&b, up()).await);
    }
    assert!(
        b.try_acquire().is_err(),
        "the permit API's rejections count too"
    );
    let open = b.snapshot();
    assert_eq!((open.rejected, open.rejected_since_transition), (4, 4));

    tokio::time::advance(ms(1_000)).await;
    let probe = b.try_acquire().unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    assert!(b.try_acquire().is_err(), "its one probe slot is taken");
    let half_open = b.snapshot();
    assert_eq!(
        (half_open.rejected, half_open.rejected_since_transition),
        (5, 1)
    );
    probe.success();
    assert_eq!(b.state(), State::Closed);
    let closed = b.snapshot();
    assert_eq!((closed.rejected, closed.rejected_since_transition), (5, 0));

    b.force_open();
    assert!(call(&b, up()).await);
    assert!(call(&b, up()).await);
    let forced = b.snapshot();
    assert_eq!((forced.rejected, forced.rejected_since_transition), (7, 2));
}

#[tokio::test(start_paused = true)]
async fn a_breaker_in_shadow_mode_and_a_waiting_caller_turn_nobody_away() {
    let shadow = breaker(count(1).mode(Mode::Shadow));
    call(&shadow, down()).await;
    assert_eq!(shadow.state(), State::Open);
    assert!(!call(&shadow, up()).await, "let through");
    assert_eq!(shadow.snapshot().rejected, 0);

    let b = breaker(count(1).break_duration(ms(500)));
    call(&b, down()).await;
    let probe = b.admitted().await;
    assert!(probe.is_probe(), "waited through the break");
    probe.success();
    assert_eq!(b.snapshot().rejected, 0, "a waiter is never turned away");
}

#[tokio::test(start_paused = true)]
async fn the_window_durations_are_the_mean_and_the_longest_of_its_timed_calls() {
    let b = breaker(count(4).slow_call(ms(5_000)));
    let fresh = b.snapshot();
    assert_eq!((fresh.mean_duration, fresh.max_duration), (None, None));
    for took in [10, 20, 90] {
        b.call(after(ms(took), up())).await.unwrap().unwrap();
    }
    let snapshot = b.snapshot();
    assert_eq!(snapshot.mean_duration, Some(ms(40)));
    assert_eq!(snapshot.max_duration, Some(ms(90)));

    // Four more: the window holds four calls, and so do its durations.
    for took in [1, 2, 3, 6] {
        b.call(after(ms(took), up())).await.unwrap().unwrap();
    }
    let snapshot = b.snapshot();
    assert_eq!(snapshot.calls, 4);
    assert_eq!(
        snapshot.max_duration,
        Some(ms(6)),
        "the 90 ms call left the window"
    );
    assert_eq!(snapshot.mean_duration, Some(ms(3)));
}

#[tokio::test(start_paused = true)]
async fn open_they_are_those_of_the_window_that_tripped_and_a_new_period_starts_empty() {
    let b = breaker(count(2).slow_call(ms(5_000)).break_duration(ms(1_000)));
    b.call(after(ms(30), down())).await.unwrap().unwrap_err();
    b.call(after(ms(50), down())).await.unwrap().unwrap_err();
    assert_eq!(b.state(), State::Open);
    let open = b.snapshot();
    assert_eq!(
        (open.mean_duration, open.max_duration),
        (Some(ms(40)), Some(ms(50)))
    );

    tokio::time::advance(ms(1_000)).await;
    let probe = b.try_acquire().unwrap();
    let half_open = b.snapshot();
    assert_eq!(
        half_open.max_duration, None,
        "half-open, the window holds nothing"
    );
    probe.success();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(
        b.snapshot().max_duration,
        None,
        "the new window holds no call yet"
    );
    b.call(after(ms(7), up())).await.unwrap().unwrap();
    assert_eq!(b.snapshot().max_duration, Some(ms(7)));
}

#[tokio::test(start_paused = true)]
async fn a_time_window_keeps_the_durations_within_its_span() {
    let b = breaker(
        breaker_runtime::Config::builder()
            .time_window(ms(10_000))
            .no_timeout()
            .slow_call(ms(60_000)),
    );
    b.call(after(ms(800), up())).await.unwrap().unwrap();
    tokio::time::advance(ms(9_000)).await;
    b.call(after(ms(100), up())).await.unwrap().unwrap();
    assert_eq!(b.snapshot().max_duration, Some(ms(800)));
    tokio::time::advance(ms(1_500)).await;
    let later = b.snapshot();
    assert_eq!(
        later.max_duration,
        Some(ms(100)),
        "the 800 ms call is out of the span"
    );
    assert_eq!(later.mean_duration, Some(ms(100)));
}

#[tokio::test(start_paused = true)]
async fn a_breaker_that_times_nothing_reports_no_durations() {
    let b = breaker(count(4));
    b.call(after(ms(20), up())).await.unwrap().unwrap();
    let snapshot = b.snapshot();
    assert_eq!(snapshot.calls, 1);
    assert_eq!(
        (snapshot.mean_duration, snapshot.max_duration),
        (None, None)
    );
}
