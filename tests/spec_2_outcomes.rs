//! SPEC section 2: every admitted call ends in exactly one recorded outcome, and classification.

use std::io::{self, ErrorKind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use breaker_runtime::{BreakerError, IsFailure, Name, Verdict};
use breaker_tests::{after, breaker, count, ms, panicking_call, up};

/// A value that says it is both ignored and a failure: ignored must win.
struct Ambiguous;

impl IsFailure for Ambiguous {
    fn is_failure(&self) -> bool {
        true
    }
    fn is_ignored(&self) -> bool {
        true
    }
}

#[tokio::test(start_paused = true)]
async fn a_value_that_is_ignored_records_nothing_and_is_checked_first() {
    let b = breaker(count(4));
    b.call(async { Ambiguous }).await.unwrap();
    assert_eq!(b.snapshot().calls, 0);
}

#[tokio::test(start_paused = true)]
async fn a_value_that_is_a_failure_is_recorded_as_a_failure_and_still_returned() {
    let b = breaker(count(4));
    let value = b
        .call(async { Err::<(), _>(io::Error::from(ErrorKind::TimedOut)) })
        .await
        .unwrap();
    assert_eq!(value.unwrap_err().kind(), ErrorKind::TimedOut);
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn any_other_value_is_a_success() {
    let b = breaker(count(4));
    b.call(async { up() }).await.unwrap().unwrap();
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.slow), (1, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_success_slower_than_slow_call_is_a_slow_success() {
    let b = breaker(count(4).slow_call(ms(50)));
    b.call(after(ms(51), up())).await.unwrap().unwrap();
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.slow), (1, 0, 1));
}

#[tokio::test(start_paused = true)]
async fn a_slow_failure_is_a_failure_not_a_slow_success() {
    let b = breaker(count(4).slow_call(ms(50)));
    let _ = b
        .call(after(ms(100), Err(io::Error::from(ErrorKind::BrokenPipe))))
        .await;
    let s = b.snapshot();
    assert_eq!((s.failures, s.slow), (1, 0));
}

/// Sets a flag when dropped, to see when the body's future goes away.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_still_running_at_the_timeout_is_a_failure_and_its_body_is_dropped_before_the_call_returns()
 {
    let b = breaker(count(4).timeout(ms(200)));
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = DropFlag(Arc::clone(&dropped));
    let started = tokio::time::Instant::now();
    let result = b
        .call(async move {
            let _flag = flag;
            tokio::time::sleep(Duration::from_secs(60)).await;
            up()
        })
        .await;
    assert!(matches!(result, Err(BreakerError::Timeout { limit, .. }) if limit == ms(200)));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the body was dropped before the call returned"
    );
    assert_eq!(started.elapsed(), ms(200));
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_call_that_finishes_before_the_timeout_is_not_cut_short() {
    let b = breaker(count(4).timeout(ms(200)));
    b.call(after(ms(199), up())).await.unwrap().unwrap();
    assert_eq!(b.snapshot().failures, 0);
}

#[tokio::test(start_paused = true)]
async fn with_slow_detection_the_timeout_counts_from_the_call_start() {
    let b = breaker(count(4).timeout(ms(200)).slow_call(ms(10)));
    let started = tokio::time::Instant::now();
    let result = b.call(after(Duration::from_secs(5), up())).await;
    assert!(result.unwrap_err().is_timeout());
    assert_eq!(started.elapsed(), ms(200));
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_a_failure_and_continues_to_the_caller() {
    let b = Arc::new(breaker(count(4)));
    let panicked = panicking_call(&b).await;
    assert!(panicked, "the panic reached the caller");
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_panicking_classifier_is_a_failure_too() {
    let b = Arc::new(breaker(count(4)));
    let task = {
        let b = Arc::clone(&b);
        tokio::spawn(async move { b.call_with(async { 7 }, |_| panic!("classifier bug")).await })
    };
    assert!(
        task.await.unwrap_err().is_panic(),
        "the panic reached the caller"
    );
    assert_eq!(b.snapshot().failures, 1);
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_by_its_caller_records_nothing() {
    let b = breaker(count(4).timeout(Duration::from_secs(60)));
    tokio::select! {
        _ = b.call(after(Duration::from_secs(10), up())) => unreachable!(),
        _ = tokio::time::sleep(ms(5)) => {}
    }
    assert_eq!(b.snapshot().calls, 0);
}

#[test]
fn result_is_a_failure_only_when_its_error_is() {
    let ok: Result<(), io::Error> = Ok(());
    let answered: Result<(), io::Error> = Err(ErrorKind::NotFound.into());
    let broken: Result<(), io::Error> = Err(ErrorKind::ConnectionReset.into());
    assert_eq!(Verdict::of(&ok), Verdict::Success);
    assert_eq!(Verdict::of(&answered), Verdict::Success);
    assert_eq!(Verdict::of(&broken), Verdict::Failure);
    let ignored: Result<(), Ambiguous> = Err(Ambiguous);
    assert_eq!(Verdict::of(&ignored), Verdict::Ignore);
}

#[test]
fn io_error_business_answers_are_successes_and_every_other_kind_is_a_failure() {
    for kind in [
        ErrorKind::NotFound,
        ErrorKind::PermissionDenied,
        ErrorKind::InvalidInput,
        ErrorKind::InvalidData,
    ] {
        assert!(!io::Error::from(kind).is_failure(), "{kind:?} is an answer");
    }
    for kind in [
        ErrorKind::TimedOut,
        ErrorKind::ConnectionRefused,
        ErrorKind::ConnectionReset,
        ErrorKind::ConnectionAborted,
        ErrorKind::BrokenPipe,
        ErrorKind::UnexpectedEof,
        ErrorKind::Other,
    ] {
        assert!(io::Error::from(kind).is_failure(), "{kind:?} is a failure");
    }
}

#[test]
fn breaker_error_timeout_is_a_failure_and_a_nested_rejection_is_ignored() {
    let name = Name::from_static("inner");
    let timeout = BreakerError::Timeout {
        breaker: name.clone(),
        limit: ms(5),
    };
    let open = BreakerError::Open {
        breaker: name.clone(),
        next_probe_at: None,
    };
    let full = BreakerError::HalfOpenFull {
        breaker: name,
        probes: 1,
        retry_after_ms: 0,
    };
    assert_eq!(Verdict::of(&timeout), Verdict::Failure);
    assert_eq!(Verdict::of(&open), Verdict::Ignore);
    assert_eq!(Verdict::of(&full), Verdict::Ignore);
}

#[tokio::test(start_paused = true)]
async fn a_nested_breakers_rejection_records_nothing_in_the_outer_one() {
    let inner = breaker(count(2));
    let outer = breaker(count(4));
    inner.force_open();
    let result = outer.call(inner.call(async { up() })).await.unwrap();
    assert!(result.unwrap_err().is_rejection());
    assert_eq!(outer.snapshot().calls, 0);
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[breaker_runtime::circuit_breaker(name = "spec2-boxed", window = "4")]
async fn boxed(kind: ErrorKind) -> Result<u32, BoxError> {
    Err(Box::new(io::Error::from(kind)))
}

#[breaker_runtime::circuit_breaker(name = "spec2-anyhow", window = "4")]
async fn with_anyhow(kind: Option<ErrorKind>) -> anyhow::Result<u32> {
    match kind {
        Some(kind) => Err(anyhow::Error::new(io::Error::from(kind)).context("loading the order")),
        None => anyhow::bail!("an error of no type the breaker knows"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_boxed_error_is_classified_by_the_first_known_error_in_its_chain() {
    let b = breaker_runtime::registry().get("spec2-boxed").unwrap();
    boxed(ErrorKind::NotFound).await.unwrap_err();
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (1, 0));
    boxed(ErrorKind::ConnectionRefused).await.unwrap_err();
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (2, 1));
}

#[tokio::test(start_paused = true)]
async fn an_anyhow_error_is_classified_through_its_chain_and_unknown_ones_fail() {
    let b = breaker_runtime::registry().get("spec2-anyhow").unwrap();
    with_anyhow(Some(ErrorKind::NotFound)).await.unwrap_err();
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (1, 0));
    with_anyhow(None).await.unwrap_err();
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (2, 1));
}
