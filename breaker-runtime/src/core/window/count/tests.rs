use super::*;
use Outcome::*;

fn tally(calls: u32, failures: u32, slow: u32) -> Tally {
    Tally {
        calls,
        failures,
        slow,
    }
}

fn record_all(w: &CountWindow, generation: u32, outcomes: &[Outcome]) -> Option<Tally> {
    let mut last = None;
    for &o in outcomes {
        last = w.record(generation, o, || generation).unwrap().or(last);
    }
    last
}

#[test]
fn holds_exactly_the_last_n_outcomes() {
    let w = CountWindow::new(4, 7);
    record_all(&w, 7, &[Failure, Failure, Slow, Success]);
    assert_eq!(w.tally(7), tally(4, 2, 1));
    record_all(&w, 7, &[Success, Success]);
    assert_eq!(w.tally(7), tally(4, 0, 1));
    record_all(&w, 7, &[Failure, Failure, Failure, Failure, Failure]);
    assert_eq!(w.tally(7), tally(4, 4, 0));
}

#[test]
fn a_success_replacing_a_success_changes_nothing_to_judge() {
    let w = CountWindow::new(1, 0);
    assert!(w.record(0, Success, || 0).unwrap().is_some());
    assert_eq!(w.record(0, Success, || 0).unwrap(), None);
    assert_eq!(w.tally(0), tally(1, 0, 0));
}

#[test]
fn a_success_into_a_window_full_of_successes_writes_nothing_and_the_window_stays_exact() {
    let w = CountWindow::new(3, 0);
    record_all(&w, 0, &[Success, Success, Success]);
    let cursor = w.cursor().load(Ordering::Relaxed);
    assert_eq!(w.record(0, Success, || 0).unwrap(), None);
    assert_eq!(
        w.cursor().load(Ordering::Relaxed),
        cursor,
        "nothing was written"
    );
    record_all(&w, 0, &[Failure, Success, Success]);
    assert_eq!(w.tally(0), tally(3, 1, 0));
    record_all(&w, 0, &[Success]);
    assert_eq!(w.tally(0), tally(3, 0, 0), "the failure left after 3 more");
}

#[test]
fn a_new_period_starts_empty_and_ignores_the_old_slots() {
    let w = CountWindow::new(3, 1);
    record_all(&w, 1, &[Failure, Failure, Failure]);
    w.reset(4);
    assert_eq!(w.tally(4), Tally::EMPTY);
    record_all(&w, 4, &[Success]);
    assert_eq!(w.tally(4), tally(1, 0, 0));
    record_all(&w, 4, &[Failure, Success, Success]);
    assert_eq!(w.tally(4), tally(3, 1, 0));
}

#[test]
fn a_late_outcome_from_an_earlier_period_is_not_recorded() {
    let w = CountWindow::new(3, 1);
    w.reset(2);
    assert_eq!(w.record(1, Failure, || 2).unwrap(), None);
    assert_eq!(w.tally(2), Tally::EMPTY);
    record_all(&w, 2, &[Success, Success, Success]);
    assert_eq!(
        w.record(1, Failure, || 2).unwrap(),
        None,
        "a slot of the current period is never overwritten"
    );
    assert_eq!(w.tally(2), tally(3, 0, 0));
}

#[test]
fn a_late_recorder_claims_no_position_so_the_window_keeps_its_size() {
    // Found by the reference model: a discarded late outcome used to consume a position,
    // leaving a hole that made the next lap evict a current outcome too early.
    let w = CountWindow::new(3, 2);
    record_all(&w, 2, &[Success]);
    assert_eq!(w.record(1, Success, || 2).unwrap(), None);
    record_all(&w, 2, &[Success, Success]);
    assert_eq!(w.tally(2), tally(3, 0, 0));
}

#[test]
fn the_cursor_goes_round_the_ring_lap_after_lap() {
    let w = CountWindow::new(3, 0);
    for _ in 0..10 {
        record_all(&w, 0, &[Failure, Slow, Success]);
        assert_eq!(w.tally(0), tally(3, 1, 1));
        assert!(cursor_position(w.cursor().load(Ordering::Relaxed)) <= 3);
    }
}

#[test]
fn a_claim_past_the_end_lands_in_the_ring_and_rewinds_the_cursor() {
    let w = CountWindow::new(3, 0);
    record_all(&w, 0, &[Success, Success, Success]);
    // Another recorder claimed position 3 (slot 0) and has not rewound the cursor yet.
    w.cursor().store(pack_cursor(0, 4), Ordering::Relaxed);
    record_all(&w, 0, &[Failure]);
    assert_eq!(cursor_position(w.cursor().load(Ordering::Relaxed)), 2);
    assert_eq!((w.word(1).load(Ordering::Relaxed) >> 2) & 3, CODE_FAILURE);
    assert_eq!(w.tally(0), tally(3, 1, 0));
}

#[test]
fn tallies_round_trip_the_largest_window() {
    let t = tally(10_000, 9_999, 1);
    assert_eq!(unpack(pack(5, t)), t);
    assert_eq!(gen_of(pack(u32::MAX, t)), GEN_MASK);
}

#[test]
fn a_transient_low_count_is_not_judged_and_settles() {
    let w = CountWindow::new(2, 0);
    // A recorder that evicts before the evicted outcome's own tally landed.
    let mut fields = tally(0, 0, 0);
    bump(&mut fields, Failure, u32::MAX);
    w.tallies.store(pack(0, fields), Ordering::Relaxed);
    assert_eq!(w.tally(0), Tally::EMPTY);
    let mut settled = unpack(w.tallies.load(Ordering::Relaxed));
    settled.calls = settled.calls.wrapping_add(1);
    bump(&mut settled, Failure, 1);
    assert_eq!(consistent(unpack(pack(0, settled))), Some(tally(1, 0, 0)));
}
