//! A trace recorded from a live breaker, replayed under the options it was recorded with,
//! makes the same decisions at the same milliseconds: the replay drives the runtime as the
//! live traffic did.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::trace::{Limits, Outcome, bucket_start};
use breaker_runtime::{Breaker, State};
use tokio::time::{Instant, sleep, sleep_until};

#[derive(Clone, Copy)]
enum Kind {
    Answers,
    Fails,
    Hangs,
}

/// The live traffic: a call every 50 ms for 30 s. Healthy, then an outage from 3 s to 10 s
/// (failures, and calls that hang past the timeout), then healthy again. Calls start on whole
/// tens of milliseconds and last 5 ms past a ten (the timeout too), so no call ends in the
/// millisecond another starts.
fn traffic() -> Vec<(u64, u64, Kind)> {
    (0..600u64)
        .map(|i| {
            let at = i * 50;
            let kind = match (at, i % 3) {
                (3_000..10_000, 0) => Kind::Hangs,
                (3_000..10_000, _) => Kind::Fails,
                (_, _) if i % 17 == 0 => Kind::Fails,
                _ => Kind::Answers,
            };
            let duration = match kind {
                Kind::Answers => 45 + (i % 4) * 20,
                Kind::Fails => 25,
                Kind::Hangs => 3_000,
            };
            (at, duration, kind)
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_trace_replayed_under_its_own_count_window_makes_the_same_decisions_at_the_same_times() {
    reproduce(
        r#"window = "10", threshold = "50%", timeout_ms = 1005, break_duration = "2s", probes = 2"#,
        Duration::ZERO,
    )
    .await;
}

/// A time window judges by buckets whose edges are fixed on the process's clock: each live run
/// starts somewhere else between two edges, and its trace counts from the edge before it.
#[tokio::test(start_paused = true)]
async fn a_trace_replayed_under_its_own_time_window_makes_the_same_decisions_at_the_same_times() {
    for offset_ms in [0, 37, 160, 1_234] {
        reproduce(
            r#"window = "2s", min_calls = 8, threshold = "50%", timeout_ms = 1005, break_duration = "2s", probes = 2"#,
            Duration::from_millis(offset_ms),
        )
        .await;
    }
}

async fn reproduce(options: &str, offset: Duration) {
    let candidate = breaker_replay::parse_options(options).unwrap();
    let breaker = Arc::new(Breaker::new(candidate.config.clone()));
    tokio::time::advance(offset).await;
    let start = Instant::now();
    breaker.start_trace(Limits::DEFAULT);
    // The trace's 0: the start, or with a time window the start of the bucket it falls in.
    let began = bucket_start(candidate.config.window(), start);
    let live: Arc<Mutex<Vec<(u64, State, State)>>> = Arc::default();
    let sink = Arc::clone(&live);
    breaker
        .on_transition(move |t| {
            let at = t.at.duration_since(began).as_millis() as u64;
            sink.lock().unwrap().push((at, t.from, t.to));
        })
        .forever();

    let mut calls = Vec::new();
    for (at, duration, kind) in traffic() {
        sleep_until(start + Duration::from_millis(at)).await;
        let breaker = Arc::clone(&breaker);
        calls.push(tokio::spawn(async move {
            let body = async move {
                sleep(Duration::from_millis(duration)).await;
                match kind {
                    Kind::Fails => Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
                    Kind::Answers | Kind::Hangs => Ok(()),
                }
            };
            let _ = breaker.call(body).await;
        }));
        tokio::task::yield_now().await;
    }
    for call in calls {
        call.await.unwrap();
    }
    let live = live.lock().unwrap().clone();
    let trace = breaker.trace();

    // The live run is worth replaying only if it went through every state and back.
    for wanted in [
        (State::Closed, State::Open),
        (State::Open, State::HalfOpen),
        (State::HalfOpen, State::Open),
        (State::HalfOpen, State::Closed),
    ] {
        assert!(
            live.iter().any(|(_, from, to)| (*from, *to) == wanted),
            "the live run has no {wanted:?}: {live:?}"
        );
    }
    for outcome in [
        Outcome::Rejected,
        Outcome::Timeout,
        Outcome::Failure,
        Outcome::Success,
    ] {
        assert!(
            trace.iter().any(|e| e.outcome == outcome),
            "the trace has no {outcome}"
        );
    }

    let replayed = breaker_replay::replay(&trace, &candidate.config).unwrap();
    let decisions: Vec<(u64, State, State)> = replayed
        .changes
        .iter()
        .map(|c| (c.at_ms, c.from, c.to))
        .collect();
    assert_eq!(decisions, live);
    let rejected_live = trace
        .iter()
        .filter(|e| e.outcome == Outcome::Rejected)
        .count();
    let rejected_replay = replayed
        .fates
        .iter()
        .filter(|f| **f == breaker_replay::Fate::Rejected)
        .count();
    assert_eq!(rejected_replay, rejected_live);
    assert!(!replayed.fates.contains(&breaker_replay::Fate::Unknown));

    // The flight recorder kept the same run without being asked, on a time line of its own
    // (from the first call's bucket): replayed, its calls make the transitions it kept.
    let recent = breaker.recent(Duration::from_secs(3_600));
    assert_eq!(recent.calls.len(), trace.len());
    let flown = breaker_replay::replay(&recent.calls, &candidate.config).unwrap();
    let flown: Vec<(u64, State, State)> = flown
        .changes
        .iter()
        .map(|c| (c.at_ms, c.from, c.to))
        .collect();
    let kept: Vec<(u64, State, State)> = recent
        .changes
        .iter()
        .map(|c| (c.at_ms, c.from, c.to))
        .collect();
    assert_eq!(kept.len(), live.len());
    assert_eq!(flown, kept);
}

#[test]
fn the_same_trace_and_options_give_the_same_replay() {
    let trace = breaker_replay::read_trace(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/outage.jsonl"
    )))
    .unwrap();
    // Time windows too, whose buckets sit wherever the process's clock puts them: each replay
    // starts at another moment of it.
    for options in [
        r#"threshold = "40%", window = "30s""#,
        r#"window = "1s", min_calls = 5"#,
        r#"window = "2500ms", min_calls = 8, break_duration = "5s""#,
        r#"window = "20""#,
    ] {
        let candidate = breaker_replay::parse_options(options).unwrap();
        let first = breaker_replay::replay(&trace, &candidate.config).unwrap();
        assert!(!first.changes.is_empty(), "{options}");
        for _ in 0..3 {
            let again = breaker_replay::replay(&trace, &candidate.config).unwrap();
            assert!(again == first, "{options}: another replay, another answer");
        }
    }
}
