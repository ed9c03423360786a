//! Model checks of the concurrent core with loom: every interleaving of a few threads, within
//! loom's bounds, for the rules that races could break.
//!
//! `RUSTFLAGS="--cfg breaker_loom" LOOM_MAX_PREEMPTIONS=6 cargo test -p breaker-runtime --lib --release loom_tests -- --test-threads=1`
//!
//! One test at a time: the model clock is a process-wide static, and loom's search only ends if
//! every run of a model sees the same values.

use std::sync::Arc;
use std::time::Duration;

// The probe counters are loom's, so that a thread may be preempted while it holds a probe.
use loom::sync::atomic::AtomicUsize;
use loom::thread;

use crate::base::sync::Ordering;
use crate::core::breaker::Breaker;
use crate::core::breaker::kind::Kind;
use crate::core::breaker::observer::Ending;
use crate::core::config::{Config, ConfigBuilder};
use crate::core::state::State;

const MS: u64 = 1_000_000;

fn breaker(builder: ConfigBuilder) -> Arc<Breaker> {
    crate::base::clock::MODEL_NOW.store(0, Ordering::SeqCst);
    Arc::new(Breaker::new(builder.no_timeout().build().expect("valid")))
}

fn record(b: &Breaker, generation: u32, ending: Ending) {
    b.finish(Kind::Closed { generation }, None, ending);
}

/// A breaker with `probes` probe slots whose circuit opened on a 1 ms break that has just
/// passed: its next call moves it to half-open.
fn tripped_with_break_over(probes: u32) -> Arc<Breaker> {
    let b = breaker(
        Config::builder()
            .count_window(1)
            .break_duration(Duration::from_millis(1))
            .probes(probes),
    );
    record(&b, 0, Ending::Failure);
    assert_eq!(b.state(), State::Open);
    crate::base::clock::MODEL_NOW.store(MS, Ordering::SeqCst);
    b
}

/// Runs `work(breaker, i)` on `threads` model threads at once, and waits for them.
fn race(b: &Arc<Breaker>, threads: usize, work: impl Fn(&Breaker, usize) + Send + Sync + 'static) {
    let work = Arc::new(work);
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (b, work) = (Arc::clone(b), Arc::clone(&work));
            thread::spawn(move || work(&b, i))
        })
        .collect();
    for handle in handles {
        handle.join().expect("no model thread panics");
    }
}

#[test]
fn racing_recorders_open_the_circuit_exactly_once() {
    loom::model(|| {
        let b = breaker(
            Config::builder()
                .count_window(2)
                .min_calls(1)
                .threshold(50.0),
        );
        record(&b, 0, Ending::Success);
        race(&b, 2, |b, _| record(b, 0, Ending::Failure));
        assert_eq!(b.state(), State::Open);
        assert_eq!(
            b.generation(),
            1,
            "one transition, however many raced to it"
        );
    });
}

#[test]
fn half_open_never_runs_more_than_its_probes() {
    loom::model(|| {
        let b = tripped_with_break_over(1);
        let probing = Arc::new(AtomicUsize::new(0));
        race(&b, 2, move |b, _| {
            let Ok(permit) = b.try_acquire() else { return };
            if permit.is_probe() {
                assert_eq!(
                    probing.fetch_add(1, Ordering::SeqCst),
                    0,
                    "a second probe at once"
                );
                probing.fetch_sub(1, Ordering::SeqCst);
            }
            permit.success();
        });
        assert_eq!(b.state(), State::Closed);
    });
}

#[test]
fn a_cancelled_or_failed_probe_frees_its_slot() {
    loom::model(|| {
        let b = tripped_with_break_over(1);
        race(&b, 2, |b, _| {
            if let Ok(permit) = b.try_acquire() {
                drop(permit); // cancelled
            }
        });
        assert_eq!(b.state(), State::HalfOpen);
        assert_eq!(
            b.snapshot().probes_in_flight,
            0,
            "both cancelled probes gave their slot back"
        );
        let permit = b.try_acquire().expect("the slot is free");
        permit.failure(); // a failing (or panicking) probe
        assert_eq!(b.state(), State::Open);
    });
}

#[test]
fn a_late_outcome_from_an_earlier_period_is_never_recorded() {
    loom::model(|| {
        let b = breaker(Config::builder().count_window(2).min_calls(2));
        let admitted_in = b.generation();
        race(&b, 2, move |b, i| match i {
            0 => record(b, admitted_in, Ending::Failure), // late
            _ => b.reset(),
        });
        assert_eq!(
            b.snapshot().calls,
            0,
            "recorded before the reset (and cleared), or after it (and dropped)"
        );
        record(&b, b.generation(), Ending::Success);
        record(&b, b.generation(), Ending::Success);
        assert_eq!(b.snapshot().calls, 2, "the new period's window is whole");
    });
}

#[test]
fn no_record_is_lost_and_the_tallies_match_the_slots() {
    loom::model(|| {
        let b = breaker(
            Config::builder()
                .count_window(2)
                .min_calls(2)
                .threshold(100.0),
        );
        record(&b, 0, Ending::Success);
        record(&b, 0, Ending::Success);
        race(&b, 2, |b, i| {
            record(b, 0, [Ending::Failure, Ending::Success][i])
        });
        let s = b.snapshot();
        assert_eq!(
            (s.calls, s.failures),
            (2, 1),
            "both raced records are in the window of two"
        );
        record(&b, 0, Ending::Success);
        record(&b, 0, Ending::Success);
        let s = b.snapshot();
        assert_eq!(
            (s.calls, s.failures),
            (2, 0),
            "the tallies settled on what the slots hold"
        );
    });
}

#[test]
fn racing_records_into_one_time_bucket_are_all_counted() {
    loom::model(|| {
        let b = breaker(
            Config::builder()
                .time_window(Duration::from_secs(1))
                .min_calls(3)
                .threshold(100.0),
        );
        race(&b, 2, |b, _| record(b, 0, Ending::Failure));
        let s = b.snapshot();
        assert_eq!((s.calls, s.failures, s.state), (2, 2, State::Closed));
    });
}

// A success into a time window is judged only when the window holds a failure; here the
// failure is being recorded at the same time, and one of the two must see the other.
#[test]
fn a_success_racing_the_failure_it_brings_to_min_calls_is_judged() {
    loom::model(|| {
        let b = breaker(
            Config::builder()
                .time_window(Duration::from_secs(1))
                .min_calls(2)
                .threshold(50.0),
        );
        race(&b, 2, |b, i| {
            let ending = [Ending::Failure, Ending::Success][i];
            record(b, 0, ending);
        });
        assert_eq!(b.state(), State::Open);
    });
}

#[test]
fn racing_probes_hold_distinct_slots_and_close_the_circuit_once() {
    loom::model(|| {
        let b = tripped_with_break_over(2);
        let first = b.try_acquire().expect("the first probe");
        assert!(first.is_probe());
        let probing = Arc::new(AtomicUsize::new(1));
        race(&b, 2, move |b, _| {
            let Ok(permit) = b.try_acquire() else { return };
            if permit.is_probe() {
                assert!(
                    probing.fetch_add(1, Ordering::SeqCst) < 2,
                    "a third probe at once"
                );
                probing.fetch_sub(1, Ordering::SeqCst);
            }
            permit.success();
        });
        first.success();
        assert_eq!(b.state(), State::Closed);
        assert_eq!(b.generation(), 3, "open, half-open, and closed once");
    });
}

#[test]
fn a_probe_admitted_as_its_period_ends_holds_nothing_of_the_next() {
    loom::model(|| {
        let b = tripped_with_break_over(1);
        let first = b.try_acquire().expect("the first probe");
        let hung = Arc::new(AtomicUsize::new(0));
        let (b2, hung2) = (Arc::clone(&b), Arc::clone(&hung));
        let late = thread::spawn(move || {
            if let Ok(permit) = b2.try_acquire() {
                hung2.fetch_add(1, Ordering::SeqCst);
                // Never answers: it keeps whatever slot it took.
                std::mem::forget(permit);
            }
        });
        first.failure();
        late.join().expect("no model thread panics");
        assert_eq!(b.state(), State::Open);
        crate::base::clock::MODEL_NOW.store(2 * MS, Ordering::SeqCst);
        let next = b.try_acquire().expect("the next period's first probe");
        assert!(next.is_probe());
        assert_eq!(b.snapshot().probes_in_flight, 1, "only the new probe");
        assert!(
            hung.load(Ordering::SeqCst) <= 1,
            "the late call was admitted at most once"
        );
    });
}

/// A call admitted as a half-open period ends, whose outcome arrives in the next period,
/// decides nothing there: neither a failure (which would reopen it) nor, with one probe, a
/// success (which would close it).
#[test]
fn a_probe_admitted_as_its_period_ends_and_finished_in_the_next_decides_nothing() {
    for late_fails in [true, false] {
        // Outside the model: at least one interleaving must admit the late call, or the
        // model checks nothing.
        static ADMITTED_LATE: std::sync::atomic::AtomicBool =
            std::sync::atomic::AtomicBool::new(false);
        ADMITTED_LATE.store(false, std::sync::atomic::Ordering::SeqCst);
        loom::model(move || {
            let b = tripped_with_break_over(1);
            let first = b.try_acquire().expect("the first probe");
            // The first probe has run for the break: its slot is free for another probe.
            crate::base::clock::MODEL_NOW.store(2 * MS, Ordering::SeqCst);
            let b2 = Arc::clone(&b);
            let late = thread::spawn(move || b2.try_acquire_owned().ok());
            first.failure();
            let late = late.join().expect("no model thread panics");
            assert_eq!(b.state(), State::Open);
            crate::base::clock::MODEL_NOW.store(3 * MS, Ordering::SeqCst);
            let next = b.try_acquire().expect("the next period's first probe");
            assert!(next.is_probe());
            if let Some(late) = late {
                ADMITTED_LATE.store(true, std::sync::atomic::Ordering::SeqCst);
                if late_fails {
                    late.failure();
                } else {
                    late.success();
                }
            }
            assert_eq!(
                b.state(),
                State::HalfOpen,
                "the late outcome belongs to an earlier period"
            );
            next.success();
            assert_eq!(b.state(), State::Closed);
        });
        assert!(
            ADMITTED_LATE.load(std::sync::atomic::Ordering::SeqCst),
            "some interleaving admitted the late call in the earlier period"
        );
    }
}

#[test]
fn a_command_racing_the_first_call_after_the_break_wins_once() {
    loom::model(|| {
        let b = tripped_with_break_over(1);
        let probed = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&probed);
        race(&b, 2, move |b, i| match i {
            0 => {
                if let Ok(permit) = b.try_acquire() {
                    assert!(permit.is_probe());
                    seen.fetch_add(1, Ordering::SeqCst);
                    permit.success(); // too late to close a forced circuit, if it was forced
                }
            }
            _ => b.force_open(),
        });
        let probed = probed.load(Ordering::SeqCst);
        let s = b.snapshot();
        match (probed, s.state) {
            // Probed and closed, then forced: open, half-open, closed, forced.
            (1, State::ForcedOpen) => assert!(matches!(b.generation(), 3 | 4)),
            // Forced first: the call was rejected.
            (0, State::ForcedOpen) => assert_eq!(b.generation(), 2),
            other => panic!("unexpected end {other:?} at generation {}", b.generation()),
        }
        b.reset();
        assert_eq!(b.state(), State::Closed, "the breaker is not stuck");
    });
}

/// A reconfiguration that gives the breaker a new window, racing a call's outcome: the outcome
/// is carried over with the window it reached, or reaches the new one, and counts once.
///
/// Within `preemptions` (3 for each model): the race is decided in one or two steps (the slot
/// or the bucket written before or after its seal), and a seal that drops the racing outcome
/// fails within 3, for either kind of window. Within 6 the three models took 7 minutes of CI.
fn an_outcome_racing_a_new_window(from: ConfigBuilder, to: ConfigBuilder, preemptions: usize) {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(
        model
            .preemption_bound
            .map_or(preemptions, |b| b.min(preemptions)),
    );
    model.check(move || {
        let b = breaker(from.clone().threshold(100.0).min_calls(2));
        // A first change, of nothing, before the race: it allocates what every later change
        // uses, published by a `OnceLock`, std's, whose ordering loom cannot see.
        b.reconfigure(b.config()).expect("the same options");
        record(&b, 0, Ending::Success);
        let recorder = Arc::clone(&b);
        let racing = thread::spawn(move || record(&recorder, 0, Ending::Failure));
        let next = to.clone().threshold(100.0).min_calls(2).no_timeout();
        b.reconfigure(next.build().expect("valid"))
            .expect("a new window");
        racing.join().expect("no model thread panics");
        let snapshot = b.snapshot();
        assert_eq!(
            (snapshot.calls, snapshot.failures),
            (2, 1),
            "the success before, and the racing failure once"
        );
        assert_eq!(
            b.state(),
            State::Closed,
            "a reconfiguration never transitions"
        );
    });
}

#[test]
fn an_outcome_racing_a_smaller_count_window_counts_once() {
    an_outcome_racing_a_new_window(
        Config::builder().count_window(3),
        Config::builder().count_window(2),
        3,
    );
}

#[test]
fn an_outcome_racing_a_larger_count_window_counts_once() {
    an_outcome_racing_a_new_window(
        Config::builder().count_window(2),
        Config::builder().count_window(30),
        3,
    );
}

#[test]
fn an_outcome_racing_a_new_time_span_counts_once() {
    an_outcome_racing_a_new_window(
        Config::builder().time_window(Duration::from_secs(1)),
        Config::builder().time_window(Duration::from_secs(5)),
        3,
    );
}

/// Two threads recording into the flight recorder's shared ring while a third reads it: every
/// record read is one that was written, whole (never half of one and half of another), and
/// once the writers are done every record is there.
#[test]
fn the_flight_recorder_never_tears_a_record() {
    use crate::core::trace::Outcome;
    use crate::core::trace::flight::Flight;

    loom::model(|| {
        let flight = Arc::new(Flight::with_capacity(0, false, 3));
        // Allocates the ring before the race: its allocation is a `OnceLock`'s, outside the model.
        flight.add(0, 0, Outcome::Success);
        let writers: Vec<_> = [(1, Outcome::Failure), (2, Outcome::Timeout)]
            .into_iter()
            .map(|(ms, outcome)| {
                let flight = Arc::clone(&flight);
                thread::spawn(move || flight.add(ms * MS, ms * MS, outcome))
            })
            .collect();
        let whole = |at_ms: u64, duration_ms: u64, outcome: Outcome| {
            matches!(
                (at_ms, duration_ms, outcome),
                (0, 0, Outcome::Success) | (1, 1, Outcome::Failure) | (2, 2, Outcome::Timeout)
            )
        };
        for (_, e) in flight.calls(0) {
            assert!(whole(e.at_ms, e.duration_ms, e.outcome), "torn: {e}");
        }
        for writer in writers {
            writer.join().expect("no model thread panics");
        }
        let kept: Vec<u64> = flight.calls(0).iter().map(|(_, e)| e.at_ms).collect();
        assert_eq!(kept, [0, 1, 2], "nothing lost");
    });
}
