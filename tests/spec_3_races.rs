//! SPEC section 3 under real threads: a transition happens once however many race to it, the
//! half-open circuit never runs more than `probes` at once, and every admitted call records
//! exactly one outcome, or nothing when cancelled.
//!
//! These race OS threads and tokio's multi-thread runtime on the wall clock, briefly: the
//! longest wait is a break of 50 ms.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use breaker_runtime::{Breaker, State, Verdict};
use breaker_tests::{breaker, count, ms};

const THREADS: usize = 8;

fn count_transitions_to(b: &Breaker, to: State) -> Arc<AtomicUsize> {
    let seen = Arc::new(AtomicUsize::new(0));
    let sink = Arc::clone(&seen);
    b.on_transition(move |t| {
        if t.to == to {
            sink.fetch_add(1, Ordering::SeqCst);
        }
    })
    .forever();
    seen
}

/// Every thread records failures as fast as it can until the circuit turns it away.
fn race_to_open(b: &Breaker) {
    let start = Barrier::new(THREADS);
    thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                start.wait();
                // Bounded, so a circuit that never opens fails the test instead of hanging it.
                for _ in 0..1_000_000 {
                    let Ok(permit) = b.try_acquire() else { return };
                    permit.failure();
                }
                panic!("a million failures did not open the circuit");
            });
        }
    });
}

#[test]
fn racing_recorders_open_the_circuit_exactly_once() {
    for window in [
        count(64).threshold(50.0),
        count(64)
            .time_window(Duration::from_secs(60))
            .min_calls(64)
            .threshold(50.0),
    ] {
        let b = breaker(window.break_duration(Duration::from_secs(3600)));
        let opened = count_transitions_to(&b, State::Open);
        for round in 1..=20 {
            race_to_open(&b);
            assert_eq!(b.state(), State::Open);
            assert_eq!(opened.load(Ordering::SeqCst), round, "one opening per race");
            b.reset();
        }
    }
}

#[test]
fn racing_callers_half_open_once_and_never_run_more_than_probes_at_once() {
    for probes in [1, 3] {
        // The break is also how long a probe may hold its slot before giving it up (the
        // contract's rule against a probe that never answers): a probe descheduled that long
        // frees its slot for one more, which the count below allows only when it was seen.
        let brk = ms(200);
        let b = breaker(count(4).probes(probes).break_duration(brk));
        let half_opened = count_transitions_to(&b, State::HalfOpen);
        let in_flight = AtomicU32::new(0);
        let most = AtomicU32::new(0);
        let admitted = AtomicU32::new(0);
        let outlived = AtomicU32::new(0);
        for _ in 0..5 {
            race_to_open(&b);
            // A recorder descheduled past the break may have probed already; count only what
            // the race below causes.
            thread::sleep(brk + ms(5));
            let half_opened_before = half_opened.load(Ordering::SeqCst);
            let start = Barrier::new(THREADS);
            let tried = Barrier::new(THREADS);
            admitted.store(0, Ordering::SeqCst);
            outlived.store(0, Ordering::SeqCst);
            most.store(0, Ordering::SeqCst);
            thread::scope(|s| {
                for _ in 0..THREADS {
                    s.spawn(|| {
                        start.wait();
                        let permit = b.try_acquire().ok();
                        let since = Instant::now();
                        if permit.is_some() {
                            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            admitted.fetch_add(1, Ordering::SeqCst);
                        }
                        // Every thread tries while the admitted ones still hold their slots.
                        tried.wait();
                        if let Some(permit) = permit {
                            if since.elapsed() >= brk {
                                outlived.fetch_add(1, Ordering::SeqCst);
                            }
                            in_flight.fetch_sub(1, Ordering::SeqCst);
                            permit.failure();
                        }
                    });
                }
            });
            assert_eq!(
                half_opened.load(Ordering::SeqCst) - half_opened_before,
                1,
                "one move to half-open per race"
            );
            // Exactly `probes`, and one more only for a probe seen holding its slot past the
            // break.
            let (admitted, outlived) = (
                admitted.load(Ordering::SeqCst),
                outlived.load(Ordering::SeqCst),
            );
            assert!(
                (probes..=probes + outlived).contains(&admitted),
                "{admitted} callers became probes, with {probes} slots and {outlived} outlived"
            );
            assert!(most.load(Ordering::SeqCst) <= probes + outlived);
            assert_eq!(b.state(), State::Open, "the failed probes reopened it");
            b.reset();
        }
    }
}

#[test]
fn every_admitted_call_records_exactly_one_outcome_and_cancelled_ones_nothing() {
    const CALLS: usize = 1_000;
    // A window larger than all the calls, so nothing is evicted and every record is visible.
    let b = breaker(count(10_000).min_calls(10_000).threshold(100.0));
    let start = Barrier::new(THREADS);
    thread::scope(|s| {
        for t in 0..THREADS {
            let (b, start) = (&b, &start);
            s.spawn(move || {
                start.wait();
                for i in 0..CALLS {
                    let permit = b.try_acquire().expect("the circuit stays closed");
                    match (t * CALLS + i) % 7 {
                        0 => drop(permit),
                        1 | 2 => permit.failure(),
                        3 => permit.record(Verdict::Ignore),
                        _ => permit.success(),
                    }
                }
            });
        }
    });
    let total = THREADS * CALLS;
    let expected =
        |residues: &[usize]| (0..total).filter(|n| residues.contains(&(n % 7))).count() as u32;
    let s = b.snapshot();
    assert_eq!(
        s.calls,
        expected(&[1, 2, 4, 5, 6]),
        "no record lost, none from a cancelled call"
    );
    assert_eq!(s.failures, expected(&[1, 2]));
}

#[test]
fn the_count_window_settles_to_its_slots_after_racing_wrap_arounds() {
    let b = breaker(count(64).threshold(100.0));
    let phase = Barrier::new(THREADS);
    thread::scope(|s| {
        for t in 0..THREADS {
            let (b, phase) = (&b, &phase);
            s.spawn(move || {
                for i in 0..5_000 {
                    let permit = b.try_acquire().expect("closed");
                    if (t + i) % 3 == 0 {
                        permit.failure()
                    } else {
                        permit.success()
                    }
                }
                phase.wait();
                for _ in 0..200 {
                    b.try_acquire().expect("closed").success();
                }
            });
        }
    });
    let s = b.snapshot();
    assert_eq!(
        (s.calls, s.failures, s.slow),
        (64, 0, 0),
        "the tallies match the slots: all successes"
    );
}

#[test]
fn cancelled_calls_on_a_multi_thread_runtime_record_nothing() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let b = Arc::new(breaker(
        count(10_000)
            .min_calls(10_000)
            .threshold(100.0)
            .timeout(Duration::from_secs(60)),
    ));
    runtime.block_on(async {
        let mut finishing = Vec::new();
        let mut hanging = Vec::new();
        for i in 0..400 {
            let b = Arc::clone(&b);
            let task = tokio::spawn(async move {
                if i % 2 == 0 {
                    b.call(async { Ok::<_, std::io::Error>(()) }).await
                } else {
                    b.call(async {
                        tokio::time::sleep(Duration::from_secs(30)).await;
                        Ok::<_, std::io::Error>(())
                    })
                    .await
                }
            });
            if i % 2 == 0 {
                finishing.push(task)
            } else {
                hanging.push(task)
            }
        }
        for task in finishing {
            task.await.unwrap().unwrap().unwrap();
        }
        for task in &hanging {
            task.abort();
        }
        for task in hanging {
            assert!(task.await.unwrap_err().is_cancelled());
        }
    });
    assert_eq!(b.snapshot().calls, 200);
}
