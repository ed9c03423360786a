//! Retries, their backoff and budget, the deadline and the bulkhead, through the attribute and
//! through `Policy`, on tokio's paused clock: retry outside, breaker inside, timeout innermost.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use breaker_runtime::{
    Breaker, BreakerError, Config, IsFailure, Policy, State, Verdict, circuit_breaker, registry,
};
use tokio::time::Instant;

#[derive(Debug, PartialEq, IsFailure)]
enum StockError {
    Unavailable,
    #[breaker(healthy)]
    NotFound,
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for StockError {
    fn from(e: BreakerError) -> Self {
        StockError::Breaker(e)
    }
}

/// A dependency that answers from a script, then `Ok`, and counts the attempts it saw.
#[derive(Default)]
struct Script {
    attempts: AtomicU32,
}

impl Script {
    fn answer(&self, failures: u32) -> Result<u32, StockError> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst);
        if n < failures {
            Err(StockError::Unavailable)
        } else {
            Ok(n)
        }
    }
    fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::SeqCst)
    }
}

static FLAKY: Script = Script {
    attempts: AtomicU32::new(0),
};

/// The SKU is taken by value: each attempt gets its own copy.
#[circuit_breaker(retries = 3, backoff = "10ms..80ms", window = "100")]
async fn flaky(sku: String, failures: u32) -> Result<u32, StockError> {
    assert_eq!(sku, "sku-1", "every attempt sees the argument");
    FLAKY.answer(failures)
}

#[tokio::test(start_paused = true)]
async fn a_failure_is_retried_until_it_succeeds_and_every_attempt_is_recorded() {
    let start = Instant::now();
    assert_eq!(flaky("sku-1".to_string(), 2).await, Ok(2));
    assert_eq!(FLAKY.attempts(), 3, "two failures, then the success");
    let breaker = registry().get("retries::flaky").unwrap();
    let snapshot = breaker.snapshot();
    assert_eq!((snapshot.calls, snapshot.failures), (3, 2));
    // Full jitter: the waits are at most 10 ms and 20 ms.
    assert!(
        start.elapsed() <= Duration::from_millis(30),
        "{:?}",
        start.elapsed()
    );
}

static EXHAUSTED: Script = Script {
    attempts: AtomicU32::new(0),
};
static FALLBACKS: AtomicU32 = AtomicU32::new(0);

async fn cached(_sku: &str) -> Result<u32, StockError> {
    FALLBACKS.fetch_add(1, Ordering::SeqCst);
    Ok(0)
}

#[circuit_breaker(retries = 2, backoff = "1ms..1ms", window = "100", fallback = cached)]
async fn exhausted(sku: &str) -> Result<u32, StockError> {
    let _ = sku;
    EXHAUSTED.answer(u32::MAX)
}

#[tokio::test(start_paused = true)]
async fn the_fallback_runs_once_after_the_last_attempt() {
    assert_eq!(exhausted("sku-2").await, Ok(0));
    assert_eq!(EXHAUSTED.attempts(), 3, "the first attempt and two retries");
    assert_eq!(FALLBACKS.load(Ordering::SeqCst), 1);
}

static HEALTHY: Script = Script {
    attempts: AtomicU32::new(0),
};

#[circuit_breaker(retries = 3)]
async fn not_found() -> Result<u32, StockError> {
    HEALTHY.attempts.fetch_add(1, Ordering::SeqCst);
    Err(StockError::NotFound)
}

#[tokio::test(start_paused = true)]
async fn a_healthy_answer_is_never_retried() {
    assert_eq!(not_found().await, Err(StockError::NotFound));
    assert_eq!(HEALTHY.attempts(), 1);
}

static BEHIND_OPEN: Script = Script {
    attempts: AtomicU32::new(0),
};

#[circuit_breaker(retries = 3, window = "2", backoff = "1ms..1ms", break_duration = "1m")]
async fn behind_open() -> Result<u32, StockError> {
    BEHIND_OPEN.answer(u32::MAX)
}

#[tokio::test(start_paused = true)]
async fn a_rejection_mid_retry_ends_the_retries_and_is_the_answer() {
    // Two failures fill the window of 2 and open the circuit; the third attempt is turned away.
    let answer = behind_open().await;
    let Err(StockError::Breaker(rejection)) = answer else {
        panic!("the rejection surfaces: {answer:?}");
    };
    assert!(rejection.is_rejection());
    assert!(rejection.retry_after().is_some(), "{rejection}");
    assert_eq!(BEHIND_OPEN.attempts(), 2);
    let breaker = registry().get("retries::behind_open").unwrap();
    assert_eq!(breaker.state(), State::Open);
    // Open from the start: one rejection, no retry, no attempt.
    assert!(matches!(behind_open().await, Err(StockError::Breaker(e)) if e.is_rejection()));
    assert_eq!(BEHIND_OPEN.attempts(), 2);
}

#[circuit_breaker(retries = 5, backoff = "1ms..1ms", deadline = "1s", timeout = "off")]
async fn slow_and_failing() -> Result<u32, StockError> {
    tokio::time::sleep(Duration::from_millis(400)).await;
    Err(StockError::Unavailable)
}

#[tokio::test(start_paused = true)]
async fn the_deadline_cuts_all_attempts_where_it_says() {
    let start = Instant::now();
    let answer = slow_and_failing().await;
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(1),
        "cut at the deadline, not later"
    );
    let Err(StockError::Breaker(error)) = answer else {
        panic!("{answer:?}");
    };
    assert!(error.is_deadline() && !error.is_rejection(), "{error}");
    assert_eq!(
        error.to_string(),
        "call through circuit breaker `retries::slow_and_failing` ran out of its 1 s deadline"
    );
    // Two attempts of 400 ms, each followed by a wait of at most 1 ms, ended and were
    // recorded; the third, which the deadline cut, was cancelled and records nothing.
    let breaker = registry().get("retries::slow_and_failing").unwrap();
    assert_eq!(breaker.snapshot().calls, 2);
}

fn failing_breaker() -> Breaker {
    // A time window that never holds enough calls to open: the dependency stays reachable and
    // failing, which is when retries cost the most.
    Breaker::new(
        Config::builder()
            .time_window(Duration::from_secs(60))
            .min_calls(breaker_runtime::MAX_MIN_CALLS)
            .build()
            .unwrap(),
    )
}

/// Attempts per call for 10 000 calls to a dependency that always fails, 100 at a time.
async fn attempts_per_call(policy: Policy) -> f64 {
    let breaker = failing_breaker();
    let attempts = AtomicU32::new(0);
    let calls = (0..10_000).map(|_| {
        policy.call(&breaker, || async {
            attempts.fetch_add(1, Ordering::Relaxed);
            Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
        })
    });
    let mut calls = calls.collect::<Vec<_>>().into_iter();
    loop {
        let batch: Vec<_> = calls.by_ref().take(100).collect();
        if batch.is_empty() {
            break;
        }
        for answer in join_all(batch).await {
            assert!(
                answer.unwrap().is_err(),
                "the dependency's error comes back as the value"
            );
        }
    }
    f64::from(attempts.load(Ordering::Relaxed)) / 10_000.0
}

/// Every future polled together on this task, as a service's concurrent callers would be.
async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut pending: Vec<_> = futures.into_iter().map(Some).collect();
    let mut done: Vec<Option<F::Output>> = (0..pending.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all = true;
        for (slot, out) in pending.iter_mut().zip(done.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => {
                        *out = Some(value);
                        *slot = None;
                    }
                    std::task::Poll::Pending => all = false,
                }
            }
        }
        if all {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    done.into_iter().map(|o| o.unwrap()).collect()
}

#[tokio::test(start_paused = true)]
async fn the_budget_keeps_a_failing_dependency_from_a_retry_storm() {
    let backoff = (Duration::from_millis(1), Duration::from_millis(10));
    let budgeted = Policy::builder()
        .retries(3)
        .backoff(backoff.0, backoff.1)
        .build()
        .unwrap();
    let naive = Policy::builder()
        .retries(3)
        .backoff(backoff.0, backoff.1)
        .no_retry_budget()
        .build()
        .unwrap();
    let with_budget = attempts_per_call(budgeted).await;
    let without = attempts_per_call(naive).await;
    println!("attempts per call: {with_budget:.3} with the budget, {without:.3} without");
    assert!(
        with_budget <= 1.2,
        "{with_budget} attempts per call with the budget"
    );
    assert!(
        with_budget > 1.1,
        "the budget is spent, not left idle: {with_budget}"
    );
    assert_eq!(without, 4.0);
}

#[tokio::test(start_paused = true)]
async fn the_backoff_waits_a_random_time_within_its_growing_cap() {
    let breaker = failing_breaker();
    let policy = Policy::builder()
        .retries(3)
        .backoff(Duration::from_millis(100), Duration::from_millis(300))
        .no_retry_budget()
        .build()
        .unwrap();
    let caps = [100u128, 200, 300];
    let mut sums = [0u128; 3];
    let runs = 300;
    for _ in 0..runs {
        let mut stamps = Vec::new();
        let _ = policy
            .call(&breaker, || {
                stamps.push(Instant::now());
                async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::TimedOut)) }
            })
            .await;
        assert_eq!(stamps.len(), 4);
        for (n, pair) in stamps.windows(2).enumerate() {
            let waited = (pair[1] - pair[0]).as_micros();
            assert!(
                waited <= caps[n] * 1_000,
                "wait {n}: {waited} µs over its cap"
            );
            sums[n] += waited;
        }
    }
    for (n, sum) in sums.iter().enumerate() {
        let mean = sum / runs / 1_000;
        let half = caps[n] / 2;
        assert!(
            mean.abs_diff(half) <= caps[n] / 8,
            "wait {n}: a mean of {mean} ms, where full jitter gives about {half} ms"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_cancelled_in_its_backoff_records_nothing_more_and_holds_nothing() {
    let breaker = failing_breaker();
    let policy = Policy::builder()
        .retries(3)
        .backoff(Duration::from_secs(10), Duration::from_secs(10))
        .no_retry_budget()
        .max_concurrent(1)
        .build()
        .unwrap();
    let attempts = AtomicU32::new(0);
    let call = policy.call(&breaker, || async {
        attempts.fetch_add(1, Ordering::Relaxed);
        Err::<(), _>(std::io::Error::from(std::io::ErrorKind::TimedOut))
    });
    let cut = tokio::time::timeout(Duration::from_millis(1), call).await;
    assert!(cut.is_err(), "cancelled during the wait");
    assert_eq!(attempts.load(Ordering::Relaxed), 1);
    assert_eq!(
        breaker.snapshot().calls,
        1,
        "the first attempt, and nothing since"
    );
    assert_eq!(policy.in_flight(), 0, "its bulkhead slot is back");
    let again = policy
        .call(&breaker, || async { Ok::<_, std::io::Error>(7) })
        .await;
    assert_eq!(again.unwrap().unwrap(), 7);
}

#[test]
fn the_bulkhead_never_admits_more_than_its_cap_and_accounts_for_every_call() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let breaker = Arc::new(Breaker::new(Config::default()));
    let counted = breaker.counts();
    let policy = Arc::new(Policy::builder().max_concurrent(3).build().unwrap());
    let inside = Arc::new(AtomicU32::new(0));
    let most = Arc::new(AtomicU32::new(0));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (breaker, policy) = (Arc::clone(&breaker), Arc::clone(&policy));
            let (inside, most) = (Arc::clone(&inside), Arc::clone(&most));
            runtime.spawn(async move {
                let (mut done, mut full) = (0u32, 0u32);
                for _ in 0..2_000 {
                    let answer = policy
                        .call(&breaker, || async {
                            let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            tokio::task::yield_now().await;
                            inside.fetch_sub(1, Ordering::SeqCst);
                            Ok::<_, std::io::Error>(())
                        })
                        .await;
                    match answer {
                        Ok(value) => {
                            value.unwrap();
                            done += 1;
                        }
                        Err(BreakerError::BulkheadFull {
                            max_concurrent: 3, ..
                        }) => full += 1,
                        Err(other) => panic!("{other}"),
                    }
                }
                (done, full)
            })
        })
        .collect();
    let (done, full) = runtime.block_on(async {
        let mut sums = (0, 0);
        for task in tasks {
            let (d, f) = task.await.unwrap();
            sums = (sums.0 + d, sums.1 + f);
        }
        sums
    });
    assert_eq!(done + full, 16_000, "every call ran or was turned away");
    assert!(
        most.load(Ordering::SeqCst) <= 3,
        "{} at once",
        most.load(Ordering::SeqCst)
    );
    assert!(full > 0, "8 tasks on 3 slots met a full bulkhead");
    assert_eq!(
        breaker.counts().since(counted).calls,
        u64::from(done),
        "only admitted calls reach the breaker"
    );
    assert_eq!(
        breaker.state(),
        State::Closed,
        "a full bulkhead is not a failure"
    );
    assert_eq!(policy.in_flight(), 0);
}

#[circuit_breaker(max_concurrent = 1, max_wait = "50ms")]
async fn one_at_a_time(hold: Duration) -> Result<u32, StockError> {
    tokio::time::sleep(hold).await;
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_call_over_the_cap_waits_up_to_max_wait_then_is_turned_away() {
    let first = tokio::spawn(one_at_a_time(Duration::from_millis(30)));
    tokio::task::yield_now().await;
    let start = Instant::now();
    assert_eq!(
        one_at_a_time(Duration::ZERO).await,
        Ok(1),
        "waited 30 ms for the slot"
    );
    assert_eq!(start.elapsed(), Duration::from_millis(30));
    assert_eq!(first.await.unwrap(), Ok(1));

    let long = tokio::spawn(one_at_a_time(Duration::from_millis(500)));
    tokio::task::yield_now().await;
    let start = Instant::now();
    let answer = one_at_a_time(Duration::ZERO).await;
    assert_eq!(start.elapsed(), Duration::from_millis(50));
    assert!(
        matches!(
            &answer,
            Err(StockError::Breaker(BreakerError::BulkheadFull {
                max_concurrent: 1,
                ..
            }))
        ),
        "{answer:?}"
    );
    long.await.unwrap().unwrap();
    let breaker = registry().get("retries::one_at_a_time").unwrap();
    assert_eq!(
        breaker.snapshot().calls,
        3,
        "the rejection was not recorded"
    );
}

/// A classifier of our own through `Policy::call_with`: a 503 is a failure worth a retry.
#[tokio::test(start_paused = true)]
async fn call_with_classifies_each_attempt() {
    let breaker = failing_breaker();
    let policy = Policy::builder()
        .retries(1)
        .no_retry_budget()
        .build()
        .unwrap();
    let statuses = AtomicU32::new(0);
    let status = policy
        .call_with(
            &breaker,
            || async {
                if statuses.fetch_add(1, Ordering::Relaxed) == 0 {
                    503u16
                } else {
                    200
                }
            },
            |s| {
                if *s >= 500 {
                    Verdict::Failure
                } else {
                    Verdict::Success
                }
            },
        )
        .await;
    assert_eq!(status.unwrap(), 200);
}

mod model {
    use super::*;
    use proptest::prelude::*;

    /// What the dependency does on one attempt, or the circuit opening just before it.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Step {
        Success,
        Failure,
        Ignored,
        TimesOut,
        OpensFirst,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            Just(Step::Success),
            Just(Step::Failure),
            Just(Step::Ignored),
            Just(Step::TimesOut),
            Just(Step::OpensFirst),
        ]
    }

    /// The attempts the contract allows for a script: every counted failure or timeout is
    /// retried while retries last; a success, an ignored answer or a rejection ends the call.
    fn expected_attempts(script: &[Step], retries: u32) -> (u32, bool) {
        for (i, step) in script.iter().enumerate() {
            let i = i as u32;
            match step {
                Step::OpensFirst => return (i, true),
                Step::Success | Step::Ignored => return (i + 1, false),
                Step::Failure | Step::TimesOut if i == retries => return (i + 1, false),
                Step::Failure | Step::TimesOut => {}
            }
        }
        unreachable!("the script is longer than the retries")
    }

    proptest! {
        #[test]
        fn no_rejection_is_retried_and_attempts_never_exceed_retries_plus_one(
            retries in 1u32..=5,
            script in proptest::collection::vec(step(), 6),
            budget in any::<bool>(),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .start_paused(true)
                .build()
                .unwrap();
            runtime.block_on(async {
                let breaker = Breaker::new(
                    Config::builder()
                        .count_window(100)
                        .timeout(Duration::from_millis(100))
                        .build()
                        .unwrap(),
                );
                let mut builder = Policy::builder().retries(retries);
                if !budget {
                    builder = builder.no_retry_budget();
                }
                let policy = builder.build().unwrap();
                let made = AtomicU32::new(0);
                let polled = AtomicU32::new(0);
                let answer = policy
                    .call_with(
                        &breaker,
                        || {
                            let step = script[made.fetch_add(1, Ordering::SeqCst) as usize];
                            if step == Step::OpensFirst {
                                breaker.force_open();
                            }
                            let polled = &polled;
                            async move {
                                polled.fetch_add(1, Ordering::SeqCst);
                                if step == Step::TimesOut {
                                    tokio::time::sleep(Duration::from_secs(1)).await;
                                }
                                step
                            }
                        },
                        |step| match step {
                            Step::Success => Verdict::Success,
                            Step::Ignored => Verdict::Ignore,
                            _ => Verdict::Failure,
                        },
                    )
                    .await;
                let (attempts, rejected) = expected_attempts(&script, retries);
                let polled = polled.load(Ordering::SeqCst);
                prop_assert!(polled <= retries + 1);
                prop_assert_eq!(polled, attempts, "script {:?}", script);
                prop_assert_eq!(
                    answer.as_ref().err().is_some_and(BreakerError::is_rejection),
                    rejected
                );
                Ok(())
            })?;
        }
    }
}

#[async_trait::async_trait]
trait Warehouse {
    async fn reserve(&self, sku: String, failures: u32) -> Result<u32, StockError>;
}

struct Depot {
    script: Script,
}

#[async_trait::async_trait]
impl Warehouse for Depot {
    /// Under `#[async_trait]`, the method's body is boxed after this attribute expands: each
    /// attempt still gets its own copy of `sku`, and `&self` is borrowed by every attempt.
    #[circuit_breaker(retries = 2, backoff = "1ms..1ms", window = "100", max_concurrent = 4)]
    async fn reserve(&self, sku: String, failures: u32) -> Result<u32, StockError> {
        assert_eq!(sku, "sku-9");
        self.script.answer(failures)
    }
}

#[tokio::test(start_paused = true)]
async fn an_async_trait_method_retries_like_a_fn() {
    let depot = Depot {
        script: Script::default(),
    };
    let warehouse: &dyn Warehouse = &depot;
    assert_eq!(warehouse.reserve("sku-9".into(), 1).await, Ok(1));
    assert_eq!(depot.script.attempts(), 2, "one failure, one retry");
    assert_eq!(
        warehouse.reserve("sku-9".into(), u32::MAX).await,
        Err(StockError::Unavailable),
        "the last attempt's failure"
    );
    assert_eq!(depot.script.attempts(), 5, "retries + 1 more");
    let breaker = registry()
        .breakers()
        .into_iter()
        .find(|b| b.name().ends_with("::reserve"))
        .expect("the method's breaker is listed");
    assert_eq!(
        (breaker.snapshot().calls, breaker.snapshot().failures),
        (5, 4)
    );
}
