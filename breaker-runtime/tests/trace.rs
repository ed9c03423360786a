//! A breaker's trace of its calls, on the paused clock: what each call is recorded as, what a
//! shadow-mode trace holds, the bounds, and starting and stopping it live. (Its own binary: a
//! trace installs a call observer, which makes every breaker of the process time its calls.)

use breaker_runtime::trace::{Limits, Outcome};
use breaker_runtime::{Breaker, Config, Mode, State, Verdict};
use tokio::time::{advance, sleep};

#[path = "support/calls.rs"]
mod calls;

use calls::{MS, answer, entry};

#[tokio::test(start_paused = true)]
async fn each_call_is_recorded_when_admitted_with_its_duration_and_outcome() {
    let breaker = Breaker::new(
        Config::builder()
            .name("trace-outcomes")
            .count_window(10)
            .min_calls(5)
            .timeout(MS * 100)
            .slow_call(MS * 50)
            .build()
            .unwrap(),
    );
    advance(MS * 7).await;
    breaker.start_trace(Limits::DEFAULT);
    answer(&breaker, 10, true).await; // at 0
    advance(MS * 5).await;
    answer(&breaker, 60, true).await; // at 15: slow
    answer(&breaker, 3, false).await; // at 75
    answer(&breaker, 500, true).await; // at 78: cut at the timeout
    let _ = breaker
        .call_with(async { sleep(MS * 2).await }, |_| Verdict::Ignore)
        .await; // at 178
    // Dropped by its caller before it ends: it says nothing about the dependency.
    let cancelled = breaker.call(async {
        sleep(MS * 1_000).await;
        Ok::<(), std::io::Error>(())
    });
    let _ = tokio::time::timeout(MS * 4, cancelled).await; // at 180
    // At 184, the window opens: 5 calls recorded, 3 of them failed (the timeout is one).
    answer(&breaker, 1, false).await;
    assert_eq!(breaker.state(), State::Open);
    answer(&breaker, 1, true).await; // at 185: turned away

    assert_eq!(
        breaker.trace(),
        [
            entry(0, 10, Outcome::Success),
            entry(15, 60, Outcome::Slow),
            entry(75, 3, Outcome::Failure),
            entry(78, 100, Outcome::Timeout),
            entry(178, 2, Outcome::Ignored),
            entry(184, 1, Outcome::Failure),
            entry(185, 0, Outcome::Rejected),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn in_shadow_mode_every_call_runs_so_the_trace_has_every_outcome() {
    let breaker = Breaker::new(
        Config::builder()
            .name("trace-shadow")
            .count_window(2)
            .mode(Mode::Shadow)
            .build()
            .unwrap(),
    );
    breaker.start_trace(Limits::DEFAULT);
    answer(&breaker, 1, false).await;
    answer(&breaker, 1, false).await;
    assert_eq!(breaker.state(), State::Open, "it would reject now");
    answer(&breaker, 1, true).await;
    answer(&breaker, 1, false).await;
    let outcomes: Vec<Outcome> = breaker.trace().iter().map(|e| e.outcome).collect();
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
async fn entries_come_in_admission_order_though_calls_end_out_of_order() {
    let breaker = Breaker::new(Config::builder().name("trace-order").build().unwrap());
    breaker.start_trace(Limits::DEFAULT);
    let long = answer(&breaker, 30, true);
    let short = async {
        advance(MS * 2).await;
        answer(&breaker, 5, false).await;
    };
    tokio::join!(long, short);
    assert_eq!(
        breaker.trace(),
        [
            entry(0, 30, Outcome::Success),
            entry(2, 5, Outcome::Failure)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_trace_keeps_its_newest_calls_within_its_limits() {
    let breaker = Breaker::new(Config::builder().name("trace-bounded").build().unwrap());
    breaker.start_trace(Limits {
        max_entries: 3,
        max_bytes: usize::MAX,
    });
    for _ in 0..5 {
        answer(&breaker, 1, true).await;
    }
    let kept: Vec<u64> = breaker.trace().iter().map(|e| e.at_ms).collect();
    assert_eq!(kept, [2, 3, 4]);

    // One line here is 53 bytes: 120 bytes keep two.
    breaker.start_trace(Limits {
        max_entries: 100,
        max_bytes: 120,
    });
    for _ in 0..4 {
        answer(&breaker, 1, false).await;
    }
    let kept: Vec<u64> = breaker.trace().iter().map(|e| e.at_ms).collect();
    assert_eq!(kept, [2, 3]);
    assert!(breaker.memory_footprint() > 0);
}

#[tokio::test(start_paused = true)]
async fn a_trace_starts_and_stops_live_and_counts_from_its_start() {
    let breaker = Breaker::new(Config::builder().name("trace-live").build().unwrap());
    assert!(!breaker.is_tracing());
    assert!(!breaker.snapshot().tracing);
    answer(&breaker, 1, true).await;
    assert_eq!(breaker.trace(), [], "never started: nothing");

    breaker.start_trace(Limits::DEFAULT);
    assert!(breaker.snapshot().tracing);
    answer(&breaker, 4, true).await;
    breaker.stop_trace();
    assert!(!breaker.is_tracing());
    answer(&breaker, 1, false).await;
    assert_eq!(
        breaker.trace(),
        [entry(0, 4, Outcome::Success)],
        "kept after the stop"
    );

    // A call admitted before the new start and ending after it is not the new trace's.
    let before = answer(&breaker, 10, true);
    let restart = async {
        advance(MS * 3).await;
        breaker.start_trace(Limits::DEFAULT);
        advance(MS).await;
        answer(&breaker, 2, false).await;
    };
    tokio::join!(before, restart);
    assert_eq!(breaker.trace(), [entry(1, 2, Outcome::Failure)]);
}

#[derive(Debug, breaker_runtime::IsFailure)]
enum StockError {
    Unavailable,
    #[breaker(healthy)]
    UnknownSku,
}

impl From<breaker_runtime::BreakerError> for StockError {
    fn from(_: breaker_runtime::BreakerError) -> StockError {
        StockError::Unavailable
    }
}

#[breaker_runtime::circuit_breaker(name = "trace-guarded-stock")]
async fn stock(sku: u32) -> Result<u32, StockError> {
    sleep(MS * 3).await;
    match sku {
        0 => Err(StockError::UnknownSku),
        1 => Err(StockError::Unavailable),
        _ => Ok(sku),
    }
}

#[tokio::test(start_paused = true)]
async fn a_business_answer_is_traced_as_healthy_through_the_attribute_and_call() {
    let guarded = breaker_runtime::registry()
        .get("trace-guarded-stock")
        .expect("declared");
    guarded.start_trace(Limits::DEFAULT);
    let _ = stock(7).await;
    let _ = stock(0).await;
    let _ = stock(1).await;
    let outcomes: Vec<Outcome> = guarded.trace().iter().map(|e| e.outcome).collect();
    assert_eq!(
        outcomes,
        [Outcome::Success, Outcome::Healthy, Outcome::Failure]
    );

    let breaker = Breaker::new(
        Config::builder()
            .name("trace-healthy-call")
            .build()
            .unwrap(),
    );
    breaker.start_trace(Limits::DEFAULT);
    let not_found = || async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::NotFound)) };
    let _ = breaker.call(not_found()).await;
    let _ = breaker.call(async { Ok::<(), std::io::Error>(()) }).await;
    // A classifier of the caller's own says only "not a failure".
    let _ = breaker.call_with(not_found(), |_| Verdict::Success).await;
    let outcomes: Vec<Outcome> = breaker.trace().iter().map(|e| e.outcome).collect();
    assert_eq!(
        outcomes,
        [Outcome::Healthy, Outcome::Success, Outcome::Success]
    );
    assert_eq!(
        breaker.snapshot().failures,
        0,
        "a business answer is no failure"
    );
}
