//! Fault injection on a paused clock: the shares drawn, the failures and delays going through
//! the real call path (window, trip, probe, timeout, fallback), and the injection's end.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::{
    Breaker, BreakerError, CallEvent, CallObserver, Config, Ending, Fault, InjectError, Injection,
    MAX_INJECTION, Mode, State, Verdict, add_call_observer, circuit_breaker, registry,
};
use tokio::time::{Instant, sleep};

const MINUTE: Duration = Duration::from_secs(60);

fn breaker(config: breaker_runtime::ConfigBuilder) -> Breaker {
    Breaker::new(config.build().unwrap())
}

async fn ok() -> Result<u32, std::io::Error> {
    Ok(7)
}

/// How a call through `breaker` ended, and how long it took on the paused clock.
async fn timed_call(breaker: &Breaker, takes: Duration) -> (Result<u32, BreakerError>, Duration) {
    let start = Instant::now();
    let answer = breaker
        .call(async {
            sleep(takes).await;
            ok().await
        })
        .await
        .map(|value| value.unwrap());
    (answer, start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn over_10_000_calls_the_shares_drawn_are_within_their_bounds() {
    // A window that never trips at these shares, and no timeout, so every call is drawn.
    let breaker = breaker(
        Config::builder()
            .name("shares")
            .count_window(100)
            .threshold(90.0),
    );
    let delay = Duration::from_millis(3);
    let injection = Injection::new().fail(10.0).delay(delay, 5.0).seed(2026);
    breaker.inject(injection, MINUTE * 60).unwrap();
    let (mut failed, mut delayed, mut both) = (0u32, 0u32, 0u32);
    for _ in 0..10_000 {
        let (answer, took) = timed_call(&breaker, Duration::ZERO).await;
        let fails = matches!(answer, Err(BreakerError::Injected { .. }));
        let waits = took >= delay;
        assert!(fails || answer.is_ok(), "{answer:?}");
        failed += u32::from(fails);
        delayed += u32::from(waits);
        both += u32::from(fails && waits);
    }
    // Binomial bounds at about four standard deviations: 10% of 10 000 is 1 000 ± 30,
    // 5% is 500 ± 22, and both (0.5%) 50 ± 7.
    assert!((880..=1_120).contains(&failed), "failed {failed}");
    assert!((410..=590).contains(&delayed), "delayed {delayed}");
    assert!((22..=78).contains(&both), "failed after a delay {both}");
    let running = breaker.injection().unwrap();
    assert_eq!(running.drawn, 10_000);
    assert_eq!(
        running.injected,
        u64::from(failed + delayed - both),
        "every call it picked, counted once"
    );
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn the_same_seed_picks_the_same_calls_and_another_seed_others() {
    async fn picks(seed: u64) -> Vec<bool> {
        let breaker = breaker(Config::builder().count_window(100).threshold(100.0));
        breaker
            .inject(Injection::new().fail(30.0).seed(seed), MINUTE)
            .unwrap();
        let mut picked = Vec::new();
        for _ in 0..200 {
            picked.push(breaker.call(ok()).await.is_err());
        }
        picked
    }
    assert_eq!(picks(5).await, picks(5).await);
    assert_ne!(picks(5).await, picks(6).await);
}

#[tokio::test(start_paused = true)]
async fn injected_failures_open_the_circuit_like_real_ones_and_fail_its_probe() {
    let breaker = breaker(
        Config::builder()
            .name("tripped-by-injection")
            .count_window(10)
            .break_duration(Duration::from_secs(5)),
    );
    breaker
        .inject(Injection::new().fail(100.0), MINUTE)
        .unwrap();
    for _ in 0..10 {
        let err = breaker.call(ok()).await.unwrap_err();
        assert!(err.is_injected() && !err.is_rejection(), "{err:?}");
        assert_eq!(
            err.to_string(),
            "call through circuit breaker `tripped-by-injection` failed by fault injection"
        );
    }
    assert_eq!(breaker.state(), State::Open);
    let opened = breaker.snapshot().last_opened.unwrap();
    assert_eq!((opened.calls, opened.failures), (10, 10));
    assert!(
        opened
            .last_failure
            .as_deref()
            .unwrap()
            .contains("fault injection"),
        "{opened:?}"
    );
    // Open: turned away, not drawn.
    let drawn = breaker.injection().unwrap().drawn;
    assert!(breaker.call(ok()).await.unwrap_err().is_rejection());
    assert_eq!(breaker.injection().unwrap().drawn, drawn);
    // The break passes: the probe is drawn too, fails, and the circuit opens again.
    sleep(Duration::from_secs(5)).await;
    assert!(breaker.call(ok()).await.unwrap_err().is_injected());
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.injection().unwrap().drawn, drawn + 1);
}

#[tokio::test(start_paused = true)]
async fn an_injected_delay_meets_the_timeout_and_counts_in_the_calls_time() {
    let breaker = breaker(
        Config::builder()
            .count_window(100)
            .timeout(Duration::from_secs(1)),
    );
    let ran = AtomicU32::new(0);
    breaker
        .inject(
            Injection::new().delay(Duration::from_secs(2), 100.0),
            MINUTE,
        )
        .unwrap();
    let start = Instant::now();
    let answer = breaker
        .call(async {
            ran.fetch_add(1, Ordering::Relaxed);
            ok().await
        })
        .await;
    assert!(answer.unwrap_err().is_timeout());
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(1),
        "cut at the timeout"
    );
    assert_eq!(ran.load(Ordering::Relaxed), 0, "the call never ran");
    assert_eq!(breaker.snapshot().failures, 1);
    breaker.stop_injection().unwrap();

    // A shorter delay is waited, and the call then runs under what is left of its timeout.
    breaker
        .inject(
            Injection::new().delay(Duration::from_millis(500), 100.0),
            MINUTE,
        )
        .unwrap();
    let (answer, took) = timed_call(&breaker, Duration::from_millis(100)).await;
    assert_eq!((answer, took), (Ok(7), Duration::from_millis(600)));
    let (answer, took) = timed_call(&breaker, Duration::from_millis(600)).await;
    assert!(answer.unwrap_err().is_timeout());
    assert_eq!(took, Duration::from_secs(1));
    assert_eq!(breaker.snapshot().failures, 2);
}

#[tokio::test(start_paused = true)]
async fn a_delay_counts_against_slow_call_and_a_delay_then_failure_fails_after_it() {
    let breaker = breaker(
        Config::builder()
            .count_window(100)
            .slow_call(Duration::from_millis(200)),
    );
    breaker
        .inject(
            Injection::new().delay(Duration::from_millis(300), 100.0),
            MINUTE,
        )
        .unwrap();
    assert_eq!(timed_call(&breaker, Duration::ZERO).await.0, Ok(7));
    assert_eq!(breaker.snapshot().slow, 1);
    breaker.stop_injection().unwrap();
    breaker
        .inject(
            Injection::new()
                .fail(100.0)
                .delay(Duration::from_millis(300), 100.0),
            MINUTE,
        )
        .unwrap();
    let (answer, took) = timed_call(&breaker, Duration::ZERO).await;
    assert!(answer.unwrap_err().is_injected());
    assert_eq!(took, Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn an_injection_ends_by_itself_and_can_be_stopped_early() {
    let breaker = breaker(Config::builder().count_window(1_000).threshold(100.0));
    let started = Instant::now();
    let ends = breaker
        .inject(Injection::new().fail(100.0), Duration::from_secs(30))
        .unwrap();
    assert_eq!(ends, started + Duration::from_secs(30));
    assert_eq!(breaker.injection().unwrap().ends, ends);
    assert!(breaker.snapshot().injection.is_some());
    assert!(breaker.call(ok()).await.unwrap_err().is_injected());
    sleep(Duration::from_secs(30)).await;
    assert_eq!(
        breaker.injection(),
        None,
        "past its end, whether a call came or not"
    );
    assert_eq!(breaker.snapshot().injection, None);
    assert_eq!(breaker.call(ok()).await.unwrap().unwrap(), 7);
    assert_eq!(breaker.stop_injection(), None, "it had ended");

    breaker
        .inject(Injection::new().fail(100.0), Duration::from_secs(30))
        .unwrap();
    assert!(breaker.call(ok()).await.unwrap_err().is_injected());
    let stopped = breaker.stop_injection().unwrap();
    assert_eq!((stopped.drawn, stopped.injected), (1, 1));
    assert_eq!(breaker.call(ok()).await.unwrap().unwrap(), 7);
    assert_eq!(breaker.injection(), None);
}

#[tokio::test(start_paused = true)]
async fn what_cannot_be_injected_is_refused_with_the_reason() {
    let breaker = breaker(Config::builder());
    let fail = Injection::new().fail(10.0);
    assert_eq!(
        breaker.inject(Injection::new(), MINUTE),
        Err(InjectError::Nothing)
    );
    assert_eq!(
        breaker.inject(Injection::new().fail(101.0), MINUTE),
        Err(InjectError::Share { percent: 101.0 })
    );
    assert_eq!(
        breaker.inject(Injection::new().delay(Duration::ZERO, 5.0), MINUTE),
        Err(InjectError::ZeroDelay)
    );
    assert_eq!(breaker.inject(fail, Duration::ZERO), Err(InjectError::Zero));
    assert_eq!(
        breaker.inject(fail, MAX_INJECTION + Duration::from_secs(1)),
        Err(InjectError::TooLong)
    );
    breaker.set_mode(Mode::Shadow);
    assert_eq!(breaker.inject(fail, MINUTE), Err(InjectError::Shadow));
    breaker.set_mode(Mode::Enforce);
    let ends = breaker.inject(fail, MINUTE).unwrap();
    assert_eq!(
        breaker.inject(fail, MINUTE),
        Err(InjectError::Injecting { ends })
    );
}

#[tokio::test(start_paused = true)]
async fn a_disabled_breaker_and_a_permit_recorded_by_hand_get_nothing_injected() {
    let breaker = breaker(Config::builder().count_window(1));
    breaker
        .inject(Injection::new().fail(100.0), MINUTE)
        .unwrap();
    breaker.disable();
    assert_eq!(breaker.call(ok()).await.unwrap().unwrap(), 7);
    breaker.reset();
    // The caller runs its own call and says how it ended: nothing is drawn.
    breaker.try_acquire().unwrap().record(Verdict::Success);
    assert_eq!(breaker.injection().unwrap().drawn, 0);
    assert_eq!(breaker.state(), State::Closed);
    // A permit run through the breaker is drawn, owned or borrowed.
    let owned = Arc::new(Breaker::new(
        Config::builder().count_window(100).build().unwrap(),
    ));
    owned.inject(Injection::new().fail(100.0), MINUTE).unwrap();
    let permit = owned.try_acquire_owned().unwrap();
    let answer = tokio::spawn(permit.run(ok(), Verdict::of)).await.unwrap();
    assert!(answer.unwrap_err().is_injected());
    let answer = owned.try_acquire().unwrap().run(ok(), Verdict::of).await;
    assert!(answer.unwrap_err().is_injected());
    assert_eq!(owned.snapshot().failures, 2);
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_during_its_delay_records_nothing() {
    let breaker = breaker(Config::builder().count_window(100));
    breaker
        .inject(
            Injection::new().delay(Duration::from_secs(5), 100.0),
            MINUTE,
        )
        .unwrap();
    let call = breaker.call(ok());
    assert!(
        tokio::time::timeout(Duration::from_secs(1), call)
            .await
            .is_err()
    );
    assert_eq!(breaker.snapshot().calls, 0);
    assert_eq!(breaker.injection().unwrap().injected, 1);
}

/// Every event of the breakers named `observed-*`, in order.
static EVENTS: Mutex<Vec<(String, CallEvent)>> = Mutex::new(Vec::new());

struct Events;

impl CallObserver for Events {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        if breaker.name().starts_with("observed-") {
            EVENTS
                .lock()
                .unwrap()
                .push((breaker.name().to_string(), event));
        }
    }
}

#[tokio::test(start_paused = true)]
async fn observers_hear_each_injected_call_just_before_it_ends() {
    add_call_observer(Events);
    let breaker = breaker(Config::builder().name("observed-inject").count_window(100));
    breaker
        .inject(
            Injection::new()
                .fail(100.0)
                .delay(Duration::from_millis(10), 100.0),
            MINUTE,
        )
        .unwrap();
    assert!(breaker.call(ok()).await.unwrap_err().is_injected());
    breaker.stop_injection().unwrap();
    breaker.call(ok()).await.unwrap().unwrap();
    breaker
        .inject(
            Injection::new().delay(Duration::from_millis(10), 100.0),
            MINUTE,
        )
        .unwrap();
    breaker.call(ok()).await.unwrap().unwrap();
    breaker.stop_injection().unwrap();
    breaker
        .inject(Injection::new().fail(100.0), MINUTE)
        .unwrap();
    assert!(breaker.call(ok()).await.unwrap_err().is_injected());
    let events: Vec<CallEvent> = EVENTS
        .lock()
        .unwrap()
        .iter()
        .filter(|(name, _)| name == "observed-inject")
        .map(|(_, event)| *event)
        .collect();
    assert_eq!(
        events,
        [
            CallEvent::Admitted,
            CallEvent::Injected {
                fault: Fault::DelayThenFailure
            },
            CallEvent::Finished {
                ending: Ending::Failure,
                elapsed: Some(Duration::from_millis(10))
            },
            CallEvent::Admitted,
            CallEvent::Finished {
                ending: Ending::Success,
                elapsed: Some(Duration::ZERO)
            },
            CallEvent::Admitted,
            CallEvent::Injected {
                fault: Fault::Delay
            },
            CallEvent::Finished {
                ending: Ending::Success,
                elapsed: Some(Duration::from_millis(10))
            },
            CallEvent::Admitted,
            CallEvent::Injected {
                fault: Fault::Failure
            },
            CallEvent::Finished {
                ending: Ending::Failure,
                elapsed: Some(Duration::ZERO)
            },
        ]
    );
}

#[circuit_breaker(name = "inject-quote", window = "5", fallback = cached_quote)]
async fn quote(sku: u32) -> Result<u32, BreakerError> {
    Ok(sku * 100)
}

async fn cached_quote(_sku: u32) -> Result<u32, BreakerError> {
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_guarded_fn_serves_its_fallback_for_each_injected_failure_then_for_the_open_circuit() {
    let breaker = registry().get("inject-quote").unwrap();
    assert_eq!(quote(3).await, Ok(300));
    breaker
        .inject(Injection::new().fail(100.0), MINUTE)
        .unwrap();
    for _ in 0..5 {
        assert_eq!(
            quote(3).await,
            Ok(1),
            "the fallback, for an injected failure"
        );
    }
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(quote(3).await, Ok(1), "the fallback, for the open circuit");
    breaker.stop_injection().unwrap();
    breaker.reset();
    assert_eq!(quote(3).await, Ok(300));
}
