//! The flight recorder, on the paused clock: on from a breaker's first call without anyone
//! asking, what it keeps of each call and transition, its span, `record = "off"`, switching it
//! live, and its trace read back by the trace reader. (Its own binary, without any call
//! observer, so the calls are timed for the recorder alone, as in production.)

use std::time::Duration;

use breaker_runtime::trace::{Outcome, StateChange, parse, parse_recent};
use breaker_runtime::{Breaker, Config, Mode, Record, State, Verdict};
use tokio::time::{advance, sleep};

#[path = "support/calls.rs"]
mod calls;

use calls::{MS, answer, entry};

const HOUR: Duration = Duration::from_secs(3_600);

#[tokio::test(start_paused = true)]
async fn every_call_is_kept_from_the_first_without_anyone_asking() {
    let breaker = Breaker::new(
        Config::builder()
            .name("flight-outcomes")
            .count_window(4)
            .threshold(60.0)
            .timeout(MS * 100)
            .slow_call(MS * 50)
            .slow_threshold(100.0)
            .break_duration(Duration::from_secs(1))
            .build()
            .unwrap(),
    );
    assert_eq!(breaker.config().record(), Some(Record::DEFAULT));
    assert!(
        breaker.recent(HOUR).calls.is_empty(),
        "nothing before the first call"
    );
    answer(&breaker, 10, true).await; // at 0
    answer(&breaker, 60, true).await; // at 10: slow
    let _ = breaker
        .call_with(async { sleep(MS * 2).await }, |_| Verdict::Ignore)
        .await; // at 70
    answer(&breaker, 500, true).await; // at 72: cut at the timeout
    answer(&breaker, 3, false).await; // at 172
    answer(&breaker, 3, false).await; // at 175: 3 of the last 4 failed, opens at 178
    answer(&breaker, 3, true).await; // at 178: turned away
    let recent = breaker.recent(HOUR);
    assert_eq!(
        recent.calls,
        [
            entry(0, 10, Outcome::Success),
            entry(10, 60, Outcome::Slow),
            entry(70, 2, Outcome::Ignored),
            entry(72, 100, Outcome::Timeout),
            entry(172, 3, Outcome::Failure),
            entry(175, 3, Outcome::Failure),
            entry(178, 0, Outcome::Rejected),
        ]
    );
    assert_eq!(
        recent.changes,
        [StateChange {
            at_ms: 178,
            from: State::Closed,
            to: State::Open
        }]
    );
    // The probe after the break, and the circuit closing on it.
    advance(Duration::from_secs(1)).await;
    answer(&breaker, 1, true).await;
    let changes: Vec<(u64, State)> = breaker
        .recent(HOUR)
        .changes
        .iter()
        .map(|c| (c.at_ms, c.to))
        .collect();
    assert_eq!(
        changes,
        [
            (178, State::Open),
            (1_178, State::HalfOpen),
            (1_179, State::Closed)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_reading_goes_back_as_far_as_asked_and_as_record_keeps() {
    let breaker = Breaker::new(
        Config::builder()
            .name("flight-span")
            .record(Record::Last(Duration::from_secs(60)))
            .build()
            .unwrap(),
    );
    for _ in 0..5 {
        answer(&breaker, 1, true).await;
        advance(Duration::from_secs(30) - MS).await;
    }
    // Calls at 0, 30, 60, 90 and 120 s; now is 150 s.
    let ages = |last: Duration| -> Vec<u64> {
        breaker
            .recent(last)
            .calls
            .iter()
            .map(|e| e.at_ms / 1_000)
            .collect()
    };
    assert_eq!(
        ages(Duration::from_secs(40)),
        [0],
        "the call at 120 s, first of its trace"
    );
    assert_eq!(ages(Duration::from_secs(70)), [0, 30], "90 s and 120 s");
    assert_eq!(
        ages(HOUR),
        [0, 30],
        "no further back than the 60 s that `record` keeps"
    );
}

#[tokio::test(start_paused = true)]
async fn record_off_keeps_nothing_and_allocates_nothing() {
    let breaker = Breaker::new(
        Config::builder()
            .name("flight-off")
            .record(Record::Off)
            .build()
            .unwrap(),
    );
    let before = breaker.memory_footprint();
    for _ in 0..10 {
        answer(&breaker, 1, true).await;
    }
    assert!(breaker.recent(HOUR).calls.is_empty());
    assert!(
        breaker.memory_footprint() < before + 1_000,
        "no recorder: {} bytes after, {before} before",
        breaker.memory_footprint()
    );
}

#[tokio::test(start_paused = true)]
async fn record_changes_live() {
    let breaker = Breaker::new(
        Config::builder()
            .name("flight-live")
            .record(Record::Off)
            .build()
            .unwrap(),
    );
    answer(&breaker, 1, true).await;
    breaker
        .update(Config::builder().record(Record::Last(Duration::from_secs(600))))
        .unwrap();
    assert_eq!(
        breaker.config().record(),
        Some(Record::Last(Duration::from_secs(600)))
    );
    advance(MS * 10).await;
    answer(&breaker, 2, false).await;
    let kept = breaker.recent(HOUR).calls;
    assert_eq!(kept, [entry(0, 2, Outcome::Failure)], "from the change on");
    breaker
        .update(Config::builder().record(Record::Off))
        .unwrap();
    answer(&breaker, 2, true).await;
    assert_eq!(
        breaker.recent(HOUR).calls,
        kept,
        "off again: kept, not added to"
    );
}

#[tokio::test(start_paused = true)]
async fn a_shadow_breaker_keeps_every_outcome_of_the_calls_it_would_have_turned_away() {
    let breaker = Breaker::new(
        Config::builder()
            .name("flight-shadow")
            .count_window(2)
            .mode(Mode::Shadow)
            .build()
            .unwrap(),
    );
    for ok in [false, false, true, false] {
        answer(&breaker, 5, ok).await;
    }
    let outcomes: Vec<Outcome> = breaker
        .recent(HOUR)
        .calls
        .iter()
        .map(|e| e.outcome)
        .collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Failure,
            Outcome::Failure,
            Outcome::Success,
            Outcome::Failure
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_recorders_lines_read_back_as_written() {
    let breaker = Breaker::new(
        Config::builder()
            .name("flight-lines")
            .count_window(2)
            .break_duration(MS * 100)
            .build()
            .unwrap(),
    );
    for ok in [true, false, false, true] {
        answer(&breaker, 4, ok).await;
        advance(MS * 3).await;
    }
    let recent = breaker.recent(HOUR);
    let text = recent.to_json_lines();
    assert_eq!(parse_recent(&text).unwrap(), recent);
    assert_eq!(parse(&text).unwrap(), recent.calls, "the calls alone");
    // One failure of two is the default 50%: open at 11 ms, when it ended.
    assert!(
        text.contains(r#"{"at_ms": 11, "from": "closed", "to": "open"}"#),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_time_windows_trace_counts_from_the_start_of_its_first_calls_bucket() {
    let breaker = Breaker::new(
        Config::builder()
            .name("flight-buckets")
            .time_window(Duration::from_secs(10))
            .build()
            .unwrap(),
    );
    advance(Duration::from_millis(2_345)).await;
    answer(&breaker, 1, true).await;
    let first = breaker.recent(HOUR).calls[0].at_ms;
    // The bucket is a tenth of the window, 1 s: the call sits less than one bucket after 0.
    assert!(first < 1_000, "{first}");
    let start = breaker_runtime::trace::bucket_start(
        breaker_runtime::Window::Time(Duration::from_secs(10)),
        tokio::time::Instant::now() - MS,
    );
    let since_edge = (tokio::time::Instant::now() - MS - start).as_millis() as u64;
    assert!(
        since_edge.abs_diff(first) <= 1,
        "{first} ms after the edge, as the breaker bucketed it ({since_edge})"
    );
}

#[breaker_runtime::circuit_breaker(name = "flight-attr-30m", record = "30m")]
async fn kept_half_an_hour() -> Result<(), std::io::Error> {
    Ok(())
}

#[breaker_runtime::circuit_breaker(name = "flight-attr-off", record = "off")]
async fn never_kept() -> Result<(), std::io::Error> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_attribute_sets_what_the_recorder_keeps() {
    kept_half_an_hour().await.unwrap();
    never_kept().await.unwrap();
    let registry = breaker_runtime::registry();
    let kept = registry.get("flight-attr-30m").unwrap();
    assert_eq!(
        kept.config().record(),
        Some(Record::Last(Duration::from_secs(1_800)))
    );
    assert_eq!(kept.recent(HOUR).calls, [entry(0, 0, Outcome::Success)]);
    let off = registry.get("flight-attr-off").unwrap();
    assert_eq!(off.config().record(), Some(Record::Off));
    assert!(off.recent(HOUR).calls.is_empty());
}
