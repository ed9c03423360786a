//! Random traces and options for property tests.

use breaker_runtime::trace::{Entry, Outcome};
use proptest::prelude::*;

/// Options the replay takes: a count or time window, thresholds, timeouts, breaks, probes.
pub fn valid_options() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            (1u32..30).prop_map(|n| format!("window = \"{n}\"")),
            (1u64..20_000).prop_map(|ms| format!("window = \"{ms}ms\"")),
        ],
        1u32..=100,
        prop_oneof![Just(String::new()), (1u64..5_000).prop_map(|ms| format!(", timeout_ms = {ms}"))],
        (1u64..5_000).prop_map(|ms| format!(", break_duration = \"{ms}ms\"")),
        1u32..4,
    )
        .prop_map(|(window, threshold, timeout, brk, probes)| {
            format!("{window}, threshold = \"{threshold}%\"{timeout}{brk}, probes = {probes}, min_calls = 1")
        })
}

pub fn trace() -> impl Strategy<Value = Vec<Entry>> {
    let outcome = proptest::sample::select(Outcome::ALL.to_vec());
    proptest::collection::vec(
        (
            prop_oneof![0u64..3, 0u64..200, 0u64..20_000, 0u64..3_000_000_000],
            prop_oneof![0u64..3, 0u64..400, 0u64..10_000],
            outcome,
        ),
        0..60,
    )
    .prop_map(one_after_another)
}

/// Options over every knob `suggest` turns: window kind and size, thresholds, `min_calls`,
/// timeouts, slow calls, breaks that grow, probes.
pub fn every_option() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            (1u32..30).prop_map(|n| format!("window = \"{n}\"")),
            (1u64..2_000).prop_map(|tens| format!("window = \"{}ms\"", tens * 10)),
        ],
        (1u32..=100, 1u32..10),
        prop_oneof![Just(String::new()), (1u64..3_000).prop_map(|ms| format!(", timeout_ms = {ms}"))],
        prop_oneof![
            Just(String::new()),
            (1u64..3_000, 1u32..=100)
                .prop_map(|(ms, pct)| format!(", slow_call = \"{ms}ms\", slow_threshold = \"{pct}%\"")),
        ],
        (1u64..5_000, prop_oneof![Just(None), (1u64..4).prop_map(Some)]),
        1u32..4,
    )
        .prop_map(|(window, (threshold, min_calls), timeout, slow, (brk, grows), probes)| {
            let cap = grows.map_or(String::new(), |k| format!(", max_break_duration = \"{}ms\"", brk * (k + 1)));
            format!(
                "{window}, threshold = \"{threshold}%\", min_calls = {min_calls}{timeout}{slow}, break_duration = \"{brk}ms\"{cap}, probes = {probes}"
            )
        })
}

/// Traces where calls crowd: many start and end in the same millisecond, and durations come
/// from a few values that timeouts and slow calls can equal, so that every tie is tried.
pub fn crowded_trace() -> impl Strategy<Value = Vec<Entry>> {
    let outcome = proptest::sample::select(Outcome::ALL.to_vec());
    let duration = proptest::sample::select(vec![0u64, 1, 2, 5, 10, 20]);
    proptest::collection::vec((0u64..3, duration, outcome), 0..200).prop_map(one_after_another)
}

/// Options on the scale of [`crowded_trace`]: small count windows and time windows of tens of
/// milliseconds, timeouts and slow calls equal to its durations, short breaks.
pub fn tight_options() -> impl Strategy<Value = String> {
    let ms = proptest::sample::select(vec![1u64, 2, 5, 10, 20]);
    (
        prop_oneof![
            (1u32..8).prop_map(|n| format!("window = \"{n}\"")),
            // Whole tens of milliseconds: buckets of whole milliseconds, whose edges the
            // replay on tasks drew where the recorded run did (see `ADMITTED_AFTER`).
            (1u64..10).prop_map(|tens| format!("window = \"{}ms\"", tens * 10)),
        ],
        (1u32..=100, 1u32..4),
        prop_oneof![Just(String::new()), ms.clone().prop_map(|ms| format!(", timeout_ms = {ms}"))],
        prop_oneof![
            Just(String::new()),
            (ms, 1u32..=100)
                .prop_map(|(ms, pct)| format!(", slow_call = \"{ms}ms\", slow_threshold = \"{pct}%\"")),
        ],
        (1u64..50, 1u32..4),
    )
        .prop_map(|(window, (threshold, min_calls), timeout, slow, (brk, probes))| {
            format!(
                "{window}, threshold = \"{threshold}%\", min_calls = {min_calls}{timeout}{slow}, break_duration = \"{brk}ms\", probes = {probes}"
            )
        })
}

/// Calls from (gap since the call before, duration, outcome).
fn one_after_another(calls: Vec<(u64, u64, Outcome)>) -> Vec<Entry> {
    let mut at_ms = 0u64;
    calls
        .into_iter()
        .map(|(gap, duration_ms, outcome)| {
            at_ms += gap;
            Entry {
                at_ms,
                duration_ms,
                outcome,
            }
        })
        .collect()
}
