//! Hand-made traces whose answers can be worked out on paper; each replayed on the simulated
//! clock is also held to the replay on tasks it replaced.

mod support;

use breaker_replay::{Change, Ending, Fate, parse_options, replay};
use breaker_runtime::State::{self, Closed, HalfOpen, Open};
use breaker_runtime::trace::{Entry, parse};

fn trace(csv: &str) -> Vec<Entry> {
    parse(&format!("at_ms,duration_ms,outcome\n{csv}")).unwrap()
}

fn replayed(csv: &str, options: &str) -> (Vec<(u64, State, State)>, Vec<Fate>) {
    let candidate = parse_options(options).unwrap();
    let replayed = replay(&trace(csv), &candidate.config).unwrap();
    assert_eq!(
        replayed,
        support::tasks::replay_on_tasks(&trace(csv), &candidate.config)
    );
    let changes = replayed
        .changes
        .iter()
        .map(|&Change { at_ms, from, to }| (at_ms, from, to))
        .collect();
    (changes, replayed.fates)
}

#[test]
fn a_count_window_opens_on_the_call_that_brings_it_to_the_threshold() {
    // Window of 4 at 50%: after the third call the window is not full (min_calls is the
    // window's size); the fourth ends at 31 ms and makes it 2 failures of 4.
    let (changes, fates) = replayed(
        "0,1,success\n10,1,failure\n20,1,failure\n30,1,success\n40,1,success\n",
        r#"window = "4""#,
    );
    assert_eq!(changes, [(31, Closed, Open)]);
    assert_eq!(fates[3], Fate::Ran(Ending::Answered));
    assert_eq!(fates[4], Fate::Rejected);
}

#[test]
fn a_count_window_below_the_threshold_stays_closed() {
    let (changes, fates) = replayed(
        "0,1,success\n10,1,failure\n20,1,success\n30,1,success\n40,1,failure\n",
        r#"window = "4", threshold = "60%""#,
    );
    assert_eq!(changes, []);
    assert!(!fates.contains(&Fate::Rejected));
}

#[test]
fn a_time_window_waits_for_min_calls_and_forgets_what_left_it() {
    // Four failures are 100%, but min_calls is 5. The fifth comes 12 s later, when the first
    // four have left the 10 s window (and the 11 s at most it keeps them): still one call.
    // Four more within the window make five, and the fifth of them opens it when it ends.
    let csv = "0,5,failure\n100,5,failure\n200,5,failure\n300,5,failure\n\
               12000,5,failure\n12100,5,failure\n12200,5,failure\n12300,5,failure\n\
               12400,5,failure\n12500,5,success\n";
    let (changes, fates) = replayed(csv, r#"window = "10s", min_calls = 5"#);
    assert_eq!(changes, [(12_405, Closed, Open)]);
    assert_eq!(fates[9], Fate::Rejected);
}

#[test]
fn after_the_break_a_successful_probe_closes_and_a_failed_one_opens_again() {
    let csv = "0,5,failure\n10,5,failure\n500,5,success\n\
               1100,5,success\n1200,5,failure\n1210,5,failure\n\
               2300,50,failure\n2310,5,success\n2400,5,success\n";
    let (changes, fates) = replayed(csv, r#"window = "2", break_duration = "1s""#);
    assert_eq!(
        changes,
        [
            (15, Closed, Open),
            (1100, Open, HalfOpen),
            (1105, HalfOpen, Closed),
            (1215, Closed, Open),
            (2300, Open, HalfOpen),
            (2350, HalfOpen, Open),
        ]
    );
    assert_eq!(fates[2], Fate::Rejected, "open: turned away");
    assert_eq!(fates[3], Fate::Ran(Ending::Answered), "the probe");
    assert_eq!(
        fates[7],
        Fate::Rejected,
        "half-open, its one probe slot taken"
    );
    assert_eq!(fates[8], Fate::Rejected, "open again");
}

#[test]
fn the_candidates_timeout_cuts_long_calls_and_a_recorded_timeout_ends_where_the_trace_knows() {
    // A success of 3 s under a 1 s timeout times out at 1 s; a recorded timeout of 2 s under
    // a 1 s timeout times out at 1 s, and under a 5 s timeout fails at 2 s.
    let (changes, fates) = replayed("0,3000,success\n", r#"window = "1", timeout_ms = 1000"#);
    assert_eq!(
        (changes, fates),
        (
            vec![(1000, Closed, Open)],
            vec![Fate::Ran(Ending::TimedOut)]
        )
    );
    let (changes, fates) = replayed("0,2000,timeout\n", r#"window = "1", timeout_ms = 1000"#);
    assert_eq!(
        (changes, fates),
        (
            vec![(1000, Closed, Open)],
            vec![Fate::Ran(Ending::TimedOut)]
        )
    );
    let (changes, fates) = replayed("0,2000,timeout\n", r#"window = "1", timeout = "5s""#);
    assert_eq!(
        (changes, fates),
        (vec![(2000, Closed, Open)], vec![Fate::Ran(Ending::Failed)])
    );
    let (changes, fates) = replayed("0,2000,timeout\n", r#"window = "1", timeout = "off""#);
    assert_eq!(
        (changes, fates),
        (vec![(2000, Closed, Open)], vec![Fate::Ran(Ending::Failed)])
    );
}

#[test]
fn the_candidates_slow_call_judges_slowness_whatever_the_trace_called_it() {
    let options = r#"window = "1", slow_call = "500ms""#;
    let (changes, _) = replayed("0,600,success\n", options);
    assert_eq!(
        changes,
        [(600, Closed, Open)],
        "600 ms is slow to this candidate"
    );
    let (changes, _) = replayed("0,400,slow\n", options);
    assert_eq!(
        changes,
        [],
        "400 ms is not, whatever the recording breaker thought"
    );
}

#[test]
fn a_call_recorded_as_rejected_is_unknown_when_admitted_and_records_nothing() {
    // Window of 2: the unknown call neither fills the window nor breaks the run of failures.
    let (changes, fates) = replayed(
        "0,5,failure\n10,0,rejected\n20,5,failure\n30,0,rejected\n",
        r#"window = "2""#,
    );
    assert_eq!(changes, [(25, Closed, Open)]);
    assert_eq!(
        fates,
        [
            Fate::Ran(Ending::Failed),
            Fate::Unknown,
            Fate::Ran(Ending::Failed),
            Fate::Rejected,
        ]
    );
}

#[test]
fn ignored_calls_count_for_nothing_and_healthy_ones_are_successes() {
    let options = r#"window = "2", threshold = "100%""#;
    let (changes, _) = replayed("0,5,failure\n10,5,ignored\n20,5,failure\n", options);
    assert_eq!(
        changes,
        [(25, Closed, Open)],
        "the ignored call is not in the window"
    );
    let (changes, _) = replayed("0,5,failure\n10,5,healthy\n20,5,failure\n", options);
    assert_eq!(changes, [], "the healthy call is a success in the window");
}

#[test]
fn a_warm_up_counts_from_the_traces_first_call() {
    // Failures every 100 ms from 0: a window of 2 says open at 101 ms, but the warm-up holds it
    // closed until 1 000 ms after the first call; the failure admitted at 1 000 ms ends at
    // 1 001 ms and is the first judgement after it.
    let csv: String = (0..15)
        .map(|i| format!("{},1,failure\n", i * 100))
        .collect();
    let (changes, fates) = replayed(&csv, r#"window = "2", warm_up = "1s""#);
    assert_eq!(changes, [(1_001, Closed, Open)]);
    assert!(fates[..11].iter().all(|f| *f == Fate::Ran(Ending::Failed)));
    assert_eq!(fates[11], Fate::Rejected);
    let (without, _) = replayed(&csv, r#"window = "2""#);
    assert_eq!(without[0], (101, Closed, Open));
}

#[test]
fn a_fixed_window_counts_each_call_in_its_interval() {
    // Three failures before the 1 s edge and three after: a sliding window of 1 s holds all six
    // at 1 101 ms, but the fixed one clears at 1 000 ms and holds three of `min_calls = 4`.
    let csv = "700,1,failure\n800,1,failure\n900,1,failure\n1100,1,failure\n1200,1,failure\n1300,1,failure\n1400,1,failure\n";
    let options = r#"window = "1s", min_calls = 4"#;
    let (sliding, _) = replayed(csv, options);
    assert_eq!(sliding[0], (1_101, Closed, Open));
    let (fixed, fates) = replayed(csv, &format!(r#"{options}, window_kind = "fixed""#));
    assert_eq!(
        fixed,
        [(1_401, Closed, Open)],
        "the fourth failure of the second interval"
    );
    assert!(fates.iter().all(|f| *f == Fate::Ran(Ending::Failed)));
}

#[test]
fn a_probe_threshold_judges_the_half_open_periods_probes_together() {
    // A window of 2 opens at 11 ms; after the 900 ms break, four probes at once (1 000 to
    // 1 003 ms, each 5 ms), one of them failed: the default rule opens again on the failure,
    // the rate rule closes once the four are in (25% < 50%).
    let csv = "0,1,failure\n10,1,failure\n1000,5,failure\n1001,5,success\n1002,5,success\n1003,5,success\n";
    let options = r#"window = "2", break_duration = "900ms", probes = 4"#;
    let (every, _) = replayed(csv, options);
    assert_eq!(
        every,
        [
            (11, Closed, Open),
            (1_000, Open, HalfOpen),
            (1_005, HalfOpen, Open)
        ]
    );
    let (rate, _) = replayed(csv, &format!(r#"{options}, probe_threshold = "50%""#));
    assert_eq!(
        rate,
        [
            (11, Closed, Open),
            (1_000, Open, HalfOpen),
            (1_008, HalfOpen, Closed)
        ]
    );
}
