use super::*;
use Outcome::*;
use WindowKind::*;

const MS: Nanos = 1_000_000;

#[test]
fn buckets_round_trip() {
    let b = Bucket {
        generation: 12345,
        epoch: EPOCH_MASK,
        tally: Tally {
            calls: BUCKET_CAPACITY,
            failures: BUCKET_CAPACITY,
            slow: 7,
        },
    };
    assert_eq!(unpack(pack(b)), b);
    assert_ne!(unpack(u128::MAX).generation, 0);
}

#[test]
fn an_outcome_stays_at_least_the_span_and_at_most_a_tenth_longer() {
    let w = TimeWindow::new(Duration::from_secs(10), Sliding);
    let recorded_at = 123 * MS;
    w.record_at(0, Failure, recorded_at, || 0).unwrap();
    let span = 10_000 * MS;
    assert_eq!(
        w.tally_at(0, recorded_at + span).failures,
        1,
        "still there at exactly D"
    );
    assert_eq!(
        w.tally_at(0, recorded_at + span + span / 10 + 1).failures,
        0,
        "gone after D + D/10"
    );
}

#[test]
fn every_outcome_in_the_span_counts() {
    let w = TimeWindow::new(Duration::from_secs(1), Sliding);
    for i in 0..100 {
        let outcome = if i % 4 == 0 { Failure } else { Success };
        w.record_at(3, outcome, i * 10 * MS, || 3).unwrap();
    }
    assert_eq!(
        w.tally_at(3, 990 * MS),
        Tally {
            calls: 100,
            failures: 25,
            slow: 0
        }
    );
}

#[test]
fn other_periods_and_stale_rounds_read_as_empty() {
    let w = TimeWindow::new(Duration::from_secs(1), Sliding);
    w.record_at(1, Failure, 0, || 1).unwrap();
    assert_eq!(w.tally_at(2, 0), Tally::EMPTY);
    assert_eq!(
        w.record_at(1, Failure, 0, || 2).unwrap(),
        None,
        "a late outcome records nothing"
    );
    // The same bucket a whole ring later reads as empty for the same period.
    const ROUND_LATER: Nanos = BUCKETS * 100 * MS + MS;
    assert_eq!(w.tally_at(1, ROUND_LATER), Tally::EMPTY);
    w.record_at(1, Success, ROUND_LATER, || 1).unwrap();
    assert_eq!(
        w.tally_at(1, ROUND_LATER),
        Tally {
            calls: 1,
            failures: 0,
            slow: 0
        }
    );
}

#[test]
fn a_success_is_judged_only_while_a_failure_or_slow_call_is_in_the_window() {
    let w = TimeWindow::new(Duration::from_secs(1), Sliding);
    assert_eq!(
        w.record_at(0, Success, 0, || 0).unwrap(),
        None,
        "nothing to reach"
    );
    assert!(w.record_at(0, Failure, 50 * MS, || 0).unwrap().is_some());
    let judged = w.record_at(0, Success, 60 * MS, || 0).unwrap();
    assert_eq!(judged.map(|t| (t.calls, t.failures)), Some((3, 1)));
    assert_eq!(
        w.record_at(0, Success, 1_150 * MS, || 0).unwrap(),
        None,
        "the failure has left the window"
    );
    assert!(w.record_at(0, Slow, 1_200 * MS, || 0).unwrap().is_some());
    assert!(w.record_at(0, Success, 1_300 * MS, || 0).unwrap().is_some());
}

#[test]
fn every_bucket_is_at_least_a_tenth_of_the_span() {
    for span in [
        1_000_000,
        999_999_999,
        1_000_000_007,
        30 * 86_400 * 1_000_000_000,
    ] {
        let w = TimeWindow::new(Duration::from_nanos(span), Sliding);
        let tenth = span.div_ceil(10);
        for start in [0, 1, tenth - 1, 86_400 * 1_000_000_000, 1 << 60] {
            let first = w.epoch(start);
            assert!(w.epoch(start + tenth - 1) <= first + 1);
            let mut boundary = start;
            while w.epoch(boundary) == first {
                boundary += tenth / 3 + 1;
            }
            // From one step into the next epoch, that epoch lasts a tenth of the span.
            let mut low = boundary - (tenth / 3 + 1);
            while low + 1 < boundary {
                let mid = low + (boundary - low) / 2;
                if w.epoch(mid) == first {
                    low = mid
                } else {
                    boundary = mid
                }
            }
            assert_eq!(
                w.epoch(boundary + tenth - 1),
                first + 1,
                "span {span}, from {start}"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_paused_clock_dates_outcomes_precisely() {
    let w = TimeWindow::new(Duration::from_secs(10), Sliding);
    w.record(0, Failure, || 0).unwrap();
    assert_eq!(w.ring.dating.load(Ordering::Relaxed), dating_tag(0, false));
    tokio::time::advance(Duration::from_secs(12)).await;
    assert_eq!(w.tally(0), Tally::EMPTY, "the paused clock moved it out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_running_clock_dates_outcomes_of_long_buckets_coarsely() {
    let long = TimeWindow::new(Duration::from_secs(1), Sliding);
    let short = TimeWindow::new(Duration::from_millis(999), Sliding);
    // A period's first outcome chooses; on a running clock the choice may still fall on the
    // precise clock when it does not move between two reads, so each try is a new period.
    let coarse = (0..1_000).find(|&generation| {
        long.record(generation, Failure, || generation).unwrap();
        long.ring.dating.load(Ordering::Relaxed) == dating_tag(generation, true)
    });
    let coarse = coarse.expect("a running clock moves between two reads");
    assert_eq!(
        long.tally(coarse).failures,
        1,
        "tallied by the clock it was dated by"
    );
    short.record(0, Failure, || 0).unwrap();
    assert_eq!(
        short.ring.dating.load(Ordering::Relaxed),
        dating_tag(0, false)
    );
    assert_eq!(short.tally(0).failures, 1);
}

#[test]
fn a_bucket_starts_where_its_epoch_begins() {
    for (span_ms, kind) in [10, 999, 1_000, 30_000, 60_000, 3_600_000]
        .into_iter()
        .flat_map(|span| [(span, Sliding), (span, Fixed)])
    {
        let span = Duration::from_millis(span_ms);
        let window = TimeWindow::new(span, kind);
        for now in [
            0,
            1,
            5_000_000,
            123_456_789_012,
            86_400_000_000_123,
            9_999_999_999_999_999,
        ] {
            let start = TimeWindow::bucket_start(span, kind, now);
            assert!(start <= now, "{span_ms} ms at {now}: {start}");
            assert_eq!(
                window.epoch(start),
                window.epoch(now),
                "{span_ms} ms at {now}"
            );
            if start > 0 {
                assert_ne!(
                    window.epoch(start - 1),
                    window.epoch(now),
                    "{span_ms} ms at {now}: the bucket began at {start}, not before"
                );
            }
        }
    }
}

#[test]
fn a_fixed_window_holds_its_interval_so_far_and_clears_at_the_edge() {
    let w = TimeWindow::new(Duration::from_secs(1), Fixed);
    w.record_at(0, Failure, 100 * MS, || 0).unwrap();
    w.record_at(0, Success, 500 * MS, || 0).unwrap();
    let judged = w.record_at(0, Success, 999 * MS, || 0).unwrap();
    assert_eq!(
        judged,
        Some(Tally {
            calls: 3,
            failures: 1,
            slow: 0
        }),
        "a success is judged while the interval holds a failure"
    );
    assert_eq!(
        w.tally_at(0, 1_001 * MS),
        Tally::EMPTY,
        "every count clears together at the edge, not a tenth at a time"
    );
    assert_eq!(
        w.record_at(0, Success, 1_002 * MS, || 0).unwrap(),
        None,
        "nothing to reach once the failure's interval is over"
    );
    assert!(w.record_at(0, Failure, 1_500 * MS, || 0).unwrap().is_some());
    assert_eq!(w.tally_at(0, 1_999 * MS).calls, 2);
}

#[test]
fn a_sliding_window_of_the_same_span_still_holds_what_the_fixed_one_cleared() {
    let fixed = TimeWindow::new(Duration::from_secs(1), Fixed);
    let sliding = TimeWindow::new(Duration::from_secs(1), Sliding);
    for w in [&fixed, &sliding] {
        w.record_at(0, Failure, 950 * MS, || 0).unwrap();
    }
    assert_eq!(fixed.tally_at(0, 1_050 * MS).failures, 0);
    assert_eq!(sliding.tally_at(0, 1_050 * MS).failures, 1);
}

#[test]
fn every_interval_of_a_fixed_window_is_its_whole_span() {
    for span in [
        1_000_000,
        999_999_999,
        60_000_000_000,
        30 * 86_400 * 1_000_000_000,
    ] {
        let w = TimeWindow::new(Duration::from_nanos(span), Fixed);
        for start in [0, 1, 86_400 * 1_000_000_000, 1 << 60] {
            let edge = TimeWindow::bucket_start(Duration::from_nanos(span), Fixed, start);
            // An epoch is a multiplication by 2^64 / span rounded down, which lengthens an
            // interval by at most span² / 2^64 (under a nanosecond up to 4 s, 0.7 ms for an hour).
            let longer = ((u128::from(span) * u128::from(span)) >> 64) as u64 + 1;
            assert_eq!(w.epoch(edge + span - 1), w.epoch(edge), "span {span}");
            assert_eq!(
                w.epoch(edge + span + longer),
                w.epoch(edge) + 1,
                "span {span}"
            );
        }
    }
}
