//! The seams for what runs the breaker from outside its calls: waiting for admission (a
//! message consumer that must not pull while the circuit is open), orders from another process
//! (a fleet sharing one circuit), and monotonic counts to export. All on tokio's paused clock
//! but one, which must race real threads.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::{Counts, Heeded, OpenReason, Order, Origin, State, Verdict};
use breaker_tests::{breaker, count, ms};
use tokio::time::{Instant, advance, timeout};

/// A breaker with a count window of 1 that has just opened for a 30 s break.
fn opened() -> Arc<breaker_runtime::Breaker> {
    let breaker = Arc::new(breaker(count(1).break_duration(Duration::from_secs(30))));
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
    breaker
}

/// Lets spawned tasks run until each is parked again.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_waiter_sleeps_through_the_break_and_is_admitted_as_its_probe_at_the_instant_it_ends() {
    let breaker = opened();
    let opened_at = Instant::now();
    let waiting = Arc::clone(&breaker);
    let admitted = tokio::spawn(async move {
        let permit = waiting.admitted().await;
        (Instant::now(), permit.is_probe())
    });
    advance(Duration::from_secs(30) - Duration::from_nanos(1)).await;
    settle().await;
    assert!(!admitted.is_finished(), "admitted before the break ended");
    assert_eq!(breaker.state(), State::Open);
    advance(Duration::from_nanos(1)).await;
    let (at, probe) = admitted.await.unwrap();
    assert_eq!(at - opened_at, Duration::from_secs(30));
    assert!(probe, "the waiter's call is the probe");
}

#[tokio::test(start_paused = true)]
async fn a_closed_or_disabled_breaker_admits_a_waiter_at_once() {
    let breaker = breaker(count(4));
    let permit = timeout(ms(1), breaker.admitted())
        .await
        .expect("closed admits at once");
    assert!(!permit.is_probe());
    permit.success();
    breaker.disable();
    timeout(ms(1), breaker.admitted())
        .await
        .expect("disabled admits at once")
        .success();
    assert_eq!(
        breaker.snapshot().calls,
        0,
        "a disabled breaker records nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn a_forced_open_breaker_holds_its_waiter_until_the_operator_lets_go() {
    let breaker = Arc::new(breaker(count(4)));
    breaker.force_open();
    let waiting = Arc::clone(&breaker);
    let admitted = tokio::spawn(async move { waiting.admitted().await.success() });
    advance(Duration::from_secs(3600)).await;
    settle().await;
    assert!(!admitted.is_finished(), "forced open admits nobody");
    breaker.reset();
    timeout(ms(1), admitted)
        .await
        .expect("the reset wakes it")
        .unwrap();
    assert_eq!(breaker.snapshot().calls, 1);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_behind_a_full_half_open_circuit_takes_the_slot_its_probe_gives_back() {
    let breaker = opened();
    advance(Duration::from_secs(30)).await;
    let probe = breaker.try_acquire().unwrap();
    assert!(
        probe.is_probe() && breaker.try_acquire().is_err(),
        "its one slot is taken"
    );
    let waiting = Arc::clone(&breaker);
    let admitted = tokio::spawn(async move { waiting.admitted().await.is_probe() });
    settle().await;
    assert!(!admitted.is_finished());
    drop(probe); // cancelled: records nothing, gives the slot back
    let took_the_slot = timeout(ms(1), admitted)
        .await
        .expect("woken by the slot")
        .unwrap();
    assert!(took_the_slot);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_dropped_while_waiting_holds_nothing() {
    let breaker = opened();
    assert!(
        timeout(Duration::from_secs(10), breaker.admitted())
            .await
            .is_err()
    );
    advance(Duration::from_secs(20)).await;
    let probe = breaker
        .try_acquire()
        .expect("the cancelled waiter took no slot");
    assert!(probe.is_probe());
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn an_order_to_stay_open_longer_moves_the_waiters_wake_up() {
    let breaker = opened();
    let start = Instant::now();
    let waiting = Arc::clone(&breaker);
    let admitted = tokio::spawn(async move {
        waiting.admitted().await.success();
        Instant::now()
    });
    settle().await;
    let order = Order::Open {
        remaining: Duration::from_secs(90),
    };
    assert_eq!(breaker.apply_order(1, order), Heeded::Applied);
    advance(Duration::from_secs(60)).await;
    settle().await;
    assert!(
        !admitted.is_finished(),
        "the break it was told of has not ended"
    );
    advance(Duration::from_secs(30)).await;
    assert_eq!(admitted.await.unwrap() - start, Duration::from_secs(90));
}

#[tokio::test(start_paused = true)]
async fn orders_apply_once_in_generation_order_and_say_where_they_came_from() {
    let breaker = breaker(count(10));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    breaker
        .on_transition(move |t| sink.lock().unwrap().push((t.from, t.to, t.origin)))
        .forever();
    let open = Order::Open {
        remaining: Duration::from_secs(5),
    };
    assert_eq!(breaker.apply_order(10, open), Heeded::Applied);
    assert_eq!(
        breaker.apply_order(10, Order::Close),
        Heeded::Stale,
        "same generation"
    );
    assert_eq!(breaker.apply_order(9, Order::Close), Heeded::Stale, "older");
    assert_eq!(breaker.state(), State::Open);
    let opened = breaker.snapshot().last_opened.unwrap();
    assert_eq!(opened.reason, OpenReason::Ordered);
    assert!(opened.to_string().contains("another process"), "{opened}");

    // The time left is honoured to the nanosecond, then the next call probes as usual.
    advance(Duration::from_secs(5) - Duration::from_nanos(1)).await;
    assert!(breaker.try_acquire().unwrap_err().is_rejection());
    advance(Duration::from_nanos(1)).await;
    assert!(breaker.try_acquire().unwrap().is_probe());

    assert_eq!(breaker.apply_order(11, Order::Close), Heeded::Applied);
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.apply_order(12, Order::HalfOpen), Heeded::Applied);
    let probe = breaker.try_acquire().unwrap();
    assert!(probe.is_probe(), "ordered half-open: the next call probes");
    probe.success();
    assert_eq!(breaker.state(), State::Closed);

    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (State::Closed, State::Open, Origin::Ordered),
            (State::Open, State::HalfOpen, Origin::Local),
            (State::HalfOpen, State::Closed, Origin::Ordered),
            (State::Closed, State::HalfOpen, Origin::Ordered),
            (State::HalfOpen, State::Closed, Origin::Local),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_operators_forced_state_outranks_any_order() {
    let breaker = breaker(count(10));
    breaker.disable();
    assert_eq!(breaker.apply_order(1, Order::HalfOpen), Heeded::Held);
    assert_eq!(breaker.state(), State::Disabled);
    breaker.force_open();
    assert_eq!(breaker.apply_order(2, Order::Close), Heeded::Held);
    assert_eq!(breaker.state(), State::ForcedOpen);
    breaker.reset();
    assert_eq!(
        breaker.apply_order(2, Order::Close),
        Heeded::Applied,
        "held orders were not spent"
    );
}

#[tokio::test(start_paused = true)]
async fn an_order_to_open_leaves_the_growth_of_the_breakers_own_break_alone() {
    let breaker = breaker(
        count(1)
            .break_duration(Duration::from_secs(10))
            .max_break_duration(Duration::from_secs(80)),
    );
    breaker.try_acquire().unwrap().failure();
    advance(Duration::from_secs(10)).await;
    breaker.try_acquire().unwrap().failure(); // a failed probe: the next break is 20 s
    let short = Order::Open {
        remaining: Duration::from_secs(1),
    };
    assert_eq!(breaker.apply_order(1, short), Heeded::Applied);
    advance(Duration::from_secs(1)).await;
    breaker.try_acquire().unwrap().failure(); // another failed probe: 40 s
    let err = breaker.try_acquire().unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(40)));
}

#[tokio::test(start_paused = true)]
async fn counts_only_grow_and_their_differences_are_what_happened_between_readings() {
    let breaker = breaker(count(4));
    assert_eq!(
        breaker.counts(),
        Counts::default(),
        "counting starts at the first reading"
    );
    for _ in 0..10 {
        // A count window full of successes skips recording, unless outcomes are counted.
        breaker.try_acquire().unwrap().record(Verdict::Success);
    }
    let before = breaker.counts();
    assert_eq!((before.calls, before.failures, before.slow), (10, 0, 0));
    breaker.try_acquire().unwrap().record(Verdict::Failure);
    breaker.try_acquire().unwrap().record(Verdict::Ignore);
    drop(breaker.try_acquire().unwrap()); // cancelled
    let delta = breaker.counts().since(before);
    assert_eq!((delta.calls, delta.failures), (1, 1));
    // The window now holds three successes and a failure; one more failure is half of it.
    breaker.try_acquire().unwrap().record(Verdict::Failure);
    assert_eq!(
        breaker.state(),
        State::Open,
        "a counted breaker judges as before"
    );
    assert_eq!(breaker.counts().failures, 2);
    breaker.reset();
    breaker.try_acquire().unwrap().record(Verdict::Success);
    assert_eq!(breaker.counts().calls, 13, "kept across transitions");
}

#[tokio::test(start_paused = true)]
async fn slow_successes_are_counted_as_slow() {
    let breaker = breaker(count(10).slow_call(ms(100)).timeout(ms(1000)));
    let _ = breaker.counts();
    let permit = breaker.try_acquire().unwrap();
    advance(ms(150)).await;
    permit.success();
    let counts = breaker.counts();
    assert_eq!((counts.calls, counts.failures, counts.slow), (1, 0, 1));
}

/// Real threads, more of them than the counters have shards of their own, some exiting while
/// others record (their numbers handed to new threads): every outcome is counted once, and a
/// reader racing them never sees a count go down.
#[test]
fn counts_from_many_threads_lose_nothing_and_never_go_down() {
    use std::sync::atomic::{AtomicBool, Ordering};

    const WAVES: u64 = 3;
    const THREADS: u64 = 150;
    const CALLS: u64 = 400;
    // One failure in ten stays far under the default threshold of 50%.
    let breaker = Arc::new(breaker(count(100)));
    let _ = breaker.counts();
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (breaker, done) = (Arc::clone(&breaker), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut last = Counts::default();
            while !done.load(Ordering::Relaxed) {
                let now = breaker.counts();
                assert!(
                    now.calls >= last.calls && now.failures >= last.failures,
                    "counts went down: {last:?} then {now:?}"
                );
                last = now;
            }
        })
    };
    for _ in 0..WAVES {
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let breaker = Arc::clone(&breaker);
                std::thread::spawn(move || {
                    for i in 0..CALLS {
                        let verdict = if (t + i) % 10 == 0 {
                            Verdict::Failure
                        } else {
                            Verdict::Success
                        };
                        breaker.try_acquire().unwrap().record(verdict);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    }
    done.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    let counts = breaker.counts();
    assert_eq!(counts.calls, WAVES * THREADS * CALLS);
    assert_eq!(counts.failures, WAVES * THREADS * CALLS / 10);
    assert_eq!(breaker.state(), State::Closed);
}
